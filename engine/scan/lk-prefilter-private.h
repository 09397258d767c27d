/* lk-prefilter-private.h — the bf16 rows' layout, shared by lk-prefilter.c
 * and the per-ISA pass files
 *
 * One layout serves both operands of vdpbf16ps. Faces go in panels of
 * LK_PREFILTER_LANES; within a panel, k-pair p (elements 2p and 2p + 1 of a
 * row) of the panel's sixteen faces are sixteen consecutive dwords, each
 * holding element 2p in its low half and 2p + 1 in its high half — the
 * operand format of vdpbf16ps. So one aligned 64-byte load is a column
 * operand (sixteen faces' k-pair p), and one dword broadcast is a row
 * operand (one face's k-pair p), and lane l of `acc = vdpbf16ps (acc,
 * broadcast (row i, p), panel (q, p))` over every p sums the pair (i, 16q + l)
 * with no horizontal reduction. An odd dim pads its last pair with a zero,
 * and the last panel pads with zero faces: zeros add exactly nothing.
 *
 * The int8 rows use the same panels, four elements a dword, each byte
 * q + 128 (vpdpbusd's unsigned operand; padding is q = 0, byte 128). They
 * are both operands: a column operand as they are, and a row operand (a
 * dword broadcast: vpdpbusd's signed operand) once XORed with 0x80808080,
 * which turns each biased byte back into q as a signed byte (padding: 0):
 * Σ q_i (q_j + 128) = Q + 128 Σ q_i, and the accumulator starts at row i's
 * correction −128 Σ q_i, so it ends at Q with nothing to add. No second,
 * row-major copy of the signed bytes serves the rows: it would be 51 MB at
 * 100,000 × 512 that only doubles what the panels hold; read from the
 * panels, the MR = 8 rows of one register block share one 64-byte line per
 * dword, where a row-major copy reads eight lines.
 */
#pragma once

#include <math.h>

#include "lk-prefilter.h"

#define LK_PREFILTER_LANES 16

/* The int7 rows (lk-prefilter.c, "The int7 pass"): |q| <= M, stored as
 * u = q + BIAS in [BIAS − M, BIAS + M] ⊂ [0, 255], and STEPS dwords of
 * vpmaddubsw results summed in int16 lanes before one widening: a lane then
 * holds at most STEPS · 2 · (BIAS + M) · M in magnitude, which must fit an
 * int16. A compile-time choice (-DLK_PREFILTER_INT7_STEPS=2 or 4 to measure
 * the others); lk-prefilter-int7-avx2.c says which won and by how much. */
#ifndef LK_PREFILTER_INT7_STEPS
#define LK_PREFILTER_INT7_STEPS 8
#endif
#if LK_PREFILTER_INT7_STEPS == 2
#define LK_PREFILTER_INT7_M    63
#define LK_PREFILTER_INT7_BIAS 64
#elif LK_PREFILTER_INT7_STEPS == 4
#define LK_PREFILTER_INT7_M    45
#define LK_PREFILTER_INT7_BIAS 45
#elif LK_PREFILTER_INT7_STEPS == 8
#define LK_PREFILTER_INT7_M    31
#define LK_PREFILTER_INT7_BIAS 32
#else
#error "LK_PREFILTER_INT7_STEPS is 2, 4 or 8"
#endif
/* The largest |int16 lane| the pass can reach (the tests build a pair that
 * reaches it): no vpmaddubsw saturates and no vpaddw wraps. */
#define LK_PREFILTER_INT7_LANE_MAX                                                                 \
  (LK_PREFILTER_INT7_STEPS * 2 * (LK_PREFILTER_INT7_BIAS + LK_PREFILTER_INT7_M)                    \
   * LK_PREFILTER_INT7_M)
G_STATIC_ASSERT (LK_PREFILTER_INT7_LANE_MAX <= 32767);
G_STATIC_ASSERT (LK_PREFILTER_INT7_BIAS >= LK_PREFILTER_INT7_M);
G_STATIC_ASSERT (LK_PREFILTER_INT7_BIAS + LK_PREFILTER_INT7_M <= 255);

struct _LkPrefilter
{
  const LkPrefilterPass *pass;
  gsize n;
  gsize dim;
  gsize pairs;     /* k-pairs per row: ceil (dim / 2) */
  guint32 *panels; /* ceil (n / 16) panels × pairs × 16 dwords, 64-byte aligned */
  double max_norm; /* an upper bound on every row's L2 norm */
  double bound;    /* bf16: lk_prefilter_bound_for (dim, max_norm); int16: see lk-prefilter.c */
  double scale;    /* int16: a row element a is stored as round (a / scale) */
  /* int8 (lk-prefilter.c, "The int8 pass"), with `pairs` the dwords per row
   * (the rows themselves are the panels: see above): */
  gint32 *corrections; /* n: −128 × the row's Σ q (int7: −LK_PREFILTER_INT7_BIAS × Σ q) */
  float *scales;       /* panels × 16: s_i (0 for padding faces) */
  float *guards;       /* panels × 16: g_i >= N E_i */
  double fixed;        /* C: the kernel's own error and the epilogue's roundings */
  gboolean exact_only; /* rows too long for an exact int32 dot: reject nothing */
  float *bars;         /* n: lk_prefilter_threshold_int8 (bars_tau, i), or NULL */
  float bars_tau;
  gsize released; /* bytes at the start of `panels` given back (lk_prefilter_release_below) */
};

/* Row i's int8 bar at tile->tau: the one lk_prefilter_prepare() computed
 * when the tile's tau is the one it was given, else computed now. */
static inline float
lk_prefilter_int8_bar (const LkPrefilter *pf, const LkTile *t, gsize i)
{
  if (pf->bars != NULL && pf->bars_tau == t->tau)
    return pf->bars[i];
  return lk_prefilter_threshold_int8 (pf, t->tau, i);
}

/* Row i's k-pair 0; its k-pair p is LK_PREFILTER_LANES × p dwords further. */
static inline const guint32 *
lk_prefilter_row (const LkPrefilter *pf, gsize i)
{
  return pf->panels + (i / LK_PREFILTER_LANES) * pf->pairs * LK_PREFILTER_LANES
         + i % LK_PREFILTER_LANES;
}

/* Called by a pass for each survivor as it is found: the survivor's float32
 * row is cold (the pass read the low-precision copy), and asking for it now,
 * while the pass goes on with the rest of the tile, hides the misses the
 * re-check would otherwise wait for one row at a time. Every line of it:
 * whole 18,143-face scans measured slower with none, or with every second or
 * fourth line, and no faster with the pair's row i asked for as well. The
 * prefetches are not free — the int8 pass alone runs 9 % faster without
 * them — but the re-check then takes 60 % longer: pass and re-check 2.4 %
 * slower without (in-process A/B; docs/benchmarks.md).
 * Issued a line every second k-step through the next register blocks
 * instead of all at once, they cost the pass more (8 %); T0, T2 and NTA
 * hints did no better than T1. */
static inline void
lk_prefilter_prefetch_column (const LkTile *t, gsize j)
{
  if (!t->prefetch_survivors)
    return;
  const char *row = (const char *) (t->embeddings + j * t->dim);

  for (gsize b = 0; b < t->dim * sizeof (float); b += 64)
    __builtin_prefetch (row + b, 0, 2);
}

/* What a survivor of the int8 pass reports as its cosine: s_i s_j Q, in
 * double, rounded once (the same in every pass, so tests compare them). */
static inline float
lk_prefilter_int8_cosine (const LkPrefilter *pf, gsize i, gsize j, gint32 q)
{
  return (float) ((double) pf->scales[i] * (double) pf->scales[j] * (double) q);
}

/* The int8 (and int7) pass's estimate of pair (i, j) from its exact integer
 * q, operation for operation as the native epilogues compute it
 * (lk-prefilter.c, "The int8 pass", step 3): (float) q is vcvtdq2ps, the
 * product vmulps, fmaf vfmadd, each rounded to nearest; compared with the
 * row's bar. For the portable passes and the AMX pass's C epilogue. */
static inline float
lk_prefilter_int8_estimate (const LkPrefilter *pf, gsize i, gsize j, gint32 q)
{
  float y = (float) q * pf->scales[j];
  return fmaf (pf->scales[i], y, pf->guards[j]);
}

/* The reporting of every int8 epilogue: of the lanes set in `mask` (lane l
 * is column base + l, whose estimate passed the bar, q[l] its integer), the
 * pairs above the diagonal, inside the tile's columns, of two photos and
 * with a gallery face, appended to out[n …] with their cosine in lane
 * order, each survivor's row prefetched. Returns the new count. */
static inline gsize
lk_prefilter_report_lanes (const LkPrefilter *pf, const LkTile *t, gsize i, gsize base,
                           guint32 mask, const gint32 *q, LkHit *out, gsize n)
{
  guint64 photo_a = t->photo[i];
  gboolean gallery_a = t->gallery[i] != 0;

  while (mask != 0)
    {
      guint lane = (guint) __builtin_ctz (mask);
      gsize j = base + lane;
      mask &= mask - 1;
      if (j <= i || j < t->col_begin || j >= t->col_end)
        continue;
      if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
        continue;
      lk_prefilter_prefetch_column (t, j);
      out[n++] = (LkHit){ (guint32) i, (guint32) j, lk_prefilter_int8_cosine (pf, i, j, q[lane]) };
    }
  return n;
}

/* Each defined in its own file, and only where it is built. */
extern const LkPrefilterPass lk_prefilter_pass_portable;
extern const LkPrefilterPass lk_prefilter_pass_avx512bf16;
extern const LkPrefilterPass lk_prefilter_pass_int16_portable;
extern const LkPrefilterPass lk_prefilter_pass_int16_avx2;
extern const LkPrefilterPass lk_prefilter_pass_int8_portable;
extern const LkPrefilterPass lk_prefilter_pass_int8_avx512vnni;
extern const LkPrefilterPass lk_prefilter_pass_int8_avxvnni;
extern const LkPrefilterPass lk_prefilter_pass_int7_portable;
extern const LkPrefilterPass lk_prefilter_pass_int7_avx2;
/* The AVX-VNNI pass's code (lk-prefilter-int8-ymm.h) with vpdpbusd EVEX-
 * encoded and emulated in AVX2: for tests/test-prefilter.c only, never in
 * lk_prefilter_passes_compiled(). */
extern const LkPrefilterPass lk_prefilter_pass_int8_ymm_avx512vl;
extern const LkPrefilterPass lk_prefilter_pass_int8_ymm_avx2;
/* The AMX pass (lk-prefilter-int8-amx.c, where LK_HAVE_PREFILTER_INT8_AMX)
 * and its code on emulated tiles: portable (everywhere) and with the native
 * file's AVX-512 epilogue (where LK_HAVE_PREFILTER_INT8_AMX_EMULATED_AVX512).
 * The emulated ones are for tests/test-prefilter.c only, never in
 * lk_prefilter_passes_compiled(). */
extern const LkPrefilterPass lk_prefilter_pass_int8_amx;
extern const LkPrefilterPass lk_prefilter_pass_int8_amx_emulated;
extern const LkPrefilterPass lk_prefilter_pass_int8_amx_emulated_avx512;

/* Dword p of an int8 row (lk_prefilter_row) as the row operand: four
 * signed bytes, q, from the panel's biased q + 128. */
#define LK_PREFILTER_INT8_UNBIAS 0x80808080u

static inline guint32
lk_prefilter_int8_row_word (const guint32 *row, gsize p)
{
  return row[p * LK_PREFILTER_LANES] ^ LK_PREFILTER_INT8_UNBIAS;
}

/* The two loops of quantising one int8 (or int7) row (lk-prefilter.c,
 * lk_prefilter_int8_row), portable or vectorised; the scale between them,
 * the bookkeeping after them and the choice of which runs are
 * lk-prefilter.c's. `amax` returns max |row[k]| over the dim elements of a
 * finite row (the library refuses NaN and infinities). `quantise` writes
 * the row's pairs dwords (the biased bytes: one dword every
 * LK_PREFILTER_LANES from `out`, padding elements q = 0) and adds, in four
 * chains, lane l taking elements 4w + l in ascending w: a², â², e² (double)
 * and q (modulo 2^32, like the correction they feed). Every implementation
 * returns the same bits: the vector one's double lanes are those chains,
 * in that order, each a multiply then an add rounded apart. */
typedef struct
{
  double norm2[4], quantised2[4], error2[4];
  guint32 sum[4];
} LkPrefilterRowSums;

typedef struct
{
  const char *name;
  float (*amax) (const float *row, gsize dim);
  void (*quantise) (const float *row, gsize dim, float s, double inverse, gint32 m, gint32 bias,
                    guint32 *out, LkPrefilterRowSums *sums);
} LkPrefilterQuantiser;

extern const LkPrefilterQuantiser lk_prefilter_quantiser_portable;
/* In lk-prefilter-quantise-avx2.c, where LK_HAVE_PREFILTER_QUANTISE_AVX2. */
extern const LkPrefilterQuantiser lk_prefilter_quantiser_avx2;

/* The quantiser the rows use on this CPU. */
const LkPrefilterQuantiser *lk_prefilter_quantiser (void);

/* Row i of the int8 (or int7) rows, quantised by `quantiser`: its scale,
 * bytes biased by `bias` and correction; returns max (‖a‖², ‖â‖²) and
 * stores ‖e‖ (raised by SLACK) in errors[i]. */
double lk_prefilter_int8_row (LkPrefilter *pf, const LkPrefilterQuantiser *quantiser,
                              const float *embeddings, gsize i, gint32 m, gint32 bias,
                              double *errors);

/* Whether the pass's rows are bytes with a scale per row (int8 and int7
 * share the rows' code, the bound and the epilogue). */
static inline gboolean
lk_prefilter_format_bytes (LkPrefilterFormat format)
{
  return format == LK_PREFILTER_FORMAT_INT8 || format == LK_PREFILTER_FORMAT_INT7;
}
