#!/bin/sh
# The payload check must fail, naming the path, on each kind of damage to a
# good payload tree (from make pkg-root): a check that cannot fail checks
# nothing.  Runs in the fakeroot session pkg-root saved, so owners are real.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-$top/build/pkg/root}
case $root in /*) ;; *) root=$(pwd)/$root ;; esac

if [ "$(id -u)" -ne 0 ] && [ "$(uname -s)" = Linux ]; then
	exec fakeroot -i "$root.fakeroot" -- "$0" "$root"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# mutate NAME EXPECTED-TEXT COMMAND...: damage a fresh copy, expect the
# check to fail with EXPECTED-TEXT in its output.  $manifest, when set,
# is the manifest the check reads.
mutate() {
	name=$1 want=$2
	shift 2
	rm -rf "$work/root"
	cp -a "$root" "$work/root"
	(cd "$work/root" && "$@")
	if out=$(PKG_MANIFEST=${manifest:-$top/pkg/manifest} \
	    "$top/scripts/pkg-check.sh" "$work/root" 2>&1); then
		echo "FAIL $name: the check passed"
		failed=$((failed + 1))
	elif echo "$out" | grep -qF "$want"; then
		echo "ok   $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name: no '$want' in:"
		echo "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

agent=usr/local/share/metalcap/org.metalcap.metalcapd.plist

# sed -i is GNU's or BSD's, not both: edit through a copy.
edit() {
	sed "$1" "$2" > "$2.new" && mv "$2.new" "$2"
}
libexec=usr/local/libexec/metalcap

mutate "mode" "$libexec/metalcapd: mode 775, want 755" \
    chmod 775 "$libexec/metalcapd"
# Owners are checked only where this process can see them (root, or
# fakeroot on Linux); a Mac user building make pkg cannot.
if [ "$(id -u)" -eq 0 ]; then
	mutate "owner" "$libexec/libmetalcap.dylib: owner 501:20" \
	    chown 501:20 "$libexec/libmetalcap.dylib"
else
	echo "skip owner: owners are not visible to this user"
fi
mutate "missing file" "usr/local/share/metalcap/man/man8/metalcapd.8: missing" \
    rm usr/local/share/metalcap/man/man8/metalcapd.8
mutate "extra file" "$libexec/debug.log: in the payload but not" \
    touch "$libexec/debug.log"
mutate "dylib where an executable belongs" "$libexec/metalcapd: " \
    cp "$libexec/libmetalcap.dylib" "$libexec/metalcapd"
mutate "single architecture" "$libexec/metalcapctl: " \
    cp "$top/build/macos/arm64/metalcapctl" "$libexec/metalcapctl"
mutate "a file in a shared folder" "usr/local/bin: in the payload but not" \
    sh -c 'mkdir -p usr/local/bin && touch usr/local/bin/metalcapctl'
mutate "a link postinstall places" "usr/local/share/man/man1/metalcapctl.1: in the payload, but postinstall" \
    sh -c 'mkdir -p usr/local/share/man/man1 && ln -s ../../metalcap/man/man1/metalcapctl.1 usr/local/share/man/man1/metalcapctl.1' 
mutate "broken plist" "usr/local/share/metalcap/job.plist: not a valid" \
    sh -c 'echo "<plist><dict>" > usr/local/share/metalcap/job.plist'
mutate "agent runs a program outside the payload" "$agent: runs" \
    edit 's|/usr/local/libexec/metalcap/metalcapd|/opt/metalcapd|' "$agent"
mutate "agent label" "$agent: Label is" \
    edit 's|<string>org.metalcap.metalcapd</string>|<string>metalcapd</string>|' "$agent"
mutate "agent process type" "$agent: ProcessType is 'Background'" \
    edit 's|<string>Interactive</string>|<string>Background</string>|' "$agent"

# The manifest itself: a payload entry in a shared folder, whose owner
# Installer would reset (Homebrew owns /usr/local on Intel Macs).
manifest=$work/manifest
{ cat "$top/pkg/manifest"
  echo "file 0644 root:wheel usr/local/bin/metalcap-env pkg/manifest"; } > "$manifest"
mutate "payload entry in a shared folder" \
    "usr/local/bin/metalcap-env: outside metalcap's own folders" true

echo "pkg-check mutations: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
