/* lk-outliers.h — a person's faces, least like the rest of the person first
 *
 * The wrong faces of a large person are the ones least like its others: the
 * person page can show them first ("Outliers First"), so they are on the
 * first screen instead of wherever their index puts them.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Each face's mean cosine to the person's other faces: for `faces` (n of
 * them, rows of `embeddings`, n_faces × dim), score[k] = mean over m ≠ k of
 * cos (faces[k], faces[m]). Exact up to double rounding, O(n · dim): the
 * rows are summed once and each face's mean is (S · f − f · f) / (n − 1).
 * A person of one face scores 1. `score` holds n doubles. */
void lk_outlier_scores (const float *embeddings, guint dim, gsize n_faces, const guint32 *faces,
                        gsize n, double *score);

/* `faces` reordered in place, least like the others first (lowest score;
 * ties: lower face first). `score` (may be NULL) receives the scores in the
 * new order. */
void lk_outliers_first (const float *embeddings, guint dim, gsize n_faces, guint32 *faces, gsize n,
                        double *score);

G_END_DECLS
