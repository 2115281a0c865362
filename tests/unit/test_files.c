/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of what metalcapd reads that others write: property lists
 * at and past their limits (NUL bytes, size, nesting bombs), job logs
 * followed through rotation and over-long lines, real llama.cpp and
 * MLX stderr scanned for failure signatures, and real `launchctl print`
 * output read for pid, runs, state and how the last run ended; and the
 * text filter every such string passes before a terminal, JSON or XML
 * sees it.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"
#include "unit.h"

/* Each real log's lines through the scanner: what fires, and how often. */
static int
scan_file(const struct scan *sc, const char *name, const char **first)
{
	char	 path[512], line[8192];
	FILE	*f;
	int	 hits = 0;

	snprintf(path, sizeof path, "%s/%s", MC_TEST_FIXTURES, name);
	f = fopen(path, "r");
	assert_non_null(f);
	*first = NULL;
	while (fgets(line, sizeof line, f) != NULL) {
		const char *what = scan_line(sc, line);

		if (what != NULL && hits++ == 0)
			*first = what;
	}
	fclose(f);
	return hits;
}

static void
test_scan_real_logs(void **state)
{
	struct scan	*sc = scan_new(NULL);
	const char	*what;

	(void)state;
	/* No false alarm on the healthy runs. */
	assert_int_equal(scan_file(sc, "llama-stock-guest.stderr", &what), 0);
	assert_int_equal(scan_file(sc, "llama-unlocked-guest.stderr", &what), 0);
	assert_int_equal(scan_file(sc, "llama-bare-metal-host.stderr", &what),
	    0);
	/*
	 * The MLX failure is caught.  An over-broad profile is told by the
	 * shim's own answer (witness.c), not by llama.cpp's "GPU family"
	 * line: an INFO line, hidden unless run with -lv 4.
	 */
	assert_int_equal(scan_file(sc, "mlx-overbroad-profile-failure.stderr",
	    &what), 2);
	assert_string_equal(what, "residency set failure");
	assert_int_equal(scan_file(sc, "llama-overbroad-profile.stderr", &what),
	    0);
	/* ggml's lazy pipeline failure, and capability lines that are not. */
	assert_string_equal(scan_line(sc, "ggml_metal_library_compile_pipeline: "
	    "failed to compile pipeline: base = 'kernel_mul_mm_f16_f32', name "
	    "= 'kernel_mul_mm_f16_f32'"), "pipeline failure");
	assert_null(scan_line(sc, "ggml_metal_device_init: simdgroup matrix "
	    "mul. = false"));
	assert_null(scan_line(sc, "ggml_metal_init: skipping kernel_mul_mm "
	    "(not supported)"));
	scan_free(sc);
}

/*
 * Faults of the job's environment, in the backend's words (ggml's
 * gguf_init_from_file, llama.cpp's llama_model_load), each named; none in
 * the real logs of healthy runs, and none in text a client chose.
 */
static void
test_scan_environment(void **state)
{
	static const struct { const char *line, *what; } lines[] = {
	    { "gguf_init_from_file: failed to open GGUF file '/Users/u/"
	      "Downloads/m.gguf' (Operation not permitted)",
	      "a folder the privacy protections keep from it" },
	    { "gguf_init_from_file: failed to open GGUF file 'm.gguf' (No "
	      "such file or directory)", "its model cannot be opened" },
	    { "llama_model_load: error loading model: llama_model_loader: "
	      "failed to load model from /m.gguf", "its model cannot be opened" },
	    { "accept_connection: error: Too many open files",
	      "no descriptors left" },
	    { "srv  log_server_r: request: GET /Operation%20not%20permitted "
	      "127.0.0.1 404", NULL },
	    { "srv  log_server_r: request: GET /failed to load model 1.2.3.4 "
	      "404", NULL },
	    /* A Python (MLX) server's traceback ends in its OSError. */
	    { "PermissionError: [Errno 1] Operation not permitted: '/Users/u/"
	      "Documents/models/config.json'",
	      "a folder the privacy protections keep from it" },
	    { "OSError: [Errno 24] Too many open files", "no descriptors left" },
	    { "OSError: [Errno 28] No space left on device", "a full disk" },
	    { "ggml_backend_metal_log_allocated_size: error: No space left on "
	      "device", "a full disk" },
	    /* Errno 13 is a file's own mode, not the privacy protections. */
	    { "PermissionError: [Errno 13] Permission denied: '/m'", NULL },
	    { "RuntimeError: [metal::Device] Unable to construct residency "
	      "set.", NULL },
	    { "  File \"/x.py\", line 1: PermissionError: [Errno 1] "
	      "Operation not permitted", NULL },
	};
	const char	*what;
	size_t		 i;
	FILE		*f;
	char		 path[512], line[4096];
	const char	*logs[] = { "llama-stock-guest.stderr",
	    "llama-unlocked-guest.stderr", "llama-bare-metal-host.stderr",
	    "mlx-overbroad-profile-failure.stderr" };

	(void)state;
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		what = scan_environment(lines[i].line);
		if (lines[i].what == NULL ? what != NULL : what == NULL ||
		    strcmp(what, lines[i].what) != 0)
			fail_msg("'%s': %s, want %s", lines[i].line,
			    what ? what : "nothing", lines[i].what ?
			    lines[i].what : "nothing");
	}
	for (i = 0; i < sizeof logs / sizeof logs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", MC_TEST_FIXTURES, logs[i]);
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof line, f) != NULL)
			if ((what = scan_environment(line)) != NULL)
				fail_msg("%s: '%s' taken for %s", logs[i], line,
				    what);
		fclose(f);
	}
}

/*
 * What ggml_abort writes after its line (ggml.c ggml_print_backtrace):
 * macOS's notices and backtrace_symbols_fd frames as a real Mac printed
 * them (whisper.cpp issue #3620, ggml-metal-context.m:235's abort, less
 * the program's own "[transcription] " prefix), glibc's frames, a blank
 * line; and lines that are no part of it, which end an abort's standing
 * as the last word: a server's log line, the C++ runtimes' words on an
 * uncaught exception (written after the trace), another abort.  Kills:
 * a trace line taken for a word of the process; any line taken for trace.
 */
static void
test_scan_trace(void **state)
{
	static const char *const trace[] = {
	    "",
	    "WARNING: Using native backtrace. Set GGML_BACKTRACE_LLDB for more "
	    "info.",
	    "WARNING: GGML_BACKTRACE_LLDB may cause native MacOS Terminal.app "
	    "to crash.",
	    "See: https://github.com/ggml-org/llama.cpp/pull/17869",
	    "0   whisper-cli                         0x00000001007ddc30 "
	    "ggml_print_backtrace + 276",
	    "1   whisper-cli                         0x00000001007dde1c "
	    "ggml_abort + 156",
	    "12  libggml-metal.dylib                 0x0000000104a1b2c4 "
	    "ggml_metal_synchronize + 612",
	    "/usr/lib/x86_64-linux-gnu/libggml-base.so(ggml_abort+0x13c)"
	    "[0x7f3c2a6b1e2c]",
	    "./llama-server(+0x1d2f4)[0x55d4c3b6a2f4]",
	    "[0x7f3c2a6b1e2c]",
	};
	static const char *const words[] = {
	    "0.01.234.567 I srv  log_server_r: request: POST /completion "
	    "127.0.0.1 200",
	    "srv  update_slots: all slots are idle",
	    "libc++abi: terminating due to uncaught exception of type "
	    "std::runtime_error: x",
	    "terminate called after throwing an instance of "
	    "'std::runtime_error'",
	    "/src/ggml/src/ggml.c:1554: GGML_ASSERT(x) failed",
	    "ggml/src/ggml-metal/ggml-metal-context.m:235: fatal error",
	    "Assertion failed: (x), function main, file a.c, line 3.",
	    " ",
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof trace / sizeof trace[0]; i++)
		if (!scan_trace(trace[i]))
			fail_msg("'%s' not taken for ggml's trace", trace[i]);
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (scan_trace(words[i]))
			fail_msg("'%s' taken for ggml's trace", words[i]);
}

/*
 * Text a client of the workload chooses cannot revert it: llama-server
 * logs each request's path, and a built-in matches only where the backend
 * itself writes, from the start of its own line.  The same failures in
 * the backend's words, with llama.cpp's timestamps or not, still match.
 */
static void
test_scan_client_text(void **state)
{
	static const char *const client[] = {
	    "srv  log_server_r: request: GET /MTLGPUFamilyApple12 127.0.0.1 404",
	    "srv  log_server_r: request: GET /ggml_metal_init:%20error:%20x "
	    "127.0.0.1 404",
	    "srv  log_server_r: request: POST /x 127.0.0.1 200 [metal::Device] "
	    "Unable to construct residency set",
	    "main: prompt: dyld[1]: terminating because inserted dylib 'x' "
	    "could not be loaded",
	    "request: GET_ggml_metal_library_compile_pipeline: failed to "
	    "compile pipeline",
	    " ggml_metal_init: error: load pipeline error",
	    "x GGML_ASSERT(buf) failed",
	    /* a completion id a client chose, in llama-server's WARN line
	     * (server-context.cpp, the control endpoint) */
	    "0.12.345.678 W srv  process_single_task: control reasoning_end "
	    "on unknown completion id=a/ggml-metal.m:1: x, no live slot",
	    "srv  process_single_task: id=/x/ggml-metal-device.m:852: y",
	    /* ggml's own asserts outside Metal: a client can reach some. */
	    "/src/ggml/src/ggml.c:1554: GGML_ASSERT(view_src == NULL || "
	    "data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src)) "
	    "failed",
	};
	static const struct { const char *line, *what; } backend[] = {
	    { "0.01.234.567 E ggml_metal_library_compile_pipeline: failed to "
	      "compile pipeline: base = 'k', name = 'k'", "pipeline failure" },
	    { "ggml/src/ggml-metal/ggml-metal-ops.cpp:1721: GGML_ASSERT(pipeline"
	      ") failed", "ggml Metal abort" },
	    { "/Users/me/My Projects/llama.cpp/ggml/src/ggml-metal/ggml-metal-"
	      "device.m:852: ggml_metal_encoder_set_pipeline: nil Metal "
	      "pipeline", "ggml Metal abort" },
	    { "libc++abi: terminating due to uncaught exception of type "
	      "std::runtime_error: [METAL] Command buffer execution failed: "
	      "Internal Error", "MLX kernel failure" },
	    { "dyld[4242]: terminating because inserted dylib '/x.dylib' could "
	      "not be loaded: tried: '/x.dylib' (no such file)",
	      "shim could not load" },
	    { "ggml_metal_graph_compute: error: command buffer 0 failed with "
	      "status 5", "command buffer failure" },
	    /* --no-log-timestamps: the level alone (common/log.cpp). */
	    { "E ggml_metal_library_compile_pipeline: failed to compile "
	      "pipeline: base = 'k', name = 'k'", "pipeline failure" },
	    /* --log-colors on: timestamp, level and end in colour. */
	    { "\033[34m0.01.234.567\033[0m \033[31mE ggml_metal_library_"
	      "compile_pipeline: failed to compile pipeline: base = 'k', name "
	      "= 'k'\033[0m", "pipeline failure" },
	};
	struct scan	*sc = scan_new(NULL);
	const char	*what;
	char		 plain[512];
	plist_t		 extra;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof client / sizeof client[0]; i++)
		if ((what = scan_line(sc, client[i])) != NULL)
			fail_msg("'%s' taken for a %s", client[i], what);
	for (i = 0; i < sizeof backend / sizeof backend[0]; i++) {
		what = scan_line(sc, scan_plain(backend[i].line, plain,
		    sizeof plain));
		if (what == NULL || strcmp(what, backend[i].what) != 0)
			fail_msg("'%s': %s, want %s", backend[i].line,
			    what ? what : "no match", backend[i].what);
	}
	scan_free(sc);
	/* Colours out, the rest kept, cut to the buffer. */
	assert_string_equal(scan_plain("\033[1;31mE \033[0mx\033[m", plain,
	    sizeof plain), "E x");
	assert_string_equal(scan_plain("abcdef", plain, 4), "abc");
	assert_string_equal(scan_plain("a\033[", plain, sizeof plain), "a");
	/* A job's own signatures add to the built-ins. */
	extra = plist_new_array();
	plist_array_append_item(extra, plist_new_string("^FATAL: gpu [0-9]+"));
	sc = scan_new(extra);
	assert_string_equal(scan_line(sc, "FATAL: gpu 0 lost"),
	    "job failure signature");
	assert_null(scan_line(sc, "note: FATAL: gpu 0 lost"));
	scan_free(sc);
	plist_free(extra);
}

struct tail_lines {
	char	text[8192];
	int	count;
};

static void
tail_collect(void *arg, const char *line)
{
	struct tail_lines	*l = arg;
	size_t			 n = strlen(l->text);

	snprintf(l->text + n, sizeof l->text - n, "%.40s|", line);
	l->count++;
}

static void
append(const char *path, const char *text)
{
	FILE	*f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_tail(void **state)
{
	struct tail		*t = calloc(1, sizeof *t);
	struct tail_lines	 l = { "", 0 };
	char			 path[256], moved[256], *big;

	(void)state;
	snprintf(path, sizeof path, "%s/job.err.log", tmpdir);
	snprintf(moved, sizeof moved, "%s/job.err.log.1", tmpdir);
	append(path, "old line before we started\n");
	tail_start(t, path);
	tail_read(t, tail_collect, &l);
	assert_int_equal(l.count, 0);		/* from the end */
	append(path, "one\ntw");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|");	/* a partial line waits */
	append(path, "o\n");
	tail_read(t, tail_collect, &l);
	tail_read(t, tail_collect, &l);		/* nothing twice */
	assert_string_equal(l.text, "one|two|");
	/* Truncated: read again from the start. */
	truncate(path, 0);
	append(path, "three\n");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|two|three|");
	/* Rotated: the old file's rest first, then the new file. */
	append(path, "four\n");
	assert_int_equal(rename(path, moved), 0);
	append(moved, "five\n");
	append(path, "six\n");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|two|three|four|five|six|");
	/* A huge line is cut, not buffered whole. */
	big = malloc(TAIL_LINE_MAX * 4 + 2);
	memset(big, 'x', TAIL_LINE_MAX * 4);
	big[TAIL_LINE_MAX * 4] = '\n';
	big[TAIL_LINE_MAX * 4 + 1] = '\0';
	append(path, big);
	append(path, "seven\n");
	tail_read(t, tail_collect, &l);
	assert_int_equal(l.count, 8);
	assert_non_null(strstr(l.text, "six|xxxx"));
	assert_non_null(strstr(l.text, "|seven|"));
	/* A flood is read a budget at a time, nothing lost. */
	l.count = 0;
	l.text[0] = '\0';
	memset(big, 'y', 99);
	big[99] = '\n';
	big[100] = '\0';
	{
		FILE	*f = fopen(path, "a");
		int	 i, turns = 0;

		for (i = 0; i < 10000; i++)	/* 1 MB: four budgets */
			fputs(big, f);
		fclose(f);
		while (tail_read(t, tail_collect, &l))
			turns++;
		assert_int_equal(turns, 1000000 / TAIL_BUDGET);
		assert_int_equal(l.count, 10000);
	}
	free(big);
	tail_stop(t);
	free(t);
}

/*
 * A log written a byte at a time (llama.cpp's loading dots, a lone
 * newline): each byte read is kept, so two lines are never run together;
 * a log that appears after the tail started is read from its start, in
 * the same call that finds it, and nothing twice; a call that reads to
 * the end says no more is waiting.
 */
static void
test_tail_small_writes(void **state)
{
	struct tail		*t = calloc(1, sizeof *t);
	struct tail_lines	 l = { "", 0 };
	char			 path[256];

	(void)state;
	snprintf(path, sizeof path, "%s/late.err.log", tmpdir);
	unlink(path);
	tail_start(t, path);
	assert_false(tail_read(t, tail_collect, &l));
	assert_int_equal(l.count, 0);
	append(path, "x\n");
	assert_false(tail_read(t, tail_collect, &l));
	assert_string_equal(l.text, "x|");
	assert_false(tail_read(t, tail_collect, &l));
	assert_string_equal(l.text, "x|");
	append(path, ".");
	assert_false(tail_read(t, tail_collect, &l));
	append(path, ".");
	tail_read(t, tail_collect, &l);
	append(path, "\n");
	tail_read(t, tail_collect, &l);
	append(path, "y");
	tail_read(t, tail_collect, &l);
	append(path, "\n");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "x|..|y|");
	tail_stop(t);
	free(t);
}

/*
 * Found by fuzz_jobfile and fuzz_profile: a binary plist whose UTF-16 key
 * holds a NUL made libplist assert (abort) when the key was read.  Now the
 * file is refused, naming why, and nothing else is touched.
 */
static void
test_plist_nul_refused(void **state)
{
	char		 path[512], why[256];
	plist_t		 root;
	struct diag	 errors = { 0 }, warnings = { 0 };
	const char	*files[] = { "jobfile/utf16-nul-in-key",
	    "profile/utf16-nul-in-key" };
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/fuzz/regressions/%s",
		    MC_TEST_SOURCE, files[i]);
		assert_int_equal(mc_plist_read_file(path, &root, why,
		    sizeof why), -1);
		assert_string_equal(why, "has a string or key with a NUL "
		    "character in it");
		assert_null(root);
	}
	assert_null(jobfile_load(path, &errors, &warnings));
	assert_int_equal(errors.count, 1);
	assert_non_null(strstr(errors.items[0], "NUL character"));
	diag_clear(&errors);
	diag_clear(&warnings);
}

/*
 * fsync as the kernel's, or failing with fsync_errno: a disk that reports
 * a write it could not make (EIO) only at fsync.  Defined here, it is the
 * one the product's objects in this program call.
 */
static int	fsync_errno;

int
fsync(int fd)
{
	if (fsync_errno != 0) {
		errno = fsync_errno;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

/* What a file holds, or "(none)". */
static const char *
contents(const char *path)
{
	static char	buf[256];
	FILE		*f = fopen(path, "r");
	size_t		 n;

	if (f == NULL)
		return "(none)";
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* How many entries the folder holds besides . and .. */
static int
entries(const char *dir)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	int		 n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/*
 * metalcapd's own files are written whole or not at all: a new file has
 * its mode and bytes; an existing one is replaced, or kept by the write
 * that must not replace it; a write the disk could not make (fsync's
 * EIO) fails, naming the file, and keeps the old one; a link planted at
 * the temporary name is not followed; no temporary file is left.
 */
static void
test_write_durable(void **state)
{
	char		 path[256], tmp[300], why[256];
	struct stat	 sb;
	mode_t		 mask = umask(077);	/* the mode is the file's own */
	struct rlimit	 limit, small;
	int		 rc, fds = entries("/proc/self/fd");

	(void)state;
	snprintf(path, sizeof path, "%s/state.plist", tmpdir);
	assert_int_equal(mc_write_atomic(path, "one", 3, 0640, why,
	    sizeof why), 0);
	assert_string_equal(contents(path), "one");
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_int_equal(mc_write_atomic(path, "two", 3, 0600, why,
	    sizeof why), 0);
	assert_string_equal(contents(path), "two");
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(mc_write_new(path, "three", 5, 0600, why,
	    sizeof why), -1);
	assert_int_equal(errno, EEXIST);
	assert_string_equal(contents(path), "two");
	assert_int_equal(entries(tmpdir), 1);

	fsync_errno = EIO;
	assert_int_equal(mc_write_atomic(path, "four", 4, 0600, why,
	    sizeof why), -1);
	fsync_errno = 0;
	snprintf(tmp, sizeof tmp, "cannot write %s: %s", path, strerror(EIO));
	assert_string_equal(why, tmp);
	assert_string_equal(contents(path), "two");
	assert_int_equal(entries(tmpdir), 1);

	/* The temporary name is guessable: a link there is replaced. */
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(symlink("victim", tmp), 0);
	assert_int_equal(mc_write_atomic(path, "five", 4, 0600, why,
	    sizeof why), 0);
	assert_string_equal(contents(path), "five");
	snprintf(tmp, sizeof tmp, "%s/victim", tmpdir);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(entries(tmpdir), 1);

	/* A write the disk refuses (no room: RLIMIT_FSIZE says so, as a
	 * full disk would) fails, naming the file; the old one stays. */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &limit), 0);
	small = limit;
	small.rlim_cur = 0;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	rc = mc_write_atomic(path, "six", 3, 0600, why, sizeof why);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, -1);
	snprintf(tmp, sizeof tmp, "cannot write %s: %s", path,
	    strerror(EFBIG));
	assert_string_equal(why, tmp);
	assert_string_equal(contents(path), "five");
	assert_int_equal(entries(tmpdir), 1);
	/* Every write, failed or not, left no descriptor open. */
	assert_int_equal(entries("/proc/self/fd"), fds);
	umask(mask);
}

/* The last line tail passed, whole. */
static void
tail_keep(void *arg, const char *line)
{
	snprintf(arg, TAIL_LINE_MAX + 2, "%s", line);
}

/*
 * A log line of exactly TAIL_LINE_MAX bytes is passed whole; one byte
 * more and it is cut to that length (a signature at its very end is then
 * lost, as documented).
 */
static void
test_tail_line_edge(void **state)
{
	struct tail	*t = calloc(1, sizeof *t);
	char		 path[256], *line = malloc(TAIL_LINE_MAX + 3);
	char		*seen = calloc(1, TAIL_LINE_MAX + 2);
	int		 extra;

	(void)state;
	snprintf(path, sizeof path, "%s/edge.err.log", tmpdir);
	append(path, "");
	tail_start(t, path);
	for (extra = 0; extra < 2; extra++) {
		memset(line, 'x', TAIL_LINE_MAX + (size_t)extra);
		memcpy(line + TAIL_LINE_MAX + extra - 2, "ZZ", 2);
		strcpy(line + TAIL_LINE_MAX + extra, "\n");
		append(path, line);
		tail_read(t, tail_keep, seen);
		assert_int_equal(strlen(seen), TAIL_LINE_MAX);
		assert_int_equal(strcmp(seen + TAIL_LINE_MAX - 2, "ZZ") == 0,
		    extra == 0);
	}
	tail_stop(t);
	free(t);
	free(line);
	free(seen);
}

/*
 * A property-list file of exactly MC_PLIST_MAX_FILE bytes is read; one
 * byte more is refused, naming the limit.
 */
static void
test_plist_size_edge(void **state)
{
	static const char	head[] = "<plist version=\"1.0\"><string>";
	static const char	tail[] = "</string></plist>";
	char			path[256], why[256], *body;
	size_t			len, pad;
	plist_t			root;
	FILE			*f;
	int			extra;

	(void)state;
	snprintf(path, sizeof path, "%s/big.plist", tmpdir);
	body = malloc(MC_PLIST_MAX_FILE + 2);
	for (extra = 0; extra < 2; extra++) {
		len = MC_PLIST_MAX_FILE + (size_t)extra;
		pad = len - strlen(head) - strlen(tail);
		memcpy(body, head, strlen(head));
		memset(body + strlen(head), 'a', pad);
		memcpy(body + strlen(head) + pad, tail, strlen(tail));
		assert_non_null(f = fopen(path, "w"));
		assert_int_equal(fwrite(body, 1, len, f), len);
		fclose(f);
		if (extra == 0) {
			assert_int_equal(mc_plist_read_file(path, &root, why,
			    sizeof why), 0);
			plist_free(root);
		} else {
			assert_int_equal(mc_plist_read_file(path, &root, why,
			    sizeof why), -1);
			assert_string_equal(why, "is larger than 1048576 bytes");
		}
	}
	free(body);
}

/*
 * A binary plist of depth objects: each an array naming the next one fan
 * times, the last true.  It expands to fan^(depth-1) values; the same
 * bytes in Python's plistlib give nested lists (checked by hand).
 */
static char *
bplist_chain(unsigned depth, unsigned fan, size_t *len)
{
	size_t	 cap = 8 + (size_t)depth * (1 + 4 * fan + 4) + 32, n = 8, i;
	char	*b = malloc(cap), *table;
	size_t	*offs = calloc(depth, sizeof *offs);
	unsigned k, f;

	memcpy(b, "bplist00", 8);
	for (k = 0; k < depth; k++) {
		offs[k] = n;
		if (k + 1 == depth) {
			b[n++] = 0x09;
			continue;
		}
		b[n++] = (char)(0xa0 | fan);
		for (f = 0; f < fan; f++)
			for (i = 0; i < 4; i++)
				b[n++] = (char)((k + 1) >> (24 - 8 * i));
	}
	table = b + n;
	for (k = 0; k < depth; k++)
		for (i = 0; i < 4; i++)
			b[n++] = (char)(offs[k] >> (24 - 8 * i));
	memset(b + n, 0, 32);
	b[n + 6] = 4;
	b[n + 7] = 4;
	for (i = 0; i < 8; i++) {
		b[n + 8 + i] = (char)((uint64_t)depth >> (56 - 8 * i));
		b[n + 24 + i] = (char)((uint64_t)(table - b) >> (56 - 8 * i));
	}
	*len = n + 32;
	free(offs);
	return b;
}

/*
 * One array of n references, all to one shared object (true): 1 + n
 * values, as the pre-scan counts a shared reference each time.
 */
static char *
bplist_wide(size_t n, size_t *len)
{
	char	*b = malloc(8 + 6 + n + 1 + 8 + 32);
	size_t	 at = 8, k, table;

	memcpy(b, "bplist00", 8);
	b[at++] = (char)0xaf;		/* an array, its count next */
	b[at++] = 0x12;			/* a 4-byte integer */
	for (k = 0; k < 4; k++)
		b[at++] = (char)(n >> (24 - 8 * k));
	memset(b + at, 1, n);		/* one-byte references to object 1 */
	at += n;
	b[at++] = 0x09;
	table = at;
	for (k = 0; k < 4; k++)
		b[at++] = (char)(8 >> (24 - 8 * k));
	for (k = 0; k < 4; k++)
		b[at++] = (char)((table - 1) >> (24 - 8 * k));
	memset(b + at, 0, 32);
	b[at + 6] = 4;
	b[at + 7] = 1;
	b[at + 15] = 2;			/* two objects, the top one 0 */
	for (k = 0; k < 8; k++)
		b[at + 24 + k] = (char)((uint64_t)table >> (56 - 8 * k));
	*len = at + 32;
	return b;
}

/* head, then unit n times, then tail, as one string (free it). */
static char *
xml_repeat(const char *head, const char *unit, unsigned n, const char *tail)
{
	char		*b = malloc(strlen(head) + strlen(unit) * n +
			    strlen(tail) + 1), *p = b;
	unsigned	 k;

	p += sprintf(p, "%s", head);
	for (k = 0; k < n; k++)
		p += sprintf(p, "%s", unit);
	sprintf(p, "%s", tail);
	return b;
}

/* depth arrays, one in the other, in a whole XML plist. */
static char *
xml_nested(unsigned depth, size_t *len)
{
	char	*tail = xml_repeat("", "</array>", depth, "</plist>"), *b;

	b = xml_repeat("<?xml version=\"1.0\"?><plist version=\"1.0\">",
	    "<array>", depth, tail);
	free(tail);
	*len = strlen(b);
	return b;
}

/*
 * A binary plist's trailer at the exact edge of the room it needs: 39
 * bytes have no room for it; 40 have room for it and for nothing it
 * points to; 42 hold the smallest whole one (one object, false, and its
 * one-byte offset), which libplist reads.
 */
static void
test_bplist_smallest(void **state)
{
	/* trailer: 6 unused, offset size, ref size, objects, top, table */
	static const unsigned char trailer[32] = { [6] = 1, [7] = 1,
	    [15] = 1, [31] = 8 };
	unsigned char	 b[42];
	char		 why[256];
	plist_t		 root;

	(void)state;
	memcpy(b, "bplist00", 8);
	memcpy(b + 8, trailer, 32);
	assert_string_equal(mc_plist_refused((char *)b, 39),
	    "a binary plist too short for its trailer");
	assert_string_equal(mc_plist_refused((char *)b, 40),
	    "a binary plist with a malformed trailer");
	b[8] = 0x08;		/* false */
	b[9] = 8;		/* its offset */
	memcpy(b + 10, trailer, 32);
	b[10 + 31] = 9;		/* the offset table after it */
	assert_null(mc_plist_refused((char *)b, 42));
	assert_int_equal(mc_plist_read_memory((char *)b, 42, &root, why,
	    sizeof why), 0);
	assert_int_equal(plist_get_node_type(root), PLIST_BOOLEAN);
	plist_free(root);
}

/*
 * A binary plist from its objects' bytes: offsets of offsize bytes each,
 * then the trailer (refsize, the count, the top object); its length.
 */
static size_t
bplist_make(unsigned char *b, const unsigned char *objs, size_t objlen,
    const size_t *offsets, size_t nobj, unsigned offsize, unsigned refsize,
    uint64_t top)
{
	size_t	at = 8 + objlen, table = at, i, k;

	memcpy(b, "bplist00", 8);
	memcpy(b + 8, objs, objlen);
	for (i = 0; i < nobj; i++)
		for (k = 0; k < offsize; k++)
			b[at++] = k + 8 < offsize ? 0 : (unsigned char)
			    ((uint64_t)offsets[i] >> (8 * (offsize - 1 - k)));
	memset(b + at, 0, 32);
	b[at + 6] = (unsigned char)offsize;
	b[at + 7] = (unsigned char)refsize;
	for (k = 0; k < 8; k++) {
		b[at + 8 + k] = (unsigned char)((uint64_t)nobj >> (56 - 8 * k));
		b[at + 16 + k] = (unsigned char)(top >> (56 - 8 * k));
		b[at + 24 + k] = (unsigned char)((uint64_t)table >>
		    (56 - 8 * k));
	}
	return at + 32;
}

/*
 * The binary plist pre-scan at each edge of its trailer and objects: an
 * object's offset before the objects or at the offset table, sizes of
 * references and offsets from 1 to 8 and no more, the top object one of
 * them, a dictionary's keys and values, a count written in 8 bytes, a
 * reference to the object just past the last.
 */
static void
test_bplist_edges(void **state)
{
	static const unsigned char	 f[] = { 0x08 };	/* false */
	/* { "k": true }: its key, its value, then the dict, the top. */
	static const unsigned char	 dict[] = { 0x51, 'k', 0x09, 0xd1, 0,
	    1 };
	static const unsigned char	 dict2[] = { 0x51, 'k', 0x09, 0xd2, 0,
	    1 };
	static const unsigned char	 dict_ref3[] = { 0x51, 'k', 0x09, 0xd1,
	    0, 3 };
	/* [true], its count of 1 in 8 bytes. */
	static const unsigned char	 wide[] = { 0xaf, 0x13, 0, 0, 0, 0, 0,
	    0, 0, 1, 1, 0x09 };
	static const char	*outside = "a binary plist object outside "
	    "the file", *malformed = "a binary plist with a malformed trailer";
	/* One false: its offset, the sizes, the top object, the answer. */
	const struct {
		size_t		 offset;
		unsigned	 offsize, refsize;
		uint64_t	 top;
		const char	*why;
	} one[] = {
		{ 8, 1, 1, 0, NULL },
		{ 7, 1, 1, 0, outside },
		{ 9, 1, 1, 0, outside },	/* the table's own */
		{ 8, 1, 8, 0, NULL },
		{ 8, 1, 9, 0, malformed },
		{ 8, 1, 0, 0, malformed },
		{ 8, 8, 1, 0, NULL },
		{ 8, 9, 1, 0, malformed },
		{ 8, 0, 1, 0, malformed },
		{ 8, 1, 1, 1, malformed },	/* top: no object */
	};
	const size_t			 d[] = { 8, 10, 11 }, w[] = { 8, 19 };
	size_t				 i;
	unsigned char			 b[128];
	char				 why[256];
	plist_t				 root;
	size_t				 len;

	(void)state;
	for (i = 0; i < sizeof one / sizeof one[0]; i++) {
		len = bplist_make(b, f, 1, &one[i].offset, 1, one[i].offsize,
		    one[i].refsize, one[i].top);
		if (one[i].why == NULL)
			assert_null(mc_plist_refused((char *)b, len));
		else
			assert_string_equal(mc_plist_refused((char *)b, len),
			    one[i].why);
	}
	len = bplist_make(b, dict, sizeof dict, d, 3, 1, 1, 2);
	assert_null(mc_plist_refused((char *)b, len));
	assert_int_equal(mc_plist_read_memory((char *)b, len, &root, why,
	    sizeof why), 0);
	assert_true(mc_plist_bool(root, "k", false));
	plist_free(root);
	len = bplist_make(b, dict2, sizeof dict2, d, 3, 1, 1, 2);
	assert_string_equal(mc_plist_refused((char *)b, len), "a binary "
	    "plist container larger than the file");
	len = bplist_make(b, dict_ref3, sizeof dict_ref3, d, 3, 1, 1, 2);
	assert_string_equal(mc_plist_refused((char *)b, len), "a binary "
	    "plist reference to no object");
	len = bplist_make(b, wide, sizeof wide, w, 2, 1, 1, 0);
	assert_null(mc_plist_refused((char *)b, len));
}


/*
 * The XML pre-scan's depth, which only the closing tags of arrays and
 * dictionaries bring down, never below the top: other closing tags,
 * closing tags before any opening one, and arrays inside a comment (up to
 * its "-->", not a lone "->") count for nothing.
 */
static void
test_xml_depth_edges(void **state)
{
	static const char	*deep = "refused: nested deeper than 32 levels";
	char			*b, *tail, why[256];
	plist_t			 root;
	size_t			 len;

	(void)state;
	tail = xml_repeat("", "</array>", 33, "</plist>");
	b = xml_repeat("<plist>", "<array><string>x</string>", 33, tail);
	assert_string_equal(mc_plist_refused(b, strlen(b)), deep + 9);
	free(b);
	b = xml_repeat("<plist><array>", "<array></array>", 33,
	    "</array></plist>");
	assert_null(mc_plist_refused(b, strlen(b)));
	free(b);
	b = xml_repeat("<plist></array>", "<array>", 33, tail);
	assert_string_equal(mc_plist_refused(b, strlen(b)), deep + 9);
	free(b);
	b = xml_repeat("<plist><!-- a -> b -c> ", "<array>", 33,
	    " --><true/></plist>");
	assert_null(mc_plist_refused(b, strlen(b)));
	len = strlen(b);
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    0);
	assert_int_equal(plist_get_node_type(root), PLIST_BOOLEAN);
	plist_free(root);
	free(b);
	free(tail);
}

/*
 * Bounded work per plist: nesting and expanded size are refused from the
 * bytes, before libplist (which recurses and expands shared references
 * without a limit of its own) sees them; plists within the limits parse.
 */
static void
test_plist_bombs(void **state)
{
	static const struct { unsigned depth, fan; const char *why; } bin[] = {
		{ 40000, 1, "refused: nested deeper than 32 levels" },
		{ 33, 1, "refused: nested deeper than 32 levels" },
		{ 25, 2, "refused: more than 262144 values (a shared "
		    "reference counts each time)" },
		{ 32, 1, NULL },	/* the deepest allowed */
		{ 10, 2, NULL },	/* 1023 values, shared */
	};
	char		 why[256], *b;
	size_t		 len, i;
	plist_t		 root;

	(void)state;
	for (i = 0; i < sizeof bin / sizeof bin[0]; i++) {
		b = bplist_chain(bin[i].depth, bin[i].fan, &len);
		if (bin[i].why == NULL) {
			if (mc_plist_read_memory(b, len, &root, why,
			    sizeof why) != 0)
				fail_msg("depth %u fan %u: %s", bin[i].depth,
				    bin[i].fan, why);
			plist_free(root);
		} else {
			assert_int_equal(mc_plist_read_memory(b, len, &root,
			    why, sizeof why), -1);
			assert_string_equal(why, bin[i].why);
			assert_null(root);
		}
		free(b);
	}
	/* The count at its exact edge: 262144 values pass, one more not. */
	for (i = 0; i < 2; i++) {
		b = bplist_wide(MC_PLIST_MAX_NODES - 1 + i, &len);
		assert_true(len <= MC_PLIST_MAX_FILE);
		if (i == 0)
			assert_null(mc_plist_refused(b, len));
		else
			assert_string_equal(mc_plist_refused(b, len), "more "
			    "than 262144 values (a shared reference counts "
			    "each time)");
		free(b);
	}
	b = xml_nested(30000, &len);
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: nested deeper than 32 levels");
	free(b);
	b = xml_nested(32, &len);
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    0);
	plist_free(root);
	free(b);
	/*
	 * XML elements at the limit, each three bytes so that the limit is
	 * within a file's size: the declaration, the DOCTYPE, a comment and
	 * closing tags are no elements.
	 */
	for (i = 0; i < 2; i++) {
		const char	*head = "<?xml version=\"1.0\"?><!DOCTYPE plist>"
		    "<!-- x --><plist>";
		b = xml_repeat(head, "<a>", MC_PLIST_MAX_NODES - 1 + (unsigned)i,
		    "</plist>");
		len = strlen(b);
		assert_true(len <= MC_PLIST_MAX_FILE);
		if (i == 0)
			assert_null(mc_plist_refused(b, len));
		else
			assert_string_equal(mc_plist_refused(b, len), "more "
			    "than 262144 elements");
		free(b);
	}
	/*
	 * Containers of 15 or more, whose count binary plists write in a
	 * second byte (libplist's own writer here): read whole, refs where
	 * they are.
	 */
	{
		plist_t		 dict = plist_new_dict(), arr = plist_new_array(),
				 back = NULL;
		char		*bytes = NULL, key[16];
		uint32_t	 nbytes = 0;
		unsigned	 k;

		for (k = 0; k < 20; k++) {
			snprintf(key, sizeof key, "k%02u", k);
			plist_dict_set_item(dict, key, plist_new_uint(k));
			plist_array_append_item(arr, plist_new_string(key));
		}
		plist_dict_set_item(dict, "list", arr);
		plist_to_bin(dict, &bytes, &nbytes);
		assert_non_null(bytes);
		if (mc_plist_read_memory(bytes, nbytes, &back, why,
		    sizeof why) != 0)
			fail_msg("a 21-key dict of a 20-item array: %s", why);
		assert_int_equal(plist_dict_get_size(back), 21);
		assert_int_equal(plist_array_get_size(plist_dict_get_item(back,
		    "list")), 20);
		mc_plist_mem_free(bytes);
		plist_free(back);
		plist_free(dict);
	}
	/* Entities are refused whatever libplist would do with them. */
	b = strdup("<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY a "
	    "\"aaaa\">]><plist version=\"1.0\"><string>&a;</string></plist>");
	assert_int_equal(mc_plist_read_memory(b, strlen(b), &root, why,
	    sizeof why), -1);
	assert_string_equal(why, "refused: an XML entity or internal DTD "
	    "subset");
	free(b);
	/* A reference past the objects, and a trailer that lies. */
	b = bplist_chain(3, 1, &len);
	b[9] = 7;	/* object 0 names object 0x07000000+1 */
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: a binary plist reference to no "
	    "object");
	b[len - 32 + 6] = 9;	/* offset size 9 */
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: a binary plist with a malformed "
	    "trailer");
	free(b);
}

/*
 * launchctl print as real Macs wrote it (tests/fixtures/launchctl-print,
 * each file's source in its README): the service's own state, not a
 * coalition's or an endpoint's; a signal, a jetsam reason or an exit
 * code, whichever the last run ended with.
 */
static const struct {
	const char	*file;
	long		 pid, runs;
	int		 signal;
	const char	*state, *last_exit, *reason;
} print_fixtures[] = {
	{ "wazuh-30799-running-coalitions.txt", 297, 1, 0, "running",
	    "(never exited)", "" },
	{ "wazuh-agent-569-not-running.txt", 0, 1, 0, "not running", "0", "" },
	{ "egress-guard-jetsam-idle-exit.txt", 0, 1, 0, "not running", "",
	    "JETSAM_REASON_MEMORY_IDLE_EXIT" },
	{ "macwsguide-signal-spawn-scheduled.txt", 0, 105, 10,
	    "spawn scheduled", "", "" },
	{ "agenix-308-spawn-scheduled.txt", 0, 640, 0, "spawn scheduled", "0",
	    "" },
	{ "pylaunchd-1-nested-endpoints.txt", 0, 882, 0, "not running", "0",
	    "" },
	{ "wazuh-packages-2206-mojave-running.txt", 1486, 3, 0, "running",
	    "0", "" },
	{ "skhd-30-ex-config.txt", 0, 0, 0, "", "78: EX_CONFIG", "" },
};

static void
test_launchctl_print_fixtures(void **state)
{
	struct launchd_seen	 seen;
	char			 path[512], *text;
	size_t			 i, len;
	FILE			*f;

	(void)state;
	for (i = 0; i < sizeof print_fixtures / sizeof print_fixtures[0];
	    i++) {
		snprintf(path, sizeof path, MC_TEST_SOURCE "/tests/fixtures/"
		    "launchctl-print/%s", print_fixtures[i].file);
		assert_non_null(f = fopen(path, "r"));
		text = calloc(1, 65536);
		len = fread(text, 1, 65535, f);
		fclose(f);
		assert_true(len > 0);
		assert_true(launchctl_parse_print(text, &seen));
		free(text);
		if (seen.pid != print_fixtures[i].pid ||
		    seen.runs != print_fixtures[i].runs ||
		    seen.signal != print_fixtures[i].signal ||
		    strcmp(seen.state, print_fixtures[i].state) != 0 ||
		    strcmp(seen.last_exit, print_fixtures[i].last_exit) != 0 ||
		    strcmp(seen.exit_reason, print_fixtures[i].reason) != 0 ||
		    /* held.c tells nothing where print gave no runs line */
		    seen.runs_known != (strcmp(print_fixtures[i].file,
		    "skhd-30-ex-config.txt") != 0))
			fail_msg("%s: pid %ld runs %ld signal %d state '%s' "
			    "last exit '%s' reason '%s'", print_fixtures[i].file,
			    seen.pid, seen.runs, seen.signal, seen.state,
			    seen.last_exit, seen.exit_reason);
	}
}

/*
 * Text from outside through mc_text: well-formed UTF-8 (the Unicode
 * standard's table 3-7) is kept whole, anything else and every control a
 * terminal acts on becomes '?', a byte at a time for what is not UTF-8.
 */
static void
test_text_utf8(void **state)
{
	static const struct {
		const char	*in, *out;
	} cases[] = {
		{ "plain text", "plain text" },
		{ "a\tb", "a b" },
		{ "\x1b[31mred", "?[31mred" },
		{ "del\x7f", "del?" },
		{ "\xc2\x9b" "2J", "?2J" },			/* C1 CSI */
		{ "\xc2\x9f|\xc2\xa0|", "?|\xc2\xa0|" },	/* C1's edge */
		{ "caf\xc3\xa9 \xdf\xbf", "caf\xc3\xa9 \xdf\xbf" },
		{ "\xe2\x82\xacx", "\xe2\x82\xacx" },	/* 3 bytes, then ASCII */
		{ "\xe0\xa0\x80\xef\xbf\xbf", "\xe0\xa0\x80\xef\xbf\xbf" },
		{ "\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!" },
		{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },	/* U+10FFFF */
		{ "\xc0\xaf\xc1\xbf", "????" },		/* overlong 2 */
		{ "\xe0\x9f\xbf", "???" },			/* overlong 3 */
		{ "\xed\xa0\x80", "???" },			/* a surrogate */
		{ "\xed\x9f\xbf", "\xed\x9f\xbf" },	/* just below */
		{ "\xf0\x8f\xbf\xbf", "????" },		/* overlong 4 */
		{ "\xf0\x90\x80\x80", "\xf0\x90\x80\x80" },	/* U+10000 */
		{ "\xf4\x90\x80\x80", "????" },		/* past U+10FFFF */
		{ "\xf5\x80\xff", "???" },
		{ "\xe2\x82", "??" },			/* cut by the NUL */
		{ "\xc3(", "?(" },
	};
	char	out[64];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mc_text(out, sizeof out, cases[i].in);
		if (strcmp(out, cases[i].out) != 0)
			fail_msg("case %zu: '%s', not '%s'", i, out,
			    cases[i].out);
	}
	/* Cut at a character boundary, with room for the NUL. */
	mc_text(out, 6, "ab\xe2\x82\xac");
	assert_string_equal(out, "ab\xe2\x82\xac");
	mc_text(out, 5, "ab\xe2\x82\xac");
	assert_string_equal(out, "ab");
	mc_text(out, 3, "ab\x1b");
	assert_string_equal(out, "ab");
	mc_text(out, 1, "ab");
	assert_string_equal(out, "");
	out[0] = 'x';
	mc_text(out, 0, "ab");
	assert_int_equal(out[0], 'x');
	mc_text_avoid(out, sizeof out, "a|b|\x1b", "|", '/');
	assert_string_equal(out, "a/b/?");
}

/*
 * A terminal's copy of a log: newlines and tabs stay, a character cut at
 * the end of what was read is left for the next read.
 */
static void
test_text_tty(void **state)
{
	char	buf[] = "ok\x1b[2J\n\t\xc2\x9b\xe2\x82\xac\xff\xe2\x82";
	size_t	took;

	(void)state;
	took = mc_text_tty(buf, sizeof buf - 1);
	assert_int_equal(took, sizeof buf - 3);
	assert_memory_equal(buf, "ok?[2J\n\t??\xe2\x82\xac?", took);
	memcpy(buf, "\xf0\x9f\x98", 3);
	assert_int_equal(mc_text_tty(buf, 3), 0);
	memcpy(buf, "\xf0\x9f\x98\x80", 4);
	assert_int_equal(mc_text_tty(buf, 4), 4);
	memcpy(buf, "\xe0\x80", 2);		/* overlong: no need to wait */
	assert_int_equal(mc_text_tty(buf, 2), 2);
	assert_memory_equal(buf, "??", 2);
	/* Nothing past len is read or changed. */
	memcpy(buf, "a\x1b", 2);
	assert_int_equal(mc_text_tty(buf, 1), 1);
	assert_memory_equal(buf, "a\x1b", 2);
	/* One byte of a four-byte start waits, as two or three do. */
	memcpy(buf, "ab\xf0\x80", 4);
	assert_int_equal(mc_text_tty(buf, 3), 2);
	assert_memory_equal(buf, "ab\xf0", 3);
}

/* mc_fmt: 0 when the whole text and its NUL fit, else -1. */
static void
test_fmt_fits(void **state)
{
	char	b[4];

	(void)state;
	assert_int_equal(mc_fmt(b, sizeof b, "%s", "abc"), 0);
	assert_string_equal(b, "abc");
	assert_int_equal(mc_fmt(b, sizeof b, "%s", "abcd"), -1);
	assert_int_equal(mc_fmt(b, sizeof b, "%s", ""), 0);
	assert_string_equal(b, "");
	/* A control with room for itself alone and the NUL. */
	mc_text(b, 2, "\x1b");
	assert_string_equal(b, "?");
}

#define FNV_OFFSET_BASIS	0xcbf29ce484222325ULL

/* The small numeric helpers, against values computed elsewhere. */
static void
test_util_numbers(void **state)
{
	static const uint8_t	be[] = { 0xfe, 0xed, 0xfa, 0xcf, 0x01, 0x02,
	    0x03, 0x04, 0x05 };
	int			fds[2];
	char			buf[16];

	(void)state;
	assert_true(mc_be(be, 0) == 0);
	assert_true(mc_be(be, 4) == 0xfeedfacfu);
	assert_true(mc_be(be, 8) == 0xfeedfacf01020304ULL);
	/* FNV-1a 64, as its authors' test vectors give it. */
	assert_true(mc_fnv1a(FNV_OFFSET_BASIS, "a", 1) ==
	    0xaf63dc4c8601ec8cULL);
	assert_true(mc_fnv1a(FNV_OFFSET_BASIS, "foobar", 6) ==
	    0x85944171f73967e8ULL);
	assert_true(mc_fnv1a(mc_fnv1a(FNV_OFFSET_BASIS, "foo", 3), "bar",
	    3) == 0x85944171f73967e8ULL);
	/* The start the daemon's recorded hashes were made from. */
	assert_true(mc_fnv1a(MC_FNV_START, "a", 1) == 0x44bd8ad473cd9906ULL);
	/* Up to max bytes, over short reads, until end of file. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "hel", 3), 3);
	assert_int_equal(write(fds[1], "lo", 2), 2);
	close(fds[1]);
	assert_int_equal(mc_read_upto(fds[0], buf, 4), 4);
	assert_memory_equal(buf, "hell", 4);
	assert_int_equal(mc_read_upto(fds[0], buf, sizeof buf), 1);
	assert_int_equal(buf[0], 'o');
	assert_int_equal(mc_read_upto(fds[0], buf, sizeof buf), 0);
	close(fds[0]);
	assert_int_equal(mc_read_upto(fds[0], buf, sizeof buf), -1);
}

static int	eintr_told = -1;

static void
eintr_tell(int sig)
{
	(void)sig;
	(void)!write(eintr_told, "!", 1);
}

/*
 * A read interrupted by a signal (a handler without SA_RESTART, as
 * libuv's and metalcapctl's are) is read again, not taken for an error.
 * The signal is sent only once the child is blocked in read(2), as
 * /proc/PID/syscall shows, and the data only once its handler has run.
 */
static void
test_read_upto_eintr(void **state)
{
	struct sigaction	 sa = { .sa_handler = eintr_tell };
	char			 path[64], text[64], buf[8];
	int			 data[2], told[2], status, i;
	pid_t			 pid;
	FILE			*f;
	long			 nr;

	(void)state;
	assert_int_equal(pipe(data), 0);
	assert_int_equal(pipe(told), 0);
	if ((pid = fork()) == 0) {
		close(data[1]);
		close(told[0]);
		eintr_told = told[1];
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		_exit(mc_read_upto(data[0], buf, sizeof buf) == 2 &&
		    memcmp(buf, "ok", 2) == 0 ? 0 : 1);
	}
	close(data[0]);
	close(told[1]);
	snprintf(path, sizeof path, "/proc/%ld/syscall", (long)pid);
	for (i = 0, nr = -1; i < 500 && nr != SYS_read; i++) {
		/* "running" while it runs; the number of a call it waits in. */
		if ((f = fopen(path, "r")) != NULL && fgets(text, sizeof text,
		    f) != NULL && text[0] >= '0' && text[0] <= '9')
			nr = strtol(text, NULL, 10);
		if (f != NULL)
			fclose(f);
		if (nr != SYS_read)
			usleep(10000);
	}
	if (nr != SYS_read) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		skip();		/* no /proc/PID/syscall to read here */
	}
	assert_int_equal(kill(pid, SIGUSR1), 0);
	assert_int_equal(read(told[0], text, 1), 1);
	signal(SIGPIPE, SIG_IGN);	/* a wrong child is gone already */
	(void)!write(data[1], "ok", 2);
	close(data[1]);
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(told[0]);
}

/* The size of tmpdir/name, or -1 when there is none. */
static long
file_size(const char *name)
{
	char		path[512];
	struct stat	sb;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/*
 * metalcapd's own log rotates itself at its bound (METALCAPD_LOG_MAX
 * here, 8 MB by default) to one old generation, FILE.1: 40 KB written
 * with a 4 KB bound leave two files of about 4 KB, the newest line in
 * the new one.  Kills: a log that grows without bound (issue 46,
 * finding 10).
 */
static void
test_log_rotates(void **state)
{
	char	path[512], last[64];
	FILE	*f;
	char	line[512];
	bool	found = false;
	int	i;

	(void)state;
	snprintf(path, sizeof path, "%s/metalcapd.log", tmpdir);
	assert_int_equal(setenv("METALCAPD_LOG_MAX", "4096", 1), 0);
	log_open(path, false);
	unsetenv("METALCAPD_LOG_MAX");
	for (i = 0; i < 400; i++)
		log_info("line %d of a log that must stay bounded", i);
	assert_in_range(file_size("metalcapd.log"), 1, 4096 + 512);
	assert_in_range(file_size("metalcapd.log.1"), 4096, 4096 + 512);
	assert_int_equal(file_size("metalcapd.log.2"), -1);
	snprintf(last, sizeof last, "line %d of", i - 1);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		found |= strstr(line, last) != NULL;
	fclose(f);
	assert_true(found);
	log_open(NULL, true);
}

/* How many lines of tmpdir/name hold text. */
static int
file_lines_with(const char *name, const char *text)
{
	char	path[512], line[1024];
	FILE	*f;
	int	n = 0;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

/*
 * A job's per-line messages: 10 a minute, one line saying the rest are
 * counted, and their count told when the job's place is given up (64
 * jobs and kinds are tracked; the stalest goes) or its minute is over.
 * Kills: a line logged per line past the burst, a count never told.
 */
static void
test_log_limited(void **state)
{
	char	path[512], who[16];
	int	i;

	(void)state;
	snprintf(path, sizeof path, "%s/metalcapd.log", tmpdir);
	log_open(path, false);
	for (i = 0; i < 15; i++)
		log_limited("a", "held", "job a: held line %d", i);
	assert_int_equal(file_lines_with("metalcapd.log", "job a: held"), 10);
	assert_int_equal(file_lines_with("metalcapd.log", "job a: more lines "
	    "of the kind \"held\" this minute are counted, not logged"), 1);
	for (i = 0; i < 64; i++) {
		snprintf(who, sizeof who, "b%d", i);
		log_limited(who, "held", "job %s: held line", who);
	}
	assert_int_equal(file_lines_with("metalcapd.log", "job a: 5 more "
	    "lines of the kind \"held\" were counted, not logged"), 1);
	assert_int_equal(file_lines_with("metalcapd.log", ": held line"),
	    10 + 64);
	log_open(NULL, true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launchctl_print_fixtures),
		cmocka_unit_test(test_scan_real_logs),
		cmocka_unit_test(test_scan_client_text),
		cmocka_unit_test(test_scan_trace),
		cmocka_unit_test(test_scan_environment),
		cmocka_unit_test(test_text_utf8),
		cmocka_unit_test(test_text_tty),
		cmocka_unit_test(test_fmt_fits),
		cmocka_unit_test(test_read_upto_eintr),
		cmocka_unit_test(test_util_numbers),
		cmocka_unit_test_setup_teardown(test_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_small_writes, setup,
		    teardown),
		cmocka_unit_test(test_plist_nul_refused),
		cmocka_unit_test_setup_teardown(test_write_durable, setup,
		    teardown),
		cmocka_unit_test(test_plist_bombs),
		cmocka_unit_test(test_bplist_smallest),
		cmocka_unit_test(test_bplist_edges),
		cmocka_unit_test(test_xml_depth_edges),
		cmocka_unit_test_setup_teardown(test_tail_line_edge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_log_rotates, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_log_limited, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_plist_size_edge, setup,
		    teardown),
	};

	unit_start();
	return cmocka_run_group_tests_name("files", tests, NULL, NULL);
}
