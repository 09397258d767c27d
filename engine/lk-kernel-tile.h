/* lk-kernel-tile.h — the per-pair tile loop, shared by every ISA's kernel
 *
 * Private to the kernel files and lk-kernels.c. Each of them includes this and
 * instantiates the loop with its canonical dot (lk-dot-canonical.h), so the
 * loop is compiled with that file's flags and the dot is inlined into it
 * rather than called through a pointer per pair. It is each kernel's
 * `tile_per_pair`: the obvious tile the register-blocked one
 * (lk-kernel-block.h) replaced, kept as the arm the tile-fused speed gate
 * races, and returning the same bits.
 *
 * The rules are tested before the dot, not after: a pair of one photo or of
 * two probes costs two loads instead of 2·dim flops. The register-blocked
 * tile computes the whole micro-tile and masks afterwards; either meets the
 * contract of LkTileFunc.
 */
#pragma once

#include "lk-dot-canonical.h"
#include "lk-kernels.h"

/* Each defined in its own lk-kernel-ISA.c, and only where it is built. */
extern const LkKernel lk_kernel_portable;
extern const LkKernel lk_kernel_avx2;
extern const LkKernel lk_kernel_avx512;
extern const LkKernel lk_kernel_neon;

static inline __attribute__ ((always_inline)) gsize
lk_kernel_tile_loop (const LkTile *t, LkHit *hits, LkDotFunc dot)
{
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      /* The diagonal: nothing at or before i is this row's business. */
      gsize start = MAX (t->col_begin, i + 1);
      const float *a = t->embeddings + i * t->dim;
      guint64 photo_a = t->photo[i];
      gboolean gallery_a = t->gallery[i] != 0;

      for (gsize j = start; j < t->col_end; j++)
        {
          if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
            continue;
          float c = dot (a, t->embeddings + j * t->dim, t->dim);
          if (c >= t->tau)
            hits[n++] = (LkHit){ (guint32) i, (guint32) j, c };
        }
    }
  return n;
}

/* LkKernel.recheck: eight pairs' canonical chains side by side. Each chain
 * is lk_dot_canonical's — one fmaf per element, in ascending k, from 0 — so
 * every cosine is its bits; interleaving independent chains only lets the
 * FMAs of eight pairs overlap, where one chain waits the FMA's latency (4
 * cycles on Zen 3 and 4) per element: 2,048 cycles per pair at 512-d.
 * Written out by hand, not as a loop over an array of accumulators, so that
 * -O2 keeps them in registers. */
#define LK_RECHECK_STEP(r) c##r = fmaf (a##r[k], b##r[k], c##r)

static inline __attribute__ ((always_inline)) void
lk_kernel_recheck_loop (const float *e, gsize dim, LkHit *h, gsize n)
{
  gsize p = 0;

  for (; p + 8 <= n; p += 8)
    {
      const float *a0 = e + h[p].i * dim, *b0 = e + h[p].j * dim;
      const float *a1 = e + h[p + 1].i * dim, *b1 = e + h[p + 1].j * dim;
      const float *a2 = e + h[p + 2].i * dim, *b2 = e + h[p + 2].j * dim;
      const float *a3 = e + h[p + 3].i * dim, *b3 = e + h[p + 3].j * dim;
      const float *a4 = e + h[p + 4].i * dim, *b4 = e + h[p + 4].j * dim;
      const float *a5 = e + h[p + 5].i * dim, *b5 = e + h[p + 5].j * dim;
      const float *a6 = e + h[p + 6].i * dim, *b6 = e + h[p + 6].j * dim;
      const float *a7 = e + h[p + 7].i * dim, *b7 = e + h[p + 7].j * dim;
      float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;

      for (gsize k = 0; k < dim; k++)
        {
          LK_RECHECK_STEP (0);
          LK_RECHECK_STEP (1);
          LK_RECHECK_STEP (2);
          LK_RECHECK_STEP (3);
          LK_RECHECK_STEP (4);
          LK_RECHECK_STEP (5);
          LK_RECHECK_STEP (6);
          LK_RECHECK_STEP (7);
        }
      h[p].cos = c0;
      h[p + 1].cos = c1;
      h[p + 2].cos = c2;
      h[p + 3].cos = c3;
      h[p + 4].cos = c4;
      h[p + 5].cos = c5;
      h[p + 6].cos = c6;
      h[p + 7].cos = c7;
    }
  for (; p < n; p++)
    h[p].cos = lk_dot_canonical (e + h[p].i * dim, e + h[p].j * dim, dim);
}
