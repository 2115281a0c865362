/* SPDX-License-Identifier: MIT */
/*
 * bench [--profile P] [--samples N] [--out DIR] -- llama-bench ARG...:
 * the same llama-bench run stock and unlocked, N rounds interleaved
 * (stock first in odd rounds, unlocked first in even ones, so that drift
 * hits both sides alike), and Cua's table: per test the medians of every
 * sample on each side, their spread and the ratio.  No ratio when an
 * unlocked run did not get the shim, or when the two sides ran another
 * model, build or settings.  --out DIR keeps the evidence (ctl_evidence.c).
 *
 * Exit: 0 the table, 1 a run failed or the ratio was refused, 2 usage.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "mc_util.h"

#define CTL_BENCH_ROUNDS	3
#define CTL_BENCH_JSON_MAX	(16 << 20)	/* llama-bench's is kilobytes */

static const char *const ctl_bench_side[] = { "stock", "unlocked" };

/*
 * llama-bench's arguments with "-o json" ensured: added when no output
 * format is named, refused when another one is.  NULL on refusal.
 */
static char **
ctl_bench_args(int argc, char **argv)
{
	char	**args;
	int	  i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i],
		    "--output") == 0) {
			if (i + 1 < argc && strcmp(argv[i + 1], "json") == 0)
				break;
			fprintf(stderr, "metalcapctl: bench reads "
			    "llama-bench's JSON: give %s json, or leave the "
			    "option out\n", argv[i]);
			return NULL;
		}
	args = calloc((size_t)argc + 3, sizeof *args);
	memcpy(args, argv, (size_t)argc * sizeof *args);
	if (i == argc) {
		args[argc] = "-o";
		args[argc + 1] = "json";
	}
	return args;
}

/* --out DIR made (it must be new or empty: evidence is never mixed). */
static int
ctl_bench_dir(struct ctl_bench *b, const char *out)
{
	struct dirent	*de;
	DIR		*d;

	if (out == NULL) {
		ctl_tmp_name(b->dir, sizeof b->dir, "bench");
		b->temporary = true;
		if (mkdtemp(b->dir) != NULL)
			return 0;
		fprintf(stderr, "metalcapctl: bench: %s: %s\n", b->dir,
		    strerror(errno));
		return -1;
	}
	if (mc_fmt(b->dir, sizeof b->dir, "%s", out) == -1 ||
	    (mkdir(out, 0755) == -1 && errno != EEXIST)) {
		fprintf(stderr, "metalcapctl: bench: --out %s: %s\n", out,
		    strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	if ((d = opendir(out)) == NULL) {
		fprintf(stderr, "metalcapctl: bench: --out %s: %s\n", out,
		    strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL && de->d_name[0] == '.')
		;
	closedir(d);
	if (de != NULL) {
		fprintf(stderr, "metalcapctl: bench: --out %s: not empty; "
		    "evidence goes into a new folder\n", out);
		return -1;
	}
	return 0;
}

/* The last lines of a run's stderr, where llama.cpp says what failed. */
static void
ctl_bench_tail(const char *path)
{
	char	 buf[2048];
	FILE	*f;
	long	 size;
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 :
	    0, SEEK_SET);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	fprintf(stderr, "--- the end of %s\n%s%s---\n", path, buf,
	    n > 0 && buf[n - 1] != '\n' ? "\n" : "");
}

/* A run's stdout and stderr files in the evidence folder, created new. */
static int
ctl_bench_open(struct ctl_bench_run *r, const char *dir, int *out, int *err)
{
	if (mc_fmt(r->json, sizeof r->json, "%s/%s-%d.json", dir,
	    ctl_bench_side[r->unlocked], r->round) == -1 ||
	    mc_fmt(r->log, sizeof r->log, "%s/%s-%d.stderr", dir,
	    ctl_bench_side[r->unlocked], r->round) == -1)
		return -1;
	*out = open(r->json, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	*err = open(r->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (*out != -1 && *err != -1)
		return 0;
	fprintf(stderr, "metalcapctl: bench: %s: %s\n", *out == -1 ? r->json :
	    r->log, strerror(errno));
	if (*out != -1)
		close(*out);
	if (*err != -1)
		close(*err);
	return -1;
}

/* One line per run on stderr, its medians: a long benchmark's progress. */
static void
ctl_bench_progress(const struct ctl_bench *b, const struct ctl_bench_run *r,
    const struct mc_bench_run *run)
{
	size_t	i;

	fprintf(stderr, "bench: round %d/%ld %-8s", r->round, b->rounds,
	    ctl_bench_side[r->unlocked]);
	for (i = 0; i < run->ntests; i++)
		fprintf(stderr, " %s %.2f", run->tests[i].name,
		    run->tests[i].median);
	fprintf(stderr, " tok/s%s\n", r->unlocked ? " (shim in)" : "");
}

/* Read a run's JSON and add it to its side; -1 with b->refused set. */
static int
ctl_bench_take(struct ctl_bench *b, struct ctl_bench_run *r)
{
	struct mc_bench_run	*run = calloc(1, sizeof *run);
	char			*text = NULL, why[768];
	size_t			 len;
	FILE			*f;
	int			 rc = -1;

	if ((f = fopen(r->json, "r")) == NULL) {
		mc_fmt(b->refused, sizeof b->refused, "%s: %s", r->json,
		    strerror(errno));
		goto out;
	}
	text = malloc(CTL_BENCH_JSON_MAX + 1);
	len = fread(text, 1, CTL_BENCH_JSON_MAX, f);
	text[len] = '\0';
	fclose(f);
	if (len == CTL_BENCH_JSON_MAX)
		mc_fmt(b->refused, sizeof b->refused, "%s: over %d bytes",
		    r->json, CTL_BENCH_JSON_MAX);
	else if (mc_bench_parse(text, run, why, sizeof why) == -1)
		mc_fmt(b->refused, sizeof b->refused, "%s: %s", r->json, why);
	else if (mc_bench_merge(&b->sides[r->unlocked], run, why,
	    sizeof why) == -1)
		mc_fmt(b->refused, sizeof b->refused, "the %s runs differ from "
		    "one another (%s): %s", ctl_bench_side[r->unlocked],
		    r->json, why);
	else {
		ctl_bench_progress(b, r, run);
		rc = 0;
	}
out:
	free(text);
	free(run);
	return rc;
}

/* One run; -1 when the benchmark cannot go on (b->refused says why). */
static int
ctl_bench_one(struct ctl *c, struct ctl_bench *b, char **args,
    struct ctl_bench_run *r)
{
	struct ctl_outcome	o;
	int			out, err;

	if (ctl_bench_open(r, b->dir, &out, &err) == -1) {
		mc_fmt(b->refused, sizeof b->refused, "cannot write the "
		    "evidence folder %s", b->dir);
		return -1;
	}
	ctl_run(c, &b->unlock, r->unlocked, args, out, err, &o);
	close(out);
	close(err);
	r->status = o.status;
	snprintf(r->proof, sizeof r->proof, "%s", o.why);
	if (o.status != 0) {
		mc_fmt(b->refused, sizeof b->refused, "round %d, %s: %s exited "
		    "with status %d%s%s", r->round, ctl_bench_side[r->unlocked],
		    b->unlock.program, o.status, o.why[0] ? ": " : "", o.why);
		ctl_bench_tail(r->log);
		return -1;
	}
	if (r->unlocked && !o.injected) {
		mc_fmt(b->refused, sizeof b->refused, "round %d: the unlocked "
		    "run did not get the shim, so there is no ratio to report: "
		    "%s", r->round, o.why);
		return -1;
	}
	return ctl_bench_take(b, r);
}

/* Every round, interleaved; -1 at the first run that stops it. */
static int
ctl_bench_rounds(struct ctl *c, struct ctl_bench *b, char **args)
{
	struct ctl_bench_run	*r;
	int			 round, k;

	for (round = 1; round <= b->rounds; round++)
		for (k = 0; k < 2; k++) {
			r = &b->runs[b->nruns++];
			r->round = round;
			r->unlocked = (round % 2 == 1) == (k == 1);
			if (ctl_bench_one(c, b, args, r) == -1)
				return -1;
		}
	if (strcmp(b->sides[0].identity, b->sides[1].identity) != 0) {
		mc_fmt(b->refused, sizeof b->refused, "stock and unlocked ran "
		    "different models, builds or settings: stock %s; unlocked "
		    "%s", b->sides[0].identity, b->sides[1].identity);
		return -1;
	}
	return 0;
}

/* Cua's table, for people. */
static void
ctl_bench_table(const struct ctl_bench *b)
{
	const struct mc_bench_test	*s, *u;
	char				 a[64], x[64];
	size_t				 i;

	printf("%s, profile %s: %ld round%s, stock and unlocked "
	    "interleaved\n\n%-14s %-28s %-28s %s\n", b->sides[0].model_type,
	    b->unlock.profile->name, b->rounds, b->rounds == 1 ? "" : "s",
	    "test", "stock tok/s [min-max]", "unlocked tok/s [min-max]",
	    "ratio");
	for (i = 0; i < b->sides[0].ntests; i++) {
		s = &b->sides[0].tests[i];
		if ((u = mc_bench_find(&b->sides[1], s->name)) == NULL)
			continue;
		snprintf(a, sizeof a, "%.2f [%.2f-%.2f]", s->median, s->lo,
		    s->hi);
		snprintf(x, sizeof x, "%.2f [%.2f-%.2f]", u->median, u->lo,
		    u->hi);
		printf("%-14s %-28s %-28s %.2fx\n", s->name, a, x, s->median >
		    0 ? u->median / s->median : 0);
	}
}

static json_t *
ctl_bench_side_json(const struct mc_bench_test *t)
{
	json_t	*samples = json_array();
	size_t	 i;

	for (i = 0; i < t->nsamples; i++)
		json_array_append_new(samples, json_real(t->samples[i]));
	return json_pack("{s:f, s:f, s:f, s:o}", "median", t->median, "min",
	    t->lo, "max", t->hi, "samples", samples);
}

/* The outcome as JSON: tests, or why there is no ratio (--json, doctor). */
static json_t *
ctl_bench_summary(const struct ctl_bench *b)
{
	const struct mc_bench_test	*s, *u;
	json_t				*tests = json_array();
	size_t				 i;

	for (i = 0; b->refused[0] == '\0' && i < b->sides[0].ntests; i++) {
		s = &b->sides[0].tests[i];
		if ((u = mc_bench_find(&b->sides[1], s->name)) != NULL)
			json_array_append_new(tests, json_pack("{s:s, s:o, "
			    "s:o, s:f}", "name", s->name, "stock",
			    ctl_bench_side_json(s), "unlocked",
			    ctl_bench_side_json(u), "ratio", s->median > 0 ?
			    u->median / s->median : 0));
	}
	return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}", "profile",
	    b->unlock.profile->name, "model_type", b->sides[0].model_type,
	    "rounds", (json_int_t)b->rounds, "tests", tests, "refused",
	    b->refused[0] ? json_string(b->refused) : json_null(), "evidence",
	    b->temporary ? json_null() : json_string(b->dir));
}

static void
ctl_bench_free(struct ctl_bench *b)
{
	ctl_unlock_free(&b->unlock);
	free(b->runs);
	free(b);
}

int
cmd_bench(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct ctl_bench	*b = calloc(1, sizeof *b);
	json_t			*summary;
	char			**args;
	int			  rc = 1;

	(void)cmd;
	b->rounds = c->opts.samples ? c->opts.samples : CTL_BENCH_ROUNDS;
	b->runs = calloc((size_t)b->rounds * 2, sizeof *b->runs);
	if ((args = ctl_bench_args(argc, argv)) == NULL) {
		ctl_bench_free(b);
		return EXIT_USAGE;
	}
	b->args = args;
	if (ctl_unlock_prepare(c, argv[0], &b->unlock) == -1) {
		fprintf(stderr, "metalcapctl: bench: %s\n", b->unlock.why);
		goto out;
	}
	if (ctl_bench_dir(b, c->opts.out) == -1) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (ctl_bench_rounds(c, b, args) == 0)
		rc = 0;
	else
		fprintf(stderr, "metalcapctl: bench: %s\n", b->refused);
	if (!b->temporary && ctl_evidence_write(c, b) == -1)
		rc = 1;
	summary = ctl_bench_summary(b);
	if (c->json) {
		json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
	} else if (rc == 0)
		ctl_bench_table(b);
	ctl_evidence_record(c, b, summary);
	json_decref(summary);
	if (!b->temporary)
		fprintf(stderr, "bench: evidence in %s (check it with "
		    "shasum -a 256 -c SHA256SUMS)\n", b->dir);
	else
		ctl_evidence_remove(b->dir);
out:
	free(args);
	ctl_bench_free(b);
	return rc;
}
