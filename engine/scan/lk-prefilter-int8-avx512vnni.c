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
 * columns' guards, compare with the row's bar. Tried and removed: one
 * integer compare per accumulator against a per-row dot below which no
 * column can reach the bar (the largest column scale and guard), skipping
 * those four operations for nearly every accumulator, measured no faster:
 * the epilogue overlaps the next block's vpdpbusd.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-prefilter-private.h"

#define MR 8

/* Lines of the next column panels prefetched per register block: 256 rows
 * make 32 blocks, and two panels of 512-d rows are 256 lines. */
#define PREFETCH_LINES 8

/* Operands swapped, so that nothing is converted per row: the rows' panel
 * dwords (biased bytes q_i + 128) are vpdpbusd's unsigned operand as they
 * stand, broadcast straight from memory, and the two column panels are the
 * signed operand, XORed back to q_j once per tile into `signed_cols` (16 KiB
 * at 512-d) and reused by every row of the tile. The lane sums
 * Σ (q_i + 128) q_j = Q + 128 Σ q_j, so each accumulator starts at its
 * column's correction −128 Σ q_j and ends at Q, the integer every int8 pass
 * computes (lk-prefilter.c, step 2). Unbiasing the row dword instead — in a
 * general register before the broadcast (lk_prefilter_int8_row_word), or with
 * a vpxord after it — put one or two more instructions beside every pair of
 * vpdpbusd and made the pass alone 10–15 % slower than a second, signed
 * copy of the rows does. Swapped, the inner
 * loop is that copy's again: two panel loads, eight broadcasts from memory,
 * sixteen vpdpbusd. */

/* Row r's two accumulators start at the columns' corrections (−128 Σ q_j). */
#define LK_ACC_INIT(r)                                                                             \
  __m512i c0_##r = corr0;                                                                          \
  __m512i c1_##r = corr1
#define LK_ACC_STEP(r)                                                                             \
  do                                                                                               \
    {                                                                                              \
      __m512i x = _mm512_set1_epi32 ((int) a##r[p * LK_PREFILTER_LANES]);                          \
      c0_##r = _mm512_dpbusd_epi32 (c0_##r, x, y0);                                                \
      c1_##r = _mm512_dpbusd_epi32 (c1_##r, x, y1);                                                \
    }                                                                                              \
  while (0)
#define LK_ACC_OUT(r)                                                                              \
  do                                                                                               \
    {                                                                                              \
      acc0[r] = c0_##r;                                                                            \
      acc1[r] = c1_##r;                                                                            \
    }                                                                                              \
  while (0)

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
  return lk_prefilter_report_lanes (pf, t, i, base, m, q, out, n);
}

/* The corrections of faces base … base + 15, 0 past the last face. */
static inline __m512i
column_corrections (const LkPrefilter *pf, gsize base)
{
  gsize valid = base < pf->n ? MIN (pf->n - base, LK_PREFILTER_LANES) : 0;
  return _mm512_maskz_loadu_epi32 ((__mmask16) ((1u << valid) - 1), pf->corrections + base);
}

static gsize
pass_int8_avx512vnni (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize words = pf->pairs, lanes = LK_PREFILTER_LANES;
  const __m512i unbias = _mm512_set1_epi32 ((int) LK_PREFILTER_INT8_UNBIAS);
  gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n_panels = (pf->n + lanes - 1) / lanes;
  gsize n = 0;
  guint32 *signed_cols = g_aligned_alloc (2 * words * lanes, sizeof (guint32), 64);

  for (gsize q = t->col_begin / lanes; q < q_end; q += 2)
    {
      gboolean two = q + 1 < q_end;
      const guint32 *b0 = pf->panels + q * words * lanes;
      const guint32 *b1 = two ? b0 + words * lanes : b0;
      /* The last column of these panels inside the tile: rows at or past it
       * have nothing above the diagonal here. */
      gsize last = MIN (t->col_end, (q + 2) * lanes) - 1;
      if (t->row_begin >= last)
        continue;
      const guint32 *s0 = signed_cols, *s1 = signed_cols + words * lanes;
      for (gsize p = 0; p < words; p++)
        {
          __m512i u0 = _mm512_load_si512 (b0 + p * lanes);
          __m512i u1 = _mm512_load_si512 (b1 + p * lanes);
          _mm512_store_si512 (signed_cols + p * lanes, _mm512_xor_si512 (u0, unbias));
          _mm512_store_si512 (signed_cols + (words + p) * lanes, _mm512_xor_si512 (u1, unbias));
        }
      /* Padding faces (past n) have q = 0: their correction is 0 too. */
      __m512i corr0 = column_corrections (pf, q * lanes);
      __m512i corr1 = two ? column_corrections (pf, (q + 1) * lanes) : corr0;
      /* The next two panels (this tile's or the next tile's), asked for into
       * L2 a few lines per register block while these are multiplied: read
       * cold by the copy above, they were 7.6 % of the pass's time, nearly
       * all of it waiting for memory (perf, 18,143 faces). */
      const char *next = (const char *) (b0 + 2 * words * lanes);
      gsize next_lines = q + 2 < n_panels ? MIN (2, n_panels - q - 2) * words : 0;
      gsize prefetched = 0;

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += MR)
        {
          const guint32 *a[MR];
          __m512i acc0[MR], acc1[MR];

          for (gsize r = 0; r < MR; r++)
            a[r] = lk_prefilter_row (pf, MIN (i0 + r, t->row_end - 1));
          for (gsize l = 0; l < PREFETCH_LINES && prefetched < next_lines; l++, prefetched++)
            _mm_prefetch (next + prefetched * 64, _MM_HINT_T1);
          /* Sixteen named accumulators, not an array: with arrays GCC 12
           * copied every accumulator to another register each k-step and
           * spilled two (28 moves and two stores per sixteen vpdpbusd). Some
           * cores hide that (the pass alone reaches 84% of the measured
           * vpdpbusd peak either way); a core that does not would not. */
          const guint32 *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
          const guint32 *a4 = a[4], *a5 = a[5], *a6 = a[6], *a7 = a[7];
          LK_ACC_INIT (0);
          LK_ACC_INIT (1);
          LK_ACC_INIT (2);
          LK_ACC_INIT (3);
          LK_ACC_INIT (4);
          LK_ACC_INIT (5);
          LK_ACC_INIT (6);
          LK_ACC_INIT (7);
          for (gsize p = 0; p < words; p++)
            {
              __m512i y0 = _mm512_load_si512 (s0 + p * lanes);
              __m512i y1 = _mm512_load_si512 (s1 + p * lanes);
              LK_ACC_STEP (0);
              LK_ACC_STEP (1);
              LK_ACC_STEP (2);
              LK_ACC_STEP (3);
              LK_ACC_STEP (4);
              LK_ACC_STEP (5);
              LK_ACC_STEP (6);
              LK_ACC_STEP (7);
            }
          LK_ACC_OUT (0);
          LK_ACC_OUT (1);
          LK_ACC_OUT (2);
          LK_ACC_OUT (3);
          LK_ACC_OUT (4);
          LK_ACC_OUT (5);
          LK_ACC_OUT (6);
          LK_ACC_OUT (7);
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
  g_aligned_free (signed_cols);
  return n;
}

const LkPrefilterPass lk_prefilter_pass_int8_avx512vnni = {
  LK_PREFILTER_INT8,    "int8-avx512vnni",        LK_CPU_AVX512F | LK_CPU_AVX512_VNNI,
  pass_int8_avx512vnni, LK_PREFILTER_FORMAT_INT8,
};
