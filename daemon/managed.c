/* SPDX-License-Identifier: MIT */
/*
 * Managed settings: what an administrator forces through MDM, read from
 * the managed-preferences plist of the org.metalcap domain (on Linux, a
 * file under --home standing in for it).  Keys:
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

void
managed_load(struct mcd *d)
{
	struct managed	*m = &d->managed;
	char		 why[256], *s;
	plist_t		 root, list;
	uint32_t	 i;

	for (i = 0; i < m->nallowed; i++)
		free(m->allowed[i]);
	free(m->allowed);
	memset(m, 0, sizeof *m);
	if (d->paths.managed[0] == '\0' ||
	    mc_plist_read_file(d->paths.managed, &root, why, sizeof why) == -1)
		return;
	if (plist_get_node_type(root) != PLIST_DICT) {
		log_warnx("%s: not a dictionary; ignored", d->paths.managed);
		plist_free(root);
		return;
	}
	m->present = true;
	m->force_stock = mc_plist_bool(root, "ForceStock", false);
	if ((s = mc_plist_string(root, "DefaultProfile")) != NULL) {
		snprintf(m->default_profile, sizeof m->default_profile, "%s", s);
		free(s);
	}
	list = plist_dict_get_item(root, "AllowedProfiles");
	if (list != NULL && plist_get_node_type(list) == PLIST_ARRAY) {
		m->has_allowed = true;
		m->allowed = calloc(plist_array_get_size(list) + 1,
		    sizeof *m->allowed);
		for (i = 0; i < plist_array_get_size(list); i++) {
			s = NULL;
			plist_get_string_val(plist_array_get_item(list, i), &s);
			if (s != NULL)
				m->allowed[m->nallowed++] = s;
		}
	}
	plist_free(root);
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
