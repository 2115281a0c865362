/* SPDX-License-Identifier: MIT */
/*
 * report: the fleet summary from the status file alone, no socket, so a
 * script run as root can report on any user.  Run as root over a folder
 * a user owns (--user-home), it follows no link the user could plant and
 * quotes nothing of the file's content.
 */
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

#define CTL_REPORT_MAX	(4 << 20)	/* thousands of jobs fit */

/* Where the status file is below a user's home (platform_darwin.c). */
static const char *const ctl_report_below[] = { "Library",
    "Application Support", "metalcap", "state", "status.json" };

/*
 * Open HOME/Library/.../status.json one folder at a time, never following
 * a link below HOME (openat and O_NOFOLLOW: no window between a check and
 * the open).  HOME itself comes from the directory service.
 */
static int
ctl_report_open_below(const char *home)
{
	size_t		i, n = sizeof ctl_report_below /
	    sizeof ctl_report_below[0];
	struct stat	hs, fs;
	int		dir, fd;

	if ((dir = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(dir, &hs) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		fd = openat(dir, ctl_report_below[i], O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK | (i + 1 < n ? O_DIRECTORY : 0));
		close(dir);
		if (fd == -1)
			return -1;
		dir = fd;
	}
	/*
	 * The home's owner's own file, one name for it: a hard link to a
	 * file the user may not read would have root read it for them.
	 */
	if (fstat(dir, &fs) == -1 || fs.st_uid != hs.st_uid ||
	    fs.st_nlink != 1) {
		close(dir);
		errno = EPERM;
		return -1;
	}
	return dir;
}

/* The document from fd: a regular file, of a sane size.  NULL: why. */
static json_t *
ctl_report_load(int fd, const char *path, char *why, size_t whylen)
{
	struct stat	 sb;
	json_error_t	 jerr;
	json_t		*doc;
	char		*buf;
	ssize_t		 n;

	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > CTL_REPORT_MAX) {
		snprintf(why, whylen, "%s: not a regular file of at most %d "
		    "bytes", path, CTL_REPORT_MAX);
		return NULL;
	}
	if ((buf = malloc(CTL_REPORT_MAX)) == NULL) {
		snprintf(why, whylen, "%s: out of memory", path);
		return NULL;
	}
	if ((n = mc_read_upto(fd, buf, CTL_REPORT_MAX)) == -1) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		free(buf);
		return NULL;
	}
	/* jansson's text can quote the file: give the place only. */
	if ((doc = json_loadb(buf, (size_t)n, 0, &jerr)) == NULL)
		snprintf(why, whylen, "%s: not valid JSON (line %d, column %d)",
		    path, jerr.line, jerr.column);
	free(buf);
	return doc;
}

static const char *
ctl_json_str(json_t *obj, const char *key)
{
	const char	*s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

/*
 * "; NAME: STATE (REASON)" of a job needing attention.  The file is the
 * user's: what it says is printed as printable UTF-8 on one line, with
 * no '|' (inventory attributes join users with it), no '"' (an export's
 * reader takes a lone one for a cell's end) and the reason cut at
 * 200 bytes, so it cannot pass for another user's entry or break a line.
 */
static const char *
ctl_report_text(char *buf, size_t len, const char *s)
{
	char	*q;

	mc_text_avoid(buf, len, s, "|", '/');
	for (q = buf; (q = strchr(q, '"')) != NULL; q++)
		*q = '\'';
	return buf;
}

static void
ctl_report_job_line(json_t *job)
{
	const char	*keys[] = { "name", "state", "reason" };
	char		 text[3][256];
	size_t		 k;

	for (k = 0; k < 3; k++)
		ctl_report_text(text[k], k == 2 ? 201 : sizeof text[k],
		    ctl_json_str(job, keys[k]));
	printf("; %s: %s%s%s%s", text[0], text[1],
	    json_is_string(json_object_get(job, "reason")) ? " (" : "",
	    text[2], json_is_string(json_object_get(job, "reason")) ? ")" :
	    "");
}

/*
 * " verdict=F,F,..." for each verify verdict of the file, for metalcapctl
 * fleet allowlist to read back from an inventory's export (a Jamf CSV):
 * the instance id, what fleet_columns names, then the guest id (last, so
 * that lines of before it read as they did), each percent-encoded
 * but for letters, digits, '.', '_' and '-', so that no ',', '|',
 * blank, quote or markup of the user's file reaches the line.
 */
static void
ctl_report_verdicts(json_t *doc)
{
	/* "" names the file's own field, not the verdict's. */
	static const char *const keys[][2] = { { "", "instance_id" },
	    { "profile" }, { "verdict" }, { "date" }, { "llama_build" },
	    { "model_sha256" }, { "os_build" }, { "cpu_brand" },
	    { "hw_model" }, { "shim_version" }, { "", "guest_id" } };
	json_t		*v, *f;
	const char	*s;
	char		 num[32];
	size_t		 i, k;

	json_array_foreach(json_object_get(doc, "verdicts"), i, v) {
		printf(" verdict=");
		for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			f = keys[k][0][0] == '\0' ? json_object_get(doc,
			    keys[k][1]) : json_object_get(v, keys[k][0]);
			if (json_is_integer(f)) {
				snprintf(num, sizeof num, "%lld",
				    (long long)json_integer_value(f));
				s = num;
			} else
				s = json_is_string(f) ? json_string_value(f) :
				    "";
			if (k > 0)
				putchar(',');
			for (; *s != '\0'; s++)
				if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' &&
				    *s <= 'Z') || (*s >= '0' && *s <= '9') ||
				    *s == '.' || *s == '_' || *s == '-')
					putchar(*s);
				else
					printf("%%%02X", (unsigned char)*s);
		}
	}
}

/*
 * One line for inventory tools, from the status file alone (no socket: a
 * root-run Jamf or osquery script reads any user's file):
 *   ok|attention version=V jobs=N STATE=COUNT...[ verdict=ID,...]...
 *   [; JOB: STATE (REASON)]...
 */
static int
ctl_report_file(const char *path, const char *home, bool as_json)
{
	static const char *const states[] = { "unlocked", "stock", "pending",
	    "probing", "stopped", "reverted", "blocked", "failed", "invalid",
	    "error", "crashing" };
	json_t		*doc, *jobs, *job, *bad, *counts, *held, *out;
	size_t		 i, k, n[sizeof states / sizeof states[0]] = { 0 };
	const char	*state;
	char		 why[PATH_MAX + 128], version[40];
	int		 fd;

	fd = home != NULL ? ctl_report_open_below(home) :
	    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1) {
		fprintf(stderr, "metalcapctl: %s: %s\n", path, errno == ELOOP ?
		    "a symbolic link, not followed" : strerror(errno));
		return EXIT_DAEMON;
	}
	doc = ctl_report_load(fd, path, why, sizeof why);
	close(fd);
	if (doc == NULL) {
		fprintf(stderr, "metalcapctl: %s\n", why);
		return EXIT_DAEMON;
	}
	jobs = json_object_get(doc, "jobs");
	if (!json_is_array(jobs)) {
		fprintf(stderr, "metalcapctl: %s:jobs: expected an array\n",
		    path);
		json_decref(doc);
		return EXIT_DAEMON;
	}
	bad = json_array();
	json_array_foreach(jobs, i, job) {
		state = ctl_json_str(job, "state");
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (strcmp(state, states[k]) == 0)
				n[k]++;
		/* Held by launchd (not run at all): as bad as failed. */
		held = json_object_get(job, "held");
		if (ctl_unhealthy(state) || json_is_string(held))
			json_array_append_new(bad, json_pack("{s:s, s:s, s:O}",
			    "name", ctl_json_str(job, "name"), "state", state,
			    "reason", json_is_string(held) ? held :
			    json_object_get(job, "reason") ?
			    json_object_get(job, "reason") : json_null()));
	}
	if (as_json) {
		counts = json_object();
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			json_object_set_new(counts, states[k],
			    json_integer((json_int_t)n[k]));
		/* O?: a file without "updated" gives null. */
		out = json_pack("{s:s, s:s, s:s, s:O?, s:I, s:o, s:O}",
		    "verdict", json_array_size(bad) ? "attention" : "ok",
		    "version", ctl_json_str(doc, "version"), "instance_id",
		    ctl_json_str(doc, "instance_id"), "updated",
		    json_object_get(doc, "updated"), "jobs", (json_int_t)
		    json_array_size(jobs), "states", counts, "attention", bad);
		json_dumpf(out, stdout, JSON_COMPACT | JSON_SORT_KEYS |
		    JSON_ENCODE_ANY);
		json_decref(out);
		putchar('\n');
	} else {
		printf("%s version=%s jobs=%zu", json_array_size(bad) ?
		    "attention" : "ok", ctl_report_text(version, 40,
		    ctl_json_str(doc, "version")), json_array_size(jobs));
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (n[k] > 0)
				printf(" %s=%zu", states[k], n[k]);
		/* Before the jobs' lines: text a job's log put in a reason
		 * comes after the first ';', where no verdict is read. */
		ctl_report_verdicts(doc);
		json_array_foreach(bad, i, job)
			ctl_report_job_line(job);
		putchar('\n');
	}
	k = json_array_size(bad);
	json_decref(bad);
	json_decref(doc);
	return k > 0 ? EXIT_UNHEALTHY : 0;
}

/* report [FILE]: the fleet summary, read from the status file. */
int
cmd_report(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	char	path[4096];

	(void)cmd;
	if (argc == 1 && c->opts.user_home != NULL) {
		fprintf(stderr, "usage: metalcapctl report [STATUS-FILE | "
		    "--user-home DIR]\n");
		return EXIT_USAGE;
	}
	if (argc == 1)
		snprintf(path, sizeof path, "%s", argv[0]);
	else if (c->opts.user_home != NULL)
		mc_fmt(path, sizeof path, "%s/Library/Application Support/"
		    "metalcap/state/status.json", c->opts.user_home);
	else if (mc_fmt(path, sizeof path, "%s/status.json",
	    c->paths.state) == -1) {
		fprintf(stderr, "metalcapctl: cannot tell where the status "
		    "file is; name it: metalcapctl report FILE\n");
		return EXIT_USAGE;
	}
	return ctl_report_file(path, c->opts.user_home, c->json);
}

