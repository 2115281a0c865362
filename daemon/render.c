/* SPDX-License-Identifier: MIT */
/*
 * Rendering a job's LaunchAgent: a copy of the template dictionary with the
 * job's keys set through libplist, never by pasting strings.  When the job
 * runs unlocked the environment gets the shim and the profile's values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

void
render_label(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", MC_LABEL_PREFIX, name);
}

/*
 * May launchd load the agent in session ("Aqua": gui/<uid>; "Background":
 * user/<uid>, without a GUI session)?  An agent without the key loads in
 * Aqua alone (launchd.md: Aqua by default).
 */
bool
render_allows_session(plist_t tmpl, const char *session)
{
	plist_t		 t = plist_dict_get_item(tmpl, "LimitLoadToSessionType");
	uint32_t	 i, n;
	char		*s;
	bool		 ok = false;

	if (t == NULL)
		return strcmp(session, "Aqua") == 0;
	n = plist_get_node_type(t) == PLIST_ARRAY ? plist_array_get_size(t) : 1;
	for (i = 0; i < n; i++) {
		plist_t e = plist_get_node_type(t) == PLIST_ARRAY ?
		    plist_array_get_item(t, i) : t;

		s = NULL;
		if (plist_get_node_type(e) == PLIST_STRING)
			plist_get_string_val(e, &s);
		ok = ok || (s != NULL && strcmp(s, session) == 0);
		free(s);
	}
	return ok;
}

static void
render_set_str(plist_t dict, const char *key, const char *value)
{
	plist_dict_set_item(dict, key, plist_new_string(value));
}

static void
render_set_u64(plist_t env, const char *key, uint64_t v)
{
	char	buf[32];

	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	render_set_str(env, key, buf);
}

/*
 * The reports folder named by a path with no link in it, as the shim
 * requires of METALCAP_REPORT (libmetalcap(7)): a home reached through a
 * link would otherwise lose every report.  As given when it cannot be
 * resolved (not made yet).  real has PATH_MAX bytes.
 */
static const char *
render_real(const char *path, char *real)
{
	return realpath(path, real) != NULL ? real : path;
}

/* Template environment, then the job's, then ours when unlocked. */
static plist_t
render_env(plist_t tmpl, const struct render_input *in)
{
	plist_t		 env, from = plist_dict_get_item(tmpl,
	    "EnvironmentVariables");
	plist_dict_iter	 it = NULL;
	plist_t		 val;
	char		*key, path[PATH_MAX], real[PATH_MAX];
	const struct profile *p = in->profile;

	env = from != NULL && plist_get_node_type(from) == PLIST_DICT ?
	    plist_copy(from) : plist_new_dict();
	if (in->spec->env != NULL) {
		plist_dict_new_iter(in->spec->env, &it);
		for (;;) {
			key = NULL;
			plist_dict_next_item(in->spec->env, it, &key, &val);
			if (key == NULL)
				break;
			plist_dict_set_item(env, key, plist_copy(val));
			free(key);
		}
		free(it);
	}
	/*
	 * Set whether or not unlocked: launchd gives a job its own
	 * environment, which `launchctl setenv` may have filled (a shim wired
	 * in by hand, the reference's LUME_METAL_* names), below the plist's.
	 * Empty, dyld inserts nothing (dyld-1378 forEachInsertedDylib); our
	 * names win over the reference's in the shim.
	 */
	if (p == NULL || p->family_max == 0) {
		render_set_str(env, "DYLD_INSERT_LIBRARIES", "");
		return env;
	}
	render_set_str(env, "DYLD_INSERT_LIBRARIES", in->paths->shim);
	render_set_u64(env, "METALCAP_APPLE_FAMILY_MAX", p->family_max);
	render_set_u64(env, "METALCAP_MAX_THREADGROUP_MEMORY",
	    p->threadgroup_memory);
	render_set_u64(env, "METALCAP_RECOMMENDED_WORKING_SET_SIZE",
	    p->working_set);
	render_set_str(env, "METALCAP_INHERIT", in->spec->inherit_shim ? "1" :
	    "0");
	mc_fmt(path, sizeof path, "%s/reports", in->paths->state);
	render_set_str(env, "METALCAP_REPORT", render_real(path, real));
	return env;
}

/*
 * Where the job runs and what it may hold open.  launchd starts a job in
 * /, read-only, with a soft limit of 256 descriptors: a server that
 * writes a relative path, or serves many clients, fails there.  The job's
 * own keys win; else its user's home folder, and the template's limit
 * (and its ThrottleInterval).
 */
static void
render_context(plist_t agent, const struct render_input *in)
{
	const char	*home = in->paths->home[0] ? in->paths->home :
	    getenv("HOME");
	plist_t		 limits;

	if (in->spec->working_dir != NULL)
		render_set_str(agent, "WorkingDirectory", in->spec->working_dir);
	else if (home != NULL && home[0] == '/')
		render_set_str(agent, "WorkingDirectory", home);
	if (in->spec->throttle_interval != 0)
		plist_dict_set_item(agent, "ThrottleInterval",
		    plist_new_uint(in->spec->throttle_interval));
	if (in->spec->number_of_files == 0)
		return;
	limits = plist_dict_get_item(agent, "SoftResourceLimits");
	if (limits == NULL || plist_get_node_type(limits) != PLIST_DICT) {
		limits = plist_new_dict();
		plist_dict_set_item(agent, "SoftResourceLimits", limits);
	}
	plist_dict_set_item(limits, "NumberOfFiles",
	    plist_new_uint(in->spec->number_of_files));
}

/* A new agent dictionary for the job; the caller frees it. */
plist_t
render_agent(plist_t tmpl, const struct render_input *in)
{
	plist_t		agent = plist_copy(tmpl), args;
	char		label[MC_NAME_MAX + 32], path[PATH_MAX];
	size_t		i;

	render_label(in->name, label, sizeof label);
	render_set_str(agent, "Label", label);
	args = plist_new_array();
	for (i = 0; i < in->spec->argc; i++)
		plist_array_append_item(args, plist_new_string(in->spec->argv[i]));
	plist_dict_set_item(agent, "ProgramArguments", args);
	plist_dict_set_item(agent, "EnvironmentVariables", render_env(tmpl, in));
	mc_fmt(path, sizeof path, "%s/%s.out.log", in->paths->logs, in->name);
	render_set_str(agent, "StandardOutPath", in->spec->stdout_path ?
	    in->spec->stdout_path : path);
	mc_fmt(path, sizeof path, "%s/%s.err.log", in->paths->logs, in->name);
	render_set_str(agent, "StandardErrorPath", in->spec->stderr_path ?
	    in->spec->stderr_path : path);
	render_context(agent, in);
	plist_dict_set_item(agent, "RunAtLoad",
	    plist_new_bool(in->spec->run_at_load));
	plist_dict_set_item(agent, "KeepAlive", in->spec->keep_alive ?
	    plist_copy(in->spec->keep_alive) : plist_new_bool(1));
	if (plist_dict_get_item(agent, "ProcessType") == NULL)
		render_set_str(agent, "ProcessType", "Interactive");
	return agent;
}

/* XML bytes for comparing with the installed file and writing. */
char *
render_xml(plist_t agent, size_t *len)
{
	char		*xml = NULL, *copy;
	uint32_t	 n = 0;

	plist_to_xml(agent, &xml, &n);
	if (xml == NULL)
		return NULL;
	copy = malloc(n + 1);
	memcpy(copy, xml, n);
	copy[n] = '\0';
	mc_plist_mem_free(xml);
	*len = n;
	return copy;
}
