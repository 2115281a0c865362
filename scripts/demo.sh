#!/bin/sh
# make demo: metalcapd for real on Linux, under --home, driving the launchctl
# SIMULATOR, which runs the fake-llama stand-in on the SIMULATED paravirtual
# Metal device (Linux has neither launchd nor Metal).
#   scripts/demo.sh BUILD_DIR [--keep]
set -eu
build=$(cd "${1:-build}" && pwd)
keep=${2:-}
home=$(mktemp -d /tmp/metalcap-demo.XXXXXX)
export LAUNCHCTL_SIM_DIR="$home/launchd" LAUNCHCTL_SIM_THROTTLE=2
ctl() { "$build/bin/metalcapctl" --home "$home" "$@"; }

cleanup() {
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

# wait_state JOB STATE: poll status until the job is in STATE with a pid.
wait_state() {
	i=0
	while [ $i -lt 100 ]; do
		line=$(ctl status "$1" 2>/dev/null | awk 'NR == 2')
		set -- "$1" "$2" $line
		[ "${4:-}" = "$2" ] && [ "${6:-"-"}" != - ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "demo: $1 did not become $2" >&2
	return 1
}

show_gpu_lines() {
	sleep 0.3
	grep -E 'GPU family: MTLGPUFamilyApple|simdgroup matrix|has bfloat' \
	    "$home/logs/llama.err.log" | tail -n 3 | sed 's/^/    /'
}

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
</dict>
</plist>
PLIST

echo "== metalcapd --home $home (launchctl and Metal simulated)"
"$build/bin/metalcapd" --home "$home" \
    --launchctl "$build/tests/launchctl-sim" >/dev/null 2>&1 &
daemon=$!
wait_state llama unlocked
echo
echo "== metalcapctl status"
ctl status
echo
echo "== the workload's own log: llama.cpp picked its fast kernels"
show_gpu_lines
echo
echo "== the shim's proof of injection"
sed 's/^/    /' "$home"/state/reports/metalcap.*.report | tail -n 1
echo
echo "== metalcapctl disable llama  (runs it stock)"
ctl disable llama >/dev/null
wait_state llama stock
ctl status
show_gpu_lines
echo
echo "== metalcapctl enable llama --profile apple7"
ctl enable llama --profile apple7 >/dev/null
wait_state llama unlocked
ctl status
show_gpu_lines
