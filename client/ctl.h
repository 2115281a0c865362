/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl's private header: the state of one run, the command table's
 * row, and what the command files share.
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "mc_rpc.h"
#include "mcd.h"

#define EXIT_DAEMON	1
#define EXIT_USAGE	2
#define EXIT_UNREACH	3
#define EXIT_UNHEALTHY	4

/* Options, wherever they stand on the command line. */
#define CTL_OPT_PROFILE	0x01	/* --profile P */
#define CTL_OPT_FOLLOW	0x02	/* -f, --follow */
#define CTL_OPT_STOCK	0x04	/* --stock */
#define CTL_OPT_ENV	0x08	/* --env K=V, repeated */
#define CTL_OPT_FORCE	0x10	/* --force */
#define CTL_OPT_INHERIT	0x20	/* --inherit */

struct ctl_opts {
	unsigned	  given;	/* CTL_OPT_* seen */
	const char	 *profile;
	char		**env;		/* --env values, in order */
	int		  nenv;
};

struct ctl {
	int			 fd;
	bool			 json;
	uint32_t		 msgid;
	struct mc_rpc_decoder	 decoder;
	struct mcd_paths	 paths;		/* jobs.d, the socket */
	struct ctl_opts		 opts;
	long			 timeout;	/* seconds; 0: none */
};

struct ctl_command {
	const char	*name;
	int		 min_args;
	int		 max_args;	/* -1: any number */
	unsigned	 opts;		/* CTL_OPT_* it takes */
	const char	*usage;
	int		 (*fn)(struct ctl *, const struct ctl_command *, int,
			    char **);
	const char	*method;	/* for the one-job changes */
	bool		 offline;	/* runs without the daemon */
};

int	ctl_connect(struct ctl *, bool quiet);
int	ctl_hello(struct ctl *);
void	ctl_disconnect(struct ctl *);
void	ctl_set_timeout(struct ctl *, long seconds);

/* ctl_jobfile.c */
int	cmd_add(struct ctl *, const struct ctl_command *, int, char **);
int	cmd_remove(struct ctl *, const struct ctl_command *, int, char **);

/* ctl_check.c */
int	cmd_check(struct ctl *, const struct ctl_command *, int, char **);

#endif
