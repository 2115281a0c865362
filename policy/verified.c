/* SPDX-License-Identifier: MIT */
/*
 * What metalcapctl verify found on this guest, kept in state/verified.json:
 * one verdict per profile, program build and model (each by its SHA-256),
 * the newest replacing an older one of the same three, at most
 * VERIFIED_MAX.  metalcapctl writes it; metalcapd reads it for status,
 * the fleet file and the gate: a profile whose newest verdict failed is
 * held back on this guest as a failed probe holds it (kernels that answer
 * wrong are the device's, whatever the model), until a verification of it
 * passes.  Written aside and renamed, so a reader sees one whole file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

#define VERIFIED_MAX	32

/*
 * The records as an array, and whether the file was whole: absent is an
 * empty list, one that does not read as a list is none (*whole false).
 */
static json_t *
verified_read(const char *state_dir, bool *whole)
{
	char	 path[PATH_MAX];
	json_t	*all = NULL;

	*whole = mc_fmt(path, sizeof path, "%s/verified.json", state_dir) ==
	    0;
	if (*whole && (all = json_load_file(path, 0, NULL)) == NULL &&
	    access(path, F_OK) == 0)
		*whole = false;
	if (json_is_array(all))
		return all;
	if (all != NULL)
		*whole = false;
	json_decref(all);
	return json_array();
}

/* The records as an array; an absent or unreadable file is none. */
json_t *
verified_load(const char *state_dir)
{
	bool	whole;

	return verified_read(state_dir, &whole);
}

static bool
verified_same(json_t *a, json_t *b, const char *key)
{
	const char	*x = json_string_value(json_object_get(a, key));
	const char	*y = json_string_value(json_object_get(b, key));

	return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/* The oldest record's index (the one to drop when full). */
static size_t
verified_oldest(json_t *all)
{
	json_int_t	 best = 0, date;
	size_t		 i, at = 0;
	json_t		*r;

	json_array_foreach(all, i, r) {
		date = json_integer_value(json_object_get(r, "date"));
		if (i == 0 || date < best) {
			best = date;
			at = i;
		}
	}
	return at;
}

/*
 * Keep record (profile, program_sha256, model_sha256, date, verdict,
 * ...), replacing the one of the same three, written durably (a crash
 * leaves the old list or the new).  A file that does not read as the list
 * is left as it is, its holds with it.  0, or -1 and why.
 */
int
verified_remember(const char *state_dir, json_t *record, char *why,
    size_t whylen)
{
	char	 path[PATH_MAX], *text = NULL;
	bool	 whole;
	json_t	*all = verified_read(state_dir, &whole), *r;
	size_t	 i;
	int	 rc = -1;

	if (!whole) {
		snprintf(why, whylen, "%s/verified.json is not a list of "
		    "verify's verdicts: left as it is (move it away to start "
		    "a new one)", state_dir);
		json_decref(all);
		return -1;
	}
	json_array_foreach(all, i, r)
		if (verified_same(r, record, "profile") &&
		    verified_same(r, record, "program_sha256") &&
		    verified_same(r, record, "model_sha256")) {
			json_array_remove(all, i);
			break;
		}
	while (json_array_size(all) >= VERIFIED_MAX)
		json_array_remove(all, verified_oldest(all));
	json_array_append(all, record);
	if (mc_fmt(path, sizeof path, "%s/verified.json", state_dir) == -1)
		snprintf(why, whylen, "%s: the path is too long", state_dir);
	else if ((text = json_dumps(all, JSON_COMPACT)) == NULL)
		snprintf(why, whylen, "out of memory");
	else
		rc = mc_write_atomic(path, text, strlen(text), 0600, why,
		    whylen);
	free(text);
	json_decref(all);
	return rc;
}

/*
 * The newest verdict on profile (NULL: on any), whatever the program or
 * model; NULL when none was verified here.  Borrowed from all.
 */
json_t *
verified_newest(json_t *all, const char *profile)
{
	json_t		*r, *best = NULL;
	json_int_t	 when = 0;
	size_t		 i;
	const char	*p;

	json_array_foreach(all, i, r) {
		p = json_string_value(json_object_get(r, "profile"));
		if (profile != NULL && (p == NULL || strcmp(p, profile) != 0))
			continue;
		if (best == NULL || json_integer_value(json_object_get(r,
		    "date")) >= when) {
			best = r;
			when = json_integer_value(json_object_get(r, "date"));
		}
	}
	return best;
}

/* Does this guest's newest verdict on profile hold it back? */
bool
verified_holds_back(json_t *all, const char *profile)
{
	json_t		*r = verified_newest(all, profile);
	const char	*v = json_string_value(json_object_get(r, "verdict"));

	return v != NULL && strcmp(v, "fail") == 0;
}
