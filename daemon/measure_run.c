/* SPDX-License-Identifier: MIT */
/*
 * One measurement of a job of profile auto (measure.c says when): each
 * option, stock first, then the candidates from the lowest, probed if
 * it was not (an unproven profile is never benchmarked) and run through
 * llama-bench with the job's model and environment; the figures saved,
 * the evidence written, and the job handed back to the reconciler.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_bench.h"
#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

/* Short: a few seconds of a real model on a Mac, as bench's quick run. */
#define MEASURE_PROMPT		"64"
#define MEASURE_GENERATE	"16"
#define MEASURE_REPS		"3"
/* A cold load of a multi-gigabyte model, and its first Metal compile. */
#define MEASURE_RUN_MS		600000
#define MEASURE_TESTS		4

struct measure_option {
	bool			 stock;
	/* By name: a rescan frees the profile table under a long run. */
	char			 name[MC_NAME_MAX + 1];
	bool			 ok;
	char			 error[256];
	struct mc_bench_test	*tests[MEASURE_TESTS];
	size_t			 ntests;
};

struct measure {
	struct mcd		*d;
	struct job		*j;		/* NULL: the job went meanwhile */
	measure_done_fn		 done;
	json_t			*key;
	char			 bench[PATH_MAX];
	char			 model[PATH_MAX];
	char			 dir[PATH_MAX];	/* the evidence folder */
	struct measure_option	 options[MEASURE_OPTIONS_MAX];
	size_t			 n, at;
	bool			 ident_wait;	/* for the job's identity */
	bool			 ident_asked;	/* once a measurement */
};

static void	measure_next(struct measure *);
static void	measure_ident_read(struct job *);

static void
measure_free(struct measure *m)
{
	size_t	i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->options[i].ntests; k++)
			free(m->options[i].tests[k]);
	json_decref(m->key);
	free(m);
}

/* The job went while its measurement ran: nothing to hand it. */
void
measure_cancel(struct job *j)
{
	if (j->measure != NULL)
		j->measure->j = NULL;
	j->measure = NULL;
}

static void
measure_file(struct measure *m, const char *name, const char *text)
{
	char	path[PATH_MAX], why[256];

	if (mc_fmt(path, sizeof path, "%s/%s", m->dir, name) == -1)
		mc_fmt(why, sizeof why, "%s/%s: path too long", m->dir, name);
	else if (mc_write_atomic(path, text, strlen(text), 0644, why,
	    sizeof why) == 0)
		return;
	log_warnx("job %s: measurement evidence: %s", m->j->name, why);
}

/* The evidence folder, emptied of an earlier measurement's files. */
static int
measure_folder(struct measure *m)
{
	char		 path[PATH_MAX], why[256];
	DIR		*dir;
	struct dirent	*de;
	const char	*dot;

	dir = NULL;
	if (mc_fmt(path, sizeof path, "%s/measured", m->d->paths.state) ==
	    -1 || mc_fmt(m->dir, sizeof m->dir, "%s/%s", path, m->j->name) ==
	    -1)
		mc_fmt(why, sizeof why, "%s/measured/%s: path too long",
		    m->d->paths.state, m->j->name);
	else if (paths_mkdir(path, 0700, why, sizeof why) == 0 &&
	    paths_mkdir(m->dir, 0700, why, sizeof why) == 0 &&
	    (dir = opendir(m->dir)) == NULL)
		mc_fmt(why, sizeof why, "%s: %s", m->dir, strerror(errno));
	if (dir == NULL) {
		log_warnx("job %s: no evidence folder for its measurement: %s",
		    m->j->name, why);
		m->dir[0] = '\0';
		return -1;
	}
	while ((de = readdir(dir)) != NULL)
		if ((dot = strrchr(de->d_name, '.')) != NULL &&
		    (strcmp(dot, ".json") == 0 || strcmp(dot, ".stderr") ==
		    0 || strcmp(dot, ".md") == 0))
			unlinkat(dirfd(dir), de->d_name, 0);
	closedir(dir);
	return 0;
}

/* One run's figures kept, or why it gave none. */
static void
measure_ran(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct measure		*m = arg;
	struct measure_option	*o = &m->options[m->at];
	struct mc_bench_run	*run;
	char			 name[MC_NAME_MAX + 16];
	size_t			 i;

	(void)d;
	if (m->j == NULL) {
		measure_free(m);
		return;
	}
	snprintf(name, sizeof name, "%s.json", o->name);
	measure_file(m, name, r->out);
	snprintf(name, sizeof name, "%s.stderr", o->name);
	measure_file(m, name, r->err);
	run = calloc(1, sizeof *run);
	if (r->code != 0)
		mc_fmt(o->error, sizeof o->error, "llama-bench %s%s%s",
		    r->signal ? "was killed" : r->code == -1 ?
		    "did not finish in time or could not run" : "failed",
		    r->err[0] ? ": " : "", r->err);
	else if (mc_bench_parse(r->out, run, o->error, sizeof o->error) == 0) {
		for (i = 0; i < run->ntests && i < MEASURE_TESTS; i++) {
			o->tests[i] = malloc(sizeof *o->tests[i]);
			*o->tests[i] = run->tests[i];
		}
		o->ntests = i;
		o->ok = o->ntests > 0;
	}
	mc_text(o->error, sizeof o->error, o->error);
	free(run);
	m->at++;
	measure_next(m);
}

/* Run llama-bench on option o: its env as the job's agent gives it. */
static void
measure_run_one(struct measure *m, struct measure_option *o)
{
	char	*argv[] = { m->bench, "-m", m->model, "-p", MEASURE_PROMPT,
	    "-n", MEASURE_GENERATE, "-r", MEASURE_REPS, "-o", "json", NULL };
	const struct profile *p = o->stock ? NULL :
	    profile_find(&m->d->profiles, o->name);
	char	**env = measure_env(m->d, m->j->spec, p);

	log_info("job %s: measuring %s with %s", m->j->name, o->name,
	    m->bench);
	if (env == NULL) {
		static struct launchctl_result none = { .code = -1,
		    .err = "its environment does not fit" };

		measure_ran(m->d, &none, m);
		return;
	}
	proc_run(m->d, argv, env, MEASURE_RUN_MS, measure_ran, m);
	mc_strv_free(env);
}

/* Each option's probe first: an unproven profile is never benchmarked. */
static void
measure_probed(struct mcd *d, const struct gate_entry *e, void *arg)
{
	struct measure	*m = arg;

	(void)d;
	(void)e;
	if (m->j == NULL) {
		measure_free(m);
		return;
	}
	measure_next(m);
}

static bool
measure_probe_first(struct measure *m, struct measure_option *o)
{
	const struct gate_entry	*v;
	const struct profile	*p;

	if (o->stock)
		return false;
	/*
	 * An allowlist judges by the identity: read first, as it stands,
	 * once (files that change on every read cannot hold it up).
	 */
	if (!m->ident_asked && ident_read(m->d, m->j, measure_ident_read)) {
		m->ident_asked = true;
		m->ident_wait = true;
		return true;
	}
	/*
	 * Gone since, or no longer allowed here (managed settings pushed
	 * meanwhile, an allowlist): never benchmarked with the shim.
	 */
	if ((p = profile_find(&m->d->profiles, o->name)) == NULL ||
	    managed_forbids(&m->d->managed, &m->d->profiles, p->name) !=
	    NULL || !ident_allows(m->d, m->j, p)) {
		snprintf(o->error, sizeof o->error, "%s", p == NULL ?
		    "no such profile any more" : "not allowed here now");
		m->at++;
		measure_next(m);
		return true;
	}
	if ((v = gate_peek(m->d, p)) == NULL) {
		gate_wait(m->d, p, measure_probed, m);
		return true;
	}
	if (v->status == GATE_FAIL) {
		mc_fmt(o->error, sizeof o->error, "failed its probe: %s",
		    v->reason);
		m->at++;
		measure_next(m);
		return true;
	}
	return false;
}

static void	measure_decide(struct measure *);

/* The job's identity is read (or could not be): its measurement goes on. */
static void
measure_ident_read(struct job *j)
{
	struct measure	*m = j->measure;

	if (m == NULL || !m->ident_wait)
		return;
	m->ident_wait = false;
	measure_next(m);
}

static void
measure_next(struct measure *m)
{
	struct measure_option	*o;

	/* Its file went, or turned invalid, meanwhile: no more runs, and
	 * nothing to record (a valid file is measured anew). */
	if (m->j->removed || m->j->spec == NULL) {
		log_info("job %s: its file went while it was measured: no "
		    "more runs", m->j->name);
		m->j->measure = NULL;
		m->j->measuring = false;
		m->done(m->d, m->j);
		measure_free(m);
		return;
	}
	if (m->at == m->n) {
		measure_decide(m);
		return;
	}
	o = &m->options[m->at];
	if (measure_probe_first(m, o))
		return;
	measure_run_one(m, o);
}

/*
 * Start measuring j, which is down, and call done when the figures are
 * in (not when the job went meanwhile).  The options: stock, then the
 * candidates profile auto has (lowest first).
 */
void
measure_run(struct mcd *d, struct job *j, measure_done_fn done)
{
	const struct profile	*cands[MEASURE_OPTIONS_MAX];
	struct measure		*m = calloc(1, sizeof *m);
	char			 why[256];
	size_t			 n, i;

	m->d = d;
	m->j = j;
	m->done = done;
	m->key = measure_key(d, j, why, sizeof why);
	(void)measure_inputs(j, m->bench, m->model, sizeof m->bench, why,
	    sizeof why);
	n = measure_candidates(d, cands, MEASURE_OPTIONS_MAX - 1, NULL, 0);
	snprintf(m->options[0].name, sizeof m->options[0].name, "stock");
	m->options[0].stock = true;
	for (i = 0; i < n; i++)
		snprintf(m->options[i + 1].name, sizeof m->options[i + 1].name,
		    "%s", cands[n - 1 - i]->name);
	m->n = n + 1;
	j->measure = m;
	j->measuring = true;
	log_info("job %s: profile auto: measuring %zu options (%s)", j->name,
	    m->n, j->measure_due);
	if (m->key == NULL || measure_folder(m) == -1) {
		m->at = m->n;
		snprintf(m->options[0].error, sizeof m->options[0].error,
		    "%s", m->key == NULL ? why : "no evidence folder");
	}
	measure_next(m);
}


/* An option's figures as the record keeps them. */
static json_t *
measure_option_json(const struct measure_option *o)
{
	json_t	*tests;
	size_t	 i;

	if (!o->ok)
		return json_pack("{s:s}", "error", o->error[0] ? o->error :
		    "no test in llama-bench's output");
	tests = json_object();
	for (i = 0; i < o->ntests; i++)
		json_object_set_new(tests, o->tests[i]->name, json_pack(
		    "{s:f, s:f, s:f, s:I}", "median", o->tests[i]->median,
		    "lo", o->tests[i]->lo, "hi", o->tests[i]->hi, "samples",
		    (json_int_t)o->tests[i]->nsamples));
	return json_pack("{s:o}", "tests", tests);
}

/* metadata.md: what was run, on what, and what came of it. */
static void
measure_metadata(struct measure *m, json_t *e)
{
	char		 text[8192];
	const char	*k;
	json_t		*v;
	size_t		 i, n;

	n = (size_t)snprintf(text, sizeof text, "# Profile auto: job %s\n\n"
	    "Command, once per option, the profile's shim environment "
	    "added:\n\n    %s -m %s -p %s -n %s -r %s -o json\n\n## "
	    "What was measured\n\n", m->j->name, m->bench, m->model,
	    MEASURE_PROMPT, MEASURE_GENERATE, MEASURE_REPS);
	json_object_foreach(json_object_get(e, "key"), k, v)
		if (n < sizeof text)
			n += (size_t)snprintf(text + n, sizeof text - n,
			    "- %s: %s\n", k, json_string_value(v));
	for (i = 0; i < m->n && n < sizeof text; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s- %s: %s\n",
		    i ? "" : "\n## Options\n\n", m->options[i].name,
		    m->options[i].ok ? "figures in its .json" :
		    m->options[i].error);
	if (n < sizeof text)
		snprintf(text + n, sizeof text - n, "\n## Choice\n\n%s\n\n%s\n",
		    json_string_value(json_object_get(e, "choice")) ?
		    json_string_value(json_object_get(e, "choice")) :
		    "none: the highest profile runs it",
		    json_string_value(json_object_get(e, "reason")));
	measure_file(m, "metadata.md", text);
}

static void
measure_decide(struct measure *m)
{
	struct mcd	*d = m->d;
	struct job	*j = m->j;
	json_t		*e, *opts = json_object();
	const char	*names[MEASURE_OPTIONS_MAX], *best;
	char		 reason[1024];
	size_t		 i;

	for (i = 0; i < m->n; i++) {
		names[i] = m->options[i].name;
		json_object_set_new(opts, names[i],
		    measure_option_json(&m->options[i]));
	}
	best = measure_pick(opts, names, m->n, reason, sizeof reason);
	e = json_pack("{s:O?, s:I, s:o, s:s?, s:s, s:s}", "key", m->key,
	    "time", (json_int_t)time(NULL), "options", opts, "choice", best,
	    "reason", reason, "evidence", m->dir);
	log_info("job %s: profile auto measured: %s (%s)", j->name,
	    best ? best : "no figures", reason);
	if (m->key != NULL) {
		json_object_set(d->measured, j->name, e);
		measure_save(d);
	}
	if (m->dir[0] != '\0')
		measure_metadata(m, e);
	json_decref(e);
	j->measure = NULL;
	j->measuring = false;
	m->done(d, j);
	measure_free(m);
}

