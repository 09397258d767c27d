/* lk-prefilter-int7-avx2.c — the int7 pass with vpmaddubsw (AVX2)
 *
 * Compiled alone with -mavx2 -mfma into its own static library;
 * lk-prefilter.c hands it out only when lk_cpu_features() has seen AVX2 and
 * FMA, and the measured choice (lk-tune.h) runs it only where it wins. The
 * rows, the bound and the epilogue are the int8 pass's with a smaller M and
 * bias (lk-prefilter.c, "The int7 pass"); the integers are exact, so this
 * pass and the portable emulation reach the same Q for every pair.
 *
 * Why: the int16 pass spends one vpmaddwd (a multiply op) and one vpaddd
 * per 16 multiply-adds. vpmaddubsw does 32 (unsigned bytes × signed bytes,
 * pairs summed into int16 lanes), and with |q| <= M small enough its int16
 * lanes can take LK_PREFILTER_INT7_STEPS results (vpaddw) before one
 * vpmaddwd by ones widens them to int32 (vpaddd): per 64 multiply-adds
 * 2 + 2/S multiply ops, against the int16 pass's 4.
 *
 * Shape: MR = 5 rows × one panel of sixteen columns (two ymm). Per dword
 * (four elements): two aligned loads of the panel's signed bytes, five
 * broadcasts of the rows' biased dwords, ten vpmaddubsw, ten vpaddw into ten
 * int16 partial sums; every S dwords, ten vpmaddwd by ones and ten vpaddd
 * into int32 accumulators. Registers: ten partial sums, two panel vectors,
 * one broadcast, one product and the ones vector — fifteen of sixteen. The
 * int32 accumulators live in memory (`acc`, touched once per S dwords): in
 * registers they would need ten more.
 *
 * The pass alone runs 1.6× as fast as the int16 pass (the instruction count
 * says 1.78×); MR = 6 (twelve partial sums, no spill either) was no better,
 * so five. In the whole scan the route reads about 2.2× OpenBLAS SGEMM on
 * AVX2 in CPU time where the int16 route reads about 1.5× (`bench-scan
 * --avx2-only`; docs/benchmarks.md; lk-prefilter.c, "The int7 pass", has the
 * other choices of M and S). Measured only on AVX-512 CPUs running this AVX2
 * code: on an AVX2-only CPU the throughput of vpmaddubsw and vpmaddwd
 * against the FMA's decides the ratio.
 *
 * The operands are the int8 ymm pass's (lk-prefilter-int8-ymm.h): the rows'
 * panel bytes u = q + B are vpmaddubsw's unsigned operand as they stand, the
 * panel's bytes less B (vpsubb, once per panel and tile, into `signed_cols`)
 * its signed one; each int32 accumulator starts at its column's correction
 * −B Σ q_j and ends at Q. The epilogue is lk_ymm_report, the int8 passes'.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-prefilter-int8-ymm.h"

#define MR 5
#define S  LK_PREFILTER_INT7_STEPS

/* Row r's row pointer and int16 partial sums (named, not an array, so that
 * GCC keeps them in registers: lk-prefilter-int16-avx2.c), its k-step, and
 * the widening into its int32 accumulators. */
#define INIT(r)                                                                                    \
  const guint32 *a##r = lk_prefilter_row (pf, MIN (i0 + r, t->row_end - 1));                       \
  __m256i d0_##r, d1_##r
#define ZERO(r)                                                                                    \
  do                                                                                               \
    {                                                                                              \
      d0_##r = _mm256_setzero_si256 ();                                                            \
      d1_##r = _mm256_setzero_si256 ();                                                            \
    }                                                                                              \
  while (0)
/* An empty asm that claims to change v: GCC's reassociation otherwise turns
 * a chunk's S unrolled vpaddw per partial sum into S products computed
 * first and summed after — 5 × 2 × S live ymm, spilled to the stack. */
#define LK_KEEP(v) __asm__("" : "+x"(v))
#define LOAD()                                                                                     \
  __m256i y0 = _mm256_load_si256 ((const __m256i *) (signed_cols + p * lanes));                    \
  __m256i y1 = _mm256_load_si256 ((const __m256i *) (signed_cols + p * lanes + 8))
#define FIRST(r)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      __m256i x = _mm256_set1_epi32 ((int) a##r[p * lanes]);                                       \
      d0_##r = _mm256_maddubs_epi16 (x, y0);                                                       \
      d1_##r = _mm256_maddubs_epi16 (x, y1);                                                       \
    }                                                                                              \
  while (0)
#define STEP(r)                                                                                    \
  do                                                                                               \
    {                                                                                              \
      __m256i x = _mm256_set1_epi32 ((int) a##r[p * lanes]);                                       \
      d0_##r = _mm256_add_epi16 (d0_##r, _mm256_maddubs_epi16 (x, y0));                            \
      d1_##r = _mm256_add_epi16 (d1_##r, _mm256_maddubs_epi16 (x, y1));                            \
      LK_KEEP (d0_##r);                                                                            \
      LK_KEEP (d1_##r);                                                                            \
    }                                                                                              \
  while (0)
#define WIDEN(r)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      acc[2 * r] = _mm256_add_epi32 (acc[2 * r], _mm256_madd_epi16 (d0_##r, ones));                \
      acc[2 * r + 1] = _mm256_add_epi32 (acc[2 * r + 1], _mm256_madd_epi16 (d1_##r, ones));        \
    }                                                                                              \
  while (0)

static gsize
pass_int7_avx2 (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize words = pf->pairs, lanes = LK_PREFILTER_LANES;
  const __m256i bias = _mm256_set1_epi8 ((char) LK_PREFILTER_INT7_BIAS);
  const __m256i ones = _mm256_set1_epi16 (1);
  gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n = 0;
  guint32 *signed_cols = g_aligned_alloc (words * lanes, sizeof (guint32), 64);
  __m256i *acc = g_aligned_alloc (2 * MR, sizeof (__m256i), 64);

  for (gsize q = t->col_begin / lanes; q < q_end; q++)
    {
      const guint32 *b = pf->panels + q * words * lanes;
      /* The last column of this panel inside the tile: rows at or past it
       * have nothing above the diagonal here. */
      gsize last = MIN (t->col_end, (q + 1) * lanes) - 1;
      if (t->row_begin >= last)
        continue;
      for (gsize p = 0; p < words * lanes; p += 8)
        {
          __m256i u = _mm256_load_si256 ((const __m256i *) (b + p));
          _mm256_store_si256 ((__m256i *) (signed_cols + p), _mm256_sub_epi8 (u, bias));
        }
      __m256i corr0 = lk_ymm_corrections (pf, q * lanes);
      __m256i corr1 = lk_ymm_corrections (pf, q * lanes + 8);

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += MR)
        {
          INIT (0);
          INIT (1);
          INIT (2);
          INIT (3);
          INIT (4);
          for (gsize r = 0; r < MR; r++)
            {
              acc[2 * r] = corr0;
              acc[2 * r + 1] = corr1;
            }
          gsize p0 = 0;
          for (; p0 + S <= words; p0 += S)
            {
              {
                gsize p = p0;
                LOAD ();
                FIRST (0);
                FIRST (1);
                FIRST (2);
                FIRST (3);
                FIRST (4);
              }
#pragma GCC unroll 8
              for (gsize p = p0 + 1; p < p0 + S; p++)
                {
                  LOAD ();
                  STEP (0);
                  STEP (1);
                  STEP (2);
                  STEP (3);
                  STEP (4);
                }
              WIDEN (0);
              WIDEN (1);
              WIDEN (2);
              WIDEN (3);
              WIDEN (4);
            }
          if (p0 < words)
            {
              /* dim not a multiple of 4 S: the last dwords, fewer steps. */
              ZERO (0);
              ZERO (1);
              ZERO (2);
              ZERO (3);
              ZERO (4);
              for (gsize p = p0; p < words; p++)
                {
                  LOAD ();
                  STEP (0);
                  STEP (1);
                  STEP (2);
                  STEP (3);
                  STEP (4);
                }
              WIDEN (0);
              WIDEN (1);
              WIDEN (2);
              WIDEN (3);
              WIDEN (4);
            }
          for (gsize r = 0; r < MR && i0 + r < t->row_end; r++)
            {
              gsize i = i0 + r;
              __m256 bar = _mm256_set1_ps (lk_prefilter_int8_bar (pf, t, i));
              __m256 row_scale = _mm256_set1_ps (pf->scales[i]);
              n = lk_ymm_report (pf, t, i, q * lanes, acc[2 * r], row_scale, bar, out, n);
              n = lk_ymm_report (pf, t, i, q * lanes + 8, acc[2 * r + 1], row_scale, bar, out, n);
            }
        }
    }
  g_aligned_free (acc);
  g_aligned_free (signed_cols);
  return n;
}

const LkPrefilterPass lk_prefilter_pass_int7_avx2 = {
  LK_PREFILTER_INT7,        "int7-avx2", LK_CPU_AVX2 | LK_CPU_FMA, pass_int7_avx2,
  LK_PREFILTER_FORMAT_INT7,
};
