#!/bin/sh
# The Homebrew formula (pkg/homebrew/metalcap.rb), which Linux cannot run
# brew on: its Ruby parses (Debian's ruby -c), and what it says matches the
# rest of the source: the tarball make dist names, the Homebrew formulae
# scripts/deps.sh builds with on macOS, make install with PREFIX, and the
# paths the service and the test use, as pkg/manifest lays them out.
# Ends with "N passed, N failed", as scripts/run-tests.sh expects.
# MC_BUILD names the build folder whose metalcapd it asks (make test sets
# it: build/ or build/asan/).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${MC_BUILD:-$top/build}
formula=$top/pkg/homebrew/metalcap.rb
version=$(cat "$top/VERSION")
passed=0 failed=0

check() {	# NAME COMMAND...
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "ok   $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		echo "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

has() { grep -qF -- "$1" "$formula" || { echo "no '$1' in the formula"; return 1; }; }

syntax() {
	command -v ruby >/dev/null 2>&1 || { echo "ruby is missing (scripts/deps.sh)"; return 1; }
	ruby -c "$formula"
}

tarball() {
	has "/v$version/metalcap-$version.tar.gz\"" || return 1
	# shellcheck disable=SC2016
	if ! grep -q 'metalcap-$(VERSION).tar.gz' "$top/Makefile"; then
		echo "make dist does not make metalcap-VERSION.tar.gz"
		return 1
	fi
}

# Runtime dependencies: deps.sh's Homebrew formulae but cmocka (tests)
# and pkg-config (a build dependency).
dependencies() {
	want=$(sed -n "s/^BREW_FORMULAE='\(.*\)'/\1/p" "$top/scripts/deps.sh" |
	    tr ' ' '\n' | grep -v -e '^cmocka$' -e '^pkg-config$' | sort)
	got=$(sed -n 's/^  depends_on "\([^"]*\)"$/\1/p' "$formula" | sort)
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		echo "formula: $got; deps.sh: $want"
		return 1
	fi
	has 'depends_on "pkg-config" => :build'
}

# make install under Homebrew installs no dependency itself (brew's build
# PATH has no brew), and the service's log folder exists before it runs.
# (The patterns name make's variables, which the shell must not expand.)
# shellcheck disable=SC2016
install_line() {
	has 'system "make", "install", "PREFIX=#{prefix}",' &&
	    has '"AGENT_LIBEXECDIR=#{opt_libexec}", "DEPS=none"' &&
	    grep -q '^AGENT_LIBEXECDIR ?= $(LIBEXECDIR)$' "$top/Makefile" &&
	    grep -q '^install: all' "$top/Makefile" &&
	    grep -q '^PREFIX[[:space:]]*?= $(prefix)' "$top/Makefile" &&
	    grep -q '^prefix[[:space:]]*?= /usr/local$' "$top/Makefile" &&
	    grep -q '@\[ "$(DEPS)" = none \] ||' "$top/Makefile" &&
	    has '(var/"log/metalcap").mkpath'
}

daemon_has_foreground() {
	"$build/bin/metalcapd" --help 2>&1 | grep -qF -- '--foreground' || {
		echo "$build/bin/metalcapd --help names no --foreground"
		return 1
	}
}

# The service runs metalcapd from LIBEXECDIR/metalcap, in the foreground,
# kept alive, with its logs; the test runs what the manifest installs.
service_and_test() {
	has 'run [opt_libexec/"metalcap/metalcapd", "--foreground"]' &&
	    has 'keep_alive successful_exit: false' &&
	    has 'process_type :interactive' &&
	    has 'log_path var/"log/metalcap/' &&
	    has 'error_log_path var/"log/metalcap/' &&
	    grep -q ' usr/local/libexec/metalcap/metalcapd ' "$top/pkg/manifest" &&
	    daemon_has_foreground &&
	    has '"#{bin}/metalcapctl --version"' &&
	    grep -q '^link .* usr/local/bin/metalcapctl ' "$top/pkg/manifest" &&
	    has '#{libexec}/metalcap/metalcap-probe --json' &&
	    grep -q ' usr/local/libexec/metalcap/metalcap-probe ' "$top/pkg/manifest"
}

# The caveats say what doctor says: never brew services and the package.
caveats() {
	has 'brew services start metalcap' &&
	    has '/Library/LaunchAgents/org.metalcap.metalcapd.plist' &&
	    has 'metalcapctl doctor'
}

# The formula's test as it runs there, on this build: metalcapd in a home
# of its own, metalcapctl status through its socket.
formula_test() {
	has '"--home", home.to_s, "--foreground"' &&
	    has '/^NAME +STATE/, shell_output("#{bin}/metalcapctl --home #{home} status")' ||
	    return 1
	home=$(mktemp -d)
	"$build/bin/metalcapd" --home "$home/mc" --foreground >/dev/null 2>&1 &
	pid=$!
	i=0
	while [ ! -S "$home/mc/metalcapd.sock" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	out=$("$build/bin/metalcapctl" --home "$home/mc" status 2>&1)
	rc=$?
	kill -TERM "$pid"
	wait "$pid"
	rm -rf "$home"
	if [ "$rc" -ne 0 ] || ! echo "$out" | grep -Eq '^NAME +STATE'; then
		echo "metalcapctl status: $rc: $out"
		return 1
	fi
}

# The formula's license is the one the source (and so the tarball) carries.
license_file() {
	[ -f "$top/LICENSE" ] || { echo "no LICENSE at the top of the source"; return 1; }
	head -n 1 "$top/LICENSE" | grep -qx "MIT License" ||
	    { echo "LICENSE is not the MIT license"; return 1; }
	has 'license "MIT"'
}

check "ruby -c" syntax
check "license" license_file
check "formula test" formula_test
check "tarball url" tarball
check "dependencies" dependencies
check "install line" install_line
check "service and test" service_and_test
check "caveats" caveats
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
