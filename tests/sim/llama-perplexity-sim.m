/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: llama-perplexity on the simulated device, for tests of
 * metalcapctl verify.  Its two KL-divergence modes, as llama.cpp's
 * tools/perplexity/perplexity.cpp prints them (tests/fixtures/
 * real-perplexity/FORMAT.md gives each line, its stream and its source
 * line; tests/sim/README.md the figures):
 *
 *   --kl-divergence-base FILE        perplexity, saving every scored
 *                                    position's log-probabilities to FILE
 *                                    in llama.cpp's layout ("_logits_")
 *   --kl-divergence-base FILE --kl-divergence
 *                                    the same positions again, compared
 *                                    with FILE: per-chunk rows, then the
 *                                    perplexity, KL-divergence and token
 *                                    probability blocks
 *
 * The model is the simulator's own file (llama-bench-sim's); the text's
 * bytes are its tokens (a vocabulary of 256).  Each position's logits are
 * a fixed function of the model, the preceding tokens and the next one.
 * Where ggml would run the matrix products follows from the device's
 * answers (ggmlsim_caps): with simdgroup matrices (Apple7, the unlocked
 * guest) through mul_mm, whose output the simulated device computes, and
 * may compute wrong (MTLSIM_FAIL=kernel_mul_mm_f16_f32:off|wrong|nan:
 * ggml's kernel, which the probe never compiles, unlike its own small
 * simdgroup_matrix check);
 * otherwise on the reference path.  A sound mul_mm differs from the
 * reference by rounding alone, so stock and unlocked agree to within
 * floating-point noise; a kernel 1 % off moves every logit by 1 %, and
 * one that writes zeros leaves every position uniform.
 *
 * Exit codes are llama.cpp's: 1 for a bad argument or a model that does
 * not load; 0 otherwise, even when the base file cannot be read (then
 * there is no statistics block, as in the real program).
 */
#include <objc/runtime.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggmlsim.h"

/* llama-perplexity's own lines, through its common log (ggmlsim.h). */
#define PLOG(...)	ggmlsim_log(3, 'I', __VA_ARGS__)
#define PERR(...)	ggmlsim_log(1, 'E', __VA_ARGS__)

#define SIM_VOCAB	256
#define SIM_ROUNDING	1e-4	/* mul_mm against the reference: rounding */

struct ppl_opts {
	const char	*model, *text, *base;
	bool		 kld;
	long		 n_ctx, chunks;
};

/* What the device does to a matrix product: its relative error. */
struct ppl_path {
	bool	mm;		/* ggml's mul_mm, on the device */
	double	error;		/* 0 exact; NAN for NaN out; -1: zeros */
};

static int
ppl_parse(int argc, char **argv, struct ppl_opts *o)
{
	int	i;

	for (i = 1; i < argc; i++) {
		const char	*a = argv[i];
		bool		 value = i + 1 < argc;

		if (strcmp(a, "--kl-divergence") == 0)
			o->kld = true;
		else if ((strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) &&
		    value)
			o->model = argv[++i];
		else if ((strcmp(a, "-f") == 0 || strcmp(a, "--file") == 0) &&
		    value)
			o->text = argv[++i];
		else if ((strcmp(a, "--kl-divergence-base") == 0 ||
		    strcmp(a, "--save-all-logits") == 0) && value)
			o->base = argv[++i];
		else if ((strcmp(a, "-c") == 0 || strcmp(a, "--ctx-size") ==
		    0) && value)
			o->n_ctx = strtol(argv[++i], NULL, 10);
		else if (strcmp(a, "--chunks") == 0 && value)
			o->chunks = strtol(argv[++i], NULL, 10);
		else if ((strcmp(a, "-ngl") == 0 || strcmp(a, "-t") == 0 ||
		    strcmp(a, "-b") == 0) && value)
			i++;	/* taken, and of no consequence here */
		else {
			fprintf(stderr, "error: invalid argument: %s\n", a);
			return -1;
		}
	}
	return 0;
}

/* The whole of a file, NUL-ended; NULL and errno on failure. */
static char *
ppl_slurp(const char *path, size_t *len)
{
	FILE	*f = fopen(path, "rb");
	char	*buf = NULL;
	long	 n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static uint64_t
ppl_hash(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/* A number in [-1, 1) from a hash. */
static double
ppl_unit(uint64_t h)
{
	return (double)(h >> 11) / (double)(1ULL << 52) - 1.0;
}

/*
 * Multiply two 8x8 matrices on the device, as ggml's mul_mm would, and
 * compare with the CPU: how far off the device's products are.
 */
static void
ppl_device_path(GgmlSimDevice *dev, struct ppl_path *p)
{
	struct ggmlsim_caps	c;
	float			a[64], b[64], got[64], want[64] = { 0 };
	double			worst = 0, big = 0;
	char			error[256];
	int			i, j, k;
	struct mtlsim_dispatch	d = {
		.label = "kernel_mul_mm_f16_f32", .function = "probe_simd_mm",
		.source = "kernel void probe_simd_mm(", .nbuffers = 3,
		.buffers = { a, b, got }, .sizes = { sizeof a, sizeof b,
		sizeof got }, .output = 2, .threadgroups = 1,
		.threads_per_group = MTLSIM_SIMD_WIDTH,
	};

	ggmlsim_caps(dev, &c);
	p->mm = c.matrix;
	p->error = 0;
	if (!p->mm)
		return;
	for (i = 0; i < 64; i++) {
		a[i] = (float)(i % 7 - 3);
		b[i] = (float)(i % 5 - 2) * 0.5f;
	}
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++)
			for (k = 0; k < 8; k++)
				want[i * 8 + j] += a[i * 8 + k] * b[k * 8 + j];
	memset(got, 0, sizeof got);
	if (mtlsim_dispatch(dev, &d, error, sizeof error) != MTLSIM_COMPLETED) {
		LOG("ggml_metal_graph_compute: error: command buffer 0 failed "
		    "with status 5\nerror: %s\n", error);
		exit(1);
	}
	for (i = 0; i < 64; i++) {
		if (isnan(got[i])) {
			p->error = NAN;
			return;
		}
		worst = fmax(worst, fabs(got[i] - want[i]));
		big = fmax(big, fabs(got[i]));
	}
	p->error = big == 0 ? -1 : worst / fmax(big, 1e-9);
}

/*
 * The log-probabilities at one position: the model's logits for what
 * follows tokens[0..pos], through the path the device gives.
 */
static void
ppl_logprobs(uint64_t model, const int32_t *tokens, long pos,
    const struct ppl_path *path, double *lp)
{
	double		 logit[SIM_VOCAB], top = -INFINITY, sum = 0;
	uint64_t	 ctx = ppl_hash(ppl_hash(model, (uint64_t)tokens[pos]),
	    pos > 0 ? (uint64_t)tokens[pos - 1] : 0);
	int		 v;

	for (v = 0; v < SIM_VOCAB; v++) {
		uint64_t	h = ppl_hash(ctx, (uint64_t)v);

		logit[v] = 4.0 * ppl_unit(h);
		if (v == tokens[pos + 1])
			logit[v] += 6.0;	/* the model knows the text */
		if (path->mm) {
			if (path->error < 0)
				logit[v] = 0;	/* the kernel wrote zeros */
			else
				logit[v] *= 1 + path->error * (h & 1 ? 1 : -1) +
				    SIM_ROUNDING * ppl_unit(ppl_hash(h, 7));
		}
		top = fmax(top, logit[v]);
	}
	for (v = 0; v < SIM_VOCAB; v++)
		sum += exp(logit[v] - top);
	for (v = 0; v < SIM_VOCAB; v++)
		lp[v] = logit[v] - top - log(sum);
}

/* The tokens: the text's bytes, n_chunk contexts of n_ctx. */
static int32_t *
ppl_tokens(const struct ppl_opts *o, long *n_chunk)
{
	size_t		 len, i;
	char		*text;
	int32_t		*tokens;

	PLOG("perplexity: tokenizing the input ..\n");
	if ((text = ppl_slurp(o->text, &len)) == NULL) {
		PERR("error: failed to open file '%s'\n", o->text);
		exit(1);
	}
	PLOG("perplexity: tokenization took %g ms\n", 0.5);
	if ((long)len < 2 * o->n_ctx) {
		PERR("perplexity: you need at least %ld tokens to evaluate "
		    "perplexity with a context of %ld\n", 2 * o->n_ctx,
		    o->n_ctx);
		free(text);
		return NULL;
	}
	*n_chunk = (long)len / o->n_ctx;
	if (o->chunks > 0 && o->chunks < *n_chunk)
		*n_chunk = o->chunks;
	tokens = calloc((size_t)(*n_chunk * o->n_ctx), sizeof *tokens);
	for (i = 0; i < (size_t)(*n_chunk * o->n_ctx); i++)
		tokens[i] = (unsigned char)text[i];
	free(text);
	return tokens;
}

/* One position's record in the base file (perplexity.cpp L78-107). */
static void
ppl_write_record(FILE *f, const double *lp)
{
	uint16_t	rec[2 * ((SIM_VOCAB + 1) / 2) + 4] = { 0 };
	float		scale, min_lp;
	double		hi = -INFINITY, lo;
	int		v;

	for (v = 0; v < SIM_VOCAB; v++)
		hi = fmax(hi, lp[v]);
	lo = hi;
	for (v = 0; v < SIM_VOCAB; v++)
		lo = fmin(lo, lp[v]);
	lo = fmax(lo, hi - 16);
	scale = (float)((hi - lo) / 65535);
	min_lp = (float)lo;
	memcpy(&rec[0], &scale, sizeof scale);
	memcpy(&rec[2], &min_lp, sizeof min_lp);
	for (v = 0; v < SIM_VOCAB; v++)
		rec[4 + v] = lp[v] <= lo || scale == 0 ? 0 :
		    (uint16_t)lround((lp[v] - lo) / scale);
	fwrite(rec, sizeof rec, 1, f);
}

static void
ppl_read_record(const uint16_t *rec, double *lp)
{
	float	scale, min_lp;
	int	v;

	memcpy(&scale, &rec[0], sizeof scale);
	memcpy(&min_lp, &rec[2], sizeof min_lp);
	for (v = 0; v < SIM_VOCAB; v++)
		lp[v] = min_lp + scale * rec[4 + v];
}

static void
ppl_eta(const char *who)
{
	PLOG("%s: %.2f seconds per pass - ETA ", who, 0.02);
	fflush(stderr);
	printf("%.2f minutes\n", 0.01);
	fflush(stdout);
}

/* Mode 1: perplexity, saving the log-probabilities. */
static void
ppl_save(const struct ppl_opts *o, uint64_t model, const struct ppl_path *p)
{
	double		 lp[SIM_VOCAB], nll = 0, nll2 = 0;
	long		 n_chunk, c, j, count = 0, first = o->n_ctx / 2;
	int32_t		*tokens, header[3];
	FILE		*f;

	PLOG("perplexity: saving all logits to %s\n", o->base);
	if ((f = fopen(o->base, "wb")) == NULL) {
		PERR("perplexity: failed to open %s for writing\n", o->base);
		return;
	}
	fwrite("_logits_", 8, 1, f);
	header[0] = (int32_t)o->n_ctx;
	fwrite(header, sizeof header[0], 1, f);
	if ((tokens = ppl_tokens(o, &n_chunk)) == NULL) {
		fclose(f);	/* the 12-byte stub llama.cpp leaves */
		return;
	}
	header[1] = SIM_VOCAB;
	header[2] = (int32_t)n_chunk;
	fwrite(&header[1], sizeof header[0], 2, f);
	fwrite(tokens, sizeof *tokens, (size_t)(n_chunk * o->n_ctx), f);
	PLOG("perplexity: calculating perplexity over %ld chunks, n_ctx=%ld, "
	    "batch_size=%ld, n_seq=%d\n", n_chunk, o->n_ctx, o->n_ctx, 1);
	for (c = 0; c < n_chunk; c++) {
		if (c == 0)
			ppl_eta("perplexity");
		for (j = first; j < o->n_ctx - 1; j++) {
			ppl_logprobs(model, tokens + c * o->n_ctx, j, p, lp);
			ppl_write_record(f, lp);
			nll -= lp[tokens[c * o->n_ctx + j + 1]];
			nll2 += lp[tokens[c * o->n_ctx + j + 1]] *
			    lp[tokens[c * o->n_ctx + j + 1]];
			count++;
		}
		printf("[%ld]%.4lf,", c + 1, exp(nll / (double)count));
		fflush(stdout);
	}
	printf("\n");
	fflush(stdout);
	nll /= (double)count;
	nll2 = nll2 / (double)count - nll * nll;
	PLOG("Final estimate: PPL = %.4lf +/- %.5lf\n", exp(nll),
	    exp(nll) * sqrt(fmax(nll2, 0) / (double)(count - 1)));
	fclose(f);
	free(tokens);
}

/* Running sums of one figure, for its mean and ±. */
struct ppl_sum {
	double	sum, sum2;
	long	n;
};

static void
ppl_add(struct ppl_sum *s, double x)
{
	s->sum += x;
	s->sum2 += x * x;
	s->n++;
}

static double
ppl_mean(const struct ppl_sum *s)
{
	return s->sum / (double)s->n;
}

static double
ppl_err(const struct ppl_sum *s)
{
	double	m = ppl_mean(s), v = s->sum2 / (double)s->n - m * m;

	return s->n > 1 ? sqrt(fmax(v, 0) / (double)(s->n - 1)) : 0;
}

static int
ppl_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A percentile with llama.cpp's linear interpolation (L1953-1959). */
static double
ppl_pct(const double *sorted, long n, double fraction)
{
	double	at = fraction * (double)(n - 1);
	long	i = (long)at;

	return i + 1 < n ? sorted[i] + (at - (double)i) * (sorted[i + 1] -
	    sorted[i]) : sorted[n - 1];
}

struct ppl_stats {
	struct ppl_sum	 nll_q, nll_base, ln, kld, dp, dp2, top;
	double		*klds, *dps;
	long		 n;
};

/* The three blocks of statistics, format for format (L1915-2005). */
static void
ppl_print_stats(struct ppl_stats *s)
{
	static const double	kq[] = { .999, .99, .95, .90 },
				kl[] = { .10, .05, .01, .001 };
	static const char	*kqn[] = { "99.9%", "99.0%", "95.0%", "90.0%" },
				*kln[] = { "10.0%", " 5.0%", " 1.0%", " 0.1%" };
	static const double	dq[] = { .999, .99, .95, .90, .75, .5, .25,
				    .10, .05, .01, .001 };
	static const char	*dqn[] = { "99.9%   ", "99.0%   ", "95.0%   ",
				    "90.0%   ", "75.0%   ", "Median  ", "25.0%   ",
				    "10.0%   ", " 5.0%   ", " 1.0%   ", " 0.1%   " };
	double			 q = exp(ppl_mean(&s->nll_q)),
				 b = exp(ppl_mean(&s->nll_base));
	long			 i;

	qsort(s->klds, (size_t)s->n, sizeof *s->klds, ppl_cmp);
	qsort(s->dps, (size_t)s->n, sizeof *s->dps, ppl_cmp);
	printf("====== Perplexity statistics ======\n");
	printf("Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", q,
	    q * ppl_err(&s->nll_q));
	printf("Mean PPL(base)                : %10.6lf ± %10.6lf\n", b,
	    b * ppl_err(&s->nll_base));
	printf("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100.0);
	printf("Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n",
	    ppl_mean(&s->ln), ppl_err(&s->ln));
	printf("Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", q / b,
	    q / b * ppl_err(&s->ln));
	printf("Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n", q - b,
	    q * ppl_err(&s->ln));
	printf("\n====== KL divergence statistics ======\n");
	printf("Mean    KLD: %10.6lf ± %10.6lf\n", ppl_mean(&s->kld),
	    ppl_err(&s->kld));
	printf("Maximum KLD: %10.6f\n", s->klds[s->n - 1]);
	for (i = 0; i < 4; i++)
		printf("%s   KLD: %10.6f\n", kqn[i], ppl_pct(s->klds, s->n,
		    kq[i]));
	printf("Median  KLD: %10.6f\n", ppl_pct(s->klds, s->n, .5));
	for (i = 0; i < 4; i++)
		printf("%s   KLD: %10.6f\n", kln[i], ppl_pct(s->klds, s->n,
		    kl[i]));
	printf("Minimum KLD: %10.6f\n", s->klds[0]);
	printf("\n====== Token probability statistics ======\n");
	printf("Mean    Δp: %6.3lf ± %5.3lf %%\n", 100 * ppl_mean(&s->dp),
	    100 * ppl_err(&s->dp));
	printf("Maximum Δp: %6.3lf%%\n", 100 * s->dps[s->n - 1]);
	for (i = 0; i < 11; i++)
		printf("%sΔp: %6.3lf%%\n", dqn[i], 100 * ppl_pct(s->dps, s->n,
		    dq[i]));
	printf("Minimum Δp: %6.3lf%%\n", 100 * s->dps[0]);
	printf("RMS Δp    : %6.3lf ± %5.3lf %%\n", 100 * sqrt(ppl_mean(
	    &s->dp2)), 100 * ppl_err(&s->dp2));
	printf("Same top p: %6.3lf ± %5.3lf %%\n", 100 * ppl_mean(&s->top),
	    100 * ppl_err(&s->top));
}

/* One position compared with the base's record. */
static void
ppl_compare(struct ppl_stats *s, const double *base, const double *lp,
    int next)
{
	double	kld = 0, pb, pq;
	int	v, tb = 0, tq = 0;

	for (v = 0; v < SIM_VOCAB; v++) {
		if (base[v] > -16)
			kld += exp(base[v]) * (base[v] - lp[v]);
		tb = base[v] > base[tb] ? v : tb;
		tq = lp[v] > lp[tq] ? v : tq;
	}
	pb = exp(base[next]);
	pq = exp(lp[next]);
	ppl_add(&s->nll_q, -lp[next]);
	ppl_add(&s->nll_base, -base[next]);
	ppl_add(&s->ln, base[next] - lp[next]);
	ppl_add(&s->kld, kld);
	ppl_add(&s->dp, pq - pb);
	ppl_add(&s->dp2, (pq - pb) * (pq - pb));
	ppl_add(&s->top, tb == tq);
	s->klds[s->n] = kld;
	s->dps[s->n++] = pq - pb;
}

/* Mode 2: compare with the base file (kl_divergence, L1695-2006). */
static void
ppl_kld(const struct ppl_opts *o, uint64_t model, const struct ppl_path *p)
{
	enum { NV = 2 * ((SIM_VOCAB + 1) / 2) + 4 };
	struct ppl_stats	 s = { 0 };
	double			 base[SIM_VOCAB], lp[SIM_VOCAB], q;
	uint16_t		 rec[NV];
	int32_t			 n_ctx, n_vocab, n_chunk, *tokens;
	char			 magic[8];
	long			 c, j, first, per;
	FILE			*f;

	if ((f = fopen(o->base, "rb")) == NULL) {
		PERR("kl_divergence: failed to open %s\n", o->base);
		return;
	}
	if (fread(magic, 8, 1, f) != 1 || memcmp(magic, "_logits_", 8) != 0) {
		PERR("kl_divergence: %s does not look like a file containing "
		    "log-probabilities\n", o->base);
		fclose(f);
		return;
	}
	if (fread(&n_ctx, sizeof n_ctx, 1, f) != 1 || n_ctx != o->n_ctx)
		PERR("kl_divergence: %s has been computed with %d, while the "
		    "current context is %ld. Increase it with -c and retry\n",
		    o->base, n_ctx, o->n_ctx);
	if (fread(&n_vocab, sizeof n_vocab, 1, f) != 1 ||
	    fread(&n_chunk, sizeof n_chunk, 1, f) != 1 || n_chunk < 1 ||
	    n_ctx < 4 || n_ctx > 1 << 20) {
		PERR("kl_divergence: failed reading n_vocab, n_chunk from %s\n",
		    o->base);
		fclose(f);
		return;
	}
	/*
	 * llama.cpp only logs this (L1733) and reads on with the file's
	 * stride; the simulator, whose records are its own size, stops.
	 */
	if (n_vocab != SIM_VOCAB) {
		PERR("kl_divergence: inconsistent vocabulary (%d vs %d)\n",
		    n_vocab, SIM_VOCAB);
		fclose(f);
		return;
	}
	tokens = calloc((size_t)n_chunk * (size_t)n_ctx, sizeof *tokens);
	if (fread(tokens, sizeof *tokens, (size_t)n_chunk * (size_t)n_ctx, f) !=
	    (size_t)n_chunk * (size_t)n_ctx) {
		PERR("kl_divergence: failed reading evaluation tokens from %s\n",
		    o->base);
		goto out;
	}
	for (c = 0; c < (long)n_chunk * n_ctx; c++)
		if (tokens[c] < 0 || tokens[c] >= SIM_VOCAB) {
			PERR("kl_divergence: failed reading evaluation tokens "
			    "from %s\n", o->base);
			goto out;
		}
	first = n_ctx / 2;
	per = n_ctx - 1 - first;
	s.klds = calloc((size_t)(n_chunk * per), sizeof *s.klds);
	s.dps = calloc((size_t)(n_chunk * per), sizeof *s.dps);
	PLOG("kl_divergence: computing over %d chunks, n_ctx=%d, batch_size=%d, "
	    "n_seq=%d\n", n_chunk, n_ctx, n_ctx, 1);
	for (c = 0; c < n_chunk; c++) {
		if (c == 0) {
			ppl_eta("kl_divergence");
			printf("\nchunk             PPL               "
			    "ln(PPL(Q)/PPL(base))          KL Divergence      "
			    "        Δp RMS            Same top p\n");
		}
		for (j = first; j < n_ctx - 1; j++) {
			if (fread(rec, sizeof rec, 1, f) != 1) {
				PERR("kl_divergence: failed reading log-probs "
				    "for chunk %ld\n", c);
				goto out;
			}
			ppl_read_record(rec, base);
			ppl_logprobs(model, tokens + c * n_ctx, j, p, lp);
			ppl_compare(&s, base, lp, tokens[c * n_ctx + j + 1]);
		}
		q = exp(ppl_mean(&s.nll_q));
		printf("%4ld    %9.4lf ± %9.4lf    %10.5lf ± %10.5lf    "
		    "%10.5lf ± %10.5lf    %6.3lf ± %6.3lf %%    %6.3lf ± "
		    "%6.3lf %%\n", c + 1, q, q * ppl_err(&s.nll_q),
		    ppl_mean(&s.ln), ppl_err(&s.ln), ppl_mean(&s.kld),
		    ppl_err(&s.kld),
		    100 * sqrt(ppl_mean(&s.dp2)), 100 * ppl_err(&s.dp2),
		    100 * ppl_mean(&s.top), 100 * ppl_err(&s.top));
	}
	printf("\n");
	if (s.n >= 100)
		ppl_print_stats(&s);
out:
	fflush(stdout);
	free(s.klds);
	free(s.dps);
	free(tokens);
	fclose(f);
}

int
main(int argc, char **argv)
{
	struct ppl_opts	 o = { .n_ctx = 512 };
	struct ppl_path	 path;
	GgmlSimDevice	*dev;
	uint64_t	 model = 1469598103934665603ULL;
	size_t		 len, i;
	char		*bytes;

	ggmlsim_version(argc, argv);
	/* llama-perplexity's log: prefixed, ggml's INFO hidden (common/). */
	ggmlsim_log_style = (struct ggmlsim_log){ .prefix = true,
	    .timestamps = true, .verbosity = 3 };
	if (ppl_parse(argc, argv, &o) == -1)
		return 1;
	if (o.n_ctx <= 0) {
		PERR("main: perplexity tool requires '--ctx-size' > 0\n");
		return 1;
	}
	if (o.model == NULL || (bytes = ppl_slurp(o.model, &len)) == NULL ||
	    strncmp(bytes, "GGUF", 4) != 0) {
		PERR("llama_model_load: error loading model: %s\nmain: unable "
		    "to load model\n", o.model == NULL ? "no -m" :
		    strerror(errno ? errno : EINVAL));
		return 1;
	}
	for (i = 0; i < len; i++)
		model = ppl_hash(model, (unsigned char)bytes[i]);
	free(bytes);
	if ((dev = MTLCreateSystemDefaultDevice()) == nil) {
		PERR("ggml_metal_init: error: failed to allocate context\n");
		return 1;
	}
	if (ggmlsim_init(dev) != 0)
		return 1;
	ppl_device_path(dev, &path);
	PLOG("system_info: n_threads = 8 | Metal : EMBED_LIBRARY = 1 |\n");
	if (o.base == NULL)
		PLOG("perplexity: the simulator computes only with "
		    "--kl-divergence-base\n");
	else if (o.kld)
		ppl_kld(&o, model, &path);
	else if (o.text == NULL)
		PERR("error: the simulator needs -f TEXT\n");
	else
		ppl_save(&o, model, &path);
	printf("\n");
	object_dispose(dev);
	return 0;
}
