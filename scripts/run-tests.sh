#!/bin/sh
# Run each test program, show its output, and end with one "N passed,
# N failed, N skipped" line over all of them (a skipped test is never
# counted as passed).  cmocka programs are counted from their
# summary; a shell test ends with its own "N passed, N failed" line.  Exits non-zero on any failure,
# including a test program that crashed before cmocka could count.
# What failed is repeated after that line, with each failure's own
# messages, because a CI log is often read from its tail only.
#
# MC_TEST_JOBS programs run side by side (default 2): most of the suite
# waits on processes and timers, not on a CPU, and every program makes its
# own home, so they do not meet.  A line says when each one ends; their
# whole logs follow in the order given, so a log reads the same however
# the programs interleaved.  The time each took closes the run, slowest
# first, because CI's budget is spent there.
set -u

# A program that hangs fails, named with the test it was running, instead
# of hanging the suite: each gets MC_TEST_DEADLINE seconds (the slowest
# takes a few minutes; sanitizer builds scale it by MC_TEST_TIME_SCALE).
scale=${MC_TEST_TIME_SCALE:-1}
deadline=$(( ${MC_TEST_DEADLINE:-600} * ${scale%%.*} ))

# One program, run by a child of xargs: its log, status and seconds go to
# files named by its place in the list.
if [ "${1:-}" = --one ]; then
	out=$2 n=$3 t=$4
	start=$(date +%s)
	timeout -k 10 "$MC_RUN_DEADLINE" "$t" >"$out/$n.log" 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	echo "$took" >"$out/$n.secs"
	echo "$rc" >"$out/$n.rc"
	echo "-- $(basename "$t") ended: status $rc, $took s"
	exit 0
fi

jobs=${MC_TEST_JOBS:-2}
case $jobs in
''|*[!0-9]*|0) echo "run-tests: MC_TEST_JOBS must be a whole number from 1," \
    "not '$jobs'" >&2; exit 2 ;;
esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failures=$out/failures
: >"$failures"

n=0
for t in "$@"; do
	n=$((n + 1))
	printf '%s\0%s\0' "$n" "$t"
done | MC_RUN_DEADLINE=$deadline xargs -0 -n 2 -P "$jobs" sh "$0" --one "$out"

passed=0
failed=0
skipped=0
n=0
for t in "$@"; do
	n=$((n + 1))
	log=$out/$n.log
	rc=$(cat "$out/$n.rc" 2>/dev/null || echo 255)
	[ -f "$log" ] || : >"$log"
	cat "$log"
	echo "$(cat "$out/$n.secs" 2>/dev/null || echo 0) $(basename "$t")" \
	    >>"$out/times"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		running=$(sed -n 's/^\[ RUN      \] //p' "$log" | tail -n 1)
		echo "$t: past its deadline of $deadline s, killed, while" \
		    "running ${running:-no test yet}" >&2
		echo "$(basename "$t"): past its deadline, killed, while" \
		    "running ${running:-no test yet}" >>"$failures"
		echo "[  FAILED  ] 1 test(s), listed below:" >>"$log"
	fi
	p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test(s), listed below:.*/\1/p' "$log" | tail -n 1)
	k=$(sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test(s), listed below:.*/\1/p' "$log" | tail -n 1)
	if [ -z "$p" ] && [ -z "$f" ]; then
		p=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$log" | tail -n 1)
		f=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$log" | tail -n 1)
	fi
	if [ "$rc" -ne 0 ] || [ "${f:-0}" -ne 0 ]; then
		# cmocka's error and line messages, failed names, FAIL lines of
		# the shell tests: enough to start on without the whole log.
		grep -E '^\[  (ERROR|FAILED) +\] [^0-9]|^\[   LINE   \]|^FAIL |: error: ' \
		    "$log" | sed "s|^|$(basename "$t"): |" | tail -n 20 >>"$failures"
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${k:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "$t: exited with status $rc" >&2
		echo "$(basename "$t"): exited with status $rc" >>"$failures"
		failed=$((failed + 1))
	fi
done
echo "seconds each program took, $jobs side by side, slowest first:"
sort -rn "$out/times" 2>/dev/null | head -n 12 | sed 's/^/  /'
echo "$passed passed, $failed failed, $skipped skipped"
if [ -s "$failures" ]; then
	echo "what failed:"
	cat "$failures"
fi
[ "$failed" -eq 0 ]
