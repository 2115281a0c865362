/* SPDX-License-Identifier: MIT */
/*
 * metalcapd's private header: the daemon's runtime (the loop, jobs,
 * launchd, the socket) and, grouped by file, the functions each file
 * offers the others.  The policy it applies is policy/policy.h's, shared
 * with metalcapctl; no product file outside daemon/ includes this (tests of the daemon do).
 */
#ifndef MCD_H
#define MCD_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>
#include <plist/plist.h>
#include <uv.h>

#include "health.h"
#include "mc_rpc.h"
#include "policy.h"
#include "crashing.h"
#include "lifecycle.h"

struct mcd;
struct job;

/* --- fleet.c ------------------------------------------------------------------ */

void	fleet_init(struct mcd *);
void	fleet_observe(struct mcd *, const struct job *, const char *what);

/* --- tail.c ------------------------------------------------------------------ */

#define TAIL_LINE_MAX	4096
#define TAIL_BUDGET	(64 * 1024)	/* bytes read per turn of the loop */

struct tail {
	char	*path;		/* NULL: stopped */
	int	 fd;
	dev_t	 dev;
	ino_t	 ino;
	off_t	 offset;
	char	*line;		/* the partial line, grown as needed */
	size_t	 len;
	size_t	 cap;
	bool	 dropping;	/* inside an over-long line */
};
typedef void (*tail_line_fn)(void *arg, const char *line);

void	tail_start(struct tail *, const char *path);
bool	tail_read(struct tail *, tail_line_fn, void *arg);
void	tail_stop(struct tail *);

/* --- gate.c ------------------------------------------------------------------ */

typedef void (*gate_done_fn)(struct mcd *, const struct gate_entry *,
    void *arg);

void	gate_run(struct mcd *, const struct profile *);
const struct gate_entry *gate_verdict(struct mcd *, const struct profile *);
const struct gate_entry *gate_peek(struct mcd *, const struct profile *);
void	gate_auto_wait(struct mcd *, bool);
bool	gate_failed_last(struct mcd *, const struct profile *);
void	gate_invalidate(struct mcd *, const char *profile);
void	gate_probe_afresh(struct mcd *, const char *profile);
void	gate_verified(struct mcd *);
void	gate_wait(struct mcd *, const struct profile *, gate_done_fn,
	    void *arg);

/* --- measure.c ------------------------------------------------------------- */

/* Stock and at most this many profiles less one. */
#define MEASURE_OPTIONS_MAX	8

struct measure;
struct measure_memo;
typedef void (*measure_done_fn)(struct mcd *, struct job *);

struct json_t	*measure_load(const struct paths *);
bool		 measure_due(struct mcd *, struct job *);
bool		 measure_due_why(struct mcd *, const struct job *, bool fresh,
		    char *buf, size_t len);
struct measure_memo *measure_memo_new(void);
void		 measure_memo_forget(struct measure_memo *);
void		 measure_memo_free(struct measure_memo *);
void		 measure_run(struct mcd *, struct job *, measure_done_fn);
void		 measure_cancel(struct job *);
void		 measure_forget(struct mcd *, const struct job *);
size_t		 measure_candidates(struct mcd *, const struct profile **out,
		    size_t max, char *note, size_t len);
const struct profile *measure_auto(struct mcd *, struct job *);
/* Between measure.c and measure_run.c. */
int		 measure_inputs(const struct job *, char *bench, char *model,
		    size_t len, char *why, size_t whylen);
char		**measure_job_env(const struct job_spec *);
struct json_t	*measure_key(struct mcd *, const struct job *, char *why,
		    size_t whylen);
void		 measure_save(struct mcd *);
void		 measure_settings(const struct job_spec *, char *buf,
		    size_t len);
char		**measure_env(struct mcd *, const struct job_spec *,
		    const struct profile *);

/* --- ident.c ---------------------------------------------------------------- */

bool	ident_pending(struct mcd *, const struct job *);
void	ident_start(struct mcd *, struct job *);
typedef void (*ident_read_fn)(struct job *);
bool	ident_read(struct mcd *, struct job *, ident_read_fn then);
void	ident_cancel(struct job *);
void	ident_allow(struct mcd *, struct job *, bool unlocking);
bool	ident_allows(struct mcd *, const struct job *, const struct profile *);

/* --- render.c --------------------------------------------------------------- */

struct render_input {
	const char		*name;
	const struct job_spec	*spec;
	const struct profile	*profile;	/* NULL: stock */
	const struct paths	*paths;
};

plist_t	render_agent(plist_t template_dict, const struct render_input *);
char	*render_xml(plist_t agent, size_t *len);
void	render_label(const char *name, char *buf, size_t len);
bool	render_allows_session(plist_t template_dict, const char *session);

/* --- state.c ---------------------------------------------------------------- */

#define EVIDENCE_MAX	4

/* Why a job went back to stock (reverted) or was given up (failed). */
struct incident {
	bool	set;
	long	time;
	char	trigger[64];
	char	evidence[EVIDENCE_MAX][256];
	int	nevidence;
};

struct override {
	char		name[MC_NAME_MAX + 1];
	int		unlocked;	/* -1: not set, 0, 1 */
	char		profile[MC_NAME_MAX + 1];	/* "": not set */
	bool		stopped;
	struct incident	reverted;
	struct incident	failed;
	long		revert_count;	/* reverts that blamed the profile */
	long		withdrawn_count; /* reverts withdrawn: not the profile */
};

struct state {
	char		 path[PATH_MAX];
	struct override	*list;
	size_t		 count;
};

int	state_load(struct state *, const char *dir, char *note, size_t len);
int	state_save(const struct state *, char *why, size_t whylen);
struct override *state_get(struct state *, const char *name, bool create);
void	state_drop(struct state *, const char *name);
void	state_free(struct state *);

/* --- launchd.c -------------------------------------------------------------- */

typedef void (*launchctl_cb)(struct mcd *, const struct launchctl_result *,
    void *arg);

void	proc_run(struct mcd *, char *const *argv, char *const *env,
	    int timeout_ms, launchctl_cb, void *arg);
void	launchctl_run(struct mcd *, const char *const *args, launchctl_cb,
	    void *arg);
void	proc_stop_all(struct mcd *);
struct launchd_seen {
	long	pid;		/* 0: not running */
	long	runs;
	bool	runs_known;	/* print had a "runs" line */
	int	signal;		/* last terminating signal, 0: none */
	char	last_exit[64];	/* "" when the last run ended otherwise */
	char	exit_reason[64];	/* "last exit reason": JETSAM_..., "" */
	char	state[32];
};
bool	launchctl_parse_print(const char *out, struct launchd_seen *);

/* --- job.c / reconcile.c ------------------------------------------------------ */

struct job;
typedef void (*job_step_fn)(struct mcd *, struct job *);

/*
 * ggml_abort's line from a ggml-metal source, and the failure line ggml
 * logged right before it (its cause, "": none), while nothing but the
 * abort's trace has followed (witness.c).
 */
struct witness_abort {
	char		 line[256];
	const char	*what;		/* SCAN_METAL_ABORT, SCAN_DYLD_HALT */
	char		 cause[256];
	const char	*cause_what;
};

struct job {
	char			 name[MC_NAME_MAX + 8];
	char			 label[MC_NAME_MAX + 32];
	char			*file;		/* its path, NULL before the first read */
	uint64_t		 file_hash;
	struct job_spec		*spec;		/* NULL when invalid */
	struct diag		 errors;
	struct diag		 warnings;
	enum job_state		 state;
	char			 reason[256];	/* cut; incidents keep all */
	const struct profile	*profile;	/* effective; NULL: stock */
	bool			 unlocked;	/* effective */
	long			 pid;
	char			 last_exit[64];
	char			 launchd_state[32];
	char			 held[256];	/* launchd does not run it: why */
	bool			 seen;		/* in the last rescan */
	bool			 removed;	/* file gone: tear down */
	bool			 file_changed;	/* read anew by the last scan */
	/* reconcile machinery */
	bool			 busy;
	bool			 dirty;
	job_step_fn		 next_step;	/* what the timer runs */
	int			 retries;
	int			 failures;	/* launchctl errors in a row */
	uint64_t		 rendered_hash;	/* of the agent last rendered */
	bool			 retry_pending;	/* busy only with a back-off */
	bool			 loaded;	/* known to be registered */
	bool			 changed;	/* agent file rewritten */
	bool			 out_for_good;	/* this bootout loads nothing */
	uint64_t		 last_request;	/* d->requests at the last one */
	long			 report_pid;	/* its shim report, to delete */
	uv_timer_t		*timer;
	struct mcd		*daemon;
	/* the safety loop (watch.c) */
	bool			 probing;	/* waiting for the gate */
	/* why it runs stock though set unlocked: the administrator, or
	 * Profile auto finding no profile that passes */
	char			 stock_note[256];
	bool			 auto_profile;	/* Profile auto: j->profile chosen */
	char			 auto_note[256];	/* why higher ones were not */
	bool			 auto_asked;	/* auto, asked to unlock */
	bool			 auto_stock;	/* auto measured stock fastest */
	char			 measured[640];	/* auto's figures, in words */
	char			 measure_due[320];	/* or why none are */
	bool			 measuring;
	struct measure		*measure;	/* the one running */
	struct measure_memo	*memo;		/* status's recent key */
	/* what an allowlist judges it by (ident.c) */
	char			 ident_stamp[65];	/* program, model: SHA-256 */
	char			 llama_build[96];	/* "" not known */
	char			 model_sha256[65];
	bool			 ident_known;
	bool			 ident_wait;	/* unlocking waits for it */
	struct ident_work	*ident;		/* the one running */
	bool			 drop_tg;	/* partial verdict */
	char			 note[256];	/* a partial verdict's reason */
	bool			 blocked;	/* no shim marker */
	/* launchd's runs of this registration, as last judged; kept in
	 * state/loaded/LABEL, so a restarted metalcapd judges only the
	 * exits it did not (agent.c) */
	long			 runs_counted;	/* runs whose exit we judged; -1:
						   not known, the next look's
						   are the baseline */
	long			 own_stops;	/* exits our kickstart -k caused */
	long			 looked_at;	/* when counted (time()) */
	bool			 counts_read;	/* from state/loaded, once */
	bool			 kicked;	/* kickstarted: a run is coming */
	bool			 kick_again;	/* a restart asked for meanwhile */
	bool			 start_wanted;	/* start asked: run it if launchd
						   does not */
	/* its environment, named by launchd or the kernel, or its log */
	struct env_named	 env, said;
	struct crashing		 crashing;
	long			 stopped_pid;	/* the last pid our kickstart killed */
	uint64_t		 gone_by;	/* loop ms a bootout must be done by */
	char			 domain[32];	/* where it is loaded; "": not yet */
	long			 watched_pid;
	long			 ran_pid;	/* seen running its program, its
						   end not counted yet */
	bool			 reports_full;	/* their disk, at its start */
	long			 fleet_pid;	/* pid in the status file */
	struct job_watch	*watch;
	struct tail		*tail;
	struct scan		*scan;
	long			 exits[16];	/* abnormal exit times */
	int			 nexits;
	struct shim_seen	*shim;		/* its report; NULL: none yet */
	/* ggml's abort, while it is the last the process said (witness.c) */
	struct witness_abort	 abort;
	struct witness_abort	 died;		/* as it stood at the end */
	bool			 died_seen;	/* died is the ended one's */
	char			 recent[256];	/* the last failure line */
	const char		*recent_what;
	long			 recent_seq;	/* its number in lines */
	long			 recent_last;	/* the last failure line's */
	long			 lines;		/* lines read but ggml's trace */
	/* a failure line nothing the process did backs yet (witness.c) */
	char			 unconfirmed[256];
	const char		*unconfirmed_what;
	uint64_t		 unconfirmed_ms;	/* loop time it was held */
	bool			 witness_acted;	/* this pid's witness counted */
	/* Its process group's other reports (InheritShim): the first
	 * hooked child, or the first one that witnessed a failure. */
	struct shim_seen	 group_seen;
	bool			 machine_told;	/* a GPU fault of the machine's */
	/* A pipeline witness, judged by how its process ends (witness.c);
	 * kept until launchd tells that. */
	struct shim_seen	 fate;
	bool			 witness_told;	/* its wait was logged */
	uv_timer_t		*witness_timer;	/* a witness waits for its line */
	/* its health check (health.c), for the process being watched */
	uint64_t		 health_start;	/* loop ms the process came */
	bool			 health_passed;	/* it has passed once */
	bool			 health_blind;	/* it fails stock too */
	bool			 health_told;	/* its failure was counted */
	/* in a row: failed, passed, restarted for failing */
	int			 health_failures, health_passes, health_lapses;
	struct health_answer	 health_last;	/* its last answer */
	uint64_t		 throttle_s;	/* launchd's ThrottleInterval */
	uv_timer_t		*health_timer;	/* its next check */
};

typedef void (*mcd_emit_fn)(struct mcd *, const struct mcd_event *);

/* Job changed: "state", "revert", "failed", "removed"; NULL: facts only. */
typedef void (*mcd_observer_fn)(struct mcd *, const struct job *,
    const char *what);
#define MCD_OBSERVERS_MAX	4

/* --- job.c: the job table --------------------------------------------------- */

const char *job_state_name(enum job_state);
struct job *job_find(struct mcd *, const char *name);
void	job_scan(struct mcd *, bool first);
void	job_free(struct job *);
void	job_forget(struct mcd *, struct job *);
void	job_effective(struct mcd *, struct job *);
bool	job_runs_unlocked(const struct job *);
const char *job_desired(struct mcd *, const struct job *);
const char *job_start_action(const struct job *, const struct override *,
	    bool);
const char *job_profile_wanted(struct mcd *, const struct job *);
uint64_t job_crash_max(const struct job *);
uint64_t job_crash_window_s(const struct job *);
void	job_timer_start(struct job *, uv_timer_t **, uv_timer_cb, uint64_t ms);
void	job_timer_stop(uv_timer_t *);
void	job_timer_close(uv_timer_t **);

/* --- driver.c: events in, actions out ------------------------------------------- */

void	driver_emit(struct mcd *, const struct mcd_event *);
int	driver_request(struct mcd *, struct job *, enum lifecycle_event,
	    char *why, size_t whylen);
void	driver_rescan(struct mcd *);
enum job_state driver_next_state(struct mcd *, const struct job *);

/* --- agent.c: a job's agent, its file and its place in launchd ------------------ */

const char *agent_domain(struct mcd *, struct job *);
void	agent_path(struct mcd *, struct job *, char *buf, size_t len);
void	agent_launchctl(struct mcd *, struct job *, const char *verb,
	    launchctl_cb);
uint64_t agent_loaded_hash(struct mcd *, struct job *);
void	agent_mark_loaded(struct mcd *, struct job *);
void	agent_read_counts(struct mcd *, struct job *);
void	agent_save_counts(struct mcd *, struct job *);
bool	agent_ok(const char *path);
int	agent_render(struct mcd *, struct job *, char *why, size_t whylen);
void	agent_forget(struct mcd *, struct job *);
uint64_t agent_exit_timeout_s(struct mcd *, struct job *);

/* --- exited.c: the runs launchd saw end ----------------------------------------- */

void	exited_report(struct mcd *, struct job *, const struct launchd_seen *,
	    long count, long since);
void	exited_baseline(struct mcd *, struct job *, long finished);

/* --- reconcile.c: launchd made to match ------------------------------------------ */

void	reconcile(struct mcd *, struct job *);
void	reconcile_after(struct mcd *, struct job *, uint64_t ms);
void	reconcile_prefer_gui(struct mcd *);

/* --- watch.c ------------------------------------------------------------------ */

#define WATCH_EVIDENCE_LEN	256

struct job_watch;
void	watch_begin_tail(struct mcd *, struct job *);
int	watch_started(struct mcd *, struct job *);
void	watch_stop(struct job *);
int	watch_count_exits(struct job *, const struct mcd_event *,
	    char evidence[2][WATCH_EVIDENCE_LEN]);


bool	watch_spawn_fixed(struct mcd *, const struct job *,
	    const char *cause);
void	watch_spawn_cause(struct mcd *, const struct job *, char *buf,
	    size_t len);
void	watch_unwatch_pid(struct job *);
void	watch_exited(struct job *, bool abnormal, int sig, const char *how);
void	watch_reports_changed(struct mcd *);
bool	watch_disk_full(struct mcd *, const struct job *, bool, char *,
	    size_t);

/* --- withdraw.c -------------------------------------------------------------- */

bool	withdraw_revert(struct job *, struct override *, const char *by);
bool	withdraw_health(struct mcd *, struct job *);

/* --- server.c / rpc.c --------------------------------------------------------- */

struct conn {
	uv_pipe_t		 pipe;
	uv_timer_t		 timer;		/* the client timeout */
	int			 handles;	/* not yet closed */
	uint64_t		 last_active;	/* d->io_serial at the last I/O */
	struct mcd		*daemon;
	struct mc_rpc_decoder	 decoder;
	int			 pending_writes;
	size_t			 queued;	/* bytes its queued writes hold */
	bool			 reading;
	bool			 subscribed;
	char			 call[65];	/* events as this call */
	bool			 closing;
	bool			 closed;	/* uv_close has completed */
	int			 refs;		/* replies still to come */
	struct conn		*next;
};

/* 0 serving; 1 another metalcapd serves this user; -1 an error. */
int	server_start(struct mcd *, char *why, size_t whylen);
void	server_stop(struct mcd *);
void	server_send(struct conn *, msgpack_sbuffer *);
void	conn_ref(struct conn *);
void	conn_unref(struct conn *);
void	server_broadcast(struct mcd *, msgpack_sbuffer *);
void	rpc_dispatch(struct conn *, const struct mc_rpc_message *);
void	rpc_observe(struct mcd *, const struct job *, const char *what);

/* --- rpc_pack.c ---------------------------------------------------------------- */

void	rpc_pack_kv(msgpack_packer *, const char *key, const char *value);
void	rpc_pack_job(msgpack_packer *, const struct job *,
	    const char *);
void	rpc_pack_json(msgpack_packer *, struct json_t *);
void	rpc_pack_profiles(msgpack_packer *, const struct profile_set *);
void	rpc_pack_managed(msgpack_packer *, const struct managed *);
void	rpc_event_change(struct mcd *, const struct job *, const char *type,
	    const char *request);

/* --- metalcapd.c -------------------------------------------------------------- */

/* A folder watched, or, while it is missing, its nearest ancestor. */
struct dirwatch_slot {
	uv_fs_event_t	 handle;	/* first: the callback finds the slot */
	char		 want[PATH_MAX];/* the folder waited for */
	char		 at[PATH_MAX];	/* it or its nearest ancestor; "": none */
	int		 fd;		/* at, held (its inode stays its own) */
};

struct mcd {
	uv_loop_t		*loop;
	/* Turns of the loop, from a prepare handle (metalcapd.c); 0: not
	 * counted, and nothing read is kept for the rest of a turn. */
	uv_prepare_t		 turn_tick;
	uint64_t		 turn;
	struct paths		 paths;
	struct profile_set	 profiles;
	struct state		 state;
	plist_t			 job_template;
	struct job		**jobs;
	size_t			 njobs;
	uint64_t		 requests;	/* taken since start */
	char			 domain[32];	/* gui/<uid> or user/<uid> */
	bool			 background_ok;	/* the template: user/UID */
	bool			 aqua_ok;	/* ... and gui/UID */
	uv_pipe_t		 server;
	struct conn		*conns;
	size_t			 nconns;
	uint64_t		 io_serial;	/* orders the clients' I/O */
	size_t			 conns_freed;	/* since memory was last released */
	uv_fs_event_t		 watch_jobs;
	uv_fs_event_t		 watch_profiles;
	uv_timer_t		 rescan_timer;
	uv_signal_t		 sigterm, sigint;
	int			 launchctl_timeout_ms;
	int			 probe_timeout_ms;
	int			 client_timeout_ms;
	int			 marker_timeout_ms;
	struct gate_entry	**gates;
	size_t			 ngates;
	struct managed		 managed;
	uv_timer_t		 fleet_timer;
	char			 instance_id[33];
	char			 guest_id[33];	/* "": machine unknown */
	uv_fs_event_t		 watch_reports;
	uv_fs_event_t		 watch_state;	/* for verified.json */
	struct json_t		*verified;	/* verify's verdicts here */
	struct json_t		*measured;	/* profile auto's figures */
	/* The machine's job folder, the computer's and this user's managed
	 * preferences: each watched where it is, or where it will appear. */
	struct dirwatch_slot	 watch_more[3];
	struct dirwatch_slot	 watch_links[3];	/* those that are links */
	struct dirwatch_slot	 watch_jobs_up;	/* while jobs.d is gone */
	bool			 dirwatch_ready;
	int			 jobs_fd;	/* the watched jobs.d, held */
	bool			 state_unsaved;	/* memory ahead of the file */
	int			 lock_fd;	/* state/metalcapd.lock, held */
	uv_signal_t		 sighup, sigusr1, sigusr2;
	bool			 scanned;	/* the first rescan is done */
	/* Machine jobs wait while another user has the console. */
	uv_timer_t		 console_timer;
	uv_timer_t		 respawn_timer;
	uv_timer_t		 auto_timer;	/* auto's shipped probed again */
	uint64_t		 auto_retry_ms;	/* 0: the timer not made yet */
	bool			 console_held;
	uid_t			 console_owner;
	int			 console_ours_polls;
	/* The seams: sources hand events up, observers hear of changes. */
	mcd_emit_fn		 emit;
	mcd_observer_fn		 observers[MCD_OBSERVERS_MAX];
	size_t			 nobservers;
	void			(*dispatch)(struct conn *,
				    const struct mc_rpc_message *);
};

/* --- seams.c ------------------------------------------------------------------ */

void	seams_connect(struct mcd *);

/* --- respawn.c --------------------------------------------------------------- */

/* The trigger of a failure launchd's spawn gave (78: EX_CONFIG). */
#define RESPAWN_TRIGGER		"cannot spawn"
void	respawn_start(struct mcd *);

/* --- held.c ------------------------------------------------------------------ */

bool		held_update(struct mcd *, struct job *,
		    const struct launchd_seen *, bool wanted, bool looked_long);
void		held_clear(struct mcd *, struct job *);
uint64_t	held_poll_ms(int n);

/* --- restart.c --------------------------------------------------------------- */

typedef void (*restart_done_fn)(struct mcd *, struct job *);
void	restart_graceful(struct mcd *, struct job *, const char *target,
	    restart_done_fn);

/* --- console.c --------------------------------------------------------------- */

void	console_start(struct mcd *);
bool	console_holds(const struct mcd *, const struct job *);
const char *console_reason(const struct mcd *, char *, size_t);

/* --- dirwatch.c -------------------------------------------------------------- */

void	dirwatch_start(struct mcd *);
void	dirwatch_rearm(struct mcd *);

#endif
