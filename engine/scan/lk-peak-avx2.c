/* Compiled with -mavx2 -mfma; called only when lk_cpu_features() has both. */
#include <immintrin.h>

#include "lk-peak-kernels.h"

double
lk_peak_block_avx2 (guint64 iterations, float one)
{
  __m256 acc[LK_PEAK_CHAINS];
  __m256 m = _mm256_set1_ps (one);
  __m256 c = _mm256_set1_ps (one);

  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    acc[k] = _mm256_setzero_ps ();
  for (guint64 it = 0; it < iterations; it++)
    {
      /* Unrolled, so the chains live in registers, not on the stack. */
#pragma GCC unroll 16
      for (int k = 0; k < LK_PEAK_CHAINS; k++)
        acc[k] = _mm256_fmadd_ps (acc[k], m, c);
      /* Keeps m opaque so the compiler cannot turn a·1 + 1 into an add. */
      __asm__ volatile("" : "+x"(m));
    }

  float lanes[8];
  double total = 0.0;
  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    {
      _mm256_storeu_ps (lanes, acc[k]);
      for (int l = 0; l < 8; l++)
        total += lanes[l];
    }
  return total;
}
