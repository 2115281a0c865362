#!/bin/sh
# The real llama.cpp for the tests: its source from the npm package
# node-llama-cpp (which ships it whole as a git bundle), pinned by the
# tarball's SHA-256, and a CPU build of llama-server, llama-bench and
# llama-perplexity.  Built once per clone, into the git-ignored
# .deps/llama (the release tarball's test run borrows the clone's .deps,
# scripts/dist-check.sh); nothing is downloaded again once it is there.
# Provenance: tests/llama/PROVENANCE.md.
#
#   scripts/llama.sh build    fetch, check, unpack and build (the default)
#   scripts/llama.sh check    exit 0 when the build is there, 1 when not
#   scripts/llama.sh where    print the folder the tests read
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
	got=$(sha256sum "$HOME_DIR/npm/$TARBALL" | cut -d' ' -f1)
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

# A CPU build with nothing fetched at build time: no prebuilt web page
# (LLAMA_USE_PREBUILT_UI would download one), no curl, no OpenSSL.
build() {
	jobs=${LLAMA_JOBS:-$(nproc 2>/dev/null || echo 2)}
	say "building $TOOLS (-j$jobs; about 15 minutes on 2 cores)"
	cmake -S "$HOME_DIR/src" -B "$HOME_DIR/build" -DCMAKE_BUILD_TYPE=Release \
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
*)	say "usage: scripts/llama.sh [build|check|where]"; exit 2 ;;
esac
