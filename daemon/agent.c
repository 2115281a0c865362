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

/* "HASH DOMAIN": what launchd was given, and where (an older file has
 * the hash alone: the daemon's domain). */
uint64_t
agent_loaded_hash(struct mcd *d, struct job *j)
{
	char		 path[PATH_MAX], domain[sizeof j->domain] = "";
	unsigned long long v = 0;
	FILE		*f;

	agent_loaded_path(d, j, path, sizeof path);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%16llx %31s", &v, domain) < 1)
			v = 0;
		fclose(f);
	}
	if (j->domain[0] == '\0' && (strncmp(domain, "gui/", 4) == 0 ||
	    strncmp(domain, "user/", 5) == 0))
		snprintf(j->domain, sizeof j->domain, "%s", domain);
	return (uint64_t)v;
}

void
agent_mark_loaded(struct mcd *d, struct job *j)
{
	char	path[PATH_MAX], text[64], why[256];
	int	n;

	agent_loaded_path(d, j, path, sizeof path);
	n = snprintf(text, sizeof text, "%016llx %s\n",
	    (unsigned long long)j->rendered_hash, agent_domain(d, j));
	if (mc_write_atomic(path, text, (size_t)n, 0644, why, sizeof why) == -1)
		log_warnx("job %s: %s", j->name, why);
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
