/* SPDX-License-Identifier: MIT */
/*
 * Following a log file incrementally: each call reads only what was added
 * since the last, from an open descriptor, so nothing is read twice.  A
 * file cut shorter than what was read was truncated: read again from its
 * start.  A path that now names another file was rotated: finish the old
 * one, then follow the new one from its start.  A line longer than
 * TAIL_LINE_MAX is passed on cut to that length, the rest dropped, so
 * memory stays bounded whatever the workload writes.
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
	fstat(t->fd, &sb);
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
	snprintf(t->path, sizeof t->path, "%s", path);
	tail_open(t, true);
}

void
tail_stop(struct tail *t)
{
	tail_close(t);
	t->path[0] = '\0';
}

/* Split buf into lines for cb, keeping a partial last line. */
static void
tail_feed(struct tail *t, const char *buf, size_t n, tail_line_fn cb,
    void *arg)
{
	size_t	i;

	for (i = 0; i < n; i++) {
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

static void
tail_drain(struct tail *t, tail_line_fn cb, void *arg)
{
	char	buf[16384];
	ssize_t	n;

	while ((n = read(t->fd, buf, sizeof buf)) > 0) {
		t->offset += n;
		tail_feed(t, buf, (size_t)n, cb, arg);
	}
}

/* Pass every complete line added since the last call to cb. */
void
tail_read(struct tail *t, tail_line_fn cb, void *arg)
{
	struct stat	sb;

	if (t->path[0] == '\0')
		return;
	if (t->fd == -1) {
		/* It did not exist yet: everything in it is new. */
		tail_open(t, false);
		if (t->fd == -1)
			return;
	}
	if (fstat(t->fd, &sb) == 0 && sb.st_size < t->offset) {
		t->offset = 0;
		t->len = 0;
		lseek(t->fd, 0, SEEK_SET);
	}
	tail_drain(t, cb, arg);
	if (stat(t->path, &sb) == 0 && (sb.st_ino != t->ino ||
	    sb.st_dev != t->dev)) {
		tail_open(t, false);
		if (t->fd != -1)
			tail_drain(t, cb, arg);
	} else if (stat(t->path, &sb) == -1 && errno == ENOENT)
		tail_close(t);
}
