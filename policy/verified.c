/* SPDX-License-Identifier: MIT */
/*
 * What metalcapctl verify found on this guest, kept in state/verified.json:
 * one verdict per profile, program build and model (each by its SHA-256),
 * the newest replacing an older one of the same three, at most
 * VERIFIED_MAX.  metalcapctl writes it; metalcapd reads it for status,
 * the fleet file and the gate: a profile whose newest verdict failed is
 * held back on this guest as a failed probe holds it (kernels that answer
 * wrong are the device's, whatever the model), until a verification of it
 * passes under limits no looser than the failure's.
 *
 * A hold must not be lost, so the record fails closed:
 * - writers take state/verified.lock, so that two verifies at once both
 *   land (each reads the list and renames a new one whole);
 * - records are ordered by seq, one more than any before, never by the
 *   clock (a guest's clock goes back after a snapshot is restored);
 * - each names its machine, and a clone does not take its image's;
 * - a full list drops the oldest record that is not its profile's newest;
 * - the writer keeps the last good list as verified.json.bak; a list that
 *   does not read (damaged, not a regular file) is read from there, and
 *   with neither, every profile is held back, the damage named.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "policy.h"

#define VERIFIED_MAX	32
#define VERIFIED_ANY	"*"	/* a damaged record's hold: every profile */

/*
 * The list at path, or NULL with why: absent is an empty list; one that
 * is not a regular file (opened without blocking: a FIFO would hang the
 * reader) or does not read as a list is damaged.
 */
static json_t *
verified_read_file(const char *path, char *why, size_t whylen)
{
	struct stat	 sb;
	json_error_t	 err;
	json_t		*all;
	FILE		*f;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return json_array();
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		snprintf(why, whylen, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	all = json_loadf(f, 0, &err);
	fclose(f);
	if (json_is_array(all))
		return all;
	snprintf(why, whylen, "%s: not a list of verify's verdicts%s%s", path,
	    all == NULL ? ": " : "", all == NULL ? err.text : "");
	json_decref(all);
	return NULL;
}

/*
 * The records, from verified.json or, damaged, its last good copy; with
 * neither, NULL and why.  *damaged names the damage found on the way.
 */
static json_t *
verified_read(const char *state_dir, char *damaged, size_t len)
{
	char	 path[PATH_MAX], why[PATH_MAX + 128];
	json_t	*all;

	damaged[0] = '\0';
	if (mc_fmt(path, sizeof path, "%s/verified.json", state_dir) == -1) {
		snprintf(damaged, len, "%s: the path is too long", state_dir);
		return NULL;
	}
	if ((all = verified_read_file(path, damaged, len)) != NULL)
		return all;
	if (mc_fmt(path, sizeof path, "%s/verified.json.bak", state_dir) ==
	    -1 || access(path, F_OK) == -1)
		return NULL;
	if ((all = verified_read_file(path, why, sizeof why)) == NULL)
		return NULL;
	return all;
}

/*
 * The machine's id and the guest's (paths_guest), or "" each when it
 * cannot be told (then no record is skipped by it).
 */
static void
verified_machine(const struct paths *p, char *machine, char *guest,
    size_t len)
{
	if (!paths_machine(p, machine, len))
		machine[0] = '\0';
	if (!paths_guest(p, guest, len))
		guest[0] = '\0';
}

/*
 * Was record made on another machine (an image's, on its clone)?  By the
 * guest where the record has one: a tart clone copies the hardware UUID,
 * and its image's verdicts would count in the fleet as its own.
 */
static bool
verified_foreign(json_t *record, const char *machine, const char *guest)
{
	const char	*m = json_string_value(json_object_get(record,
			    "machine"));
	const char	*g = json_string_value(json_object_get(record,
			    "guest"));

	return (machine[0] != '\0' && m != NULL && strcmp(m, machine) != 0) ||
	    (guest[0] != '\0' && g != NULL && strcmp(g, guest) != 0);
}

/*
 * The records as an array, those of other machines left out.  A file
 * that does not read, with no good copy, holds back every profile: one
 * record of profile "*" that failed, naming the damage.
 */
json_t *
verified_load(const struct paths *p)
{
	char	 damaged[PATH_MAX + 128], machine[256], guest[256];
	json_t	*all = verified_read(p->state, damaged, sizeof damaged), *r;
	size_t	 i;

	if (all == NULL)
		return json_pack("[{s:s, s:s, s:I, s:s}]", "profile",
		    VERIFIED_ANY, "verdict", "fail", "seq", (json_int_t)-1,
		    "damaged", damaged);
	verified_machine(p, machine, guest, sizeof machine);
	json_array_foreach(all, i, r)
		if (verified_foreign(r, machine, guest)) {
			json_array_remove(all, i);
			i--;
		}
	return all;
}

static bool
verified_same(json_t *a, json_t *b, const char *key)
{
	const char	*x = json_string_value(json_object_get(a, key));
	const char	*y = json_string_value(json_object_get(b, key));

	return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/*
 * Does a come after b?  By seq; records from before seq (none: -1) by
 * their place in the list, which only ever appended.
 */
static bool
verified_after(json_t *all, json_t *a, json_t *b)
{
	json_int_t	sa = json_integer_value(json_object_get(a, "seq"));
	json_int_t	sb = json_integer_value(json_object_get(b, "seq"));
	size_t		i;
	json_t		*r;

	if (json_object_get(a, "seq") == NULL)
		sa = -1;
	if (json_object_get(b, "seq") == NULL)
		sb = -1;
	if (sa != sb)
		return sa > sb;
	json_array_foreach(all, i, r)
		if (r == b)
			return false;	/* b came first... */
		else if (r == a)
			return true;	/* ...or a did: a is the later */
	return false;
}

/* The profile's newest record (a damaged list's "*" stands for all). */
static json_t *
verified_newest_in(json_t *all, const char *profile, json_t *before)
{
	json_t		*r, *best = NULL;
	size_t		 i;
	const char	*p;

	json_array_foreach(all, i, r) {
		p = json_string_value(json_object_get(r, "profile"));
		if (profile != NULL && (p == NULL || (strcmp(p, profile) != 0 &&
		    strcmp(p, VERIFIED_ANY) != 0)))
			continue;
		if (before != NULL && (r == before ||
		    verified_after(all, r, before)))
			continue;
		if (best == NULL || verified_after(all, r, best))
			best = r;
	}
	return best;
}

/* The record to drop from a full list: the oldest not its profile's newest. */
static size_t
verified_evict(json_t *all)
{
	json_t		*r, *oldest = NULL;
	size_t		 i, at = 0;

	json_array_foreach(all, i, r) {
		if (verified_newest_in(all, json_string_value(json_object_get(
		    r, "profile")), NULL) == r)
			continue;
		if (oldest == NULL || verified_after(all, oldest, r)) {
			oldest = r;
			at = i;
		}
	}
	return oldest != NULL ? at : 0;
}

/* One more than every seq in the list. */
static json_int_t
verified_next_seq(json_t *all)
{
	json_int_t	 next = 1, s;
	size_t		 i;
	json_t		*r;

	json_array_foreach(all, i, r)
		if ((s = json_integer_value(json_object_get(r, "seq"))) >= next)
			next = s + 1;
	return next;
}

/* Write all as path, durably; its last good copy kept as path.bak. */
static int
verified_write(const char *path, json_t *all, char *why, size_t whylen)
{
	char	bak[PATH_MAX], *text;
	int	rc = -1;

	if ((text = json_dumps(all, JSON_COMPACT)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (mc_fmt(bak, sizeof bak, "%s.bak", path) == -1)
		snprintf(why, whylen, "%s: the path is too long", path);
	else if (mc_write_atomic(bak, text, strlen(text), 0600, why,
	    whylen) == 0)
		rc = mc_write_atomic(path, text, strlen(text), 0600, why,
		    whylen);
	free(text);
	return rc;
}

/*
 * Keep record (profile, program_sha256, model_sha256, date, verdict,
 * limits, ...), given the next seq and this machine, replacing the one of
 * the same three, written durably (a crash leaves the old list or the
 * new).  One writer at a time (state/verified.lock).  A damaged list is
 * moved aside as verified.json.damaged and the new one made from its last
 * good copy; with none, it is left as it is, its holds with it.  0, or -1
 * and why.
 */
int
verified_remember(const struct paths *p, json_t *record, char *why,
    size_t whylen)
{
	char	 path[PATH_MAX], lock[PATH_MAX], aside[PATH_MAX];
	char	 damaged[PATH_MAX + 128], machine[256], guest[256];
	json_t	*all = NULL, *r;
	size_t	 i;
	int	 fd = -1, rc = -1;

	if (mc_fmt(path, sizeof path, "%s/verified.json", p->state) == -1 ||
	    mc_fmt(lock, sizeof lock, "%s/verified.lock", p->state) == -1 ||
	    mc_fmt(aside, sizeof aside, "%s.damaged", path) == -1) {
		snprintf(why, whylen, "%s: the path is too long", p->state);
		return -1;
	}
	if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    flock(fd, LOCK_EX) == -1) {
		snprintf(why, whylen, "%s: %s", lock, strerror(errno));
		goto fail;
	}
	if ((all = verified_read(p->state, damaged, sizeof damaged)) == NULL) {
		snprintf(why, whylen, "%s, and it has no good copy: left as it "
		    "is, every profile held back (move it away to start a new "
		    "one)", damaged);
		goto fail;
	}
	if (damaged[0] != '\0' && rename(path, aside) == -1) {
		snprintf(why, whylen, "%s: %s", aside, strerror(errno));
		goto fail;
	}
	json_array_foreach(all, i, r)
		if (verified_same(r, record, "profile") &&
		    verified_same(r, record, "program_sha256") &&
		    verified_same(r, record, "model_sha256")) {
			json_array_remove(all, i);
			break;
		}
	verified_machine(p, machine, guest, sizeof machine);
	json_object_set_new(record, "seq", json_integer(
	    verified_next_seq(all)));
	if (machine[0] != '\0')
		json_object_set_new(record, "machine", json_string(machine));
	if (guest[0] != '\0')
		json_object_set_new(record, "guest", json_string(guest));
	while (json_array_size(all) >= VERIFIED_MAX)
		json_array_remove(all, verified_evict(all));
	json_array_append(all, record);
	rc = verified_write(path, all, why, whylen);
fail:
	json_decref(all);
	if (fd != -1)
		close(fd);
	return rc;
}

/*
 * The newest verdict on profile (NULL: on any), whatever the program or
 * model; NULL when none was verified here.  Borrowed from all.
 */
json_t *
verified_newest(json_t *all, const char *profile)
{
	return verified_newest_in(all, profile, NULL);
}

/* Is a's limit named key looser than b's (a maximum higher, a minimum lower)? */
static bool
verified_looser(json_t *a, json_t *b, const char *key, bool maximum)
{
	json_t	*x = json_object_get(json_object_get(a, "limits"), key);
	json_t	*y = json_object_get(json_object_get(b, "limits"), key);

	if (!json_is_number(x) || !json_is_number(y))
		return false;
	return maximum ? json_number_value(x) > json_number_value(y) :
	    json_number_value(x) < json_number_value(y);
}

/*
 * The failure a pass does not lift: the newest failure before it whose
 * limits were stricter than the pass's on any figure, or NULL.
 */
json_t *
verified_unlifted(json_t *all, const char *profile)
{
	json_t		*pass = verified_newest(all, profile), *r = pass;
	const char	*v;

	if (pass == NULL)
		return NULL;
	while ((r = verified_newest_in(all, profile, r)) != NULL) {
		v = json_string_value(json_object_get(r, "verdict"));
		if (v == NULL || strcmp(v, "fail") != 0)
			continue;
		if (verified_looser(pass, r, "mean_kld", true) ||
		    verified_looser(pass, r, "kld_99_9", true) ||
		    verified_looser(pass, r, "same_top", false))
			return r;
		return NULL;	/* the newest failure is lifted */
	}
	return NULL;
}

/*
 * Does this guest's newest verdict on profile hold it back?  A failure
 * does, and so does a pass under looser limits than the failure before
 * it (verified_unlifted).
 */
bool
verified_holds_back(json_t *all, const char *profile)
{
	json_t		*r = verified_newest(all, profile);
	const char	*v = json_string_value(json_object_get(r, "verdict"));

	if (v != NULL && strcmp(v, "fail") == 0)
		return true;
	return v != NULL && verified_unlifted(all, profile) != NULL;
}

/* Why profile is held back, in words (verified_holds_back is true). */
void
verified_why(json_t *all, const char *profile, char *buf, size_t len)
{
	json_t		*v = verified_newest(all, profile);
	const char	*damaged = json_string_value(json_object_get(v,
			    "damaged"));
	const char	*model = json_string_value(json_object_get(v, "model"));
	const char	*failed = json_string_value(json_object_get(v,
			    "failed"));

	if (damaged != NULL)
		snprintf(buf, len, "verify's record of verdicts is damaged "
		    "(%s): every profile is held back on this guest until it "
		    "is repaired or moved away", damaged);
	else if (verified_unlifted(all, profile) != NULL)
		snprintf(buf, len, "its newest metalcapctl verify passed under "
		    "looser limits than the failure before it: held back on "
		    "this guest until a verify of profile %s passes under "
		    "limits as strict", profile);
	else
		snprintf(buf, len, "metalcapctl verify found the unlocked "
		    "kernels computing another model (%s past its limit, "
		    "model %s): held back on this guest until a verify of "
		    "profile %s passes", failed ? failed : "a figure",
		    model ? model : "?", profile);
}
