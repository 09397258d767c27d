/* lk-cluster-average.c — average linkage: the slots, the queue, the merges
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
 * the larger, and of two slots summed the one that holds the higher queue
 * entry (a ticket) lives on with the sum — a merge never queues anything. A
 * popped entry is checked against its slot's true linkage: within a factor
 * (1 + epsilon) it merges (epsilon-approximate average linkage, after
 * Dhulipala, Eisenstat, Łącki, Mirrokni, Shi: "Hierarchical Agglomerative
 * Graph Clustering in Nearly-Linear Time", ICML 2021), else it is queued
 * again with the true value. The first entry of every slot comes from one
 * array of 8-byte keys (the probability's bits above the ticket) sorted by
 * a stable LSD radix sort through a second buffer, then kept as 4-byte
 * tickets; only re-queued entries and the first entries of the pairs a pin
 * touches (whose linkage waits for the pins' merges) use a heap.
 *
 * Memory: slots of 16 bytes that are their sum alone (the slot holding the
 * higher ticket lives on, so tickets never move) and read their faces from
 * the pair list, 8-byte keys sorted in place then kept as 4-byte tickets,
 * and a CSR that lists a face's slots only where it is the pair's second
 * face (those where it is first are a range of the scan's ordered pairs):
 * 16 bytes a pair in all, which took `likeness-cli people`'s peak at
 * 100,000 faces from 2.27 GB to well under half of it, with the same people
 * (test-cluster-identity). Time is the merges' random reads (slots, pairs,
 * parents): marks good for one merge (an epoch) spare a third walk of each
 * merged list; lists that name each slot's other face and dead bits let a
 * walk read no slot it keeps; float copies of the queued values, live bits
 * for the first tickets and the stable LSD sort took 0.82× the CPU, same
 * output. Tried and left out: huge pages for the slots, keys and tickets
 * (what they saved in misses went again in clearing 2 MB pages); a 4-ary
 * heap for the re-queued entries (no gain); numbering slots by falling
 * probability so the walk reads them in order (slower: a face's slots stop
 * being adjacent and merges read them at random).
 */
#include "config.h"

#include <string.h>

#include "lk-cluster-private.h"

/* Slot k starts as pair k and names that pair's two faces for good (lk_cluster_find ()
 * gives their current roots), so it reads them from the pair list instead of
 * keeping a copy. A slot is its sum alone (Agglo's `sum`, 8 bytes): when two
 * slots are summed, the one that holds the higher queued entry (its ticket)
 * is the one that lives on, so a live ticket never changes slot. Then first
 * ticket k is always slot k's, and is told by a bit (`live`); the few
 * re-queued tickets a slot can hold are in a small table (`later_of`). The
 * 16-byte slots before (sum, ticket, the ticket's value as a float) and the
 * ticket -> slot array (4 bytes a pair) took 470 MB at the 23.5 million
 * pairs of make-sample --faces 100000, 188 MB now. Whether a slot is dead
 * is a bit of its own (`dead`), so a walk over a cluster's list reads no
 * slot it keeps. */

/* A cluster's list names each slot with the face at its other end, so a walk
 * finds the neighbour (lk_cluster_find ()) without reading the slot or its pair. */
typedef struct
{
  guint32 slot;
  guint32 other;
} Link;

/* An entry names a ticket, and a ticket names the slot it stands for, so a
 * slot that absorbs another can take over that slot's entry without a push. */
typedef struct
{
  double value;
  guint32 ticket;
} HeapEntry;

#define NO_SLOT   G_MAXUINT32
#define NO_TICKET G_MAXUINT32

typedef struct
{
  gsize n;
  guint32 *parent;
  guint32 *size;
  guint32 *photo_ix;   /* dense photo index per face */
  GHashTable **photos; /* per root with size >= 2: set of photo indices */
  GArray **list;       /* per root: its slots (of Link), dead ones dropped lazily */
  guint32 *first;      /* CSR of the pairs: a singleton's slots, before it owns a list */
  guint32 *csr;
  /* When the pairs come ordered by their first face (the scan's order), the
   * slots where a face is first are the range ifirst[f] … ifirst[f + 1] and
   * the CSR lists only those where it is second: 94 MB rather than 188 MB at
   * 23.5 million pairs. NULL: the CSR lists both. */
  guint32 *ifirst;
  /* With ifirst: the face whose range holds pair 256·b, for each b, so the
   * first face of pair k is found in ifirst near it (first_face ()). */
  guint32 *owner;
  GArray *scratch;     /* a singleton's slots written out (of Link), for merge () */
  guint64 *mark;       /* per root, scratch for merge (): its epoch above a place in a list */
  guint64 epoch;       /* merges so far: marks of earlier merges are stale */
  gint32 *pin;         /* per root: pin index or -1 */
  GArray **excluded;   /* per root: pin indices its faces may not join, or NULL */
  double *sum;         /* per slot: probabilities of the face pairs between the two clusters */
  guint64 *dead;       /* a bit per slot: summed into another, or inside one cluster */
  const LkPair *pairs; /* slot k's faces are pairs[k].i and pairs[k].j */
  /* The value each ticket was queued with. Tickets below n_first are the
   * first entries, ticket t slot t's: its pair's probability, unless `grown`
   * (may be NULL) holds another (a pin grew one of its clusters first).
   * Later tickets (re-queued entries) are n_first + k: their slot in
   * `later` (or NO_SLOT once gone), their value in `values`. */
  guint32 n_first;
  GHashTable *grown; /* first ticket -> its value (double *), where not its pair's */
  /* A bit per slot: set while its first ticket is live. The walk of the
   * sorted first entries meets 23.4 million dead tickets among 23.5 million
   * at 100,000 faces; the bits (2.9 MB) answer from cache. */
  guint64 *live;
  GArray *later;        /* of guint32: later ticket - n_first -> its slot, or NO_SLOT */
  GArray *values;       /* of double: later ticket - n_first -> its value */
  guint64 *has_later;   /* a bit per slot: it holds a later ticket (`later_of`) */
  GHashTable *later_of; /* slot -> its later ticket - n_first + 1 */
  GArray *heap;         /* of HeapEntry */
  double threshold;
} Agglo;

#if defined(__GNUC__)
#define prefetch(address) __builtin_prefetch (address)
#else
#define prefetch(address) ((void) (address))
#endif

/* --- union-find ------------------------------------------------------------------------------ */

guint32
lk_cluster_find (guint32 *parent, guint32 x)
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

/* Whether a face of the pair is in a pin of two faces or more. */
static inline gboolean
is_touched (const guint64 *touched, const LkPair *p)
{
  return touched != NULL
         && (((touched[p->i >> 6] >> (p->i & 63)) | (touched[p->j >> 6] >> (p->j & 63))) & 1);
}

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

/* Sorts keys made in ascending ticket order by their upper 32 bits (the
 * value's), stably, so ties keep their ticket order and the result is the
 * keys' ascending order: a least-significant-digit radix sort of 11-bit
 * digits over only the bits that differ between keys (21 of them for
 * probabilities in [0.9, 1]: two passes), through `buffer` (n keys). Returns
 * whichever of the two arrays holds the result. The MSD radix sort in place
 * it replaces (American flag sort, no second buffer) took 0.9 s of CPU for
 * the 23.5 million keys of make-sample --faces 100000 (perf: 10.5 % of
 * bench-people --scan-cache), most of it in data-dependent swaps four or
 * five passes deep; the second buffer is taken before the slots exist when
 * no pin grows a cluster, so the peak is no higher. */
static guint64 *
sort_keys_by_value (guint64 *keys, guint64 *buffer, gsize n)
{
  if (n < 2)
    return keys;
  guint32 first = (guint32) (keys[0] >> 32), differ = 0;
  for (gsize k = 1; k < n; k++)
    differ |= (guint32) (keys[k] >> 32) ^ first;
  if (differ == 0)
    return keys;
  int low = __builtin_ctz (differ), high = 32 - __builtin_clz (differ);
  gsize *count = g_new (gsize, 2048);
  for (int shift = 32 + low; shift < 32 + high; shift += 11)
    {
      int bits = MIN (11, 32 + high - shift);
      guint32 mask = (1u << bits) - 1;
      memset (count, 0, sizeof (gsize) << bits);
      for (gsize k = 0; k < n; k++)
        count[(keys[k] >> shift) & mask]++;
      gsize at = 0;
      for (guint32 d = 0; d <= mask; d++)
        {
          gsize c = count[d];
          count[d] = at;
          at += c;
        }
      for (gsize k = 0; k < n; k++)
        buffer[count[(keys[k] >> shift) & mask]++] = keys[k];
      guint64 *t = keys;
      keys = buffer;
      buffer = t;
    }
  g_free (count);
  return keys;
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

/* --- average linkage ------------------------------------------------------------------------- */

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

/* The first face of pair k, when the pairs are ordered by it: the face
 * whose range of ifirst holds k, from the owner of k's run of 256 pairs on
 * (235 pairs a face at 100,000 faces: one step or two). Both tables (0.8 MB
 * at 23.5 million pairs) stay in cache, where reading pairs[k].i missed it
 * for nearly every slot of a face's first merge: append_slots () was 15.9 %
 * of bench-people --scan-cache's cycles in perf, nearly all of it there. */
static inline guint32
first_face (const Agglo *g, guint32 k)
{
  guint32 i = g->owner[k >> 8];
  while (g->ifirst[i + 1] <= k)
    i++;
  return i;
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
  guint len = slots_len (g, r), at = into->len;
  /* A root with no slots on an empty array: its data is still NULL, and
   * NULL + 0 is undefined (UBSan stopped .ci/check here). */
  if (len == 0)
    return;
  g_array_set_size (into, at + len);
  Link *out = &g_array_index (into, Link, at);
  if (g->ifirst)
    {
      /* r is the second face of every pair of its CSR row. */
      for (guint32 k = g->first[r]; k < g->first[r + 1]; k++)
        *out++ = (Link){ g->csr[k], first_face (g, g->csr[k]) };
      for (guint32 k = g->ifirst[r]; k < g->ifirst[r + 1]; k++)
        *out++ = (Link){ k, g->pairs[k].j };
      return;
    }
  for (guint32 k = g->first[r]; k < g->first[r + 1]; k++)
    {
      /* The pairs where r is second lie anywhere in the list: ask ahead. */
      if (k + 8 < g->first[r + 1])
        prefetch (&g->pairs[g->csr[k + 8]]);
      guint32 id = g->csr[k];
      const LkPair *p = &g->pairs[id];
      *out++ = (Link){ id, p->i == r ? p->j : p->i };
    }
}

static inline gboolean
is_dead (const Agglo *g, guint32 id)
{
  return (g->dead[id >> 6] >> (id & 63)) & 1;
}

static inline gboolean
is_live (const Agglo *g, guint32 ticket)
{
  return (g->live[ticket >> 6] >> (ticket & 63)) & 1;
}

static inline void
set_dead (Agglo *g, guint32 id)
{
  g->dead[id >> 6] |= (guint64) 1 << (id & 63);
}

/* The value of a live ticket's entry, exactly. */
static double
ticket_value (const Agglo *g, guint32 t)
{
  if (t >= g->n_first)
    return g_array_index (g->values, double, t - g->n_first);
  const double *grown = g->grown ? g_hash_table_lookup (g->grown, GUINT_TO_POINTER (t)) : NULL;
  return grown ? *grown : (double) g->pairs[t].probability;
}

/* The live ticket slot id holds, or NO_TICKET (its linkage is below the bar,
 * or it was refused). */
static inline guint32
slot_ticket (const Agglo *g, guint32 id)
{
  if (is_live (g, id))
    return id;
  if (!((g->has_later[id >> 6] >> (id & 63)) & 1))
    return NO_TICKET;
  return g->n_first + GPOINTER_TO_UINT (g_hash_table_lookup (g->later_of, GUINT_TO_POINTER (id)))
         - 1;
}

/* A ticket's value rounded to a float, which orders tickets without the
 * exact value unless two are equal (queued_above ()). A first ticket no pin
 * grew is its pair's probability, a float already. */
static inline float
ticket_float (const Agglo *g, guint32 t)
{
  if (t < g->n_first && g->grown == NULL)
    return g->pairs[t].probability;
  return (float) ticket_value (g, t);
}

static void
unqueue (Agglo *g, guint32 id)
{
  if (is_live (g, id))
    g->live[id >> 6] &= ~((guint64) 1 << (id & 63));
  else if ((g->has_later[id >> 6] >> (id & 63)) & 1)
    {
      guint32 k = GPOINTER_TO_UINT (g_hash_table_lookup (g->later_of, GUINT_TO_POINTER (id))) - 1;
      g_array_index (g->later, guint32, k) = NO_SLOT;
      g_hash_table_remove (g->later_of, GUINT_TO_POINTER (id));
      g->has_later[id >> 6] &= ~((guint64) 1 << (id & 63));
    }
}

static void
queue (Agglo *g, guint32 id, double link)
{
  unqueue (g, id);
  guint32 k = g->later->len;
  g_array_append_val (g->later, id);
  g_array_append_val (g->values, link);
  g_hash_table_insert (g->later_of, GUINT_TO_POINTER (id), GUINT_TO_POINTER (k + 1));
  g->has_later[id >> 6] |= (guint64) 1 << (id & 63);
  heap_push (g->heap, (HeapEntry){ link, g->n_first + k });
}

/* Whether slot t's queued entry is above slot s's (no entry: 0). Rounding to
 * float keeps order (a > b after rounding means a > b), so only equal floats
 * read the exact values. The 16-byte slots of 9434149 read both tickets'
 * values at every absorb, and `likeness-cli people` on 100,000 faces took
 * 1.175x the CPU of the 32-byte slots before them. */
static inline gboolean
queued_above (const Agglo *g, guint32 t, guint32 s)
{
  guint32 tt = slot_ticket (g, t);
  if (tt == NO_TICKET)
    return FALSE;
  guint32 ts = slot_ticket (g, s);
  if (ts == NO_TICKET)
    return TRUE;
  float ft = ticket_float (g, tt), fs = ticket_float (g, ts);
  if (ft != fs)
    return ft > fs;
  return ticket_value (g, tt) > ticket_value (g, ts);
}

/* Slots s and t join the same two clusters and are summed: the sum's linkage
 * is a weighted mean of the two, so the larger of the two queued values
 * still bounds it, and the slot that holds that entry lives on with the sum
 * (s when neither holds one, as when s took t's ticket over). Returns it.
 * The sum is s's + t's whichever lives on: IEEE addition commutes, so the
 * sums, the merges and the people are those of the code that moved the
 * ticket (test-cluster-identity). */
static guint32
absorb (Agglo *g, guint32 s, guint32 t)
{
  if (queued_above (g, t, s))
    {
      g->sum[t] = g->sum[s] + g->sum[t];
      unqueue (g, s);
      set_dead (g, s);
      return t;
    }
  g->sum[s] += g->sum[t];
  unqueue (g, t);
  set_dead (g, t);
  return s;
}

static void
retire (Agglo *g, guint32 id)
{
  unqueue (g, id);
  set_dead (g, id);
}

/* Joins clusters a and b (roots, allowed to merge); returns the new root.
 * Walks both slot lists once: the slots of the larger list mark their
 * neighbours, each live slot of the other either adds into the slot that
 * already reaches the same neighbour or moves over. Neighbours' lists are
 * never touched: a slot names faces, and lk_cluster_find () gives the current roots. */
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
   * merged list a second time, two lk_cluster_find ()s a slot (merge () was 45 % of the
   * CPU of `likeness-cli people` on 100,000 faces). */
  g->epoch += (guint64) 1 << 32;

  /* keep's own list, compacted in place, then gone's survivors after it.
   * A walk reads the dead bits (2.9 MB at 23.5 million pairs, in cache) and
   * the parents of the other faces; a slot itself only when it retires or
   * absorbs. */
  lb = slots_len (g, gone);
  const Link *theirs;
  if (g->list[gone])
    theirs = (const Link *) g->list[gone]->data;
  else
    {
      g_array_set_size (g->scratch, 0);
      append_slots (g, gone, g->scratch);
      theirs = (const Link *) g->scratch->data;
    }
  GArray *kept = g->list[keep];
  if (kept == NULL)
    {
      kept = g_array_sized_new (FALSE, FALSE, sizeof (Link), slots_len (g, keep) + lb);
      append_slots (g, keep, kept);
    }
  la = kept->len;
  g_array_set_size (kept, la + lb);
  Link *out = (Link *) kept->data;
  guint w = 0;
  for (guint k = 0; k < la; k++)
    {
      if (k + 8 < la)
        prefetch (&g->parent[out[k + 8].other]);
      Link l = out[k];
      if (is_dead (g, l.slot))
        continue;
      guint32 x = lk_cluster_find (g->parent, l.other);
      if (x == gone)
        {
          retire (g, l.slot);
          continue;
        }
      g->mark[x] = g->epoch | w;
      out[w++] = l;
    }
  for (guint k = 0; k < lb; k++)
    {
      /* Most of gone's slots retire or are absorbed, which writes them. */
      if (k + 8 < lb)
        {
          prefetch (&g->parent[theirs[k + 8].other]);
          prefetch (&g->sum[theirs[k + 8].slot]);
        }
      Link l = theirs[k];
      if (is_dead (g, l.slot))
        continue;
      guint32 x = lk_cluster_find (g->parent, l.other);
      if (x == keep)
        {
          retire (g, l.slot);
          continue;
        }
      if ((g->mark[x] & ~(guint64) G_MAXUINT32) != g->epoch)
        out[w++] = l;
      else
        {
          /* Both slots join keep to x, so either names the link. */
          Link *at = &out[(guint32) g->mark[x]];
          at->slot = absorb (g, at->slot, l.slot);
        }
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

/* A bit for each face of a pin of two faces or more, or NULL when no pin
 * has two. */
static guint64 *
pinned_faces (const GPtrArray *pins, gsize n)
{
  guint64 *touched = NULL;
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (pin->faces->len < 2)
        continue;
      if (touched == NULL)
        touched = g_new0 (guint64, n / 64 + 1);
      for (guint m = 0; m < pin->faces->len; m++)
        {
          guint32 f = g_array_index (pin->faces, guint32, m);
          touched[f >> 6] |= (guint64) 1 << (f & 63);
        }
    }
  return touched;
}

/* The first entries of the pairs no pin touches whose probability reaches
 * the threshold, as their tickets in heap_before's order (*n_sorted of
 * them). */
static guint32 *
sort_first_entries (const LkClusterInput *input, const guint64 *touched, double threshold,
                    gsize *n_sorted_out)
{
  gsize n_sorted = 0;
  guint64 *sorted = g_new (guint64, MAX (input->n_pairs, 1));
  {
    for (gsize k = 0; k < input->n_pairs; k++)
      if (!is_touched (touched, &input->pairs[k])
          && (double) input->pairs[k].probability >= threshold)
        sorted[n_sorted++] = entry_key (input->pairs[k].probability, (guint32) k);
    guint64 *buffer = g_new (guint64, MAX (n_sorted, 1));
    guint64 *keys = sorted;
    sorted = sort_keys_by_value (keys, buffer, n_sorted);
    g_free (sorted == keys ? buffer : keys);
  }
  /* Sorted, a key's value is its ticket's pair's probability (read with the
   * pair's faces anyway): the tickets alone are kept, 4 bytes a pair, packed
   * in place (entry k's ticket goes where entry k/2 was, already read) and
   * the rest given back (94 MB at 23.5 million pairs). */
  for (gsize k = 0; k < n_sorted; k++)
    {
      /* Through memcpy: the two views of one buffer may not alias. */
      guint32 ticket = (guint32) sorted[k];
      memcpy ((char *) sorted + k * sizeof ticket, &ticket, sizeof ticket);
    }
  *n_sorted_out = n_sorted;
  return g_realloc (sorted, MAX (n_sorted, 1) * sizeof (guint32));
}

/* The slots, the CSR of the pairs and every face a cluster of its own. */
static void
agglo_init (Agglo *g, const LkClusterInput *input, double threshold)
{
  gsize n = input->n_faces;

  g->n = n;
  g->parent = g_new (guint32, n);
  g->size = g_new (guint32, n);
  g->photo_ix = dense_photos (input);
  g->photos = g_new0 (GHashTable *, n);
  g->list = g_new0 (GArray *, n);
  g->mark = g_new0 (guint64, n);
  g->pin = g_new (gint32, n);
  g->excluded = g_new0 (GArray *, n);
  g->sum = g_new (double, MAX (input->n_pairs, 1));
  g->dead = g_new0 (guint64, input->n_pairs / 64 + 1);
  g->live = g_new0 (guint64, input->n_pairs / 64 + 1);
  g->has_later = g_new0 (guint64, input->n_pairs / 64 + 1);
  g->n_first = (guint32) input->n_pairs;
  g->pairs = input->pairs;
  g->threshold = threshold;

  /* One slot per pair to start with, listed under both faces (CSR), or
   * under the second only when the pairs come ordered by the first. */
  gboolean by_first = TRUE;
  for (gsize k = 1; k < input->n_pairs && by_first; k++)
    by_first = input->pairs[k - 1].i <= input->pairs[k].i;
  g->first = g_new0 (guint32, n + 1);
  g->ifirst = by_first ? g_new0 (guint32, n + 1) : NULL;
  g->csr = g_new (guint32, MAX ((by_first ? 1 : 2) * input->n_pairs, 1));
  g->scratch = g_array_new (FALSE, FALSE, sizeof (Link));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      g->sum[k] = p->probability;
      if (by_first)
        g->ifirst[p->i + 1]++;
      else
        g->first[p->i + 1]++;
      g->first[p->j + 1]++;
    }
  for (gsize f = 0; f < n; f++)
    {
      g->first[f + 1] += g->first[f];
      if (by_first)
        g->ifirst[f + 1] += g->ifirst[f];
    }
  if (by_first)
    {
      g->owner = g_new (guint32, input->n_pairs / 256 + 1);
      for (gsize f = 0; f < n; f++)
        for (gsize b = (g->ifirst[f] + 255) / 256; b * 256 < g->ifirst[f + 1]; b++)
          g->owner[b] = (guint32) f;
    }
  {
    g_autofree guint32 *fill = g_memdup2 (g->first, n * sizeof (guint32));
    for (gsize k = 0; k < input->n_pairs; k++)
      {
        if (!by_first)
          g->csr[fill[input->pairs[k].i]++] = (guint32) k;
        g->csr[fill[input->pairs[k].j]++] = (guint32) k;
      }
  }
  for (gsize f = 0; f < n; f++)
    {
      g->parent[f] = (guint32) f;
      g->size[f] = 1;
      g->pin[f] = -1;
    }
}

/* Pins first: their faces are one cluster before any pair is looked at. */
static void
agglo_pin (Agglo *g, const GPtrArray *pins)
{
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; m < pin->excluded->len; m++)
        {
          guint32 f = g_array_index (pin->excluded, guint32, m);
          gint32 p = (gint32) k;
          if (g->excluded[f] == NULL)
            g->excluded[f] = g_array_new (FALSE, FALSE, sizeof (gint32));
          if (!excluded_has (g->excluded[f], p))
            g_array_append_val (g->excluded[f], p);
        }
    }
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (pin->faces->len == 0)
        continue;
      guint32 r = g_array_index (pin->faces, guint32, 0);
      g->pin[r] = (gint32) k;
      for (guint m = 1; m < pin->faces->len; m++)
        {
          guint32 f = g_array_index (pin->faces, guint32, m);
          /* lk-review refuses two faces of one photo in a person; a pin that
           * still has them (a hand-edited review.json) keeps the first. */
          if (excluded_has (g->excluded[f], (gint32) k) || photos_overlap (g, r, f))
            continue;
          r = merge (g, r, f);
        }
    }
}

/* The first entry of every slot comes from one sorted array (a radix sort,
 * 30 ms for 700 000 entries where a heap of all of them cost 0.5 s in
 * sift-downs); only entries queued again go through the heap, and a merge
 * never queues (absorb ()). Pair k's first entry is ticket k. Its linkage
 * is the pair's float probability unless a pin has already grown one of its
 * clusters, so the array was sorted as 8-byte keys (the float's bits,
 * inverted so the best comes first, above the ticket) and holds the
 * tickets alone: at 23.5 million pairs 94 MB, where 16-byte entries and
 * the radix sort's second buffer took 752 MB. The few first linkages that are not their pair's
 * probability are kept aside (`grown`): a copy of every first value as a double took 188 MB at
 * each decision. The pairs of pinned faces start in the heap; both are
 * read in heap_before's order, so the merges are the same. */
static void
queue_first_entries (Agglo *g, const LkClusterInput *input, const guint64 *touched,
                     double threshold)
{
  g->heap = g_array_new (FALSE, FALSE, sizeof (HeapEntry));
  g->later = g_array_new (FALSE, FALSE, sizeof (guint32));
  g->values = g_array_new (FALSE, FALSE, sizeof (double));
  g->later_of = g_hash_table_new (NULL, NULL);
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      if (!is_touched (touched, &input->pairs[k]))
        {
          /* As the keys were made. */
          if ((double) input->pairs[k].probability >= threshold)
            g->live[k >> 6] |= (guint64) 1 << (k & 63);
          continue;
        }
      if (is_dead (g, (guint32) k))
        continue;
      double link = g->sum[k]
                    / ((double) g->size[lk_cluster_find (g->parent, input->pairs[k].i)]
                       * g->size[lk_cluster_find (g->parent, input->pairs[k].j)]);
      if (link < threshold)
        continue;
      g->live[k >> 6] |= (guint64) 1 << (k & 63);
      if (link != (double) input->pairs[k].probability)
        {
          if (g->grown == NULL)
            g->grown = g_hash_table_new_full (NULL, NULL, NULL, g_free);
          g_hash_table_insert (g->grown, GUINT_TO_POINTER (k), g_memdup2 (&link, sizeof link));
        }
      g_array_append_val (g->heap, ((HeapEntry){ link, (guint32) k }));
    }
  for (gsize k = g->heap->len / 2; k-- > 0;)
    heap_sift_down ((HeapEntry *) g->heap->data, g->heap->len, k);
}

/* Pops the queued entries, the sorted first tickets and the heap together in
 * heap_before's order, and merges while the linkage holds. */
static void
merge_queued (Agglo *g, const LkClusterInput *input, const guint32 *order, gsize n_sorted,
              double threshold, double epsilon)
{
  const guint32 *next = order;
  const guint32 *end = order + n_sorted;
  while (next < end || g->heap->len > 0)
    {
      /* A first ticket once dead stays dead: skipped whenever it is met.
       * Its bit is at a random place of 2.9 MB (the test of it was 14 %
       * of lk_cluster's own cycles in perf): asked for ahead, as the
       * entries' pairs are. */
      if (end - next > 32)
        prefetch (&g->live[next[32] >> 6]);
      if (next < end && !is_live (g, *next))
        {
          next++;
          continue;
        }
      HeapEntry e = { 0 };
      if (next < end)
        e = (HeapEntry){ input->pairs[*next].probability, *next };
      if (g->heap->len > 0
          && (next == end || heap_before (&g_array_index (g->heap, HeapEntry, 0), &e)))
        e = heap_pop (g->heap);
      else
        {
          /* The walk is sequential but every live entry leads to a random
           * pair, sum and parents: ask for them a few entries ahead. */
          if (end - next > 16)
            {
              guint32 t = next[16];
              if (is_live (g, t))
                {
                  prefetch (&g->pairs[t]);
                  prefetch (&g->sum[t]);
                }
              t = next[6];
              if (is_live (g, t))
                {
                  prefetch (&g->parent[g->pairs[t].i]);
                  prefetch (&g->parent[g->pairs[t].j]);
                }
            }
          next++;
        }
      guint32 index;
      if (e.ticket < g->n_first)
        {
          if (!is_live (g, e.ticket))
            continue;
          index = e.ticket;
        }
      else if ((index = g_array_index (g->later, guint32, e.ticket - g->n_first)) == NO_SLOT)
        continue;
      unqueue (g, index);
      guint32 a = lk_cluster_find (g->parent, input->pairs[index].i),
              b = lk_cluster_find (g->parent, input->pairs[index].j);
      double link = g->sum[index] / ((double) g->size[a] * g->size[b]);
      if (link < threshold)
        continue;
      /* Queued values are upper bounds; within (1 + epsilon) of the best is
       * close enough to merge (approximate average linkage), further below
       * it goes back with its true value. */
      if (link * (1.0 + epsilon) < e.value)
        {
          queue (g, index, link);
          continue;
        }
      if (!may_merge (g, a, b))
        {
          /* Refused: a conflict never goes away as clusters grow, so the
           * slot stays unqueued until it absorbs a queued one. */
          continue;
        }
      merge (g, a, b);
    }
}

static void
agglo_clear (Agglo *g)
{
  for (gsize f = 0; f < g->n; f++)
    {
      if (g->photos[f])
        g_hash_table_unref (g->photos[f]);
      if (g->list[f])
        g_array_unref (g->list[f]);
      if (g->excluded[f])
        g_array_unref (g->excluded[f]);
    }
  g_array_unref (g->heap);
  g_array_unref (g->later);
  g_array_unref (g->values);
  g_hash_table_unref (g->later_of);
  g_free (g->has_later);
  g_clear_pointer (&g->grown, g_hash_table_unref);
  g_free (g->parent);
  g_free (g->size);
  g_free (g->photo_ix);
  g_free (g->photos);
  g_free (g->list);
  g_free (g->mark);
  g_free (g->first);
  g_free (g->ifirst);
  g_free (g->owner);
  g_free (g->csr);
  g_array_unref (g->scratch);
  g_free (g->pin);
  g_free (g->excluded);
  g_free (g->sum);
  g_free (g->dead);
  g_free (g->live);
}

/* Fills root[f] with each face's cluster (a face index). */
void
cluster_average (const LkClusterInput *input, const GPtrArray *pins, double threshold,
                 double epsilon, guint32 *root)
{
  gsize n = input->n_faces;
  Agglo g = { 0 };

  /* A pair neither of whose faces a pin of two faces or more names joins
   * two faces no pin grows, so its first entry is its probability, ticket k
   * for pair k (see queue_first_entries ()): those keys are made and sorted before the slots
   * exist, so the radix sort's second buffer (188 MB at 23.5 million pairs)
   * is given back before the slots (376 MB) are taken, and the peak is no
   * higher, at a decision as at the first clustering. The pairs of pinned
   * faces (`touched`) wait for the pins' merges and start in the heap. */
  guint64 *touched = pinned_faces (pins, n);
  gsize n_sorted = 0;
  guint32 *order = sort_first_entries (input, touched, threshold, &n_sorted);

  agglo_init (&g, input, threshold);
  agglo_pin (&g, pins);
  queue_first_entries (&g, input, touched, threshold);
  g_free (touched);
  merge_queued (&g, input, order, n_sorted, threshold, epsilon);
  g_free (order);

  for (gsize f = 0; f < n; f++)
    root[f] = lk_cluster_find (g.parent, (guint32) f);
  agglo_clear (&g);
}
