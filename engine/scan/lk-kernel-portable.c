/* lk-kernel-portable.c — the register-blocked tile in plain C, for any target
 *
 * Compiled with the project's baseline flags. The same template as every
 * SIMD kernel (lk-kernel-block.h) with a "vector" of one float: a block of
 * scalar accumulators (4 × 16 on x86-64, 4 × 4 elsewhere: below), each one
 * output's canonical chain of fmaf (lk-dot-canonical.h), so the portable
 * kernel returns the very bits the SIMD ones do. fmaf is exact everywhere;
 * whether it is fast depends on the target having the instruction. Baseline
 * x86-64 does not, and a libm call per multiply-add costs the registers of
 * the whole block, so on x86-64 ELF the canonical functions are cloned
 * (target_clones): an FMA copy that GCC and Clang compile to vfmadd (GCC
 * vectorises the block's: below), and a baseline copy that calls libm,
 * chosen once at load time. Both compute fmaf; the clone changes the speed,
 * never a bit.
 *
 * `dot_fast` is the seed's portable dot: eight accumulators, combined
 * pairwise at the end, then the tail — a fixed order of its own, not the
 * canonical one, kept only as the baseline of the dot-512d race.
 *
 * The cost of the canonical order here: the seed's eight-lane loop, which
 * the compiler vectorised (SSE, unfused), scanned the 18,143-face library in
 * less than half the time of 4 × 4 scalar chains. It is the fallback and the
 * reference, not the fast path.
 *
 * The block's shape on x86-64. GCC vectorises the FMA clone's block itself
 * (SLP, with the AVX that -mfma implies): the NV columns of one row become
 * one vector accumulator, and every lane is still one output's fmaf chain,
 * so the bits are unchanged. What it cannot do is add independent chains: a
 * 4 × 4 block became two ymm chains, bound by the FMA's latency, and lost
 * to the seed's SSE per-pair loop (the tile-fused gate's portable-fast-dot
 * cell). Of the shapes tried (likeness-cli gates --gate tile-fused), 4 × 16
 * — eight ymm chains — is fastest: 3.3× the per-pair fast dot and within
 * 12 % of the AVX2 kernel's tile. Other targets keep 4 × 4: sixteen scalar
 * chains fit the 32 FP
 * registers of every other 64-bit target, and no such machine is here to
 * measure a wider one.
 */
#include "config.h"

#include "lk-kernel-tile.h"

typedef float LkVec;
typedef unsigned LkMask;

#define LK_BLOCK_MR 4
#if defined(__x86_64__)
#define LK_BLOCK_NV 16 /* vectorised by the compiler: the header says why */
#else
#define LK_BLOCK_NV 4
#endif
#define LK_BLOCK_VL 1

#define lk_v_zero()       0.0f
#define lk_v_set1(x)      (x)
#define lk_v_load(p)      (*(p))
#define lk_v_bcast(p)     (*(p))
#define lk_v_store(p, v)  (*(p) = (v))
#define lk_v_fma(a, b, c) fmaf ((a), (b), (c))
#define lk_v_ge(v, t)     ((unsigned) ((v) >= (t)))
#define lk_m_or(m, n)     ((m) | (n))
#define lk_m_bits(m)      (m)
#define LK_V_PIN(v)       ((void) 0)

#include "lk-kernel-block.h"

#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CANONICAL __attribute__ ((target_clones ("fma", "default")))
#endif
#endif
#ifndef CANONICAL
#define CANONICAL
#endif

#define LANES 8

static float
portable_dot_fast (const float *a, const float *b, gsize dim)
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

CANONICAL static float
portable_dot (const float *a, const float *b, gsize dim)
{
  return lk_dot_canonical (a, b, dim);
}

CANONICAL static gsize
portable_tile (const LkTile *t, LkHit *hits)
{
  return block_tile (t, hits);
}

CANONICAL static gsize
portable_tile_per_pair (const LkTile *t, LkHit *hits)
{
  return lk_kernel_tile_loop (t, hits, lk_dot_canonical);
}

CANONICAL static void
portable_recheck (const float *embeddings, gsize dim, LkHit *hits, gsize n)
{
  lk_kernel_recheck_loop (embeddings, dim, hits, n);
}

const LkKernel lk_kernel_portable = {
  LK_KERNEL_PORTABLE,     "portable",       0, portable_dot, portable_tile, portable_dot_fast,
  portable_tile_per_pair, portable_recheck,
};
