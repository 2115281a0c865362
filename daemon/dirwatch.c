/* SPDX-License-Identifier: MIT */
/*
 * The folders metalcapd watches: the job and profile folders and the
 * managed preferences (any change: rescan, once things settle), and the
 * shim's report folder.  A job folder deleted and made again is a new
 * folder: while it is missing its parent is watched, and the watch moves
 * back to the folder the rescan after it reappears.  Nothing here wakes
 * the daemon while nothing changes.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <string.h>

#include "mc_util.h"
#include "mcd.h"

#define RESCAN_DEBOUNCE_MS	10

static void
dirwatch_rescan_cb(uv_timer_t *t)
{
	job_rescan(t->data);
}

/* Directory events are only hints: rescan once things settle. */
static void
dirwatch_cb(uv_fs_event_t *h, const char *file, int events, int status)
{
	struct mcd	*d = h->data;

	(void)file;
	(void)events;
	(void)status;
	uv_timer_start(&d->rescan_timer, dirwatch_rescan_cb,
	    RESCAN_DEBOUNCE_MS, 0);
}

static void
dirwatch_reports_cb(uv_fs_event_t *h, const char *file, int events,
    int status)
{
	(void)file;
	(void)events;
	(void)status;
	watch_reports_changed(h->data);
}

static int
dirwatch_watch(uv_fs_event_t *h, const char *dir, uv_fs_event_cb cb,
    bool quiet)
{
	int	rc;

	if ((rc = uv_fs_event_start(h, cb, dir, 0)) != 0 && !quiet)
		log_warnx("cannot watch %s: %s (changes are seen on reload)",
		    dir, uv_strerror(rc));
	return rc;
}

static void
dirwatch_init(struct mcd *d, uv_fs_event_t *h)
{
	uv_fs_event_init(d->loop, h);
	h->data = d;
}

/* The folder that holds path (a file or a folder). */
static void
dirwatch_parent(const char *path, char *buf, size_t len)
{
	char	*slash;

	snprintf(buf, len, "%s", path);
	if ((slash = strrchr(buf, '/')) != NULL && slash != buf)
		*slash = '\0';
}

void
dirwatch_start(struct mcd *d)
{
	const char	*managed[] = { d->paths.managed, d->paths.managed_user };
	char		 dir[PATH_MAX];
	struct stat	 sb;
	size_t		 i;

	uv_timer_init(d->loop, &d->rescan_timer);
	d->rescan_timer.data = d;
	dirwatch_init(d, &d->watch_jobs);
	dirwatch_init(d, &d->watch_jobs_parent);
	dirwatch_init(d, &d->watch_profiles);
	dirwatch_init(d, &d->watch_reports);
	dirwatch_watch(&d->watch_profiles, d->paths.profiles, dirwatch_cb,
	    false);
	/* An MDM writes managed preferences at any time. */
	for (i = 0; i < 2; i++) {
		dirwatch_init(d, &d->watch_managed[i]);
		dirwatch_parent(managed[i], dir, sizeof dir);
		if (managed[i][0] != '\0' && stat(dir, &sb) == 0 &&
		    S_ISDIR(sb.st_mode))
			dirwatch_watch(&d->watch_managed[i], dir, dirwatch_cb,
			    false);
	}
	mc_fmt(dir, sizeof dir, "%s/reports", d->paths.state);
	dirwatch_watch(&d->watch_reports, dir, dirwatch_reports_cb, false);
	d->dirwatch_ready = true;
	dirwatch_rearm(d);
}

/* After a rescan: watch the job folder there is now, or wait for one. */
void
dirwatch_rearm(struct mcd *d)
{
	struct stat	 sb;
	char		 parent[PATH_MAX];
	uv_fs_event_t	*jobs = &d->watch_jobs, *up = &d->watch_jobs_parent;

	if (!d->dirwatch_ready)
		return;
	if (stat(d->paths.jobs, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (uv_is_active((uv_handle_t *)up))
			uv_fs_event_stop(up);
		if (uv_is_active((uv_handle_t *)jobs) &&
		    sb.st_ino == d->jobs_ino && sb.st_dev == d->jobs_dev)
			return;
		if (uv_is_active((uv_handle_t *)jobs))
			uv_fs_event_stop(jobs);
		if (dirwatch_watch(jobs, d->paths.jobs, dirwatch_cb,
		    false) == 0) {
			d->jobs_ino = sb.st_ino;
			d->jobs_dev = sb.st_dev;
		}
		/* Files may have come before the watch: look once more. */
		dirwatch_cb(jobs, NULL, 0, 0);
		return;
	}
	if (uv_is_active((uv_handle_t *)jobs)) {
		uv_fs_event_stop(jobs);
		log_warnx("%s is gone: waiting for it to come back",
		    d->paths.jobs);
		/* The rescan that saw it go may have read it half deleted. */
		dirwatch_cb(jobs, NULL, 0, 0);
	}
	dirwatch_parent(d->paths.jobs, parent, sizeof parent);
	if (!uv_is_active((uv_handle_t *)up))
		dirwatch_watch(up, parent, dirwatch_cb, false);
}
