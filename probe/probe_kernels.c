/* SPDX-License-Identifier: MIT */
/*
 * The Metal Shading Language the checks compile (probe_check.c): one
 * library per language version a check needs.  Each kernel does the one
 * thing llama.cpp's faster kernels rely on (simdgroup reductions and
 * matrices, bfloat, threadgroup memory), small enough to check on the CPU.
 */
#include "probe.h"

/* One library for the first three kernels; bfloat gets its own (MSL 3.1). */
const char probe_kernels[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void probe_simd_sum(device float *totals [[buffer(0)]],\n"
    "    uint lane [[thread_index_in_simdgroup]],\n"
    "    uint group [[simdgroup_index_in_threadgroup]]) {\n"
    "  float total = simd_sum(float(lane) + 1.0f);\n"
    "  if (lane == 0) totals[group] = total;\n"
    "}\n"
    "kernel void probe_simd_mm(device const float *a [[buffer(0)]],\n"
    "    device const float *b [[buffer(1)]], device float *c [[buffer(2)]]) {\n"
    "  simdgroup_float8x8 left, right;\n"
    "  simdgroup_float8x8 product = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n"
    "  simdgroup_load(left, a, 8);\n"
    "  simdgroup_load(right, b, 8);\n"
    "  simdgroup_multiply_accumulate(product, left, right, product);\n"
    "  simdgroup_store(product, c, 8);\n"
    "}\n"
    /* Every address of the block gets a value no other address or
     * threadgroup has: a block that wraps (aliases) at 32 KB reads back
     * another address's value.  Each thread counts the reads it got
     * right (so a kernel that never ran, and left zeros, is wrong). */
    "kernel void probe_tg_mem(device uint *right [[buffer(0)]],\n"
    "    constant uint &count [[buffer(1)]],\n"
    "    threadgroup uint *block [[threadgroup(0)]],\n"
    "    uint tid [[thread_index_in_threadgroup]],\n"
    "    uint width [[threads_per_threadgroup]],\n"
    "    uint group [[threadgroup_position_in_grid]]) {\n"
    "  for (uint i = tid; i < count; i += width) block[i] = group * count + i;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  uint good = 0;\n"
    "  for (uint i = tid; i < count; i += width) good += block[i] == group * count + i;\n"
    "  right[group * width + tid] = good;\n"
    "}\n"
    /* ggml's reductions (norms, soft_max): sum and max over a group. */
    "kernel void probe_simd_reduce(device const float *x [[buffer(0)]],\n"
    "    device float *out [[buffer(1)]],\n"
    "    uint i [[thread_position_in_grid]],\n"
    "    uint lane [[thread_index_in_simdgroup]],\n"
    "    uint group [[simdgroup_index_in_threadgroup]]) {\n"
    "  float s = simd_sum(x[i]), m = simd_max(x[i]);\n"
    "  if (lane == 0) { out[2 * group] = s; out[2 * group + 1] = m; }\n"
    "}\n"
    /* Flash attention's Q x K^T: K loaded transposed (the 5-argument
     * simdgroup_load), half staged in threadgroup memory with a row
     * stride that is not 8, accumulated in float (ggml-metal.metal
     * kernel_flash_attn_ext_impl, its quantized-K path). */
    "kernel void probe_simdgroup_load_t(device const float *a [[buffer(0)]],\n"
    "    device const float *b [[buffer(1)]], device float *c [[buffer(2)]],\n"
    "    ushort lane [[thread_index_in_simdgroup]]) {\n"
    "  threadgroup half sa[64], sb[128];\n"
    "  for (ushort i = lane; i < 64; i += 32) {\n"
    "    sa[i] = half(a[i]);\n"
    "    sb[(i / 8) * 16 + i % 8] = half(b[i]);\n"
    "  }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  simdgroup_half8x8 left, right;\n"
    "  simdgroup_float8x8 product = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n"
    "  simdgroup_load(left, sa, 8);\n"
    "  simdgroup_load(right, sb, 16, 0, true);\n"
    "  simdgroup_multiply_accumulate(product, left, right, product);\n"
    "  simdgroup_store(product, c, 8);\n"
    "}\n"
    /* The vector flash-attention kernel's reductions: a tree of
     * simd_shuffle_down, simd_shuffle as a broadcast, and the
     * simd_shuffle_xor butterfly (kernel_flash_attn_ext_vec, fwht). */
    "kernel void probe_simd_shuffle(device const float *x [[buffer(0)]],\n"
    "    device float *out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n"
    "  float s = x[i];\n"
    "  for (ushort off = 16; off > 0; off /= 2) s += simd_shuffle_down(s, off);\n"
    "  out[2 * i] = simd_shuffle(s, 0);\n"
    "  out[2 * i + 1] = simd_shuffle_xor(x[i], 1);\n"
    "}\n"
    /* simd_max and simd_min on half, as the flash-attention block and
     * vector kernels mask with them. */
    "kernel void probe_simd_half(device const float *x [[buffer(0)]],\n"
    "    device float *out [[buffer(1)]],\n"
    "    uint i [[thread_position_in_grid]],\n"
    "    uint lane [[thread_index_in_simdgroup]],\n"
    "    uint group [[simdgroup_index_in_threadgroup]]) {\n"
    "  half h = half(x[i]), m = simd_max(h), n = simd_min(h);\n"
    "  if (lane == 0) { out[2 * group] = float(m); out[2 * group + 1] = float(n); }\n"
    "}\n";

/*
 * Shaped like ggml's kernel_mul_mm: 128 threads in 4 SIMD groups stage
 * A as half or bfloat and B as float through threadgroup memory in
 * fragment-major 8x8 blocks, then multiply-accumulate 8x8 fragments into
 * float; here C = A x B, 32 x 32, each group a 16 x 16 quarter.  The half
 * kernel is compiled at the default language version, as ggml's library;
 * the bfloat one, guarded as ggml's kernels/common.h guards bf16, at 3.1.
 */
#define PROBE_MUL_MM(NAME, T)						\
    "kernel void " NAME "(device const float *a [[buffer(0)]],\n"	\
    "    device const float *b [[buffer(1)]], device float *c [[buffer(2)]],\n" \
    "    threadgroup char *shm [[threadgroup(0)]],\n"			\
    "    ushort tid [[thread_index_in_threadgroup]],\n"		\
    "    ushort sg [[simdgroup_index_in_threadgroup]]) {\n"		\
    "  threadgroup " T " *sa = (threadgroup " T " *)shm;\n"		\
    "  threadgroup float *sb = (threadgroup float *)(shm + 1024 * sizeof(" T "));\n" \
    "  for (ushort i = tid; i < 1024; i += 128) {\n"			\
    "    ushort r = i / 32, k = i % 32;\n"				\
    "    sa[((r / 8) * 4 + k / 8) * 64 + (r % 8) * 8 + k % 8] = " T "(a[i]);\n" \
    "    sb[((r / 8) * 4 + k / 8) * 64 + (r % 8) * 8 + k % 8] = b[i];\n" \
    "  }\n"								\
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"		\
    "  simdgroup_matrix<" T ", 8, 8> ma[2]; simdgroup_float8x8 mb[2], mc[4];\n" \
    "  for (short i = 0; i < 4; i++)\n"					\
    "    mc[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n"	\
    "  ushort br = (sg / 2) * 2, bc = (sg % 2) * 2;\n"			\
    "  for (ushort bk = 0; bk < 4; bk++) {\n"				\
    "    for (short i = 0; i < 2; i++) {\n"				\
    "      simdgroup_load(ma[i], sa + ((br + i) * 4 + bk) * 64, 8);\n"	\
    "      simdgroup_load(mb[i], sb + (bk * 4 + bc + i) * 64, 8);\n"	\
    "    }\n"								\
    "    for (short i = 0; i < 4; i++)\n"				\
    "      simdgroup_multiply_accumulate(mc[i], ma[i / 2], mb[i % 2], mc[i]);\n" \
    "  }\n"								\
    "  for (short i = 0; i < 4; i++)\n"					\
    "    simdgroup_store(mc[i], c + (br + i / 2) * 8 * 32 + (bc + i % 2) * 8, 32);\n" \
    "}\n"

const char probe_kernels_mm[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    PROBE_MUL_MM("probe_mul_mm_half", "half")
    "#if __METAL_VERSION__ >= 310\n"
    PROBE_MUL_MM("probe_mul_mm_bfloat", "bfloat")
    "#endif\n";

const char probe_kernels_bf16[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void probe_bf16(device const float *x [[buffer(0)]],\n"
    "    device float *y [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n"
    "  bfloat v = bfloat(x[i]);\n"
    "  y[i] = float(v * bfloat(2.0f) + bfloat(1.0f));\n"
    "}\n";

/*
 * What the ggml of the pinned llama.cpp runs beyond the checks above
 * (docs/ggml-paths.md): CUMSUM's block scan, the sparse flash-attention
 * index kernel's offsets, vector flash attention as ggml runs it from
 * Apple7 up (1-4 SIMD groups a threadgroup merged through threadgroup
 * memory, 32 splits of the keys merged by a reduce pass), and ARGMAX's
 * and COUNT_EQUAL's integer simd_max and simd_sum.
 */
const char probe_kernels_ggml[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    /* kernels/reduce.metal:151-165: a scan within each SIMD group, then
     * of the groups' totals through threadgroup memory. */
    "kernel void probe_cumsum(device const float *x [[buffer(0)]],\n"
    "    device float *out [[buffer(1)]],\n"
    "    threadgroup float *shm [[threadgroup(0)]],\n"
    "    uint i [[thread_position_in_grid]],\n"
    "    ushort lane [[thread_index_in_simdgroup]],\n"
    "    ushort sg [[simdgroup_index_in_threadgroup]]) {\n"
    "  float s = simd_prefix_inclusive_sum(x[i]);\n"
    "  if (lane == 31) shm[sg] = s;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  if (sg == 0) shm[lane] = simd_prefix_exclusive_sum(shm[lane]);\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  out[i] = s + shm[sg];\n"
    "}\n"
    /* kernels/fa.metal:1142-1150: each thread's count turned into where
     * its entries start, by a Hillis-Steele scan on simd_shuffle_up. */
    "kernel void probe_shuffle_up(device const float *cnt [[buffer(0)]],\n"
    "    device float *out [[buffer(1)]],\n"
    "    uint i [[thread_position_in_grid]],\n"
    "    ushort lane [[thread_index_in_simdgroup]]) {\n"
    "  const int c = int(cnt[i]);\n"
    "  int incl = c;\n"
    "  for (ushort d = 1; d < 32; d <<= 1) {\n"
    "    const int v = simd_shuffle_up(incl, d);\n"
    "    if (lane >= d) incl += v;\n"
    "  }\n"
    "  out[i] = float(incl - c);\n"
    "}\n"
    /* kernels/fa.metal:1340-1345, 1555-1571, 1730-1791: Q queries a
     * threadgroup (1, 2 or 4, from the grid) staged in threadgroup
     * memory; NWG splits of the keys, each taken by 1-4 SIMD groups in
     * chunks of C (chunk iwg*NSG + sg, then every NWG*NSG), each with its
     * own online softmax; the SIMD groups' S, M and O merged pairwise
     * through threadgroup memory; SIMD group 0 stores O unnormalised,
     * interleaved by split, then S and M. */
    "constant short D = 32, NWG = 32, C = 32;\n"
    "constant uint NROWS = 8, KEYS = 4096, ARGMAX_N = 1000, COUNT_N = 200;\n"
    "kernel void probe_fa_split(device const float *q [[buffer(0)]],\n"
    "    device const float *k [[buffer(1)]],\n"
    "    device const float *v [[buffer(2)]],\n"
    "    device float *tmp [[buffer(3)]],\n"
    "    threadgroup float *shm [[threadgroup(0)]],\n"
    "    uint tg [[threadgroup_position_in_grid]],\n"
    "    uint ntg [[threadgroups_per_grid]],\n"
    "    ushort lane [[thread_index_in_simdgroup]],\n"
    "    ushort sg [[simdgroup_index_in_threadgroup]],\n"
    "    ushort nsg [[simdgroups_per_threadgroup]]) {\n"
    "  const short Q = NROWS * NWG / ntg;\n"
    "  const uint iwg = tg % NWG, row0 = (tg / NWG) * Q;\n"
    "  threadgroup float *sq = shm, *so = shm + Q * D, *ss = so + nsg * Q * D;\n"
    "  for (short i = sg * 32 + lane; i < Q * D; i += nsg * 32) sq[i] = q[row0 * D + i];\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  float M[4], S[4], o[4];\n"
    "  for (short qq = 0; qq < Q; qq++) { M[qq] = -FLT_MAX / 2; S[qq] = 0; o[qq] = 0; }\n"
    "  for (uint ic = iwg * nsg + sg; ic < KEYS / C; ic += NWG * nsg) {\n"
    "    const uint key0 = ic * C;\n"
    "    for (short qq = 0; qq < Q; qq++) {\n"
    "      float s = 0;\n"
    "      for (short d = 0; d < D; d++) s += sq[qq * D + d] * k[(key0 + lane) * D + d];\n"
    "      s *= 0.125f;\n"
    "      const float m = M[qq];\n"
    "      M[qq] = simd_max(max(M[qq], s));\n"
    "      const float ms = exp(m - M[qq]), vs = exp(s - M[qq]);\n"
    "      S[qq] = S[qq] * ms + simd_sum(vs);\n"
    "      o[qq] *= ms;\n"
    "      for (short j = 0; j < C; j++) o[qq] += simd_shuffle(vs, j) * v[(key0 + j) * D + lane];\n"
    "    }\n"
    "  }\n"
    "  for (short qq = 0; qq < Q; qq++) {\n"
    "    so[(sg * Q + qq) * D + lane] = o[qq];\n"
    "    if (lane == 0) { ss[(sg * Q + qq) * 2] = S[qq]; ss[(sg * Q + qq) * 2 + 1] = M[qq]; }\n"
    "  }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  for (short r = nsg / 2; r > 0; r >>= 1) {\n"
    "    if (sg < r) {\n"
    "      for (short qq = 0; qq < Q; qq++) {\n"
    "        const short a = sg * Q + qq, b = (sg + r) * Q + qq;\n"
    "        const float S0 = ss[2 * a], S1 = ss[2 * b], M0 = ss[2 * a + 1], M1 = ss[2 * b + 1];\n"
    "        const float Mx = max(M0, M1), ms0 = exp(M0 - Mx), ms1 = exp(M1 - Mx);\n"
    "        simdgroup_barrier(mem_flags::mem_threadgroup);\n"
    "        if (lane == 0) { ss[2 * a] = S0 * ms0 + S1 * ms1; ss[2 * a + 1] = Mx; }\n"
    "        so[a * D + lane] = so[a * D + lane] * ms0 + so[b * D + lane] * ms1;\n"
    "      }\n"
    "    }\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  }\n"
    "  if (sg != 0) return;\n"
    "  for (short qq = 0; qq < Q; qq++) {\n"
    "    const uint row = row0 + qq;\n"
    "    tmp[((row * (D / 4) + lane / 4) * NWG + iwg) * 4 + lane % 4] = so[qq * D + lane];\n"
    "    if (lane == 0) {\n"
    "      tmp[NROWS * D * NWG + row * 2 * NWG + 2 * iwg] = ss[2 * qq];\n"
    "      tmp[NROWS * D * NWG + row * 2 * NWG + 2 * iwg + 1] = ss[2 * qq + 1];\n"
    "    }\n"
    "  }\n"
    "}\n"
    /* kernels/fa.metal:2256-2296: a row a threadgroup of 32 SIMD
     * groups, a split a lane; O = sum e^(M_w - m) O_w / sum e^(M_w - m) S_w. */
    "kernel void probe_fa_reduce(device const float *tmp [[buffer(0)]],\n"
    "    device float *dst [[buffer(1)]],\n"
    "    uint row [[threadgroup_position_in_grid]],\n"
    "    ushort iwg [[thread_index_in_simdgroup]],\n"
    "    ushort sg [[simdgroup_index_in_threadgroup]]) {\n"
    "  device const float4 *o4 = (device const float4 *)tmp + row * (D / 4) * NWG;\n"
    "  device const float *ss = tmp + NROWS * D * NWG + row * 2 * NWG;\n"
    "  float S = ss[2 * iwg];\n"
    "  const float M = ss[2 * iwg + 1], m = simd_max(M), ms = exp(M - m);\n"
    "  S = simd_sum(S * ms);\n"
    "  S = S == 0.0f ? 0.0f : 1.0f / S;\n"
    "  device float4 *d4 = (device float4 *)dst + row * (D / 4);\n"
    "  for (short i = sg; i < D / 4; i += NWG) {\n"
    "    const float4 r = simd_sum(o4[i * NWG + iwg] * ms);\n"
    "    if (iwg == 0) d4[i] = r * S;\n"
    "  }\n"
    "}\n"
    /* kernels/misc.metal:3-58 (kernel_argmax_f32): each thread's first
     * largest value, the SIMD group's largest index among the lanes that
     * hold the maximum by an integer simd_max (-1 from the others), then
     * the same across SIMD groups through threadgroup memory. */
    "kernel void probe_argmax(device const float *x [[buffer(0)]],\n"
    "    device float *dst [[buffer(1)]],\n"
    "    threadgroup char *shmem [[threadgroup(0)]],\n"
    "    uint row [[threadgroup_position_in_grid]],\n"
    "    uint tid [[thread_position_in_threadgroup]],\n"
    "    uint sg [[simdgroup_index_in_threadgroup]],\n"
    "    uint lane [[thread_index_in_simdgroup]],\n"
    "    uint ntg [[threads_per_threadgroup]]) {\n"
    "  device const float *x_row = x + row * ARGMAX_N;\n"
    "  float lmax = -INFINITY;\n"
    "  int larg = -1;\n"
    "  for (uint i = tid; i < ARGMAX_N; i += ntg)\n"
    "    if (x_row[i] > lmax) { lmax = x_row[i]; larg = int(i); }\n"
    "  float max_val = simd_max(lmax);\n"
    "  int arg_val = simd_max(select(-1, larg, lmax == max_val));\n"
    "  threadgroup float *smax = (threadgroup float *)shmem;\n"
    "  threadgroup int *sarg = (threadgroup int *)shmem + 32;\n"
    "  if (sg == 0) { smax[lane] = -INFINITY; sarg[lane] = -1; }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  if (lane == 0) { smax[sg] = max_val; sarg[sg] = arg_val; }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  max_val = smax[lane];\n"
    "  arg_val = sarg[lane];\n"
    "  const float m = simd_max(max_val);\n"
    "  const int a = simd_max(select(-1, arg_val, max_val == m));\n"
    "  if (tid == 0) dst[row] = float(a);\n"
    "}\n"
    /* kernels/misc.metal:292-343 (kernel_count_equal): each thread's
     * count of equal pairs, an integer simd_sum per SIMD group, the
     * groups' totals summed by SIMD group 0 in float; a total a row here,
     * where ggml adds the rows' into one integer atomically. */
    "kernel void probe_count_equal(device const int *a [[buffer(0)]],\n"
    "    device const int *b [[buffer(1)]],\n"
    "    device float *dst [[buffer(2)]],\n"
    "    threadgroup int *shmem [[threadgroup(0)]],\n"
    "    uint row [[threadgroup_position_in_grid]],\n"
    "    ushort tid [[thread_position_in_threadgroup]],\n"
    "    ushort sg [[simdgroup_index_in_threadgroup]],\n"
    "    ushort lane [[thread_index_in_simdgroup]],\n"
    "    ushort ntg [[threads_per_threadgroup]]) {\n"
    "  int sum = 0;\n"
    "  for (uint i = tid; i < COUNT_N; i += ntg)\n"
    "    sum += a[row * COUNT_N + i] == b[row * COUNT_N + i];\n"
    "  sum = simd_sum(sum);\n"
    "  if (lane == 0) shmem[sg] = sum;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  if (sg == 0) {\n"
    "    float v = tid < ntg / 32 ? float(shmem[tid]) : 0.0f;\n"
    "    const float total = simd_sum(v);\n"
    "    if (tid == 0) dst[row] = total;\n"
    "  }\n"
    "}\n";

/*
 * ggml's kernel_mul_mm_bf16_f32 (kernels/mul_mm.metal:742) stages A and
 * B both as bfloat (its S0 and S1 types) and multiplies
 * simdgroup_bfloat8x8 by simdgroup_bfloat8x8 into float; flash
 * attention's bfloat types are the same (kernels/fa.metal:906-912).  Here
 * C = A x B, 32 x 32, 128 threads, each SIMD group a 16 x 16 quarter, as
 * probe_mul_mm_half; compiled at MSL 3.1, asked for by name.
 */
const char probe_kernels_ggml_bf16[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void probe_mul_mm_bf16(device const float *a [[buffer(0)]],\n"
    "    device const float *b [[buffer(1)]], device float *c [[buffer(2)]],\n"
    "    threadgroup char *shm [[threadgroup(0)]],\n"
    "    ushort tid [[thread_index_in_threadgroup]],\n"
    "    ushort sg [[simdgroup_index_in_threadgroup]]) {\n"
    "  threadgroup bfloat *sa = (threadgroup bfloat *)shm;\n"
    "  threadgroup bfloat *sb = sa + 1024;\n"
    "  for (ushort i = tid; i < 1024; i += 128) {\n"
    "    ushort r = i / 32, k = i % 32;\n"
    "    sa[((r / 8) * 4 + k / 8) * 64 + (r % 8) * 8 + k % 8] = bfloat(a[i]);\n"
    "    sb[((r / 8) * 4 + k / 8) * 64 + (r % 8) * 8 + k % 8] = bfloat(b[i]);\n"
    "  }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  simdgroup_bfloat8x8 ma[2], mb[2];\n"
    "  simdgroup_float8x8 mc[4];\n"
    "  for (short i = 0; i < 4; i++)\n"
    "    mc[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n"
    "  ushort br = (sg / 2) * 2, bc = (sg % 2) * 2;\n"
    "  for (ushort bk = 0; bk < 4; bk++) {\n"
    "    for (short i = 0; i < 2; i++) {\n"
    "      simdgroup_load(ma[i], sa + ((br + i) * 4 + bk) * 64, 8);\n"
    "      simdgroup_load(mb[i], sb + (bk * 4 + bc + i) * 64, 8);\n"
    "    }\n"
    "    for (short i = 0; i < 4; i++)\n"
    "      simdgroup_multiply_accumulate(mc[i], ma[i / 2], mb[i % 2], mc[i]);\n"
    "  }\n"
    "  for (short i = 0; i < 4; i++)\n"
    "    simdgroup_store(mc[i], c + (br + i / 2) * 8 * 32 + (bc + i % 2) * 8, 32);\n"
    "}\n";

/*
 * What llama.cpp's backend sampling runs on the GPU when a request asks
 * for it (llama-server's "backend_sampling": true; docs/ggml-paths.md):
 * ARGSORT (top-p sorts the logits, descending) and TOP_K's bitonic path
 * as ggml's block sort in threadgroup memory, padded to a power of two,
 * then merge passes of sorted runs; TOP_K on long rows as ggml's radix
 * select over threadgroup atomic counters.  Its own library: a client
 * can reach these kernels whatever the model.
 */
const char probe_kernels_sort[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "constant int SORT_N = 3000, SORT_ROWS = 2;\n"
    "constant uint TOPK_N = 4096, TOPK_K = 100;\n"
    /* kernels/argsort.metal:14-73 (kernel_argsort_f32_i32, descending):
     * each threadgroup sorts the indices of its block of the row by a
     * bitonic network in threadgroup memory; an index past the row is
     * padding and sorts last. */
    "kernel void probe_argsort(device const float *x [[buffer(0)]],\n"
    "    device int *dst [[buffer(1)]],\n"
    "    threadgroup int *shm [[threadgroup(0)]],\n"
    "    uint tg [[threadgroup_position_in_grid]],\n"
    "    ushort col [[thread_position_in_threadgroup]],\n"
    "    ushort ntg [[threads_per_threadgroup]]) {\n"
    "  const int ib = tg / SORT_ROWS, row = tg % SORT_ROWS;\n"
    "  const int i00 = ib * ntg;\n"
    "  device const float *src = x + row * SORT_N;\n"
    "  shm[col] = i00 + col;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  for (int k = 2; k <= ntg; k *= 2)\n"
    "    for (int j = k / 2; j > 0; j /= 2) {\n"
    "      const int ixj = col ^ j;\n"
    "      if (ixj > col) {\n"
    "        const int a = shm[col], b = shm[ixj];\n"
    "        const bool swap = (col & k) == 0 ?\n"
    "            a >= SORT_N || (b < SORT_N && src[a] < src[b]) :\n"
    "            b >= SORT_N || (a < SORT_N && src[a] > src[b]);\n"
    "        if (swap) { shm[col] = b; shm[ixj] = a; }\n"
    "      }\n"
    "      threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    }\n"
    "  if (i00 + col < SORT_N) dst[row * SORT_N + i00 + col] = shm[col];\n"
    "}\n"
    /* kernels/argsort.metal:87-229 (kernel_argsort_merge_f32_i32,
     * descending): two sorted runs of len merged, each thread finding
     * where its chunk of the output starts by a binary search of the
     * partition, then merging its chunk. */
    "kernel void probe_argsort_merge(device const float *x [[buffer(0)]],\n"
    "    device const int *tmp [[buffer(1)]],\n"
    "    device int *dst [[buffer(2)]],\n"
    "    constant int &len [[buffer(3)]],\n"
    "    uint tg [[threadgroup_position_in_grid]],\n"
    "    ushort tid [[thread_position_in_threadgroup]],\n"
    "    ushort ntg [[threads_per_threadgroup]]) {\n"
    "  const int im = tg / SORT_ROWS, row = tg % SORT_ROWS;\n"
    "  const int start = im * 2 * len;\n"
    "  const int len0 = min(len, max(0, SORT_N - start));\n"
    "  const int len1 = min(len, max(0, SORT_N - (start + len)));\n"
    "  const int total = len0 + len1;\n"
    "  device const int *t0 = tmp + row * SORT_N + start;\n"
    "  device const int *t1 = t0 + len;\n"
    "  device int *out = dst + row * SORT_N + start;\n"
    "  device const float *src = x + row * SORT_N;\n"
    "  const int chunk = (total + ntg - 1) / ntg;\n"
    "  const int k0 = tid * chunk, k1 = min(k0 + chunk, total);\n"
    "  if (k0 >= total) return;\n"
    "  int lo = k0 > len1 ? k0 - len1 : 0, hi = min(k0, len0);\n"
    "  while (lo < hi) {\n"
    "    const int mid = (lo + hi) >> 1;\n"
    "    if (src[t0[mid]] >= src[t1[k0 - mid - 1]]) lo = mid + 1;\n"
    "    else hi = mid;\n"
    "  }\n"
    "  int i = lo, j = k0 - lo;\n"
    "  for (int k = k0; k < k1; k++)\n"
    "    out[k] = i < len0 && (j >= len1 || src[t0[i]] >= src[t1[j]]) ?\n"
    "        t0[i++] : t1[j++];\n"
    "}\n"
    /* kernels/argsort.metal:234-337 (kernel_top_k_f32_i32): the k-th
     * largest key found 8 bits at a time by a histogram of threadgroup
     * atomic_uint counters, then every index above it, then ties, each
     * placed by an atomic counter.  ggml's four threadgroup blocks (the
     * histogram, the bucket, the count above, the output's count) are
     * here one, at the same 16-byte offsets. */
    "static inline uint probe_f2ui(float v) {\n"
    "  const uint y = as_type<uint>(v);\n"
    "  return (y & 0x80000000u) != 0u ? ~y : (y | 0x80000000u);\n"
    "}\n"
    "kernel void probe_top_k(device const float *x [[buffer(0)]],\n"
    "    device int *dst [[buffer(1)]],\n"
    "    threadgroup uint *shm [[threadgroup(0)]],\n"
    "    uint row [[threadgroup_position_in_grid]],\n"
    "    ushort tid [[thread_position_in_threadgroup]],\n"
    "    ushort ntg [[threads_per_threadgroup]]) {\n"
    "  threadgroup atomic_uint *histo = (threadgroup atomic_uint *)shm;\n"
    "  threadgroup uint *bucket = shm + 256;\n"
    "  threadgroup uint *above = shm + 260;\n"
    "  threadgroup atomic_uint *count = (threadgroup atomic_uint *)(shm + 264);\n"
    "  device const float *src = x + row * TOPK_N;\n"
    "  device int *out = dst + row * TOPK_K;\n"
    "  uint prefix = 0, desired = TOPK_K;\n"
    "  for (int shift = 24; shift >= 0; shift -= 8) {\n"
    "    for (uint i = tid; i < 256; i += ntg)\n"
    "      atomic_store_explicit(&histo[i], 0u, memory_order_relaxed);\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    const uint hi_mask = shift + 8 >= 32 ? 0u :\n"
    "        0xFFFFFFFFu << uint(shift + 8);\n"
    "    for (uint i = tid; i < TOPK_N; i += ntg) {\n"
    "      const uint key = probe_f2ui(src[i]);\n"
    "      if ((key & hi_mask) == (prefix & hi_mask))\n"
    "        atomic_fetch_add_explicit(&histo[(key >> uint(shift)) & 0xFFu],\n"
    "            1u, memory_order_relaxed);\n"
    "    }\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    if (tid == 0) {\n"
    "      uint acc = 0, b = 0;\n"
    "      for (int bb = 255; bb >= 0; --bb) {\n"
    "        const uint c = atomic_load_explicit(&histo[bb],\n"
    "            memory_order_relaxed);\n"
    "        if (acc + c >= desired) { b = uint(bb); break; }\n"
    "        acc += c;\n"
    "      }\n"
    "      *bucket = b;\n"
    "      *above = acc;\n"
    "    }\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    prefix |= *bucket << uint(shift);\n"
    "    desired -= *above;\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  }\n"
    "  if (tid == 0) atomic_store_explicit(count, 0u, memory_order_relaxed);\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  for (uint i = tid; i < TOPK_N; i += ntg)\n"
    "    if (probe_f2ui(src[i]) > prefix)\n"
    "      out[atomic_fetch_add_explicit(count, 1u, memory_order_relaxed)] =\n"
    "          int(i);\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  for (uint i = tid; i < TOPK_N; i += ntg)\n"
    "    if (probe_f2ui(src[i]) == prefix) {\n"
    "      const uint pos = atomic_fetch_add_explicit(count, 1u,\n"
    "          memory_order_relaxed);\n"
    "      if (pos < TOPK_K) out[pos] = int(i);\n"
    "    }\n"
    "}\n";
