/* lk-prefilter.h — an exact bfloat16 first pass in front of the float32 kernel
 *
 * The library's unit rows are rounded to bfloat16 once per scan, and each
 * tile is first scanned at twice the float32 rate with vdpbf16ps. A pair is
 * rejected there only when its bf16 cosine lies below the kernel's bar by
 * more than LK_PREFILTER's proven error bound (lk_prefilter_bound_for(),
 * derived in lk-prefilter.c); every survivor is decided again by the scan's
 * own float32 kernel. So the scan's answer with the prefilter is its answer
 * without it, pair for pair and bit for bit: the bf16 pass only ever removes
 * pairs the float32 kernel would have rejected too.
 *
 * Two implementations of one pass, bit for bit the same sums: the native
 * AVX-512 BF16 one (lk-prefilter-avx512bf16.c, chosen only where cpuid
 * reports AVX512_BF16 and the OS saves the ZMM state), and a portable C
 * emulation of vdpbf16ps (lk-prefilter.c), which is what the tests run on a
 * CPU without the instruction. The emulation is far slower than the float32
 * kernel; nothing picks it but an explicit LK_PREFILTER_BF16_PORTABLE.
 *
 * And the same idea in integers, for CPUs without BF16: rows quantised to
 * int16 with one scale, exact integer dots with vpmaddwd on AVX2
 * (lk-prefilter-int16-avx2.c) or in portable C. Exact sums leave only the
 * quantisation in its bound, a third of bf16's. Whether a scan runs either
 * pass is measured, not assumed (lk-tune.h): on an AVX-512 BF16 CPU the
 * scan-first-pass gate reads bf16 about 1.6× and int16 1.25× faster than
 * float32 alone on 8,192 faces (docs/benchmarks.md).
 *
 * And in bytes, where the CPU has AVX-512 VNNI: rows quantised to int8 with
 * a scale per row, exact integer dots with vpdpbusd (64 multiply-adds an
 * instruction; lk-prefilter-int8-avx512vnni.c), a per-pair bound from the
 * measured quantisation error (lk-prefilter.c, "The int8 pass"): on the
 * same CPU about 2.3× faster than float32 alone, where bf16 reads 1.65× in
 * the same gate run. Where the CPU has AVX-VNNI and no AVX-512 (recent
 * desktop cores), the same pass on ymm with the VEX-encoded vpdpbusd
 * (lk-prefilter-int8-avxvnni.c, code in lk-prefilter-int8-ymm.h): not
 * runnable on the machines this is developed on, so its code is proven
 * there with vpdpbusd EVEX-encoded and emulated in AVX2,
 * against the portable pass, and the measured choice never races it where
 * cpuid lacks AVX-VNNI.
 *
 * And in bytes on AVX2 alone (lk-prefilter-int7-avx2.c): the int8 rows with
 * |q| <= 31, biased by 32, so that vpmaddubsw's int16 lanes sum eight
 * dwords before one widening (lk-prefilter.c, "The int7 pass"): 2.25
 * multiply instructions per 64 multiply-adds where int16 spends 4. The
 * AVX2-only route with it reads 2.2× OpenBLAS SGEMM where int16's reads
 * 1.5× (AVX2 code on an AVX-512 CPU; never measured on an AVX2-only CPU).
 *
 * And on Intel AMX tiles (lk-prefilter-int8-amx.c, code in
 * lk-prefilter-int8-amx.h): the int8 rows and their bound as they
 * stand, the integer dots by TDPBUSD (u8 × s8 → s32, vpdpbusd's signedness)
 * on 16 × 16 accumulator tiles, the column panels already in the B tiles'
 * four-byte-interleaved layout. Offered only where lk-cpu reports AMX (cpuid,
 * XCR0's tile state, the kernel's arch_prctl permission), so the measured
 * choice races it only there. NEVER RUN ON SILICON by this project: its
 * machines have no AMX, its code runs in the tests on an emulation of the
 * tile operations (lk-amx.h), and no speed of it is known.
 *
 * Private to the engine: lk-scan.c drives it, tests/test-prefilter.c proves it.
 */
#pragma once

#include <glib.h>

#include "timing/lk-cpu.h"
#include "lk-kernels.h"
#include "lk-scan.h"

G_BEGIN_DECLS

typedef struct _LkPrefilter LkPrefilter;

/* The low-precision pass over one tile: every pair (i, j) of the tile that
 * the photo and gallery rules allow and that it cannot rule out at
 * tile->tau, written to `survivors` (room for the tile's rows × columns)
 * with its low-precision cosine, each row's in ascending j; returns how
 * many. */
typedef gsize (*LkPrefilterPassFunc) (const LkPrefilter *prefilter, const LkTile *tile,
                                      LkHit *survivors);

typedef enum
{
  LK_PREFILTER_FORMAT_BF16,  /* dword = two bf16 (vdpbf16ps's operand) */
  LK_PREFILTER_FORMAT_INT16, /* dword = two int16 (vpmaddwd's operand) */
  LK_PREFILTER_FORMAT_INT8,  /* dword = four int8 (vpdpbusd's operands), a scale per row */
  LK_PREFILTER_FORMAT_INT7,  /* the same with |q| <= LK_PREFILTER_INT7_M, biased by
                              * LK_PREFILTER_INT7_BIAS (vpmaddubsw's operands) */
} LkPrefilterFormat;

typedef struct
{
  LkPrefilterId id;
  const char *name; /* "bf16-avx512", "int16-avx2", "int8-avx512vnni", "…-portable" */
  LkCpuFeatures needs;
  LkPrefilterPassFunc pass;
  LkPrefilterFormat format;
} LkPrefilterPass;

/* The passes built into this binary, portable first. */
const LkPrefilterPass *const *lk_prefilter_passes_compiled (gsize *n);
gboolean lk_prefilter_pass_runs_here (const LkPrefilterPass *pass);

#define LK_PREFILTER_ERROR (lk_prefilter_error_quark ())
GQuark lk_prefilter_error_quark (void);

typedef enum
{
  LK_PREFILTER_ERROR_UNSUPPORTED, /* not built into this program, or this processor cannot run it */
} LkPrefilterError;

/* What `id` means here: TRUE with *pass the pass to run, or NULL for none
 * (OFF, or AUTO on a CPU without AVX-512 BF16); FALSE with
 * LK_PREFILTER_ERROR_UNSUPPORTED when BF16 was asked for and cannot run. */
gboolean lk_prefilter_pass_get (LkPrefilterId id, const LkPrefilterPass **pass, GError **error);

/* Rounds `n` rows of `dim` floats (finite, each norm within 0.001 of 1, as
 * lk-scan validates) to bf16 and measures the largest row norm. */
LkPrefilter *lk_prefilter_new (const LkPrefilterPass *pass, const float *embeddings, gsize n,
                               gsize dim);
/* The same, the int8 rows quantised on up to `threads` threads (the scan's
 * own count: the rows are the same bytes for any count). */
LkPrefilter *lk_prefilter_new_threaded (const LkPrefilterPass *pass, const float *embeddings,
                                        gsize n, gsize dim, guint threads);
void lk_prefilter_free (LkPrefilter *prefilter);

/* Rows below `row` will never be read again, neither as rows nor as
 * columns: the pages that hold only their panels go back to the system
 * (madvise MADV_DONTNEED; nothing elsewhere). The scan calls it as its
 * finished blocks pass (columns run from a block's first row to the end), so
 * the low-precision rows shrink while the pair list grows: at 100,000 × 512
 * the int8 panels are 51 MB (bf16 and int16 102 MB) and the pairs 201 MB, and
 * with most pairs found in the early, long rows, the scan's own memory
 * peaked 3 MB above the pairs where it had kept every panel to the end. */
void lk_prefilter_release_below (LkPrefilter *prefilter, gsize row);
/* Computes what the pass needs for tiles at `tau` once, before threads share
 * the prefilter (the int8 rows' bars: computed per row and tile, they took
 * 2.8% of an 18,143-face scan). Tiles at another tau still work. */
void lk_prefilter_prepare (LkPrefilter *prefilter, float tau);

/* The proven bound on |bf16 cosine − float32 cosine| for rows of `dim`
 * floats whose norms are at most `max_norm`, whatever order either sums in
 * (lk-prefilter.c derives it). */
double lk_prefilter_bound_for (gsize dim, double max_norm);
/* That bound for this prefilter's rows (int8: the largest of its per-pair
 * bounds, which the pass applies pair by pair). */
double lk_prefilter_bound (const LkPrefilter *prefilter);
/* bf16: the largest float no greater than tau − bound: a pair whose bf16
 * cosine is below it cannot reach `tau` in float32. -INFINITY for a tau of
 * -INFINITY. */
float lk_prefilter_threshold (const LkPrefilter *prefilter, float tau);

/* The bf16 cosine of rows i and j in the pass's order (the emulation; equal
 * to the native pass's, see lk-prefilter.c); for int16 rows, scale² × their
 * exact integer dot, rounded to float; for int8 and int7 rows s_i s_j × their
 * exact integer dot (int7: as the emulation of vpmaddubsw's int16 lanes sums
 * it), rounded to float (what the passes report as a survivor's
 * cosine). */
float lk_prefilter_cosine (const LkPrefilter *prefilter, gsize i, gsize j);

/* The first pass alone, at tile->tau. */
gsize lk_prefilter_survivors (const LkPrefilter *prefilter, const LkTile *tile, LkHit *survivors);

/* An LkTileFunc in front of `kernel`: the bf16 pass, then `kernel`'s own tile
 * over each run of survivors, so the hits — and their cosines — are exactly
 * the ones kernel->tile (tile, hits) reports. */
gsize lk_prefilter_tile (const LkPrefilter *prefilter, const LkKernel *kernel, const LkTile *tile,
                         LkHit *hits);

/* int16: the largest integer T with T <= (tau − bound) / scale²: a pair
 * whose integer dot is below it cannot reach `tau` in float32. G_MININT32
 * (rule out nothing) for a tau of -INFINITY or far below -1. */
gint32 lk_prefilter_threshold_int16 (const LkPrefilter *prefilter, float tau);
/* The int16 rows' quantisation: |q| <= this for rows of `dim`, so that no
 * sum of products overflows an int32 (lk-prefilter.c). */
gint32 lk_prefilter_int16_max (gsize dim);

/* The int7 rows' quantisation: |q| <= this for rows of `dim`
 * (LK_PREFILTER_INT7_M up to millions of floats). */
gint32 lk_prefilter_int7_max (gsize dim);

/* int8 and int7: the bar row i's lanes are compared with, at `tau`: a pair (i, j)
 * whose fma (s_i, fl (Q) · s_j, g_j) is below it cannot reach `tau` in
 * float32 (lk-prefilter.c, "The int8 pass"). -INFINITY for a tau of
 * -INFINITY, or for rows too long for an exact int32 dot. */
float lk_prefilter_threshold_int8 (const LkPrefilter *prefilter, float tau, gsize i);
/* The int8 rows' quantisation: |q| <= this for rows of `dim` (127 up to
 * 133,144 floats), so that a pair's integer dot is exact in an int32. */
gint32 lk_prefilter_int8_max (gsize dim);

const char *lk_prefilter_name (const LkPrefilter *prefilter);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkPrefilter, lk_prefilter_free)

G_END_DECLS
