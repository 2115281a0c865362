/* SPDX-License-Identifier: MIT */
/*
 * Following a log file incrementally: each call reads only what was added
 * since the last, from an open descriptor, so nothing is read twice.  A
 * file cut shorter than what was read was truncated: read again from its
 * start.  A path that now names another file was rotated: finish the old
 * one, then follow the new one from its start.  A line longer than
 * TAIL_LINE_MAX is passed on cut to that length, the rest dropped, so
 * memory stays bounded whatever the workload writes.  One call reads at
 * most TAIL_BUDGET bytes and says whether more is waiting, so a workload
 * flooding its log cannot keep the daemon from its clients.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcd.h"

static void
tail_close(struct tail *t)
{
	if (t->fd != -1)
		close(t->fd);
	t->fd = -1;
}

/* Open path; at its end (skip old lines) or at its start. */
static void
tail_open(struct tail *t, bool at_end)
{
	struct stat	sb;

	tail_close(t);
	t->len = 0;
	t->dropping = false;
	if ((t->fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return;
	/* A log is a file: /dev/zero or a FIFO would never run dry. */
	if (fstat(t->fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		tail_close(t);
		return;
	}
	t->ino = sb.st_ino;
	t->dev = sb.st_dev;
	t->offset = at_end ? sb.st_size : 0;
	lseek(t->fd, t->offset, SEEK_SET);
}

void
tail_start(struct tail *t, const char *path)
{
	memset(t, 0, sizeof *t);
	t->fd = -1;
	t->path = strdup(path);
	tail_open(t, true);
}

void
tail_stop(struct tail *t)
{
	tail_close(t);
	free(t->path);
	free(t->line);
	t->path = t->line = NULL;
	t->len = t->cap = 0;
}

/* Room for one more byte and the NUL; lines start small. */
static void
tail_room(struct tail *t)
{
	if (t->len + 1 < t->cap)
		return;
	t->cap = t->cap == 0 ? 128 : t->cap * 2;
	if (t->cap > TAIL_LINE_MAX + 1)
		t->cap = TAIL_LINE_MAX + 1;
	t->line = realloc(t->line, t->cap);
}

/* Split buf into lines for cb, keeping a partial last line. */
static void
tail_feed(struct tail *t, const char *buf, size_t n, tail_line_fn cb,
    void *arg)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		tail_room(t);
		if (buf[i] == '\n') {
			if (!t->dropping) {
				t->line[t->len] = '\0';
				cb(arg, t->line);
			}
			t->len = 0;
			t->dropping = false;
		} else if (t->dropping)
			continue;
		else if (t->len == TAIL_LINE_MAX) {
			/* Pass the head of an over-long line; drop its tail. */
			t->line[t->len] = '\0';
			cb(arg, t->line);
			t->len = 0;
			t->dropping = true;
		} else
			t->line[t->len++] = buf[i];
	}
}

/* Read up to *budget bytes; true when the end of the file was reached. */
static bool
tail_drain(struct tail *t, tail_line_fn cb, void *arg, size_t *budget)
{
	char	buf[16384];
	ssize_t	n;

	while (*budget > 0 && (n = read(t->fd, buf, *budget < sizeof buf ?
	    *budget : sizeof buf)) > 0) {
		t->offset += n;
		*budget -= (size_t)n;
		tail_feed(t, buf, (size_t)n, cb, arg);
	}
	return *budget > 0;
}

/*
 * Pass the complete lines added since the last call to cb, up to
 * TAIL_BUDGET bytes of them; true when more is waiting (call again).
 */
bool
tail_read(struct tail *t, tail_line_fn cb, void *arg)
{
	struct stat	sb;
	size_t		budget = TAIL_BUDGET;

	if (t->path == NULL)
		return false;
	if (t->fd == -1) {
		/* It did not exist yet: everything in it is new. */
		tail_open(t, false);
		if (t->fd == -1)
			return false;
	}
	if (fstat(t->fd, &sb) == 0 && sb.st_size < t->offset) {
		t->offset = 0;
		t->len = 0;
		lseek(t->fd, 0, SEEK_SET);
	}
	if (!tail_drain(t, cb, arg, &budget))
		return true;
	if (stat(t->path, &sb) == 0 && (sb.st_ino != t->ino ||
	    sb.st_dev != t->dev)) {
		tail_open(t, false);
		if (t->fd != -1 && !tail_drain(t, cb, arg, &budget))
			return true;
	} else if (stat(t->path, &sb) == -1 && errno == ENOENT)
		tail_close(t);
	return false;
}
