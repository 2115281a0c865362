/* SPDX-License-Identifier: MIT */
/*
 * The end-to-end harness (harness.c): the real metalcapd, the launchctl
 * SIMULATOR and metalcapctl, each test in its own --home.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "mc_rpc.h"

#define BUILD		MC_TEST_BUILD
#define DAEMON		BUILD "/bin/metalcapd"
#define CTL		BUILD "/bin/metalcapctl"
#define SIM		BUILD "/tests/launchctl-sim"
#define FAKE_LLAMA	BUILD "/tests/fake-llama"
/*
 * In a job's environment: the shim inserted.  The simulator plays dyld's
 * DYLD_INSERT_LIBRARIES with LD_PRELOAD, and a stock job has it empty
 * (launchd's own environment may hold one: render.c).
 */
#define INJECTED	"LD_PRELOAD=/"

extern char		home[64], simdir[128], simvar[160], switches[160];
extern pid_t		daemon_pid;
/* For the next daemon started: extra environment, template, launchctl,
 * arguments (NULL-ended); setup() clears them. */
extern const char	*daemon_env, *daemon_env2;
extern const char	*job_throttle;
/* Other binaries than the build's (an installed copy); NULL: the build's. */
extern const char	*daemon_program, *ctl_program;
extern const char	*daemon_template;
extern const char	*daemon_launchctl;
extern const char	*daemon_args[16];

struct child_result;

/* Time: sanitizer builds run slower, so bounds scale (MC_TEST_TIME_SCALE). */
double		 time_scale(void);
bool		 sanitized(void);
double		 now_s(void);
void		 sleep_ms(long ms);

/* metalcapctl --home HOME ARGS...; *code gets its exit status. */
struct child_result *ctl(int *code, const char *a1, const char *a2,
		    const char *a3, const char *a4);
struct child_result *ctlv(int *code, const char *const *args);
struct child_result *ctlv_env(int *code, const char *const *extra,
		    const char *const *args);
json_t		*job_status(const char *name);
const char	*str_of(json_t *j, const char *key);
const char	*status_string(const char *name, const char *map,
		    const char *key, char *buf, size_t len);
long		 pid_of(json_t *j);
void		 assert_field_has(const char *name, const char *key,
		    const char *text);
void		 edit_job(int k, const char *mark);
long		 wait_state(const char *name, const char *state, long not_pid,
		    double timeout);
void		 wait_comm(long pid, const char *comm, double timeout);
bool		 proc_comm(long pid, char *name, size_t len);
bool		 proc_runs(long pid);
char		 proc_state(long pid);	/* 0: gone */
long		 wait_pid_file(const char *path);
void		 rewrite_in_place(const char *path, const char *bytes);
bool		 environ_has(long pid, const char *prefix);
int		 environ_lookup(long pid, const char *prefix);	/* -1: gone */
bool		 loaded_in_gui(const char *name);
long		 launchd_pid(const char *name);	/* 0: not running */
long		 launchd_number(const char *name, const char *key);
void		 restart_with_launchctl_fault(const char *fault);

/* Files: job files are renamed into jobs.d, as editors do. */
/* Append text to the job's stderr log, home/logs/JOB.err.log. */
void		 append_job_log(const char *job, const char *text);
void		 copy_file(const char *from, const char *to);
void		 write_file(const char *path, const char *mode,
		    const char *text);
void		 put_job(const char *name, const char *extra);
/* The managed settings (user's when user is not NULL), with keys. */
void		 write_managed(const char *user, const char *keys);
void		 put_machine_job(const char *name);
void		 put_restricted_job(void);	/* a launcher drops the shim */
void		 use_background_template(void);
void		 write_raw(const char *file, const char *body);

/* The daemon under test, and cmocka setup/teardown around it. */
pid_t		 spawn_daemon(const char *logname);
void		 start_daemon(void);
void		 kill_daemon(int sig);
int		 setup_home(const char *mkdtemp_template);
int		 setup(void **state);
int		 teardown(void **state);

/* The simulated device, the shim's reports, the raw socket. */
void		 set_device(const char *line);
bool		 marker_exists(long pid);
void		 wait_marker(long pid);
void		 send_request(long pid);	/* fake-llama's, SIGUSR1 */
int		 raw_connect(void);
int		 try_connect(void);	/* -1 when refused, no abort */
bool		 closed_by_daemon(int fd, double wait_s);
void		 pipeline_probes(int fd, uint32_t n, uint32_t *busy,
		    uint32_t *ok, uint32_t *first_busy);
int		 other_uid_prefix(const char **prefix, size_t n, char *why,
		    size_t whylen);
double		 status_rtt_ms(void);	/* -1 when refused */
int		 daemon_log_count(const char *text);	/* home/daemon.log's */
bool		 daemon_log_has(const char *text);	/* lines holding it */
void		 wait_daemon_log(const char *text, int n);
void		 real_pipeline_failure(long pid);	/* fake-llama's */
int		 raw_exchange(int fd, const void *bytes, size_t len,
		    struct mc_rpc_decoder *dec, struct mc_rpc_message *m);
void		 raw_call(int fd, const char *method);

/* Figures for docs/RELIABILITY.md, on stderr as "PREFIX: ...". */
extern const char	*report_prefix;
void		 report(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));

#endif
