#!/bin/sh
# make demo: metalcapd for real on Linux, under a temporary --home, driving
# the launchctl SIMULATOR, which runs the fake-llama stand-in on the
# SIMULATED paravirtual Metal device (Linux has neither launchd nor Metal).
#   scripts/demo.sh BUILD_DIR [--keep]
set -eu
build=$(cd "${1:-build}" && pwd)
keep=${2:-}
home=$(mktemp -d /tmp/metalcap-demo.XXXXXX)
switches="$home/device-switches"
export LAUNCHCTL_SIM_DIR="$home/launchd" LAUNCHCTL_SIM_THROTTLE=2
export MTLSIM_SWITCHES="$switches"
ctl() { "$build/bin/metalcapctl" --home "$home" "$@"; }
# status exits 4 when a job is not healthy: that is what we show here.
show() { ctl status || true; }
say() { printf '\n== %s\n' "$*"; }

cleanup() {
	[ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null
	[ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	"$build/tests/launchctl-sim" bootout "gui/$(id -u)/org.metalcap.job.llama" 2>/dev/null || true
	if [ "$keep" = --keep ]; then
		echo "kept: $home"
	else
		sleep 0.5
		rm -rf "$home"
	fi
}
trap cleanup EXIT INT TERM

# wait_state JOB STATE: poll status until the job is in STATE.
wait_state() {
	i=0
	while [ $i -lt 200 ]; do
		ctl status "$1" 2>/dev/null | awk -v s="$2" \
		    'NR == 2 && $2 == s && $4 != "-" { found = 1 } END { exit !found }' &&
		    return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "demo: $1 did not become $2" >&2
	return 1
}

pid_of() { ctl status "$1" | awk 'NR == 2 { print $4 }'; }

gpu_lines() {
	sleep 0.3
	grep -E 'GPU family: MTLGPUFamilyApple|simdgroup matrix' \
	    "$home/logs/llama.err.log" | tail -n 2 | sed 's/^/      /'
}

: > "$switches"
mkdir -p "$home/jobs.d"
cat > "$home/jobs.d/llama.plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>ProgramArguments</key>
	<array>
		<string>$build/tests/fake-llama</string>
	</array>
	<key>Profile</key>
	<string>apple9</string>
	<key>Unlocked</key>
	<false/>
	<key>EnvironmentVariables</key>
	<dict>
		<key>MTLSIM_SWITCHES</key>
		<string>$switches</string>
	</dict>
</dict>
</plist>
PLIST

echo "metalcap demo — everything runs under $home"
echo "(launchctl and the Metal device are simulators; the daemon, client,"
echo " shim and probe are the real programs)"

say "Starting metalcapd, with a llama server job that starts stock"
"$build/bin/metalcapd" --home "$home" \
    --launchctl "$build/tests/launchctl-sim" >/dev/null 2>&1 &
daemon=$!
wait_state llama stock
"$build/bin/metalcapctl" --home "$home" watch > "$home/events" 2>/dev/null &
watcher=$!
show
echo "   The server picked the slow kernels:"
gpu_lines

say "metalcapctl enable llama: the daemon probes the profile first"
ctl enable llama >/dev/null
wait_state llama unlocked
show
echo "   Probe passed; the server now runs with the shim and fast kernels:"
gpu_lines
echo "   The shim's own proof, for pid $(pid_of llama):"
sed 's/^/      /' "$home"/state/reports/metalcap."$(pid_of llama)".report

say "The GPU starts failing a pipeline; the next request hits it"
echo "MTLSIM_FAIL=simdgroup_matrix:compile" > "$switches"
kill -USR1 "$(pid_of llama)"
wait_state llama reverted
show
echo "   The shim saw the Metal call fail inside the server, its log named it,"
echo "   and the daemon went back to stock (a log line alone would be only text)."

say "enable again while the device still fails: refused after a fresh probe"
ctl enable llama || true

say "The device is fixed: enable probes again and unlocks"
: > "$switches"
ctl enable llama >/dev/null
wait_state llama unlocked
show

say "What metalcapctl watch printed meanwhile"
sleep 0.3
sed 's/^/   /' "$home/events"
