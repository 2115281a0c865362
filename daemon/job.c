/* SPDX-License-Identifier: MIT */
/*
 * The job table: one entry per file in the job directories, kept in step
 * with them by scans.  A scan re-reads only files whose bytes changed and
 * marks what it found (file_changed, removed); the driver acts on that.
 * The table stores jobs and calls into nothing that acts on them.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

struct job *
job_find(struct mcd *d, const char *name)
{
	size_t	i;

	for (i = 0; i < d->njobs; i++)
		if (strcmp(d->jobs[i]->name, name) == 0)
			return d->jobs[i];
	return NULL;
}

static void
job_timer_closed(uv_handle_t *h)
{
	free(h);
}

/*
 * Run cb in ms on the job's timer *t, made on first use; nothing while
 * the job is not watched (its watch ended, and job_timer_close with it).
 * The timer's data is the job.
 */
void
job_timer_start(struct job *j, uv_timer_t **t, uv_timer_cb cb, uint64_t ms)
{
	if (j->watch == NULL)
		return;
	if (*t == NULL) {
		*t = malloc(sizeof **t);
		uv_timer_init(j->daemon->loop, *t);
		(*t)->data = j;
	}
	uv_timer_start(*t, cb, ms, 0);
}

/* Nothing due on the timer, if the job has one. */
void
job_timer_stop(uv_timer_t *t)
{
	if (t != NULL)
		uv_timer_stop(t);
}

/* The timer goes (freed once libuv has closed it). */
void
job_timer_close(uv_timer_t **t)
{
	if (*t != NULL) {
		uv_close((uv_handle_t *)*t, job_timer_closed);
		*t = NULL;
	}
}

/* Free a job whose watch is stopped (watch_stop) and timer unused. */
void
job_free(struct job *j)
{
	measure_cancel(j);
	measure_memo_free(j->memo);
	ident_cancel(j);
	jobfile_free(j->spec);
	diag_clear(&j->errors);
	diag_clear(&j->warnings);
	if (j->timer != NULL)
		uv_close((uv_handle_t *)j->timer, job_timer_closed);
	free(j->file);
	free(j->shim);
	free(j);
}

/* Drop a job whose file is gone, booted out, no longer watched. */
void
job_forget(struct mcd *d, struct job *j)
{
	size_t	i;

	for (i = 0; i < d->njobs; i++)
		if (d->jobs[i] == j) {
			memmove(&d->jobs[i], &d->jobs[i + 1],
			    (d->njobs - i - 1) * sizeof *d->jobs);
			d->njobs--;
			break;
		}
	job_free(j);
}

/* Will the job's agent carry the shim, as things stand? */
bool
job_runs_unlocked(const struct job *j)
{
	return j->unlocked && j->profile != NULL &&
	    j->profile->error[0] == '\0' && j->profile->family_max != 0;
}

/*
 * What the user asked for, once overrides and managed settings are
 * applied: "stopped", "unlocked" or "stock".  Call job_effective first.
 */
const char *
job_desired(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	if (o != NULL && o->stopped)
		return "stopped";
	return job_runs_unlocked(j) ? "unlocked" : "stock";
}

/* Resolve overrides and the profile into what the job should run with. */
void
job_effective(struct mcd *d, struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);
	const char		*name = managed_default_profile(&d->managed);
	const char		*key;

	j->unlocked = j->spec ? j->spec->unlocked : false;
	if (j->spec != NULL && j->spec->profile != NULL)
		name = j->spec->profile;
	if (o != NULL && o->unlocked >= 0)
		j->unlocked = o->unlocked == 1;
	if (o != NULL && o->profile[0] != '\0')
		name = o->profile;
	/* Reverted or failed: stock until enable proves the profile again.
	 * Crashing: stock until it runs steadily (driver.c). */
	if ((o != NULL && (o->reverted.set || o->failed.set)) ||
	    j->crashing.set)
		j->unlocked = false;
	j->auto_profile = strcmp(name, PROFILE_AUTO) == 0;
	j->auto_asked = j->auto_profile && j->unlocked;
	j->profile = j->auto_profile ? measure_auto(d, j) :
	    profile_find(&d->profiles, name);
	/* The administrator's word wins over job files and requests. */
	j->stock_note[0] = '\0';
	if (j->unlocked && j->auto_profile && j->auto_stock) {
		j->unlocked = false;
		mc_fmt(j->stock_note, sizeof j->stock_note, "profile auto: "
		    "no profile ran faster than stock: running stock (%s)",
		    j->measured);
	} else if (j->unlocked && j->auto_profile && j->profile == NULL) {
		j->unlocked = false;
		mc_fmt(j->stock_note, sizeof j->stock_note, "profile auto: no "
		    "shipped profile may run on this guest (%s): running "
		    "stock", j->auto_note);
	}
	if (j->unlocked && (key = managed_forbids(&d->managed, &d->profiles,
	    name)) != NULL) {
		j->unlocked = false;
		if (d->managed.error[0] != '\0')
			mc_fmt(j->stock_note, sizeof j->stock_note,
			    "managed settings unusable (%s): running stock",
			    d->managed.error);
		else
			snprintf(j->stock_note, sizeof j->stock_note,
			    "managed setting %s: running stock", key);
	}
	ident_allow(d, j, job_runs_unlocked(j));
}

/* FNV-1a of a file's bytes; 0 when it cannot be read as a regular file. */
static uint64_t
job_file_hash(const char *path)
{
	struct stat	sb;
	uint64_t	h = MC_FNV_START;
	unsigned char	buf[8192];
	ssize_t		n;
	int		fd;

	if (lstat(path, &sb) == -1)
		return 0;
	/* Not readable as a job: hash the type so a change is noticed. */
	if (!S_ISREG(sb.st_mode))
		return (uint64_t)sb.st_mode ^ 0x9e3779b97f4a7c15ULL;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		h = mc_fnv1a(h, buf, (size_t)n);
	close(fd);
	return h ^ (uint64_t)sb.st_size;
}

static struct job *
job_add(struct mcd *d, const char *name)
{
	struct job	*j = calloc(1, sizeof *j);

	snprintf(j->name, sizeof j->name, "%s", name);
	render_label(name, j->label, sizeof j->label);
	j->daemon = d;
	j->memo = measure_memo_new();
	/* A request deferred for an older job of this name is not its. */
	j->last_request = ++d->requests;
	d->jobs = realloc(d->jobs, (d->njobs + 1) * sizeof *d->jobs);
	d->jobs[d->njobs++] = j;
	return j;
}

/* The job file's CrashLoop key, or its default. */
static uint64_t
job_crash_key(const struct job *j, const char *key, uint64_t fallback)
{
	plist_t	loop = j->spec ? j->spec->crash_loop : NULL, v;

	if (loop != NULL && (v = plist_dict_get_item(loop, key)) != NULL)
		plist_get_uint_val(v, &fallback);
	return fallback;
}

/* The exits that make a crash loop: the job file's, or 3. */
uint64_t
job_crash_max(const struct job *j)
{
	return job_crash_key(j, "MaxExits", 3);
}

/*
 * The window they must come within: the job file's, or 60 s, widened to
 * what launchd's throttle lets that many exits take (a template's
 * ThrottleInterval of 30 would never let 3 come within 60 s).
 */
uint64_t
job_crash_window_s(const struct job *j)
{
	uint64_t	least = job_crash_max(j) * (j->throttle_s + 1);

	return job_crash_key(j, "WindowSeconds", least > 60 ? least : 60);
}

/*
 * launchd starts a job again ThrottleInterval seconds (the job file's,
 * the template's, or launchd's 10) after its exit, less the whole seconds
 * it ran (842 core.c job_start, 4396-4406: td truncated, the timer armed
 * from the exit), so the exits of a job that dies within its first second
 * come up to ThrottleInterval + 1 apart, and MaxExits of them take up to
 * (MaxExits - 1) such spans: a CrashLoop window no longer than that may
 * never trip, and the job would crash for ever, shown stock.  Such a file
 * is refused, naming the keys.
 */
static void
job_check_throttle(struct mcd *d, struct job *j)
{
	plist_t		v;
	uint64_t	t = 10, max, window;
	const char	*from = "launchd's default";

	if (d->job_template != NULL && (v = plist_dict_get_item(
	    d->job_template, "ThrottleInterval")) != NULL &&
	    plist_get_node_type(v) == PLIST_UINT) {
		plist_get_uint_val(v, &t);
		from = "the agent template's";
		t = t > 86400 ? 86400 : t;	/* no product overflows */
	}
	if (j->spec != NULL && j->spec->throttle_interval != 0) {
		t = j->spec->throttle_interval;
		from = "its own";
	}
	j->throttle_s = t;
	if (j->spec == NULL || j->spec->crash_loop == NULL)
		return;
	max = job_crash_max(j);
	window = job_crash_window_s(j);
	if (max < 2 || window > (max - 1) * (t + 1))
		return;
	diag_add(&j->errors, "%s:CrashLoop: MaxExits %llu within WindowSeconds "
	    "%llu may never trip: launchd starts it again ThrottleInterval "
	    "(%llu s, %s) after an exit, less the whole seconds it ran: %llu "
	    "exits take up to %llu s; make WindowSeconds more than that",
	    j->file,
	    (unsigned long long)max, (unsigned long long)window,
	    (unsigned long long)t, from, (unsigned long long)max,
	    (unsigned long long)((max - 1) * (t + 1)));
	jobfile_free(j->spec);
	j->spec = NULL;
}

/* (Re)read one job file when its bytes changed. */
static void
job_refresh_file(struct mcd *d, const char *dir, const char *entry)
{
	char		 path[PATH_MAX], name[MC_NAME_MAX + 8];
	size_t		 n = strlen(entry);
	struct job	*j;
	uint64_t	 hash;

	/*
	 * A name that is no job name is not cut down to one: cut, it could
	 * be another job's name and take that job over.
	 */
	if (n - 6 > MC_NAME_MAX || mc_fmt(name, sizeof name, "%.*s",
	    (int)(n - 6), entry) == -1 || !jobfile_name_ok(name)) {
		log_warnx("%s/%s: ignored: a job's name must be 1-64 of A-Z "
		    "a-z 0-9 . _ -", dir, entry);
		return;
	}
	snprintf(path, sizeof path, "%s/%s", dir, entry);
	if ((j = job_find(d, name)) == NULL)
		j = job_add(d, name);
	/* The administrator's folder is read first, and its job wins. */
	if (j->seen && j->file != NULL && strcmp(j->file, path) != 0) {
		log_warnx("%s: ignored: %s defines job %s already", path,
		    j->file, name);
		return;
	}
	j->seen = true;
	j->removed = false;
	hash = job_file_hash(path);
	if (hash == j->file_hash && j->file != NULL && strcmp(j->file, path) == 0)
		return;
	j->file_hash = hash;
	j->file_changed = true;
	free(j->file);
	j->file = strdup(path);
	measure_memo_forget(j->memo);
	jobfile_free(j->spec);
	j->spec = NULL;
	diag_clear(&j->errors);
	diag_clear(&j->warnings);
	j->spec = jobfile_load(path, &j->errors, &j->warnings);
	job_check_throttle(d, j);
	for (n = 0; n < j->warnings.count; n++)
		log_warnx("%s", j->warnings.items[n]);
	for (n = 0; n < j->errors.count; n++)
		log_warnx("%s", j->errors.items[n]);
}

/*
 * Read one job folder.  A folder that is gone takes its jobs with it; one
 * that cannot be read (permissions, I/O) leaves its jobs as they are:
 * nothing a user did says they should stop.
 */
static bool
job_scan_dir(struct mcd *d, const char *dir)
{
	DIR		*dp;
	struct dirent	*de;
	size_t		 n, i, len = strlen(dir);

	if (dir[0] == '\0')
		return true;
	if ((dp = opendir(dir)) == NULL) {
		if (errno == ENOENT)
			return true;
		log_warnx("cannot read %s: %s; its jobs are left as they are",
		    dir, strerror(errno));
		for (i = 0; i < d->njobs; i++)
			if (d->jobs[i]->file != NULL &&
			    strncmp(d->jobs[i]->file, dir, len) == 0 &&
			    d->jobs[i]->file[len] == '/')
				d->jobs[i]->seen = true;
		return false;
	}
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n <= 6 ||
		    strcmp(de->d_name + n - 6, ".plist") != 0)
			continue;
		job_refresh_file(d, dir, de->d_name);
	}
	closedir(dp);
	return true;
}

/*
 * Labels launchd was given, in dir (state/loaded: loaded is true; the
 * agents folder: false), for jobs that have no file: removed while
 * metalcapd was down.  Each becomes a removed job, so the usual removal
 * boots it out and deletes its agent and record.
 */
static void
job_scan_given(struct mcd *d, const char *dir, const char *suffix,
    bool loaded)
{
	const size_t	 plen = strlen(MC_LABEL_PREFIX), slen = strlen(suffix);
	char		 name[MC_NAME_MAX + 8];
	struct job	*j;
	struct dirent	*de;
	DIR		*dp;
	size_t		 n;

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n <= plen + slen || strncmp(de->d_name, MC_LABEL_PREFIX,
		    plen) != 0 || strcmp(de->d_name + n - slen, suffix) != 0 ||
		    mc_fmt(name, sizeof name, "%.*s", (int)(n - plen - slen),
		    de->d_name + plen) == -1 || !jobfile_name_ok(name))
			continue;
		if ((j = job_find(d, name)) == NULL) {
			j = job_add(d, name);
			log_info("job %s: its file is gone, but launchd was "
			    "given it: it goes", name);
		}
		if (!j->seen && loaded)
			j->loaded = true;
	}
	closedir(dp);
}

/*
 * Read the job folders into the table: each job is marked removed (its
 * file is gone) or file_changed (read anew); the first time, also the
 * jobs launchd was given whose file went while the daemon was down.  The profile table may have
 * been rebuilt: call after profile_load_all.
 */
void
job_scan(struct mcd *d, bool first)
{
	size_t	i;
	bool	read;

	/* No job may point into the old profile table. */
	for (i = 0; i < d->njobs; i++) {
		job_effective(d, d->jobs[i]);
		d->jobs[i]->seen = false;
		d->jobs[i]->file_changed = false;
	}
	read = job_scan_dir(d, d->paths.managed_jobs);
	read = job_scan_dir(d, d->paths.jobs) && read;
	/*
	 * At the daemon's own start (later, it knows what it gave), and only
	 * when every job folder could be read: a folder it cannot read says
	 * nothing of which jobs are gone.
	 */
	if (first && read) {
		char	loaded[PATH_MAX];

		mc_fmt(loaded, sizeof loaded, "%s/loaded", d->paths.state);
		job_scan_given(d, loaded, "", true);
		job_scan_given(d, d->paths.agents, ".plist", false);
	}
	for (i = 0; i < d->njobs; i++)
		if (!d->jobs[i]->seen)
			d->jobs[i]->removed = true;
}

/*
 * What start or restart does for the job as it stands, as launchctl
 * kickstart and kickstart -k would (the reply's "action"): a job launchd
 * runs nothing for is started, whatever kept it down.
 */
const char *
job_start_action(const struct job *j, const struct override *o,
    bool restart)
{
	/* Invalid: its last good agent, if any, is what runs. */
	if (j->spec == NULL && restart && j->pid > 0)
		return "restarting its last good agent: its job file is invalid";
	if (j->spec == NULL && o != NULL && (o->stopped || o->failed.set))
		return "to start once its job file is valid again";
	if (j->spec == NULL)
		return "nothing: its job file is invalid";
	if (o != NULL && o->failed.set)
		return "started again: its failure is cleared";
	if (o != NULL && o->stopped)
		return "started: it was stopped";
	if (j->pid > 0)
		return restart ? "restarting: SIGTERM, then kickstart -k "
		    "after its ExitTimeOut" : "nothing: it is running";
	return "kickstarted: launchd runs nothing for it";
}

/* The profile a job would run with (override, job file, default). */
const char *
job_profile_wanted(struct mcd *d, const struct job *j)
{
	const struct override	*o = state_get(&d->state, j->name, false);

	if (o != NULL && o->profile[0] != '\0')
		return o->profile;
	if (j->spec != NULL && j->spec->profile != NULL)
		return j->spec->profile;
	return managed_default_profile(&d->managed);
}
