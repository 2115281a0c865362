/* SPDX-License-Identifier: MIT */
/*
 * A process seen from /proc (Linux): KiB resident, open descriptors, CPU
 * ticks used (utime + stime), times scheduled onto a CPU (wakeups), and
 * whether it holds a file open.
 */
#ifndef PROC_H
#define PROC_H

#include <sys/types.h>

#include <stdbool.h>

long		proc_rss_kib(pid_t);
long		proc_status_kib(pid_t, const char *field);
int		proc_fds(pid_t);
bool		proc_holds(pid_t, const char *path, bool deleted);
long long	proc_cpu_ticks(pid_t);
long long	proc_wakeups(pid_t);

#endif
