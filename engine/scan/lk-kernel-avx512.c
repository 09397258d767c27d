/* lk-kernel-avx512.c — sixteen-wide fused multiply-add (x86-64 with AVX-512F)
 *
 * Compiled alone with -mavx512f -mavx512vl -mfma (GCC's -mavx512f does not
 * imply the VEX FMA the ymm re-check of lk-kernel-tile.h uses; every
 * AVX-512F CPU has it, and VL gives that re-check 32 ymm registers: see
 * avx512_recheck); handed out only when lk_cpu_features() has seen AVX-512F
 * and VL with the ZMM state enabled by the OS, and FMA.
 *
 * `tile` is the register-blocked template of lk-kernel-block.h, the AVX2
 * kernel's code with another vector type: 6 × 32, twelve zmm accumulators,
 * two panel vectors and one broadcast, every lane one output's canonical
 * chain, and the epilogue's compares straight into mask registers. On a
 * core that runs 512-bit operations as two 256-bit halves it scans as fast
 * as the AVX2 kernel, within noise (bench-scan); the block shape (12 × 32
 * would fit AVX-512's 32 registers) is not tuned.
 *
 * `dot` is the canonical chain (a scalar FMA per element); `dot_fast` the
 * seed's per-pair dot, two accumulators of sixteen lanes and a masked tail
 * load, kept only for the dot-512d race.
 */
#include "config.h"

#include <immintrin.h>

#include "lk-kernel-tile.h"

typedef __m512 LkVec;
typedef __mmask16 LkMask;

#define LK_BLOCK_MR 6
#define LK_BLOCK_NV 2
#define LK_BLOCK_VL 16

#define lk_v_zero()       _mm512_setzero_ps ()
#define lk_v_set1(x)      _mm512_set1_ps (x)
#define lk_v_load(p)      _mm512_load_ps (p)
#define lk_v_bcast(p)     _mm512_set1_ps (*(p))
#define lk_v_store(p, v)  _mm512_store_ps ((p), (v))
#define lk_v_fma(a, b, c) _mm512_fmadd_ps ((a), (b), (c))
#define lk_v_ge(v, t)     _mm512_cmp_ps_mask ((v), (t), _CMP_GE_OQ)
#define lk_m_or(m, n)     ((LkMask) ((m) | (n)))
#define lk_m_bits(m)      ((unsigned) (m))
#define LK_V_PIN(v)       __asm__("" : "+v"(v))

#include "lk-kernel-block.h"

static float
avx512_dot_fast (const float *a, const float *b, gsize dim)
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
  return lk_dot_canonical (a, b, dim);
}

static gsize
avx512_tile (const LkTile *t, LkHit *hits)
{
  return block_tile (t, hits);
}

static gsize
avx512_tile_per_pair (const LkTile *t, LkHit *hits)
{
  return lk_kernel_tile_loop (t, hits, lk_dot_canonical);
}

/* The AVX2 code, compiled with AVX-512VL: its sixteen row pointers, sixteen
 * loaded vectors and their transposes fit the 32 ymm registers, where the AVX2
 * kernel's sixteen spill. 11 % faster a pair (20,000 pairs of 2,048 rows, the
 * rows in L3: 239 against 269 TSC cycles a pair). Every AVX-512 CPU but the
 * first many-core coprocessors has VL, which the kernel therefore needs. */
static void
avx512_recheck (const float *embeddings, gsize dim, LkHit *hits, gsize n)
{
  lk_kernel_recheck_ymm (embeddings, dim, hits, n);
}

const LkKernel lk_kernel_avx512 = {
  LK_KERNEL_AVX512,     "avx512",       LK_CPU_AVX512F | LK_CPU_AVX512VL | LK_CPU_FMA,
  avx512_dot,           avx512_tile,    avx512_dot_fast,
  avx512_tile_per_pair, avx512_recheck,
};
