#!/bin/sh
# scripts/run-tests.sh against programs written here: one that passes, one
# that hangs inside a named test (killed at the deadline, counted failed and
# named), one that crashes before cmocka counts.  Ends "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0
failed=0
# check NAME: the status of the command just run says ok or FAIL.
check() {
	if [ "$?" -eq 0 ]; then
		echo "ok   $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1"
		failed=$((failed + 1))
	fi
}

printf '#!/bin/sh\necho "[  PASSED  ] 3 test(s)."\n' > "$dir/good"
printf '#!/bin/sh\necho "[ RUN      ] test_holds_forever"\nexec sleep 60\n' \
    > "$dir/hangs"
printf '#!/bin/sh\nkill -SEGV $$\n' > "$dir/crashes"
printf '#!/bin/sh\necho "[ RUN      ] test_one_is_wrong"\necho "[  ERROR   ] --- 0x1 != 0x2"\necho "[   LINE   ] --- t.c:7: error: Failure!"\necho "[  FAILED  ] test_one_is_wrong"\necho "[  PASSED  ] 4 test(s)."\necho "[  FAILED  ] 1 test(s), listed below:"\necho "[  FAILED  ] test_one_is_wrong"\nexit 1\n' \
    > "$dir/asserts"
chmod +x "$dir/good" "$dir/hangs" "$dir/crashes" "$dir/asserts"

start=$(date +%s)
MC_TEST_DEADLINE=2 MC_TEST_TIME_SCALE=1 sh "$top/scripts/run-tests.sh" \
    "$dir/good" "$dir/hangs" "$dir/crashes" "$dir/asserts" > "$dir/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
[ "$rc" -ne 0 ]; check "a hanging program fails the run"
[ "$took" -lt 30 ]; check "it is killed at its deadline"
grep -q "hangs: past its deadline of 2 s, killed, while running test_holds_forever" \
    "$dir/out"; check "the test it was running is named"
grep -qx "7 passed, 3 failed, 0 skipped" "$dir/out"
check "the total counts the good, the hung, the crashed and the failed"
# The tail alone says what failed: a CI log is often cut to its last lines.
sed -n '/^what failed:$/,$p' "$dir/out" > "$dir/tail"
grep -q "^hangs: past its deadline, killed, while running test_holds_forever" \
    "$dir/tail"; check "the tail names the hung test"
grep -q "^crashes: exited with status" "$dir/tail"
check "the tail names the crashed program"
grep -q "^asserts: \[   LINE   \] --- t.c:7: error: Failure!" "$dir/tail" &&
    grep -q "^asserts: \[  FAILED  \] test_one_is_wrong" "$dir/tail"
check "the tail gives the failed test and its message"
! grep -q "^good:" "$dir/tail"; check "the tail leaves out what passed"

# Side by side: each of two programs waits for the other's mark, so they
# pass only when both run at once; their logs still come in the order given.
for me in ping pong; do
	other=pong; [ "$me" = pong ] && other=ping
	printf '#!/bin/sh\ntouch "%s/%s.mark"\nwhile [ ! -e "%s/%s.mark" ]; do sleep 0.1; done\necho "%s [  PASSED  ] 1 test(s)."\n' \
	    "$dir" "$me" "$dir" "$other" "$me" >"$dir/$me"
	chmod +x "$dir/$me"
done
MC_TEST_JOBS=2 MC_TEST_DEADLINE=20 sh "$top/scripts/run-tests.sh" \
    "$dir/ping" "$dir/pong" > "$dir/out2" 2>&1
check "two programs run side by side"
grep "PASSED" "$dir/out2" | tr '\n' ' ' | grep -q "^ping .*pong "
check "their logs are shown in the order given"
grep -q "^  [0-9]* ping$" "$dir/out2"; check "the time each took is shown"
MC_TEST_JOBS=x sh "$top/scripts/run-tests.sh" "$dir/good" > "$dir/out3" 2>&1
[ "$?" -eq 2 ] && grep -q "MC_TEST_JOBS must be a whole number from 1, not 'x'" \
    "$dir/out3"; check "a bad MC_TEST_JOBS is refused, named"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
