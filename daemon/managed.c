/* SPDX-License-Identifier: MIT */
/*
 * Managed settings: what an administrator forces through MDM, read from
 * the managed-preferences plists of the org.metalcap domain,
 * /Library/Managed Preferences/[USER/]org.metalcap.plist (on Linux, files
 * under --home standing in for them).  Keys:
 *
 *   ForceStock       boolean: every job runs stock; enable is refused
 *   AllowedProfiles  array of strings: the only profiles jobs may use
 *   DefaultProfile   string: the profile of jobs that name none
 *
 * A request against a forced key is refused with EMANAGED, naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_plist.h"
#include "mcd.h"

/* Log a managed key of the wrong type; it is then ignored. */
static bool
managed_typed(plist_t root, const char *file, const char *key,
    plist_type want)
{
	plist_t	node = plist_dict_get_item(root, key);

	if (node == NULL)
		return false;
	if (plist_get_node_type(node) == want)
		return true;
	log_warnx("%s:%s: expected %s, found %s; ignored", file, key,
	    want == PLIST_BOOLEAN ? "a boolean" : want == PLIST_STRING ?
	    "a string" : "an array of strings", mc_plist_type_name(node));
	return false;
}

static void
managed_clear_allowed(struct managed *m)
{
	size_t	i;

	for (i = 0; i < m->nallowed; i++)
		free(m->allowed[i]);
	free(m->allowed);
	m->allowed = NULL;
	m->nallowed = 0;
	m->has_allowed = false;
}

/* Apply one managed-preferences file over what is already in m. */
static void
managed_merge(struct managed *m, const char *file)
{
	char		 why[256], *s;
	plist_t		 root, list, item;
	uint32_t	 i;

	if (file[0] == '\0' ||
	    mc_plist_read_file(file, &root, why, sizeof why) == -1)
		return;
	if (plist_get_node_type(root) != PLIST_DICT) {
		log_warnx("%s: not a dictionary; ignored", file);
		plist_free(root);
		return;
	}
	m->present = true;
	if (managed_typed(root, file, "ForceStock", PLIST_BOOLEAN))
		m->force_stock = mc_plist_bool(root, "ForceStock", false);
	if (managed_typed(root, file, "DefaultProfile", PLIST_STRING) &&
	    (s = mc_plist_string(root, "DefaultProfile")) != NULL) {
		snprintf(m->default_profile, sizeof m->default_profile, "%s", s);
		free(s);
	}
	if (managed_typed(root, file, "AllowedProfiles", PLIST_ARRAY)) {
		list = plist_dict_get_item(root, "AllowedProfiles");
		managed_clear_allowed(m);
		m->has_allowed = true;
		m->allowed = calloc(plist_array_get_size(list) + 1,
		    sizeof *m->allowed);
		for (i = 0; i < plist_array_get_size(list); i++) {
			item = plist_array_get_item(list, i);
			s = NULL;
			if (plist_get_node_type(item) == PLIST_STRING)
				plist_get_string_val(item, &s);
			else
				log_warnx("%s:AllowedProfiles[%u]: expected a "
				    "string; ignored", file, i);
			if (s != NULL)
				m->allowed[m->nallowed++] = s;
		}
	}
	plist_free(root);
}

/*
 * The computer-level file, then the user-level one over it: settings an
 * MDM pushes to the user channel win, as with CFPreferences.
 */
void
managed_load(struct mcd *d)
{
	struct managed	*m = &d->managed;

	managed_clear_allowed(m);
	memset(m, 0, sizeof *m);
	managed_merge(m, d->paths.managed);
	managed_merge(m, d->paths.managed_user);
}

/* The profile of a job that names none. */
const char *
managed_default_profile(const struct mcd *d)
{
	return d->managed.default_profile[0] ? d->managed.default_profile :
	    PROFILE_DEFAULT;
}

/* NULL if profile may be used; else the managed key that forbids it. */
const char *
managed_forbids(const struct mcd *d, const char *profile)
{
	size_t	i;

	if (d->managed.force_stock && strcmp(profile, "stock") != 0)
		return "ForceStock";
	if (!d->managed.has_allowed || strcmp(profile, "stock") == 0)
		return NULL;
	for (i = 0; i < d->managed.nallowed; i++)
		if (strcmp(d->managed.allowed[i], profile) == 0)
			return NULL;
	return "AllowedProfiles";
}
