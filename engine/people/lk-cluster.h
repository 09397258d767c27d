/* lk-cluster.h — the scan's pairs, grouped into people
 *
 * Input: the sparse pairs of the scan (LkPair, i < j, probability >= the bar),
 * each face's photo (two faces of one photo are never one person) and the
 * user's decisions as face-anchored constraints (LkPin, produced by lk-review).
 * Output: people, largest first, each with a stable id, a cover face and its
 * faces in ascending order, plus the faces that joined nobody ("unassigned").
 * Deterministic: the same input gives the same people, order and ids.
 *
 * A person's id is "p" followed by its anchor face (its smallest face) unless a
 * decision pinned it, in which case the id recorded with the decision is kept,
 * so a named person keeps its id across re-scans and re-clusterings.
 */
#pragma once

#include <glib.h>

#include "library/lk-library.h"
#include "scan/lk-pair.h"
#include "lk-people.h"
#include "lk-pin.h"

G_BEGIN_DECLS

#define LK_CLUSTER_ERROR (lk_cluster_error_quark ())
GQuark lk_cluster_error_quark (void);

typedef enum
{
  LK_CLUSTER_ERROR_INVALID, /* a pair or constraint names a face that does not exist */
} LkClusterError;

typedef enum
{
  LK_LINKAGE_AVERAGE = 0, /* Likeness: average linkage, a missing pair counts as 0 */
  LK_LINKAGE_SINGLE,      /* baseline: connected components of the pair graph */
  LK_LINKAGE_IMMICH,      /* baseline: Immich's DBSCAN-like rule */
} LkLinkage;

/* What the clustering reads about the faces. */
typedef struct
{
  gsize n_faces;
  const guint64 *photo; /* n_faces; NULL: every face in its own photo */
  const float *quality; /* n_faces; NULL: all 1.0. Picks the cover */
  const float *crop_px; /* n_faces; NULL: all equal. Breaks cover ties */
  const LkPair *pairs;  /* i < j < n_faces, each pair at most once */
  gsize n_pairs;
} LkClusterInput;

typedef struct
{
  LkLinkage linkage;
  /* AVERAGE: two groups merge while the mean probability over all their face
   * pairs (missing pairs count 0) is at least this. 0: LK_CLUSTER_DEFAULT_THRESHOLD. */
  double threshold;
  /* IMMICH: neighbours a face needs to start a person. 0: 3. */
  guint immich_min_neighbours;
  /* AVERAGE: a merge may take a pair whose linkage is within a factor
   * (1 + epsilon) of the best one (approximate average linkage, which bounds
   * the work). 0: LK_CLUSTER_DEFAULT_EPSILON; negative: exact. */
  double epsilon;
  /* AVERAGE: faces dismissed as no face (guint32, ascending; lk_review_dismissed),
   * or NULL: their pairs are left out, so they join nobody, and they are
   * listed in LkPeople.dismissed instead of the unassigned faces. */
  const GArray *dismissed;
  /* AVERAGE: the threads that cluster the pair graph's connected components
   * side by side (the people do not depend on it). 0: g_get_num_processors (). */
  guint threads;
} LkClusterOptions;

#define LK_CLUSTER_DEFAULT_THRESHOLD 0.1
#define LK_CLUSTER_DEFAULT_EPSILON   0.1

/* The input for a loaded library and its scan's pairs (GArray of LkPair);
 * points into both, which must outlive it. */
void lk_cluster_input_init (LkClusterInput *input, const LkLibrary *library, const GArray *pairs);

/* `pins` (of LkPin *, may be NULL) are honoured by LK_LINKAGE_AVERAGE; the
 * baselines exist for evaluation only and refuse pins (LK_CLUSTER_ERROR_INVALID). */
LkPeople *lk_cluster (const LkClusterInput *input, const GPtrArray *pins,
                      const LkClusterOptions *options, GError **error);
void lk_people_free (LkPeople *people);

/* What one clustering leaves for the next on the same pairs: each face's
 * cluster, the pins and options it was given, and (from the first re-use
 * on) the connected components of the pair graph. A decision changes the
 * pins of a few people; the clusters of a component that no changed pin
 * reaches are the same whatever the rest does (a merge reads only its own
 * component's slots and queue entries, and the order between them is a
 * total one), so only the components a changed pin reaches are clustered
 * again. */
typedef struct _LkClusterMemo LkClusterMemo;

/* lk_cluster (), the same people, ids and order, re-using *memo when it was
 * made on the same input (the same pairs, faces and photos: the caller
 * drops it when those change) with the same threshold, epsilon and
 * dismissed faces; else clustering everything. Either way *memo (which may
 * point to NULL) is then this clustering's. A failed call leaves it as it
 * was. AVERAGE linkage only. */
LkPeople *lk_cluster_with_memo (const LkClusterInput *input, const GPtrArray *pins,
                                const LkClusterOptions *options, LkClusterMemo **memo,
                                GError **error);
void lk_cluster_memo_free (LkClusterMemo *memo);
/* What the last lk_cluster_with_memo () on it clustered: the faces and pairs
 * of the components it took (all of them when it could not re-use).
 * Returns whether it re-used. */
gboolean lk_cluster_memo_last (const LkClusterMemo *memo, gsize *faces, gsize *pairs);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkClusterMemo, lk_cluster_memo_free)

/* The person with this id, or NULL. */
const LkPerson *lk_people_find (const LkPeople *people, const char *id);

typedef struct
{
  guint32 person; /* index into people */
  double mean;    /* sum of pair probabilities / (|A|·|B|) */
  double max;     /* the best single pair */
  guint32 pairs;  /* pairs between the two people */
  double cosine;  /* lk_people_rank: between the centroids; else 0 */
} LkSimilarPerson;

/* The people most similar to people->people[person], best mean first (ties:
 * higher max, then lower index), at most `limit` (0: all). Only people joined
 * by at least one pair appear. Array of LkSimilarPerson. O(pairs). */
GArray *lk_people_similar (const LkPeople *people, const LkClusterInput *input, gsize person,
                           gsize limit);

/* Each person's centroid: the mean of its faces' rows of `embeddings`
 * (n_faces × dim, unit norm), scaled to unit norm; a person with no face has
 * zeros. n_people × dim floats, g_free. O(faces · dim): 100,000 faces of 512
 * floats take ~0.2 s (bench-chooser), so a caller keeps them per clustering. */
float *lk_people_centroids (const LkPeople *people, const float *embeddings, guint dim,
                            gsize n_faces);
/* The unit-norm mean of `faces`' rows into out[dim] (zeros when none). */
void lk_faces_centroid (const float *embeddings, guint dim, gsize n_faces, const guint32 *faces,
                        gsize n, float *out);

/* Every person but `person` (-1: none), for a chooser: those lk_people_similar
 * links to `person` first in its order, then the rest by the cosine between
 * `query` (dim floats, unit norm: the person's centroid, or the centroid of
 * the faces that move) and their centroids, highest first (ties: lower
 * index). Pairs know only the people the scan linked: with none, the order
 * of the rest is all a chooser has, and size says nothing about likeness.
 * Every entry's cosine is set. O(pairs + people · dim). */
GArray *lk_people_rank (const LkPeople *people, const LkClusterInput *input, gssize person,
                        const float *centroids, guint dim, const float *query);

typedef struct
{
  guint32 face;
  gint32 person;   /* index into people */
  gboolean member; /* TRUE: face is in person, weakly; FALSE: unassigned face, near it */
  double linkage;  /* the face's mean probability to the person's other faces */
} LkSuggestion;

/* Faces worth a second look, nearest the bar first: faces no pin holds whose
 * linkage to their own person is below threshold + margin, and
 * unassigned faces whose linkage to the best person is above threshold −
 * margin. Faces a pin holds are never suggested. At most `limit` (0: all).
 * Array of LkSuggestion. */
GArray *lk_people_suggestions (const LkPeople *people, const LkClusterInput *input,
                               const GPtrArray *pins, double threshold, double margin, gsize limit);

G_END_DECLS
