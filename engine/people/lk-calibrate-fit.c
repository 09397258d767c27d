/* lk-calibrate-fit.c — the weighted logistic fit: Newton with a ridge (why: lk-calibrate.c) */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-calibrate-private.h"

#define MAX_NEWTON 100

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
 * first, which is a stop, not an optimum (a fit can stop after one step
 * far from any sensible bar, and must say so). */
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

/* What the fit needs of its samples before its first step: their weight of
 * each kind, the pairs of each kind it fits on (the held-out ones left out,
 * but in all_negative) and the weighted sums of log2 (min crop). */
typedef struct
{
  double positive, negative, all_negative;
  double sw, s1, s2; /* Σ weight, Σ weight·log2 crop, Σ weight·(log2 crop)² */
  gsize n_pos, n_neg;
} Tally;

/* The samples checked (every weight, cosine, crop and label valid; pairs
 * of one person and of two among those fitted) and tallied. */
static gboolean
tally_samples (const LkCalibrationSample *samples, gsize n, Tally *tally, GError **error)
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
          return FALSE;
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
      return FALSE;
    }
  *tally = (Tally){ positive, negative, all_negative, sw, s1, s2, n_pos, n_neg };
  return TRUE;
}

/* The fitted calibration scored on the held-out samples: their mean log
 * loss, Brier score and log loss of the pairs of one person, and how many
 * of each kind there are. */
static void
score_held_out (const LkCalibrationSample *samples, gsize n, LkCalibrationFit *f)
{
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
}

/* The fit: the samples checked and tallied (tally_samples), Newton's
 * method on them, again at w_size = 0 when it wants w_size < 0, then the
 * held-out scores (score_held_out). */
LkCalibrationFit *
lk_calibrate_fit (const LkCalibrationSample *samples, gsize n, gboolean allow_size,
                  const LkCalibration *start, double min_probability, double median_crop,
                  GError **error)
{
  Tally t;
  if (!tally_samples (samples, n, &t, error))
    return NULL;
  double mean = t.s1 / t.sw, var = MAX (0, t.s2 / t.sw - mean * mean);
  /* Crops that vary by less than 5 % (sd of log2) leave w_size unidentifiable
   * next to b. */
  Problem p = { samples, n, allow_size && sqrt (var) > 0.07, mean, 1 / MAX (t.positive, 1), NULL };
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
  f->calibration.positive_pairs = (gint64) t.n_pos;
  f->calibration.negative_pairs = (gint64) t.n_neg;
  f->fitted_size = p.size || f->size_at_bound;
  f->negative_weight = t.all_negative;
  score_held_out (samples, n, f);
  f->min_probability = min_probability;
  f->median_crop = median_crop;
  f->cos_at_bar = lk_calibration_cos_at (&f->calibration, min_probability, median_crop);
  return g_steal_pointer (&f);
}

LkCalibrationFit *
lk_calibration_fit (const LkCalibrationSample *samples, gsize n, double min_probability,
                    double median_crop, GError **error)
{
  return lk_calibrate_fit (samples, n, TRUE, NULL, min_probability, median_crop, error);
}

void
lk_calibration_fit_free (LkCalibrationFit *f)
{
  g_free (f);
}
