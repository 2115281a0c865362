#!/bin/sh
# scripts/mac-acceptance.sh in simulator mode (--sim): the acceptance run
# the macOS workflow makes on GitHub's runners, its logic run here against
# launchctl-sim, the simulated paravirtual device and the llama stand-ins.
# What the evidence folder says is checked from its files, and a run with
# a step broken (a shim that hooks nothing, a device whose SIMD-group
# matrices compute wrong) must fail naming that step.
# Ends with "N passed, N failed", as scripts/run-tests.sh expects.
# MC_BUILD names the build folder (make test sets it).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${MC_BUILD:-$top/build}
script=$top/scripts/mac-acceptance.sh
tmp=$(mktemp -d /tmp/mc-accept-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
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

# summary.json against a Python assertion on s (the summary) and out.
summary() {	# OUT EXPRESSION
	python3 -c 'import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "summary.json")))
assert eval(sys.argv[2]), sys.argv[2]' "$1" "$2"
}

# --- a whole run passes, and its evidence says what happened ---------------

good=$tmp/good
run_good() {
	"$script" --sim "$build" "$good" >"$tmp/good.log" 2>&1 ||
	    { cat "$tmp/good.log"; return 1; }
}
check "a run in simulator mode passes" run_good
check "every step passed, none failed" summary "$good" \
    's["passed"] and s["failed_step"] is None and [t["name"] for t in s["steps"]] == ["probe-stock", "check", "add", "probe-unlocked", "job", "shim", "health", "bench", "verify"]'
check "families: stock Apple5, raised to the profile's Apple9" summary "$good" \
    's["probe_stock"]["apple_family_max"] == 1005 and s["probe_unlocked"]["apple_family_max"] == 1009 and s["probe_stock"]["shim"] is None and s["probe_unlocked"]["shim"]["state"] == "hooked"'
check "stock skips the SIMD-group matrix check the shim's profile passes" \
    summary "$good" '"simdgroup_matrix" in s["probe_stock"]["checks_skipped"] and "simdgroup_matrix" in s["probe_unlocked"]["checks_passed"]'
# The job's own pid, in status and in the shim's report kept beside it.
check "the job ran with the shim: its report for its pid says hooked" \
    summary "$good" 's["job"]["state"] == "unlocked" and s["job"]["shim_report"].startswith("metalcap pid=%d " % s["job"]["pid"]) and " state=hooked family_max=1009 " in s["job"]["shim_report"] and " class=AppleParavirtDevice " in s["job"]["shim_report"] and open(os.path.join(out, "shim.report")).read().strip() == s["job"]["shim_report"]'
check "the job's health check ran in metalcapd and passed" sh -c \
    "grep -q 'job acceptance: health-ok' '$good/metalcapd.log' &&
    ! grep -q 'health check failed' '$good/metalcapd.log' &&
    grep -q '<key>HealthCheck</key>' '$good/job.plist'"
# The simulated GPU path is faster (tests/sim/README.md's rates).
check "bench: unlocked faster than stock in every test" summary "$good" \
    'len(s["bench"]["tests"]) == 2 and all(t["ratio"] > 1 and t["unlocked_tokens_per_s"] > t["stock_tokens_per_s"] for t in s["bench"]["tests"])'
check "bench kept Cua's evidence folder" sh -c \
    "cd '$good/bench' && test -s results.csv && test -s metadata.md &&
    test -s stock-1.json && test -s unlocked-2.json &&
    sha256sum --quiet -c SHA256SUMS"
check "verify: the KL-divergence verdict is pass" summary "$good" \
    's["verify"]["verdict"] == "pass" and s["verify"]["figures"]["mean_kld"] <= s["verify"]["limits"]["mean_kld"]'
check "the folder's SHA256SUMS covers every file and checks" sh -c \
    "cd '$good' && sha256sum --quiet -c SHA256SUMS &&
    test \"\$(find . -type f ! -path ./SHA256SUMS | wc -l)\" -eq \
    \"\$(wc -l < SHA256SUMS)\""
# The run's home (its own launchctl-sim state, daemon socket; named in
# the health check it wrote) is gone, and nothing runs from it.
good_home=$(grep -o '/tmp/mc-accept\.[A-Za-z0-9]*' "$good/steps.tsv" | head -n 1)
# ([/]: the pattern does not match the sh -c that holds it.)
check "nothing of the run is left running, its home removed" sh -c \
    "test -n '$good_home' && test ! -e '$good_home' &&
    ! pgrep -f '[/]${good_home#/}/' >/dev/null"

# --- a shim that hooks nothing: the run must fail, naming the step ----------

# A copy of the build whose libmetalcap is an empty library: it loads, as
# a shim dyld inserts, and raises nothing.
noshim=$tmp/noshim-build
make_noshim() {
	mkdir -p "$noshim/bin" "$noshim/lib" "$noshim/tests" &&
	cp "$build/bin/metalcapd" "$build/bin/metalcapctl" \
	    "$build/bin/metalcap-probe" "$noshim/bin/" &&
	cp -R "$build/share" "$noshim/" &&
	for t in libmtlsim.so fake-llama launchctl-sim llama-bench-sim \
	    llama-perplexity-sim; do cp "$build/tests/$t" "$noshim/tests/" ||
	    return 1; done &&
	printf 'int metalcap_nothing;\n' >"$tmp/nothing.c" &&
	cc -shared -fPIC "$tmp/nothing.c" -o "$noshim/lib/libmetalcap.so"
}
broken_run() {	# NAME BUILD [ENV...]: exits 0 when the run failed as it must
	name=$1 b=$2
	shift 2
	if env "$@" "$script" --sim "$b" "$tmp/$name" >"$tmp/$name.log" 2>&1; then
		echo "the run passed"
		return 1
	fi
	cat "$tmp/$name.log"
}
check "a copy of the build with a shim that hooks nothing" make_noshim
check "without the shim the run fails" broken_run noshim "$noshim"
check "... at the daemon's probe, named in its output and summary" sh -c \
    "grep -q '^mac-acceptance: FAIL probe-unlocked: ' '$tmp/noshim.log'"
check "... and the summary stops there" summary "$tmp/noshim" \
    'not s["passed"] and s["failed_step"] == "probe-unlocked" and s["bench"] is None'

# --- a device that computes SIMD-group matrices wrong ------------------------

check "a device computing wrong fails the run" broken_run wrong "$build" \
    MTLSIM_FAIL=simdgroup_matrix:wrong
check "... at the probe with the shim, the job never unlocked" summary \
    "$tmp/wrong" 'not s["passed"] and s["failed_step"] == "probe-unlocked" and s["job"] is None and s["probe_unlocked"]["verdict"]["family"] is False'

# --- a job the shim cannot get into (dyld refuses it, as for an arm64e
# --- program and an arm64 shim): the probe passes, the job does not --------

check "a shim dyld cannot load into the job fails the run" broken_run arch \
    "$build" LAUNCHCTL_SIM_DYLD_ARCH=arm64e
check "... at the job, reverted by metalcapd with dyld's words" summary \
    "$tmp/arch" 'not s["passed"] and s["failed_step"] == "job" and s["probe_unlocked"]["shim"]["state"] == "hooked" and s["job"]["state"] == "reverted" and s["job"]["shim_report"] is None and "could not be loaded" in s["steps"][-1]["detail"]'

# --- usage -------------------------------------------------------------------

check "on Linux, without --sim, it refuses and points at --sim" sh -c \
    "! '$script' '$tmp/plain' 2>'$tmp/plain.err' &&
    grep -q 'with --sim BUILD_DIR' '$tmp/plain.err' && test ! -e '$tmp/plain'"
check "an evidence folder that is not empty is refused" sh -c \
    "! '$script' --sim '$build' '$good' 2>'$tmp/full.err' &&
    grep -q 'is not empty' '$tmp/full.err'"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
