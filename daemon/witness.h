/* SPDX-License-Identifier: MIT */
/*
 * witness.c: what counts as evidence of a failed pipeline (metalcapd(8),
 * EVIDENCE), for watch.c, which hands it what the job's process did.
 * After mcd.h: the job and tail_line_fn are its.
 */
#ifndef WITNESS_H
#define WITNESS_H

#include <stdbool.h>

struct job;
struct shim_seen;

void	witness_said(struct job *, const char *what, const char *line);
void	witness_line(struct job *, const char *what, const char *line);
void	witness_report(struct job *, tail_line_fn read_line);
void	witness_gone(struct job *, tail_line_fn read_line);
void	witness_exited(struct job *, bool abnormal, int sig, const char *how,
	    tail_line_fn read_line);
void	witness_reset(struct job *);
bool	witness_read(struct job *, struct shim_seen *);
void	witness_stop(struct job *);

#endif
