#!/bin/sh
# Run each fuzz target (build/fuzz/fuzz_NAME) for SECONDS, after replaying
# its regression inputs (tests/fuzz/regressions/NAME/: every crash found
# stays a test).  New inputs collect in build/fuzz/corpus/NAME; the seeds in
# tests/fuzz/corpus/NAME are read, never written.  A crash leaves its input
# in build/fuzz/crashes/ and fails the run.  Ends with one line per target,
#   fuzz NAME: RUNS runs in SECONDS s (RUNS/s), corpus N, ok|CRASH
# and "N passed, N failed" over the targets (scripts/run-tests.sh reads it).
#
#   scripts/fuzz.sh SECONDS [NAME...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:?usage: scripts/fuzz.sh SECONDS [NAME...]}
shift
[ $# -gt 0 ] || set -- rpc jobfile profile shim_config probe_report scan plist \
    signature macho
out=$top/build/fuzz
# ASan's default 256 MB quarantine let a regcomp-heavy target grow past
# 2 GB, and LeakSanitizer's scan of that heap at exit took minutes.
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
export ASAN_OPTIONS
fixtures=${FIXTURES:-$top/tests/fixtures/real-logs}
failed=0
summary=

for name in "$@"; do
	bin=$out/fuzz_$name
	mkdir -p "$out/corpus/$name" "$out/crashes"
	regressions=$top/tests/fuzz/regressions/$name
	if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
		if ! "$bin" "$regressions"/* >"$out/$name.regressions.log" 2>&1; then
			echo "fuzz $name: a regression input crashes again:"
			tail -n 30 "$out/$name.regressions.log"
			failed=$((failed + 1))
			continue
		fi
	fi
	[ -d "$top/tests/fuzz/corpus/$name" ] || {
		echo "fuzz $name: no seed corpus tests/fuzz/corpus/$name"
		failed=$((failed + 1))
		continue
	}
	extra=
	[ "$name" = scan ] && [ -d "$fixtures" ] && extra=$fixtures
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix="$out/crashes/$name-" \
	    "$out/corpus/$name" "$top/tests/fuzz/corpus/$name" $extra \
	    >"$out/$name.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$out/$name.log")
	corpus=$(find "$out/corpus/$name" -type f | wc -l)
	verdict=ok
	if [ "$rc" -ne 0 ]; then
		verdict=CRASH
		failed=$((failed + 1))
		grep -E 'ERROR|SUMMARY|Test unit written' "$out/$name.log" | head -n 5
	fi
	took=${took:-$seconds}
	line="fuzz $name: ${runs:-0} runs in $took s ($(( ${runs:-0} / (took > 0 ? took : 1) ))/s), corpus $corpus, $verdict"
	summary="$summary$line
"
done
printf '%s' "$summary"
echo "$(($# - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
