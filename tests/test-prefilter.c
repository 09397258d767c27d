/* test-prefilter — the bf16 first pass never changes the scan's answer
 *
 * What is proven here, on the portable emulation of vdpbf16ps (this
 * project's CPU has no AVX-512 BF16; the native pass is compared with the
 * emulation only where it runs, and skipped, saying so, elsewhere):
 *  - the emulation rounds to bf16 to nearest even, flushes denormals, and sums
 *    in the documented order (the SDM's two steps per k-pair, odd first);
 *  - the bound holds on pairs built to sit right at it — every component a
 *    bf16 rounding midpoint nudged so that each product's rounding error
 *    lowers the bf16 cosine — with the float32 cosine exactly at, and one ulp
 *    above, the kernel's bar, for dims 1…70 and 512, for every kernel that
 *    runs here, and on near-denormal rows where only the bound's absolute
 *    term saves the pair;
 *  - the bound is not vacuous: it rejects nearly every random pair at the
 *    scan's usual bar;
 *  - the scan with the prefilter returns the scan without it, pair for pair
 *    and bit for bit (and the same near-boundary count), on random and
 *    adversarial libraries, tiny and huge bars, photo and gallery masks,
 *    odd tiles, one and two threads, every kernel that runs here;
 *  - the same for the int16 pass (AVX2, which runs here, and portable):
 *    adversarial pairs at its bound, the largest dots that fit, the rate
 *    of rejection;
 *  - the same for the int8 pass (AVX-512 VNNI where it runs — it is compared
 *    with its emulation there — and portable everywhere): its integer dot
 *    through the biased bytes and the row correction, adversarial pairs at
 *    its per-pair bound, the longest rows whose dot still fits an int32, the
 *    rate of rejection;
 *  - the int8 and int7 rows quantised in AVX2 are the portable loops'
 *    bytes, scales, corrections, errors and norms, bit for bit, at every
 *    partial dword, on zeros, subnormals, ±FLT_MAX and the rounding ties;
 *  - "auto" never picks the slow emulation, and asking for the native pass
 *    where it cannot run is a clear error.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#if HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif
#ifdef __linux__
#include <unistd.h>
#endif

#include "lk-kernels-config.h"
#include "scan/lk-kernels.h"
#include "library/lk-library.h"
#include "scan/lk-prefilter-private.h"
#include "library/lk-sample.h"
#include "lk-test-faces.h"
#include "lk-test-util.h"

/* ---- helpers ------------------------------------------------------------ */

static LkPrefilter *
prefilter_new (LkPrefilterId id, const float *rows, gsize n, gsize dim)
{
  const LkPrefilterPass *pass = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_prefilter_pass_get (id, &pass, &error));
  g_assert_no_error (error);
  g_assert_nonnull (pass);
  return lk_prefilter_new (pass, rows, n, dim);
}

static LkPrefilter *
portable_prefilter (const float *rows, gsize n, gsize dim)
{
  return prefilter_new (LK_PREFILTER_BF16_PORTABLE, rows, n, dim);
}

/* The bf16 cosine of two rows given as floats. */
static float
bf16_cosine (const float *a, const float *b, gsize dim)
{
  g_autofree float *rows = g_new (float, 2 * dim);

  memcpy (rows, a, dim * sizeof (float));
  memcpy (rows + dim, b, dim * sizeof (float));
  g_autoptr (LkPrefilter) pf = portable_prefilter (rows, 2, dim);
  return lk_prefilter_cosine (pf, 0, 1);
}

static const LkKernel *
runnable_kernel (gsize k)
{
  gsize n;
  const LkKernel *const *kernels = lk_kernels_compiled (&n);

  if (k >= n || !lk_kernel_runs_here (kernels[k]))
    return NULL;
  return kernels[k];
}

static void
assert_identical (const LkScanResult *a, const LkScanResult *b)
{
  g_assert_cmpuint (a->pairs->len, ==, b->pairs->len);
  g_assert_cmpmem (a->pairs->data, a->pairs->len * sizeof (LkPair), b->pairs->data,
                   b->pairs->len * sizeof (LkPair));
  g_assert_cmpuint (a->near_boundary, ==, b->near_boundary);
}

static LkScanResult *
scan_with (const TestSet *set, const LkCalibration *cal, double bar, const LkScanOptions *options)
{
  g_autoptr (GError) error = NULL;
  LkFaces faces = test_set_faces (set);
  LkScanResult *result = lk_scan (&faces, cal, bar, options, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

/* The scan with the emulated prefilter against the scan without, for every
 * kernel that runs here, a few tilings and thread counts; returns how many
 * pairs the scan found (the same for every kernel up to near-boundary pairs,
 * which is test-scan's business). */
static guint
assert_prefilter_changes_nothing (const TestSet *set, const LkCalibration *cal, double bar)
{
  static const gsize tiles[] = { 0, 7, 33 };
  /* The emulated bf16 pass everywhere; the int16 passes; the native ones
   * where they run. */
  static const LkPrefilterId tested[]
      = { LK_PREFILTER_BF16_PORTABLE, LK_PREFILTER_INT16_PORTABLE, LK_PREFILTER_INT16,
          LK_PREFILTER_BF16,          LK_PREFILTER_INT8_PORTABLE,  LK_PREFILTER_INT8,
          LK_PREFILTER_INT8_AVXVNNI,  LK_PREFILTER_INT7_PORTABLE,  LK_PREFILTER_INT7 };
  guint found = 0;

  for (gsize k = 0; k < 8; k++)
    {
      const LkKernel *kernel = runnable_kernel (k);
      if (kernel == NULL)
        continue;
      for (gsize t = 0; t < G_N_ELEMENTS (tiles); t++)
        for (guint threads = 1; threads <= 2; threads++)
          {
            LkScanOptions off = { .kernel = kernel->id,
                                  .threads = threads,
                                  .column_tile = tiles[t],
                                  .prefilter = LK_PREFILTER_OFF };
            g_autoptr (LkScanResult) want = scan_with (set, cal, bar, &off);

            g_assert_cmpstr (want->prefilter, ==, "off");
            for (gsize p = 0; p < G_N_ELEMENTS (tested); p++)
              {
                const LkPrefilterPass *pass = NULL;
                if (!lk_prefilter_pass_get (tested[p], &pass, NULL))
                  continue;
                LkScanOptions on = off;
                on.prefilter = tested[p];
                g_autoptr (LkScanResult) got = scan_with (set, cal, bar, &on);
                g_assert_cmpstr (got->prefilter, ==,
                                 isinf (lk_scan_loosest_cosine (set->crop_px, set->n, cal, bar))
                                     ? "off"
                                     : pass->name);
                assert_identical (got, want);
              }
            found = want->pairs->len;
          }
    }
  return found;
}

/* ---- the emulation's arithmetic ----------------------------------------- */

/* Against a row (1), a one-dimensional cosine is the other row rounded. */
static void
test_rounds_to_nearest_even (void)
{
  static const struct
  {
    float in, out;
  } cases[] = {
    { 1.0f, 1.0f },
    { 1.0f + 0x1p-8f, 1.0f },                      /* tie: to even (down) */
    { 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-6f },        /* tie: to even (up) */
    { 1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-7f }, /* above the midpoint */
    { 1.0f + 0x1p-8f - 0x1p-20f, 1.0f },           /* below it */
    { -(1.0f + 0x1p-8f + 0x1p-20f), -(1.0f + 0x1p-7f) },
    { 0x1.fffffep-1f, 1.0f }, /* carries into the exponent */
    { 0x1p-126f, 0x1p-126f }, /* the smallest normal stays */
    { 0x1p-127f, 0.0f },      /* a denormal is flushed */
    { -0x1.fffffcp-127f, 0.0f },
  };
  float one = 1.0f;

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    g_assert_cmpfloat (bf16_cosine (&cases[c].in, &one, 1), ==, cases[c].out);
}

/* Products (p0, p1, p2, p3) = (2^-24, 1, -1, 2^-24): the documented order —
 * k-pair by k-pair, the odd element first — sums 1 + 2^-24 (a tie, to 1),
 * + 2^-24 (again 1), − 1: exactly 0. In index order it would be 2^-24. */
static void
test_sums_in_the_documented_order (void)
{
  float a[4] = { 0x1p-12f, 1.0f, -1.0f, 0x1p-12f };
  float b[4] = { 0x1p-12f, 1.0f, 1.0f, 0x1p-12f };

  g_assert_cmpfloat (bf16_cosine (a, b, 4), ==, 0.0f);
  g_assert_cmpfloat (test_naive_dot (a, b, 4), ==, 0x1p-24f);
}

/* vdpbf16ps flushes a tiny result to zero where float32 keeps a denormal;
 * a product that is itself tiny is still added when the sum is normal. */
static void
test_flushes_tiny_results (void)
{
  float a[2] = { 0x1p-70f, 0.0f };
  float b[2] = { 0x1p-70f, 0.0f };
  float c[2] = { 0x1p-70f, 0x1p-60f };
  float d[2] = { 0x1p-70f, 0x1p-60f };

  g_assert_cmpfloat (bf16_cosine (a, b, 2), ==, 0.0f);
  g_assert_cmpfloat (test_naive_dot (a, b, 2), >, 0.0f);
  /* 2^-120 first (normal), then the tiny product 2^-140, exactly. */
  g_assert_cmpfloat (bf16_cosine (c, d, 2), ==, 0x1p-120f + 0x1p-140f);
}

/* ---- the bound ---------------------------------------------------------- */

static void
test_bound_value (void)
{
  double u = 0x1p-8, gamma512 = 512 * 0x1p-24 / (1 - 512 * 0x1p-24);
  double want = 2 * u + u * u + gamma512 * ((1 + u) * (1 + u) + 1);
  double b512 = lk_prefilter_bound_for (512, 1.0);

  g_test_message ("bound at dim 512, unit rows: %.7f", b512);
  g_assert_cmpfloat (b512, >=, want);
  g_assert_cmpfloat (b512, <=, want * (1 + 1e-9));
  g_assert_cmpfloat_with_epsilon (b512, 0.0078890, 1e-7);
  for (gsize dim = 1; dim < 600; dim++)
    g_assert_cmpfloat (lk_prefilter_bound_for (dim, 1.0), <, lk_prefilter_bound_for (dim + 1, 1.0));
  g_assert_cmpfloat (lk_prefilter_bound_for (512, 1.001), >, b512);
}

/* Rows a, b of `dim` floats, magnitudes 2^e (1 + 2^-8), each nudged 2^-20
 * off the bf16 midpoint: a component with a positive product rounds down in
 * magnitude (to 2^e), one with a negative product up (to 2^e (1 + 2^-7)), so
 * every product's rounding lowers the bf16 dot, each by ≈ 2u |a_k b_k|. The
 * first `negative` components have negative products. */
static void
adversarial_pair (gsize dim, gsize negative, int e, float *a, float *b)
{
  for (gsize k = 0; k < dim; k++)
    {
      gboolean neg = k < negative;
      float mag = ldexpf (1.0f + 0x1p-8f + (neg ? 0x1p-20f : -0x1p-20f), e);
      a[k] = mag;
      b[k] = neg ? -mag : mag;
    }
}

/* One pair through `kernel` and through the prefilter in front of it, with
 * the kernel's bar exactly at the pair's float32 cosine and one ulp below it.
 * Returns how much of the bound the bf16 rounding used. */
static double assert_pair_survives_pass (const LkPrefilterPass *pass, const LkKernel *kernel,
                                         const float *a, const float *b, gsize dim);

static double
assert_pair_survives_with (LkPrefilterId id, const LkKernel *kernel, const float *a, const float *b,
                           gsize dim)
{
  const LkPrefilterPass *pass = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_prefilter_pass_get (id, &pass, &error));
  g_assert_no_error (error);
  g_assert_nonnull (pass);
  return assert_pair_survives_pass (pass, kernel, a, b, dim);
}

/* The pair (a, b) reaches the kernel through `pass` at a bar equal to its
 * float32 cosine and one ulp below; returns the share of the pass's bound its
 * low-precision cosine used. */
static double
assert_pair_survives_pass (const LkPrefilterPass *pass, const LkKernel *kernel, const float *a,
                           const float *b, gsize dim)
{
  g_autofree float *rows = g_new (float, 2 * dim);
  guint64 photo[2] = { 0, 1 };
  guint8 gallery[2] = { 1, 1 };
  LkHit want, got[1];

  memcpy (rows, a, dim * sizeof (float));
  memcpy (rows + dim, b, dim * sizeof (float));
  g_autoptr (LkPrefilter) pf = lk_prefilter_new (pass, rows, 2, dim);
  LkTile tile = { rows, dim, photo, gallery, 0, 1, 1, 2, -INFINITY };
  g_assert_cmpuint (kernel->tile (&tile, &want), ==, 1);

  float bars[2] = { want.cos, nextafterf (want.cos, -INFINITY) };
  for (gsize k = 0; k < 2; k++)
    {
      tile.tau = bars[k];
      g_assert_cmpuint (lk_prefilter_tile (pf, kernel, &tile, got), ==, 1);
      g_assert_cmpuint (got[0].i, ==, 0);
      g_assert_cmpuint (got[0].j, ==, 1);
      g_assert_cmpmem (&got[0].cos, sizeof (float), &want.cos, sizeof (float));
    }

  double bound = lk_prefilter_bound (pf);
  double shortfall = (double) want.cos - (double) lk_prefilter_cosine (pf, 0, 1);
  g_assert_cmpfloat (shortfall, <=, bound);
  return shortfall / bound;
}

static double
assert_pair_survives (const LkKernel *kernel, const float *a, const float *b, gsize dim)
{
  return assert_pair_survives_with (LK_PREFILTER_BF16_PORTABLE, kernel, a, b, dim);
}

static void
test_bound_holds_at_adversarial_pairs (void)
{
  gsize dims[71];
  double tightest = 0.0;

  for (gsize d = 0; d < 70; d++)
    dims[d] = d + 1;
  dims[70] = 512;
  for (gsize k = 0; k < 8; k++)
    {
      const LkKernel *kernel = runnable_kernel (k);
      if (kernel == NULL)
        continue;
      for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
        {
          gsize dim = dims[d];
          g_autofree float *a = g_new (float, dim);
          g_autofree float *b = g_new (float, dim);
          /* Rows of norm ≈ 1, so the bar sits where a real one does. */
          int e = -(int) ceil (log2 ((double) dim) / 2);
          /* From all products positive to a cosine near the usual bar and
           * below zero. */
          gsize negatives[] = { 0, dim * 3 / 10, dim / 2, dim - dim / 8 };

          for (gsize s = 0; s < G_N_ELEMENTS (negatives); s++)
            {
              adversarial_pair (dim, negatives[s], e, a, b);
              double used = assert_pair_survives (kernel, a, b, dim);
              if (dim == 512)
                tightest = MAX (tightest, used);
            }

          /* Near-denormal rows: the float32 products are denormal and the
           * bf16 ones flush to zero, so only the bound's absolute term keeps
           * these pairs. */
          adversarial_pair (dim, 0, -64, a, b);
          assert_pair_survives (kernel, a, b, dim);
          adversarial_pair (dim, dim / 3, -63, a, b);
          assert_pair_survives (kernel, a, b, dim);
          /* One normal component among denormal and flushed ones. */
          adversarial_pair (dim, 0, -100, a, b);
          a[0] = b[0] = 0.5f;
          if (dim > 1)
            a[dim - 1] = b[dim - 1] = 0x1p-130f;
          assert_pair_survives (kernel, a, b, dim);
        }
    }
  /* The construction does sit at the bound: the rounding alone used nearly
   * all of it. */
  g_test_message ("the adversarial 512-d pairs used %.4f of the bound", tightest);
  g_assert_cmpfloat (tightest, >, 0.97);
}

/* At the scan's usual bar (the default calibration at 0.9 and mid-sized
 * crops: cos ≈ 0.42), random 512-d pairs sit at 0 ± 0.044 and all but a
 * vanishing fraction must be rejected by the bf16 pass alone. */
static void
test_bound_rejects_most_random_pairs (void)
{
  const gsize n = 256, dim = 512;
  g_autofree float *rows = g_new (float, n *dim);
  g_autofree guint64 *photo = g_new (guint64, n);
  g_autofree guint8 *gallery = g_new (guint8, n);
  g_autofree LkHit *survivors = g_new (LkHit, n * n);
  float crop = 150.0f;
  LkCalibration cal = LK_CALIBRATION_DEFAULT;
  double tau = lk_scan_loosest_cosine (&crop, 1, &cal, 0.9);

  for (gsize i = 0; i < n; i++)
    {
      test_vector (i + 1, dim, rows + i * dim);
      photo[i] = i;
      gallery[i] = 1;
    }
  g_autoptr (LkPrefilter) pf = portable_prefilter (rows, n, dim);
  LkTile tile = { rows, dim, photo, gallery, 0, n, 0, n, (float) tau };
  gsize kept = lk_prefilter_survivors (pf, &tile, survivors);
  double pairs = n * (n - 1) / 2.0;

  g_test_message ("bar cos %.4f, bound %.5f: the bf16 pass rejected %.4f%% of %.0f random pairs",
                  tau, lk_prefilter_bound (pf), 100.0 * (1.0 - kept / pairs), pairs);
  g_assert_cmpfloat (tau, >, 0.3);
  g_assert_cmpfloat (kept / pairs, <, 0.001);

  /* Just below the rounding's reach, every pair must survive. */
  tile.tau = -0.5f;
  g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, survivors), ==, (gsize) pairs);
}

/* ---- int16 -------------------------------------------------------------- */

/* Rows whose component 0 is the library's largest (0.5, so scale = 0.5 / M
 * exactly), and every other component a quantisation midpoint nudged 1/64
 * of a step so that a positive product rounds both factors down and a
 * negative one both up in magnitude: every error lowers the integer dot,
 * by ≈ (s/2)(|a_k| + |b_k|) each — the bound's main term, δ (‖a‖₁ + ‖b‖₁). */
static void
int16_adversarial_pair (gsize dim, gsize negative, float *a, float *b)
{
  double s = 0.5 / lk_prefilter_int16_max (dim);

  a[0] = b[0] = 0.5f;
  for (gsize k = 1; k < dim; k++)
    {
      gboolean neg = k <= negative;
      double m = (double) (1 + (k * 37) % (lk_prefilter_int16_max (dim) / 2));
      float mag = (float) ((m + 0.5 + (neg ? 1.0 : -1.0) / 64) * s);
      a[k] = mag;
      b[k] = neg ? -mag : mag;
    }
}

static void
test_int16_bound_holds_at_adversarial_pairs (void)
{
  static const LkPrefilterId ids[] = { LK_PREFILTER_INT16_PORTABLE, LK_PREFILTER_INT16 };
  double tightest = 0.0;

  for (gsize p = 0; p < G_N_ELEMENTS (ids); p++)
    {
      const LkPrefilterPass *pass;
      if (!lk_prefilter_pass_get (ids[p], &pass, NULL))
        continue;
      for (gsize k = 0; k < 8; k++)
        {
          const LkKernel *kernel = runnable_kernel (k);
          if (kernel == NULL)
            continue;
          for (gsize dim = 1; dim <= 512; dim = dim < 70 ? dim + 1 : 512)
            {
              g_autofree float *a = g_new (float, dim);
              g_autofree float *b = g_new (float, dim);
              gsize negatives[] = { 0, dim / 3, dim / 2, dim - 1 };
              for (gsize n = 0; n < G_N_ELEMENTS (negatives); n++)
                {
                  int16_adversarial_pair (dim, negatives[n], a, b);
                  double used = assert_pair_survives_with (ids[p], kernel, a, b, dim);
                  if (dim == 512)
                    tightest = MAX (tightest, used);
                }
              if (dim == 512)
                break;
            }
        }
    }
  g_test_message ("the adversarial 512-d pairs used %.4f of the int16 bound", tightest);
  g_assert_cmpfloat (tightest, >, 0.9);
}

/* Every component ±amax: every |q| = M, the largest integer dot there can
 * be, at dims up to 4096 — it must come out as dim · M² (s² Q = 1), not
 * wrapped around — and the AVX2 pass must keep the pair at a bar near 1. */
static void
test_int16_dots_never_overflow (void)
{
  static const gsize dims[] = { 1, 2, 3, 17, 64, 70, 512, 1000, 4096 };

  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = g_new (float, 2 * dim);
      guint64 photo[2] = { 0, 1 };
      guint8 gallery[2] = { 1, 1 };
      LkHit hit[1];

      for (gsize k = 0; k < 2 * dim; k++)
        rows[k] = (float) (1.0 / sqrt ((double) dim));
      for (gsize p = 0; p < 2; p++)
        {
          const LkPrefilterPass *pass;
          LkPrefilterId id = p == 0 ? LK_PREFILTER_INT16_PORTABLE : LK_PREFILTER_INT16;
          if (!lk_prefilter_pass_get (id, &pass, NULL))
            continue;
          g_autoptr (LkPrefilter) pf = lk_prefilter_new (pass, rows, 2, dim);
          LkTile tile = { rows, dim, photo, gallery, 0, 1, 1, 2, 0.99f };
          g_assert_cmpfloat_with_epsilon (lk_prefilter_cosine (pf, 0, 1), 1.0, 1e-6);
          g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, hit), ==, 1);
          g_assert_cmpfloat_with_epsilon (hit[0].cos, 1.0, 1e-6);
        }
      g_assert_cmpint ((gint64) dim * (lk_prefilter_int16_max (dim) + 1)
                           * (lk_prefilter_int16_max (dim) + 1),
                       <=, G_MAXINT32);
    }
}

static void
test_int16_bound_rejects_most_random_pairs (void)
{
  const gsize n = 256, dim = 512;
  g_autofree float *rows = g_new (float, n *dim);
  g_autofree guint64 *photo = g_new (guint64, n);
  g_autofree guint8 *gallery = g_new (guint8, n);
  g_autofree LkHit *survivors = g_new (LkHit, n * n);
  float crop = 150.0f;
  LkCalibration cal = LK_CALIBRATION_DEFAULT;
  double tau = lk_scan_loosest_cosine (&crop, 1, &cal, 0.9);

  for (gsize i = 0; i < n; i++)
    {
      test_vector (i + 1, dim, rows + i * dim);
      photo[i] = i;
      gallery[i] = 1;
    }
  g_autoptr (LkPrefilter) pf = prefilter_new (LK_PREFILTER_INT16_PORTABLE, rows, n, dim);
  LkTile tile = { rows, dim, photo, gallery, 0, n, 0, n, (float) tau };
  gsize kept = lk_prefilter_survivors (pf, &tile, survivors);
  double pairs = n * (n - 1) / 2.0;

  g_test_message ("bar cos %.4f, int16 bound %.5f: the int16 pass rejected %.4f%% of %.0f "
                  "random pairs",
                  tau, lk_prefilter_bound (pf), 100.0 * (1.0 - kept / pairs), pairs);
  g_assert_cmpfloat (lk_prefilter_bound (pf), <, 0.01);
  g_assert_cmpfloat (kept / pairs, <, 0.001);
  tile.tau = -0.5f;
  g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, survivors), ==, (gsize) pairs);
}

/* ---- int8 --------------------------------------------------------------- */

/* The integer dot through the biased column bytes and the row correction is
 * Σ q_a q_b, with q = round (a / s) and s = amax / 127 per row: rows whose
 * scales are powers of two, so every q is known in advance. */
static void
test_int8_dot_is_exact (void)
{
  static const gsize dims[] = { 1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 70, 512 };

  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = g_new (float, 3 * dim);
      g_autofree gint32 *q = g_new (gint32, 3 * dim);

      for (gsize r = 0; r < 3; r++)
        for (gsize k = 0; k < dim; k++)
          {
            /* Row r's scale 2^-(7 + r): its first element is ±127 steps. */
            gint32 v = k == 0 ? (r == 1 ? -127 : 127) : (gint32) ((k * 53 + r * 29) % 255) - 127;
            q[r * dim + k] = v;
            rows[r * dim + k] = ldexpf ((float) v, -(7 + (int) r));
          }
      g_autoptr (LkPrefilter) pf = prefilter_new (LK_PREFILTER_INT8_PORTABLE, rows, 3, dim);
      for (gsize i = 0; i < 3; i++)
        for (gsize j = 0; j < 3; j++)
          {
            gint64 want = 0;
            for (gsize k = 0; k < dim; k++)
              want += (gint64) q[i * dim + k] * q[j * dim + k];
            double cos = ldexp ((double) want, -(14 + (int) (i + j)));
            g_assert_cmpfloat (lk_prefilter_cosine (pf, i, j), ==, (float) cos);
          }
      /* Exact rows: no guard, only the kernel's and the epilogue's roundings
       * (γ_dim N² + γ_3 N² and terms of order 2^-126) are left. */
      double n2 = 0.0;
      for (gsize i = 0; i < 3; i++)
        {
          double r2 = 0.0;
          for (gsize k = 0; k < dim; k++)
            r2 += (double) rows[i * dim + k] * rows[i * dim + k];
          n2 = MAX (n2, r2);
        }
      g_assert_cmpfloat (lk_prefilter_bound (pf), <=, (dim + 3) * 0x1p-24 * n2 * 1.001 + 1e-30);
    }
}

/* The int8 rows quantised on several threads (the scan quantises on its
 * own thread count, each thread a range of whole panels) are the bytes,
 * scales, corrections and guards of one thread, and each byte is the
 * round (a / s) + 128 of its element, padding 128: 6,205 rows (a partial
 * last panel) of 130 floats (a partial last dword), on 1, 2 and 3 threads. */
static void
test_int8_rows_same_for_any_thread_count (void)
{
  const gsize n = 6205, dim = 130;
  g_autofree float *rows = g_new (float, n *dim);
  g_autoptr (GRand) rand = g_rand_new_with_seed (16);
  const LkPrefilterPass *pass = NULL;

  for (gsize i = 0; i < n; i++)
    {
      double norm2 = 0.0;
      for (gsize k = 0; k < dim; k++)
        {
          rows[i * dim + k] = (float) g_rand_double_range (rand, -1.0, 1.0);
          norm2 += (double) rows[i * dim + k] * rows[i * dim + k];
        }
      for (gsize k = 0; k < dim; k++)
        rows[i * dim + k] = (float) (rows[i * dim + k] / sqrt (norm2));
    }
  g_assert_true (lk_prefilter_pass_get (LK_PREFILTER_INT8_PORTABLE, &pass, NULL));
  g_autoptr (LkPrefilter) one = lk_prefilter_new_threaded (pass, rows, n, dim, 1);
  gsize panels = (n + LK_PREFILTER_LANES - 1) / LK_PREFILTER_LANES;
  gsize words = panels * one->pairs * LK_PREFILTER_LANES;
  gint32 m = lk_prefilter_int8_max (dim);

  for (gsize i = 0; i < panels * LK_PREFILTER_LANES; i++)
    {
      const guint8 *bytes = (const guint8 *) lk_prefilter_row (one, i);
      double inverse = i < n ? 1.0 / one->scales[i] : 0.0;
      for (gsize k = 0; k < one->pairs * 4; k++)
        {
          gint32 want = 0;
          if (i < n && k < dim)
            want = CLAMP ((gint32) floor ((double) rows[i * dim + k] * inverse + 0.5), -m, m);
          g_assert_cmpint (bytes[(k / 4) * LK_PREFILTER_LANES * 4 + k % 4], ==, want + 128);
        }
    }
  for (guint threads = 2; threads <= 3; threads++)
    {
      g_autoptr (LkPrefilter) many = lk_prefilter_new_threaded (pass, rows, n, dim, threads);
      g_assert_cmpmem (many->panels, words * 4, one->panels, words * 4);
      g_assert_cmpmem (many->scales, n * 4, one->scales, n * 4);
      g_assert_cmpmem (many->corrections, n * 4, one->corrections, n * 4);
      g_assert_cmpmem (many->guards, n * 4, one->guards, n * 4);
      g_assert_cmpfloat (many->bound, ==, one->bound);
      g_assert_cmpfloat (many->fixed, ==, one->fixed);
    }
}

/* Kinds of rows for the quantisers' comparison (quantiser_rows). */
enum
{
  ROW_ZERO,      /* amax 0: s = 0, inverse 0 */
  ROW_NEG_ZERO,  /* −0 and +0 */
  ROW_UNIT,      /* a unit row */
  ROW_SUBNORMAL, /* every element below 2^-126, amax too */
  ROW_MIXED,     /* normal and subnormal elements, q = 0 for most */
  ROW_HUGE,      /* ±FLT_MAX and huge */
  ROW_SPREAD,    /* exponents from 2^-149 to 2^127 */
  ROW_HALVES,    /* s a power of two, elements (j + 1/2) s and their neighbours */
  ROW_TIES,      /* s any float, elements with a × (1/s) + 128.5 an integer */
  ROW_KINDS,
};

/* A float no less than x >= 0, as lk-prefilter.c's float_up. */
static float
test_float_up (double x)
{
  float f = (float) x;
  return (double) f < x ? nextafterf (f, INFINITY) : f;
}

/* Row `kind` of `dim` elements for a quantiser with limit m; returns how many
 * of its elements land exactly on a rounding tie, a × (1/s) + 128.5 an
 * integer in double. */
static gsize
quantiser_row (float *row, gsize dim, int kind, gint32 m, GRand *rand)
{
  float amax = 0.0f;
  double inverse = 0.0;
  gsize ties = 0;

  for (gsize k = 0; k < dim; k++)
    {
      float sign = g_rand_boolean (rand) ? 1.0f : -1.0f;
      switch (kind)
        {
          case ROW_ZERO:
            row[k] = 0.0f;
            break;
          case ROW_NEG_ZERO:
            row[k] = sign * 0.0f;
            break;
          case ROW_UNIT:
            row[k] = (float) g_rand_double_range (rand, -1.0, 1.0);
            break;
          case ROW_SUBNORMAL:
            row[k] = sign * ldexpf ((float) g_rand_int_range (rand, 0, 1 << 23), -149);
            break;
          case ROW_MIXED:
            row[k] = k % 3 == 0 ? (float) g_rand_double_range (rand, -1.0, 1.0)
                                : sign * ldexpf ((float) g_rand_int_range (rand, 1, 1 << 23), -149);
            break;
          case ROW_HUGE:
            row[k] = k % 2 == 0 ? sign * FLT_MAX
                                : sign * ldexpf ((float) g_rand_double_range (rand, 1.0, 2.0), 120);
            break;
          case ROW_SPREAD:
            /* a mantissa below 2, so that 2^127 × it is finite */
            row[k] = sign
                     * ldexpf (MIN ((float) g_rand_double_range (rand, 1.0, 2.0), 0x1.fffffep0f),
                               g_rand_int_range (rand, -149, 128));
            break;
          case ROW_HALVES:
            {
              /* s = 2^-7 exactly (amax = m 2^-7 below), inverse 2^7: a × 2^7 +
               * 128.5 is an integer for a = (j + 1/2) 2^-7; its neighbours
               * are a float either side of the tie. */
              float a = ldexpf ((float) g_rand_int_range (rand, -m, m) + 0.5f, -7);
              int side = g_rand_int_range (rand, 0, 3);
              row[k] = side == 0 ? a : nextafterf (a, side == 1 ? INFINITY : -INFINITY);
              row[k] = CLAMP (row[k], -ldexpf ((float) m, -7), ldexpf ((float) m, -7));
              break;
            }
          default:
            row[k] = 0.0f;
            break;
        }
    }
  if (kind == ROW_HALVES)
    row[dim - 1] = ldexpf ((float) m, -7) * (g_rand_boolean (rand) ? 1.0f : -1.0f);
  if (kind == ROW_TIES)
    {
      /* amax a random float, s = float_up (amax / m) as the rows compute
       * it; then floats near (j + 1/2) s for which a × inverse lands on
       * j + 1/2 exactly, where one is found. */
      amax = (float) g_rand_double_range (rand, 0.1, 10.0);
      row[dim - 1] = amax;
      float s = test_float_up ((double) amax / m);
      inverse = 1.0 / s;
      for (gsize k = 0; k + 1 < dim; k++)
        {
          double target = (double) g_rand_int_range (rand, -m, m) + 0.5;
          float a = (float) (target * s);
          row[k] = a;
          for (int step = -4; step <= 4; step++)
            {
              float b = a;
              for (int t = 0; t < ABS (step); t++)
                b = nextafterf (b, step < 0 ? -INFINITY : INFINITY);
              if (fabsf (b) <= amax && (double) b * inverse == target)
                row[k] = b;
            }
        }
    }
  /* Count the ties the rows now hold, as the quantisers compute them. */
  amax = 0.0f;
  for (gsize k = 0; k < dim; k++)
    amax = MAX (amax, fabsf (row[k]));
  float s = test_float_up ((double) amax / m);
  inverse = s > 0 ? 1.0 / s : 0.0;
  for (gsize k = 0; k < dim; k++)
    {
      double x = (double) row[k] * inverse + 128.5;
      ties += x == floor (x) && row[k] != 0.0f;
    }
  return ties;
}

/* The vector quantiser (lk_prefilter_quantiser(): AVX2 where it runs) and
 * the portable one write the same bytes, scales and corrections, and
 * return the same errors and maximum norm, bit for bit: dims 1–9 (every
 * partial last dword), 127–129, 512 and 513; rows of zeros, −0, unit,
 * subnormal, mixed, ±FLT_MAX, exponents across the whole range, elements
 * exactly on the rounding ties (a × (1/s) + 128.5 an integer) and a float
 * either side; int8 (bias 128, m its limit and small ones) and int7 (its
 * bias and m). And lk_prefilter_new's rows, on the vector quantiser, are
 * the portable quantiser's. */
static void
test_int8_rows_vector_equals_scalar (void)
{
  static const gsize dims[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 127, 128, 129, 512, 513 };
  const LkPrefilterQuantiser *native = lk_prefilter_quantiser ();
  const LkPrefilterQuantiser *portable = &lk_prefilter_quantiser_portable;
  g_autoptr (GRand) rand = g_rand_new_with_seed (1616);
  const gsize copies = 3, n = ROW_KINDS * copies; /* a partial last panel */
  gsize ties = 0;

  if (native == portable)
    {
      g_test_skip ("no vector quantiser runs here (AVX2 on x86-64)");
      return;
    }
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      const struct
      {
        LkPrefilterId id;
        gint32 bias, m;
      } cases[] = {
        { LK_PREFILTER_INT8_PORTABLE, 128, lk_prefilter_int8_max (dim) },
        { LK_PREFILTER_INT7_PORTABLE, LK_PREFILTER_INT7_BIAS, lk_prefilter_int7_max (dim) },
        { LK_PREFILTER_INT8_PORTABLE, 128, 1 },
        { LK_PREFILTER_INT8_PORTABLE, 128, 5 },
        { LK_PREFILTER_INT7_PORTABLE, LK_PREFILTER_INT7_BIAS, 2 },
      };
      for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
        {
          gint32 m = cases[c].m, bias = cases[c].bias;
          g_autofree float *rows = g_new (float, n *dim);
          g_autofree double *errors_p = g_new (double, n);
          g_autofree double *errors_v = g_new (double, n);

          for (gsize i = 0; i < n; i++)
            ties += quantiser_row (rows + i * dim, dim, (int) (i % ROW_KINDS), m, rand);
          g_autoptr (LkPrefilter) p = prefilter_new (cases[c].id, rows, n, dim);
          g_autoptr (LkPrefilter) v = prefilter_new (cases[c].id, rows, n, dim);
          gsize panels = (n + LK_PREFILTER_LANES - 1) / LK_PREFILTER_LANES;
          gsize words = panels * p->pairs * LK_PREFILTER_LANES;
          /* Different leftovers in each, so that neither passes by not
           * writing. */
          memset (p->panels, 0x00, words * 4);
          memset (v->panels, 0xff, words * 4);
          memset (p->scales, 0x00, n * 4);
          memset (v->scales, 0xff, n * 4);
          memset (p->corrections, 0x00, n * 4);
          memset (v->corrections, 0xff, n * 4);
          for (gsize i = 0; i < n; i++)
            {
              double norm_p = lk_prefilter_int8_row (p, portable, rows, i, m, bias, errors_p);
              double norm_v = lk_prefilter_int8_row (v, native, rows, i, m, bias, errors_v);
              if (memcmp (&norm_p, &norm_v, sizeof norm_p) != 0
                  || memcmp (&errors_p[i], &errors_v[i], sizeof (double)) != 0)
                g_error ("dim %zu, m %d, bias %d, row %zu (kind %zu): norm^2 %a / %a, "
                         "error %a / %a (portable / %s)",
                         dim, m, bias, i, i % ROW_KINDS, norm_p, norm_v, errors_p[i], errors_v[i],
                         native->name);
              const guint32 *row_p = lk_prefilter_row (p, i), *row_v = lk_prefilter_row (v, i);
              for (gsize w = 0; w < p->pairs; w++)
                if (row_p[w * LK_PREFILTER_LANES] != row_v[w * LK_PREFILTER_LANES])
                  g_error ("dim %zu, m %d, bias %d, row %zu (kind %zu), dword %zu: "
                           "%08x / %08x (portable / %s)",
                           dim, m, bias, i, i % ROW_KINDS, w, row_p[w * LK_PREFILTER_LANES],
                           row_v[w * LK_PREFILTER_LANES], native->name);
            }
          g_assert_cmpmem (p->scales, n * 4, v->scales, n * 4);
          g_assert_cmpmem (p->corrections, n * 4, v->corrections, n * 4);

          /* lk_prefilter_new at the pass's own m and bias: the same rows. */
          if (c < 2)
            {
              g_autoptr (LkPrefilter) made = prefilter_new (cases[c].id, rows, n, dim);
              for (gsize i = 0; i < n; i++)
                {
                  const guint32 *row_p = lk_prefilter_row (p, i);
                  const guint32 *row_m = lk_prefilter_row (made, i);
                  for (gsize w = 0; w < p->pairs; w++)
                    g_assert_cmphex (row_m[w * LK_PREFILTER_LANES], ==,
                                     row_p[w * LK_PREFILTER_LANES]);
                }
              g_assert_cmpmem (made->scales, n * 4, p->scales, n * 4);
              g_assert_cmpmem (made->corrections, n * 4, p->corrections, n * 4);
            }
        }
    }
  /* The ties are there to be rounded: thousands of them, not a handful. */
  g_test_message ("%zu elements on a rounding tie", ties);
  g_assert_cmpuint (ties, >, 1000);
}

/* lk_prefilter_release_below gives the pages of the rows below back (they
 * read as zeros again: a biased int8 byte is never 0, a bf16 of a unit row
 * rarely) and leaves every row at or after it as it was. */
static void
test_release_below_keeps_later_rows (void)
{
  static const LkPrefilterId ids[] = { LK_PREFILTER_INT8_PORTABLE, LK_PREFILTER_BF16_PORTABLE };
  const gsize n = 2048, dim = 512, cut = 1000;
  g_autofree float *rows = g_new (float, n *dim);

  for (gsize i = 0; i < n; i++)
    test_vector (i + 1, dim, rows + i * dim);
  for (gsize k = 0; k < G_N_ELEMENTS (ids); k++)
    {
      g_autoptr (LkPrefilter) kept = prefilter_new (ids[k], rows, n, dim);
      g_autoptr (LkPrefilter) pf = prefilter_new (ids[k], rows, n, dim);

      lk_prefilter_release_below (pf, cut);
#ifdef __linux__
      /* Panels of 16 rows, pages of 4 KiB (or more): most of the rows below
       * the cut, and none at or after it. */
      gsize panel_bytes = pf->pairs * LK_PREFILTER_LANES * sizeof (guint32);
      g_assert_cmpuint (pf->released, >=, (cut / LK_PREFILTER_LANES) * panel_bytes / 2);
      g_assert_cmpuint (pf->released, <=, (cut / LK_PREFILTER_LANES) * panel_bytes);
      /* The first whole page of the panels reads as zeros now. */
      gsize page = (gsize) sysconf (_SC_PAGESIZE);
      guintptr first = ((guintptr) pf->panels + page - 1) / page * page;
      if (ids[k] == LK_PREFILTER_INT8_PORTABLE)
        g_assert_cmpuint (*(const guint32 *) first, ==, 0);
#endif
      lk_prefilter_release_below (pf, cut / 2); /* backwards: nothing to do */
      for (gsize i = cut; i < n; i += 37)
        for (gsize j = i; j < n; j += 101)
          g_assert_cmpfloat (lk_prefilter_cosine (pf, i, j), ==, lk_prefilter_cosine (kept, i, j));
    }
}

/* Rows whose component 0 is their largest (127 s, s = 2^-e so that the row
 * norm is about 1 and s is the row's scale exactly), every other component
 * the same magnitude off a quantisation midpoint by 1/64 of a step, so that
 * a positive product rounds both factors down and a negative one both up in
 * magnitude: every error lowers the integer dot, and with all magnitudes
 * equal the quantisation errors are parallel to the rows — Cauchy–Schwarz,
 * the bound's main term, is met with equality but for component 0. */
static void
int8_adversarial_pair (gsize dim, gsize negative, float *a, float *b)
{
  int e = (int) ceil (log2 (127.0 * sqrt ((double) dim)));

  a[0] = b[0] = ldexpf (127.0f, -e);
  for (gsize k = 1; k < dim; k++)
    {
      gboolean neg = k <= negative;
      float mag = ldexpf (125.5f + (neg ? 1.0f : -1.0f) / 64, -e);
      a[k] = mag;
      b[k] = neg ? -mag : mag;
    }
}

/* Every int8 pass that runs here, the portable emulation first: the native
 * AVX-512 VNNI, AVX-VNNI and AMX passes where the CPU has them, the AVX-VNNI
 * pass's code (lk-prefilter-int8-ymm.h) with vpdpbusd EVEX-encoded (AVX-512
 * VNNI + VL) and emulated in AVX2, which run where AVX-VNNI does not, and
 * the AMX pass's code (lk-prefilter-int8-amx.h) on emulated tiles, portable
 * and with the native file's AVX-512 epilogue. */
static gsize
int8_passes (const LkPrefilterPass *out[8])
{
  static const LkPrefilterId ids[] = { LK_PREFILTER_INT8_PORTABLE, LK_PREFILTER_INT8,
                                       LK_PREFILTER_INT8_AVXVNNI, LK_PREFILTER_INT8_AMX };
  gsize n = 0;

  for (gsize k = 0; k < G_N_ELEMENTS (ids); k++)
    if (lk_prefilter_pass_get (ids[k], &out[n], NULL))
      n++;
#if LK_HAVE_PREFILTER_INT8_YMM_AVX512VL
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_ymm_avx512vl))
    out[n++] = &lk_prefilter_pass_int8_ymm_avx512vl;
#endif
#if LK_HAVE_PREFILTER_INT8_YMM_AVX2
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_ymm_avx2))
    out[n++] = &lk_prefilter_pass_int8_ymm_avx2;
#endif
  out[n++] = &lk_prefilter_pass_int8_amx_emulated;
#if LK_HAVE_PREFILTER_INT8_AMX_EMULATED_AVX512
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_amx_emulated_avx512))
    out[n++] = &lk_prefilter_pass_int8_amx_emulated_avx512;
#endif
  return n;
}

/* Every pass of `passes` keeps the adversarial pairs `make` builds (at dims
 * 1–70 and 512, with none, a third, half and all but one components against
 * the product) with every kernel that runs here, and the 512-d ones use
 * more than 95 % of the pass's bound: the bound is tight, not just safe. */
static void
assert_bound_holds_at_adversarial_pairs (const char *family, const LkPrefilterPass *const *passes,
                                         gsize n_passes,
                                         void (*make) (gsize dim, gsize negative, float *a,
                                                       float *b))
{
  double tightest = 0.0;

  for (gsize p = 0; p < n_passes; p++)
    {
      g_test_message ("%s pass %s", family, passes[p]->name);
      for (gsize k = 0; k < 8; k++)
        {
          const LkKernel *kernel = runnable_kernel (k);
          if (kernel == NULL)
            continue;
          for (gsize dim = 1; dim <= 512; dim = dim < 70 ? dim + 1 : 512)
            {
              g_autofree float *a = g_new (float, dim);
              g_autofree float *b = g_new (float, dim);
              gsize negatives[] = { 0, dim / 3, dim / 2, dim - 1 };
              for (gsize n = 0; n < G_N_ELEMENTS (negatives); n++)
                {
                  make (dim, negatives[n], a, b);
                  double used = assert_pair_survives_pass (passes[p], kernel, a, b, dim);
                  if (dim == 512)
                    tightest = MAX (tightest, used);
                }
              if (dim == 512)
                break;
            }
        }
    }
  g_test_message ("the adversarial 512-d pairs used %.4f of the %s bound", tightest, family);
  g_assert_cmpfloat (tightest, >, 0.95);
}

static void
test_int8_bound_holds_at_adversarial_pairs (void)
{
  const LkPrefilterPass *passes[8];
  gsize n_passes = int8_passes (passes);

  assert_bound_holds_at_adversarial_pairs ("int8", passes, n_passes, int8_adversarial_pair);
}

/* Every component ±amax: every |q| = M, the largest integer dot there can
 * be. Up to 133,144 floats M is 127; past it M shrinks so that dim · M²
 * still fits an int32 — the dot must come out as dim · M² (s² Q = 1), not
 * wrapped around, and the pass must keep the pair at a bar near 1. */
static void
test_int8_dots_never_overflow (void)
{
  static const gsize dims[] = { 1, 3, 4, 5, 512, 4096, 133144, 133145, 300000 };

  g_assert_cmpint (lk_prefilter_int8_max (512), ==, 127);
  g_assert_cmpint (lk_prefilter_int8_max (133144), ==, 127);
  g_assert_cmpint (lk_prefilter_int8_max (133145), ==, 126);
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = g_new (float, 2 * dim);
      guint64 photo[2] = { 0, 1 };
      guint8 gallery[2] = { 1, 1 };
      gint64 m = lk_prefilter_int8_max (dim);
      LkHit hit[1];

      for (gsize k = 0; k < 2 * dim; k++)
        rows[k] = (float) (((k % dim) % 3 == 1 ? -1.0 : 1.0) / sqrt ((double) dim));
      g_assert_cmpint ((gint64) dim * m * m, <=, G_MAXINT32);
      const LkPrefilterPass *passes[8];
      gsize n_passes = int8_passes (passes);
      for (gsize p = 0; p < n_passes; p++)
        {
          const LkPrefilterPass *pass = passes[p];
          g_autoptr (LkPrefilter) pf = lk_prefilter_new (pass, rows, 2, dim);
          LkTile tile = { rows, dim, photo, gallery, 0, 1, 1, 2, 0.99f };
          g_assert_cmpfloat_with_epsilon (lk_prefilter_cosine (pf, 0, 1), 1.0, 1e-5);
          g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, hit), ==, 1);
          g_assert_cmpfloat_with_epsilon (hit[0].cos, 1.0, 1e-5);
        }
    }
}

/* 256 random 512-d faces: the portable pass `id` (its native passes reach
 * the same integers) rejects all but 0.1 % of their pairs at the default
 * calibration's bar, its largest pair bound stays below `max_bound`, and at
 * a bar of −0.5 it keeps them all. */
static void
assert_bound_rejects_most_random_pairs (const char *family, LkPrefilterId id, double max_bound)
{
  const gsize n = 256, dim = 512;
  g_autofree float *rows = g_new (float, n *dim);
  g_autofree guint64 *photo = g_new (guint64, n);
  g_autofree guint8 *gallery = g_new (guint8, n);
  g_autofree LkHit *survivors = g_new (LkHit, n * n);
  float crop = 150.0f;
  LkCalibration cal = LK_CALIBRATION_DEFAULT;
  double tau = lk_scan_loosest_cosine (&crop, 1, &cal, 0.9);

  for (gsize i = 0; i < n; i++)
    {
      test_vector (i + 1, dim, rows + i * dim);
      photo[i] = i;
      gallery[i] = 1;
    }
  g_autoptr (LkPrefilter) pf = prefilter_new (id, rows, n, dim);
  LkTile tile = { rows, dim, photo, gallery, 0, n, 0, n, (float) tau };
  gsize kept = lk_prefilter_survivors (pf, &tile, survivors);
  double pairs = n * (n - 1) / 2.0;

  g_test_message ("bar cos %.4f, largest %s pair bound %.5f: the %s pass rejected %.4f%% of "
                  "%.0f random pairs",
                  tau, family, lk_prefilter_bound (pf), family, 100.0 * (1.0 - kept / pairs),
                  pairs);
  g_assert_cmpfloat (lk_prefilter_bound (pf), <, max_bound);
  g_assert_cmpfloat (kept / pairs, <, 0.001);
  tile.tau = -0.5f;
  g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, survivors), ==, (gsize) pairs);
}

static void
test_int8_bound_rejects_most_random_pairs (void)
{
  assert_bound_rejects_most_random_pairs ("int8", LK_PREFILTER_INT8_PORTABLE, 0.03);
}

/* ---- int7 --------------------------------------------------------------- */

/* The int7 passes that run here: the portable emulation, and the AVX2 pass
 * where the CPU has AVX2 and FMA. */
static gsize
int7_passes (const LkPrefilterPass *out[2])
{
  static const LkPrefilterId ids[] = { LK_PREFILTER_INT7_PORTABLE, LK_PREFILTER_INT7 };
  gsize n = 0;

  for (gsize k = 0; k < G_N_ELEMENTS (ids); k++)
    if (lk_prefilter_pass_get (ids[k], &out[n], NULL))
      n++;
  return n;
}

/* The emulation's integer is Σ q_a q_b, with q = round (a / s) and
 * s = amax / M per row: rows whose scales are powers of two, so every q is
 * known in advance; dims with and without a last, shorter group of
 * LK_PREFILTER_INT7_STEPS dwords (4 S elements), and an odd last dword. */
static void
test_int7_dot_is_exact (void)
{
  const gint32 m = LK_PREFILTER_INT7_M;
  const gsize group = 4 * LK_PREFILTER_INT7_STEPS;
  const gsize dims[] = { 1, 3, 4, 5, group - 1, group, group + 1, 2 * group + 6, 70, 512, 515 };
  const LkPrefilterPass *passes[2];
  gsize n_passes = int7_passes (passes);

  g_assert_cmpint (lk_prefilter_int7_max (512), ==, m);
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = g_new (float, 3 * dim);
      g_autofree gint32 *q = g_new (gint32, 3 * dim);
      guint64 photo[3] = { 0, 1, 2 };
      guint8 gallery[3] = { 1, 1, 1 };
      LkHit hits[3];

      for (gsize r = 0; r < 3; r++)
        for (gsize k = 0; k < dim; k++)
          {
            /* Row r's scale 2^-(7 + r): its first element is ±M steps. */
            gint32 v = k == 0 ? (r == 1 ? -m : m)
                              : (gint32) ((k * 53 + r * 29) % (2 * (guint) m + 1)) - m;
            q[r * dim + k] = v;
            rows[r * dim + k] = ldexpf ((float) v, -(7 + (int) r));
          }
      for (gsize p = 0; p < n_passes; p++)
        {
          g_autoptr (LkPrefilter) pf = lk_prefilter_new (passes[p], rows, 3, dim);
          float want[3][3];
          for (gsize i = 0; i < 3; i++)
            for (gsize j = 0; j < 3; j++)
              {
                gint64 dot = 0;
                for (gsize k = 0; k < dim; k++)
                  dot += (gint64) q[i * dim + k] * q[j * dim + k];
                want[i][j] = (float) ldexp ((double) dot, -(14 + (int) (i + j)));
                g_assert_cmpfloat (lk_prefilter_cosine (pf, i, j), ==, want[i][j]);
              }
          /* The pass reports the same cosines for every pair above the
           * diagonal at a bar that keeps them all. */
          LkTile tile = { rows, dim, photo, gallery, 0, 3, 0, 3, -0.9f };
          tile.tau = -(float) (4.0 * dim * m * m) * 0x1p-14f;
          g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, hits), ==, 3);
          for (gsize h = 0; h < 3; h++)
            g_assert_cmpfloat (hits[h].cos, ==, want[hits[h].i][hits[h].j]);
        }
    }
}

/* Rows of all +M and all −M (every element ±amax): the row operand's bytes
 * are all B + M, the column's all ±M, so every int16 lane of every group
 * reaches ± LK_PREFILTER_INT7_LANE_MAX = S · 2 · (B + M) · M, the largest
 * value it can hold — and the dot must still come out as ±dim · M² (one more
 * group's worth in a lane, or a saturating pair sum, would change it). */
static void
test_int7_lanes_reach_their_maximum_without_overflow (void)
{
  const gint32 m = LK_PREFILTER_INT7_M;
  const gsize group = 4 * LK_PREFILTER_INT7_STEPS;
  const gsize dims[] = { group, 3 * group, 512, 4096, 4 * group + 5 };
  const LkPrefilterPass *passes[2];
  gsize n_passes = int7_passes (passes);

  /* The largest lane fits, and the next larger M or one more step would not
   * (the choice of M and S is as tight as the int16 lane allows). */
  g_assert_cmpint (LK_PREFILTER_INT7_LANE_MAX, <=, 32767);
  g_assert_cmpint (LK_PREFILTER_INT7_LANE_MAX / LK_PREFILTER_INT7_STEPS
                       * (LK_PREFILTER_INT7_STEPS + 1),
                   >, 32767);
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = g_new (float, 3 * dim);
      guint64 photo[3] = { 0, 1, 2 };
      guint8 gallery[3] = { 1, 1, 1 };
      LkHit hits[3];

      /* Rows 0 and 2 all +2^-6, row 1 all −2^-6: s = 2^-6 / M each. */
      for (gsize k = 0; k < dim; k++)
        {
          rows[k] = rows[2 * dim + k] = 0x1p-6f;
          rows[dim + k] = -0x1p-6f;
        }
      for (gsize p = 0; p < n_passes; p++)
        {
          g_autoptr (LkPrefilter) pf = lk_prefilter_new (passes[p], rows, 3, dim);
          double s2 = (double) pf->scales[0] * pf->scales[0];
          float plus = (float) (s2 * (double) (dim * (gsize) m * (gsize) m));

          g_assert_cmpfloat (lk_prefilter_cosine (pf, 0, 2), ==, plus);
          g_assert_cmpfloat (lk_prefilter_cosine (pf, 0, 1), ==, -plus);
          g_assert_cmpfloat (lk_prefilter_cosine (pf, 1, 2), ==, -plus);
          LkTile tile = { rows, dim, photo, gallery, 0, 3, 0, 3, -(float) (1.5 * dim) * 0x1p-12f };
          g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, hits), ==, 3);
          for (gsize h = 0; h < 3; h++)
            g_assert_cmpfloat (hits[h].cos, ==, hits[h].j == 2 && hits[h].i == 0 ? plus : -plus);
          /* At a bar just under +dim 2^-12, only the pair of equal rows. */
          tile.tau = (float) (0.99 * dim) * 0x1p-12f;
          g_assert_cmpuint (lk_prefilter_survivors (pf, &tile, hits), ==, 1);
          g_assert_cmpuint (hits[0].i, ==, 0);
          g_assert_cmpuint (hits[0].j, ==, 2);
        }
    }
}

/* int8_adversarial_pair with M in place of 127: element 0 is M s (its row's
 * amax: s = 2^-e), every other one (M − 1.5 ± 1/64) s, rounded against the
 * product. */
static void
int7_adversarial_pair (gsize dim, gsize negative, float *a, float *b)
{
  const double m = LK_PREFILTER_INT7_M;
  int e = (int) ceil (log2 (m * sqrt ((double) dim)));

  a[0] = b[0] = ldexpf ((float) m, -e);
  for (gsize k = 1; k < dim; k++)
    {
      gboolean neg = k <= negative;
      float mag = ldexpf ((float) (m - 1.5 + (neg ? 1.0 : -1.0) / 64), -e);
      a[k] = mag;
      b[k] = neg ? -mag : mag;
    }
}

static void
test_int7_bound_holds_at_adversarial_pairs (void)
{
  const LkPrefilterPass *passes[2];
  gsize n_passes = int7_passes (passes);

  assert_bound_holds_at_adversarial_pairs ("int7", passes, n_passes, int7_adversarial_pair);
}

static void
test_int7_bound_rejects_most_random_pairs (void)
{
  assert_bound_rejects_most_random_pairs ("int7", LK_PREFILTER_INT7_PORTABLE, 0.06);
}

/* A sample library (lk-sample.c's ArcFace-like people and its dlib-like
 * variant, where every cosine is high and the bar sits among strangers):
 * the scan with the int7 pass — emulated, and native where it runs — finds
 * exactly the float32 scan's pairs, near-boundary count included. */
static void
test_int7_scan_same_pairs_on_a_sample (void)
{
  static const LkSampleModel models[] = { LK_SAMPLE_MODEL_ARCFACE, LK_SAMPLE_MODEL_DLIB };
  static const LkPrefilterId ids[] = { LK_PREFILTER_INT7_PORTABLE, LK_PREFILTER_INT7 };

  for (gsize md = 0; md < G_N_ELEMENTS (models); md++)
    {
      g_autofree char *dir = g_dir_make_tmp ("likeness-int7-XXXXXX", NULL);
      g_autofree char *folder = g_build_filename (dir, "lib", NULL);
      g_autoptr (GError) error = NULL;
      LkSampleOptions options = { 400, LK_SAMPLE_DEFAULT_DIM, 11, FALSE, models[md] };

      g_assert_true (lk_sample_write (folder, &options, &error));
      g_assert_no_error (error);
      g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
      g_assert_no_error (error);
      LkFaces faces;
      lk_faces_from_library (&faces, library);
      LkScanOptions off = { .prefilter = LK_PREFILTER_OFF };
      g_autoptr (LkScanResult) want
          = lk_scan (&faces, &library->calibration, 0.9, &off, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (want->pairs->len, >, 100);
      for (gsize p = 0; p < G_N_ELEMENTS (ids); p++)
        {
          const LkPrefilterPass *pass = NULL;
          if (!lk_prefilter_pass_get (ids[p], &pass, NULL))
            {
              g_test_message ("the native int7 pass cannot run here: its emulation only");
              continue;
            }
          LkScanOptions on = { .prefilter = ids[p] };
          g_autoptr (LkScanResult) got
              = lk_scan (&faces, &library->calibration, 0.9, &on, NULL, &error);
          g_assert_no_error (error);
          g_assert_cmpstr (got->prefilter, ==, pass->name);
          assert_identical (got, want);
        }
      lk_test_remove_tree (dir);
    }
}

/* ---- the scan ----------------------------------------------------------- */

/* Identities and strangers, several faces per photo, every fourth face a
 * probe, varied crops. */
static TestSet *
random_library (gsize dim)
{
  TestSet *set = test_population (14, 6, 0.6f, (guint) MAX (dim, 3));

  set->dim = (guint) dim;

  for (gsize i = 0; i < set->n; i++)
    {
      /* Below three dimensions there is no room for test_near's plane. */
      if (i % 7 == 3 || dim < 3)
        test_vector (i + 5000, dim, set->embeddings + i * dim);
      set->photo[i] = i / 3;
      set->gallery[i] = i % 4 != 0;
      set->crop_px[i] = 60.0f + (float) ((i * 13) % 120);
    }
  return set;
}

static void
test_scan_same_pairs_random (void)
{
  static const gsize dims[] = { 1, 2, 3, 7, 16, 17, 31, 33, 64, 70, 512 };
  static const double bars[] = { 1e-12, 0.5, 0.9, 0.999999 };
  LkCalibration cal = test_calibration ();

  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = random_library (dims[d]);
      guint found = 0;
      for (gsize b = 0; b < G_N_ELEMENTS (bars); b++)
        found += assert_prefilter_changes_nothing (set, &cal, bars[b]);
      g_assert_cmpuint (found, >, 0);
    }
}

/* Unit rows built like adversarial_pair's over all but the last component,
 * which makes the norm 1; pair (2m, 2m + 1) is the m-th such pair, with
 * `negative` m-dependent, and a few random faces follow. */
static TestSet *
adversarial_library (gsize dim, gsize n_pairs)
{
  TestSet *set = test_set_new (2 * n_pairs + 8, (guint) dim);

  for (gsize m = 0; m < n_pairs; m++)
    {
      float *a = set->embeddings + 2 * m * dim;
      float *b = a + dim;
      gsize body = dim - 1;
      int e = -(int) ceil (log2 ((double) MAX (body, 1)) / 2);
      double sum = 0.0;

      adversarial_pair (body, (body * (m % 5)) / 8, e, a, b);
      for (gsize k = 0; k < body; k++)
        sum += (double) a[k] * a[k];
      a[dim - 1] = b[dim - 1] = (float) sqrt (MAX (0.0, 1.0 - sum));
    }
  for (gsize i = 2 * n_pairs; i < set->n; i++)
    test_vector (i + 77, (guint) dim, set->embeddings + i * dim);
  return set;
}

static void
test_scan_same_pairs_adversarial (void)
{
  static const gsize dims[] = { 4, 9, 16, 33, 64, 70, 512 };
  const gsize n_pairs = 10;

  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = adversarial_library (dims[d], n_pairs);
      LkFaces faces = test_set_faces (set);

      /* The bar through each adversarial pair in turn: a calibration whose
       * boundary is 1e-7 under the pair's cosine as the reference sums it —
       * 80,000 times closer than the bound — so the reference lists the pair
       * and the scans must agree on it (it is near the boundary for both). */
      for (gsize m = 0; m < n_pairs; m++)
        {
          const float *a = set->embeddings + 2 * m * dims[d];
          double cos = test_naive_dot (a, a + dims[d], (guint) dims[d]);
          double bar = 0.9;
          LkCalibration cal
              = { 30.0, log (bar / (1 - bar)) - 30.0 * (cos - 1e-7), 0.0, 1000, 1000 };
          g_autoptr (GArray) want = test_reference (&faces, &cal, bar);
          gboolean listed = FALSE;

          for (guint k = 0; k < want->len; k++)
            listed = listed
                     || (g_array_index (want, LkPair, k).i == 2 * m
                         && g_array_index (want, LkPair, k).j == 2 * m + 1);
          g_assert_true (listed);
          assert_prefilter_changes_nothing (set, &cal, bar);
        }
    }
}

/* AUTO is the native bf16 pass where it runs, else nothing — never the
 * emulation, nor int16, which lost to the fused float32 tile; BF16 where it cannot run is an error
 * naming what is missing. */
static void
test_auto_never_emulates (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = random_library (64);
  /* A forced kernel with the first pass "auto" (kernel and pass both auto is
   * lk-tune's measured choice, proven by test-tune). */
  LkScanOptions auto_options
      = { .kernel = lk_kernel_get (LK_KERNEL_AUTO, NULL)->id, .prefilter = LK_PREFILTER_AUTO };
  LkScanOptions tuned = { 0 };
  g_autoptr (LkScanResult) t = scan_with (set, &cal, 0.9, &tuned);
  g_assert_false (g_str_has_suffix (t->prefilter, "-portable"));
  LkScanOptions native = { .prefilter = LK_PREFILTER_BF16 };
  const LkPrefilterPass *pass = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &auto_options);
  gboolean runs = lk_prefilter_pass_get (LK_PREFILTER_BF16, &pass, &error);

  g_assert_cmpstr (r->prefilter, ==, runs ? "bf16-avx512" : "off");
  if (runs)
    return;
  g_assert_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "bf16"));
  g_clear_error (&error);
  LkFaces faces = test_set_faces (set);
  g_assert_null (lk_scan (&faces, &cal, 0.9, &native, NULL, &error));
  g_assert_error (error, LK_PREFILTER_ERROR, LK_PREFILTER_ERROR_UNSUPPORTED);
}

/* A native pass against its emulation: the same survivors with the same
 * low-precision cosines, tile by tile, and the same scan. Runs only on a CPU
 * with the pass's instructions. */
static void assert_pass_matches_emulation (const LkPrefilterPass *native,
                                           LkPrefilterId emulation_id, LkPrefilterId scan_id);

static void
assert_native_matches_emulation (LkPrefilterId native_id, LkPrefilterId emulation_id)
{
  const LkPrefilterPass *native = NULL;
  g_autoptr (GError) error = NULL;

  if (!lk_prefilter_pass_get (native_id, &native, &error))
    {
      g_test_skip_printf ("the native pass cannot run here (%s); its emulation is proven by "
                          "the other tests",
                          error->message);
      return;
    }
  assert_pass_matches_emulation (native, emulation_id, native_id);
}

/* `native` against the pass `emulation_id` names, tile by tile, and — when
 * `scan_id` is not LK_PREFILTER_OFF — the scan asking for `scan_id` against
 * the scan without a first pass. */
static void
assert_pass_matches_emulation (const LkPrefilterPass *native, LkPrefilterId emulation_id,
                               LkPrefilterId scan_id)
{
  const LkPrefilterPass *emulation = NULL;

  g_assert_true (lk_prefilter_pass_get (emulation_id, &emulation, NULL));

  static const gsize dims[] = { 1, 2, 3, 4, 5, 17, 31, 33, 64, 70, 512 };
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = random_library (dims[d]);
      g_autoptr (LkPrefilter) emulated
          = lk_prefilter_new (emulation, set->embeddings, set->n, dims[d]);
      g_autoptr (LkPrefilter) fast = lk_prefilter_new (native, set->embeddings, set->n, dims[d]);
      g_autofree LkHit *want = g_new (LkHit, set->n * set->n);
      g_autofree LkHit *got = g_new (LkHit, set->n * set->n);
      static const gsize tile_sizes[] = { 7, 16, 33, 64 };
      static const float bars[] = { -0.2f, 0.1f, 0.5f };

      for (gsize t = 0; t < G_N_ELEMENTS (tile_sizes); t++)
        for (gsize r = 0; r < set->n; r += 64)
          for (gsize c = r; c < set->n; c += tile_sizes[t])
            {
              LkTile tile = { set->embeddings,
                              dims[d],
                              set->photo,
                              set->gallery,
                              r,
                              MIN (r + 64, set->n),
                              c,
                              MIN (c + tile_sizes[t], set->n),
                              bars[(r / 64 + c) % G_N_ELEMENTS (bars)] };
              gsize nw = lk_prefilter_survivors (emulated, &tile, want);
              gsize ng = lk_prefilter_survivors (fast, &tile, got);
              g_assert_cmpuint (ng, ==, nw);
              /* Rows may interleave differently; compare as (i, j) sets. */
              g_autoptr (GHashTable) seen
                  = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
              for (gsize h = 0; h < nw; h++)
                {
                  gint64 *key = g_new (gint64, 1);
                  *key = ((gint64) want[h].i << 32) | want[h].j;
                  g_hash_table_insert (seen, key, g_memdup2 (&want[h].cos, sizeof (float)));
                }
              for (gsize h = 0; h < ng; h++)
                {
                  gint64 key = ((gint64) got[h].i << 32) | got[h].j;
                  const float *cos = g_hash_table_lookup (seen, &key);
                  g_assert_nonnull (cos);
                  g_assert_cmpmem (cos, sizeof (float), &got[h].cos, sizeof (float));
                }
            }

      if (scan_id == LK_PREFILTER_OFF)
        continue;
      LkCalibration cal = test_calibration ();
      LkScanOptions off = { .prefilter = LK_PREFILTER_OFF };
      LkScanOptions on = { .prefilter = scan_id };
      g_autoptr (LkScanResult) a = scan_with (set, &cal, 0.9, &off);
      g_autoptr (LkScanResult) b = scan_with (set, &cal, 0.9, &on);
      g_assert_cmpstr (b->prefilter, ==, native->name);
      assert_identical (b, a);
    }
}

static void
test_native_matches_emulation (void)
{
  assert_native_matches_emulation (LK_PREFILTER_BF16, LK_PREFILTER_BF16_PORTABLE);
}

/* The AVX2 int16 pass, register-blocked six rows by sixteen columns, against
 * the portable integers: the same survivors with the same cosines for dims
 * 1 … 512 and ragged tiles (row ranges that are no multiple of six), and the
 * same scan. */
static void
test_int16_native_matches_emulation (void)
{
  assert_native_matches_emulation (LK_PREFILTER_INT16, LK_PREFILTER_INT16_PORTABLE);
}

static void
test_int8_native_matches_emulation (void)
{
  assert_native_matches_emulation (LK_PREFILTER_INT8, LK_PREFILTER_INT8_PORTABLE);
}

/* The AVX2 int7 pass, register-blocked five rows by sixteen columns, against
 * the portable emulation: the same survivors with the same cosines for dims
 * 1 … 512 (last groups of S dwords short or whole) and ragged tiles (row
 * ranges of 64, no multiple of five; column ranges of 7 and 33), and the
 * same scan. */
static void
test_int7_native_matches_emulation (void)
{
  assert_native_matches_emulation (LK_PREFILTER_INT7, LK_PREFILTER_INT7_PORTABLE);
}

static void
test_int8_avxvnni_matches_emulation (void)
{
  assert_native_matches_emulation (LK_PREFILTER_INT8_AVXVNNI, LK_PREFILTER_INT8_PORTABLE);
}

/* The AVX-VNNI pass's code, lk-prefilter-int8-ymm.h, with the instruction
 * swapped for what runs here: vpdpbusd EVEX-encoded (one operation with the
 * VEX one AVX-VNNI has) and an exact AVX2 emulation. The same survivors and
 * cosines as the portable pass, tile by tile, for dims 1 … 512 and ragged
 * tiles; the bound and overflow tests run them too (int8_passes). */
static void
test_int8_ymm_code_matches_emulation (void)
{
  gsize ran = 0;

#if LK_HAVE_PREFILTER_INT8_YMM_AVX512VL
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_ymm_avx512vl))
    {
      assert_pass_matches_emulation (&lk_prefilter_pass_int8_ymm_avx512vl,
                                     LK_PREFILTER_INT8_PORTABLE, LK_PREFILTER_OFF);
      ran++;
    }
#endif
#if LK_HAVE_PREFILTER_INT8_YMM_AVX2
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_ymm_avx2))
    {
      assert_pass_matches_emulation (&lk_prefilter_pass_int8_ymm_avx2, LK_PREFILTER_INT8_PORTABLE,
                                     LK_PREFILTER_OFF);
      ran++;
    }
#endif
  if (ran == 0)
    g_test_skip ("neither AVX2 nor AVX-512 VNNI + VL runs here (or this is not x86-64)");
}

/* The same survivors with the same cosines from passes `a` and `b` (as
 * (i, j) sets: rows may interleave differently) on `tile`. */
static void
assert_same_survivors (const LkPrefilter *a, const LkPrefilter *b, const LkTile *tile, gsize room)
{
  g_autofree LkHit *want = g_new (LkHit, room);
  g_autofree LkHit *got = g_new (LkHit, room);
  gsize nw = lk_prefilter_survivors (a, tile, want);
  gsize ng = lk_prefilter_survivors (b, tile, got);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

  g_assert_cmpuint (ng, ==, nw);
  for (gsize h = 0; h < nw; h++)
    {
      gint64 *key = g_new (gint64, 1);
      *key = ((gint64) want[h].i << 32) | want[h].j;
      g_hash_table_insert (seen, key, g_memdup2 (&want[h].cos, sizeof (float)));
    }
  for (gsize h = 0; h < ng; h++)
    {
      gint64 key = ((gint64) got[h].i << 32) | got[h].j;
      const float *cos = g_hash_table_lookup (seen, &key);
      g_assert_nonnull (cos);
      g_assert_cmpmem (cos, sizeof (float), &got[h].cos, sizeof (float));
    }
}

/* The AMX pass's code (lk-prefilter-int8-amx.h) on emulated tiles — portable,
 * and with the AVX-512 epilogue the native file compiles — against the
 * portable int8 pass and every native int8 pass that runs here (AVX-512
 * VNNI on this project's Zen 4): tile by tile over row ranges of 1, 15, 16,
 * 17, 33 and 47 rows starting off the 16-row grid, column ranges that end
 * inside a panel, dims 1 … 512 that are mostly no multiple of 64 (the last
 * TDPBUSD of a row partly zero padding), at bars that keep few and many
 * pairs; and the whole pass, every row against every column in one call. */
static void
test_int8_amx_code_matches_emulation (void)
{
  const LkPrefilterPass *amx[2];
  gsize n_amx = 0;
  const LkPrefilterPass *others[8];
  gsize n_others = 0;
  static const LkPrefilterId ids[]
      = { LK_PREFILTER_INT8_PORTABLE, LK_PREFILTER_INT8, LK_PREFILTER_INT8_AVXVNNI };
  static const gsize dims[] = { 1, 5, 63, 64, 65, 130, 512 };
  static const gsize row_spans[] = { 1, 15, 16, 17, 33, 47 };
  static const gsize col_spans[] = { 5, 16, 31, 70 };
  static const float bars[] = { -0.2f, 0.1f, 0.5f };

  amx[n_amx++] = &lk_prefilter_pass_int8_amx_emulated;
#if LK_HAVE_PREFILTER_INT8_AMX_EMULATED_AVX512
  if (lk_prefilter_pass_runs_here (&lk_prefilter_pass_int8_amx_emulated_avx512))
    amx[n_amx++] = &lk_prefilter_pass_int8_amx_emulated_avx512;
  else
    g_test_message ("no AVX-512F here: the AMX code's AVX-512 epilogue is not run");
#endif
  for (gsize k = 0; k < G_N_ELEMENTS (ids); k++)
    if (lk_prefilter_pass_get (ids[k], &others[n_others], NULL))
      n_others++;
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = random_library (dims[d]);
      gsize n = set->n;
      for (gsize x = 0; x < n_amx; x++)
        for (gsize o = 0; o < n_others; o++)
          {
            g_autoptr (LkPrefilter) tiles = lk_prefilter_new (amx[x], set->embeddings, n, dims[d]);
            g_autoptr (LkPrefilter) ref = lk_prefilter_new (others[o], set->embeddings, n, dims[d]);
            guint checked = 0;
            g_test_message ("%s against %s at dim %zu", amx[x]->name, others[o]->name, dims[d]);
            for (gsize rs = 0; rs < G_N_ELEMENTS (row_spans); rs++)
              for (gsize r = 3 * rs; r < n; r += row_spans[rs] + 13)
                for (gsize cs = 0; cs < G_N_ELEMENTS (col_spans); cs++)
                  {
                    gsize c = r + cs * 7;
                    if (c >= n)
                      continue;
                    LkTile tile = { set->embeddings,
                                    dims[d],
                                    set->photo,
                                    set->gallery,
                                    r,
                                    MIN (r + row_spans[rs], n),
                                    c,
                                    MIN (c + col_spans[cs], n),
                                    bars[(rs + cs + r) % G_N_ELEMENTS (bars)] };
                    assert_same_survivors (ref, tiles, &tile, n * n);
                    checked++;
                  }
            g_assert_cmpuint (checked, >, 20);
            for (gsize b = 0; b < G_N_ELEMENTS (bars); b++)
              {
                LkTile whole
                    = { set->embeddings, dims[d], set->photo, set->gallery, 0, n, 0, n, bars[b] };
                assert_same_survivors (ref, tiles, &whole, n * n);
              }
          }
    }
}

/* The native AMX pass against the portable int8 pass, tile by tile, and the
 * scan asking for it against the scan without a first pass: only where the
 * CPU has AMX and the kernel granted the tiles — never on this project's
 * Zen 4 — and never under valgrind, which cannot run tile instructions. */
static void
test_int8_amx_matches_emulation (void)
{
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("under valgrind, which cannot run AMX tile instructions");
      return;
    }
  assert_native_matches_emulation (LK_PREFILTER_INT8_AMX, LK_PREFILTER_INT8_PORTABLE);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prefilter/bf16/rounds-to-nearest-even", test_rounds_to_nearest_even);
  g_test_add_func ("/prefilter/bf16/sums-in-the-documented-order",
                   test_sums_in_the_documented_order);
  g_test_add_func ("/prefilter/bf16/flushes-tiny-results", test_flushes_tiny_results);
  g_test_add_func ("/prefilter/bound/value", test_bound_value);
  g_test_add_func ("/prefilter/bound/holds-at-adversarial-pairs",
                   test_bound_holds_at_adversarial_pairs);
  g_test_add_func ("/prefilter/bound/rejects-most-random-pairs",
                   test_bound_rejects_most_random_pairs);
  g_test_add_func ("/prefilter/int16/bound-holds-at-adversarial-pairs",
                   test_int16_bound_holds_at_adversarial_pairs);
  g_test_add_func ("/prefilter/int16/dots-never-overflow", test_int16_dots_never_overflow);
  g_test_add_func ("/prefilter/int16/bound-rejects-most-random-pairs",
                   test_int16_bound_rejects_most_random_pairs);
  g_test_add_func ("/prefilter/int8/dot-is-exact", test_int8_dot_is_exact);
  g_test_add_func ("/prefilter/int8/bound-holds-at-adversarial-pairs",
                   test_int8_bound_holds_at_adversarial_pairs);
  g_test_add_func ("/prefilter/int8/dots-never-overflow", test_int8_dots_never_overflow);
  g_test_add_func ("/prefilter/int8/bound-rejects-most-random-pairs",
                   test_int8_bound_rejects_most_random_pairs);
  g_test_add_func ("/prefilter/int8/rows-same-for-any-thread-count",
                   test_int8_rows_same_for_any_thread_count);
  g_test_add_func ("/prefilter/int8-rows-vector-equals-scalar",
                   test_int8_rows_vector_equals_scalar);
  g_test_add_func ("/prefilter/int7/dot-is-exact", test_int7_dot_is_exact);
  g_test_add_func ("/prefilter/int7/lanes-reach-their-maximum-without-overflow",
                   test_int7_lanes_reach_their_maximum_without_overflow);
  g_test_add_func ("/prefilter/int7/bound-holds-at-adversarial-pairs",
                   test_int7_bound_holds_at_adversarial_pairs);
  g_test_add_func ("/prefilter/int7/bound-rejects-most-random-pairs",
                   test_int7_bound_rejects_most_random_pairs);
  g_test_add_func ("/prefilter/int7/scan-same-pairs-on-a-sample",
                   test_int7_scan_same_pairs_on_a_sample);
  g_test_add_func ("/prefilter/native/int7-matches-emulation", test_int7_native_matches_emulation);
  g_test_add_func ("/prefilter/release-below-keeps-later-rows",
                   test_release_below_keeps_later_rows);
  g_test_add_func ("/prefilter/scan/same-pairs-random", test_scan_same_pairs_random);
  g_test_add_func ("/prefilter/scan/same-pairs-adversarial", test_scan_same_pairs_adversarial);
  g_test_add_func ("/prefilter/scan/auto-never-emulates", test_auto_never_emulates);
  g_test_add_func ("/prefilter/native/matches-emulation", test_native_matches_emulation);
  g_test_add_func ("/prefilter/native/int16-matches-emulation",
                   test_int16_native_matches_emulation);
  g_test_add_func ("/prefilter/native/int8-matches-emulation", test_int8_native_matches_emulation);
  g_test_add_func ("/prefilter/native/int8-avxvnni-matches-emulation",
                   test_int8_avxvnni_matches_emulation);
  g_test_add_func ("/prefilter/int8/avxvnni-code-matches-emulation",
                   test_int8_ymm_code_matches_emulation);
  g_test_add_func ("/prefilter/int8/amx-code-matches-emulation",
                   test_int8_amx_code_matches_emulation);
  g_test_add_func ("/prefilter/native/int8-amx-matches-emulation", test_int8_amx_matches_emulation);
  return g_test_run ();
}
