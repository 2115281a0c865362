#!/bin/sh
# Check an installer payload tree against pkg/manifest: every entry present
# with its type, mode, owner (when this process can see real owners: root
# or fakeroot) and content; nothing extra; property lists valid, the
# LaunchAgent's Label and program matching the payload; man pages lint-clean;
# scripts parse; Mach-O files universal arm64 + x86_64 of the right type.
# The package owns only its own folders: a payload entry outside them (in a
# shared folder such as /usr/local/bin, whose owner Installer would reset)
# fails, and every link and copy postinstall places must come from them.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

root=${1:?usage: pkg-check.sh ROOT}
failures=0
checked=0
bad() { echo "FAIL $1: $2"; failures=$((failures + 1)); }

LIPO=$(tool llvm-lipo)
OBJDUMP=$(tool llvm-objdump)
# metalcapctl of this machine, to judge the payload's Mach-O files.
CTL=${METALCAP_CTL:-$top/build/bin/metalcapctl}

plist_ok() {
	if command -v plutil >/dev/null 2>&1; then
		plutil -lint -s "$1"
	else
		python3 -c 'import plistlib, sys; plistlib.load(open(sys.argv[1], "rb"))' "$1"
	fi
}

# A LaunchAgent: Label is the file's name, its program is in the payload.
agent_ok() {
	python3 - "$1" "$2" "$manifest" <<'PY'
import os, plistlib, sys
path, rel, manifest = sys.argv[1:]
agent = plistlib.load(open(path, "rb"))
want = os.path.basename(rel)[:-len(".plist")]
if agent.get("Label") != want:
    sys.exit("Label is %r, want %r" % (agent.get("Label"), want))
program = agent.get("ProgramArguments", [None])[0]
execs = ["/" + line.split()[3] for line in open(manifest)
         if line.split() and line.split()[0] == "exec"]
if program not in execs:
    sys.exit("runs %r, which is not an executable of the payload" % program)
# Its children (probes, health checks, auto's bench) inherit its apptype:
# Interactive, as the servers they measure (agent-template/metalcapd.plist).
if agent.get("ProcessType") != "Interactive":
    sys.exit("ProcessType is %r, want 'Interactive'" % agent.get("ProcessType"))
PY
}

macho_ok() {
	archs=$("$LIPO" -archs "$1" 2>/dev/null | tr ' ' '\n' | grep . | sort | tr '\n' ' ') || true
	[ "$archs" = "arm64 x86_64 " ] || { echo "architectures '$archs', want 'arm64 x86_64'"; return 1; }
	for arch in arm64 x86_64; do
		"$OBJDUMP" --macho --private-header --arch="$arch" "$1" | grep -q " $2 " ||
		    { echo "$arch slice is not a Mach-O $2"; return 1; }
	done
}

# check_content TYPE FILE PATH: what a file of this type must be.
check_content() {
	case $1 in
	plist)
		plist_ok "$2" >/dev/null 2>&1 || { bad "$3" "not a valid property list"; return; }
		case $3 in
		*/org.metalcap.*.plist)
			why=$(agent_ok "$2" "$3" 2>&1) || bad "$3" "$why" ;;
		esac ;;
	man)
		head -n 1 "$2" | grep -q '^\.Dd ' || bad "$3" "not an mdoc page (no .Dd)"
		if command -v mandoc >/dev/null 2>&1; then
			why=$(mandoc -T lint -W warning "$2" 2>&1) || bad "$3" "mandoc: $why"
		fi ;;
	script)
		head -n 1 "$2" | grep -q '^#!/bin/sh' || bad "$3" "does not start with #!/bin/sh"
		sh -n "$2" 2>/dev/null || bad "$3" "does not parse as sh" ;;
	exec)
		why=$(macho_ok "$2" EXECUTE) || bad "$3" "$why"
		# The probe runs with the shim injected: whatever signs it,
		# the shim must still get in (entitlements, pkg/entitlements).
		case $3 in
		*/metalcap-probe)
			why=$("$CTL" check "$2" 2>&1) ||
			    bad "$3" "the shim cannot be injected: $why" ;;
		esac ;;
	dylib)
		why=$(macho_ok "$2" DYLIB) || bad "$3" "$why" ;;
	esac
}

# Is PATH inside one of our own folders (or one itself)?
in_own() {
	for own in $owns; do
		case $1 in "$own" | "$own"/*) return 0 ;; esac
	done
	return 1
}

# Where a link at PATH pointing to TARGET lands, relative to the root.
link_lands() {
	normal "${1%/*}/$2"
}

# check_placed TYPE PATH SOURCE: postinstall's links and copies.
check_placed() {
	type=$1 path=$2 source=$3
	checked=$((checked + 1))
	if in_own "$path"; then
		bad "$path" "a $type inside our own folder"
		return 0
	fi
	if [ -e "$root/$path" ] || [ -L "$root/$path" ]; then
		bad "$path" "in the payload, but postinstall places it"
		return 0
	fi
	case $type in
	link) from=$(link_lands "$path" "$source") ;;
	copy) from=$source ;;
	esac
	if ! in_own "$from"; then
		bad "$path" "its $type source $from is not ours"
	elif [ ! -f "$root/$from" ]; then
		bad "$path" "its $type source $from is not in the payload"
	fi
}

# check_entry TYPE MODE OWNER PATH SOURCE
check_entry() {
	type=$1 mode=$2 owner=$3 path=$4 source=${5:-}
	f=$root/$path
	checked=$((checked + 1))
	case $type in
	shared)
		if in_own "$path"; then
			bad "$path" "a shared folder inside our own"
		fi
		return 0 ;;
	link | copy)
		check_placed "$type" "$path" "$source"
		return ;;
	record)
		# Written at install time, in one of ours: never in the payload.
		in_own "$path" || bad "$path" "a record outside our own folders"
		{ [ -e "$f" ] || [ -L "$f" ]; } &&
		    bad "$path" "in the payload, but the installer writes it"
		return 0 ;;
	esac
	# Installer would set the owner and mode of whatever it writes.
	in_own "$path" || {
		bad "$path" "outside metalcap's own folders: Installer would reset a shared folder's owner (postinstall must place it)"
		return
	}
	case $type in
	own | dir)
		{ [ -d "$f" ] && [ ! -L "$f" ]; } || { bad "$path" "not a directory"; return; } ;;
	*)
		{ [ -f "$f" ] && [ ! -L "$f" ]; } || { bad "$path" "missing or not a regular file"; return; }
		[ ! -f "$top/$source" ] || cmp -s "$f" "$top/$source" ||
		    bad "$path" "differs from $source"
		check_content "$type" "$f" "$path" ;;
	esac
	got=$(path_mode "$f")
	[ "$got" = "${mode#0}" ] || bad "$path" "mode $got, want ${mode#0}"
	if can_chown; then
		want=$(owner_ids "$owner") || { bad "$path" "unknown owner $owner"; return; }
		got=$(path_ids "$f")
		[ "$got" = "$want" ] || bad "$path" "owner $got, want $owner ($want)"
	fi
}

[ -d "$root" ] || { echo "pkg-check: $root is not a directory" >&2; exit 2; }
entries=$(manifest_entries)
owns=$(own_folders)
while read -r type mode owner path source; do
	check_entry "$type" "$mode" "$owner" "$path" "$source"
done <<EOF_ENTRIES
$entries
EOF_ENTRIES

# Nothing in the payload that the manifest does not name; outside our own
# folders, only the folders that lead to them.
listed=$(payload_entries | awk '{print $4}')
parents=$(for own in $owns; do
	p=$own
	while [ "$p" != "${p%/*}" ]; do p=${p%/*}; echo "$p"; done
done | sort -u)
extra=$(cd "$root" && find . -mindepth 1 | sed 's|^\./||' | sort |
    while read -r p; do
	    echo "$listed" | grep -qxF "$p" && continue
	    echo "$parents" | grep -qxF "$p" && [ -d "$p" ] && [ ! -L "$p" ] &&
		continue
	    echo "$p"
    done)
for p in $extra; do
	bad "$p" "in the payload but not in the manifest"
done

owners="owners checked"
can_chown || owners="owners not visible to this user: pkgbuild --ownership recommended sets root:wheel"
if [ "$failures" -ne 0 ]; then
	echo "pkg-check: $failures problem(s) in $root"
	exit 1
fi
echo "pkg-check: $checked entries match pkg/manifest ($owners)"
