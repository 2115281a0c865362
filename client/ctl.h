/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl's private header: the state of one run, the command table's
 * row, and what the command files share.
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "mc_bench.h"
#include "mc_client.h"
#include "mc_kld.h"
#include "mc_macho.h"
#include "mc_rpc.h"
#include "mc_sha256.h"
#include "policy.h"

#define EXIT_DAEMON	1
#define EXIT_USAGE	2
#define EXIT_UNREACH	3
#define EXIT_UNHEALTHY	4
/* exec's own failures, as env(1) and nohup(1) report theirs. */
#define EXIT_EXEC_REFUSED	125
#define EXIT_EXEC_CANNOT	126
#define EXIT_EXEC_NOTFOUND	127

/* Options, wherever they stand on the command line. */
#define CTL_OPT_PROFILE	0x01	/* --profile P */
#define CTL_OPT_FOLLOW	0x02	/* -f, --follow */
#define CTL_OPT_STOCK	0x04	/* --stock */
#define CTL_OPT_ENV	0x08	/* --env K=V, repeated */
#define CTL_OPT_FORCE	0x10	/* --force */
#define CTL_OPT_INHERIT	0x20	/* --inherit */
#define CTL_OPT_REPORT	0x40	/* --report FILE */
#define CTL_OPT_SAMPLES	0x80	/* --samples N */
#define CTL_OPT_OUT	0x100	/* --out DIR */
#define CTL_OPT_USER_HOME 0x200	/* --user-home DIR */
#define CTL_OPT_MACHINE	0x400	/* --machine apple-silicon|intel */
#define CTL_OPT_SIP	0x800	/* --sip on|off */
#define CTL_OPT_LIMIT	0x1000	/* --limit NAME=VALUE, repeated */
#define CTL_OPT_ARCH	0x2000	/* --arch native|x86_64 */
#define CTL_OPT_GUESTS	0x4000	/* --min-guests N */
#define CTL_OPT_WINDOW	0x8000	/* --window DAYS */
#define CTL_OPT_LOCAL	0x10000	/* --local-verify-allows; the last:
				   metalcapctl.c names each bit */

struct ctl_opts {
	unsigned	  given;	/* CTL_OPT_* seen */
	const char	 *profile;
	char		**env;		/* --env values, in order */
	int		  nenv;
	const char	 *report;
	long		  samples;
	const char	 *out;
	const char	 *user_home;
	bool		  intel;	/* --machine intel */
	bool		  sip;		/* --sip on */
	bool		  x86_64;	/* --arch x86_64 */
	char		**limits;	/* --limit values, in order */
	int		  nlimits;
	long		  min_guests;	/* fleet allowlist */
	long		  window_days;
};

struct ctl {
	struct mc_client	 client;
	bool			 json;
	long			 timeout;	/* seconds; 0: none */
	struct paths		 paths;		/* jobs.d, the socket */
	struct ctl_opts		 opts;
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

typedef int	ctl_command_fn(struct ctl *, const struct ctl_command *, int,
		    char **);

/*
 * ctl_run.c: one program run with a profile's shim outside launchd, for
 * exec and bench.
 */
struct ctl_unlock {
	struct profile_set	 profiles;
	struct managed		 managed;	/* the administrator's word */
	const struct profile	*profile;
	bool			 auto_profile;	/* --profile auto */
	char			 program[PATH_MAX];	/* resolved */
	bool			 not_found;
	struct mc_inject	 judge;		/* check's judgement */
	char			 verdict[32];	/* the probe's: "pass", ... */
	char			 prober[PATH_MAX + 32];	/* who probed */
	char			 device[256];	/* as the probe saw it */
	char			 why[1024];	/* why it may not run */
};

struct ctl_outcome {
	long			 pid;
	int			 status;	/* as a shell reports it */
	struct shim_seen	 seen;		/* the shim's report */
	bool			 injected;	/* the report proves it */
	char			 why[768];	/* the proof, or its absence */
};

int	ctl_unlock_prepare(struct ctl *, const char *program, bool probe_here,
	    struct ctl_unlock *);
void	ctl_unlock_free(struct ctl_unlock *);
int	ctl_run(struct ctl *, const struct ctl_unlock *, bool unlocked,
	    char **argv, int out, int err, struct ctl_outcome *);
void	ctl_llama_build(const char *program, char *out, size_t len);
void	ctl_tmp_name(char *buf, size_t len, const char *what);
void	ctl_signals_init(void);
void	ctl_signals_catch(void);
int	ctl_signal_caught(void);
void	ctl_signals_settle(int status);
void	ctl_signals_die(void);

/* ctl_bench.c, ctl_evidence.c: one bench, its runs and its evidence. */
struct ctl_bench_run {
	int			 round;		/* from 1 */
	bool			 unlocked;
	int			 status;
	char			 json[64];	/* its stdout, in the folder */
	char			 log[64];	/* its stderr */
	char			 proof[768];	/* the shim's report, judged */
};

/* ctl_verify.c: llama-perplexity's KL divergence, and its limits. */
struct ctl_verify {
	struct mc_kld		 kld;		/* unlocked against stock */
	char			 base_sha256[MC_SHA256_HEX];	/* the logits */
	char			 base[PATH_MAX];	/* where, while it runs */
	const char		*model;		/* -m, as given; NULL: none */
	const char		*text;		/* -f, as given; NULL: none */
	double			 max_mean_kld;
	double			 max_kld_999;
	double			 min_same_top;	/* percent */
	const char		*failed;	/* the figure past its limit */
	char			 verdict[256];
};

struct ctl_bench {
	const char		*command;	/* "bench" or "verify" */
	const char		*out_ext;	/* of each run's stdout file */
	struct ctl_verify	*verify;	/* NULL: bench */
	struct ctl_unlock	 unlock;
	char			**args;		/* llama-bench's, -o json */
	long			 rounds;
	struct ctl_bench_run	*runs;
	int			 nruns;
	struct mc_bench_run	 sides[2];	/* stock, unlocked */
	char			 dir[PATH_MAX];	/* the evidence, absolute */
	int			 dirfd;		/* held open: see ctl_bench_dir */
	bool			 temporary;	/* no --out: removed after */
	char			 refused[2048];	/* why there is no ratio */
};

int	ctl_bench_dir(struct ctl_bench *, const char *out);
int	ctl_bench_exec(struct ctl *, struct ctl_bench *, char **args,
	    struct ctl_bench_run *);
char	*ctl_bench_read(struct ctl_bench *, const struct ctl_bench_run *,
	    size_t max);
void	ctl_bench_free(struct ctl_bench *);
void	ctl_evidence_remove(const struct ctl_bench *);
int	ctl_evidence_finish(struct ctl *, const struct ctl_bench *,
	    json_t *summary, void (*print)(const struct ctl_bench *),
	    int rc);

/* metalcapctl.c: talking to the daemon, errors printed once. */
int	ctl_call(struct ctl *, const char *method, char *const *params,
	    const char *opt_key, const char *opt_val,
	    struct mc_rpc_message *);
int	ctl_read(struct ctl *, struct mc_rpc_message *);
int	ctl_open(struct ctl *);

/* ctl_output.c */
json_t	*ctl_json(const msgpack_object *);
void	 ctl_print_json(const msgpack_object *);
const char *ctl_field(const msgpack_object *map, const char *key, char *buf,
	    size_t len);
bool	 ctl_unhealthy(const char *state);
bool	 ctl_print_health(const msgpack_object *job, bool print);
int	 ctl_print_jobs(const msgpack_object *jobs);
int	 ctl_job_reply(struct ctl *, int rc, const char *verb,
	    const struct mc_rpc_message *);

/* One file a command, or a few alike; the table is in metalcapctl.c. */
ctl_command_fn	cmd_status, cmd_enable, cmd_change, cmd_profiles,
		cmd_reload, cmd_watch, cmd_logs;	/* ctl_jobs.c */
ctl_command_fn	cmd_probe, cmd_doctor;			/* ctl_probe.c */
ctl_command_fn	cmd_report;				/* ctl_report.c */

/* ctl_jobfile.c */
int	cmd_add(struct ctl *, const struct ctl_command *, int, char **);
int	cmd_remove(struct ctl *, const struct ctl_command *, int, char **);

/* ctl_exec.c, ctl_bench.c */
int	cmd_exec(struct ctl *, const struct ctl_command *, int, char **);
int	cmd_bench(struct ctl *, const struct ctl_command *, int, char **);
int	cmd_verify(struct ctl *, const struct ctl_command *, int, char **);

/* ctl_fleet.c */
int	cmd_fleet(struct ctl *, const struct ctl_command *, int, char **);

/* ctl_check.c */
int	cmd_check(struct ctl *, const struct ctl_command *, int, char **);

#endif
