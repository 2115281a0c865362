/* SPDX-License-Identifier: MIT */
/*
 * The report: the verdict, the JSON document (jansson) and the table for
 * people, built from the same results.  Backend-free.
 */
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#ifndef MC_VERSION
#error "MC_VERSION must be defined by the build"
#endif

static bool
probe_failed(const struct probe_result *r)
{
	return !r->skipped && !r->correct;
}

/*
 * Only the advertised threadgroup size failing keeps the family override:
 * real Apple GPUs have 32 KB, so the 64 KB answer is the unproven part.
 */
struct probe_verdict
probe_verdict(const struct probe_result *results, size_t n)
{
	struct probe_verdict	v = { true, true };
	size_t			i;

	for (i = 0; i < n; i++) {
		if (!probe_failed(&results[i]))
			continue;
		/* Stale no-copy reads fail stock as injected: not the
		 * overrides' doing, and --no-mmap is the cure. */
		if (strcmp(results[i].name, "nocopy_mmap") == 0)
			continue;
		if (strcmp(results[i].name, "threadgroup_advertised") == 0)
			v.threadgroup = false;
		else
			v.family = v.threadgroup = false;
	}
	return v;
}

json_t *
probe_answers_json(const struct probe_answers *a)
{
	json_t	*families = json_object(), *doc;
	char	 key[16];
	size_t	 i;

	for (i = 0; i < probe_nfamilies; i++) {
		snprintf(key, sizeof key, "%ld", probe_families[i]);
		json_object_set_new(families, key, json_boolean(a->family[i]));
	}
	doc = json_pack("{s:s, s:o, s:I, s:I}", "device", a->device,
	    "families", families,
	    "threadgroup_memory", (json_int_t)a->threadgroup_memory,
	    "working_set", (json_int_t)a->working_set);
	return doc;
}

/* The inverse, for the stock pass's answers; every field is required. */
int
probe_answers_from_json(json_t *doc, struct probe_answers *a, char *why,
    size_t whylen)
{
	json_t		*families, *v;
	json_error_t	 err;
	const char	*device;
	json_int_t	 tg, ws;
	char		 key[16];
	size_t		 i;

	memset(a, 0, sizeof *a);
	if (json_unpack_ex(doc, &err, JSON_STRICT, "{s:s, s:o, s:I, s:I}",
	    "device", &device, "families", &families,
	    "threadgroup_memory", &tg, "working_set", &ws) == -1) {
		snprintf(why, whylen, "%s", err.text);
		return -1;
	}
	snprintf(a->device, sizeof a->device, "%s", device);
	for (i = 0; i < probe_nfamilies; i++) {
		snprintf(key, sizeof key, "%ld", probe_families[i]);
		v = json_object_get(families, key);
		if (!json_is_boolean(v)) {
			snprintf(why, whylen, "families.%s: expected a boolean",
			    key);
			return -1;
		}
		a->family[i] = json_is_true(v);
	}
	a->threadgroup_memory = (uint64_t)tg;
	a->working_set = (uint64_t)ws;
	return 0;
}

/* One shim report line ("key=value ... reason=rest") as an object. */
json_t *
probe_shim_parse(const char *line)
{
	static const char *const numeric[] = { "pid", "family_max",
	    "threadgroup_memory", "working_set", "inherit", "ctor_ns" };
	json_t		*obj = json_object();
	char		 key[32];
	const char	*p = line, *eq;
	size_t		 klen, vlen, i;
	char		*value;

	if (strncmp(p, "metalcap ", 9) != 0)
		return obj;
	for (p += 9; *p != '\0' && *p != '\n'; p += vlen + (p[vlen] == ' ')) {
		if ((eq = strchr(p, '=')) == NULL ||
		    (klen = (size_t)(eq - p)) >= sizeof key)
			break;
		memcpy(key, p, klen);
		key[klen] = '\0';
		p = eq + 1;
		vlen = strcmp(key, "reason") == 0 ? strcspn(p, "\n") :
		    strcspn(p, " \n");
		value = strndup(p, vlen);
		for (i = 0; i < sizeof numeric / sizeof numeric[0]; i++)
			if (strcmp(key, numeric[i]) == 0)
				break;
		if (strcmp(value, "-") == 0)
			json_object_set_new(obj, key, json_null());
		else if (i < sizeof numeric / sizeof numeric[0])
			json_object_set_new(obj, key, json_integer(
			    (json_int_t)strtoull(value, NULL, 10)));
		else
			json_object_set_new(obj, key, json_string(value));
		free(value);
	}
	return obj;
}

static json_t *
probe_result_json(const struct probe_result *r)
{
	return json_pack("{s:s, s:b, s:b, s:b, s:b, s:b, s:o, s:f}",
	    "name", r->name, "skipped", r->skipped, "compiled", r->compiled,
	    "pipeline", r->pipeline, "ran", r->ran, "correct", r->correct,
	    "error", r->error[0] ? json_string(r->error) : json_null(),
	    "ms", r->ms);
}

/* The whole document; shim is consumed (NULL or json_null: no shim). */
json_t *
probe_report_json(const struct probe_answers *a, json_t *shim,
    const struct probe_result *results, size_t n, struct probe_verdict v)
{
	json_t	*doc = probe_answers_json(a), *checks = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(checks, probe_result_json(&results[i]));
	json_object_set_new(doc, "version", json_string(MC_VERSION));
	json_object_set_new(doc, "backend", json_string(probe_backend.name));
	json_object_set_new(doc, "shim", shim ? shim : json_null());
	json_object_set_new(doc, "checks", checks);
	json_object_set_new(doc, "verdict", json_pack("{s:b, s:b}",
	    "family", v.family, "threadgroup", v.threadgroup));
	return doc;
}

static const char *
probe_status_word(const struct probe_result *r)
{
	if (r->skipped)
		return "skip";
	return r->correct ? "pass" : "FAIL";
}

void
probe_report_human(FILE *out, const struct probe_answers *a, json_t *shim,
    const struct probe_result *results, size_t n, struct probe_verdict v)
{
	size_t	i;

	fprintf(out, "device              %s (%s backend)\n", a->device,
	    probe_backend.name);
	fprintf(out, "families true      ");
	for (i = 0; i < probe_nfamilies; i++)
		if (a->family[i])
			fprintf(out, " %ld", probe_families[i]);
	fprintf(out, "\nthreadgroup memory  %llu bytes\nworking set         "
	    "%llu bytes\n", (unsigned long long)a->threadgroup_memory,
	    (unsigned long long)a->working_set);
	if (shim == NULL || json_is_null(shim))
		fprintf(out, "shim                not loaded\n");
	else
		fprintf(out, "shim                %s, ceiling %lld, class %s%s%s\n",
		    json_string_value(json_object_get(shim, "state")),
		    (long long)json_integer_value(json_object_get(shim,
		    "family_max")),
		    json_is_string(json_object_get(shim, "class")) ?
		    json_string_value(json_object_get(shim, "class")) : "-",
		    json_is_string(json_object_get(shim, "reason")) ?
		    ", reason: " : "",
		    json_is_string(json_object_get(shim, "reason")) ?
		    json_string_value(json_object_get(shim, "reason")) : "");
	fprintf(out, "\n%-26s %-5s %8s  %s\n", "check", "", "ms", "detail");
	for (i = 0; i < n; i++)
		fprintf(out, "%-26s %-5s %8.2f  %s\n", results[i].name,
		    probe_status_word(&results[i]), results[i].ms,
		    results[i].error);
	fprintf(out, "\nverdict: family override %s, threadgroup override %s\n",
	    v.family ? "safe" : "UNSAFE", v.threadgroup ? "safe" : "UNSAFE");
}
