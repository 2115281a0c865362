#!/bin/sh
# Run each test program, show its output, and end with one "N passed,
# N failed, N skipped" line over all of them (a skipped test is never
# counted as passed).  cmocka programs are counted from their
# summary; a shell test ends with its own "N passed, N failed" line.  Exits non-zero on any failure,
# including a test program that crashed before cmocka could count.
# What failed is repeated after that line, with each failure's own
# messages, because a CI log is often read from its tail only.
set -u

# A program that hangs fails, named with the test it was running, instead
# of hanging the suite: each gets MC_TEST_DEADLINE seconds (the slowest
# takes a few minutes; sanitizer builds scale it by MC_TEST_TIME_SCALE).
scale=${MC_TEST_TIME_SCALE:-1}
deadline=$(( ${MC_TEST_DEADLINE:-600} * ${scale%%.*} ))

passed=0
failed=0
skipped=0
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
for t in "$@"; do
	log=$(mktemp)
	timeout -k 10 "$deadline" "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
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
	rm -f "$log"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${k:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "$t: exited with status $rc" >&2
		echo "$(basename "$t"): exited with status $rc" >>"$failures"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
if [ -s "$failures" ]; then
	echo "what failed:"
	cat "$failures"
fi
[ "$failed" -eq 0 ]
