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
 */
#include "config.h"

#include <immintrin.h>

#include "lk-prefilter-private.h"

#define MR 4

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
          const guint32 *a[MR];
          __m256i acc0[MR], acc1[MR];

          for (gsize r = 0; r < MR; r++)
            {
              a[r] = lk_prefilter_row (pf, MIN (i0 + r, t->row_end - 1));
              acc0[r] = _mm256_setzero_si256 ();
              acc1[r] = _mm256_setzero_si256 ();
            }
          for (gsize p = 0; p < pairs; p++)
            {
              __m256i y0 = _mm256_load_si256 ((const __m256i *) (b + p * lanes));
              __m256i y1 = _mm256_load_si256 ((const __m256i *) (b + p * lanes + 8));
              for (gsize r = 0; r < MR; r++)
                {
                  __m256i x = _mm256_set1_epi32 ((int) a[r][p * lanes]);
                  acc0[r] = _mm256_add_epi32 (acc0[r], _mm256_madd_epi16 (x, y0));
                  acc1[r] = _mm256_add_epi32 (acc1[r], _mm256_madd_epi16 (x, y1));
                }
            }
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
