/* SPDX-License-Identifier: MIT */
/*
 * add and remove: the job file, written for the user so nobody has to
 * hand-write a property list to start.  A new file is checked with the
 * daemon's own rules (jobfile.c) before it is written, written atomically,
 * and never over an existing one without --force.  metalcapd sees the
 * change in its job directory and acts on it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_plist.h"
#include "mc_util.h"

static int
ctl_job_path(struct ctl *c, const char *verb, const char *name, char *path,
    size_t len)
{
	if (!jobfile_name_ok(name)) {
		fprintf(stderr, "metalcapctl: %s: job name \"%s\": use 1 to %d "
		    "letters, digits, '.', '_' or '-'\n", verb, name,
		    MC_NAME_MAX);
		return EXIT_USAGE;
	}
	if (mc_fmt(path, len, "%s/%s.plist", c->paths.jobs, name) == -1) {
		fprintf(stderr, "metalcapctl: %s: the job directory's path is "
		    "too long\n", verb);
		return EXIT_USAGE;
	}
	return 0;
}

/* The job dictionary the command line describes; NULL after a message. */
static plist_t
ctl_job_plist(struct ctl *c, int argc, char **argv)
{
	plist_t		 root = plist_new_dict(), args = plist_new_array();
	plist_t		 env = NULL;
	const char	*eq;
	char		*key;
	int		 i;

	for (i = 1; i < argc; i++)
		plist_array_append_item(args, plist_new_string(argv[i]));
	plist_dict_set_item(root, "ProgramArguments", args);
	if (c->opts.profile != NULL)
		plist_dict_set_item(root, "Profile",
		    plist_new_string(c->opts.profile));
	if (c->opts.given & CTL_OPT_STOCK)
		plist_dict_set_item(root, "Unlocked", plist_new_bool(0));
	for (i = 0; i < c->opts.nenv; i++) {
		if ((eq = strchr(c->opts.env[i], '=')) == NULL ||
		    eq == c->opts.env[i]) {
			fprintf(stderr, "metalcapctl: add: --env %s: expected "
			    "KEY=VALUE\n", c->opts.env[i]);
			plist_free(root);
			return NULL;
		}
		if (env == NULL)
			env = plist_new_dict();
		key = strndup(c->opts.env[i], (size_t)(eq - c->opts.env[i]));
		plist_dict_set_item(env, key, plist_new_string(eq + 1));
		free(key);
	}
	if (env != NULL)
		plist_dict_set_item(root, "EnvironmentVariables", env);
	return root;
}

static void
ctl_print_diag(const char *what, const struct diag *d)
{
	size_t	i;

	for (i = 0; i < d->count; i++)
		fprintf(stderr, "metalcapctl: add: %s%s\n", what, d->items[i]);
}

static void
ctl_jobfile_json(const char *name, const char *path, const struct diag *w)
{
	json_t	*warnings = json_array(), *doc;
	size_t	 i;

	for (i = 0; w != NULL && i < w->count; i++)
		json_array_append_new(warnings, json_string(w->items[i]));
	doc = json_pack("{s:s, s:s, s:o}", "name", name, "file", path,
	    "warnings", warnings);
	json_dumpf(doc, stdout, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	putchar('\n');
}

/* add NAME [--profile P | --stock] [--env K=V]... [--force] -- PROGRAM ARGS... */
int
cmd_add(struct ctl *c, const struct ctl_command *cmd, int argc, char **argv)
{
	struct diag	 errors = { 0 }, warnings = { 0 };
	struct job_spec	*spec;
	char		 path[PATH_MAX], file[MC_NAME_MAX + 8], why[512];
	char		*xml = NULL;
	uint32_t	 len = 0;
	plist_t		 root;
	int		 rc;

	(void)cmd;
	if ((rc = ctl_job_path(c, "add", argv[0], path, sizeof path)) != 0)
		return rc;
	if ((c->opts.given & CTL_OPT_STOCK) && c->opts.profile != NULL) {
		fprintf(stderr, "metalcapctl: add: --profile and --stock "
		    "exclude each other\n");
		return EXIT_USAGE;
	}
	if ((root = ctl_job_plist(c, argc, argv)) == NULL)
		return EXIT_USAGE;
	snprintf(file, sizeof file, "%s.plist", argv[0]);
	spec = jobfile_parse(root, file, &errors, &warnings);
	if (spec == NULL) {
		ctl_print_diag("", &errors);
		rc = EXIT_USAGE;
		goto out;
	}
	if (paths_mkdir(c->paths.jobs, 0755, why, sizeof why) == -1) {
		fprintf(stderr, "metalcapctl: add: %s\n", why);
		rc = EXIT_DAEMON;
		goto out;
	}
	plist_to_xml(root, &xml, &len);
	rc = (c->opts.given & CTL_OPT_FORCE) ?
	    mc_write_atomic(path, xml, len, 0644, why, sizeof why) :
	    mc_write_new(path, xml, len, 0644, why, sizeof why);
	if (rc == -1) {
		if (errno == EEXIST)
			fprintf(stderr, "metalcapctl: add: %s exists; --force "
			    "replaces it\n", path);
		else
			fprintf(stderr, "metalcapctl: add: %s\n", why);
		rc = EXIT_DAEMON;
		goto out;
	}
	ctl_print_diag("warning: ", &warnings);
	if (c->json)
		ctl_jobfile_json(argv[0], path, &warnings);
	else
		printf("added %s: %s\n", argv[0], path);
out:
	mc_plist_mem_free(xml);
	jobfile_free(spec);
	diag_clear(&errors);
	diag_clear(&warnings);
	plist_free(root);
	return rc;
}

/* remove NAME: its job file goes; metalcapd boots the job out. */
int
cmd_remove(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	char		path[PATH_MAX];
	struct stat	sb;
	int		rc;

	(void)cmd;
	(void)argc;
	if ((rc = ctl_job_path(c, "remove", argv[0], path, sizeof path)) != 0)
		return rc;
	if (lstat(path, &sb) == -1 || unlink(path) == -1) {
		fprintf(stderr, "metalcapctl: remove: %s: %s\n", path,
		    errno == ENOENT ? "no such job file (a job an administrator "
		    "installed cannot be removed here)" : strerror(errno));
		return EXIT_DAEMON;
	}
	if (c->json)
		ctl_jobfile_json(argv[0], path, NULL);
	else
		printf("removed %s: %s\n", argv[0], path);
	return 0;
}
