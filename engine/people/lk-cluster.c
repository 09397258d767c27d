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
 * Why it is fast (O(E log E) and a small constant): each pair of clusters
 * that some face pair joins has one slot holding the sum of those pairs'
 * probabilities. A cluster keeps a list of its slots; a merge walks both
 * lists once, marks the neighbours of one in a scratch array and either adds
 * each slot of the other into the slot that already reaches the same
 * neighbour or moves it over. Neighbours' lists are never rewritten: a slot
 * names two faces and union-find gives their current clusters; dead slots
 * are dropped when a list is next walked. The order of merges comes from
 * queued linkages that are upper bounds: the linkage of a merged cluster to X
 * is a size-weighted mean of the two old linkages to X, so it never exceeds
 * the larger, and a slot that absorbs another takes over that slot's queue
 * entry (a ticket) when it is the higher — a merge never queues anything. A
 * popped entry is checked against its slot's true linkage: within a factor
 * (1 + epsilon) it merges (epsilon-approximate average linkage, after
 * Dhulipala, Eisenstat, Łącki, Mirrokni, Shi: "Hierarchical Agglomerative
 * Graph Clustering in Nearly-Linear Time", ICML 2021), else it is queued
 * again with the true value. The first entry of every slot comes from one
 * array of 8-byte keys sorted in place by a radix sort; only re-queued
 * entries (and first linkages a float cannot hold) use a heap.
 *
 * Memory, at make-sample --faces 100000 (23.5 million pairs, the pair list
 * 282 MB): 32-byte slots that copied their faces, 16-byte first entries and
 * the radix sort's second buffer held 1.7 GB, and `likeness-cli people`
 * peaked at 2.27 GB; slots of 24 bytes that read their faces from the pair
 * list and 8-byte keys sorted in place bring the peak to 1.54 GB, and a CSR
 * that lists a face's slots only where it is the pair's second face (those
 * where it is first are a range of the scan's ordered pairs) to 1.44 GB,
 * and 16-byte slots whose queued value is their ticket's (with no pin, a
 * first ticket's value is its pair's probability) to 1.26 GB, with the same
 * people (test-cluster-identity checks them against the old
 * code; `likeness-cli people --json` gives the same bytes at 100,000 and
 * 300,000 faces). At 300,000 faces (153 million pairs) the peak went from
 * 13.9 GB to 9.1 GB before the CSR change. Time is the merges' random reads
 * (slots, pairs, parents): 74 million slot visits for 23.5 million pairs
 * over 88,000 merges, 6–7 s of CPU at load 8 on a 2-core EPYC; marks good
 * for one merge (an epoch) spare a third walk of each merged list, 10 % of
 * bench-cluster's CPU.
 *
 * Measured (CPU seconds, 704 473 pairs of the seed-3 sample / 1 472 645
 * synthetic pairs of bench-cluster, on a 2-core machine at load 8–15, so
 * wall time was 2–4× these): hash table per cluster and one heap of every
 * slot, exact: 1.24 s / —; slot lists and marks instead of hash tables:
 * 0.78 s / —; first entries sorted rather than heaped: 0.59 s / —; tickets,
 * epsilon 0.1 and the radix sort: 0.22 s / 0.64 s (exact: 0.83 s, same
 * F1 on the sample); prefetching the slots a few entries ahead: 0.53–0.68 s
 * against 0.61–0.65 s without, in three paired runs; compacting the kept
 * list in place instead of appending to a new GArray element by element:
 * 0.52–0.57 s against 0.62–0.68 s, three paired runs. Tried and removed:
 * a 4-ary heap for the re-queued entries (298 000 of them at epsilon 0.1,
 * 889 000 exact): 0.51–0.58 s against 0.49–0.56 s, no gain; numbering slots by falling
 * probability so the walk reads them in order — 0.89 s on bench-cluster,
 * slower, because a face's slots then stop being adjacent and merges read
 * them at random.
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

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-cluster-error-quark, lk_cluster_error)
/* clang-format on */

/* Slot k starts as pair k and names that pair's two faces for good (find ()
 * gives their current roots), so it reads them from the pair list instead of
 * keeping a copy; the value of its queued entry belongs to the ticket
 * (queued_value ()). 16 bytes a slot rather than 32: 376 MB less for the
 * 23.5 million pairs of make-sample --faces 100000. The price is a read of
 * the ticket's value in absorb (): `likeness-cli people --json` on those
 * 100,000 faces took 1.175x the CPU of the 32-byte slots' code (interval
 * [1.08, 1.22], likeness-cli race --clock cpu, 6 repetitions, 2-core EPYC
 * at load 9), against 1.26 GB of peak RSS instead of 2.27 GB; memory came
 * first (issue 33). A float copy of the value in the slot would spare most
 * of those reads. */
typedef struct
{
  double sum;     /* probabilities of the face pairs between the two clusters */
  guint32 ticket; /* its live entry, when queued */
  guint8 queued;  /* it has a live entry (its linkage was at least the bar) */
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
  /* When the pairs come ordered by their first face (the scan's order), the
   * slots where a face is first are the range ifirst[f] … ifirst[f + 1] and
   * the CSR lists only those where it is second: 94 MB rather than 188 MB at
   * 23.5 million pairs. NULL: the CSR lists both. */
  guint32 *ifirst;
  GArray *scratch;   /* a singleton's slots written out, for merge () */
  guint64 *mark;     /* per root, scratch for merge (): its epoch above a slot index */
  guint64 epoch;     /* merges so far: marks of earlier merges are stale */
  gint32 *pin;       /* per root: pin index or -1 */
  GArray **excluded; /* per root: pin indices its faces may not join, or NULL */
  Slot *slots;
  const LkPair *pairs; /* slot k's faces are pairs[k].i and pairs[k].j */
  GArray *tickets;     /* of guint32: ticket -> slot index, or NO_SLOT */
  /* The value each ticket was queued with. Tickets below n_first are the
   * first entries: with no pin and every pair at or above the bar, ticket t
   * is pair t's and its value that pair's probability (first_values NULL);
   * else first_values holds them. Later tickets' values are in `values`. */
  guint32 n_first;
  double *first_values;
  GArray *values; /* of double */
  GArray *heap;   /* of HeapEntry */
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

/* A first entry as one 64-bit key whose ascending order is heap_before's:
 * the float's bits inverted above (a non-negative float's bits order like
 * the float), the ticket below. Keys are unique, so an unstable sort will do. */
static inline guint64
entry_key (float value, guint32 ticket)
{
  guint32 bits;
  memcpy (&bits, &value, sizeof bits);
  return ((guint64) (G_MAXUINT32 - bits) << 32) | ticket;
}

static inline HeapEntry
entry_of_key (guint64 key)
{
  guint32 bits = G_MAXUINT32 - (guint32) (key >> 32);
  float value;
  memcpy (&value, &bits, sizeof value);
  return (HeapEntry){ value, (guint32) key };
}

/* Sorts keys ascending in place: an MSD radix sort that permutes each byte's
 * buckets in place (American flag sort), so it needs no second buffer;
 * insertion sort finishes small buckets. */
static void
sort_keys (guint64 *keys, gsize n, int shift)
{
  if (n <= 32)
    {
      for (gsize k = 1; k < n; k++)
        {
          guint64 x = keys[k];
          gsize m = k;
          for (; m > 0 && keys[m - 1] > x; m--)
            keys[m] = keys[m - 1];
          keys[m] = x;
        }
      return;
    }
  gsize count[256] = { 0 };
  for (gsize k = 0; k < n; k++)
    count[(keys[k] >> shift) & 0xff]++;
  gsize head[256], tail[256], at = 0;
  for (int b = 0; b < 256; b++)
    {
      head[b] = at;
      at += count[b];
      tail[b] = at;
    }
  for (int b = 0; b < 256; b++)
    while (head[b] < tail[b])
      {
        guint64 x = keys[head[b]];
        int d = (int) ((x >> shift) & 0xff);
        while (d != b)
          {
            guint64 t = keys[head[d]];
            keys[head[d]++] = x;
            x = t;
            d = (int) ((x >> shift) & 0xff);
          }
        keys[head[b]++] = x;
      }
  if (shift == 0)
    return;
  at = 0;
  for (int b = 0; b < 256; b++)
    {
      if (count[b] > 1)
        sort_keys (keys + at, count[b], shift - 8);
      at += count[b];
    }
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

/* How many slots root r has: its own list once it has merged, else its CSR
 * row. */
static guint
slots_len (Agglo *g, guint32 r)
{
  if (g->list[r])
    return g->list[r]->len;
  guint len = g->first[r + 1] - g->first[r];
  if (g->ifirst)
    len += g->ifirst[r + 1] - g->ifirst[r];
  return len;
}

/* Appends root r's slots to `into`. A CSR row lists the slots where the face
 * is second, then those where it is first: in pair order, as when the CSR
 * held both. */
static void
append_slots (Agglo *g, guint32 r, GArray *into)
{
  if (g->list[r])
    {
      g_array_append_vals (into, g->list[r]->data, g->list[r]->len);
      return;
    }
  g_array_append_vals (into, g->csr + g->first[r], g->first[r + 1] - g->first[r]);
  if (g->ifirst)
    for (guint32 k = g->ifirst[r]; k < g->ifirst[r + 1]; k++)
      g_array_append_val (into, k);
}

/* A list names slots at random places: ask for the slot 8 ahead and for the
 * parents of the one 4 ahead. */
static inline void
prefetch_slot (Agglo *g, const guint32 *list, guint len, guint k)
{
  if (k + 8 < len)
    {
      prefetch (&g->slots[list[k + 8]]);
      prefetch (&g->pairs[list[k + 8]]);
    }
  if (k + 4 < len)
    {
      const LkPair *p = &g->pairs[list[k + 4]];
      prefetch (&g->parent[p->i]);
      prefetch (&g->parent[p->j]);
    }
}

/* The root at the other end of slot `id` from root r. */
static guint32
other_end (Agglo *g, guint32 id, guint32 r)
{
  guint32 x = find (g->parent, g->pairs[id].i);
  return x == r ? find (g->parent, g->pairs[id].j) : x;
}

/* The value of the slot's live entry; 0: none (linkage below the bar). */
static double
queued_value (const Agglo *g, const Slot *slot)
{
  if (!slot->queued)
    return 0.0;
  guint32 t = slot->ticket;
  if (t >= g->n_first)
    return g_array_index (g->values, double, t - g->n_first);
  return g->first_values ? g->first_values[t] : (double) g->pairs[t].probability;
}

static void
unqueue (Agglo *g, Slot *slot)
{
  if (slot->queued)
    g_array_index (g->tickets, guint32, slot->ticket) = NO_SLOT;
  slot->queued = 0;
}

static void
queue (Agglo *g, Slot *slot, double link)
{
  unqueue (g, slot);
  guint32 index = (guint32) (slot - g->slots);
  slot->ticket = g->tickets->len;
  slot->queued = 1;
  g_array_append_val (g->tickets, index);
  g_array_append_val (g->values, link);
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
  if (queued_value (g, t) > queued_value (g, s))
    {
      unqueue (g, s);
      s->ticket = t->ticket;
      s->queued = 1;
      g_array_index (g->tickets, guint32, t->ticket) = (guint32) (s - g->slots);
      t->queued = 0;
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
  guint la = slots_len (g, a), lb = slots_len (g, b);
  guint32 keep = a, gone = b;
  if (lb > la || (lb == la && b < a))
    {
      keep = b;
      gone = a;
    }
  guint32 size = g->size[keep] + g->size[gone];
  /* A mark is good for this merge only: clearing them afterwards walked the
   * merged list a second time, two find ()s a slot (merge () was 45 % of the
   * CPU of `likeness-cli people` on 100,000 faces). */
  g->epoch += (guint64) 1 << 32;

  /* keep's own list, compacted in place, then gone's survivors after it. */
  lb = slots_len (g, gone);
  const guint32 *theirs;
  if (g->list[gone])
    theirs = (const guint32 *) g->list[gone]->data;
  else
    {
      g_array_set_size (g->scratch, 0);
      append_slots (g, gone, g->scratch);
      theirs = (const guint32 *) g->scratch->data;
    }
  GArray *kept = g->list[keep];
  if (kept == NULL)
    {
      kept = g_array_sized_new (FALSE, FALSE, sizeof (guint32), slots_len (g, keep) + lb);
      append_slots (g, keep, kept);
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
      guint32 x = other_end (g, id, keep);
      if (x == gone)
        {
          retire (g, s);
          continue;
        }
      g->mark[x] = g->epoch | id;
      out[w++] = id;
    }
  for (guint k = 0; k < lb; k++)
    {
      prefetch_slot (g, theirs, lb, k);
      Slot *t = &g->slots[theirs[k]];
      if (t->dead)
        continue;
      guint32 x = other_end (g, theirs[k], gone);
      if (x == keep)
        {
          retire (g, t);
          continue;
        }
      if ((g->mark[x] & ~(guint64) G_MAXUINT32) != g->epoch)
        out[w++] = theirs[k];
      else
        absorb (g, &g->slots[(guint32) g->mark[x]], t);
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
  g.mark = g_new0 (guint64, n);
  g.pin = g_new (gint32, n);
  g.excluded = g_new0 (GArray *, n);
  g.slots = g_new (Slot, MAX (input->n_pairs, 1));
  g.pairs = input->pairs;
  g.threshold = threshold;

  /* One slot per pair to start with, listed under both faces (CSR), or
   * under the second only when the pairs come ordered by the first. */
  gboolean by_first = TRUE;
  for (gsize k = 1; k < input->n_pairs && by_first; k++)
    by_first = input->pairs[k - 1].i <= input->pairs[k].i;
  g.first = g_new0 (guint32, n + 1);
  g.ifirst = by_first ? g_new0 (guint32, n + 1) : NULL;
  g.csr = g_new (guint32, MAX ((by_first ? 1 : 2) * input->n_pairs, 1));
  g.scratch = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      g.slots[k] = (Slot){ p->probability, 0, 0, 0, 0 };
      if (by_first)
        g.ifirst[p->i + 1]++;
      else
        g.first[p->i + 1]++;
      g.first[p->j + 1]++;
    }
  for (gsize f = 0; f < n; f++)
    {
      g.first[f + 1] += g.first[f];
      if (by_first)
        g.ifirst[f + 1] += g.ifirst[f];
    }
  {
    g_autofree guint32 *fill = g_memdup2 (g.first, n * sizeof (guint32));
    for (gsize k = 0; k < input->n_pairs; k++)
      {
        if (!by_first)
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
  gboolean pins_merged = FALSE;
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
          pins_merged = TRUE;
        }
    }

  /* The first entry of every slot comes from one sorted array (a radix sort,
   * 30 ms for 700 000 entries where a heap of all of them cost 0.5 s in
   * sift-downs); only entries queued again go through the heap, and a merge
   * never queues (absorb ()). A first linkage is the pair's float
   * probability unless a pin has already grown one of its clusters, so the
   * array holds 8-byte keys (the float's bits, inverted so the best comes
   * first, above the ticket) sorted in place: at 23.5 million pairs 188 MB,
   * where 16-byte entries and the radix sort's second buffer took 752 MB.
   * The few first linkages a float cannot hold exactly start in the heap;
   * both are read in heap_before's order, so the merges are the same. */
  g.heap = g_array_new (FALSE, FALSE, sizeof (HeapEntry));
  g.tickets = g_array_sized_new (FALSE, FALSE, sizeof (guint32), (guint) input->n_pairs);
  g.values = g_array_new (FALSE, FALSE, sizeof (double));
  gboolean plain = !pins_merged;
  for (gsize k = 0; k < input->n_pairs && plain; k++)
    plain = !g.slots[k].dead && (double) input->pairs[k].probability >= threshold;
  if (!plain)
    g.first_values = g_new (double, MAX (input->n_pairs, 1));
  guint64 *sorted = g_new (guint64, MAX (input->n_pairs, 1));
  gsize n_sorted = 0;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      Slot *slot = &g.slots[k];
      if (slot->dead)
        continue;
      double link = slot->sum
                    / ((double) g.size[find (g.parent, input->pairs[k].i)]
                       * g.size[find (g.parent, input->pairs[k].j)]);
      if (link >= threshold)
        {
          guint32 index = (guint32) k;
          slot->ticket = g.tickets->len;
          slot->queued = 1;
          if (g.first_values)
            g.first_values[slot->ticket] = link;
          g_array_append_val (g.tickets, index);
          float narrow = (float) link;
          if ((double) narrow == link)
            sorted[n_sorted++] = entry_key (narrow, slot->ticket);
          else
            g_array_append_val (g.heap, ((HeapEntry){ link, slot->ticket }));
        }
    }
  g.n_first = g.tickets->len;
  for (gsize k = g.heap->len / 2; k-- > 0;)
    heap_sift_down ((HeapEntry *) g.heap->data, g.heap->len, k);
  sort_keys (sorted, n_sorted, 56);

  const guint64 *next = sorted;
  const guint64 *end = sorted + n_sorted;
  while (next < end || g.heap->len > 0)
    {
      HeapEntry e = { 0 };
      if (next < end)
        e = entry_of_key (*next);
      if (g.heap->len > 0
          && (next == end || heap_before (&g_array_index (g.heap, HeapEntry, 0), &e)))
        e = heap_pop (g.heap);
      else
        {
          /* The walk is sequential but every entry leads to a random ticket,
           * slot, pair and parent: ask for them a few entries ahead. */
          if (end - next > 16)
            {
              const guint32 *tickets = (const guint32 *) g.tickets->data;
              prefetch (&tickets[(guint32) next[16]]);
              guint32 ahead = tickets[(guint32) next[8]];
              if (ahead != NO_SLOT)
                {
                  prefetch (&g.slots[ahead]);
                  prefetch (&g.pairs[ahead]);
                }
              ahead = tickets[(guint32) next[4]];
              if (ahead != NO_SLOT)
                {
                  prefetch (&g.parent[g.pairs[ahead].i]);
                  prefetch (&g.parent[g.pairs[ahead].j]);
                }
            }
          next++;
        }
      guint32 index = g_array_index (g.tickets, guint32, e.ticket);
      if (index == NO_SLOT)
        continue;
      Slot *slot = &g.slots[index];
      unqueue (&g, slot);
      guint32 a = find (g.parent, input->pairs[index].i),
              b = find (g.parent, input->pairs[index].j);
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
  g_free (sorted);

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
  g_array_unref (g.values);
  g_free (g.first_values);
  g_free (g.parent);
  g_free (g.size);
  g_free (g.photo_ix);
  g_free (g.photos);
  g_free (g.list);
  g_free (g.mark);
  g_free (g.first);
  g_free (g.ifirst);
  g_free (g.csr);
  g_array_unref (g.scratch);
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

void
lk_faces_centroid (const float *embeddings, guint dim, gsize n_faces, const guint32 *faces, gsize n,
                   float *out)
{
  memset (out, 0, sizeof (float) * dim);
  for (gsize f = 0; f < n; f++)
    {
      if (faces[f] >= n_faces)
        continue;
      const float *row = embeddings + (gsize) faces[f] * dim;
      for (guint d = 0; d < dim; d++)
        out[d] += row[d];
    }
  double norm = 0.0;
  for (guint d = 0; d < dim; d++)
    norm += (double) out[d] * out[d];
  if (norm > 0.0)
    {
      float scale = (float) (1.0 / sqrt (norm));
      for (guint d = 0; d < dim; d++)
        out[d] *= scale;
    }
}

float *
lk_people_centroids (const LkPeople *people, const float *embeddings, guint dim, gsize n_faces)
{
  float *out = g_new0 (float, MAX (people->n_people * dim, 1));
  for (gsize k = 0; k < people->n_people; k++)
    lk_faces_centroid (embeddings, dim, n_faces, people->people[k].faces, people->people[k].n_faces,
                       out + k * dim);
  return out;
}

static int
compare_cosine (gconstpointer x, gconstpointer y)
{
  const LkSimilarPerson *a = x, *b = y;
  if (a->cosine != b->cosine)
    return a->cosine > b->cosine ? -1 : 1;
  return a->person < b->person ? -1 : a->person > b->person;
}

GArray *
lk_people_rank (const LkPeople *people, const LkClusterInput *input, gssize person,
                const float *centroids, guint dim, const float *query)
{
  GArray *out = person >= 0 ? lk_people_similar (people, input, (gsize) person, 0)
                            : g_array_new (FALSE, FALSE, sizeof (LkSimilarPerson));
  g_autofree gboolean *placed = g_new0 (gboolean, MAX (people->n_people, 1));
  guint linked = out->len;

  if (person >= 0 && (gsize) person < people->n_people)
    placed[person] = TRUE;
  for (guint k = 0; k < linked; k++)
    placed[g_array_index (out, LkSimilarPerson, k).person] = TRUE;
  for (gsize q = 0; q < people->n_people; q++)
    if (!placed[q])
      {
        LkSimilarPerson s = { .person = (guint32) q };
        g_array_append_val (out, s);
      }
  for (guint k = 0; k < out->len; k++)
    {
      LkSimilarPerson *s = &g_array_index (out, LkSimilarPerson, k);
      const float *c = centroids + (gsize) s->person * dim;
      float dot = 0.0f;
      for (guint d = 0; d < dim; d++)
        dot += query[d] * c[d];
      s->cosine = dot;
    }
  if (out->len > linked)
    qsort (&g_array_index (out, LkSimilarPerson, linked), out->len - linked,
           sizeof (LkSimilarPerson), compare_cosine);
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

  /* A face the user said is not a person ("not this person", or "no" to an
   * earlier suggestion) is never suggested for it again. */
  g_autoptr (GHashTable) refused = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) refused_keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      const LkPerson *person = pin->excluded->len ? lk_people_find (people, pin->id) : NULL;
      for (guint m = 0; person != NULL && m < pin->excluded->len; m++)
        {
          gint64 key = ((gint64) g_array_index (pin->excluded, guint32, m) << 32)
                       | (gint64) (person - people->people);
          g_array_append_val (refused_keys, key);
        }
    }
  for (guint k = 0; k < refused_keys->len; k++)
    g_hash_table_add (refused, &g_array_index (refused_keys, gint64, k));

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
          else if (mine < 0 && theirs >= 0 && !held[ends[e]]
                   && (refused_keys->len == 0
                       || !g_hash_table_contains (refused,
                                                  &(gint64){ ((gint64) ends[e] << 32) | theirs })))
            g_array_append_val (touches, ((Touch){ ends[e], theirs, input->pairs[k].probability }));
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
