/* SPDX-License-Identifier: MIT */
/*
 * UnlockOnlyWhere: an administrator's allowlist of the combinations a
 * profile may unlock in, made by metalcapctl fleet allowlist from a
 * fleet's verify verdicts and pushed as managed preferences.  Each entry
 * is a dictionary over the keys below, each a pattern (fnmatch(3): "*"
 * any value; an absent key is "*"); a run unlocks only where every key
 * of one entry matches, or, with LocalVerifyAllows, where verify passed
 * on this very combination here, its newest verdict on it a pass.  An OS
 * update or a new llama.cpp build is a new combination: it waits for the
 * fleet's evidence or for a wider entry.  No event loop.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

const char *const allow_plist_keys[ALLOW_KEYS] = { "Profile", "LlamaBuild",
    "ModelSHA256", "OSBuild", "CPUBrand", "HWModel", "ShimVersion" };
/* The same, as verify's records (state/verified.json) name them. */
const char *const allow_record_keys[ALLOW_KEYS] = { "profile",
    "llama_build", "model_sha256", "os_build", "cpu_brand", "hw_model",
    "shim_version" };

static int
allow_key_index(const char *key)
{
	int	i;

	for (i = 0; i < ALLOW_KEYS; i++)
		if (strcmp(allow_plist_keys[i], key) == 0)
			return i;
	return -1;
}

/* Every entry a dictionary of known keys and string values; -1, why. */
int
allow_parse(plist_t list, const char *file, char *why, size_t len)
{
	plist_dict_iter	 it = NULL;
	plist_t		 entry, v;
	char		*k;
	uint32_t	 i;
	int		 rc = 0;

	for (i = 0; rc == 0 && i < plist_array_get_size(list); i++) {
		entry = plist_array_get_item(list, i);
		if (plist_get_node_type(entry) != PLIST_DICT) {
			snprintf(why, len, "%s:UnlockOnlyWhere[%u]: expected "
			    "a dictionary, found %s", file, i,
			    mc_plist_type_name(entry));
			return -1;
		}
		plist_dict_new_iter(entry, &it);
		for (;;) {
			k = NULL;
			plist_dict_next_item(entry, it, &k, &v);
			if (k == NULL)
				break;
			if (allow_key_index(k) < 0) {
				mc_fmt(why, len, "%s:UnlockOnlyWhere[%u].%s: "
				    "unknown key", file, i, k);
				rc = -1;
			} else if (plist_get_node_type(v) != PLIST_STRING) {
				mc_fmt(why, len, "%s:UnlockOnlyWhere[%u].%s: "
				    "expected a string, found %s", file, i, k,
				    mc_plist_type_name(v));
				rc = -1;
			}
			free(k);
			if (rc == -1)
				break;
		}
		free(it);
	}
	return rc;
}

/* How many of entry's keys c matches; the first it does not, in *miss. */
static int
allow_matches(plist_t entry, const struct allow_combo *c, int *miss)
{
	char	*pattern;
	int	 i, n = 0;

	*miss = -1;
	for (i = 0; i < ALLOW_KEYS; i++) {
		pattern = mc_plist_string(entry, allow_plist_keys[i]);
		if (pattern == NULL || fnmatch(pattern, c->value[i], 0) == 0)
			n++;
		else if (*miss < 0)
			*miss = i;
		free(pattern);
	}
	return n;
}

/*
 * Did verify's newest verdict here on exactly c pass?  Never for a run
 * whose identity is not known in full: two unknowns are not the same.
 */
static bool
allow_verified(json_t *verified, const struct allow_combo *c)
{
	json_t		*r, *newest = NULL;
	const char	*v;
	size_t		 i;
	int		 k;

	for (k = 0; k < ALLOW_KEYS; k++)
		if (c->value[k][0] == '\0')
			return false;

	json_array_foreach(verified, i, r) {
		for (k = 0; k < ALLOW_KEYS; k++)
			if ((v = json_string_value(json_object_get(r,
			    allow_record_keys[k]))) == NULL ||
			    strcmp(v, c->value[k]) != 0)
				break;
		if (k == ALLOW_KEYS && (newest == NULL ||
		    json_integer_value(json_object_get(r, "seq")) >
		    json_integer_value(json_object_get(newest, "seq"))))
			newest = r;
	}
	v = json_string_value(json_object_get(newest, "verdict"));
	return v != NULL && strcmp(v, "pass") == 0;
}

/*
 * May a run about c unlock?  True without an allowlist.  Else false,
 * and why: the key of the nearest entry that did not match, its value
 * here and the entry's pattern.
 */
bool
allow_check(const struct managed *m, const struct allow_combo *c,
    json_t *verified, char *why, size_t len)
{
	plist_t		 entry, best = NULL;
	uint32_t	 i;
	int		 n, most = -1, miss = -1, mk;
	char		*want;

	why[0] = '\0';
	if (m->unlock_only_where == NULL)
		return true;
	for (i = 0; i < plist_array_get_size(m->unlock_only_where); i++) {
		entry = plist_array_get_item(m->unlock_only_where, i);
		if ((n = allow_matches(entry, c, &mk)) == ALLOW_KEYS)
			return true;
		if (n > most) {
			most = n;
			best = entry;
			miss = mk;
		}
	}
	if (m->local_verify_allows && allow_verified(verified, c))
		return true;
	if (best == NULL) {
		snprintf(why, len, "UnlockOnlyWhere has no entry");
		return false;
	}
	want = mc_plist_string(best, allow_plist_keys[miss]);
	mc_fmt(why, len, "UnlockOnlyWhere: %s here is \"%s\", the nearest "
	    "entry allows \"%s\"%s", allow_plist_keys[miss],
	    c->value[miss][0] ? c->value[miss] : "(not known)", want ? want :
	    "", m->local_verify_allows ? "; no verify of this combination "
	    "passed here" : "");
	free(want);
	return false;
}
