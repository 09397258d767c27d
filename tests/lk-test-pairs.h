/* lk-test-pairs.h — pair lists made by hand for the clustering's tests
 *
 * test-cluster, test-review, test-questions, test-cluster-identity and
 * bench-cluster each wrote these four again; the scan's order (i, then j)
 * is what lk_cluster reads fastest and what the scan returns.
 */
#pragma once

#include "people/lk-cluster.h"

G_BEGIN_DECLS

/* Appends the pair of faces i and j (in either order) at probability p. */
void lk_test_add_pair (GArray *pairs, guint32 i, guint32 j, float p);

/* Appends the pairs of every face in [from, to) with every other, at p. */
void lk_test_add_clique (GArray *pairs, guint32 from, guint32 to, float p);

/* Orders LkPairs as the scan returns them: by i, then by j. */
int lk_test_compare_pairs (gconstpointer x, gconstpointer y);

/* Sorts `pairs` into the scan's order and returns the clustering's input of
 * `n` faces over them (`photo` may be NULL: a photo per face). The input
 * points into `pairs` and `photo`, which must outlive it. */
LkClusterInput lk_test_cluster_input (GArray *pairs, gsize n, const guint64 *photo);

G_END_DECLS
