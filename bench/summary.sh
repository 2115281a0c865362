#!/bin/sh
# The last part of make bench: every figure that has a budget, from the
# benchmarks' output (LOG), as one table; fails if any missed.
#   bench/summary.sh LOG
set -eu
log=${1:?usage: bench/summary.sh LOG}
echo
echo "summary: every figure with a budget"
echo "| figure | budget | verdict |"
echo "|---|---|---|"
grep -E '(target|budget) .*: (pass|MISS)$' "$log" | tr -s ' ' | awk '{
	verdict = $NF
	line = $0
	sub(/^ /, "", line)
	sub(/: (pass|MISS)$/, "", line)
	i = match(line, / (target|budget) /)
	printf "| %s | %s | %s |\n", substr(line, 1, i - 1),
	    substr(line, i + 8), verdict
}'
! grep -q ': MISS$' "$log"
