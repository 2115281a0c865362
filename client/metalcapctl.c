/* SPDX-License-Identifier: MIT */
/*
 * metalcapctl: the command-line client of metalcapd.  One blocking
 * connection, one request (two with the version check), a table for people
 * or --json for scripts.
 *
 * Exit: 0 ok, 1 an error (the daemon's, or a job file's), 2 usage,
 * 3 daemon unreachable, 4 status shows a job that is not healthy.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "mc_util.h"
#include "protocol.h"

static int	cmd_status(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_enable(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_profiles(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_reload(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_watch(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_logs(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_probe(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_doctor(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_change(struct ctl *, const struct ctl_command *, int,
		    char **);
static int	cmd_report(struct ctl *, const struct ctl_command *, int,
		    char **);

#define P	CTL_OPT_PROFILE
/* name, arguments min-max, options, usage, handler, method, offline */
static const struct ctl_command commands[] = {
	{ "status", 0, 1, 0, "status [JOB]", cmd_status, NULL, false },
	{ "enable", 1, 1, P, "enable JOB [--profile P]", cmd_enable, NULL,
	    false },
	{ "disable", 1, 1, 0, "disable JOB", cmd_change, MC_M_DISABLE, false },
	{ "profile", 2, 2, 0, "profile JOB PROFILE", cmd_change,
	    MC_M_PROFILE_SET, false },
	{ "profiles", 0, 0, 0, "profiles", cmd_profiles, NULL, false },
	{ "start", 1, 1, 0, "start JOB", cmd_change, MC_M_START, false },
	{ "stop", 1, 1, 0, "stop JOB", cmd_change, MC_M_STOP, false },
	{ "restart", 1, 1, 0, "restart JOB", cmd_change, MC_M_RESTART, false },
	{ "reload", 0, 0, 0, "reload", cmd_reload, NULL, false },
	{ "watch", 0, 0, 0, "watch", cmd_watch, NULL, false },
	{ "logs", 1, 1, CTL_OPT_FOLLOW, "logs JOB [-f]", cmd_logs, NULL,
	    false },
	{ "probe", 0, 1, P, "probe JOB | probe --profile P", cmd_probe, NULL,
	    false },
	{ "doctor", 0, 0, 0, "doctor", cmd_doctor, NULL, false },
	{ "report", 0, 1, 0, "report [STATUS-FILE]", cmd_report, NULL, true },
	{ "add", 2, -1, P | CTL_OPT_STOCK | CTL_OPT_ENV | CTL_OPT_FORCE,
	    "add NAME [--profile P | --stock] [--env K=V]... [--force] -- "
	    "PROGRAM [ARG]...", cmd_add, NULL, true },
	{ "remove", 1, 1, 0, "remove NAME", cmd_remove, NULL, true },
	{ "check", 1, 1, CTL_OPT_INHERIT, "check PROGRAM [--inherit]",
	    cmd_check, NULL, true },
};
#undef P

static void
usage(FILE *out)
{
	size_t	i;

	fprintf(out, "usage: metalcapctl [--socket PATH | --home DIR] [--json] "
	    "[--timeout S] COMMAND [ARG]...\n\ncommands:\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(out, "\nOptions may come before or after the command; "
	    "\"--\" ends them.\nExit: 0 ok, 1 error, 2 usage, 3 daemon "
	    "unreachable, 4 a job is not healthy.\nSee metalcapctl(1).\n");
}

/* A daemon that does not answer within seconds (0: wait) is given up. */
void
ctl_set_timeout(struct ctl *c, long seconds)
{
	struct timeval	tv = { .tv_sec = seconds };

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/*
 * Connect, and make sure the server is ours: a socket in a folder someone
 * else could write might be anybody's.
 */
int
ctl_connect(struct ctl *c, bool quiet)
{
	struct sockaddr_un	sun;
	uid_t			uid;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, c->paths.socket, strlen(c->paths.socket) + 1);
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(c->fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		if (!quiet)
			warn("cannot reach metalcapd at %s (is it running?)",
			    c->paths.socket);
		goto fail;
	}
	if (platform_peer_uid(c->fd, &uid) == -1 || uid != getuid()) {
		warnx("%s is served by another user: refusing to talk to it",
		    c->paths.socket);
		goto fail;
	}
	ctl_set_timeout(c, c->timeout);
	return mc_rpc_decoder_init(&c->decoder, MC_MAX_REPLY);
fail:
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	return -1;
}

void
ctl_disconnect(struct ctl *c)
{
	if (c->fd == -1)
		return;
	mc_rpc_decoder_free(&c->decoder);
	close(c->fd);
	c->fd = -1;
}

static int
ctl_write(struct ctl *c, const msgpack_sbuffer *sb)
{
	size_t	off = 0;
	ssize_t	n;

	while (off < sb->size) {
		if ((n = write(c->fd, sb->data + off, sb->size - off)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				warnx("metalcapd closed the connection");
			else
				warn("write to metalcapd");
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* Read until a whole message is decoded into *m. */
static int
ctl_read(struct ctl *c, struct mc_rpc_message *m)
{
	char		 buf[65536];
	const char	*why = NULL;
	ssize_t		 n;

	for (;;) {
		switch (mc_rpc_next(&c->decoder, m, &why)) {
		case MC_RPC_OK:
			return 0;
		case MC_RPC_MORE:
			break;
		case MC_RPC_IGNORED:
			continue;
		default:
			warnx("bad reply from metalcapd: %s", why);
			return -1;
		}
		if ((n = read(c->fd, buf, sizeof buf)) == 0 ||
		    (n == -1 && errno == ECONNRESET)) {
			warnx("metalcapd closed the connection");
			return -1;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			warnx("metalcapd did not answer within %ld s "
			    "(--timeout)", c->timeout);
			return -1;
		}
		if (n == -1 || mc_rpc_feed(&c->decoder, buf, (size_t)n) == -1) {
			warn("read from metalcapd");
			return -1;
		}
	}
}

/*
 * Send method with string params (NULL-ended, optional trailing map in
 * opt_key/opt_val) and wait for its response.  Returns 0 and *result, or
 * EXIT_DAEMON after printing the daemon's error, or EXIT_UNREACH.
 */
static int
ctl_call(struct ctl *c, const char *method, char *const *params,
    const char *opt_key, const char *opt_val, struct mc_rpc_message *m)
{
	msgpack_sbuffer	 sb;
	msgpack_packer	 pk;
	uint32_t	 n = 0, id = ++c->msgid;
	char		 code[32], message[512];
	int		 rc;

	while (params != NULL && params[n] != NULL)
		n++;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, id, method, n + (opt_key != NULL));
	for (n = 0; params != NULL && params[n] != NULL; n++)
		mc_rpc_pack_str(&pk, params[n]);
	if (opt_key != NULL) {
		msgpack_pack_map(&pk, 1);
		mc_rpc_pack_str(&pk, opt_key);
		mc_rpc_pack_str(&pk, opt_val);
	}
	rc = ctl_write(c, &sb);
	msgpack_sbuffer_destroy(&sb);
	if (rc == -1)
		return EXIT_UNREACH;
	do {
		if (ctl_read(c, m) == -1)
			return EXIT_UNREACH;
	} while (m->type != MC_MSG_RESPONSE || m->msgid != id);
	if (m->error.type == MSGPACK_OBJECT_NIL)
		return 0;
	mc_rpc_error_parse(&m->error, code, sizeof code, message,
	    sizeof message);
	warnx("%s: %s", code, message);
	return EXIT_DAEMON;
}

/* msgpack object -> jansson value, for --json. */
static json_t *
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

static void
ctl_print_json(const msgpack_object *o)
{
	json_t	*v = ctl_json(o);

	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', stdout);
	json_decref(v);
}

/* A string field of a map, "-" when nil or absent. */
static const char *
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

/* "    reverted at TIME by TRIGGER:" and its evidence lines. */
static void
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

static bool
ctl_unhealthy(const char *state)
{
	static const char *const bad[] = { "invalid", "error", "failed",
	    "reverted", "blocked" };
	size_t	i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (strcmp(state, bad[i]) == 0)
			return true;
	return false;
}

static int
ctl_print_jobs(const msgpack_object *jobs)
{
	char		 name[80], state[32], profile[80], pid[32], last[64];
	char		 reason[512];
	const msgpack_object *j, *errs;
	uint32_t	 i, k;
	int		 rc = 0;

	printf("%-20s %-9s %-10s %-8s %-10s %s\n", "NAME", "STATE", "PROFILE",
	    "PID", "LAST EXIT", "REASON");
	for (i = 0; i < jobs->via.array.size; i++) {
		j = &jobs->via.array.ptr[i];
		ctl_field(j, "state", state, sizeof state);
		printf("%-20s %-9s %-10s %-8s %-10s %s\n",
		    ctl_field(j, "name", name, sizeof name), state,
		    ctl_field(j, "profile", profile, sizeof profile),
		    ctl_field(j, "pid", pid, sizeof pid),
		    ctl_field(j, "last_exit", last, sizeof last),
		    ctl_field(j, "reason", reason, sizeof reason));
		errs = mc_rpc_map_get(j, "errors");
		for (k = 0; errs && errs->type == MSGPACK_OBJECT_ARRAY &&
		    k < errs->via.array.size; k++)
			if (mc_rpc_str(&errs->via.array.ptr[k], reason,
			    sizeof reason))
				printf("    error: %s\n", reason);
		ctl_print_incident(j, "reverted");
		ctl_print_incident(j, "failed");
		if (ctl_unhealthy(state))
			rc = EXIT_UNHEALTHY;
	}
	return rc;
}

static int
cmd_status(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	m;
	char			state[32];
	uint32_t		i;
	int			rc;

	if ((rc = ctl_call(c, MC_M_STATUS, argc ? argv : NULL, NULL, NULL,
	    &m)) != 0)
		return rc;
	if (m.result.type != MSGPACK_OBJECT_ARRAY) {
		warnx("bad status reply");
		return EXIT_DAEMON;
	}
	if (!c->json)
		return ctl_print_jobs(&m.result);
	ctl_print_json(&m.result);
	for (i = 0; i < m.result.via.array.size; i++)
		if (ctl_unhealthy(ctl_field(&m.result.via.array.ptr[i], "state",
		    state, sizeof state)))
			rc = EXIT_UNHEALTHY;
	return rc;
}

/*
 * Print the one job a change method answers with.  The change is saved:
 * what is desired and the state it moves to; launchd catches up
 * asynchronously, so "now" is the state at this moment.
 */
static int
ctl_job_reply(struct ctl *c, int rc, const char *verb,
    const struct mc_rpc_message *m)
{
	char	name[80], state[32], next[32], desired[32], profile[80];

	if (rc != 0)
		return rc;
	if (c->json)
		ctl_print_json(&m->result);
	else
		printf("%s: %s accepted (desired %s, moving to %s, now %s, "
		    "profile %s)\n", ctl_field(&m->result, "name", name,
		    sizeof name), verb, ctl_field(&m->result, "desired", desired,
		    sizeof desired), ctl_field(&m->result, "next_state", next,
		    sizeof next), ctl_field(&m->result, "state", state,
		    sizeof state), ctl_field(&m->result, "profile", profile,
		    sizeof profile));
	return 0;
}

static int
cmd_enable(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_rpc_message	 m;
	char			*params[] = { argv[0], NULL };
	const char		*profile = c->opts.profile;

	(void)cmd;
	(void)argc;
	return ctl_job_reply(c, ctl_call(c, MC_M_ENABLE, params,
	    profile ? "profile" : NULL, profile, &m), "enable", &m);
}

/* disable, profile, start, stop, restart: one request about one job. */
static int
cmd_change(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct mc_rpc_message	m;

	(void)argc;
	return ctl_job_reply(c, ctl_call(c, cmd->method, argv, NULL, NULL, &m),
	    cmd->name, &m);
}

static int
cmd_profiles(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	char			 name[80], fam[32], tg[32], desc[256];
	const msgpack_object	*p;
	uint32_t		 i;
	int			 rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_PROFILE_LIST, NULL, NULL, NULL, &m)) != 0)
		return rc;
	if (c->json) {
		ctl_print_json(&m.result);
		return 0;
	}
	printf("%-12s %-8s %-10s %s\n", "PROFILE", "FAMILY", "TG MEMORY",
	    "DESCRIPTION");
	for (i = 0; m.result.type == MSGPACK_OBJECT_ARRAY &&
	    i < m.result.via.array.size; i++) {
		p = &m.result.via.array.ptr[i];
		printf("%-12s %-8s %-10s %s\n", ctl_field(p, "name", name,
		    sizeof name), ctl_field(p, "apple_family_max", fam,
		    sizeof fam), ctl_field(p, "threadgroup_memory", tg,
		    sizeof tg), mc_rpc_map_get(p, "error") &&
		    mc_rpc_map_get(p, "error")->type == MSGPACK_OBJECT_STR ?
		    ctl_field(p, "error", desc, sizeof desc) :
		    ctl_field(p, "description", desc, sizeof desc));
	}
	return 0;
}

static int
cmd_reload(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	m;
	int			rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_RELOAD, NULL, NULL, NULL, &m)) == 0 &&
	    !c->json)
		printf("reloaded\n");
	return rc;
}

/* Print events as they come, one line each (or one JSON object). */
static int
cmd_watch(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	const msgpack_object	*ev, *job;
	char			 type[64], req[32], name[80], state[32];
	char			 reason[512];
	int			 rc;

	(void)argc;
	(void)argv;
	if ((rc = ctl_call(c, MC_M_SUBSCRIBE, NULL, NULL, NULL, &m)) != 0)
		return rc;
	ctl_set_timeout(c, 0);	/* events come when they come */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (ctl_read(c, &m) == 0) {
		if (m.type != MC_MSG_NOTIFY || m.params.via.array.size < 1)
			continue;
		ev = &m.params.via.array.ptr[0];
		if (c->json) {
			json_t *v = ctl_json(ev);

			json_dumpf(v, stdout, JSON_COMPACT | JSON_SORT_KEYS);
			fputc('\n', stdout);
			json_decref(v);
			continue;
		}
		job = mc_rpc_map_get(ev, "job");
		if (job == NULL)
			continue;
		/* A change names its request: change:enable. */
		ctl_field(ev, "type", type, sizeof type);
		if (strcmp(ctl_field(ev, "request", req, sizeof req), "-") != 0)
			snprintf(type + strlen(type), sizeof type - strlen(type),
			    ":%s", req);
		printf("%s %s %s %s\n", type,
		    ctl_field(job, "name", name, sizeof name),
		    ctl_field(job, "state", state, sizeof state),
		    ctl_field(job, "reason", reason, sizeof reason));
	}
	return EXIT_UNREACH;
}

/* Print the job's stderr log; with -f keep following it. */
static int
cmd_logs(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	(void)cmd;
	struct mc_rpc_message	 m;
	char			 path[4096], buf[65536];
	bool			 follow = c->opts.given & CTL_OPT_FOLLOW;
	char			*params[] = { argv[0], NULL };
	struct stat		 sb;
	off_t			 off = 0;
	ssize_t			 n;
	int			 rc, fd;

	(void)argc;
	if ((rc = ctl_call(c, MC_M_STATUS, params, NULL, NULL, &m)) != 0)
		return rc;
	if (m.result.type != MSGPACK_OBJECT_ARRAY || m.result.via.array.size != 1 ||
	    strcmp(ctl_field(&m.result.via.array.ptr[0], "stderr_path", path,
	    sizeof path), "-") == 0) {
		warnx("no log path for %s", argv[0]);
		return EXIT_DAEMON;
	}
	if ((fd = open(path, O_RDONLY)) == -1) {
		warn("%s", path);
		return EXIT_DAEMON;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	for (;;) {
		while ((n = read(fd, buf, sizeof buf)) > 0) {
			fwrite(buf, 1, (size_t)n, stdout);
			off += n;
		}
		if (!follow)
			break;
		usleep(250000);
		/* Truncated or rotated: start again from the top. */
		if (stat(path, &sb) == 0 && sb.st_size < off) {
			close(fd);
			if ((fd = open(path, O_RDONLY)) == -1)
				break;
			off = 0;
		}
	}
	close(fd);
	return 0;
}

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
static int
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
	printf("\n");
}

/*
 * doctor: what a user attaches to an issue.  Platform, versions, the
 * device, a stock and an unlocked probe, every job and its reverts.
 */
static int
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
	if ((rc = ctl_call(c, MC_M_HELLO, NULL, NULL, NULL, &m)) != 0)
		goto out;
	json_object_set_new(doc, "daemon", ctl_json(&m.result));
	if ((rc = ctl_probe_call(c, NULL, "stock", &m)) != 0)
		goto out;
	json_object_set_new(doc, "probe_stock", ctl_json(&m.result));
	if ((rc = ctl_probe_call(c, NULL, "apple9", &m)) != 0)
		goto out;
	json_object_set_new(doc, "probe_apple9", ctl_json(&m.result));
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
	printf("device       %s\n", json_string_value(json_object_get(
	    json_object_get(json_object_get(doc, "probe_stock"), "report"),
	    "device")) ?: "(none)");
	ctl_doctor_probe(json_object_get(doc, "probe_stock"));
	ctl_doctor_probe(json_object_get(doc, "probe_apple9"));
	printf("\n");
	ctl_print_jobs(&m.result);
	printf("\n(metalcapctl --json doctor gives the full probe reports)\n");
out:
	json_decref(doc);
	return rc;
}

/* The daemon must speak our protocol version. */
int
ctl_hello(struct ctl *c)
{
	struct mc_rpc_message	 m;
	const msgpack_object	*proto;
	int			 rc;

	if ((rc = ctl_call(c, MC_M_HELLO, NULL, NULL, NULL, &m)) != 0)
		return rc;
	proto = mc_rpc_map_get(&m.result, "protocol");
	if (proto == NULL || proto->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    proto->via.u64 != MC_PROTOCOL_VERSION) {
		warnx("metalcapd speaks another protocol version; this "
		    "metalcapctl speaks %d", MC_PROTOCOL_VERSION);
		return EXIT_DAEMON;
	}
	return 0;
}

static const char *
ctl_json_str(json_t *obj, const char *key)
{
	const char	*s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

/*
 * One line for inventory tools, from the status file alone (no socket: a
 * root-run Jamf or osquery script reads any user's file):
 *   ok|attention version=V jobs=N STATE=COUNT...[; JOB: STATE (REASON)]...
 */
static int
ctl_report_file(const char *path, bool as_json)
{
	static const char *const states[] = { "unlocked", "stock", "pending",
	    "probing", "stopped", "reverted", "blocked", "failed", "invalid",
	    "error" };
	json_error_t	 jerr;
	json_t		*doc, *jobs, *job, *bad, *counts;
	size_t		 i, k, n[sizeof states / sizeof states[0]] = { 0 };
	const char	*state;

	if ((doc = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "metalcapctl: %s: %s\n", path, jerr.text);
		return EXIT_DAEMON;
	}
	jobs = json_object_get(doc, "jobs");
	if (!json_is_array(jobs)) {
		fprintf(stderr, "metalcapctl: %s:jobs: expected an array\n",
		    path);
		json_decref(doc);
		return EXIT_DAEMON;
	}
	bad = json_array();
	json_array_foreach(jobs, i, job) {
		state = ctl_json_str(job, "state");
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (strcmp(state, states[k]) == 0)
				n[k]++;
		if (ctl_unhealthy(state))
			json_array_append_new(bad, json_pack("{s:s, s:s, s:O}",
			    "name", ctl_json_str(job, "name"), "state", state,
			    "reason", json_object_get(job, "reason") ?
			    json_object_get(job, "reason") : json_null()));
	}
	if (as_json) {
		counts = json_object();
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			json_object_set_new(counts, states[k],
			    json_integer((json_int_t)n[k]));
		json_dumpf(json_pack("{s:s, s:s, s:s, s:O, s:I, s:o, s:O}",
		    "verdict", json_array_size(bad) ? "attention" : "ok",
		    "version", ctl_json_str(doc, "version"), "instance_id",
		    ctl_json_str(doc, "instance_id"), "updated",
		    json_object_get(doc, "updated"), (json_int_t)
		    json_array_size(jobs), "states", counts, "attention", bad),
		    stdout, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		putchar('\n');
	} else {
		printf("%s version=%s jobs=%zu", json_array_size(bad) ?
		    "attention" : "ok", ctl_json_str(doc, "version"),
		    json_array_size(jobs));
		for (k = 0; k < sizeof states / sizeof states[0]; k++)
			if (n[k] > 0)
				printf(" %s=%zu", states[k], n[k]);
		json_array_foreach(bad, i, job)
			printf("; %s: %s%s%s%s", ctl_json_str(job, "name"),
			    ctl_json_str(job, "state"),
			    json_is_string(json_object_get(job, "reason")) ?
			    " (" : "", ctl_json_str(job, "reason"),
			    json_is_string(json_object_get(job, "reason")) ?
			    ")" : "");
		putchar('\n');
	}
	k = json_array_size(bad);
	json_decref(bad);
	json_decref(doc);
	return k > 0 ? EXIT_UNHEALTHY : 0;
}

/* report [FILE]: the fleet summary, read from the status file. */
static int
cmd_report(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	char	path[4096];

	(void)cmd;
	if (argc == 1)
		snprintf(path, sizeof path, "%s", argv[0]);
	else if (mc_fmt(path, sizeof path, "%s/status.json",
	    c->paths.state) == -1) {
		fprintf(stderr, "metalcapctl: cannot tell where the status "
		    "file is; name it: metalcapctl report FILE\n");
		return EXIT_USAGE;
	}
	return ctl_report_file(path, c->json);
}

/*
 * Every option, global or a command's, wherever it stands (getopt
 * permutes; "--" ends them): metalcapctl status --json is the same as
 * metalcapctl --json status.
 */
static int
ctl_options(struct ctl *c, int argc, char **argv, const char **sock,
    const char **home)
{
	enum { O_JSON = 256, O_SOCKET, O_HOME, O_VERSION, O_PROFILE, O_STOCK,
	    O_ENV, O_FORCE, O_TIMEOUT, O_INHERIT };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "home", required_argument, NULL, O_HOME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "follow", no_argument, NULL, 'f' },
		{ "stock", no_argument, NULL, O_STOCK },
		{ "env", required_argument, NULL, O_ENV },
		{ "force", no_argument, NULL, O_FORCE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "inherit", no_argument, NULL, O_INHERIT },
		{ NULL, 0, NULL, 0 }
	};
	char	*end;
	int	ch;

	while ((ch = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (ch) {
		case O_JSON:	c->json = true; break;
		case O_SOCKET:	*sock = optarg; break;
		case O_HOME:	*home = optarg; break;
		case 'h':	usage(stdout); exit(0);
		case O_VERSION:
			printf("metalcapctl %s (protocol %d)\n", MC_VERSION,
			    MC_PROTOCOL_VERSION);
			exit(0);
		case O_PROFILE:
			c->opts.given |= CTL_OPT_PROFILE;
			c->opts.profile = optarg;
			break;
		case 'f':	c->opts.given |= CTL_OPT_FOLLOW; break;
		case O_STOCK:	c->opts.given |= CTL_OPT_STOCK; break;
		case O_FORCE:	c->opts.given |= CTL_OPT_FORCE; break;
		case O_INHERIT:	c->opts.given |= CTL_OPT_INHERIT; break;
		case O_TIMEOUT:
			c->timeout = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || c->timeout < 0 ||
			    c->timeout > 86400) {
				fprintf(stderr, "metalcapctl: --timeout %s: "
				    "expected seconds, 0 to 86400\n", optarg);
				return -1;
			}
			break;
		case O_ENV:
			c->opts.given |= CTL_OPT_ENV;
			c->opts.env = realloc(c->opts.env,
			    (size_t)(c->opts.nenv + 1) * sizeof *c->opts.env);
			c->opts.env[c->opts.nenv++] = optarg;
			break;
		default:
			usage(stderr);
			return -1;
		}
	}
	return optind;
}

/* The command named at argv[a], if its arguments and options fit. */
static const struct ctl_command *
ctl_command(const struct ctl *c, int argc, char **argv, int a)
{
	static const char *const names[] = { "--profile", "--follow",
	    "--stock", "--env", "--force", "--inherit" };
	const struct ctl_command *cmd = NULL;
	unsigned	 extra;
	size_t		 i;
	int		 nargs = argc - a - 1;

	for (i = 0; a < argc && i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, argv[a]) == 0)
			cmd = &commands[i];
	if (cmd == NULL) {
		if (a < argc)
			fprintf(stderr, "metalcapctl: unknown command %s\n",
			    argv[a]);
		usage(stderr);
		return NULL;
	}
	if ((extra = c->opts.given & ~cmd->opts) != 0) {
		for (i = 0; !(extra & (1u << i)); i++)
			;
		fprintf(stderr, "metalcapctl: %s does not take %s\nusage: "
		    "metalcapctl %s\n", cmd->name, names[i], cmd->usage);
		return NULL;
	}
	if (nargs < cmd->min_args || (cmd->max_args >= 0 &&
	    nargs > cmd->max_args)) {
		fprintf(stderr, "usage: metalcapctl %s\n", cmd->usage);
		return NULL;
	}
	return cmd;
}

int
main(int argc, char **argv)
{
	struct ctl		 c = { .fd = -1, .timeout = 120 };
	const char		*sock = NULL, *home = getenv("METALCAP_HOME");
	const struct ctl_command *cmd;
	char			 why[512];
	int			 a, rc;

	signal(SIGPIPE, SIG_IGN);
	if ((a = ctl_options(&c, argc, argv, &sock, &home)) == -1 ||
	    (cmd = ctl_command(&c, argc, argv, a)) == NULL)
		return EXIT_USAGE;
	if (paths_init(&c.paths, home, argv[0], why, sizeof why) == -1) {
		fprintf(stderr, "metalcapctl: %s\n", why);
		return EXIT_USAGE;
	}
	if (sock != NULL && strlen(sock) >= sizeof
	    ((struct sockaddr_un *)0)->sun_path) {
		fprintf(stderr, "metalcapctl: --socket %s: over the %zu bytes "
		    "a unix socket path may have\n", sock,
		    sizeof ((struct sockaddr_un *)0)->sun_path - 1);
		return EXIT_USAGE;
	}
	if (sock != NULL)
		snprintf(c.paths.socket, sizeof c.paths.socket, "%s", sock);
	if (cmd->offline)
		rc = cmd->fn(&c, cmd, argc - a - 1, argv + a + 1);
	else if (ctl_connect(&c, false) == -1)
		rc = EXIT_UNREACH;
	else if ((rc = ctl_hello(&c)) == 0)
		rc = cmd->fn(&c, cmd, argc - a - 1, argv + a + 1);
	ctl_disconnect(&c);
	free(c.opts.env);
	return rc;
}
