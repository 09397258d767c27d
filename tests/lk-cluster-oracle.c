/* lk-cluster-oracle.c — the clustering as it was before it was made lean
 * (engine/people/lk-cluster.c at commit e1e2c0a, 32-byte slots that copy
 * their faces, 16-byte first entries sorted with a second buffer), kept
 * unchanged but for its names so test-cluster-identity can prove the lean
 * one gives the same people: same ids, same order, same faces, same covers.
 * Not built into the engine; only the test links it.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "people/lk-cluster.h"
#include "lk-cluster-oracle.h"

typedef struct
{
  double sum;     /* probabilities of the face pairs between the two clusters */
  double queued;  /* value of this slot's live entry; 0: none (linkage below the bar) */
  guint32 a, b;   /* a face of each cluster (find () gives the current roots) */
  guint32 ticket; /* its live entry, when queued > 0 */
  guint8 forbidden;
  guint8 dead; /* summed into another slot, or inside one cluster */
} Slot;

/* An entry names a ticket, and a ticket names the slot it stands for, so a
 * slot that absorbs another can take over that slot's entry without a push. */
typedef struct
{
  double value;
  guint32 ticket;
} HeapEntry;

#define NO_SLOT G_MAXUINT32

typedef struct
{
  gsize n;
  guint32 *parent;
  guint32 *size;
  guint32 *photo_ix;   /* dense photo index per face */
  GHashTable **photos; /* per root with size >= 2: set of photo indices */
  GArray **list;       /* per root: its slots (of guint32), dead ones dropped lazily */
  guint32 *first;      /* CSR of the pairs: a singleton's slots, before it owns a list */
  guint32 *csr;
  guint32 *mark;     /* per root, scratch for merge (): slot index + 1, or 0 */
  gint32 *pin;       /* per root: pin index or -1 */
  GArray **excluded; /* per root: pin indices its faces may not join, or NULL */
  Slot *slots;
  GArray *tickets; /* of guint32: ticket -> slot index, or NO_SLOT */
  GArray *heap;    /* of HeapEntry */
  double threshold;
} Agglo;

#if defined(__GNUC__)
#define prefetch(address) __builtin_prefetch (address)
#else
#define prefetch(address) ((void) (address))
#endif

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

/* --- heap: highest value first, ties by slot, so the order is deterministic ------------------ */

static gboolean
heap_before (const HeapEntry *x, const HeapEntry *y)
{
  if (x->value != y->value)
    return x->value > y->value;
  return x->ticket < y->ticket;
}

/* Sorts entries, highest value first, keeping the given order among equal
 * values (they arrive in ticket order, so the result is heap_before's order):
 * a stable LSD radix sort on the value's bits, which for non-negative
 * doubles order like the doubles themselves. Passes whose byte is the same
 * in every entry are skipped. */
static void
sort_entries (HeapEntry *entries, gsize n)
{
  g_autofree HeapEntry *tmp = g_new (HeapEntry, MAX (n, 1));
  HeapEntry *from = entries, *to = tmp;
  for (int shift = 0; shift < 64; shift += 8)
    {
      gsize count[257] = { 0 };
      for (gsize k = 0; k < n; k++)
        {
          guint64 bits;
          memcpy (&bits, &from[k].value, sizeof bits);
          count[0xff - ((bits >> shift) & 0xff) + 1]++;
        }
      gboolean one_bucket = FALSE;
      for (int b = 1; b <= 256; b++)
        one_bucket |= count[b] == n;
      if (one_bucket)
        continue;
      for (int b = 1; b <= 256; b++)
        count[b] += count[b - 1];
      for (gsize k = 0; k < n; k++)
        {
          guint64 bits;
          memcpy (&bits, &from[k].value, sizeof bits);
          to[count[0xff - ((bits >> shift) & 0xff)]++] = from[k];
        }
      HeapEntry *t = from;
      from = to;
      to = t;
    }
  if (from != entries)
    memcpy (entries, from, n * sizeof (HeapEntry));
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

/* The slots of root r: its own list once it has merged, else its CSR row. */
static const guint32 *
slots_of (Agglo *g, guint32 r, guint *len)
{
  if (g->list[r])
    {
      *len = g->list[r]->len;
      return (const guint32 *) g->list[r]->data;
    }
  *len = g->first[r + 1] - g->first[r];
  return g->csr + g->first[r];
}

/* A list names slots at random places: ask for the slot 8 ahead and for the
 * parents of the one 4 ahead. */
static inline void
prefetch_slot (Agglo *g, const guint32 *list, guint len, guint k)
{
  if (k + 8 < len)
    prefetch (&g->slots[list[k + 8]]);
  if (k + 4 < len)
    {
      const Slot *s = &g->slots[list[k + 4]];
      prefetch (&g->parent[s->a]);
      prefetch (&g->parent[s->b]);
    }
}

/* The root at the other end of slot s from root r. */
static guint32
other_end (Agglo *g, const Slot *s, guint32 r)
{
  guint32 x = find (g->parent, s->a);
  return x == r ? find (g->parent, s->b) : x;
}

static void
unqueue (Agglo *g, Slot *slot)
{
  if (slot->queued > 0.0)
    g_array_index (g->tickets, guint32, slot->ticket) = NO_SLOT;
  slot->queued = 0.0;
}

static void
queue (Agglo *g, Slot *slot, double link)
{
  unqueue (g, slot);
  guint32 index = (guint32) (slot - g->slots);
  slot->ticket = g->tickets->len;
  slot->queued = link;
  g_array_append_val (g->tickets, index);
  heap_push (g->heap, (HeapEntry){ link, slot->ticket });
}

/* Slot t is summed into slot s: the sum's linkage is a weighted mean of the
 * two, so the larger of the two queued values still bounds it, and s keeps
 * whichever entry holds it. */
static void
absorb (Agglo *g, Slot *s, Slot *t)
{
  s->sum += t->sum;
  s->forbidden |= t->forbidden;
  if (t->queued > s->queued)
    {
      unqueue (g, s);
      s->ticket = t->ticket;
      s->queued = t->queued;
      g_array_index (g->tickets, guint32, t->ticket) = (guint32) (s - g->slots);
      t->queued = 0.0;
    }
  unqueue (g, t);
  t->dead = 1;
}

static void
retire (Agglo *g, Slot *s)
{
  unqueue (g, s);
  s->dead = 1;
}

/* Joins clusters a and b (roots, allowed to merge); returns the new root.
 * Walks both slot lists once: the slots of the larger list mark their
 * neighbours, each live slot of the other either adds into the slot that
 * already reaches the same neighbour or moves over. Neighbours' lists are
 * never touched: a slot names faces, and find () gives the current roots. */
static guint32
merge (Agglo *g, guint32 a, guint32 b)
{
  guint la, lb;
  slots_of (g, a, &la);
  slots_of (g, b, &lb);
  guint32 keep = a, gone = b;
  if (lb > la || (lb == la && b < a))
    {
      keep = b;
      gone = a;
    }
  guint32 size = g->size[keep] + g->size[gone];

  /* keep's own list, compacted in place, then gone's survivors after it. */
  const guint32 *theirs = slots_of (g, gone, &lb);
  GArray *kept = g->list[keep];
  if (kept == NULL)
    {
      const guint32 *row = slots_of (g, keep, &la);
      kept = g_array_sized_new (FALSE, FALSE, sizeof (guint32), la + lb);
      g_array_append_vals (kept, row, la);
    }
  la = kept->len;
  g_array_set_size (kept, la + lb);
  guint32 *out = (guint32 *) kept->data;
  guint w = 0;
  for (guint k = 0; k < la; k++)
    {
      prefetch_slot (g, out, la, k);
      guint32 id = out[k];
      Slot *s = &g->slots[id];
      if (s->dead)
        continue;
      guint32 x = other_end (g, s, keep);
      if (x == gone)
        {
          retire (g, s);
          continue;
        }
      g->mark[x] = id + 1;
      out[w++] = id;
    }
  for (guint k = 0; k < lb; k++)
    {
      prefetch_slot (g, theirs, lb, k);
      Slot *t = &g->slots[theirs[k]];
      if (t->dead)
        continue;
      guint32 x = other_end (g, t, gone);
      if (x == keep)
        {
          retire (g, t);
          continue;
        }
      if (g->mark[x] == 0)
        out[w++] = theirs[k];
      else
        absorb (g, &g->slots[g->mark[x] - 1], t);
    }
  for (guint k = 0; k < w; k++)
    {
      const Slot *s = &g->slots[out[k]];
      guint32 x = find (g->parent, s->a);
      g->mark[x == keep || x == gone ? find (g->parent, s->b) : x] = 0;
    }
  g_array_set_size (kept, w);
  g->list[keep] = kept;
  g_clear_pointer (&g->list[gone], g_array_unref);
  g->parent[gone] = keep;
  g->size[keep] = size;

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
                 double epsilon, guint32 *root)
{
  gsize n = input->n_faces;
  Agglo g = { 0 };
  g.n = n;
  g.parent = g_new (guint32, n);
  g.size = g_new (guint32, n);
  g.photo_ix = dense_photos (input);
  g.photos = g_new0 (GHashTable *, n);
  g.list = g_new0 (GArray *, n);
  g.mark = g_new0 (guint32, n);
  g.pin = g_new (gint32, n);
  g.excluded = g_new0 (GArray *, n);
  g.slots = g_new (Slot, MAX (input->n_pairs, 1));
  g.threshold = threshold;

  /* One slot per pair to start with, listed under both faces (CSR). */
  g.first = g_new0 (guint32, n + 1);
  g.csr = g_new (guint32, MAX (2 * input->n_pairs, 1));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      g.slots[k] = (Slot){ p->probability, 0.0, p->i, p->j, 0, 0, 0 };
      g.first[p->i + 1]++;
      g.first[p->j + 1]++;
    }
  for (gsize f = 0; f < n; f++)
    g.first[f + 1] += g.first[f];
  {
    g_autofree guint32 *fill = g_memdup2 (g.first, n * sizeof (guint32));
    for (gsize k = 0; k < input->n_pairs; k++)
      {
        g.csr[fill[input->pairs[k].i]++] = (guint32) k;
        g.csr[fill[input->pairs[k].j]++] = (guint32) k;
      }
  }
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

  /* The first entry of every slot comes from one sorted array (a radix sort,
   * 30 ms for 700 000 entries where a heap of all of them cost 0.5 s in
   * sift-downs); only entries queued again go through the heap, and a merge
   * never queues (absorb ()). */
  g.heap = g_array_new (FALSE, FALSE, sizeof (HeapEntry));
  g.tickets = g_array_sized_new (FALSE, FALSE, sizeof (guint32), (guint) input->n_pairs);
  g_autoptr (GArray) sorted
      = g_array_sized_new (FALSE, FALSE, sizeof (HeapEntry), (guint) input->n_pairs);
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      Slot *slot = &g.slots[k];
      if (slot->dead)
        continue;
      double link
          = slot->sum
            / ((double) g.size[find (g.parent, slot->a)] * g.size[find (g.parent, slot->b)]);
      if (link >= threshold)
        {
          guint32 index = (guint32) k;
          slot->ticket = g.tickets->len;
          slot->queued = link;
          g_array_append_val (g.tickets, index);
          g_array_append_val (sorted, ((HeapEntry){ link, slot->ticket }));
        }
    }
  sort_entries ((HeapEntry *) sorted->data, sorted->len);

  /* An empty GArray's data is NULL, and NULL + 0 is undefined behaviour
   * (UBSan reported it for a library without a single pair, issue 19). */
  const HeapEntry *next = (const HeapEntry *) sorted->data;
  const HeapEntry *end = sorted->len > 0 ? next + sorted->len : next;
  while (next < end || g.heap->len > 0)
    {
      HeapEntry e;
      if (g.heap->len > 0
          && (next == end || heap_before (&g_array_index (g.heap, HeapEntry, 0), next)))
        e = heap_pop (g.heap);
      else
        {
          /* The walk is sequential but every entry leads to a random ticket,
           * slot and parent: ask for them a few entries ahead. */
          if (end - next > 16)
            {
              const guint32 *tickets = (const guint32 *) g.tickets->data;
              prefetch (&tickets[next[16].ticket]);
              guint32 ahead = tickets[next[8].ticket];
              if (ahead != NO_SLOT)
                prefetch (&g.slots[ahead]);
              ahead = tickets[next[4].ticket];
              if (ahead != NO_SLOT)
                {
                  prefetch (&g.parent[g.slots[ahead].a]);
                  prefetch (&g.parent[g.slots[ahead].b]);
                }
            }
          e = *next++;
        }
      guint32 index = g_array_index (g.tickets, guint32, e.ticket);
      if (index == NO_SLOT)
        continue;
      Slot *slot = &g.slots[index];
      unqueue (&g, slot);
      guint32 a = find (g.parent, slot->a), b = find (g.parent, slot->b);
      double link = slot->sum / ((double) g.size[a] * g.size[b]);
      if (link < threshold)
        continue;
      /* Queued values are upper bounds; within (1 + epsilon) of the best is
       * close enough to merge (approximate average linkage), further below
       * it goes back with its true value. */
      if (link * (1.0 + epsilon) < e.value)
        {
          queue (&g, slot, link);
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
      if (g.list[f])
        g_array_unref (g.list[f]);
      if (g.excluded[f])
        g_array_unref (g.excluded[f]);
    }
  g_array_unref (g.heap);
  g_array_unref (g.tickets);
  g_free (g.parent);
  g_free (g.size);
  g_free (g.photo_ix);
  g_free (g.photos);
  g_free (g.list);
  g_free (g.mark);
  g_free (g.first);
  g_free (g.csr);
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
lk_cluster_oracle (const LkClusterInput *input, const GPtrArray *pins,
                   const LkClusterOptions *options, GError **error)
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
        cluster_average (input, pins, threshold,
                         options->epsilon < 0    ? 0.0
                         : options->epsilon == 0 ? LK_CLUSTER_DEFAULT_EPSILON
                                                 : options->epsilon,
                         root);
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
