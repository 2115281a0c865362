#!/bin/sh
# make install / make uninstall: the package's layout (pkg/manifest) under
# PREFIX, with the GNU variables, for packagers (DESTDIR) and Homebrew
# (PREFIX=#{prefix}).  The manifest's usr/local/{bin,libexec,share,
# share/man} become BINDIR, LIBEXECDIR, DATADIR and MANDIR; its links are
# relative, as Homebrew's are (BINDIR and MANDIR may still go anywhere); the
# binaries are this platform's build ($BUILD), the shim named as the
# platform loads it.  What needs the system (/Library/LaunchAgents) is the
# installer package's, not make install's: the daemon's agent is installed
# in DATADIR/metalcap for `brew services` or a hand-made LaunchAgent, and
# the package's own uninstall script is left out (make uninstall, or brew
# uninstall, removes what make install put in place); its helper,
# launchd-user.sh, is installed: the Jamf attribute reads with it.
#
#   scripts/install.sh install|uninstall
#   (environment: PREFIX DESTDIR BINDIR LIBEXECDIR DATADIR MANDIR BUILD SHLIB
#   AGENT_LIBEXECDIR)
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

action=${1:?usage: install.sh install|uninstall}
: "${PREFIX:=/usr/local}" "${DESTDIR:=}" "${BUILD:=build}" "${SHLIB:=so}"
: "${BINDIR:=$PREFIX/bin}" "${LIBEXECDIR:=$PREFIX/libexec}"
: "${DATADIR:=$PREFIX/share}" "${MANDIR:=$DATADIR/man}"
for d in "$PREFIX" "$BINDIR" "$LIBEXECDIR" "$DATADIR" "$MANDIR"; do
	case $d in /*) ;; *) echo "install: $d: must be an absolute path" >&2; exit 2 ;; esac
done
# metalcapd and metalcapctl find the probe, the shim and the job template
# relative to themselves (policy/paths.c): LIBEXECDIR/metalcap, and
# LIBEXECDIR/../share/metalcap.
[ "${LIBEXECDIR%/*}/share" = "$DATADIR" ] || {
	echo "install: LIBEXECDIR ($LIBEXECDIR) and DATADIR ($DATADIR) must be" \
	    "siblings (PREFIX/libexec, PREFIX/share): the programs find their" \
	    "files relative to themselves" >&2
	exit 2
}
# Folders make install created, so that make uninstall removes those only.
made=$DESTDIR$DATADIR/metalcap/.made-folders
new_folders=$(mktemp)
trap 'rm -f "$new_folders"' EXIT

# A manifest path as installed (without DESTDIR); nothing for the system's
# and for the package's uninstaller.
where() {
	case $1 in
	*/libexec/metalcap/uninstall) ;;
	usr/local/bin | usr/local/bin/*) echo "$BINDIR${1#usr/local/bin}" ;;
	usr/local/libexec | usr/local/libexec/*) echo "$LIBEXECDIR${1#usr/local/libexec}" ;;
	usr/local/share/man | usr/local/share/man/*) echo "$MANDIR${1#usr/local/share/man}" ;;
	usr/local/share | usr/local/share/*) echo "$DATADIR${1#usr/local/share}" ;;
	*) ;;
	esac | sed "s/\.dylib\$/.$SHLIB/"
}

# This platform's build of a manifest source.
source_of() {
	case $1 in
	build/macos/libmetalcap.dylib) echo "$BUILD/lib/libmetalcap.$SHLIB" ;;
	build/macos/*) echo "$BUILD/bin/${1#build/macos/}" ;;
	*) echo "$top/$1" ;;
	esac
}

# The target of a link in folder FROM to TO, relative to FROM (as Homebrew
# links): it stays right in a DESTDIR stage and in a keg.
relative() {
	common=$1 up=
	while [ "${2#"$common"/}" = "$2" ]; do
		common=${common%/*}
		up=../$up
	done
	echo "$up${2#"$common"/}"
}

# Make a folder, noting it (as installed, without DESTDIR) when it did not
# exist; DESTDIR itself, a packager's staging root, is not ours to note.
folder() {
	[ -d "$1" ] && return 0
	parent=${1%/*}
	[ -n "$parent" ] && folder "$parent"
	mkdir -m 0755 "$1"
	case $1 in
	"$DESTDIR"/*) echo "${1#"$DESTDIR"}" >> "$new_folders" ;;
	esac
}

install_all() {
	manifest_entries | while read -r type mode _ path source; do
		dest=$(where "$path")
		[ -n "$dest" ] || continue
		case $type in
		own | dir | shared)
			folder "$DESTDIR$dest" ;;
		link)
			target=$(relative "${dest%/*}" \
			    "$(where "$(normal "${path%/*}/$source")")")
			folder "$DESTDIR${dest%/*}"
			ln -sfn "$target" "$DESTDIR$dest" ;;
		copy | record) ;;
		*)
			folder "$DESTDIR${dest%/*}"
			cp "$(source_of "$source")" "$DESTDIR$dest.new"
			chmod "$mode" "$DESTDIR$dest.new"
			mv -f "$DESTDIR$dest.new" "$DESTDIR$dest" ;;
		esac
	done
	# The daemon's agent runs metalcapd where it is installed, or where
	# AGENT_LIBEXECDIR says it stays (Homebrew's opt/ path, not the
	# versioned Cellar an upgrade removes).
	agent=$DESTDIR$DATADIR/metalcap/org.metalcap.metalcapd.plist
	sed "s|/usr/local/libexec/metalcap/|${AGENT_LIBEXECDIR:-$LIBEXECDIR}/metalcap/|" "$agent" \
	    > "$agent.new" && mv -f "$agent.new" "$agent"
	cat "$new_folders" >> "$made"
	echo "install: metalcap in $DESTDIR$PREFIX"
}

uninstall_all() {
	folders=$(cat "$made" 2>/dev/null || true)
	manifest_entries | while read -r type _ _ path source; do
		dest=$(where "$path")
		[ -n "$dest" ] || continue
		case $type in
		own | dir | shared | copy | record) ;;
		link)
			# Only ours: a link someone replaced stays.
			target=$(relative "${dest%/*}" \
			    "$(where "$(normal "${path%/*}/$source")")")
			if [ "$(readlink "$DESTDIR$dest" 2>/dev/null)" = \
			    "$target" ]; then
				rm -f "$DESTDIR$dest"
			fi ;;
		*) rm -f "$DESTDIR$dest" ;;
		esac
	done
	rm -f "$made"
	# Our own folders, then those install made, deepest first; a folder
	# someone else put files in stays.
	{ manifest_entries | awk '$1 == "own" || $1 == "dir" { print $4 }' |
	    while read -r path; do echo "$DESTDIR$(where "$path")"; done
	  echo "$folders" | grep . | sed "s|^|$DESTDIR|"; } | grep . |
	    sort -ru | while read -r dir; do
		rmdir "$dir" 2>/dev/null || true
	done
	echo "uninstall: metalcap removed from $DESTDIR$PREFIX"
}

case $action in
install) install_all ;;
uninstall) uninstall_all ;;
*) echo "usage: install.sh install|uninstall" >&2; exit 2 ;;
esac
