/* SPDX-License-Identifier: MIT */
/*
 * probe and doctor: a fresh probe through the daemon, and what a user
 * attaches to an issue.
 */
#include <sys/stat.h>
#include <sys/utsname.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

/* Send probe for a job or {profile}; *m holds the reply. */
static int
ctl_probe_call(struct ctl *c, const char *job, const char *profile,
    struct mc_rpc_message *m)
{
	char	*params[] = { (char *)job, NULL };

	if (profile != NULL)
		return ctl_call(c, MC_M_PROBE, NULL, "profile", profile, m);
	return ctl_call(c, MC_M_PROBE, params, NULL, NULL, m);
}

static void
ctl_print_probe(const msgpack_object *res)
{
	const msgpack_object	*report, *checks, *ck;
	char			 a[128], b[512], name[64];
	uint32_t		 i;

	printf("profile %s: %s", ctl_field(res, "profile", a, sizeof a),
	    ctl_field(res, "status", name, sizeof name));
	if (strcmp(ctl_field(res, "reason", b, sizeof b), "-") != 0)
		printf(" (%s)", b);
	printf("\n");
	report = mc_rpc_map_get(res, "report");
	if (report == NULL || report->type != MSGPACK_OBJECT_MAP)
		return;
	printf("device %s\n", ctl_field(report, "device", a, sizeof a));
	checks = mc_rpc_map_get(report, "checks");
	for (i = 0; checks && checks->type == MSGPACK_OBJECT_ARRAY &&
	    i < checks->via.array.size; i++) {
		const msgpack_object *sk, *ok;

		ck = &checks->via.array.ptr[i];
		sk = mc_rpc_map_get(ck, "skipped");
		ok = mc_rpc_map_get(ck, "correct");
		printf("  %-24s %-5s %s\n", ctl_field(ck, "name", name,
		    sizeof name), sk && sk->type == MSGPACK_OBJECT_BOOLEAN &&
		    sk->via.boolean ? "skip" : ok && ok->type ==
		    MSGPACK_OBJECT_BOOLEAN && ok->via.boolean ? "pass" : "FAIL",
		    strcmp(ctl_field(ck, "error", b, sizeof b), "-") ? b : "");
	}
}

static bool
ctl_probe_failed(const msgpack_object *res)
{
	char	status[32];

	return strcmp(ctl_field(res, "status", status, sizeof status),
	    "fail") == 0;
}

/* probe JOB | probe --profile P: a fresh probe through the daemon. */
int
cmd_probe(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	m;
	int			rc;

	if (argc == 0 && c->opts.profile != NULL)
		rc = ctl_probe_call(c, NULL, c->opts.profile, &m);
	else if (argc == 1 && c->opts.profile == NULL)
		rc = ctl_probe_call(c, argv[0], NULL, &m);
	else {
		fprintf(stderr, "usage: metalcapctl probe JOB | probe "
		    "--profile P\n");
		return EXIT_USAGE;
	}
	if (rc != 0)
		return rc;
	if (c->json)
		ctl_print_json(&m.result);
	else
		ctl_print_probe(&m.result);
	return ctl_probe_failed(&m.result) ? EXIT_UNHEALTHY : 0;
}

/* One probe result of doctor's, from its JSON. */
static void
ctl_doctor_probe(json_t *res)
{
	json_t		*c;
	size_t		 i;
	const char	*reason = json_string_value(json_object_get(res,
	    "reason"));

	printf("\nprobe %-8s %s%s%s\n", json_string_value(json_object_get(res,
	    "profile")), json_string_value(json_object_get(res, "status")),
	    reason ? ": " : "", reason ? reason : "");
	json_array_foreach(json_object_get(json_object_get(res, "report"),
	    "checks"), i, c)
		printf("  %-24s %s\n", json_string_value(json_object_get(c,
		    "name")), json_is_true(json_object_get(c, "skipped")) ?
		    "skip" : json_is_true(json_object_get(c, "correct")) ?
		    "pass" : "FAIL");
}

/*
 * doctor's probe of a profile into doc[key]; one the managed settings
 * forbid is not probed, and the report says so and goes on.
 */
static int
ctl_doctor_probe_call(struct ctl *c, const char *profile, json_t *doc,
    const char *key)
{
	struct mc_rpc_message	m;

	switch (mc_client_call(&c->client, MC_M_PROBE, NULL, "profile",
	    profile, &m)) {
	case MC_CLIENT_OK:
		json_object_set_new(doc, key, ctl_json(&m.result));
		return 0;
	case MC_CLIENT_DAEMON:
		if (strcmp(c->client.code, MC_E_MANAGED) == 0) {
			json_object_set_new(doc, key, json_pack("{s:s, s:s, "
			    "s:s}", "profile", profile, "status", "not probed",
			    "reason", c->client.error));
			return 0;
		}
		warnx("%s: %s", c->client.code, c->client.error);
		return EXIT_DAEMON;
	default:
		warnx("%s", c->client.error);
		return EXIT_UNREACH;
	}
}

/* The managed settings in force, as hello tells them. */
static void
ctl_doctor_managed(json_t *m)
{
	json_t		*allowed = json_object_get(m, "allowed_profiles");
	const char	*error = json_string_value(json_object_get(m, "error"));
	size_t		 i;

	if (!json_is_object(m)) {
		printf("managed      none\n");
		return;
	}
	if (error != NULL) {
		printf("managed      UNUSABLE, every job runs stock: %s\n",
		    error);
		return;
	}
	printf("managed      ForceStock %s", json_is_true(json_object_get(m,
	    "force_stock")) ? "on" : "off");
	for (i = 0; i < json_array_size(allowed); i++)
		printf("%s%s", i ? "," : ", AllowedProfiles ",
		    json_string_value(json_array_get(allowed, i)));
	/* A job it refuses says which key did not match, in the table. */
	if (json_is_integer(json_object_get(m, "unlock_only_where")))
		printf(", UnlockOnlyWhere %lld entries%s", (long long)
		    json_integer_value(json_object_get(m,
		    "unlock_only_where")), json_is_true(json_object_get(m,
		    "local_verify_allows")) ? ", LocalVerifyAllows" : "");
	printf("\n");
}

/*
 * The ways metalcapd can be started for this user: the installer
 * package's agent, for every user, and brew services' for this one.  Both
 * at once run two daemons; the second exits on the socket check and is
 * restarted for ever.
 */
static json_t *
ctl_doctor_agents(const struct ctl *c)
{
	char		pkg[PATH_MAX], brew[PATH_MAX];
	struct stat	sb;

	mc_fmt(pkg, sizeof pkg, "%s/org.metalcap.metalcapd.plist",
	    c->paths.system_agents);
	mc_fmt(brew, sizeof brew, "%s/homebrew.mxcl.metalcap.plist",
	    c->paths.login_agents);
	return json_pack("{s:o, s:o}",
	    "package", stat(pkg, &sb) == 0 ? json_string(pkg) : json_null(),
	    "homebrew", stat(brew, &sb) == 0 ? json_string(brew) : json_null());
}

static void
ctl_doctor_print_agents(json_t *agents)
{
	const char	*pkg = json_string_value(json_object_get(agents,
	    "package"));
	const char	*brew = json_string_value(json_object_get(agents,
	    "homebrew"));

	printf("agent        %s\n", pkg && brew ? "BOTH the package's and "
	    "brew services': two metalcapd for one user" : pkg ?
	    "the package's" : brew ? "brew services'" : "none (run by hand?)");
	if (pkg && brew)
		printf("             %s\n             %s\n             keep "
		    "one: brew services stop metalcap, or sudo /usr/local/"
		    "libexec/metalcap/uninstall\n", pkg, brew);
}

/* A record's date for people; "?" for one no calendar holds. */
static void
ctl_when(time_t date, char *buf, size_t len)
{
	struct tm	*tm = localtime(&date);

	if (tm == NULL || strftime(buf, len, "%Y-%m-%d %H:%M", tm) == 0)
		snprintf(buf, len, "?");
}

/* bench's last record, or JSON null. */
static json_t *
ctl_doctor_last_bench(const struct ctl *c)
{
	char	 path[PATH_MAX];
	json_t	*last = NULL;

	if (mc_fmt(path, sizeof path, "%s/bench-last.json",
	    c->paths.state) == 0)
		last = json_load_file(path, 0, NULL);
	return last != NULL && json_is_object(last) ? last : json_null();
}

/*
 * What bench last measured on this guest (state/bench-last.json), and how
 * to measure it when nothing was kept: the speed-up is metalcap's point.
 */
static void
ctl_doctor_bench(json_t *last)
{
	static const char	 how[] = "metalcapctl bench --out DIR -- "
	    "llama-bench -m MODEL -p 512 -n 128 -r 10";
	json_t			*t;
	const char		*refused, *dir;
	char			 when[32];
	time_t			 date;
	size_t			 i;

	if (!json_is_object(last)) {
		printf("speed-up     not measured on this guest; measure it "
		    "with\n             %s\n", how);
		return;
	}
	date = (time_t)json_integer_value(json_object_get(last, "date"));
	ctl_when(date, when, sizeof when);
	refused = json_string_value(json_object_get(last, "refused"));
	dir = json_string_value(json_object_get(last, "evidence"));
	printf("speed-up     ");
	if (refused != NULL)
		printf("no ratio from the bench of %s: %s", when, refused);
	json_array_foreach(json_object_get(last, "tests"), i, t)
		printf("%s%s %.2fx", i ? ", " : "", json_string_value(
		    json_object_get(t, "name")) ?: "?", json_real_value(
		    json_object_get(t, "ratio")));
	if (refused == NULL)
		printf(" (profile %s, %s)", json_string_value(json_object_get(
		    last, "profile")) ?: "?", when);
	if (dir != NULL)
		printf("\n             evidence in %s\n", dir);
	else
		printf("\n             no evidence kept; keep it with\n"
		    "             %s\n", how);
}

/* verify's newest verdict on this guest (state/verified.json), or null. */
static json_t *
ctl_doctor_last_verified(const struct ctl *c)
{
	json_t	*all = verified_load(&c->paths);
	json_t	*best = verified_newest(all, NULL);

	best = best != NULL ? json_incref(best) : json_null();
	json_decref(all);
	return best;
}

/*
 * Whether the unlocked kernels were checked against the stock ones on this
 * guest, and how: a speed-up means nothing if the answers changed.
 */
static void
ctl_doctor_verified(json_t *last)
{
	const char	*failed = json_string_value(json_object_get(last,
	    "failed"));
	char		 when[32];
	time_t		 date;

	if (!json_is_object(last)) {
		printf("answers      not verified on this guest; verify them "
		    "with\n             metalcapctl verify -- llama-perplexity "
		    "-m MODEL -f TEXT\n");
		return;
	}
	date = (time_t)json_integer_value(json_object_get(last, "date"));
	ctl_when(date, when, sizeof when);
	printf("answers      %s by verify of %s (profile %s, mean KLD %g, "
	    "same top %.3f %%)\n             model %s\n",
	    json_string_value(json_object_get(last, "verdict")) ?: "?", when,
	    json_string_value(json_object_get(last, "profile")) ?: "?",
	    json_real_value(json_object_get(last, "mean_kld")),
	    json_real_value(json_object_get(last, "same_top")),
	    json_string_value(json_object_get(last, "model")) ?: "?");
	if (failed != NULL)
		printf("             failed on %s: the profile is held back on "
		    "this guest until a verify of it passes\n", failed);
}

/*
 * doctor without a daemon: a user's first question is why metalcapd does
 * not run.  An installed agent that launchd does not start is, on macOS
 * 13 and later, most often switched off in Login Items (Background Task
 * Management writes launchd's disabled store: launchd.md §4).
 */
static void
ctl_doctor_unreachable(struct ctl *c, json_t *doc, const char *platform)
{
	json_t	*agents = json_object_get(doc, "agents");
	bool	 installed = !json_is_null(json_object_get(agents,
	    "package")) || !json_is_null(json_object_get(agents, "homebrew"));

	json_object_set_new(doc, "daemon", json_null());
	json_object_set_new(doc, "socket", json_string(c->paths.socket));
	if (c->json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		return;
	}
	printf("metalcap doctor\nplatform     %s\nmetalcapctl  %s\n"
	    "metalcapd    not answering at %s\n", platform, MC_VERSION,
	    c->paths.socket);
	ctl_doctor_print_agents(agents);
	if (installed)
		printf("             launchd starts it at login unless it is "
		    "switched off:\n             System Settings, General, "
		    "Login Items, Allow in the Background\n             "
		    "(metalcap), or launchctl print-disabled gui/%ld lists "
		    "it\n", (long)getuid());
	else
		printf("             start it with brew services start metalcap, "
		    "or install the package\n");
	printf("\n");
	ctl_doctor_bench(json_object_get(doc, "bench"));
	ctl_doctor_verified(json_object_get(doc, "verified"));
}

/*
 * doctor: what a user attaches to an issue.  Platform, versions, the
 * device, a stock and an unlocked probe, every job and its reverts.
 */
int
cmd_doctor(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	struct utsname		 u;
	json_t			*doc = json_object();
	char			 platform[512];
	int			 rc;

	(void)argc;
	(void)argv;
	uname(&u);
	snprintf(platform, sizeof platform, "%s %s %s", u.sysname, u.release,
	    u.machine);
	json_object_set_new(doc, "platform", json_string(platform));
	json_object_set_new(doc, "metalcapctl", json_string(MC_VERSION));
	json_object_set_new(doc, "agents", ctl_doctor_agents(c));
	json_object_set_new(doc, "bench", ctl_doctor_last_bench(c));
	json_object_set_new(doc, "verified", ctl_doctor_last_verified(c));
	/* No daemon: what can be told without it, and where to look. */
	if ((rc = ctl_open(c)) != 0) {
		ctl_doctor_unreachable(c, doc, platform);
		goto out;
	}
	if ((rc = ctl_call(c, MC_M_HELLO, NULL, NULL, NULL, &m)) != 0)
		goto out;
	json_object_set_new(doc, "daemon", ctl_json(&m.result));
	if ((rc = ctl_probe_call(c, NULL, "stock", &m)) != 0)
		goto out;
	json_object_set_new(doc, "probe_stock", ctl_json(&m.result));
	if ((rc = ctl_doctor_probe_call(c, "apple9", doc, "probe_apple9")) != 0)
		goto out;
	if ((rc = ctl_call(c, MC_M_PROFILE_LIST, NULL, NULL, NULL, &m)) != 0)
		goto out;
	json_object_set_new(doc, "profiles", ctl_json(&m.result));
	if ((rc = ctl_call(c, MC_M_STATUS, NULL, NULL, NULL, &m)) != 0)
		goto out;
	json_object_set_new(doc, "jobs", ctl_json(&m.result));
	if (c->json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		goto out;
	}
	printf("metalcap doctor\nplatform     %s\nmetalcapctl  %s\n"
	    "metalcapd    %s (pid %lld)\n", platform, MC_VERSION,
	    json_string_value(json_object_get(json_object_get(doc, "daemon"),
	    "version")), (long long)json_integer_value(json_object_get(
	    json_object_get(doc, "daemon"), "pid")));
	ctl_doctor_managed(json_object_get(json_object_get(doc, "daemon"),
	    "managed"));
	ctl_doctor_print_agents(json_object_get(doc, "agents"));
	printf("device       %s\n", json_string_value(json_object_get(
	    json_object_get(json_object_get(doc, "probe_stock"), "report"),
	    "device")) ?: "(none)");
	ctl_doctor_probe(json_object_get(doc, "probe_stock"));
	ctl_doctor_probe(json_object_get(doc, "probe_apple9"));
	printf("\n");
	ctl_doctor_bench(json_object_get(doc, "bench"));
	ctl_doctor_verified(json_object_get(doc, "verified"));
	printf("\n");
	ctl_print_jobs(&m.result);
	printf("\n(metalcapctl --json doctor gives the full probe reports)\n");
out:
	json_decref(doc);
	return rc;
}

