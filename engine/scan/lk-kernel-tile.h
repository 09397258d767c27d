/* lk-kernel-tile.h — the per-pair tile loop, shared by every ISA's kernel
 *
 * Private to the kernel files and lk-kernels.c. Each of them includes this and
 * instantiates the loop with its canonical dot (lk-dot-canonical.h), so the
 * loop is compiled with that file's flags and the dot is inlined into it
 * rather than called through a pointer per pair. It is each kernel's
 * `tile_per_pair`: the obvious tile the register-blocked one
 * (lk-kernel-block.h) replaced, kept as the arm the tile-fused speed gate
 * races, and returning the same bits.
 *
 * The rules are tested before the dot, not after: a pair of one photo or of
 * two probes costs two loads instead of 2·dim flops. The register-blocked
 * tile computes the whole micro-tile and masks afterwards; either meets the
 * contract of LkTileFunc.
 */
#pragma once

#include "lk-dot-canonical.h"
#include "lk-kernels.h"

/* Each defined in its own lk-kernel-ISA.c, and only where it is built. */
extern const LkKernel lk_kernel_portable;
extern const LkKernel lk_kernel_avx2;
extern const LkKernel lk_kernel_avx512;
extern const LkKernel lk_kernel_neon;

static inline __attribute__ ((always_inline)) gsize
lk_kernel_tile_loop (const LkTile *t, LkHit *hits, LkDotFunc dot)
{
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      /* The diagonal: nothing at or before i is this row's business. */
      gsize start = MAX (t->col_begin, i + 1);
      const float *a = t->embeddings + i * t->dim;
      guint64 photo_a = t->photo[i];
      gboolean gallery_a = t->gallery[i] != 0;

      for (gsize j = start; j < t->col_end; j++)
        {
          if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
            continue;
          float c = dot (a, t->embeddings + j * t->dim, t->dim);
          if (c >= t->tau)
            hits[n++] = (LkHit){ (guint32) i, (guint32) j, c };
        }
    }
  return n;
}

/* LkKernel.recheck: eight pairs' canonical chains side by side. Each chain
 * is lk_dot_canonical's — one fmaf per element, in ascending k, from 0 — so
 * every cosine is its bits; interleaving independent chains only lets the
 * FMAs of eight pairs overlap, where one chain waits the FMA's latency (4
 * cycles on current x86 cores) per element: 2,048 cycles per pair at 512-d.
 * Written out by hand, not as a loop over an array of accumulators, so that
 * -O2 keeps them in registers. */
#define LK_RECHECK_STEP(r) c##r = fmaf (a##r[k], b##r[k], c##r)

static inline __attribute__ ((always_inline)) void
lk_kernel_recheck_loop (const float *e, gsize dim, LkHit *h, gsize n)
{
  gsize p = 0;

  for (; p + 8 <= n; p += 8)
    {
      const float *a0 = e + h[p].i * dim, *b0 = e + h[p].j * dim;
      const float *a1 = e + h[p + 1].i * dim, *b1 = e + h[p + 1].j * dim;
      const float *a2 = e + h[p + 2].i * dim, *b2 = e + h[p + 2].j * dim;
      const float *a3 = e + h[p + 3].i * dim, *b3 = e + h[p + 3].j * dim;
      const float *a4 = e + h[p + 4].i * dim, *b4 = e + h[p + 4].j * dim;
      const float *a5 = e + h[p + 5].i * dim, *b5 = e + h[p + 5].j * dim;
      const float *a6 = e + h[p + 6].i * dim, *b6 = e + h[p + 6].j * dim;
      const float *a7 = e + h[p + 7].i * dim, *b7 = e + h[p + 7].j * dim;
      float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;

      for (gsize k = 0; k < dim; k++)
        {
          LK_RECHECK_STEP (0);
          LK_RECHECK_STEP (1);
          LK_RECHECK_STEP (2);
          LK_RECHECK_STEP (3);
          LK_RECHECK_STEP (4);
          LK_RECHECK_STEP (5);
          LK_RECHECK_STEP (6);
          LK_RECHECK_STEP (7);
        }
      h[p].cos = c0;
      h[p + 1].cos = c1;
      h[p + 2].cos = c2;
      h[p + 3].cos = c3;
      h[p + 4].cos = c4;
      h[p + 5].cos = c5;
      h[p + 6].cos = c6;
      h[p + 7].cos = c7;
    }
  for (; p < n; p++)
    h[p].cos = lk_dot_canonical (e + h[p].i * dim, e + h[p].j * dim, dim);
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* Lanes q of r[0 … 7] become element q of each: r[m] lane q = old r[q]
 * lane m. 24 shuffles, the 8 × 8 transpose lk-kernel-avx2.c packs with. */
static inline __attribute__ ((always_inline)) void
lk_kernel_transpose8 (__m256 r[8])
{
  __m256 t0 = _mm256_unpacklo_ps (r[0], r[1]), t1 = _mm256_unpackhi_ps (r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps (r[2], r[3]), t3 = _mm256_unpackhi_ps (r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps (r[4], r[5]), t5 = _mm256_unpackhi_ps (r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps (r[6], r[7]), t7 = _mm256_unpackhi_ps (r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps (t0, t2, 0x44), s1 = _mm256_shuffle_ps (t0, t2, 0xEE);
  __m256 s2 = _mm256_shuffle_ps (t1, t3, 0x44), s3 = _mm256_shuffle_ps (t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps (t4, t6, 0x44), s5 = _mm256_shuffle_ps (t4, t6, 0xEE);
  __m256 s6 = _mm256_shuffle_ps (t5, t7, 0x44), s7 = _mm256_shuffle_ps (t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps (s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps (s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps (s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps (s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps (s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps (s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps (s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps (s3, s7, 0x31);
}

/* Pairs h[p … p + 8) (fewer at the list's end) by the general path: eight
 * pairs in the eight lanes of one ymm accumulator. Eight consecutive
 * elements of each pair's two rows are loaded (sixteen loads), both 8 × 8
 * blocks transposed so that vector m holds element k + m of every pair, and
 * eight vfmadd231ps follow in ascending k: lane q is pair q's chain fmaf
 * (a[k], b[k], c) from +0 in index order, the canonical bits (vfmadd rounds
 * once, like fmaf, and the default MXCSR keeps denormals). A dim that is not
 * a multiple of eight finishes each lane's chain with scalar fmaf, in order;
 * a last group of fewer than eight pairs repeats its last pair in the idle
 * lanes. The interleaved scalar chains of lk_kernel_recheck_loop issue two
 * loads per FMA and spill their sixteen row pointers; this issues a load and
 * three shuffles per eight FMAs: on the 18,143-face sample's pairs, about
 * 40 % less time a pair (docs/benchmarks.md). */
static inline __attribute__ ((always_inline)) void
lk_kernel_recheck_ymm_group (const float *e, gsize dim, LkHit *h, gsize p, gsize n)
{
  const float *a[8], *b[8];
  for (gsize q = 0; q < 8; q++)
    {
      const LkHit *pair = &h[MIN (p + q, n - 1)];
      a[q] = e + (gsize) pair->i * dim;
      b[q] = e + (gsize) pair->j * dim;
    }
  __m256 acc = _mm256_setzero_ps ();
  gsize k = 0;
  for (; k + 8 <= dim; k += 8)
    {
      __m256 ra[8], rb[8];
      for (gsize q = 0; q < 8; q++)
        {
          ra[q] = _mm256_loadu_ps (a[q] + k);
          rb[q] = _mm256_loadu_ps (b[q] + k);
        }
      lk_kernel_transpose8 (ra);
      lk_kernel_transpose8 (rb);
      for (gsize m = 0; m < 8; m++)
        acc = _mm256_fmadd_ps (ra[m], rb[m], acc);
    }
  float c[8];
  _mm256_storeu_ps (c, acc);
  for (gsize q = 0; q < 8 && p + q < n; q++)
    {
      float x = c[q];
      for (gsize kk = k; kk < dim; kk++)
        x = fmaf (a[q][kk], b[q][kk], x);
      h[p + q].cos = x;
    }
}

/* G (1 to 3) groups of eight pairs that all share their first row a:
 * h[0 … 8G). Lane q of group g is pair 8g + q's chain, as in the general
 * path, but a's elements are broadcast from memory instead of transposed
 * (half the shuffles), and the G chains interleave, so that the FMA's latency
 * is waited once for 8G pairs instead of once for 8. */
static inline __attribute__ ((always_inline)) void
lk_kernel_recheck_ymm_shared (const float *e, gsize dim, LkHit *h, gsize G)
{
  const float *a = e + (gsize) h[0].i * dim;
  __m256 acc[3];
  gsize k = 0;

  for (gsize g = 0; g < G; g++)
    acc[g] = _mm256_setzero_ps ();
  for (; k + 8 <= dim; k += 8)
    for (gsize g = 0; g < G; g++)
      {
        __m256 rb[8];
        for (gsize q = 0; q < 8; q++)
          rb[q] = _mm256_loadu_ps (e + (gsize) h[8 * g + q].j * dim + k);
        lk_kernel_transpose8 (rb);
        for (gsize m = 0; m < 8; m++)
          acc[g] = _mm256_fmadd_ps (_mm256_broadcast_ss (a + k + m), rb[m], acc[g]);
      }
  for (gsize g = 0; g < G; g++)
    {
      float c[8];
      _mm256_storeu_ps (c, acc[g]);
      for (gsize q = 0; q < 8; q++)
        {
          const float *b = e + (gsize) h[8 * g + q].j * dim;
          float x = c[q];
          for (gsize kk = k; kk < dim; kk++)
            x = fmaf (a[kk], b[kk], x);
          h[8 * g + q].cos = x;
        }
    }
}

/* LkKernel.recheck with vectors, for the x86 kernels. A scan hands its
 * survivors over sorted by row (lk-scan.c, recheck_deferred), and at the
 * 18,143-face sample 93 % of its pairs lie in runs of 24 or more sharing
 * their first row: those go 24 at a time through the shared path, shorter
 * runs 16 or 8 at a time, the rest eight by eight through the general path.
 * One chain of eight pairs waits the FMA's latency (4 cycles) per element,
 * 256 cycles a pair at 512-d, whatever the shuffles cost. By row through
 * this is about 1.4× as fast as by column through the general path alone
 * (bench-recheck; docs/benchmarks.md); one group at a time gains little. */
static inline __attribute__ ((always_inline)) void
lk_kernel_recheck_ymm (const float *e, gsize dim, LkHit *h, gsize n)
{
  gsize p = 0;

  while (p < n)
    {
      gsize run = 1;
      while (p + run < n && run < 24 && h[p + run].i == h[p].i)
        run++;
      switch (run / 8)
        {
          case 0:
            lk_kernel_recheck_ymm_group (e, dim, h, p, n);
            p += MIN (8, n - p);
            break;
          case 1:
            lk_kernel_recheck_ymm_shared (e, dim, h + p, 1);
            p += 8;
            break;
          case 2:
            lk_kernel_recheck_ymm_shared (e, dim, h + p, 2);
            p += 16;
            break;
          default:
            lk_kernel_recheck_ymm_shared (e, dim, h + p, 3);
            p += 24;
            break;
        }
    }
}
#endif
