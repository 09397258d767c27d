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
 * 300,000 faces). A slot that is its sum alone (the slot holding the higher
 * ticket lives on, so tickets never move) and first entries kept as tickets
 * of 4 bytes after their sort took bench-people --scan-cache's peak from
 * 1,222 MB to 866 MB (VmHWM, MiB), the clustering's own from 730 MB to 375
 * MB: 16 bytes a pair (the sum, the ticket's place in the order, the CSR).
 * At 300,000 faces (153 million pairs) the peak went from
 * 13.9 GB to 9.1 GB before the CSR change. Time is the merges' random reads
 * (slots, pairs, parents): 74 million slot visits for 23.5 million pairs
 * over 88,000 merges, 6–7 s of CPU at load 8 on a 2-core EPYC; marks good
 * for one merge (an epoch) spare a third walk of each merged list, 10 % of
 * bench-cluster's CPU. Then (perf of bench-people --scan-cache: merge 45 %
 * of the cycles, the in-place radix sort 10.5 %, the walk of the first
 * entries 12 %, nearly all of it misses): lists that name each slot's other
 * face and dead bits, so a walk reads no slot it keeps; float copies of the
 * queued values; live bits for the first tickets; the stable LSD sort —
 * `likeness-cli people --json` on those 100,000 faces took 0.822x the CPU
 * (medians 11.44 s against 9.17 s, B won 5 of 5, likeness-cli race --clock
 * cpu --same-output, AMD EPYC Zen 4, 2 cores at load 11), same output. Tried
 * and left out: huge pages (MADV_HUGEPAGE) for the slots, keys and tickets
 * took merge () from 33 % to 24 % of the cycles but cost as much again in
 * clearing 2 MB pages (clear_page_erms 19 %) on this virtual machine.
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
 * joins it. A refused slot is left unqueued, with no mark (a slot is its
 * sum alone): a conflict never goes away as clusters grow, so the slot is
 * queued again only when summed with a queued one, whose entry, once
 * popped, the same check refuses again.
 *
 * After a decision (lk_cluster_with_memo): a merge reads and writes only
 * the slots, parents and queue entries of one connected component of the
 * pair graph (pins join components: their faces are one cluster first), and
 * the order between entries is a total one (value, then ticket; a ticket
 * numbers pairs in their order, re-queued ones after all first ones, in the
 * order they were queued), so what happens inside a component does not
 * depend on the others. A decision changes the pins of a few people; the
 * components its changed pins reach are clustered again on their own pairs,
 * kept in the pairs' order (the same comparisons, so the same merges and
 * the same sums), and the rest keep the clusters of the memo. At make-sample
 * --faces 100000 the pair graph has 5,873 components (the largest 3,195
 * faces and 2.29 million of the 23.5 million pairs) for 5,874 people:
 * bench-people's decision (the two largest people merged and named) clusters
 * 5,004 faces and 5.4 million pairs again.
 *
 * For the same reason every clustering takes the components one at a time
 * (cluster_components ()): each component of two faces or more is a job,
 * its faces numbered in their order and its pairs copied in theirs, on
 * LkClusterOptions.threads threads, the jobs with the most pairs first.
 * Most of what it buys is not the second thread but the cache: a
 * component's slots, parents, lists and sorted entries take 28 bytes a pair
 * (112 kB for the mean component below, 64 MB for the largest), where the
 * whole graph's took hundreds of MB read at random. At
 * make-sample --faces 100000 (bench-people --scan-cache, AMD EPYC Zen 1,
 * 2 cores at load 7–8): one clustering 10.07 s of CPU, 14.9 s wall before;
 * 3.59 s and 4.12 s on one thread, 3.35 s and 3.51 s on two (the second
 * thread gets little of a loaded machine). The peak falls too (bench-people
 * --scan-cache 868 → 622 MB on one thread, 637–695 on two: two jobs' space
 * at once): a job's space is 28 bytes a pair of its component (the copy and
 * the clustering's), and no component holds a tenth of the pairs there. A
 * graph one component holds more than half the pairs of is clustered
 * whole, as before (copying that component would cost more memory than the
 * clustering it parts with, and its job would leave the second thread idle
 * anyway); it pays only the pass that finds the components (9–10 ms of
 * bench-cluster's 0.7 s, whose look-alike pairs put 61 % of its pairs in
 * one component; 0.13–0.19 s at 23.5 million pairs). perf of one thread
 * (bench-people --scan-cache --threads 1): merge () 36 % of the samples,
 * cluster_average () 25 % (the radix sort of the first entries more than
 * half of it, the CSR's scatter 14 %), page faults 2 %.
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
 * finds the neighbour (find ()) without reading the slot or its pair. */
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
      guint32 x = find (g->parent, l.other);
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
      guint32 x = find (g->parent, l.other);
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

/* Fills root[f] with each face's cluster (a face index). */
static void
cluster_average (const LkClusterInput *input, const GPtrArray *pins, double threshold,
                 double epsilon, guint32 *root)
{
  gsize n = input->n_faces;
  Agglo g = { 0 };

  /* A pair neither of whose faces a pin of two faces or more names joins
   * two faces no pin grows, so its first entry is its probability, ticket k
   * for pair k (see below): those keys are made and sorted before the slots
   * exist, so the radix sort's second buffer (188 MB at 23.5 million pairs)
   * is given back before the slots (376 MB) are taken, and the peak is no
   * higher, at a decision as at the first clustering. The pairs of pinned
   * faces (`touched`) wait for the pins' merges and start in the heap. */
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
  guint32 *order = g_realloc (sorted, MAX (n_sorted, 1) * sizeof (guint32));

  g.n = n;
  g.parent = g_new (guint32, n);
  g.size = g_new (guint32, n);
  g.photo_ix = dense_photos (input);
  g.photos = g_new0 (GHashTable *, n);
  g.list = g_new0 (GArray *, n);
  g.mark = g_new0 (guint64, n);
  g.pin = g_new (gint32, n);
  g.excluded = g_new0 (GArray *, n);
  g.sum = g_new (double, MAX (input->n_pairs, 1));
  g.dead = g_new0 (guint64, input->n_pairs / 64 + 1);
  g.live = g_new0 (guint64, input->n_pairs / 64 + 1);
  g.has_later = g_new0 (guint64, input->n_pairs / 64 + 1);
  g.n_first = (guint32) input->n_pairs;
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
  g.scratch = g_array_new (FALSE, FALSE, sizeof (Link));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      g.sum[k] = p->probability;
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
  if (by_first)
    {
      g.owner = g_new (guint32, input->n_pairs / 256 + 1);
      for (gsize f = 0; f < n; f++)
        for (gsize b = (g.ifirst[f] + 255) / 256; b * 256 < g.ifirst[f + 1]; b++)
          g.owner[b] = (guint32) f;
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
   * never queues (absorb ()). Pair k's first entry is ticket k. Its linkage
   * is the pair's float probability unless a pin has already grown one of its
   * clusters, so the array was sorted as 8-byte keys (the float's bits,
   * inverted so the best comes first, above the ticket) and holds the
   * tickets alone: at 23.5 million pairs 94 MB, where 16-byte entries and
   * the radix sort's second buffer took 752 MB. The few first linkages that are not their pair's
   * probability are kept aside (`grown`): a copy of every first value as a double took 188 MB at
   * each decision. The pairs of pinned faces start in the heap; both are
   * read in heap_before's order, so the merges are the same. */
  g.heap = g_array_new (FALSE, FALSE, sizeof (HeapEntry));
  g.later = g_array_new (FALSE, FALSE, sizeof (guint32));
  g.values = g_array_new (FALSE, FALSE, sizeof (double));
  g.later_of = g_hash_table_new (NULL, NULL);
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      if (!is_touched (touched, &input->pairs[k]))
        {
          /* As the keys were made. */
          if ((double) input->pairs[k].probability >= threshold)
            g.live[k >> 6] |= (guint64) 1 << (k & 63);
          continue;
        }
      if (is_dead (&g, (guint32) k))
        continue;
      double link = g.sum[k]
                    / ((double) g.size[find (g.parent, input->pairs[k].i)]
                       * g.size[find (g.parent, input->pairs[k].j)]);
      if (link < threshold)
        continue;
      g.live[k >> 6] |= (guint64) 1 << (k & 63);
      if (link != (double) input->pairs[k].probability)
        {
          if (g.grown == NULL)
            g.grown = g_hash_table_new_full (NULL, NULL, NULL, g_free);
          g_hash_table_insert (g.grown, GUINT_TO_POINTER (k), g_memdup2 (&link, sizeof link));
        }
      g_array_append_val (g.heap, ((HeapEntry){ link, (guint32) k }));
    }
  g_free (touched);
  for (gsize k = g.heap->len / 2; k-- > 0;)
    heap_sift_down ((HeapEntry *) g.heap->data, g.heap->len, k);

  const guint32 *next = order;
  const guint32 *end = order + n_sorted;
  while (next < end || g.heap->len > 0)
    {
      /* A first ticket once dead stays dead: skipped whenever it is met.
       * Its bit is at a random place of 2.9 MB (the test of it was 14 %
       * of lk_cluster's own cycles in perf): asked for ahead, as the
       * entries' pairs are. */
      if (end - next > 32)
        prefetch (&g.live[next[32] >> 6]);
      if (next < end && !is_live (&g, *next))
        {
          next++;
          continue;
        }
      HeapEntry e = { 0 };
      if (next < end)
        e = (HeapEntry){ input->pairs[*next].probability, *next };
      if (g.heap->len > 0
          && (next == end || heap_before (&g_array_index (g.heap, HeapEntry, 0), &e)))
        e = heap_pop (g.heap);
      else
        {
          /* The walk is sequential but every live entry leads to a random
           * pair, sum and parents: ask for them a few entries ahead. */
          if (end - next > 16)
            {
              guint32 t = next[16];
              if (is_live (&g, t))
                {
                  prefetch (&g.pairs[t]);
                  prefetch (&g.sum[t]);
                }
              t = next[6];
              if (is_live (&g, t))
                {
                  prefetch (&g.parent[g.pairs[t].i]);
                  prefetch (&g.parent[g.pairs[t].j]);
                }
            }
          next++;
        }
      guint32 index;
      if (e.ticket < g.n_first)
        {
          if (!is_live (&g, e.ticket))
            continue;
          index = e.ticket;
        }
      else if ((index = g_array_index (g.later, guint32, e.ticket - g.n_first)) == NO_SLOT)
        continue;
      unqueue (&g, index);
      guint32 a = find (g.parent, input->pairs[index].i),
              b = find (g.parent, input->pairs[index].j);
      double link = g.sum[index] / ((double) g.size[a] * g.size[b]);
      if (link < threshold)
        continue;
      /* Queued values are upper bounds; within (1 + epsilon) of the best is
       * close enough to merge (approximate average linkage), further below
       * it goes back with its true value. */
      if (link * (1.0 + epsilon) < e.value)
        {
          queue (&g, index, link);
          continue;
        }
      if (!may_merge (&g, a, b))
        {
          /* Refused: a conflict never goes away as clusters grow, so the
           * slot stays unqueued until it absorbs a queued one. */
          continue;
        }
      merge (&g, a, b);
    }
  g_free (order);

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
  g_array_unref (g.later);
  g_array_unref (g.values);
  g_hash_table_unref (g.later_of);
  g_free (g.has_later);
  g_clear_pointer (&g.grown, g_hash_table_unref);
  g_free (g.parent);
  g_free (g.size);
  g_free (g.photo_ix);
  g_free (g.photos);
  g_free (g.list);
  g_free (g.mark);
  g_free (g.first);
  g_free (g.ifirst);
  g_free (g.owner);
  g_free (g.csr);
  g_array_unref (g.scratch);
  g_free (g.pin);
  g_free (g.excluded);
  g_free (g.sum);
  g_free (g.dead);
  g_free (g.live);
}

/* --- the pair graph's components, side by side ----------------------------------------------- */

/* A merge reads and writes only the slots, parents and queue entries of one
 * connected component of the pair graph (pins join components: their faces
 * are one cluster first), and the order between queue entries is a total
 * one (value, then ticket; a ticket numbers pairs in their order), so a
 * component clustered on its own pairs, kept in their order, with its faces
 * numbered in their order, makes the merges it makes among all the others
 * (what cluster_again () relies on too). Each component is then one job:
 * jobs share nothing but the input, and each writes only its own faces'
 * roots, so the people do not depend on the threads or the order the jobs
 * run in (test-cluster-identity: 1, 2 and 4 threads). */
typedef struct
{
  const LkClusterInput *input;
  const GPtrArray *pins;
  double threshold;
  double epsilon;
  const guint32 *ifirst; /* the pairs where face f is first: ifirst[f] … ifirst[f + 1] */
  const guint32 *group;  /* per face: its job (G_MAXUINT32: none, a face alone) */
  const guint32 *local;  /* per face: its place among its job's faces */
  const guint32 *start;  /* job j's faces are faces[start[j]] … faces[start[j + 1]], ascending */
  const guint32 *faces;
  const guint32 *pin_start; /* job j's pins (indices, in order): pin_ix[pin_start[j]] … */
  const guint32 *pin_ix;
  const guint32 *order; /* jobs, most pairs first, so the last job to start is a small one */
  guint n_jobs;
  gint next; /* atomic: the next place in order */
  guint32 *root;
} Parts;

static void
cluster_part (Parts *parts, guint32 j)
{
  const LkClusterInput *input = parts->input;
  const guint32 *faces = parts->faces + parts->start[j];
  gsize m = parts->start[j + 1] - parts->start[j], n_pairs = 0;
  for (gsize k = 0; k < m; k++)
    n_pairs += parts->ifirst[faces[k] + 1] - parts->ifirst[faces[k]];
  /* The faces ascend and each one's pairs are a range of the pair list, so
   * this copy keeps the pairs' order. */
  LkPair *pairs = g_new (LkPair, MAX (n_pairs, 1));
  guint64 *photo = input->photo ? g_new (guint64, m) : NULL;
  gsize at = 0;
  for (gsize k = 0; k < m; k++)
    {
      if (photo)
        photo[k] = input->photo[faces[k]];
      for (guint32 e = parts->ifirst[faces[k]]; e < parts->ifirst[faces[k] + 1]; e++)
        pairs[at++] = (LkPair){ .i = (guint32) k,
                                .j = parts->local[input->pairs[e].j],
                                .probability = input->pairs[e].probability };
    }
  LkClusterInput in = { .n_faces = m, .photo = photo, .pairs = pairs, .n_pairs = n_pairs };
  /* The job's pins, in their order, on its faces; an excluded face of
   * another component can never meet the pin. */
  g_autoptr (GPtrArray) pins = NULL;
  if (parts->pin_start[j + 1] > parts->pin_start[j])
    {
      pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
      for (guint32 p = parts->pin_start[j]; p < parts->pin_start[j + 1]; p++)
        {
          const LkPin *pin = g_ptr_array_index (parts->pins, parts->pin_ix[p]);
          LkPin *mine = lk_pin_new (pin->id);
          for (guint k = 0; k < pin->faces->len; k++)
            g_array_append_val (mine->faces, parts->local[g_array_index (pin->faces, guint32, k)]);
          for (guint k = 0; k < pin->excluded->len; k++)
            {
              guint32 f = g_array_index (pin->excluded, guint32, k);
              if (parts->group[f] == j)
                g_array_append_val (mine->excluded, parts->local[f]);
            }
          g_ptr_array_add (pins, mine);
        }
    }
  guint32 *root = g_new (guint32, m);
  cluster_average (&in, pins, parts->threshold, parts->epsilon, root);
  for (gsize k = 0; k < m; k++)
    parts->root[faces[k]] = faces[root[k]];
  g_free (root);
  g_free (photo);
  g_free (pairs);
}

static gpointer
parts_worker (gpointer data)
{
  Parts *parts = data;
  for (;;)
    {
      guint k = (guint) g_atomic_int_add (&parts->next, 1);
      if (k >= parts->n_jobs)
        return NULL;
      cluster_part (parts, parts->order[k]);
    }
}

static gint
compare_jobs (gconstpointer x, gconstpointer y, gpointer data)
{
  const guint64 *n_pairs = data;
  guint32 a = *(const guint32 *) x, b = *(const guint32 *) y;
  if (n_pairs[a] != n_pairs[b])
    return n_pairs[a] > n_pairs[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* cluster_average (), the same roots, one connected component (joined by
 * pins) at a time on `threads` threads (0: every core). The whole pair
 * graph at once when its pairs are not ordered by their first face (each
 * component's pairs are then no set of ranges) or when one component holds
 * more than half the pairs: its copy would cost as much memory as the
 * clustering it spares, and the others could not keep a second thread
 * busy for long. */
static void
cluster_components (const LkClusterInput *input, const GPtrArray *pins, double threshold,
                    double epsilon, guint threads, guint32 *root)
{
  gsize n = input->n_faces;
  gboolean by_first = input->n_pairs > 0;
  for (gsize k = 1; k < input->n_pairs && by_first; k++)
    by_first = input->pairs[k - 1].i <= input->pairs[k].i;
  if (!by_first)
    {
      cluster_average (input, pins, threshold, epsilon, root);
      return;
    }

  /* Components, named by their smallest face. */
  g_autofree guint32 *c = g_new (guint32, n);
  g_autofree guint32 *ifirst = g_new0 (guint32, n + 1);
  for (gsize f = 0; f < n; f++)
    c[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      ifirst[p->i + 1]++;
      guint32 a = find (c, p->i), b = find (c, p->j);
      if (a != b)
        c[MAX (a, b)] = MIN (a, b);
    }
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 1; m < pin->faces->len; m++)
        {
          guint32 a = find (c, g_array_index (pin->faces, guint32, 0));
          guint32 b = find (c, g_array_index (pin->faces, guint32, m));
          if (a != b)
            c[MAX (a, b)] = MIN (a, b);
        }
    }
  /* A job for each component of two faces or more, numbered by its
   * smallest face; a face alone is its own root. */
  g_autofree guint32 *group = g_new (guint32, n);
  g_autofree guint32 *local = g_new (guint32, n);
  g_autoptr (GArray) start = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) n_pairs = g_array_new (FALSE, TRUE, sizeof (guint64));
  for (gsize f = 0; f < n; f++)
    {
      ifirst[f + 1] += ifirst[f];
      c[f] = c[c[f]]; /* c[f] <= f, and c[c[f]] is already a root */
      group[f] = G_MAXUINT32;
      local[f] = 0;
    }
  for (gsize f = 0; f < n; f++)
    local[c[f]]++; /* faces per component, at its root for now */
  for (gsize f = 0; f < n; f++)
    if (c[f] == f && local[f] > 1)
      {
        group[f] = start->len;
        g_array_append_val (start, local[f]);
      }
  guint n_jobs = start->len;
  g_array_set_size (n_pairs, n_jobs);
  guint64 largest = 0;
  {
    guint32 at = 0, zero = 0;
    for (guint j = 0; j < n_jobs; j++)
      {
        guint32 len = g_array_index (start, guint32, j);
        g_array_index (start, guint32, j) = at;
        at += len;
      }
    g_array_append_val (start, zero);
    g_array_index (start, guint32, n_jobs) = at;
  }
  g_autofree guint32 *faces = g_new (guint32, MAX (n, 1));
  {
    g_autofree guint32 *fill = g_memdup2 (start->data, MAX (n_jobs, 1) * sizeof (guint32));
    for (gsize f = 0; f < n; f++)
      {
        guint32 j = group[c[f]];
        if (j == G_MAXUINT32)
          {
            root[f] = (guint32) f;
            continue;
          }
        group[f] = j;
        local[f] = fill[j] - g_array_index (start, guint32, j);
        faces[fill[j]++] = (guint32) f;
        g_array_index (n_pairs, guint64, j) += ifirst[f + 1] - ifirst[f];
      }
  }
  for (guint j = 0; j < n_jobs; j++)
    largest = MAX (largest, g_array_index (n_pairs, guint64, j));
  if (largest > input->n_pairs / 2)
    {
      cluster_average (input, pins, threshold, epsilon, root);
      return;
    }

  /* Each job's pins, in their order. */
  g_autofree guint32 *pin_start = g_new0 (guint32, n_jobs + 1);
  g_autofree guint32 *pin_ix = g_new (guint32, MAX (pins ? pins->len : 0, 1));
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      /* A pin of a face alone (no job) asks nothing of the clustering. */
      if (pin->faces->len > 0 && group[g_array_index (pin->faces, guint32, 0)] != G_MAXUINT32)
        pin_start[group[g_array_index (pin->faces, guint32, 0)] + 1]++;
    }
  for (guint j = 0; j < n_jobs; j++)
    pin_start[j + 1] += pin_start[j];
  {
    g_autofree guint32 *fill = g_memdup2 (pin_start, (n_jobs + 1) * sizeof (guint32));
    for (guint k = 0; pins && k < pins->len; k++)
      {
        const LkPin *pin = g_ptr_array_index (pins, k);
        if (pin->faces->len > 0 && group[g_array_index (pin->faces, guint32, 0)] != G_MAXUINT32)
          pin_ix[fill[group[g_array_index (pin->faces, guint32, 0)]]++] = k;
      }
  }
  g_autofree guint32 *order = g_new (guint32, MAX (n_jobs, 1));
  for (guint j = 0; j < n_jobs; j++)
    order[j] = j;
  g_qsort_with_data (order, (gint) n_jobs, sizeof (guint32), compare_jobs, n_pairs->data);

  Parts parts = {
    .input = input,
    .pins = pins,
    .threshold = threshold,
    .epsilon = epsilon,
    .ifirst = ifirst,
    .group = group,
    .local = local,
    .start = (const guint32 *) start->data,
    .faces = faces,
    .pin_start = pin_start,
    .pin_ix = pin_ix,
    .order = order,
    .n_jobs = n_jobs,
    .root = root,
  };
  if (threads == 0)
    threads = g_get_num_processors ();
  threads = MIN (threads, MAX (n_jobs, 1));
  g_autofree GThread **helpers = g_new0 (GThread *, threads);
  for (guint t = 1; t < threads; t++)
    helpers[t] = g_thread_try_new ("lk-cluster", parts_worker, &parts, NULL);
  parts_worker (&parts);
  for (guint t = 1; t < threads; t++)
    if (helpers[t])
      g_thread_join (helpers[t]);
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
      guint32 a = find (c, p->i), b = find (c, p->j);
      if (a != b)
        c[MAX (a, b)] = MIN (a, b);
    }
  for (gsize f = 0; f < input->n_faces; f++)
    c[f] = find (c, (guint32) f);
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
      PinPlace at = { find (joined, component[g_array_index (pin->faces, guint32, 0)]), k };
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
            guint32 a = find (joined, component[g_array_index (pin->faces, guint32, 0)]);
            guint32 b = find (joined, component[g_array_index (pin->faces, guint32, m)]);
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
    n_again += again[f] = dirty[find (joined, component[f])];
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
  /* A memo is made on pairs already checked. */
  if (!check_input (input, pins, !reuse, error))
    return NULL;
  if (options->linkage != LK_LINKAGE_AVERAGE && pins != NULL && pins->len > 0)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the baseline clusterings take no review decisions (%u given)", pins->len);
      return NULL;
    }
  if (!(threshold <= 1.0))
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID,
                   "the linkage threshold is %g; it must be in (0, 1]", threshold);
      return NULL;
    }
  if (options->linkage != LK_LINKAGE_AVERAGE && options->linkage != LK_LINKAGE_SINGLE
      && options->linkage != LK_LINKAGE_IMMICH)
    {
      g_set_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID, "unknown linkage %d",
                   (int) options->linkage);
      return NULL;
    }

  g_autofree guint8 *is_dismissed = NULL;
  if (dismissed != NULL && dismissed->len > 0)
    {
      is_dismissed = g_new0 (guint8, MAX (input->n_faces, 1));
      for (guint k = 0; k < dismissed->len; k++)
        if (g_array_index (dismissed, guint32, k) < input->n_faces)
          is_dismissed[g_array_index (dismissed, guint32, k)] = 1;
    }

  g_autofree guint32 *root = g_new (guint32, MAX (input->n_faces, 1));
  gboolean reused
      = reuse && cluster_again (*memo, input, pins, is_dismissed, options->threads, root);
  if (!reused)
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
  LkPeople *people
      = build_people (input, options->linkage == LK_LINKAGE_AVERAGE ? pins : NULL, root);
  if (is_dismissed != NULL)
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

  if (memo != NULL)
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
          m->root = g_steal_pointer (&root);
        }
      else
        {
          g_ptr_array_set_size (m->pins, 0);
          memcpy (m->root, root, input->n_faces * sizeof (guint32));
        }
      for (guint k = 0; pins && k < pins->len; k++)
        g_ptr_array_add (m->pins, lk_pin_copy (g_ptr_array_index (pins, k)));
      m->reused = reused;
      *memo = m;
    }
  return people;
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

  /* A face dismissed as no face is never suggested: it counts as held. */
  for (gsize k = 0; k < people->n_dismissed; k++)
    held[people->dismissed[k]] = 1;

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
