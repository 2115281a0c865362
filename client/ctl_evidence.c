/* SPDX-License-Identifier: MIT */
/*
 * bench's evidence folder, shaped after the one Cua published so that it
 * can go into a bug report or an upstream pull request as it is: the raw
 * llama-bench JSON of every run (and its stderr), results.csv with Cua's
 * columns, metadata.md with what a reader needs to trust or repeat the
 * numbers, and SHA256SUMS over all of them (shasum -a 256 -c checks it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "mc_sha256.h"
#include "mc_util.h"

static FILE *
ctl_evidence_open(const char *dir, const char *name)
{
	char	 path[PATH_MAX];
	FILE	*f = NULL;

	if (mc_fmt(path, sizeof path, "%s/%s", dir, name) == 0)
		f = fopen(path, "w");
	if (f == NULL)
		fprintf(stderr, "metalcapctl: bench: cannot write %s/%s\n", dir,
		    name);
	return f;
}

/* A CSV field as RFC 4180 has it: quoted when it holds , " or a newline. */
static void
ctl_evidence_csv_field(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
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

	if ((f = ctl_evidence_open(b->dir, "results.csv")) == NULL)
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
		    s->median, u->median, s->median > 0 ? u->median /
		    s->median : 0);
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* An argument as a POSIX shell reads it back: quoted unless plain. */
static void
ctl_evidence_quote(FILE *f, const char *arg)
{
	if (*arg != '\0' && strspn(arg, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
	    strlen(arg)) {
		fputs(arg, f);
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

/* "- LABEL: `path`, SHA-256 `hex`", or why it has none. */
static void
ctl_evidence_hash(FILE *f, const char *label, const char *path)
{
	char	hex[MC_SHA256_HEX], why[PATH_MAX + 64];

	if (path[0] == '\0')
		fprintf(f, "- %s: not recorded by llama-bench\n", label);
	else if (mc_sha256_file(path, hex, why, sizeof why) == -1)
		fprintf(f, "- %s: `%s`, SHA-256 unavailable: %s\n", label, path,
		    why);
	else
		fprintf(f, "- %s: `%s`\n- %s SHA-256: `%s`\n", label, path,
		    label, hex);
}

static void
ctl_evidence_runs(FILE *f, const struct ctl_bench *b)
{
	const struct ctl_bench_run	*r;
	int				 i;

	fprintf(f, "\n## Runs\n\nIn order; stock first in odd rounds, "
	    "unlocked first in even ones.\n\n");
	for (i = 0; i < b->nruns; i++) {
		r = &b->runs[i];
		fprintf(f, "- round %d, %s: exit %d, `%s`%s%s\n", r->round,
		    r->unlocked ? "unlocked" : "stock", r->status,
		    strrchr(r->json, '/') + 1, r->unlocked ? "; " : "",
		    r->unlocked ? r->proof : "");
	}
}

/* metadata.md: the environment record, as Cua's metadata.md has one. */
static int
ctl_evidence_metadata(struct ctl *c, const struct ctl_bench *b)
{
	const struct ctl_unlock	*u = &b->unlock;
	const struct profile	*p = u->profile;
	char			 os[256], model[128], when[32];
	time_t			 now = time(NULL);
	FILE			*f;
	char			**a;

	if ((f = ctl_evidence_open(b->dir, "metadata.md")) == NULL)
		return -1;
	platform_host(os, sizeof os, model, sizeof model);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "# metalcap bench: stock against unlocked\n\n"
	    "- Date: %s\n- Result: %s%s\n\n## Guest\n\n- OS: %s\n"
	    "- Hardware model: `%s`\n- GPU as llama-bench reports it: %s\n"
	    "- GPU as metalcap-probe reports it: %s\n", when,
	    b->refused[0] ? "no ratio: " : "ratios in results.csv",
	    b->refused, os, model, b->sides[0].gpu_info[0] ?
	    b->sides[0].gpu_info : "(no run parsed)", u->device[0] ?
	    u->device : "(not reported)");
	fprintf(f, "\n## metalcap\n\n- Version: %s\n- Profile: %s "
	    "(AppleFamilyMax %llu, MaxThreadgroupMemory %llu, "
	    "RecommendedWorkingSetSize %llu)\n- Probe verdict: %s, by %s\n",
	    MC_VERSION, p->name, (unsigned long long)p->family_max,
	    (unsigned long long)p->threadgroup_memory,
	    (unsigned long long)p->working_set, u->verdict, u->prober);
	ctl_evidence_hash(f, "Shim", c->paths.shim);
	fprintf(f, "\n## Workload\n\n- llama.cpp build: `%s` (build %lld)\n",
	    b->sides[0].build, b->sides[0].build_number);
	ctl_evidence_hash(f, "Benchmark binary", u->program);
	ctl_evidence_hash(f, "Model", b->sides[0].model_file);
	fprintf(f, "- Command:");
	for (a = b->args; *a != NULL; a++) {
		fputc(' ', f);
		ctl_evidence_quote(f, *a);
	}
	fprintf(f, "\n- Rounds: %ld, each side once a round\n", b->rounds);
	ctl_evidence_runs(f, b);
	return fclose(f) == 0 ? 0 : -1;
}

static int
ctl_evidence_name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
ctl_evidence_visible(const struct dirent *de)
{
	return de->d_name[0] != '.' && strcmp(de->d_name, "SHA256SUMS") != 0;
}

/* SHA256SUMS over every other file, in the format sha256sum -c reads. */
static int
ctl_evidence_sums(const char *dir)
{
	struct dirent	**names;
	char		  path[PATH_MAX], hex[MC_SHA256_HEX];
	char		  why[PATH_MAX + 64];
	int		  n, i, rc = 0;
	FILE		 *f;

	if ((n = scandir(dir, &names, ctl_evidence_visible,
	    ctl_evidence_name_cmp)) == -1 ||
	    (f = ctl_evidence_open(dir, "SHA256SUMS")) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (mc_fmt(path, sizeof path, "%s/%s", dir,
		    names[i]->d_name) == -1 ||
		    mc_sha256_file(path, hex, why, sizeof why) == -1) {
			fprintf(stderr, "metalcapctl: bench: %s\n", why);
			rc = -1;
		} else
			fprintf(f, "%s  %s\n", hex, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return fclose(f) == 0 ? rc : -1;
}

/* The folder's files, the raw runs being there already; -1 if one failed. */
int
ctl_evidence_write(struct ctl *c, const struct ctl_bench *b)
{
	int	rc = 0;

	if (b->refused[0] == '\0' && ctl_evidence_csv(b) == -1)
		rc = -1;
	if (ctl_evidence_metadata(c, b) == -1)
		rc = -1;
	if (ctl_evidence_sums(b->dir) == -1)
		rc = -1;
	return rc;
}

/*
 * The outcome in the state folder (state/bench-last.json), so that doctor
 * can say what this guest measured, or that it never did.  Written aside
 * and renamed: a reader sees the old record or the new one.
 */
void
ctl_evidence_record(struct ctl *c, const struct ctl_bench *b,
    json_t *summary)
{
	char	path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 64];

	if (paths_mkdir(c->paths.state, 0700, why, sizeof why) == -1 ||
	    mc_fmt(path, sizeof path, "%s/bench-last.json",
	    c->paths.state) == -1 ||
	    mc_fmt(tmp, sizeof tmp, "%s.tmp", path) == -1)
		return;
	json_object_set_new(summary, "date", json_integer((json_int_t)
	    time(NULL)));
	json_object_set_new(summary, "evidence", b->temporary ? json_null() :
	    json_string(b->dir));
	if (json_dump_file(summary, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

/* A temporary folder's runs, then the folder. */
void
ctl_evidence_remove(const char *dir)
{
	struct dirent	**names;
	char		  path[PATH_MAX];
	int		  n, i;

	if ((n = scandir(dir, &names, ctl_evidence_visible,
	    ctl_evidence_name_cmp)) != -1) {
		for (i = 0; i < n; i++) {
			if (mc_fmt(path, sizeof path, "%s/%s", dir,
			    names[i]->d_name) == 0)
				unlink(path);
			free(names[i]);
		}
		free(names);
	}
	rmdir(dir);
}
