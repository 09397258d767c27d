/* lk-kernel-avx2.c — eight-wide fused multiply-add (x86-64 with AVX2 + FMA)
 *
 * Compiled alone with -mavx2 -mfma; lk-kernels.c hands it out only after
 * lk_cpu_features() has seen both, so a binary built here still starts on a
 * CPU without them.
 *
 * The scan runs `tile`: the register-blocked template of lk-kernel-block.h at
 * 6 × 16 — twelve ymm accumulators, two panel vectors, one broadcast: 15 of
 * the 16 registers — issuing 12 FMAs per 2 loads and 6 broadcasts, every lane
 * one output's canonical chain, so no reduction and no tail. It replaced a
 * 2 × 6 tile that loaded rows and columns as vectors along k and reduced
 * eight lanes at the end (its cosines were its own, 12 FMAs per 8 loads).
 *
 * Why this shape: on the 18,143-face make-sample library (tests/bench-scan,
 * CPU-seconds, OpenBLAS SGEMM + threshold in the same run) the 2 × 6 tile
 * lost to OpenBLAS (0.91×) and this one beats it (1.18×), with the same
 * pairs; docs/benchmarks.md has the figures. The tile alone runs at 60–80 %
 * of a one-thread FMA loop, of which the packing is about 7 % (perf).
 *
 * `dot` is the canonical chain, a scalar FMA per element: 4 cycles each, a
 * latency-bound 2,048 cycles at 512-d, and the same bits as every other
 * kernel. `dot_fast` is the seed's per-pair dot (two accumulators of eight
 * lanes, reduced at the end), kept only for the dot-512d race.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-kernel-tile.h"

typedef __m256 LkVec;
typedef __m256 LkMask;

#define LK_BLOCK_MR 6
#define LK_BLOCK_NV 2
#define LK_BLOCK_VL 8

#define lk_v_zero()       _mm256_setzero_ps ()
#define lk_v_set1(x)      _mm256_set1_ps (x)
#define lk_v_load(p)      _mm256_load_ps (p)
#define lk_v_bcast(p)     _mm256_broadcast_ss (p)
#define lk_v_store(p, v)  _mm256_store_ps ((p), (v))
#define lk_v_fma(a, b, c) _mm256_fmadd_ps ((a), (b), (c))
#define lk_v_ge(v, t)     _mm256_cmp_ps ((v), (t), _CMP_GE_OQ)
#define lk_m_or(m, n)     _mm256_or_ps ((m), (n))
#define lk_m_bits(m)      ((unsigned) _mm256_movemask_ps (m))
/* Left alone, GCC folds the panel load into each FMA that uses it as a
 * memory operand, so a vector used by six rows is loaded six times. */
#define LK_V_PIN(v)       __asm__("" : "+x"(v))

static void avx2_pack (const float *e, gsize dim, gsize c0, gsize nr, float *restrict panel);
#define LK_BLOCK_PACK avx2_pack

#include "lk-kernel-block.h"

/* Packing eight columns by eight floats at a time: eight loads, an 8 × 8
 * transpose in 24 shuffles, eight stores. The scalar packing loop took a
 * quarter of a one-thread tile's time (perf, 4,096 faces, 64-row tiles); with
 * this one and 256-row tiles packing is about 7%. A partial panel (the
 * tile's ragged edge) falls back to the scalar loop. The transpose is
 * lk_kernel_transpose8 (lk-kernel-tile.h), shared with the re-check. */
static void
avx2_pack (const float *e, gsize dim, gsize c0, gsize nr, float *restrict panel)
{
  if (nr < LK_BLOCK_NR)
    {
      block_pack_scalar (e, dim, c0, nr, panel);
      return;
    }
  for (gsize g = 0; g < LK_BLOCK_NV; g++)
    {
      const float *src = e + (c0 + 8 * g) * dim;
      float *dst = panel + 8 * g;
      gsize k = 0;
      for (; k + 8 <= dim; k += 8)
        {
          __m256 r[8];
          for (gsize q = 0; q < 8; q++)
            r[q] = _mm256_loadu_ps (src + q * dim + k);
          lk_kernel_transpose8 (r);
          for (gsize m = 0; m < 8; m++)
            _mm256_store_ps (dst + (k + m) * LK_BLOCK_NR, r[m]);
        }
      for (; k < dim; k++)
        for (gsize q = 0; q < 8; q++)
          dst[k * LK_BLOCK_NR + q] = src[q * dim + k];
    }
}

static float
avx2_dot_fast (const float *a, const float *b, gsize dim)
{
  __m256 acc0 = _mm256_setzero_ps ();
  __m256 acc1 = _mm256_setzero_ps ();
  gsize k = 0;

  for (; k + 16 <= dim; k += 16)
    {
      acc0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k), _mm256_loadu_ps (b + k), acc0);
      acc1 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k + 8), _mm256_loadu_ps (b + k + 8), acc1);
    }
  if (k + 8 <= dim)
    {
      acc0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + k), _mm256_loadu_ps (b + k), acc0);
      k += 8;
    }

  __m256 sum = _mm256_add_ps (acc0, acc1);
  __m128 half = _mm_add_ps (_mm256_castps256_ps128 (sum), _mm256_extractf128_ps (sum, 1));
  half = _mm_add_ps (half, _mm_movehl_ps (half, half));
  half = _mm_add_ss (half, _mm_movehdup_ps (half));
  float total = _mm_cvtss_f32 (half);
  for (; k < dim; k++)
    total += a[k] * b[k];
  return total;
}

static float
avx2_dot (const float *a, const float *b, gsize dim)
{
  return lk_dot_canonical (a, b, dim);
}

static gsize
avx2_tile (const LkTile *t, LkHit *hits)
{
  return block_tile (t, hits);
}

static gsize
avx2_tile_per_pair (const LkTile *t, LkHit *hits)
{
  return lk_kernel_tile_loop (t, hits, lk_dot_canonical);
}

static void
avx2_recheck (const float *embeddings, gsize dim, LkHit *hits, gsize n)
{
  lk_kernel_recheck_ymm (embeddings, dim, hits, n);
}

const LkKernel lk_kernel_avx2 = {
  LK_KERNEL_AVX2, "avx2",        LK_CPU_AVX2 | LK_CPU_FMA, avx2_dot,
  avx2_tile,      avx2_dot_fast, avx2_tile_per_pair,       avx2_recheck,
};
