#!/bin/sh
# Build the newest releases of the four libraries (third_party/, kept with
# their licenses and PROVENANCE.md) as static archives for this machine, so
# that make check-compat builds and tests the product against what Homebrew
# users have as well as against Debian 12's.  Nothing is downloaded.
#
#   scripts/compat-deps.sh OUT_DIR
#
# Results: OUT_DIR/lib/lib{plist-2.0,msgpack-c,uv,jansson}.a, OUT_DIR/include/.
# Each library is configured as its own build system configures it on
# Linux (the defines its configure or CMakeLists.txt would find), without
# running that build system.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
tp="$top/third_party"
plist="$tp/libplist-2.7.0"
msgpack="$tp/msgpack-c-6.0.0"
uv="$tp/libuv-1.52.1"
jansson="$tp/jansson-2.15.1"
cc=${CC_COMPAT:-gcc}
# Their code, their warnings: none are ours to fix.
cflags="-std=gnu11 -O2 -g -w -fPIC"

mkdir -p "$out/lib" "$out/include"

# archive NAME OBJDIR SOURCES...: compile into OBJDIR, archive as libNAME.a.
archive() {
	name=$1 objdir=$2
	shift 2
	rm -rf "$objdir"
	mkdir -p "$objdir"
	for src in "$@"; do
		# shellcheck disable=SC2086
		(cd "$objdir" && $cc $cflags $extra -c "$src" \
		    -o "$(basename "$(dirname "$src")")-$(basename "$src" .c).o")
	done
	rm -f "$out/lib/lib$name.a"
	ar rcs "$out/lib/lib$name.a" "$objdir"/*.o
}

# libplist 2.7.0: configure.ac's AC_CHECK_FUNCS and struct tm checks, as
# glibc answers them.
extra="-I$plist/include -I$plist/src -I$plist/libcnary/include
    -DPACKAGE_VERSION=\"2.7.0\" -DHAVE_STRDUP -DHAVE_STRNDUP -DHAVE_STRERROR
    -DHAVE_GMTIME_R -DHAVE_LOCALTIME_R -DHAVE_TIMEGM -DHAVE_STRPTIME
    -DHAVE_MEMMEM -DHAVE_TM_TM_GMTOFF -DHAVE_TM_TM_ZONE -D__LITTLE_ENDIAN__=1
    -DHAVE_FVISIBILITY -fvisibility=hidden"
archive plist-2.0 "$out/obj/plist" "$plist"/src/*.c "$plist/libcnary/node.c" \
    "$plist/libcnary/node_list.c"
mkdir -p "$out/include/plist"
cp "$plist/include/plist/plist.h" "$out/include/plist/"

# msgpack-c 6.0.0: CMakeLists.txt configures sysdep.h and pack_template.h
# with the byte order (little-endian on x86_64 and arm64).
mkdir -p "$out/include/msgpack"
cp -R "$msgpack/include/." "$out/include/"
for h in sysdep.h pack_template.h; do
	sed -e 's/@MSGPACK_ENDIAN_BIG_BYTE@/0/' \
	    -e 's/@MSGPACK_ENDIAN_LITTLE_BYTE@/1/' \
	    "$msgpack/cmake/$h.in" > "$out/include/msgpack/$h"
done
extra="-I$out/include"
archive msgpack-c "$out/obj/msgpack" "$msgpack"/src/*.c

# libuv 1.52.1: CMakeLists.txt's sources and defines for Linux.
extra="-I$uv/include -I$uv/src -D_GNU_SOURCE -D_POSIX_C_SOURCE=200112
    -D_FILE_OFFSET_BITS=64 -D_LARGEFILE_SOURCE"
set --
for f in async core dl fs getaddrinfo getnameinfo loop-watcher loop pipe \
    poll process random-devurandom signal stream tcp thread tty udp linux \
    procfs-exepath random-getentropy random-getrandom random-sysctl-linux \
    proctitle; do
	set -- "$@" "$uv/src/unix/$f.c"
done
archive uv "$out/obj/uv" "$uv"/src/*.c "$@"
cp -R "$uv/include/." "$out/include/"

# jansson 2.15.1: configure.ac's checks as glibc answers them, with
# /dev/urandom seeding and dtoa (both its defaults).
printf '%s\n' '#define HAVE_ENDIAN_H 1' '#define HAVE_FCNTL_H 1' \
    '#define HAVE_LOCALE_H 1' '#define HAVE_SCHED_H 1' \
    '#define HAVE_UNISTD_H 1' '#define HAVE_SYS_PARAM_H 1' \
    '#define HAVE_SYS_STAT_H 1' '#define HAVE_SYS_TIME_H 1' \
    '#define HAVE_SYS_TYPES_H 1' '#define HAVE_STDINT_H 1' \
    '#define HAVE_CLOSE 1' '#define HAVE_GETPID 1' \
    '#define HAVE_GETTIMEOFDAY 1' '#define HAVE_OPEN 1' '#define HAVE_READ 1' \
    '#define HAVE_SETLOCALE 1' '#define HAVE_SCHED_YIELD 1' \
    '#define HAVE_STRTOLL 1' '#define HAVE_SYNC_BUILTINS 1' \
    '#define HAVE_ATOMIC_BUILTINS 1' '#define USE_URANDOM 1' \
    '#define DTOA_ENABLED 1' '#define INITIAL_HASHTABLE_ORDER 3' \
    > "$out/include/jansson_private_config.h"
sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' \
    -e 's/@json_have_atomic_builtins@/1/' -e 's/@json_have_sync_builtins@/1/' \
    "$jansson/src/jansson_config.h.in" > "$out/include/jansson_config.h"
cp "$jansson/src/jansson.h" "$out/include/"
extra="-I$out/include -I$jansson/src -DHAVE_CONFIG_H"
archive jansson "$out/obj/jansson" "$jansson"/src/*.c
