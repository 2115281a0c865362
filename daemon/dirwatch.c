/* SPDX-License-Identifier: MIT */
/*
 * The folders metalcapd watches: the job folders (the user's and the
 * machine's), the profile folder and the managed preferences (the
 * computer's and this user's; any change: rescan, once things settle),
 * and the shim's report folder.  A folder that is missing (a managed or
 * machine folder not made yet, a job folder deleted to be made again) is
 * waited for at its nearest ancestor, where only the way down to it
 * counts, and the watch moves down with the rescan after each step
 * appears.  A job folder made again is a new folder.  The watched folder
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

/*
 * At an ancestor only the way down to the folder waited for matters.  An
 * event for anything else there (the daemon's own log beside it; under
 * FSEvents, which reports a whole tree, all of /Library) would rescan,
 * and a rescan that logs a line would rescan again, for ever.
 */
static void
dirwatch_slot_cb(uv_fs_event_t *h, const char *file, int events,
    int status)
{
	const struct dirwatch_slot	*s = (const struct dirwatch_slot *)h;
	const char			*next;
	size_t				 n = strlen(s->at), len;

	if (file != NULL && n > 0 && strcmp(s->at, s->want) != 0) {
		next = s->want + n + (s->at[n - 1] != '/');
		len = strcspn(next, "/");
		if (strncmp(file, next, len) != 0 || (file[len] != '\0' &&
		    file[len] != '/'))
			return;
	}
	dirwatch_cb(h, file, events, status);
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

/* The state folder changes often (status.json); verify's file matters. */
static void
dirwatch_state_cb(uv_fs_event_t *h, const char *file, int events,
    int status)
{
	(void)events;
	(void)status;
	if (file == NULL || strcmp(file, "verified.json") == 0)
		dirwatch_emit(h->data, LC_EV_VERIFIED);
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

static void
dirwatch_slot_init(struct mcd *d, struct dirwatch_slot *s)
{
	dirwatch_init(d, &s->handle);
	s->want[0] = '\0';
	s->at[0] = '\0';
	s->fd = -1;
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
	char		 dir[PATH_MAX];
	size_t		 i;

	uv_timer_init(d->loop, &d->rescan_timer);
	d->rescan_timer.data = d;
	d->jobs_fd = -1;
	dirwatch_init(d, &d->watch_jobs);
	dirwatch_init(d, &d->watch_profiles);
	dirwatch_init(d, &d->watch_reports);
	dirwatch_init(d, &d->watch_state);
	dirwatch_watch(&d->watch_state, d->paths.state, dirwatch_state_cb,
	    false);
	dirwatch_watch(&d->watch_profiles, d->paths.profiles, dirwatch_cb,
	    false);
	for (i = 0; i < sizeof d->watch_more / sizeof d->watch_more[0]; i++) {
		dirwatch_slot_init(d, &d->watch_more[i]);
		dirwatch_slot_init(d, &d->watch_links[i]);
	}
	dirwatch_slot_init(d, &d->watch_jobs_up);
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

/* Are the folders open as a and b one folder? */
static bool
dirwatch_same(int a, int b)
{
	struct stat	 sa, sb;

	return a != -1 && b != -1 && fstat(a, &sa) == 0 && fstat(b, &sb) ==
	    0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* Is the folder open as fd the one watched and held? */
static bool
dirwatch_is_held(const struct mcd *d, int fd)
{
	return dirwatch_same(d->jobs_fd, fd);
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

/* The folder itself if there is one, else its nearest ancestor there is. */
static void
dirwatch_nearest(const char *want, char *buf, size_t len)
{
	struct stat	 sb;
	char		*slash;

	snprintf(buf, len, "%s", want);
	while (stat(buf, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		if ((slash = strrchr(buf, '/')) == NULL) {
			buf[0] = '\0';
			return;
		}
		slash[slash == buf] = '\0';	/* "/x" leaves "/" */
	}
}

/* Watch nothing for s. */
static void
dirwatch_unfollow(struct dirwatch_slot *s)
{
	if (uv_is_active((uv_handle_t *)&s->handle))
		uv_fs_event_stop(&s->handle);
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	s->at[0] = '\0';
}

/*
 * Watch want where it is, or, while it is missing, its nearest ancestor:
 * a folder an MDM or an installer makes after the daemon started (or
 * deletes and makes again) is watched from the rescan after it appears.
 */
static void
dirwatch_follow_from(struct dirwatch_slot *s, const char *want,
    const char *at)
{
	char	now[PATH_MAX];
	int	fd;

	if (at[0] == '\0' || (fd = open(at, DIRWATCH_HOLD_FLAGS)) == -1)
		return;
	if (uv_is_active((uv_handle_t *)&s->handle) && strcmp(at, s->at) ==
	    0 && dirwatch_same(s->fd, fd)) {
		close(fd);
		return;
	}
	dirwatch_unfollow(s);
	if (dirwatch_watch(&s->handle, at, dirwatch_slot_cb, true) != 0) {
		close(fd);
		return;
	}
	s->fd = fd;
	snprintf(s->at, sizeof s->at, "%s", at);
	/*
	 * What came before the watch: look once more, there or, at an
	 * ancestor, if the way down grew meanwhile (mkdir -p racing us).
	 */
	dirwatch_nearest(want, now, sizeof now);
	if (strcmp(at, want) == 0 || strcmp(now, at) != 0)
		dirwatch_cb(&s->handle, NULL, 0, 0);
}

static void
dirwatch_follow(struct dirwatch_slot *s, const char *want)
{
	char	at[PATH_MAX];

	snprintf(s->want, sizeof s->want, "%s", want);
	if (want[0] == '\0')
		return;
	dirwatch_nearest(want, at, sizeof at);
	dirwatch_follow_from(s, want, at);
}

/*
 * A folder that is a link is watched where it points (dirwatch_follow);
 * the link itself, replaced by a real folder or pointed elsewhere, shows
 * only in the folder that holds it: watched too, for that name alone.
 */
static void
dirwatch_follow_link(struct dirwatch_slot *s, const char *want)
{
	struct stat	sb;
	char		at[PATH_MAX];

	if (want[0] == '\0' || lstat(want, &sb) == -1 ||
	    !S_ISLNK(sb.st_mode)) {
		dirwatch_unfollow(s);
		return;
	}
	snprintf(s->want, sizeof s->want, "%s", want);
	dirwatch_parent(want, at, sizeof at);
	dirwatch_follow_from(s, want, at);
}

/* The managed folders and the machine's job folder, wherever they are now. */
static void
dirwatch_rearm_more(struct mcd *d)
{
	char	dir[PATH_MAX];

	dirwatch_follow(&d->watch_more[0], d->paths.managed_jobs);
	dirwatch_follow_link(&d->watch_links[0], d->paths.managed_jobs);
	dirwatch_parent(d->paths.managed, dir, sizeof dir);
	dirwatch_follow(&d->watch_more[1], d->paths.managed[0] ? dir : "");
	dirwatch_follow_link(&d->watch_links[1], d->paths.managed[0] ? dir :
	    "");
	dirwatch_parent(d->paths.managed_user, dir, sizeof dir);
	dirwatch_follow(&d->watch_more[2], d->paths.managed_user[0] ? dir :
	    "");
	dirwatch_follow_link(&d->watch_links[2], d->paths.managed_user[0] ?
	    dir : "");
}

/* After a rescan: watch the job folder there is now, or wait for one. */
void
dirwatch_rearm(struct mcd *d)
{
	uv_fs_event_t	*jobs = &d->watch_jobs;
	int		 rc;

	if (!d->dirwatch_ready)
		return;
	dirwatch_rearm_more(d);
	if ((rc = dirwatch_watch_jobs(d)) == 0) {
		dirwatch_unfollow(&d->watch_jobs_up);
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
	dirwatch_follow(&d->watch_jobs_up, d->paths.jobs);
}
