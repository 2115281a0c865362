#!/bin/sh
# make test's short pass of every fuzz target: its regression inputs, then
# FUZZ_SMOKE seconds of fuzzing (default 5).  make fuzz runs them longer.
exec "$(dirname "$0")/../../scripts/fuzz.sh" "${FUZZ_SMOKE:-5}"
