#!/bin/sh
# make dist: the release tarball packagers and the Homebrew formula build
# from, OUT/metalcap-VERSION.tar.gz (the committed tree: git archive of
# HEAD, with a metalcap-VERSION/ prefix), its SHA-256 in
# OUT/metalcap-VERSION.tar.gz.sha256 (shasum -a 256 -c reads it), and the
# formula with that SHA-256 filled in, OUT/metalcap.rb.  The tarball needs
# no git to build and test (scripts/dist-check.sh proves it).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/dist}
version=$(cat "$top/VERSION")
name=metalcap-$version

if ! git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	echo "dist: needs a git checkout (the tarball is git archive of HEAD)" >&2
	exit 2
fi
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	echo "dist: the working tree has uncommitted changes; the tarball holds HEAD" >&2
fi
mkdir -p "$out"
git -C "$top" archive --format=tar --prefix="$name/" HEAD | gzip -n -9 > "$out/$name.tar.gz"
if command -v sha256sum >/dev/null 2>&1; then
	sum=$(sha256sum "$out/$name.tar.gz")
else
	sum=$(shasum -a 256 "$out/$name.tar.gz")
fi
hex=${sum%% *}
echo "$hex  $name.tar.gz" > "$out/$name.tar.gz.sha256"
sed "s/@SHA256@/$hex/" "$top/pkg/homebrew/metalcap.rb" > "$out/metalcap.rb"
echo "dist: $out/$name.tar.gz"
echo "dist: sha256 $hex"
