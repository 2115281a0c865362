/* SPDX-License-Identifier: MIT */
/*
 * The real llama.cpp in the loop: llama-server, built from the pinned
 * source (scripts/llama.sh, tests/llama/PROVENANCE.md), run by the real
 * metalcapd as a job under the launchctl SIMULATOR, on a tiny model made
 * with llama.cpp's own gguf-py (make-tiny-model.py).  A CPU build makes
 * no Metal device, so the shim has nothing to raise and nothing to
 * witness here: what these tests hold is that text a client makes the
 * server print never moves the job, and that the job's life (health,
 * stop, start, restart, a SIGTERM) is what launchd and the server make it.
 * Each test first shows it ran the pinned build, loaded the tiny model and
 * generated tokens (server_provenance), so that a stand-in fails them
 * (test_standin_refused).
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>

#include "child.h"
#include "harness.h"
#include "llama_http.h"

#include <sys/stat.h>

#define MODEL		BUILD "/tests/tiny-llama.gguf"
/* The commit scripts/llama.sh pins (its COMMIT, the one place it is
 * written; the Makefile asks `scripts/llama.sh commit`). */
#define PINNED		MC_TEST_LLAMA_COMMIT
/* What make-tiny-model.py makes: its vocabulary, width and context. */
#define TINY_VOCAB	32000
#define TINY_EMBD	64
#define TINY_CTX_TRAIN	512

/*
 * The folder of the llama.cpp programs: the pinned build's, or
 * MC_TEST_LLAMA_BIN (a test knob: test_standin_refused points a run of
 * this program at a stand-in, which the provenance checks must refuse).
 */
static char	server_prog[512], bench_prog[512], perplexity_prog[512];
static int	port;
static pid_t	direct_pid;	/* a server this test runs itself */

/*
 * llama-server of model as the job "llama", curl -f of path as its check
 * (XML: more of the check's keys), and more keys of its job file.  curl
 * -S says the HTTP status it failed on.
 */
static void
put_server_check(const char *model, const char *path, const char *check,
    const char *more_args, const char *keys)
{
	char	extra[2048];

	port = llama_free_port();
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>%s</string><string>-m</string><string>%s"
	    "</string><string>--host</string><string>127.0.0.1</string>"
	    "<string>--port</string><string>%d</string><string>-c</string>"
	    "<string>256</string><string>-np</string><string>1</string>"
	    "<string>-t</string><string>1</string>%s</array>"
	    "<key>HealthCheck</key><dict><key>ProgramArguments</key><array>"
	    "<string>" CURL "</string><string>-sSf</string><string>"
	    "http://127.0.0.1:%d%s</string></array>"
	    "<key>StartDelaySeconds</key><integer>0</integer>%s</dict>%s",
	    server_prog, model, port, more_args, port, path, check, keys);
	put_job("llama", extra);
}

/* llama-server as the job "llama", its /health as its check (XML), and
 * more keys of its job file. */
static void
put_server_job_keys(const char *more_args, const char *keys)
{
	put_server_check(MODEL, "/health", "", more_args, keys);
}

static void
put_server_job(const char *more_args)
{
	put_server_job_keys(more_args, "");
}

static void
url(char *buf, size_t len, const char *path)
{
	snprintf(buf, len, "http://127.0.0.1:%d%s", port, path);
}

/* The server answers /health with 200: it has loaded its model.
 * MC_TEST_LLAMA_READY_S (a test knob) shortens the wait of 60 s. */
static void
wait_ready(void)
{
	const char	*knob = getenv("MC_TEST_LLAMA_READY_S");
	char		 u[128], out[256];
	double		 start = now_s();
	double		 limit = (knob != NULL ? atof(knob) : 60) *
			    time_scale();

	url(u, sizeof u, "/health");
	while (llama_curl(out, sizeof out, "-f", u, NULL) != 0) {
		if (now_s() - start > limit)
			fail_msg("llama-server never became ready");
		sleep_ms(100);
	}
	assert_non_null(strstr(out, "\"ok\""));
}

/* Why a program or server is not the pinned build, each reason once. */
struct prov {
	char	why[2048];
	size_t	len;
};

static void
prov_fail(struct prov *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
prov_fail(struct prov *p, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (p->len + 3 >= sizeof p->why)
		return;
	if (p->len > 0) {
		memcpy(p->why + p->len, "; ", 3);
		p->len += 2;
	}
	va_start(ap, fmt);
	n = vsnprintf(p->why + p->len, sizeof p->why - p->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		p->len += (size_t)n < sizeof p->why - p->len ? (size_t)n :
		    sizeof p->why - p->len - 1;
}

/* Is commit (as a program prints it: 7 or more hex digits) the pinned
 * one?  Either may be the longer. */
static bool
commit_pinned(const char *commit)
{
	size_t	n = strlen(commit) < strlen(PINNED) ? strlen(commit) :
		    strlen(PINNED);

	return n >= 7 && strspn(commit, "0123456789abcdef") ==
	    strlen(commit) && strncmp(commit, PINNED, n) == 0;
}

/*
 * program --version names the pinned commit (llama.cpp's
 * "version: V (build N, commit C)" on stderr, build-info.cpp.in:33):
 * its build number and commit in build and commit, or why not in p.
 */
static bool
version_pinned(const char *program, long long *build, char *commit,
    struct prov *p)
{
	const char		*argv[] = { program, "--version", NULL };
	char			*env[CHILD_ENV_MAX], ver[64];
	static struct child_result r;

	child_env(env, NULL);
	if (child_run(argv, env, &r) != 0 || !WIFEXITED(r.status) ||
	    WEXITSTATUS(r.status) != 0 || sscanf(r.err, "version: %63s "
	    "(build %lld, commit %40[0-9a-f])", ver, build, commit) != 3) {
		prov_fail(p, "%s --version says no build: %.200s", program,
		    r.err);
		return false;
	}
	if (!commit_pinned(commit)) {
		prov_fail(p, "%s --version names commit %s, not the pinned %s "
		    "(scripts/llama.sh)", program, commit, PINNED);
		return false;
	}
	return true;
}

/* The JSON a GET (body NULL) or POST of path answers, or NULL. */
static json_t *
get_json(const char *path, const char *body)
{
	static char	out[CHILD_OUTPUT_MAX];
	char		u[256];

	url(u, sizeof u, path);
	if (body != NULL)
		llama_curl(out, sizeof out, "-d", body, u, NULL);
	else
		llama_curl(out, sizeof out, u, NULL);
	return json_loads(out, 0, NULL);
}

/* Is pid's program the file program (the same inode)? */
static void
exe_is(long pid, const char *program, struct prov *p)
{
	char		link[64], exe[512];
	struct stat	a, b;
	ssize_t		n;

	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	if (stat(link, &a) == 0 && stat(program, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return;
	n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	prov_fail(p, "pid %ld runs %s, not %s", pid, exe, program);
}

/* The server at port says it is the pinned build and loaded MODEL. */
static void
props_pinned(long long build, const char *commit, struct prov *p)
{
	json_t		*j = get_json("/props", NULL), *m, *meta;
	const char	*info = json_string_value(json_object_get(j,
			    "build_info"));
	const char	*path = json_string_value(json_object_get(j,
			    "model_path"));
	char		 want[96], got[48];
	long long	 n;

	snprintf(want, sizeof want, "b%lld-%s", build, commit);
	if (info == NULL || sscanf(info, "b%lld-%47[0-9a-f]", &n, got) != 2 ||
	    !commit_pinned(got) || (commit[0] != '\0' && strcmp(info, want)
	    != 0))
		prov_fail(p, "/props: build_info %s, not the pinned %s's",
		    info ? info : "(none)", PINNED);
	if (path == NULL || strcmp(path, MODEL) != 0)
		prov_fail(p, "/props: model_path %s, not %s", path ? path :
		    "(none)", MODEL);
	json_decref(j);
	/* The model's own figures, as llama.cpp read them from its file. */
	m = get_json("/v1/models", NULL);
	meta = json_object_get(json_array_get(json_object_get(m, "data"), 0),
	    "meta");
	if (json_integer_value(json_object_get(meta, "n_vocab")) !=
	    TINY_VOCAB || json_integer_value(json_object_get(meta, "n_embd"))
	    != TINY_EMBD || json_integer_value(json_object_get(meta,
	    "n_ctx_train")) != TINY_CTX_TRAIN)
		prov_fail(p, "/v1/models: not the tiny model's n_vocab %d, "
		    "n_embd %d, n_ctx_train %d", TINY_VOCAB, TINY_EMBD,
		    TINY_CTX_TRAIN);
	json_decref(m);
}

/* Four tokens are generated, and timed (ignore_eos: all four). */
static void
tokens_generated(struct prov *p)
{
	json_t	*j = get_json("/completion", "{\"prompt\": \"hi\", "
		    "\"n_predict\": 4, \"ignore_eos\": true, "
		    "\"temperature\": 0}");
	json_t	*t = json_object_get(j, "timings");

	if (json_integer_value(json_object_get(j, "tokens_predicted")) != 4 ||
	    json_integer_value(json_object_get(t, "predicted_n")) != 4 ||
	    json_number_value(json_object_get(t, "predicted_ms")) <= 0)
		prov_fail(p, "/completion of 4 tokens: tokens_predicted %lld, "
		    "timings.predicted_n %lld",
		    (long long)json_integer_value(json_object_get(j,
		    "tokens_predicted")), (long long)json_integer_value(
		    json_object_get(t, "predicted_n")));
	json_decref(j);
}

/*
 * The server pid, listening at port, is the pinned build: its program's
 * --version names the pinned commit, the process runs that file, its
 * /props names the same build and the tiny model, whose figures it read,
 * and it generates tokens.  Every reason it is not, or "".
 */
static const char *
server_provenance(const char *program, long pid)
{
	static struct prov	p;
	long long		build = 0;
	char			commit[48] = "";

	memset(&p, 0, sizeof p);
	if (!version_pinned(program, &build, commit, &p))
		commit[0] = '\0';
	exe_is(pid, program, &p);
	props_pinned(build, commit, &p);
	tokens_generated(&p);
	return p.why;
}

static void
assert_pinned_server(long pid)
{
	const char	*why = server_provenance(server_prog, pid);

	if (*why != '\0')
		fail_msg("not the pinned llama-server: %s", why);
}

/* A program that prints its build (llama-perplexity) is the pinned one. */
static void
assert_pinned_program(const char *program)
{
	struct prov	p;
	long long	build;
	char		commit[48];

	memset(&p, 0, sizeof p);
	if (!version_pinned(program, &build, commit, &p))
		fail_msg("not the pinned build: %s", p.why);
}

/*
 * Every route by which a client's text reaches llama-server's stderr,
 * each carrying a line shaped like ggml's failures: a grammar (as
 * text/plain, which a web page sends cross-origin without asking), a
 * prompt, a JSON schema, a response format, the URL and a header, on a
 * verbose server.  The job is never reverted and its process never
 * replaced; what was held is logged.  The grammar's line, printed by
 * llama-grammar.cpp at the start of a line of its own, reverted the job
 * before witness.c.
 */
static void
test_client_text_moves_nothing(void **state)
{
	static const char *const lines[] = {
	    "ggml_metal_library_compile_pipeline: failed to compile pipeline: "
	    "base = 'kernel_mul_mm_f16_f32', name = 'kernel_mul_mm_f16_f32'",
	    "x command buffer 0 failed with status 5",
	};
	char	u[160], body[1024], out[4096];
	json_t	*j;
	long	pid;
	size_t	i;

	(void)state;
	put_server_job("<string>-v</string>");
	pid = wait_state("llama", "blocked", 0, 20.0);
	/* A CPU build makes no device: the shim has not reported, and the
	 * reason says that this may be why. */
	assert_field_has("llama", "reason", "or the program has made no "
	    "Metal device yet");
	wait_ready();
	url(u, sizeof u, "/completion");
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		json_t *req = json_pack("{s:s, s:i, s:s}", "prompt", "hi",
		    "n_predict", 1, "grammar", lines[i]);
		char	*text = json_dumps(req, JSON_COMPACT);

		llama_curl(out, sizeof out, "-H", "Content-Type: text/plain", "-d",
		    text, u, NULL);
		assert_non_null(strstr(out, "failed to parse grammar"));
		free(text);
		json_decref(req);
	}
	snprintf(body, sizeof body, "{\"prompt\": \"%s\\n%s\\n\", "
	    "\"n_predict\": 1}", lines[0], lines[1]);
	llama_curl(out, sizeof out, "-d", body, u, NULL);
	snprintf(body, sizeof body, "{\"prompt\": \"hi\", \"n_predict\": 1, "
	    "\"json_schema\": {\"type\": \"%s\"}}", lines[0]);
	llama_curl(out, sizeof out, "-d", body, u, NULL);
	url(u, sizeof u, "/v1/chat/completions");
	snprintf(body, sizeof body, "{\"messages\": [{\"role\": \"user\", "
	    "\"content\": \"%s\"}], \"max_tokens\": 1, \"response_format\": "
	    "{\"type\": \"json_schema\", \"json_schema\": {\"schema\": "
	    "{\"type\": \"%s\"}}}}", lines[0], lines[0]);
	llama_curl(out, sizeof out, "-d", body, u, NULL);
	url(u, sizeof u, "/ggml_metal_library_compile_pipeline:%20failed%20to"
	    "%20compile%20pipeline");
	llama_curl(out, sizeof out, u, NULL);
	url(u, sizeof u, "/health");
	llama_curl(out, sizeof out, "-H", "X-Metal: ggml_metal_init: error: load "
	    "pipeline error", u, NULL);

	/* The grammar's lines were read, and held (one line each). */
	for (double start = now_s(); daemon_log_count("but the shim saw no "
	    "Metal call fail") < 2; sleep_ms(50))
		if (now_s() - start > 10 * time_scale())
			fail_msg("metalcapd never read the grammar's lines");
	j = job_status("llama");
	assert_int_equal(pid_of(j), pid);
	assert_string_not_equal(str_of(j, "state"), "reverted");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
	/* Its check passed on the server that loaded (its last answer, for
	 * this pid), and it still serves. */
	assert_false(daemon_log_has("health check failed"));
	for (double start = now_s(); ; sleep_ms(100)) {
		json_t	*h;

		j = job_status("llama");
		h = json_object_get(j, "health");
		if (json_is_object(h) && strcmp(str_of(h, "state"),
		    "healthy") == 0) {
			h = json_object_get(h, "last");
			assert_true(json_is_true(json_object_get(h, "passed")));
			assert_int_equal(json_integer_value(json_object_get(h,
			    "pid")), pid);
			json_decref(j);
			break;
		}
		json_decref(j);
		if (now_s() - start > 30 * time_scale())
			fail_msg("the health check never passed");
	}
	wait_ready();
}

/*
 * The job's health check as status shows it: its state, and its last
 * answer's passed and output; false while it is not yet so.
 */
static bool
health_is(const char *state, bool passed, const char *output)
{
	json_t	*j = job_status("llama"), *h, *last;
	bool	 is;

	h = json_object_get(j, "health");
	last = json_object_get(h, "last");
	is = json_is_object(h) && strcmp(str_of(h, "state"), state) == 0 &&
	    json_is_object(last) && json_is_true(json_object_get(last,
	    "passed")) == passed && strstr(str_of(last, "output"),
	    output) != NULL;
	json_decref(j);
	return is;
}

static void
wait_health(const char *state, bool passed, const char *output)
{
	double	start = now_s();

	while (!health_is(state, passed, output)) {
		if (now_s() - start > 30 * time_scale()) {
			json_t	*j = job_status("llama");
			char	*d = json_dumps(json_object_get(j, "health"), 0);

			fail_msg("health never %s with '%s': %s", state,
			    output, d != NULL ? d : "(none)");
		}
		sleep_ms(50);
	}
}

/*
 * The real server's /health while it loads (finding 17): a write lease on
 * its model holds llama-server's open of it (the kernel makes an opener
 * wait until the lease holder lets go: fcntl(2), F_SETLEASE), so it
 * listens and answers 503 "Loading model" for as long as the test wants
 * (server-http.cpp:253-270, server.cpp:464-487).  Its check is starting,
 * failing quietly with curl's 503; the lease let go, it passes.  Kills: a
 * check counted passed on any answer, or on the server's first answer.
 */
static void
test_health_while_loading(void **state)
{
	char	model[256], u[128], out[512];
	int	fd;

	(void)state;
	snprintf(model, sizeof model, "%s/model.gguf", home);
	copy_file(MODEL, model);
	/* SIGIO tells the holder of a lease that someone opens the file. */
	signal(SIGIO, SIG_IGN);
	assert_true((fd = open(model, O_RDONLY)) != -1);
	assert_int_equal(fcntl(fd, F_SETLEASE, F_WRLCK), 0);
	put_server_check(model, "/health", "", "", "");
	wait_health("starting", false, "503");
	/* The server's own answer, as a client gets it. */
	url(u, sizeof u, "/health");
	assert_int_not_equal(llama_curl(out, sizeof out, "-f", u, NULL), 0);
	assert_int_equal(llama_curl(out, sizeof out, u, NULL), 0);
	assert_non_null(strstr(out, "Loading model"));
	assert_false(daemon_log_has("health check failed"));
	assert_int_equal(fcntl(fd, F_SETLEASE, F_UNLCK), 0);
	close(fd);
	wait_health("healthy", true, "");
	wait_ready();
}

/*
 * A check that cannot pass (finding 17): pointed at a path the server
 * answers 404, it never passes, is unhealthy once LoadSeconds are over,
 * names the 404, and metalcapctl status exits 4.  Kills: failures before
 * a first pass taken for a pass, or never told.
 */
static void
test_health_never_passes(void **state)
{
	int	code;

	(void)state;
	put_server_check(MODEL, "/no-such-path", "<key>LoadSeconds</key>"
	    "<integer>3</integer>", "", "");
	wait_ready();
	wait_health("unhealthy", false, "404");
	assert_true(daemon_log_has("health check failed"));
	assert_true(daemon_log_has("never passed in LoadSeconds (3 s)"));
	ctl(&code, "status", "llama", NULL, NULL);
	assert_int_equal(code, 4);
}

/*
 * The job's life with the real server: metalcapctl stop ends it (and its
 * port), start brings it back, restart replaces the process; a SIGTERM
 * ends llama-server with status 0, which launchd's KeepAlive restarts
 * and metalcapd counts as no crash.
 */
static void
test_server_life(void **state)
{
	char	u[128], out[256];
	json_t	*j;
	long	pid, next;
	int	code;

	(void)state;
	put_server_job("");
	pid = wait_state("llama", "blocked", 0, 20.0);
	wait_ready();
	assert_pinned_server(pid);
	ctl(&code, "stop", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("llama", "stopped", -1, 10.0);
	url(u, sizeof u, "/health");
	assert_int_not_equal(llama_curl(out, sizeof out, "-f", u, NULL), 0);
	ctl(&code, "start", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "blocked", pid, 20.0);
	wait_ready();
	ctl(&code, "restart", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "blocked", pid, 20.0);
	wait_ready();
	assert_pinned_server(pid);
	assert_int_equal(kill((pid_t)pid, SIGTERM), 0);
	next = wait_state("llama", "blocked", pid, 30.0);
	assert_true(next != pid);
	wait_ready();
	assert_pinned_server(next);
	j = job_status("llama");
	assert_string_equal(str_of(j, "last_exit"), "0");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
	assert_false(daemon_log_has("exited abnormally"));
}


/* The contents of home/NAME, or fails. */
static char *
slurp(const char *name)
{
	static char	text[65536];
	char		path[256];
	size_t		got;
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", home, name);
	if ((f = fopen(path, "r")) == NULL)
		fail_msg("no %s", path);
	got = fread(text, 1, sizeof text - 1, f);
	text[got] = '\0';
	fclose(f);
	return text;
}

/*
 * metalcapctl bench over the real llama-bench: its stock run's JSON is
 * read (the pinned build's commit in the evidence), and the unlocked run
 * of a CPU build, which makes no Metal device, is named for what it is:
 * the shim loaded and stayed stock, no ratio.  The evidence says its GPU
 * is none, not that no run was parsed.
 */
static void
test_bench_real(void **state)
{
	const char *const	 args[] = { "bench", "--out", "bench", "--",
	    bench_prog, "-m", MODEL, "-p", "16", "-n", "4", "-r", "1", "-o",
	    "json", NULL };
	struct child_result	*r;
	char			*md, want[64];
	int			 code;

	(void)state;
	assert_int_equal(chdir(home), 0);
	r = ctlv(&code, args);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "bench: round 1/3 stock    pp16 "));
	assert_non_null(strstr(r->err, "round 1: the unlocked run did not get "
	    "the shim, so there is no ratio to report: the shim loaded into "
	    "pid "));
	assert_non_null(strstr(r->err, "but the process stayed stock: no "
	    "Metal device was created"));
	md = slurp("bench/metadata.md");
	/* The pinned build's commit, as llama-bench shortens it. */
	snprintf(want, sizeof want, "- llama.cpp build: `%.7s`", PINNED);
	assert_non_null(strstr(md, want));
	assert_non_null(strstr(md, "- GPU as llama-bench reports it: (none: "
	    "its gpu_info is empty, as a CPU build's is)"));
}

/* home/text.txt: 3,000 words, enough tokens for 4 chunks of 128. */
static void
put_text(void)
{
	static const char *const	words[] = { "the", "quick", "brown",
	    "fox", "jumps", "over", "lazy", "dog" };
	char				text[20000], path[256];
	size_t				n = 0;
	int				i;

	for (i = 0; i < 3000; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s ",
		    words[(i * 7 + i / 3) % 8]);
	snprintf(path, sizeof path, "%s/text.txt", home);
	write_file(path, "w", text);
}

/* home/sim.gguf: a model of the simulators' own kind, its path in buf. */
static void
put_sim_model(char *buf, size_t len)
{
	snprintf(buf, len, "%s/sim.gguf", home);
	write_file(buf, "w", "GGUF\ngeneral.type=llama 1B Q4_K - Medium\n"
	    "general.size=667815936\ngeneral.params=1100048384\n");
}

/*
 * metalcapctl verify over the real llama-perplexity: the stock run writes
 * its base logits, which are hashed though the unlocked run (a CPU build:
 * no device) judges nothing; the refusal says so in verify's own words,
 * and the evidence names who probed.
 */
static void
test_verify_real(void **state)
{
	const char *const	 args[] = { "verify", "--out", "verify", "--",
	    perplexity_prog, "-m", MODEL, "-f", "text.txt", "-c", "128",
	    "--chunks", "4", NULL };
	struct child_result	*r;
	char			*md, *sum;
	int			 code;

	(void)state;
	assert_pinned_program(perplexity_prog);
	put_text();
	assert_int_equal(chdir(home), 0);
	r = ctlv(&code, args);
	assert_int_equal(code, 1);
	assert_non_null(strstr(r->err, "verify: the unlocked run did not get "
	    "the shim, so its figures would judge nothing: "));
	assert_null(strstr(r->err, "ratio"));
	md = slurp("verify/metadata.md");
	assert_non_null(strstr(md, "- Probe verdict: pass, by metalcap-probe, "
	    "run by metalcapctl (verify probes for itself"));
	sum = strstr(md, "- Base logits (the stock run's, not kept: they are "
	    "large) SHA-256: `");
	assert_non_null(sum);
	sum = strchr(sum, '`') + 1;
	assert_int_equal(strspn(sum, "0123456789abcdef"), 64);
}

/* The JSON array a llama-bench's -o json printed, or fails. */
static json_t *
bench_json(const char *program, const char *model_file)
{
	const char *const	 argv[] = { program, "-m", model_file, "-p",
	    "16", "-n", "4", "-r", "1", "-o", "json", NULL };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	json_error_t		 e;
	json_t			*doc;

	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	if ((doc = json_loads(r.out, 0, &e)) == NULL)
		fail_msg("%s: not JSON (%s): %s", program, e.text, r.out);
	assert_true(json_is_array(doc) && json_array_size(doc) == 2);
	return doc;
}

/*
 * llama-bench-sim's JSON agrees with the real llama-bench's: the same
 * tests in the same order (pp, then tg), and each key the stand-in writes
 * is one the real program writes, of the same JSON type.
 */
static void
test_bench_sim_keys(void **state)
{
	char		 sim_model[256];
	json_t		*real, *sim, *want, *got;
	const char	*key;
	size_t		 i;

	(void)state;
	put_sim_model(sim_model, sizeof sim_model);
	real = bench_json(bench_prog, MODEL);
	sim = bench_json(BUILD "/tests/llama-bench-sim", sim_model);
	for (i = 0; i < 2; i++) {
		json_t	*r = json_array_get(real, i), *m = json_array_get(sim, i);
		const char *commit = json_string_value(json_object_get(r,
		    "build_commit"));

		/* The pinned build ran the tiny model and measured it. */
		if (commit == NULL || !commit_pinned(commit))
			fail_msg("llama-bench's build_commit is %s, not the "
			    "pinned %s", commit ? commit : "(none)", PINNED);
		assert_string_equal(json_string_value(json_object_get(r,
		    "model_filename")), MODEL);
		assert_true(json_number_value(json_object_get(r, "avg_ts")) >
		    0);

		assert_int_equal(json_integer_value(json_object_get(m,
		    "n_prompt")) > 0, json_integer_value(json_object_get(r,
		    "n_prompt")) > 0);
		json_object_foreach(m, key, got) {
			if ((want = json_object_get(r, key)) == NULL)
				fail_msg("llama-bench-sim writes %s, which the "
				    "real llama-bench does not", key);
			if (json_typeof(want) != json_typeof(got) &&
			    !(json_is_number(want) && json_is_number(got)))
				fail_msg("%s: llama-bench-sim's is of another "
				    "JSON type than the real one's", key);
		}
	}
	json_decref(real);
	json_decref(sim);
}

/* program --version: its exit status, stderr and stdout's first lines. */
static int
first_lines(const char *program, char *err, char *out, size_t len)
{
	const char *const		 argv[] = { program, "--version",
	    NULL };
	char				*env[CHILD_ENV_MAX];
	static struct child_result	 r;

	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	snprintf(err, len, "%.*s", (int)strcspn(r.err, "\n"), r.err);
	snprintf(out, len, "%.*s", (int)strcspn(r.out, "\n"), r.out);
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

/*
 * llama-bench has no --version (it parses its own options, not
 * common/arg.cpp's): the real one refuses it, and so does
 * llama-bench-sim, in the same words, its usage on stdout, exit 1.
 * Kills: a stand-in that answers what the real program refuses.
 */
static void
test_bench_sim_no_version(void **state)
{
	char	real_err[768], real_out[768], sim_err[768], sim_out[768];
	char	want[800];

	(void)state;
	/* A folder that is there (an earlier test's home is gone): ggml
	 * reads the current one for its backends. */
	assert_int_equal(chdir(home), 0);
	assert_int_equal(first_lines(bench_prog, real_err, real_out,
	    sizeof real_err), 1);
	assert_string_equal(real_err, "error: invalid parameter for argument: "
	    "--version");
	snprintf(want, sizeof want, "usage: %s [options]", bench_prog);
	assert_string_equal(real_out, want);
	assert_int_equal(first_lines(BUILD "/tests/llama-bench-sim", sim_err,
	    sim_out, sizeof sim_err), 1);
	assert_string_equal(sim_err, real_err);
	assert_string_equal(sim_out, "usage: " BUILD "/tests/llama-bench-sim "
	    "[options]");
}

/*
 * A line's shape: each run of digits one N, so that a timestamp, a port
 * or a size compares by its form, and the escapes of colours kept.
 */
static void
shape(const char *line, char *out, size_t len)
{
	size_t	n = 0;

	while (*line != '\0' && *line != '\n' && n + 2 < len) {
		if (*line >= '0' && *line <= '9') {
			while (*line >= '0' && *line <= '9')
				line++;
			out[n++] = 'N';
		} else
			out[n++] = *line++;
	}
	out[n] = '\0';
}

/* The first line of text holding needle, as a shape; fails when none. */
static void
shape_of(const char *text, const char *needle, char *out, size_t len)
{
	const char	*p = strstr(text, needle), *start;

	if (p == NULL)
		fail_msg("no line with '%s' in:\n%s", needle, text);
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	shape(start, out, len);
}

/* Everything of the shape before needle: the log's prefix. */
static void
prefix_of(const char *text, const char *needle, char *out, size_t len)
{
	char	 whole[1024], *p;
	char	 want[256];

	shape_of(text, needle, whole, sizeof whole);
	shape(needle, want, sizeof want);
	p = strstr(whole, want);
	assert_non_null(p);
	*p = '\0';
	snprintf(out, len, "%s", whole);
}

/* The real server with flags, until it listened and refused a grammar. */
static void
real_server_stderr(const char *const *flags, char *err, size_t len)
{
	char		 log[256], p[16], u[128], out[512];
	const char	*argv[24] = { server_prog, "-m", MODEL, "--host",
	    "127.0.0.1",
	    "--port", p, "-c", "256", "-np", "1", "-t", "1" };
	double		 start;
	pid_t		 pid;
	size_t		 n = 13, got;
	FILE		*f;
	int		 fd;

	port = llama_free_port();
	snprintf(p, sizeof p, "%d", port);
	for (; *flags != NULL; flags++)
		argv[n++] = *flags;
	argv[n] = NULL;
	snprintf(log, sizeof log, "%s/server.err", home);
	if ((pid = fork()) == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(server_prog, (char *const *)argv);
		_exit(127);
	}
	/* Ended by the teardown if the test fails before it ends it. */
	direct_pid = pid;
	wait_ready();
	assert_pinned_server(pid);
	url(u, sizeof u, "/completion");
	llama_curl(out, sizeof out, "-d", "{\"prompt\": \"x\", \"grammar\": "
	    "\"x\"}", u, NULL);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	direct_pid = 0;
	for (start = now_s(); (f = fopen(log, "r")) == NULL; sleep_ms(10))
		if (now_s() - start > 5)
			fail_msg("no %s", log);
	got = fread(err, 1, len - 1, f);
	err[got] = '\0';
	fclose(f);
}

/* fake-llama with flags and the device's switches, its stderr. */
static void
fake_stderr(const char *const *flags, const char *device, char *err,
    size_t len)
{
	const char		*argv[16] = { FAKE_LLAMA, "--once" };
	const char		*extra[] = { device, NULL };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	size_t			 n = 2;

	for (; *flags != NULL; flags++)
		argv[n++] = *flags;
	argv[n] = NULL;
	child_env(env, device != NULL ? extra : NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	snprintf(err, len, "%s", r.err);
}

/*
 * program --version: nothing on stdout, and on stderr the two lines
 * llama.cpp prints (build-info.cpp.in:33-34), here with the version,
 * build and commit as X and the compiler line as Y.
 */
static void
version_shape(const char *program, char *buf, size_t len)
{
	const char		*argv[] = { program, "--version", NULL };
	char			*env[CHILD_ENV_MAX], ver[64], commit[64];
	struct child_result	 r;
	long long		 n;

	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_string_equal(r.out, "");
	if (sscanf(r.err, "version: %63s (build %lld, commit %63[0-9a-f])",
	    ver, &n, commit) != 3 || strstr(r.err, "\nbuilt with ") == NULL)
		fail_msg("%s --version: %s", program, r.err);
	snprintf(buf, len, "version: X (build X, commit X)\nbuilt with Y");
}

/*
 * The stand-in agrees with the real program: fake-llama writes its lines
 * in the shapes llama-server writes them, in each log form (timestamps and
 * level, --no-log-timestamps, --no-log-prefix, --log-colors on): the line
 * that says it listens, and the prefix of an error line.  ggml's INFO
 * lines at the default verbosity: the real server writes none of its
 * "ggml_metal" kind (a CPU build has none to write) and fake-llama none
 * below -lv 4 (common/log.cpp's mapping, tests/sim/README.md).
 */
static void
test_standin_shapes(void **state)
{
	static const char *const forms[][3] = {
	    { NULL },
	    { "--no-log-timestamps", NULL },
	    { "--no-log-prefix", NULL },
	    { "--log-colors", "on", NULL },
	};
	static char	real[CHILD_OUTPUT_MAX], fake[CHILD_OUTPUT_MAX];
	char		a[1024], b[1024];
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		real_server_stderr(forms[i], real, sizeof real);
		fake_stderr(forms[i], NULL, fake, sizeof fake);
		shape_of(real, "llama_server: listening on", a, sizeof a);
		shape_of(fake, "llama_server: listening on", b, sizeof b);
		assert_string_equal(b, a);
		assert_null(strstr(fake, "ggml_metal_device_init"));
		/* An error line: the real one's, and ggml's in fake-llama. */
		fake_stderr(forms[i], "MTLSIM_RESIDENCY=nil-error", fake,
		    sizeof fake);
		prefix_of(real, "failed to parse grammar", a, sizeof a);
		prefix_of(fake, "ggml_metal_buffer_rset_init: error:", b,
		    sizeof b);
		assert_string_equal(b, a);
	}
	/* --version: which metalcapd and verify read a build from. */
	version_shape(server_prog, a, sizeof a);
	version_shape(FAKE_LLAMA, b, sizeof b);
	assert_string_equal(b, a);
	version_shape(BUILD "/tests/llama-perplexity-sim", b, sizeof b);
	assert_string_equal(b, a);
}

/* The pinned source's file under ggml/src/ggml-metal, or fails. */
static char *
metal_source(const char *name)
{
	static char	text[1 << 20];
	char		path[768];
	size_t		got;
	FILE		*f;

	snprintf(path, sizeof path, "%s/../../src/ggml/src/ggml-metal/%s",
	    MC_TEST_LLAMA, name);
	if ((f = fopen(path, "r")) == NULL)
		fail_msg("no %s", path);
	got = fread(text, 1, sizeof text - 1, f);
	text[got] = '\0';
	fclose(f);
	return text;
}

/*
 * fake-llama's failed command buffer is the pinned ggml's (a CPU build
 * has no device to fail, so the source is the reference): the wait for
 * the graph, ggml_metal_synchronize, logs it at ERROR with the NSError's
 * localizedDescription (ggml-metal-context.m:270-272); the server goes on
 * listening; every later graph fails with "backend is in error state"
 * (L459-462).  The lines fake-llama writes are the source's formats.
 * Kills: the failure at INFO (hidden by default: the capture path,
 * L586), a backend that recovers by itself.
 */
static void
test_fake_command_buffer(void **state)
{
	static const char *const	 sync_fmt = "GGML_LOG_ERROR(\"%s: "
	    "error: command buffer %d failed with status %d\\n\", __func__, "
	    "cb_idx";
	static const char *const	 state_fmt = "GGML_LOG_ERROR(\"%s: "
	    "backend is in error state from a previous command buffer "
	    "failure - recreate the backend to recover\\n\", __func__);";
	const char *const		 argv[] = { FAKE_LLAMA, "--once",
	    "--requests", "2", NULL };
	const char *const		 device[] = {
	    "MTLSIM_FAIL=threadgroup_32k:error", NULL };
	static struct child_result	 r;
	char				*env[CHILD_ENV_MAX], *src;
	const char			*p;
	int				 i;

	(void)state;
	src = metal_source("ggml-metal-context.m");
	assert_non_null(strstr(src, sync_fmt));
	assert_non_null(strstr(src, "GGML_LOG_ERROR(\"error: %s\\n\", "
	    "[[cmd_buf error].localizedDescription UTF8String]);"));
	assert_non_null(strstr(src, state_fmt));
	child_env(env, device);
	assert_int_equal(child_run(argv, env, &r), 0);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	p = strstr(r.err, " E ggml_metal_synchronize: error: command buffer 0 "
	    "failed with status 5\n");
	if (p == NULL || (p = strstr(p, " E error: Internal Error (0000000e:"
	    "Internal Error)\n")) == NULL ||
	    (p = strstr(p, "llama_server: listening on")) == NULL)
		fail_msg("not ggml's failed command buffer:\n%s", r.err);
	for (i = 0; i < 2; i++, p++)
		if ((p = strstr(p, " E ggml_metal_graph_compute: backend is in "
		    "error state from a previous command buffer failure - "
		    "recreate the backend to recover\n")) == NULL)
			fail_msg("graph %d after the failure not refused:\n%s",
			    i + 1, r.err);
}

/* How long the piece of a number at in is (nan and inf are numbers). */
static size_t
number_piece(const char *in)
{
	if (strncmp(in, "nan", 3) == 0 || strncmp(in, "inf", 3) == 0)
		return 3;
	return *in != '\0' && strchr("-0123456789.", *in) != NULL;
}

/*
 * Each number one N (digits, signs, points, nan: llama.cpp prints -nan
 * for the spread of two runs that agree exactly), each run of blanks one.
 */
static void
numbers_out(const char *in, char *out, size_t len)
{
	size_t	n = 0, k;

	while (*in != '\0' && n + 2 < len) {
		if (number_piece(in) > 0) {
			while ((k = number_piece(in)) > 0)
				in += k;
			out[n++] = 'N';
		} else if (*in == ' ') {
			while (*in == ' ')
				in++;
			out[n++] = ' ';
		} else
			out[n++] = *in++;
	}
	out[n] = '\0';
}

/* A llama-perplexity's stdout and stderr for these arguments. */
static void
perplexity_run(const char *program, const char *model_file, bool compare,
    struct child_result *r)
{
	char		 text[256], base[256];
	const char	*argv[] = { program, "-m", model_file, "-f", text, "-c",
	    "128", "--chunks", "4", "--kl-divergence-base", base,
	    compare ? "--kl-divergence" : NULL, NULL };
	char		*env[CHILD_ENV_MAX];

	snprintf(text, sizeof text, "%s/text.txt", home);
	snprintf(base, sizeof base, "%s/%s.base", home, strrchr(program, '/')
	    + 1);
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, r), 0);
	assert_true(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0);
}

/*
 * llama-perplexity-sim agrees with the real llama-perplexity on the same
 * text, in both its modes: stdout line for line but for the figures
 * (numbers and the blanks that align them), and the prefixed stderr
 * lines that metalcapctl verify keeps as evidence.
 */
static void
test_perplexity_sim_shapes(void **state)
{
	static struct child_result	real, sim;
	static const char *const	lines[] = {
	    "perplexity: saving all logits to",
	    "perplexity: calculating perplexity over",
	    "kl_divergence: computing over",
	};
	static char	 a[CHILD_OUTPUT_MAX], b[CHILD_OUTPUT_MAX];
	char		 sim_model[256];
	int		 i, mode;

	(void)state;
	assert_pinned_program(perplexity_prog);
	put_text();
	put_sim_model(sim_model, sizeof sim_model);
	for (mode = 0; mode < 2; mode++) {
		perplexity_run(perplexity_prog, MODEL, mode == 1, &real);
		perplexity_run(BUILD "/tests/llama-perplexity-sim", sim_model,
		    mode == 1, &sim);
		numbers_out(real.out, a, sizeof a);
		numbers_out(sim.out, b, sizeof b);
		assert_string_equal(b, a);
		for (i = 0; i < 3; i++) {
			if (strstr(real.err, lines[i]) == NULL)
				continue;
			prefix_of(real.err, lines[i], a, sizeof a);
			prefix_of(sim.err, lines[i], b, sizeof b);
			assert_string_equal(b, a);
		}
	}
	assert_non_null(strstr(real.err, "kl_divergence: computing over"));
}

/*
 * Profile auto measured by the real llama-bench, found beside the real
 * llama-server: a CPU build makes no Metal device, so every option runs
 * the same code and none may win but by its figures.  Each option's
 * figures are llama-bench's own (its build, its tests); the choice is
 * stock, or a profile its figures show faster by more than the noise.
 */
static void
test_auto_measured_real(void **state)
{
	json_t		*all, *e, *opts, *o, *j;
	const char	*name, *choice, *reason, *at;
	char		 path[256], want[64];
	double		 ratio, start;
	long		 pid;

	(void)state;
	put_server_job_keys("", "<key>Profile</key><string>auto</string>");
	wait_ready();
	/* metalcapd may learn the pid after the server answers. */
	for (start = now_s(); (pid = pid_of(j = job_status("llama"))) == 0;
	    sleep_ms(20)) {
		json_decref(j);
		if (now_s() - start > 10 * time_scale())
			fail_msg("metalcapd never named the server's pid");
	}
	json_decref(j);
	assert_pinned_server(pid);
	snprintf(path, sizeof path, "%s/state/measured.json", home);
	assert_non_null(all = json_load_file(path, 0, NULL));
	assert_non_null(e = json_object_get(all, "llama"));
	opts = json_object_get(e, "options");
	assert_int_equal(json_object_size(opts), 3);
	json_object_foreach(opts, name, o) {
		if (json_integer_value(json_object_get(json_object_get(
		    json_object_get(o, "tests"), "pp64"), "samples")) != 3 ||
		    json_object_get(json_object_get(o, "tests"), "tg16") == NULL)
			fail_msg("%s: %s", name, json_dumps(o, 0));
	}
	/* llama-bench's own JSON, of the pinned build (its short commit). */
	snprintf(want, sizeof want, "\"build_commit\": \"%.7s\"", PINNED);
	assert_non_null(strstr(slurp("state/measured/llama/stock.json"),
	    want));
	choice = json_string_value(json_object_get(e, "choice"));
	reason = json_string_value(json_object_get(e, "reason"));
	assert_non_null(choice);
	if (strcmp(choice, "stock") != 0) {
		snprintf(want, sizeof want, "%s ", choice);
		if ((at = strstr(reason, want)) == NULL ||
		    sscanf(at + strlen(want), "%lfx", &ratio) != 1 ||
		    ratio <= 1 + 0.05)
			fail_msg("%s chose %s: %s", reason, choice, reason);
	} else
		assert_field_has("llama", "reason", "no profile ran faster "
		    "than stock");
	json_decref(all);
}

/*
 * What a test left running itself (real_server_stderr's server, when the
 * test failed before it ended it, say a server never ready): ended, and
 * waited for, then the harness's teardown.
 */
static int
llama_teardown(void **state)
{
	if (direct_pid > 0) {
		kill(direct_pid, SIGKILL);
		waitpid(direct_pid, NULL, 0);
		direct_pid = 0;
	}
	return teardown(state);
}

/* This program run again for one test, the llama folder at dir, and
 * more variables of its environment (NULL-ended, up to 4). */
static void
rerun(const char *only, const char *dir, const char *const *more,
    struct child_result *r)
{
	char		 self[512], o[96], bin[512];
	const char	*argv[] = { self, NULL };
	const char	*extra[8] = { o, bin };
	char		*env[CHILD_ENV_MAX];
	ssize_t		 n;
	size_t		 i;

	for (i = 0; more[i] != NULL && i < 4; i++)
		extra[i + 2] = more[i];

	assert_true((n = readlink("/proc/self/exe", self, sizeof self - 1)) >
	    0);
	self[n] = '\0';
	snprintf(o, sizeof o, "MC_TEST_ONLY=%s", only);
	snprintf(bin, sizeof bin, "MC_TEST_LLAMA_BIN=%s", dir);
	child_env(env, extra);
	assert_int_equal(child_run(argv, env, r), 0);
}

/* Did the run say text, on either stream? */
static void
said(const struct child_result *r, const char *text)
{
	if (strstr(r->out, text) == NULL && strstr(r->err, text) == NULL)
		fail_msg("no '%s' in:\n%s\n%s", text, r->out, r->err);
}

/* Is any pid listed in file alive (and not a zombie)? Kills it. */
static bool
any_alive(const char *file)
{
	char	 line[32], path[64], st[256];
	bool	 alive = false;
	FILE	*f, *g;
	long	 pid;

	if ((f = fopen(file, "r")) == NULL)
		fail_msg("the stand-in never ran (no %s)", file);
	while (fgets(line, sizeof line, f) != NULL) {
		pid = atol(line);
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		if ((g = fopen(path, "r")) == NULL)
			continue;
		if (fgets(st, sizeof st, g) != NULL && strstr(st, ") Z ") ==
		    NULL) {
			alive = true;
			kill((pid_t)pid, SIGKILL);
		}
		fclose(g);
	}
	fclose(f);
	return alive;
}

/*
 * The tests know the pinned llama-server from a stand-in: with
 * tests/llama/standin-server.py as llama-server (the audit's stand-in:
 * it answers /health, /props, /v1/models and /completion and reports
 * another build), test_server_life fails, and says why: its --version,
 * the program the process runs, its build_info, its model and its
 * tokens.  And a server that never becomes ready (the stand-in's 503)
 * fails test_standin_shapes and is not left running.  Kills: a
 * provenance check that is skipped or always passes; a direct server
 * not ended when its test fails.
 */
static void
test_standin_refused(void **state)
{
	static struct child_result	r;
	char				dir[300], link[400], pids[300];
	char				pidvar[320], want[512];

	(void)state;
	snprintf(dir, sizeof dir, "%s/standin", home);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, sizeof link, "%s/llama-server", dir);
	assert_int_equal(symlink(MC_TEST_SOURCE
	    "/tests/llama/standin-server.py", link), 0);
	snprintf(pids, sizeof pids, "%s/standin.pids", home);
	snprintf(pidvar, sizeof pidvar, "STANDIN_PIDS=%s", pids);

	rerun("test_server_life", dir, (const char *const[]){ NULL }, &r);
	assert_false(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	said(&r, "not the pinned llama-server: ");
	said(&r, "llama-server --version names commit 5e1f0c3a, not the "
	    "pinned " PINNED " (scripts/llama.sh)");
	snprintf(want, sizeof want, ", not %s; ", link);
	said(&r, want);
	said(&r, "/props: build_info b10167-5e1f0c3a, not the pinned");
	said(&r, "/v1/models: not the tiny model's n_vocab");
	said(&r, "/completion of 4 tokens: tokens_predicted 0");

	/* A server never ready: the test fails, and ends it. */
	rerun("test_standin_shapes", dir, (const char *const[]){ pidvar,
	    "STANDIN_UNREADY=1", "MC_TEST_LLAMA_READY_S=2", NULL }, &r);
	assert_false(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	said(&r, "llama-server never became ready");
	assert_false(any_alive(pids));
}

int
main(void)
{
	const char		*bin = getenv("MC_TEST_LLAMA_BIN");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_client_text_moves_nothing,
		    setup, llama_teardown),
		cmocka_unit_test_setup_teardown(test_health_while_loading,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_health_never_passes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_life, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_standin_shapes, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_standin_refused, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_fake_command_buffer, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_bench_real, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_bench_sim_keys, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_bench_sim_no_version,
		    setup, llama_teardown),
		cmocka_unit_test_setup_teardown(test_perplexity_sim_shapes,
		    setup, llama_teardown),
		cmocka_unit_test_setup_teardown(test_verify_real, setup,
		    llama_teardown),
		cmocka_unit_test_setup_teardown(test_auto_measured_real, setup,
		    llama_teardown),
	};

	if (bin == NULL)
		bin = MC_TEST_LLAMA;
	snprintf(server_prog, sizeof server_prog, "%s/llama-server", bin);
	snprintf(bench_prog, sizeof bench_prog, "%s/llama-bench", bin);
	snprintf(perplexity_prog, sizeof perplexity_prog,
	    "%s/llama-perplexity", bin);
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("llama_e2e", tests, NULL, NULL);
}
