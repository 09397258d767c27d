/* lk-kernel-avx2.c — eight-wide fused multiply-add (x86-64 with AVX2 + FMA)
 *
 * Compiled alone with -mavx2 -mfma; lk-kernels.c hands it out only after
 * lk_cpu_features() has seen both, so a binary built here still starts on a
 * CPU without them.
 *
 * Two kernels in one: a per-pair dot (two accumulators of eight lanes, the
 * seed's kernel, kept for callers that want one cosine and for the timing
 * gates) and a register-blocked tile (below), which is what the scan runs.
 * The seed measured the per-pair dot, tiled, at 0.86 s (195 GFLOP/s) on twenty
 * cores for an 18,143-face library, against 2.81 s for the portable loop; it
 * is load-bound, two loads per FMA. On the 18,143-face make-sample library,
 * one thread on this project's AMD EPYC (Zen 3, shared and loaded), the
 * register-blocked tile took the scan from 5.97 CPU-seconds (28 GFLOP per
 * CPU-second) to 2.61 (64 GFLOP per CPU-second; OpenBLAS SGEMM + threshold,
 * bench-scan half an hour earlier under the same load: 2.47) with the same
 * 765,265 pairs. tests/bench-scan.c measures both in one run.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-kernel-tile.h"

static float
avx2_dot (const float *a, const float *b, gsize dim)
{
  __m256 acc0 = _mm256_setzero_ps ();
  __m256 acc1 = _mm256_setzero_ps ();
  gsize k = 0;

  for (; k + 16 <= dim; k += 16)
    {
      acc0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k), _mm256_loadu_ps (b + k), acc0);
      acc1 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k + 8), _mm256_loadu_ps (b + k + 8), acc1);
    }
  if (k + 8 <= dim)
    {
      acc0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k), _mm256_loadu_ps (b + k), acc0);
      k += 8;
    }

  __m256 sum = _mm256_add_ps (acc0, acc1);
  __m128 half = _mm_add_ps (_mm256_castps256_ps128 (sum), _mm256_extractf128_ps (sum, 1));
  half = _mm_add_ps (half, _mm_movehl_ps (half, half));
  half = _mm_add_ss (half, _mm_movehdup_ps (half));
  float total = _mm_cvtss_f32 (half);
  for (; k < dim; k++)
    total += a[k] * b[k];
  return total;
}

/* The register-blocked tile. A per-pair dot loads two vectors for every FMA
 * and is bound by loads at one FMA a cycle; a block of MR rows × NR columns
 * loads MR + NR vectors for MR·NR FMAs. 2 × 6 — twelve accumulators, two
 * rows, one column in flight: 15 of the 16 ymm registers — issues 12 FMAs per
 * 8 loads, and the loop order (see avx2_tile) keeps the six columns in L1.
 * Each output is one FMA chain over k in steps of 8 (a masked step for the
 * tail), reduced ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), so a pair's cosine
 * does not depend on where in a block it was computed: the tiling and the
 * thread count cannot change the answer. It does differ from avx2_dot's
 * two-chain order in the last bits, which lk-scan's near-boundary count
 * covers.
 *
 * Measured, one thread, 6,000-face make-sample library (CPU seconds, loaded
 * machine, ±0.03): per-pair dot 0.60; 3 × 4 rows-outside 0.35 (GCC folded
 * the column loads into the FMAs: 13 loads per 12 FMAs); 2 × 6 with the
 * loads pinned, rows outside 0.35 (six column vectors per 12 FMAs from L2,
 * its whole bandwidth); columns outside 0.30. Row blocks of 64 or 128 and
 * column tiles of 64 or 128 measured the same.
 *
 * A single leftover row (the untiled walk) gets a 1 × 6 block rather than
 * two copies of itself. Edges are handled by pointing the missing rows or
 * columns at real ones and not reporting them; the diagonal by not reporting
 * j <= i. */
#define MR 2
#define NR 6

static inline __m256i
tail_mask (gsize rem)
{
  static const gint32 lanes[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
  return _mm256_loadu_si256 ((const __m256i *) (lanes + 8 - rem));
}

/* Four accumulators' sums, one per lane, each in the fixed order above. */
static inline __m128
reduce4 (__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
  __m256 t = _mm256_hadd_ps (_mm256_hadd_ps (a0, a1), _mm256_hadd_ps (a2, a3));
  return _mm_add_ps (_mm256_castps256_ps128 (t), _mm256_extractf128_ps (t, 1));
}

#define ZERO_ROW(R)                                                                              \
  __m256 acc##R##0 = _mm256_setzero_ps (), acc##R##1 = _mm256_setzero_ps (),                     \
         acc##R##2 = _mm256_setzero_ps (), acc##R##3 = _mm256_setzero_ps (),                     \
         acc##R##4 = _mm256_setzero_ps (), acc##R##5 = _mm256_setzero_ps ()

/* Keeps a loaded vector in a register. Left alone, GCC folds the load into
 * each FMA that uses it as a memory operand, so a column used by two rows is
 * loaded twice and the block is load-bound again. */
#define PIN(v) __asm__ ("" : "+x"(v))

#define LOAD(p) _mm256_loadu_ps (p)
#define MASKED(p) _mm256_maskload_ps (p, mask)

/* Column C against both rows: one load, two FMAs. */
#define COL_2(L, C)                                                                              \
  do                                                                                             \
    {                                                                                            \
      __m256 y = L (c[C] + k);                                                                   \
      PIN (y);                                                                                   \
      acc0##C = _mm256_fmadd_ps (x0, y, acc0##C);                                                \
      acc1##C = _mm256_fmadd_ps (x1, y, acc1##C);                                                \
    }                                                                                            \
  while (0)

#define STEP_2x6(L)                                                                              \
  do                                                                                             \
    {                                                                                            \
      __m256 x0 = L (r[0] + k), x1 = L (r[1] + k);                                               \
      COL_2 (L, 0);                                                                              \
      COL_2 (L, 1);                                                                              \
      COL_2 (L, 2);                                                                              \
      COL_2 (L, 3);                                                                              \
      COL_2 (L, 4);                                                                              \
      COL_2 (L, 5);                                                                              \
    }                                                                                            \
  while (0)

static inline void
block_2x6 (const float *const r[MR], const float *const c[NR], gsize dim, __m128 out[2 * MR])
{
  ZERO_ROW (0);
  ZERO_ROW (1);
  gsize k = 0;

  for (; k + 8 <= dim; k += 8)
    STEP_2x6 (LOAD);
  if (k < dim)
    {
      __m256i mask = tail_mask (dim - k);
      STEP_2x6 (MASKED);
    }
  __m256 zero = _mm256_setzero_ps ();
  out[0] = reduce4 (acc00, acc01, acc02, acc03);
  out[1] = reduce4 (acc04, acc05, zero, zero);
  out[2] = reduce4 (acc10, acc11, acc12, acc13);
  out[3] = reduce4 (acc14, acc15, zero, zero);
}

#define COL_1(L, C)                                                                              \
  acc0##C = _mm256_fmadd_ps (x0, L (c[C] + k), acc0##C)

#define STEP_1x6(L)                                                                              \
  do                                                                                             \
    {                                                                                            \
      __m256 x0 = L (r0 + k);                                                                    \
      COL_1 (L, 0);                                                                              \
      COL_1 (L, 1);                                                                              \
      COL_1 (L, 2);                                                                              \
      COL_1 (L, 3);                                                                              \
      COL_1 (L, 4);                                                                              \
      COL_1 (L, 5);                                                                              \
    }                                                                                            \
  while (0)

static inline void
block_1x6 (const float *r0, const float *const c[NR], gsize dim, __m128 out[2])
{
  ZERO_ROW (0);
  gsize k = 0;

  for (; k + 8 <= dim; k += 8)
    STEP_1x6 (LOAD);
  if (k < dim)
    {
      __m256i mask = tail_mask (dim - k);
      STEP_1x6 (MASKED);
    }
  __m256 zero = _mm256_setzero_ps ();
  out[0] = reduce4 (acc00, acc01, acc02, acc03);
  out[1] = reduce4 (acc04, acc05, zero, zero);
}

/* Reports row i's outputs among columns j … j + nr - 1. The common case — no
 * output reaches tau — costs two compares and one mask test. */
static inline gsize
emit (const LkTile *t, gsize i, gsize j, gsize nr, const __m128 cos[2], __m128 tau, LkHit *hits)
{
  unsigned mask = (unsigned) (_mm_movemask_ps (_mm_cmpge_ps (cos[0], tau))
                              | _mm_movemask_ps (_mm_cmpge_ps (cos[1], tau)) << 4)
                  & ((1u << nr) - 1);
  if (mask == 0)
    return 0;

  float v[8];
  gsize n = 0;
  _mm_storeu_ps (v, cos[0]);
  _mm_storeu_ps (v + 4, cos[1]);
  for (; mask != 0; mask &= mask - 1)
    {
      gsize q = (gsize) __builtin_ctz (mask);
      gsize col = j + q;
      if (col <= i || t->photo[col] == t->photo[i] || !(t->gallery[i] || t->gallery[col]))
        continue;
      hits[n++] = (LkHit) { (guint32) i, (guint32) col, v[q] };
    }
  return n;
}

static gsize
avx2_tile (const LkTile *t, LkHit *hits)
{
  const float *e = t->embeddings;
  gsize dim = t->dim;
  __m128 tau = _mm_set1_ps (t->tau);
  gsize n = 0;

  /* Columns outside, rows inside: the NR columns (12 KiB at 512-d) stay in
   * L1 while the tile's rows stream past them from L2, two vectors per twelve
   * FMAs. The other way round streams six column vectors per twelve FMAs from
   * L2, its whole bandwidth. Each row's hits still come in ascending j. */
  for (gsize j = t->col_begin; j < t->col_end; j += NR)
    {
      gsize nr = MIN (NR, t->col_end - j);
      const float *c[NR];
      for (gsize q = 0; q < NR; q++)
        c[q] = e + (j + MIN (q, nr - 1)) * dim;

      /* Rows from j + nr - 1 on have no column above the diagonal here. */
      gsize i_end = MIN (t->row_end, j + nr - 1);
      for (gsize i = t->row_begin; i < i_end; i += MR)
        {
          gsize mr = MIN (MR, i_end - i);
          const float *r[MR];
          for (gsize q = 0; q < MR; q++)
            r[q] = e + (i + MIN (q, mr - 1)) * dim;

          __m128 out[2 * MR];
          if (mr == 1)
            block_1x6 (r[0], c, dim, out);
          else
            block_2x6 (r, c, dim, out);
          for (gsize q = 0; q < mr; q++)
            n += emit (t, i + q, j, nr, out + 2 * q, tau, hits + n);
        }
    }
  return n;
}

const LkKernel lk_kernel_avx2 = {
  LK_KERNEL_AVX2, "avx2", LK_CPU_AVX2 | LK_CPU_FMA, avx2_dot, avx2_tile,
};
