/* Compiled with -mavx512f -mavx512bf16; called only when lk_cpu_features()
 * has both. vdpbf16ps: 32 multiply-adds a zmm instruction. */
#include <immintrin.h>

#include "lk-peak-kernels.h"

double
lk_peak_block_bf16 (guint64 iterations, float one)
{
  __m512 acc[LK_PEAK_CHAINS];
  /* Both bf16 halves of every dword `one`: each instruction adds 2 a lane. */
  __m512bh x = _mm512_cvtne2ps_pbh (_mm512_set1_ps (one), _mm512_set1_ps (one));

  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    acc[k] = _mm512_setzero_ps ();
  for (guint64 it = 0; it < iterations; it++)
    {
#pragma GCC unroll 16
      for (int k = 0; k < LK_PEAK_CHAINS; k++)
        acc[k] = _mm512_dpbf16_ps (acc[k], x, x);
      __asm__ volatile("" : "+v"(x));
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
