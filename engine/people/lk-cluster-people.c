/* lk-cluster-people.c — people compared: similar people, centroids, ranking, suggestions */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-cluster.h"

static int
compare_similar (gconstpointer x, gconstpointer y)
{
  const LkSimilarPerson *a = x, *b = y;
  if (a->mean != b->mean)
    return a->mean > b->mean ? -1 : 1;
  if (a->max != b->max)
    return a->max > b->max ? -1 : 1;
  return a->person < b->person ? -1 : a->person > b->person;
}

GArray *
lk_people_similar (const LkPeople *people, const LkClusterInput *input, gsize person, gsize limit)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkSimilarPerson));
  g_return_val_if_fail (person < people->n_people, out);
  g_autofree LkSimilarPerson *acc = g_new0 (LkSimilarPerson, MAX (people->n_people, 1));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      gint32 a = people->person_of[input->pairs[k].i], b = people->person_of[input->pairs[k].j];
      if (a == b || a < 0 || b < 0 || ((gsize) a != person && (gsize) b != person))
        continue;
      LkSimilarPerson *s = &acc[(gsize) a == person ? b : a];
      s->mean += input->pairs[k].probability;
      s->max = MAX (s->max, input->pairs[k].probability);
      s->pairs++;
    }
  for (gsize q = 0; q < people->n_people; q++)
    if (acc[q].pairs > 0)
      {
        acc[q].person = (guint32) q;
        acc[q].mean /= (double) people->people[person].n_faces * people->people[q].n_faces;
        g_array_append_val (out, acc[q]);
      }
  g_array_sort (out, compare_similar);
  if (limit > 0 && out->len > limit)
    g_array_set_size (out, (guint) limit);
  return out;
}

void
lk_faces_centroid (const float *embeddings, guint dim, gsize n_faces, const guint32 *faces, gsize n,
                   float *out)
{
  memset (out, 0, sizeof (float) * dim);
  for (gsize f = 0; f < n; f++)
    {
      if (faces[f] >= n_faces)
        continue;
      const float *row = embeddings + (gsize) faces[f] * dim;
      for (guint d = 0; d < dim; d++)
        out[d] += row[d];
    }
  double norm = 0.0;
  for (guint d = 0; d < dim; d++)
    norm += (double) out[d] * out[d];
  if (norm > 0.0)
    {
      float scale = (float) (1.0 / sqrt (norm));
      for (guint d = 0; d < dim; d++)
        out[d] *= scale;
    }
}

float *
lk_people_centroids (const LkPeople *people, const float *embeddings, guint dim, gsize n_faces)
{
  float *out = g_new0 (float, MAX (people->n_people * dim, 1));
  for (gsize k = 0; k < people->n_people; k++)
    lk_faces_centroid (embeddings, dim, n_faces, people->people[k].faces, people->people[k].n_faces,
                       out + k * dim);
  return out;
}

static int
compare_cosine (gconstpointer x, gconstpointer y)
{
  const LkSimilarPerson *a = x, *b = y;
  if (a->cosine != b->cosine)
    return a->cosine > b->cosine ? -1 : 1;
  return a->person < b->person ? -1 : a->person > b->person;
}

GArray *
lk_people_rank (const LkPeople *people, const LkClusterInput *input, gssize person,
                const float *centroids, guint dim, const float *query)
{
  GArray *out = person >= 0 ? lk_people_similar (people, input, (gsize) person, 0)
                            : g_array_new (FALSE, FALSE, sizeof (LkSimilarPerson));
  g_autofree gboolean *placed = g_new0 (gboolean, MAX (people->n_people, 1));
  guint linked = out->len;

  if (person >= 0 && (gsize) person < people->n_people)
    placed[person] = TRUE;
  for (guint k = 0; k < linked; k++)
    placed[g_array_index (out, LkSimilarPerson, k).person] = TRUE;
  for (gsize q = 0; q < people->n_people; q++)
    if (!placed[q])
      {
        LkSimilarPerson s = { .person = (guint32) q };
        g_array_append_val (out, s);
      }
  for (guint k = 0; k < out->len; k++)
    {
      LkSimilarPerson *s = &g_array_index (out, LkSimilarPerson, k);
      const float *c = centroids + (gsize) s->person * dim;
      float dot = 0.0f;
      for (guint d = 0; d < dim; d++)
        dot += query[d] * c[d];
      s->cosine = dot;
    }
  if (out->len > linked)
    qsort (&g_array_index (out, LkSimilarPerson, linked), out->len - linked,
           sizeof (LkSimilarPerson), compare_cosine);
  return out;
}

typedef struct
{
  LkSuggestion s;
  double distance;
} Ranked;

typedef struct
{
  guint32 face;
  gint32 person;
  float probability;
} Touch;

static int
compare_touch (gconstpointer x, gconstpointer y)
{
  const Touch *a = x, *b = y;
  if (a->face != b->face)
    return a->face < b->face ? -1 : 1;
  return a->person < b->person ? -1 : a->person > b->person;
}

static int
compare_ranked (gconstpointer x, gconstpointer y)
{
  const Ranked *a = x, *b = y;
  if (a->distance != b->distance)
    return a->distance < b->distance ? -1 : 1;
  return a->s.face < b->s.face ? -1 : a->s.face > b->s.face;
}

GArray *
lk_people_suggestions (const LkPeople *people, const LkClusterInput *input, const GPtrArray *pins,
                       double threshold, double margin, gsize limit)
{
  gsize n = people->n_faces;
  g_autofree guint8 *held = g_new0 (guint8, MAX (n, 1));
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; m < pin->faces->len; m++)
        if (g_array_index (pin->faces, guint32, m) < n)
          held[g_array_index (pin->faces, guint32, m)] = 1;
    }

  /* A face dismissed as no face is never suggested: it counts as held. */
  for (gsize k = 0; k < people->n_dismissed; k++)
    held[people->dismissed[k]] = 1;

  /* A face the user said is not a person ("not this person", or "no" to an
   * earlier suggestion) is never suggested for it again. */
  g_autoptr (GHashTable) refused = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) refused_keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      const LkPerson *person = pin->excluded->len ? lk_people_find (people, pin->id) : NULL;
      for (guint m = 0; person != NULL && m < pin->excluded->len; m++)
        {
          gint64 key = ((gint64) g_array_index (pin->excluded, guint32, m) << 32)
                       | (gint64) (person - people->people);
          g_array_append_val (refused_keys, key);
        }
    }
  for (guint k = 0; k < refused_keys->len; k++)
    g_hash_table_add (refused, &g_array_index (refused_keys, gint64, k));

  /* Sum of probabilities from each face to its own person; for unassigned
   * faces, (face, person, probability) triples, summed after a sort. */
  g_autofree double *own = g_new0 (double, MAX (n, 1));
  g_autoptr (GArray) touches = g_array_new (FALSE, FALSE, sizeof (Touch));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      guint32 ends[2] = { input->pairs[k].i, input->pairs[k].j };
      for (int e = 0; e < 2; e++)
        {
          gint32 mine = people->person_of[ends[e]], theirs = people->person_of[ends[1 - e]];
          if (mine >= 0 && mine == theirs)
            own[ends[e]] += input->pairs[k].probability;
          else if (mine < 0 && theirs >= 0 && !held[ends[e]]
                   && (refused_keys->len == 0
                       || !g_hash_table_contains (refused,
                                                  &(gint64){ ((gint64) ends[e] << 32) | theirs })))
            g_array_append_val (touches, ((Touch){ ends[e], theirs, input->pairs[k].probability }));
        }
    }
  g_array_sort (touches, compare_touch);

  g_autoptr (GArray) ranked = g_array_new (FALSE, FALSE, sizeof (Ranked));
  for (guint k = 0; k < touches->len;)
    {
      const Touch *t = &g_array_index (touches, Touch, k);
      Ranked r = { { t->face, -1, FALSE, 0.0 }, 0.0 };
      for (; k < touches->len && g_array_index (touches, Touch, k).face == r.s.face;)
        {
          gint32 q = g_array_index (touches, Touch, k).person;
          double sum = 0.0;
          for (; k < touches->len && g_array_index (touches, Touch, k).face == r.s.face
                 && g_array_index (touches, Touch, k).person == q;
               k++)
            sum += g_array_index (touches, Touch, k).probability;
          double link = sum / (double) people->people[q].n_faces;
          if (link > r.s.linkage)
            {
              r.s.linkage = link;
              r.s.person = q;
            }
        }
      if (r.s.linkage <= threshold - margin)
        continue;
      r.distance = fabs (r.s.linkage - threshold);
      g_array_append_val (ranked, r);
    }
  for (gsize f = 0; f < n; f++)
    {
      gint32 p = people->person_of[f];
      if (held[f] || p < 0)
        continue;
      Ranked r = { { (guint32) f, p, TRUE, 0.0 }, 0.0 };
      gsize size = people->people[p].n_faces;
      if (size < 2)
        continue;
      r.s.linkage = own[f] / (double) (size - 1);
      if (r.s.linkage >= threshold + margin)
        continue;
      r.distance = fabs (r.s.linkage - threshold);
      g_array_append_val (ranked, r);
    }
  g_array_sort (ranked, compare_ranked);

  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkSuggestion));
  for (guint k = 0; k < ranked->len && (limit == 0 || k < limit); k++)
    g_array_append_val (out, g_array_index (ranked, Ranked, k).s);
  return out;
}
