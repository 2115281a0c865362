/* SPDX-License-Identifier: MIT */
/*
 * What metalcapctl prints: msgpack answers as JSON for --json, and the
 * job table, reasons and incidents for people.  Text that came from a job
 * (names, reasons, log lines) is printed with controls as '?'.
 */
#include <time.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

/* msgpack object -> jansson value, for --json. */
json_t *
ctl_json(const msgpack_object *o)
{
	json_t		*v;
	uint32_t	 i;
	char		*key;

	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		return json_null();
	case MSGPACK_OBJECT_BOOLEAN:
		return json_boolean(o->via.boolean);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return json_integer((json_int_t)o->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return json_integer((json_int_t)o->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return json_real(o->via.f64);
	case MSGPACK_OBJECT_STR:
		/* An empty string has no storage: ptr may be NULL. */
		return json_stringn(o->via.str.size ? o->via.str.ptr : "",
		    o->via.str.size);
	case MSGPACK_OBJECT_ARRAY:
		v = json_array();
		for (i = 0; i < o->via.array.size; i++)
			json_array_append_new(v, ctl_json(&o->via.array.ptr[i]));
		return v;
	case MSGPACK_OBJECT_MAP:
		v = json_object();
		for (i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;

			if (k->type != MSGPACK_OBJECT_STR)
				continue;
			key = strndup(k->via.str.size ? k->via.str.ptr : "",
			    k->via.str.size);
			json_object_set_new(v, key,
			    ctl_json(&o->via.map.ptr[i].val));
			free(key);
		}
		return v;
	default:
		return json_null();
	}
}

void
ctl_print_json(const msgpack_object *o)
{
	json_t	*v = ctl_json(o);

	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY);
	fputc('\n', stdout);
	json_decref(v);
}

/* A string field of a map, "-" when nil or absent. */
const char *
ctl_field(const msgpack_object *map, const char *key, char *buf, size_t len)
{
	const msgpack_object	*v = mc_rpc_map_get(map, key);

	char	raw[4096];

	if (v != NULL && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		snprintf(buf, len, "%llu", (unsigned long long)v->via.u64);
	else if (v == NULL || !mc_rpc_str(v, raw, sizeof raw))
		snprintf(buf, len, "-");
	else	/* job names, reasons, log lines: no escape reaches a tty */
		mc_text(buf, len, raw);
	return buf;
}

/* The profile column: "auto → apple7" for a job of profile auto. */
static void
ctl_profile_shown(const msgpack_object *job, char *buf, size_t len)
{
	const msgpack_object	*a = mc_rpc_map_get(job, "auto");
	char			 chosen[80];

	if (a == NULL || a->type != MSGPACK_OBJECT_MAP)
		ctl_field(job, "profile", buf, len);
	else
		snprintf(buf, len, "auto \xe2\x86\x92 %s", ctl_field(a,
		    "chosen", chosen, sizeof chosen));
}

/*
 * Why profile auto passed over the higher profiles, when it did; what
 * its measurement found, and whether one is due or running.
 */
static void
ctl_print_auto(const msgpack_object *job)
{
	static const char *const keys[][2] = { { "passed_over", "auto" },
	    { "measured", "auto" }, { "measure_due", "measure" } };
	const msgpack_object	*a = mc_rpc_map_get(job, "auto"), *m;
	char			 why[1024];
	size_t			 i;

	if (a == NULL || a->type != MSGPACK_OBJECT_MAP)
		return;
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(ctl_field(a, keys[i][0], why, sizeof why), "-") != 0)
			printf("    %s: %s\n", keys[i][1], why);
	if ((m = mc_rpc_map_get(a, "measuring")) != NULL &&
	    m->type == MSGPACK_OBJECT_BOOLEAN && m->via.boolean)
		printf("    auto: measuring each profile with llama-bench\n");
}

/* "    reverted at TIME by TRIGGER:" and its evidence lines. */
void
ctl_print_incident(const msgpack_object *job, const char *key)
{
	const msgpack_object	*in = mc_rpc_map_get(job, key), *ev, *t;
	char			 trigger[128], line[512], when[64];
	time_t			 tt;
	uint32_t		 i;

	if (in == NULL || in->type != MSGPACK_OBJECT_MAP)
		return;
	t = mc_rpc_map_get(in, "time");
	tt = t && t->type == MSGPACK_OBJECT_POSITIVE_INTEGER ?
	    (time_t)t->via.u64 : 0;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&tt));
	printf("    %s at %s by %s\n", key, when, ctl_field(in, "trigger",
	    trigger, sizeof trigger));
	ev = mc_rpc_map_get(in, "evidence");
	for (i = 0; ev && ev->type == MSGPACK_OBJECT_ARRAY &&
	    i < ev->via.array.size; i++)
		if (mc_rpc_str(&ev->via.array.ptr[i], line, sizeof line))
			printf("      | %s\n", line);
}

bool
ctl_unhealthy(const char *state)
{
	static const char *const bad[] = { "invalid", "error", "failed",
	    "reverted", "blocked", "crashing" };
	size_t	i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (strcmp(state, bad[i]) == 0)
			return true;
	return false;
}

/*
 * Its HealthCheck, when it has one and it is not healthy, or it was
 * restarted for it: "    health: STATE, ..." and its last answer.
 * True when it is unhealthy, which status exits 4 for.
 */
bool
ctl_print_health(const msgpack_object *job, bool print)
{
	const msgpack_object	*h = mc_rpc_map_get(job, "health"), *last;
	const msgpack_object	*v;
	char			 state[32], answer[200], output[200], when[64];
	char			 pid[32];
	time_t			 tt;
	long			 failures = 0, restarts = 0;
	bool			 passed;

	if (h == NULL || h->type != MSGPACK_OBJECT_MAP)
		return false;
	ctl_field(h, "state", state, sizeof state);
	if ((v = mc_rpc_map_get(h, "failures")) != NULL &&
	    v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		failures = (long)v->via.u64;
	if ((v = mc_rpc_map_get(h, "restarts")) != NULL &&
	    v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		restarts = (long)v->via.u64;
	v = mc_rpc_map_get(h, "passed");
	passed = v != NULL && v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean;
	if (print && (strcmp(state, "healthy") != 0 || restarts > 0)) {
		printf("    health: %s", state);
		if (strcmp(state, "unhealthy") == 0 && !passed)
			printf(", it never passed");
		else if (failures > 0)
			printf(", %ld failed in a row", failures);
		if (restarts > 0)
			printf(", restarted %ld time%s for it", restarts,
			    restarts == 1 ? "" : "s");
		printf("\n");
		last = mc_rpc_map_get(h, "last");
		if (last != NULL && last->type == MSGPACK_OBJECT_MAP) {
			v = mc_rpc_map_get(last, "time");
			tt = v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER ?
			    (time_t)v->via.u64 : 0;
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S",
			    localtime(&tt));
			printf("    last check at %s (pid %s): %s\n", when,
			    ctl_field(last, "pid", pid, sizeof pid),
			    ctl_field(last, "answer", answer, sizeof answer));
			if (strcmp(ctl_field(last, "output", output,
			    sizeof output), "-") != 0)
				printf("      | %s\n", output);
		}
	}
	return strcmp(state, "unhealthy") == 0;
}

/*
 * A job's list of strings, one "    what: text" line each.  They quote its
 * file (a key, a path): no escape reaches a terminal.
 */
static void
ctl_print_lines(const msgpack_object *job, const char *key,
    const char *what)
{
	const msgpack_object	*list = mc_rpc_map_get(job, key);
	char			 raw[1024], text[1024];
	uint32_t		 k;

	for (k = 0; list != NULL && list->type == MSGPACK_OBJECT_ARRAY &&
	    k < list->via.array.size; k++)
		if (mc_rpc_str(&list->via.array.ptr[k], raw, sizeof raw)) {
			mc_text(text, sizeof text, raw);
			printf("    %s: %s\n", what, text);
		}
}

int
ctl_print_jobs(const msgpack_object *jobs)
{
	char		 name[80], state[32], profile[80], pid[32], last[64];
	char		 reason[512];
	const msgpack_object *j;
	uint32_t	 i;
	int		 rc = 0;

	printf("%-20s %-9s %-10s %-8s %-10s %s\n", "NAME", "STATE", "PROFILE",
	    "PID", "LAST EXIT", "REASON");
	for (i = 0; i < jobs->via.array.size; i++) {
		j = &jobs->via.array.ptr[i];
		ctl_field(j, "state", state, sizeof state);
		ctl_profile_shown(j, profile, sizeof profile);
		printf("%-20s %-9s %-10s %-8s %-10s %s\n",
		    ctl_field(j, "name", name, sizeof name), state, profile,
		    ctl_field(j, "pid", pid, sizeof pid),
		    ctl_field(j, "last_exit", last, sizeof last),
		    ctl_field(j, "reason", reason, sizeof reason));
		ctl_print_lines(j, "errors", "error");
		ctl_print_lines(j, "warnings", "warning");
		ctl_print_incident(j, "reverted");
		ctl_print_incident(j, "failed");
		ctl_print_auto(j);
		/* Meant to run and not run by launchd: as bad as failed. */
		if (strcmp(ctl_field(j, "held", reason, sizeof reason), "-")) {
			printf("    held: %s\n", reason);
			rc = EXIT_UNHEALTHY;
		}
		/* A check that fails or never passed: not healthy either. */
		if (ctl_print_health(j, true))
			rc = EXIT_UNHEALTHY;
		if (ctl_unhealthy(state))
			rc = EXIT_UNHEALTHY;
	}
	return rc;
}

/*
 * Print the one job a change method answers with.  The change is saved:
 * what is desired and the state it moves to; launchd catches up
 * asynchronously, so "now" is the state at this moment.
 */
int
ctl_job_reply(struct ctl *c, int rc, const char *verb,
    const struct mc_rpc_message *m)
{
	char	name[80], state[32], next[32], desired[32], profile[80];
	char	action[160];

	if (rc != 0)
		return rc;
	if (c->json) {
		ctl_print_json(&m->result);
		return 0;
	}
	/* start and restart say what they did, as launchctl kickstart. */
	if (mc_rpc_map_get(&m->result, "action") != NULL)
		printf("%s: %s: %s\n", ctl_field(&m->result, "name", name,
		    sizeof name), verb, ctl_field(&m->result, "action", action,
		    sizeof action));
	printf("%s: %s accepted (desired %s, moving to %s, now %s, "
	    "profile %s)\n", ctl_field(&m->result, "name", name, sizeof name),
	    verb, ctl_field(&m->result, "desired", desired, sizeof desired),
	    ctl_field(&m->result, "next_state", next, sizeof next),
	    ctl_field(&m->result, "state", state, sizeof state),
	    ctl_field(&m->result, "profile", profile, sizeof profile));
	return 0;
}

