/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR workload: a stand-in for llama-server, for tests of what the
 * daemon sees.  It opens the simulated device, decides its kernels the way
 * ggml's Metal backend does, prints ggml's init lines in their real format,
 * and when the device is switched to fail (MTLSIM_FAIL, MTLSIM_RESIDENCY)
 * prints ggml's failure lines and exits or aborts as llama.cpp would.
 * Pipelines compile lazily, on a graph's first use: one warm-up graph at
 * start, as llama-server does, and one more per request (SIGUSR1).
 * Otherwise it serves (sleeps) until SIGTERM or SIGINT.  A command buffer
 * that fails on the device is logged at ERROR by ggml_metal_synchronize
 * and leaves the backend in error state: the server goes on, and each
 * later graph fails with ggml's "backend is in error state" line, as
 * llama-server does (ggml-metal-context.m:268-298, 459-462).
 *
 * It logs as llama-server's common log does (common/log.cpp, ggmlsim.h):
 * "M.SS.mmm.uuu E func: ..." by default, ggml's INFO lines only from
 * verbosity 4, and takes llama.cpp's own flags for it.
 *
 *   fake-llama [--once] [--exit-after MS CODE] [--term-delay MS]
 *              [--crash-runs N FILE] [--say LINE]... [--die-once FILE MS SIG]
 *              [--abort-once FILE] [--start-when FILE] [--requests N]
 *              [--flood N LINE]
 *              [--log-prefix | --no-log-prefix]
 *              [--log-timestamps | --no-log-timestamps]
 *              [--log-colors on|off] [-lv N]
 *     --once         exit 0 after the warm-up instead of serving
 *     --exit-after   exit with CODE after MS of serving (a crashing server)
 *     --crash-runs   its first N runs (counted in FILE) exit with 1 after
 *                    100 ms, the later ones serve: a server that crashed
 *                    a few times and then came up
 *     --term-delay   take MS to shut down after SIGTERM (a slow server)
 *     --say          print LINE raw, as a client's grammar or prompt
 *                    (each --say, in turn)
 *     --die-once     its first run (FILE does not exist yet; it is made)
 *                    dies of signal SIG (ABRT, SEGV, BUS) after MS, as a
 *                    request that crashes the server; later runs serve
 *     --abort-once   its first run (FILE, likewise) ends right after the
 *                    --say lines as ggml_abort does: its trace, SIGABRT
 *     --start-when   with its device made (the shim has reported), wait
 *                    for FILE to exist before ggml's init: a test holds
 *                    the start back until metalcapd knows the pid
 *     --requests     N requests' graphs right after it listens, as if N
 *                    requests came at once (with --once: then it ends)
 *     --flood        print LINE N times before the --say lines, as
 *                    llama-server echoes one large request line by line
 */
#include <sys/stat.h>

#include <fcntl.h>
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

/* The signal named by name (ABRT, SEGV, BUS), or 0. */
static int
fake_signal(const char *name)
{
	return strcmp(name, "ABRT") == 0 ? SIGABRT : strcmp(name, "SEGV") ==
	    0 ? SIGSEGV : strcmp(name, "BUS") == 0 ? SIGBUS : 0;
}

/* Is this the first run (file made now)? */
static bool
fake_first_run(const char *file)
{
	int	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd == -1)
		return false;
	close(fd);
	return true;
}

/* Die of sig with its default action, as a crash does. */
static void
fake_die(int sig)
{
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

int
main(int argc, char **argv)
{
	GgmlSimDevice	*dev;
	bool		 once = false;
	bool		 aborts = false;
	long		 exit_ms = -1, exit_code = 0, term_ms = 0, die_ms = -1;
	const char	*say[8];	/* lines of the server's, say a model
					   it cannot open, or a client's */
	const char	*start_when = NULL, *flood = NULL;
	long		 nflood = 0, f;
	int		 i, k, nsay = 0, die_sig = 0, nrequests = 0;
	sigset_t	 wake, was;

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
		else if (strcmp(argv[i], "--say") == 0 && i + 1 < argc &&
		    nsay < 8)
			say[nsay++] = argv[++i];
		else if (strcmp(argv[i], "--die-once") == 0 && i + 3 < argc) {
			if (fake_first_run(argv[i + 1])) {
				die_ms = atol(argv[i + 2]);
				die_sig = fake_signal(argv[i + 3]);
			}
			i += 3;
		} else if (strcmp(argv[i], "--start-when") == 0 &&
		    i + 1 < argc)
			start_when = argv[++i];
		else if (strcmp(argv[i], "--abort-once") == 0 &&
		    i + 1 < argc)
			aborts = fake_first_run(argv[++i]);
		else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc)
			nrequests = atoi(argv[++i]);
		else if (strcmp(argv[i], "--flood") == 0 && i + 2 < argc) {
			nflood = atol(argv[++i]);
			flood = argv[++i];
		}
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
			    "[--say LINE]... [--die-once FILE MS SIG] "
			    "[--abort-once FILE] [--start-when FILE] "
			    "[--requests N] "
			    "[--flood N LINE] "
			    "[-m|--model[=]PATH] "
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
	while (start_when != NULL && access(start_when, F_OK) != 0 &&
	    !fake_stop)
		usleep(10000);
	/*
	 * The warm-up graph: llama.cpp's common_init_from_params ignores
	 * what its llama_decode returns (common.cpp:1539), so a failed
	 * command buffer leaves a server that listens, in error state.
	 */
	if (ggmlsim_setup(dev) != 0)
		return 1;
	(void)ggmlsim_graph(dev);
	/* What a client had it print (a grammar, a prompt): raw. */
	for (f = 0; f < nflood; f++)
		LOG("%s\n", flood);
	for (k = 0; k < nsay; k++)
		LOG("%s\n", say[k]);
	if (aborts)
		ggmlsim_abort_trace();
	LLAMA_INFO("srv  llama_server: listening on "
	    "http://127.0.0.1:8080\n");
	/* A request whose graph fails fails alone: the server goes on. */
	for (k = 0; k < nrequests; k++)
		(void)ggmlsim_graph(dev);
	if (die_ms >= 0) {
		usleep((useconds_t)die_ms * 1000);
		fake_die(die_sig != 0 ? die_sig : SIGSEGV);
	}
	if (exit_ms >= 0) {
		usleep((useconds_t)exit_ms * 1000);
		/* Freed, or LeakSanitizer's exit status would stand for CODE. */
		object_dispose(dev);
		return (int)exit_code;
	}
	/*
	 * A request that came before it listened waits in the socket's
	 * backlog and is served now, so the flag is tested with the
	 * signals blocked and waited for atomically: pause() after the
	 * test would sleep through one.
	 */
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	sigaddset(&wake, SIGTERM);
	sigaddset(&wake, SIGINT);
	while (!once && !fake_stop) {
		sigprocmask(SIG_BLOCK, &wake, &was);
		if (!fake_request && !fake_stop)
			sigsuspend(&was);
		sigprocmask(SIG_SETMASK, &was, NULL);
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
