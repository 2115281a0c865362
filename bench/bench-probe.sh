#!/bin/sh
# make bench-probe: wall time of a full probe pass (sim backend, all checks,
# including its stock pass in a child process), median and range of 5 runs,
# stock and with the shim.  Target: under 200 ms, so the daemon can gate
# every enable on a probe.
#   bench/bench-probe.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
probe="$build/bin/metalcap-probe"
runs=5

# measure LABEL [ENV...]: prints "LABEL median min max" in ms.
measure() {
	label=$1
	shift
	times=""
	i=0
	while [ "$i" -lt "$runs" ]; do
		t0=$(date +%s%N)
		env "$@" "$probe" --json >/dev/null
		t1=$(date +%s%N)
		times="$times $(( (t1 - t0) / 1000 ))"
		i=$((i + 1))
	done
	echo "$times" | tr ' ' '\n' | grep . | sort -n | awk -v label="$label" '
		{ v[NR] = $1 }
		END {
			med = v[int((NR + 1) / 2)] / 1000
			printf "  %-14s %7.1f ms  (%.1f-%.1f)  target < 200 ms: %s\n",
			    label, med, v[1] / 1000, v[NR] / 1000,
			    med < 200 ? "pass" : "MISS"
		}'
}

echo "probe benchmark (sim backend, median of $runs full passes)"
measure stock
measure "with shim" LD_PRELOAD="$build/lib/libmetalcap.so" \
    METALCAP_APPLE_FAMILY_MAX=1009
