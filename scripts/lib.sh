# shellcheck shell=sh
# Shared by the scripts that check macOS artifacts and the installer
# payload: finding LLVM's Mach-O tools, reading pkg/manifest, and the owners
# and modes of files on Linux and macOS alike.

top=$(cd "$(dirname "$0")/.." && pwd)
manifest=${PKG_MANIFEST:-$top/pkg/manifest}

# The manifest's entries, comments and blank lines dropped:
# "type mode owner:group path [source]".
manifest_entries() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$manifest"
}

# "a/b/../c" as "a/c" (a link target in the manifest, resolved).
normal() {
	out=
	old_ifs=$IFS IFS=/
	# shellcheck disable=SC2086
	set -- $1
	IFS=$old_ifs
	for part in "$@"; do
		case $part in
		'' | .) ;;
		..) out=${out%/*} ;;
		*) out=$out/$part ;;
		esac
	done
	echo "${out#/}"
}

# The entries that are the payload: our own folders and what is in them
# (not the shared folders, links and copies postinstall places).
payload_entries() {
	manifest_entries | awk '$1 != "shared" && $1 != "link" && $1 != "copy" &&
	    $1 != "record"'
}

# The own folders, one path a line.
own_folders() {
	manifest_entries | awk '$1 == "own" { print $4 }'
}

# macOS's ids for the owner and group names the manifest may use.
owner_ids() {
	user=${1%%:*} group=${1#*:}
	case $user in root) u=0 ;; *) return 1 ;; esac
	case $group in wheel) g=0 ;; admin) g=80 ;; staff) g=20 ;; *) return 1 ;; esac
	echo "$u:$g"
}

# Mode and owner of a path, not following a final symbolic link.
if stat -c %a / >/dev/null 2>&1; then
	path_mode() { stat -c %a "$1"; }
	path_ids() { stat -c %u:%g "$1"; }
else
	path_mode() { stat -f %Lp "$1"; }
	path_ids() { stat -f %u:%g "$1"; }
fi

# Can this process give files away (root, or Debian's fakeroot)?
can_chown() {
	[ "$(id -u)" -eq 0 ]
}

# The path of an LLVM tool: Debian's (versioned or not), else Xcode's of the
# same name without "llvm-".
tool() {
	for t in "$1-14" "$1" "${1#llvm-}"; do
		command -v "$t" >/dev/null 2>&1 && { echo "$t"; return; }
	done
	echo "$(basename "$0"): $1 not found (install llvm)" >&2
	exit 2
}
