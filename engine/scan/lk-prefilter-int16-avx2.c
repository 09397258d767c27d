/* lk-prefilter-int16-avx2.c — the int16 pass with vpmaddwd (AVX2)
 *
 * Compiled alone with -mavx2 into its own static library; lk-prefilter.c
 * hands it out only when lk_cpu_features() has seen AVX2.
 *
 * vpmaddwd multiplies sixteen pairs of int16 and adds each pair into one of
 * eight int32 lanes: sixteen multiply-adds per instruction, plus one vpaddd
 * to accumulate, where vfmadd231ps does eight. Integer sums are exact, so
 * the order is free and the pass returns the very integers of the portable
 * one. Register-blocked like the float32 AVX2 tile: MR = 6 rows × one panel
 * of sixteen columns (two ymm), twelve accumulators, two panel vectors, one
 * broadcast and one product: the sixteen ymm registers. The panel (dim 512:
 * 16 KiB) stays in L1 while the tile's rows stream past it. The epilogue is
 * one compare per accumulator against the integer bar.
 *
 * The rows are named variables, not arrays: GCC 12 keeps an array of
 * accumulators in registers only by copying each of them once per k-step
 * (a vmovdqa beside every vpmaddwd). With six named rows the loop is two
 * loads, six broadcasts, twelve vpmaddwd and twelve vpaddd, and the
 * AVX2-only route (avx2 kernel + this pass) runs about 1.5× OpenBLAS SGEMM
 * on AVX2 in CPU time (`bench-scan --avx2-only`; docs/benchmarks.md). The
 * pass is ~72% of that scan's CPU time, the float32 re-check of its
 * survivors ~7%.
 *
 * Measured and not kept: int8 on AVX2 with the int8 pass's rows and
 * epilogue. vpmaddubsw's pair sums fit int16 exactly only with one operand
 * non-negative (|q_j| and q_i · sgn q_j through vpsignb: at most
 * 2 · 127 · 127 = 32,258), and widening to int32 takes a vpmaddwd by ones:
 * per 32 multiply-adds vpsignb, vpmaddubsw, vpmaddwd, vpaddd, where this
 * pass spends two vpmaddwd and two vpaddd. It was exact but about 10 %
 * slower on the same route, the pass itself the difference (git history
 * keeps it).
 */
#include "config.h"

#include <immintrin.h>

#include "lk-prefilter-private.h"

#define MR 6

static inline gsize
report (const LkTile *t, gsize i, gsize base, __m256i acc, __m256i bar, double scale2, LkHit *out,
        gsize n)
{
  /* Survivors: !(bar > acc), i.e. acc >= bar. */
  guint m
      = ~(guint) _mm256_movemask_ps (_mm256_castsi256_ps (_mm256_cmpgt_epi32 (bar, acc))) & 0xffu;
  gint32 q[8];

  if (m == 0)
    return n;
  _mm256_storeu_si256 ((__m256i *) q, acc);
  guint64 photo_a = t->photo[i];
  gboolean gallery_a = t->gallery[i] != 0;
  while (m != 0)
    {
      guint lane = (guint) __builtin_ctz (m);
      gsize j = base + lane;
      m &= m - 1;
      if (j <= i || j < t->col_begin || j >= t->col_end)
        continue;
      if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
        continue;
      lk_prefilter_prefetch_column (t, j);
      out[n++] = (LkHit){ (guint32) i, (guint32) j, (float) (scale2 * q[lane]) };
    }
  return n;
}

/* Row r's accumulators (named, not an array: an array of MR = 6 × 2 ymm
 * kept GCC 12 from holding them in registers at MR = 4 already, where it
 * copied each accumulator once per k-step), its k-step and its epilogue. */
#define INIT(r)                                                                                    \
  const guint32 *a##r = lk_prefilter_row (pf, MIN (i0 + r, t->row_end - 1));                       \
  __m256i c0_##r = _mm256_setzero_si256 ();                                                        \
  __m256i c1_##r = _mm256_setzero_si256 ()
#define STEP(r)                                                                                    \
  do                                                                                               \
    {                                                                                              \
      __m256i x = _mm256_set1_epi32 ((int) a##r[p * lanes]);                                       \
      c0_##r = _mm256_add_epi32 (c0_##r, _mm256_madd_epi16 (x, y0));                               \
      c1_##r = _mm256_add_epi32 (c1_##r, _mm256_madd_epi16 (x, y1));                               \
    }                                                                                              \
  while (0)
#define OUT(r)                                                                                     \
  do                                                                                               \
    {                                                                                              \
      acc0[r] = c0_##r;                                                                            \
      acc1[r] = c1_##r;                                                                            \
    }                                                                                              \
  while (0)

static gsize
pass_int16_avx2 (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize pairs = pf->pairs, lanes = LK_PREFILTER_LANES;
  const __m256i bar = _mm256_set1_epi32 (lk_prefilter_threshold_int16 (pf, t->tau));
  const double scale2 = pf->scale * pf->scale;
  gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n = 0;

  for (gsize q = t->col_begin / lanes; q < q_end; q++)
    {
      const guint32 *b = pf->panels + q * pairs * lanes;
      gsize last = MIN (t->col_end, (q + 1) * lanes) - 1;

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += MR)
        {
          __m256i acc0[MR], acc1[MR];
          INIT (0);
          INIT (1);
          INIT (2);
          INIT (3);
          INIT (4);
          INIT (5);
          for (gsize p = 0; p < pairs; p++)
            {
              __m256i y0 = _mm256_load_si256 ((const __m256i *) (b + p * lanes));
              __m256i y1 = _mm256_load_si256 ((const __m256i *) (b + p * lanes + 8));
              STEP (0);
              STEP (1);
              STEP (2);
              STEP (3);
              STEP (4);
              STEP (5);
            }
          OUT (0);
          OUT (1);
          OUT (2);
          OUT (3);
          OUT (4);
          OUT (5);
          for (gsize r = 0; r < MR && i0 + r < t->row_end; r++)
            {
              n = report (t, i0 + r, q * lanes, acc0[r], bar, scale2, out, n);
              n = report (t, i0 + r, q * lanes + 8, acc1[r], bar, scale2, out, n);
            }
        }
    }
  return n;
}

const LkPrefilterPass lk_prefilter_pass_int16_avx2 = {
  LK_PREFILTER_INT16, "int16-avx2", LK_CPU_AVX2, pass_int16_avx2, LK_PREFILTER_FORMAT_INT16,
};
