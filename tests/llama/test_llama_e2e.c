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
#include <signal.h>
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

/* llama-server as the job "llama", its /health as its check (XML). */
static void
put_server_job(const char *more_args)
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
	    "<key>StartDelaySeconds</key><integer>0</integer></dict>",
	    port, more_args, port);
	put_job("llama", extra);
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
	/* Its check passed on the server that loaded, and it still serves. */
	assert_false(daemon_log_has("health check failed"));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_client_text_moves_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_life, setup,
		    teardown),
	};

	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("llama_e2e", tests, NULL, NULL);
}
