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
 * format is named, refused when another one is, anywhere.  llama-bench
 * reads "-o FORMAT" as two words only.  NULL on refusal.
 */
static char **
ctl_bench_args(int argc, char **argv)
{
	char	**args;
	bool	  named = false;
	int	  i;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-o=", 3) == 0 ||
		    strncmp(argv[i], "--output=", 9) == 0) {
			fprintf(stderr, "metalcapctl: bench: llama-bench takes "
			    "'-o json' as two words, not %s\n", argv[i]);
			return NULL;
		}
		if (strcmp(argv[i], "-o") != 0 && strcmp(argv[i],
		    "--output") != 0)
			continue;
		if (i + 1 == argc || strcmp(argv[i + 1], "json") != 0) {
			fprintf(stderr, "metalcapctl: bench reads "
			    "llama-bench's JSON: give %s json, or leave the "
			    "option out\n", argv[i]);
			return NULL;
		}
		named = true;
		i++;
	}
	args = calloc((size_t)argc + 3, sizeof *args);
	memcpy(args, argv, (size_t)argc * sizeof *args);
	if (!named) {
		args[argc] = "-o";
		args[argc + 1] = "json";
	}
	return args;
}

/*
 * Whether the folder just opened may take evidence: ours, writable by
 * nobody else (another user could otherwise plant a link in it), and
 * empty (evidence is never mixed).  NULL, or why not.
 */
static const char *
ctl_bench_dir_unfit(int fd)
{
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;
	int		 copy;

	if (fstat(fd, &sb) == -1 || sb.st_uid != geteuid())
		return "not your folder";
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return "others may write in it";
	if ((copy = dup(fd)) == -1 || (d = fdopendir(copy)) == NULL)
		return strerror(errno);
	while ((de = readdir(d)) != NULL && (strcmp(de->d_name, ".") == 0 ||
	    strcmp(de->d_name, "..") == 0))
		;
	closedir(d);
	return de != NULL ? "not empty; evidence goes into a new folder" :
	    NULL;
}

/*
 * The evidence folder, --out DIR or a temporary one, held open: every
 * file in it is then made with openat, O_EXCL and O_NOFOLLOW, so nothing
 * planted in it during a long benchmark is followed or overwritten.
 */
int
ctl_bench_dir(struct ctl_bench *b, const char *out)
{
	char		 path[PATH_MAX];
	const char	*why;
	struct stat	 sb;

	if (out == NULL) {
		ctl_tmp_name(path, sizeof path, b->command);
		b->temporary = true;
		if (mkdtemp(path) == NULL) {
			fprintf(stderr, "metalcapctl: %s: %s: %s\n",
			    b->command, path, strerror(errno));
			return -1;
		}
		out = path;
	} else if (mkdir(out, 0755) == -1 && errno != EEXIST) {
		fprintf(stderr, "metalcapctl: %s: --out %s: %s\n",
		    b->command, out, strerror(errno));
		return -1;
	}
	if ((b->dirfd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		/* Linux says ENOTDIR for a link with O_DIRECTORY, macOS ELOOP. */
		fprintf(stderr, "metalcapctl: %s: --out %s: %s\n", b->command,
		    out, errno == ELOOP || (lstat(out, &sb) == 0 &&
		    S_ISLNK(sb.st_mode)) ? "a symbolic link, not followed" :
		    strerror(errno));
		return -1;
	}
	if ((why = ctl_bench_dir_unfit(b->dirfd)) != NULL) {
		fprintf(stderr, "metalcapctl: %s: --out %s: %s\n", b->command,
		    out, why);
		return -1;
	}
	if (realpath(out, b->dir) == NULL)
		snprintf(b->dir, sizeof b->dir, "%s", out);
	return 0;
}

/* The last lines of a run's stderr, where llama.cpp says what failed. */
static void
ctl_bench_tail(const struct ctl_bench *b, const struct ctl_bench_run *r)
{
	char	 buf[2048];
	off_t	 size;
	ssize_t	 n;
	int	 fd;

	if ((fd = openat(b->dirfd, r->log, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	size = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof buf - 1, size > (off_t)sizeof buf - 1 ?
	    size - (off_t)sizeof buf + 1 : 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	fprintf(stderr, "--- the end of %s%s\n%s%s---\n", r->log,
	    b->temporary ? " (not kept: no --out)" : "", buf,
	    n > 0 && buf[n - 1] != '\n' ? "\n" : "");
}

/* A run's stdout and stderr files in the evidence folder, created new. */
static int
ctl_bench_open(const struct ctl_bench *b, struct ctl_bench_run *r, int *out,
    int *err)
{
	const int	flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC;

	snprintf(r->json, sizeof r->json, "%s-%d.%s",
	    ctl_bench_side[r->unlocked], r->round, b->out_ext);
	snprintf(r->log, sizeof r->log, "%s-%d.stderr",
	    ctl_bench_side[r->unlocked], r->round);
	*out = openat(b->dirfd, r->json, flags, 0644);
	*err = openat(b->dirfd, r->log, flags, 0644);
	if (*out != -1 && *err != -1)
		return 0;
	fprintf(stderr, "metalcapctl: %s: %s/%s: %s\n", b->command, b->dir,
	    *out == -1 ? r->json : r->log, strerror(errno));
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

/*
 * A run's stdout from the folder, NUL-ended, up to max bytes: one that
 * fills max is refused (cut, it would read as something else).  NULL
 * with b->refused set.
 */
char *
ctl_bench_read(struct ctl_bench *b, const struct ctl_bench_run *r,
    size_t max)
{
	char	*text;
	ssize_t	 n;
	int	 fd;

	if ((fd = openat(b->dirfd, r->json, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		mc_fmt(b->refused, sizeof b->refused, "%s: %s", r->json,
		    strerror(errno));
		return NULL;
	}
	text = malloc(max + 1);
	n = mc_read_upto(fd, text, max);
	close(fd);
	if (n == -1 || (size_t)n == max) {
		if (n == -1)
			mc_fmt(b->refused, sizeof b->refused, "%s: %s",
			    r->json, strerror(errno));
		else
			mc_fmt(b->refused, sizeof b->refused, "%s: over %zu "
			    "bytes", r->json, max);
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

/* Read a run's JSON and add it to its side; -1 with b->refused set. */
static int
ctl_bench_take(struct ctl_bench *b, struct ctl_bench_run *r)
{
	struct mc_bench_run	*run = calloc(1, sizeof *run);
	char			*text, why[768];
	int			 rc = -1;

	if ((text = ctl_bench_read(b, r, CTL_BENCH_JSON_MAX)) == NULL) {
		free(run);
		return -1;
	}
	if (mc_bench_parse(text, run, why, sizeof why) == -1)
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
	free(text);
	free(run);
	return rc;
}

/*
 * One run, its stdout and stderr kept in the folder, judged: it must exit
 * 0, and an unlocked run must prove it got the shim.  -1 when the
 * comparison cannot go on (b->refused says why).
 */
int
ctl_bench_exec(struct ctl *c, struct ctl_bench *b, char **args,
    struct ctl_bench_run *r)
{
	struct ctl_outcome	o;
	int			out, err;

	r->status = -1;		/* "not started", until it is */
	if (ctl_bench_open(b, r, &out, &err) == -1) {
		mc_fmt(b->refused, sizeof b->refused, "cannot write the "
		    "evidence folder %s", b->dir);
		return -1;
	}
	ctl_run(c, &b->unlock, r->unlocked, args, out, err, &o);
	close(out);
	close(err);
	r->status = o.status;
	if (ctl_signal_caught()) {
		mc_fmt(b->refused, sizeof b->refused, "interrupted by signal "
		    "%d in round %d", ctl_signal_caught(), r->round);
		return -1;
	}
	snprintf(r->proof, sizeof r->proof, "%s", o.why);
	if (o.status != 0) {
		mc_fmt(b->refused, sizeof b->refused, "round %d, %s: %s exited "
		    "with status %d%s%s", r->round, ctl_bench_side[r->unlocked],
		    b->unlock.program, o.status, o.why[0] ? ": " : "", o.why);
		ctl_bench_tail(b, r);
		return -1;
	}
	if (r->unlocked && !o.injected && b->verify != NULL) {
		mc_fmt(b->refused, sizeof b->refused, "the unlocked run did "
		    "not get the shim, so its figures would judge nothing: %s",
		    o.why);
		return -1;
	}
	if (r->unlocked && !o.injected) {
		mc_fmt(b->refused, sizeof b->refused, "round %d: the unlocked "
		    "run did not get the shim, so there is no ratio to report: "
		    "%s", r->round, o.why);
		return -1;
	}
	return 0;
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
			if (ctl_bench_exec(c, b, args, r) == -1 ||
			    ctl_bench_take(b, r) == -1)
				return -1;
		}
	if (strcmp(b->sides[0].identity, b->sides[1].identity) != 0) {
		mc_fmt(b->refused, sizeof b->refused, "stock and unlocked ran "
		    "different models, builds or settings: stock %s; unlocked "
		    "%s", b->sides[0].identity, b->sides[1].identity);
		return -1;
	}
	if (!mc_bench_same_tests(&b->sides[0], &b->sides[1])) {
		mc_fmt(b->refused, sizeof b->refused, "stock and unlocked ran "
		    "different tests");
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
		printf("%-14s %-28s %-28s %.2fx\n", s->name, a, x,
		    mc_bench_ratio(s, u));
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
	char				 refused[sizeof b->refused];
	char				 dir[PATH_MAX];
	size_t				 i;

	for (i = 0; b->refused[0] == '\0' && i < b->sides[0].ntests; i++) {
		s = &b->sides[0].tests[i];
		if ((u = mc_bench_find(&b->sides[1], s->name)) != NULL)
			json_array_append_new(tests, json_pack("{s:s, s:o, "
			    "s:o, s:f}", "name", s->name, "stock",
			    ctl_bench_side_json(s), "unlocked",
			    ctl_bench_side_json(u), "ratio",
			    mc_bench_ratio(s, u)));
	}
	mc_text(refused, sizeof refused, b->refused);
	mc_text(dir, sizeof dir, b->dir);
	return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}", "profile",
	    b->unlock.profile->name, "model_type", b->sides[0].model_type,
	    "rounds", (json_int_t)b->rounds, "tests", tests, "refused",
	    refused[0] ? json_string(refused) : json_null(), "evidence",
	    b->temporary ? json_null() : json_string(dir));
}

void
ctl_bench_free(struct ctl_bench *b)
{
	if (b->dirfd != -1)
		close(b->dirfd);
	ctl_unlock_free(&b->unlock);
	free(b->runs);
	free(b);
}

int
cmd_bench(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct ctl_bench	*b = calloc(1, sizeof *b);
	char			**args;
	bool			  ratio;
	int			  rc = 1;

	(void)cmd;
	b->command = "bench";
	b->out_ext = "json";
	b->dirfd = -1;
	b->rounds = c->opts.samples ? c->opts.samples : CTL_BENCH_ROUNDS;
	b->runs = calloc((size_t)b->rounds * 2, sizeof *b->runs);
	if ((args = ctl_bench_args(argc, argv)) == NULL) {
		ctl_bench_free(b);
		return EXIT_USAGE;
	}
	b->args = args;
	ctl_signals_catch();
	if (ctl_unlock_prepare(c, argv[0], false, &b->unlock) == -1) {
		fprintf(stderr, "metalcapctl: bench: %s\n", b->unlock.why);
		goto out;
	}
	if (ctl_bench_dir(b, c->opts.out) == -1) {
		rc = EXIT_USAGE;
		goto out;
	}
	if ((ratio = ctl_bench_rounds(c, b, args) == 0))
		rc = 0;
	else
		fprintf(stderr, "metalcapctl: bench: %s\n", b->refused);
	rc = ctl_evidence_finish(c, b, ctl_bench_summary(b), ratio ?
	    ctl_bench_table : NULL, rc);
out:
	free(args);
	ctl_bench_free(b);
	ctl_signals_die();
	return rc;
}
