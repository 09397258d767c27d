/* lk-calibrate-samples.c — the pairs a fit is made on: from labels, from decisions */
#include "config.h"

#include <math.h>

#include "lk-calibrate-private.h"
#include "lk-pin.h"
#include "scan/lk-scan.h"

/* Pairs per face the exact part of a sample aims at: enough that every
 * negative whose probability is not ≈ 0 is in it, few enough that its
 * memory (12 bytes a pair) stays small next to the library. */
#define EXACT_PAIRS_PER_FACE 20
/* Random pairs drawn to place a bar. */
#define BAR_SAMPLE           20000

/* --- pairs of a library ---------------------------------------------------------------------- */

gboolean
lk_calibrate_allowed (const LkLibrary *l, gsize i, gsize j)
{
  return i != j && l->photo[i] != l->photo[j] && (l->gallery[i] || l->gallery[j]);
}

double
lk_calibrate_cos_of (const Context *c, gsize i, gsize j)
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
double
lk_calibrate_count_allowed (const LkLibrary *l, const guint8 *mask)
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
gboolean
lk_calibrate_draw_pair (Context *c, gsize *i, gsize *j)
{
  const LkLibrary *l = c->library;
  for (int attempt = 0; attempt < 1000000; attempt++)
    {
      gsize x = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      gsize y = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      if (c->mask && (!c->mask[x] || !c->mask[y]))
        continue;
      if (!lk_calibrate_allowed (l, x, y))
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

void
lk_calibrate_add_sample (GArray *out, const Context *c, gsize i, gsize j, double cos, double y,
                         double weight)
{
  const LkLibrary *l = c->library;
  LkCalibrationSample s
      = { cos, MIN (l->crop_px[i], l->crop_px[j]), y, weight, held_out_of (c, i, j) };
  g_array_append_val (out, s);
}

int
lk_calibrate_compare_desc (gconstpointer x, gconstpointer y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? 1 : a > b ? -1 : 0;
}

/* Cosines of BAR_SAMPLE random allowed pairs (of two people, when
 * is_negative is given), highest first. */
GArray *
lk_calibrate_sample_cosines (Context *c, NegativeFunc is_negative, gpointer data, GError **error)
{
  g_autoptr (GArray) cosines = g_array_sized_new (FALSE, FALSE, sizeof (double), BAR_SAMPLE);
  for (guint tries = 0; cosines->len < BAR_SAMPLE; tries++)
    {
      gsize i, j;
      if (tries == 100 * BAR_SAMPLE || !lk_calibrate_draw_pair (c, &i, &j))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                       "the library has no pair of faces the scan could return (two faces of "
                       "different photos, at least one a gallery face)%s",
                       is_negative ? " of two people" : "");
          return NULL;
        }
      if (is_negative && !is_negative (data, i, j))
        continue;
      double cos = lk_calibrate_cos_of (c, i, j);
      g_array_append_val (cosines, cos);
    }
  g_array_sort (cosines, lk_calibrate_compare_desc);
  return g_steal_pointer (&cosines);
}

/* Every allowed pair with cosine >= bar, found by the scan, with its
 * cosine recomputed in double-rounded float (the scan keeps only the
 * probability). */
GArray *
lk_calibrate_pairs_above (Context *c, double bar, GCancellable *cancellable, GError **error)
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

double
lk_calibrate_median_crop (const LkLibrary *l)
{
  if (l->count == 0)
    return 1;
  g_autofree double *crops = g_new (double, l->count);
  for (gsize f = 0; f < l->count; f++)
    crops[f] = l->crop_px[f];
  qsort (crops, l->count, sizeof (double), lk_calibrate_compare_desc);
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
  g_autoptr (GArray) cosines = lk_calibrate_sample_cosines (c, is_negative, data, error);
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
        if (!lk_calibrate_allowed (c->library, i, j))
          continue;
        if (keep < 1 && g_rand_double (c->rand) >= keep)
          continue;
        lk_calibrate_add_sample (out, c, i, j, lk_calibrate_cos_of (c, i, j), 1, 1 / keep);
      }
}

static double
group_pairs (const Context *c, const guint32 *faces, gsize n)
{
  double count = 0;
  for (gsize x = 0; x < n; x++)
    for (gsize z = x + 1; z < n; z++)
      count += lk_calibrate_allowed (c->library, faces[x], faces[z]);
  return count;
}

/* The negatives below `bar`: `draws` uniform draws among the pairs for which
 * is_negative () holds, each kept when below the bar, weighted so the kept
 * ones stand for all negatives below it. */
gboolean
lk_calibrate_add_negatives_below (GArray *out, Context *c, double bar, double negatives,
                                  gsize draws, NegativeFunc is_negative, gpointer data,
                                  GError **error)
{
  double weight = negatives / (double) draws;
  /* A cap on the draws, for groups that leave (almost) no pair of two. */
  guint64 tries = 0, max_tries = 100 * (guint64) draws + 1000000;
  for (gsize k = 0; k < draws; tries++)
    {
      gsize i, j;
      if (tries == max_tries || !lk_calibrate_draw_pair (c, &i, &j))
        {
          g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                       "the library has no pair of two people to fit against");
          return FALSE;
        }
      if (!is_negative (data, i, j))
        continue;
      k++;
      double cos = lk_calibrate_cos_of (c, i, j);
      if (cos < bar)
        lk_calibrate_add_sample (out, c, i, j, cos, 0, weight);
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
GArray *
lk_calibrate_samples_from_groups (Context *c, const LkCalibrateOptions *o, guint32 *label_id,
                                  guint n_labels, guint32 *unsure, const guint32 *same,
                                  const guint8 *mask, const GArray *near, double near_bar,
                                  gsize max_near, GArray **near_out, double *bar_out,
                                  GCancellable *cancellable, GError **error)
{
  const LkLibrary *l = c->library;
  c->mask = mask;
  c->allowed = lk_calibrate_count_allowed (l, mask);

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
      near = scanned = lk_calibrate_pairs_above (c, bar, cancellable, error);
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
        lk_calibrate_add_sample (out, c, p->i, p->j, p->cos, 0, 1 / keep_near);
    }
  if (!lk_calibrate_add_negatives_below (out, c, bar, c->allowed - positives, o->negatives,
                                         labels_differ, &labels, error))
    return NULL;
  if (near_out)
    *near_out = scanned ? g_steal_pointer (&scanned) : NULL;
  if (bar_out)
    *bar_out = bar;
  return g_steal_pointer (&out);
}

GArray *
lk_calibrate_samples_from_labels (Context *c, const LkCalibrateOptions *o, GArray **near,
                                  double *bar, GCancellable *cancellable, GError **error)
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
  return lk_calibrate_samples_from_groups (c, o, label_id, n_labels, NULL, NULL, mask, NULL, 0,
                                           G_MAXSIZE, near, bar, cancellable, error);
}

/* --- from decisions -------------------------------------------------------------------------- */

/* Whether two pins hold a pair the scan could compare: the background of a
 * fit from decisions (below), two people the decisions keep apart. */
static gboolean
pins_apart (const LkLibrary *l, const GPtrArray *pins)
{
  for (guint k = 0; pins && k < pins->len; k++)
    for (guint m = k + 1; m < pins->len; m++)
      {
        const GArray *x = ((const LkPin *) g_ptr_array_index (pins, k))->faces;
        const GArray *z = ((const LkPin *) g_ptr_array_index (pins, m))->faces;
        for (guint i = 0; i < x->len; i++)
          for (guint j = 0; j < z->len; j++)
            {
              guint32 f = g_array_index (x, guint32, i), g = g_array_index (z, guint32, j);
              if (f < l->count && g < l->count && lk_calibrate_allowed (l, f, g))
                return TRUE;
            }
      }
  return FALSE;
}

gboolean
lk_calibration_decisions_suffice (const LkLibrary *library, const GPtrArray *pins,
                                  double *positive_pairs, gsize *taken_out)
{
  Context c = { .library = library };
  double positives = 0, negatives = 0;
  gsize exclusions = 0;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      positives += group_pairs (&c, (const guint32 *) pin->faces->data, pin->faces->len);
      exclusions += pin->excluded->len;
      for (guint x = 0; x < pin->excluded->len; x++)
        for (guint z = 0; z < pin->faces->len; z++)
          {
            guint32 i = g_array_index (pin->excluded, guint32, x);
            guint32 j = g_array_index (pin->faces, guint32, z);
            negatives += i < library->count && lk_calibrate_allowed (library, i, j);
          }
    }
  if (positive_pairs)
    *positive_pairs = positives;
  if (taken_out)
    *taken_out = exclusions;
  /* Two people kept apart are as good a "different" as a face taken out:
   * answers to "same or different person?" may all be "same" (the estimate
   * split people), and then no face is taken out of anyone. An answer
   * settles one pair, either way, so the pairs settled count both. */
  return positives >= LK_CALIBRATION_MIN_DECISION_POSITIVES
         && positives + negatives >= LK_CALIBRATION_MIN_DECISION_PAIRS
         && (exclusions > 0 || pins_apart (library, pins));
}

GArray *
lk_calibrate_samples_from_decisions (Context *c, const GPtrArray *pins, const LkCalibrateOptions *o,
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
                   "fitting from decisions needs at least %d pairs of faces they settle (kept "
                   "together, or one taken out of the other's person), %d of them kept "
                   "together (confirmed, merged or named people), and a face taken out of a "
                   "person or two people kept apart; the decisions hold %.0f pairs kept "
                   "together and %zu faces taken out",
                   LK_CALIBRATION_MIN_DECISION_PAIRS, LK_CALIBRATION_MIN_DECISION_POSITIVES,
                   positives, exclusions);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  c->allowed = lk_calibrate_count_allowed (l, NULL);
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
            if (i >= l->count || !lk_calibrate_allowed (l, i, j))
              continue;
            lk_calibrate_add_sample (out, c, MIN (i, j), MAX (i, j), lk_calibrate_cos_of (c, i, j),
                                     0, 1);
            taken_out++;
          }
    }
  /* The background: a pinned face and a random face of another pin, two
   * people the decisions keep apart. Random pairs of any two faces would not
   * do: most of a library's pairs of one person are between faces no
   * decision touched (with five people pinned in a 1,500-face sample, their
   * 9,000 pairs outweighed the pins' 5,000 and put the bar at cosine 0.998).
   * Nor would any face outside the pin: the person's faces not yet gathered
   * are there, at the cosines of one person, and counting them as two people
   * raised the bar until people split (eight people with every other face
   * pinned: p = 0.9 at cosine 0.95, against 0.37 with all their faces). A
   * face of no pin is unknown, so it is drawn and passed over; the faces of other pins stand
   * for every face outside the pin, in weight. */
  g_autoptr (GArray) pinned = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize f = 0; f < l->count; f++)
    if (pin_of[f] >= 0)
      {
        guint32 face = (guint32) f;
        g_array_append_val (pinned, face);
      }
  gsize tries = 0, outside = 0, kept = 0;
  g_autoptr (GArray) background = g_array_new (FALSE, FALSE, sizeof (Near));
  while (kept < o->negatives && tries < 50 * o->negatives)
    {
      tries++;
      gsize i
          = g_array_index (pinned, guint32, g_rand_int_range (c->rand, 0, (gint32) pinned->len));
      gsize j = (gsize) g_rand_int_range (c->rand, 0, (gint32) l->count);
      if (!lk_calibrate_allowed (l, i, j) || pin_of[i] == pin_of[j])
        continue;
      outside++;
      if (pin_of[j] < 0)
        continue;
      kept++;
      Near n = { (guint32) MIN (i, j), (guint32) MAX (i, j), lk_calibrate_cos_of (c, i, j) };
      g_array_append_val (background, n);
    }
  if (kept == 0 && taken_out == 0)
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW,
                   "fitting from decisions needs faces of two people kept apart (two people "
                   "confirmed, or a face taken out of a person that the scan could compare "
                   "with it); the decisions hold none");
      return NULL;
    }
  /* Pairs of a pinned face and a face outside its pin: the draws' share of
   * all (pinned, any) draws that qualified, each kept draw standing for as
   * many of them as there were qualified draws per kept one. */
  double weight = kept ? (double) pinned->len * (double) l->count
                             * ((double) outside / (double) tries) / (double) kept
                       : 0;
  for (guint k = 0; k < background->len; k++)
    {
      const Near *n = &g_array_index (background, Near, k);
      lk_calibrate_add_sample (out, c, n->i, n->j, n->cos, 0, weight);
    }
  return g_steal_pointer (&out);
}
