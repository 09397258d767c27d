/* lk-kernel-neon.c — four-wide fused multiply-add (aarch64)
 *
 * Built only for aarch64, where Advanced SIMD is in the baseline, so there is
 * nothing to detect. The explicit vfmaq matters: without fast-math the
 * compiler will not fuse a multiply and an add of the portable loop by itself.
 * Four accumulators of four lanes: sixteen floats per step, the same work per
 * iteration as the AVX2 kernel's two chains of eight.
 */
#include "config.h"

#include <arm_neon.h>

#include "lk-kernel-tile.h"

static inline float
dot_neon (const float *a, const float *b, gsize dim)
{
  float32x4_t acc[4] = { vdupq_n_f32 (0), vdupq_n_f32 (0), vdupq_n_f32 (0), vdupq_n_f32 (0) };
  gsize k = 0;

  for (; k + 16 <= dim; k += 16)
    for (int l = 0; l < 4; l++)
      acc[l] = vfmaq_f32 (acc[l], vld1q_f32 (a + k + 4 * l), vld1q_f32 (b + k + 4 * l));
  for (; k + 4 <= dim; k += 4)
    acc[0] = vfmaq_f32 (acc[0], vld1q_f32 (a + k), vld1q_f32 (b + k));

  float total = vaddvq_f32 (vaddq_f32 (vaddq_f32 (acc[0], acc[1]), vaddq_f32 (acc[2], acc[3])));
  for (; k < dim; k++)
    total += a[k] * b[k];
  return total;
}

static float
neon_dot (const float *a, const float *b, gsize dim)
{
  return dot_neon (a, b, dim);
}

static gsize
neon_tile (const LkTile *tile, LkHit *hits)
{
  return lk_kernel_tile_loop (tile, hits, dot_neon);
}

const LkKernel lk_kernel_neon = {
  LK_KERNEL_NEON, "neon", LK_CPU_NEON, neon_dot, neon_tile,
};
