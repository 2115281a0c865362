/* SPDX-License-Identifier: MIT */
/*
 * Job files: one plist dictionary per workload, named NAME.plist.  Every
 * problem is collected as "file:key: message"; any error makes only that
 * job invalid.  Unknown keys are warnings.  The daemon never writes here.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_macho.h"
#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

void
diag_add(struct diag *d, const char *fmt, ...)
{
	va_list	ap;
	char	buf[MC_ERR_LEN];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	d->items = realloc(d->items, (d->count + 1) * sizeof *d->items);
	d->items[d->count++] = strdup(buf);
}

void
diag_clear(struct diag *d)
{
	size_t	i;

	for (i = 0; i < d->count; i++)
		free(d->items[i]);
	free(d->items);
	d->items = NULL;
	d->count = 0;
}

/* [A-Za-z0-9._-]{1,64}, and not "." or "..". */
bool
jobfile_name_ok(const char *name)
{
	size_t	n = strlen(name), i;

	if (n == 0 || n > MC_NAME_MAX || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '.' || name[i] == '_' || name[i] == '-'))
			return false;
	return true;
}

/* The node at key if it has the type; else an error naming both. */
static plist_t
jobfile_typed(plist_t root, const char *key, plist_type type,
    const char *want, const char *file, struct diag *errors)
{
	plist_t	node = plist_dict_get_item(root, key);

	if (node == NULL)
		return NULL;
	if (plist_get_node_type(node) != type) {
		diag_add(errors, "%s:%s: expected %s, found %s", file, key, want,
		    mc_plist_type_name(node));
		return NULL;
	}
	return node;
}

static char *
jobfile_string(plist_t root, const char *key, const char *file,
    struct diag *errors, bool absolute)
{
	plist_t	 node = jobfile_typed(root, key, PLIST_STRING, "a string",
	    file, errors);
	char	*s = NULL;

	if (node == NULL)
		return NULL;
	plist_get_string_val(node, &s);
	if (absolute && s != NULL && s[0] != '/') {
		diag_add(errors, "%s:%s: \"%s\" is not an absolute path", file,
		    key, s);
		free(s);
		return NULL;
	}
	return s;
}

static bool
jobfile_bool(plist_t root, const char *key, bool fallback, const char *file,
    struct diag *errors)
{
	plist_t	node = jobfile_typed(root, key, PLIST_BOOLEAN, "a boolean",
	    file, errors);
	uint8_t	v;

	if (node == NULL)
		return fallback;
	plist_get_bool_val(node, &v);
	return v != 0;
}

/* An array of strings, checked element by element. */
static bool
jobfile_strings(plist_t node, const char *file, const char *key,
    struct diag *errors)
{
	uint32_t	i, n;
	bool		ok = true;

	if (plist_get_node_type(node) != PLIST_ARRAY) {
		diag_add(errors, "%s:%s: expected an array of strings, found %s",
		    file, key, mc_plist_type_name(node));
		return false;
	}
	n = plist_array_get_size(node);
	for (i = 0; i < n; i++)
		if (plist_get_node_type(plist_array_get_item(node, i)) !=
		    PLIST_STRING) {
			diag_add(errors, "%s:%s[%u]: expected a string, found "
			    "%s", file, key, i, mc_plist_type_name(
			    plist_array_get_item(node, i)));
			ok = false;
		}
	return ok;
}

/*
 * The program must be a regular executable file, opened without a chance
 * to block (a FIFO).  For a job that runs unlocked, mc_inject_judge says
 * whether the injection can reach it (hardened runtime, library
 * validation, setuid, arm64e, wrappers, SIP paths): what cannot work is an
 * error, what may not is a warning naming the reason.  A stock job may run
 * anything.
 */
static void
jobfile_check_program(const char *path, const char *file, bool unlocked,
    bool inherit, struct diag *errors, struct diag *warnings)
{
	struct mc_inject	 judged;
	struct mc_inject_host	 host;
	struct stat		 sb;
	int			 fd, i;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY))
	    == -1) {
		diag_add(errors, "%s:ProgramArguments[0]: %s cannot be opened: "
		    "%s", file, path, strerror(errno));
		return;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		diag_add(errors, "%s:ProgramArguments[0]: %s is not a regular "
		    "file", file, path);
		close(fd);
		return;
	}
	close(fd);
	if ((sb.st_mode & 0111) == 0) {
		diag_add(errors, "%s:ProgramArguments[0]: %s is not "
		    "executable", file, path);
		return;
	}
	if (!unlocked)
		return;
	platform_inject_host(&host);
	mc_inject_judge(path, NULL, inherit, &host, &judged);
	for (i = 0; i < judged.n; i++)
		if (judged.findings[i].level != MC_INJECT_OK)
			diag_add(judged.findings[i].level == MC_INJECT_REFUSED ?
			    errors : warnings, "%s:ProgramArguments[0]: %s",
			    file, judged.findings[i].text);
}

static void
jobfile_env(plist_t node, const char *file, struct job_spec *spec,
    struct diag *errors, struct diag *warnings)
{
	plist_dict_iter	 it = NULL;
	plist_t		 val;
	char		*key;

	if (node == NULL)
		return;
	spec->env = plist_new_dict();
	plist_dict_new_iter(node, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(node, it, &key, &val);
		if (key == NULL)
			break;
		if (plist_get_node_type(val) != PLIST_STRING)
			diag_add(errors, "%s:EnvironmentVariables.%s: expected a "
			    "string, found %s", file, key,
			    mc_plist_type_name(val));
		else if (strncmp(key, "DYLD_", 5) == 0 ||
		    strncmp(key, "LD_", 3) == 0 ||
		    strncmp(key, "METALCAP_", 9) == 0 ||
		    strncmp(key, "LUME_METAL_", 11) == 0)
			/* Any loader variable could swap or drop the shim
			 * (DYLD_LIBRARY_PATH, DYLD_IMAGE_SUFFIX, LD_AUDIT). */
			diag_add(warnings, "%s:EnvironmentVariables.%s: loader "
			    "and shim variables are metalcapd's; ignored", file,
			    key);
		else
			plist_dict_set_item(spec->env, key, plist_copy(val));
		free(key);
	}
	free(it);
}

/* An integer key of HealthCheck or CrashLoop, and the values it may take. */
struct jobfile_int {
	const char	*key;
	uint64_t	 min, max;
};

static void
jobfile_int_keys(plist_t dict, const char *file, const char *key,
    const struct jobfile_int *allowed, struct diag *errors,
    struct diag *warnings)
{
	plist_dict_iter	 it = NULL;
	plist_t		 val;
	uint64_t	 v;
	char		*k;
	size_t		 i;

	plist_dict_new_iter(dict, &it);
	for (;;) {
		k = NULL;
		plist_dict_next_item(dict, it, &k, &val);
		if (k == NULL)
			break;
		for (i = 0; allowed[i].key != NULL; i++)
			if (strcmp(k, allowed[i].key) == 0)
				break;
		if (allowed[i].key == NULL)
			diag_add(warnings, "%s:%s.%s: unknown key", file, key, k);
		else if (strcmp(k, "ProgramArguments") == 0)
			jobfile_strings(val, file, "HealthCheck.ProgramArguments",
			    errors);
		else if (plist_get_node_type(val) != PLIST_UINT)
			diag_add(errors, "%s:%s.%s: expected an integer, found "
			    "%s", file, key, k, mc_plist_type_name(val));
		else if (plist_get_uint_val(val, &v), v < allowed[i].min ||
		    v > allowed[i].max)
			diag_add(errors, "%s:%s.%s: %llu is out of range (%llu "
			    "to %llu)", file, key, k, (unsigned long long)v,
			    (unsigned long long)allowed[i].min,
			    (unsigned long long)allowed[i].max);
		free(k);
	}
	free(it);
}

static void
jobfile_safety(plist_t root, const char *file, struct job_spec *spec,
    struct diag *errors, struct diag *warnings)
{
	static const struct jobfile_int health[] = {
		{ "ProgramArguments", 0, 0 },
		{ "TimeoutSeconds", 1, 3600 },
		{ "StartDelaySeconds", 0, 86400 },
		{ "LoadSeconds", 0, 86400 },
		/* After a pass: how often, and how many failures in a row
		 * before the driver acts (health.c); 0: no check after a
		 * pass. */
		{ "IntervalSeconds", 0, 86400 },
		{ "FailuresBeforeAction", 1, 100 },
		{ NULL, 0, 0 } };
	/* The daemon remembers the last 16 abnormal exits of a job. */
	static const struct jobfile_int crash[] = {
		{ "MaxExits", 1, 16 },
		{ "WindowSeconds", 1, 86400 },
		{ NULL, 0, 0 } };
	plist_t		 node, check;
	uint32_t	 i;
	const char	*why;
	char		*re;
	regex_t		 rx;

	if ((node = jobfile_typed(root, "HealthCheck", PLIST_DICT,
	    "a dictionary", file, errors)) != NULL) {
		jobfile_int_keys(node, file, "HealthCheck", health, errors,
		    warnings);
		/* A check with nothing to run would pass unseen, forever. */
		check = plist_dict_get_item(node, "ProgramArguments");
		if (check == NULL)
			diag_add(errors, "%s:HealthCheck.ProgramArguments: "
			    "required", file);
		else if (plist_get_node_type(check) == PLIST_ARRAY &&
		    plist_array_get_size(check) == 0)
			diag_add(errors, "%s:HealthCheck.ProgramArguments: "
			    "empty", file);
		spec->health_check = plist_copy(node);
	}
	if ((node = jobfile_typed(root, "CrashLoop", PLIST_DICT,
	    "a dictionary", file, errors)) != NULL) {
		jobfile_int_keys(node, file, "CrashLoop", crash, errors,
		    warnings);
		spec->crash_loop = plist_copy(node);
	}
	node = plist_dict_get_item(root, "FailureSignatures");
	if (node == NULL || !jobfile_strings(node, file, "FailureSignatures",
	    errors))
		return;
	if (plist_array_get_size(node) > SCAN_SIGNATURES_MAX) {
		diag_add(errors, "%s:FailureSignatures: %u patterns, over the "
		    "%d allowed", file, plist_array_get_size(node),
		    SCAN_SIGNATURES_MAX);
		return;
	}
	for (i = 0; i < plist_array_get_size(node); i++) {
		re = NULL;
		plist_get_string_val(plist_array_get_item(node, i), &re);
		if (re != NULL && (why = scan_refused(re)) != NULL)
			diag_add(errors, "%s:FailureSignatures[%u]: refused: %s",
			    file, i, why);
		else if (re != NULL && regcomp(&rx, re, REG_EXTENDED |
		    REG_NOSUB) != 0)
			diag_add(errors, "%s:FailureSignatures[%u]: \"%s\" is not "
			    "an extended regular expression", file, i, re);
		else if (re != NULL)
			regfree(&rx);
		free(re);
	}
	spec->failure_signatures = plist_copy(node);
}

static void
jobfile_warn_path(const char *path, const char *file, const char *key,
    struct diag *warnings)
{
	const char	*where;

	if (path == NULL || (where = mc_protected_folder(path)) == NULL)
		return;
	diag_add(warnings, "%s:%s: %s is in %s, which macOS keeps from launchd "
	    "agents (\"Operation not permitted\"): move it, or allow it in "
	    "System Settings, Privacy & Security", file, key, path, where);
}

static void
jobfile_warn_protected(const struct job_spec *spec, const char *file,
    struct diag *warnings)
{
	const char	*eq;
	size_t		 i;

	/* An option and its path in one argument: --model=/Users/... */
	for (i = 0; i < spec->argc; i++) {
		eq = spec->argv[i][0] == '-' ? strchr(spec->argv[i], '=') :
		    NULL;
		jobfile_warn_path(eq != NULL ? eq + 1 : spec->argv[i], file,
		    "ProgramArguments", warnings);
	}
	jobfile_warn_path(spec->working_dir, file, "WorkingDirectory",
	    warnings);
	jobfile_warn_path(spec->stdout_path, file, "StandardOutPath",
	    warnings);
	jobfile_warn_path(spec->stderr_path, file, "StandardErrorPath",
	    warnings);
}

/* An integer key of the file's within lo to hi; 0 if absent or refused. */
static uint64_t
jobfile_bounded(plist_t root, const char *file, const char *key, uint64_t lo,
    uint64_t hi, struct diag *errors)
{
	plist_t		node;
	uint64_t	v;

	if ((node = jobfile_typed(root, key, PLIST_UINT, "an integer", file,
	    errors)) == NULL)
		return 0;
	plist_get_uint_val(node, &v);
	if (v >= lo && v <= hi)
		return v;
	diag_add(errors, "%s:%s: %llu is out of range (%llu to %llu)", file,
	    key, (unsigned long long)v, (unsigned long long)lo,
	    (unsigned long long)hi);
	return 0;
}

/*
 * The descriptors a server may hold open (launchd's soft limit is 256: a
 * busy server's sockets, model files and Metal buffers outgrow it), and
 * launchd's least time between two starts (launchd.plist(5)
 * ThrottleInterval), which bounds how fast a crash loop can come (job.c
 * checks CrashLoop against it).  Both go to the agent.
 */
static void
jobfile_limits(plist_t root, const char *file, struct job_spec *spec,
    struct diag *errors)
{
	spec->number_of_files = jobfile_bounded(root, file, "NumberOfFiles",
	    64, 1048576, errors);
	spec->throttle_interval = jobfile_bounded(root, file,
	    "ThrottleInterval", 1, 3600, errors);
}

static void
jobfile_unknown_keys(plist_t root, const char *file, struct diag *warnings)
{
	static const char *const known[] = { "ProgramArguments", "Profile",
	    "Unlocked", "EnvironmentVariables", "WorkingDirectory",
	    "RunAtLoad", "KeepAlive", "StandardOutPath", "StandardErrorPath",
	    "InheritShim", "HealthCheck", "FailureSignatures", "CrashLoop",
	    "NumberOfFiles", "ThrottleInterval", "BenchProgram", "Measure" };
	plist_dict_iter	 it = NULL;
	plist_t		 val;
	char		*key;
	size_t		 i;

	plist_dict_new_iter(root, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(root, it, &key, &val);
		if (key == NULL)
			break;
		for (i = 0; i < sizeof known / sizeof known[0]; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == sizeof known / sizeof known[0])
			diag_add(warnings, "%s:%s: unknown key, ignored", file,
			    key);
		free(key);
	}
	free(it);
}

/* Parse a job dictionary; NULL when anything is an error. */
struct job_spec *
jobfile_parse(plist_t root, const char *file, struct diag *errors,
    struct diag *warnings)
{
	struct job_spec	*spec;
	plist_t		 args, keep;
	size_t		 before = errors->count;
	uint32_t	 i;

	if (plist_get_node_type(root) != PLIST_DICT) {
		diag_add(errors, "%s: expected a dictionary at the top, found %s",
		    file, mc_plist_type_name(root));
		return NULL;
	}
	spec = calloc(1, sizeof *spec);
	args = plist_dict_get_item(root, "ProgramArguments");
	if (args == NULL)
		diag_add(errors, "%s:ProgramArguments: required", file);
	else if (jobfile_strings(args, file, "ProgramArguments", errors)) {
		spec->argc = plist_array_get_size(args);
		spec->argv = calloc(spec->argc + 1, sizeof *spec->argv);
		for (i = 0; i < spec->argc; i++)
			plist_get_string_val(plist_array_get_item(args, i),
			    &spec->argv[i]);
		if (spec->argc == 0)
			diag_add(errors, "%s:ProgramArguments: empty", file);
		else if (spec->argv[0][0] != '/')
			diag_add(errors, "%s:ProgramArguments[0]: \"%s\" is not "
			    "an absolute path", file, spec->argv[0]);
	}
	spec->profile = jobfile_string(root, "Profile", file, errors, false);
	spec->unlocked = jobfile_bool(root, "Unlocked", true, file, errors);
	spec->run_at_load = jobfile_bool(root, "RunAtLoad", true, file, errors);
	spec->inherit_shim = jobfile_bool(root, "InheritShim", false, file,
	    errors);
	keep = plist_dict_get_item(root, "KeepAlive");
	if (keep != NULL && plist_get_node_type(keep) != PLIST_BOOLEAN &&
	    plist_get_node_type(keep) != PLIST_DICT)
		diag_add(errors, "%s:KeepAlive: expected a boolean or a "
		    "dictionary, found %s", file, mc_plist_type_name(keep));
	else if (keep != NULL)
		spec->keep_alive = plist_copy(keep);
	jobfile_env(jobfile_typed(root, "EnvironmentVariables", PLIST_DICT,
	    "a dictionary", file, errors), file, spec, errors, warnings);
	spec->working_dir = jobfile_string(root, "WorkingDirectory", file,
	    errors, true);
	spec->stdout_path = jobfile_string(root, "StandardOutPath", file,
	    errors, true);
	spec->stderr_path = jobfile_string(root, "StandardErrorPath", file,
	    errors, true);
	jobfile_limits(root, file, spec, errors);
	/* Profile auto's measurement (daemon/measure.c). */
	spec->bench_program = jobfile_string(root, "BenchProgram", file,
	    errors, true);
	spec->measure = jobfile_bool(root, "Measure", true, file, errors);
	jobfile_safety(root, file, spec, errors, warnings);
	jobfile_warn_protected(spec, file, warnings);
	jobfile_unknown_keys(root, file, warnings);
	if (errors->count == before && spec->argc > 0)
		jobfile_check_program(spec->argv[0], file, spec->unlocked,
		    spec->inherit_shim, errors, warnings);
	if (errors->count != before) {
		jobfile_free(spec);
		return NULL;
	}
	return spec;
}

struct job_spec *
jobfile_load(const char *path, struct diag *errors, struct diag *warnings)
{
	const char	*file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char		 why[256];
	plist_t		 root;
	struct job_spec	*spec;

	if (mc_plist_read_file(path, &root, why, sizeof why) == -1) {
		diag_add(errors, "%s: %s", file, why);
		return NULL;
	}
	spec = jobfile_parse(root, file, errors, warnings);
	plist_free(root);
	return spec;
}

/*
 * Should launchd be running the job (RunAtLoad, or KeepAlive not false)?
 * False for no spec (a file that turned invalid).
 */
bool
jobfile_should_run(const struct job_spec *spec)
{
	plist_t	keep;
	uint8_t	on = 0;

	/* The file may have turned invalid while a step was in flight. */
	if (spec == NULL)
		return false;
	keep = spec->keep_alive;
	if (keep != NULL && plist_get_node_type(keep) == PLIST_BOOLEAN)
		plist_get_bool_val(keep, &on);
	/*
	 * A KeepAlive dictionary starts the job at load with SuccessfulExit
	 * or Crashed in it (launchd's semaphoreitem_setup); its other
	 * conditions (PathState, OtherJobEnabled) may or may not hold, and
	 * the job's pid is not waited for.
	 */
	if (keep != NULL && plist_get_node_type(keep) == PLIST_DICT)
		on = plist_dict_get_item(keep, "SuccessfulExit") != NULL ||
		    plist_dict_get_item(keep, "Crashed") != NULL;
	return spec->run_at_load || keep == NULL || on;
}

void
jobfile_free(struct job_spec *spec)
{
	size_t	i;

	if (spec == NULL)
		return;
	for (i = 0; spec->argv != NULL && i < spec->argc; i++)
		free(spec->argv[i]);
	free(spec->argv);
	free(spec->profile);
	free(spec->working_dir);
	free(spec->stdout_path);
	free(spec->stderr_path);
	free(spec->bench_program);
	if (spec->keep_alive)
		plist_free(spec->keep_alive);
	if (spec->env)
		plist_free(spec->env);
	if (spec->health_check)
		plist_free(spec->health_check);
	if (spec->failure_signatures)
		plist_free(spec->failure_signatures);
	if (spec->crash_loop)
		plist_free(spec->crash_loop);
	free(spec);
}

/*
 * The model the job serves: -m PATH, --model PATH or --model=PATH, under
 * its WorkingDirectory when relative; -1 when it names none.
 */
int
jobfile_model(const struct job_spec *s, char *out, size_t len)
{
	const char	*m = NULL;
	size_t		 i;

	for (i = 1; s != NULL && m == NULL && i < s->argc; i++) {
		if (strncmp(s->argv[i], "--model=", 8) == 0)
			m = s->argv[i] + 8;
		else if ((strcmp(s->argv[i], "-m") == 0 ||
		    strcmp(s->argv[i], "--model") == 0) && i + 1 < s->argc)
			m = s->argv[i + 1];
	}
	if (m == NULL)
		return -1;
	if (m[0] != '/' && s->working_dir != NULL)
		return mc_fmt(out, len, "%s/%s", s->working_dir, m);
	return mc_fmt(out, len, "%s", m);
}
