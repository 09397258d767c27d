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
            hits[n++] = (LkHit) { (guint32) i, (guint32) j, c };
        }
    }
  return n;
}
