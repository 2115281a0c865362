/* SPDX-License-Identifier: MIT */
/*
 * Profile auto by measurement.  A raised family makes ggml take other
 * kernels and other tuning (docs/ggml-paths.md): that apple9 is faster
 * than apple7 on this host, or either than stock, is a measurement, not a
 * rank.  So a job of profile auto is measured with llama-bench, its own
 * model and the ggml settings it serves with, once in stock and once in
 * each profile the settings allow whose probe passed (a verify that
 * failed fails the probe: gate.c), and the fastest runs it; a lower one
 * keeps its place unless a higher one is faster by more than the noise.
 *
 * Never while the job serves: the bench and the server would share the
 * GPU, each slowing the other, and a request would wait.  It runs where
 * the job is down anyway, between the bootout of its old agent and the
 * bootstrap of its new one (reconcile.c), and again there whenever the
 * program, the model, the OS build or the shim is not what was measured.
 * A job that serves on when they change says a measurement is due.
 *
 * The figures go to state/measured.json, one entry a job, which job.c
 * reads when it chooses; each measurement's runs and reasoning to the
 * evidence folder state/measured/JOB/.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

/*
 * What a measurement needs: the bench program and the model, as paths;
 * -1 and why not when the job cannot be measured.
 */
int
measure_inputs(const struct job *j, char *bench, char *model, size_t len,
    char *why, size_t whylen)
{
	const struct job_spec	*s = j->spec;
	const char		*slash;

	if (s == NULL || s->argc == 0)
		return (snprintf(why, whylen, "no valid job file"), -1);
	if (!s->measure)
		return (snprintf(why, whylen, "Measure is false in its job "
		    "file"), -1);
	if (jobfile_model(s, model, len) == -1)
		return (snprintf(why, whylen, "no -m or --model among its "
		    "ProgramArguments"), -1);
	slash = strrchr(s->argv[0], '/');
	if (s->bench_program != NULL)
		mc_fmt(bench, len, "%s", s->bench_program);
	else
		mc_fmt(bench, len, "%.*s/llama-bench", slash ? (int)(slash -
		    s->argv[0]) : 1, slash ? s->argv[0] : ".");
	if (access(bench, X_OK) == -1)
		return (snprintf(why, whylen, "no llama-bench to run at %s "
		    "(%s; BenchProgram in the job file names another)", bench,
		    strerror(errno)), -1);
	return 0;
}

/* The job's EnvironmentVariables as "KEY=VALUE", NULL-terminated. */
char **
measure_job_env(const struct job_spec *s)
{
	plist_dict_iter	 it = NULL;
	plist_t		 v;
	char		**out, *k, *val, buf[4096];
	size_t		 n = 0;

	out = calloc((s->env ? plist_dict_get_size(s->env) : 0) + 1,
	    sizeof *out);
	if (s->env == NULL)
		return out;
	plist_dict_new_iter(s->env, &it);
	for (;;) {
		k = NULL;
		plist_dict_next_item(s->env, it, &k, &v);
		if (k == NULL)
			break;
		val = NULL;
		plist_get_string_val(v, &val);
		if (val != NULL && mc_fmt(buf, sizeof buf, "%s=%s", k, val) == 0)
			out[n++] = strdup(buf);
		free(val);
		free(k);
	}
	free(it);
	return out;
}

/* The job's arguments and environment: ggml's settings are among them. */
void
measure_settings(const struct job_spec *s, char *buf, size_t len)
{
	char		**env = measure_job_env(s);
	uint64_t	  h = MC_FNV_START;
	size_t		  i;

	for (i = 0; i < s->argc; i++)
		h = mc_fnv1a(h, s->argv[i], strlen(s->argv[i]) + 1);
	for (i = 0; env[i] != NULL; i++)
		h = mc_fnv1a(h, env[i], strlen(env[i]) + 1);
	mc_strv_free(env);
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/* How the key's file stamps are made (mc_file_stamp), for an upgrade. */
#define MEASURE_STAMPS	"size inode ctime"

/* What the figures are about; NULL and why when it cannot be measured. */
json_t *
measure_key(struct mcd *d, const struct job *j, char *why, size_t whylen)
{
	char	bench[PATH_MAX], model[PATH_MAX], a[160], b[160], c[160];
	char	os[64], shim[160], settings[32];
	struct host_id	host;

	if (measure_inputs(j, bench, model, sizeof bench, why, whylen) == -1)
		return NULL;
	measure_settings(j->spec, settings, sizeof settings);
	mc_file_stamp(j->spec->argv[0], a, sizeof a);
	mc_file_stamp(bench, b, sizeof b);
	mc_file_stamp(model, c, sizeof c);
	mc_file_stamp(d->paths.shim, shim, sizeof shim);
	paths_host(&d->paths, &host);
	snprintf(os, sizeof os, "%s", host.os_build);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
	    "stamps", MEASURE_STAMPS, "program", j->spec->argv[0],
	    "program_file", a, "bench", b, "model", model, "model_file", c,
	    "os", os, "shim", shim, "settings", settings);
}

/* Which of the key's parts differ, for the words "a measurement is due". */
static void
measure_changed(json_t *was, json_t *now, char *buf, size_t len)
{
	static const char *const parts[][2] = {
	    { "program", "the program" }, { "program_file", "the program" },
	    { "bench", "llama-bench" }, { "model", "the model" },
	    { "model_file", "the model" }, { "os", "the OS build" },
	    { "shim", "the shim" },
	    { "settings", "its arguments or environment" } };
	const char	*x, *y, *last = "";
	size_t		 i, n = 0;

	buf[0] = '\0';
	x = json_string_value(json_object_get(was, "stamps"));
	if (x == NULL || strcmp(x, MEASURE_STAMPS) != 0) {
		mc_fmt(buf, len, "it was measured by an older metalcapd, "
		    "whose file stamps this one cannot compare");
		return;
	}
	for (i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		x = json_string_value(json_object_get(was, parts[i][0]));
		y = json_string_value(json_object_get(now, parts[i][0]));
		if (x != NULL && y != NULL && strcmp(x, y) == 0)
			continue;
		if (strcmp(last, parts[i][1]) == 0)
			continue;
		last = parts[i][1];
		n = strlen(buf);
		mc_fmt(buf + n, len - n, "%s%s", n ? ", " : "", last);
	}
	if (buf[0] != '\0') {
		n = strlen(buf);
		mc_fmt(buf + n, len - n, " changed since it was measured");
	}
}

static json_t *
measure_entry(struct mcd *d, const struct job *j)
{
	return json_object_get(d->measured, j->name);
}

/*
 * The profile the job's last measurement says to run among the
 * candidates (highest first), or NULL: for a stock win (*stock), or with
 * no usable measurement (take the highest).  A candidate that failed
 * since is left out, and the rest judged again from their figures.
 */
static const struct profile *
measure_choice(struct mcd *d, struct job *j,
    const struct profile *const *cands, size_t n, bool *stock)
{
	json_t		*e = measure_entry(d, j), *opts;
	const char	*names[MEASURE_OPTIONS_MAX], *best;
	char		 reason[sizeof j->measured];
	size_t		 i;

	*stock = false;
	j->measured[0] = '\0';
	if (e == NULL || (opts = json_object_get(e, "options")) == NULL ||
	    n >= MEASURE_OPTIONS_MAX)
		return NULL;
	names[0] = "stock";
	for (i = 0; i < n; i++) {
		/* One never measured: its place is not known. */
		if (json_object_get(opts, cands[i]->name) == NULL)
			return NULL;
		names[n - i] = cands[i]->name;
	}
	if ((best = measure_pick(opts, names, n + 1, reason,
	    sizeof reason)) == NULL) {
		mc_fmt(j->measured, sizeof j->measured, "measured, no figures "
		    "(%s): the highest runs it", reason);
		return NULL;
	}
	mc_fmt(j->measured, sizeof j->measured, "measured: %s runs it (%s)",
	    best, reason);
	*stock = strcmp(best, "stock") == 0;
	for (i = 0; i < n; i++)
		if (strcmp(cands[i]->name, best) == 0)
			return cands[i];
	return NULL;
}

/*
 * status asks at every job of profile auto whether a measurement is due,
 * and the key behind the answer stats the program, llama-bench, the model
 * and the shim: a hundred such jobs made a status take 2 ms.  So status
 * takes a key at most MEASURE_MEMO_MS old; the choice at a start always
 * reads the files afresh (measure_due), and a new job file drops it.
 */
#define MEASURE_MEMO_MS	1000

struct measure_memo {
	json_t		*key;		/* NULL: cannot be measured, why */
	char		 why[512];
	uint64_t	 at;		/* uv_now when taken */
	bool		 taken;
};

struct measure_memo *
measure_memo_new(void)
{
	return calloc(1, sizeof(struct measure_memo));
}

void
measure_memo_forget(struct measure_memo *m)
{
	if (m == NULL)
		return;
	json_decref(m->key);
	m->key = NULL;
	m->taken = false;
}

void
measure_memo_free(struct measure_memo *m)
{
	measure_memo_forget(m);
	free(m);
}

/* The key, fresh or (status) recent; a reference the caller drops. */
static json_t *
measure_key_memo(struct mcd *d, const struct job *j, bool fresh, char *why,
    size_t whylen)
{
	struct measure_memo	*m = j->memo;
	uint64_t		 now = uv_now(d->loop);

	if (m == NULL)
		return measure_key(d, j, why, whylen);
	if (fresh || !m->taken || now - m->at >= MEASURE_MEMO_MS) {
		json_decref(m->key);
		m->key = measure_key(d, j, m->why, sizeof m->why);
		m->at = now;
		m->taken = true;
	}
	if (m->key == NULL)
		mc_fmt(why, whylen, "%s", m->why);
	return json_incref(m->key);
}

/*
 * Is a measurement due for j?  Only for a job of profile auto that asks
 * to unlock and has a profile to choose: why it is due (true), or why it
 * cannot be measured (false), in buf; "" when the figures stand.  fresh:
 * the files as they are now, else as status may see them (above).
 */
bool
measure_due_why(struct mcd *d, const struct job *j, bool fresh, char *buf,
    size_t len)
{
	const struct profile	*cands[MEASURE_OPTIONS_MAX];
	json_t			*key, *e, *opts;
	char			 why[512];
	size_t			 n, i;

	buf[0] = '\0';
	if (!j->auto_asked || j->measuring || (n = measure_candidates(d, cands,
	    MEASURE_OPTIONS_MAX - 1, NULL, 0)) == 0)
		return false;
	if ((key = measure_key_memo(d, j, fresh, why, sizeof why)) == NULL) {
		mc_fmt(buf, len, "not measured: %s", why);
		return false;
	}
	e = measure_entry(d, j);
	opts = json_object_get(e, "options");
	if (e == NULL)
		snprintf(why, sizeof why, "never measured");
	else
		measure_changed(json_object_get(e, "key"), key, why,
		    sizeof why);
	for (i = 0; why[0] == '\0' && i < n; i++)
		if (json_object_get(opts, cands[i]->name) == NULL)
			snprintf(why, sizeof why, "%s was not among the "
			    "profiles measured", cands[i]->name);
	json_decref(key);
	mc_fmt(buf, len, "%s", why);
	return why[0] != '\0';
}

bool
measure_due(struct mcd *d, struct job *j)
{
	return measure_due_why(d, j, true, j->measure_due,
	    sizeof j->measure_due);
}

/* --- profile auto's choice ------------------------------------------------ */

/* What is in force: unusable settings and ForceStock bar every profile. */
static bool
measure_barred(const struct mcd *d)
{
	return d->managed.error[0] != '\0' || d->managed.force_stock;
}

/*
 * Profile auto's candidates: the shipped profiles from the highest family
 * down, each allowed by the managed settings, whose probe on this guest
 * has not failed (one not probed yet is one: it is probed, and a failure
 * moves the job down: driver_auto).  None under ForceStock or unusable
 * settings.  Why each one above the first candidate was passed over goes
 * into note (NULL: nowhere).
 */
size_t
measure_candidates(struct mcd *d, const struct profile **out, size_t max,
    char *note, size_t len)
{
	const struct profile	*p = NULL;
	const struct gate_entry	*v;
	const char		*key;
	char			 spare[8];
	size_t			 n = 0, at;

	if (note == NULL) {
		note = spare;
		len = sizeof spare;
	}
	note[0] = '\0';
	if (measure_barred(d)) {
		mc_fmt(note, len, "%s", d->managed.error[0] ?
		    "managed settings unusable" : "managed setting ForceStock");
		return 0;
	}
	while ((p = profile_next_shipped(&d->profiles, p)) != NULL &&
	    n < max) {
		/* Only those above the first candidate are passed over. */
		at = n ? len - 1 : strlen(note);
		if ((key = managed_forbids(&d->managed, &d->profiles,
		    p->name)) != NULL) {
			mc_fmt(note + at, len - at, "%s%s is not allowed (%s)",
			    at ? "; " : "", p->name, key);
			continue;
		}
		v = gate_peek(d, p);
		if (v == NULL ? !gate_failed_last(d, p) :
		    v->status != GATE_FAIL) {
			out[n++] = p;
			continue;
		}
		mc_fmt(note + at, len - at, "%s%s failed the probe%s%s",
		    at ? "; " : "", p->name, v ? ": " : " (probed again now)",
		    v ? v->reason : "");
	}
	return n;
}

/*
 * Profile auto: the candidate its measurement found fastest (measure.c),
 * else the highest.  NULL when there is none, or when stock measured
 * fastest (j->auto_stock).
 */
const struct profile *
measure_auto(struct mcd *d, struct job *j)
{
	const struct profile	*cands[MEASURE_OPTIONS_MAX], *p;
	size_t			 n;

	j->auto_stock = false;
	j->measured[0] = '\0';
	n = measure_candidates(d, cands, MEASURE_OPTIONS_MAX - 1,
	    j->auto_note, sizeof j->auto_note);
	/* Every one failed: probed again in a while (gate.c). */
	gate_auto_wait(d, n == 0 && !measure_barred(d));
	if (n == 0)
		return NULL;
	if ((p = measure_choice(d, j, cands, n, &j->auto_stock)) != NULL ||
	    j->auto_stock)
		return p;
	return cands[0];
}

/* --- the record ------------------------------------------------------------ */

#define MEASURE_FILE	"measured.json"

/* state/measured.json, or an empty record: figures lost are measured again. */
json_t *
measure_load(const struct paths *p)
{
	char		path[PATH_MAX];
	json_error_t	err;
	json_t		*all;

	mc_fmt(path, sizeof path, "%s/%s", p->state, MEASURE_FILE);
	all = json_load_file(path, 0, &err);
	if (all == NULL && access(path, F_OK) == 0)
		log_warnx("%s: %s (line %d): profile auto measures again",
		    path, err.text, err.line);
	if (all != NULL && !json_is_object(all)) {
		log_warnx("%s: not an object: profile auto measures again",
		    path);
		json_decref(all);
		all = NULL;
	}
	return all != NULL ? all : json_object();
}

void
measure_save(struct mcd *d)
{
	char	path[PATH_MAX], why[256], *text;

	mc_fmt(path, sizeof path, "%s/%s", d->paths.state, MEASURE_FILE);
	text = json_dumps(d->measured, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (text == NULL || mc_write_atomic(path, text, strlen(text), 0600,
	    why, sizeof why) == -1)
		log_warnx("profile auto's figures not saved (measured again "
		    "after a restart): %s", text ? why : "out of memory");
	free(text);
}

/* A job gone for good takes its figures along. */
void
measure_forget(struct mcd *d, const struct job *j)
{
	if (json_object_del(d->measured, j->name) == 0)
		measure_save(d);
}

/*
 * A run of the job's as measured or asked (ident.c): the profile's shim
 * variables (none for NULL), as the probe has them, then the job's own
 * EnvironmentVariables (ggml's GGML_* settings), less any shim variable
 * of its own.  NULL when a path does not fit.
 */
char **
measure_env(struct mcd *d, const struct job_spec *spec,
    const struct profile *p)
{
	const char	*inject = platform_inject_var();
	char		**env = gate_env(d->paths.shim, p, false, NULL);
	char		**own = measure_job_env(spec);
	size_t		 have, i, n;

	if (env == NULL) {
		mc_strv_free(own);
		return NULL;
	}
	for (have = 0; env[have] != NULL; have++)
		;
	for (n = 0; own[n] != NULL; n++)
		;
	env = realloc(env, (have + n + 1) * sizeof *env);
	for (i = 0; i < n; i++) {
		if (strncmp(own[i], "METALCAP_", 9) == 0 ||
		    (strncmp(own[i], inject, strlen(inject)) == 0 &&
		    own[i][strlen(inject)] == '=')) {
			free(own[i]);
			continue;
		}
		env[have++] = own[i];
	}
	env[have] = NULL;
	free(own);
	return env;
}
