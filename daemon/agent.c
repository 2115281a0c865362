/* SPDX-License-Identifier: MIT */
/*
 * A job's LaunchAgent: where launchd knows it (its domain and target),
 * the file rendered for it, and state/loaded/LABEL, the record of what a
 * bootstrap last gave launchd.  reconcile.c decides what to do with them;
 * this file only renders, writes, reads back and calls launchctl.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

/*
 * A booted-out process gets SIGTERM at once and SIGKILL after the agent's
 * ExitTimeOut, 5 s when it has none (launchd.md; core.c job_stop).
 */
#define EXIT_TIMEOUT_DEFAULT_S	5
#define EXIT_TIMEOUT_MAX_S	600	/* 0 is "infinity": wait this long */

/*
 * The job's domain: where it was loaded, remembered across restarts in
 * state/loaded (launchd keeps gui/UID and user/UID apart, so a job looked
 * for in the wrong one is "not loaded" and would be loaded twice); the
 * daemon's preferred one for a job not loaded anywhere yet.
 */
const char *
agent_domain(struct mcd *d, struct job *j)
{
	return j->domain[0] != '\0' ? j->domain : d->domain;
}

static void
agent_target(struct mcd *d, struct job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", agent_domain(d, j), j->label);
}

void
agent_path(struct mcd *d, struct job *j, char *buf, size_t len)
{
	mc_fmt(buf, len, "%s/%s.plist", d->paths.agents, j->label);
}

/* launchctl VERB <domain>/<label>, answered to cb. */
void
agent_launchctl(struct mcd *d, struct job *j, const char *verb,
    launchctl_cb cb)
{
	char		 target[256];
	const char	*args[] = { verb, target, NULL };

	agent_target(d, j, target, sizeof target);
	launchctl_run(d, args, cb, j);
}

/*
 * What launchd was last given for a job: state/loaded/LABEL holds the hash
 * of the agent a bootstrap succeeded with, written after it did.  The
 * agent file alone cannot tell: a daemon killed between writing it and
 * bootstrapping it would find the file right and the job wrong.
 */
static void
agent_loaded_path(struct mcd *d, struct job *j, char *buf, size_t len)
{
	mc_fmt(buf, len, "%s/loaded/%s", d->paths.state, j->label);
}

/*
 * "HASH DOMAIN RUNS STOPS LOOKED": what launchd was given and where, then
 * how many of that registration's runs were judged, how many of their
 * exits were our own restarts still to come, and when (time()) launchd
 * was asked.  An older record ends sooner: the hash alone is the
 * daemon's domain, without the counts they are not known.
 */
struct agent_record {
	unsigned long long	hash;
	char			domain[32];
	long			runs, stops, looked;
	int			fields;		/* how many were read */
};

static void
agent_record_read(struct mcd *d, struct job *j, struct agent_record *r)
{
	char	path[PATH_MAX];
	FILE	*f;

	memset(r, 0, sizeof *r);
	agent_loaded_path(d, j, path, sizeof path);
	if ((f = fopen(path, "r")) == NULL)
		return;
	r->fields = fscanf(f, "%16llx %31s %ld %ld %ld", &r->hash, r->domain,
	    &r->runs, &r->stops, &r->looked);
	fclose(f);
	if (r->fields < 1) {
		r->fields = 0;
		r->hash = 0;
	}
}

static void
agent_record_write(struct mcd *d, struct job *j, unsigned long long hash,
    const char *domain)
{
	char	path[PATH_MAX], text[160], why[256];
	int	n;

	agent_loaded_path(d, j, path, sizeof path);
	n = snprintf(text, sizeof text, "%016llx %s %ld %ld %ld\n", hash,
	    domain, j->runs_counted, j->own_stops, j->looked_at);
	if (mc_write_atomic(path, text, (size_t)n, 0644, why, sizeof why) == -1)
		log_warnx("job %s: %s", j->name, why);
}

uint64_t
agent_loaded_hash(struct mcd *d, struct job *j)
{
	struct agent_record	r;

	agent_record_read(d, j, &r);
	if (j->domain[0] == '\0' && (strncmp(r.domain, "gui/", 4) == 0 ||
	    strncmp(r.domain, "user/", 5) == 0))
		snprintf(j->domain, sizeof j->domain, "%s", r.domain);
	return (uint64_t)r.hash;
}

/* A bootstrap succeeded: its counts start afresh (reconcile.c). */
void
agent_mark_loaded(struct mcd *d, struct job *j)
{
	agent_record_write(d, j, j->rendered_hash, agent_domain(d, j));
}

/*
 * The counts of the registration metalcapd finds loaded, once, at its
 * start: a registration it did not record (none, or one from before
 * counts were kept) has its runs so far taken as judged (reconcile.c).
 */
void
agent_read_counts(struct mcd *d, struct job *j)
{
	struct agent_record	r;

	j->counts_read = true;
	agent_record_read(d, j, &r);
	if (r.fields == 0)
		return;
	if (r.fields < 5 || r.runs < 0 || r.stops < 0 || r.looked < 0) {
		j->runs_counted = -1;
		return;
	}
	j->runs_counted = r.runs;
	j->own_stops = r.stops;
	j->looked_at = r.looked;
}

/* The counts changed: kept with the registration they count. */
void
agent_save_counts(struct mcd *d, struct job *j)
{
	struct agent_record	r;

	agent_record_read(d, j, &r);
	if (r.fields == 0 || j->runs_counted < 0)
		return;
	agent_record_write(d, j, r.hash, r.fields > 1 ? r.domain :
	    agent_domain(d, j));
}

/*
 * Would launchd take the agent file?  It refuses one that is group- or
 * world-writable or owned by another user (launchctl(1)); written anew,
 * ours is neither.
 */
bool
agent_ok(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && !(sb.st_mode & (S_IWGRP | S_IWOTH)) &&
	    (sb.st_uid == 0 || sb.st_uid == geteuid());
}

/*
 * Render the agent and write it if it differs from what is installed or
 * from what launchd was last given (j->changed).  -1 and why if it could
 * not be written.
 */
int
agent_render(struct mcd *d, struct job *j, char *why, size_t whylen)
{
	struct render_input	 in = { j->name, j->spec, NULL, &d->paths };
	char			 path[PATH_MAX], unread[256], *xml, *old = NULL;
	plist_t			 agent, installed = NULL;
	size_t			 len, oldlen = 0;
	int			 rc = 0;
	struct profile		 partial;

	in.profile = job_runs_unlocked(j) ? j->profile : NULL;
	/* A partial verdict keeps the family override only. */
	if (in.profile != NULL && j->drop_tg) {
		partial = *in.profile;
		partial.threadgroup_memory = 0;
		in.profile = &partial;
	}
	agent = render_agent(d->job_template, &in);
	xml = render_xml(agent, &len);
	plist_free(agent);
	agent_path(d, j, path, sizeof path);
	if (mc_plist_read_file(path, &installed, unread, sizeof unread) == 0) {
		old = render_xml(installed, &oldlen);
		plist_free(installed);
	}
	/* Never 0, which means "nothing loaded". */
	j->rendered_hash = mc_fnv1a(MC_FNV_START, xml, len) | 1;
	j->changed = old == NULL || oldlen != len || !agent_ok(path) ||
	    memcmp(old, xml, len) != 0 ||
	    agent_loaded_hash(d, j) != j->rendered_hash;
	if (j->changed && mc_write_atomic(path, xml, len, 0644, why,
	    whylen) == -1)
		rc = -1;
	free(old);
	free(xml);
	return rc;
}

/* A job gone for good: its agent and the record of what launchd had. */
void
agent_forget(struct mcd *d, struct job *j)
{
	char	path[PATH_MAX];

	agent_path(d, j, path, sizeof path);
	unlink(path);
	agent_loaded_path(d, j, path, sizeof path);
	unlink(path);
}

/*
 * The seconds the job's agent gives its process between SIGTERM and
 * SIGKILL; 0, "infinity", is taken as the longest we wait.
 */
uint64_t
agent_exit_timeout_s(struct mcd *d, struct job *j)
{
	char		 path[PATH_MAX], why[256];
	plist_t		 agent = NULL, v;
	uint64_t	 s = EXIT_TIMEOUT_DEFAULT_S;

	agent_path(d, j, path, sizeof path);
	if (mc_plist_read_file(path, &agent, why, sizeof why) == 0 &&
	    (v = plist_dict_get_item(agent, "ExitTimeOut")) != NULL &&
	    plist_get_node_type(v) == PLIST_UINT)
		plist_get_uint_val(v, &s);
	plist_free(agent);
	return s == 0 || s > EXIT_TIMEOUT_MAX_S ? EXIT_TIMEOUT_MAX_S : s;
}
