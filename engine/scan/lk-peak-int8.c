/* Compiled with -mavx512f -mavx512vnni; called only when lk_cpu_features()
 * has both. vpdpbusd: 64 multiply-adds of bytes a zmm instruction. */
#include <immintrin.h>

#include "lk-peak-kernels.h"

double
lk_peak_block_int8 (guint64 iterations, float one)
{
  __m512i acc[LK_PEAK_CHAINS];
  /* Every byte `one`: each instruction adds 4 a lane. */
  __m512i x = _mm512_set1_epi8 ((char) (int) one);

  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    acc[k] = _mm512_setzero_si512 ();
  for (guint64 it = 0; it < iterations; it++)
    {
#pragma GCC unroll 16
      for (int k = 0; k < LK_PEAK_CHAINS; k++)
        acc[k] = _mm512_dpbusd_epi32 (acc[k], x, x);
      __asm__ volatile("" : "+v"(x));
    }

  gint32 lanes[16];
  double total = 0.0;
  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    {
      _mm512_storeu_si512 (lanes, acc[k]);
      for (int l = 0; l < 16; l++)
        total += lanes[l];
    }
  return total;
}
