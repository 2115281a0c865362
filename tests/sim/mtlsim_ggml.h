/* SPDX-License-Identifier: MIT */
/*
 * SIMULATOR: the simulated GPU's execution of the probe's ggml-shaped
 * kernels (probe_kernels_ggml, probe_kernels_ggml_bf16, probe_kernels_sort),
 * lane by lane and SIMD group by SIMD group as the device runs them;
 * mtlsim_kernel.c's table names them.
 *
 *   MTLSIM_SIMD_INT=max-unsigned  integer simd_max compares its lanes as
 *                                 unsigned (a -1 from a lane without the
 *                                 maximum wins), float simd_max unchanged
 *   MTLSIM_SIMD_INT=sum-lane      integer simd_sum hands each lane its own
 *                                 value back (the reduction dropped),
 *                                 float simd_sum unchanged
 */
#ifndef MTLSIM_GGML_H
#define MTLSIM_GGML_H

#include "mtlsim.h"

float	mtlsim_round(float f, int drop);

void	mtlsim_cumsum(const struct mtlsim_dispatch *);
void	mtlsim_shuffle_up(const struct mtlsim_dispatch *);
void	mtlsim_fa_split(const struct mtlsim_dispatch *);
void	mtlsim_fa_reduce(const struct mtlsim_dispatch *);
void	mtlsim_mul_mm_bf16(const struct mtlsim_dispatch *);
void	mtlsim_argmax(const struct mtlsim_dispatch *);
void	mtlsim_count_equal(const struct mtlsim_dispatch *);
void	mtlsim_argsort(const struct mtlsim_dispatch *);
void	mtlsim_argsort_merge(const struct mtlsim_dispatch *);
void	mtlsim_top_k(const struct mtlsim_dispatch *);

#endif
