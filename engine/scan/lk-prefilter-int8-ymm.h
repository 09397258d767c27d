/* lk-prefilter-int8-ymm.h — the int8 pass on 256-bit vectors, written once
 *
 * Private to the int8 ymm pass files. The pass of lk-prefilter-int8-
 * avx512vnni.c for CPUs whose vpdpbusd works on ymm only: AVX-VNNI (the VEX
 * encoding, on recent Intel and AMD cores), which have sixteen
 * vector registers and no mask registers. The including file defines
 *   LK_YMM_DPBUSD(acc, u, s)  acc + Σ of the four products of unsigned byte
 *                             u and signed byte s in each dword, modulo 2^32
 *                             (vpdpbusd's lane, not the saturating vpdpbusds)
 *   LK_YMM_PASS               the name of the pass function to define
 * and includes this once. lk-prefilter-int8-avxvnni.c gives it the VEX
 * instruction; two test builds give it the same instruction EVEX-encoded
 * (AVX-512 VNNI + VL, where that runs) and an exact AVX2 emulation (every
 * AVX2 CPU), so the code the AVX-VNNI pass runs — the blocking, the row
 * corrections, the epilogue, the masking — is proven against the portable
 * emulation of lk-prefilter.c on machines without AVX-VNNI
 * (tests/test-prefilter.c).
 *
 * The shape is the int16 AVX2 pass's: MR = 6 rows × one panel of sixteen
 * columns (two ymm), twelve accumulators, two panel vectors and one
 * broadcast: fifteen of the sixteen registers. Per four elements: two
 * aligned panel loads, six dword broadcasts, twelve vpdpbusd — 384
 * multiply-adds per eight loads. The operands are swapped as the
 * avx512vnni pass swaps them (its opening comment says why): the rows'
 * biased panel bytes are the unsigned operand, the panel's bytes XORed back
 * to q once per tile the signed one, and each accumulator starts at its
 * column's correction (−128 Σ q_j) and ends at the integer dot Q; the
 * epilogue is the
 * avx512vnni pass's, operation for operation (vcvtdq2ps, vmulps by the
 * columns' scales, vfmadd by the row's scale plus the columns' guards, a
 * compare with the row's bar: lk-prefilter.c, "The int8 pass", step 3), so
 * every pass reports the same survivors with the same cosines.
 */
#pragma once

#include <immintrin.h>

#include "lk-prefilter-private.h"

#define LK_YMM_MR 6

/* The mask walk of lk_prefilter_report_lanes, written out here: with that
 * helper the int7 AVX2 pass compiled to another register allocation and
 * ran 2.5 % slower (bench-first-pass on the 18,143-face sample, even with
 * the helper always inlined), where the AVX-512 VNNI pass using it ran as
 * fast as before. */
static inline gsize
lk_ymm_report (const LkPrefilter *pf, const LkTile *t, gsize i, gsize base, __m256i acc,
               __m256 row_scale, __m256 bar, LkHit *out, gsize n)
{
  __m256 y = _mm256_mul_ps (_mm256_cvtepi32_ps (acc), _mm256_load_ps (pf->scales + base));
  __m256 f = _mm256_fmadd_ps (row_scale, y, _mm256_load_ps (pf->guards + base));
  guint m = (guint) _mm256_movemask_ps (_mm256_cmp_ps (f, bar, _CMP_GE_OQ));
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
      out[n++] = (LkHit){ (guint32) i, (guint32) j, lk_prefilter_int8_cosine (pf, i, j, q[lane]) };
    }
  return n;
}

/* Row r's accumulators (named, not an array, so that they stay in
 * registers), its k-step, and the hand-over to the epilogue's arrays. */
#define LK_YMM_INIT(r)                                                                             \
  const guint32 *a##r = lk_prefilter_row (pf, MIN (i0 + r, t->row_end - 1));                       \
  __m256i c0_##r = corr0;                                                                          \
  __m256i c1_##r = corr1
#define LK_YMM_STEP(r)                                                                             \
  do                                                                                               \
    {                                                                                              \
      __m256i x = _mm256_set1_epi32 ((int) a##r[p * LK_PREFILTER_LANES]);                          \
      c0_##r = LK_YMM_DPBUSD (c0_##r, x, y0);                                                      \
      c1_##r = LK_YMM_DPBUSD (c1_##r, x, y1);                                                      \
    }                                                                                              \
  while (0)
#define LK_YMM_OUT(r)                                                                              \
  do                                                                                               \
    {                                                                                              \
      acc0[r] = c0_##r;                                                                            \
      acc1[r] = c1_##r;                                                                            \
    }                                                                                              \
  while (0)

/* The corrections of faces base … base + 7, 0 past the last face. */
static inline __m256i
lk_ymm_corrections (const LkPrefilter *pf, gsize base)
{
  gsize valid = base < pf->n ? MIN (pf->n - base, 8) : 0;
  __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
  __m256i mask = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) valid), lane);
  return _mm256_maskload_epi32 ((const int *) (pf->corrections + MIN (base, pf->n)), mask);
}

/* Without LK_YMM_PASS, only the helpers above (lk-prefilter-int7-avx2.c
 * shares the epilogue). */
#ifdef LK_YMM_PASS
static gsize
LK_YMM_PASS (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize words = pf->pairs, lanes = LK_PREFILTER_LANES;
  const __m256i unbias = _mm256_set1_epi32 ((int) LK_PREFILTER_INT8_UNBIAS);
  gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n = 0;
  guint32 *signed_cols = g_aligned_alloc (words * lanes, sizeof (guint32), 64);

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
          _mm256_store_si256 ((__m256i *) (signed_cols + p), _mm256_xor_si256 (u, unbias));
        }
      __m256i corr0 = lk_ymm_corrections (pf, q * lanes);
      __m256i corr1 = lk_ymm_corrections (pf, q * lanes + 8);

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += LK_YMM_MR)
        {
          __m256i acc0[LK_YMM_MR], acc1[LK_YMM_MR];
          LK_YMM_INIT (0);
          LK_YMM_INIT (1);
          LK_YMM_INIT (2);
          LK_YMM_INIT (3);
          LK_YMM_INIT (4);
          LK_YMM_INIT (5);
          for (gsize p = 0; p < words; p++)
            {
              __m256i y0 = _mm256_load_si256 ((const __m256i *) (signed_cols + p * lanes));
              __m256i y1 = _mm256_load_si256 ((const __m256i *) (signed_cols + p * lanes + 8));
              LK_YMM_STEP (0);
              LK_YMM_STEP (1);
              LK_YMM_STEP (2);
              LK_YMM_STEP (3);
              LK_YMM_STEP (4);
              LK_YMM_STEP (5);
            }
          LK_YMM_OUT (0);
          LK_YMM_OUT (1);
          LK_YMM_OUT (2);
          LK_YMM_OUT (3);
          LK_YMM_OUT (4);
          LK_YMM_OUT (5);
          for (gsize r = 0; r < LK_YMM_MR && i0 + r < t->row_end; r++)
            {
              gsize i = i0 + r;
              __m256 bar = _mm256_set1_ps (lk_prefilter_int8_bar (pf, t, i));
              __m256 row_scale = _mm256_set1_ps (pf->scales[i]);
              n = lk_ymm_report (pf, t, i, q * lanes, acc0[r], row_scale, bar, out, n);
              n = lk_ymm_report (pf, t, i, q * lanes + 8, acc1[r], row_scale, bar, out, n);
            }
        }
    }
  g_aligned_free (signed_cols);
  return n;
}
#endif
