/* lk-prefilter-int8-avx512vnni.c — the int8 pass with vpdpbusd (AVX-512 VNNI)
 *
 * Compiled alone with -mavx512f -mavx512vnni into its own static library;
 * lk-prefilter.c hands it out only when lk_cpu_features() reports
 * AVX512_VNNI and AVX-512F with the ZMM state enabled by the OS, and the
 * measured choice (lk-tune.h) runs it only where it wins. The integers are
 * exact, so this pass and the portable emulation in lk-prefilter.c reach the
 * same Q for every pair, and the float epilogue is the same three IEEE
 * operations in both (lk-prefilter.c, "The int8 pass", steps 2 and 3).
 *
 * The shape of the bf16 pass (lk-prefilter-avx512bf16.c): MR = 8 rows × 2
 * panels of 16 columns, sixteen zmm accumulators, each lane one pair's
 * whole sum. Per four elements: two aligned panel loads (unsigned, biased
 * bytes), eight dword broadcasts of the rows' signed bytes (their own
 * panel's biased bytes, XORed: lk-prefilter-private.h), sixteen
 * vpdpbusd — 1,024 multiply-adds per ten loads. Each accumulator starts at
 * its row's correction (−128 Σ q), so it ends at the integer dot with no
 * fix-up. The two panels (dim 512: 16 KiB) stay in L1 while the tile's rows
 * stream past them. The epilogue is four operations per accumulator:
 * convert, times the columns' scales, fused times the row's scale plus the
 * columns' guards, compare with the row's bar.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-prefilter-private.h"

#define MR 8

static inline gsize
report (const LkPrefilter *pf, const LkTile *t, gsize i, gsize base, __m512i acc, __m512 row_scale,
        __m512 bar, LkHit *out, gsize n)
{
  __m512 y = _mm512_mul_ps (_mm512_cvtepi32_ps (acc), _mm512_load_ps (pf->scales + base));
  __m512 f = _mm512_fmadd_ps (row_scale, y, _mm512_load_ps (pf->guards + base));
  __mmask16 m = _mm512_cmp_ps_mask (f, bar, _CMP_GE_OQ);
  gint32 q[LK_PREFILTER_LANES];

  if (m == 0)
    return n;
  _mm512_storeu_si512 (q, acc);
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

static gsize
pass_int8_avx512vnni (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize words = pf->pairs, lanes = LK_PREFILTER_LANES;
  gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n = 0;

  for (gsize q = t->col_begin / lanes; q < q_end; q += 2)
    {
      gboolean two = q + 1 < q_end;
      const guint32 *b0 = pf->panels + q * words * lanes;
      const guint32 *b1 = two ? b0 + words * lanes : b0;
      /* The last column of these panels inside the tile: rows at or past it
       * have nothing above the diagonal here. */
      gsize last = MIN (t->col_end, (q + 2) * lanes) - 1;

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += MR)
        {
          const guint32 *a[MR];
          __m512i acc0[MR], acc1[MR];

          for (gsize r = 0; r < MR; r++)
            {
              gsize i = MIN (i0 + r, t->row_end - 1);
              a[r] = lk_prefilter_row (pf, i);
              acc0[r] = _mm512_set1_epi32 (pf->corrections[i]);
              acc1[r] = acc0[r];
            }
          for (gsize p = 0; p < words; p++)
            {
              __m512i y0 = _mm512_load_si512 (b0 + p * lanes);
              __m512i y1 = _mm512_load_si512 (b1 + p * lanes);
              for (gsize r = 0; r < MR; r++)
                {
                  __m512i x = _mm512_set1_epi32 ((int) lk_prefilter_int8_row_word (a[r], p));
                  acc0[r] = _mm512_dpbusd_epi32 (acc0[r], y0, x);
                  acc1[r] = _mm512_dpbusd_epi32 (acc1[r], y1, x);
                }
            }
          for (gsize r = 0; r < MR && i0 + r < t->row_end; r++)
            {
              gsize i = i0 + r;
              __m512 bar = _mm512_set1_ps (lk_prefilter_int8_bar (pf, t, i));
              __m512 row_scale = _mm512_set1_ps (pf->scales[i]);
              n = report (pf, t, i, q * lanes, acc0[r], row_scale, bar, out, n);
              if (two)
                n = report (pf, t, i, (q + 1) * lanes, acc1[r], row_scale, bar, out, n);
            }
        }
    }
  return n;
}

const LkPrefilterPass lk_prefilter_pass_int8_avx512vnni = {
  LK_PREFILTER_INT8,    "int8-avx512vnni",        LK_CPU_AVX512F | LK_CPU_AVX512_VNNI,
  pass_int8_avx512vnni, LK_PREFILTER_FORMAT_INT8,
};
