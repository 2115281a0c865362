/* SPDX-License-Identifier: MIT */
/*
 * Managed settings: what an administrator forces through MDM, read from
 * the managed-preferences plists of the org.metalcap domain,
 * /Library/Managed Preferences/[USER/]org.metalcap.plist (on Linux, files
 * under --home standing in for them).  Keys:
 *
 *   ForceStock       boolean: every job runs stock; enable is refused
 *   AllowedProfiles  array of strings: the only profiles jobs may use,
 *                    and only as shipped (a user's profiles.d file of an
 *                    allowed name is not used: its values are the user's)
 *   DefaultProfile   string: the profile of jobs that name none
 *   UnlockOnlyWhere  array of dictionaries: a profile unlocks only where
 *                    an entry matches what the run is about (allow.c)
 *   LocalVerifyAllows boolean: or where a verify of that very combination
 *                    passed on this guest
 *
 * A request against a forced key is refused with EMANAGED, naming it.
 * Policy fails safe: a managed file that exists but cannot be used
 * (unreadable, a link, not a property list, a key of the wrong type) means
 * stock for every job until it is fixed, said loudly in the log, in each
 * job's reason and in hello (so in doctor).
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

static void
managed_broken(struct managed *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The file cannot be trusted: stock for everything, and say why. */
static void
managed_broken(struct managed *m, const char *fmt, ...)
{
	va_list	ap;

	if (m->error[0] != '\0')
		return;		/* the first reason is the one to fix */
	va_start(ap, fmt);
	vsnprintf(m->error, sizeof m->error, fmt, ap);
	va_end(ap);
	m->present = true;
	log_warnx("managed settings unusable: %s; every job runs stock until "
	    "this is fixed", m->error);
}

/* A managed key of the wrong type makes the whole file unusable. */
static bool
managed_typed(struct managed *m, plist_t root, const char *file,
    const char *key, plist_type want)
{
	plist_t	node = plist_dict_get_item(root, key);

	if (node == NULL)
		return false;
	if (plist_get_node_type(node) == want)
		return true;
	managed_broken(m, "%s:%s: expected %s, found %s", file, key,
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

static void
managed_allowed(struct managed *m, plist_t list, const char *file)
{
	plist_t		item;
	uint32_t	i;
	char		*s;

	managed_clear_allowed(m);
	m->has_allowed = true;
	m->allowed = calloc(plist_array_get_size(list) + 1, sizeof *m->allowed);
	for (i = 0; i < plist_array_get_size(list); i++) {
		item = plist_array_get_item(list, i);
		s = NULL;
		if (plist_get_node_type(item) == PLIST_STRING)
			plist_get_string_val(item, &s);
		else
			managed_broken(m, "%s:AllowedProfiles[%u]: expected a "
			    "string, found %s", file, i,
			    mc_plist_type_name(item));
		if (s != NULL)
			m->allowed[m->nallowed++] = s;
	}
}

/* Apply one managed-preferences file over what is already in m. */
static void
managed_merge(struct managed *m, const char *file)
{
	char		 why[256], *s;
	plist_t		 root;
	struct stat	 sb;

	/* No file is no policy; a file we cannot use is the safe one. */
	if (file[0] == '\0' || (lstat(file, &sb) == -1 && errno == ENOENT))
		return;
	if (mc_plist_read_file(file, &root, why, sizeof why) == -1) {
		managed_broken(m, "%s: %s", file, why);
		return;
	}
	m->present = true;
	if (plist_get_node_type(root) != PLIST_DICT)
		managed_broken(m, "%s: expected a dictionary, found %s", file,
		    mc_plist_type_name(root));
	if (managed_typed(m, root, file, "ForceStock", PLIST_BOOLEAN))
		m->force_stock = mc_plist_bool(root, "ForceStock", false);
	if (managed_typed(m, root, file, "DefaultProfile", PLIST_STRING) &&
	    (s = mc_plist_string(root, "DefaultProfile")) != NULL) {
		snprintf(m->default_profile, sizeof m->default_profile, "%s", s);
		free(s);
	}
	if (managed_typed(m, root, file, "AllowedProfiles", PLIST_ARRAY))
		managed_allowed(m, plist_dict_get_item(root,
		    "AllowedProfiles"), file);
	if (managed_typed(m, root, file, "LocalVerifyAllows", PLIST_BOOLEAN))
		m->local_verify_allows = mc_plist_bool(root,
		    "LocalVerifyAllows", false);
	if (managed_typed(m, root, file, "UnlockOnlyWhere", PLIST_ARRAY)) {
		if (allow_parse(plist_dict_get_item(root, "UnlockOnlyWhere"),
		    file, why, sizeof why) == -1)
			managed_broken(m, "%s", why);
		if (m->unlock_only_where != NULL)
			plist_free(m->unlock_only_where);
		m->unlock_only_where = plist_copy(plist_dict_get_item(root,
		    "UnlockOnlyWhere"));
	}
	plist_free(root);
}

/*
 * The computer-level file, then the user-level one over it: settings an
 * MDM pushes to the user channel win, as with CFPreferences.
 */
void
managed_load(struct managed *m, const struct paths *paths)
{
	managed_free(m);
	managed_merge(m, paths->managed);
	managed_merge(m, paths->managed_user);
}

void
managed_free(struct managed *m)
{
	managed_clear_allowed(m);
	if (m->unlock_only_where != NULL)
		plist_free(m->unlock_only_where);
	memset(m, 0, sizeof *m);
}

/* The profile of a job that names none. */
const char *
managed_default_profile(const struct managed *m)
{
	return m->default_profile[0] ? m->default_profile : PROFILE_DEFAULT;
}

/*
 * NULL if the profile of that name may be used; else the managed key that
 * forbids it.  Under AllowedProfiles only a shipped profile may be, so a
 * user's file cannot give an allowed name higher values.
 */
const char *
managed_forbids(const struct managed *m, const struct profile_set *profiles,
    const char *profile)
{
	const struct profile	*p;
	size_t			 i;

	if (strcmp(profile, "stock") == 0)
		return NULL;
	if (m->error[0] != '\0' || m->force_stock)
		return "ForceStock";
	if (!m->has_allowed)
		return NULL;
	for (i = 0; i < m->nallowed; i++)
		if (strcmp(m->allowed[i], profile) == 0)
			break;
	if (i == m->nallowed)
		return "AllowedProfiles";
	p = profile_find(profiles, profile);
	return p != NULL && !p->builtin ? "AllowedProfiles" : NULL;
}
