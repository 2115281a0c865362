#!/bin/sh
# The release tarball stands alone: unpacked in a fresh folder, with no
# repository and with git made to fail if anything calls it, it builds and
# passes the README's test command (make test).  .ci/run runs this.
#
#   scripts/dist-check.sh [TARBALL] [MAKE ARGS...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$top/VERSION")
tarball=${1:-$top/build/dist/metalcap-$version.tar.gz}
[ $# -gt 0 ] && shift
work=$(mktemp -d /tmp/metalcap-dist.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/nogit"
printf '#!/bin/sh\necho "git called from the release tarball: $*" >&2\nexit 1\n' \
    > "$work/nogit/git"
chmod +x "$work/nogit/git"
tar -xzf "$tarball" -C "$work"
cd "$work/metalcap-$version"
[ ! -e .git ] || { echo "dist-check: the tarball holds a repository" >&2; exit 1; }
# The zig cross-compiler is not needed to test; reuse a fetched one if any.
[ -d "$top/.deps" ] && ln -s "$top/.deps" .deps
PATH=$work/nogit:$PATH make "$@" test
