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
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>

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

#define SERVER		MC_TEST_LLAMA "/llama-server"
#define MODEL		BUILD "/tests/tiny-llama.gguf"
#define CURL		"/usr/bin/curl"

static int	port;

/* A port on the loopback that nothing holds now. */
static int
free_port(void)
{
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	socklen_t		len = sizeof sin;
	int			fd, p;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	p = ntohs(sin.sin_port);
	close(fd);
	return p;
}

/* llama-server as the job "llama", its /health as its check (XML), and
 * more keys of its job file. */
static void
put_server_job_keys(const char *more_args, const char *keys)
{
	char	extra[2048];

	port = free_port();
	snprintf(extra, sizeof extra, "<key>ProgramArguments</key><array>"
	    "<string>" SERVER "</string><string>-m</string><string>" MODEL
	    "</string><string>--host</string><string>127.0.0.1</string>"
	    "<string>--port</string><string>%d</string><string>-c</string>"
	    "<string>256</string><string>-np</string><string>1</string>"
	    "<string>-t</string><string>1</string>%s</array>"
	    "<key>HealthCheck</key><dict><key>ProgramArguments</key><array>"
	    "<string>" CURL "</string><string>-sf</string><string>"
	    "http://127.0.0.1:%d/health</string></array>"
	    "<key>StartDelaySeconds</key><integer>0</integer></dict>%s",
	    port, more_args, port, keys);
	put_job("llama", extra);
}

static void
put_server_job(const char *more_args)
{
	put_server_job_keys(more_args, "");
}

/* curl with these arguments; its exit status, its output in out. */
static int
curl(char *out, size_t outlen, ...)
{
	const char		*argv[24] = { CURL, "-s", "-m", "30" };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	va_list			 ap;
	int			 n = 4;

	va_start(ap, outlen);
	while (n < 23 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	if (out != NULL) {
		size_t	got = strlen(r.out) < outlen ? strlen(r.out) :
		    outlen - 1;

		memcpy(out, r.out, got);
		out[got] = '\0';
	}
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

static void
url(char *buf, size_t len, const char *path)
{
	snprintf(buf, len, "http://127.0.0.1:%d%s", port, path);
}

/* The server answers /health with 200: it has loaded its model. */
static void
wait_ready(void)
{
	char	u[128], out[256];
	double	start = now_s();

	url(u, sizeof u, "/health");
	while (curl(out, sizeof out, "-f", u, NULL) != 0) {
		if (now_s() - start > 60 * time_scale())
			fail_msg("llama-server never became ready");
		sleep_ms(100);
	}
	assert_non_null(strstr(out, "\"ok\""));
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

		curl(out, sizeof out, "-H", "Content-Type: text/plain", "-d",
		    text, u, NULL);
		assert_non_null(strstr(out, "failed to parse grammar"));
		free(text);
		json_decref(req);
	}
	snprintf(body, sizeof body, "{\"prompt\": \"%s\\n%s\\n\", "
	    "\"n_predict\": 1}", lines[0], lines[1]);
	curl(out, sizeof out, "-d", body, u, NULL);
	snprintf(body, sizeof body, "{\"prompt\": \"hi\", \"n_predict\": 1, "
	    "\"json_schema\": {\"type\": \"%s\"}}", lines[0]);
	curl(out, sizeof out, "-d", body, u, NULL);
	url(u, sizeof u, "/v1/chat/completions");
	snprintf(body, sizeof body, "{\"messages\": [{\"role\": \"user\", "
	    "\"content\": \"%s\"}], \"max_tokens\": 1, \"response_format\": "
	    "{\"type\": \"json_schema\", \"json_schema\": {\"schema\": "
	    "{\"type\": \"%s\"}}}}", lines[0], lines[0]);
	curl(out, sizeof out, "-d", body, u, NULL);
	url(u, sizeof u, "/ggml_metal_library_compile_pipeline:%20failed%20to"
	    "%20compile%20pipeline");
	curl(out, sizeof out, u, NULL);
	url(u, sizeof u, "/health");
	curl(out, sizeof out, "-H", "X-Metal: ggml_metal_init: error: load "
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
	ctl(&code, "stop", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	wait_state("llama", "stopped", -1, 10.0);
	url(u, sizeof u, "/health");
	assert_int_not_equal(curl(out, sizeof out, "-f", u, NULL), 0);
	ctl(&code, "start", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "blocked", pid, 20.0);
	wait_ready();
	ctl(&code, "restart", "llama", NULL, NULL);
	assert_int_equal(code, 0);
	pid = wait_state("llama", "blocked", pid, 20.0);
	wait_ready();
	assert_int_equal(kill((pid_t)pid, SIGTERM), 0);
	next = wait_state("llama", "blocked", pid, 30.0);
	assert_true(next != pid);
	wait_ready();
	j = job_status("llama");
	assert_string_equal(str_of(j, "last_exit"), "0");
	assert_true(json_is_null(json_object_get(j, "reverted")));
	json_decref(j);
	assert_false(daemon_log_has("exited abnormally"));
}

#define BENCH		MC_TEST_LLAMA "/llama-bench"
#define PERPLEXITY	MC_TEST_LLAMA "/llama-perplexity"

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
	    BENCH, "-m", MODEL, "-p", "16", "-n", "4", "-r", "1", "-o", "json",
	    NULL };
	struct child_result	*r;
	char			*md;
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
	assert_non_null(strstr(md, "- llama.cpp build: `80fb11a`"));
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
	    PERPLEXITY, "-m", MODEL, "-f", "text.txt", "-c", "128",
	    "--chunks", "4", NULL };
	struct child_result	*r;
	char			*md, *sum;
	int			 code;

	(void)state;
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
	real = bench_json(BENCH, MODEL);
	sim = bench_json(BUILD "/tests/llama-bench-sim", sim_model);
	for (i = 0; i < 2; i++) {
		json_t	*r = json_array_get(real, i), *m = json_array_get(sim, i);

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
	const char	*argv[24] = { SERVER, "-m", MODEL, "--host", "127.0.0.1",
	    "--port", p, "-c", "256", "-np", "1", "-t", "1" };
	double		 start;
	pid_t		 pid;
	size_t		 n = 13, got;
	FILE		*f;
	int		 fd;

	port = free_port();
	snprintf(p, sizeof p, "%d", port);
	for (; *flags != NULL; flags++)
		argv[n++] = *flags;
	argv[n] = NULL;
	snprintf(log, sizeof log, "%s/server.err", home);
	if ((pid = fork()) == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(SERVER, (char *const *)argv);
		_exit(127);
	}
	wait_ready();
	url(u, sizeof u, "/completion");
	curl(out, sizeof out, "-d", "{\"prompt\": \"x\", \"grammar\": "
	    "\"x\"}", u, NULL);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
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
	version_shape(SERVER, a, sizeof a);
	version_shape(FAKE_LLAMA, b, sizeof b);
	assert_string_equal(b, a);
	version_shape(BUILD "/tests/llama-perplexity-sim", b, sizeof b);
	assert_string_equal(b, a);
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
	put_text();
	put_sim_model(sim_model, sizeof sim_model);
	for (mode = 0; mode < 2; mode++) {
		perplexity_run(PERPLEXITY, MODEL, mode == 1, &real);
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
	json_t		*all, *e, *opts, *o;
	const char	*name, *choice, *reason, *at;
	char		 path[256], want[64];
	double		 ratio;

	(void)state;
	put_server_job_keys("", "<key>Profile</key><string>auto</string>");
	wait_ready();
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
	assert_non_null(strstr(slurp("state/measured/llama/stock.json"),
	    "\"build_commit\": \"80fb11a"));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_client_text_moves_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_life, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_standin_shapes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bench_real, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bench_sim_keys, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_perplexity_sim_shapes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_real, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_auto_measured_real, setup,
		    teardown),
	};

	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("llama_e2e", tests, NULL, NULL);
}
