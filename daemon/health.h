/* SPDX-License-Identifier: MIT */
/*
 * health.c: the job file's HealthCheck, a liveness check, and its last
 * answer as status shows it.
 */
#ifndef HEALTH_H
#define HEALTH_H

#include <stdbool.h>

struct job;

/* The last answer of a job's check, for status. */
struct health_answer {
	long	time;		/* when it came; 0: none yet */
	long	pid;		/* the process it was for */
	bool	passed;
	char	words[160];	/* its exit status, or that it timed out */
	char	output[160];	/* its first line: stderr's, else stdout's */
};

void		 health_begin(struct job *);
void		 health_cancel(struct job *);
void		 health_stop(struct job *);
const char	*health_state(const struct job *);

#endif
