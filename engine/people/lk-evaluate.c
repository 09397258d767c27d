/* lk-evaluate.c — clustering scores from a contingency table
 *
 * Every figure follows from the counts n(group, label): BCubed precision is
 * (1/N)·Σ n(g,l)²/n(g), recall (1/N)·Σ n(g,l)²/n(l); pairwise true positives
 * are Σ C(n(g,l), 2). The table is built by sorting (group, label) per face,
 * O(n log n), so an 18 143-face library scores in milliseconds.
 */
#include "config.h"

#include "lk-evaluate.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-evaluate-error-quark, lk_evaluate_error)
/* clang-format on */

typedef struct
{
  guint32 group;
  guint32 label;
} Cell;

static int
compare_cells (gconstpointer x, gconstpointer y)
{
  const Cell *a = x, *b = y;
  if (a->group != b->group)
    return a->group < b->group ? -1 : 1;
  return a->label < b->label ? -1 : a->label > b->label;
}

static double
pairs_of (double n)
{
  return n * (n - 1) / 2;
}

static LkPrecisionRecall
with_f1 (double precision, double recall)
{
  double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
  return (LkPrecisionRecall){ precision, recall, f1 };
}

gboolean
lk_evaluate (const LkPeople *people, const char *const *labels, LkScore *score, GError **error)
{
  gsize n = people->n_faces;
  g_autoptr (GHashTable) label_ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) cells = g_array_new (FALSE, FALSE, sizeof (Cell));
  for (gsize f = 0; f < n; f++)
    {
      if (labels[f] == NULL)
        continue;
      gpointer id;
      if (!g_hash_table_lookup_extended (label_ids, labels[f], NULL, &id))
        {
          id = GUINT_TO_POINTER (g_hash_table_size (label_ids));
          g_hash_table_insert (label_ids, (gpointer) labels[f], id);
        }
      gint32 p = people->person_of[f];
      Cell c = { p >= 0 ? (guint32) p : (guint32) (people->n_people + f), GPOINTER_TO_UINT (id) };
      g_array_append_val (cells, c);
    }
  if (cells->len == 0)
    {
      g_set_error (error, LK_EVALUATE_ERROR, LK_EVALUATE_ERROR_NO_LABELS,
                   "none of the %zu faces has a “label”; evaluation needs ground truth", n);
      return FALSE;
    }
  g_array_sort (cells, compare_cells);

  gsize n_labels = g_hash_table_size (label_ids);
  g_autofree double *label_size = g_new0 (double, n_labels);
  g_autofree guint32 *label_groups = g_new0 (guint32, n_labels);
  for (guint k = 0; k < cells->len; k++)
    label_size[g_array_index (cells, Cell, k).label]++;

  double total = cells->len, bp = 0, br = 0, tp = 0, predicted = 0, truth = 0;
  gsize mixed = 0;
  for (guint k = 0; k < cells->len;)
    {
      guint32 group = g_array_index (cells, Cell, k).group;
      guint first = k, distinct = 0;
      double squares = 0;
      while (k < cells->len && g_array_index (cells, Cell, k).group == group)
        {
          guint32 label = g_array_index (cells, Cell, k).label;
          double count = 0;
          while (k < cells->len && g_array_index (cells, Cell, k).group == group
                 && g_array_index (cells, Cell, k).label == label)
            count++, k++;
          distinct++;
          label_groups[label]++;
          tp += pairs_of (count);
          squares += count * count;
          br += count * count / label_size[label];
        }
      double size = k - first;
      bp += squares / size;
      predicted += pairs_of (size);
      if (distinct > 1 && group < people->n_people)
        mixed++;
    }
  gsize split = 0;
  for (gsize l = 0; l < n_labels; l++)
    {
      truth += pairs_of (label_size[l]);
      if (label_groups[l] > 1)
        split++;
    }

  score->bcubed = with_f1 (bp / total, br / total);
  score->pairwise = with_f1 (predicted > 0 ? tp / predicted : 1.0, truth > 0 ? tp / truth : 1.0);
  score->people = people->n_people;
  score->identities = n_labels;
  score->split = split;
  score->mixed = mixed;
  score->labelled = cells->len;
  return TRUE;
}

gsize
lk_evaluate_same_photo (const LkPeople *people, const guint64 *photo)
{
  gsize bad = 0;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (gsize p = 0; p < people->n_people; p++)
    {
      const LkPerson *person = &people->people[p];
      g_hash_table_remove_all (seen);
      for (gsize k = 0; k < person->n_faces; k++)
        if (!g_hash_table_add (seen, (gpointer) &photo[person->faces[k]]))
          {
            bad++;
            break;
          }
    }
  return bad;
}
