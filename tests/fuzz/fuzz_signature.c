/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a job's FailureSignatures pattern, as jobfile.c checks it
 * (scan_refused) and scan.c compiles and runs it over a log line of the
 * longest length the daemon reads (4 KiB).  A pattern that passes the
 * check must compile and match within libFuzzer's -timeout and
 * -rss_limit_mb: that is the daemon's promise.
 */
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcd.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char	line[TAIL_LINE_MAX];
	char		pattern[SCAN_PATTERN_MAX + 2];
	plist_t		list;
	struct scan	*s;

	if (size > SCAN_PATTERN_MAX + 1)
		return 0;
	memcpy(pattern, data, size);
	pattern[size] = '\0';
	if (scan_refused(pattern) != NULL)
		return 0;
	if (line[0] == '\0') {
		/* Repetitive text: the worst case for most matchers. */
		memset(line, 'a', sizeof line - 1);
		memcpy(line + 1000, "ggml_metal_init: error: ", 24);
		line[sizeof line - 2] = '!';
	}
	list = plist_new_array();
	plist_array_append_item(list, plist_new_string(pattern));
	s = scan_new(list);
	scan_line(s, line);
	scan_free(s);
	plist_free(list);
	return 0;
}
