/* SPDX-License-Identifier: MIT */
/*
 * verify [--profile P] [--out DIR] [--limit NAME=VALUE]... --
 * llama-perplexity ARG...: are the unlocked kernels computing the same
 * model?  The program runs stock with --kl-divergence-base FILE, saving
 * every scored token's log-probabilities, then unlocked with
 * --kl-divergence against them; llama.cpp's own statistics (the KL
 * divergence of each token's distribution, the share of tokens whose top
 * choice is the same, the two perplexities) are read from its output
 * (common/mc_kld.c) and held to limits.  Each run is judged and proven
 * injected as bench's are (ctl_bench_exec); --out DIR keeps the evidence
 * (ctl_evidence.c), with the base file's SHA-256 but not the file.
 *
 * The limits, from what llama.cpp's contributors measured
 * (tests/fixtures/real-perplexity): BF16 against FP16 of the same model,
 * two sound ways of computing it, gives a mean KLD of 0.000025, a 99.9 %
 * KLD of 0.0008 and the same top token 99.74 % of the time; a 4-bit
 * quantization, a model really changed, 0.04-0.05, 1.5-4 and 90-92 %.
 * Kernels that only round differently sit with the first; the defaults
 * allow 20 times its mean KLD (0.0005), 12 times its 99.9 % (0.01) and
 * 99 % same top, each far from the second.
 *
 * Exit: 0 the figures are within the limits, 1 a figure is not or a run
 * failed (llama-perplexity exits 0 even when it could not read the base
 * file: no statistics is a failure), 2 usage.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "mc_util.h"

#define CTL_VERIFY_OUT_MAX	(8 << 20)	/* the table grows by chunk */

struct ctl_verify_limit {
	const char	*name;
	size_t		 offset;	/* in struct ctl_verify */
	double		 fallback;
	double		 lo, hi;	/* what may be asked for */
};

static const struct ctl_verify_limit ctl_verify_limits[] = {
	{ "mean-kld", offsetof(struct ctl_verify, max_mean_kld), 0.0005, 0,
	    10 },
	{ "kld-99.9", offsetof(struct ctl_verify, max_kld_999), 0.01, 0,
	    100 },
	{ "same-top", offsetof(struct ctl_verify, min_same_top), 99.0, 0,
	    100 },
};

#define CTL_VERIFY_NLIMITS \
	(sizeof ctl_verify_limits / sizeof ctl_verify_limits[0])

/* The options metalcapctl gives llama-perplexity itself. */
static const char *const ctl_verify_owned[] = {
	"--kl-divergence-base", "--save-all-logits", "--kl-divergence", NULL
};

/* --limit NAME=VALUE over the defaults; -1 and a message on a bad one. */
static int
ctl_verify_set_limits(const struct ctl *c, struct ctl_verify *v)
{
	const struct ctl_verify_limit	*l;
	const char			*eq;
	double				 x;
	char				*end;
	size_t				 i;
	int				 k;

	for (i = 0; i < CTL_VERIFY_NLIMITS; i++)
		*(double *)((char *)v + ctl_verify_limits[i].offset) =
		    ctl_verify_limits[i].fallback;
	for (k = 0; k < c->opts.nlimits; k++) {
		eq = strchr(c->opts.limits[k], '=');
		for (i = 0, l = NULL; eq != NULL &&
		    i < CTL_VERIFY_NLIMITS; i++)
			if (strncmp(c->opts.limits[k], ctl_verify_limits[i].name,
			    (size_t)(eq - c->opts.limits[k])) == 0 &&
			    ctl_verify_limits[i].name[eq - c->opts.limits[k]] ==
			    '\0')
				l = &ctl_verify_limits[i];
		if (l == NULL) {
			fprintf(stderr, "metalcapctl: verify: --limit %s: "
			    "expected mean-kld=X, kld-99.9=X or same-top=PCT\n",
			    c->opts.limits[k]);
			return -1;
		}
		errno = 0;
		x = strtod(eq + 1, &end);
		if (errno != 0 || end == eq + 1 || *end != '\0' ||
		    !(x >= l->lo && x <= l->hi)) {
			fprintf(stderr, "metalcapctl: verify: --limit %s: "
			    "expected a number from %g to %g\n",
			    c->opts.limits[k], l->lo, l->hi);
			return -1;
		}
		*(double *)((char *)v + l->offset) = x;
	}
	return 0;
}

/*
 * llama-perplexity's arguments with the base file's options added, after
 * refusing any of them given by hand (the runs are metalcapctl's to pair),
 * and noting the model and the text for the evidence.  NULL on refusal.
 */
static char **
ctl_verify_args(int argc, char **argv, const char *base, bool compare,
    struct ctl_verify *v)
{
	char	**args;
	int	  i, j;

	for (i = 1; i < argc; i++) {
		for (j = 0; ctl_verify_owned[j] != NULL; j++)
			if (strcmp(argv[i], ctl_verify_owned[j]) == 0 ||
			    (strncmp(argv[i], ctl_verify_owned[j],
			    strlen(ctl_verify_owned[j])) == 0 &&
			    argv[i][strlen(ctl_verify_owned[j])] == '=')) {
				fprintf(stderr, "metalcapctl: verify gives %s "
				    "itself: leave it out\n", argv[i]);
				return NULL;
			}
		if (i + 1 < argc && (strcmp(argv[i], "-m") == 0 ||
		    strcmp(argv[i], "--model") == 0))
			v->model = argv[i + 1];
		if (i + 1 < argc && (strcmp(argv[i], "-f") == 0 ||
		    strcmp(argv[i], "--file") == 0))
			v->text = argv[i + 1];
	}
	args = calloc((size_t)argc + 4, sizeof *args);
	memcpy(args, argv, (size_t)argc * sizeof *args);
	args[argc] = "--kl-divergence-base";
	args[argc + 1] = (char *)base;
	if (compare)
		args[argc + 2] = "--kl-divergence";
	return args;
}

/*
 * The figures against the limits: the first past its limit is named.  A
 * figure that is not a number (NaN: kernels that wrote NaN) is past any.
 */
static void
ctl_verify_judge(struct ctl_verify *v)
{
	const struct mc_kld	*k = &v->kld;

	v->failed = NULL;
	if (!(k->kld_mean.value <= v->max_mean_kld))
		v->failed = "mean KLD";
	else if (!(k->kld_999.value <= v->max_kld_999))
		v->failed = "99.9% KLD";
	else if (!(k->same_top.value >= v->min_same_top))
		v->failed = "same top token";
	if (v->failed == NULL)
		snprintf(v->verdict, sizeof v->verdict, "pass: the unlocked "
		    "kernels compute the model as the stock ones do");
	else
		snprintf(v->verdict, sizeof v->verdict, "fail: %s %g is past "
		    "its limit %g", v->failed, strcmp(v->failed,
		    "mean KLD") == 0 ? k->kld_mean.value : strcmp(v->failed,
		    "99.9% KLD") == 0 ? k->kld_999.value : k->same_top.value,
		    strcmp(v->failed, "mean KLD") == 0 ? v->max_mean_kld :
		    strcmp(v->failed, "99.9% KLD") == 0 ? v->max_kld_999 :
		    v->min_same_top);
}

/* Stock, saving the base; unlocked, comparing.  -1 and b->refused. */
static int
ctl_verify_runs(struct ctl *c, struct ctl_bench *b, int argc, char **argv,
    const char *base)
{
	struct ctl_verify	*v = b->verify;
	char			**args, *out, why[512];
	int			  side, rc = -1;

	for (side = 0; side < 2; side++) {
		struct ctl_bench_run	*r = &b->runs[b->nruns++];

		r->round = 1;
		r->unlocked = side == 1;
		args = ctl_verify_args(argc, argv, base, side == 1, v);
		rc = ctl_bench_exec(c, b, args, r);
		free(args);
		if (rc == -1)
			return -1;
		/* The base is the stock run's: hashed before it is used. */
		if (side == 0 && mc_sha256_file(base, v->base_sha256, why,
		    sizeof why) == -1) {
			mc_fmt(b->refused, sizeof b->refused, "the stock run "
			    "wrote no base logits (%s)", why);
			return -1;
		}
	}
	/* Its stdout, where llama.cpp prints the statistics. */
	if ((out = ctl_bench_read(b, &b->runs[1], CTL_VERIFY_OUT_MAX)) ==
	    NULL)
		return -1;
	if (mc_kld_parse(out, &v->kld, why, sizeof why) == -1) {
		mc_fmt(b->refused, sizeof b->refused, "%s: no statistics to "
		    "judge (%s); llama-perplexity prints them only when it "
		    "read the base file and scored at least 100 tokens",
		    b->runs[1].json, why);
		rc = -1;
	} else
		rc = 0;
	free(out);
	return rc;
}

static void
ctl_verify_print(const struct ctl_bench *b)
{
	const struct ctl_verify	*v = b->verify;
	const struct mc_kld	*k = &v->kld;

	printf("profile %s, llama.cpp's KL divergence of the unlocked run "
	    "from the stock one\n\n", b->unlock.profile->name);
	printf("%-18s %12s %12s\n", "", "figure", "limit");
	printf("%-18s %12.4f %12s\n", "PPL stock", k->ppl_base.value, "");
	printf("%-18s %12.4f %12s\n", "PPL unlocked", k->ppl_q.value, "");
	if (k->ratio.seen)
		printf("%-18s %12.6f %12s\n", "PPL ratio", k->ratio.value, "");
	printf("%-18s %12.6f %12s%g\n", "mean KLD", k->kld_mean.value, "<= ",
	    v->max_mean_kld);
	printf("%-18s %12.6f %12s%g\n", "99.9% KLD", k->kld_999.value, "<= ",
	    v->max_kld_999);
	printf("%-18s %8.3f ± %.3f %% %6s%g %%\n", "same top token",
	    k->same_top.value, k->same_top.error, ">= ", v->min_same_top);
	printf("\nverify: %s\n", v->verdict);
}

static json_t *
ctl_verify_figure(const struct mc_kld_figure *f)
{
	return f->seen ? json_pack("{s:f, s:f}", "value", isfinite(f->value) ?
	    f->value : -1, "error", isfinite(f->error) ? f->error : -1) :
	    json_null();
}

/* The outcome as JSON (--json, and what doctor reads back). */
static json_t *
ctl_verify_summary(const struct ctl_bench *b)
{
	const struct ctl_verify	*v = b->verify;
	char			 refused[sizeof b->refused], dir[PATH_MAX];
	json_t			*figures = json_null();

	if (b->refused[0] == '\0')
		figures = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
		    "ppl_stock", ctl_verify_figure(&v->kld.ppl_base),
		    "ppl_unlocked", ctl_verify_figure(&v->kld.ppl_q),
		    "ppl_ratio", ctl_verify_figure(&v->kld.ratio),
		    "mean_kld", ctl_verify_figure(&v->kld.kld_mean),
		    "kld_99_9", ctl_verify_figure(&v->kld.kld_999),
		    "same_top", ctl_verify_figure(&v->kld.same_top));
	mc_text(refused, sizeof refused, b->refused);
	mc_text(dir, sizeof dir, b->dir);
	return json_pack("{s:s, s:s, s:o, s:s?, s:{s:f, s:f, s:f}, s:o, "
	    "s:o, s:o}", "profile", b->unlock.profile->name, "verdict",
	    b->refused[0] ? "error" : v->failed ? "fail" : "pass", "figures",
	    figures, "failed", v->failed, "limits", "mean_kld",
	    v->max_mean_kld, "kld_99_9", v->max_kld_999, "same_top",
	    v->min_same_top, "refused", refused[0] ? json_string(refused) :
	    json_null(), "base_sha256", v->base_sha256[0] ?
	    json_string(v->base_sha256) : json_null(), "evidence",
	    b->temporary ? json_null() : json_string(dir));
}

/*
 * What the verdict is about beyond the program and the model, so that a
 * fleet can tell one combination from another (metalcapctl fleet
 * allowlist): the guest's OS build and host, the llama.cpp build the
 * program says it is, and the shim's version.
 */
static void
ctl_verify_about(struct ctl *c, const struct ctl_bench *b, json_t *record)
{
	struct host_id	h;
	char		build[96];

	if (record == NULL)
		return;
	paths_host(&c->paths, &h);
	ctl_llama_build(b->unlock.program, build, sizeof build);
	json_object_set_new(record, "os_build", json_string(h.os_build));
	json_object_set_new(record, "cpu_brand", json_string(h.cpu_brand));
	json_object_set_new(record, "hw_model", json_string(h.hw_model));
	json_object_set_new(record, "llama_build", build[0] ?
	    json_string(build) : json_null());
	json_object_set_new(record, "shim_version", json_string(MC_VERSION));
}

/*
 * Keep the verdict for this profile, program build and model
 * (state/verified.json): status, the fleet file and the gate read it.
 */
static void
ctl_verify_remember(struct ctl *c, const struct ctl_bench *b)
{
	const struct ctl_verify	*v = b->verify;
	char			 prog[MC_SHA256_HEX], model[MC_SHA256_HEX];
	char			 why[PATH_MAX + 64];
	json_t			*record;

	if (mc_sha256_file(b->unlock.program, prog, why, sizeof why) == -1 ||
	    v->model == NULL || mc_sha256_file(v->model, model, why,
	    sizeof why) == -1) {
		fprintf(stderr, "metalcapctl: verify: the verdict is not kept: "
		    "%s\n", v->model == NULL ? "no -m MODEL given" : why);
		return;
	}
	/* The limits judged by: a looser pass does not lift a failure. */
	record = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s?, s:f, "
	    "s:f, s:f, s:{s:f, s:f, s:f}}", "profile", b->unlock.profile->name,
	    "program", b->unlock.program, "program_sha256", prog, "model",
	    v->model, "model_sha256", model, "date", (json_int_t)time(NULL),
	    "verdict", v->failed ? "fail" : "pass", "failed", v->failed,
	    "mean_kld",
	    isfinite(v->kld.kld_mean.value) ? v->kld.kld_mean.value : -1,
	    "kld_99_9", isfinite(v->kld.kld_999.value) ?
	    v->kld.kld_999.value : -1, "same_top",
	    isfinite(v->kld.same_top.value) ? v->kld.same_top.value : -1,
	    "limits", "mean_kld", v->max_mean_kld, "kld_99_9",
	    v->max_kld_999, "same_top", v->min_same_top);
	ctl_verify_about(c, b, record);
	if (record == NULL || paths_mkdir(c->paths.state, 0700, why,
	    sizeof why) == -1 || verified_remember(&c->paths, record, why,
	    sizeof why) == -1)
		fprintf(stderr, "metalcapctl: verify: the verdict is not kept: "
		    "%s\n", record == NULL ? "out of memory" : why);
	json_decref(record);
}

/* A base folder and what a verify puts in it, gone. */
static void
ctl_verify_base_remove(const char *dir)
{
	char	path[PATH_MAX];

	if (mc_fmt(path, sizeof path, "%s/base.kld", dir) == 0)
		unlink(path);
	if (mc_fmt(path, sizeof path, "%s/owner", dir) == 0)
		unlink(path);
	rmdir(dir);
}

/*
 * A verify killed (SIGKILL, a power cut) leaves its base logits behind,
 * gigabytes for a real vocabulary.  Each base folder holds a file
 * "owner", locked for its verify's life (the lock goes with the process,
 * however it ends): a folder of this user's whose owner nobody holds is
 * removed by the next verify.
 */
static void
ctl_verify_sweep(void)
{
	char		 tmpl[PATH_MAX], parent[PATH_MAX], path[PATH_MAX];
	char		 dir[PATH_MAX];
	const char	*prefix;
	struct dirent	*de;
	struct stat	 sb;
	DIR		*dp;
	int		 fd;

	ctl_tmp_name(tmpl, sizeof tmpl, "verify-base");
	snprintf(parent, sizeof parent, "%s", tmpl);
	prefix = strrchr(tmpl, '/') + 1;	/* "metalcap-verify-base." */
	if ((dp = opendir(dirname(parent))) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix) - 6) != 0 ||
		    mc_fmt(dir, sizeof dir, "%s/%s", parent, de->d_name) ==
		    -1 || mc_fmt(path, sizeof path, "%s/owner", dir) == -1 ||
		    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		if (fstat(fd, &sb) == 0 && sb.st_uid == getuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			ctl_verify_base_remove(dir);
		close(fd);
	}
	closedir(dp);
}

/*
 * The base logits live apart from the evidence: they can be gigabytes.
 * Its owner file stays locked until this process ends (ctl_verify_sweep).
 */
static int	ctl_verify_owner = -1;

static int
ctl_verify_base(char *dir, size_t dirlen, char *base, size_t baselen)
{
	char	owner[PATH_MAX];

	ctl_verify_sweep();
	ctl_tmp_name(dir, dirlen, "verify-base");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "metalcapctl: verify: %s: %s\n", dir,
		    strerror(errno));
		dir[0] = '\0';
		return -1;
	}
	if (mc_fmt(owner, sizeof owner, "%s/owner", dir) == 0 &&
	    (ctl_verify_owner = open(owner, O_RDWR | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0600)) != -1)
		flock(ctl_verify_owner, LOCK_EX);
	if (mc_fmt(base, baselen, "%s/base.kld", dir) == -1) {
		fprintf(stderr, "metalcapctl: verify: %s: the path is too "
		    "long\n", dir);
		rmdir(dir);
		dir[0] = '\0';
		return -1;
	}
	return 0;
}

int
cmd_verify(struct ctl *c, const struct ctl_command *cmd, int argc,
    char **argv)
{
	struct ctl_bench	*b = calloc(1, sizeof *b);
	struct ctl_verify	 v = { 0 };
	char			 basedir[PATH_MAX], base[PATH_MAX];
	char			**probe;
	bool			  judged = false;
	int			  rc = 1;

	(void)cmd;
	b->command = "verify";
	b->out_ext = "out";
	b->verify = &v;
	b->dirfd = -1;
	b->rounds = 1;
	b->runs = calloc(2, sizeof *b->runs);
	basedir[0] = '\0';
	if (ctl_verify_set_limits(c, &v) == -1 ||
	    (probe = ctl_verify_args(argc, argv, "", false, &v)) == NULL) {
		ctl_bench_free(b);
		return EXIT_USAGE;
	}
	free(probe);
	b->args = argv;
	ctl_signals_catch();
	if (ctl_unlock_prepare(c, argv[0], true, &b->unlock) == -1) {
		fprintf(stderr, "metalcapctl: verify: %s\n", b->unlock.why);
		goto out;
	}
	if (ctl_bench_dir(b, c->opts.out) == -1) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (ctl_verify_base(basedir, sizeof basedir, base, sizeof base) ==
	    -1) {
		if (b->temporary)
			ctl_evidence_remove(b);
		goto out;
	}
	snprintf(v.base, sizeof v.base, "%s", base);
	if ((judged = ctl_verify_runs(c, b, argc, argv, base) == 0)) {
		ctl_verify_judge(&v);
		rc = v.failed == NULL ? 0 : 1;
		if (!ctl_signal_caught())
			ctl_verify_remember(c, b);
	} else
		fprintf(stderr, "metalcapctl: verify: %s\n", b->refused);
	rc = ctl_evidence_finish(c, b, ctl_verify_summary(b), judged ?
	    ctl_verify_print : NULL, rc);
out:
	if (basedir[0] != '\0')
		ctl_verify_base_remove(basedir);
	if (ctl_verify_owner != -1)
		close(ctl_verify_owner);
	b->args = NULL;
	ctl_bench_free(b);
	ctl_signals_die();
	return rc;
}
