/* SPDX-License-Identifier: MIT */
/*
 * What an allowlist (UnlockOnlyWhere, policy/allow.c) judges a job by,
 * beyond the guest and the profile: the llama.cpp build its program says
 * it is (PROGRAM --version, as verify asks llama-perplexity) and its
 * model's SHA-256.  Both are read once per program and model file (their
 * stamps), off the loop: a model of gigabytes is hashed in libuv's
 * thread pool, the program run as any helper (proc_run).  Meanwhile the
 * job waits as for the probe gate: an unlocked run never starts before
 * the allowlist could judge it (driver.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_sha256.h"
#include "mc_util.h"
#include "mcd.h"

#define IDENT_VERSION_MS	30000

struct ident_work {
	uv_work_t	 req;
	struct mcd	*d;
	struct job	*j;		/* NULL: the job went meanwhile */
	char		 program[PATH_MAX];
	char		 model[PATH_MAX];	/* "": none named */
	char		 stamp[sizeof ((struct job *)0)->ident_stamp];
	char		 sha[MC_SHA256_HEX];
	char		 why[256];
	ident_read_fn	 then;		/* told when read, or NULL */
};

/*
 * The program and the model as they are on disk now, and the job's
 * arguments and environment, which its run, --version included, has:
 * hashed, as two paths may fill any buffer the parts would be cut to
 * (and a model's change time, last, cut off).
 */
static void
ident_stamp(const struct job *j, char *model, size_t mlen, char *buf,
    size_t len)
{
	char	a[160], b[160], settings[32], text[2 * PATH_MAX + 400];
	char	hex[MC_SHA256_HEX];

	if (jobfile_model(j->spec, model, mlen) == -1)
		model[0] = '\0';
	mc_file_stamp(j->spec->argv[0], a, sizeof a);
	if (model[0] != '\0')
		mc_file_stamp(model, b, sizeof b);
	else
		snprintf(b, sizeof b, "none");
	measure_settings(j->spec, settings, sizeof settings);
	snprintf(text, sizeof text, "%s: %s; %s: %s; settings %s",
	    j->spec->argv[0], a, model, b, settings);
	if (mc_sha256_text(text, hex) == -1)
		hex[0] = '\0';		/* unknown: never current */
	snprintf(buf, len, "%s", hex);
}

/* Was the job's identity read from its program and model as they are? */
static bool
ident_current(const struct job *j)
{
	char	model[PATH_MAX], stamp[sizeof j->ident_stamp];

	if (!j->ident_known || j->ident != NULL)
		return false;
	ident_stamp(j, model, sizeof model, stamp, sizeof stamp);
	return stamp[0] != '\0' && strcmp(stamp, j->ident_stamp) == 0;
}

/* Must the job wait for its identity (job_effective said so)? */
bool
ident_pending(struct mcd *d, const struct job *j)
{
	(void)d;
	return j->ident_wait;
}

void
ident_cancel(struct job *j)
{
	if (j->ident != NULL)
		j->ident->j = NULL;
	j->ident = NULL;
}

/* In the thread pool: the model's bytes, hashed. */
static void
ident_hash(uv_work_t *req)
{
	struct ident_work	*w = req->data;

	if (w->model[0] != '\0' && mc_sha256_file(w->model, w->sha, w->why,
	    sizeof w->why) == -1)
		w->sha[0] = '\0';
}

/* --version answered: the identity is known; the job is judged again. */
static void
ident_versioned(struct mcd *d, const struct launchctl_result *r, void *arg)
{
	struct ident_work	*w = arg;
	struct job		*j = w->j;
	struct mcd_event	 ev = { .type = LC_EV_MANAGED };

	if (j != NULL) {
		/* llama.cpp says it on stderr (common/arg.cpp's --version). */
		if (mc_llama_build(r->err, j->llama_build,
		    sizeof j->llama_build) == -1 && mc_llama_build(r->out,
		    j->llama_build, sizeof j->llama_build) == -1)
			j->llama_build[0] = '\0';
		snprintf(j->model_sha256, sizeof j->model_sha256, "%s",
		    w->sha);
		snprintf(j->ident_stamp, sizeof j->ident_stamp, "%s",
		    w->stamp);
		j->ident_known = true;
		j->ident = NULL;
		if (j->llama_build[0] == '\0')
			log_warnx("job %s: %s --version says no llama.cpp build "
			    "(status %d): %.200s", j->name, w->program, r->code,
			    r->err[0] ? r->err : r->out);
		log_info("job %s: llama.cpp %s, model %s%s%s", j->name,
		    j->llama_build[0] ? j->llama_build : "build not said",
		    w->sha[0] ? w->sha : "not hashed", w->why[0] ? ": " : "",
		    w->why);
		ev.job = j;
		if (w->then != NULL)
			w->then(j);
		d->emit(d, &ev);
	}
	free(w);
}

/* The model hashed: the program asked, in the job's environment. */
static void
ident_hashed(uv_work_t *req, int status)
{
	struct ident_work	*w = req->data;
	char			*argv[] = { w->program, "--version", NULL };
	char			**env;

	(void)status;
	if (w->j == NULL || w->j->spec == NULL) {
		/* Gone, or its file turned invalid meanwhile: read anew. */
		if (w->j != NULL) {
			w->j->ident = NULL;
			if (w->then != NULL)
				w->then(w->j);
		}
		free(w);
		return;
	}
	env = measure_env(w->d, w->j->spec, NULL);
	proc_run(w->d, argv, env, IDENT_VERSION_MS, ident_versioned, w);
	mc_strv_free(env);
}

/* Read the job's identity if unlocking waits for it. */
void
ident_start(struct mcd *d, struct job *j)
{
	if (j->ident_wait)
		(void)ident_read(d, j, NULL);
}

/*
 * Under an allowlist, read the job's identity unless it is current:
 * true while it is read (under way already, or now), and then, if not
 * NULL, is told when it is (a measurement waiting for it).
 * A job that runs stock never waits for it, yet its next measurement
 * needs it to know which profiles it may benchmark (issue 48, 1).
 */
bool
ident_read(struct mcd *d, struct job *j, ident_read_fn then)
{
	struct ident_work	*w;

	if (d->managed.unlock_only_where == NULL || j->spec == NULL ||
	    ident_current(j))
		return false;
	if (j->ident != NULL) {
		if (then != NULL)
			j->ident->then = then;
		return true;
	}
	w = calloc(1, sizeof *w);
	w->then = then;
	w->d = d;
	w->j = j;
	w->req.data = w;
	snprintf(w->program, sizeof w->program, "%s", j->spec->argv[0]);
	ident_stamp(j, w->model, sizeof w->model, w->stamp, sizeof w->stamp);
	j->ident = w;
	uv_queue_work(d->loop, &w->req, ident_hash, ident_hashed);
	return true;
}

/* The combination a run of j on p would be, by its identity as read. */
static void
ident_combo(struct mcd *d, const struct job *j, const struct profile *p,
    struct host_id *h, struct allow_combo *c)
{
	paths_host(&d->paths, h);
	c->value[0] = p->name;
	c->value[1] = j->llama_build;
	c->value[2] = j->model_sha256;
	c->value[3] = h->os_build;
	c->value[4] = h->cpu_brand;
	c->value[5] = h->hw_model;
	c->value[6] = MC_VERSION;
}

/*
 * May j run unlocked on p here?  True without an allowlist; with one,
 * only by its identity as read from its files as they are now (not read
 * yet: no).  why, if not NULL, says which key did not match.
 */
bool
ident_allows(struct mcd *d, const struct job *j, const struct profile *p)
{
	struct allow_combo	c;
	struct host_id		h;
	char			why[400];

	if (d->managed.unlock_only_where == NULL)
		return true;
	if (!ident_current(j))
		return false;
	ident_combo(d, j, p, &h, &c);
	return allow_check(&d->managed, &c, d->verified, why, sizeof why);
}

/*
 * The allowlist applied to a job that would unlock (unlocking, as
 * job_runs_unlocked says): with its identity read, stock where no entry
 * matches, saying which key did not; profile auto first steps down to
 * the highest candidate the list allows.  Without its identity, the job
 * waits for it (j->ident_wait).
 */
void
ident_allow(struct mcd *d, struct job *j, bool unlocking)
{
	const struct profile	*cands[MEASURE_OPTIONS_MAX];
	struct allow_combo	 c;
	struct host_id		 h;
	char			 why[400];
	size_t			 n, i;

	j->ident_wait = false;
	if (d->managed.unlock_only_where == NULL || !unlocking)
		return;
	/* Not read yet, or read from files since replaced: it waits. */
	if (!ident_current(j)) {
		j->ident_wait = true;
		return;
	}
	ident_combo(d, j, j->profile, &h, &c);
	if (allow_check(&d->managed, &c, d->verified, why, sizeof why))
		return;
	if (j->auto_profile) {
		n = measure_candidates(d, cands, MEASURE_OPTIONS_MAX - 1, NULL,
		    0);
		for (i = 0; i < n; i++)
			if (ident_allows(d, j, cands[i])) {
				j->profile = cands[i];
				return;
			}
	}
	j->unlocked = false;
	mc_fmt(j->stock_note, sizeof j->stock_note, "not allowed here: %s: "
	    "running stock", why);
}
