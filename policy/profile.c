/* SPDX-License-Identifier: MIT */
/*
 * Profiles: the values a job runs with when unlocked.  Built-ins first
 * (stock, apple9, apple7), then profiles.d/NAME.plist, which may add profiles
 * or redefine a built-in (but not stock).  A bad file becomes a profile
 * that carries its error, so status can show it and jobs using it fail
 * visibly instead of silently running something else.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

static const struct profile profile_builtins[] = {
	{ "stock", 0, 0, 0, "No injection: the device's own answers.", true,
	    "" },
	{ "apple9", 1009, 65536, 0, "Apple9 and 64 KB: apple7's kernels, and "
	    "ggml's M4 Max tuning of vector flash attention (2 or 4 queries "
	    "a threadgroup, split and reduced), faster or slower by host: "
	    "profile auto measures.  Cua's published evidence ran it.", true,
	    "" },
	{ "apple7", 1007, 65536, 0, "Apple7 and 64 KB: ggml's SIMD-group "
	    "reduction and matrix kernels (mul_mm, flash attention, CUMSUM, "
	    "norms) and bfloat, vector flash attention at its baseline (one "
	    "query a threadgroup).", true, "" },
};

static int
profile_uint(plist_t dict, const char *key, const char *file, uint64_t lo,
    uint64_t hi, uint64_t *out, char *err, size_t errlen)
{
	plist_t	node = plist_dict_get_item(dict, key);

	if (node == NULL)
		return 0;
	if (plist_get_node_type(node) != PLIST_UINT) {
		snprintf(err, errlen, "%s:%s: expected an integer, found %s",
		    file, key, mc_plist_type_name(node));
		return -1;
	}
	plist_get_uint_val(node, out);
	if (*out < lo || *out > hi) {
		snprintf(err, errlen, "%s:%s: %llu is outside %llu-%llu", file,
		    key, (unsigned long long)*out, (unsigned long long)lo,
		    (unsigned long long)hi);
		return -1;
	}
	return 0;
}

/* Fill p from a profile dictionary; -1 with p->error set. */
int
profile_parse(plist_t root, const char *file, struct profile *p)
{
	static const char *const known[] = { "AppleFamilyMax",
	    "MaxThreadgroupMemory", "RecommendedWorkingSetSize",
	    "Description" };
	plist_dict_iter	 it = NULL;
	plist_t		 node;
	char		*key, *desc;
	size_t		 i;

	p->error[0] = '\0';
	p->threadgroup_memory = 65536;
	if (plist_get_node_type(root) != PLIST_DICT) {
		snprintf(p->error, sizeof p->error, "%s: expected a dictionary, "
		    "found %s", file, mc_plist_type_name(root));
		return -1;
	}
	if (plist_dict_get_item(root, "AppleFamilyMax") == NULL) {
		snprintf(p->error, sizeof p->error, "%s:AppleFamilyMax: "
		    "required", file);
		return -1;
	}
	if (profile_uint(root, "AppleFamilyMax", file, 1001, 1999,
	    &p->family_max, p->error, sizeof p->error) == -1 ||
	    profile_uint(root, "MaxThreadgroupMemory", file, 0, 1048576,
	    &p->threadgroup_memory, p->error, sizeof p->error) == -1 ||
	    profile_uint(root, "RecommendedWorkingSetSize", file, 0,
	    UINT64_MAX, &p->working_set, p->error, sizeof p->error) == -1)
		return -1;
	node = plist_dict_get_item(root, "Description");
	if (node != NULL && plist_get_node_type(node) != PLIST_STRING) {
		snprintf(p->error, sizeof p->error, "%s:Description: expected a "
		    "string, found %s", file, mc_plist_type_name(node));
		return -1;
	}
	if ((desc = mc_plist_string(root, "Description")) != NULL) {
		snprintf(p->description, sizeof p->description, "%s", desc);
		free(desc);
	}
	plist_dict_new_iter(root, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(root, it, &key, &node);
		if (key == NULL)
			break;
		for (i = 0; i < sizeof known / sizeof known[0]; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == sizeof known / sizeof known[0] && p->error[0] == '\0')
			snprintf(p->error, sizeof p->error, "%s:%s: unknown key",
			    file, key);
		free(key);
	}
	free(it);
	if (p->error[0] != '\0')
		return -1;
	return 0;
}

static struct profile *
profile_slot(struct profile_set *set, const char *name)
{
	size_t	i;

	for (i = 0; i < set->count; i++)
		if (strcmp(set->list[i].name, name) == 0)
			return &set->list[i];
	set->list = realloc(set->list, (set->count + 1) * sizeof *set->list);
	memset(&set->list[set->count], 0, sizeof *set->list);
	snprintf(set->list[set->count].name, sizeof set->list->name, "%s",
	    name);
	return &set->list[set->count++];
}

void
profile_load_all(struct profile_set *set, const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], name[MC_NAME_MAX + 1], why[256];
	struct profile	*p;
	plist_t		 root;
	size_t		 n, i;

	profile_free_all(set);
	for (i = 0; i < sizeof profile_builtins / sizeof profile_builtins[0];
	    i++)
		*profile_slot(set, profile_builtins[i].name) =
		    profile_builtins[i];
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n < 7 || n - 6 > MC_NAME_MAX ||
		    strcmp(de->d_name + n - 6, ".plist") != 0)
			continue;
		snprintf(name, sizeof name, "%.*s", (int)(n - 6), de->d_name);
		/* Names the daemon gives a meaning of its own are not files'. */
		if (!jobfile_name_ok(name) || strcmp(name, "stock") == 0 ||
		    strcmp(name, PROFILE_AUTO) == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		p = profile_slot(set, name);
		memset(p, 0, sizeof *p);
		snprintf(p->name, sizeof p->name, "%s", name);
		if (mc_plist_read_file(path, &root, why, sizeof why) == -1) {
			mc_fmt(p->error, sizeof p->error, "%s: %s",
			    de->d_name, why);
			continue;
		}
		if (profile_parse(root, de->d_name, p) == -1)
			log_warnx("profile %s", p->error);
		plist_free(root);
	}
	closedir(d);
}

void
profile_free_all(struct profile_set *set)
{
	free(set->list);
	set->list = NULL;
	set->count = 0;
}

/*
 * Profile auto's order: after `after` (NULL: from the top), the shipped
 * profile of the next lower family, stock never; NULL past the last.
 */
const struct profile *
profile_next_shipped(const struct profile_set *set,
    const struct profile *after)
{
	const struct profile	*p, *best = NULL;
	uint64_t		 below = after ? after->family_max : UINT64_MAX;
	size_t			 i;

	for (i = 0; i < set->count; i++) {
		p = &set->list[i];
		if (p->builtin && p->family_max != 0 &&
		    p->family_max < below && (best == NULL ||
		    p->family_max > best->family_max))
			best = p;
	}
	return best;
}

const struct profile *
profile_find(const struct profile_set *set, const char *name)
{
	size_t	i;

	for (i = 0; i < set->count; i++)
		if (strcmp(set->list[i].name, name) == 0)
			return &set->list[i];
	return NULL;
}
