/* SPDX-License-Identifier: MIT */
/*
 * What metalcapd's scanner makes of each line of standard input, one
 * answer a line: the failure signature's name, "environment: " and the
 * fault it names, or "-".  The product's own scanner (policy/scan.c),
 * with its colour stripping, for check-ggml-messages.py.
 */
#include <stdio.h>
#include <string.h>

#include "policy.h"

int
main(void)
{
	struct scan	*sc = scan_new(NULL);
	const char	*what, *line;
	char		 text[8192], plain[8192];

	while (fgets(text, sizeof text, stdin) != NULL) {
		text[strcspn(text, "\n")] = '\0';
		line = scan_plain(text, plain, sizeof plain);
		if ((what = scan_environment(line)) != NULL)
			printf("environment: %s\n", what);
		else if ((what = scan_line(sc, line)) != NULL)
			printf("%s\n", what);
		else
			printf("-\n");
	}
	scan_free(sc);
	return 0;
}
