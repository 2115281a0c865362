/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR of launchd's records: one plist per registered service under
 * $LAUNCHCTL_SIM_DIR/services/DOMAIN (gui, user or system), read and
 * written under one lock, and the disabled store.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <plist/plist.h>

#include "mc_plist.h"
#include "launchctl-sim.h"

const char	*sim_dir;
static char	 sim_space[16] = "gui";	/* the command's domain */
int		 sim_lock_fd = -1;

void
sim_lock(void)
{
	char	path[4096];

	snprintf(path, sizeof path, "%s/lock", sim_dir);
	if (sim_lock_fd == -1)
		sim_lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	flock(sim_lock_fd, LOCK_EX);
}

void
sim_unlock(void)
{
	flock(sim_lock_fd, LOCK_UN);
}

bool
sim_root(void)
{
	const char	*v = getenv("LAUNCHCTL_SIM_AS_ROOT");

	return v != NULL && strcmp(v, "1") == 0;
}

void
sim_service_path(const char *label, char *buf, size_t len)
{
	snprintf(buf, len, "%s/services/%s/%s.plist", sim_dir, sim_space,
	    label);
}

/*
 * The domain a command's target names.  launchd keeps each domain's
 * services apart: the GUI and user domains share Mach name lookups "But
 * they still have discrete sets of services" (launchctl(1)), so a label
 * bootstrapped into user/UID is not found in gui/UID.  The supervisor a
 * command forks keeps its command's domain.
 */
void
sim_use_domain(const char *domain)
{
	char	path[4096];

	snprintf(sim_space, sizeof sim_space, "%s", strncmp(domain, "user/",
	    5) == 0 ? "user" : strncmp(domain, "system", 6) == 0 ? "system" :
	    "gui");
	snprintf(path, sizeof path, "%s/services/%s", sim_dir, sim_space);
	mkdir(path, 0700);
}


/*
 * The registration record of label, or NULL.  A booted-out job whose
 * supervisor is gone (it may have died between its last check and the
 * SIGTERM) has finished draining: drop it.
 */
plist_t
sim_load(const char *label)
{
	char	path[4096], why[256];
	plist_t	rec;

	sim_service_path(label, path, sizeof path);
	if (mc_plist_read_file(path, &rec, why, sizeof why) == -1)
		return NULL;
	if (mc_plist_bool(rec, "Draining", false) &&
	    !sim_alive(sim_int(rec, "Supervisor", 0))) {
		unlink(path);
		plist_free(rec);
		return NULL;
	}
	return rec;
}

void
sim_save(const char *label, plist_t rec)
{
	char	path[4096], why[256];

	sim_service_path(label, path, sizeof path);
	mc_plist_write_atomic(path, rec, 0644, why, sizeof why);
}

void
sim_set_int(plist_t rec, const char *key, long long v)
{
	plist_dict_set_item(rec, key, plist_new_uint((uint64_t)v));
}

long long
sim_int(plist_t rec, const char *key, long long fallback)
{
	plist_t		node = plist_dict_get_item(rec, key);
	uint64_t	v;

	if (node == NULL || plist_get_node_type(node) != PLIST_UINT)
		return fallback;
	plist_get_uint_val(node, &v);
	return (long long)v;
}

void
sim_set_str(plist_t rec, const char *key, const char *v)
{
	plist_dict_set_item(rec, key, plist_new_string(v));
}

/* Run fn on the fresh record of label under the lock, and save it. */
void
sim_update(const char *label, void (*fn)(plist_t, void *), void *arg)
{
	plist_t	rec;

	sim_lock();
	if ((rec = sim_load(label)) != NULL) {
		fn(rec, arg);
		sim_save(label, rec);
		plist_free(rec);
	}
	sim_unlock();
}

/*
 * A detached supervisor is reaped by whoever adopts it, perhaps late: a
 * zombie answers kill(pid, 0) but is dead all the same.
 */
bool
sim_alive(long long pid)
{
	char	path[64], buf[256], *p;
	FILE	*f;
	bool	alive;

	if (pid <= 0 || kill((pid_t)pid, 0) != 0)
		return false;
	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return true;
	alive = fgets(buf, sizeof buf, f) == NULL ||
	    (p = strrchr(buf, ')')) == NULL || p[1] == '\0' || p[2] != 'Z';
	fclose(f);
	return alive;
}

/* Does each path of a PathState dictionary stand as wanted? */
static bool
sim_path_state(plist_t paths)
{
	plist_dict_iter	 it = NULL;
	char		*path = NULL;
	plist_t		 want;
	struct stat	 sb;
	bool		 any = false;

	if (plist_get_node_type(paths) != PLIST_DICT)
		return false;
	plist_dict_new_iter(paths, &it);
	while (!any) {
		plist_dict_next_item(paths, it, &path, &want);
		if (path == NULL)
			break;
		any = (stat(path, &sb) == 0) == (plist_get_node_type(want) ==
		    PLIST_BOOLEAN && mc_plist_bool(paths, path, false));
		free(path);
		path = NULL;
	}
	free(it);
	return any;
}

/*
 * Should launchd keep the job running: at load (status unused), or after
 * a run that ended with status?  launchd ORs the KeepAlive dictionary's
 * conditions (launchd.plist(5)).  At load, SuccessfulExit and Crashed of
 * either value start the job (core.c semaphoreitem_setup sets
 * start_pending for both; the man page documents it for SuccessfulExit
 * only), PathState and OtherJobEnabled only if their condition already
 * holds (job_import ends with job_dispatch); NetworkState "is no longer
 * implemented".  A crash is one of the signals job_reap names: ILL, ABRT,
 * FPE, BUS, SEGV, SYS, TRAP (TERM and KILL are not).
 */
bool
sim_keepalive(plist_t job, bool at_load, int status)
{
	plist_t		keep = plist_dict_get_item(job, "KeepAlive"), v;
	bool		good = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	int		sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	bool		crashed = sig == SIGILL || sig == SIGABRT ||
	    sig == SIGFPE || sig == SIGBUS || sig == SIGSEGV ||
	    sig == SIGSYS || sig == SIGTRAP;
	plist_t		other;

	if (keep == NULL)
		return false;
	if (plist_get_node_type(keep) == PLIST_BOOLEAN)
		return mc_plist_bool(job, "KeepAlive", false);
	if (plist_get_node_type(keep) != PLIST_DICT)
		return false;
	if ((v = plist_dict_get_item(keep, "SuccessfulExit")) != NULL &&
	    (at_load || mc_plist_bool(keep, "SuccessfulExit", true) == good))
		return true;
	if ((v = plist_dict_get_item(keep, "Crashed")) != NULL &&
	    (at_load || mc_plist_bool(keep, "Crashed", true) == crashed))
		return true;
	if ((v = plist_dict_get_item(keep, "PathState")) != NULL &&
	    sim_path_state(v))
		return true;
	if ((other = plist_dict_get_item(keep, "OtherJobEnabled")) != NULL &&
	    plist_get_node_type(other) == PLIST_DICT) {
		plist_dict_iter	 it = NULL;
		char		*label = NULL;
		plist_t		 want, rec;
		bool		 hit = false;

		plist_dict_new_iter(other, &it);
		while (!hit) {
			plist_dict_next_item(other, it, &label, &want);
			if (label == NULL)
				break;
			rec = sim_load(label);
			hit = (rec != NULL) == mc_plist_bool(other, label, false);
			plist_free(rec);
			free(label);
			label = NULL;
		}
		free(it);
		return hit;
	}
	return false;
}

/* --- launchd's stores: disabled labels, its environment ------------------- */

/* SIM_DIR/NAME as a dictionary (an empty one when there is none yet). */
static plist_t
sim_store_read(const char *name)
{
	char	path[4096], why[256];
	plist_t	store;

	snprintf(path, sizeof path, "%s/%s", sim_dir, name);
	if (mc_plist_read_file(path, &store, why, sizeof why) == -1)
		store = plist_new_dict();
	return store;
}

static void
sim_store_write(const char *name, plist_t store)
{
	char	path[4096], why[256];

	snprintf(path, sizeof path, "%s/%s", sim_dir, name);
	mc_plist_write_atomic(path, store, 0644, why, sizeof why);
}

plist_t
sim_disabled_store(void)
{
	return sim_store_read("disabled.plist");
}

bool
sim_is_disabled(const char *label)
{
	plist_t	store = sim_disabled_store();
	bool	v = mc_plist_bool(store, label, false);

	plist_free(store);
	return v;
}

int
sim_set_disabled(const char *target, bool disabled)
{
	const char	*label = strrchr(target, '/');
	plist_t		 store;

	if (label == NULL || strncmp(target, "gui/", 4) != 0 ||
	    strchr(target + 4, '/') == NULL) {
		if (strncmp(target, "user/", 5) != 0 || label == NULL) {
			fprintf(stderr, "Unrecognized target specifier.\n");
			return EX_USAGE_CODE;
		}
	}
	sim_lock();
	store = sim_disabled_store();
	plist_dict_set_item(store, label + 1, plist_new_bool(disabled));
	sim_store_write("disabled.plist", store);
	plist_free(store);
	sim_unlock();
	return 0;
}


/*
 * launchd's own environment, as launchctl setenv left it: a dictionary of
 * strings in SIM_DIR/environment.plist (launchd 842 ipc.c set_user_env
 * calls setenv in launchd, and every job forked after inherits it).
 */
plist_t
sim_environment_store(void)
{
	return sim_store_read("environment.plist");
}

/* setenv KEY VALUE, or unsetenv KEY when value is NULL. */
void
sim_set_environment(const char *key, const char *value)
{
	plist_t	store;

	sim_lock();
	store = sim_environment_store();
	if (value != NULL)
		plist_dict_set_item(store, key, plist_new_string(value));
	else if (plist_dict_get_item(store, key) != NULL)
		plist_dict_remove_item(store, key);
	sim_store_write("environment.plist", store);
	plist_free(store);
	sim_unlock();
}
