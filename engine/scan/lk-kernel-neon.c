/* lk-kernel-neon.c — four-wide fused multiply-add (aarch64)
 *
 * Built only for aarch64, where Advanced SIMD is in the baseline, so there is
 * nothing to detect. The explicit vfmaq matters: without fast-math the
 * compiler will not fuse a multiply and an add of a C loop by itself.
 *
 * `tile` is the register-blocked template of lk-kernel-block.h, the AVX2
 * kernel's code with another vector type: 6 × 16, twenty-four q-register
 * accumulators, four panel vectors and one broadcast (29 of 32 registers),
 * every lane one output's canonical chain. Not built or measured on this
 * project's x86-64 machine; the template it instantiates is tested through
 * the AVX2 and portable kernels.
 *
 * `dot` is the canonical chain (scalar fmadd per element, which is what fmaf
 * compiles to here); `dot_fast` the seed's per-pair dot, four accumulators of
 * four lanes summed at the end, kept only for the dot-512d race.
 */
#include "config.h"

#include <arm_neon.h>

#include "lk-kernel-tile.h"

typedef float32x4_t LkVec;
typedef uint32x4_t LkMask;

#define LK_BLOCK_MR 6
#define LK_BLOCK_NV 4
#define LK_BLOCK_VL 4

#define lk_v_zero()       vdupq_n_f32 (0.0f)
#define lk_v_set1(x)      vdupq_n_f32 (x)
#define lk_v_load(p)      vld1q_f32 (p)
#define lk_v_bcast(p)     vld1q_dup_f32 (p)
#define lk_v_store(p, v)  vst1q_f32 ((p), (v))
#define lk_v_fma(a, b, c) vfmaq_f32 ((c), (a), (b))
#define lk_v_ge(v, t)     vcgeq_f32 ((v), (t))
#define lk_m_or(m, n)     vorrq_u32 ((m), (n))
#define lk_m_bits(m)      ((unsigned) vmaxvq_u32 (m))
#define LK_V_PIN(v)       __asm__("" : "+w"(v))

#include "lk-kernel-block.h"

static float
neon_dot_fast (const float *a, const float *b, gsize dim)
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
  return lk_dot_canonical (a, b, dim);
}

static gsize
neon_tile (const LkTile *t, LkHit *hits)
{
  return block_tile (t, hits);
}

static gsize
neon_tile_per_pair (const LkTile *t, LkHit *hits)
{
  return lk_kernel_tile_loop (t, hits, lk_dot_canonical);
}

static void
neon_recheck (const float *embeddings, gsize dim, LkHit *hits, gsize n)
{
  lk_kernel_recheck_loop (embeddings, dim, hits, n);
}

const LkKernel lk_kernel_neon = {
  LK_KERNEL_NEON, "neon",        LK_CPU_NEON,        neon_dot,
  neon_tile,      neon_dot_fast, neon_tile_per_pair, neon_recheck,
};
