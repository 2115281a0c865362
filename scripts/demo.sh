#!/bin/sh
# make demo: the shim against the SIMULATED paravirtual device (Linux has no
# Metal).  Runs the same workload stock and with the shim, side by side.
#   scripts/demo.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
query="$build/tests/mtlsim-query"
shim="$build/lib/libmetalcap.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$query" > "$tmp/stock"
LD_PRELOAD="$shim" METALCAP_APPLE_FAMILY_MAX=1009 \
    METALCAP_REPORT="$tmp/report" "$query" > "$tmp/shim"
LD_PRELOAD="$shim" METALCAP_APPLE_FAMILY_MAX=1009abc \
    METALCAP_REPORT="$tmp/report" "$query" > "$tmp/bad"

echo "metalcap demo: one workload on the simulated paravirtual Metal device"
echo
printf '%-22s %-10s %-22s %s\n' "answer" "stock" "METALCAP_APPLE_FAMILY_MAX=1009" "=1009abc (malformed)"
paste -d= "$tmp/stock" "$tmp/shim" "$tmp/bad" | awk -F= '
	$1 != "device" { printf "%-22s %-10s %-30s %s\n", $1, $2, $4, $6 }'
echo
echo "Shim reports (METALCAP_REPORT), one line per process:"
sed 's/^/  /' "$tmp/report"
