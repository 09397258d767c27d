/* lk-kernel-block.h — the register-blocked fused tile, written once for every ISA
 *
 * Private to the kernel files. Each lk-kernel-ISA.c defines a handful of
 * vector operations (below) and includes this once; the code here is then
 * compiled with that file's flags. One template, so the AVX-512 and NEON
 * tiles — which the machines this is developed on cannot run — are the very code the
 * AVX2 and portable tiles run and test here, only with another vector type.
 *
 * The BLIS shape, with the matrix never stored:
 *
 *  - The tile's columns are packed, NR at a time, into a k-major panel:
 *    panel[k · NR + q] = column q's element k (NR × dim floats: 32 KiB at
 *    512-d for NR = 16, reused for every row of the tile, then overwritten by
 *    the next NR columns). One panel per tile call, freed on return: memory
 *    stays embeddings + pairs + one panel per thread, never a second copy of
 *    the library.
 *  - The micro-kernel holds MR × NV vector accumulators (NR = NV × VL
 *    columns). For each k it loads NV panel vectors once, and for each of
 *    the MR rows broadcasts that row's element k straight from the row-major
 *    embeddings and issues NV fused multiply-adds: MR · NV FMAs per
 *    NV + MR loads, where a per-pair dot needs two loads per FMA.
 *  - Each lane of each accumulator is one output's chain over k, in
 *    ascending k, from +0: exactly lk_dot_canonical (lk-dot-canonical.h). No
 *    reduction across lanes, no tail: k runs to dim one float at a time, and
 *    only the columns beyond the tile's edge (zeros in the panel) and the rows
 *    beyond it (a copy of the last real row) are computed and not reported.
 *    Dims 1 … anything take the same path.
 *  - Epilogue: every accumulator is compared with tau, the comparisons ORed,
 *    one mask tested. The common case — a micro-tile without a single cosine
 *    at or above tau — ends there: MR · NV compares for MR · NR · dim FMAs.
 *    Only a micro-tile with a candidate stores its accumulators and applies
 *    the diagonal (j > i), the photo rule and the gallery rule, lane by lane,
 *    each row in ascending j.
 *  - Upper triangle only: columns at or left of the tile's first row are
 *    never packed, and for each panel the rows from its last column on
 *    (micro-tiles wholly at or below the diagonal) are never computed.
 *  - Columns outside, rows inside: one panel in L1 while the tile's rows
 *    stream past it from L2 (the order lk-kernel-avx2.c measured fastest).
 *
 * The including file defines, before including:
 *   LK_BLOCK_MR, LK_BLOCK_NV, LK_BLOCK_VL   rows, column vectors, lanes
 *   LkVec, LkMask                           vector and comparison types
 *   lk_v_zero(), lk_v_set1(x), lk_v_load(p), lk_v_bcast(p), lk_v_store(p, v)
 *   lk_v_fma(a, b, c)                       a·b + c, one rounding per lane
 *   lk_v_ge(v, t), lk_m_or(m, n), lk_m_bits(m)
 *                                           lane l of v >= t → bit l
 *   LK_V_PIN(v)                             keep a loaded vector in a register
 *   LK_BLOCK_PACK (optional)                an ISA-specific packing function
 */
#pragma once

#include <string.h>

#include "lk-kernel-tile.h"

#define LK_BLOCK_NR (LK_BLOCK_NV * LK_BLOCK_VL)

/* Panel rows are NR floats; aligned to 64 bytes so none of them straddles
 * two cache lines (NR · 4 is a multiple of 64 for every ISA but portable off x86-64). */
#define LK_BLOCK_ALIGN 64

/* Tiles of at most this many pairs go through the per-pair loop: at 512-d a
 * lone canonical chain is ~2,000 cycles, a panel's packing plus one
 * micro-tile ~4,000 whatever the tile's size (AVX2; estimated from the
 * instruction counts, not measured separately). */
#define LK_BLOCK_PER_PAIR_BELOW 2

/* Columns c0 … c0 + nr - 1 into panel[k · NR + q]; lanes q >= nr are zero.
 * An ISA may define LK_BLOCK_PACK to its own (a vector transpose), falling
 * back to this one for what it does not handle. */
static void G_GNUC_UNUSED
block_pack_scalar (const float *e, gsize dim, gsize c0, gsize nr, float *restrict panel)
{
  for (gsize q = 0; q < LK_BLOCK_NR; q++)
    {
      if (q >= nr)
        {
          for (gsize k = 0; k < dim; k++)
            panel[k * LK_BLOCK_NR + q] = 0.0f;
          continue;
        }
      const float *src = e + (c0 + q) * dim;
      for (gsize k = 0; k < dim; k++)
        panel[k * LK_BLOCK_NR + q] = src[k];
    }
}

#ifndef LK_BLOCK_PACK
#define LK_BLOCK_PACK block_pack_scalar
#endif

/* Reports the hits of one micro-tile whose accumulators are in `out` (row q,
 * column p at out[q][p]): rows i … i + mr - 1, columns j … j + nr - 1. */
static gsize
block_emit (const LkTile *t, gsize i, gsize mr, gsize j, gsize nr,
            const float out[LK_BLOCK_MR][LK_BLOCK_NR], LkHit *hits)
{
  gsize n = 0;

  for (gsize q = 0; q < mr; q++)
    {
      gsize row = i + q;
      guint64 photo = t->photo[row];
      gboolean gallery = t->gallery[row] != 0;
      for (gsize p = 0; p < nr; p++)
        {
          gsize col = j + p;
          float c = out[q][p];
          if (!(c >= t->tau) || col <= row || t->photo[col] == photo
              || !(gallery || t->gallery[col]))
            continue;
          hits[n++] = (LkHit){ (guint32) row, (guint32) col, c };
        }
    }
  return n;
}

/* The micro-kernel and its epilogue: rows r[0 … MR-1] against one panel.
 * Returns the hits it wrote. */
static inline __attribute__ ((always_inline)) gsize
block_micro (const LkTile *t, gsize i, gsize mr, gsize j, gsize nr, const float *restrict panel,
             LkVec tau, LkHit *hits)
{
  const float *e = t->embeddings;
  gsize dim = t->dim;
  const float *r[LK_BLOCK_MR];
  LkVec acc[LK_BLOCK_MR][LK_BLOCK_NV];

#pragma GCC unroll 32
  for (gsize q = 0; q < LK_BLOCK_MR; q++)
    r[q] = e + (i + MIN (q, mr - 1)) * dim;
#pragma GCC unroll 32
  for (gsize q = 0; q < LK_BLOCK_MR; q++)
#pragma GCC unroll 32
    for (gsize v = 0; v < LK_BLOCK_NV; v++)
      acc[q][v] = lk_v_zero ();

  for (gsize k = 0; k < dim; k++)
    {
      const float *pk = panel + k * LK_BLOCK_NR;
      LkVec b[LK_BLOCK_NV];
#pragma GCC unroll 32
      for (gsize v = 0; v < LK_BLOCK_NV; v++)
        {
          b[v] = lk_v_load (pk + v * LK_BLOCK_VL);
          LK_V_PIN (b[v]);
        }
#pragma GCC unroll 32
      for (gsize q = 0; q < LK_BLOCK_MR; q++)
        {
          LkVec a = lk_v_bcast (r[q] + k);
#pragma GCC unroll 32
          for (gsize v = 0; v < LK_BLOCK_NV; v++)
            acc[q][v] = lk_v_fma (a, b[v], acc[q][v]);
        }
    }

  LkMask any = lk_v_ge (acc[0][0], tau);
#pragma GCC unroll 32
  for (gsize q = 0; q < LK_BLOCK_MR; q++)
#pragma GCC unroll 32
    for (gsize v = 0; v < LK_BLOCK_NV; v++)
      any = lk_m_or (any, lk_v_ge (acc[q][v], tau));
  if (G_LIKELY (lk_m_bits (any) == 0))
    return 0;

  float out[LK_BLOCK_MR][LK_BLOCK_NR] __attribute__ ((aligned (LK_BLOCK_ALIGN)));
#pragma GCC unroll 32
  for (gsize q = 0; q < LK_BLOCK_MR; q++)
#pragma GCC unroll 32
    for (gsize v = 0; v < LK_BLOCK_NV; v++)
      lk_v_store (&out[q][v * LK_BLOCK_VL], acc[q][v]);
  return block_emit (t, i, mr, j, nr, (const float (*)[LK_BLOCK_NR]) out, hits);
}

static inline __attribute__ ((always_inline)) gsize
block_tile (const LkTile *t, LkHit *hits)
{
  /* Nothing at or left of the first row's diagonal is any row's business. */
  gsize c_begin = MAX (t->col_begin, t->row_begin + 1);
  if (t->row_begin >= t->row_end || c_begin >= t->col_end)
    return 0;
  /* A pair or two (a prefilter's survivors come back as such tiles): one
   * canonical chain each costs less than packing a panel and filling a
   * micro-tile for them, and gives the same bits. */
  if ((t->row_end - t->row_begin) * (t->col_end - c_begin) <= LK_BLOCK_PER_PAIR_BELOW)
    return lk_kernel_tile_loop (t, hits, lk_dot_canonical);

  gsize dim = t->dim;
  float *panel = g_aligned_alloc (dim, LK_BLOCK_NR * sizeof (float), LK_BLOCK_ALIGN);
  LkVec tau = lk_v_set1 (t->tau);
  gsize n = 0;

  for (gsize j = c_begin; j < t->col_end; j += LK_BLOCK_NR)
    {
      gsize nr = MIN (LK_BLOCK_NR, t->col_end - j);
      /* Rows from j + nr - 1 on have no column above the diagonal here. */
      gsize i_end = MIN (t->row_end, j + nr - 1);
      LK_BLOCK_PACK (t->embeddings, dim, j, nr, panel);
      for (gsize i = t->row_begin; i < i_end; i += LK_BLOCK_MR)
        n += block_micro (t, i, MIN (LK_BLOCK_MR, i_end - i), j, nr, panel, tau, hits + n);
    }
  g_aligned_free (panel);
  return n;
}
