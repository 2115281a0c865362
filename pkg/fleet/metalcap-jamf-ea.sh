#!/bin/sh
# Jamf Pro extension attribute (data type String): one metalcap summary per
# user who has run metalcapd, from the status file it keeps, e.g.
#   <result>alice: ok version=0.1.0 jobs=2 unlocked=2</result>
#   <result>alice: attention version=0.1.0 jobs=1 reverted=1; llama: reverted (log: ...)</result>
# Smart groups can match "attention", "not installed", "status unreadable"
# or "no status".
#
# Jamf runs it as root over files users own, so: users and their homes
# come from the directory service, not /Users/NAME; metalcapctl report
# --user-home opens every folder below a home without following a link a
# user could plant; error text (which could quote a file) never reaches
# the result, only "status unreadable"; and job names and reasons, which
# users choose, are escaped for the XML around them.  It reads files only
# and starts nothing.  It finds people as the installer scripts do, with
# their helper (launchd-user.sh).  metalcap is looked for where the
# package, Homebrew on Apple silicon and Homebrew on Intel put it (make
# install with another PREFIX: add its libexec/metalcap to the list);
# METALCAP_LIBEXEC, a list like PATH, replaces the list for tests.
search=${METALCAP_LIBEXEC:-/usr/local/libexec/metalcap:/opt/homebrew/opt/metalcap/libexec/metalcap:/usr/local/opt/metalcap/libexec/metalcap}
status_below="Library/Application Support/metalcap/state/status.json"

libexec=
old_ifs=$IFS
IFS=:
for dir in $search; do
	if [ -x "$dir/metalcapctl" ] && [ -r "$dir/launchd-user.sh" ]; then
		libexec=$dir
		break
	fi
done
IFS=$old_ifs
if [ -z "$libexec" ]; then
	echo "<result>not installed</result>"
	exit 0
fi
ctl=$libexec/metalcapctl
# shellcheck source=pkg/scripts/launchd-user.sh
. "$libexec/launchd-user.sh"

xml_escape() {
	sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'
}

result=
for user in $(people | cut -d ' ' -f 1); do
	home=$(home_of "$user")
	{ [ -n "$home" ] && [ -d "$home" ]; } || continue
	{ [ -e "$home/$status_below" ] || [ -L "$home/$status_below" ]; } ||
	    continue
	rc=0
	line=$("$ctl" report --user-home "$home" 2>/dev/null) || rc=$?
	case $rc in
	0 | 4) ;;
	*) line="status unreadable" ;;
	esac
	result="$result${result:+ | }$user: $line"
done
printf '<result>%s</result>\n' "$(printf '%s' \
    "${result:-no status: metalcapd has not run for any user}" | xml_escape)"
