/* lk-test-pairs.c — pair lists made by hand for the clustering's tests */
#include "config.h"

#include "lk-test-pairs.h"

void
lk_test_add_pair (GArray *pairs, guint32 i, guint32 j, float p)
{
  g_array_append_val (pairs, ((LkPair){ MIN (i, j), MAX (i, j), p }));
}

void
lk_test_add_clique (GArray *pairs, guint32 from, guint32 to, float p)
{
  for (guint32 i = from; i < to; i++)
    for (guint32 j = i + 1; j < to; j++)
      g_array_append_val (pairs, ((LkPair){ i, j, p }));
}

int
lk_test_compare_pairs (gconstpointer x, gconstpointer y)
{
  const LkPair *a = x, *b = y;
  if (a->i != b->i)
    return a->i < b->i ? -1 : 1;
  return a->j < b->j ? -1 : a->j > b->j;
}

LkClusterInput
lk_test_cluster_input (GArray *pairs, gsize n, const guint64 *photo)
{
  g_array_sort (pairs, lk_test_compare_pairs);
  return (LkClusterInput){ n, photo, NULL, NULL, (const LkPair *) pairs->data, pairs->len };
}
