/* SPDX-License-Identifier: MIT */
/*
 * The folders metalcapd watches: the job and profile folders and the
 * managed preferences (any change: rescan, once things settle), and the
 * shim's report folder.  A job folder deleted and made again is a new
 * folder: while it is missing its parent is watched, and the watch moves
 * back to the folder the rescan after it reappears.  The watched folder
 * is held open, so a folder made in its place cannot be given its inode
 * number (ext4 does so at once) and pass for the old one.  Nothing here
 * wakes the daemon while nothing changes.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mc_util.h"
#include "mcd.h"

#define RESCAN_DEBOUNCE_MS	10

static void
dirwatch_emit(struct mcd *d, enum lifecycle_event type)
{
	struct mcd_event	ev = { .type = type };

	d->emit(d, &ev);
}

static void
dirwatch_rescan_cb(uv_timer_t *t)
{
	dirwatch_emit(t->data, LC_EV_RESCAN);
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
	dirwatch_emit(h->data, LC_EV_REPORTS);
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
	d->jobs_fd = -1;
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

/* Hold the job folder now watched; forget the one before. */
static void
dirwatch_hold(struct mcd *d, int fd)
{
	if (d->jobs_fd != -1)
		close(d->jobs_fd);
	d->jobs_fd = fd;
}

/* Is the folder open as fd the one watched and held? */
static bool
dirwatch_is_held(const struct mcd *d, int fd)
{
	struct stat	 now, held;

	return d->jobs_fd != -1 && fstat(d->jobs_fd, &held) == 0 &&
	    fstat(fd, &now) == 0 && now.st_ino == held.st_ino &&
	    now.st_dev == held.st_dev;
}

/*
 * Held for its identity only: O_PATH (Linux) and O_EVTONLY (macOS) need
 * no read permission and, on macOS, do not keep a volume from unmounting.
 */
#if defined(O_PATH)
#define DIRWATCH_HOLD_FLAGS	(O_PATH | O_DIRECTORY | O_CLOEXEC)
#elif defined(O_EVTONLY)
#define DIRWATCH_HOLD_FLAGS	(O_EVTONLY | O_DIRECTORY | O_CLOEXEC)
#else
#define DIRWATCH_HOLD_FLAGS	(O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif

/* The job folder there is now: watched and held, or -errno if none. */
static int
dirwatch_watch_jobs(struct mcd *d)
{
	int	fd;

	if ((fd = open(d->paths.jobs, DIRWATCH_HOLD_FLAGS)) == -1)
		return -errno;
	if (uv_is_active((uv_handle_t *)&d->watch_jobs) &&
	    dirwatch_is_held(d, fd)) {
		close(fd);
		return 0;
	}
	if (uv_is_active((uv_handle_t *)&d->watch_jobs))
		uv_fs_event_stop(&d->watch_jobs);
	/* Not watchable (inotify's limit, say): seen on reload, no spinning. */
	if (dirwatch_watch(&d->watch_jobs, d->paths.jobs, dirwatch_cb,
	    false) != 0) {
		close(fd);
		dirwatch_hold(d, -1);
		return 0;
	}
	dirwatch_hold(d, fd);
	/* Files may have come before the watch: look once more. */
	dirwatch_cb(&d->watch_jobs, NULL, 0, 0);
	return 0;
}

/* After a rescan: watch the job folder there is now, or wait for one. */
void
dirwatch_rearm(struct mcd *d)
{
	char		 parent[PATH_MAX];
	uv_fs_event_t	*jobs = &d->watch_jobs, *up = &d->watch_jobs_parent;
	int		 rc;

	if (!d->dirwatch_ready)
		return;
	if ((rc = dirwatch_watch_jobs(d)) == 0) {
		if (uv_is_active((uv_handle_t *)up))
			uv_fs_event_stop(up);
		return;
	}
	if (uv_is_active((uv_handle_t *)jobs)) {
		uv_fs_event_stop(jobs);
		dirwatch_hold(d, -1);
		log_warnx("%s: %s: waiting for it to come back",
		    d->paths.jobs, strerror(-rc));
		/* The rescan that saw it go may have read it half deleted. */
		dirwatch_cb(jobs, NULL, 0, 0);
	}
	dirwatch_parent(d->paths.jobs, parent, sizeof parent);
	if (!uv_is_active((uv_handle_t *)up))
		dirwatch_watch(up, parent, dirwatch_cb, false);
}
