# shellcheck shell=sh
# Loading and unloading metalcap's agents in the console user's launchd GUI
# domain, from installer scripts that run as root (launchd.md §4).  Sourced
# by preinstall, postinstall and the uninstall script; callers set $target,
# the volume being installed on ("/" on a running Mac).

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

say() { echo "metalcap: $*"; }

# "NAME UID" of the user at the console, or nothing when nobody is logged
# in (the login window, Setup Assistant's _mbsetupuser, or root).
console_user() {
	echo "show State:/Users/ConsoleUser" | scutil 2>/dev/null | awk '
	    $1 == "Name" && $2 == ":" { name = $3 }
	    $1 == "UID" && $2 == ":" { uid = $3 }
	    END {
		if (name == "" || uid == "" || name == "loginwindow" ||
		    name == "_mbsetupuser" || name == "root" || uid == 0)
			exit
		print name, uid
	    }'
}

# Boot a label out of gui/UID and wait until launchd lets go of it: exit 36
# means still tearing down; 3 and 113 mean it was not loaded.
agent_bootout() {
	uid=$1 label=$2 tries=0
	while :; do
		rc=0
		launchctl bootout "gui/$uid/$label" 2>/dev/null || rc=$?
		case $rc in
		0 | 3 | 113) return 0 ;;
		36) ;;
		*) say "bootout gui/$uid/$label: launchctl exit $rc"; return "$rc" ;;
		esac
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || { say "bootout gui/$uid/$label: still in progress"; return 36; }
		sleep 1
	done
}

# Bootstrap PLIST into gui/UID.  Right after a bootout launchd may still
# hold the label (5, 37): retry for a few seconds.  119 means the user or
# Background Task Management switched the agent off: say so, do not force.
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
		125)
			say "uid $uid has no GUI session; launchd starts the agent at the next login"
			return 0 ;;
		*) say "bootstrap gui/$uid $plist: launchctl exit $rc: $out"; return "$rc" ;;
		esac
		tries=$((tries + 1))
		[ "$tries" -lt 5 ] || { say "bootstrap gui/$uid: $out"; return "$rc"; }
		sleep 1
	done
}
