#!/bin/sh
# Lay out metalcap's installer payload in ROOT (default build/pkg/root) from
# pkg/manifest, then check it with pkg-check.sh.  On Linux the layout runs
# under fakeroot, so the owners the package will have (root:wheel) are set
# and checked; FAKEROOT_STATE keeps them for later fakeroot sessions.  On a
# Mac as a user, pkgbuild --ownership recommended sets them instead.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

root=${1:-$top/build/pkg/root}
case $root in /*) ;; *) root=$(pwd)/$root ;; esac

if ! can_chown && [ "$(uname -s)" = Linux ]; then
	command -v fakeroot >/dev/null 2>&1 || {
		echo "pkg-root: fakeroot is needed to set owners (scripts/deps.sh native)" >&2
		exit 2
	}
	state=${FAKEROOT_STATE:-$root.fakeroot}
	mkdir -p "$(dirname "$state")"
	exec fakeroot -s "$state" -- "$0" "$root"
fi

rm -rf "$root"
mkdir -p "$root"
# Only our own folders: their parents are path, not payload (each own
# folder is a component of its own, pkg-build.sh).
payload_entries | while read -r type mode owner path source; do
	dest=$root/$path
	case $type in
	own | dir)
		mkdir -p "$dest" ;;
	*)
		[ -f "$top/$source" ] || {
			echo "pkg-root: $path: source $source is missing (make macos?)" >&2
			exit 1
		}
		cp "$top/$source" "$dest" ;;
	esac
	chmod "$mode" "$dest"
	if can_chown; then
		chown -h "$(owner_ids "$owner")" "$dest"
	fi
done
echo "pkg-root: payload in $root"
"$top/scripts/pkg-check.sh" "$root"
