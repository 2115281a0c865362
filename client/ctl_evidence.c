/* SPDX-License-Identifier: MIT */
/*
 * bench's evidence folder, shaped after the one Cua published so that it
 * can go into a bug report or an upstream pull request as it is: the raw
 * llama-bench JSON of every run (and its stderr), results.csv with Cua's
 * columns, metadata.md with what a reader needs to trust or repeat the
 * numbers, and SHA256SUMS over all of them (shasum -a 256 -c checks it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "mc_sha256.h"
#include "mc_util.h"

/* A new file of the folder (see ctl_bench_dir: nothing planted is used). */
static FILE *
ctl_evidence_open(const struct ctl_bench *b, const char *name)
{
	FILE	*f = NULL;
	int	 fd;

	if ((fd = openat(b->dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644)) != -1 &&
	    (f = fdopen(fd, "w")) == NULL)
		close(fd);
	if (f == NULL)
		fprintf(stderr, "metalcapctl: %s: cannot write %s/%s: %s\n",
		    b->command, b->dir, name, strerror(errno));
	return f;
}

/*
 * Outside text (llama-bench's, a path, a reason) as one Markdown line:
 * whole UTF-8 characters, controls and backquotes as '?', so it cannot
 * start a line, a heading or a code span of its own.
 */
static const char *
ctl_evidence_md(char *buf, size_t len, const char *s)
{
	return mc_text_avoid(buf, len, s, "`", '?');
}

/*
 * A CSV field as RFC 4180 has it: quoted when it holds , " or a newline;
 * a leading = + - @ made text with a quote first, or a spreadsheet would
 * run it as a formula (OWASP, CSV injection).
 */
static void
ctl_evidence_csv_field(FILE *f, const char *s)
{
	const bool	formula = *s != '\0' && strchr("=+-@", *s) != NULL;

	if (strpbrk(s, ",\"\r\n") == NULL) {
		fprintf(f, "%s%s", formula ? "'" : "", s);
		return;
	}
	/* The quote that makes it text goes inside the field. */
	fprintf(f, "\"%s", formula ? "'" : "");
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* results.csv: Cua's columns; the host's are left empty (not measured). */
static int
ctl_evidence_csv(const struct ctl_bench *b)
{
	const struct mc_bench_test	*s, *u;
	char				 workload[192];
	size_t				 i;
	FILE				*f;

	if ((f = ctl_evidence_open(b, "results.csv")) == NULL)
		return -1;
	snprintf(workload, sizeof workload, "%s (llama.cpp)",
	    b->sides[0].model_type);
	fprintf(f, "workload,metric,unit,host_baremetal,stock_guest,"
	    "safe_shim_guest,guest_ratio,shim_to_host_percent\n");
	for (i = 0; i < b->sides[0].ntests; i++) {
		s = &b->sides[0].tests[i];
		if ((u = mc_bench_find(&b->sides[1], s->name)) == NULL)
			continue;
		ctl_evidence_csv_field(f, workload);
		fprintf(f, ",%s,tokens/s,,%.4f,%.4f,%.4f,\n", s->name,
		    s->median, u->median, mc_bench_ratio(s, u));
	}
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * An argument as a shell reads it back: bare when plain, else in single
 * quotes; one with a control character in $'...' (zsh, bash), so that
 * the command stays on its line.
 */
static void
ctl_evidence_quote(FILE *f, const char *arg)
{
	const unsigned char	*p;

	if (*arg != '\0' && strspn(arg, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
	    strlen(arg)) {
		fputs(arg, f);
		return;
	}
	for (p = (const unsigned char *)arg; *p >= 0x20 && *p != 0x7f; p++)
		;
	if (*p != '\0') {
		fputs("$'", f);
		for (p = (const unsigned char *)arg; *p != '\0'; p++)
			if (*p < 0x20 || *p == 0x7f || *p == '\'' || *p == '\\')
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		fputc('\'', f);
		return;
	}
	fputc('\'', f);
	for (; *arg != '\0'; arg++)
		if (*arg == '\'')
			fputs("'\\''", f);
		else
			fputc(*arg, f);
	fputc('\'', f);
}

/* "- LABEL: `path`" and its SHA-256, or why it has none. */
static void
ctl_evidence_hash(FILE *f, const char *label, const char *path)
{
	char	hex[MC_SHA256_HEX], why[PATH_MAX + 64], real[PATH_MAX];
	char	shown[PATH_MAX], text[sizeof why];

	if (path[0] == '\0') {
		fprintf(f, "- %s: not recorded\n", label);
		return;
	}
	ctl_evidence_md(shown, sizeof shown, realpath(path, real) ? real :
	    path);
	if (mc_sha256_file(path, hex, why, sizeof why) == -1)
		fprintf(f, "- %s: `%s`, SHA-256 unavailable: %s\n", label,
		    shown, ctl_evidence_md(text, sizeof text, why));
	else
		fprintf(f, "- %s: `%s`\n- %s SHA-256: `%s`\n", label, shown,
		    label, hex);
}

static void
ctl_evidence_runs(FILE *f, const struct ctl_bench *b)
{
	const struct ctl_bench_run	*r;
	char				 proof[sizeof r->proof], status[32];
	int				 i;

	fprintf(f, "\n## Runs\n\n%s\n\n", b->verify ? "Stock, saving the "
	    "base logits; then unlocked, compared with them." : "In order; "
	    "stock first in odd rounds, unlocked first in even ones.");
	for (i = 0; i < b->nruns; i++) {
		r = &b->runs[i];
		if (r->status == -1)
			snprintf(status, sizeof status, "not started");
		else
			snprintf(status, sizeof status, "exit %d", r->status);
		fprintf(f, "- round %d, %s: %s, `%s`%s%s\n", r->round,
		    r->unlocked ? "unlocked" : "stock", status, r->json,
		    r->unlocked ? "; " : "", r->unlocked ? ctl_evidence_md(
		    proof, sizeof proof, r->proof) : "");
	}
}

/*
 * "- LABEL: ARGS..." as a shell reads them back; with base, verify's
 * options added as its stock run had them, with "" its unlocked run's.
 */
static void
ctl_evidence_command(FILE *f, const char *label, char **args,
    const char *base)
{
	char	**a;

	fprintf(f, "- %s:", label);
	for (a = args; *a != NULL; a++) {
		fputc(' ', f);
		ctl_evidence_quote(f, *a);
	}
	if (base != NULL && base[0] != '\0') {
		fputs(" --kl-divergence-base ", f);
		ctl_evidence_quote(f, base);
	} else if (base != NULL)
		fputs(" --kl-divergence-base (the same) --kl-divergence", f);
	fputc('\n', f);
}

/* verify's workload: what was compared. */
static void
ctl_evidence_verify(FILE *f, const struct ctl_bench *b)
{
	const struct ctl_verify	*v = b->verify;

	fprintf(f, "\n## Workload\n\n");
	ctl_evidence_hash(f, "Perplexity binary", b->unlock.program);
	ctl_evidence_hash(f, "Model", v->model != NULL ? v->model : "");
	ctl_evidence_hash(f, "Text", v->text != NULL ? v->text : "");
	fprintf(f, "- Base logits (the stock run's, not kept: they are large) "
	    "SHA-256: `%s`\n", v->base_sha256[0] ? v->base_sha256 :
	    "(none written)");
}

/* verify's figures against their limits, when there were any. */
static void
ctl_evidence_figures(FILE *f, const struct ctl_bench *b)
{
	const struct ctl_verify	*v = b->verify;

	if (v == NULL || b->refused[0] != '\0')
		return;
	fprintf(f, "\n## Figures (llama.cpp's, unlocked against stock)\n\n"
	    "| figure | value | limit |\n|---|---|---|\n"
	    "| PPL stock | %.6f ± %.6f | |\n| PPL unlocked | %.6f ± %.6f | |\n"
	    "| mean KLD | %.6f ± %.6f | <= %g |\n| 99.9%% KLD | %.6f | <= %g |\n"
	    "| same top token | %.3f ± %.3f %% | >= %g %% |\n",
	    v->kld.ppl_base.value, v->kld.ppl_base.error, v->kld.ppl_q.value,
	    v->kld.ppl_q.error, v->kld.kld_mean.value, v->kld.kld_mean.error,
	    v->max_mean_kld, v->kld.kld_999.value, v->max_kld_999,
	    v->kld.same_top.value, v->kld.same_top.error, v->min_same_top);
}

/* metadata.md: the environment record, as Cua's metadata.md has one. */
static int
ctl_evidence_metadata(struct ctl *c, const struct ctl_bench *b)
{
	const struct ctl_unlock	*u = &b->unlock;
	const struct profile	*p = u->profile;
	char			 os[256], model[128], when[32];
	char			 t1[sizeof b->refused], t2[256], t3[256];
	char			 t4[256], t5[256];
	time_t			 now = time(NULL);
	FILE			*f;

	if ((f = ctl_evidence_open(b, "metadata.md")) == NULL)
		return -1;
	platform_host(os, sizeof os, model, sizeof model);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "# metalcap %s: stock against unlocked\n\n"
	    "- Date: %s\n- Result: %s%s\n\n## Guest\n\n- OS: %s\n"
	    "- Hardware model: `%s`\n- GPU as %s reports it: %s\n"
	    "- GPU as metalcap-probe reports it: %s\n", b->command, when,
	    b->refused[0] ? (b->verify ? "no verdict: " : "no ratio: ") :
	    b->verify ? b->verify->verdict : "ratios in results.csv",
	    ctl_evidence_md(t1, sizeof t1, b->refused),
	    ctl_evidence_md(t2, sizeof t2, os),
	    ctl_evidence_md(t3, sizeof t3, model), b->verify ?
	    "llama-perplexity" : "llama-bench", b->sides[0].gpu_info[0] ?
	    ctl_evidence_md(t4, sizeof t4, b->sides[0].gpu_info) : b->verify ?
	    "(in each run's stderr)" : b->sides[0].build[0] ? "(none: its "
	    "gpu_info is empty, as a CPU build's is)" : "(no run parsed)",
	    u->device[0] ? ctl_evidence_md(t5, sizeof t5, u->device) :
	    "(not reported)");
	fprintf(f, "\n## metalcap\n\n- Version: %s\n- Profile: %s "
	    "(AppleFamilyMax %llu, MaxThreadgroupMemory %llu, "
	    "RecommendedWorkingSetSize %llu)\n- Probe verdict: %s, by %s\n",
	    MC_VERSION, p->name, (unsigned long long)p->family_max,
	    (unsigned long long)p->threadgroup_memory,
	    (unsigned long long)p->working_set, u->verdict,
	    ctl_evidence_md(t1, sizeof t1, u->prober));
	ctl_evidence_hash(f, "Shim", c->paths.shim);
	if (b->verify != NULL)
		ctl_evidence_verify(f, b);
	else {
		fprintf(f, "\n## Workload\n\n- llama.cpp build: `%s` (build "
		    "%lld)\n", ctl_evidence_md(t2, sizeof t2,
		    b->sides[0].build), b->sides[0].build_number);
		ctl_evidence_hash(f, "Benchmark binary", u->program);
		ctl_evidence_hash(f, "Model", b->sides[0].model_file);
	}
	ctl_evidence_command(f, "Command", b->args, NULL);
	if (b->verify != NULL) {
		ctl_evidence_command(f, "Stock run", b->args, b->verify->base);
		ctl_evidence_command(f, "Unlocked run", b->args, "");
	} else
		fprintf(f, "- Rounds: %ld, each side once a round\n",
		    b->rounds);
	ctl_evidence_runs(f, b);
	ctl_evidence_figures(f, b);
	return fclose(f) == 0 ? 0 : -1;
}

static int
ctl_evidence_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folder's file names but SHA256SUMS, sorted; NULL-ended, or NULL. */
static char **
ctl_evidence_names(const struct ctl_bench *b)
{
	struct dirent	 *de;
	DIR		 *d;
	char		**names = NULL;
	size_t		  n = 0;
	int		  fd;

	if ((fd = dup(b->dirfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name,
		    "SHA256SUMS") == 0)
			continue;
		names = realloc(names, (n + 2) * sizeof *names);
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (names == NULL)
		names = calloc(1, sizeof *names);
	names[n] = NULL;
	qsort(names, n, sizeof *names, ctl_evidence_name_cmp);
	return names;
}

/* SHA256SUMS over every other file, in the format sha256sum -c reads. */
static int
ctl_evidence_sums(const struct ctl_bench *b)
{
	char	**names, hex[MC_SHA256_HEX], why[PATH_MAX + 64];
	FILE	 *f;
	size_t	  i;
	int	  fd, rc = 0;

	if ((names = ctl_evidence_names(b)) == NULL)
		return -1;
	if ((f = ctl_evidence_open(b, "SHA256SUMS")) == NULL) {
		mc_strv_free(names);
		return -1;
	}
	for (i = 0; names[i] != NULL; i++) {
		fd = openat(b->dirfd, names[i], O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1 || mc_sha256_fd(fd, names[i], hex, why,
		    sizeof why) == -1) {
			fprintf(stderr, "metalcapctl: %s: %s/%s: %s\n",
			    b->command, b->dir, names[i], fd == -1 ?
			    strerror(errno) : why);
			rc = -1;
		} else
			fprintf(f, "%s  %s\n", hex, names[i]);
	}
	mc_strv_free(names);
	return fclose(f) == 0 ? rc : -1;
}

/* The folder's files, the raw runs being there already; -1 if one failed. */
static int
ctl_evidence_write(struct ctl *c, const struct ctl_bench *b)
{
	int	rc = 0;

	if (b->verify == NULL && b->refused[0] == '\0' &&
	    ctl_evidence_csv(b) == -1)
		rc = -1;
	if (ctl_evidence_metadata(c, b) == -1)
		rc = -1;
	if (ctl_evidence_sums(b) == -1)
		rc = -1;
	return rc;
}

/*
 * The outcome in the state folder (state/bench-last.json, or
 * verify-last.json), so that doctor can say what this guest measured or
 * verified, or that it never did.  Written aside and renamed: a reader
 * sees the old record or the new one.
 */
static void
ctl_evidence_record(struct ctl *c, const struct ctl_bench *b,
    json_t *summary)
{
	char	path[PATH_MAX], tmp[PATH_MAX + 32], why[PATH_MAX + 64];

	/* Each bench writes aside under its own name: two may run at once. */
	if (paths_mkdir(c->paths.state, 0700, why, sizeof why) == -1 ||
	    mc_fmt(path, sizeof path, "%s/%s-last.json", c->paths.state,
	    b->command) == -1 ||
	    mc_fmt(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) == -1)
		return;
	mc_text(why, sizeof why, b->dir);
	json_object_set_new(summary, "date", json_integer((json_int_t)
	    time(NULL)));
	json_object_set_new(summary, "evidence", b->temporary ? json_null() :
	    json_string(why));
	if (json_dump_file(summary, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

/*
 * The end of a bench or a verify: the evidence written when kept, the
 * outcome (summary, taken) as JSON with --json or by print for people
 * (NULL: nothing to show but the error already said), recorded unless a
 * signal cut it short (it then says nothing about this guest), and a
 * temporary folder removed.  rc, or 1 when something of that failed.
 */
int
ctl_evidence_finish(struct ctl *c, const struct ctl_bench *b,
    json_t *summary, void (*print)(const struct ctl_bench *), int rc)
{
	bool	kept = false;

	if (!b->temporary && (kept = ctl_evidence_write(c, b) == 0) == false)
		rc = 1;
	if (summary == NULL) {
		fprintf(stderr, "metalcapctl: %s: cannot put the outcome into "
		    "JSON\n", b->command);
		rc = 1;
	} else if (c->json) {
		json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
	} else if (print != NULL)
		print(b);
	if (summary != NULL && !ctl_signal_caught())
		ctl_evidence_record(c, b, summary);
	json_decref(summary);
	if (kept)
		fprintf(stderr, "%s: evidence in %s (check it with shasum -a "
		    "256 -c SHA256SUMS)\n", b->command, b->dir);
	else if (b->temporary)
		ctl_evidence_remove(b);
	return rc;
}

/* A temporary folder's runs, then the folder. */
void
ctl_evidence_remove(const struct ctl_bench *b)
{
	char	**names = ctl_evidence_names(b);
	size_t	  i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		unlinkat(b->dirfd, names[i], 0);
	mc_strv_free(names);
	rmdir(b->dir);
}
