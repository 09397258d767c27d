/* lk-calibrate.c — fitting the pair model to a library
 *
 * Why a weighted sample rather than every pair: an 18,143-face library has
 * 164 million pairs, of which about 0.85 million are one person. Every
 * positive pair is kept (up to max_positives), and so is every negative pair
 * above a low bar — the only negatives whose probability is not ≈ 0, found
 * exactly by the scan at a cosine where a random pair sample predicts about
 * twenty pairs per face — while the tens of millions below it are
 * represented by a uniform sample, each standing for (negatives) / (draws)
 * pairs. The weighted log-likelihood is then an unbiased estimate of the whole
 * library's, and the held-out figures are per library pair.
 *
 * Why Newton with a ridge: the likelihood is concave in (a, b, w_size), the
 * Hessian is 3 × 3, and Newton with step halving converges in 10–25 steps
 * from a = 1, b = 0. When positives and negatives are separated by a gap the
 * unpenalised optimum is a → ∞; the ridge (LK_CALIBRATION_RIDGE per positive
 * pair) stops it where the gap's likelihood gain no longer pays for it.
 *
 * Why the estimate is a tail model and not a mixture of two bells on every
 * cosine: genuine pairs are 0.5 % of a library's pairs, too few for a
 * mixture to find in the bulk, but above a high bar they are most of what
 * the scan returns. The impostors' tail is a Gaussian through the 75th and
 * 95th percentiles of the strangers' peak (the upper half, where the
 * same-sex, same-ancestry impostors that make the tail live), read from the
 * shape of the sample's cosines: the peak, and a shoulder of pairs of one
 * person above it whose share is taken out of those percentiles
 * (read_shape; in a small real library 4–6 % of pairs are one person, and
 * the sample's own percentiles would put the bar above them). In each
 * cosine bin above the bar the share
 * of pairs it cannot explain is that bin's chance of being one person, made
 * non-decreasing in the cosine. That alone read the look-alike relatives of
 * the 18,143-face sample (three pairs of its biggest identities, 750,000
 * pairs at cosine 0.2–0.45, far beyond any Gaussian tail) as one person: p =
 * 0.9 at cosine 0.246 against the labelled fit's 0.457, BCubed F1 0.965
 * against 0.9998. So one more bound: the pairs of one person have a single
 * mode, so below it their count per bin is at most the least count seen
 * between that bin and the mode (three-bin means) — a bump of look-alikes
 * sits above a valley and is capped by it. With it the estimate put p = 0.9
 * at 0.364 and scored 0.9998, the labelled fit's F1, and stayed within
 * 0.0004 of it on the 2,000-face ArcFace-, FaceNet- and dlib-like samples.
 * A Gaussian bell mirrored from the genuine mode's right side was tried
 * first: right at 18,143 faces (0.9997), but the 2,000-face samples' flat-
 * topped genuine counts made it cap far too hard (recall 0.76–0.83).
 *
 * Why the estimate then refits on its own people: the look-alike family
 * (lk-sample.h) puts tens of thousands of pairs of two relatives in the left
 * flank of the genuine bell with no valley between, so no bound on cosine
 * counts alone sees them (the tail estimate scored 0.932 against the labels'
 * 0.999 at 5,000 faces). Which pairs are one person shows in the people,
 * though: a relative's faces are close to each other (0.6) and only half as
 * close to the other relative's (0.33), so average linkage keeps them apart
 * even where a calibration makes their pairs candidates. So the people the
 * tail's calibration makes are taken as labels — the pairs within a person as
 * one person, the pairs across two as two — refitted like labels, and again
 * until the bar moves by under 0.002 (2–4 refits). Two guards keep it from
 * running away: faces left alone are left out (at a bar too high, people
 * split, their pairs across the split would count as two people and push
 * the bar higher still: at 20,000 look-alike faces that ran up to cosine
 * 0.90, F1 0.28), and the labels are the people average linkage is sure of
 * at 0.3, with the pairs that only the clustering's own 0.1 joins left out
 * (a blurred face between two people joins them at the weak end). On the
 * bridge family 0.3 came within 0.002 of the labelled fit's F1, where 0.2,
 * 0.5 and the weak end alone lost 0.02 or more; the look-alikes hardly
 * mind. Left out are the pairs of a face
 * the clustering is unsure of, and of two sure people as close to each other
 * as to themselves; two sure people of several faces each that are closer
 * to random faces than to themselves are two people even where the weak end
 * joins them (people_of): that took the groups family's 1,000 faces of seed
 * 4 from 0.982 to 0.997 (labelled fit 0.998) and the bridges' 5,000 from
 * 0.976 to 0.978, and left the other families' figures as they were. It was then checked,
 * unchanged, on seeds and sizes it was not chosen on (README, "Calibration"). Each refit samples
 * 100,000 pairs of each kind and its Newton steps start from the calibration it refits; the tail's
 * fit samples 200,000 of the pairs above its bar; one pass per Newton step, and the scan's own
 * cosines, not recomputed. The whole estimate costs a few scans' worth of CPU.
 *
 * Why w_size >= 0: a small crop is a blurred, less reliable face, and the
 * likelihood of each pair on its own still wanted w_size −1.3 to −2.6 on
 * every family: a blurred face's genuine pairs sit at lower cosines, so it
 * got a lower bar. On the bridge family a blurred face leans as far towards a
 * stranger as to its own person, and that lower bar let it join both (fitted
 * F1 0.907 against the default's 0.947). A slope varying with the crop (a +
 * a_L·log2 crop) was tried as a model of reliability: the labels gave small
 * crops the steeper slope, not the flatter one, so pair by pair the data
 * really say "lower bar"; what goes wrong is the clustering, where one face's
 * pairs are not independent. Held at 0 it changed the fitted F1 on the
 * ArcFace-, FaceNet- and dlib-like libraries by under 0.0002, and cost the
 * look-alikes 0.0018 (0.9993 → 0.9975, 5,000 faces), which the bar choice
 * below won back (0.9991).
 *
 * Why the labels then choose the bar: even at w_size = 0 the likelihood puts
 * the bridge family's bar at cosine 0.331 (F1 0.934), below the default's
 * 0.423 (0.947), because per pair most blurred faces' pairs at 0.3 are
 * genuine; per person each such pair to a stranger mixes two people. With
 * labels the bar can be judged by what it is for: the likelihood gives a and
 * w_size, then b is moved in steps of 0.01 in cosine (−0.10 … +0.15) to the
 * bar whose clustering of the labelled faces scores the best BCubed F1 (ties:
 * the smallest move), which put it at 0.391 (F1 0.978). Its cost is one
 * clustering per step on the pairs the fit already scanned.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-calibrate-private.h"
#include "scan/lk-kernels.h"
#include "scan/lk-scan.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-calibrate-error-quark, lk_calibrate_error)
/* clang-format on */

static const char *const from_names[] = { "labels", "decisions", "estimate" };

const char *
lk_calibration_from_to_string (LkCalibrationFrom from)
{
  return from <= LK_CALIBRATION_FROM_ESTIMATE ? from_names[from] : NULL;
}

gboolean
lk_calibration_from_from_string (const char *name, LkCalibrationFrom *from)
{
  for (guint k = 0; k < G_N_ELEMENTS (from_names); k++)
    if (g_strcmp0 (name, from_names[k]) == 0)
      {
        *from = (LkCalibrationFrom) k;
        return TRUE;
      }
  return FALSE;
}

double
lk_calibration_cos_at (const LkCalibration *c, double min_probability, double crop)
{
  if (!(c->a > 0) || !(min_probability > 0 && min_probability < 1))
    return NAN;
  double logit = log (min_probability / (1 - min_probability));
  return (logit - c->b - c->w_size * log2 (crop)) / c->a;
}

LkCalibrationFit *
lk_calibrate (const LkLibrary *library, LkCalibrationFrom from, const GPtrArray *pins,
              const LkCalibrateOptions *options, GCancellable *cancellable, GError **error)
{
  LkCalibrateOptions o = options ? *options : (LkCalibrateOptions){ 0 };
  if (o.held_out <= 0 || o.held_out >= 1)
    o.held_out = 0.2;
  if (o.negatives == 0)
    o.negatives = 200000;
  if (o.max_positives == 0)
    o.max_positives = 2000000;
  if (o.min_probability <= 0 || o.min_probability >= 1)
    o.min_probability = library->min_probability;
  if (library->count < 2 || library->count > G_MAXINT32)
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "%s has %zu faces; a fit needs at least two", library->folder, library->count);
      return NULL;
    }
  const LkKernel *kernel = lk_kernel_get (LK_KERNEL_AUTO, error);
  if (kernel == NULL)
    return NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed ((guint32) (o.seed ^ (o.seed >> 32)));
  Context c = { library, kernel->dot_fast, rand, o.seed, o.held_out, NULL, 0 };
  g_autoptr (GArray) samples = NULL, near = NULL;
  double near_bar = 0;
  switch (from)
    {
      case LK_CALIBRATION_FROM_LABELS:
        samples = lk_calibrate_samples_from_labels (&c, &o, &near, &near_bar, cancellable, error);
        break;
      case LK_CALIBRATION_FROM_DECISIONS:
        samples = lk_calibrate_samples_from_decisions (&c, pins, &o, cancellable, error);
        break;
      case LK_CALIBRATION_FROM_ESTIMATE:
        return lk_calibrate_estimate (&c, &o, cancellable, error);
    }
  if (samples == NULL)
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  g_autoptr (LkCalibrationFit) f
      = lk_calibrate_fit ((const LkCalibrationSample *) samples->data, samples->len, TRUE, NULL,
                          o.min_probability, lk_calibrate_median_crop (library), error);
  if (f && near && !lk_calibrate_choose_bar (library, near, near_bar, f, error))
    return NULL;
  return g_steal_pointer (&f);
}

/* --- the guard ------------------------------------------------------------------------------- */

void
lk_calibration_guard (const LkLibrary *library, const LkCalibration *calibration,
                      double min_probability, guint samples, guint64 seed,
                      LkCalibrationGuard *guard)
{
  memset (guard, 0, sizeof *guard);
  guard->paired_fraction = 1;
  const LkKernel *kernel = lk_kernel_get (LK_KERNEL_AUTO, NULL);
  if (library->count < 2 || library->count > G_MAXINT32 || kernel == NULL)
    return;
  g_autoptr (GRand) rand = g_rand_new_with_seed ((guint32) (seed ^ (seed >> 32)));
  Context c = { library, kernel->dot_fast, rand, seed, 0, NULL, 0 };
  g_autoptr (GArray) cosines = g_array_sized_new (FALSE, FALSE, sizeof (double), samples);
  for (guint k = 0; k < samples; k++)
    {
      gsize i, j;
      if (!lk_calibrate_draw_pair (&c, &i, &j))
        break;
      guard->sampled++;
      double cos = lk_calibrate_cos_of (&c, i, j);
      g_array_append_val (cosines, cos);
      double p
          = lk_scan_probability (calibration, cos, MIN (library->crop_px[i], library->crop_px[j]));
      guard->candidates += p >= min_probability;
    }
  guard->fraction = guard->sampled ? (double) guard->candidates / guard->sampled : 0;
  if (cosines->len >= 100)
    {
      double mu, sigma, q75, q95;
      g_array_sort (cosines, lk_calibrate_compare_desc);
      lk_calibrate_read_shape ((const double *) cosines->data, cosines->len, &mu, &sigma,
                               &guard->shoulder, &q75, &q95);
    }

  /* Too few: random faces, each against every other until one is a
   * candidate. A face that has one stops early (after about count / its
   * person's faces); only faces alone cost a full row, so at most
   * GUARD_FACES rows: 1/200 of a scan's work at 40,000 faces. */
  if (library->count < LK_CALIBRATION_GUARD_MIN_FACES)
    return;
  for (guint k = 0; k < LK_CALIBRATION_GUARD_FACES; k++)
    {
      gsize i = (gsize) g_rand_int_range (rand, 0, (gint32) library->count);
      gboolean paired = FALSE, any = FALSE;
      for (gsize j = 0; j < library->count && !paired; j++)
        {
          if (!lk_calibrate_allowed (library, i, j))
            continue;
          any = TRUE;
          paired = lk_scan_probability (calibration, lk_calibrate_cos_of (&c, i, j),
                                        MIN (library->crop_px[i], library->crop_px[j]))
                   >= min_probability;
        }
      if (!any)
        continue; /* a probe among probes, or a face of the only photo: nothing to pair with */
      guard->faces_sampled++;
      guard->faces_paired += paired;
    }
  guard->paired_fraction
      = guard->faces_sampled ? (double) guard->faces_paired / guard->faces_sampled : 1;
}

double
lk_calibration_guard_bar (const LkCalibrationGuard *guard)
{
  return MAX (LK_CALIBRATION_GUARD_BAR, LK_CALIBRATION_GUARD_SHOULDER * guard->shoulder + 0.01);
}

LkCalibrationGuardVerdict
lk_calibration_guard_verdict (const LkCalibrationGuard *guard)
{
  if (guard->fraction > lk_calibration_guard_bar (guard))
    return LK_CALIBRATION_GUARD_TOO_MANY;
  if (guard->faces_sampled > 0 && guard->paired_fraction < LK_CALIBRATION_GUARD_PAIRED_BAR)
    return LK_CALIBRATION_GUARD_TOO_FEW;
  return LK_CALIBRATION_GUARD_OK;
}

gboolean
lk_calibration_guard_fails (const LkCalibrationGuard *guard, char **message)
{
  switch (lk_calibration_guard_verdict (guard))
    {
      case LK_CALIBRATION_GUARD_OK:
        return FALSE;
      case LK_CALIBRATION_GUARD_TOO_MANY:
        if (message)
          *message = g_strdup_printf ("This calibration makes %.0f %% of pairs candidates: it does "
                                      "not fit this library's model",
                                      100 * guard->fraction);
        return TRUE;
      case LK_CALIBRATION_GUARD_TOO_FEW:
        if (message)
          *message = g_strdup_printf (
              "This calibration makes nobody anybody's pair (%u of %u faces have a "
              "candidate): it does not fit this library's model",
              guard->faces_paired, guard->faces_sampled);
        return TRUE;
    }
  return FALSE;
}

/* --- priors ---------------------------------------------------------------------------------- */

/* Evidence for each in data/LIBRARY-FORMAT.md, "Calibration priors". */
static const struct
{
  const char *names[4];
  LkCalibration calibration;
} priors[] = {
  { { "arcface", "buffalo_l", "antelopev2", NULL }, { 30.0, -10.5, 0, 0, 0 } },
  { { "facenet", "photoprism", NULL }, { 40.0, -29.6, 0, 0, 0 } },
  /* Fitted on real photographs: LIBRARY-FORMAT.md. */
  { { "dlib", "dlib_face_recognition_resnet_model_v1", NULL }, { 175.2, -163.8, 0, 0, 0 } },
};

const LkCalibration *
lk_calibration_prior_for_model (const char *model)
{
  if (model == NULL)
    return NULL;
  for (guint k = 0; k < G_N_ELEMENTS (priors); k++)
    for (guint n = 0; priors[k].names[n]; n++)
      if (g_ascii_strcasecmp (model, priors[k].names[n]) == 0)
        return &priors[k].calibration;
  return NULL;
}
