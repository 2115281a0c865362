#!/bin/sh
# Join single-architecture Mach-O files into one universal file.
#   scripts/macos-lipo.sh OUTPUT INPUT...
# llvm-lipo keeps each slice's code signature.
set -eu
out=$1
shift
lipo=$(command -v llvm-lipo-14 || command -v llvm-lipo || command -v lipo)
"$lipo" -create "$@" -output "$out"
