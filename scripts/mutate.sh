#!/bin/sh
# make mutate: put realistic bugs into the product code one at a time
# (tests/mutations/*.patch, each naming what it breaks and the test
# programs that should catch it), build and run those tests, and report
# each mutation killed (a test failed) or SURVIVED; each patch names the
# tests to run ("# only:", a cmocka filter), which must pass unmutated
# first.  The patches are
# applied to a copy of the tree, so the working tree is never touched and
# nothing is left to restore.  The score goes into docs/RELIABILITY.md,
# between its mutate markers.  Slow (a build and a test run each): not run
# by CI.
#
#   scripts/mutate.sh [PATCH...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/mc-mutate.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

(cd "$top" && tar cf - --exclude=./build --exclude=./.deps --exclude=./.git .) |
    (cd "$work" && tar xf -)
all=$(find "$top/tests/mutations" -name '*.patch' | wc -l)
[ $# -gt 0 ] || set -- "$top"/tests/mutations/*.patch

# The tests a patch names, and the pattern of the tests in them to run.
targets() {
	bins=$(sed -n 's/^# tests: //p' "$1" | sed 's|[^ ][^ ]*|build/tests/&|g')
	only=$(sed -n 's/^# only: //p' "$1")
}

run_tests() {
	# shellcheck disable=SC2086
	(cd "$work" && MC_TEST_ONLY=$only MC_FAULT_ONLY=$only \
	    scripts/run-tests.sh $bins >"$work/$1.log" 2>&1)
}

# Unmutated, every test a patch names must pass, or a "kill" means
# nothing.
for patch in "$@"; do
	targets "$patch"
	# shellcheck disable=SC2086
	if ! (cd "$work" && make -s -j2 $bins >"$work/baseline.build" 2>&1) ||
	    ! run_tests baseline; then
		echo "mutate: without any mutation, $bins ($only) fails:" >&2
		tail -n 30 "$work/baseline.log" >&2
		exit 2
	fi
done

killed=0
survived=0
table=
for patch in "$@"; do
	name=$(basename "$patch" .patch)
	breaks=$(sed -n 's/^# breaks: //p' "$patch")
	tests=$(sed -n 's/^# tests: //p' "$patch")
	targets "$patch"
	if ! (cd "$work" && patch -s -p1 <"$patch"); then
		echo "mutate: $name no longer applies: regenerate it" >&2
		exit 2
	fi
	# shellcheck disable=SC2086
	if ! (cd "$work" && make -s -j2 $bins >"$work/$name.build" 2>&1); then
		verdict="BUILD FAILED"
		survived=$((survived + 1))
		tail -n 20 "$work/$name.build" >&2
	elif run_tests "$name"; then
		verdict=SURVIVED
		survived=$((survived + 1))
	else
		verdict=killed
		killed=$((killed + 1))
	fi
	(cd "$work" && patch -s -R -p1 <"$patch")
	line=$(printf '| %s | %s | %s | %s |' "$name" "$breaks" "$tests" "$verdict")
	echo "$line"
	table="$table$line
"
done

total=$((killed + survived))
score="$killed of $total mutations killed ($(date -u +%Y-%m-%d), $(cd "$top" &&
    git rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
echo "mutate: $score"
doc=$top/docs/RELIABILITY.md
if [ "$total" -eq "$all" ] &&
    grep -q '<!-- mutate:begin -->' "$doc"; then
	{
		sed '/<!-- mutate:begin -->/q' "$doc"
		echo "Last run: $score."
		echo
		echo "| mutation | what it breaks | caught by | verdict |"
		echo "|---|---|---|---|"
		printf '%s' "$table"
		sed -n '/<!-- mutate:end -->/,$p' "$doc"
	} >"$work/doc" && cat "$work/doc" >"$doc"
fi
echo "$killed passed, $survived failed"
[ "$survived" -eq 0 ]
