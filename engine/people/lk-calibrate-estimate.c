/* lk-calibrate-estimate.c — the estimate, and the bar labels choose (why: lk-calibrate.c) */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-calibrate-private.h"
#include "lk-cluster.h"
#include "lk-evaluate.h"
#include "scan/lk-scan.h"

/* The estimate's bar: impostors per face predicted above it. */
#define ESTIMATE_IMPOSTORS_PER_FACE 5
/* The estimate's refits on its own people, at most, and the pairs of each
 * kind (one person; two people above the bar; below it) each refit samples. */
#define ESTIMATE_STEPS              6
#define REFIT_SAMPLE                100000
/* The pairs above the estimate's bar its first fit samples, at most. */
#define ESTIMATE_NEAR_SAMPLE        200000
/* The average linkage at which the estimate takes two faces as surely one
 * person (the clustering's own bar is LK_CLUSTER_DEFAULT_THRESHOLD, 0.1). */
#define ESTIMATE_SURE               0.3
/* The estimate's reading of the cosines' shape (samples_estimated): rounds,
 * and the largest share of pairs of one person it may find. */
#define SHAPE_ROUNDS                5
#define SHAPE_MAX_SHOULDER          0.25
/* The least BCubed precision the estimate's own pair model may expect of the
 * people it makes (estimate_unsure). Chosen on make-family's seeds 1-40 at
 * 800 faces: below 0.89 were two of its seven merges (precision < 0.95) and
 * five of its splits, and none it got right; make-sample's bridges (2,000
 * faces, seed 3), which it gets right, expect 0.894 (blurred faces' pairs
 * have low p), so 0.91, which caught two more merges, refused them. */
#define ESTIMATE_MIN_PRECISION      0.89
/* A person the estimate makes whose gallery faces fall into two halves (each
 * of SPLIT_MIN_FACES or more) whose cross pairs come down less than this
 * share of the way from the halves' own cosines to random faces' is taken as
 * two look-alikes joined: their cross pairs sit near their centres'
 * closeness, one person's halves near its own cosines. */
#define SPLIT_MIN_FACES             3
#define SPLIT_RATIO                 0.75
/* The most BCubed precision such people may cost before the estimate
 * refuses. Chosen on make-family's seeds 1-40 at 800 faces: its draws that
 * merged lost 3.7-6 % to them, those it got right 1.5 % at most. */
#define SPLIT_MAX_LOSS              0.025

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
 * first: a big peak of strangers' pairs, its centre *mu and
 * spread *sigma, and above it a shoulder of pairs of one person holding a
 * share *shoulder of them. The peak's tail is a Gaussian through ITS 75th
 * and 95th percentiles (*q75, *q95), which are the sample's at
 * 0.75 (1 − shoulder) and 0.95 (1 − shoulder) when the shoulder lies above
 * them; the shoulder is what the sample holds above 3 σ beyond what that
 * Gaussian predicts there; a few rounds settle both. Taking the sample's own
 * 75th and 95th (shoulder 0) widens the strangers' peak by half on a real
 * dlib library with a few percent of pairs of one person, so the tail
 * claims those pairs and the bar lands above them. */
void
lk_calibrate_read_shape (const double *cosines, gsize m, double *mu_out, double *sigma_out,
                         double *shoulder_out, double *q75_out, double *q95_out)
{
  double q75 = 0, q95 = 0;
  /* The first guess from the peak's lower half, which holds no pair of one
   * person: median and 25th percentile. Starting from the sample's own 75th
   * and 95th instead, a shoulder of more than 5 % of pairs (real dlib
   * photos hold such) puts the 95th inside it, reads σ three times too
   * wide, finds no shoulder above 3 σ and stays there: the fit then puts
   * p = 0.9 above cosine 1, a bar no pair can reach. */
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

/* The strangers' tail, read from the shape of a random sample of cosines:
 * its centre *mu and spread *sigma, and the bar above which it predicts
 * ESTIMATE_IMPOSTORS_PER_FACE impostors per face. Sets c->allowed,
 * c->level (the sample's median) and *sample_max (its highest). */
static gboolean
tail_bar (Context *c, double *mu_out, double *sigma_out, double *bar_out, double *sample_max,
          GError **error)
{
  const LkLibrary *l = c->library;
  c->allowed = lk_calibrate_count_allowed (l, NULL);
  g_autoptr (GArray) cosines = lk_calibrate_sample_cosines (c, NULL, NULL, error);
  if (cosines == NULL)
    return FALSE;
  gsize m = cosines->len;
  c->level = g_array_index (cosines, double, m / 2);
  *sample_max = g_array_index (cosines, double, 0);
  double mu, sigma, shoulder, q75, q95;
  lk_calibrate_read_shape ((const double *) cosines->data, m, &mu, &sigma, &shoulder, &q75, &q95);
  g_debug ("%s: the strangers' peak at %.4f, sigma %.4f; a shoulder of %.2f %% of pairs above it",
           l->folder, mu, sigma, 100 * shoulder);
  if (!(sigma > 1e-6))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT,
                   "the library's cosines do not vary (75th and 95th percentiles %.4f, %.4f): "
                   "nothing to tell people apart by",
                   q75, q95);
      return FALSE;
    }
  double expected = (double) ESTIMATE_IMPOSTORS_PER_FACE * (double) l->count;
  *bar_out
      = expected >= c->allowed / 2 ? mu : mu + sigma * upper_tail_inverse (expected / c->allowed);
  *mu_out = mu;
  *sigma_out = sigma;
  return TRUE;
}

/* Each bin's chance that a pair in it is one person (n_bins bins of width
 * from the bar up, over the pairs near above it): the share of its pairs
 * the tail of centre mu and spread sigma cannot explain, capped below the
 * genuine mode, made non-decreasing in the cosine. */
static double *
genuine_shares (const Context *c, const GArray *near, double bar, double mu, double sigma,
                double width, gsize n_bins)
{
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
  return g_steal_pointer (&genuine);
}

/* The pairs above the bar, each labelled with its bin's share genuine[]. */
static void
add_near_samples (GArray *out, Context *c, const GArray *near, double bar, double width,
                  const double *genuine, gsize n_bins)
{
  /* Beyond ESTIMATE_NEAR_SAMPLE pairs, a uniform sample of them, weighted:
   * the fit then costs what a refit does (at 20,000 look-alike faces the
   * scan returns 1.4 million pairs, and fitting them all was a fifth of the
   * estimate's time). */
  double keep = near->len > ESTIMATE_NEAR_SAMPLE ? (double) ESTIMATE_NEAR_SAMPLE / near->len : 1;
  for (guint k = 0; k < near->len; k++)
    {
      const Near *p = &g_array_index (near, Near, k);
      if (keep < 1 && g_rand_double (c->rand) >= keep)
        continue;
      gsize b = (gsize) MAX (0, floor ((p->cos - bar) / width));
      lk_calibrate_add_sample (out, c, p->i, p->j, p->cos, genuine[MIN (b, n_bins - 1)], 1 / keep);
    }
}

/* The estimate's soft labels: the strangers' tail and its bar (tail_bar),
 * every pair above the bar from the scan, each bin's share of pairs of one
 * person (genuine_shares), then those pairs labelled with it and a sample
 * of the pairs below the bar as two people. */
static GArray *
samples_estimated (Context *c, const LkCalibrateOptions *o, GArray **near_out, double *bar_out,
                   double *sample_max, GCancellable *cancellable, GError **error)
{
  double mu, sigma, bar;
  if (!tail_bar (c, &mu, &sigma, &bar, sample_max, error))
    return NULL;
  g_autoptr (GArray) near = lk_calibrate_pairs_above (c, bar, cancellable, error);
  if (near == NULL)
    return NULL;

  /* Bins of sigma / 8 from the bar up. */
  double width = sigma / 8;
  gsize n_bins = (gsize) ceil ((1.0 + 1e-9 - bar) / width) + 1;
  g_autofree double *genuine = genuine_shares (c, near, bar, mu, sigma, width, n_bins);

  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  add_near_samples (out, c, near, bar, width, genuine, n_bins);
  if (!lk_calibrate_add_negatives_below (out, c, bar, c->allowed, o->negatives, always, NULL,
                                         error))
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

/* The faces of people of two faces or more (mask[]), with their person
 * (unsure[]); every face's sure person (label_id[]), *n_groups of them;
 * same[] reset to none. */
static void
label_faces (const LkLibrary *l, const LkPeople *people, const LkPeople *sure, guint32 *label_id,
             guint32 *unsure, guint32 *same, guint8 *mask, guint *n_groups)
{
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
}

/* Within each person, its sure people of two faces or more: which are one
 * person (closer to each other than halfway down to random faces), joined
 * in the union-find parent[] (one element per sure person). */
static void
join_sure_people (const Context *c, const LkPeople *people, const LkPeople *sure,
                  const guint32 *label_id, guint32 *parent)
{
  const LkLibrary *l = c->library;
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
  label_faces (l, people, sure, label_id, unsure, same, mask, n_groups);

  g_autofree guint32 *parent = g_new (guint32, MAX (*n_groups, 1));
  for (guint g = 0; g < *n_groups; g++)
    parent[g] = g;
  join_sure_people (c, people, sure, label_id, parent);
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
gboolean
lk_calibrate_choose_bar (const LkLibrary *l, const GArray *near, double near_bar,
                         LkCalibrationFit *f, GError **error)
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

/* Why an estimate cannot be used, or NULL. An estimate can put p = 0.9
 * above cosine 1 after a stopped fit and, saved unchecked, show a library
 * with 0 people and no warning; these are the ways an estimate can be that
 * wrong, each checked on the library itself. */
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

/* Then the people that calibration makes are taken as labels, refitted,
 * and again, until the bar settles (it moved by under 0.002 in 3–5 steps
 * on the families of lk-sample.h; bridges swing by ±0.01, hence the cap).
 * Each refit is added to fits and its Newton steps to *steps; FALSE only
 * on an error (cancelled, or a clustering failed): a refit that finds
 * nothing to fit ends them. */
static gboolean
refit_on_people (Context *c, const LkCalibrateOptions *o, const GArray *near, double bar,
                 double crop, const LkCalibrationFit *first, GPtrArray *fits, guint *steps,
                 GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  LkCalibration cal = first->calibration;
  double cos_at_bar = first->cos_at_bar;
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
        return FALSE;
      if (n_groups < 2)
        break;
      g_autoptr (GError) local = NULL;
      g_autoptr (GArray) samples = lk_calibrate_samples_from_groups (
          c, &refit, label_id, n_groups, unsure, same, mask, near, bar, REFIT_SAMPLE, NULL, NULL,
          cancellable, &local);
      c->mask = NULL;
      if (samples == NULL && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      if (samples == NULL)
        break; /* the people left nothing to fit: the last calibration stands */
      g_autoptr (LkCalibrationFit) next
          = lk_calibrate_fit ((const LkCalibrationSample *) samples->data, samples->len, TRUE, &cal,
                              o->min_probability, crop, &local);
      if (next == NULL)
        break; /* the people gave nothing to fit: the last calibration stands */
      *steps += next->iterations;
      double moved = fabs (next->cos_at_bar - cos_at_bar);
      cal = next->calibration;
      cos_at_bar = next->cos_at_bar;
      g_ptr_array_add (fits, g_memdup2 (next, sizeof *next));
      if (moved < 0.002)
        break;
    }
  return TRUE;
}

/* The estimate's answer: the last of its fits that estimate_fails does
 * not refuse (highest: the library's highest cosine), with steps, the
 * Newton steps of them all; else the error that says why the last was
 * refused. */
static LkCalibrationFit *
last_usable_fit (const Context *c, const GPtrArray *fits, double highest, guint steps,
                 GError **error)
{
  const LkLibrary *l = c->library;
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

/* The BCubed precision the calibration cal itself expects of the people it
 * makes: each face's share of its person that the pair model calls one
 * person with it (its own face counted sure). */
static double
expected_precision (const LkLibrary *l, const LkPeople *people, const LkCalibration *cal)
{
  double sum = 0;
  gsize faces = 0;
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *person = &people->people[k];
      gsize n = person->n_faces;
      for (gsize x = 0; x < n; x++)
        {
          const float *rx = lk_library_row (l, person->faces[x]);
          double same = 1;
          for (gsize y = 0; y < n; y++)
            {
              if (y == x)
                continue;
              const float *ry = lk_library_row (l, person->faces[y]);
              double dot = 0;
              for (guint d = 0; d < l->dim; d++)
                dot += (double) rx[d] * ry[d];
              same += lk_scan_probability (
                  cal, dot, MIN (l->crop_px[person->faces[x]], l->crop_px[person->faces[y]]));
            }
          sum += same / (double) n;
          faces++;
        }
    }
  return faces ? sum / (double) faces : 1;
}

/* The sum of the rows of faces[0 .. n) whose side[] is `which` (all when
 * side is NULL) into sum[], and how many. */
static double
sum_rows (const LkLibrary *l, const guint32 *faces, gsize n, const guint8 *side, guint8 which,
          double *sum)
{
  double count = 0;
  memset (sum, 0, sizeof (double) * l->dim);
  for (gsize x = 0; x < n; x++)
    {
      if (side != NULL && side[x] != which)
        continue;
      const float *row = lk_library_row (l, faces[x]);
      for (guint d = 0; d < l->dim; d++)
        sum[d] += row[d];
      count++;
    }
  return count;
}

/* Two halves of a person's faces (side[]): the sign of each face along its
 * faces' first principal direction (power iteration from one face), then a
 * few rounds of two-means on the cosine to each half's mean. */
static void
split_in_two (const LkLibrary *l, const LkPerson *person, guint8 *side)
{
  gsize n = person->n_faces;
  guint dim = l->dim;
  g_autofree double *mean = g_new (double, dim), *dir = g_new (double, dim),
                    *next = g_new (double, dim), *sa = g_new (double, dim),
                    *sb = g_new (double, dim);
  sum_rows (l, person->faces, n, NULL, 0, mean);
  for (guint d = 0; d < dim; d++)
    mean[d] /= (double) n;
  const float *first = lk_library_row (l, person->faces[0]);
  for (guint d = 0; d < dim; d++)
    dir[d] = first[d] - mean[d];
  for (int round = 0; round < 30; round++)
    {
      memset (next, 0, sizeof (double) * dim);
      for (gsize x = 0; x < n; x++)
        {
          const float *row = lk_library_row (l, person->faces[x]);
          double t = 0;
          for (guint d = 0; d < dim; d++)
            t += (row[d] - mean[d]) * dir[d];
          for (guint d = 0; d < dim; d++)
            next[d] += t * (row[d] - mean[d]);
        }
      double norm = 0;
      for (guint d = 0; d < dim; d++)
        norm += next[d] * next[d];
      if (!(norm > 1e-24))
        break;
      for (guint d = 0; d < dim; d++)
        dir[d] = next[d] / sqrt (norm);
    }
  for (gsize x = 0; x < n; x++)
    {
      const float *row = lk_library_row (l, person->faces[x]);
      double t = 0;
      for (guint d = 0; d < dim; d++)
        t += (row[d] - mean[d]) * dir[d];
      side[x] = t > 0;
    }
  for (int round = 0; round < 10; round++)
    {
      sum_rows (l, person->faces, n, side, 0, sa);
      sum_rows (l, person->faces, n, side, 1, sb);
      double na = 0, nb = 0;
      for (guint d = 0; d < dim; d++)
        na += sa[d] * sa[d], nb += sb[d] * sb[d];
      na = sqrt (MAX (na, 1e-24)), nb = sqrt (MAX (nb, 1e-24));
      for (gsize x = 0; x < n; x++)
        {
          const float *row = lk_library_row (l, person->faces[x]);
          double ta = 0, tb = 0;
          for (guint d = 0; d < dim; d++)
            ta += sa[d] * row[d], tb += sb[d] * row[d];
          side[x] = tb / nb > ta / na;
        }
    }
}

/* The BCubed precision the people lose if every person that splits into two
 * look-alikes (SPLIT_RATIO) is two people: a person of a + b faces so split
 * costs 2ab / (a + b) faces' worth. The pair model cannot see this: it
 * calls the look-alikes' pairs one person's, which is why it joined them. */
static double
lookalike_loss (const Context *c, const LkPeople *people)
{
  const LkLibrary *l = c->library;
  g_autofree double *sa = g_new (double, l->dim), *sb = g_new (double, l->dim);
  double lost = 0;
  for (gsize k = 0; k < people->n_people; k++)
    {
      /* Its gallery faces only: blur looks alike whoever it blurs, so one
       * person's blurred faces make a half of their own. */
      const LkPerson *whole = &people->people[k];
      g_autofree guint32 *sharp = g_new (guint32, MAX (whole->n_faces, 1));
      LkPerson person = { .faces = sharp, .n_faces = 0 };
      for (gsize x = 0; x < whole->n_faces; x++)
        if (l->gallery[whole->faces[x]])
          sharp[person.n_faces++] = whole->faces[x];
      if (person.n_faces < 2 * SPLIT_MIN_FACES)
        continue;
      g_autofree guint8 *side = g_new (guint8, person.n_faces);
      split_in_two (l, &person, side);
      double na = sum_rows (l, person.faces, person.n_faces, side, 0, sa);
      double nb = sum_rows (l, person.faces, person.n_faces, side, 1, sb);
      if (na < SPLIT_MIN_FACES || nb < SPLIT_MIN_FACES)
        continue;
      double within = MIN (group_mean (sa, (gsize) na, sa, (gsize) na, l->dim, TRUE),
                           group_mean (sb, (gsize) nb, sb, (gsize) nb, l->dim, TRUE));
      double across = group_mean (sa, (gsize) na, sb, (gsize) nb, l->dim, FALSE);
      if (within > c->level && across - c->level < SPLIT_RATIO * (within - c->level))
        lost += 2 * na * nb / (na + nb);
    }
  return l->count ? lost / (double) l->count : 0;
}

/* Why the estimate's answer f cannot be trusted, or NULL: the people it
 * makes of the pairs in near, judged by its own pair model. Where the
 * strangers' tail runs into one person's pairs (no gap between them, a hump
 * of look-alikes read as one person, a spread the tail's Gaussian does not
 * follow), its people hold pairs it itself calls unlikely; where it can
 * place the bar, they hold few. Look-alikes above the bar it calls likely
 * pairs, so their people are judged apart (lookalike_loss). */
static char *
estimate_unsure (const Context *c, const GArray *near, const LkCalibrationFit *f, GError **error)
{
  const LkLibrary *l = c->library;
  g_autoptr (GArray) pairs = candidates (l, near, &f->calibration, f->min_probability);
  LkClusterInput input;
  lk_cluster_input_init (&input, l, pairs);
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, error);
  if (people == NULL)
    return NULL;
  double expected = expected_precision (l, people, &f->calibration);
  g_debug ("%s: the estimate's people, by its own pair model: precision %.4f", l->folder, expected);
  if (expected < ESTIMATE_MIN_PRECISION)
    return g_strdup_printf (
        "the strangers' cosines run into one person's with no gap the bar could sit in; at p = "
        "%g (cosine %.4f) the people it makes are, by its own pair model, only %.0f %% one "
        "person (BCubed precision; %.0f %% is the least it trusts), so where it put the bar is a "
        "guess that may merge strangers or split people",
        f->min_probability, f->cos_at_bar, 100 * expected, 100 * ESTIMATE_MIN_PRECISION);
  double lost = lookalike_loss (c, people);
  g_debug ("%s: the estimate's people that split into two look-alikes cost precision %.4f",
           l->folder, lost);
  if (lost >= SPLIT_MAX_LOSS)
    return g_strdup_printf (
        "some of the people it makes look like two people who look alike taken as one, their "
        "faces falling into two groups each much closer to itself than to the other (%.1f %% of "
        "the faces' BCubed precision rests on them; %.1f %% is the most it accepts), and at p = "
        "%g (cosine %.4f) the bar cannot tell such look-alikes apart",
        100 * lost, 100 * SPLIT_MAX_LOSS, f->min_probability, f->cos_at_bar);
  return NULL;
}

/* The estimate: a first fit on the tail's soft labels (samples_estimated),
 * refits on the people it makes (refit_on_people), and the last of those
 * fits that can be used (last_usable_fit). */
LkCalibrationFit *
lk_calibrate_estimate (Context *c, const LkCalibrateOptions *o, GCancellable *cancellable,
                       GError **error)
{
  const LkLibrary *l = c->library;
  g_autoptr (GArray) near = NULL;
  double bar = 0, sample_max = -1;
  g_autoptr (GArray) soft = samples_estimated (c, o, &near, &bar, &sample_max, cancellable, error);
  if (soft == NULL)
    return NULL;
  double crop = lk_calibrate_median_crop (l);
  g_autoptr (GError) first = NULL;
  g_autoptr (LkCalibrationFit) f
      = lk_calibrate_fit ((const LkCalibrationSample *) soft->data, soft->len, FALSE, NULL,
                          o->min_probability, crop, &first);
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
  if (!refit_on_people (c, o, near, bar, crop, f, fits, &steps, cancellable, error))
    return NULL;
  g_autoptr (LkCalibrationFit) answer
      = last_usable_fit (c, fits, highest_cosine (near, sample_max), steps, error);
  if (answer == NULL)
    return NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *why = estimate_unsure (c, near, answer, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (why != NULL)
    {
      g_autofree char *counts
          = g_strdup_printf ("%u Newton steps, %u refits", steps, answer->refits);
      return fail_estimate (why, counts, error);
    }
  return g_steal_pointer (&answer);
}
