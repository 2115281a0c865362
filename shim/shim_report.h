/* SPDX-License-Identifier: MIT */
/*
 * The activation report: one line per process that proves (or disproves)
 * that the shim took effect.  The daemon and the probe read it.
 */
#ifndef SHIM_REPORT_H
#define SHIM_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "shim_config.h"

#define SHIM_REPORT_VAR		"METALCAP_REPORT"
#define SHIM_REPORT_LINE_MAX	1024

struct shim_report {
	const char		*state;		/* "hooked" or "stock" */
	const struct shim_config *config;	/* NULL when it did not load */
	const char		*device_class;	/* NULL before a device */
	const char		*hooked;	/* comma-separated selectors */
	const char		*watched;	/* the calls witnessed, likewise */
	const char		*reason;	/* why stock; NULL when hooked */
	uint64_t		 ctor_ns;	/* the constructor's own time */
};

size_t	shim_report_format(const struct shim_report *report, long pid,
	    long pgid, char *line, size_t linelen);
size_t	shim_report_witness_format(const char *failed, const char *call,
	    long code, long pid, long pgid, char *line, size_t linelen);
void	shim_report_write(const char *destination, const char *line,
	    size_t len, long pid);

#endif
