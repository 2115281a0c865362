#!/bin/sh
# Check the cross-built macOS artifacts in DIR (default build/macos):
# universal arm64 + x86_64, the right Mach-O type, an ad-hoc signature in
# every slice (Apple silicon refuses unsigned code), linked only against
# system libraries, and exporting only what is intended.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

dir=${1:-build/macos}
LIPO=$(tool llvm-lipo)
OTOOL=$(tool llvm-otool)
OBJDUMP=$(tool llvm-objdump)
NM=$(tool llvm-nm)

failures=0
bad() { echo "FAIL $1: $2"; failures=$((failures + 1)); }

# check FILE TYPE EXPORTS_FILE|- ALLOWED_LIB...
check() {
	file=$1 type=$2 exports=$3
	shift 3
	[ -f "$file" ] || { bad "$file" "missing"; return; }
	archs=$("$LIPO" -archs "$file" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
	[ "$archs" = "arm64 x86_64 " ] || bad "$file" "architectures are '$archs', want 'arm64 x86_64'"
	for arch in arm64 x86_64; do
		hdr=$("$OBJDUMP" --macho --private-header --arch="$arch" "$file")
		echo "$hdr" | grep -q " $type " || bad "$file" "$arch slice is not $type"
	done
	for arch in arm64 x86_64; do
		"$OBJDUMP" --macho --private-headers --arch="$arch" "$file" |
		    grep -q 'cmd LC_CODE_SIGNATURE' ||
		    bad "$file" "$arch slice has no LC_CODE_SIGNATURE (ad-hoc signature)"
	done
	for arch in arm64 x86_64; do
		"$OTOOL" -L -arch "$arch" "$file" | tail -n +2 | awk '{print $1}' |
		    while read -r lib; do
			ok=no
			for allowed in "$@"; do
				case "$lib" in "$allowed") ok=yes ;; esac
			done
			[ "$ok" = yes ] || echo "$lib"
		    done > "$file.badlibs.$$"
		if [ -s "$file.badlibs.$$" ]; then
			bad "$file" "$arch links outside the system: $(tr '\n' ' ' < "$file.badlibs.$$")"
		fi
		rm -f "$file.badlibs.$$"
		[ "$exports" = - ] && continue
		got=$("$OBJDUMP" --macho --exports-trie --arch="$arch" "$file" |
		    awk '/^0x/ {print $2}' | sort | tr '\n' ' ')
		want=$(grep -v '^#' "$exports" | sort | tr '\n' ' ')
		[ "$got" = "$want" ] || bad "$file" "$arch exports '$got', want '$want'"
	done
	note=", exports as $exports"
	[ "$exports" = - ] && note=""
	[ "$failures" -eq 0 ] && echo "ok   $file: $type, arm64+x86_64, ad-hoc signed, system libraries only$note"
}

check "$dir/libmetalcap.dylib" DYLIB macos/shim.exports \
    /usr/local/libexec/metalcap/libmetalcap.dylib \
    /System/Library/Frameworks/Metal.framework/Versions/A/Metal \
    /usr/lib/libobjc.A.dylib /usr/lib/libSystem.B.dylib

# The shim must load Metal itself, as a plain LC_LOAD_DYLIB: then dyld maps
# Metal and objc registers _MTLDevice before the shim's constructor runs
# (dyld RuntimeState::setObjCNotifiers, APIs::runAllInitializersForMain).
# A weak, lazy or delay-init link would leave the class missing there.
model=$(dirname "$0")/../tests/sim/objc4-model-calls.c
modelled=$(sed -n 's/^[[:space:]]*{ "\([A-Za-z0-9_]*\)",.*/\1/p' "$model")
[ -n "$modelled" ] || bad "$model" "lists no runtime call"
for arch in arm64 x86_64; do
	"$OBJDUMP" --macho --private-headers --arch="$arch" \
	    "$dir/libmetalcap.dylib" | awk '
	    /cmd LC_/ { cmd = $2 }
	    /name \/System\/Library\/Frameworks\/Metal.framework/ {
		    print cmd }' > "$dir/metal-link.$$"
	[ "$(cat "$dir/metal-link.$$")" = LC_LOAD_DYLIB ] ||
	    bad "$dir/libmetalcap.dylib" "$arch does not load Metal with a plain LC_LOAD_DYLIB (has: $(tr '\n' ' ' < "$dir/metal-link.$$"))"
	rm -f "$dir/metal-link.$$"
	# No loader callback: objc4 runs load-image functions with its
	# runtime lock held, and the shim's runtime calls take that lock.
	bad_imports=$("$NM" -u --arch="$arch" "$dir/libmetalcap.dylib" |
	    grep -E '_objc_addLoadImageFunc|_dyld_register_func_for_add_image|_dyld_register_image_state_change_handler' |
	    tr '\n' ' ')
	[ -z "$bad_imports" ] ||
	    bad "$dir/libmetalcap.dylib" "$arch imports a loader callback: $bad_imports"
	# Every runtime function it imports has its row in the objc4 model,
	# which decides the lock objc4 takes in it for the Linux tests (the
	# model's own test checks the Linux objects the same way).
	"$NM" -u --arch="$arch" "$dir/libmetalcap.dylib" | sed 's/^_//' |
	    grep -E '^_?(objc|class|method|sel|object|imp|protocol|property|ivar)_' |
	    while read -r sym; do
		echo "$modelled" | grep -qx "$sym" || echo "$sym"
	    done > "$dir/unmodelled.$$"
	[ ! -s "$dir/unmodelled.$$" ] ||
	    bad "$dir/libmetalcap.dylib" "$arch imports runtime calls the objc4 model does not list ($model): $(tr '\n' ' ' < "$dir/unmodelled.$$")"
	rm -f "$dir/unmodelled.$$"
done

# Compiled, not run: the probe's Metal backend needs a real Mac.
check "$dir/metalcap-probe" EXECUTE - \
    /System/Library/Frameworks/Metal.framework/Versions/A/Metal \
    /System/Library/Frameworks/Foundation.framework/Versions/C/Foundation \
    /usr/lib/libobjc.A.dylib /usr/lib/libSystem.B.dylib

# Self-contained: libuv, msgpack-c, libplist and jansson are linked in.
for bin in metalcapd metalcapctl; do
	check "$dir/$bin" EXECUTE - /usr/lib/libSystem.B.dylib
done

[ "$failures" -eq 0 ] || { echo "$failures macOS artifact check(s) failed"; exit 1; }
