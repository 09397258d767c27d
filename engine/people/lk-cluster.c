/* lk-cluster.c — constrained average-linkage agglomeration on the sparse pair graph
 *
 * Why average linkage, with a missing pair counted as probability 0: single
 * linkage (connected components) joins two people through one bad pair, and
 * one look-alike pair chains whole families together — the complaint most
 * often made about Immich. Average linkage asks that two groups be linked by
 * *many* strong pairs: groups A and B merge only while
 * sum(p over pairs between them) / (|A|·|B|) >= threshold, so one stray pair
 * between two 20-face people weighs 1/400 of what a real match weighs.
 * Measured with `likeness-cli evaluate` (BCubed F1) on make-sample --faces
 * 18143 --seed 3, the library the threshold was chosen on: connected
 * components 0.9837 (two people mixing identities, pairwise precision 0.82),
 * Immich's rule 0.9704 (762 identities split), average linkage 0.9998 at
 * threshold 0.05, 0.9997 at 0.1, 0.9995 at 0.15, 0.9974 at 0.2, 0.9881 at
 * 0.3, with no person mixing identities at any of them. 0.1 is the default:
 * 0.0001 of F1 bought twice the margin against chaining.
 *
 * Hard rules live in the merge test (may_merge, lk-cluster-average.c): two
 * faces of one photo are never in one cluster (each cluster keeps its set of
 * photos, merged small-to-large), two pinned clusters never merge on their
 * own, and a face a pin excludes never joins it. A refused slot is left
 * unqueued, with no mark (a slot is its sum alone): a conflict never goes
 * away as clusters grow, so the slot is queued again only when summed with a
 * queued one, whose entry, once popped, the same check refuses again.
 *
 * How the merges are fast and small: lk-cluster-average.c; how a decision
 * clusters only what it reaches, and the components side by side:
 * lk-cluster-components.c. Figures: docs/benchmarks.md (bench-cluster,
 * bench-people).
 */
#include "config.h"

#include <string.h>

#include "lk-cluster-private.h"
#include "lk-cluster.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-cluster-error-quark, lk_cluster_error)
/* clang-format on */

/* --- input checks ---------------------------------------------------------------------------- */

/* check_pairs: FALSE for pairs checked before (a memo's). */
static gboolean
check_input (const LkClusterInput *input, const GPtrArray *pins, gboolean check_pairs,
             GError **error)
{
  if (input->n_faces >= G_MAXINT32)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "%zu faces are more than clustering supports (%d)", input->n_faces,
                   G_MAXINT32 - 1);
      return FALSE;
    }
  for (gsize k = 0; check_pairs && k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      if (p->i >= p->j || p->j >= input->n_faces || !(p->probability >= 0.0f)
          || p->probability > 1.0f)
        {
          g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                       "pair %zu is (%u, %u) with probability %g; a pair needs i < j < %zu faces "
                       "and a probability in [0, 1]",
                       k, p->i, p->j, (double) p->probability, input->n_faces);
          return FALSE;
        }
    }
  if (pins == NULL)
    return TRUE;
  g_autofree gint32 *owner = g_new (gint32, input->n_faces);
  memset (owner, 0xff, input->n_faces * sizeof (gint32));
  for (guint k = 0; k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      const GArray *lists[2] = { pin->faces, pin->excluded };
      for (int l = 0; l < 2; l++)
        for (guint m = 0; m < lists[l]->len; m++)
          {
            guint32 f = g_array_index (lists[l], guint32, m);
            if (f >= input->n_faces)
              {
                g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                             "person %s names face %u, but the library has %zu faces", pin->id, f,
                             input->n_faces);
                return FALSE;
              }
            if (l == 1)
              continue;
            if (owner[f] >= 0)
              {
                const LkPin *other = g_ptr_array_index (pins, owner[f]);
                g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                             "face %u is held by both person %s and person %s", f, other->id,
                             pin->id);
                return FALSE;
              }
            owner[f] = (gint32) k;
          }
    }
  return TRUE;
}

/* --- people ---------------------------------------------------------------------------------- */

static gboolean
better_cover (const LkClusterInput *input, guint32 a, guint32 b)
{
  float qa = input->quality ? input->quality[a] : 1.0f;
  float qb = input->quality ? input->quality[b] : 1.0f;
  if (qa != qb)
    return qa > qb;
  float ca = input->crop_px ? input->crop_px[a] : 0.0f;
  float cb = input->crop_px ? input->crop_px[b] : 0.0f;
  if (ca != cb)
    return ca > cb;
  return a < b;
}

static int
compare_people (gconstpointer x, gconstpointer y)
{
  const LkPerson *a = x, *b = y;
  if (a->n_faces != b->n_faces)
    return a->n_faces > b->n_faces ? -1 : 1;
  return a->faces[0] < b->faces[0] ? -1 : a->faces[0] > b->faces[0];
}

static LkPeople *
build_people (const LkClusterInput *input, const GPtrArray *pins, const guint32 *root)
{
  gsize n = input->n_faces;
  g_autofree gint32 *pin_of_root = g_new (gint32, MAX (n, 1));
  g_autofree guint32 *count = g_new0 (guint32, MAX (n, 1));
  memset (pin_of_root, 0xff, n * sizeof (gint32));
  for (gsize f = 0; f < n; f++)
    count[root[f]]++;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (pin->faces->len > 0)
        pin_of_root[root[g_array_index (pin->faces, guint32, 0)]] = (gint32) k;
    }

  g_autoptr (GHashTable) pin_ids = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; pins && k < pins->len; k++)
    g_hash_table_add (pin_ids, ((LkPin *) g_ptr_array_index (pins, k))->id);

  LkPeople *people = g_new0 (LkPeople, 1);
  people->n_faces = n;
  people->person_of = g_new (gint32, MAX (n, 1));
  GArray *list = g_array_new (FALSE, TRUE, sizeof (LkPerson));
  GArray *unassigned = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autofree gint32 *index_of_root = g_new (gint32, MAX (n, 1));
  memset (index_of_root, 0xff, n * sizeof (gint32));

  /* Faces ascend, so a person's first face is the first seen. */
  for (gsize f = 0; f < n; f++)
    {
      guint32 r = root[f];
      if (count[r] == 1 && pin_of_root[r] < 0)
        {
          guint32 face = (guint32) f;
          g_array_append_val (unassigned, face);
          continue;
        }
      if (index_of_root[r] < 0)
        {
          LkPerson p = { 0 };
          p.faces = g_new (guint32, count[r]);
          p.cover = (guint32) f;
          index_of_root[r] = (gint32) list->len;
          g_array_append_val (list, p);
        }
      LkPerson *p = &g_array_index (list, LkPerson, index_of_root[r]);
      p->faces[p->n_faces++] = (guint32) f;
      if (better_cover (input, (guint32) f, p->cover))
        p->cover = (guint32) f;
    }

  for (gsize k = 0; k < n; k++)
    {
      if (index_of_root[k] < 0)
        continue;
      LkPerson *p = &g_array_index (list, LkPerson, index_of_root[k]);
      gint32 pk = pin_of_root[k];
      if (pk >= 0)
        {
          const LkPin *pin = g_ptr_array_index (pins, pk);
          p->id = g_strdup (pin->id);
          p->name = g_strdup (pin->name);
          p->hidden = pin->hidden;
          p->pinned = TRUE;
          if (pin->cover >= 0 && root[pin->cover] == k)
            p->cover = (guint32) pin->cover;
          continue;
        }
      p->id = g_strdup_printf ("p%u", p->faces[0]);
      for (guint s = 1; g_hash_table_contains (pin_ids, p->id); s++)
        {
          g_free (p->id);
          p->id = g_strdup_printf ("p%u.%u", p->faces[0], s);
        }
    }

  g_array_sort (list, compare_people);
  for (gsize f = 0; f < n; f++)
    people->person_of[f] = -1;
  for (guint k = 0; k < list->len; k++)
    {
      const LkPerson *p = &g_array_index (list, LkPerson, k);
      for (gsize m = 0; m < p->n_faces; m++)
        people->person_of[p->faces[m]] = (gint32) k;
    }
  people->n_people = list->len;
  people->people = (LkPerson *) g_array_free (list, FALSE);
  people->n_unassigned = unassigned->len;
  people->unassigned = (guint32 *) g_array_free (unassigned, FALSE);
  return people;
}

void
lk_cluster_input_init (LkClusterInput *input, const LkLibrary *library, const GArray *pairs)
{
  *input = (LkClusterInput){
    .n_faces = library->count,
    .photo = library->photo,
    .quality = library->quality,
    .crop_px = library->crop_px,
    .pairs = (const LkPair *) pairs->data,
    .n_pairs = pairs->len,
  };
}

struct _LkClusterMemo
{
  /* What the clustering it remembers was given. */
  gsize n_faces;
  const LkPair *pairs;
  gsize n_pairs;
  const guint64 *photo;
  double threshold;
  double epsilon;
  GArray *dismissed; /* of guint32, ascending */
  GPtrArray *pins;   /* of LkPin *, copies, in the order given */
  guint32 *root;     /* n_faces: each face's cluster, as cluster_average () gave it */
  /* n_faces: each face's connected component of the pair graph (the pairs
   * of dismissed faces left out), named by one of its faces; NULL until the
   * first re-use, so the first clustering pays nothing for it. */
  guint32 *component;
  gboolean reused;
  gsize last_faces;
  gsize last_pairs;
};

void
lk_cluster_memo_free (LkClusterMemo *memo)
{
  if (memo == NULL)
    return;
  g_array_unref (memo->dismissed);
  g_ptr_array_unref (memo->pins);
  g_free (memo->root);
  g_free (memo->component);
  g_free (memo);
}

gboolean
lk_cluster_memo_last (const LkClusterMemo *memo, gsize *faces, gsize *pairs)
{
  if (faces)
    *faces = memo->last_faces;
  if (pairs)
    *pairs = memo->last_pairs;
  return memo->reused;
}

static gboolean
same_faces (const GArray *a, const GArray *b)
{
  return a->len == b->len
         && (a->len == 0 || memcmp (a->data, b->data, a->len * sizeof (guint32)) == 0);
}

/* What a pin asks of the clustering: its faces together (in this order, the
 * order its merges are made in) and its excluded faces out. Its id, name,
 * cover and hidden flag are the people's business (build_people ()). */
static gboolean
same_constraint (const LkPin *a, const LkPin *b)
{
  return same_faces (a->faces, b->faces) && same_faces (a->excluded, b->excluded);
}

static gboolean
memo_fits (const LkClusterMemo *memo, const LkClusterInput *input, double threshold, double epsilon,
           const GArray *dismissed)
{
  if (memo->n_faces != input->n_faces || memo->pairs != input->pairs
      || memo->n_pairs != input->n_pairs || memo->photo != input->photo
      || memo->threshold != threshold || memo->epsilon != epsilon)
    return FALSE;
  if (dismissed == NULL || dismissed->len == 0)
    return memo->dismissed->len == 0;
  return same_faces (memo->dismissed, dismissed);
}

static void
memo_components (LkClusterMemo *memo, const LkClusterInput *input, const guint8 *is_dismissed)
{
  guint32 *c = g_new (guint32, MAX (input->n_faces, 1));
  for (gsize f = 0; f < input->n_faces; f++)
    c[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      if (is_dismissed != NULL && (is_dismissed[p->i] || is_dismissed[p->j]))
        continue;
      guint32 a = lk_cluster_find (c, p->i), b = lk_cluster_find (c, p->j);
      if (a != b)
        c[MAX (a, b)] = MIN (a, b);
    }
  for (gsize f = 0; f < input->n_faces; f++)
    c[f] = lk_cluster_find (c, (guint32) f);
  memo->component = c;
}

typedef struct
{
  guint32 component;
  guint32 pin;
} PinPlace;

static int
compare_places (gconstpointer x, gconstpointer y)
{
  const PinPlace *a = x, *b = y;
  if (a->component != b->component)
    return a->component < b->component ? -1 : 1;
  return a->pin < b->pin ? -1 : a->pin > b->pin;
}

/* Each pin with faces, by the component (of `joined`) of its first face,
 * then in the pins' order. */
static GArray *
pin_places (const GPtrArray *pins, guint32 *joined, const guint32 *component)
{
  GArray *places = g_array_new (FALSE, FALSE, sizeof (PinPlace));
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (pin->faces->len == 0)
        continue;
      PinPlace at
          = { lk_cluster_find (joined, component[g_array_index (pin->faces, guint32, 0)]), k };
      g_array_append_val (places, at);
    }
  g_array_sort (places, compare_places);
  return places;
}

/* Marks dirty[c] for every component c (of `joined`) whose pins, in their
 * order, ask another thing of the old clustering than of the new one. */
static void
mark_changed (const GArray *old_places, const GPtrArray *old_pins, const GArray *new_places,
              const GPtrArray *new_pins, guint8 *dirty)
{
  guint a = 0, b = 0;
  while (a < old_places->len || b < new_places->len)
    {
      guint32 ca
          = a < old_places->len ? g_array_index (old_places, PinPlace, a).component : G_MAXUINT32;
      guint32 cb
          = b < new_places->len ? g_array_index (new_places, PinPlace, b).component : G_MAXUINT32;
      guint32 c = MIN (ca, cb);
      guint ea = a, eb = b;
      while (ea < old_places->len && g_array_index (old_places, PinPlace, ea).component == c)
        ea++;
      while (eb < new_places->len && g_array_index (new_places, PinPlace, eb).component == c)
        eb++;
      gboolean same = ea - a == eb - b;
      for (guint k = 0; same && k < ea - a; k++)
        same = same_constraint (
            g_ptr_array_index (old_pins, g_array_index (old_places, PinPlace, a + k).pin),
            g_ptr_array_index (new_pins, g_array_index (new_places, PinPlace, b + k).pin));
      if (!same)
        dirty[c] = 1;
      a = ea;
      b = eb;
    }
}

/* Fills root[] re-using memo: the components a changed pin reaches (with
 * the components any pin, old or new, joins them to) are clustered again
 * on their own pairs, in the pairs' order, so every comparison of tickets
 * and faces goes as in a full clustering; the rest keep memo's clusters.
 * FALSE when too many pairs would be copied for that to pay (the caller
 * clusters everything): the copy (12 bytes a pair) and the clustering of
 * at most half the pairs (16 bytes a pair) stay below a full clustering's
 * peak. */
static gboolean
cluster_again (LkClusterMemo *memo, const LkClusterInput *input, const GPtrArray *pins,
               const guint8 *is_dismissed, guint threads, guint32 *root)
{
  gsize n = input->n_faces;
  if (memo->component == NULL)
    memo_components (memo, input, is_dismissed);
  const guint32 *component = memo->component;

  /* Pins join components: a pin's faces are one cluster before any pair is
   * read. Old pins too, since the kept clusters were made with them. */
  g_autofree guint32 *joined = g_new (guint32, MAX (n, 1));
  for (gsize f = 0; f < n; f++)
    joined[f] = (guint32) f;
  const GPtrArray *both[2] = { memo->pins, pins };
  for (int s = 0; s < 2; s++)
    for (guint k = 0; both[s] && k < both[s]->len; k++)
      {
        const LkPin *pin = g_ptr_array_index (both[s], k);
        for (guint m = 1; m < pin->faces->len; m++)
          {
            guint32 a = lk_cluster_find (joined, component[g_array_index (pin->faces, guint32, 0)]);
            guint32 b = lk_cluster_find (joined, component[g_array_index (pin->faces, guint32, m)]);
            if (a != b)
              joined[MAX (a, b)] = MIN (a, b);
          }
      }
  g_autofree guint8 *dirty = g_new0 (guint8, MAX (n, 1));
  g_autoptr (GArray) old_places = pin_places (memo->pins, joined, component);
  g_autoptr (GArray) new_places = pin_places (pins, joined, component);
  mark_changed (old_places, memo->pins, new_places, pins, dirty);

  /* The dirty faces, then their pairs (both faces of a pair are in one
   * component). */
  g_autofree guint8 *again = g_new (guint8, MAX (n, 1));
  gsize n_again = 0;
  for (gsize f = 0; f < n; f++)
    n_again += again[f] = dirty[lk_cluster_find (joined, component[f])];
  gsize n_sub = 0;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      n_sub += again[p->i] && !(is_dismissed && (is_dismissed[p->i] || is_dismissed[p->j]));
    }
  if (n_sub > input->n_pairs / 2)
    return FALSE;
  g_autofree LkPair *sub = g_new (LkPair, MAX (n_sub, 1));
  n_sub = 0;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      if (again[p->i] && !(is_dismissed && (is_dismissed[p->i] || is_dismissed[p->j])))
        sub[n_sub++] = *p;
    }
  LkClusterInput part = *input;
  part.pairs = sub;
  part.n_pairs = n_sub;
  /* Every pin: those of clean components only join faces with no pair here. */
  if (n_again > 0)
    cluster_components (&part, pins, memo->threshold, memo->epsilon, threads, root);
  for (gsize f = 0; f < n; f++)
    if (!again[f])
      root[f] = memo->root[f];
  memo->last_faces = n_again;
  memo->last_pairs = n_sub;
  return TRUE;
}

/* The checks of lk_cluster_with_memo () once its options are resolved:
 * FALSE, with `error` set, when it cannot cluster. */
static gboolean
check_options (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options,
               double threshold, gboolean reuse, GError **error)
{
  /* A memo is made on pairs already checked. */
  if (!check_input (input, pins, !reuse, error))
    return FALSE;
  if (options->linkage != LK_LINKAGE_AVERAGE && pins != NULL && pins->len > 0)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the baseline clusterings take no review decisions (%u given)", pins->len);
      return FALSE;
    }
  if (!(threshold <= 1.0))
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the linkage threshold is %g; it must be in (0, 1]", threshold);
      return FALSE;
    }
  if (options->linkage != LK_LINKAGE_AVERAGE && options->linkage != LK_LINKAGE_SINGLE
      && options->linkage != LK_LINKAGE_IMMICH)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID, "unknown linkage %d",
                   (int) options->linkage);
      return FALSE;
    }
  return TRUE;
}

/* A byte per face, 1 for a dismissed one; NULL when none is. */
static guint8 *
dismissed_faces (const LkClusterInput *input, const GArray *dismissed)
{
  guint8 *is_dismissed = NULL;
  if (dismissed != NULL && dismissed->len > 0)
    {
      is_dismissed = g_new0 (guint8, MAX (input->n_faces, 1));
      for (guint k = 0; k < dismissed->len; k++)
        if (g_array_index (dismissed, guint32, k) < input->n_faces)
          is_dismissed[g_array_index (dismissed, guint32, k)] = 1;
    }
  return is_dismissed;
}

/* Fills root[] with a clustering of every pair, by options->linkage. */
static void
cluster_fresh (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options,
               double threshold, double epsilon, const guint8 *is_dismissed, guint32 *root)
{
  /* Dismissed faces ("not a face") lose their pairs: a copy of the pairs
   * without them, O(pairs), made only when there are any. */
  LkClusterInput without;
  g_autofree LkPair *kept = NULL;
  const LkClusterInput *in = input;
  if (is_dismissed != NULL)
    {
      kept = g_new (LkPair, MAX (input->n_pairs, 1));
      gsize n_kept = 0;
      for (gsize k = 0; k < input->n_pairs; k++)
        if (!is_dismissed[input->pairs[k].i] && !is_dismissed[input->pairs[k].j])
          kept[n_kept++] = input->pairs[k];
      without = *input;
      without.pairs = kept;
      without.n_pairs = n_kept;
      in = &without;
    }
  switch (options->linkage)
    {
      case LK_LINKAGE_SINGLE:
        cluster_single (in, root);
        break;
      case LK_LINKAGE_IMMICH:
        cluster_immich (in, options->immich_min_neighbours ? options->immich_min_neighbours : 3,
                        root);
        break;
      default:
        cluster_components (in, pins, threshold, epsilon, options->threads, root);
        break;
    }
}

/* Moves the dismissed faces out of people's unassigned ones. */
static void
split_dismissed (LkPeople *people, const guint8 *is_dismissed)
{
  /* Alone now, so unassigned, unless a pin holds one (a decision after
   * the dismissal said it is a face): that one stays where it is. */
  gsize n_left = 0;
  people->dismissed = g_new (guint32, MAX (people->n_unassigned, 1));
  for (gsize k = 0; k < people->n_unassigned; k++)
    {
      guint32 f = people->unassigned[k];
      if (is_dismissed[f])
        people->dismissed[people->n_dismissed++] = f;
      else
        people->unassigned[n_left++] = f;
    }
  people->n_unassigned = n_left;
}

/* *memo remembers this clustering: a new memo that takes *root over when
 * the old one was not re-used, else the old one with the new roots and
 * pins. */
static void
memo_remember (LkClusterMemo **memo, const LkClusterInput *input, const GPtrArray *pins,
               double threshold, double epsilon, const GArray *dismissed, gboolean reuse,
               gboolean reused, guint32 **root)
{
  LkClusterMemo *m = *memo;
  if (!reused)
    {
      /* Re-used or not, the components hold while the input does. */
      g_autofree guint32 *component = reuse ? g_steal_pointer (&m->component) : NULL;
      lk_cluster_memo_free (m);
      m = g_new0 (LkClusterMemo, 1);
      m->component = g_steal_pointer (&component);
      m->n_faces = input->n_faces;
      m->pairs = input->pairs;
      m->n_pairs = input->n_pairs;
      m->photo = input->photo;
      m->threshold = threshold;
      m->epsilon = epsilon;
      m->dismissed = g_array_new (FALSE, FALSE, sizeof (guint32));
      if (dismissed != NULL)
        g_array_append_vals (m->dismissed, dismissed->data, dismissed->len);
      m->pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
      m->last_faces = input->n_faces;
      m->last_pairs = input->n_pairs;
      m->root = g_steal_pointer (root);
    }
  else
    {
      g_ptr_array_set_size (m->pins, 0);
      memcpy (m->root, *root, input->n_faces * sizeof (guint32));
    }
  for (guint k = 0; pins && k < pins->len; k++)
    g_ptr_array_add (m->pins, lk_pin_copy (g_ptr_array_index (pins, k)));
  m->reused = reused;
  *memo = m;
}

LkPeople *
lk_cluster (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options,
            GError **error)
{
  return lk_cluster_with_memo (input, pins, options, NULL, error);
}

LkPeople *
lk_cluster_with_memo (const LkClusterInput *input, const GPtrArray *pins,
                      const LkClusterOptions *options, LkClusterMemo **memo, GError **error)
{
  LkClusterOptions defaults = { 0 };
  if (options == NULL)
    options = &defaults;
  if (memo != NULL && options->linkage != LK_LINKAGE_AVERAGE)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "only average linkage re-uses a clustering (linkage %d given)",
                   (int) options->linkage);
      return NULL;
    }
  double threshold = options->threshold > 0 ? options->threshold : LK_CLUSTER_DEFAULT_THRESHOLD;
  double epsilon = options->epsilon < 0    ? 0.0
                   : options->epsilon == 0 ? LK_CLUSTER_DEFAULT_EPSILON
                                           : options->epsilon;
  const GArray *dismissed = options->linkage == LK_LINKAGE_AVERAGE ? options->dismissed : NULL;
  gboolean reuse
      = memo != NULL && *memo != NULL && memo_fits (*memo, input, threshold, epsilon, dismissed);
  if (!check_options (input, pins, options, threshold, reuse, error))
    return NULL;

  g_autofree guint8 *is_dismissed = dismissed_faces (input, dismissed);
  g_autofree guint32 *root = g_new (guint32, MAX (input->n_faces, 1));
  gboolean reused
      = reuse && cluster_again (*memo, input, pins, is_dismissed, options->threads, root);
  if (!reused)
    cluster_fresh (input, pins, options, threshold, epsilon, is_dismissed, root);
  LkPeople *people
      = build_people (input, options->linkage == LK_LINKAGE_AVERAGE ? pins : NULL, root);
  if (is_dismissed != NULL)
    split_dismissed (people, is_dismissed);
  if (memo != NULL)
    memo_remember (memo, input, pins, threshold, epsilon, dismissed, reuse, reused, &root);
  return people;
}
