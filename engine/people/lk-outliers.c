/* lk-outliers.c — a person's faces, least like the rest of the person first
 *
 * Why the mean cosine to the other faces, and not the cosine to the
 * centroid or the best match: for unit rows the mean cosine to the others is
 * (S · f − 1) / (n − 1), the centroid's cosine up to a per-person constant,
 * so the two orders agree; it is what the pair model's average linkage
 * reads, so a face the clustering held by one strong pair (a look-alike
 * pulled in by single similarity) still sorts first. The best match would
 * hide exactly that face. Figure (the look-alike sample and the real dlib
 * library) in README, section "Outliers first".
 */
#include "config.h"

#include <stdlib.h>

#include "lk-outliers.h"

void
lk_outlier_scores (const float *embeddings, guint dim, gsize n_faces, const guint32 *faces, gsize n,
                   double *score)
{
  g_return_if_fail (embeddings != NULL || n == 0);
  if (n == 0)
    return;
  if (n == 1)
    {
      score[0] = 1.0;
      return;
    }
  g_autofree double *sum = g_new0 (double, dim);
  for (gsize k = 0; k < n; k++)
    {
      g_return_if_fail (faces[k] < n_faces);
      const float *row = embeddings + (gsize) faces[k] * dim;
      for (guint d = 0; d < dim; d++)
        sum[d] += row[d];
    }
  for (gsize k = 0; k < n; k++)
    {
      const float *row = embeddings + (gsize) faces[k] * dim;
      double dot = 0.0, self = 0.0;
      for (guint d = 0; d < dim; d++)
        {
          dot += sum[d] * row[d];
          self += (double) row[d] * row[d];
        }
      score[k] = (dot - self) / (double) (n - 1);
    }
}

typedef struct
{
  double score;
  guint32 face;
} Scored;

static int
compare_scored (gconstpointer x, gconstpointer y)
{
  const Scored *a = x, *b = y;
  if (a->score != b->score)
    return a->score < b->score ? -1 : 1;
  return a->face < b->face ? -1 : a->face > b->face;
}

void
lk_outliers_first (const float *embeddings, guint dim, gsize n_faces, guint32 *faces, gsize n,
                   double *score)
{
  if (n == 0)
    return;
  g_autofree double *s = g_new (double, n);
  lk_outlier_scores (embeddings, dim, n_faces, faces, n, s);
  g_autofree Scored *sorted = g_new (Scored, n);
  for (gsize k = 0; k < n; k++)
    sorted[k] = (Scored){ s[k], faces[k] };
  qsort (sorted, n, sizeof (Scored), compare_scored);
  for (gsize k = 0; k < n; k++)
    {
      faces[k] = sorted[k].face;
      if (score != NULL)
        score[k] = sorted[k].score;
    }
}
