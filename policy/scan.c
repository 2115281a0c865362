/* SPDX-License-Identifier: MIT */
/*
 * The log-signature scanner: does a line of a workload's stderr show a
 * failed Metal pipeline?  The built-in patterns are ggml's and MLX's real
 * failure lines (probe.md §7), plus the capability lines of an over-broad
 * profile; a job adds its own FailureSignatures.  Capability lines such as
 * "simdgroup matrix mul. = false" and "skipping kernel_..." are not failures.
 */
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

struct scan_pattern {
	const char	*what;
	regex_t		 re;
};

struct scan {
	struct scan_pattern	*list;
	size_t			 count;
	regex_t			 any;		/* every pattern at once */
	bool			 have_any;
	char			*any_text;	/* being built */
};

/*
 * Where the backend itself writes.  A built-in pattern matches only from
 * the start of a line that the backend wrote: llama.cpp and ggml log as
 * "function: ..." (GGML_LOG_ERROR("%s: ...", __func__)), after llama.cpp's
 * prefixes (common/log.cpp): a timestamp and the level by default
 * ("0.01.234.567 E "), the level alone with --no-log-timestamps ("E "),
 * neither in tools that set no prefix; colours (--log-colors) are taken
 * out before a line is scanned (scan_plain).  ggml_abort writes
 * "file:line: message" (GGML_ASSERT's "GGML_ASSERT(x) failed") straight to
 * stderr, and the file's path may hold blanks; MLX's errors reach stderr
 * as Python's "RuntimeError: " or libc++abi's uncaught exception line;
 * dyld as "dyld[pid]: ".  Where a line starts is no proof of who wrote it:
 * llama-server prints a client's grammar at the start of a line.  What
 * makes a line evidence is decided in metalcapd (witness.c).
 */
#define SCAN_START	"^([0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+ )?([IWED] )?"
#define SCAN_FUNCTION	SCAN_START "[a-z_][a-z0-9_]*: "
/* Python's OSError subclasses, as a traceback ends: "PermissionError:
 * [Errno 1] Operation not permitted: '/Users/u/Documents/m'". */
#define SCAN_PYTHON_OS	"^([A-Za-z_][A-Za-z0-9_.]*\\.)?[A-Z][A-Za-z]*Error: " \
			"\\[Errno "
#define SCAN_MLX	"^(RuntimeError: |libc\\+\\+abi: terminating due to " \
			"uncaught exception of type std::runtime_error: )"

/* A built-in pattern: what it names, and its extended regex. */
struct scan_text {
	const char	*what;
	const char	*re;
};

/*
 * Each of the pinned ggml-metal's failure messages is classified in
 * tests/llama/ggml-metal-messages.tsv (recognised here, or ignored with the
 * reason), and make test checks that against the source's own format
 * strings in every log form.  Lines of older ggml keep the version that
 * printed them.
 *
 * A line is named by ggml's own words, never by an NSError's text that
 * ggml prints with them: every NSError of the pinned ggml-metal follows
 * words that name the failure ("error: ", "failed to build"), or stands
 * alone on the line after one ("failed to compile pipeline"), or alone
 * where ggml goes on without what failed (the tensor API's library:
 * ggml-metal-device.m:517); and what an
 * NSError says (a domain, "Threadgroup memory size ... exceeds") varies
 * with the call, the macOS and the GPU (check-ggml-messages.py renders
 * real ones into every slot).
 */
static const struct scan_text scan_builtin[] = {
	/*
	 * Not ggml_metal_library_init_from_source's lines: only the tensor
	 * API check calls it (ggml-metal-device.m:1181, 1231), and ggml
	 * does without the API when it fails.
	 */
	{ "Metal library compile error", SCAN_FUNCTION "failed to build "
	    "'.*' library" },
	{ "Metal library missing", SCAN_FUNCTION ".*(failed to create "
	    "library|failed to initialize the Metal library)" },
	/* ggml-metal.m of 2023-2024: "error: metal library is nil". */
	{ "Metal library missing", SCAN_FUNCTION "error: metal library is nil" },
	{ "pipeline failure", SCAN_START "ggml_metal_library_compile_pipeline: "
	    "(error: )?(failed to compile pipeline|failed to create pipeline "
	    "state|incompatible pipeline|kernel not found in any metal "
	    "library)" },
	/* ggml-metal.m of 2023-2024. */
	{ "pipeline failure", SCAN_START "ggml_metal_init: error: load "
	    "pipeline error" },
	/*
	 * ggml_abort writes its file and line straight to stderr, the path
	 * first (__FILE__: no colon in it, a log line's "func: " has one,
	 * so a client's text inside a server's WARN line is no abort); an abort
	 * or GGML_ASSERT elsewhere in ggml (a context too small, a bad
	 * view) is no Metal failure, and a client can bring some about.
	 */
	{ SCAN_METAL_ABORT, "^([^:]*/)?ggml-metal[a-z-]*\\.(m|cpp|c|h):[0-9]+: " },
	{ "command buffer failure", SCAN_FUNCTION ".*(command buffer [0-9]+ "
	    "failed with status [0-9]+|backend is in error state)" },
	{ "command queue failure", SCAN_FUNCTION "error: failed to create "
	    "command queue" },
	{ "buffer allocation failure", SCAN_FUNCTION "(error: failed to "
	    "allocate buffer, size =|failed to allocate Metal buffer of "
	    "[0-9]+ bytes)" },
	{ "unsupported op", SCAN_FUNCTION "error: (unsupported op '|node +"
	    "[0-9]+, op = .* not implemented)" },
	{ "residency set failure", SCAN_FUNCTION ".*failed to initialize "
	    "residency set" },
	{ "residency set failure", SCAN_START "ggml_metal_buffer_rset_init: "
	    "error: " },
	{ "residency set failure", SCAN_MLX "\\[metal::Device\\] Unable to "
	    "construct residency set" },
	{ "MLX kernel failure", SCAN_MLX "(\\[metal::Device\\] Unable to "
	    "(build metal library|load kernel|load function)|\\[METAL\\] "
	    "Command buffer execution failed)" },
	{ "Metal context failure", SCAN_FUNCTION "error: failed to allocate "
	    "context" },
	/* ggml-metal.m of 2023-2024. */
	{ "Metal context failure", SCAN_FUNCTION ".*(failed to initialize "
	    "Metal backend|ggml_metal_init\\(\\) failed)" },
	/*
	 * ggml-metal.m of 2023-2024 (llama.cpp issues #3423, #8617) wrote
	 * its library's compile error so; the pinned one writes more than
	 * that after these names, so this comes after every other pattern.
	 */
	{ "Metal library compile error", SCAN_START
	    "ggml_metal_(library_)?init: error: " },
	/* dyld aborts a process whose inserted library will not load
	 * (dyld's loadInsertedLibraries; proxychains-ng#530). */
	{ SCAN_DYLD_HALT, "^dyld\\[[0-9]+\\]: terminating because "
	    "inserted dylib '.*' could not be loaded" },
};

/*
 * What a Mac does to a job, as the backend reports it: a folder the
 * privacy protections (TCC) keep from an agent ("Operation not
 * permitted" on ~/Downloads, ~/Documents, ~/Desktop, removable and network
 * volumes), descriptors run out, a model that is missing or unreadable.
 * ggml reports a model it cannot open as "gguf_init_from_file: failed to
 * open GGUF file '...' (strerror)", llama.cpp then "llama_model_load:
 * error loading model: ..." (ggml/src/gguf.cpp, src/llama.cpp).  These
 * name the job's environment, never a profile; only where the backend
 * writes, as above, or as a Python traceback's last line ends
 * ("PermissionError: [Errno 1] Operation not permitted: '...'", the
 * errno numbers macOS and Linux share).  The first that matches names it.
 */
static const struct scan_text scan_environment_builtin[] = {
	{ "a folder the privacy protections keep from it", SCAN_FUNCTION
	    ".*Operation not permitted" },
	{ "no descriptors left", SCAN_FUNCTION ".*Too many open files" },
	{ "a full disk", SCAN_FUNCTION ".*No space left on device" },
	{ "its model cannot be opened", SCAN_FUNCTION "(.*failed to open GGUF "
	    "file|.*error loading model|.*failed to load model)" },
	/* A Python server's (MLX's) last line: the OSError it died of. */
	{ "a folder the privacy protections keep from it", SCAN_PYTHON_OS
	    "1\\] Operation not permitted" },
	{ "no descriptors left", SCAN_PYTHON_OS "24\\] Too many open files" },
	{ "a full disk", SCAN_PYTHON_OS "28\\] No space left on device" },
};

/*
 * Words one of those lines must hold: most lines hold none, and a search
 * for them costs far less than the regular expressions (a server logs
 * thousands of lines a second under load).
 */
static const char *const scan_environment_words[] = {
	"not permitted", "open files", "No space left", "GGUF", "load model",
	"loading model",
};

static regex_t	scan_environment_re[sizeof scan_environment_builtin /
		    sizeof scan_environment_builtin[0]];
static bool	scan_environment_ready;

/* Which fault of the job's environment the line shows, or NULL. */
const char *
scan_environment(const char *line)
{
	const size_t	nwords = sizeof scan_environment_words /
			    sizeof scan_environment_words[0];
	const size_t	n = sizeof scan_environment_builtin /
			    sizeof scan_environment_builtin[0];
	size_t		i;

	for (i = 0; i < nwords; i++)
		if (strstr(line, scan_environment_words[i]) != NULL)
			break;
	if (i == nwords)
		return NULL;
	if (!scan_environment_ready) {
		for (i = 0; i < n; i++)
			if (regcomp(&scan_environment_re[i],
			    scan_environment_builtin[i].re, REG_EXTENDED |
			    REG_NOSUB) != 0)
				return NULL;
		scan_environment_ready = true;
	}
	for (i = 0; i < n; i++)
		if (regexec(&scan_environment_re[i], line, 0, NULL, 0) == 0)
			return scan_environment_builtin[i].what;
	return NULL;
}

/*
 * Signature patterns come from job files, so matching must stay cheap
 * whatever they say.  POSIX matchers (glibc's, and the TRE of macOS libc)
 * are polynomial without back-references and exponential with them, and
 * they expand a bounded repetition into that many copies at compile time:
 * ((a{1,100}){1,100}){1,100} is a million.  So back-references are
 * refused, and the copies a pattern would expand to are counted before
 * regcomp sees it.
 */
#define SCAN_GROUPS_MAX		16	/* nesting of ( ) */

/* The last atom at this depth, and the size of everything at it. */
struct scan_budget {
	uint64_t	sum[SCAN_GROUPS_MAX + 1];
	uint64_t	last[SCAN_GROUPS_MAX + 1];
	int		depth;
};

static void
scan_atom(struct scan_budget *b, uint64_t size)
{
	b->sum[b->depth] += size;
	b->last[b->depth] = size;
}

/* Past a bracket expression ([...], [^]...], [[:alpha:]]): its end. */
static const char *
scan_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p != '\0' && *p != ']'; p++)
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *end = strchr(p + 2, p[1]);

			if (end == NULL || end[1] != ']')
				return NULL;
			p = end + 1;
		}
	return *p == ']' ? p : NULL;
}

/* {m}, {m,} or {m,n} at p: the copies it makes, and its end. */
static const char *
scan_bound(const char *p, uint64_t *copies)
{
	char		*end;
	unsigned long	 m, n;

	m = strtoul(p + 1, &end, 10);
	n = m;
	if (*end == ',') {
		n = end[1] == '}' ? m + 1 : strtoul(end + 1, &end, 10);
		if (end[0] == ',' && end[1] == '}')
			end++;
	}
	if (*end != '}' || end == p + 1)
		return NULL;
	*copies = n > m ? n : m;
	return end;
}

/* The last atom repeated: it and what it holds become copies states. */
static void
scan_repeat(struct scan_budget *b, uint64_t copies)
{
	uint64_t	grown = b->last[b->depth] * copies;

	b->sum[b->depth] += grown - b->last[b->depth];
	b->last[b->depth] = grown;
}

/* Why a job's signature pattern is refused, or NULL. */
const char *
scan_refused(const char *re)
{
	struct scan_budget	 b;
	const char		*p, *end;
	uint64_t		 copies;

	if (strlen(re) > SCAN_PATTERN_MAX)
		return "longer than " SCAN_STR(SCAN_PATTERN_MAX) " bytes";
	memset(&b, 0, sizeof b);
	for (p = re; *p != '\0'; p++) {
		switch (*p) {
		case '\\':
			if (p[1] >= '1' && p[1] <= '9')
				return "a back-reference (\\1 to \\9): they "
				    "make matching take exponential time";
			if (p[1] != '\0')
				p++;
			scan_atom(&b, 1);
			break;
		case '[':
			if ((end = scan_bracket(p)) == NULL)
				return NULL;	/* regcomp says why */
			p = end;
			scan_atom(&b, 1);
			break;
		case '(':
			if (b.depth == SCAN_GROUPS_MAX)
				return "groups nested deeper than "
				    SCAN_STR(SCAN_GROUPS_MAX);
			b.depth++;
			b.sum[b.depth] = b.last[b.depth] = 0;
			break;
		case ')':
			if (b.depth == 0)
				return NULL;
			copies = b.sum[b.depth--];
			scan_atom(&b, copies ? copies : 1);
			break;
		case '{':
			if ((end = scan_bound(p, &copies)) == NULL)
				return NULL;
			if (copies > SCAN_REPEAT_MAX)
				return "a repetition count over "
				    SCAN_STR(SCAN_REPEAT_MAX);
			p = end;
			scan_repeat(&b, copies);
			break;
		case '+':	/* glibc compiles x+ as x x*: two copies */
			scan_repeat(&b, 2);
			break;
		case '*': case '?': case '|': case '^': case '$':
			break;
		default:
			scan_atom(&b, 1);
		}
		if (b.sum[b.depth] > SCAN_EXPAND_MAX)
			return "repetitions expand it past "
			    SCAN_STR(SCAN_EXPAND_MAX) " states";
	}
	return NULL;
}

static int
scan_add(struct scan *s, const char *what, const char *re)
{
	struct scan_pattern	*p;
	size_t			 n;

	s->list = realloc(s->list, (s->count + 1) * sizeof *s->list);
	p = &s->list[s->count];
	if (regcomp(&p->re, re, REG_EXTENDED | REG_NOSUB) != 0)
		return -1;
	p->what = what;
	s->count++;
	n = s->any_text ? strlen(s->any_text) : 0;
	s->any_text = realloc(s->any_text, n + strlen(re) + 4);
	snprintf(s->any_text + n, strlen(re) + 4, "%s(%s)", n ? "|" : "", re);
	return 0;
}

static struct scan	*scan_shared;	/* the built-ins alone, for most jobs */

/*
 * What a process writes between ggml's abort line and its end, when the
 * abort is ggml's (ggml.c, pinned: ggml_abort:253-273 prints the message
 * and a newline, the message of GGML_ABORT calls often ending in one of
 * its own, then ggml_print_backtrace:158-237): on macOS three notices
 * and backtrace_symbols_fd's frames ("%-4d%-35s 0x%016lx %s + %lu", Libc
 * gen/backtrace.c); glibc's "file(symbol+0x..)[0x..]" (debug/
 * backtracesymsfd.c); the unwinder's "%d: %p %s" elsewhere.  With
 * GGML_BACKTRACE_LLDB set, or gdb on Linux, a debugger writes more, which
 * is no part of this: the end is then not seen right after the line.
 * dyld, halting before main, writes its "tried:" line after its own
 * (dyld-1378 DyldProcessConfig.cpp halt:2896-2959, then
 * abort_with_payload: SIGABRT).
 */
static const char scan_trace_text[] = "^$"
    "|^WARNING: Using native backtrace\\. Set GGML_BACKTRACE_LLDB for more "
    "info\\.$"
    "|^WARNING: GGML_BACKTRACE_LLDB may cause native MacOS Terminal\\.app "
    "to crash\\.$"
    "|^See: https://github\\.com/ggml-org/llama\\.cpp/pull/17869$"
    "|^[0-9]+ +.* 0x[0-9a-f]+ .* \\+ [0-9]+$"
    "|^(.*\\(.*\\))?\\[0x[0-9a-f]+\\]$"
    "|^[0-9]+: 0x[0-9a-f]+ "
    "|^dyld\\[[0-9]+\\]: tried: ";
static regex_t	scan_trace_re;
static bool	scan_trace_ready;

/*
 * Does a line of this kind come right before the process aborts itself
 * (ggml_abort from a ggml-metal source; dyld's halt before main)?
 */
bool
scan_fatal(const char *what)
{
	return what != NULL && (strcmp(what, SCAN_METAL_ABORT) == 0 ||
	    strcmp(what, SCAN_DYLD_HALT) == 0);
}

/*
 * Is this a line ggml's abort writes after its message, before the
 * process ends (a backtrace, a blank line)?  Such lines leave the abort
 * line the last thing the process said.
 */
bool
scan_trace(const char *line)
{
	if (!scan_trace_ready && regcomp(&scan_trace_re, scan_trace_text,
	    REG_EXTENDED | REG_NOSUB) == 0)
		scan_trace_ready = true;
	return scan_trace_ready && regexec(&scan_trace_re, line, 0, NULL,
	    0) == 0;
}

/*
 * The built-ins plus the job's own (an array of strings, or NULL).  Jobs
 * without their own share one compiled set: compiled patterns cost tens of
 * kilobytes each.
 */
struct scan *
scan_new(plist_t extra)
{
	struct scan	*s;
	char		*re;
	size_t		 i;
	uint32_t	 k;
	bool		 builtins_only = extra == NULL ||
			    plist_array_get_size(extra) == 0;

	if (builtins_only && scan_shared != NULL)
		return scan_shared;
	s = calloc(1, sizeof *s);

	for (i = 0; i < sizeof scan_builtin / sizeof scan_builtin[0]; i++)
		scan_add(s, scan_builtin[i].what, scan_builtin[i].re);
	for (k = 0; extra != NULL && k < plist_array_get_size(extra); k++) {
		re = NULL;
		plist_get_string_val(plist_array_get_item(extra, k), &re);
		/* jobfile.c has already refused these; twice is cheap. */
		if (re != NULL && scan_refused(re) == NULL)
			scan_add(s, "job failure signature", re);
		free(re);
	}
	/*
	 * Most lines match nothing: one pass of the alternation of all
	 * patterns decides that about 2.5 times faster (ggml log lines) than
	 * each in turn.
	 */
	s->have_any = s->any_text != NULL && regcomp(&s->any, s->any_text,
	    REG_EXTENDED | REG_NOSUB) == 0;
	free(s->any_text);
	s->any_text = NULL;
	if (builtins_only)
		scan_shared = s;
	return s;
}

/*
 * The line without its terminal colours (ECMA-48 control sequences:
 * ESC [ parameters, intermediates, a final byte), as llama.cpp's
 * --log-colors writes them around its prefixes, cut to len.
 */
const char *
scan_plain(const char *line, char *buf, size_t len)
{
	size_t	n = 0;

	while (*line != '\0' && n + 1 < len) {
		if (line[0] == '\033' && line[1] == '[') {
			line += 2;
			while (*line >= 0x20 && *line <= 0x3f)
				line++;
			if (*line >= 0x40 && *line <= 0x7e)
				line++;
			continue;
		}
		buf[n++] = *line++;
	}
	buf[n] = '\0';
	return buf;
}

/* What failure the line shows, or NULL. */
const char *
scan_line(const struct scan *s, const char *line)
{
	size_t	i;

	if (s->have_any && regexec(&s->any, line, 0, NULL, 0) != 0)
		return NULL;
	for (i = 0; i < s->count; i++)
		if (regexec(&s->list[i].re, line, 0, NULL, 0) == 0)
			return s->list[i].what;
	return NULL;
}

void
scan_free(struct scan *s)
{
	size_t	i;

	if (s == NULL || s == scan_shared)
		return;
	for (i = 0; i < s->count; i++)
		regfree(&s->list[i].re);
	if (s->have_any)
		regfree(&s->any);
	free(s->list);
	free(s);
}
