/* Compiled with -mavx512f; called only when lk_cpu_features() has AVX512F. */
#include <immintrin.h>

#include "lk-peak-kernels.h"

double
lk_peak_block_avx512 (guint64 iterations, float one)
{
  __m512 acc[LK_PEAK_CHAINS];
  __m512 m = _mm512_set1_ps (one);
  __m512 c = _mm512_set1_ps (one);

  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    acc[k] = _mm512_setzero_ps ();
  for (guint64 it = 0; it < iterations; it++)
    {
      /* Unrolled, so the chains live in registers, not on the stack. */
#pragma GCC unroll 16
      for (int k = 0; k < LK_PEAK_CHAINS; k++)
        acc[k] = _mm512_fmadd_ps (acc[k], m, c);
      /* Keeps m opaque so the compiler cannot turn a·1 + 1 into an add. */
      __asm__ volatile("" : "+v"(m));
    }

  float lanes[16];
  double total = 0.0;
  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    {
      _mm512_storeu_ps (lanes, acc[k]);
      for (int l = 0; l < 16; l++)
        total += lanes[l];
    }
  return total;
}
