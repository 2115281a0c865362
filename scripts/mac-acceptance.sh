#!/bin/sh
# The acceptance run: metalcap end to end on one guest, with an evidence
# folder shaped like Cua's at the end.
#
#   scripts/mac-acceptance.sh [--build DIR] [--model GGUF] OUT_DIR   on a Mac
#   scripts/mac-acceptance.sh --sim BUILD_DIR OUT_DIR                on Linux
#
# Steps, each failing the run with its name: the probe stock and with the
# shim (families, verdict); metalcapctl check on the server; a job written
# with metalcapctl add, given a HealthCheck, run by launchd under a
# metalcapd of this run's own (--home), until it is unlocked, the shim's
# report for its pid says hooked and its health check passed; bench stock
# against unlocked (tokens/s, ratio); verify (llama.cpp's KL divergence).
# OUT_DIR (new or empty) gets summary.json, every raw file and SHA256SUMS.
#
# On a Mac (written for GitHub's arm64 runners and any Apple-silicon guest;
# not run by this project's CI): the programs of --build (default build/),
# the real launchd in gui/UID (the runner's user is logged in: GitHub's
# images log it in automatically), and the llama.cpp scripts/llama.sh built
# with Metal.  --model (or METALCAP_MODEL) names the GGUF; nothing is
# downloaded here.  With --sim: the same steps against the simulators of
# BUILD_DIR (launchctl-sim, the simulated paravirtual device, fake-llama,
# llama-bench-sim, llama-perplexity-sim, a stand-in model), for make test.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
mode=macos build=$top/build model=${METALCAP_MODEL:-}
profile=${METALCAP_PROFILE:-apple9}
job=acceptance
usage() {
	echo "usage: mac-acceptance.sh [--sim BUILD_DIR | --build DIR]" \
	    "[--model GGUF] [--profile P] OUT_DIR" >&2
	exit 2
}
while [ $# -gt 1 ]; do
	case $1 in
	--sim)		mode=sim build=$2; shift 2 ;;
	--build)	build=$2; shift 2 ;;
	--model)	model=$2; shift 2 ;;
	--profile)	profile=$2; shift 2 ;;
	*)		usage ;;
	esac
done
[ $# -eq 1 ] || usage
case $1 in -*) usage ;; esac
if [ "$mode" = macos ] && [ "$(uname -s)" != Darwin ]; then
	echo "mac-acceptance: not a Mac: on Linux run it with --sim BUILD_DIR" \
	    "(make test does)" >&2
	exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd -P)
[ -z "$(ls -A "$out")" ] || { echo "mac-acceptance: $out is not empty" >&2; exit 2; }
build=$(cd "$build" && pwd -P)
ctl_bin=$build/bin/metalcapctl
steps=$out/steps.tsv
: >"$steps"

say() { printf 'mac-acceptance: %s\n' "$*" >&2; }
# steps.tsv: one line a step (name, ok or fail, what it found), the words
# made one line: they quote programs' output.
step() { printf '%s\t%s\t%s\n' "$1" "$2" "$(printf '%s' "$3" | tr '\t\n' '  ')" \
    >>"$steps"; }
ok() { step "$1" ok "$2"; say "ok   $1: $2"; }
# A failed step ends the run, named, and is the summary's last step.
fail() {
	step "$1" fail "$2"
	say "FAIL $1: $2"
	exit 1
}
ctl() { "$ctl_bin" --home "$home" "$@"; }
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"
	else shasum -a 256 "$@"; fi
}
# A field of a JSON file, by a Python expression on d (a library reads it).
field() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# --- the platform: the real one, or the simulators ----------------------

# A short, link-free home: the shim writes no report through a link (on
# macOS /tmp and /var are links), and a socket path has 104 bytes.
home=$(cd "$(mktemp -d /tmp/mc-accept.XXXXXX)" && pwd -P)
trap 'rm -rf "$home"' EXIT	# until finish (below) takes over
uid=$(id -u)
label=org.metalcap.job.$job
if [ "$mode" = sim ]; then
	export LAUNCHCTL_SIM_DIR="$home/launchd" MTLSIM_SWITCHES="$home/switches"
	export TMPDIR="$home"
	: >"$MTLSIM_SWITCHES"
	launchctl=$build/tests/launchctl-sim
	server=$build/tests/fake-llama
	bench=$build/tests/llama-bench-sim
	ppl=$build/tests/llama-perplexity-sim
	# The stand-in model llama-bench-sim reads (tests/e2e/test_bench_e2e.c).
	model=$home/model.gguf
	printf 'GGUF\ngeneral.type=llama 1B Q4_K - Medium\ngeneral.size=%s\n%s\n' \
	    667815936 general.params=1100048384 >"$model"
	server_args="-m $model"
	# fake-llama serves no HTTP: its "listening" line is its health.
	health="/bin/sh -c 'grep -q \"listening on http\" \"\$0\"' $home/logs/$job.err.log"
	bench_args="-p 64 -n 16 -r 2" samples=2 ppl_args="-c 128"
	wait_s=30
else
	if [ -z "$model" ] || [ ! -f "$model" ]; then
		say "--model GGUF (or METALCAP_MODEL) is needed"
		exit 2
	fi
	model=$(cd "$(dirname "$model")" && pwd -P)/$(basename "$model")
	launchctl=/bin/launchctl
	llama=$("$top/scripts/llama.sh" where)/build/bin
	server=$llama/llama-server bench=$llama/llama-bench
	ppl=$llama/llama-perplexity
	port=${METALCAP_PORT:-18080}
	server_args="-m $model --host 127.0.0.1 --port $port -c 512 -np 1 -ngl 99"
	health="/usr/bin/curl -fsS --max-time 4 http://127.0.0.1:$port/health"
	bench_args="-p 128 -n 32 -r 3 -ngl 99" samples=3
	ppl_args="-c 128 -ngl 99"
	wait_s=300
fi
for p in "$ctl_bin" "$build/bin/metalcapd" "$build/bin/metalcap-probe" \
    "$server" "$bench" "$ppl" "$launchctl"; do
	[ -x "$p" ] || { say "$p is missing: build it first"; exit 2; }
done

daemon=
# Whatever happened: the job removed and booted out, the daemon stopped,
# then the summary and the checksums written.
finish() {
	rc=$?
	# Everything below runs, whatever one step says: the evidence first.
	set +e
	trap - EXIT INT TERM
	if [ -n "$daemon" ]; then
		ctl remove "$job" >/dev/null 2>&1 || true
		gone=0
		while [ $gone -lt 100 ] && ctl status "$job" >/dev/null 2>&1; do
			sleep 0.1
			gone=$((gone + 1))
		done
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	"$launchctl" bootout "gui/$uid/$label" >/dev/null 2>&1 || true
	cp "$home/logs/metalcapd.log" "$out/metalcapd.log" 2>/dev/null || true
	cp "$home/logs/$job.err.log" "$out/job.stderr.log" 2>/dev/null || true
	python3 "$top/scripts/mac-acceptance-summary.py" "$out" "$mode" \
	    "$profile" "$rc" || rc=1
	sums=$home/SHA256SUMS
	(cd "$out" && find . -type f | sort | sed 's|^\./||' |
	    while read -r f; do sha256 "$f"; done) >"$sums"
	mv "$sums" "$out/SHA256SUMS"
	[ "$mode" = sim ] && sleep 0.3	# the simulator's supervisors drain
	rm -rf "$home"
	if [ "$rc" -eq 0 ]; then
		say "passed: evidence in $out"
	else
		say "failed: evidence so far in $out"
	fi
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- 1. the probe, stock: what the guest's GPU claims ---------------------

rc=0
"$build/bin/metalcap-probe" --json >"$out/probe-stock.json" || rc=$?
[ "$rc" -eq 0 ] || fail probe-stock "metalcap-probe exited $rc"
ok probe-stock "$(field "$out/probe-stock.json" 'd["device"]'), Apple families up to $(field "$out/probe-stock.json" \
    'max(int(k) for k, v in d["families"].items() if v and k < "2000")')"

# --- 2. check: can the shim get into the server? ---------------------------

rc=0
ctl --json check "$server" >"$out/check.json" || rc=$?
[ "$rc" -eq 0 ] || fail check "metalcapctl check $server exited $rc: $(field \
    "$out/check.json" 'd["verdict"]' 2>/dev/null)"
ok check "$(field "$out/check.json" 'd["verdict"]') for $(field \
    "$out/check.json" 'd["machine"]')"

# --- 3. the job: add, a health check, the daemon, launchd ------------------

env_arg=
[ "$mode" = sim ] && env_arg="--env MTLSIM_SWITCHES=$MTLSIM_SWITCHES"
# shellcheck disable=SC2086	# the arguments are words on purpose
ctl add "$job" --profile "$profile" $env_arg -- "$server" $server_args \
    >/dev/null || fail add "metalcapctl add refused the job"
# add has no option for it: the HealthCheck key of metalcap(5), added
# before the daemon starts so that the job's first run has it.
python3 - "$home/jobs.d/$job.plist" "$health" <<'EOF' || fail add "no HealthCheck"
import plistlib, shlex, sys
with open(sys.argv[1], "rb") as f:
    job = plistlib.load(f)
job["HealthCheck"] = {"ProgramArguments": shlex.split(sys.argv[2]),
                      "TimeoutSeconds": 5}
with open(sys.argv[1], "wb") as f:
    plistlib.dump(job, f)
EOF
cp "$home/jobs.d/$job.plist" "$out/job.plist"
ok add "$job.plist with a HealthCheck: $health"

# shellcheck disable=SC2086
METALCAPD_DEBUG=1 "$build/bin/metalcapd" --home "$home" \
    --launchctl "$launchctl" >/dev/null 2>&1 &
daemon=$!

# The daemon's own probe of the profile, with the shim: what gates the job.
# (status exits 3 while nobody answers, 4 for a job not healthy yet.)
i=0
while :; do
	rc=0
	ctl status >/dev/null 2>&1 || rc=$?
	[ "$rc" -ne 3 ] && break
	kill -0 "$daemon" 2>/dev/null || fail daemon "metalcapd exited"
	[ $i -lt 100 ] || fail daemon "metalcapd did not answer in 10 s"
	sleep 0.1
	i=$((i + 1))
done
rc=0
ctl --json probe --profile "$profile" >"$out/probe-unlocked.json" || rc=$?
[ "$rc" -eq 0 ] || fail probe-unlocked "the probe of $profile failed (exit $rc)"
[ "$(field "$out/probe-unlocked.json" 'd["report"]["shim"]["state"]')" = \
    hooked ] || fail probe-unlocked "the probe ran without the shim hooked"
family=$(field "$out/probe-unlocked.json" 'd["report"]["shim"]["family_max"]')
[ "$(field "$out/probe-unlocked.json" \
    "d['report']['families']['$family']")" = True ] ||
    fail probe-unlocked "the probe did not see family $family with the shim"
ok probe-unlocked "$profile: Apple families up to $family, verdict $(field \
    "$out/probe-unlocked.json" 'd["report"]["verdict"]')"

# Unlocked, with a pid: the status table's second line (NAME STATE ... PID).
# A state the daemon leaves only by a request (reverted, failed, error,
# invalid) fails at once, with its reason.
i=0 pid='' state=''
while [ $i -lt $((wait_s * 10)) ]; do
	line=$(ctl status "$job" 2>/dev/null | awk 'NR == 2 { print $2, $4 }') ||
	    true
	state=${line%% *}
	case $state in
	unlocked) [ "${line#* }" != - ] && pid=${line#* } && break ;;
	reverted | failed | error | invalid) break ;;
	esac
	sleep 0.1
	i=$((i + 1))
done
ctl --json status "$job" >"$out/status.json" 2>&1 || true
[ -n "$pid" ] || fail job "$job is ${state:-not known} (not unlocked) after \
$((i / 10)) s: $(ctl status "$job" 2>&1 | tail -n +2)"
ok job "$label runs unlocked under $launchctl, pid $pid"

# The proof of injection is the shim's own report for that pid, not a log.
report=$home/state/reports/metalcap.$pid.report
i=0
while [ ! -s "$report" ] && [ $i -lt $((wait_s * 10)) ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -s "$report" ] || fail shim "no report from the shim for pid $pid"
cp "$report" "$out/shim.report"
grep -q "^metalcap pid=$pid .*state=hooked family_max=$family " "$report" ||
    fail shim "the shim's report for pid $pid: $(cat "$report")"
ok shim "pid $pid: $(grep -o 'state=hooked family_max=[0-9]*' "$report"), class $(sed -n 's/.* class=\([^ ]*\).*/\1/p' "$report")"

# Health: the daemon ran the job's check and it passed for this process.
i=0
until grep -q "job $job: health-ok" "$home/logs/metalcapd.log" 2>/dev/null; do
	grep -q "job $job: health check failed" "$home/logs/metalcapd.log" &&
	    fail health "$(grep -m1 "job $job: health check failed" \
	    "$home/logs/metalcapd.log")"
	[ $i -lt $((wait_s * 10)) ] || fail health "no passed check in $wait_s s"
	sleep 0.1
	i=$((i + 1))
done
# shellcheck disable=SC2086
sh -c "$health" >"$out/health.txt" 2>&1 ||
    fail health "the check fails when run here"
[ "$(ctl status "$job" | awk 'NR == 2 { print $2 " " $4 }')" = \
    "unlocked $pid" ] || fail health "$job left unlocked or restarted"
ok health "metalcapd's check passed; unlocked, pid $pid"

# --- 4. bench: stock against unlocked --------------------------------------

rc=0
# shellcheck disable=SC2086
ctl --json bench --profile "$profile" --samples "$samples" \
    --out "$out/bench" -- "$bench" -m "$model" $bench_args \
    >"$out/bench.json" 2>"$out/bench.stderr" || rc=$?
[ "$rc" -eq 0 ] || fail bench "metalcapctl bench exited $rc: $(tail -n 1 \
    "$out/bench.stderr")"
ok bench "$(field "$out/bench.json" '", ".join("%s %.1f -> %.1f tok/s (%.2fx)" % (t["name"], t["stock"]["median"], t["unlocked"]["median"], t["ratio"]) for t in d["tests"])')"

# --- 5. verify: the same model computed? -----------------------------------

text=$home/text.txt
i=0
while [ $i -lt 100 ]; do
	echo "the quick brown fox jumps over a lazy dog. it was a sunny day."
	i=$((i + 1))
done >"$text"
rc=0
# shellcheck disable=SC2086
ctl --json verify --profile "$profile" --out "$out/verify" -- "$ppl" \
    -m "$model" -f "$text" $ppl_args >"$out/verify.json" \
    2>"$out/verify.stderr" || rc=$?
[ "$rc" -eq 0 ] || fail verify "metalcapctl verify exited $rc: $(tail -n 1 \
    "$out/verify.stderr")"
ok verify "$(field "$out/verify.json" 'd["verdict"]'): mean KLD $(field \
    "$out/verify.json" 'd["figures"]["mean_kld"]["value"]')"
