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
chmod +x "$dir/good" "$dir/hangs" "$dir/crashes"

start=$(date +%s)
MC_TEST_DEADLINE=2 MC_TEST_TIME_SCALE=1 sh "$top/scripts/run-tests.sh" \
    "$dir/good" "$dir/hangs" "$dir/crashes" > "$dir/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
[ "$rc" -ne 0 ]; check "a hanging program fails the run"
[ "$took" -lt 30 ]; check "it is killed at its deadline"
grep -q "hangs: past its deadline of 2 s, killed, while running test_holds_forever" \
    "$dir/out"; check "the test it was running is named"
grep -qx "3 passed, 2 failed, 0 skipped" "$dir/out"
check "the total counts the good, the hung and the crashed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
