#!/bin/sh
# The real llama.cpp for the tests: its source from the npm package
# node-llama-cpp (which ships it whole as a git bundle), pinned by the
# tarball's SHA-256, and a build of llama-server, llama-bench and
# llama-perplexity: for the CPU on Linux, with Metal on macOS (the kernels
# embedded in the binaries, as the acceptance run needs them:
# scripts/mac-acceptance.sh).  Built once per clone, into the git-ignored
# .deps/llama (the release tarball's test run borrows the clone's .deps,
# scripts/dist-check.sh); nothing is downloaded again once it is there.
# Provenance: tests/llama/PROVENANCE.md.
#
#   scripts/llama.sh build    fetch, check, unpack and build (the default)
#   scripts/llama.sh check    exit 0 when the build is there, 1 when not
#   scripts/llama.sh where    print the folder the tests read
#   scripts/llama.sh commit   print the pinned commit (the tests check the
#                             programs they run name it)
#
# The first build takes about 15 minutes on 2 cores; later runs return at
# once.  LLAMA_JOBS sets make's -j (default: the number of cores).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
PACKAGE='node-llama-cpp@3.21.1'
TARBALL='node-llama-cpp-3.21.1.tgz'
SHA256='7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f'
COMMIT='80fb11ac73e6'		# the bundle's one commit, as it names it
TOOLS='llama-server llama-bench llama-perplexity'
HOME_DIR=${METALCAP_LLAMA:-$top/.deps/llama}
STAMP="$HOME_DIR/built-$SHA256"

say() { printf 'llama: %s\n' "$*" >&2; }
# macOS has shasum, not sha256sum.
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"
	else shasum -a 256 "$@"; fi
}

built() {
	[ -f "$STAMP" ] || return 1
	for t in $TOOLS; do
		[ -x "$HOME_DIR/build/bin/$t" ] || return 1
	done
}

fetch() {
	mkdir -p "$HOME_DIR/npm"
	if [ ! -f "$HOME_DIR/npm/$TARBALL" ]; then
		say "fetching $PACKAGE from npm"
		(cd "$HOME_DIR/npm" && npm pack --silent "$PACKAGE" >/dev/null)
	fi
	got=$(sha256 "$HOME_DIR/npm/$TARBALL" | cut -d' ' -f1)
	if [ "$got" != "$SHA256" ]; then
		say "$TARBALL has SHA-256 $got, not the pinned $SHA256: refused"
		rm -f "$HOME_DIR/npm/$TARBALL"
		exit 1
	fi
}

unpack() {
	rm -rf "$HOME_DIR/package" "$HOME_DIR/src"
	tar -xzf "$HOME_DIR/npm/$TARBALL" -C "$HOME_DIR" package/llama
	git clone --quiet "$HOME_DIR/package/llama/gitRelease.bundle" \
	    "$HOME_DIR/src" 2>/dev/null
	head=$(git -C "$HOME_DIR/src" rev-parse HEAD)
	case "$head" in
	"$COMMIT"*) ;;
	*)	say "the bundle's commit is $head, not $COMMIT"; exit 1 ;;
	esac
	rm -rf "$HOME_DIR/package"
	: >"$HOME_DIR/src/.unpacked-$COMMIT"
}

# A build with nothing fetched at build time: no prebuilt web page
# (LLAMA_USE_PREBUILT_UI would download one), no curl, no OpenSSL.  On
# macOS the Metal backend, its library embedded (ggml/CMakeLists.txt:236,
# :239 default both on for APPLE; said here so that it never goes by a
# default), static as on Linux, so the binaries load no libggml a shim
# check would have to judge too.
build() {
	jobs=${LLAMA_JOBS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null ||
	    echo 2)}
	backend='-DGGML_METAL=OFF'
	[ "$(uname -s)" = Darwin ] &&
	    backend='-DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON'
	say "building $TOOLS ($backend, -j$jobs; about 15 minutes on 2 cores)"
	# shellcheck disable=SC2086	# $backend is one or two options
	cmake -S "$HOME_DIR/src" -B "$HOME_DIR/build" -DCMAKE_BUILD_TYPE=Release \
	    $backend \
	    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
	    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
	    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
	    >"$HOME_DIR/cmake.log" 2>&1 || {
		tail -n 30 "$HOME_DIR/cmake.log" >&2
		say "cmake failed (all of it: $HOME_DIR/cmake.log)"
		exit 1
	}
	# shellcheck disable=SC2086
	cmake --build "$HOME_DIR/build" -j "$jobs" --target $TOOLS \
	    >"$HOME_DIR/build.log" 2>&1 || {
		tail -n 30 "$HOME_DIR/build.log" >&2
		say "the build failed (all of it: $HOME_DIR/build.log)"
		exit 1
	}
}

case "${1:-build}" in
build)
	built && exit 0
	for tool in npm git cmake c++; do
		command -v "$tool" >/dev/null 2>&1 || {
			say "$tool is needed: scripts/deps.sh llama installs it"
			exit 1
		}
	done
	fetch
	# An unpacking cut short (the marker comes last) is done again.
	[ -f "$HOME_DIR/src/.unpacked-$COMMIT" ] || unpack
	build
	rm -f "$HOME_DIR"/built-*
	: >"$STAMP"
	say "built into $HOME_DIR/build/bin"
	;;
check)	built ;;
where)	printf '%s\n' "$HOME_DIR" ;;
commit)	printf '%s\n' "$COMMIT" ;;
*)	say "usage: scripts/llama.sh [build|check|where|commit]"; exit 2 ;;
esac
