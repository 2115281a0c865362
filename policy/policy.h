/* SPDX-License-Identifier: MIT */
/*
 * The policy both programs apply, metalcapd and metalcapctl alike: where
 * files live, what a job file, a profile and the managed settings mean,
 * what a log line, a probe's answer or the shim's report says.  Nothing
 * here runs an event loop or holds a daemon's state (scripts/check-layers.py
 * refuses a libuv symbol in policy/), so the client links it whole and the
 * daemon's runtime (daemon/mcd.h) builds on it.
 */
#ifndef POLICY_H
#define POLICY_H

#include <sys/types.h>

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <plist/plist.h>

#define MC_NAME_MAX		64
#define MC_LABEL_PREFIX	"org.metalcap.job."
#define MC_ERR_LEN		512

/* --- paths.c --------------------------------------------------------------- */

struct paths {
	char	home[PATH_MAX];		/* --home, or "" */
	char	jobs[PATH_MAX];
	char	managed_jobs[PATH_MAX];	/* read-only, may be "" */
	char	profiles[PATH_MAX];
	char	state[PATH_MAX];
	char	agents[PATH_MAX];	/* the job agents we render */
	char	login_agents[PATH_MAX];	/* what launchd loads at login */
	char	system_agents[PATH_MAX];	/* /Library/LaunchAgents */
	char	logs[PATH_MAX];
	char	socket[PATH_MAX];
	char	shim[PATH_MAX];
	char	probe[PATH_MAX];
	char	launchctl[PATH_MAX];
	char	job_template[PATH_MAX];
	char	managed[PATH_MAX];	/* managed preferences, computer */
	char	managed_user[PATH_MAX];	/* ... and this user's, over it */
	char	console[PATH_MAX];	/* whose owner has the console, or "" */
	char	machine_id[PATH_MAX];	/* a stand-in for the machine's id */
	char	link_addr[PATH_MAX];	/* ... and for its en0 address */
	char	host[PATH_MAX];		/* ... and for the host's identity */
};

/*
 * What a verdict, a measurement or an allowlist entry is about on this
 * guest: the OS build (kern.osversion), the host's chip as the guest
 * sees it (machdep.cpu.brand_string) and the model (hw.model).
 */
struct host_id {
	char	os_build[64];
	char	cpu_brand[128];
	char	hw_model[64];
};

int	paths_init(struct paths *, const char *home, const char *argv0,
	    char *why, size_t whylen);
void	paths_managed_user(struct paths *);
bool	paths_machine(const struct paths *, char *buf, size_t len);
bool	paths_guest(const struct paths *, char *buf, size_t len);
void	paths_host(const struct paths *, struct host_id *);
int	paths_make_dirs(const struct paths *, char *why, size_t whylen);
int	paths_mkdir(const char *dir, mode_t mode, char *why, size_t whylen);
void	paths_run_dir(const char *config, size_t sun_max, char *out,
	    size_t len);

/* --- platform_linux.c / platform_darwin.c ----------------------------------- */

int	platform_default_dirs(char *config, char *state, char *runtime,
	    char *logs, char *agents, size_t len);
int	platform_machine_id(char *buf, size_t len);
int	platform_link_addr(char *buf, size_t len);
int	platform_self_dir(const char *argv0, char *dir, size_t len);
void	platform_login_agents(const char *home, char *dir, size_t len);
const char *platform_shim_name(void);
const char *platform_inject_var(void);
int	platform_pid_fd(long pid);
int	platform_pid_path(long pid, char *buf, size_t len);	/* its image */
void	platform_release_memory(void);
void	platform_host(char *os, size_t oslen, char *model, size_t modellen);
void	platform_host_id(struct host_id *);
struct mc_inject_host;
void	platform_inject_host(struct mc_inject_host *);

/* --- log.c ------------------------------------------------------------------ */

void	log_open(const char *file, bool to_stderr);
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_limited(const char *who, const char *kind, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

/* --- profile.c -------------------------------------------------------------- */

struct profile {
	char		name[MC_NAME_MAX + 1];
	uint64_t	family_max;		/* 0: stock, no injection */
	uint64_t	threadgroup_memory;
	uint64_t	working_set;		/* 0: leave */
	char		description[256];
	bool		builtin;
	char		error[MC_ERR_LEN];	/* a bad profile file */
};

struct profile_set {
	struct profile	*list;
	size_t		 count;
};

void	profile_load_all(struct profile_set *, const char *dir);
void	profile_free_all(struct profile_set *);
const struct profile *profile_find(const struct profile_set *,
	    const char *name);
const struct profile *profile_next_shipped(const struct profile_set *,
	    const struct profile *after);
int	profile_parse(plist_t, const char *file, struct profile *);

#define PROFILE_DEFAULT		"apple9"
/* The highest shipped profile that passes the probe on this guest. */
#define PROFILE_AUTO		"auto"

/* --- jobfile.c -------------------------------------------------------------- */

struct job_spec {
	char		**argv;
	size_t		  argc;
	char		 *profile;		/* NULL: the default */
	bool		  unlocked;
	bool		  run_at_load;
	plist_t		  keep_alive;		/* bool or dict; NULL: true */
	bool		  inherit_shim;
	plist_t		  env;			/* dict of strings, or NULL */
	char		 *working_dir;
	char		 *stdout_path;
	char		 *stderr_path;
	uint64_t	  number_of_files;	/* soft limit; 0: the template's */
	uint64_t	  throttle_interval;	/* seconds; 0: the template's */
	plist_t		  health_check;		/* kept for the safety loop */
	plist_t		  failure_signatures;
	plist_t		  crash_loop;
	char		 *bench_program;	/* NULL: llama-bench beside it */
	bool		  measure;		/* profile auto measures */
};

struct diag {
	char	**items;
	size_t	  count;
};

void	diag_add(struct diag *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	diag_clear(struct diag *);

bool	jobfile_name_ok(const char *name);
struct job_spec *jobfile_parse(plist_t root, const char *file,
	    struct diag *errors, struct diag *warnings);
struct job_spec *jobfile_load(const char *path, struct diag *errors,
	    struct diag *warnings);
bool	jobfile_should_run(const struct job_spec *);
int	jobfile_model(const struct job_spec *, char *out, size_t len);
void	jobfile_free(struct job_spec *);

/* --- measure_judge.c ------------------------------------------------------- */

/* Below this a difference is taken for run-to-run noise. */
#define MEASURE_NOISE		0.05

struct json_t;

double		 measure_ratio(struct json_t *a, struct json_t *b,
		    double *noise);
const char	*measure_pick(struct json_t *opts, const char *const *names,
		    size_t n, char *reason, size_t len);

/* --- managed.c --------------------------------------------------------------- */

struct managed {
	bool	  present;
	bool	  force_stock;
	bool	  has_allowed;
	char	**allowed;
	size_t	  nallowed;
	char	  default_profile[MC_NAME_MAX + 1];
	char	  error[384];	/* a managed file unusable: all stock */
	plist_t	  unlock_only_where;	/* array of dicts, or NULL: none */
	bool	  local_verify_allows;
};

void		 managed_load(struct managed *, const struct paths *);
void		 managed_free(struct managed *);
const char	*managed_default_profile(const struct managed *);
const char	*managed_forbids(const struct managed *,
		    const struct profile_set *, const char *profile);

/* --- allow.c ------------------------------------------------------------------ */

/* What an unlocked run is about, in UnlockOnlyWhere's keys (allow.c). */
#define ALLOW_KEYS	7
struct allow_combo {
	const char	*value[ALLOW_KEYS];	/* "" when not known */
};
extern const char *const allow_plist_keys[ALLOW_KEYS];
extern const char *const allow_record_keys[ALLOW_KEYS];

int		 allow_parse(plist_t list, const char *file, char *why,
		    size_t len);
bool		 allow_check(const struct managed *, const struct allow_combo *,
		    struct json_t *verified, char *why, size_t len);

/* --- scan.c ------------------------------------------------------------------ */

#define SCAN_STR_(x)		#x
#define SCAN_STR(x)		SCAN_STR_(x)
#define SCAN_PATTERN_MAX	512	/* bytes of one signature */
#define SCAN_REPEAT_MAX		255	/* {m,n} */
#define SCAN_EXPAND_MAX		2000	/* copies after expanding {m,n} */
#define SCAN_SIGNATURES_MAX	32	/* per job */

struct scan;
const char	*scan_refused(const char *re);
struct scan	*scan_new(plist_t extra_signatures);
const char	*scan_line(const struct scan *, const char *line);
bool		 scan_trace(const char *line);
bool		 scan_fatal(const char *what);
/* What scan_line says of ggml_abort's line from a ggml-metal source, and
 * of dyld's halt on an inserted library. */
#define SCAN_METAL_ABORT	"ggml Metal abort"
#define SCAN_DYLD_HALT		"shim could not load"
const char	*scan_plain(const char *line, char *buf, size_t len);
const char	*scan_environment(const char *line);
void		 scan_free(struct scan *);

/* --- gate_judge.c ------------------------------------------------------------ */

/* A program's end and what it printed: launchctl's, or the probe's. */
struct launchctl_result {
	int	code;		/* exit status; -1: timed out or could not run */
	int	signal;		/* the signal that ended it, or 0 */
	char	out[65536];	/* the probe's report fits */
	char	err[1024];
};

enum gate_status { GATE_PASS, GATE_PARTIAL, GATE_FAIL };

struct gate_waiter;
struct gate_entry {
	char			 profile[MC_NAME_MAX + 1];
	uint64_t		 family, tg, ws;	/* the values probed */
	char			 stamp[264];		/* shim and probe files */
	bool			 running;
	bool			 rerun;		/* probe again when done */
	uint64_t		 runs;		/* probes started */
	bool			 done;		/* status is a valid verdict */
	long			 time;		/* when the verdict came */
	enum gate_status	 status;
	bool			 failed_last;	/* the last verdict, kept while
						   a new probe runs */
	char			 reason[512];
	struct json_t		*report;	/* the probe's JSON */
	struct gate_waiter	*waiters;
};

void	gate_judge(struct gate_entry *, bool injected,
	    const struct launchctl_result *);
const char *gate_word(const struct gate_entry *);
char	**gate_env(const char *shim, const struct profile *, bool inherit,
	    const char *report);

/* --- verified.c ---------------------------------------------------------- */

struct json_t;
struct json_t	*verified_load(const struct paths *);
int		 verified_remember(const struct paths *, struct json_t *record,
		    char *why, size_t whylen);
struct json_t	*verified_newest(struct json_t *all, const char *profile);
struct json_t	*verified_unlifted(struct json_t *all, const char *profile);
bool		 verified_holds_back(struct json_t *all, const char *profile);
void		 verified_why(struct json_t *all, const char *profile,
		    char *buf, size_t len);

/* --- marker.c ---------------------------------------------------------------- */

/* What the shim reported from a job's process (its report line). */
struct shim_seen {
	bool	present;
	char	state[16];
	char	klass[64];
	char	hooked[128];
	long	family_max;
	long	threadgroup_memory;
	char	reason[256];
	long	pid;			/* whose report it is */
	long	pgid;			/* its process group; 0: not said */
	/* The shim's witness lines: the first Metal call it saw fail. */
	int	witnessed;
	char	failed[32];		/* "pipeline", "library", ... */
	char	failed_call[64];	/* the selector */
	long	failed_code;		/* its error's code; -1: none said */
	/* Command buffers the machine failed (out of memory...): counted
	 * apart, with the first one's code. */
	int	machine_faults;
	long	machine_code;
};

/* A command buffer's error code (MTLCommandBufferError), as data. */
struct marker_code {
	long		 code;
	const char	*name;
	bool		 machine;	/* the machine's doing, never a kernel's */
};

const struct marker_code *marker_code(long code);
int	marker_weight(const char *failed);
void	marker_parse(struct shim_seen *, const char *line);
bool	marker_read(const char *dir, long pid, struct shim_seen *);
bool	marker_unwritten(const char *dir, long pid);
void	marker_forget(const char *dir, long pid);
void	marker_forget_group(const char *dir, long pgid);
void	marker_sweep(const char *dir, bool (*keep)(long pid, void *arg),
	    void *arg);
int	marker_group(const char *dir, long pgid, void (*fn)(long pid,
	    const struct shim_seen *, void *arg), void *arg);

#endif
