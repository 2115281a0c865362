/* SPDX-License-Identifier: MIT */
/*
 * Machine jobs follow the console.  Every user's metalcapd reads the
 * machine's job folder, and with fast user switching several users'
 * daemons run side by side: each would run the same job, twice on one
 * port, and the second would crash-loop.  So a machine job runs only for
 * the user who has the console, the owner of /dev/console: loginwindow
 * gives it to the user in front, and to root at the login window (the
 * test admin scripts and Karabiner-Elements settled on: outset#72,
 * Installomator#441, Karabiner-Elements#1770).  Nothing notifies a
 * change, so the owner is polled.
 *
 * The user who loses the console holds its machine jobs at once (booted
 * out, shown stopped with the reason); the user who gains it waits one
 * more poll, so that the other daemon has let go first.  While root has
 * the console, or it cannot be told, each daemon keeps what it did.
 */
#include <sys/stat.h>

#include <string.h>
#include <unistd.h>

#include "mcd.h"

#define CONSOLE_POLL_MS		2000
#define CONSOLE_GAIN_POLLS	2	/* seen ours this often in a row */

/* 1: the console is ours; 0: another user's, in *owner; -1: can't say. */
static int
console_ours(const struct mcd *d, uid_t *owner)
{
	struct stat	sb;

	if (d->paths.console[0] == '\0' || stat(d->paths.console, &sb) == -1)
		return -1;
	*owner = sb.st_uid;
	if (sb.st_uid == getuid())
		return 1;
	return sb.st_uid == 0 ? -1 : 0;
}

static void
console_rescan(struct mcd *d)
{
	struct mcd_event	ev = { .type = LC_EV_RESCAN };

	d->emit(d, &ev);
}

static void
console_poll_cb(uv_timer_t *t)
{
	struct mcd	*d = t->data;
	uid_t		 owner = 0;
	int		 ours = console_ours(d, &owner);

	d->console_ours_polls = ours == 1 ? d->console_ours_polls + 1 : 0;
	if (ours == 0 && !d->console_held) {
		d->console_held = true;
		d->console_owner = owner;
		log_info("uid %ld has the console: machine jobs are held "
		    "here until it is back", (long)owner);
		console_rescan(d);
	} else if (ours == 1 && d->console_held &&
	    d->console_ours_polls >= CONSOLE_GAIN_POLLS) {
		d->console_held = false;
		log_info("the console is back: machine jobs run here again");
		console_rescan(d);
	}
}

/* Before the first rescan: a daemon started behind another user holds. */
void
console_start(struct mcd *d)
{
	uid_t	owner = 0;

	d->console_held = console_ours(d, &owner) == 0;
	d->console_owner = owner;
	if (d->console_held)
		log_info("uid %ld has the console: machine jobs are held here",
		    (long)owner);
	uv_timer_init(d->loop, &d->console_timer);
	d->console_timer.data = d;
	uv_timer_start(&d->console_timer, console_poll_cb, CONSOLE_POLL_MS,
	    CONSOLE_POLL_MS);
}

/* Is j a machine job that another user's console holds? */
bool
console_holds(const struct mcd *d, const struct job *j)
{
	size_t	n = strlen(d->paths.managed_jobs);

	return d->console_held && n > 0 && j->file != NULL &&
	    strncmp(j->file, d->paths.managed_jobs, n) == 0 &&
	    j->file[n] == '/';
}

/* The reason a held job shows. */
const char *
console_reason(const struct mcd *d, char *buf, size_t len)
{
	snprintf(buf, len, "machine job held: uid %ld has the console "
	    "(machine jobs run for the console's user only)",
	    (long)d->console_owner);
	return buf;
}
