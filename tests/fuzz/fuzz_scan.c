/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the log-signature scanner over what a workload may print on
 * stderr, through the incremental tail (partial lines, huge lines, NULs)
 * and the colours' removal, with the built-in signatures and a job's own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mcd.h"

static struct scan	*scanner;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	plist_t	extra = plist_new_array();

	(void)argc;
	(void)argv;
	log_open(NULL, false);
	plist_array_append_item(extra, plist_new_string("out of memory: "
	    "[0-9]+ bytes|ggml_backend_.*failed"));
	scanner = scan_new(extra);
	plist_free(extra);
	return 0;
}

/* As metalcapd reads a line: colours out, its environment, the
 * signatures. */
static void
fuzz_line(void *arg, const char *text)
{
	char		 plain[TAIL_LINE_MAX + 1];
	const char	*line = scan_plain(text, plain, sizeof plain);

	(void)arg;
	(void)scan_environment(line);
	(void)scan_line(scanner, line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tail	*t = calloc(1, sizeof *t);
	char		 path[64];
	FILE		*f;
	size_t		 half = size / 2;

	/* Written in two parts, so a line may be split across reads. */
	fuzz_write_file(path, "job.err.log", NULL, 0);
	tail_start(t, path);
	if ((f = fopen(path, "ab")) == NULL)
		abort();
	fwrite(data, 1, half, f);
	fflush(f);
	while (tail_read(t, fuzz_line, NULL))
		continue;
	fwrite(data + half, 1, size - half, f);
	fclose(f);
	while (tail_read(t, fuzz_line, NULL))
		continue;
	tail_stop(t);
	free(t);
	return 0;
}
