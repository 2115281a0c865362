/* SPDX-License-Identifier: MIT */
/*
 * llama-perplexity's KL-divergence statistics.  perplexity.cpp prints them
 * as "Label : value ± error" lines in three blocks after the per-chunk
 * table (tests/fixtures/real-perplexity/FORMAT.md: "%10.6lf ± %10.6lf",
 * percentages with a '%'); labels are padded with spaces, which differ
 * between releases, so runs of spaces in a label count as one.  Releases
 * before 2025-09-15 printed the 99.0% line twice (the second stood for
 * 90.0%): the first of each label is the one taken.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_kld.h"

#define MC_KLD_PLUS_MINUS	"\xc2\xb1"	/* ± in UTF-8, as printed */

struct mc_kld_label {
	const char	*label;
	size_t		 offset;
	int		 needed;	/* for a verdict */
};

static const struct mc_kld_label mc_kld_labels[] = {
	{ "Mean PPL(Q)", offsetof(struct mc_kld, ppl_q), 1 },
	{ "Mean PPL(base)", offsetof(struct mc_kld, ppl_base), 1 },
	{ "Mean ln(PPL(Q)/PPL(base))", offsetof(struct mc_kld, ln_ratio), 0 },
	{ "Mean PPL(Q)/PPL(base)", offsetof(struct mc_kld, ratio), 0 },
	{ "Mean KLD", offsetof(struct mc_kld, kld_mean), 1 },
	{ "Maximum KLD", offsetof(struct mc_kld, kld_max), 0 },
	{ "99.9% KLD", offsetof(struct mc_kld, kld_999), 1 },
	{ "99.0% KLD", offsetof(struct mc_kld, kld_99), 0 },
	{ "Median KLD", offsetof(struct mc_kld, kld_median), 0 },
	{ "Same top p", offsetof(struct mc_kld, same_top), 1 },
	{ "RMS \xce\x94p", offsetof(struct mc_kld, rms_dp), 0 },
};

/*
 * The label before the first ':' of a line, its spaces collapsed; the
 * colon, or NULL when the line has none.
 */
static const char *
mc_kld_label_of(const char *line, size_t len, char *buf, size_t buflen)
{
	const char	*colon = memchr(line, ':', len);
	size_t		 n = 0;
	int		 space = 0;

	if (colon == NULL)
		return NULL;
	for (; line < colon && n + 1 < buflen; line++) {
		if (isspace((unsigned char)*line)) {
			space = n > 0;
			continue;
		}
		if (space)
			buf[n++] = ' ';
		space = 0;
		if (n + 1 < buflen)
			buf[n++] = *line;
	}
	buf[n] = '\0';
	return colon;
}

/*
 * "value[%] [± error[%]]": the value and its error.  Stored copies of
 * pasted output have the ± replaced (by "_"), and "+/-" is llama.cpp's
 * own spelling elsewhere: any one word between the numbers is taken.
 */
static int
mc_kld_figure_of(const char *p, const char *end, struct mc_kld_figure *f)
{
	char	*after;

	f->value = strtod(p, &after);
	if (after == p || after > end)
		return -1;
	p = after;
	while (p < end && (*p == ' ' || *p == '%'))
		p++;
	f->error = 0;
	if (p < end && (strncmp(p, MC_KLD_PLUS_MINUS, 2) == 0 ||
	    strncmp(p, "+/-", 3) == 0 || *p == '_')) {
		p += strncmp(p, "+/-", 3) == 0 ? 3 : *p == '_' ? 1 : 2;
		f->error = strtod(p, &after);
		if (after == p || after > end)
			return -1;
	}
	f->seen = 1;
	return 0;
}

int
mc_kld_parse(const char *text, struct mc_kld *out, char *why,
    size_t whylen)
{
	const char		*line, *end, *colon;
	char			 label[64];
	struct mc_kld_figure	*f;
	size_t			 i;

	memset(out, 0, sizeof *out);
	for (line = text; *line != '\0'; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if ((colon = mc_kld_label_of(line, (size_t)(end - line), label,
		    sizeof label)) == NULL)
			continue;
		for (i = 0; i < sizeof mc_kld_labels / sizeof mc_kld_labels[0];
		    i++) {
			if (strcmp(label, mc_kld_labels[i].label) != 0)
				continue;
			f = (struct mc_kld_figure *)((char *)out +
			    mc_kld_labels[i].offset);
			if (!f->seen)
				(void)mc_kld_figure_of(colon + 1, end, f);
			break;
		}
	}
	for (i = 0; i < sizeof mc_kld_labels / sizeof mc_kld_labels[0]; i++) {
		f = (struct mc_kld_figure *)((char *)out +
		    mc_kld_labels[i].offset);
		if (mc_kld_labels[i].needed && !f->seen) {
			snprintf(why, whylen, "no \"%s\" line: not the output "
			    "of llama-perplexity --kl-divergence, or cut short "
			    "(it prints no statistics under 100 scored tokens)",
			    mc_kld_labels[i].label);
			return -1;
		}
	}
	return 0;
}
