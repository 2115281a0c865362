#!/bin/sh
# Jamf Pro extension attribute (data type String): one metalcap summary per
# user who has run metalcapd, from the status file it keeps, e.g.
#   <result>alice: ok version=0.1.0 jobs=2 unlocked=2</result>
#   <result>alice: attention version=0.1.0 jobs=1 reverted=1; llama: reverted (log: ...)</result>
# Smart groups can match "attention", "not installed" or "no status".
# Runs as root at inventory; reads files only, starts nothing.
# METALCAPCTL and METALCAP_USERS point elsewhere for tests.
ctl=${METALCAPCTL:-/usr/local/bin/metalcapctl}
users=${METALCAP_USERS:-/Users}

if [ ! -x "$ctl" ]; then
	echo "<result>not installed</result>"
	exit 0
fi
result=
for home in "$users"/*; do
	status="$home/Library/Application Support/metalcap/state/status.json"
	[ -f "$status" ] || continue
	line=$("$ctl" report "$status" 2>&1)
	result="$result${result:+ | }$(basename "$home"): $line"
done
echo "<result>${result:-no status: metalcapd has not run for any user}</result>"
