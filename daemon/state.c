/* SPDX-License-Identifier: MIT */
/*
 * The daemon's own state: overrides made over the socket (enable, disable,
 * profile, stop), one plist written atomically, so a crash at any instant
 * leaves either the old file or the new one.  A file that cannot be read
 * is moved aside, never fatal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mc_plist.h"
#include "mc_util.h"
#include "mcd.h"

#define STATE_FILE	"overrides.plist"

/* A count kept in the entry, or 0. */
static long
state_count(plist_t entry, const char *key)
{
	plist_t		node = plist_dict_get_item(entry, key);
	uint64_t	n = 0;

	if (node != NULL && plist_get_node_type(node) == PLIST_UINT)
		plist_get_uint_val(node, &n);
	return n > LONG_MAX ? LONG_MAX : (long)n;
}

static void
state_read_incident(plist_t entry, const char *key, struct incident *in)
{
	plist_t		 d = plist_dict_get_item(entry, key), ev, node;
	uint64_t	 t = 0;
	char		*s;
	uint32_t	 i;

	if (d == NULL || plist_get_node_type(d) != PLIST_DICT)
		return;
	in->set = true;
	if ((node = plist_dict_get_item(d, "Time")) != NULL &&
	    plist_get_node_type(node) == PLIST_UINT)
		plist_get_uint_val(node, &t);
	in->time = (long)t;
	if ((s = mc_plist_string(d, "Trigger")) != NULL) {
		mc_text(in->trigger, sizeof in->trigger, s);
		free(s);
	}
	ev = plist_dict_get_item(d, "Evidence");
	for (i = 0; ev != NULL && plist_get_node_type(ev) == PLIST_ARRAY &&
	    i < plist_array_get_size(ev) && in->nevidence < EVIDENCE_MAX; i++) {
		s = NULL;
		node = plist_array_get_item(ev, i);
		if (plist_get_node_type(node) == PLIST_STRING)
			plist_get_string_val(node, &s);
		if (s != NULL)
			mc_text(in->evidence[in->nevidence++],
			    sizeof in->evidence[0], s);
		free(s);
	}
}

static plist_t
state_incident_plist(const struct incident *in)
{
	plist_t	d = plist_new_dict(), ev = plist_new_array();
	int	i;

	plist_dict_set_item(d, "Time", plist_new_uint((uint64_t)in->time));
	plist_dict_set_item(d, "Trigger", plist_new_string(in->trigger));
	for (i = 0; i < in->nevidence; i++)
		plist_array_append_item(ev, plist_new_string(in->evidence[i]));
	plist_dict_set_item(d, "Evidence", ev);
	return d;
}

static void
state_read_entry(struct state *st, const char *name, plist_t entry)
{
	struct override	*o;
	plist_t		 node;
	char		*profile;

	if (!jobfile_name_ok(name) || plist_get_node_type(entry) != PLIST_DICT)
		return;
	o = state_get(st, name, true);
	if ((node = plist_dict_get_item(entry, "Unlocked")) != NULL &&
	    plist_get_node_type(node) == PLIST_BOOLEAN)
		o->unlocked = mc_plist_bool(entry, "Unlocked", true) ? 1 : 0;
	if ((profile = mc_plist_string(entry, "Profile")) != NULL) {
		if (jobfile_name_ok(profile))
			snprintf(o->profile, sizeof o->profile, "%s", profile);
		free(profile);
	}
	o->stopped = mc_plist_bool(entry, "Stopped", false);
	o->revert_count = state_count(entry, "RevertCount");
	o->withdrawn_count = state_count(entry, "WithdrawnCount");
	state_read_incident(entry, "Reverted", &o->reverted);
	state_read_incident(entry, "Failed", &o->failed);
}

/* Load dir/overrides.plist; note says what happened to a bad one. */
int
state_load(struct state *st, const char *dir, char *note, size_t len)
{
	char		 why[256], aside[PATH_MAX + 64];
	plist_t		 root;
	plist_dict_iter	 it = NULL;
	plist_t		 entry;
	char		*name;

	memset(st, 0, sizeof *st);
	note[0] = '\0';
	snprintf(st->path, sizeof st->path, "%s/%s", dir, STATE_FILE);
	if (mc_plist_read_file(st->path, &root, why, sizeof why) == -1) {
		if (strcmp(why, "No such file or directory") == 0)
			return 0;
		goto aside;
	}
	if (plist_get_node_type(root) != PLIST_DICT) {
		plist_free(root);
		snprintf(why, sizeof why, "not a dictionary");
		goto aside;
	}
	plist_dict_new_iter(root, &it);
	for (;;) {
		name = NULL;
		plist_dict_next_item(root, it, &name, &entry);
		if (name == NULL)
			break;
		state_read_entry(st, name, entry);
		free(name);
	}
	free(it);
	plist_free(root);
	return 0;
aside:
	snprintf(aside, sizeof aside, "%s.corrupt-%ld", st->path,
	    (long)time(NULL));
	rename(st->path, aside);
	snprintf(note, len, "%s %s; moved aside to %s, starting without "
	    "overrides", st->path, why, aside);
	return -1;
}

int
state_save(const struct state *st, char *why, size_t whylen)
{
	plist_t	root = plist_new_dict(), entry;
	size_t	i;
	int	rc;

	for (i = 0; i < st->count; i++) {
		const struct override *o = &st->list[i];

		entry = plist_new_dict();
		if (o->unlocked >= 0)
			plist_dict_set_item(entry, "Unlocked",
			    plist_new_bool(o->unlocked));
		if (o->profile[0] != '\0')
			plist_dict_set_item(entry, "Profile",
			    plist_new_string(o->profile));
		if (o->stopped)
			plist_dict_set_item(entry, "Stopped", plist_new_bool(1));
		if (o->revert_count > 0)
			plist_dict_set_item(entry, "RevertCount",
			    plist_new_uint((uint64_t)o->revert_count));
		if (o->withdrawn_count > 0)
			plist_dict_set_item(entry, "WithdrawnCount",
			    plist_new_uint((uint64_t)o->withdrawn_count));
		if (o->reverted.set)
			plist_dict_set_item(entry, "Reverted",
			    state_incident_plist(&o->reverted));
		if (o->failed.set)
			plist_dict_set_item(entry, "Failed",
			    state_incident_plist(&o->failed));
		plist_dict_set_item(root, o->name, entry);
	}
	rc = mc_plist_write_atomic(st->path, root, 0600, why, whylen);
	plist_free(root);
	return rc;
}

struct override *
state_get(struct state *st, const char *name, bool create)
{
	size_t	i;

	for (i = 0; i < st->count; i++)
		if (strcmp(st->list[i].name, name) == 0)
			return &st->list[i];
	if (!create)
		return NULL;
	st->list = realloc(st->list, (st->count + 1) * sizeof *st->list);
	memset(&st->list[st->count], 0, sizeof *st->list);
	snprintf(st->list[st->count].name, sizeof st->list->name, "%s", name);
	st->list[st->count].unlocked = -1;
	return &st->list[st->count++];
}

/* Forget a job's override and incidents: its job is gone. */
void
state_drop(struct state *st, const char *name)
{
	size_t	i;

	for (i = 0; i < st->count; i++)
		if (strcmp(st->list[i].name, name) == 0) {
			memmove(&st->list[i], &st->list[i + 1],
			    (st->count - i - 1) * sizeof *st->list);
			st->count--;
			return;
		}
}

void
state_free(struct state *st)
{
	free(st->list);
	st->list = NULL;
	st->count = 0;
}
