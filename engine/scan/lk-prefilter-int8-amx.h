/* lk-prefilter-int8-amx.h — the int8 first pass on AMX tiles, one template
 *
 * The int8 pass (lk-prefilter.c, "The int8 pass") with its integer dots
 * computed by TDPBUSD on 16 × 16 tiles of int32. Each file that includes
 * this names the tile operations first (lk-amx.h):
 *   LK_TILE_LOADCONFIG (config)   LDTILECFG
 *   LK_TILE_RELEASE ()            TILERELEASE
 *   LK_TILE_LOADD (t, base, stride), LK_TILE_STORED (t, base, stride)
 *   LK_TILE_DPBUSD (c, a, b)      c += a (unsigned bytes) · b (signed)
 * and LK_AMX_PASS, the function's name:
 *   lk-prefilter-int8-amx.c: the intrinsics (-mamx-tile -mamx-int8), the
 *     pass lk-cpu's AMX detection lets run: NEVER RUN ON SILICON by this
 *     project (its machines have no AMX), so no speed is known;
 *   lk-prefilter-int8-amx-emulated.c: the portable emulation (lk-amx-
 *     emulation.c), which the tests run here against the portable int8 pass;
 *   lk-prefilter-int8-amx-emulated-avx512.c: the emulation with the AVX-512
 *     epilogue the native file compiles, so that every line of the native
 *     pass but the six intrinsics runs in the tests on this machine.
 * The epilogue is AVX-512 where the file is compiled with it (every AMX CPU
 * has AVX-512F), else the same IEEE operations in C.
 *
 * The operands. TDPBUSD computes C[m][n] += Σ_k A[m][k] B[k][n] with A's
 * bytes unsigned, B's signed and B in four-byte groups: row p of B holds, for
 * each column n, the column's bytes 4p … 4p + 3 — which is exactly a
 * panel of the int8 rows (lk-prefilter-private.h): dword p of the panel's
 * sixteen faces, sixteen consecutive dwords. So as vpdpbusd in the AVX-512
 * VNNI pass, whose signedness this keeps, the columns are the signed operand:
 * their panels XORed back to q_j (once per pair of panels, into `cols`), a
 * B tile every sixteen dwords (64 elements), loaded with a 64-byte stride.
 * The rows are the unsigned operand as they stand (q_i + 128), but A wants
 * each row's bytes contiguous: the tile's rows are copied out of their
 * panels, row-major, once per call (`rows`; at 256 rows × 512-d, 128 KiB
 * against the 256 × 768 × 512 multiply-adds the call does). Both copies
 * pad each row to whole 64-byte tiles with zero bytes: A's zeros make those
 * products 0 whatever B holds (the panels' own padding, q = 0, byte 128 in A
 * and 0 in B, adds nothing either). Each accumulator tile starts at its
 * columns' corrections −128 Σ q_j (a tile of sixteen equal rows), so it
 * ends at Q = Σ q_i q_j modulo 2^32 — the same integer every int8 pass
 * computes, exact because |Q| <= dim M² < 2^31 (step 2 of the bound: TDPBUSD
 * adds modulo 2^32 as vpdpbusd does). The epilogue is the AVX-512 VNNI
 * pass's, operation for operation, so the survivors and their cosines are
 * the portable pass's bit for bit (tests/test-prefilter.c).
 *
 * The blocking: four accumulators (tiles 0–3: 32 rows × 32 columns), two A
 * tiles (4, 5: 16 rows each) and two B tiles (6, 7: one panel each), every
 * tile 16 rows × 64 bytes — the whole register file, one configuration.
 * Per 64 elements: four loads, four TDPBUSD. Rows past the tile's end are
 * zero rows whose sums are never read.
 *
 * The configuration is per thread (the tiles are thread state): each call
 * loads it and releases the tiles before returning, so a scan thread holds
 * no tile state between calls and the kernel need not save it when the
 * thread is switched out (Intel's advice; unmeasured here).
 */
#include <string.h>

#include "lk-amx.h"
#include "lk-prefilter-private.h"

#if !defined(LK_AMX_PASS) || !defined(LK_TILE_DPBUSD)
#error "define LK_AMX_PASS and the LK_TILE_* operations before including this"
#endif

/* Rows per block: two A tiles. */
#define LK_AMX_ROWS 32

static const LkAmxTileConfig lk_amx_config = {
  .palette_id = 1,
  .colsb = { 64, 64, 64, 64, 64, 64, 64, 64 },
  .rows = { 16, 16, 16, 16, 16, 16, 16, 16 },
};

#if defined(__AVX512F__)
#include <immintrin.h>

/* The AVX-512 VNNI pass's report (lk-prefilter-int8-avx512vnni.c), on the
 * sixteen sums of row i a stored accumulator row holds. */
static inline gsize
lk_amx_report (const LkPrefilter *pf, const LkTile *t, gsize i, gsize base, const gint32 *sums,
               float bar_f, LkHit *out, gsize n)
{
  __m512i acc = _mm512_loadu_si512 (sums);
  __m512 y = _mm512_mul_ps (_mm512_cvtepi32_ps (acc), _mm512_load_ps (pf->scales + base));
  __m512 f
      = _mm512_fmadd_ps (_mm512_set1_ps (pf->scales[i]), y, _mm512_load_ps (pf->guards + base));
  __mmask16 m = _mm512_cmp_ps_mask (f, _mm512_set1_ps (bar_f), _CMP_GE_OQ);

  if (m == 0)
    return n;
  return lk_prefilter_report_lanes (pf, t, i, base, m, sums, out, n);
}
#else
/* The same operations in C (lk_prefilter_int8_estimate), on the lanes of
 * columns inside the tile (past its end the arrays may hold nothing). */
static inline gsize
lk_amx_report (const LkPrefilter *pf, const LkTile *t, gsize i, gsize base, const gint32 *sums,
               float bar_f, LkHit *out, gsize n)
{
  guint32 m = 0;

  for (guint lane = 0; lane < LK_PREFILTER_LANES; lane++)
    if (base + lane < t->col_end
        && lk_prefilter_int8_estimate (pf, i, base + lane, sums[lane]) >= bar_f)
      m |= 1u << lane;
  return lk_prefilter_report_lanes (pf, t, i, base, m, sums, out, n);
}
#endif

/* Sixteen rows of the corrections of faces base … base + 15 (0 past the
 * last face): an accumulator tile's start. */
static inline void
lk_amx_corrections (const LkPrefilter *pf, gsize base, gint32 *tile)
{
  for (gsize l = 0; l < LK_PREFILTER_LANES; l++)
    tile[l] = base + l < pf->n ? pf->corrections[base + l] : 0;
  for (gsize r = 1; r < LK_AMX_MAX_ROWS; r++)
    memcpy (tile + r * LK_PREFILTER_LANES, tile, LK_PREFILTER_LANES * sizeof (gint32));
}

static gsize
LK_AMX_PASS (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  const gsize words = pf->pairs, lanes = LK_PREFILTER_LANES;
  /* Dwords per row rounded up to whole tiles (16 dwords, 64 elements). */
  const gsize k_tiles = (words + 15) / 16, padded = k_tiles * 16;
  const gsize row_bytes = padded * 4, panel_bytes = padded * lanes * 4;
  const gsize q_end = (t->col_end + lanes - 1) / lanes;
  gsize n_rows = t->row_end - t->row_begin;
  gsize blocks = (n_rows + LK_AMX_ROWS - 1) / LK_AMX_ROWS;
  gsize n = 0;

  if (n_rows == 0 || t->col_end <= t->col_begin)
    return 0;
  /* One allocation: the rows (A), two signed column panels (B), two
   * accumulator starts and the four stored accumulators. */
  gsize rows_bytes = blocks * LK_AMX_ROWS * row_bytes;
  gsize tile_bytes = LK_AMX_MAX_ROWS * LK_AMX_BYTES_PER_ROW;
  guint8 *buffer = g_aligned_alloc0 (1, rows_bytes + 2 * panel_bytes + 6 * tile_bytes, 64);
  guint8 *rows = buffer;
  guint8 *cols = rows + rows_bytes;
  gint32 *corr = (gint32 *) (cols + 2 * panel_bytes);
  gint32 *sums = corr + 2 * LK_AMX_MAX_ROWS * LK_PREFILTER_LANES;

  /* The tile's rows, row-major: dword p of row i from its panel. */
  for (gsize r = 0; r < n_rows; r++)
    {
      const guint32 *a = lk_prefilter_row (pf, t->row_begin + r);
      guint32 *dst = (guint32 *) (rows + r * row_bytes);
      for (gsize p = 0; p < words; p++)
        dst[p] = a[p * lanes];
    }

  LK_TILE_LOADCONFIG (&lk_amx_config);
  for (gsize q = t->col_begin / lanes; q < q_end; q += 2)
    {
      gboolean two = q + 1 < q_end;
      /* The last column of these panels inside the tile: rows at or past it
       * have nothing above the diagonal here. */
      gsize last = MIN (t->col_end, (q + 2) * lanes) - 1;
      if (t->row_begin >= last)
        continue;
      for (gsize h = 0; h < (two ? 2u : 1u); h++)
        {
          const guint32 *panel = pf->panels + (q + h) * words * lanes;
          guint32 *dst = (guint32 *) (cols + h * panel_bytes);
          for (gsize w = 0; w < words * lanes; w++)
            dst[w] = panel[w] ^ LK_PREFILTER_INT8_UNBIAS;
          lk_amx_corrections (pf, (q + h) * lanes, corr + h * LK_AMX_MAX_ROWS * lanes);
        }
      const guint8 *b0 = cols, *b1 = cols + panel_bytes;
      const gint32 *corr0 = corr, *corr1 = corr + LK_AMX_MAX_ROWS * lanes;

      for (gsize i0 = t->row_begin; i0 < t->row_end && i0 < last; i0 += LK_AMX_ROWS)
        {
          const guint8 *a0 = rows + (i0 - t->row_begin) * row_bytes;
          const guint8 *a1 = a0 + LK_AMX_MAX_ROWS * row_bytes;
          /* Tile 0: rows a0 × panel q; 1: a0 × q + 1; 2: a1 × q; 3: a1 × q + 1. */
          LK_TILE_LOADD (0, corr0, LK_AMX_BYTES_PER_ROW);
          LK_TILE_LOADD (2, corr0, LK_AMX_BYTES_PER_ROW);
          if (two)
            {
              LK_TILE_LOADD (1, corr1, LK_AMX_BYTES_PER_ROW);
              LK_TILE_LOADD (3, corr1, LK_AMX_BYTES_PER_ROW);
            }
          for (gsize k = 0; k < k_tiles; k++)
            {
              LK_TILE_LOADD (4, a0 + k * LK_AMX_BYTES_PER_ROW, row_bytes);
              LK_TILE_LOADD (5, a1 + k * LK_AMX_BYTES_PER_ROW, row_bytes);
              LK_TILE_LOADD (6, b0 + k * 16 * LK_AMX_BYTES_PER_ROW, LK_AMX_BYTES_PER_ROW);
              LK_TILE_DPBUSD (0, 4, 6);
              LK_TILE_DPBUSD (2, 5, 6);
              if (two)
                {
                  LK_TILE_LOADD (7, b1 + k * 16 * LK_AMX_BYTES_PER_ROW, LK_AMX_BYTES_PER_ROW);
                  LK_TILE_DPBUSD (1, 4, 7);
                  LK_TILE_DPBUSD (3, 5, 7);
                }
            }
          LK_TILE_STORED (0, sums, LK_AMX_BYTES_PER_ROW);
          LK_TILE_STORED (2, sums + 2 * LK_AMX_MAX_ROWS * lanes, LK_AMX_BYTES_PER_ROW);
          if (two)
            {
              LK_TILE_STORED (1, sums + LK_AMX_MAX_ROWS * lanes, LK_AMX_BYTES_PER_ROW);
              LK_TILE_STORED (3, sums + 3 * LK_AMX_MAX_ROWS * lanes, LK_AMX_BYTES_PER_ROW);
            }
          for (gsize r = 0; r < LK_AMX_ROWS && i0 + r < t->row_end; r++)
            {
              gsize i = i0 + r;
              /* Rows 0–15 are in tiles 0 and 1, rows 16–31 in 2 and 3. */
              const gint32 *s0 = sums + (r / 16 * 2 * LK_AMX_MAX_ROWS + r % 16) * lanes;
              float bar = lk_prefilter_int8_bar (pf, t, i);
              n = lk_amx_report (pf, t, i, q * lanes, s0, bar, out, n);
              if (two)
                n = lk_amx_report (pf, t, i, (q + 1) * lanes, s0 + LK_AMX_MAX_ROWS * lanes, bar,
                                   out, n);
            }
        }
    }
  LK_TILE_RELEASE ();
  g_aligned_free (buffer);
  return n;
}
