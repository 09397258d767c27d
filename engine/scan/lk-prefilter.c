/* lk-prefilter.c — the bf16 rows, the proven bound, the portable pass, and
 * the float32 re-check of the survivors
 *
 * Why: in a real library well over 99% of pairs sit far below the bar (the
 * scan's default bar is cos ≈ 0.42; strangers sit at 0 ± 0.05), so most of
 * the float32 scan's flops only confirm a "no". vdpbf16ps does 32 multiply-
 * adds per instruction against vfmadd231ps's 16, from half the bytes; a bf16
 * pass that is allowed to say "no" only when float32 would too answers those
 * pairs at twice the rate, and the float32 kernel decides the rest.
 *
 * ## The bound, and why it is exact
 *
 * Notation: a, b are two rows as stored (the floats the float32 kernel
 * multiplies), S = Σ_k a_k b_k their exact dot product (real arithmetic),
 * N >= every row's L2 norm, u = 2^-8 (bf16's unit roundoff: 8 significant
 * bits, round to nearest even), ε = 2^-24 (float32's), λ = 2^-126 (the
 * smallest normal float, below which vdpbf16ps flushes inputs and outputs to
 * zero), γ_m = mε / (1 − mε).
 *
 * 1. Rounding the rows. â_k = bf16 (a_k). For |a_k| >= λ, round to nearest
 *    even to 8 significant bits: |â_k − a_k| <= u |a_k| (bf16 has float32's
 *    exponent range, so nothing below 1.002 overflows and nothing above λ
 *    underflows). For |a_k| < λ the conversion flushes to a signed zero — as
 *    vdpbf16ps's DAZ would anyway — so |â_k − a_k| < λ. Either way
 *    |â_k − a_k| <= u |a_k| + λ and |â_k| <= (1 + u) |a_k|, hence
 *      |â_k b̂_k − a_k b_k| <= |â_k − a_k| |b̂_k| + |a_k| |b̂_k − b_k|
 *                            <= (2u + u²) |a_k b_k| + λ ((1 + u) |b_k| + |a_k|),
 *    and summed over k, with Σ |a_k b_k| <= ‖a‖‖b‖ <= N² (Cauchy–Schwarz)
 *    and ‖a‖₁ <= √dim ‖a‖:
 *      |Σ â_k b̂_k − S| <= (2u + u²) N² + (2 + u) √dim N λ.
 *
 * 2. The bf16 accumulation, in whatever order the hardware uses. Each
 *    product x_k = â_k b̂_k is exact in float32 (8 × 8 = 16 significant bits
 *    of 24), and vdpbf16ps adds it unrounded anyway. Model any evaluation as
 *    a binary tree whose leaves are the products and whose nodes are float32
 *    additions, each rounded to nearest and possibly flushed:
 *    fl (y) = y (1 + δ) + e, |δ| <= ε, |e| < λ (e is the flush of a tiny
 *    result; a tiny input was some node's flushed output or a tiny product,
 *    covered by the same e). vdpbf16ps's add of the two products of one
 *    dword is one such node, so is the accumulator's add, and so is any
 *    horizontal reduction; a padding zero adds exactly. dim leaves need
 *    dim − 1 nodes, so no leaf passes more than dim − 1 of them (Higham,
 *    Accuracy and Stability, §4.2), and the flushes, at most one per node
 *    plus one per product, each grow by at most (1 + γ_dim) <= 2 on the way
 *    up (dim < 2^22, far beyond any embedding):
 *      |ŝ − Σ x_k| <= γ_dim Σ |x_k| + 4 dim λ <= γ_dim (1 + u)² N² + 4 dim λ.
 *
 * 3. The float32 kernel the survivors go to, in whatever order it uses (a
 *    separate multiply and add, or one FMA chain, lanes and trees, gradual
 *    underflow or a flush): the same tree with leaves fl (a_k b_k), at most
 *    one rounding per product plus dim − 1 additions on any path:
 *      |c − S| <= γ_dim N² + 4 dim λ.
 *
 * 4. So |ŝ − c| <= B(dim, N) with
 *      B = (2u + u² + γ_dim ((1 + u)² + 1)) N² + ((2 + u) √dim N + 8 dim) λ,
 *    and a pair rejected because ŝ < T, where T <= tau − B, has
 *    c <= ŝ + B < tau: the kernel, which reports c >= tau, would not have
 *    reported it. The kernel's bar tau already sits below the loosest bar
 *    by the scan's own margin, so near-boundary pairs still reach the exact
 *    check and are counted as before.
 *
 *    At dim 512 and N = 1: 2^-7 + 2^-16 + γ_512 (2 + 2^-7 + 2^-16)
 *    = 0.0078278 + 0.0000613 = 0.0078890 (the λ term is ~1e-35). The rounding
 *    of the rows is 99% of it; the accumulation term grows with dim and
 *    reaches the rounding term only at dim ≈ 65,000.
 *
 * 5. Bookkeeping. N is measured, not assumed: the largest row norm,
 *    computed in double (squares exact, the sum within dim · 2^-53) and then
 *    raised by a factor 1 + 2^-40; B is computed in double and raised by the
 *    same factor, which covers its own dozen roundings and the subtraction
 *    tau − B; T is then rounded down to a float explicitly.
 *
 * ## The pass the emulation reproduces
 *
 * Per pair (i, j) one chain, no reduction — the layout of
 * lk-prefilter-private.h puts the whole pair in one lane. For every k-pair p
 * in ascending order, the two steps of the SDM's pseudo-code for VDPBF16PS:
 *   acc = fma (a[2p + 1], b[2p + 1], acc);  acc = fma (a[2p], b[2p], acc);
 * each the exact product added, rounded to nearest even, and a result below λ
 * flushed to zero (inputs are never denormal: the conversion flushed them).
 * The native pass computes the same chain in each lane of a register, so it
 * returns the same bits — on a CPU that implements the SDM's two rounded
 * steps. One that rounds the pair's add differently (or detects a tiny
 * result before rather than after rounding, which differs only for a sum
 * within 2^-150 of λ) returns other last bits; the bound of step 2 holds for
 * any such order, so the scan's answer is unaffected, only
 * lk_prefilter_cosine's equality with the native pass.
 *
 * ## The int16 pass, and its bound
 *
 * The pass that runs on AVX2 (lk-prefilter-int16-avx2.c). Every element is
 * stored as q = round (a / s), one scale s = amax / M for the library (amax
 * its largest |element|, M = lk_prefilter_int16_max (dim)), and a pair's
 * integer dot Q = Σ q_a q_b is computed exactly: vpmaddwd's products and
 * pairwise sums are exact in int32, and no partial sum can overflow, since
 * Σ |q_a q_b| <= ‖q_a‖ ‖q_b‖ and ‖q‖ <= ‖a‖ / s + √dim (1/2 + 2^-36)
 * < √dim (M + 1) (because amax >= ‖a‖ / √dim), with dim (M + 1)² <= 2^31 − 1
 * by the choice of M (2047 at dim 512). So the only error is the
 * quantisation: with â = q s, |â_k − a_k| <= δ = s (1/2 + 2^-30) (the 2^-30
 * covers computing a / s in double), and
 *   |s² Q − S| <= Σ |â_k − a_k| |b̂_k| + |a_k| |b̂_k − b_k|
 *              <= δ (‖a‖₁ + ‖b‖₁ + dim δ) <= δ (2 L + dim δ),
 * L the largest row L1 norm (measured like N). With the float32 kernel's
 * own error (step 3 above):
 *   B_int16 = δ (2 L + dim δ) + γ_dim N² + 4 dim λ,
 * raised by the same 1 + 2^-40, and a pair is rejected when
 * Q < T = floor ((tau − B_int16) / s²) (computed in double, lowered by a
 * relative 2^-40 before the floor): then s² Q < tau − B_int16 and c < tau.
 * For unit 512-d rows with amax ≈ 0.25 (Gaussian-like rows: 5.5 σ) and
 * L ≈ 18.1 (√(2/π) √512), δ ≈ 6.1e-5 and B_int16 ≈ 0.0023 — a third of the
 * bf16 bound, because M = 2047 gives eleven bits to bf16's eight.
 *
 * ## The int8 pass, and its bound
 *
 * Where the CPU has AVX-512 VNNI (lk-prefilter-int8-avx512vnni.c):
 * vpdpbusd does 64 multiply-adds of bytes per instruction, four times
 * vfmadd231ps's sixteen and twice vdpbf16ps's 32, from a quarter of
 * float32's bytes. Each row i gets its own scale s_i = amax_i / M (amax_i its
 * largest |element|, M = lk_prefilter_int8_max (dim) = 127 up to 133,144
 * floats, computed in double and rounded up to a float), and is stored as
 * q_k = round (a_k / s_i), clamped to ±M. A scale per row, not one for the
 * library as int16 has: with 7 bits, a row with a smaller largest element
 * than the library's would waste a bit or two of them.
 *
 * Notation: a, b rows i and j as stored, S = Σ a_k b_k (real arithmetic),
 * â_k = q_{a,k} s_a (a real number: the row as the integers say), e = a − â
 * the quantisation error, E_a >= ‖e_a‖₂ measured (in double, raised by
 * 1 + 2^-40), N >= every row's ‖a‖₂ and ‖â‖₂ (measured likewise),
 * Q = Σ q_{a,k} q_{b,k} the integer dot, so that s_a s_b Q = Σ â_k b̂_k = Ŝ
 * exactly, ε = 2^-24, λ = 2^-126, γ_m = mε / (1 − mε).
 *
 * 1. Quantisation. a_k b_k − â_k b̂_k = e_{a,k} b_k + â_k e_{b,k}, so by
 *    Cauchy–Schwarz
 *      |S − Ŝ| <= ‖e_a‖ ‖b‖ + ‖â‖ ‖e_b‖ <= N (E_a + E_b).
 *    Nothing about how q was rounded is assumed: E is the error the rows
 *    really have (about s √(dim / 12), at most s √dim / 2). Cauchy–Schwarz
 *    rather than the int16 pass's L1 form because it is tighter by about
 *    √(π/6) ≈ 0.72 on real rows and still met with equality by the
 *    adversarial pairs of tests/test-prefilter.c (equal magnitudes, every
 *    rounding against the product).
 *
 * 2. The integer dot is exact. vpdpbusd multiplies unsigned bytes by signed
 *    ones, so the column operand is stored as q + 128 (0…255) and the row
 *    operand as q: the lane sums Σ q_a (q_b + 128) = Q + 128 Σ q_a, and its
 *    accumulator starts at the row's correction −128 Σ q_a. VPDPBUSD (not
 *    VPDPBUSDS) adds modulo 2^32, so the int32 ends at Q mod 2^32 whatever
 *    an intermediate did; and |Q| <= Σ |q_a| |q_b| <= dim M² <= 2^31 − 1 by
 *    the choice of M, so it is Q itself. The emulation sums the same bytes
 *    the same way in unsigned 32-bit arithmetic and gets the same integer.
 *
 * 3. The epilogue, per lane: f = fma (s_a, y, g_b) with y = fl (Q) · s_b,
 *    every step a single IEEE operation rounded to nearest (vcvtdq2ps,
 *    vmulps, vfmadd231ps under the default MXCSR: no FTZ, no DAZ; the
 *    emulation does the same float operations with fmaf, so the bits are
 *    the native pass's). fl (Q) = Q (1 + θ₁), y = fl (Q) s_b (1 + θ₂) + η₂,
 *    f = (s_a y + g_b)(1 + θ₃) + η₃, |θ| <= ε, |η| <= 2^-150 (gradual
 *    underflow), and with |Ŝ| <= ‖â‖ ‖b̂‖ <= N², g_b <= G (the largest
 *    guard), s_a <= amax_a <= N:
 *      |f − (Ŝ + g_b)| <= γ_3 N² + ε G + (N + 1) 2^-149 =: R.
 *
 * 4. The float32 kernel (step 3 of the bf16 bound): |c − S| <= γ_dim N² +
 *    4 dim λ.
 *
 * 5. The decision. Each row's guard g_i >= N E_i is a float rounded up; the
 *    fixed part C = γ_dim N² + 4 dim λ + R; row a's bar T_a is a float no
 *    greater than tau − C − g_a. A pair with f < T_a has Ŝ + g_b <= f + R
 *    < tau − γ_dim N² − 4 dim λ − g_a, so S <= Ŝ + N (E_a + E_b) <= Ŝ + g_a
 *    + g_b < tau − γ_dim N² − 4 dim λ and c < tau: the kernel would not
 *    have reported it. The pair's bound is B_ab = C + g_a + g_b: per pair,
 *    so a row that quantises well is not held to the worst row's error.
 *
 *    Bookkeeping: C and the guards are computed in double and raised by
 *    1 + 2^-40; T_a is tau − (C + g_a)(1 + 2^-40) − |tau| 2^-50, which
 *    covers the two double roundings of that expression, rounded down to a
 *    float explicitly.
 *
 *    At dim 512, for unit rows whose largest element is ≈ 0.14 (the typical
 *    largest of 512 Gaussian components, 3 σ), s ≈ 1.1e-3, E ≈ 7.2e-3 and
 *    B ≈ 0.0145 (C ≈ 3.1e-5); the library's worst rows (amax ≈ 0.25) reach
 *    about 0.02. Against the bar cos ≈ 0.42 and strangers at 0 ± 0.044 the
 *    pass still rejects all but a sliver: what it loses to bf16's 0.0079 in
 *    survivors it gets back four times in throughput.
 *
 * ## The int7 pass: the int8 pass for AVX2's vpmaddubsw
 *
 * Where the CPU has AVX2 and no VNNI (lk-prefilter-int7-avx2.c). The int8
 * pass's rows, with M = LK_PREFILTER_INT7_M = 31 (lk_prefilter_int7_max)
 * and the bytes biased by B = LK_PREFILTER_INT7_BIAS = 32 rather than 128:
 * s_i = amax_i / M, q = round (a / s_i) clamped to ±M, stored as
 * u = q + B in [B − M, B + M] = [1, 63]. Steps 1, 3, 4 and 5 above hold as
 * they stand: they assume nothing of M but what the measured E_i says, and
 * E ≈ s √(dim / 12) grows as 1/M — the guards are about 127/31 ≈ 4.1 times
 * the int8 pass's (the largest pair bound on tests/test-prefilter.c's random
 * 512-d rows: 0.035 against int8's 0.0084). Step 2 becomes:
 *
 * 2'. The integer dot is exact. vpmaddubsw multiplies the row's unsigned
 *    bytes u by the column's signed bytes q_j and adds each two neighbours
 *    into a signed 16-bit lane, saturating; lanes 2c (bytes 0, 1 of dword
 *    c) and 2c + 1 (bytes 2, 3) both belong to column c. Every product has
 *    |u q_j| <= (B + M) M, so a pair sum is at most 2 (B + M) M = 3,906 in
 *    magnitude (nothing saturates), and after S = LK_PREFILTER_INT7_STEPS
 *    = 8 dwords' vpaddw a lane holds at most
 *      S · 2 · (B + M) · M = 8 · 2 · 63 · 31 = 31,248 <= 32,767
 *    (LK_PREFILTER_INT7_LANE_MAX, a static assertion): every partial sum is
 *    the exact integer, nothing wrapped. vpmaddwd by a vector of ones then
 *    adds lanes 2c and 2c + 1 into dword c exactly (|·| <= 62,496), and
 *    vpaddd adds that modulo 2^32 to the accumulator, which started at
 *    column c's correction −B Σ q_j. It ends at Σ (q_i + B) q_j − B Σ q_j
 *    = Q modulo 2^32, and |Q| <= dim M² <= 2^31 − 1 by the choice of M, so
 *    it is Q. Padding (past dim, and faces past n) is q = 0, byte B: it
 *    adds nothing to a lane nor to Σ q. The emulation (int7_dot) does the
 *    same saturating pair sums and wrapping int16 adds, so the tests that
 *    hold it to Σ q_i q_j in 64-bit integers would see a lane that
 *    overflowed: rows of all ±M drive every lane to ±31,248
 *    (/prefilter/int7/lanes-reach-their-maximum-without-overflow, which
 *    fails with M = 40).
 *
 *    Choosing (M, B, S): u must fit a byte, B >= M, S · 2 (B + M) M <=
 *    32,767; a smaller M buys more dwords per widening and costs a larger
 *    guard. Per 64 multiply-adds the pass spends 2 vpmaddubsw, 2/S vpmaddwd
 *    (the int16 pass: 4 vpmaddwd). Against OpenBLAS SGEMM on AVX2 in the
 *    same runs (`bench-scan --avx2-only`; docs/benchmarks.md), S = 2 was
 *    clearly slower and S = 4 and 8 within the noise of each other; 8
 *    spends fewer multiply instructions, so (31, 32, 8). The coarser M
 *    costs about 10 % more re-checks than int16, which the fewer multiply
 *    instructions win back many times over.
 *
 * ## The re-check
 *
 * Survivors go back to the scan's own kernel, whose `recheck` computes each
 * one's canonical FMA chain — the cosine every kernel's tile reports for
 * that pair wherever it sits — eight survivors' chains in the eight lanes of
 * a vector on x86 (lk-kernel-tile.h), so each survivor gets exactly the
 * cosine the float32 scan computes for it.
 */
#include "config.h"

#include "timing/lk-cpu.h"
#include "lk-kernels-config.h"
#include "lk-prefilter-private.h"

#include <float.h>
#include <math.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-prefilter-error-quark, lk_prefilter_error)
/* clang-format on */

/* The factor that covers the double arithmetic of the norm and the bound
 * (about dim · 2^-53 and a dozen · 2^-53) with room to spare. */
#define SLACK (1.0 + 0x1p-40)

static const LkPrefilterPass *const compiled[] = {
  &lk_prefilter_pass_portable,        &lk_prefilter_pass_int16_portable,
#if LK_HAVE_PREFILTER_AVX512BF16
  &lk_prefilter_pass_avx512bf16,
#endif
#if LK_HAVE_PREFILTER_INT16_AVX2
  &lk_prefilter_pass_int16_avx2,
#endif
  &lk_prefilter_pass_int8_portable,
#if LK_HAVE_PREFILTER_INT8_AVX512VNNI
  &lk_prefilter_pass_int8_avx512vnni,
#endif
#if LK_HAVE_PREFILTER_INT8_AVXVNNI
  &lk_prefilter_pass_int8_avxvnni,
#endif
#if LK_HAVE_PREFILTER_INT8_AMX
  &lk_prefilter_pass_int8_amx,
#endif
  &lk_prefilter_pass_int7_portable,
#if LK_HAVE_PREFILTER_INT7_AVX2
  &lk_prefilter_pass_int7_avx2,
#endif
};

/* ---- bfloat16 ----------------------------------------------------------- */

/* Round to nearest even; below λ, a signed zero (what vdpbf16ps's DAZ makes
 * of a denormal anyway, so both passes see the same operands). Finite input
 * only: the scan has validated every row. */
static inline guint32
bf16_from_float (float x)
{
  guint32 bits;

  memcpy (&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) < 0x00800000u)
    return (bits >> 16) & 0x8000u;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bits >> 16;
}

static inline float
bf16_to_float (guint32 half)
{
  guint32 bits = half << 16;
  float x;

  memcpy (&x, &bits, sizeof x);
  return x;
}

/* One step of VDPBF16PS: acc + x·y with the exact product, rounded once to
 * nearest even, a tiny result flushed to zero. The product of two bf16 is
 * exact in float32 unless it is itself tiny (or zero by underflow), so the
 * plain multiply-add is the fused one except then, when fmaf takes over. */
static inline float
bf16_fma (guint32 x_half, guint32 y_half, float acc)
{
  float x = bf16_to_float (x_half), y = bf16_to_float (y_half);
  float product = x * y;
  float r
      = (fabsf (product) >= FLT_MIN || x == 0.0f || y == 0.0f) ? product + acc : fmaf (x, y, acc);

  return fabsf (r) < FLT_MIN ? copysignf (0.0f, r) : r;
}

static inline float
cosine_portable (const LkPrefilter *pf, gsize i, gsize j)
{
  const guint32 *a = lk_prefilter_row (pf, i);
  const guint32 *b = lk_prefilter_row (pf, j);
  float acc = 0.0f;

  for (gsize p = 0; p < pf->pairs; p++)
    {
      guint32 x = a[p * LK_PREFILTER_LANES], y = b[p * LK_PREFILTER_LANES];
      acc = bf16_fma (x >> 16, y >> 16, acc);
      acc = bf16_fma (x & 0xffffu, y & 0xffffu, acc);
    }
  return acc;
}

/* The portable pass: the per-pair loop of lk-kernel-tile.h, rules first. */
static gsize
pass_portable (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  float threshold = lk_prefilter_threshold (pf, t->tau);
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      guint64 photo_a = t->photo[i];
      gboolean gallery_a = t->gallery[i] != 0;

      for (gsize j = MAX (t->col_begin, i + 1); j < t->col_end; j++)
        {
          if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
            continue;
          float c = cosine_portable (pf, i, j);
          if (c >= threshold)
            out[n++] = (LkHit){ (guint32) i, (guint32) j, c };
        }
    }
  return n;
}

const LkPrefilterPass lk_prefilter_pass_portable = {
  LK_PREFILTER_BF16_PORTABLE, "bf16-portable", 0, pass_portable, LK_PREFILTER_FORMAT_BF16,
};

/* ---- int16 -------------------------------------------------------------- */

static inline gint32
int16_dot (const LkPrefilter *pf, gsize i, gsize j)
{
  const guint32 *a = lk_prefilter_row (pf, i);
  const guint32 *b = lk_prefilter_row (pf, j);
  gint32 acc = 0;

  for (gsize p = 0; p < pf->pairs; p++)
    {
      guint32 x = a[p * LK_PREFILTER_LANES], y = b[p * LK_PREFILTER_LANES];
      acc += (gint32) (gint16) (x & 0xffffu) * (gint16) (y & 0xffffu)
             + (gint32) (gint16) (x >> 16) * (gint16) (y >> 16);
    }
  return acc;
}

static gsize
pass_int16_portable (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  gint32 threshold = lk_prefilter_threshold_int16 (pf, t->tau);
  double scale2 = pf->scale * pf->scale;
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      guint64 photo_a = t->photo[i];
      gboolean gallery_a = t->gallery[i] != 0;

      for (gsize j = MAX (t->col_begin, i + 1); j < t->col_end; j++)
        {
          if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
            continue;
          gint32 q = int16_dot (pf, i, j);
          if (q >= threshold)
            out[n++] = (LkHit){ (guint32) i, (guint32) j, (float) (scale2 * q) };
        }
    }
  return n;
}

const LkPrefilterPass lk_prefilter_pass_int16_portable = {
  LK_PREFILTER_INT16_PORTABLE, "int16-portable", 0, pass_int16_portable, LK_PREFILTER_FORMAT_INT16,
};

/* ---- int8 --------------------------------------------------------------- */

/* The emulation of vpdpbusd's lane over row i's signed bytes and column j's
 * biased ones, modulo 2^32 from the row's correction: Q exactly (step 2 of
 * "The int8 pass"). */
static inline gint32
int8_dot (const LkPrefilter *pf, gsize i, gsize j)
{
  const guint32 *a = lk_prefilter_row (pf, i);
  const guint32 *b = lk_prefilter_row (pf, j);
  guint32 acc = (guint32) pf->corrections[i];

  for (gsize p = 0; p < pf->pairs; p++)
    {
      guint32 x = lk_prefilter_int8_row_word (a, p);
      guint32 y = b[p * LK_PREFILTER_LANES];
      for (guint k = 0; k < 4; k++)
        acc += (guint32) ((gint32) ((y >> (8 * k)) & 0xffu)
                          * (gint32) (gint8) (guint8) ((x >> (8 * k)) & 0xffu));
    }
  return (gint32) acc;
}

/* The portable pass of the rows with a scale each (int8 and int7): `dot`,
 * the format's exact integer, then the native epilogue. Inlined into each
 * pass with its own dot. */
static inline gsize
pass_scaled_rows_portable (const LkPrefilter *pf, const LkTile *t, LkHit *out,
                           gint32 (*dot) (const LkPrefilter *, gsize, gsize))
{
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      guint64 photo_a = t->photo[i];
      gboolean gallery_a = t->gallery[i] != 0;
      float bar = lk_prefilter_int8_bar (pf, t, i);

      for (gsize j = MAX (t->col_begin, i + 1); j < t->col_end; j++)
        {
          if (t->photo[j] == photo_a || !(gallery_a || t->gallery[j]))
            continue;
          gint32 q = dot (pf, i, j);
          if (lk_prefilter_int8_estimate (pf, i, j, q) >= bar)
            out[n++] = (LkHit){ (guint32) i, (guint32) j, lk_prefilter_int8_cosine (pf, i, j, q) };
        }
    }
  return n;
}

static gsize
pass_int8_portable (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  return pass_scaled_rows_portable (pf, t, out, int8_dot);
}

const LkPrefilterPass lk_prefilter_pass_int8_portable = {
  LK_PREFILTER_INT8_PORTABLE, "int8-portable", 0, pass_int8_portable, LK_PREFILTER_FORMAT_INT8,
};

/* ---- int7 --------------------------------------------------------------- */

/* vpmaddubsw's lane: u0 s0 + u1 s1, saturated to int16. */
static inline gint32
int7_maddubs (guint32 u, guint32 s, guint shift)
{
  gint32 sum
      = (gint32) ((u >> shift) & 0xffu) * (gint8) (guint8) ((s >> shift) & 0xffu)
        + (gint32) ((u >> (shift + 8)) & 0xffu) * (gint8) (guint8) ((s >> (shift + 8)) & 0xffu);
  return CLAMP (sum, G_MININT16, G_MAXINT16);
}

/* The emulation of the native int7 pass's arithmetic for the pair (i, j),
 * instruction for instruction ("The int7 pass", step 2): row i's biased
 * bytes u (vpmaddubsw's unsigned operand), column j's bytes less the bias
 * (its signed operand, q_j), the two int16 lanes of the dword summed with
 * int16 wrap-around over LK_PREFILTER_INT7_STEPS dwords, widened (vpmaddwd
 * by ones) and added modulo 2^32 to column j's correction. Where no lane
 * saturates or wraps this is Q; the tests check it against Σ q_i q_j. */
static inline gint32
int7_dot (const LkPrefilter *pf, gsize i, gsize j)
{
  const guint32 *a = lk_prefilter_row (pf, i);
  const guint32 *b = lk_prefilter_row (pf, j);
  const guint32 bias = LK_PREFILTER_INT7_BIAS * 0x01010101u;
  guint32 acc = (guint32) pf->corrections[j];

  for (gsize p0 = 0; p0 < pf->pairs; p0 += LK_PREFILTER_INT7_STEPS)
    {
      gint16 lo = 0, hi = 0;
      for (gsize p = p0; p < MIN (p0 + LK_PREFILTER_INT7_STEPS, pf->pairs); p++)
        {
          guint32 u = a[p * LK_PREFILTER_LANES];
          /* Each byte less the bias, byte by byte (vpsubb): q_j as a signed
           * byte (vpmaddubsw's second operand). */
          guint32 y = b[p * LK_PREFILTER_LANES], s = 0;
          for (guint k = 0; k < 4; k++)
            s |= (((y >> (8 * k)) - (bias >> (8 * k))) & 0xffu) << (8 * k);
          lo = (gint16) (guint16) ((guint32) (guint16) lo + (guint32) int7_maddubs (u, s, 0));
          hi = (gint16) (guint16) ((guint32) (guint16) hi + (guint32) int7_maddubs (u, s, 16));
        }
      acc += (guint32) ((gint32) lo + (gint32) hi);
    }
  return (gint32) acc;
}

static gsize
pass_int7_portable (const LkPrefilter *pf, const LkTile *t, LkHit *out)
{
  return pass_scaled_rows_portable (pf, t, out, int7_dot);
}

const LkPrefilterPass lk_prefilter_pass_int7_portable = {
  LK_PREFILTER_INT7_PORTABLE, "int7-portable", 0, pass_int7_portable, LK_PREFILTER_FORMAT_INT7,
};

/* ---- choosing ----------------------------------------------------------- */

const LkPrefilterPass *const *
lk_prefilter_passes_compiled (gsize *n)
{
  *n = G_N_ELEMENTS (compiled);
  return compiled;
}

gboolean
lk_prefilter_pass_runs_here (const LkPrefilterPass *pass)
{
  if ((lk_cpu_features () & pass->needs) != pass->needs)
    return FALSE;
  /* The tiles also need the kernel's permission, asked only now. */
  LkCpuFeatures amx = pass->needs & LK_CPU_AMX;
  return amx == 0 || (lk_cpu_amx_permit () & amx) == amx;
}

static const LkPrefilterPass *
find_pass (LkPrefilterId id)
{
  for (gsize k = 0; k < G_N_ELEMENTS (compiled); k++)
    if (compiled[k]->id == id)
      return compiled[k];
  return NULL;
}

/* The native passes, each with what it needs and who picks it where it runs: the
 * facts behind the error that says why an explicit choice cannot run here. */
typedef struct
{
  LkPrefilterId id;
  const char *name;
  const char *needs;   /* NULL: the pass's own feature list */
  const char *flag;    /* the compiler flag it is built with; NULL: one message for
                        * "not built" and "cannot run" */
  const char *chooser; /* what picks it where it runs, lower case */
  gboolean amx;        /* say the kernel's answer on the tiles, not the features there are */
} NativePass;

static const NativePass native_passes[] = {
  { LK_PREFILTER_INT7, "int7", "avx2 fma", NULL, "the measured choice", FALSE },
  { LK_PREFILTER_INT8, "int8", "avx512f avx512vnni", "-mavx512vnni", "the measured choice", FALSE },
  { LK_PREFILTER_INT8_AVXVNNI, "AVX-VNNI int8", "avx2 fma avxvnni", "-mavxvnni",
    "the measured choice", FALSE },
  { LK_PREFILTER_INT8_AMX, "AMX int8", "avx512f amx-tile amx-int8", "-mamx-int8",
    "the measured choice", TRUE },
  { LK_PREFILTER_INT16, "int16", "avx2", NULL, "prefilter “auto”", FALSE },
  { LK_PREFILTER_BF16, "bf16", NULL, "-mavx512bf16", "prefilter “auto”", FALSE },
};

static void
set_cannot_run (const NativePass *native, const LkPrefilterPass *found, GError **error)
{
  if (native->flag == NULL)
    {
      g_set_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED,
                   "The %s prefilter needs %s, which this program or processor (%s) lacks; %s "
                   "uses it only where it runs",
                   native->name, native->needs, lk_cpu_model_name (), native->chooser);
      return;
    }
  if (found == NULL)
    {
      g_set_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED,
                   "The %s prefilter is not built into this program (it is built only for "
                   "x86-64 with a compiler that supports %s); %s uses it only where it runs",
                   native->name, native->flag, native->chooser);
      return;
    }

  g_autofree char *needs
      = native->needs != NULL ? g_strdup (native->needs) : lk_cpu_features_string (found->needs);
  g_autofree char *has = NULL;
  g_autofree char *lacking = NULL;
  if (native->amx)
    lacking = g_strdup_printf (" (%s)", lk_cpu_amx_note ());
  else
    {
      has = lk_cpu_features_string (lk_cpu_features ());
      lacking = g_strdup_printf ("; it has: %s", *has ? has : "no SIMD extensions");
    }
  g_set_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED,
               "The %s prefilter needs %s, which this processor (%s) lacks%s. %c%s uses it only "
               "where it runs",
               native->name, needs, lk_cpu_model_name (), lacking,
               g_ascii_toupper (native->chooser[0]), native->chooser + 1);
}

gboolean
lk_prefilter_pass_get (LkPrefilterId id, const LkPrefilterPass **pass, GError **error)
{
  const LkPrefilterPass *found;

  *pass = NULL;
  switch (id)
    {
      case LK_PREFILTER_OFF:
        return TRUE;
      case LK_PREFILTER_AUTO:
        /* The native bf16 pass where it runs, and nothing else: never the bf16
         * emulation (many times slower than float32 alone), nor int16.
         * Whether the int16 pass pays depends on the float32 tile it is
         * raced against: it lost to the fused tile until its own pass was
         * register-blocked, and wins on the AVX2-only route since
         * (lk-prefilter-int16-avx2.c); but this unmeasured default still
         * never picks it, nor the int7 pass that beats it there: the
         * measured choice (lk-tune.h) races them with every kernel and runs
         * the one that wins. */
        found = find_pass (LK_PREFILTER_BF16);
        if (found != NULL && lk_prefilter_pass_runs_here (found))
          *pass = found;
        return TRUE;
      case LK_PREFILTER_BF16_PORTABLE:
        *pass = &lk_prefilter_pass_portable;
        return TRUE;
      case LK_PREFILTER_INT16_PORTABLE:
        *pass = &lk_prefilter_pass_int16_portable;
        return TRUE;
      case LK_PREFILTER_INT8_PORTABLE:
        *pass = &lk_prefilter_pass_int8_portable;
        return TRUE;
      case LK_PREFILTER_INT7_PORTABLE:
        *pass = &lk_prefilter_pass_int7_portable;
        return TRUE;
      case LK_PREFILTER_INT7:
      case LK_PREFILTER_INT8:
      case LK_PREFILTER_INT8_AVXVNNI:
      case LK_PREFILTER_INT8_AMX:
      case LK_PREFILTER_INT16:
      case LK_PREFILTER_BF16:
        break;
    }

  for (gsize k = 0; k < G_N_ELEMENTS (native_passes); k++)
    if (native_passes[k].id == id)
      {
        found = find_pass (id);
        if (found != NULL && lk_prefilter_pass_runs_here (found))
          {
            *pass = found;
            return TRUE;
          }
        set_cannot_run (&native_passes[k], found, error);
        return FALSE;
      }
  g_set_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED,
               "Prefilter %d does not exist", (int) id);
  return FALSE;
}

/* ---- the rows and the bound --------------------------------------------- */

double
lk_prefilter_bound_for (gsize dim, double max_norm)
{
  const double u = 0x1p-8, eps = 0x1p-24, lambda = 0x1p-126;
  double m = (double) dim * eps;
  double gamma = m / (1.0 - m);
  double n2 = max_norm * max_norm;
  double relative = (2 * u + u * u + gamma * ((1 + u) * (1 + u) + 1)) * n2;
  double absolute = ((2 + u) * sqrt ((double) dim) * max_norm + 8.0 * (double) dim) * lambda;

  return (relative + absolute) * SLACK;
}

gint32
lk_prefilter_int16_max (gsize dim)
{
  double m = floor (sqrt ((double) G_MAXINT32 / (double) dim)) - 1.0;
  return (gint32) MIN (m, 32767.0);
}

/* round (a / scale), to nearest with ties up, as the low half of a dword:
 * x = a × (1 / scale) in double is within M · 2^-51 of a / scale (|x| <= M
 * <= 32767), so |q − a / scale| <= 1/2 + 2^-36; truncating x + 32768.5, a
 * positive number, is floor (x + 1/2) without a call to libm. */
static inline guint32
int16_from_float (float a, double inverse)
{
  gint32 q = (gint32) ((double) a * inverse + 32768.5) - 32768;
  return (guint32) q & 0xffffu;
}

/* The int16 rows (see "The int16 pass" above): one scale for the library,
 * so that a pair's bar is one integer. */
static void
int16_rows (LkPrefilter *pf, const float *embeddings)
{
  gsize n = pf->n, dim = pf->dim;
  double amax = 0.0, max_norm2 = 0.0, max_l1 = 0.0;

  for (gsize i = 0; i < n; i++)
    {
      const float *row = embeddings + i * dim;
      double norm2 = 0.0, l1 = 0.0;
      for (gsize k = 0; k < dim; k++)
        {
          double x = fabs ((double) row[k]);
          amax = MAX (amax, x);
          norm2 += x * x;
          l1 += x;
        }
      max_norm2 = MAX (max_norm2, norm2);
      max_l1 = MAX (max_l1, l1);
    }
  pf->scale = amax > 0 ? amax / lk_prefilter_int16_max (dim) : 1.0;
  double inverse = 1.0 / pf->scale;
  for (gsize i = 0; i < n; i++)
    {
      const float *row = embeddings + i * dim;
      guint32 *out = (guint32 *) lk_prefilter_row (pf, i);
      for (gsize p = 0; p < dim / 2; p++)
        out[p * LK_PREFILTER_LANES] = int16_from_float (row[2 * p], inverse)
                                      | int16_from_float (row[2 * p + 1], inverse) << 16;
      if (dim % 2)
        out[(pf->pairs - 1) * LK_PREFILTER_LANES] = int16_from_float (row[dim - 1], inverse);
    }

  const double eps = 0x1p-24, lambda = 0x1p-126;
  double m = (double) dim * eps;
  double gamma = m / (1.0 - m);
  double delta = pf->scale * (0.5 + 0x1p-30);
  pf->max_norm = sqrt (max_norm2) * SLACK;
  max_l1 *= SLACK;
  pf->bound = (delta * (2 * max_l1 + (double) dim * delta) + gamma * pf->max_norm * pf->max_norm
               + 4.0 * (double) dim * lambda)
              * SLACK;
}

gint32
lk_prefilter_int8_max (gsize dim)
{
  double m = floor (sqrt ((double) G_MAXINT32 / (double) dim));
  return (gint32) MIN (m, 127.0);
}

gint32
lk_prefilter_int7_max (gsize dim)
{
  /* The int8 rows' limit (an exact int32 dot), capped lower for the lanes. */
  return MIN (lk_prefilter_int8_max (dim), LK_PREFILTER_INT7_M);
}

/* A float no less than x >= 0. */
static inline float
float_up (double x)
{
  float f = (float) x;
  return (double) f < x ? nextafterf (f, INFINITY) : f;
}

/* |a| and its maximum are exact in float, in any order. */
static float
amax_portable (const float *row, gsize dim)
{
  float amax4[4] = { 0 };

  for (gsize k = 0; k + 4 <= dim; k += 4)
    for (gsize l = 0; l < 4; l++)
      amax4[l] = MAX (amax4[l], fabsf (row[k + l]));
  for (gsize k = dim / 4 * 4; k < dim; k++)
    amax4[0] = MAX (amax4[0], fabsf (row[k]));
  return MAX (MAX (amax4[0], amax4[1]), MAX (amax4[2], amax4[3]));
}

/* One dword store per four elements; the sums in four partial sums, one
 * per byte of a dword, so that they are four independent chains: any order
 * is within the dim · 2^-53 that SLACK covers ("Bookkeeping", step 5), and
 * this order is lk-prefilter-quantise-avx2.c's, which returns the same bits.
 * Each multiply and add rounds apart, whatever -march the build is given:
 * GCC's default for GNU C (-ffp-contract=fast) would fuse them into FMAs
 * under -mfma or -march=native, and does on aarch64, where FMA is the
 * baseline; so the attribute (GCC) and the pragma (Clang) turn contraction
 * off here alone, and the rows are the same bits on every CPU. (The engine
 * is built without -mfma, so on x86-64 nothing was fused here before
 * either: no vfmadd in lk-prefilter.c's object code.) */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__ ((optimize ("fp-contract=off")))
#endif
static void
quantise_portable (const float *row, gsize dim, float s, double inverse, gint32 m, gint32 bias,
                   guint32 *out, LkPrefilterRowSums *sums)
{
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
  for (gsize w = 0; w < (dim + 3) / 4; w++)
    {
      guint32 word = (guint32) bias * 0x01010101u; /* a padding element is q = 0 */
      for (gsize l = 0; l < 4 && 4 * w + l < dim; l++)
        {
          double a = (double) row[4 * w + l];
          /* round (a / s) as int16_from_float does it; the clamp only ever
           * acts on a last-bit excess, and E below is measured anyway. */
          gint32 q = (gint32) (a * inverse + 128.5) - 128;
          q = CLAMP (q, -m, m);
          double dequantised = (double) q * s;
          double e = a - dequantised;
          word = (word & ~(0xffu << (8 * l))) | (guint32) (q + bias) << (8 * l);
          sums->sum[l] += (guint32) q;
          sums->norm2[l] += a * a;
          sums->quantised2[l] += dequantised * dequantised;
          sums->error2[l] += e * e;
        }
      out[w * LK_PREFILTER_LANES] = word;
    }
}

const LkPrefilterQuantiser lk_prefilter_quantiser_portable = {
  "portable",
  amax_portable,
  quantise_portable,
};

const LkPrefilterQuantiser *
lk_prefilter_quantiser (void)
{
#if LK_HAVE_PREFILTER_QUANTISE_AVX2
  if (lk_cpu_features () & LK_CPU_AVX2)
    return &lk_prefilter_quantiser_avx2;
#endif
  return &lk_prefilter_quantiser_portable;
}

double
lk_prefilter_int8_row (LkPrefilter *pf, const LkPrefilterQuantiser *quantiser,
                       const float *embeddings, gsize i, gint32 m, gint32 bias, double *errors)
{
  gsize dim = pf->dim;
  const float *row = embeddings + i * dim;
  LkPrefilterRowSums t = { { 0 } };

  double amax = quantiser->amax (row, dim);
  float s = float_up (amax / m);
  double inverse = s > 0 ? 1.0 / s : 0.0;
  quantiser->quantise (row, dim, s, inverse, m, bias, (guint32 *) lk_prefilter_row (pf, i), &t);
  pf->scales[i] = s;
  /* Modulo 2^32, like the sums it corrects (step 2). */
  pf->corrections[i] = (gint32) (0u - (guint32) bias * (t.sum[0] + t.sum[1] + t.sum[2] + t.sum[3]));
  errors[i] = sqrt ((t.error2[0] + t.error2[1]) + (t.error2[2] + t.error2[3])) * SLACK;
  return MAX ((t.norm2[0] + t.norm2[1]) + (t.norm2[2] + t.norm2[3]),
              (t.quantised2[0] + t.quantised2[1]) + (t.quantised2[2] + t.quantised2[3]));
}

typedef struct
{
  LkPrefilter *pf;
  const LkPrefilterQuantiser *quantiser;
  const float *embeddings;
  gint32 m, bias;
  double *errors;
  gsize from, to;   /* rows, whole panels but the last */
  double max_norm2; /* out */
} Int8Rows;

static gpointer
int8_rows_range (gpointer data)
{
  Int8Rows *r = data;

  for (gsize i = r->from; i < r->to; i++)
    r->max_norm2 = MAX (r->max_norm2, lk_prefilter_int8_row (r->pf, r->quantiser, r->embeddings, i,
                                                             r->m, r->bias, r->errors));
  return NULL;
}

/* Below this many rows the quantisation runs on the calling thread alone: a
 * thread costs more than it saves. */
#define INT8_ROWS_PER_THREAD 2048

/* The int8 rows, scales, corrections and guards (see "The int8 pass"),
 * quantised on up to `threads` threads, each a range of whole panels (rows
 * of one panel share its cache lines). Serial, the portable loops were a
 * few percent of a large scan's CPU time, all of it before the scan's
 * threads start, so they run on those threads. Where AVX2 runs,
 * lk_prefilter_quantiser() hands out lk-prefilter-quantise-avx2.c, the same
 * bits in about a third of that CPU time (bench-quantise;
 * docs/benchmarks.md). */
static void
int8_rows (LkPrefilter *pf, const float *embeddings, gsize n_panels, guint threads)
{
  gsize n = pf->n, dim = pf->dim;
  gboolean int7 = pf->pass->format == LK_PREFILTER_FORMAT_INT7;
  gint32 m = int7 ? lk_prefilter_int7_max (dim) : lk_prefilter_int8_max (dim);
  gint32 bias = int7 ? LK_PREFILTER_INT7_BIAS : 128;
  gsize padded = n_panels * LK_PREFILTER_LANES;
  const LkPrefilterQuantiser *quantiser = lk_prefilter_quantiser ();
  g_autofree double *errors = g_new0 (double, MAX (n, 1));
  double max_norm2 = 0.0, max_guard = 0.0;

  pf->corrections = g_new0 (gint32, MAX (n, 1));
  pf->scales = g_aligned_alloc0 (MAX (padded, 1), sizeof (float), 64);
  pf->guards = g_aligned_alloc0 (MAX (padded, 1), sizeof (float), 64);
  pf->exact_only = m < 1;
  if (pf->exact_only)
    {
      if (pf->panels != NULL)
        memset (pf->panels, bias, n_panels * pf->pairs * LK_PREFILTER_LANES * sizeof (guint32));
      pf->bound = INFINITY;
      return;
    }
  /* Padding faces past n are q = 0, byte `bias`, in every dword. */
  if (n % LK_PREFILTER_LANES != 0)
    {
      guint32 *last = pf->panels + (n_panels - 1) * pf->pairs * LK_PREFILTER_LANES;
      for (gsize w = 0; w < pf->pairs; w++)
        for (gsize l = n % LK_PREFILTER_LANES; l < LK_PREFILTER_LANES; l++)
          last[w * LK_PREFILTER_LANES + l] = (guint32) bias * 0x01010101u;
    }

  threads = (guint) CLAMP (MIN (threads, n / INT8_ROWS_PER_THREAD), 1, 64);
  Int8Rows ranges[64];
  GThread *helpers[64] = { NULL };
  gsize panels_each = (n_panels + threads - 1) / threads;
  for (guint t = 0; t < threads; t++)
    {
      gsize from = MIN ((gsize) t * panels_each * LK_PREFILTER_LANES, n);
      gsize to = MIN (from + panels_each * LK_PREFILTER_LANES, n);
      ranges[t] = (Int8Rows){ pf, quantiser, embeddings, m, bias, errors, from, to, 0.0 };
      /* Where a thread cannot be made, the calling thread does its range. */
      if (t > 0)
        helpers[t] = g_thread_try_new ("lk-quantise", int8_rows_range, &ranges[t], NULL);
    }
  int8_rows_range (&ranges[0]);
  for (guint t = 0; t < threads; t++)
    {
      if (t > 0 && helpers[t] != NULL)
        g_thread_join (helpers[t]);
      else if (t > 0)
        int8_rows_range (&ranges[t]);
      max_norm2 = MAX (max_norm2, ranges[t].max_norm2);
    }

  const double eps = 0x1p-24, lambda = 0x1p-126;
  double big_n = sqrt (max_norm2) * SLACK;
  double mm = (double) dim * eps;
  double gamma = mm / (1.0 - mm);
  double gamma3 = 3 * eps / (1.0 - 3 * eps);
  for (gsize i = 0; i < n; i++)
    {
      pf->guards[i] = float_up (big_n * errors[i] * SLACK);
      max_guard = MAX (max_guard, (double) pf->guards[i]);
    }
  pf->max_norm = big_n;
  pf->fixed = (gamma * big_n * big_n + 4.0 * (double) dim * lambda + gamma3 * big_n * big_n
               + eps * max_guard + (big_n + 1.0) * 0x1p-149)
              * SLACK;
  pf->bound = pf->fixed + 2.0 * max_guard;
}

LkPrefilter *
lk_prefilter_new (const LkPrefilterPass *pass, const float *embeddings, gsize n, gsize dim)
{
  return lk_prefilter_new_threaded (pass, embeddings, n, dim, 1);
}

LkPrefilter *
lk_prefilter_new_threaded (const LkPrefilterPass *pass, const float *embeddings, gsize n, gsize dim,
                           guint threads)
{
  g_return_val_if_fail (dim > 0, NULL);

  LkPrefilter *pf = g_new0 (LkPrefilter, 1);
  gsize n_panels = (n + LK_PREFILTER_LANES - 1) / LK_PREFILTER_LANES;
  double max_norm2 = 0.0;

  pf->pass = pass;
  pf->n = n;
  pf->dim = dim;
  /* Dwords per row: two bf16 or int16, four int8. */
  pf->pairs = lk_prefilter_format_bytes (pass->format) ? (dim + 3) / 4 : (dim + 1) / 2;
  /* The int8 rows write every dword of every panel (int8_rows), so their
   * panels need not be cleared first. */
  gsize words = n_panels * pf->pairs * LK_PREFILTER_LANES;
  if (n_panels == 0)
    pf->panels = NULL;
  else if (lk_prefilter_format_bytes (pass->format))
    {
      pf->panels = g_aligned_alloc (words, sizeof (guint32), 64);
      lk_cpu_populate_for_write (pf->panels, words * sizeof (guint32));
    }
  else
    pf->panels = g_aligned_alloc0 (words, sizeof (guint32), 64);
  if (pass->format == LK_PREFILTER_FORMAT_INT16)
    {
      int16_rows (pf, embeddings);
      return pf;
    }
  if (lk_prefilter_format_bytes (pass->format))
    {
      int8_rows (pf, embeddings, n_panels, threads);
      return pf;
    }
  for (gsize i = 0; i < n; i++)
    {
      const float *row = embeddings + i * dim;
      guint32 *out = (guint32 *) lk_prefilter_row (pf, i);
      double norm2 = 0.0;

      for (gsize p = 0; p < dim / 2; p++)
        out[p * LK_PREFILTER_LANES]
            = bf16_from_float (row[2 * p]) | bf16_from_float (row[2 * p + 1]) << 16;
      if (dim % 2)
        out[(pf->pairs - 1) * LK_PREFILTER_LANES] = bf16_from_float (row[dim - 1]);
      for (gsize k = 0; k < dim; k++)
        norm2 += (double) row[k] * row[k];
      max_norm2 = MAX (max_norm2, norm2);
    }
  pf->max_norm = sqrt (max_norm2) * SLACK;
  pf->bound = lk_prefilter_bound_for (dim, pf->max_norm);
  return pf;
}

void
lk_prefilter_free (LkPrefilter *prefilter)
{
  if (prefilter == NULL)
    return;
  g_aligned_free (prefilter->panels);
  g_free (prefilter->corrections);
  g_aligned_free (prefilter->scales);
  g_aligned_free (prefilter->guards);
  g_free (prefilter->bars);
  g_free (prefilter);
}

void
lk_prefilter_release_below (LkPrefilter *prefilter, gsize row)
{
#ifdef __linux__
  if (prefilter == NULL || prefilter->panels == NULL)
    return;
  /* Whole panels only: a panel below `row` may still hold rows at or past it. */
  gsize bytes = MIN (row, prefilter->n) / LK_PREFILTER_LANES * prefilter->pairs * LK_PREFILTER_LANES
                * sizeof (guint32);
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guintptr base = (guintptr) prefilter->panels;
  guintptr start = (base + prefilter->released + page - 1) / page * page;
  guintptr end = (base + bytes) / page * page;
  if (end <= start)
    return;
  /* The pages hold nothing but dead panels (an allocator's header sits before
   * `panels`, and a partial page is kept); a failure only keeps them. */
  if (madvise ((void *) start, end - start, MADV_DONTNEED) == 0)
    prefilter->released = end - base;
#else
  (void) prefilter;
  (void) row;
#endif
}

void
lk_prefilter_prepare (LkPrefilter *prefilter, float tau)
{
  if (!lk_prefilter_format_bytes (prefilter->pass->format))
    return;
  if (prefilter->bars == NULL)
    prefilter->bars = g_new (float, MAX (prefilter->n, 1));
  for (gsize i = 0; i < prefilter->n; i++)
    prefilter->bars[i] = lk_prefilter_threshold_int8 (prefilter, tau, i);
  prefilter->bars_tau = tau;
}

double
lk_prefilter_bound (const LkPrefilter *prefilter)
{
  return prefilter->bound;
}

float
lk_prefilter_threshold (const LkPrefilter *prefilter, float tau)
{
  if (isinf (tau) && tau < 0)
    return -INFINITY;
  double t = (double) tau - prefilter->bound;
  float f = (float) t;
  if ((double) f > t)
    f = nextafterf (f, -INFINITY);
  return f;
}

gint32
lk_prefilter_threshold_int16 (const LkPrefilter *prefilter, float tau)
{
  if (isinf (tau) && tau < 0)
    return G_MININT32;
  double x = ((double) tau - prefilter->bound) / (prefilter->scale * prefilter->scale);
  x = floor (x - fabs (x) * 0x1p-40);
  return (gint32) CLAMP (x, (double) G_MININT32, (double) G_MAXINT32);
}

float
lk_prefilter_threshold_int8 (const LkPrefilter *prefilter, float tau, gsize i)
{
  if (prefilter->exact_only || (isinf (tau) && tau < 0))
    return -INFINITY;
  double t = (double) tau - (prefilter->fixed + (double) prefilter->guards[i]) * SLACK
             - fabs ((double) tau) * 0x1p-50;
  float f = (float) t;
  if ((double) f > t)
    f = nextafterf (f, -INFINITY);
  return f;
}

float
lk_prefilter_cosine (const LkPrefilter *prefilter, gsize i, gsize j)
{
  if (prefilter->pass->format == LK_PREFILTER_FORMAT_INT8)
    return lk_prefilter_int8_cosine (prefilter, i, j, int8_dot (prefilter, i, j));
  if (prefilter->pass->format == LK_PREFILTER_FORMAT_INT7)
    return lk_prefilter_int8_cosine (prefilter, i, j, int7_dot (prefilter, i, j));
  if (prefilter->pass->format == LK_PREFILTER_FORMAT_INT16)
    return (float) (prefilter->scale * prefilter->scale * int16_dot (prefilter, i, j));
  return cosine_portable (prefilter, i, j);
}

const char *
lk_prefilter_name (const LkPrefilter *prefilter)
{
  return prefilter->pass->name;
}

/* ---- the pass and the re-check ------------------------------------------ */

gsize
lk_prefilter_survivors (const LkPrefilter *prefilter, const LkTile *tile, LkHit *survivors)
{
  return prefilter->pass->pass (prefilter, tile, survivors);
}

/* The survivors are written to `hits`, their canonical cosines computed in
 * place by the kernel's recheck (eight pairs' chains side by side), and the
 * ones that reach tau kept in order: exactly the hits kernel->tile reports,
 * since its every cosine is that same canonical chain. Each run of
 * consecutive columns as a one-row tile through kernel->tile would pack a
 * panel and wait out one chain per pair, for the one or two survivors a run
 * usually has: nearly half a scan with the int8 pass. Grouping by row does
 * not pay here: a tile's survivors seldom share one (most rows with a
 * survivor have one or two). Gathered over a whole 256-row block, sorted by
 * row and re-checked sixteen at a time with row i's elements broadcast
 * (half the transposes, two chains), the re-check was about a third slower
 * a pair than a tile at a time: the survivors' rows, prefetched while the
 * tile's pass runs, are out of L2 by the block's end, and prefetching them
 * again in the re-check did not win it back. A large scan
 * gathers them anyway, over 512 rows, and sorts them by column instead
 * (lk-scan.c, scan_block_deferred): what it saves is fetching a column's row
 * once per survivor. This function is the small scans'. */
gsize
lk_prefilter_tile (const LkPrefilter *prefilter, const LkKernel *kernel, const LkTile *tile,
                   LkHit *hits)
{
  if (isinf (tile->tau) && tile->tau < 0)
    return kernel->tile (tile, hits);

  gsize n_survivors = lk_prefilter_survivors (prefilter, tile, hits);
  gsize n = 0;

  kernel->recheck (tile->embeddings, tile->dim, hits, n_survivors);
  for (gsize s = 0; s < n_survivors; s++)
    if (hits[s].cos >= tile->tau)
      hits[n++] = hits[s];
  return n;
}
