/* lk-kernel-portable.c — the definition every other kernel must agree with
 *
 * Plain C for any target, compiled with the project's baseline flags. Eight
 * accumulators rather than one: floating-point addition is not associative,
 * so the compiler may not re-associate a single running total, and the loop
 * would serialise on the adder's latency; eight independent chains give it
 * something to pipeline and to vectorise (SSE2 on baseline x86-64). The order
 * is fixed — lane l sums elements l, l + 8, l + 16, … in sequence, the lanes
 * are combined pairwise, then the tail is added in order — so it is a
 * different order from the naive sum, never a variable one.
 *
 * The seed measured this loop on an 18,143-face library on twenty cores:
 * 4.64 s untiled, 2.81 s once the columns were tiled, against 0.86 s for
 * AVX2 + FMA. It is the fallback and the reference, not the fast path.
 *
 * Tried and removed: a 2 × 2 register-blocked tile in plain C, each output
 * in this same order. GCC 12 at -O2 did not vectorise it, and it was slower
 * — 1.53 against 1.16 CPU-seconds for a one-thread scan of a 6,000-face
 * make-sample library. Register blocking pays only with explicit vectors
 * (lk-kernel-avx2.c).
 */
#include "config.h"

#include "lk-kernel-tile.h"

#define LANES 8

static inline float
dot_portable (const float *a, const float *b, gsize dim)
{
  float acc[LANES] = { 0 };
  gsize chunks = dim / LANES;

  for (gsize c = 0; c < chunks; c++)
    for (gsize l = 0; l < LANES; l++)
      acc[l] += a[c * LANES + l] * b[c * LANES + l];

  float total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (gsize k = chunks * LANES; k < dim; k++)
    total += a[k] * b[k];
  return total;
}

static float
portable_dot (const float *a, const float *b, gsize dim)
{
  return dot_portable (a, b, dim);
}

static gsize
portable_tile (const LkTile *tile, LkHit *hits)
{
  return lk_kernel_tile_loop (tile, hits, dot_portable);
}

const LkKernel lk_kernel_portable = {
  LK_KERNEL_PORTABLE, "portable", 0, portable_dot, portable_tile,
};
