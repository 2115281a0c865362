# shellcheck shell=sh
# Loading and unloading metalcap's agents in users' launchd domains, from
# installer scripts that run as root (launchd.md §4).  Sourced by
# preinstall, postinstall and the uninstall script; callers set $target,
# the volume being installed on ("/" on a running Mac).
#
# metalcapd's agent loads in the Aqua session only, so it runs in gui/UID;
# an older package loaded it in the Background session too (user/UID), and
# jobs may have fallen back there.  So every bootout covers both domains,
# for every user the directory service knows, not only the one at the
# console: fast user switching leaves other users logged in.

# Used by the scripts that source this file.
# shellcheck disable=SC2034
DAEMON_LABEL=org.metalcap.metalcapd
# shellcheck disable=SC2034
DAEMON_AGENT=Library/LaunchAgents/$DAEMON_LABEL.plist
# shellcheck disable=SC2034
JOB_PREFIX=org.metalcap.job.
# Where metalcapd renders job agents, under a user's home: not
# Library/LaunchAgents, which launchd loads at login (metalcapd(8)).
# shellcheck disable=SC2034
AGENTS="Library/Application Support/metalcap/agents"
# metalcapd's record of each label it gave launchd (reconcile.c).
# shellcheck disable=SC2034
LOADED="Library/Application Support/metalcap/state/loaded"

# Names come from users' folders and reach root's terminal: control
# characters (escape sequences, newlines) are shown as '?', and printf,
# unlike sh's echo, reads no backslash escapes in them.
say() { printf 'metalcap: %s\n' "$(printf '%s' "$*" | tr '[:cntrl:]' '?')"; }

# Owner (uid:gid) and mode of a path, not following a final link: GNU's
# stat where the tests run, else BSD's on macOS (GNU's -f means another
# thing, so it must not be tried first; BSD's stat refuses -c).
path_owner() {
	stat -c %u:%g "$1" 2>/dev/null || stat -f %u:%g "$1"
}
path_mode() {
	stat -c %a "$1" 2>/dev/null || stat -f %Lp "$1"
}

# A shared folder that is missing, made like the nearest folder above it
# that exists (owner and mode), one level at a time, each noted in $2:
# Homebrew owns /usr/local on Intel Macs, and a root-owned
# /usr/local/share/man would stop it.
make_shared() {
	[ -d "$1" ] && return 0
	make_shared "${1%/*}" "$2"
	parent=${1%/*}
	mkdir "$1" &&
	    chown "$(path_owner "$parent")" "$1" 2>/dev/null
	chmod "$(path_mode "$parent")" "$1"
	echo "$1" >> "$2"
}

# Is FILE, under HOME, the user's own (uid UID), reached through no link?
# Root deletes it otherwise never: a user could point a folder of theirs
# at a file of someone else's.
users_own_file() {
	home=$1 uid=$2 file=$3
	{ [ -f "$file" ] && [ ! -L "$file" ]; } || return 1
	[ "$(path_owner "$file" | cut -d: -f1)" = "$uid" ] || return 1
	dir=${file%/*}
	while [ "$dir" != "$home" ] && [ -n "$dir" ]; do
		[ ! -L "$dir" ] || return 1
		dir=${dir%/*}
	done
}

# The installed manifest's entries (pkg/manifest), comments dropped; with
# a second argument, another copy of it (the one an upgrade replaces).
manifest_of() {
	grep -v -e '^#' -e '^[[:space:]]*$' \
	    "${2:-$1/usr/local/share/metalcap/manifest}"
}

# Where preinstall keeps the manifest being upgraded, for postinstall.
PREVIOUS_MANIFEST=usr/local/share/metalcap/manifest.previous

# The target volume without a trailing slash, so "/" gives "/Library/...",
# not "//Library/...".
target_root() {
	case $1 in
	/) echo "" ;;
	*) echo "${1%/}" ;;
	esac
}

# "NAME UID" of every person the directory service knows: uid 500 and up,
# no leading underscore (system accounts).
people() {
	dscl . -list /Users UniqueID 2>/dev/null |
	    awk '$2 >= 500 && $1 !~ /^_/ { print $1, $2 }'
}

# A user's home from the directory service, not /Users/NAME; dscl puts a
# long or spaced value on a line of its own.
home_of() {
	dscl . -read "/Users/$1" NFSHomeDirectory 2>/dev/null | awk '
	    /^NFSHomeDirectory:/ { sub(/^NFSHomeDirectory: ?/, ""); v = $0; next }
	    v == "" && /^ / { sub(/^ /, ""); v = $0 }
	    END { print v }'
}

# Boot a service target out and wait until launchd lets go of it: exit 36
# means still tearing down; 3 and 113 mean it was not loaded, 112 and 125
# that the domain does not exist (no such session): nothing to boot out.
# A bootout that succeeds returns before the job is gone (launchd.md
# §1.2), so print is asked until it no longer knows the label.
service_bootout() {
	service=$1 tries=0
	while :; do
		brc=0
		launchctl bootout "$service" 2>/dev/null || brc=$?
		case $brc in
		0)
			loaded_was=yes
			while [ "$tries" -lt 20 ] &&
			    launchctl print "$service" >/dev/null 2>&1; do
				tries=$((tries + 1))
				sleep 0.5
			done
			return 0 ;;
		3 | 112 | 113 | 125) return 0 ;;
		36) ;;
		*) say "bootout $service: launchctl exit $brc"; return "$brc" ;;
		esac
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || { say "bootout $service: still in progress"; return 36; }
		sleep 1
	done
}

# Boot a label out of both of a user's domains; $loaded_was says whether
# it was loaded in either.
agent_bootout() {
	uid=$1 label=$2 rc=0
	loaded_was=no
	service_bootout "gui/$uid/$label" || rc=$?
	service_bootout "user/$uid/$label" || rc=$?
	return "$rc"
}

# Bootstrap PLIST into gui/UID.  Right after a bootout launchd may still
# hold the label (5, 37): retry for a few seconds.  119 means the user or
# Background Task Management switched the agent off: say so, do not force.
# 125 (112 on some releases), returned as 125: the user has no GUI
# session now; launchd starts the agent at the next login.
agent_bootstrap() {
	uid=$1 plist=$2 tries=0
	while :; do
		rc=0
		out=$(launchctl bootstrap "gui/$uid" "$plist" 2>&1) || rc=$?
		case $rc in
		0) return 0 ;;
		5 | 37) ;;
		119)
			say "the agent is disabled for uid $uid (System Settings >" \
			    "General > Login Items); it was not started"
			return "$rc" ;;
		112 | 125) return 125 ;;
		*) say "bootstrap gui/$uid $plist: launchctl exit $rc: $out"; return "$rc" ;;
		esac
		tries=$((tries + 1))
		[ "$tries" -lt 5 ] || { say "bootstrap gui/$uid: $out"; return "$rc"; }
		sleep 1
	done
}

# Boot out every user's metalcapd, in both domains.
daemons_bootout() {
	people | while read -r name uid; do
		agent_bootout "$uid" "$DAEMON_LABEL" || true
		[ "$loaded_was" = no ] ||
		    say "stopped $DAEMON_LABEL for $name (uid $uid)"
	done
}
