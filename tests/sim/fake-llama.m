/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR workload: a stand-in for llama-server, for tests of what the
 * daemon sees.  It opens the simulated device, decides its kernels the way
 * ggml's Metal backend does, prints ggml's init lines in their real format,
 * and when the device is switched to fail (MTLSIM_FAIL, MTLSIM_RESIDENCY)
 * prints ggml's failure lines and exits or aborts as llama.cpp would.
 * Pipelines compile lazily, on a graph's first use: one warm-up graph at
 * start, as llama-server does, and one more per request (SIGUSR1).
 * Otherwise it serves (sleeps) until SIGTERM or SIGINT.  A request whose
 * graph fails on the device fails alone: the server goes on, as
 * llama-server does when llama_decode fails.
 *
 * It logs as llama-server's common log does (common/log.cpp, ggmlsim.h):
 * "M.SS.mmm.uuu E func: ..." by default, ggml's INFO lines only from
 * verbosity 4, and takes llama.cpp's own flags for it.
 *
 *   fake-llama [--once] [--exit-after MS CODE] [--term-delay MS]
 *              [--crash-runs N FILE] [--say LINE]
 *              [--log-prefix | --no-log-prefix]
 *              [--log-timestamps | --no-log-timestamps]
 *              [--log-colors on|off] [-lv N]
 *     --once         exit 0 after the warm-up instead of serving
 *     --exit-after   exit with CODE after MS of serving (a crashing server)
 *     --crash-runs   its first N runs (counted in FILE) exit with 1 after
 *                    100 ms, the later ones serve: a server that crashed
 *                    a few times and then came up
 *     --term-delay   take MS to shut down after SIGTERM (a slow server)
 */
#include <objc/runtime.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggmlsim.h"

static volatile sig_atomic_t	fake_stop, fake_request;

static void
fake_on_signal(int sig)
{
	if (sig == SIGUSR1)
		fake_request = 1;
	else
		fake_stop = 1;
}

/* This run's number, counted in file (--crash-runs): 1 for the first. */
static long
fake_run_number(const char *file)
{
	long	n = 0;
	FILE	*f;

	if ((f = fopen(file, "r")) != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	if ((f = fopen(file, "w")) != NULL) {
		fprintf(f, "%ld\n", n + 1);
		fclose(f);
	}
	return n + 1;
}

int
main(int argc, char **argv)
{
	GgmlSimDevice	*dev;
	bool		 once = false;
	long		 exit_ms = -1, exit_code = 0, term_ms = 0;
	const char	*say = NULL;	/* a line of the server's, say a model
					   it cannot open */
	int		 i;

	ggmlsim_version(argc, argv);
	/* llama-server's defaults (common/log.cpp, common/arg.cpp). */
	ggmlsim_log_style = (struct ggmlsim_log){ .prefix = true,
	    .timestamps = true, .verbosity = 3 };
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = true;
		else if (strcmp(argv[i], "--exit-after") == 0 && i + 2 < argc) {
			exit_ms = atol(argv[++i]);
			exit_code = atol(argv[++i]);
		} else if (strcmp(argv[i], "--term-delay") == 0 && i + 1 < argc)
			term_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--say") == 0 && i + 1 < argc)
			say = argv[++i];
		/* llama-server's model, either form; what it loads is not
		 * simulated (--say gives its error). */
		else if (strncmp(argv[i], "--model=", 8) == 0)
			continue;
		else if ((strcmp(argv[i], "-m") == 0 ||
		    strcmp(argv[i], "--model") == 0) && i + 1 < argc)
			i++;
		else if (strcmp(argv[i], "--log-prefix") == 0 ||
		    strcmp(argv[i], "--no-log-prefix") == 0)
			ggmlsim_log_style.prefix = argv[i][2] == 'l';
		else if (strcmp(argv[i], "--log-timestamps") == 0 ||
		    strcmp(argv[i], "--no-log-timestamps") == 0)
			ggmlsim_log_style.timestamps = argv[i][2] == 'l';
		else if (strcmp(argv[i], "--log-colors") == 0 && i + 1 < argc)
			ggmlsim_log_style.colors = strcmp(argv[++i], "on") == 0;
		else if (strcmp(argv[i], "-lv") == 0 && i + 1 < argc)
			ggmlsim_log_style.verbosity = atoi(argv[++i]);
		else if (strcmp(argv[i], "--crash-runs") == 0 && i + 2 < argc) {
			if (fake_run_number(argv[i + 2]) <= atol(argv[i + 1])) {
				exit_ms = 100;
				exit_code = 1;
			}
			i += 2;
		}
		else {
			fprintf(stderr, "usage: fake-llama [--once] "
			    "[--exit-after MS CODE] [--term-delay MS] "
			    "[--say LINE] [-m|--model[=]PATH] "
			    "[--crash-runs N FILE] "
			    "[--[no-]log-prefix] [--[no-]log-timestamps] "
			    "[--log-colors on|off] [-lv N]\n");
			return 2;
		}
	}
	signal(SIGTERM, fake_on_signal);
	signal(SIGINT, fake_on_signal);
	signal(SIGUSR1, fake_on_signal);
	if ((dev = MTLCreateSystemDefaultDevice()) == nil) {
		GLOG_ERROR("ggml_metal_init: error: failed to allocate "
		    "context\n");
		return 1;
	}
	if (ggmlsim_init(dev) != 0)
		return 1;
	/* What a client had it print (a grammar, a prompt): raw. */
	if (say != NULL)
		LOG("%s\n", say);
	LLAMA_INFO("srv  llama_server: listening on "
	    "http://127.0.0.1:8080\n");
	if (exit_ms >= 0) {
		usleep((useconds_t)exit_ms * 1000);
		/* Freed, or LeakSanitizer's exit status would stand for CODE. */
		object_dispose(dev);
		return (int)exit_code;
	}
	while (!once && !fake_stop) {
		pause();
		if (fake_request) {
			fake_request = 0;
			(void)ggmlsim_graph(dev);
		}
	}
	/* Finishing requests, flushing caches: a server's slow goodbye. */
	if (fake_stop && term_ms > 0)
		usleep((useconds_t)term_ms * 1000);
	object_dispose(dev);
	return 0;
}
