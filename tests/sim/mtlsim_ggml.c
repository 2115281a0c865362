/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: the probe's ggml-shaped kernels (probe/probe_kernels.c, the
 * ggml section) executed on the CPU the way the GPU runs them: SIMD group
 * by SIMD group, lane by lane where the lanes exchange values, in float,
 * each step in the kernel's order.  The kernels follow the pinned ggml's
 * (file:line in each comment; tests/sim/README.md).
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtlsim_ggml.h"

#define W	MTLSIM_SIMD_WIDTH

/* The MTLSIM_SIMD_INT mode: a device that mishandles integer reductions. */
static bool
mtlsim_int_mode(const char *mode)
{
	const char	*v = mtlsim_getenv("MTLSIM_SIMD_INT");

	return v != NULL && strcmp(v, mode) == 0;
}

/* Integer simd_max over a SIMD group's lanes: signed, as MSL's int. */
static int32_t
mtlsim_simd_max_int(const int32_t v[W])
{
	int32_t	m = v[0];
	int	l;
	bool	as_unsigned = mtlsim_int_mode("max-unsigned");

	for (l = 1; l < W; l++)
		if (as_unsigned ? (uint32_t)v[l] > (uint32_t)m : v[l] > m)
			m = v[l];
	return m;
}

/* Integer simd_sum as lane `lane` receives it. */
static int32_t
mtlsim_simd_sum_int(const int32_t v[W], int lane)
{
	int32_t	s = 0;
	int	l;

	if (mtlsim_int_mode("sum-lane"))
		return v[lane];
	for (l = 0; l < W; l++)
		s += v[l];
	return s;
}

/*
 * probe_cumsum, SIMD group by group: each lane's inclusive running sum in
 * its group, lane 31's total into threadgroup memory, group 0 turning
 * those totals into their exclusive running sum, each lane adding its
 * group's.  The block is the dispatch's: too small a one is refused at
 * the pipeline stage, as on the device.
 */
void
mtlsim_cumsum(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*out = d->buffers[1], shm[MTLSIM_SIMD_WIDTH] = { 0 };
	float		 incl[MTLSIM_SIMD_WIDTH], acc;
	unsigned long	 nth = d->threads_per_group, g, sg, lane, base;
	unsigned long	 nsg = nth / MTLSIM_SIMD_WIDTH;

	for (g = 0; g < d->threadgroups; g++) {
		for (sg = 0; sg < nsg; sg++) {
			base = g * nth + sg * MTLSIM_SIMD_WIDTH;
			for (acc = 0, lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
				out[base + lane] = acc += x[base + lane];
			shm[sg] = acc;
		}
		/* simd_prefix_exclusive_sum over group 0's lanes. */
		for (acc = 0, lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++) {
			incl[lane] = acc;
			acc += shm[lane];
		}
		for (sg = 0; sg < nsg; sg++)
			for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
				out[g * nth + sg * MTLSIM_SIMD_WIDTH + lane] +=
				    incl[sg];
	}
}

/* probe_shuffle_up: the Hillis-Steele scan, step by step over lanes. */
void
mtlsim_shuffle_up(const struct mtlsim_dispatch *d)
{
	const float	*cnt = d->buffers[0];
	float		*out = d->buffers[1];
	int		 incl[MTLSIM_SIMD_WIDTH], was[MTLSIM_SIMD_WIDTH];
	unsigned long	 n = d->threadgroups * d->threads_per_group, base;
	unsigned	 lane, step;

	for (base = 0; base + MTLSIM_SIMD_WIDTH <= n;
	    base += MTLSIM_SIMD_WIDTH) {
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
			incl[lane] = (int)cnt[base + lane];
		for (step = 1; step < MTLSIM_SIMD_WIDTH; step <<= 1) {
			memcpy(was, incl, sizeof was);
			for (lane = step; lane < MTLSIM_SIMD_WIDTH; lane++)
				incl[lane] += was[lane - step];
		}
		for (lane = 0; lane < MTLSIM_SIMD_WIDTH; lane++)
			out[base + lane] = (float)(incl[lane] -
			    (int)cnt[base + lane]);
	}
}

/* probe_kernels_ggml's constants. */
#define FA_D		32
#define FA_NWG		32
#define FA_C		32
#define FA_KEYS		4096
#define FA_ROWS		8
#define FA_MAX_Q	4
#define FA_MAX_NSG	4

/* One SIMD group's partial result for one query: O, S and M. */
struct mtlsim_fa_part {
	float	o[FA_D], s, m;
};

/*
 * One SIMD group's chunks of its split for one query (fa.metal:1340,
 * 1555-1571): the lanes' scores, their max and exp, the online update of
 * S and O, chunk iwg*nsg + sg and then every NWG*nsg.
 */
static void
mtlsim_fa_simdgroup(const struct mtlsim_dispatch *d, unsigned long iwg,
    unsigned long sg, unsigned long nsg, unsigned long row,
    struct mtlsim_fa_part *p)
{
	const float	*q = d->buffers[0], *k = d->buffers[1];
	const float	*v = d->buffers[2];
	float		 s[FA_C], vs[FA_C], mnew, ms, acc;
	unsigned long	 ic, key0, lane, j, dd;

	p->m = -FLT_MAX / 2;
	p->s = 0;
	memset(p->o, 0, sizeof p->o);
	for (ic = iwg * nsg + sg; ic < FA_KEYS / FA_C; ic += FA_NWG * nsg) {
		key0 = ic * FA_C;
		mnew = p->m;
		for (lane = 0; lane < FA_C; lane++) {
			for (acc = 0, dd = 0; dd < FA_D; dd++)
				acc += q[row * FA_D + dd] *
				    k[(key0 + lane) * FA_D + dd];
			s[lane] = acc * 0.125f;
			mnew = fmaxf(mnew, s[lane]);
		}
		ms = expf(p->m - mnew);
		for (acc = 0, lane = 0; lane < FA_C; lane++)
			acc += vs[lane] = expf(s[lane] - mnew);
		p->s = p->s * ms + acc;
		for (lane = 0; lane < FA_D; lane++) {
			p->o[lane] *= ms;
			for (j = 0; j < FA_C; j++)
				p->o[lane] += vs[j] * v[(key0 + j) * FA_D + lane];
		}
		p->m = mnew;
	}
}

/* SIMD group b's partial merged into a's (fa.metal:1737-1758). */
static void
mtlsim_fa_merge(struct mtlsim_fa_part *a, const struct mtlsim_fa_part *b)
{
	float	mx = fmaxf(a->m, b->m), ms0 = expf(a->m - mx);
	float	ms1 = expf(b->m - mx);
	int	l;

	a->s = a->s * ms0 + b->s * ms1;
	a->m = mx;
	for (l = 0; l < FA_D; l++)
		a->o[l] = a->o[l] * ms0 + b->o[l] * ms1;
}

/*
 * probe_fa_split: per threadgroup, Q = 8 * NWG / threadgroups queries and
 * nsg = threads / 32 SIMD groups; each SIMD group's partials, merged
 * pairwise (nsg/2 apart, then nsg/4, ...) as through threadgroup memory;
 * SIMD group 0's stored interleaved by split, then S and M.
 */
void
mtlsim_fa_split(const struct mtlsim_dispatch *d)
{
	float			*tmp = d->buffers[3];
	struct mtlsim_fa_part	 part[FA_MAX_NSG][FA_MAX_Q];
	unsigned long		 nsg = d->threads_per_group / W, nq, tg, iwg;
	unsigned long		 row0, sg, qq, r, lane;

	/* A grid or buffers the kernel does not fit (it would read past
	 * them on the device): nothing written, the check sees its own
	 * fill. */
	nq = d->threadgroups ? FA_ROWS * FA_NWG / d->threadgroups : 0;
	if (nsg == 0 || nsg > FA_MAX_NSG || nq == 0 || nq > FA_MAX_Q ||
	    d->sizes[1] < FA_KEYS * FA_D * sizeof(float) ||
	    d->sizes[2] < FA_KEYS * FA_D * sizeof(float))
		return;
	for (tg = 0; tg < d->threadgroups; tg++) {
		iwg = tg % FA_NWG;
		row0 = tg / FA_NWG * nq;
		for (sg = 0; sg < nsg; sg++)
			for (qq = 0; qq < nq; qq++)
				mtlsim_fa_simdgroup(d, iwg, sg, nsg, row0 + qq,
				    &part[sg][qq]);
		for (r = nsg / 2; r > 0; r >>= 1)
			for (sg = 0; sg < r; sg++)
				for (qq = 0; qq < nq; qq++)
					mtlsim_fa_merge(&part[sg][qq],
					    &part[sg + r][qq]);
		for (qq = 0; qq < nq; qq++) {
			for (lane = 0; lane < FA_D; lane++)
				tmp[(((row0 + qq) * (FA_D / 4) + lane / 4) *
				    FA_NWG + iwg) * 4 + lane % 4] =
				    part[0][qq].o[lane];
			tmp[FA_ROWS * FA_D * FA_NWG + (row0 + qq) * 2 *
			    FA_NWG + 2 * iwg] = part[0][qq].s;
			tmp[FA_ROWS * FA_D * FA_NWG + (row0 + qq) * 2 *
			    FA_NWG + 2 * iwg + 1] = part[0][qq].m;
		}
	}
}

/* probe_fa_reduce: a row a threadgroup, a split a lane. */
void
mtlsim_fa_reduce(const struct mtlsim_dispatch *d)
{
	const float	*tmp = d->buffers[0], *ss;
	float		*dst = d->buffers[1], ms[FA_NWG], m, sum, acc;
	unsigned long	 row, w, i;

	for (row = 0; row < d->threadgroups; row++) {
		ss = tmp + FA_ROWS * FA_D * FA_NWG + row * 2 * FA_NWG;
		for (m = ss[1], w = 0; w < FA_NWG; w++)
			m = fmaxf(m, ss[2 * w + 1]);
		for (sum = 0, w = 0; w < FA_NWG; w++)
			sum += ss[2 * w] * (ms[w] = expf(ss[2 * w + 1] - m));
		sum = sum == 0.0f ? 0.0f : 1.0f / sum;
		for (i = 0; i < FA_D; i++) {
			for (acc = 0, w = 0; w < FA_NWG; w++)
				acc += tmp[((row * (FA_D / 4) + i / 4) *
				    FA_NWG + w) * 4 + i % 4] * ms[w];
			dst[row * FA_D + i] = acc * sum;
		}
	}
}


/*
 * probe_mul_mm_bf16: A and B both rounded to bfloat (to nearest even, as
 * Metal converts), the products accumulated in float.
 */
void
mtlsim_mul_mm_bf16(const struct mtlsim_dispatch *d)
{
	const float	*a = d->buffers[0], *b = d->buffers[1];
	float		*c = d->buffers[2], *sa, *sb;
	int		 i, j, k;

	sa = malloc(2 * 1024 * sizeof *sa);
	if (sa == NULL)
		return;
	sb = sa + 1024;
	for (i = 0; i < 1024; i++) {
		sa[i] = mtlsim_round(a[i], 16);
		sb[i] = mtlsim_round(b[i], 16);
	}
	for (i = 0; i < 32; i++)
		for (j = 0; j < 32; j++) {
			c[i * 32 + j] = 0;
			for (k = 0; k < 32; k++)
				c[i * 32 + j] += sa[i * 32 + k] * sb[k * 32 + j];
		}
	free(sa);
}

#define ARGMAX_N	1000
#define COUNT_N		200

/*
 * probe_argmax, a row a threadgroup: each thread's first largest value;
 * per SIMD group, float simd_max of the values and integer simd_max of
 * the indices of the lanes that hold it (-1 from the others); then the
 * same over the SIMD groups' results in 32 slots of threadgroup memory.
 */
void
mtlsim_argmax(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	float		*dst = d->buffers[1], lmax[W], smax[W], m;
	int32_t		 larg[W], sarg[W], sel[W];
	unsigned long	 nth = d->threads_per_group, nsg = nth / W, row, sg;
	unsigned long	 t, i;
	int		 l;

	for (row = 0; row < d->threadgroups; row++) {
		const float *xr = x + row * ARGMAX_N;

		for (l = 0; l < W; l++) {
			smax[l] = -INFINITY;
			sarg[l] = -1;
		}
		for (sg = 0; sg < nsg && sg < W; sg++) {
			for (m = -INFINITY, l = 0; l < W; l++) {
				t = sg * W + (unsigned long)l;
				lmax[l] = -INFINITY;
				larg[l] = -1;
				for (i = t; i < ARGMAX_N; i += nth)
					if (xr[i] > lmax[l]) {
						lmax[l] = xr[i];
						larg[l] = (int32_t)i;
					}
				m = fmaxf(m, lmax[l]);
			}
			for (l = 0; l < W; l++)
				sel[l] = lmax[l] == m ? larg[l] : -1;
			smax[sg] = m;
			sarg[sg] = mtlsim_simd_max_int(sel);
		}
		for (m = -INFINITY, l = 0; l < W; l++)
			m = fmaxf(m, smax[l]);
		for (l = 0; l < W; l++)
			sel[l] = smax[l] == m ? sarg[l] : -1;
		dst[row] = (float)mtlsim_simd_max_int(sel);
	}
}

/*
 * probe_count_equal, a row a threadgroup: each thread's count, an integer
 * simd_sum per SIMD group whose lane 0 stores it, then SIMD group 0's
 * float simd_sum of the stored totals.
 */
void
mtlsim_count_equal(const struct mtlsim_dispatch *d)
{
	const int32_t	*a = d->buffers[0], *b = d->buffers[1];
	float		*dst = d->buffers[2], total;
	int32_t		 cnt[W], shm[W];
	unsigned long	 nth = d->threads_per_group, nsg = nth / W, row, sg;
	unsigned long	 i;
	int		 l;

	for (row = 0; row < d->threadgroups; row++) {
		for (sg = 0; sg < nsg && sg < W; sg++) {
			for (l = 0; l < W; l++) {
				cnt[l] = 0;
				for (i = sg * W + (unsigned long)l; i < COUNT_N;
				    i += nth)
					cnt[l] += a[row * COUNT_N + i] ==
					    b[row * COUNT_N + i];
			}
			shm[sg] = mtlsim_simd_sum_int(cnt, 0);
		}
		for (total = 0, l = 0; l < W && (unsigned long)l < nsg; l++)
			total += (float)shm[l];
		dst[row] = total;
	}
}

#define SORT_N		3000
#define SORT_ROWS	2
#define TOPK_N		4096
#define TOPK_K		100

/*
 * probe_argsort, ggml's bitonic block sort (descending): each threadgroup's
 * 1024 indices in "threadgroup memory", each step of the network compared
 * and swapped pair by pair (a step's pairs are disjoint, so in turn is as
 * at once), an index past the row sorting last.
 */
void
mtlsim_argsort(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	int32_t		*dst = d->buffers[1], *shm, a, b;
	long		 nth = (long)d->threads_per_group, tg, col, k, j, ixj;
	long		 ib, row, i00;
	bool		 swap;

	if ((shm = malloc((size_t)nth * sizeof *shm)) == NULL)
		return;
	for (tg = 0; tg < (long)d->threadgroups; tg++) {
		const float *src;

		ib = tg / SORT_ROWS;
		row = tg % SORT_ROWS;
		i00 = ib * nth;
		src = x + row * SORT_N;
		for (col = 0; col < nth; col++)
			shm[col] = (int32_t)(i00 + col);
		for (k = 2; k <= nth; k *= 2)
			for (j = k / 2; j > 0; j /= 2)
				for (col = 0; col < nth; col++) {
					if ((ixj = col ^ j) <= col)
						continue;
					a = shm[col];
					b = shm[ixj];
					swap = (col & k) == 0 ? a >= SORT_N ||
					    (b < SORT_N && src[a] < src[b]) :
					    b >= SORT_N || (a < SORT_N &&
					    src[a] > src[b]);
					if (swap) {
						shm[col] = b;
						shm[ixj] = a;
					}
				}
		for (col = 0; col < nth; col++)
			if (i00 + col < SORT_N)
				dst[row * SORT_N + i00 + col] = shm[col];
	}
	free(shm);
}

/* A row's value at an index the merge read from its runs: one a broken
 * earlier dispatch left out of the row reads as 0 (the device's read past
 * a buffer is undefined; the simulator's must not fault). */
static float
mtlsim_row_at(const float *src, int32_t i)
{
	return i >= 0 && i < SORT_N ? src[i] : 0.0f;
}

/*
 * probe_argsort_merge: two sorted runs of len (buffer 3) merged, each
 * thread's chunk of the output started by its binary search of the
 * partition, thread by thread (their chunks are disjoint).
 */
void
mtlsim_argsort_merge(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	const int32_t	*tmp = d->buffers[1];
	int32_t		*dst = d->buffers[2];
	long		 len = *(const int32_t *)d->buffers[3];
	long		 nth = (long)d->threads_per_group, tg, tid;
	long		 start, len0, len1, total, chunk, k0, k1, lo, hi, mid;
	long		 i, j, k;

	for (tg = 0; tg < (long)d->threadgroups; tg++) {
		const long	 row = tg % SORT_ROWS;
		const float	*src = x + row * SORT_N;
		const int32_t	*t0, *t1;

		start = tg / SORT_ROWS * 2 * len;
		len0 = len < SORT_N - start ? len : SORT_N - start;
		len0 = len0 > 0 ? len0 : 0;
		len1 = len < SORT_N - start - len ? len : SORT_N - start - len;
		len1 = len1 > 0 ? len1 : 0;
		total = len0 + len1;
		t0 = tmp + row * SORT_N + start;
		t1 = t0 + len;
		chunk = (total + nth - 1) / nth;
		for (tid = 0; tid < nth; tid++) {
			k0 = tid * chunk;
			k1 = k0 + chunk < total ? k0 + chunk : total;
			if (k0 >= total)
				continue;
			lo = k0 > len1 ? k0 - len1 : 0;
			hi = k0 < len0 ? k0 : len0;
			while (lo < hi) {
				mid = (lo + hi) / 2;
				if (mtlsim_row_at(src, t0[mid]) >=
				    mtlsim_row_at(src, t1[k0 - mid - 1]))
					lo = mid + 1;
				else
					hi = mid;
			}
			for (i = lo, j = k0 - lo, k = k0; k < k1; k++)
				dst[row * SORT_N + start + k] = i < len0 &&
				    (j >= len1 || mtlsim_row_at(src, t0[i]) >=
				    mtlsim_row_at(src, t1[j])) ?
				    t0[i++] : t1[j++];
		}
	}
}

/* ggml_top_k_f2ui: a float's bits ordered as the floats are. */
static uint32_t
mtlsim_f2ui(float v)
{
	uint32_t	y;

	memcpy(&y, &v, sizeof y);
	return (y & 0x80000000u) != 0 ? ~y : y | 0x80000000u;
}

/*
 * probe_top_k, ggml's radix select: four passes of an 8-bit histogram
 * (the threadgroup's atomic counters, whose sum is the order-free count
 * here), the bucket holding the k-th largest key found from the top,
 * then every index above the key and the ties, placed in index order
 * (the device's atomics may place them in any).
 */
void
mtlsim_top_k(const struct mtlsim_dispatch *d)
{
	const float	*x = d->buffers[0];
	int32_t		*dst = d->buffers[1];
	uint32_t	 histo[256], prefix, desired, hi_mask, key, acc, b;
	unsigned long	 row, i, pos;
	int		 shift, bb;

	for (row = 0; row < d->threadgroups; row++) {
		const float	*src = x + row * TOPK_N;
		int32_t		*out = dst + row * TOPK_K;

		prefix = 0;
		desired = TOPK_K;
		for (shift = 24; shift >= 0; shift -= 8) {
			memset(histo, 0, sizeof histo);
			hi_mask = shift + 8 >= 32 ? 0u :
			    0xFFFFFFFFu << (shift + 8);
			for (i = 0; i < TOPK_N; i++) {
				key = mtlsim_f2ui(src[i]);
				if ((key & hi_mask) == (prefix & hi_mask))
					histo[(key >> shift) & 0xFFu]++;
			}
			for (acc = 0, b = 0, bb = 255; bb >= 0; bb--) {
				if (acc + histo[bb] >= desired) {
					b = (uint32_t)bb;
					break;
				}
				acc += histo[bb];
			}
			prefix |= b << shift;
			desired -= acc;
		}
		for (pos = 0, i = 0; i < TOPK_N; i++)
			if (mtlsim_f2ui(src[i]) > prefix)
				out[pos++] = (int32_t)i;
		for (i = 0; i < TOPK_N; i++)
			if (mtlsim_f2ui(src[i]) == prefix && pos < TOPK_K)
				out[pos++] = (int32_t)i;
	}
}
