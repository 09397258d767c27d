/* lk-cluster.c — constrained average-linkage agglomeration on the sparse pair graph
 *
 * Why average linkage, with a missing pair counted as probability 0: single
 * linkage (connected components) joins two people through one bad pair, and
 * one look-alike pair chains whole families together — the complaint most
 * often made about Immich. Average linkage asks that two groups be linked by
 * *many* strong pairs: groups A and B merge only while
 * sum(p over pairs between them) / (|A|·|B|) >= threshold, so one stray pair
 * between two 20-face people weighs 1/400 of what a real match weighs. The
 * evaluation (lk-evaluate, `likeness-cli evaluate`) measures it against
 * connected components and Immich's rule on the same pairs.
 *
 * Why it is O(E log E): every cluster pair that shares a pair of faces has one
 * slot holding the sum of their pair probabilities; the slot is shared by the
 * two clusters' neighbour tables, and a merge walks the smaller table only and
 * moves or adds its slots into the larger one (small-to-large, so each slot
 * moves O(log n) times). The heap is never rebuilt at a merge: the linkage of
 * the merged cluster to a neighbour X is a size-weighted mean of the two old
 * linkages to X, so it is never above both of them, and the old heap entries
 * are upper bounds. A popped entry is re-checked against its slot; if the true
 * linkage fell below the stored one it is pushed back with the true value
 * (lazy deletion), else it is the exact maximum and the merge happens.
 *
 * Hard rules live in the merge test: two faces of one photo are never in one
 * cluster (each cluster keeps its set of photos, merged small-to-large), two
 * pinned clusters never merge on their own, and a face a pin excludes never
 * joins it. A refused cluster pair marks its slot forbidden; the mark is
 * inherited when slots are summed, because a conflict never goes away as
 * clusters grow.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-cluster.h"

G_DEFINE_QUARK (lk-cluster-error-quark, lk_cluster_error)

typedef struct
{
  double sum;
  gboolean forbidden;
} Slot;

typedef struct
{
  double value;
  guint32 a;
  guint32 b;
} HeapEntry;

typedef struct
{
  gsize n;
  guint32 *parent;
  guint32 *size;
  guint32 *photo_ix;      /* dense photo index per face */
  GHashTable **photos;    /* per root with size >= 2: set of photo indices */
  GHashTable **adj;       /* per root: neighbour root -> Slot * */
  gint32 *pin;            /* per root: pin index or -1 */
  GArray **excluded;      /* per root: pin indices its faces may not join, or NULL */
  Slot *slots;
  GArray *heap;           /* of HeapEntry */
} Agglo;

/* --- pins ------------------------------------------------------------------------------------ */

LkPin *
lk_pin_new (const char *id)
{
  LkPin *pin = g_new0 (LkPin, 1);
  pin->id = g_strdup (id);
  pin->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  pin->excluded = g_array_new (FALSE, FALSE, sizeof (guint32));
  pin->cover = -1;
  return pin;
}

LkPin *
lk_pin_copy (const LkPin *pin)
{
  LkPin *copy = lk_pin_new (pin->id);
  copy->name = g_strdup (pin->name);
  g_array_append_vals (copy->faces, pin->faces->data, pin->faces->len);
  g_array_append_vals (copy->excluded, pin->excluded->data, pin->excluded->len);
  copy->cover = pin->cover;
  copy->hidden = pin->hidden;
  return copy;
}

void
lk_pin_free (LkPin *pin)
{
  if (pin == NULL)
    return;
  g_free (pin->id);
  g_free (pin->name);
  g_array_unref (pin->faces);
  g_array_unref (pin->excluded);
  g_free (pin);
}

/* --- union-find ------------------------------------------------------------------------------ */

static guint32
find (guint32 *parent, guint32 x)
{
  guint32 root = x;
  while (parent[root] != root)
    root = parent[root];
  while (parent[x] != root)
    {
      guint32 next = parent[x];
      parent[x] = root;
      x = next;
    }
  return root;
}

/* --- heap: highest value first, ties by (a, b) ascending, so the order is deterministic ------- */

static gboolean
heap_before (const HeapEntry *x, const HeapEntry *y)
{
  if (x->value != y->value)
    return x->value > y->value;
  if (x->a != y->a)
    return x->a < y->a;
  return x->b < y->b;
}

static void
heap_sift_down (HeapEntry *h, gsize n, gsize k)
{
  for (;;)
    {
      gsize best = k, l = 2 * k + 1, r = 2 * k + 2;
      if (l < n && heap_before (&h[l], &h[best]))
        best = l;
      if (r < n && heap_before (&h[r], &h[best]))
        best = r;
      if (best == k)
        return;
      HeapEntry t = h[k];
      h[k] = h[best];
      h[best] = t;
      k = best;
    }
}

static void
heap_push (GArray *heap, HeapEntry e)
{
  g_array_append_val (heap, e);
  HeapEntry *h = (HeapEntry *) heap->data;
  gsize k = heap->len - 1;
  while (k > 0)
    {
      gsize up = (k - 1) / 2;
      if (!heap_before (&h[k], &h[up]))
        break;
      HeapEntry t = h[k];
      h[k] = h[up];
      h[up] = t;
      k = up;
    }
}

static HeapEntry
heap_pop (GArray *heap)
{
  HeapEntry *h = (HeapEntry *) heap->data;
  HeapEntry top = h[0];
  h[0] = h[heap->len - 1];
  g_array_set_size (heap, heap->len - 1);
  if (heap->len > 1)
    heap_sift_down ((HeapEntry *) heap->data, heap->len, 0);
  return top;
}

/* --- input checks ---------------------------------------------------------------------------- */

static gboolean
check_input (const LkClusterInput *input, const GPtrArray *pins, GError **error)
{
  if (input->n_faces >= G_MAXINT32)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "%zu faces are more than clustering supports (%d)", input->n_faces,
                   G_MAXINT32 - 1);
      return FALSE;
    }
  for (gsize k = 0; k < input->n_pairs; k++)
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

/* Dense photo indices, so photo sets can hold them as direct keys. */
static guint32 *
dense_photos (const LkClusterInput *input)
{
  guint32 *ix = g_new (guint32, MAX (input->n_faces, 1));
  if (input->photo == NULL)
    {
      for (gsize f = 0; f < input->n_faces; f++)
        ix[f] = (guint32) f;
      return ix;
    }
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (gsize f = 0; f < input->n_faces; f++)
    {
      gpointer value;
      if (g_hash_table_lookup_extended (seen, &input->photo[f], NULL, &value))
        ix[f] = GPOINTER_TO_UINT (value);
      else
        {
          ix[f] = g_hash_table_size (seen);
          g_hash_table_insert (seen, (gpointer) &input->photo[f], GUINT_TO_POINTER (ix[f]));
        }
    }
  return ix;
}

/* --- average linkage ------------------------------------------------------------------------- */

static gboolean
photos_overlap (Agglo *g, guint32 a, guint32 b)
{
  GHashTable *sa = g->photos[a], *sb = g->photos[b];
  if (sa == NULL && sb == NULL)
    return g->photo_ix[a] == g->photo_ix[b];
  if (sa == NULL)
    return g_hash_table_contains (sb, GUINT_TO_POINTER (g->photo_ix[a]));
  if (sb == NULL)
    return g_hash_table_contains (sa, GUINT_TO_POINTER (g->photo_ix[b]));
  if (g_hash_table_size (sa) > g_hash_table_size (sb))
    {
      GHashTable *t = sa;
      sa = sb;
      sb = t;
    }
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, sa);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_hash_table_contains (sb, key))
      return TRUE;
  return FALSE;
}

static gboolean
excluded_has (const GArray *excluded, gint32 pin)
{
  if (excluded == NULL || pin < 0)
    return FALSE;
  for (guint k = 0; k < excluded->len; k++)
    if (g_array_index (excluded, gint32, k) == pin)
      return TRUE;
  return FALSE;
}

static gboolean
may_merge (Agglo *g, guint32 a, guint32 b)
{
  if (g->pin[a] >= 0 && g->pin[b] >= 0)
    return FALSE;
  if (excluded_has (g->excluded[a], g->pin[b]) || excluded_has (g->excluded[b], g->pin[a]))
    return FALSE;
  return !photos_overlap (g, a, b);
}

static GHashTable *
photo_set (Agglo *g, guint32 root)
{
  if (g->photos[root] == NULL)
    {
      g->photos[root] = g_hash_table_new (NULL, NULL);
      g_hash_table_add (g->photos[root], GUINT_TO_POINTER (g->photo_ix[root]));
    }
  return g->photos[root];
}

static guint
adj_size (Agglo *g, guint32 root)
{
  return g->adj[root] ? g_hash_table_size (g->adj[root]) : 0;
}

static GHashTable *
adj_table (Agglo *g, guint32 root)
{
  if (g->adj[root] == NULL)
    g->adj[root] = g_hash_table_new (NULL, NULL);
  return g->adj[root];
}

/* Joins clusters a and b (roots, allowed to merge); returns the new root. The
 * root that keeps its identity is the one with more neighbours, because every
 * neighbour of the other must be told the new name. */
static guint32
merge (Agglo *g, guint32 a, guint32 b)
{
  guint32 keep = a, gone = b;
  if (adj_size (g, b) > adj_size (g, a) || (adj_size (g, b) == adj_size (g, a) && b < a))
    {
      keep = b;
      gone = a;
    }
  g->parent[gone] = keep;
  g->size[keep] += g->size[gone];

  if (g->adj[keep])
    g_hash_table_remove (g->adj[keep], GUINT_TO_POINTER (gone));
  if (g->adj[gone])
    {
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, g->adj[gone]);
      while (g_hash_table_iter_next (&it, &key, &value))
        {
          guint32 x = GPOINTER_TO_UINT (key);
          Slot *slot = value;
          if (x == keep)
            continue;
          g_hash_table_remove (g->adj[x], GUINT_TO_POINTER (gone));
          Slot *mine = g_hash_table_lookup (adj_table (g, keep), key);
          if (mine)
            {
              mine->sum += slot->sum;
              mine->forbidden |= slot->forbidden;
            }
          else
            {
              g_hash_table_insert (g->adj[keep], key, slot);
              g_hash_table_insert (g->adj[x], GUINT_TO_POINTER (keep), slot);
            }
        }
      g_clear_pointer (&g->adj[gone], g_hash_table_unref);
    }

  GHashTable *pk = photo_set (g, keep), *pg = photo_set (g, gone);
  if (g_hash_table_size (pg) > g_hash_table_size (pk))
    {
      g->photos[keep] = pg;
      g->photos[gone] = pk;
      pk = pg;
      pg = g->photos[gone];
    }
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, pg);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_hash_table_add (pk, key);
  g_clear_pointer (&g->photos[gone], g_hash_table_unref);

  if (g->pin[keep] < 0)
    g->pin[keep] = g->pin[gone];
  if (g->excluded[gone])
    {
      if (g->excluded[keep] == NULL)
        g->excluded[keep] = g_array_new (FALSE, FALSE, sizeof (gint32));
      for (guint k = 0; k < g->excluded[gone]->len; k++)
        {
          gint32 p = g_array_index (g->excluded[gone], gint32, k);
          if (!excluded_has (g->excluded[keep], p))
            g_array_append_val (g->excluded[keep], p);
        }
      g_clear_pointer (&g->excluded[gone], g_array_unref);
    }
  return keep;
}

/* Fills root[f] with each face's cluster (a face index). */
static void
cluster_average (const LkClusterInput *input, const GPtrArray *pins, double threshold,
                 guint32 *root)
{
  gsize n = input->n_faces;
  Agglo g = { 0 };
  g.n = n;
  g.parent = g_new (guint32, n);
  g.size = g_new (guint32, n);
  g.photo_ix = dense_photos (input);
  g.photos = g_new0 (GHashTable *, n);
  g.adj = g_new0 (GHashTable *, n);
  g.pin = g_new (gint32, n);
  g.excluded = g_new0 (GArray *, n);
  g.slots = g_new (Slot, MAX (input->n_pairs, 1));
  for (gsize f = 0; f < n; f++)
    {
      g.parent[f] = (guint32) f;
      g.size[f] = 1;
      g.pin[f] = -1;
    }

  /* Pins first: their faces are one cluster before any pair is looked at. */
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; m < pin->excluded->len; m++)
        {
          guint32 f = g_array_index (pin->excluded, guint32, m);
          gint32 p = (gint32) k;
          if (g.excluded[f] == NULL)
            g.excluded[f] = g_array_new (FALSE, FALSE, sizeof (gint32));
          if (!excluded_has (g.excluded[f], p))
            g_array_append_val (g.excluded[f], p);
        }
    }
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (pin->faces->len == 0)
        continue;
      guint32 r = g_array_index (pin->faces, guint32, 0);
      g.pin[r] = (gint32) k;
      for (guint m = 1; m < pin->faces->len; m++)
        {
          guint32 f = g_array_index (pin->faces, guint32, m);
          /* lk-review refuses two faces of one photo in a person; a pin that
           * still has them (a hand-edited review.json) keeps the first. */
          if (excluded_has (g.excluded[f], (gint32) k) || photos_overlap (&g, r, f))
            continue;
          r = merge (&g, r, f);
        }
    }

  /* One slot per cluster pair; faces a pin already joined share theirs. */
  gsize n_slots = 0;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      guint32 a = find (g.parent, p->i), b = find (g.parent, p->j);
      if (a == b)
        continue;
      Slot *slot = g_hash_table_lookup (adj_table (&g, a), GUINT_TO_POINTER (b));
      if (slot)
        slot->sum += p->probability;
      else
        {
          slot = &g.slots[n_slots++];
          slot->sum = p->probability;
          slot->forbidden = FALSE;
          g_hash_table_insert (g.adj[a], GUINT_TO_POINTER (b), slot);
          g_hash_table_insert (adj_table (&g, b), GUINT_TO_POINTER (a), slot);
        }
    }

  g.heap = g_array_sized_new (FALSE, FALSE, sizeof (HeapEntry), (guint) n_slots);
  for (gsize a = 0; a < n; a++)
    {
      if (g.adj[a] == NULL)
        continue;
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, g.adj[a]);
      while (g_hash_table_iter_next (&it, &key, &value))
        {
          guint32 b = GPOINTER_TO_UINT (key);
          const Slot *slot = value;
          double link = slot->sum / ((double) g.size[a] * g.size[b]);
          if (a < b && link >= threshold)
            g_array_append_val (g.heap, ((HeapEntry) { link, (guint32) a, b }));
        }
    }
  for (gsize k = g.heap->len / 2; k-- > 0;)
    heap_sift_down ((HeapEntry *) g.heap->data, g.heap->len, k);

  while (g.heap->len > 0)
    {
      HeapEntry e = heap_pop (g.heap);
      guint32 a = find (g.parent, e.a), b = find (g.parent, e.b);
      if (a == b)
        continue;
      Slot *slot = g_hash_table_lookup (g.adj[a], GUINT_TO_POINTER (b));
      if (slot->forbidden)
        continue;
      double link = slot->sum / ((double) g.size[a] * g.size[b]);
      if (link < threshold)
        continue;
      if (link < e.value)
        {
          heap_push (g.heap, (HeapEntry) { link, MIN (a, b), MAX (a, b) });
          continue;
        }
      if (!may_merge (&g, a, b))
        {
          slot->forbidden = TRUE;
          continue;
        }
      merge (&g, a, b);
    }

  for (gsize f = 0; f < n; f++)
    root[f] = find (g.parent, (guint32) f);

  for (gsize f = 0; f < n; f++)
    {
      if (g.photos[f])
        g_hash_table_unref (g.photos[f]);
      if (g.adj[f])
        g_hash_table_unref (g.adj[f]);
      if (g.excluded[f])
        g_array_unref (g.excluded[f]);
    }
  g_array_unref (g.heap);
  g_free (g.parent);
  g_free (g.size);
  g_free (g.photo_ix);
  g_free (g.photos);
  g_free (g.adj);
  g_free (g.pin);
  g_free (g.excluded);
  g_free (g.slots);
}

/* --- baselines ------------------------------------------------------------------------------- */

static void
cluster_single (const LkClusterInput *input, guint32 *root)
{
  for (gsize f = 0; f < input->n_faces; f++)
    root[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      guint32 a = find (root, input->pairs[k].i), b = find (root, input->pairs[k].j);
      if (a != b)
        root[MAX (a, b)] = MIN (a, b);
    }
  for (gsize f = 0; f < input->n_faces; f++)
    root[f] = find (root, (guint32) f);
}

/* Immich's facial recognition, on the same pairs: faces in order; a face with
 * at least min_neighbours neighbours (a "core" face) joins the person of its
 * best neighbour that has one, else starts a person; then every other face
 * joins its best neighbour's person, if any. root[f] is the person's first
 * face; a face that joined nobody is its own root. */
static void
cluster_immich (const LkClusterInput *input, guint min_neighbours, guint32 *root)
{
  gsize n = input->n_faces;
  g_autofree gsize *start = g_new0 (gsize, n + 1);
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      start[input->pairs[k].i + 1]++;
      start[input->pairs[k].j + 1]++;
    }
  for (gsize f = 0; f < n; f++)
    start[f + 1] += start[f];
  g_autofree gsize *fill = g_memdup2 (start, (n + 1) * sizeof (gsize));
  g_autofree guint32 *nb = g_new (guint32, MAX (2 * input->n_pairs, 1));
  g_autofree float *nbp = g_new (float, MAX (2 * input->n_pairs, 1));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      nb[fill[p->i]] = p->j;
      nbp[fill[p->i]++] = p->probability;
      nb[fill[p->j]] = p->i;
      nbp[fill[p->j]++] = p->probability;
    }

  g_autofree gint64 *person = g_new (gint64, n);
  for (gsize f = 0; f < n; f++)
    person[f] = -1;
  for (int pass = 0; pass < 2; pass++)
    for (gsize f = 0; f < n; f++)
      {
        gboolean core = start[f + 1] - start[f] >= min_neighbours;
        if (person[f] >= 0 || core != (pass == 0))
          continue;
        gint64 best = -1;
        float best_p = -1.0f;
        for (gsize k = start[f]; k < start[f + 1]; k++)
          if (person[nb[k]] >= 0 && nbp[k] > best_p)
            {
              best = person[nb[k]];
              best_p = nbp[k];
            }
        if (best >= 0)
          person[f] = best;
        else if (core)
          person[f] = (gint64) f;
      }
  for (gsize f = 0; f < n; f++)
    root[f] = person[f] >= 0 ? (guint32) person[f] : (guint32) f;
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

LkPeople *
lk_cluster (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options,
            GError **error)
{
  LkClusterOptions defaults = { 0 };
  if (options == NULL)
    options = &defaults;
  if (!check_input (input, pins, error))
    return NULL;
  if (options->linkage != LK_LINKAGE_AVERAGE && pins != NULL && pins->len > 0)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the baseline clusterings take no review decisions (%u given)", pins->len);
      return NULL;
    }
  double threshold = options->threshold > 0 ? options->threshold : LK_CLUSTER_DEFAULT_THRESHOLD;
  if (!(threshold <= 1.0))
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the linkage threshold is %g; it must be in (0, 1]", threshold);
      return NULL;
    }

  g_autofree guint32 *root = g_new (guint32, MAX (input->n_faces, 1));
  switch (options->linkage)
    {
    case LK_LINKAGE_AVERAGE:
      cluster_average (input, pins, threshold, root);
      break;
    case LK_LINKAGE_SINGLE:
      cluster_single (input, root);
      break;
    case LK_LINKAGE_IMMICH:
      cluster_immich (input, options->immich_min_neighbours ? options->immich_min_neighbours : 3,
                      root);
      break;
    default:
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID, "unknown linkage %d",
                   (int) options->linkage);
      return NULL;
    }
  return build_people (input, options->linkage == LK_LINKAGE_AVERAGE ? pins : NULL, root);
}

void
lk_people_free (LkPeople *people)
{
  if (people == NULL)
    return;
  for (gsize k = 0; k < people->n_people; k++)
    {
      g_free (people->people[k].id);
      g_free (people->people[k].name);
      g_free (people->people[k].faces);
    }
  g_free (people->people);
  g_free (people->unassigned);
  g_free (people->person_of);
  g_free (people);
}

const LkPerson *
lk_people_find (const LkPeople *people, const char *id)
{
  for (gsize k = 0; id && k < people->n_people; k++)
    if (strcmp (people->people[k].id, id) == 0)
      return &people->people[k];
  return NULL;
}

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
          else if (mine < 0 && theirs >= 0 && !held[ends[e]])
            g_array_append_val (touches,
                                ((Touch) { ends[e], theirs, input->pairs[k].probability }));
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
