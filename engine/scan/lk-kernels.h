/* lk-kernels.h — the scan's arithmetic: one dot product and one tile per ISA
 *
 * The scan (lk-scan.c) owns everything that is written once: the cheap
 * rejection bound, row blocks, column tiles, threads, progress, stitching and
 * the exact probability check. A kernel owns only the arithmetic of one tile:
 * given rows [row_begin, row_end) and columns [col_begin, col_end) of the
 * upper triangle, it reports every pair (i, j), i < j, that passes the photo
 * and gallery rules and whose cosine reaches `tau`. That is the BLIS split:
 * the driver never sees a single dot product. Every kernel's tile is a
 * register-blocked micro-kernel (an MR × NR block of accumulators over packed
 * column panels, the rules applied in its epilogue), one template for every
 * ISA (lk-kernel-block.h); a lower-precision prefilter would be one more
 * kernel behind the same pointer.
 *
 * One canonical summation order. Every cosine any kernel's `tile` or `dot`
 * returns is, bit for bit,
 *
 *   c = 0.0f; for (k = 0; k < dim; k++) c = fmaf (a[k], b[k], c);
 *
 * — lk_dot_canonical() in lk-dot-canonical.h, the definition and the tests'
 * naive reference. So the scan's pairs, and their probabilities, are the same
 * on every processor, kernel and thread count. Only `dot_fast` departs from
 * it (several lanes summed at the end), and nothing in the scan calls it.
 *
 * Each ISA's kernel lives in its own file compiled with its own flags into its
 * own static library (engine/meson.build), so nothing outside it can be
 * vectorised for an instruction set the CPU may lack. The kernel is chosen
 * once per scan from lk_cpu_features(). lk-scan still counts every pair whose
 * cosine sits within LK_SCAN_NEAR_BOUNDARY of its bar: a kernel no longer
 * moves such a pair, but the float bar's own rounding can.
 */
#pragma once

#include <glib.h>

#include "timing/lk-cpu.h"
#include "lk-scan.h"

G_BEGIN_DECLS

/* The dot product of two rows of `dim` floats, no alignment required. */
typedef float (*LkDotFunc) (const float *a, const float *b, gsize dim);

/* One pair a tile reports: it passed the rules and its cosine reached tau. */
typedef struct
{
  guint32 i;
  guint32 j;
  float cos;
} LkHit;

/* One tile of the upper triangle. Only pairs with i < j inside the two ranges
 * are the tile's business; a tile that straddles the diagonal computes only
 * the part above it. */
typedef struct
{
  const float *embeddings; /* rows of `dim` floats, row-major, row i at i × dim */
  gsize dim;
  const guint64 *photo;  /* pairs of one photo are never reported */
  const guint8 *gallery; /* pairs of two non-gallery faces are never reported */
  gsize row_begin;
  gsize row_end;
  gsize col_begin;
  gsize col_end;
  float tau; /* report cos >= tau; -INFINITY reports every allowed pair */
  /* A first pass asks for each survivor's float row as it finds it, for a
   * re-check that follows the tile (lk-prefilter-private.h); not when the
   * survivors wait for the end of a block (lk-scan.c, scan_block_deferred). */
  gboolean prefetch_survivors;
} LkTile;

/* Writes the tile's hits to `hits` (room for (row_end - row_begin) ×
 * (col_end - col_begin) of them) and returns how many. Each row's hits come
 * in ascending j; rows may interleave (a register-blocked kernel finishes
 * several rows at once), and the scan restores (i, j) order per block. Each
 * hit's cosine is lk_dot_canonical()'s, bit for bit, whatever the kernel and
 * wherever the pair sits in the tile. */
typedef gsize (*LkTileFunc) (const LkTile *tile, LkHit *hits);

/* The canonical cosine of each of `n` arbitrary pairs of rows: hits[h].cos =
 * lk_dot_canonical (row hits[h].i, row hits[h].j), bit for bit; i and j are
 * left alone. For re-checking a first pass's survivors, which are scattered:
 * a tile around each would pack a panel for one pair. */
typedef void (*LkRecheckFunc) (const float *embeddings, gsize dim, LkHit *hits, gsize n);

typedef struct
{
  LkKernelId id;
  const char *name;    /* "portable", "avx2", "avx512", "neon" */
  LkCpuFeatures needs; /* every one of these must be present to run it */
  LkDotFunc dot;       /* canonical: lk_dot_canonical's bits (one latency-bound chain) */
  LkTileFunc tile;     /* canonical, register-blocked: what the scan runs */
  /* The kernel's fastest per-pair dot: several independent lanes summed at
   * the end, so NOT canonical (within about 2·dim·2^-24·Σ|a_k b_k| of it).
   * Only for the dot-512d race of SIMD against portable code; never used
   * for an answer. */
  LkDotFunc dot_fast;
  /* The per-pair loop over `dot` (lk-kernel-tile.h): the same hits, bit for
   * bit, as `tile`; the arm the tile-fused gate races it against. */
  LkTileFunc tile_per_pair;
  /* Canonical cosines of scattered pairs (lk-kernel-tile.h): eight chains
   * side by side (in the lanes of one vector on x86), so the FMA's latency
   * is paid once per eight pairs. */
  LkRecheckFunc recheck;
} LkKernel;

/* The kernels built into this binary, portable first; `n` receives how many.
 * Built is not runnable: check lk_kernel_runs_here(). */
const LkKernel *const *lk_kernels_compiled (gsize *n);

gboolean lk_kernel_runs_here (const LkKernel *kernel);

#define LK_KERNEL_ERROR (lk_kernel_error_quark ())
GQuark lk_kernel_error_quark (void);

typedef enum
{
  LK_KERNEL_ERROR_UNSUPPORTED, /* not built into this program, or this processor cannot run it */
} LkKernelError;

/* The kernel for `id` (AUTO: the widest this CPU runs), or NULL with
 * LK_KERNEL_ERROR_UNSUPPORTED when it is not built in or this processor
 * lacks an instruction it needs. */
const LkKernel *lk_kernel_get (LkKernelId id, GError **error);

/* "auto", "portable", "avx2", "avx512", "neon" ↔ LkKernelId. */
const char *lk_kernel_id_to_string (LkKernelId id);
gboolean lk_kernel_id_from_string (const char *name, LkKernelId *id);

G_END_DECLS
