/* lk-scan.c — every face pair that could be the same person, exactly
 *
 * Clustering only ever asks whether a pair is *above* the bar, and in a real
 * library the answer is no for well over 99% of pairs (the seed's 1,813-face
 * reference library: 7,875 of 1.6 million). So this answers only that
 * question and returns the sparse list: memory O(edges), never an n × n
 * matrix — 2.5 GB at 25,000 faces — and not even a row of one per thread: a
 * thread holds one tile's hits (LK_SCAN_BLOCK × LK_SCAN_COLUMN_TILE of them),
 * or with a first pass on a large scan up to LK_SCAN_DEFERRED_HITS survivors
 * (twice: they are sorted) and a count per face.
 *
 * Exact, not approximate. An approximate nearest-neighbour index misses some
 * true neighbours, and a missed neighbour is a face that silently never joins
 * its person. The answer is the canonical double loop's, pair for pair and
 * bit for bit: every kernel computes each cosine in one summation order
 * (lk-dot-canonical.h), so neither the processor nor the thread count can
 * change it. Every pair within LK_SCAN_NEAR_BOUNDARY of its bar is still
 * counted in near_boundary, because float arithmetic in any order — that one
 * included — can put such a pair on the other side of the exact answer.
 *
 * An exact index was tried by the seed, measured and removed, recorded here so
 * nobody rediscovers it: IVF cells with the triangle-inequality bound
 * angle(x, y) >= angle(c_P, c_Q) - radius(P) - radius(Q) skip a cell pair when
 * the bound falls below the bar. On the 1,813-face reference library at √n = 43
 * cells it pruned 0 of 946 cell pairs: median pair angle 88.5°, bar 66.2°,
 * median cell radius 80.4°, median centroid separation 85.0°. Excluding a
 * typical cell pair needs radius(P) + radius(Q) < 19°, but two photographs of
 * one person sit 36–60° apart, so even a perfect one-identity cell is three
 * times too wide. 512-d embeddings are near-orthogonal; no ball partition
 * bites. The scan stays exhaustive — O(n²) time, O(edges) memory — and the
 * effort goes where it pays:
 *
 * - the cheap rejection: one compare against the loosest cosine that could
 *   clear the bar for any pair of the set's crop sizes, which takes well over
 *   99% of pairs before the sigmoid is ever evaluated;
 * - tiling: rows in blocks of LK_SCAN_BLOCK, columns in tiles of
 *   LK_SCAN_COLUMN_TILE, upper triangle only. Walking j from i + 1 to n one row
 *   at a time streams every embedding past the core once per row (336 GB for
 *   18,000 faces); a tile in L2 is read once per row *block* (the gate
 *   "scan-tiling" races the two). The register-blocked kernels pack each
 *   tile's columns into panels and reuse a panel for every row of the tile,
 *   so the block's height is what pays for the packing: 256 rows (512 KiB
 *   at 512-d, a common L2) rather than 64 make the AVX2 tile about 1.5× as
 *   fast; 512 gain nothing the noise lets one see;
 * - SIMD kernels chosen once per scan (lk-kernels.h), the arithmetic of a
 *   tile behind one function pointer per tile, not per pair;
 * - a low-precision first pass (lk-prefilter.h, LkScanOptions.prefilter):
 *   int16 on AVX2, bf16 on AVX-512 BF16, int8 on AVX-512 VNNI, rejecting a
 *   pair only when it is below the kernel's bar by more than a proven
 *   bound, so every pair the kernel would report reaches the kernel; each
 *   is faster than float32 alone where it runs (likeness-cli gates --gate
 *   scan-first-pass; docs/benchmarks.md);
 * - the first pass's survivors re-checked in float32 a block of 512 rows at
 *   a time, sorted by column, so that a column's float row is fetched once
 *   for every row that survives with it (scan_block_deferred);
 * - which kernel and which pass: the pair measured fastest on this machine
 *   (lk-tune.h) when both are "auto": the fastest pair differs between
 *   CPUs and is not always the widest kernel (gate "auto");
 * - threads: blocks handed out dynamically from an atomic counter, each
 *   block's pairs kept in its own slot and stitched in block order, so the
 *   output never depends on which thread got there first;
 * - the pair list built once: a block is sorted straight into its place at
 *   the end of the result as soon as it and every block before it are done
 *   (blocks finish nearly in order, so few wait), and its own list freed.
 *   Joining every block's list at the end held the pairs twice, about
 *   doubling the scan's own memory above the loaded library (bench-scale
 *   --child scan, hwm − rss_loaded).
 *
 * Measured with tests/bench-scan.c and tests/bench-scale.c in CPU-seconds,
 * which a shared machine's load disturbs far less than wall time, against
 * OpenBLAS SGEMM + threshold in the same run: the AVX2 kernel alone a
 * little faster than it, the portable kernel about a tenth of AVX2's speed
 * (docs/benchmarks.md; the canonical scalar chain is what the portable
 * kernel pays for its bit-for-bit answer, lk-kernel-portable.c).
 *
 * Keeping the window responsive while every core works. The seed left one core
 * idle. On the two-core machines this is developed on, that halves the scan's
 * speed for the sake of a main loop that is asleep almost all the time. So a
 * scan behind a window asks for `background`: every worker thread lowers its
 * own priority to nice +10 (Linux schedules threads individually and
 * setpriority on a thread id affects only that thread). The CFS weight of nice
 * +10 is 110 against 1024 for the main thread's nice 0, so when the main loop
 * wakes for an input event or a frame it gets the CPU within a scheduler tick
 * instead of waiting behind the workers, and while it sleeps the workers still
 * own every core. The calling thread (a GTask thread) only waits and reports
 * progress, so it never needs lowering — and could not be raised back, since
 * an unprivileged thread may not lower its nice value again. The CLI and the
 * benchmarks do not ask for it: their user asked for the answer now.
 *
 * Progress is reported by the calling thread alone — serialised by
 * construction — from a count of finished pairs that only grows, at most once
 * per LK_SCAN_PROGRESS_INTERVAL, then exactly 1.0 once on success.
 */
#include "config.h"

#include "lk-scan.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "timing/lk-cpu.h"
#include "lk-kernels.h"
#include "lk-prefilter.h"
#include "lk-tune.h"

/* The cheap rejection runs at (loosest bar - this), not at the bar itself, so
 * that every pair within LK_SCAN_NEAR_BOUNDARY of its bar reaches the exact
 * check and is counted; the extra 1e-5 absorbs rounding the bar to float. */
#define KERNEL_MARGIN (2 * LK_SCAN_NEAR_BOUNDARY)

/* Thirty progress calls a second: smooth to the eye, and a caller that
 * forwards each one to a main loop does not flood it. */
#define LK_SCAN_PROGRESS_INTERVAL (G_USEC_PER_SEC / 30)

/* Worker threads' nice value in a background scan: low enough that the main
 * loop preempts them at once (CFS weight 110 vs 1024), not 19, so that other
 * background work on the machine does not starve the scan either. */
#define BACKGROUND_NICE 10

/* Faces from which the pair list is reserved in address space up front (see
 * lk_scan), and how much: just above glibc's DEFAULT_MMAP_THRESHOLD_MAX. */
#define LARGE_SCAN    10000
#define LARGE_RESERVE ((gsize) 32 * 1024 * 1024 + 4096)

typedef struct
{
  const LkFaces *faces;
  const LkCalibration *cal;
  double bar;
  const LkKernel *kernel;
  LkPrefilter *prefilter; /* NULL: the kernel's tile alone */
  float tau;              /* handed to the kernel */
  double *log2_crop;      /* log2 (crop_px[i]) of every face, for check_hit */
  gboolean has_boundary;  /* a cosine boundary exists: near-boundary pairs are counted */
  double logit_bar;
  gsize column_tile;
  gsize hit_capacity;
  gsize block_rows;  /* LK_SCAN_BLOCK, or deferred_rows */
  gboolean deferred; /* survivors re-checked a block at a time (scan_block_deferred) */
  gsize deferred_hits;
  gsize row_begin; /* the rows scanned: [row_begin, row_end), in blocks from row_begin */
  gsize row_end;
  gsize column_begin; /* LkScanOptions.column_begin */
  gsize n_blocks;
  guint64 total_pairs;

  /* One slot per block, written by the thread that scanned it; taken (and
   * freed) under `lock` by whichever thread stitches it into `pairs`. */
  GArray **block_pairs;
  GArray **block_near; /* the block's near-boundary pairs, like block_pairs */
  GArray *pairs;       /* blocks [0, stitched) in order, under `lock` */
  gsize stitched;
  GArray *near_pairs; /* of the stitched blocks, under `lock` */

  atomic_size_t next_block;
  atomic_uint_fast64_t done_pairs;
  /* Pairs of the finished blocks, and whether they passed max_pairs. */
  guint64 max_pairs;
  atomic_uint_fast64_t found_pairs;
  atomic_bool over_budget;
  GCancellable *cancellable;
  gboolean background;

  GMutex lock;
  GCond cond;
  guint running;

  /* Touched by the calling thread alone. */
  LkProgressFunc progress;
  gpointer progress_data;
  guint64 reported_pairs;
  gint64 last_report;
} Scan;

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-scan-error-quark, lk_scan_error)
/* clang-format on */

static gboolean
calibration_is_finite (const LkCalibration *cal)
{
  return isfinite (cal->a) && isfinite (cal->b) && isfinite (cal->w_size);
}

static void
block_rows (const Scan *s, gsize b, gsize *from, gsize *to)
{
  *from = s->row_begin + b * s->block_rows;
  *to = MIN (*from + s->block_rows, s->row_end);
}

/* Pairs (i, j > i, j >= column_begin) of rows [from, to) among n faces. */
static guint64
rows_pair_count (gsize n, gsize column_begin, gsize from, gsize to)
{
  guint64 count = 0;

  for (gsize i = from; i < to; i++)
    count += n - MAX (i + 1, MIN (column_begin, n));
  return count;
}

static guint64
block_pair_count (const Scan *s, gsize b)
{
  gsize from, to;

  block_rows (s, b, &from, &to);
  return rows_pair_count (s->faces->n, s->column_begin, from, to);
}

/* lk_scan_probability with log2 (min_crop) given: the same expression on
 * the same values, so the same bits. */
static inline double
probability (const LkCalibration *calibration, double cos, double log2_min_crop)
{
  double z = calibration->a * cos + calibration->b + calibration->w_size * log2_min_crop;
  return 1.0 / (1.0 + exp (-z));
}

/* The exact decision for a pair the kernel let through. Out of line on
 * purpose: it runs for candidates only. Its probability is the expression
 * lk_scan_probability() evaluates (`probability` above, with log2 of the
 * smaller crop looked up rather than recomputed), which is what makes a
 * reference loop over the public function bit-identical. */
static void
check_hit (const Scan *s, const LkHit *hit, GArray *out, GArray **near)
{
  const LkFaces *f = s->faces;
  /* The face MIN (crop_i, crop_j) takes, so that its log2 is looked up: the
   * same double as log2 (min_crop), two libm calls a pair fewer. */
  guint32 small = f->crop_px[hit->i] < f->crop_px[hit->j] ? hit->i : hit->j;
  double log2_min_crop = s->log2_crop[small];
  double p = probability (s->cal, hit->cos, log2_min_crop);

  if (s->has_boundary)
    {
      double boundary = (s->logit_bar - s->cal->b - s->cal->w_size * log2_min_crop) / s->cal->a;
      if (fabs ((double) hit->cos - boundary) <= LK_SCAN_NEAR_BOUNDARY)
        {
          LkPair pair = { hit->i, hit->j, (float) p };
          if (*near == NULL)
            *near = g_array_new (FALSE, FALSE, sizeof (LkPair));
          g_array_append_val (*near, pair);
        }
    }

  if (p >= s->bar)
    {
      LkPair pair = { hit->i, hit->j, (float) p };
      g_array_append_val (out, pair);
    }
}

/* Within a block, tiles arrive in ascending column order with the rows inside
 * them, so a row's pairs are already in ascending j but the rows interleave.
 * A stable counting sort by row restores (i, j) order in O(pairs), written
 * straight to the end of the result. */
static void
sort_into (GArray *result, const GArray *pairs, gsize from, gsize rows)
{
  G_STATIC_ASSERT (LK_SCAN_DEFERRED_BLOCK >= LK_SCAN_BLOCK);
  gsize start[LK_SCAN_DEFERRED_BLOCK + 1] = { 0 };
  const LkPair *p = (const LkPair *) pairs->data;
  guint base = result->len;

  if (pairs->len == 0)
    return; /* result->data may still be NULL: no pointer arithmetic on it */
  for (guint k = 0; k < pairs->len; k++)
    start[p[k].i - from + 1]++;
  for (gsize r = 0; r < rows; r++)
    start[r + 1] += start[r];
  g_array_set_size (result, base + pairs->len);
  LkPair *out = &g_array_index (result, LkPair, base);
  /* The list's new pages in one call, not a fault each (lk-cpu.c: the faults
   * were about 5 % of a scan with the int8 panels). */
  lk_cpu_populate_for_write (out, pairs->len * sizeof (LkPair));
  for (guint k = 0; k < pairs->len; k++)
    out[start[p[k].i - from]++] = p[k];
}

/* Moves every finished block that follows the stitched ones into the
 * result, in block order. Called with `lock` held. */
static void
stitch (Scan *s)
{
  while (s->stitched < s->n_blocks && s->block_pairs[s->stitched] != NULL)
    {
      gsize b = s->stitched, from, to;
      block_rows (s, b, &from, &to);
      sort_into (s->pairs, s->block_pairs[b], from, to - from);
      if (s->block_near[b] != NULL)
        sort_into (s->near_pairs, s->block_near[b], from, to - from);
      g_clear_pointer (&s->block_pairs[b], g_array_unref);
      g_clear_pointer (&s->block_near[b], g_array_unref);
      s->stitched++;
      /* Every block still to finish starts at or after this one's end. */
      lk_prefilter_release_below (s->prefilter, to);
    }
}

/* A tile of the scan's faces at its tau, rows and columns still to set. */
static LkTile
scan_tile (const Scan *s, gboolean prefetch_survivors)
{
  const LkFaces *f = s->faces;
  return (LkTile){
    .embeddings = f->embeddings,
    .dim = f->dim,
    .photo = f->photo,
    .gallery = f->gallery,
    .tau = s->tau,
    .prefetch_survivors = prefetch_survivors,
  };
}

/* What one thread scans with: a tile's hits, and with a first pass its
 * deferred survivors (scan_block_deferred). */
typedef struct
{
  LkHit *hits;      /* hit_capacity */
  LkHit *survivors; /* survivor_capacity, and as many again to sort them into */
  LkHit *sorted;
  gsize survivor_capacity;
  guint32 *count; /* block_rows + 1 */
} Worker;

/* Appends the block's survivors whose canonical cosine reaches tau to its
 * pairs, as a tile's hits would be: sorted by row first (a stable counting
 * sort over the block's rows, so a row's pairs arrive in ascending j, as
 * sort_into expects), then re-checked by the kernel in that order, where the
 * x86 kernels take a run of pairs sharing their row 24 at a time
 * (lk-kernel-tile.h). Sorted by column instead, each column's float row
 * would be fetched once for all the rows surviving with it; by row the
 * re-check is about 1.5× faster (`bench-recheck`), and the whole scan a
 * little faster than with the tile-at-a-time re-check (`bench-scan`;
 * docs/benchmarks.md). */
static void
recheck_deferred (Scan *s, Worker *w, gsize from, gsize n_survivors, GArray *out, GArray **near)
{
  const LkFaces *f = s->faces;
  gsize rows = s->block_rows; /* every survivor's i is in [from, from + rows) */
  guint32 *count = w->count;

  if (n_survivors == 0)
    return;
  memset (count, 0, (rows + 1) * sizeof (guint32));
  for (gsize h = 0; h < n_survivors; h++)
    count[w->survivors[h].i - from + 1]++;
  for (gsize r = 0; r < rows; r++)
    count[r + 1] += count[r];
  for (gsize h = 0; h < n_survivors; h++)
    w->sorted[count[w->survivors[h].i - from]++] = w->survivors[h];
  s->kernel->recheck (f->embeddings, f->dim, w->sorted, n_survivors);
  for (gsize h = 0; h < n_survivors; h++)
    if (w->sorted[h].cos >= s->tau)
      check_hit (s, &w->sorted[h], out, near);
}

/* The pair budget, checked after every tile or re-check: one block of a
 * flipped calibration alone holds its rows × n pairs. */
static inline gboolean
over_budget_now (Scan *s, GArray *out)
{
  return out->len > 0 && atomic_load (&s->found_pairs) + out->len > s->max_pairs;
}

/* A block with a first pass: its survivors are gathered over every tile of
 * its LK_SCAN_DEFERRED_BLOCK rows (in tiles of LK_SCAN_BLOCK rows, as the
 * pass walks them) and re-checked together, sorted by row
 * (recheck_deferred: a row's survivors from every column tile make one run,
 * which a 64-column tile could not), whenever the buffer is full and at the
 * block's end. One tile at a time, each survivor's float row (2 KiB at
 * 512-d) comes from memory for that survivor alone — about as many rows as
 * there are pairs — and the prefetches cost the pass itself a tenth.
 * Gathered, a row fetched serves every survivor that needs it. 512 rows:
 * 256 gather measurably less, more win no time in whole scans (the buffer
 * fills within a few hundred rows), and a block's pairs wait in its own
 * list until the blocks before it are stitched, so at 100,000 faces 1,024
 * rows put the scan's own memory over its bound (pairs × 12 B + threads ×
 * 4 MiB + 16 MB) where 512 keep it under (bench-scale --child scan).
 * Against the tile-at-a-time re-check in whole scans the gain is within a
 * shared machine's noise (bench-scan's arm "scan auto tiles";
 * docs/benchmarks.md). */
static gboolean
scan_block_deferred (Scan *s, gsize b, Worker *w, GArray *out, GArray **near)
{
  gsize n = s->faces->n, from, to, kept = 0;
  LkTile tile = scan_tile (s, FALSE);

  block_rows (s, b, &from, &to);
  for (gsize rows = from; rows < to; rows += LK_SCAN_BLOCK)
    {
      gsize rows_end = MIN (rows + LK_SCAN_BLOCK, to);
      for (gsize col = MAX (rows, s->column_begin); col < n; col += s->column_tile)
        {
          tile.col_begin = col;
          tile.col_end = MIN (col + s->column_tile, n);
          gsize step
              = (rows_end - rows) * (tile.col_end - col) <= s->hit_capacity ? rows_end - rows : 1;
          for (gsize row = rows; row < rows_end; row += step)
            {
              tile.row_begin = row;
              tile.row_end = MIN (row + step, rows_end);
              if (kept + (tile.row_end - row) * (tile.col_end - col) > w->survivor_capacity)
                {
                  recheck_deferred (s, w, from, kept, out, near);
                  kept = 0;
                  if (G_UNLIKELY (over_budget_now (s, out)))
                    return FALSE;
                }
              kept += lk_prefilter_survivors (s->prefilter, &tile, w->survivors + kept);
            }
        }
    }
  recheck_deferred (s, w, from, kept, out, near);
  return !over_budget_now (s, out);
}

/* Rows [from, to) of block b against every column after them. FALSE when
 * the pair budget ran out first (the block is dropped). */
static gboolean
scan_block (Scan *s, gsize b, Worker *w)
{
  const LkFaces *f = s->faces;
  gsize n = f->n;
  gsize from, to;
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));
  GArray *near = NULL;
  LkTile tile = scan_tile (s, TRUE);

  gboolean within_budget = TRUE;
  block_rows (s, b, &from, &to);
  if (s->deferred)
    within_budget = scan_block_deferred (s, b, w, out, &near);
  for (gsize col = MAX (from, s->column_begin); within_budget && !s->deferred && col < n;
       col += s->column_tile)
    {
      tile.col_begin = col;
      tile.col_end = MIN (col + s->column_tile, n);
      /* A tile whose hits could overflow the buffer (only the untiled walk's
       * whole rows) goes one row at a time; hit_capacity >= column_tile. */
      gsize step = (to - from) * (tile.col_end - col) <= s->hit_capacity ? to - from : 1;
      for (gsize row = from; within_budget && row < to; row += step)
        {
          tile.row_begin = row;
          tile.row_end = MIN (row + step, to);
          gsize n_hits = s->prefilter != NULL
                             ? lk_prefilter_tile (s->prefilter, s->kernel, &tile, w->hits)
                             : s->kernel->tile (&tile, w->hits);
          for (gsize h = 0; h < n_hits; h++)
            check_hit (s, &w->hits[h], out, &near);
          within_budget = !over_budget_now (s, out);
        }
    }
  if (G_UNLIKELY (!within_budget))
    {
      atomic_store (&s->over_budget, true);
      g_array_unref (out);
      if (near != NULL)
        g_array_unref (near);
      return FALSE;
    }

  g_mutex_lock (&s->lock);
  s->block_pairs[b] = out;
  s->block_near[b] = near;
  guint64 len = out->len;
  stitch (s);
  g_mutex_unlock (&s->lock);
  if (atomic_fetch_add (&s->found_pairs, len) + len > s->max_pairs)
    atomic_store (&s->over_budget, true);
  return TRUE;
}

static void
report_progress (Scan *s)
{
  if (s->progress == NULL || g_cancellable_is_cancelled (s->cancellable))
    return;
  guint64 done = atomic_load (&s->done_pairs);
  /* The final 1.0 is lk_scan's, after every block is in. */
  if (done == s->reported_pairs || done >= s->total_pairs)
    return;
  gint64 now = g_get_monotonic_time ();
  if (s->reported_pairs > 0 && now - s->last_report < LK_SCAN_PROGRESS_INTERVAL)
    return;
  s->reported_pairs = done;
  s->last_report = now;
  s->progress ((double) done / (double) s->total_pairs, s->progress_data);
}

/* The loop every worker runs, and the calling thread too when it scans alone
 * (then `inline_progress` lets it report between blocks). Cancellation is
 * checked before every block, so it is honoured within one block. */
static void
scan_blocks (Scan *s, gboolean inline_progress)
{
  Worker w = { g_new (LkHit, s->hit_capacity) };

  if (s->deferred)
    {
      w.survivor_capacity = MAX (s->deferred_hits, s->hit_capacity);
      w.survivors = g_new (LkHit, 2 * w.survivor_capacity);
      w.sorted = w.survivors + w.survivor_capacity;
      w.count = g_new (guint32, s->block_rows + 1);
    }
  while (!g_cancellable_is_cancelled (s->cancellable) && !atomic_load (&s->over_budget))
    {
      gsize b = atomic_fetch_add (&s->next_block, 1);
      if (b >= s->n_blocks)
        break;
      if (!scan_block (s, b, &w))
        break;
      atomic_fetch_add (&s->done_pairs, block_pair_count (s, b));
      if (inline_progress)
        report_progress (s);
      else
        {
          g_mutex_lock (&s->lock);
          g_cond_signal (&s->cond);
          g_mutex_unlock (&s->lock);
        }
    }
  g_free (w.hits);
  g_free (w.survivors);
  g_free (w.count);
}

static gpointer
worker_main (gpointer data)
{
  Scan *s = data;

#ifdef __linux__
  /* A hint, not a requirement: where it is refused the scan is still right. */
  if (s->background)
    (void) setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), BACKGROUND_NICE);
#endif
  scan_blocks (s, FALSE);

  g_mutex_lock (&s->lock);
  s->running--;
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
  return NULL;
}

/* Spawns up to `threads` workers, reports progress while they run, joins
 * them, and returns how many ran. Falls back to fewer threads (down to the
 * caller alone) if the system refuses to create more. */
static guint
run_pool (Scan *s, guint threads)
{
  g_autoptr (GPtrArray) pool = g_ptr_array_new ();

  g_mutex_lock (&s->lock);
  for (guint t = 0; t < threads; t++)
    {
      GThread *thread = g_thread_try_new ("lk-scan", worker_main, s, NULL);
      if (thread == NULL)
        break;
      s->running++;
      g_ptr_array_add (pool, thread);
    }
  g_mutex_unlock (&s->lock);

  if (pool->len == 0)
    {
      scan_blocks (s, TRUE);
      return 1;
    }

  g_mutex_lock (&s->lock);
  while (s->running > 0)
    {
      g_cond_wait_until (&s->cond, &s->lock, g_get_monotonic_time () + LK_SCAN_PROGRESS_INTERVAL);
      g_mutex_unlock (&s->lock);
      report_progress (s);
      g_mutex_lock (&s->lock);
    }
  g_mutex_unlock (&s->lock);

  for (guint t = 0; t < pool->len; t++)
    g_thread_join (g_ptr_array_index (pool, t));
  return pool->len;
}

static gboolean
validate (const LkFaces *f, GError **error)
{
  if (f->n > (gsize) G_MAXUINT32 + 1)
    {
      g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                   "%" G_GSIZE_FORMAT " faces are more than the scan's limit of %" G_GUINT64_FORMAT,
                   f->n, (guint64) G_MAXUINT32 + 1);
      return FALSE;
    }
  if (f->n == 0)
    return TRUE;
  if (f->dim == 0 || f->embeddings == NULL || f->crop_px == NULL || f->photo == NULL
      || f->gallery == NULL)
    {
      g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                   "%" G_GSIZE_FORMAT " faces of dimension %u with %s: the scan needs "
                   "embeddings, crop sizes, photos and gallery flags for every face",
                   f->n, f->dim, f->dim == 0 ? "no floats each" : "a missing array");
      return FALSE;
    }

  for (gsize i = 0; i < f->n; i++)
    {
      if (!(isfinite (f->crop_px[i]) && f->crop_px[i] > 0))
        {
          g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                       "Face %" G_GSIZE_FORMAT " has crop size %g; it must be finite and above 0",
                       i, (double) f->crop_px[i]);
          return FALSE;
        }
      const float *row = f->embeddings + i * f->dim;
      /* Four partial sums, four independent chains: one chain of dependent
       * double adds made this serial check 1 % of a large scan's CPU time,
       * before its threads start; the sum's order moves it by
       * ~dim · 2^-53, nothing against the 0.001 it is checked to. */
      double part[4] = { 0 };
      guint k = 0;
      for (; k + 4 <= f->dim; k += 4)
        for (guint l = 0; l < 4; l++)
          part[l] += (double) row[k + l] * row[k + l];
      for (; k < f->dim; k++)
        part[0] += (double) row[k] * row[k];
      double norm2 = (part[0] + part[1]) + (part[2] + part[3]);
      /* !(x <= y) also catches a NaN or an infinity anywhere in the row. */
      if (!(fabs (sqrt (norm2) - 1.0) <= 1e-3))
        {
          g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                       "Face %" G_GSIZE_FORMAT "'s embedding has L2 norm %g; the scan compares "
                       "unit rows (norm within 0.001 of 1) of finite values",
                       i, sqrt (norm2));
          return FALSE;
        }
    }
  return TRUE;
}

void
lk_faces_from_library (LkFaces *faces, const LkLibrary *library)
{
  faces->embeddings = library->embeddings;
  faces->n = library->count;
  faces->dim = library->dim;
  faces->crop_px = library->crop_px;
  faces->photo = library->photo;
  faces->gallery = library->gallery;
}

double
lk_scan_probability (const LkCalibration *calibration, double cos, double min_crop)
{
  return probability (calibration, cos, log2 (min_crop));
}

/* For a fixed size term the cosine boundary is exact. The size term is not
 * fixed — it varies per pair with the smaller of the two faces — so the safe
 * bound uses whichever crop pushes the boundary lowest: the largest when
 * w_size is positive, the smallest when it is negative. Unlike the seed, the
 * crops are not clamped to 1 first: with a negative w_size a crop under one
 * pixel *raises* the size term, and the clamped bound would drop its pairs.
 * Degenerate calibrations get -INFINITY, a filter that rejects nothing: they
 * are not impossible, only without a boundary, and the right response is to
 * stop pruning rather than guess. */
double
lk_scan_loosest_cosine (const float *crop_px, gsize n, const LkCalibration *calibration,
                        double min_probability)
{
  if (!calibration_is_finite (calibration) || !(calibration->a > 0)
      || !(min_probability > 0 && min_probability < 1))
    return -INFINITY;

  double lo = INFINITY, hi = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!(isfinite (crop_px[i]) && crop_px[i] > 0))
        return -INFINITY;
      lo = MIN (lo, crop_px[i]);
      hi = MAX (hi, crop_px[i]);
    }
  if (n == 0)
    return -INFINITY;

  double extreme = calibration->w_size >= 0 ? hi : lo;
  double logit = log (min_probability / (1 - min_probability));
  double tau = (logit - calibration->b - calibration->w_size * log2 (extreme)) / calibration->a;
  if (isnan (tau))
    return -INFINITY;
  /* A boundary above every cosine legitimately rejects everything; clamping
   * keeps the float conversion finite and only ever loosens the filter. */
  return MIN (tau, 1.0);
}

/* 1,000 pairs per face, and never fewer than 2^24 (16.8 M), because:
 * - a real library is far below it: the make-sample library that mimics one
 *   has 42 pairs per face (765,265 for 18,143 faces);
 * - it leaves room for one very photographed person — k faces of one person
 *   are k²/2 pairs, so one person may hold √(2,000 n) faces: 4,472 of 10,000,
 *   14,142 of 100,000;
 * - what it costs: 12 bytes a pair in the scan's list, and clustering needed
 *   about 70 more (49 M pairs take `people` to 3.5 GB), so the
 *   floor is 1.4 GB at most and 100,000 faces 8 GB at most — what a desktop
 *   can still hold; 2× that would not be;
 * - a calibration with a flipped sign (every pair a candidate) passes it
 *   after 1/500 of n faces' rows — 10,000 faces: 49 M pairs in all, stopped
 *   at 16.8 M (200 MB of list) with a third of the scan done. */
guint64
lk_scan_pair_budget (gsize n)
{
  return MAX ((guint64) n * LK_SCAN_PAIRS_PER_FACE, LK_SCAN_PAIRS_FLOOR);
}

static void
over_budget (const Scan *s, GError **error)
{
  char max[32], faces[32], compared[32];
  g_snprintf (max, sizeof max, "%" G_GUINT64_FORMAT, s->max_pairs);
  g_snprintf (faces, sizeof faces, "%" G_GSIZE_FORMAT, s->faces->n);
  g_snprintf (compared, sizeof compared, "%.1f %%",
              100.0 * (double) atomic_load (&s->done_pairs) / (double) MAX (s->total_pairs, 1));
  g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_TOO_MANY_PAIRS,
               "The scan stopped: more than %s pairs of the %s faces are above the bar, with %s "
               "of the pairs compared. The calibration (a = %g, b = %g, w_size = %g) and "
               "min_probability %g make that many faces the same person; check the library's "
               "calibration (a is positive and b negative in a fitted one)",
               max, faces, compared, s->cal->a, s->cal->b, s->cal->w_size, s->bar);
}

/* The kernel and the first pass, with the prefilter's threshold *KERNEL_TAU:
 * both "auto", the pair measured fastest here (lk-tune.h, into *CHOICE);
 * anything forced is run as asked. */
static gboolean
choose_kernels (const LkFaces *faces, const LkCalibration *calibration, double min_probability,
                const LkScanOptions *options, LkTuneChoice **choice, const LkKernel **kernel,
                const LkPrefilterPass **pass, float *kernel_tau, GError **error)
{
  double tau = options->no_prefilter ? -INFINITY
                                     : lk_scan_loosest_cosine (faces->crop_px, faces->n,
                                                               calibration, min_probability);
  *kernel_tau = isinf (tau) ? -INFINITY : nextafterf ((float) (tau - KERNEL_MARGIN), -INFINITY);

  LkKernelId kernel_id = options->kernel;
  LkPrefilterId prefilter_id = options->prefilter;
  if (kernel_id == LK_KERNEL_AUTO && prefilter_id == LK_PREFILTER_AUTO)
    {
      *choice = lk_tune_for_scan (faces, *kernel_tau);
      kernel_id = (*choice)->kernel;
      prefilter_id = (*choice)->prefilter;
    }
  *kernel = lk_kernel_get (kernel_id, error);
  *pass = NULL;
  return *kernel != NULL && lk_prefilter_pass_get (prefilter_id, pass, error);
}

/* The scan S planned: its rows and bar, its threads (returned), the first
 * pass's rows converted, its blocks and the lists they stitch into. */
static guint
scan_init (Scan *s, const LkFaces *faces, const LkCalibration *calibration, double min_probability,
           const LkKernel *kernel, const LkPrefilterPass *pass, float kernel_tau,
           const LkScanOptions *options, GCancellable *cancellable)
{
  *s = (Scan){
    .faces = faces,
    .cal = calibration,
    .bar = min_probability,
    .kernel = kernel,
    .column_tile = options->column_tile ? options->column_tile : LK_SCAN_COLUMN_TILE,
    .row_begin = options->row_range ? options->row_begin : 0,
    .row_end = options->row_range ? options->row_end : faces->n,
    .column_begin = options->column_begin,
    .cancellable = cancellable,
    .background = options->background,
    .progress = options->progress,
    .progress_data = options->progress_data,
  };
  s->total_pairs = rows_pair_count (faces->n, s->column_begin, s->row_begin, s->row_end);
  s->hit_capacity = MAX ((gsize) LK_SCAN_BLOCK * LK_SCAN_COLUMN_TILE, s->column_tile);
  s->has_boundary = calibration_is_finite (calibration) && calibration->a != 0
                    && min_probability > 0 && min_probability < 1;
  if (s->has_boundary)
    s->logit_bar = log (min_probability / (1 - min_probability));

  s->tau = kernel_tau;
  s->log2_crop = g_new (double, MAX (faces->n, 1));
  for (gsize i = 0; i < faces->n; i++)
    s->log2_crop[i] = log2 (faces->crop_px[i]);
  /* Without a bar there is nothing for the bf16 pass to reject. Converting
   * the rows is part of the scan's time, as it is part of its work. */
  guint threads = options->threads;
  if (threads == 0)
    threads = faces->n < LK_SCAN_THREADS_ABOVE ? 1 : lk_cpu_cores ();
  threads = MAX (1, MIN (threads, (s->row_end - s->row_begin + LK_SCAN_BLOCK - 1) / LK_SCAN_BLOCK));

  if (pass != NULL && !isinf (s->tau) && faces->n >= 2)
    {
      s->prefilter
          = lk_prefilter_new_threaded (pass, faces->embeddings, faces->n, faces->dim, threads);
      lk_prefilter_prepare (s->prefilter, s->tau);
    }
  /* With a first pass, blocks of LK_SCAN_DEFERRED_BLOCK rows whose survivors
   * are re-checked together (scan_block_deferred), where that still leaves
   * each thread four blocks to balance the triangle's unequal rows with. */
  s->deferred = s->prefilter != NULL && options->deferred_rows != LK_SCAN_DEFERRED_NEVER
                && (options->deferred_rows > 0
                    || s->row_end - s->row_begin >= (gsize) 4 * threads * LK_SCAN_DEFERRED_BLOCK);
  s->block_rows = !s->deferred ? LK_SCAN_BLOCK
                  : options->deferred_rows > 0
                      ? MIN (options->deferred_rows, LK_SCAN_DEFERRED_BLOCK)
                      : LK_SCAN_DEFERRED_BLOCK;
  s->deferred_hits = options->deferred_hits > 0 ? options->deferred_hits : LK_SCAN_DEFERRED_HITS;
  s->n_blocks = (s->row_end - s->row_begin + s->block_rows - 1) / s->block_rows;

  s->block_pairs = g_new0 (GArray *, s->n_blocks);
  s->block_near = g_new0 (GArray *, s->n_blocks);
  /* A large scan's list starts above malloc's largest mmap threshold (32 MiB
   * of address space, not of memory: untouched pages cost nothing), so that
   * every growth is an mremap. Grown from nothing, each doubling below the
   * threshold was a copy whose old block stayed resident in the heap: at
   * 100,000 faces the scan's own memory was 23 MiB above its 192 MiB of
   * pairs (bench-scale --child scan, hwm − rss_loaded, two threads). */
  s->pairs = faces->n >= LARGE_SCAN ? g_array_sized_new (FALSE, FALSE, sizeof (LkPair),
                                                         (guint) (LARGE_RESERVE / sizeof (LkPair)))
                                    : g_array_new (FALSE, FALSE, sizeof (LkPair));
  s->near_pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  atomic_init (&s->next_block, 0);
  atomic_init (&s->done_pairs, 0);
  atomic_init (&s->found_pairs, 0);
  atomic_init (&s->over_budget, false);
  s->max_pairs = options->max_pairs > 0 ? options->max_pairs : lk_scan_pair_budget (faces->n);
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  return threads;
}

/* The result of a scan that ran through on RAN threads, its lists taken. */
static LkScanResult *
scan_result (Scan *s, const LkTuneChoice *choice, const LkScanOptions *options, guint ran)
{
  LkScanResult *result = g_new0 (LkScanResult, 1);
  result->pairs = g_steal_pointer (&s->pairs);
  result->near_boundary = s->near_pairs->len;
  result->near_pairs = g_steal_pointer (&s->near_pairs);
  result->kernel = s->kernel->name;
  result->prefilter = s->prefilter != NULL ? lk_prefilter_name (s->prefilter) : "off";
  result->threads = ran;
  result->deferred_rows = s->deferred ? s->block_rows : 0;
  result->choice = g_intern_string (choice != NULL ? choice->reason
                                                   : (options->kernel != LK_KERNEL_AUTO
                                                          ? "forced by the caller's kernel"
                                                          : "forced by the caller's first pass"));
  return result;
}

static void
scan_clear (Scan *s)
{
  for (gsize b = 0; b < s->n_blocks; b++)
    {
      if (s->block_pairs[b] != NULL)
        g_array_unref (s->block_pairs[b]);
      if (s->block_near[b] != NULL)
        g_array_unref (s->block_near[b]);
    }
  if (s->pairs != NULL)
    g_array_unref (s->pairs);
  if (s->near_pairs != NULL)
    g_array_unref (s->near_pairs);
  g_free (s->block_pairs);
  g_free (s->block_near);
  lk_prefilter_free (s->prefilter);
  g_free (s->log2_crop);
}

/* Check the rows, choose the kernels, plan the scan, run it on the pool,
 * take the result, tear down. */
LkScanResult *
lk_scan (const LkFaces *faces, const LkCalibration *calibration, double min_probability,
         const LkScanOptions *options, GCancellable *cancellable, GError **error)
{
  static const LkScanOptions defaults = { 0 };
  gint64 started = g_get_monotonic_time ();

  if (options == NULL)
    options = &defaults;
  if (!validate (faces, error))
    return NULL;
  if (options->row_range
      && !(options->row_begin <= options->row_end && options->row_end <= faces->n))
    {
      g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                   "Rows %" G_GSIZE_FORMAT ":%" G_GSIZE_FORMAT
                   " are not a range of the %" G_GSIZE_FORMAT
                   " faces: expected A:B with A ≤ B ≤ %" G_GSIZE_FORMAT,
                   options->row_begin, options->row_end, faces->n, faces->n);
      return NULL;
    }

  g_autoptr (LkTuneChoice) choice = NULL;
  const LkKernel *kernel = NULL;
  const LkPrefilterPass *pass = NULL;
  float kernel_tau = 0;
  if (!choose_kernels (faces, calibration, min_probability, options, &choice, &kernel, &pass,
                       &kernel_tau, error))
    return NULL;

  Scan s;
  guint threads = scan_init (&s, faces, calibration, min_probability, kernel, pass, kernel_tau,
                             options, cancellable);
  guint ran;
  if (threads == 1 && !options->background)
    {
      scan_blocks (&s, TRUE);
      ran = 1;
    }
  else
    ran = run_pool (&s, threads);

  g_mutex_clear (&s.lock);
  g_cond_clear (&s.cond);

  /* Every block is in unless a worker saw the cancellable set; checked
   * directly too, in case the caller reset it before the join. */
  gboolean complete = s.stitched == s.n_blocks;

  LkScanResult *result = NULL;
  if (atomic_load (&s.over_budget))
    over_budget (&s, error);
  else if (!complete || g_cancellable_is_cancelled (cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The scan was cancelled");
  else
    result = scan_result (&s, choice, options, ran);
  scan_clear (&s);

  if (result != NULL)
    {
      result->seconds = (g_get_monotonic_time () - started) / (double) G_USEC_PER_SEC;
      if (s.progress != NULL)
        s.progress (1.0, s.progress_data);
    }
  return result;
}

void
lk_scan_result_free (LkScanResult *result)
{
  if (result == NULL)
    return;
  g_array_unref (result->pairs);
  if (result->near_pairs != NULL)
    g_array_unref (result->near_pairs);
  g_free (result);
}
