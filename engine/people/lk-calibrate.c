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
 * the sample's own percentiles put the bar above them: issue 29). In each
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
 * (a blurred face between two people joins them at the weak end). Measured
 * on the bridge family (5,000 faces, seed 3; labelled fit 0.978): sure at 0.2
 * gave 0.958, 0.3 0.976, 0.5 0.939 (and the look-alikes 0.998, 0.997, 0.996);
 * without the sure level (0.1 alone) 0.956. Left out are the pairs of a face
 * the clustering is unsure of, and of two sure people as close to each other
 * as to themselves; two sure people of several faces each that are closer
 * to random faces than to themselves are two people even where the weak end
 * joins them (people_of): that took the groups family's 1,000 faces of seed
 * 4 from 0.982 to 0.997 (labelled fit 0.998) and the bridges' 5,000 from
 * 0.976 to 0.978, and left the other families' figures as they were. It was then checked,
 * unchanged, on seeds and sizes it was not chosen on (README, "Calibration"). Each refit samples
 * 100,000 pairs of each kind and its Newton steps start from the calibration it refits; the tail's
 * fit samples 200,000 of the pairs above its bar. At 20,000 look-alike faces the estimate
 * took 3.6–3.9 s of CPU against 4.9–5.6 s before those three (and one pass per Newton step, not
 * two; the scan's own cosines, not recomputed), about 3.5 scans' worth
 * (2-core EPYC Zen 4, load 10–13).
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

#include "lk-calibrate.h"
#include "lk-cluster.h"
#include "lk-evaluate.h"
#include "scan/lk-kernels.h"
#include "scan/lk-scan.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-calibrate-error-quark, lk_calibrate_error)
/* clang-format on */

/* Pairs per face the exact part of a sample aims at: enough that every
 * negative whose probability is not ≈ 0 is in it, few enough that its
 * memory (12 bytes a pair) stays small next to the library. */
#define EXACT_PAIRS_PER_FACE        20
/* The estimate's bar: impostors per face predicted above it. */
#define ESTIMATE_IMPOSTORS_PER_FACE 5
/* Random pairs drawn to place a bar. */
#define BAR_SAMPLE                  20000
/* The estimate's refits on its own people, at most, and the pairs of each
 * kind (one person; two people above the bar; below it) each refit samples. */
#define ESTIMATE_STEPS              6
#define REFIT_SAMPLE                100000
/* The pairs above the estimate's bar its first fit samples, at most. */
#define ESTIMATE_NEAR_SAMPLE        200000
/* The average linkage at which the estimate takes two faces as surely one
 * person (the clustering's own bar is LK_CLUSTER_DEFAULT_THRESHOLD, 0.1). */
#define ESTIMATE_SURE               0.3
#define MAX_NEWTON                  100
/* The estimate's reading of the cosines' shape (samples_estimated): rounds,
 * and the largest share of pairs of one person it may find. */
#define SHAPE_ROUNDS                5
#define SHAPE_MAX_SHOULDER          0.25

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

/* --- the fit --------------------------------------------------------------------------------- */

/* log (1 + e^z) without overflow. */
static double
softplus (double z)
{
  return z > 0 ? z + log1p (exp (-z)) : log1p (exp (z));
}

static double
sigmoid (double z)
{
  return z >= 0 ? 1 / (1 + exp (-z)) : exp (z) / (1 + exp (z));
}

typedef struct
{
  const LkCalibrationSample *s;
  gsize n;
  gboolean size;       /* fit w_size */
  double size_ref;     /* log2 crops are centred here, for conditioning */
  double scale;        /* 1 / positive weight */
  const double *log2c; /* n: log2 (min_crop) − size_ref, when size */
} Problem;

/* The penalised mean loss at theta = (a, b, w), its gradient g and its
 * Hessian h, in one pass: one exp and one log1p per pair (a pass for the
 * loss and another for the derivatives made the fits a third of the
 * estimate's time at 20,000 faces). */
static double
evaluate (const Problem *p, const double theta[3], double g[3], double h[3][3])
{
  int m = p->size ? 3 : 2;
  double sum = 0;
  memset (g, 0, 3 * sizeof (double));
  memset (h, 0, 9 * sizeof (double));
  for (gsize k = 0; k < p->n; k++)
    {
      const LkCalibrationSample *s = &p->s[k];
      if (s->held_out)
        continue;
      double x[3] = { s->cos, 1, p->size ? p->log2c[k] : 0 };
      double z = theta[0] * x[0] + theta[1] + theta[2] * x[2];
      double e = exp (-fabs (z));
      /* softplus (z) = max (z, 0) + log (1 + e^−|z|); sigmoid from the same e. */
      sum += s->weight * (MAX (z, 0) + log1p (e) - s->y * z);
      double q = z >= 0 ? 1 / (1 + e) : e / (1 + e);
      double r = s->weight * (q - s->y), v = s->weight * q * (1 - q);
      for (int a = 0; a < m; a++)
        {
          g[a] += r * x[a];
          for (int b = a; b < m; b++)
            h[a][b] += v * x[a] * x[b];
        }
    }
  for (int a = 0; a < m; a++)
    {
      g[a] *= p->scale;
      for (int b = a; b < m; b++)
        h[b][a] = h[a][b] *= p->scale;
    }
  g[0] += LK_CALIBRATION_RIDGE * theta[0];
  h[0][0] += LK_CALIBRATION_RIDGE;
  if (m == 3)
    {
      g[2] += LK_CALIBRATION_RIDGE * theta[2];
      h[2][2] += LK_CALIBRATION_RIDGE;
    }
  return sum * p->scale + LK_CALIBRATION_RIDGE / 2 * (theta[0] * theta[0] + theta[2] * theta[2]);
}

/* Solves the m × m system h x = g (m ≤ 3) by Gaussian elimination with
 * partial pivoting; FALSE when it is singular. */
static gboolean
solve (double h[3][3], double g[3], int m, double x[3])
{
  for (int c = 0; c < m; c++)
    {
      int pivot = c;
      for (int r = c + 1; r < m; r++)
        if (fabs (h[r][c]) > fabs (h[pivot][c]))
          pivot = r;
      if (!(fabs (h[pivot][c]) > 1e-300))
        return FALSE;
      for (int k = 0; k < m; k++)
        {
          double t = h[c][k];
          h[c][k] = h[pivot][k];
          h[pivot][k] = t;
        }
      double t = g[c];
      g[c] = g[pivot];
      g[pivot] = t;
      for (int r = c + 1; r < m; r++)
        {
          double f = h[r][c] / h[c][c];
          for (int k = c; k < m; k++)
            h[r][k] -= f * h[c][k];
          g[r] -= f * g[c];
        }
    }
  for (int r = m - 1; r >= 0; r--)
    {
      double v = g[r];
      for (int k = r + 1; k < m; k++)
        v -= h[r][k] * x[k];
      x[r] = v / h[r][r];
    }
  return TRUE;
}

/* *converged: the Newton decrement fell below 1e-12 (the optimum, to
 * double precision); FALSE when step halving found no further progress
 * first, which is a stop, not an optimum (issue 29: an estimate stopped
 * after 1 step with p = 0.9 at cosine 1.17 and said nothing). */
static gboolean
newton (const Problem *p, double theta[3], guint *iterations, gboolean *converged, GError **error)
{
  *converged = FALSE;
  int m = p->size ? 3 : 2;
  double g[3], h[3][3];
  double current = evaluate (p, theta, g, h);
  for (guint it = 0; it < MAX_NEWTON; it++)
    {
      double step[3] = { 0 }, rhs[3] = { g[0], g[1], g[2] }, hs[3][3];
      memcpy (hs, h, sizeof hs);
      if (!solve (hs, rhs, m, step))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
                       "the fit's Hessian is singular after %u steps (every pair at one cosine?)",
                       it);
          return FALSE;
        }
      double decrement = 0;
      for (int a = 0; a < m; a++)
        decrement += g[a] * step[a];
      *iterations = it + 1;
      if (decrement < 1e-12)
        {
          *converged = TRUE;
          return TRUE;
        }
      /* Step halving until the objective falls (Armijo, 1e-4 of the
       * decrement); the accepted trial's derivatives are the next step's. */
      double t = 1, trial[3], tg[3], th[3][3];
      for (;;)
        {
          for (int a = 0; a < 3; a++)
            trial[a] = theta[a] - t * step[a];
          double value = evaluate (p, trial, tg, th);
          if (value <= current - 1e-4 * t * decrement)
            {
              current = value;
              break;
            }
          t /= 2;
          if (t < 1e-10)
            {
              /* No further progress in double precision: at the optimum
               * when the decrement is round-off (1e-9 of the objective). */
              *converged = decrement <= 1e-9 * MAX (fabs (current), 1e-3);
              return TRUE;
            }
        }
      memcpy (theta, trial, sizeof trial);
      memcpy (g, tg, sizeof tg);
      memcpy (h, th, sizeof th);
    }
  g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
               "the fit did not converge in %d Newton steps", MAX_NEWTON);
  return FALSE;
}

static LkCalibrationFit *
fit (const LkCalibrationSample *samples, gsize n, gboolean allow_size, const LkCalibration *start,
     double min_probability, double median_crop, GError **error)
{
  double positive = 0, negative = 0, all_negative = 0, sw = 0, s1 = 0, s2 = 0;
  gsize n_pos = 0, n_neg = 0;
  for (gsize k = 0; k < n; k++)
    {
      const LkCalibrationSample *s = &samples[k];
      if (!(s->weight > 0) || !isfinite (s->cos) || !(s->min_crop > 0) || !(s->y >= 0)
          || !(s->y <= 1))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
                       "pair %zu of the fit is invalid (cos %g, crop %g, y %g, weight %g)", k,
                       s->cos, s->min_crop, s->y, s->weight);
          return NULL;
        }
      all_negative += s->weight * (1 - s->y);
      if (s->held_out)
        continue;
      positive += s->weight * s->y;
      negative += s->weight * (1 - s->y);
      if (s->y >= 0.5)
        n_pos++;
      else
        n_neg++;
      double l = log2 (s->min_crop);
      sw += s->weight, s1 += s->weight * l, s2 += s->weight * l * l;
    }
  if (!(positive > 0) || !(negative > 0) || n_pos == 0 || n_neg == 0)
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "the fit needs pairs of one person and pairs of two people; it has %zu and "
                   "%zu",
                   n_pos, n_neg);
      return NULL;
    }
  double mean = s1 / sw, var = MAX (0, s2 / sw - mean * mean);
  /* Crops that vary by less than 5 % (sd of log2) leave w_size unidentifiable
   * next to b. */
  Problem p = { samples, n, allow_size && sqrt (var) > 0.07, mean, 1 / MAX (positive, 1), NULL };
  g_autofree double *log2c = NULL;
  if (p.size)
    {
      log2c = g_new (double, n);
      for (gsize k = 0; k < n; k++)
        log2c[k] = log2 (samples[k].min_crop) - mean;
      p.log2c = log2c;
    }
  const gboolean warm = start && start->a > 0 && isfinite (start->a) && isfinite (start->b);
  const double a0 = warm ? start->a : 1, b0 = warm ? start->b : 0;
  double theta[3] = { a0, b0, 0 };
  g_autoptr (LkCalibrationFit) f = g_new0 (LkCalibrationFit, 1);
  if (!newton (&p, theta, &f->iterations, &f->converged, error))
    return NULL;
  /* w_size >= 0: a smaller crop may only make a cosine less convincing. The
   * objective is concave, so when its unconstrained optimum has w_size < 0
   * the constrained one lies on w_size = 0: the fit without it. (Why the
   * bound, with the bridge family's figures: the file's opening comment.) */
  if (p.size && theta[2] < 0)
    {
      guint more = 0;
      p.size = FALSE;
      theta[0] = a0, theta[1] = b0, theta[2] = 0;
      if (!newton (&p, theta, &more, &f->converged, error))
        return NULL;
      f->iterations += more;
      f->size_at_bound = TRUE;
    }
  if (!(theta[0] > 0) || !isfinite (theta[1]))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
                   "the fitted model does not rise with the cosine (a = %g): pairs of one person "
                   "are not closer than pairs of two",
                   theta[0]);
      return NULL;
    }
  f->calibration.a = theta[0];
  f->calibration.b = theta[1] - (p.size ? theta[2] * p.size_ref : 0);
  f->calibration.w_size = p.size ? theta[2] : 0;
  f->calibration.positive_pairs = (gint64) n_pos;
  f->calibration.negative_pairs = (gint64) n_neg;
  f->fitted_size = p.size || f->size_at_bound;
  f->negative_weight = all_negative;

  double held = 0, held_pos = 0, loss = 0, loss_pos = 0, brier = 0;
  for (gsize k = 0; k < n; k++)
    {
      const LkCalibrationSample *s = &samples[k];
      if (!s->held_out)
        continue;
      double z = f->calibration.a * s->cos + f->calibration.b
                 + f->calibration.w_size * log2 (s->min_crop);
      double l = softplus (z) - s->y * z, q = sigmoid (z);
      held += s->weight;
      loss += s->weight * l;
      brier += s->weight * (q - s->y) * (q - s->y);
      held_pos += s->weight * s->y;
      loss_pos += s->weight * s->y * softplus (-z);
      if (s->y >= 0.5)
        f->held_out_positive++;
      else
        f->held_out_negative++;
    }
  f->log_loss = held > 0 ? loss / held : NAN;
  f->brier = held > 0 ? brier / held : NAN;
  f->log_loss_positive = held_pos > 0 ? loss_pos / held_pos : NAN;
  f->min_probability = min_probability;
  f->median_crop = median_crop;
  f->cos_at_bar = lk_calibration_cos_at (&f->calibration, min_probability, median_crop);
  return g_steal_pointer (&f);
}

LkCalibrationFit *
lk_calibration_fit (const LkCalibrationSample *samples, gsize n, double min_probability,
                    double median_crop, GError **error)
{
  return fit (samples, n, TRUE, NULL, min_probability, median_crop, error);
}

void
lk_calibration_fit_free (LkCalibrationFit *f)
{
  g_free (f);
}

/* --- pairs of a library ---------------------------------------------------------------------- */

typedef struct
{
  const LkLibrary *library;
  LkDotFunc dot;
  GRand *rand;
  guint64 seed;
  double held_out;
  const guint8 *mask; /* faces that may be drawn, or NULL: all */
  double allowed;     /* pairs the scan could return among the masked faces */
  double level;       /* the estimate's: the median cosine of random pairs */
} Context;

static gboolean
allowed (const LkLibrary *l, gsize i, gsize j)
{
  return i != j && l->photo[i] != l->photo[j] && (l->gallery[i] || l->gallery[j]);
}

static double
cos_of (const Context *c, gsize i, gsize j)
{
  return c->dot (lk_library_row (c->library, i), lk_library_row (c->library, j), c->library->dim);
}

static double
pairs_of (double k)
{
  return k * (k - 1) / 2;
}

/* Pairs the scan could return among the masked faces: all pairs, less those
 * of one photo, less those of two probes, plus those of one photo and two
 * probes (taken away twice). */
static double
count_allowed (const LkLibrary *l, const guint8 *mask)
{
  g_autoptr (GHashTable) per_photo
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  double faces = 0, probes = 0;
  for (gsize f = 0; f < l->count; f++)
    {
      if (mask && !mask[f])
        continue;
      double *counts = g_hash_table_lookup (per_photo, &l->photo[f]);
      if (counts == NULL)
        {
          counts = g_new0 (double, 2);
          g_hash_table_insert (per_photo, (gpointer) &l->photo[f], counts);
        }
      counts[0]++;
      faces++;
      if (!l->gallery[f])
        counts[1]++, probes++;
    }
  double total = pairs_of (faces) - pairs_of (probes);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, per_photo);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      const double *counts = value;
      total -= pairs_of (counts[0]) - pairs_of (counts[1]);
    }
  return total;
}

/* A uniform allowed pair of masked faces; FALSE when a million tries found
 * none (a library of one photo, or of probes only). */
static gboolean
draw_pair (Context *c, gsize *i, gsize *j)
{
  const LkLibrary *l = c->library;
  for (int attempt = 0; attempt < 1000000; attempt++)
    {
      gsize x = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      gsize y = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      if (c->mask && (!c->mask[x] || !c->mask[y]))
        continue;
      if (!allowed (l, x, y))
        continue;
      *i = MIN (x, y);
      *j = MAX (x, y);
      return TRUE;
    }
  return FALSE;
}

static gboolean
held_out_of (const Context *c, gsize i, gsize j)
{
  guint64 x = c->seed ^ ((guint64) i << 32 | (guint64) j);
  x = (x ^ (x >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  x ^= x >> 31;
  return (double) (x >> 11) * 0x1.0p-53 < c->held_out;
}

static void
add_sample (GArray *out, const Context *c, gsize i, gsize j, double cos, double y, double weight)
{
  const LkLibrary *l = c->library;
  LkCalibrationSample s
      = { cos, MIN (l->crop_px[i], l->crop_px[j]), y, weight, held_out_of (c, i, j) };
  g_array_append_val (out, s);
}

static int
compare_desc (gconstpointer x, gconstpointer y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? 1 : a > b ? -1 : 0;
}

/* Which pairs are two people (labels, decisions); NULL: any. */
typedef gboolean (*NegativeFunc) (gpointer data, gsize i, gsize j);

/* Cosines of BAR_SAMPLE random allowed pairs (of two people, when
 * is_negative is given), highest first. */
static GArray *
sample_cosines (Context *c, NegativeFunc is_negative, gpointer data, GError **error)
{
  g_autoptr (GArray) cosines = g_array_sized_new (FALSE, FALSE, sizeof (double), BAR_SAMPLE);
  for (guint tries = 0; cosines->len < BAR_SAMPLE; tries++)
    {
      gsize i, j;
      if (tries == 100 * BAR_SAMPLE || !draw_pair (c, &i, &j))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                       "the library has no pair of faces the scan could return (two faces of "
                       "different photos, at least one a gallery face)%s",
                       is_negative ? " of two people" : "");
          return NULL;
        }
      if (is_negative && !is_negative (data, i, j))
        continue;
      double cos = cos_of (c, i, j);
      g_array_append_val (cosines, cos);
    }
  g_array_sort (cosines, compare_desc);
  return g_steal_pointer (&cosines);
}

typedef struct
{
  guint32 i, j;
  double cos;
} Near;

/* Every allowed pair with cosine >= bar, found by the scan, with its
 * cosine recomputed in double-rounded float (the scan keeps only the
 * probability). */
static GArray *
pairs_above (Context *c, double bar, GCancellable *cancellable, GError **error)
{
  LkFaces faces;
  lk_faces_from_library (&faces, c->library);
  /* sigmoid (cos − bar) >= 0.5 exactly when cos >= bar. With a slope of 1
   * the probability the scan keeps (a float in [0.5, 0.77]) gives the
   * cosine back within 3e-7: recomputing the dot products cost 7 % of the
   * estimate at 20,000 faces (1.4 million pairs). */
  LkCalibration step = { 1, -bar, 0, 0, 0 };
  g_autoptr (LkScanResult) r = lk_scan (&faces, &step, 0.5, NULL, cancellable, error);
  if (r == NULL)
    return NULL;
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (Near), r->pairs->len);
  for (guint k = 0; k < r->pairs->len; k++)
    {
      const LkPair *p = &g_array_index (r->pairs, LkPair, k);
      if (c->mask && (!c->mask[p->i] || !c->mask[p->j]))
        continue;
      double q = p->probability;
      Near near = { p->i, p->j, bar + log (q / (1 - q)) };
      g_array_append_val (out, near);
    }
  return out;
}

static double
median_crop (const LkLibrary *l)
{
  if (l->count == 0)
    return 1;
  g_autofree double *crops = g_new (double, l->count);
  for (gsize f = 0; f < l->count; f++)
    crops[f] = l->crop_px[f];
  qsort (crops, l->count, sizeof (double), compare_desc);
  return crops[l->count / 2];
}

/* A bar with about `target` pairs of two people above it, read off a
 * sample of the `negatives` such pairs; -2 (every pair) when the library
 * has fewer than that. Counting only pairs of two people matters: at 20,000
 * faces of the look-alike family the pairs of one person alone put 20 pairs
 * per face above cosine 0.61, above the bar the labels' fit needs (0.47). */
static double
bar_for (Context *c, double target, double negatives, NegativeFunc is_negative, gpointer data,
         GError **error)
{
  if (negatives <= target)
    return -2;
  g_autoptr (GArray) cosines = sample_cosines (c, is_negative, data, error);
  if (cosines == NULL)
    return NAN;
  gsize k = (gsize) (target / negatives * cosines->len);
  return g_array_index (cosines, double, MIN (k, cosines->len - 1));
}

/* Every pair of one person (group) among the faces `members` of each
 * group; sampled with probability `keep` (weight 1 / keep) when there are
 * too many. */
static void
add_group_pairs (GArray *out, Context *c, const guint32 *faces, gsize n, double keep)
{
  for (gsize x = 0; x < n; x++)
    for (gsize z = x + 1; z < n; z++)
      {
        gsize i = MIN (faces[x], faces[z]), j = MAX (faces[x], faces[z]);
        if (!allowed (c->library, i, j))
          continue;
        if (keep < 1 && g_rand_double (c->rand) >= keep)
          continue;
        add_sample (out, c, i, j, cos_of (c, i, j), 1, 1 / keep);
      }
}

static double
group_pairs (const Context *c, const guint32 *faces, gsize n)
{
  double count = 0;
  for (gsize x = 0; x < n; x++)
    for (gsize z = x + 1; z < n; z++)
      count += allowed (c->library, faces[x], faces[z]);
  return count;
}

/* The negatives below `bar`: `draws` uniform draws among the pairs for which
 * is_negative () holds, each kept when below the bar, weighted so the kept
 * ones stand for all negatives below it. */
static gboolean
add_negatives_below (GArray *out, Context *c, double bar, double negatives, gsize draws,
                     NegativeFunc is_negative, gpointer data, GError **error)
{
  double weight = negatives / (double) draws;
  /* A cap on the draws, for groups that leave (almost) no pair of two. */
  guint64 tries = 0, max_tries = 100 * (guint64) draws + 1000000;
  for (gsize k = 0; k < draws; tries++)
    {
      gsize i, j;
      if (tries == max_tries || !draw_pair (c, &i, &j))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                       "the library has no pair of two people to fit against");
          return FALSE;
        }
      if (!is_negative (data, i, j))
        continue;
      k++;
      double cos = cos_of (c, i, j);
      if (cos < bar)
        add_sample (out, c, i, j, cos, 0, weight);
    }
  return TRUE;
}

/* --- from labels ----------------------------------------------------------------------------- */

typedef struct
{
  const LkLibrary *library;
  guint32 *label_id;   /* per face; G_MAXUINT32: none */
  guint32 *unsure;     /* per face, or NULL: two faces of one value but two labels are neither… */
  const guint32 *same; /* …unless both have a value here and the values differ (NULL: none) */
} Labels;

static gboolean
labels_differ (gpointer data, gsize i, gsize j)
{
  const Labels *l = data;
  if (l->label_id[i] == l->label_id[j])
    return FALSE;
  if (l->unsure == NULL || l->unsure[i] != l->unsure[j])
    return TRUE;
  return l->same && l->same[i] != G_MAXUINT32 && l->same[j] != G_MAXUINT32
         && l->same[i] != l->same[j];
}

/* The samples of a library whose faces are in groups (label_id, G_MAXUINT32:
 * none; faces outside mask are left out): every pair of one group, every
 * pair of two groups above a bar and a weighted sample of those below it.
 * near: the pairs above near_bar when the caller has them, else NULL (they
 * are scanned for at a bar with EXACT_PAIRS_PER_FACE pairs per face). */
static GArray *
samples_from_groups (Context *c, const LkCalibrateOptions *o, guint32 *label_id, guint n_labels,
                     guint32 *unsure, const guint32 *same, const guint8 *mask, const GArray *near,
                     double near_bar, gsize max_near, GArray **near_out, double *bar_out,
                     GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  c->mask = mask;
  c->allowed = count_allowed (l, mask);

  /* Faces by label. */
  g_autofree guint32 *first = g_new0 (guint32, n_labels + 1);
  g_autofree guint32 *members = g_new (guint32, MAX (l->count, 1));
  for (gsize f = 0; f < l->count; f++)
    if (mask[f])
      first[label_id[f] + 1]++;
  for (guint k = 0; k < n_labels; k++)
    first[k + 1] += first[k];
  {
    g_autofree guint32 *fill = g_memdup2 (first, sizeof (guint32) * n_labels);
    for (gsize f = 0; f < l->count; f++)
      if (mask[f])
        members[fill[label_id[f]]++] = (guint32) f;
  }
  double positives = 0;
  for (guint k = 0; k < n_labels; k++)
    positives += group_pairs (c, members + first[k], first[k + 1] - first[k]);
  /* Without a pair of two labels, the draw of negatives below could never
   * end: it rejects every pair it draws. */
  if (!(c->allowed - positives > 0))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "fitting from labels needs a pair of faces of two labels that the scan could "
                   "compare (in different photos, at least one a gallery face); %s has none",
                   l->folder);
      return NULL;
    }
  double keep = positives > (double) o->max_positives ? (double) o->max_positives / positives : 1;

  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  for (guint k = 0; k < n_labels; k++)
    add_group_pairs (out, c, members + first[k], first[k + 1] - first[k], keep);

  Labels labels = { l, label_id, unsure, same };
  g_autoptr (GArray) scanned = NULL;
  double bar = near_bar;
  if (near == NULL)
    {
      bar = bar_for (c, (double) EXACT_PAIRS_PER_FACE * (double) l->count, c->allowed - positives,
                     labels_differ, &labels, error);
      if (isnan (bar))
        return NULL;
      near = scanned = pairs_above (c, bar, cancellable, error);
      if (near == NULL)
        return NULL;
    }
  /* The pairs of two groups above the bar; beyond max_near, a uniform
   * sample of them, weighted. */
  double n_near = 0;
  for (guint k = 0; k < near->len; k++)
    {
      const Near *p = &g_array_index (near, Near, k);
      n_near += mask[p->i] && mask[p->j] && labels_differ (&labels, p->i, p->j);
    }
  double keep_near = n_near > (double) max_near ? (double) max_near / n_near : 1;
  for (guint k = 0; k < near->len; k++)
    {
      const Near *p = &g_array_index (near, Near, k);
      if (mask[p->i] && mask[p->j] && labels_differ (&labels, p->i, p->j)
          && (keep_near >= 1 || g_rand_double (c->rand) < keep_near))
        add_sample (out, c, p->i, p->j, p->cos, 0, 1 / keep_near);
    }
  if (!add_negatives_below (out, c, bar, c->allowed - positives, o->negatives, labels_differ,
                            &labels, error))
    return NULL;
  if (near_out)
    *near_out = scanned ? g_steal_pointer (&scanned) : NULL;
  if (bar_out)
    *bar_out = bar;
  return g_steal_pointer (&out);
}

static GArray *
samples_from_labels (Context *c, const LkCalibrateOptions *o, GArray **near, double *bar,
                     GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint32 *label_id = g_new (guint32, MAX (l->count, 1));
  g_autofree guint8 *mask = g_new0 (guint8, MAX (l->count, 1));
  for (gsize f = 0; f < l->count; f++)
    {
      label_id[f] = G_MAXUINT32;
      if (l->label[f] == NULL)
        continue;
      gpointer id;
      if (!g_hash_table_lookup_extended (ids, l->label[f], NULL, &id))
        {
          id = GUINT_TO_POINTER (g_hash_table_size (ids));
          g_hash_table_insert (ids, l->label[f], id);
        }
      label_id[f] = GPOINTER_TO_UINT (id);
      mask[f] = 1;
    }
  guint n_labels = g_hash_table_size (ids);
  if (n_labels < 2)
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "fitting from labels needs faces of at least two labels; %s has %u "
                   "(faces[].label in library.json)",
                   l->folder, n_labels);
      return NULL;
    }
  return samples_from_groups (c, o, label_id, n_labels, NULL, NULL, mask, NULL, 0, G_MAXSIZE, near,
                              bar, cancellable, error);
}

/* --- from decisions -------------------------------------------------------------------------- */

gboolean
lk_calibration_decisions_suffice (const LkLibrary *library, const GPtrArray *pins,
                                  double *positive_pairs, gsize *taken_out)
{
  Context c = { .library = library };
  double positives = 0;
  gsize exclusions = 0;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      positives += group_pairs (&c, (const guint32 *) pin->faces->data, pin->faces->len);
      exclusions += pin->excluded->len;
    }
  if (positive_pairs)
    *positive_pairs = positives;
  if (taken_out)
    *taken_out = exclusions;
  return positives >= LK_CALIBRATION_MIN_DECISION_PAIRS && exclusions > 0;
}

static GArray *
samples_from_decisions (Context *c, const GPtrArray *pins, const LkCalibrateOptions *o,
                        GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  g_autofree gint32 *pin_of = g_new (gint32, MAX (l->count, 1));
  for (gsize f = 0; f < l->count; f++)
    pin_of[f] = -1;
  double positives = 0;
  gsize exclusions = 0;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint x = 0; x < pin->faces->len; x++)
        {
          guint32 f = g_array_index (pin->faces, guint32, x);
          if (f < l->count)
            pin_of[f] = (gint32) k;
        }
    }
  if (!lk_calibration_decisions_suffice (l, pins, &positives, &exclusions))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "fitting from decisions needs at least %d pairs of faces kept together "
                   "(confirmed, merged or named people) and one face taken out of a person; "
                   "the decisions hold %.0f pairs and %zu faces taken out",
                   LK_CALIBRATION_MIN_DECISION_PAIRS, positives, exclusions);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  c->allowed = count_allowed (l, NULL);
  double keep = positives > (double) o->max_positives ? (double) o->max_positives / positives : 1;
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  gsize taken_out = 0;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      add_group_pairs (out, c, (const guint32 *) pin->faces->data, pin->faces->len, keep);
      for (guint x = 0; x < pin->excluded->len; x++)
        for (guint z = 0; z < pin->faces->len; z++)
          {
            gsize i = g_array_index (pin->excluded, guint32, x);
            gsize j = g_array_index (pin->faces, guint32, z);
            if (i >= l->count || !allowed (l, i, j))
              continue;
            add_sample (out, c, MIN (i, j), MAX (i, j), cos_of (c, i, j), 0, 1);
            taken_out++;
          }
    }
  /* The background: a pinned face and a random face outside its pin, taken
   * as two people. Random pairs of any two faces would not do: most of a
   * library's pairs of one person are between faces no decision touched
   * (with five people pinned in a 1,500-face sample, their 9,000 pairs
   * outweighed the pins' 5,000 and put the bar at cosine 0.998). Outside
   * its pin a pinned face meets its own person only in faces the user has
   * not yet gathered, a small share once a person is reviewed. */
  g_autoptr (GArray) pinned = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize f = 0; f < l->count; f++)
    if (pin_of[f] >= 0)
      {
        guint32 face = (guint32) f;
        g_array_append_val (pinned, face);
      }
  gsize tries = 0, kept = 0;
  g_autoptr (GArray) background = g_array_new (FALSE, FALSE, sizeof (Near));
  while (kept < o->negatives && tries < 50 * o->negatives)
    {
      tries++;
      gsize i
          = g_array_index (pinned, guint32, g_rand_int_range (c->rand, 0, (gint32) pinned->len));
      gsize j = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      if (!allowed (l, i, j) || pin_of[i] == pin_of[j])
        continue;
      kept++;
      Near n = { (guint32) MIN (i, j), (guint32) MAX (i, j), cos_of (c, i, j) };
      g_array_append_val (background, n);
    }
  if (kept == 0)
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "every face the decisions hold shares a photo with every other face");
      return NULL;
    }
  /* Pairs of a pinned face and a face outside its pin: the draws' share of
   * all (pinned, any) draws that qualified. */
  double weight
      = (double) pinned->len * (double) l->count * ((double) kept / (double) tries) / (double) kept;
  for (guint k = 0; k < background->len; k++)
    {
      const Near *n = &g_array_index (background, Near, k);
      add_sample (out, c, n->i, n->j, n->cos, 0, weight);
    }
  return g_steal_pointer (&out);
}

/* --- estimated ------------------------------------------------------------------------------- */

/* The upper tail of a standard normal, Q (z). */
static double
upper_tail (double z)
{
  return 0.5 * erfc (z / G_SQRT2);
}

/* z with Q (z) = q, 0 < q < 0.5, by bisection (60 halvings of [0, 40]). */
static double
upper_tail_inverse (double q)
{
  double lo = 0, hi = 40;
  for (int k = 0; k < 60; k++)
    {
      double mid = (lo + hi) / 2;
      if (upper_tail (mid) > q)
        lo = mid;
      else
        hi = mid;
    }
  return (lo + hi) / 2;
}

static gboolean
always (gpointer data, gsize i, gsize j)
{
  return TRUE;
}

/* The shape of a library's cosines, from a sample of them sorted highest
 * first (issue 29): a big peak of strangers' pairs, its centre *mu and
 * spread *sigma, and above it a shoulder of pairs of one person holding a
 * share *shoulder of them. The peak's tail is a Gaussian through ITS 75th
 * and 95th percentiles (*q75, *q95), which are the sample's at
 * 0.75 (1 − shoulder) and 0.95 (1 − shoulder) when the shoulder lies above
 * them; the shoulder is what the sample holds above 3 σ beyond what that
 * Gaussian predicts there; a few rounds settle both. Taking the sample's own
 * 75th and 95th (shoulder 0) read a real dlib library's strangers (σ 0.034:
 * 123 faces, 3.9 % of pairs of one person) as σ 0.051, so the tail claimed
 * the pairs of one person at 0.94–0.96 and the bar went to 0.969 (labels:
 * 0.940). */
static void
read_shape (const double *cosines, gsize m, double *mu_out, double *sigma_out, double *shoulder_out,
            double *q75_out, double *q95_out)
{
  double q75 = 0, q95 = 0;
  /* The first guess from the peak's lower half, which holds no pair of one
   * person: median and 25th percentile. Starting from the sample's own 75th
   * and 95th instead, a shoulder of more than 5 % of pairs (5.8 % in the 99
   * real dlib faces outside the collage of issue 29) put the 95th inside
   * it, read σ as 0.117 (the strangers' is 0.039), found no shoulder above
   * 3 σ and stayed there: the fit put p = 0.9 at cosine 1.0023. */
  double mu = cosines[m / 2];
  double sigma = (mu - cosines[m - 1 - m / 4]) / 0.6744897501960817;
  double shoulder = 0;
  for (int round = 0; round <= SHAPE_ROUNDS && sigma > 1e-6; round++)
    {
      double above = 0;
      for (gsize k = 0; k < m && cosines[k] >= mu + 3 * sigma; k++)
        above++;
      shoulder = CLAMP ((above - (double) m * upper_tail (3)) / (double) m, 0, SHAPE_MAX_SHOULDER);
      if (round == SHAPE_ROUNDS)
        break;
      /* Highest first: the u-quantile is at (1 − u) m. */
      q95 = cosines[(gsize) ((1 - 0.95 * (1 - shoulder)) * (double) m)];
      q75 = cosines[(gsize) ((1 - 0.75 * (1 - shoulder)) * (double) m)];
      sigma = (q95 - q75) / (1.6448536269514722 - 0.6744897501960817);
      mu = q75 - 0.6744897501960817 * sigma;
    }
  *mu_out = mu;
  *sigma_out = sigma;
  *shoulder_out = shoulder;
  *q75_out = q75;
  *q95_out = q95;
}

static GArray *
samples_estimated (Context *c, const LkCalibrateOptions *o, GArray **near_out, double *bar_out,
                   double *sample_max, GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  c->allowed = count_allowed (l, NULL);
  g_autoptr (GArray) cosines = sample_cosines (c, NULL, NULL, error);
  if (cosines == NULL)
    return NULL;
  gsize m = cosines->len;
  c->level = g_array_index (cosines, double, m / 2);
  *sample_max = g_array_index (cosines, double, 0);
  double mu, sigma, shoulder, q75, q95;
  read_shape ((const double *) cosines->data, m, &mu, &sigma, &shoulder, &q75, &q95);
  g_debug ("%s: the strangers' peak at %.4f, sigma %.4f; a shoulder of %.2f %% of pairs above it",
           l->folder, mu, sigma, 100 * shoulder);
  if (!(sigma > 1e-6))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
                   "the library's cosines do not vary (75th and 95th percentiles %.4f, %.4f): "
                   "nothing to tell people apart by",
                   q75, q95);
      return NULL;
    }
  double expected = (double) ESTIMATE_IMPOSTORS_PER_FACE * (double) l->count;
  double bar
      = expected >= c->allowed / 2 ? mu : mu + sigma * upper_tail_inverse (expected / c->allowed);
  g_autoptr (GArray) near = pairs_above (c, bar, cancellable, error);
  if (near == NULL)
    return NULL;

  /* Bins of sigma / 8 from the bar up. */
  double width = sigma / 8;
  gsize n_bins = (gsize) ceil ((1.0 + 1e-9 - bar) / width) + 1;
  g_autofree double *observed = g_new0 (double, n_bins);
  g_autofree double *genuine = g_new0 (double, n_bins);
  for (guint k = 0; k < near->len; k++)
    {
      gsize b = (gsize) MAX (0, floor ((g_array_index (near, Near, k).cos - bar) / width));
      observed[MIN (b, n_bins - 1)]++;
    }
  /* Impostors the tail predicts, per bin. */
  g_autofree double *impostors = g_new0 (double, n_bins);
  for (gsize b = 0; b < n_bins; b++)
    {
      double lo = bar + (double) b * width, hi = lo + width;
      impostors[b] = c->allowed * (upper_tail ((lo - mu) / sigma) - upper_tail ((hi - mu) / sigma));
    }
  /* Look-alikes: a bump of pairs of two people above the tail. The pairs of
   * one person have one mode, so below it their density can only fall:
   * never above the least (over three bins) that is observed between a bin
   * and the mode. */
  g_autofree double *smooth = g_new0 (double, n_bins);
  gsize mode = n_bins;
  for (gsize b = 0; b < n_bins; b++)
    {
      smooth[b] = (observed[b ? b - 1 : 0] + observed[b] + observed[MIN (b + 1, n_bins - 1)]) / 3;
      if (impostors[b] < 0.5 * observed[b] && (mode == n_bins || smooth[b] > smooth[mode]))
        mode = b;
    }
  /* The mode itself is not capped: a spike of near-duplicates in one bin
   * (20 pairs at 0.9998 among 400 strangers whose highest pair is 0.40) had
   * its three-bin mean, a third of it, as its cap, and no pair above 0.5. */
  double least = mode < n_bins ? MAX (smooth[mode], observed[mode]) : INFINITY;
  double best = 0;
  for (gsize b = 0; b < n_bins; b++)
    {
      double share = observed[b] > 0 ? 1 - impostors[b] / observed[b] : best;
      genuine[b] = share;
    }
  for (gsize b = mode < n_bins ? mode + 1 : 0; b-- > 0;)
    {
      if (b != mode)
        least = MIN (least, smooth[b]);
      if (observed[b] > 0)
        genuine[b] = MIN (genuine[b], least / observed[b]);
    }
  for (gsize b = 0; b < n_bins; b++)
    {
      best = MAX (best, CLAMP (genuine[b], 0, 1));
      genuine[b] = best;
    }

  /* Beyond ESTIMATE_NEAR_SAMPLE pairs, a uniform sample of them, weighted:
   * the fit then costs what a refit does (at 20,000 look-alike faces the
   * scan returns 1.4 million pairs, and fitting them all was a fifth of the
   * estimate's time). */
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  double keep = near->len > ESTIMATE_NEAR_SAMPLE ? (double) ESTIMATE_NEAR_SAMPLE / near->len : 1;
  for (guint k = 0; k < near->len; k++)
    {
      const Near *p = &g_array_index (near, Near, k);
      if (keep < 1 && g_rand_double (c->rand) >= keep)
        continue;
      gsize b = (gsize) MAX (0, floor ((p->cos - bar) / width));
      add_sample (out, c, p->i, p->j, p->cos, genuine[MIN (b, n_bins - 1)], 1 / keep);
    }
  if (!add_negatives_below (out, c, bar, c->allowed, o->negatives, always, NULL, error))
    return NULL;
  *near_out = g_steal_pointer (&near);
  *bar_out = bar;
  return g_steal_pointer (&out);
}

/* The pairs of near (in (i, j) order) a calibration puts at min_probability
 * or more: what its scan would return, when its bar is above near's. */
static GArray *
candidates (const LkLibrary *l, const GArray *near, const LkCalibration *calibration,
            double min_probability)
{
  GArray *pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint k = 0; k < near->len; k++)
    {
      const Near *n = &g_array_index (near, Near, k);
      double p
          = lk_scan_probability (calibration, n->cos, MIN (l->crop_px[n->i], l->crop_px[n->j]));
      if (p >= min_probability)
        {
          LkPair pair = { n->i, n->j, (float) p };
          g_array_append_val (pairs, pair);
        }
    }
  return pairs;
}

/* Mean cosine of the faces of group a to those of group b, from their sums
 * (rows are unit vectors); a == b: between two faces of a. */
static double
group_mean (const double *sa, gsize na, const double *sb, gsize nb, guint dim, gboolean self)
{
  double dot = 0;
  for (guint x = 0; x < dim; x++)
    dot += sa[x] * sb[x];
  return self ? (dot - (double) na) / ((double) na * (double) (na - 1))
              : dot / ((double) na * (double) nb);
}

static guint32
find_root (guint32 *parent, guint32 x)
{
  while (parent[x] != x)
    x = parent[x] = parent[parent[x]];
  return x;
}

/* The people a calibration makes of the pairs in near, as groups for a
 * refit. mask[f] is set for the faces of people of two faces or more (a face
 * alone says nothing of its pairs); label_id[f] is the person of face f when
 * the clustering is sure of it (average linkage ESTIMATE_SURE), unsure[f] its
 * person at the clustering's own bar. Two faces of one such person but two
 * sure ones are neither one person nor two, and left out — when one of them
 * is a face the clustering is not sure of (a blurred face between two people
 * joins them at the weak end), or when their two sure people are as close to
 * each other as to themselves (one person whose faces the bar left loosely
 * joined). Two sure people of several faces each, closer to random faces than
 * to themselves, that only the weak end joins are two people, and same[]
 * says so: with them left out too, two related identities of the groups
 * family (1,000 faces, seed 4; cross cosine 0.30, each 0.62 within) stayed
 * one person at every refit (BCubed F1 0.982 against the labelled fit's
 * 0.998). */
static gboolean
people_of (const Context *c, const GArray *near, const LkCalibration *calibration,
           double min_probability, guint32 *label_id, guint32 *unsure, guint32 *same, guint8 *mask,
           guint *n_groups, GError **error)
{
  const LkLibrary *l = c->library;
  g_autoptr (GArray) pairs = candidates (l, near, calibration, min_probability);
  LkClusterInput input;
  lk_cluster_input_init (&input, l, pairs);
  LkClusterOptions sure_options = { LK_LINKAGE_AVERAGE, ESTIMATE_SURE, 0, 0 };
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, error);
  g_autoptr (LkPeople) sure = people ? lk_cluster (&input, NULL, &sure_options, error) : NULL;
  if (sure == NULL)
    return FALSE;
  *n_groups = 0;
  for (gsize f = 0; f < l->count; f++)
    label_id[f] = unsure[f] = same[f] = G_MAXUINT32, mask[f] = 0;
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *person = &people->people[k];
      if (person->n_faces < 2)
        continue;
      for (gsize x = 0; x < person->n_faces; x++)
        unsure[person->faces[x]] = (guint32) k, mask[person->faces[x]] = 1;
    }
  for (gsize k = 0; k < sure->n_people; k++)
    {
      const LkPerson *person = &sure->people[k];
      for (gsize x = 0; x < person->n_faces; x++)
        label_id[person->faces[x]] = *n_groups;
      (*n_groups)++;
    }

  /* Within each person, its sure people of two faces or more: which are one
   * person (closer to each other than halfway down to random faces). */
  g_autofree guint32 *parent = g_new (guint32, MAX (*n_groups, 1));
  for (guint g = 0; g < *n_groups; g++)
    parent[g] = g;
  g_autoptr (GArray) groups = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autofree double *sums = NULL;
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *person = &people->people[k];
      g_array_set_size (groups, 0);
      for (gsize x = 0; x < person->n_faces; x++)
        {
          guint32 g = label_id[person->faces[x]];
          if (g == G_MAXUINT32 || sure->people[g].n_faces < 2)
            continue;
          gboolean seen = FALSE;
          for (guint y = 0; y < groups->len && !seen; y++)
            seen = g_array_index (groups, guint32, y) == g;
          if (!seen)
            g_array_append_val (groups, g);
        }
      if (groups->len < 2)
        continue;
      sums = g_renew (double, sums, (gsize) groups->len * l->dim);
      memset (sums, 0, sizeof (double) * groups->len * l->dim);
      for (guint y = 0; y < groups->len; y++)
        {
          const LkPerson *g = &sure->people[g_array_index (groups, guint32, y)];
          double *sum = sums + (gsize) y * l->dim;
          for (gsize x = 0; x < g->n_faces; x++)
            {
              const float *row = lk_library_row (l, g->faces[x]);
              for (guint d = 0; d < l->dim; d++)
                sum[d] += row[d];
            }
        }
      for (guint y = 0; y < groups->len; y++)
        for (guint z = y + 1; z < groups->len; z++)
          {
            guint32 gy = g_array_index (groups, guint32, y),
                    gz = g_array_index (groups, guint32, z);
            gsize ny = sure->people[gy].n_faces, nz = sure->people[gz].n_faces;
            const double *sy = sums + (gsize) y * l->dim, *sz = sums + (gsize) z * l->dim;
            double within = MIN (group_mean (sy, ny, sy, ny, l->dim, TRUE),
                                 group_mean (sz, nz, sz, nz, l->dim, TRUE));
            double across = group_mean (sy, ny, sz, nz, l->dim, FALSE);
            if (across - c->level >= (within - c->level) / 2)
              parent[find_root (parent, gy)] = find_root (parent, gz);
          }
    }
  for (gsize f = 0; f < l->count; f++)
    if (mask[f] && label_id[f] != G_MAXUINT32 && sure->people[label_id[f]].n_faces >= 2)
      same[f] = find_root (parent, label_id[f]);
  for (gsize f = 0; f < l->count; f++)
    if (mask[f] && label_id[f] == G_MAXUINT32)
      label_id[f] = (*n_groups)++;
  return TRUE;
}

/* With labels: the bar the labels' clustering scores best at (BCubed F1),
 * moving the fitted b only (see the file's opening comment for why). */
static gboolean
choose_bar (const LkLibrary *l, const GArray *near, double near_bar, LkCalibrationFit *f,
            GError **error)
{
  double max_crop = 0;
  for (gsize k = 0; k < l->count; k++)
    max_crop = MAX (max_crop, l->crop_px[k]);
  double best_f1 = -1, best_d = 0;
  for (int step = -10; step <= 15; step++)
    {
      double d = step * 0.01;
      LkCalibration cal = f->calibration;
      cal.b -= cal.a * d;
      if (lk_calibration_cos_at (&cal, f->min_probability, max_crop) < near_bar)
        continue;
      g_autoptr (GArray) pairs = candidates (l, near, &cal, f->min_probability);
      LkClusterInput input;
      lk_cluster_input_init (&input, l, pairs);
      g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, error);
      LkScore score;
      if (people == NULL || !lk_evaluate (people, (const char *const *) l->label, &score, error))
        return FALSE;
      if (score.bcubed.f1 > best_f1 + 1e-9
          || (fabs (score.bcubed.f1 - best_f1) <= 1e-9 && fabs (d) < fabs (best_d)))
        best_f1 = score.bcubed.f1, best_d = d;
    }
  f->calibration.b -= f->calibration.a * best_d;
  f->cos_at_bar = lk_calibration_cos_at (&f->calibration, f->min_probability, f->median_crop);
  return TRUE;
}

/* The highest cosine of any pair the scan could return: near holds every
 * pair above the estimate's bar, so its highest is the library's when it
 * has any; else the random sample's highest is as high as pairs go. */
static double
highest_cosine (const GArray *near, double sample_max)
{
  double best = sample_max;
  for (guint k = 0; k < near->len; k++)
    best = MAX (best, g_array_index (near, Near, k).cos);
  return best;
}

/* Why an estimate cannot be used, or NULL (issue 29). A real dlib library
 * was estimated at p = 0.9 at cosine 1.1654 after 1 Newton step, saved and
 * shown with 0 people and no warning; these are the ways an estimate can be
 * that wrong, each checked on the library itself. */
static char *
estimate_fails (const Context *c, const LkCalibrationFit *f, double highest)
{
  const LkLibrary *l = c->library;
  if (!f->converged)
    return g_strdup_printf ("its fit did not converge (stopped after %u Newton steps)",
                            f->iterations);
  double max_crop = 0;
  for (gsize k = 0; k < l->count; k++)
    max_crop = MAX (max_crop, l->crop_px[k]);
  /* w_size >= 0: the biggest crops have the lowest bar. */
  double lowest_bar = lk_calibration_cos_at (&f->calibration, f->min_probability, max_crop);
  if (!(lowest_bar <= highest))
    return g_strdup_printf ("it puts p = %g at cosine %.4f even for the biggest faces, above "
                            "every pair of this library (the highest is %.4f), so it would "
                            "make nobody anybody's pair",
                            f->min_probability, lowest_bar, highest);
  LkCalibrationGuard guard;
  lk_calibration_guard (l, &f->calibration, f->min_probability, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  switch (lk_calibration_guard_verdict (&guard))
    {
      case LK_CALIBRATION_GUARD_TOO_MANY:
        return g_strdup_printf ("it puts p = %g at cosine %.4f, which makes %.0f %% of random "
                                "pairs candidates (one person of nearly everyone)",
                                f->min_probability, f->cos_at_bar, 100 * guard.fraction);
      case LK_CALIBRATION_GUARD_TOO_FEW:
        return g_strdup_printf ("it puts p = %g at cosine %.4f, which makes nobody anybody's "
                                "pair (%u of %u random faces have a candidate)",
                                f->min_probability, f->cos_at_bar, guard.faces_paired,
                                guard.faces_sampled);
      case LK_CALIBRATION_GUARD_OK:
        break;
    }
  return NULL;
}

/* A failed estimate: why, then what stays in force and what to do. */
static LkCalibrationFit *
fail_estimate (const char *why, const char *counts, GError **error)
{
  g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
               "The estimate failed: %s (%s). The calibration in force is kept. Fit it from "
               "labels (faces[].label; likeness-cli calibrate --from labels) or from your "
               "decisions (confirm or merge a few people and take a face out of one, then "
               "--from decisions), or name the embedding model in library.json (source.model) "
               "for its prior",
               why, counts);
  return NULL;
}

static LkCalibrationFit *
estimate (Context *c, const LkCalibrateOptions *o, GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  g_autoptr (GArray) near = NULL;
  double bar = 0, sample_max = -1;
  g_autoptr (GArray) soft = samples_estimated (c, o, &near, &bar, &sample_max, cancellable, error);
  if (soft == NULL)
    return NULL;
  double crop = median_crop (l);
  g_autoptr (GError) first = NULL;
  g_autoptr (LkCalibrationFit) f = fit ((const LkCalibrationSample *) soft->data, soft->len, FALSE,
                                        NULL, o->min_probability, crop, &first);
  if (f == NULL)
    {
      g_debug ("%s: the estimate's first fit: %s", l->folder, first->message);
      return fail_estimate ("no pairs stand out above the strangers' cosines as one person's",
                            "its first fit had none", error);
    }
  /* Every fit the estimate makes, in order; the last that can be used is
   * its answer (a refit on people made by a wrong bar can run away). */
  g_autoptr (GPtrArray) fits = g_ptr_array_new_with_free_func (g_free);
  guint steps = f->iterations;
  g_ptr_array_add (fits, g_memdup2 (f, sizeof *f));
  /* Then the people that calibration makes are taken as labels, refitted,
   * and again, until the bar settles (it moved by under 0.002 in 3–5 steps
   * on the families of lk-sample.h; bridges swing by ±0.01, hence the cap). */
  LkCalibration cal = f->calibration;
  LkCalibrateOptions refit = *o;
  refit.max_positives = MIN (refit.max_positives, REFIT_SAMPLE);
  refit.negatives = MIN (refit.negatives, REFIT_SAMPLE);
  g_autofree guint32 *label_id = g_new (guint32, MAX (l->count, 1));
  g_autofree guint32 *unsure = g_new (guint32, MAX (l->count, 1));
  g_autofree guint32 *same = g_new (guint32, MAX (l->count, 1));
  g_autofree guint8 *mask = g_new0 (guint8, MAX (l->count, 1));
  for (int step = 0; step < ESTIMATE_STEPS; step++)
    {
      guint n_groups = 0;
      if (g_cancellable_set_error_if_cancelled (cancellable, error)
          || !people_of (c, near, &cal, o->min_probability, label_id, unsure, same, mask, &n_groups,
                         error))
        return NULL;
      if (n_groups < 2)
        break;
      g_autoptr (GError) local = NULL;
      g_autoptr (GArray) samples
          = samples_from_groups (c, &refit, label_id, n_groups, unsure, same, mask, near, bar,
                                 REFIT_SAMPLE, NULL, NULL, cancellable, &local);
      c->mask = NULL;
      if (samples == NULL && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (samples == NULL)
        break; /* the people left nothing to fit: the last calibration stands */
      g_autoptr (LkCalibrationFit) next
          = fit ((const LkCalibrationSample *) samples->data, samples->len, TRUE, &cal,
                 o->min_probability, crop, &local);
      if (next == NULL)
        break; /* the people gave nothing to fit: the last calibration stands */
      steps += next->iterations;
      double moved = fabs (next->cos_at_bar - f->cos_at_bar);
      cal = next->calibration;
      g_clear_pointer (&f, lk_calibration_fit_free);
      f = g_steal_pointer (&next);
      g_ptr_array_add (fits, g_memdup2 (f, sizeof *f));
      if (moved < 0.002)
        break;
    }

  double highest = highest_cosine (near, sample_max);
  g_autofree char *last_why = NULL;
  for (guint k = fits->len; k-- > 0;)
    {
      const LkCalibrationFit *candidate = g_ptr_array_index (fits, k);
      char *why = estimate_fails (c, candidate, highest);
      if (why == NULL)
        {
          if (last_why != NULL)
            g_debug ("%s: the estimate's last fit was refused (%s); fit %u of %u stands", l->folder,
                     last_why, k + 1, fits->len);
          LkCalibrationFit *answer = g_memdup2 (candidate, sizeof *candidate);
          answer->iterations = steps;
          answer->refits = k;
          return answer;
        }
      if (last_why == NULL)
        last_why = why;
      else
        g_free (why);
    }
  g_autofree char *counts = g_strdup_printf ("%u Newton steps, %u refits", steps, fits->len - 1);
  return fail_estimate (last_why, counts, error);
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
        samples = samples_from_labels (&c, &o, &near, &near_bar, cancellable, error);
        break;
      case LK_CALIBRATION_FROM_DECISIONS:
        samples = samples_from_decisions (&c, pins, &o, cancellable, error);
        break;
      case LK_CALIBRATION_FROM_ESTIMATE:
        return estimate (&c, &o, cancellable, error);
    }
  if (samples == NULL)
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  g_autoptr (LkCalibrationFit) f
      = fit ((const LkCalibrationSample *) samples->data, samples->len, TRUE, NULL,
             o.min_probability, median_crop (library), error);
  if (f && near && !choose_bar (library, near, near_bar, f, error))
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
      if (!draw_pair (&c, &i, &j))
        break;
      guard->sampled++;
      double cos = cos_of (&c, i, j);
      g_array_append_val (cosines, cos);
      double p
          = lk_scan_probability (calibration, cos, MIN (library->crop_px[i], library->crop_px[j]));
      guard->candidates += p >= min_probability;
    }
  guard->fraction = guard->sampled ? (double) guard->candidates / guard->sampled : 0;
  if (cosines->len >= 100)
    {
      double mu, sigma, q75, q95;
      g_array_sort (cosines, compare_desc);
      read_shape ((const double *) cosines->data, cosines->len, &mu, &sigma, &guard->shoulder, &q75,
                  &q95);
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
          if (!allowed (library, i, j))
            continue;
          any = TRUE;
          paired = lk_scan_probability (calibration, cos_of (&c, i, j),
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
  /* Fitted on real photographs (issue 29): LIBRARY-FORMAT.md. */
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

/* --- review.json's "calibration" ------------------------------------------------------------ */

typedef struct
{
  LkCalibration calibration;
  char *source;
  char *after; /* the newest decision in effect when it was chosen, or NULL */
} Entry;

struct _LkCalibrationHistory
{
  Entry *current;  /* NULL: the library's own */
  GPtrArray *undo; /* of Entry * (NULL elements: the library's own), oldest first */
  GPtrArray *redo; /* the next redo last */
};

static void
entry_free (gpointer data)
{
  Entry *e = data;
  if (e == NULL)
    return;
  g_free (e->source);
  g_free (e->after);
  g_free (e);
}

static gboolean
read_number (JsonObject *o, const char *member, double *out, GError **error)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n)
      || (json_node_get_value_type (n) != G_TYPE_DOUBLE
          && json_node_get_value_type (n) != G_TYPE_INT64)
      || !isfinite (json_node_get_double (n)))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” has no finite number “%s”", member);
      return FALSE;
    }
  *out = json_node_get_double (n);
  return TRUE;
}

/* A JSON null is the library's own calibration. */
static gboolean
entry_read (JsonNode *node, Entry **out, GError **error)
{
  *out = NULL;
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "a “calibration” entry is not an object");
      return FALSE;
    }
  JsonObject *o = json_node_get_object (node);
  Entry e = { LK_CALIBRATION_DEFAULT, NULL };
  if (!read_number (o, "a", &e.calibration.a, error)
      || !read_number (o, "b", &e.calibration.b, error)
      || !read_number (o, "w_size", &e.calibration.w_size, error))
    return FALSE;
  if (!(e.calibration.a > 0))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” has a = %g; it must be positive", e.calibration.a);
      return FALSE;
    }
  e.calibration.positive_pairs = json_object_get_int_member_with_default (o, "positive_pairs", 0);
  e.calibration.negative_pairs = json_object_get_int_member_with_default (o, "negative_pairs", 0);
  JsonNode *source = json_object_get_member (o, "source");
  e.source = g_strdup (source && JSON_NODE_HOLDS_VALUE (source)
                               && json_node_get_value_type (source) == G_TYPE_STRING
                           ? json_node_get_string (source)
                           : "unknown");
  JsonNode *after = json_object_get_member (o, "after");
  if (after && JSON_NODE_HOLDS_VALUE (after) && json_node_get_value_type (after) == G_TYPE_STRING)
    e.after = g_strdup (json_node_get_string (after));
  *out = g_memdup2 (&e, sizeof e);
  return TRUE;
}

static JsonNode *
entry_to_json (const Entry *e)
{
  if (e == NULL)
    return json_node_new (JSON_NODE_NULL);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "a");
  json_builder_add_double_value (b, e->calibration.a);
  json_builder_set_member_name (b, "b");
  json_builder_add_double_value (b, e->calibration.b);
  json_builder_set_member_name (b, "w_size");
  json_builder_add_double_value (b, e->calibration.w_size);
  json_builder_set_member_name (b, "positive_pairs");
  json_builder_add_int_value (b, e->calibration.positive_pairs);
  json_builder_set_member_name (b, "negative_pairs");
  json_builder_add_int_value (b, e->calibration.negative_pairs);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, e->source);
  if (e->after != NULL)
    {
      json_builder_set_member_name (b, "after");
      json_builder_add_string_value (b, e->after);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static gboolean
read_stack (JsonObject *o, const char *member, GPtrArray *out, GError **error)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration.%s” is not an array", member);
      return FALSE;
    }
  JsonArray *a = json_node_get_array (n);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      Entry *e;
      if (!entry_read (json_array_get_element (a, k), &e, error))
        return FALSE;
      g_ptr_array_add (out, e);
    }
  return TRUE;
}

LkCalibrationHistory *
lk_calibration_history_new (JsonNode *node, GError **error)
{
  g_autoptr (LkCalibrationHistory) h = g_new0 (LkCalibrationHistory, 1);
  h->undo = g_ptr_array_new_with_free_func (entry_free);
  h->redo = g_ptr_array_new_with_free_func (entry_free);
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return g_steal_pointer (&h);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” is not an object");
      return NULL;
    }
  JsonObject *o = json_node_get_object (node);
  JsonNode *current = json_object_get_member (o, "current");
  if ((current && !entry_read (current, &h->current, error))
      || !read_stack (o, "undo", h->undo, error) || !read_stack (o, "redo", h->redo, error))
    return NULL;
  return g_steal_pointer (&h);
}

void
lk_calibration_history_free (LkCalibrationHistory *h)
{
  if (h == NULL)
    return;
  entry_free (h->current);
  g_ptr_array_unref (h->undo);
  g_ptr_array_unref (h->redo);
  g_free (h);
}

static void
add_stack (JsonBuilder *b, const char *member, const GPtrArray *stack)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint k = 0; k < stack->len; k++)
    json_builder_add_value (b, entry_to_json (g_ptr_array_index (stack, k)));
  json_builder_end_array (b);
}

JsonNode *
lk_calibration_history_to_json (const LkCalibrationHistory *h)
{
  if (h->current == NULL && h->undo->len == 0 && h->redo->len == 0)
    return NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  if (h->current)
    {
      json_builder_set_member_name (b, "current");
      json_builder_add_value (b, entry_to_json (h->current));
    }
  add_stack (b, "undo", h->undo);
  add_stack (b, "redo", h->redo);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

const LkCalibration *
lk_calibration_history_current (const LkCalibrationHistory *h, const char **source)
{
  if (source)
    *source = h->current ? h->current->source : NULL;
  return h->current ? &h->current->calibration : NULL;
}

void
lk_calibration_history_set (LkCalibrationHistory *h, const LkCalibration *calibration,
                            const char *source)
{
  lk_calibration_history_set_after (h, calibration, source, NULL);
}

void
lk_calibration_history_set_after (LkCalibrationHistory *h, const LkCalibration *calibration,
                                  const char *source, const char *after)
{
  Entry *e = g_new0 (Entry, 1);
  e->calibration = *calibration;
  e->source = g_strdup (source ? source : "unknown");
  e->after = g_strdup (after);
  g_ptr_array_add (h->undo, h->current);
  h->current = e;
  g_ptr_array_set_size (h->redo, 0);
}

gboolean
lk_calibration_history_peek (const LkCalibrationHistory *h, gboolean redo, const char **source,
                             const char **after)
{
  const GPtrArray *stack = redo ? h->redo : h->undo;
  if (stack->len == 0)
    return FALSE;
  /* Undo takes back the current choice; redo makes the last undone one
   * current again. Only the bottom of the undo stack is ever NULL (the
   * library's own, current before the first choice), so an undo always has
   * a current entry; a redo may bring the library's own back. */
  const Entry *e = redo ? g_ptr_array_index (h->redo, h->redo->len - 1) : h->current;
  if (source)
    *source = e ? e->source : "library";
  if (after)
    *after = e ? e->after : NULL;
  return TRUE;
}

gboolean
lk_calibration_history_undo (LkCalibrationHistory *h)
{
  if (h->undo->len == 0)
    return FALSE;
  g_ptr_array_add (h->redo, h->current);
  h->current = g_ptr_array_steal_index (h->undo, h->undo->len - 1);
  return TRUE;
}

gboolean
lk_calibration_history_redo (LkCalibrationHistory *h)
{
  if (h->redo->len == 0)
    return FALSE;
  g_ptr_array_add (h->undo, h->current);
  h->current = g_ptr_array_steal_index (h->redo, h->redo->len - 1);
  return TRUE;
}

LkCalibration
lk_calibration_in_force (const LkLibrary *library, JsonNode *review_calibration,
                         const char **source, GError **error)
{
  g_autoptr (LkCalibrationHistory) h = lk_calibration_history_new (review_calibration, error);
  const char *from = NULL;
  const LkCalibration *chosen = h ? lk_calibration_history_current (h, &from) : NULL;
  if (source)
    *source = g_intern_string (chosen ? from : "library");
  return chosen ? *chosen : library->calibration;
}
