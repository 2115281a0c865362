/* SPDX-License-Identifier: MIT */
/*
 * llama-perplexity's comparison of two runs (--kl-divergence-base FILE
 * --kl-divergence): its statistics blocks read into numbers, for
 * metalcapctl verify (issue 29).  The format is llama.cpp's
 * tools/perplexity/perplexity.cpp (tests/fixtures/real-perplexity/).
 */
#ifndef MC_KLD_H
#define MC_KLD_H

#include <stddef.h>

/* A figure as llama.cpp prints it: value, and its ± (0 when none). */
struct mc_kld_figure {
	double	value;
	double	error;
	int	seen;
};

struct mc_kld {
	struct mc_kld_figure	ppl_q;		/* Mean PPL(Q) */
	struct mc_kld_figure	ppl_base;	/* Mean PPL(base) */
	struct mc_kld_figure	ln_ratio;	/* Mean ln(PPL(Q)/PPL(base)) */
	struct mc_kld_figure	ratio;		/* Mean PPL(Q)/PPL(base) */
	struct mc_kld_figure	kld_mean;	/* Mean KLD */
	struct mc_kld_figure	kld_max;	/* Maximum KLD */
	struct mc_kld_figure	kld_999;	/* 99.9% KLD */
	struct mc_kld_figure	kld_99;		/* 99.0% KLD, the first */
	struct mc_kld_figure	kld_median;	/* Median KLD */
	struct mc_kld_figure	same_top;	/* Same top p, percent */
	struct mc_kld_figure	rms_dp;		/* RMS Δp, percent */
};

/*
 * Read the statistics from the output of a comparison run (its stdout, or
 * stdout and stderr together).  0, or -1 with why naming the first figure
 * a verdict needs that is missing.
 */
int	mc_kld_parse(const char *text, struct mc_kld *out, char *why,
	    size_t whylen);

#endif
