/* lk-kernel-avx512.c — sixteen-wide fused multiply-add (x86-64 with AVX-512F)
 *
 * Compiled alone with -mavx512f; handed out only when lk_cpu_features() has
 * seen AVX-512F with the ZMM state enabled by the OS. The tail uses a masked
 * load, so a dimension that is not a multiple of sixteen costs one more FMA
 * rather than a scalar loop, and the mask never reads past the row.
 *
 * Two accumulators for the same reason as the AVX2 kernel: latency, not
 * width, is what a single chain runs into.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-kernel-tile.h"

static inline float
dot_avx512 (const float *a, const float *b, gsize dim)
{
  __m512 acc0 = _mm512_setzero_ps ();
  __m512 acc1 = _mm512_setzero_ps ();
  gsize k = 0;

  for (; k + 32 <= dim; k += 32)
    {
      acc0 = _mm512_fmadd_ps (_mm512_loadu_ps (a + k), _mm512_loadu_ps (b + k), acc0);
      acc1 = _mm512_fmadd_ps (_mm512_loadu_ps (a + k + 16), _mm512_loadu_ps (b + k + 16), acc1);
    }
  if (k + 16 <= dim)
    {
      acc0 = _mm512_fmadd_ps (_mm512_loadu_ps (a + k), _mm512_loadu_ps (b + k), acc0);
      k += 16;
    }
  if (k < dim)
    {
      __mmask16 m = (__mmask16) ((1u << (dim - k)) - 1);
      acc1 = _mm512_fmadd_ps (_mm512_maskz_loadu_ps (m, a + k), _mm512_maskz_loadu_ps (m, b + k),
                              acc1);
    }
  return _mm512_reduce_add_ps (_mm512_add_ps (acc0, acc1));
}

static float
avx512_dot (const float *a, const float *b, gsize dim)
{
  return dot_avx512 (a, b, dim);
}

static gsize
avx512_tile (const LkTile *tile, LkHit *hits)
{
  return lk_kernel_tile_loop (tile, hits, dot_avx512);
}

const LkKernel lk_kernel_avx512 = {
  LK_KERNEL_AVX512, "avx512", LK_CPU_AVX512F, avx512_dot, avx512_tile,
};
