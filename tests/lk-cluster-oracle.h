/* lk-cluster-oracle.h — the clustering before it was made lean, for tests */
#pragma once

#include "people/lk-cluster.h"

G_BEGIN_DECLS

/* lk_cluster () as of commit e1e2c0a: the people it gave, for comparison. */
LkPeople *lk_cluster_oracle (const LkClusterInput *input, const GPtrArray *pins,
                             const LkClusterOptions *options, GError **error);

G_END_DECLS
