/* SPDX-License-Identifier: MIT */
/*
 * crashing.c: a job crash-looping without the shim, kept served; and a
 * fault of its environment, as launchd or the kernel named it (decides)
 * or as a line of its log did (only describes).
 */
#ifndef CRASHING_H
#define CRASHING_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct mcd;
struct job;
struct mcd_event;

struct env_named {
	const char	*what;		/* NULL: none */
	char		 line[256];
	uint64_t	 ms;		/* loop time it was seen */
};

struct crashing {
	bool		 set;
	long		 since;		/* time(NULL) it began */
	long		 exits;		/* abnormal exits since */
	char		 last[64];	/* the last, in words */
	char		 cause[256];	/* a likely cause, or "" */
	uv_timer_t	*steady;	/* its process has run a window */
};

void		 crashing_exit(struct mcd *, struct job *,
		    const struct mcd_event *, int n, const char *last);
void		 crashing_clear(struct job *, const struct mcd_event *);
const char	*crashing_text(const struct job *, char *buf, size_t len);
void		 crashing_arm(struct job *);
void		 crashing_note_said(struct job *, const char *what,
		    const char *line);
const char	*crashing_said(const struct job *);
/* launchd's or the kernel's word, which may decide. */
void		 crashing_note_env(struct job *, const char *what,
		    const char *evidence);
bool		 crashing_env_fault(const struct job *);

#endif
