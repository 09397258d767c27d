/* lk-dot-canonical.h — the one summation order every kernel's cosine follows
 *
 * A cosine of two rows of `dim` floats is, bit for bit,
 *
 *   c = 0.0f;
 *   for (k = 0; k < dim; k++)
 *     c = fmaf (a[k], b[k], c);
 *
 * one sequential chain of fused multiply-adds over k, each rounded once, in
 * ascending k, starting from +0. Every kernel's `tile` and `dot`
 * (lk-kernels.h) return exactly these bits, so the scan's answer does not
 * depend on the processor, the kernel or the thread count. It is the order a
 * broadcast-form register-blocked micro-kernel computes naturally: each lane
 * of each accumulator is one output's chain, k in the loop, no reduction at
 * the end — so the fast path pays nothing for it (lk-kernel-block.h).
 *
 * This function is the definition and the naive reference the tests compare
 * against; anything that re-checks a pair (a low-precision prefilter's
 * survivors, say) calls it, or a kernel's `dot`, and gets the same bits.
 *
 * fmaf is exact by the C standard (one rounding of a·b + c), with or without
 * a hardware FMA: compiled where the target has one, GCC and Clang emit the
 * instruction; elsewhere the call goes to libm, which emulates it exactly.
 * Never write the chain as `c += a[k] * b[k]` and hope for contraction: with
 * -ffp-contract=off, or on a target without FMA, that rounds twice.
 */
#pragma once

#include <glib.h>
#include <math.h>

static inline float
lk_dot_canonical (const float *a, const float *b, gsize dim)
{
  float c = 0.0f;

  for (gsize k = 0; k < dim; k++)
    c = fmaf (a[k], b[k], c);
  return c;
}
