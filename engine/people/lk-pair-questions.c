/* lk-pair-questions.c — "Same or different person?": which pairs, and the decision an answer is
 *
 * Why it is shaped this way:
 *
 * - The pairs come from a few hundred anchor faces, each compared with every
 *   face: the scan finds pairs above the clustering's bar (p >= 0.9), and the
 *   pairs worth asking about are below it. Each anchor keeps its three
 *   nearest faces and its three pairs nearest p = 0.5, so every question is
 *   near a face or near the bar, never a random stranger the user would
 *   answer "different" without the model learning.
 * - Without a calibration the unsure range is unknown; the nearest
 *   neighbours' cosines span it (one person above, the strangers' tail
 *   below), so the questions are spread over their quantiles.
 * - At most two questions per person and one per pair of people: twenty
 *   answers about one wrong merge would teach the fit one pair of people.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "lk-pair-questions.h"
#include "scan/lk-scan.h"

/* Partners each anchor offers: enough that the greedy choice below has
 * another one when a person or face is used up. */
#define PARTNERS   3
/* Questions one person may be in. */
#define PER_PERSON 2

typedef struct
{
  guint32 a, b;
  double cos;
  double p;
  double score; /* lower is asked first */
} Candidate;

static int
compare_score (gconstpointer x, gconstpointer y)
{
  const Candidate *p = x, *q = y;
  if (p->score != q->score)
    return p->score < q->score ? -1 : 1;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : (p->b > q->b);
}

static int
compare_cos (gconstpointer x, gconstpointer y)
{
  const Candidate *p = x, *q = y;
  if (p->cos != q->cos)
    return p->cos < q->cos ? -1 : 1;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : (p->b > q->b);
}

static int
compare_face (const void *x, const void *y)
{
  guint32 p = *(const guint32 *) x, q = *(const guint32 *) y;
  return p < q ? -1 : (p > q);
}

static gboolean
holds (const GArray *faces, guint32 f)
{
  /* An empty GArray's data may be NULL, which bsearch must never be given. */
  return faces != NULL && faces->len > 0
         && bsearch (&f, faces->data, faces->len, sizeof (guint32), compare_face) != NULL;
}

/* The pins already say whether a and b are one person. */
static gboolean
decided (const GPtrArray *pins, const gint32 *pin_of, guint32 a, guint32 b)
{
  if (pin_of[a] >= 0 && pin_of[a] == pin_of[b])
    return TRUE;
  if (pin_of[a] >= 0 && holds (((const LkPin *) g_ptr_array_index (pins, pin_of[a]))->excluded, b))
    return TRUE;
  return pin_of[b] >= 0
         && holds (((const LkPin *) g_ptr_array_index (pins, pin_of[b]))->excluded, a);
}

static double
cosine (const LkLibrary *l, guint32 i, guint32 j)
{
  const float *x = l->embeddings + (gsize) i * l->dim, *y = l->embeddings + (gsize) j * l->dim;
  double s = 0;
  for (guint d = 0; d < l->dim; d++)
    s += (double) x[d] * (double) y[d];
  return s;
}

/* Each anchor's PARTNERS nearest faces it may be asked about with. */
static GArray *
candidates (const LkLibrary *l, const LkPeople *people, const GPtrArray *pins, const gint32 *pin_of,
            const guint8 *dismissed, const LkCalibration *calibration, guint64 seed)
{
  g_autoptr (GArray) in_people = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize f = 0; f < people->n_faces; f++)
    if (people->person_of[f] >= 0)
      {
        guint32 face = (guint32) f;
        g_array_append_val (in_people, face);
      }
  /* Every face alone (a calibration that pairs nobody, or an estimate that
   * refused and left the format's default in force): the anchors are any
   * faces, and their nearest neighbours are where the answers teach most. */
  gboolean alone = in_people->len == 0;
  for (gsize f = 0; alone && f < people->n_faces; f++)
    if (!dismissed[f])
      {
        guint32 face = (guint32) f;
        g_array_append_val (in_people, face);
      }
  g_autoptr (GRand) rand = g_rand_new_with_seed_array ((const guint32 *) &seed, 2);
  for (guint k = in_people->len; k > 1; k--)
    {
      guint m = (guint) g_rand_int_range (rand, 0, (gint32) k);
      guint32 t = g_array_index (in_people, guint32, k - 1);
      g_array_index (in_people, guint32, k - 1) = g_array_index (in_people, guint32, m);
      g_array_index (in_people, guint32, m) = t;
    }
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Candidate));
  guint n_anchors = MIN (in_people->len, LK_PAIR_QUESTION_ANCHORS);
  for (guint k = 0; k < n_anchors; k++)
    {
      guint32 a = g_array_index (in_people, guint32, k);
      /* Two lists per anchor: its nearest faces (where one person ends),
       * and with a calibration those nearest p = 0.5 (where the model is
       * unsure, far below the nearest faces when it merges strangers). */
      Candidate best[2][PARTNERS];
      guint n_best[2] = { 0, 0 };
      for (gsize f = 0; f < l->count; f++)
        {
          guint32 b = (guint32) f;
          if (b == a || dismissed[b] || l->photo[a] == l->photo[b] || decided (pins, pin_of, a, b))
            continue;
          Candidate c = { a, b, cosine (l, a, b), NAN, 0 };
          if (calibration)
            c.p = lk_scan_probability (calibration, c.cos, MIN (l->crop_px[a], l->crop_px[b]));
          for (guint list = 0; list < (calibration ? 2u : 1u); list++)
            {
              c.score = list == 0 ? -c.cos : fabs (c.p - 0.5);
              guint at = n_best[list];
              while (at > 0 && best[list][at - 1].score > c.score)
                at--;
              if (at >= PARTNERS)
                continue;
              for (guint m = MIN (n_best[list], PARTNERS - 1); m > at; m--)
                best[list][m] = best[list][m - 1];
              best[list][at] = c;
              n_best[list] = MIN (n_best[list] + 1, PARTNERS);
            }
        }
      g_array_append_vals (out, best[0], n_best[0]);
      g_array_append_vals (out, best[1], n_best[1]);
    }
  return out;
}

typedef struct
{
  const LkPeople *people;
  guint8 *face_used;
  guint8 *person_uses;
  GHashTable *people_pairs; /* (person a, person b) asked about */
} Taken;

static gboolean
take (Taken *t, const Candidate *c, GArray *out)
{
  gint32 pa = t->people->person_of[c->a], pb = t->people->person_of[c->b];
  guint64 key = ((guint64) (guint32) MIN (pa, pb) << 32) | (guint32) MAX (pa, pb);
  if (t->face_used[c->a] || t->face_used[c->b] || (pa >= 0 && t->person_uses[pa] >= PER_PERSON)
      || (pb >= 0 && pb != pa && t->person_uses[pb] >= PER_PERSON)
      || (pa >= 0 && pb >= 0 && g_hash_table_contains (t->people_pairs, &key)))
    return FALSE;
  t->face_used[c->a] = t->face_used[c->b] = 1;
  if (pa >= 0)
    t->person_uses[pa]++;
  if (pb >= 0 && pb != pa)
    t->person_uses[pb]++;
  if (pa >= 0 && pb >= 0)
    g_hash_table_add (t->people_pairs, g_memdup2 (&key, sizeof key));
  LkPairQuestion q = { c->a, c->b, c->cos, c->p };
  g_array_append_val (out, q);
  return TRUE;
}

/* Question k aims at log-odds LADDER[k mod 9]: the first at p = 0.5, the
 * next on either side of it. Only p = 0.5 taught the fit nothing on the real
 * faceres-deep library: its unsure pairs were all one person (the estimate
 * split), so no answer said "different"; a ladder gives the fit both answers
 * and a slope. */
static void
choose_on_ladder (Taken *t, GArray *all, gsize limit, GArray *out)
{
  static const double LADDER[] = { 0, -1, 1, -2, 2, -3, 3, -4.5, 4.5 };
  for (gsize k = 0; k < limit && out->len < limit; k++)
    {
      double aim = LADDER[k % G_N_ELEMENTS (LADDER)];
      for (guint m = 0; m < all->len; m++)
        {
          Candidate *c = &g_array_index (all, Candidate, m);
          double p = CLAMP (c->p, 1e-12, 1 - 1e-12);
          c->score = fabs (log (p / (1 - p)) - aim);
        }
      g_array_sort (all, compare_score);
      for (guint m = 0; m < all->len; m++)
        if (take (t, &g_array_index (all, Candidate, m), out))
          break;
    }
}

/* Question k aims at quantile (k + ½) / limit of the candidates' cosines and
 * takes the nearest candidate still free. */
static void
choose_spread (Taken *t, GArray *all, gsize limit, GArray *out)
{
  if (all->len == 0)
    return;
  g_array_sort (all, compare_cos);
  g_autofree guint8 *tried = g_new0 (guint8, all->len);
  for (gsize k = 0; k < limit && out->len < limit; k++)
    {
      gssize aim = (gssize) (((double) k + 0.5) / (double) limit * (double) all->len);
      for (gssize d = 0; d < (gssize) all->len; d++)
        {
          gssize lo = aim - d, hi = aim + d;
          if (lo >= 0 && lo < (gssize) all->len && !tried[lo]
              && (tried[lo] = 1, take (t, &g_array_index (all, Candidate, lo), out)))
            break;
          if (d > 0 && hi < (gssize) all->len && !tried[hi]
              && (tried[hi] = 1, take (t, &g_array_index (all, Candidate, hi), out)))
            break;
        }
    }
}

GArray *
lk_pair_questions (const LkLibrary *library, const LkPeople *people, const GPtrArray *pins,
                   const LkCalibration *calibration, gsize limit, guint64 seed)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPairQuestion));
  gsize n = MIN (library->count, people->n_faces);
  if (n < 2 || limit == 0)
    return out;
  g_autofree gint32 *pin_of = g_new (gint32, n);
  for (gsize f = 0; f < n; f++)
    pin_of[f] = -1;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; pin && m < pin->faces->len; m++)
        if (g_array_index (pin->faces, guint32, m) < n)
          pin_of[g_array_index (pin->faces, guint32, m)] = (gint32) k;
    }
  g_autofree guint8 *dismissed = g_new0 (guint8, library->count);
  for (gsize k = 0; k < people->n_dismissed; k++)
    dismissed[people->dismissed[k]] = 1;
  g_autoptr (GArray) all = candidates (library, people, pins, pin_of, dismissed, calibration, seed);
  Taken t = { people, g_new0 (guint8, n), g_new0 (guint8, MAX (people->n_people, 1)),
              g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL) };
  /* With a calibration, every other question is on its ladder and the rest
   * spread over the cosines: the calibration in force may be the one that
   * is wrong (the estimate on the real faceres-deep library put p = 0.01 at
   * cosine 0.83, above most of one person's pairs, so even the ladder's
   * lowest rung asked only about one person, and the fit needs a
   * "different"). */
  gsize n_ladder = calibration ? (limit + 1) / 2 : 0;
  g_autoptr (GArray) ladder = g_array_new (FALSE, FALSE, sizeof (LkPairQuestion));
  g_autoptr (GArray) spread = g_array_new (FALSE, FALSE, sizeof (LkPairQuestion));
  choose_on_ladder (&t, all, n_ladder, ladder);
  choose_spread (&t, all, limit - ladder->len, spread);
  for (guint k = 0; k < MAX (ladder->len, spread->len); k++)
    {
      if (k < ladder->len)
        g_array_append_val (out, g_array_index (ladder, LkPairQuestion, k));
      if (k < spread->len)
        g_array_append_val (out, g_array_index (spread, LkPairQuestion, k));
    }
  g_free (t.face_used);
  g_free (t.person_uses);
  g_hash_table_unref (t.people_pairs);
  return out;
}

LkReviewRequest *
lk_pair_answer_request (const LkPeople *people, guint32 a, guint32 b, gboolean same, GError **error)
{
  if (a >= people->n_faces || b >= people->n_faces || a == b)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                   "faces %u and %u are not two faces of the %zu", a, b, people->n_faces);
      return NULL;
    }
  if (people->person_of[a] < 0 && people->person_of[b] >= 0)
    {
      guint32 t = a;
      a = b;
      b = t;
    }
  gint32 pa = people->person_of[a], pb = people->person_of[b];
  if (pa < 0)
    {
      /* Both alone: a new person of the two, or a new person of a that b
       * never joins (lk_review_apart). */
      LkReviewRequest *r = lk_review_request_new (same ? LK_REVIEW_MOVE : LK_REVIEW_REJECT, NULL);
      g_array_append_val (r->faces, a);
      g_array_append_val (r->faces, b);
      return r;
    }
  const char *person = people->people[pa].id;
  LkReviewRequest *r;
  if (same && pb < 0)
    {
      r = lk_review_request_new (LK_REVIEW_MOVE, NULL);
      r->other = g_strdup (person);
    }
  else if (same && pb != pa)
    {
      r = lk_review_request_new (LK_REVIEW_MERGE, person);
      r->other = g_strdup (people->people[pb].id);
      return r;
    }
  else if (same)
    r = lk_review_request_new (LK_REVIEW_CONFIRM, person);
  else
    r = lk_review_request_new (pb == pa ? LK_REVIEW_REMOVE : LK_REVIEW_REJECT, person);
  g_array_append_val (r->faces, b);
  return r;
}
