/* Compiled with the project's baseline flags: what a CPU without a known SIMD
 * extension does. Two flops (a multiply and an add) per lane per round. */
#include "lk-peak-kernels.h"

double
lk_peak_block_portable (guint64 iterations, float one)
{
  float acc[LK_PEAK_CHAINS] = { 0 };
  float m = one;

  for (guint64 it = 0; it < iterations; it++)
    {
      /* Unrolled, so the chains live in registers, not on the stack. */
#pragma GCC unroll 16
      for (int k = 0; k < LK_PEAK_CHAINS; k++)
        acc[k] = acc[k] * m + one;
      __asm__ volatile("" : "+g"(m));
    }

  double total = 0.0;
  for (int k = 0; k < LK_PEAK_CHAINS; k++)
    total += acc[k];
  return total;
}
