#!/bin/sh
# The installer's preinstall and postinstall and the uninstall script, run
# on Linux against a target volume in a temporary folder, with STUBS of
# macOS's launchctl and dscl first on PATH (tests/pkg/stubs/).  Users come
# from $PKG_STUB_USERS; the launchd sessions each has (gui: a GUI login,
# user: any login) from $PKG_STUB_DIR/sessions.  The payload is written
# the way the installer writes it: from pkg/manifest.
# Ends with "N passed, N failed", as scripts/run-tests.sh expects.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$top/tests/pkg/stubs:$PATH
export PATH
passed=0 failed=0
T='' PKG_STUB_DIR='' PKG_STUB_USERS=''
export PKG_STUB_DIR PKG_STUB_DISABLED PKG_STUB_USERS

fail() { printf '    %s\n' "$*"; ok=no; }
expect_file() { [ -e "$1" ] || fail "missing: $1"; }
expect_gone() { if [ -e "$1" ] || [ -L "$1" ]; then fail "still there: $1"; fi; }
expect_loaded() { grep -qxF "$1" "$PKG_STUB_DIR/loaded" || fail "not loaded: $1"; }
expect_unloaded() { ! grep -qxF "$1" "$PKG_STUB_DIR/loaded" || fail "still loaded: $1"; }
expect_call() { grep -qxF "$1" "$PKG_STUB_DIR/calls" || fail "launchctl never ran: $1"; }
expect_text() { printf '%s\n' "$1" | grep -qF -- "$2" || fail "no '$2' in output: $1"; }
# How many metalcapd launchd holds for a uid, in both of its domains.
daemons_of() { grep -c -e "^gui/$1/org.metalcap.metalcapd\$" -e "^user/$1/org.metalcap.metalcapd\$" "$PKG_STUB_DIR/loaded"; }
expect_daemons() { n=$(daemons_of "$1"); [ "$n" = "$2" ] || fail "uid $1 has $n metalcapd, want $2: $(cat "$PKG_STUB_DIR/loaded")"; }
# USER UID HOME [SESSION...]: an account, and the sessions it has now.
account() {
	echo "$1 $2 $3" >> "$PKG_STUB_USERS"
	account_uid=$2
	shift 3
	for session in "$@"; do echo "$account_uid $session" >> "$PKG_STUB_DIR/sessions"; done
}
# launchd at a login of UID: every agent of /Library/LaunchAgents.
login() { launchctl sim-login "$1" "$T/Library/LaunchAgents"; }

# Write the payload into $T as Installer would: our own folders only,
# their missing parents made, existing ones untouched (build/macos
# artifacts when they exist, otherwise placeholders: these scripts never
# run them).  Shared folders, links and copies are postinstall's.
install_payload() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$top/pkg/manifest" |
	    while read -r type mode _ path source; do
		case $type in
		shared | link | copy | record) continue ;;
		own | dir) mkdir -p "$T/$path" ;;
		*)
			if [ -f "$top/$source" ]; then
				cp "$top/$source" "$T/$path"
			else
				echo "placeholder for $source" > "$T/$path"
			fi ;;
		esac
		chmod "$mode" "$T/$path"
	    done
}

# What an installed daemon leaves in alice's home: job files, a profile,
# state, logs, and the agent it rendered for a job.
user_data() {
	h=$T${1:-/Users/alice}
	mkdir -p "$h/Library/Application Support/metalcap/jobs.d" \
	    "$h/Library/Application Support/metalcap/profiles.d" \
	    "$h/Library/Application Support/metalcap/state" \
	    "$h/Library/Logs/metalcap" "$h/Library/LaunchAgents"
	cp "$top/profiles/apple9.plist" "$h/Library/Application Support/metalcap/jobs.d/llama.plist"
	cp "$top/profiles/apple7.plist" "$h/Library/Application Support/metalcap/profiles.d/mine.plist"
	echo '{"jobs": []}' > "$h/Library/Application Support/metalcap/state/status.json"
	echo "<plist/>" > "$h/Library/Application Support/metalcap/state/overrides.plist"
	echo "llama log" > "$h/Library/Logs/metalcap/llama.err.log"
	mkdir -p "$h/Library/Application Support/metalcap/agents"
	cp "$top/agent-template/job.plist" "$h/Library/Application Support/metalcap/agents/org.metalcap.job.llama.plist"
	# An older metalcapd rendered them into the folder loaded at login.
	cp "$top/agent-template/job.plist" "$h/Library/LaunchAgents/org.metalcap.job.old.plist"
	echo "<plist/>" > "$h/Library/LaunchAgents/com.example.other.plist"
	# Hers, as a home is.
	chown -R "${2:-501}:20" "$h"
}

# A listing with checksums of everything in alice's home but the agents
# metalcapd rendered, to prove nothing of hers changed.
home_snapshot() {
	(cd "$T/Users/alice" && find . -type f ! -name 'org.metalcap.job.*' |
	    sort | xargs -d '\n' md5sum)
}

run_test() {
	name=$1
	T=$(mktemp -d) PKG_STUB_DIR=$(mktemp -d)
	PKG_STUB_USERS=$PKG_STUB_DIR/users PKG_STUB_DISABLED=''
	: > "$PKG_STUB_USERS"
	: > "$PKG_STUB_DIR/sessions"
	# System accounts the scripts must leave alone.
	account _spotlight 89 /var/empty
	account root 0 /var/root
	ok=yes
	"$name"
	rm -rf "$T" "$PKG_STUB_DIR"
	if [ "$ok" = yes ]; then
		echo "ok   $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		failed=$((failed + 1))
	fi
}

preinstall() { sh "$top/pkg/scripts/preinstall" pkg "$T" "$T" 2>&1; }
postinstall() { sh "$top/pkg/scripts/postinstall" pkg "$T" "$T" 2>&1; }
daemon=gui/501/org.metalcap.metalcapd
agent_path() { echo "$T/Library/LaunchAgents/org.metalcap.metalcapd.plist"; }

fresh_install_with_gui_user() {
	account alice 501 /Users/alice gui user
	account bob 502 /Users/bob
	out=$(preinstall) || fail "preinstall failed: $out"
	grep -q "^bootstrap\|^kill\|^kickstart" "$PKG_STUB_DIR/calls" &&
	    fail "preinstall did more than boot out: $(cat "$PKG_STUB_DIR/calls")"
	case $out in *stopped*) fail "a fresh install stopped something: $out" ;; esac
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_call "bootstrap gui/501 $(agent_path)"
	expect_daemons 501 1
	expect_loaded "$daemon"
	expect_daemons 502 0
	expect_text "$out" "started org.metalcap.metalcapd for alice (uid 501)"
	grep -q ' gui/0 \| gui/89 ' "$PKG_STUB_DIR/calls" && fail "a system account was touched"
}

fresh_install_nobody_logged_in() {
	account alice 501 /Users/alice
	out=$(preinstall) || fail "preinstall failed: $out"
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_daemons 501 0
	expect_text "$out" "no user has a GUI session"
}

# A user with a GUI and a Background session (an SSH login, or the
# session that outlives logout): the old agent, allowed in both, gave two
# daemons; after the upgrade there is one, in gui/UID, and a new login
# keeps it one.
two_sessions_one_daemon() {
	account alice 501 /Users/alice gui user
	install_payload
	mkdir -p "$T/Library/LaunchAgents"
	python3 - "$top/agent-template/metalcapd.plist" "$(agent_path)" <<'PY'
import plistlib, sys
p = plistlib.load(open(sys.argv[1], "rb"))
p["LimitLoadToSessionType"] = ["Aqua", "Background"]
plistlib.dump(p, open(sys.argv[2], "wb"))
PY
	login 501
	expect_daemons 501 2
	out=$(preinstall) || fail "preinstall failed: $out"
	expect_daemons 501 0
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_daemons 501 1
	expect_loaded "$daemon"
	login 501
	expect_daemons 501 1
}

# An installed metalcap: alice with a GUI session, her daemon and one job
# loaded, her files present; $before holds their checksums.
installed_and_running() {
	account alice 501 /Users/alice gui user
	install_payload
	user_data
	postinstall >/dev/null
	echo "gui/501/org.metalcap.job.llama" >> "$PKG_STUB_DIR/loaded"
	before=$(home_snapshot)
}

upgrade_keeps_user_data_and_jobs() {
	installed_and_running
	agent_before=$(md5sum < "$T/Users/alice/Library/Application Support/metalcap/agents/org.metalcap.job.llama.plist")
	# launchd is still tearing the old daemon down for one bootout.
	echo 1 > "$PKG_STUB_DIR/busy-org.metalcap.metalcapd"
	: > "$PKG_STUB_DIR/calls"
	out=$(preinstall) || fail "preinstall failed: $out"
	expect_daemons 501 0
	expect_loaded "gui/501/org.metalcap.job.llama"
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_daemons 501 1
	expect_loaded "gui/501/org.metalcap.job.llama"
	[ "$(home_snapshot)" = "$before" ] || fail "alice's files changed"
	[ "$(md5sum < "$T/Users/alice/Library/Application Support/metalcap/agents/org.metalcap.job.llama.plist")" = "$agent_before" ] ||
	    fail "the job's agent changed"
	[ "$(grep -c "bootout $daemon" "$PKG_STUB_DIR/calls")" -ge 2 ] ||
	    fail "no retry after 'in progress': $(cat "$PKG_STUB_DIR/calls")"
}

# The agent file gone (by hand, or a cleaner) while the daemons run: an
# upgrade still stops them, or two would serve each user after it.
upgrade_without_agent_file() {
	installed_and_running
	rm -f "$(agent_path)"
	out=$(preinstall) || fail "preinstall failed: $out"
	expect_daemons 501 0
	expect_text "$out" "stopped org.metalcap.metalcapd for alice (uid 501)"
	expect_loaded "gui/501/org.metalcap.job.llama"
}

# A later manifest drops a file, a link and a folder the older one had:
# the upgrade removes them, and everything still listed stays.
upgrade_removes_what_was_dropped() {
	installed_and_running
	m=$T/usr/local/share/metalcap/manifest
	cp "$top/pkg/manifest" "$m"
	printf '%s\n' \
	    'dir       0755  root:wheel   usr/local/libexec/metalcap/old' \
	    'file      0755  root:wheel   usr/local/libexec/metalcap/old/helper   x' \
	    'link      -     -            usr/local/bin/metalcap-old              ../libexec/metalcap/old/helper' \
	    >> "$m"
	mkdir -p "$T/usr/local/libexec/metalcap/old" "$T/usr/local/bin"
	echo old > "$T/usr/local/libexec/metalcap/old/helper"
	ln -sfn ../libexec/metalcap/old/helper "$T/usr/local/bin/metalcap-old"
	out=$(preinstall) || fail "preinstall failed: $out"
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_gone "$T/usr/local/libexec/metalcap/old"
	[ -L "$T/usr/local/bin/metalcap-old" ] && fail "the dropped link stayed"
	expect_text "$out" "removed usr/local/libexec/metalcap/old/helper"
	expect_file "$T/usr/local/libexec/metalcap/metalcapd"
	expect_file "$T/usr/local/share/metalcap/manifest"
	[ -e "$T/usr/local/share/metalcap/manifest.previous" ] &&
	    fail "the previous manifest was left behind"
	expect_daemons 501 1
}

# --target on another mounted volume (here /dev/shm, a tmpfs of its own):
# refused, nothing removed, no launchd job of the running system stopped.
uninstall_refuses_another_volume() {
	[ -d /dev/shm ] && [ -w /dev/shm ] || return 0
	installed_and_running
	other=/dev/shm
	marker=$(mktemp /dev/shm/mc-volume.XXXXXX)
	: > "$PKG_STUB_DIR/calls"
	rc=0
	out=$(sh "$T/usr/local/libexec/metalcap/uninstall" --target "$other" 2>&1) || rc=$?
	[ "$rc" = 2 ] || fail "exit $rc: $out"
	expect_text "$out" "is another volume than the running system's"
	[ -s "$PKG_STUB_DIR/calls" ] && fail "launchctl ran: $(cat "$PKG_STUB_DIR/calls")"
	expect_file "$marker"
	expect_daemons 501 1
	rm -f "$marker"
}

disabled_agent_is_reported_not_forced() {
	account alice 501 /Users/alice gui
	PKG_STUB_DISABLED=org.metalcap.metalcapd
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	expect_text "$out" "disabled"
	expect_unloaded "$daemon"
	grep -q '^enable' "$PKG_STUB_DIR/calls" && fail "the script re-enabled it"
}

# Every user, wherever the directory service puts the home: alice at the
# console with a job in each domain, bob switched away (a GUI session of
# his own) with his home outside /Users.  Nothing of metalcap stays loaded.
uninstall_removes_payload_keeps_user_data() {
	installed_and_running
	account bob 502 /Volumes/Data/bob gui
	user_data /Volumes/Data/bob 502
	# carol points her agents folder at root's LaunchAgents: what root
	# finds through that link is not hers to delete.
	account carol 503 /Users/carol
	mkdir -p "$T/Users/carol/Library/Application Support/metalcap" "$T/Library/LaunchAgents"
	cp "$top/agent-template/job.plist" "$T/Library/LaunchAgents/org.metalcap.job.system.plist"
	ln -s "$T/Library/LaunchAgents" "$T/Users/carol/Library/Application Support/metalcap/agents"
	chown -R 503:20 "$T/Users/carol"
	launchctl bootstrap gui/502 "$(agent_path)"
	# A job whose agent file alice deleted by hand runs on: metalcapd's
	# record of what it gave launchd still names it.
	loaded="$T/Users/alice/Library/Application Support/metalcap/state/loaded"
	mkdir -p "$loaded"
	echo "1234 gui/501" > "$loaded/org.metalcap.job.gone"
	# One named to clear root's terminal when the uninstall names it.
	esc=$(printf 'org.metalcap.job.x\033[2J\\c')
	echo "1234 gui/501" > "$loaded/$esc"
	chown -R 501:20 "$loaded"
	printf '%s\n' gui/501/org.metalcap.job.gone user/501/org.metalcap.job.old \
	    gui/502/org.metalcap.job.llama "gui/501/$esc" >> "$PKG_STUB_DIR/loaded"
	out=$(sh "$T/usr/local/libexec/metalcap/uninstall" --target "$T" 2>&1) ||
	    fail "uninstall failed: $out"
	grep -q org.metalcap "$PKG_STUB_DIR/loaded" &&
	    fail "still loaded: $(grep org.metalcap "$PKG_STUB_DIR/loaded")"
	expect_gone "$T/Users/alice/Library/Application Support/metalcap/agents/org.metalcap.job.llama.plist"
	expect_gone "$T/Users/alice/Library/LaunchAgents/org.metalcap.job.old.plist"
	expect_gone "$T/Volumes/Data/bob/Library/Application Support/metalcap/agents/org.metalcap.job.llama.plist"
	expect_file "$T/Users/alice/Library/LaunchAgents/com.example.other.plist"
	[ "$(home_snapshot)" = "$before" ] || fail "alice's files changed"
	expect_text "$out" "alice: kept $T/Users/alice/Library/Application Support/metalcap, $T/Users/alice/Library/Logs/metalcap"
	expect_text "$out" "bob: kept $T/Volumes/Data/bob/Library/Application Support/metalcap"
	expect_text "$out" "bob: stopped org.metalcap.metalcapd"
	expect_text "$out" "alice: stopped org.metalcap.job.gone"
	expect_text "$out" 'alice: stopped org.metalcap.job.x?[2J\c'
	if printf '%s' "$out" | grep -q "$(printf '\033')"; then fail "an escape reached the terminal"; fi
	expect_file "$loaded/org.metalcap.job.gone"
	expect_file "$T/Library/LaunchAgents/org.metalcap.job.system.plist"
	expect_text "$out" "carol: kept $T/Users/carol/Library/Application Support/metalcap/agents/org.metalcap.job.system.plist: not carol's own file"
	grep -v -e '^#' -e '^[[:space:]]*$' "$top/pkg/manifest" |
	    while read -r type _ _ path _; do
		case $type in
		shared) ;;	# made by postinstall here: see the next tests
		*) if [ -e "$T/$path" ] || [ -L "$T/$path" ]; then echo "    still there: $path"; fi ;;
		esac
	    done > "$PKG_STUB_DIR/leftovers"
	[ ! -s "$PKG_STUB_DIR/leftovers" ] || fail "$(cat "$PKG_STUB_DIR/leftovers")"
	expect_file "$T/Users/alice/Library/LaunchAgents"
	# A second run says it is not installed, and changes nothing.
	out=$(sh "$top/pkg/uninstall" --target "$T" 2>&1) && fail "second uninstall succeeded"
	expect_text "$out" "not installed"
}

# Homebrew owns /usr/local on Intel Macs: installing and uninstalling
# leave the owner and mode of every shared folder as they were, and the
# links and the LaunchAgent land where they belong.
shared_folders_keep_their_owners() {
	account alice 501 /Users/alice gui
	shared=$(grep -v '^#' "$top/pkg/manifest" | awk '$1 == "shared" { print $4 }')
	for path in usr/local $shared; do
		mkdir -p "$T/$path"
		chown 501:20 "$T/$path" 2>/dev/null
		chmod 0775 "$T/$path"
	done
	stamp() { for path in usr/local $shared; do stat -c "%n %u:%g %a" "$T/$path"; done; }
	before=$(stamp)
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	[ "$(stamp)" = "$before" ] || fail "a shared folder changed: $(stamp)"
	[ "$(readlink "$T/usr/local/bin/metalcapctl")" = ../libexec/metalcap/metalcapctl ] ||
	    fail "no metalcapctl link"
	[ -f "$T/usr/local/share/man/man8/metalcapd.8" ] || fail "man page link dangles"
	expect_file "$(agent_path)"
	[ -L "$(agent_path)" ] && fail "the LaunchAgent is a link"
	out=$(sh "$T/usr/local/libexec/metalcap/uninstall" --target "$T" 2>&1) ||
	    fail "uninstall failed: $out"
	[ "$(stamp)" = "$before" ] || fail "uninstall changed a shared folder: $(stamp)"
	expect_gone "$T/usr/local/bin/metalcapctl"
	expect_gone "$(agent_path)"
}

# Shared folders that do not exist yet are made as their parent is (here
# Homebrew's: 501:20, 0775), not root's, and uninstall takes them away.
missing_shared_folders_made_like_their_parent() {
	account alice 501 /Users/alice gui
	mkdir -p "$T/usr/local/share" "$T/Library/LaunchAgents"
	for path in usr/local usr/local/share; do
		chown 501:20 "$T/$path"
		chmod 0775 "$T/$path"
	done
	install_payload
	out=$(postinstall) || fail "postinstall failed: $out"
	for path in usr/local/bin usr/local/share/man usr/local/share/man/man8 \
	    usr/local/share/zsh/site-functions; do
		got=$(stat -c "%u:%g %a" "$T/$path")
		[ "$got" = "501:20 775" ] || fail "$path made as $got"
	done
	out=$(sh "$T/usr/local/libexec/metalcap/uninstall" --target "$T" 2>&1) ||
	    fail "uninstall failed: $out"
	expect_gone "$T/usr/local/bin"
	expect_gone "$T/usr/local/share/man"
	expect_file "$T/usr/local/share"
}

for t in fresh_install_with_gui_user fresh_install_nobody_logged_in \
    two_sessions_one_daemon upgrade_keeps_user_data_and_jobs \
    upgrade_without_agent_file upgrade_removes_what_was_dropped \
    uninstall_refuses_another_volume \
    disabled_agent_is_reported_not_forced \
    uninstall_removes_payload_keeps_user_data \
    shared_folders_keep_their_owners \
    missing_shared_folders_made_like_their_parent; do
	run_test "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
