/* lk-cluster-private.h — what the clustering's files (lk-cluster*.c) share
 *
 * The public face of the clustering is lk-cluster.h; this header is for its
 * own files: lk-cluster.c (the entry points, the memo), lk-cluster-average.c
 * (average linkage), lk-cluster-components.c (the pair graph's components,
 * the baselines). lk-cluster-people.c needs none of it.
 */
#pragma once

#include "lk-cluster.h"

G_BEGIN_DECLS

/* lk-cluster-average.c */
G_GNUC_INTERNAL guint32 lk_cluster_find (guint32 *parent, guint32 x);
G_GNUC_INTERNAL void cluster_average (const LkClusterInput *input, const GPtrArray *pins,
                                      double threshold, double epsilon, guint32 *root);

/* lk-cluster-components.c */
G_GNUC_INTERNAL void cluster_components (const LkClusterInput *input, const GPtrArray *pins,
                                         double threshold, double epsilon, guint threads,
                                         guint32 *root);
G_GNUC_INTERNAL void cluster_single (const LkClusterInput *input, guint32 *root);
G_GNUC_INTERNAL void cluster_immich (const LkClusterInput *input, guint min_neighbours,
                                     guint32 *root);

G_END_DECLS
