/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl fleet allowlist: a fleet's verify verdicts turned into the
 * managed preference metalcapd enforces (UnlockOnlyWhere).  No server of
 * its own: osquery collects the verdict rows of each guest (query 4 of
 * pkg/fleet/metalcap.sql), this aggregates its JSON results, and MDM
 * distributes the plist or .mobileconfig written.
 *
 * A combination is what a verdict is about: profile, llama.cpp build,
 * model, OS build, host chip and model, shim version.  It is allowed
 * when at least --min-guests guests passed it within the --window, and
 * no verdict on it failed since its newest pass.  A guest counts once,
 * whoever of its users ran verify: its rows are told apart by its guest
 * id (daemon/fleet.c), or by instance id where a row has none (a
 * metalcapd of before, or a machine it could not tell).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <plist/plist.h>

#include "ctl.h"
#include "mc_plist.h"
#include "mc_util.h"

#define FLEET_KEYS		7
#define FLEET_MIN_GUESTS	3
#define FLEET_WINDOW_DAYS	30
#define FLEET_NOTES_MAX		10
#define FLEET_TEXT_MAX		(64 << 20)

/* The combination's keys: the rows' columns, and the plist's names. */
static const char *const fleet_columns[FLEET_KEYS] = { "profile",
    "llama_build", "model_sha256", "os_build", "cpu_brand", "hw_model",
    "shim_version" };
static const char *const fleet_plist_keys[FLEET_KEYS] = { "Profile",
    "LlamaBuild", "ModelSHA256", "OSBuild", "CPUBrand", "HWModel",
    "ShimVersion" };

struct fleet_row {
	const char	*key[FLEET_KEYS];
	const char	*guest;		/* guest id, else instance id */
	const char	*instance;
	bool		 has_guest;
	bool		 pass;
	long long	 date;
	json_t		*src;		/* holds the strings */
};

struct fleet {
	struct fleet_row	*rows;
	size_t			 nrows;
	long			 skipped, notes;
	time_t			 since;		/* the window's start */
};

/* A column's string; osquery gives every value as a string. */
static const char *
fleet_column(json_t *row, const char *name)
{
	const char	*s = json_string_value(json_object_get(row, name));

	return s != NULL && *s != '\0' ? s : NULL;
}

/* One verdict row, kept or skipped with the first column it lacks. */
static void
fleet_take(struct fleet *f, json_t *row, const char *file, long n)
{
	static const char *const need[] = { "instance_id", "verdict", "date" };
	struct fleet_row	 r = { .src = row };
	const char		*missing = NULL, *v;
	char			*end;
	size_t			 i;

	for (i = 0; i < FLEET_KEYS && missing == NULL; i++)
		if ((r.key[i] = fleet_column(row, fleet_columns[i])) == NULL)
			missing = fleet_columns[i];
	for (i = 0; i < 3 && missing == NULL; i++)
		if (fleet_column(row, need[i]) == NULL)
			missing = need[i];
	if (missing == NULL) {
		r.instance = fleet_column(row, "instance_id");
		r.has_guest = (r.guest = fleet_column(row, "guest_id")) !=
		    NULL;
		if (!r.has_guest)
			r.guest = r.instance;
		v = fleet_column(row, "verdict");
		r.pass = strcmp(v, "pass") == 0;
		r.date = strtoll(fleet_column(row, "date"), &end, 10);
		if (*end != '\0' || (!r.pass && strcmp(v, "fail") != 0))
			missing = *end != '\0' ? "date" : "verdict";
	}
	if (missing != NULL) {
		if (f->notes++ < FLEET_NOTES_MAX)
			fprintf(stderr, "metalcapctl: fleet: %s: row %ld: no "
			    "usable %s: skipped\n", file, n, missing);
		f->skipped++;
		return;
	}
	/* A clock ahead (a VM restored from a snapshot) would date a pass
	 * after every failure: a day ahead at most. */
	if (r.date > (long long)time(NULL) + 86400) {
		if (f->notes++ < FLEET_NOTES_MAX)
			fprintf(stderr, "metalcapctl: fleet: %s: row %ld: dated "
			    "in the future: skipped\n", file, n);
		f->skipped++;
		return;
	}
	if (r.date < (long long)f->since)
		return;
	json_incref(row);
	f->rows = realloc(f->rows, (f->nrows + 1) * sizeof *f->rows);
	f->rows[f->nrows++] = r;
}

/*
 * One JSON value of osquery's output: an array of rows (osqueryi
 * --json), a result log line with "columns" (differential, event
 * format), "diffResults" (differential, batched) or "snapshot" (an array
 * of rows), or a row.  A row osquery reports "removed" is one a guest no
 * longer has, its verdict counted where it was "added".
 */
static void
fleet_value(struct fleet *f, json_t *v, const char *file, long *n)
{
	json_t		*row, *rows;
	const char	*action;
	size_t		 i;

	rows = json_is_array(v) ? v : json_object_get(v, "snapshot");
	if (!json_is_array(rows))
		rows = json_object_get(json_object_get(v, "diffResults"),
		    "added");
	if (json_is_array(rows)) {
		json_array_foreach(rows, i, row)
			fleet_take(f, row, file, ++*n);
		return;
	}
	if (json_object_get(v, "diffResults") != NULL)
		return;
	action = json_string_value(json_object_get(v, "action"));
	if (action != NULL && strcmp(action, "removed") == 0)
		return;
	if ((row = json_object_get(v, "columns")) != NULL)
		fleet_take(f, row, file, ++*n);
	else
		fleet_take(f, v, file, ++*n);
}

/* The report line's columns, in its order (ctl_report.c). */
static const char *const fleet_report_columns[] = { "instance_id",
    "profile", "verdict", "date", "llama_build", "model_sha256", "os_build",
    "cpu_brand", "hw_model", "shim_version", "guest_id" };

/* One percent-encoded field, up to ',' or the token's end, decoded. */
static const char *
fleet_field(const char *p, char *out, size_t len)
{
	size_t		n = 0;
	unsigned	c;

	for (; *p != '\0' && *p != ',' && strchr(" \t\r\n\"|;", *p) == NULL;
	    p++) {
		if (*p == '%' && sscanf(p + 1, "%2x", &c) == 1 && isxdigit(
		    (unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			p += 2;
		} else
			c = (unsigned char)*p;
		if (n + 1 < len)
			out[n++] = (char)c;
	}
	out[n] = '\0';
	return p;
}

/*
 * The text of an inventory export (Jamf's CSV of the extension attribute,
 * whose cells hold metalcapctl report's lines, users joined by " | "):
 * each " verdict=" token of a user's entry before its first ';' (what
 * follows is its jobs' reasons, text a log can choose), a row.
 *
 * An entry ends at '|', at a line's end, and at its cell's end: a lone
 * '"' (CSV doubles one inside a cell; report writes none of its own), or
 * a ',' outside quotes before the ';'.  After the ';' a comma is a
 * reason's: in a quoted cell it is text, and report's lines are never
 * unquoted cells.  Taken for a cell's end, the text after it opened
 * entries of the writer's choosing (issue 48, 4).
 */
static void
fleet_text(struct fleet *f, const char *text, const char *file)
{
	const char	*p = text;
	char		 field[512];
	bool		 jobs = false, entry = false, quoted = false;
	json_t		*row;
	size_t		 k;
	long		 n = 0;

	for (; *p != '\0'; p++) {
		if (p[0] == '"' && p[1] == '"') {
			p++;		/* a quote inside a cell: text */
			continue;
		}
		if (*p == ';')
			jobs = true;
		else if (*p == '"') {
			quoted = !quoted;
			entry = jobs = false;
		} else if (*p == '|' || *p == '\n' ||
		    (*p == ',' && !quoted && !jobs))
			entry = jobs = false;
		/* "USER: ok version=" or "...: attention version=" opens one. */
		if (!jobs && (strncmp(p, ": ok version=", 13) == 0 ||
		    strncmp(p, ": attention version=", 20) == 0))
			entry = true;
		if (jobs || !entry || strncmp(p, " verdict=", 9) != 0)
			continue;
		p += 9;
		row = json_object();
		for (k = 0; k < sizeof fleet_report_columns /
		    sizeof fleet_report_columns[0]; k++) {
			p = fleet_field(p, field, sizeof field);
			json_object_set_new(row, fleet_report_columns[k],
			    json_string(field));
			if (*p != ',')
				break;
			p++;
		}
		fleet_take(f, row, file, ++n);
		json_decref(row);
		p--;
	}
}

/* A whole export, at most FLEET_TEXT_MAX bytes. */
static int
fleet_read_text(struct fleet *f, const char *file)
{
	char	*text = malloc(FLEET_TEXT_MAX + 1);
	ssize_t	 got = 0;
	int	 fd;

	errno = 0;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) == -1 ||
	    (got = mc_read_upto(fd, text, FLEET_TEXT_MAX)) < 0 ||
	    got == FLEET_TEXT_MAX) {
		fprintf(stderr, "metalcapctl: fleet: %s: %s\n", file, fd == -1 ||
		    errno != 0 ? strerror(errno) : "over 64 MB");
		if (fd != -1)
			close(fd);
		free(text);
		return -1;
	}
	close(fd);
	text[got] = '\0';
	fleet_text(f, text, file);
	free(text);
	return 0;
}

/* A file of osquery's JSON output: one value, or one a line. */
static int
fleet_read(struct fleet *f, const char *file)
{
	json_error_t	 err;
	json_t		*v;
	FILE		*fp;
	long		 n = 0;
	int		 c;

	if ((fp = fopen(file, "r")) == NULL) {
		fprintf(stderr, "metalcapctl: fleet: %s: %s\n", file,
		    strerror(errno));
		return -1;
	}
	for (;;) {
		while ((c = getc(fp)) == ' ' || c == '\n' || c == '\t' ||
		    c == '\r')
			;
		if (c == EOF)
			break;
		ungetc(c, fp);
		/* Not JSON: an inventory's export of report lines. */
		if (n == 0 && c != '[' && c != '{') {
			fclose(fp);
			return fleet_read_text(f, file);
		}
		if ((v = json_loadf(fp, JSON_DISABLE_EOF_CHECK, &err)) ==
		    NULL) {
			fprintf(stderr, "metalcapctl: fleet: %s: line %d: %s "
			    "(osquery's JSON results expected)\n", file,
			    err.line, err.text);
			fclose(fp);
			return -1;
		}
		fleet_value(f, v, file, &n);
		json_decref(v);
	}
	fclose(fp);
	return 0;
}

/* Rows of one combination next to each other. */
static int
fleet_cmp(const void *a, const void *b)
{
	const struct fleet_row	*x = a, *y = b;
	int			 i, d;

	for (i = 0; i < FLEET_KEYS; i++)
		if ((d = strcmp(x->key[i], y->key[i])) != 0)
			return d;
	if (x->date != y->date)
		return x->date < y->date ? -1 : 1;
	if ((d = strcmp(x->guest, y->guest)) != 0)
		return d;
	return (int)x->pass - (int)y->pass;
}

static bool
fleet_same(const struct fleet_row *a, const struct fleet_row *b)
{
	int	i;

	for (i = 0; i < FLEET_KEYS; i++)
		if (strcmp(a->key[i], b->key[i]) != 0)
			return false;
	return true;
}

struct fleet_verdict {
	const struct fleet_row	*first;
	long			 guests_passed, failed, failed_since;
	bool			 allowed;
};

/* Rows [a, b) of one combination, by date: the rule. */
static void
fleet_judge(const struct fleet_row *a, const struct fleet_row *b,
    long min_guests, struct fleet_verdict *v)
{
	const struct fleet_row	*r, *q;
	long long		 last_pass = -1;

	memset(v, 0, sizeof *v);
	v->first = a;
	for (r = a; r < b; r++) {
		if (!r->pass) {
			v->failed++;
			continue;
		}
		last_pass = r->date;
		for (q = a; q < r; q++)
			if (q->pass && strcmp(q->guest, r->guest) == 0)
				break;
		v->guests_passed += q == r;
	}
	for (r = a; r < b; r++)
		v->failed_since += !r->pass && last_pass >= 0 &&
		    r->date >= last_pass;
	v->allowed = v->guests_passed >= min_guests && last_pass >= 0 &&
	    v->failed_since == 0;
}

static void
fleet_print(const struct fleet_verdict *v, size_t n)
{
	size_t	i;

	printf("%-5s %6s %6s  %-8s %-28s %-10s %-22s %-14s %-12s %s\n",
	    "ALLOW", "PASSED", "FAILED", "PROFILE", "LLAMA.CPP", "OS BUILD",
	    "CPU", "MODEL", "MODEL SHA256", "SHIM");
	for (i = 0; i < n; i++)
		printf("%-5s %6ld %6ld  %-8s %-28s %-10s %-22s %-14s %-12.12s "
		    "%s\n", v[i].allowed ? "yes" : "no", v[i].guests_passed,
		    v[i].failed, v[i].first->key[0], v[i].first->key[1],
		    v[i].first->key[3], v[i].first->key[4], v[i].first->key[5],
		    v[i].first->key[2], v[i].first->key[6]);
}


/*
 * A value as a pattern that matches it alone: metalcapd reads each key
 * as fnmatch(3) does, where '*', '?', '[' and '\\' mean more.
 */
static void
fleet_literal(const char *value, char *out, size_t len)
{
	size_t	n = 0;

	for (; *value != '\0' && n + 2 < len; value++) {
		if (strchr("*?[\\", *value) != NULL)
			out[n++] = '\\';
		out[n++] = *value;
	}
	out[n] = '\0';
}

/* The managed preferences: UnlockOnlyWhere of the allowed combinations. */
static plist_t
fleet_preferences(const struct fleet_verdict *v, size_t n, bool local)
{
	plist_t	prefs = plist_new_dict(), list = plist_new_array(), entry;
	char	pattern[1024];
	size_t	i;
	int	k;

	for (i = 0; i < n; i++) {
		if (!v[i].allowed)
			continue;
		entry = plist_new_dict();
		for (k = 0; k < FLEET_KEYS; k++) {
			fleet_literal(v[i].first->key[k], pattern,
			    sizeof pattern);
			plist_dict_set_item(entry, fleet_plist_keys[k],
			    plist_new_string(pattern));
		}
		plist_array_append_item(list, entry);
	}
	plist_dict_set_item(prefs, "UnlockOnlyWhere", list);
	plist_dict_set_item(prefs, "LocalVerifyAllows",
	    plist_new_bool(local));
	return prefs;
}

/* A random UUID (version 4) for a payload. */
static void
fleet_uuid(char *buf, size_t len)
{
	unsigned char	r[16] = { 0 };
	int		fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) != -1) {
		if (read(fd, r, sizeof r) != (ssize_t)sizeof r)
			memset(r, 0, sizeof r);
		close(fd);
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	snprintf(buf, len, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-"
	    "%02X%02X%02X%02X%02X%02X", r[0], r[1], r[2], r[3], r[4], r[5],
	    r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
}

static plist_t
fleet_payload(const char *name, const char *id, const char *type)
{
	plist_t	p = plist_new_dict();
	char	uuid[40];

	fleet_uuid(uuid, sizeof uuid);
	plist_dict_set_item(p, "PayloadDisplayName", plist_new_string(name));
	plist_dict_set_item(p, "PayloadIdentifier", plist_new_string(id));
	plist_dict_set_item(p, "PayloadType", plist_new_string(type));
	plist_dict_set_item(p, "PayloadUUID", plist_new_string(uuid));
	plist_dict_set_item(p, "PayloadVersion", plist_new_uint(1));
	return p;
}

/*
 * The same preferences as a configuration profile, forced for the
 * org.metalcap domain as pkg/profiles/org.metalcap.settings.mobileconfig
 * shows: com.apple.ManagedClient.preferences, Forced,
 * mcx_preference_settings.
 */
static plist_t
fleet_mobileconfig(plist_t prefs)
{
	plist_t	top = fleet_payload("metalcap allowlist",
	    "org.metalcap.profile.allowlist", "Configuration");
	plist_t	inner = fleet_payload("org.metalcap",
	    "org.metalcap.profile.allowlist.preferences",
	    "com.apple.ManagedClient.preferences");
	plist_t	forced = plist_new_dict(), domain = plist_new_dict();
	plist_t	settings = plist_new_dict(), list = plist_new_array();
	plist_t	content = plist_new_array();

	plist_dict_set_item(top, "PayloadDescription", plist_new_string(
	    "Where metalcap may unlock: the combinations this fleet's verify "
	    "verdicts allow (metalcapctl fleet allowlist)."));
	plist_dict_set_item(top, "PayloadScope", plist_new_string("System"));
	plist_dict_set_item(settings, "mcx_preference_settings",
	    plist_copy(prefs));
	plist_array_append_item(list, settings);
	plist_dict_set_item(forced, "Forced", list);
	plist_dict_set_item(domain, "org.metalcap", forced);
	plist_dict_set_item(inner, "PayloadContent", domain);
	plist_array_append_item(content, inner);
	plist_dict_set_item(top, "PayloadContent", content);
	return top;
}

/* DIR/org.metalcap.plist and DIR/org.metalcap.allowlist.mobileconfig. */
static int
fleet_write(const char *dir, const struct fleet_verdict *v, size_t n,
    bool local)
{
	plist_t	prefs = fleet_preferences(v, n, local), profile;
	char	path[PATH_MAX], why[PATH_MAX + 64];
	int	rc = 0;

	profile = fleet_mobileconfig(prefs);
	snprintf(why, sizeof why, "path too long");
	if (mc_fmt(path, sizeof path, "%s/org.metalcap.plist", dir) == -1 ||
	    mc_plist_write_atomic(path, prefs, 0644, why, sizeof why) == -1 ||
	    mc_fmt(path, sizeof path, "%s/org.metalcap.allowlist.mobileconfig",
	    dir) == -1 || mc_plist_write_atomic(path, profile, 0644, why,
	    sizeof why) == -1) {
		fprintf(stderr, "metalcapctl: fleet: %s: %s\n", dir, why);
		rc = -1;
	}
	plist_free(prefs);
	plist_free(profile);
	return rc;
}

static void
fleet_json(const struct fleet_verdict *v, size_t n)
{
	json_t	*out = json_array(), *o;
	size_t	 i;
	int	 k;

	for (i = 0; i < n; i++) {
		o = json_pack("{s:b, s:I, s:I, s:I}", "allowed", v[i].allowed,
		    "guests_passed", (json_int_t)v[i].guests_passed, "failed",
		    (json_int_t)v[i].failed, "failed_since_pass",
		    (json_int_t)v[i].failed_since);
		for (k = 0; k < FLEET_KEYS; k++)
			json_object_set_new(o, fleet_columns[k],
			    json_string(v[i].first->key[k]));
		json_array_append_new(out, o);
	}
	json_dumpf(out, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(out);
}

/* By instance id, and of one, the rows with a guest id first. */
static int
fleet_cmp_instance(const void *a, const void *b)
{
	const struct fleet_row	*x = a, *y = b;
	int			 c = strcmp(x->instance, y->instance);

	return c != 0 ? c : (int)y->has_guest - (int)x->has_guest;
}

/*
 * A guest's rows from before its metalcapd gave a guest id (it was
 * upgraded within the window) take the guest id its later rows carry,
 * so that it counts once, not once by each.
 */
static void
fleet_link_guests(struct fleet *f)
{
	size_t	i, j;

	qsort(f->rows, f->nrows, sizeof *f->rows, fleet_cmp_instance);
	for (i = 0; i < f->nrows; i = j)
		for (j = i + 1; j < f->nrows && strcmp(f->rows[j].instance,
		    f->rows[i].instance) == 0; j++)
			if (f->rows[i].has_guest && !f->rows[j].has_guest)
				f->rows[j].guest = f->rows[i].guest;
}

/*
 * One row for each verdict: osquery's snapshot logs give a guest's rows
 * again every run, and a differential log, the rows of before an upgrade
 * again.  Sorted by fleet_cmp, a verdict's copies are neighbours.
 */
static void
fleet_unique(struct fleet *f)
{
	size_t	i, n = 0;

	for (i = 0; i < f->nrows; i++) {
		if (n > 0 && fleet_cmp(&f->rows[n - 1], &f->rows[i]) == 0) {
			json_decref(f->rows[i].src);
			continue;
		}
		f->rows[n++] = f->rows[i];
	}
	f->nrows = n;
}

int
cmd_fleet(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct fleet		 f = { .since = 0 };
	struct fleet_verdict	*v = NULL;
	long			 guests = (c->opts.given & CTL_OPT_GUESTS) ?
	    c->opts.min_guests : FLEET_MIN_GUESTS;
	long			 days = (c->opts.given & CTL_OPT_WINDOW) ?
	    c->opts.window_days : FLEET_WINDOW_DAYS;
	size_t			 n = 0, i, j;
	int			 a, rc = EXIT_FAILURE;

	if (strcmp(argv[0], "allowlist") != 0) {
		fprintf(stderr, "metalcapctl: fleet: unknown subcommand %s\n"
		    "usage: metalcapctl %s\n", argv[0], cmd->usage);
		return EXIT_USAGE;
	}
	f.since = time(NULL) - (time_t)days * 86400;
	for (a = 1; a < argc; a++)
		if (fleet_read(&f, argv[a]) == -1)
			goto out;
	if (f.skipped > 0)
		fprintf(stderr, "metalcapctl: fleet: %ld row(s) skipped\n",
		    f.skipped);
	if (f.nrows == 0) {
		fprintf(stderr, "metalcapctl: fleet: no verdict within the "
		    "last %ld days: nothing to allow\n", days);
		goto out;
	}
	fleet_link_guests(&f);
	qsort(f.rows, f.nrows, sizeof *f.rows, fleet_cmp);
	fleet_unique(&f);
	v = calloc(f.nrows, sizeof *v);
	for (i = 0; i < f.nrows; i = j) {
		for (j = i + 1; j < f.nrows && fleet_same(&f.rows[i],
		    &f.rows[j]); j++)
			;
		fleet_judge(&f.rows[i], &f.rows[j], guests, &v[n++]);
	}
	if (c->json)
		fleet_json(v, n);
	else
		fleet_print(v, n);
	if ((c->opts.given & CTL_OPT_OUT) && fleet_write(c->opts.out, v, n,
	    (c->opts.given & CTL_OPT_LOCAL) != 0) == -1)
		goto out;
	rc = EXIT_SUCCESS;
out:
	for (i = 0; i < f.nrows; i++)
		json_decref(f.rows[i].src);
	free(f.rows);
	free(v);
	return rc;
}
