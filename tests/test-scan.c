/* test-scan — the scan returns exactly the naive double loop's pairs
 *
 * Every test of the seed, ported, then what the C scan adds: identical lists
 * for 1, 2 and N threads and for every kernel, dimensions that are not a
 * multiple of the SIMD width, cancellation from another thread, progress,
 * pairs near the bar counted, and the loosest-cosine bound for every sign of
 * w_size and every degenerate calibration.
 */
#include "config.h"

#include <math.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "scan/lk-dot-canonical.h"
#include "scan/lk-kernels.h"
#include "library/lk-library.h"
#include "scan/lk-prefilter.h"
#include "lk-test-faces.h"

#define DIM 64

static LkScanResult *
scan_with (const TestSet *set, const LkCalibration *cal, double bar, const LkScanOptions *options)
{
  g_autoptr (GError) error = NULL;
  LkFaces faces = test_set_faces (set);
  LkScanResult *result = lk_scan (&faces, cal, bar, options, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static LkScanResult *
scan (const TestSet *set, const LkCalibration *cal, double bar)
{
  return scan_with (set, cal, bar, NULL);
}

/* The scan against the reference; the reference must find something, or the
 * comparison proves nothing. */
static void
assert_matches_reference (const TestSet *set, const LkCalibration *cal, double bar,
                          const LkScanOptions *options)
{
  LkFaces faces = test_set_faces (set);
  g_autoptr (LkScanResult) got = scan_with (set, cal, bar, options);
  g_autoptr (GArray) want = test_reference (&faces, cal, bar);

  g_assert_cmpuint (want->len, >, 0);
  test_assert_same_pairs (got, want, &faces, cal, bar);
}

static void
assert_identical (const LkScanResult *a, const LkScanResult *b)
{
  g_assert_cmpuint (a->pairs->len, ==, b->pairs->len);
  g_assert_cmpmem (a->pairs->data, a->pairs->len * sizeof (LkPair), b->pairs->data,
                   b->pairs->len * sizeof (LkPair));
  g_assert_cmpuint (a->near_boundary, ==, b->near_boundary);
}

static void
give_sizes (TestSet *set)
{
  for (gsize i = 0; i < set->n; i++)
    set->crop_px[i] = 40.0f + (i % 17) * 30.0f;
}

static void
test_nothing_to_pair (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) one = test_population (1, 1, 0.9f, DIM);
  g_autoptr (TestSet) none = test_set_new (0, DIM);
  g_autoptr (LkScanResult) a = scan (one, &cal, 0.9);
  g_autoptr (LkScanResult) b = scan (none, &cal, 0.9);

  g_assert_cmpuint (a->pairs->len, ==, 0);
  g_assert_cmpuint (b->pairs->len, ==, 0);
}

static void
test_blocked_matches_reference (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);

  assert_matches_reference (set, &cal, 0.9, NULL);
}

/* Past the threading cut-off the work is split across threads and stitched
 * back together, and the stitching is where an order bug would live. */
static void
test_threaded_matches_reference (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (300, 8, 0.97f, DIM);
  LkScanOptions two = { .threads = 2 };

  g_assert_cmpuint (set->n, >, LK_SCAN_THREADS_ABOVE);
  assert_matches_reference (set, &cal, 0.9, NULL);
  assert_matches_reference (set, &cal, 0.9, &two);
}

/* The size term moves the cosine boundary per pair, so the rejection has to
 * be built from the most permissive size in the set. */
static void
test_size_weighted_calibration (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);

  give_sizes (set);
  cal.w_size = 0.5;
  cal.b = -30.0 * 0.35 - 0.5 * 7.0;
  assert_matches_reference (set, &cal, 0.9, NULL);
}

/* A negative size weight flips which extreme is permissive. */
static void
test_negative_size_weight (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);

  give_sizes (set);
  cal.w_size = -0.5;
  cal.b = -30.0 * 0.35 + 0.5 * 7.0;
  assert_matches_reference (set, &cal, 0.9, NULL);
}

/* The seed clamped crops to at least one pixel before taking the extreme; with
 * a negative weight a sub-pixel crop then had a lower bar than the bound, and
 * its pairs were dropped. Crops here go down to a quarter of a pixel. */
static void
test_negative_weight_with_tiny_crops (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.5f, DIM);

  for (gsize i = 0; i < set->n; i++)
    set->crop_px[i] = i % 5 == 0 ? 0.25f : 4.0f;
  cal.w_size = -2.0;
  cal.b = -30.0 * 0.35 + 2.0 * 2.0;
  /* Some pairs clear the bar only thanks to the quarter-pixel crop. */
  double bound_one_pixel = (log (9.0) - cal.b) / cal.a;
  LkFaces faces = test_set_faces (set);
  g_autoptr (GArray) want = test_reference (&faces, &cal, 0.9);
  guint below = 0;
  for (guint k = 0; k < want->len; k++)
    {
      LkPair *p = &g_array_index (want, LkPair, k);
      if (test_exact_dot (set->embeddings + p->i * DIM, set->embeddings + p->j * DIM, DIM)
          < bound_one_pixel)
        below++;
    }
  g_assert_cmpuint (below, >, 0);
  assert_matches_reference (set, &cal, 0.9, NULL);
}

/* A degenerate calibration has no cosine boundary to prune against, and must
 * stop pruning rather than prune on a bound that does not hold. */
static void
test_flat_calibration_prunes_nothing (void)
{
  LkCalibration flat = test_calibration ();
  float crop = 150;
  g_autoptr (TestSet) set = test_population (20, 6, 0.97f, DIM);

  flat.a = 0;
  flat.b = 4;
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &flat, 0.9), ==, -INFINITY);
  assert_matches_reference (set, &flat, 0.9, NULL);
}

static void
test_degenerate_calibrations_prune_nothing (void)
{
  LkCalibration cal = test_calibration ();
  float crop = 150;

  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &cal, 0.9), >, 0);
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &cal, 0.0), ==, -INFINITY);
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &cal, 1.0), ==, -INFINITY);
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &cal, NAN), ==, -INFINITY);
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 0, &cal, 0.9), ==, -INFINITY);
  LkCalibration bad = cal;
  bad.a = -30;
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &bad, 0.9), ==, -INFINITY);
  bad = cal;
  bad.a = NAN;
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &bad, 0.9), ==, -INFINITY);
  bad = cal;
  bad.w_size = NAN;
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &bad, 0.9), ==, -INFINITY);
  bad = cal;
  bad.b = INFINITY;
  g_assert_cmpfloat (lk_scan_loosest_cosine (&crop, 1, &bad, 0.9), ==, -INFINITY);

  /* A falling calibration (a < 0) is answered right, just without pruning:
   * pairs *far* apart are the ones that clear this bar. */
  g_autoptr (TestSet) set = test_population (20, 6, 0.97f, DIM);
  LkCalibration falling = { -30.0, 0.0, 0.0, 0, 0 };
  assert_matches_reference (set, &falling, 0.9, NULL);
}

/* The bound is the minimum over the set's crops of each crop's own boundary,
 * for a positive, a negative and a zero w_size. */
static void
test_loosest_cosine_is_the_minimum_boundary (void)
{
  float crops[] = { 37, 512, 96, 1.5f, 220 };
  double weights[] = { 0.7, -0.7, 0.0 };

  for (guint w = 0; w < G_N_ELEMENTS (weights); w++)
    {
      LkCalibration cal = { 25.0, -9.0, weights[w], 0, 0 };
      double tau = lk_scan_loosest_cosine (crops, G_N_ELEMENTS (crops), &cal, 0.8);
      double lowest = INFINITY;
      for (guint c = 0; c < G_N_ELEMENTS (crops); c++)
        lowest = MIN (lowest, (log (4.0) - cal.b - cal.w_size * log2 (crops[c])) / cal.a);
      g_assert_cmpfloat_with_epsilon (tau, lowest, 1e-12);
    }
}

static void
test_same_photo_never_paired (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (1, 2, 1.0f, DIM);

  set->photo[0] = set->photo[1] = 7;
  g_autoptr (LkScanResult) r = scan (set, &cal, 0.9);
  g_assert_cmpuint (r->pairs->len, ==, 0);
}

/* A probe against a reference is a comparison; two probes against each other
 * is not, and nothing downstream should see that pair at all. */
static void
test_two_probes_never_paired (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (1, 3, 1.0f, DIM);

  set->gallery[0] = set->gallery[1] = 0;
  g_autoptr (LkScanResult) r = scan (set, &cal, 0.9);
  g_assert_cmpuint (r->pairs->len, ==, 2);
  g_assert_cmpuint (g_array_index (r->pairs, LkPair, 0).i, ==, 0);
  g_assert_cmpuint (g_array_index (r->pairs, LkPair, 0).j, ==, 2);
  g_assert_cmpuint (g_array_index (r->pairs, LkPair, 1).i, ==, 1);
  g_assert_cmpuint (g_array_index (r->pairs, LkPair, 1).j, ==, 2);
}

static void
test_gallery_rule_at_scale (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);

  for (gsize i = 0; i < set->n; i++)
    set->gallery[i] = i % 3 != 0;
  assert_matches_reference (set, &cal, 0.9, NULL);
}

static void
test_index_order (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (300, 8, 0.97f, DIM);
  g_autoptr (LkScanResult) r = scan (set, &cal, 0.9);

  g_assert_cmpuint (r->pairs->len, >, 1);
  for (guint k = 0; k < r->pairs->len; k++)
    {
      const LkPair *p = &g_array_index (r->pairs, LkPair, k);
      g_assert_cmpuint (p->i, <, p->j);
      if (k > 0)
        g_assert_cmpint (test_pair_cmp (p - 1, p), <, 0);
    }
}

/* Threads must not make the answer depend on which one finished first. */
static void
test_same_input_same_pairs (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (300, 8, 0.97f, DIM);
  g_autoptr (LkScanResult) a = scan (set, &cal, 0.9);
  g_autoptr (LkScanResult) b = scan (set, &cal, 0.9);

  assert_identical (a, b);
}

/* The rejection is the whole speed story: it must reject the bulk. */
static void
test_filter_rejects_almost_everything (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);
  g_autoptr (LkScanResult) r = scan (set, &cal, 0.9);
  gsize total = set->n * (set->n - 1) / 2;

  g_assert_cmpuint (r->pairs->len, >, 0);
  g_assert_cmpuint (r->pairs->len * 20, <, total);
}

/* 1, 2, N threads (N = the cores, and an odd 7) give byte-identical lists,
 * for every kernel this processor runs, background or not. 1,820 faces are
 * eight row blocks of LK_SCAN_BLOCK, so seven threads all get one. */
static void
test_thread_counts_identical (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (260, 7, 0.95f, DIM);
  gsize n_kernels;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);
  guint counts[] = { 2, lk_cpu_cores (), 7 };

  give_sizes (set);
  cal.w_size = 0.3;
  for (gsize k = 0; k < n_kernels; k++)
    {
      if (!lk_kernel_runs_here (kernels[k]))
        continue;
      LkScanOptions one = { .kernel = kernels[k]->id, .threads = 1 };
      g_autoptr (LkScanResult) base = scan_with (set, &cal, 0.9, &one);
      g_assert_cmpuint (base->threads, ==, 1);
      g_assert_cmpstr (base->kernel, ==, kernels[k]->name);
      g_assert_cmpuint (base->pairs->len, >, 0);
      for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
        for (int background = 0; background <= 1; background++)
          {
            LkScanOptions o
                = { .kernel = kernels[k]->id, .threads = counts[c], .background = background };
            g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &o);
            g_assert_cmpuint (r->threads, ==, counts[c]);
            assert_identical (base, r);
          }
    }
}

/* Row shards (LkScanOptions.row_range) that cover every row concatenate, in
 * order, into the full scan's pairs byte for byte, with the same near-
 * boundary count: shard edges inside and on row blocks, empty shards, one
 * and two threads, with and without a first pass. A range that is not one
 * is an error naming it. */
static void
test_row_shards_concatenate (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (260, 7, 0.95f, DIM);
  const gsize n = set->n;
  const gsize cuts[][8] = {
    { 0, n },
    { 0, 1, 255, 256, 700, n - 1, n },
    { 0, 0, 900, 900, n, n },
  };
  const gsize n_cuts[] = { 2, 7, 6 };
  static const LkPrefilterId passes[] = { LK_PREFILTER_OFF, LK_PREFILTER_INT8_PORTABLE };
  LkKernelId kernel = lk_kernel_get (LK_KERNEL_AUTO, NULL)->id;

  give_sizes (set);
  cal.w_size = 0.3;
  for (gsize p = 0; p < G_N_ELEMENTS (passes); p++)
    for (guint threads = 1; threads <= 2; threads++)
      {
        LkScanOptions all = { .kernel = kernel, .threads = threads, .prefilter = passes[p] };
        g_autoptr (LkScanResult) want = scan_with (set, &cal, 0.9, &all);
        g_assert_cmpuint (want->pairs->len, >, 0);
        for (gsize c = 0; c < G_N_ELEMENTS (cuts); c++)
          {
            g_autoptr (GArray) got = g_array_new (FALSE, FALSE, sizeof (LkPair));
            guint64 near = 0;
            for (gsize k = 0; k + 1 < n_cuts[c]; k++)
              {
                LkScanOptions shard = all;
                shard.row_range = TRUE;
                shard.row_begin = cuts[c][k];
                shard.row_end = cuts[c][k + 1];
                g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &shard);
                for (guint h = 0; h < r->pairs->len; h++)
                  {
                    const LkPair *pair = &g_array_index (r->pairs, LkPair, h);
                    g_assert_cmpuint (pair->i, >=, shard.row_begin);
                    g_assert_cmpuint (pair->i, <, shard.row_end);
                  }
                g_array_append_vals (got, r->pairs->data, r->pairs->len);
                near += r->near_boundary;
              }
            g_assert_cmpuint (got->len, ==, want->pairs->len);
            g_assert_cmpmem (got->data, got->len * sizeof (LkPair), want->pairs->data,
                             want->pairs->len * sizeof (LkPair));
            g_assert_cmpuint (near, ==, want->near_boundary);
          }
      }

  const gsize bad[][2] = { { 5, 3 }, { 0, n + 1 }, { n + 1, n + 2 } };
  LkFaces faces = test_set_faces (set);
  for (gsize b = 0; b < G_N_ELEMENTS (bad); b++)
    {
      g_autoptr (GError) error = NULL;
      LkScanOptions o
          = { .kernel = kernel, .row_range = TRUE, .row_begin = bad[b][0], .row_end = bad[b][1] };
      g_autofree char *range
          = g_strdup_printf ("%" G_GSIZE_FORMAT ":%" G_GSIZE_FORMAT, bad[b][0], bad[b][1]);
      g_assert_null (lk_scan (&faces, &cal, 0.9, &o, NULL, &error));
      g_assert_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, range));
    }
}

/* Survivors gathered over a block and re-checked together, sorted by column
 * (lk-scan.c, scan_block_deferred), give byte for byte the pairs and near-
 * boundary pairs of the scan that re-checks them a tile at a time: for every
 * first pass that runs here, blocks of one tile's rows and of several, the
 * buffer emptied after every tile or only at a block's end, one and two
 * threads, whole and sharded rows, and a re-scan's later columns. */
static void
test_deferred_recheck_is_the_tile_answer (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (150, 7, 0.95f, DIM);
  const gsize rows[] = { 100, LK_SCAN_DEFERRED_BLOCK };
  const gsize hits[] = { 0, 1 };
  gsize n_passes, ran = 0;
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n_passes);
  LkKernelId kernel = lk_kernel_get (LK_KERNEL_AUTO, NULL)->id;

  give_sizes (set);
  cal.w_size = 0.3;
  for (gsize p = 0; p < n_passes; p++)
    {
      /* The portable emulations are the native passes' own survivors, slowly:
       * one of them is enough to run everywhere. */
      if (!lk_prefilter_pass_runs_here (passes[p])
          || (strstr (passes[p]->name, "portable") != NULL
              && passes[p]->id != LK_PREFILTER_INT8_PORTABLE))
        continue;
      for (guint threads = 1; threads <= 2; threads++)
        {
          LkScanOptions tiles
              = { .kernel = kernel, .threads = threads, .prefilter = passes[p]->id };
          g_autoptr (LkScanResult) want = scan_with (set, &cal, 0.9, &tiles);
          g_assert_cmpuint (want->deferred_rows, ==, 0);
          g_assert_cmpuint (want->pairs->len, >, 0);
          g_assert_cmpuint (want->near_pairs->len, ==, want->near_boundary);
          for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
            for (gsize h = 0; h < G_N_ELEMENTS (hits); h++)
              {
                LkScanOptions gathered = tiles;
                gathered.deferred_rows = rows[r];
                gathered.deferred_hits = hits[h];
                g_autoptr (LkScanResult) got = scan_with (set, &cal, 0.9, &gathered);
                g_assert_cmpuint (got->deferred_rows, ==, rows[r]);
                g_assert_cmpstr (got->prefilter, ==, passes[p]->name);
                assert_identical (got, want);
                g_assert_cmpmem (got->near_pairs->data, got->near_pairs->len * sizeof (LkPair),
                                 want->near_pairs->data, want->near_pairs->len * sizeof (LkPair));

                /* Two shards, cut inside a block, concatenate to it too. */
                if (h > 0)
                  continue;
                g_autoptr (GArray) shards = g_array_new (FALSE, FALSE, sizeof (LkPair));
                const gsize cut[] = { 0, 500, set->n };
                for (gsize k = 0; k < 2; k++)
                  {
                    LkScanOptions shard = gathered;
                    shard.row_range = TRUE;
                    shard.row_begin = cut[k];
                    shard.row_end = cut[k + 1];
                    g_autoptr (LkScanResult) part = scan_with (set, &cal, 0.9, &shard);
                    g_array_append_vals (shards, part->pairs->data, part->pairs->len);
                  }
                g_assert_cmpmem (shards->data, shards->len * sizeof (LkPair), want->pairs->data,
                                 want->pairs->len * sizeof (LkPair));

                /* And a re-scan's columns from 600 on (lk-scan-cache.h). */
                LkScanOptions later = tiles, later_gathered = gathered;
                later.column_begin = later_gathered.column_begin = 600;
                g_autoptr (LkScanResult) later_want = scan_with (set, &cal, 0.9, &later);
                g_autoptr (LkScanResult) later_got = scan_with (set, &cal, 0.9, &later_gathered);
                g_assert_cmpuint (later_want->pairs->len, >, 0);
                g_assert_cmpuint (later_want->pairs->len, <, want->pairs->len);
                assert_identical (later_got, later_want);
              }
          ran++;
        }
    }
  /* At least the portable emulation ran, on one thread and two. */
  g_assert_cmpuint (ran, >=, 2);
}

/* LkScanOptions.column_begin keeps exactly the full scan's pairs (i, j) with
 * j >= column_begin, in order, and their near-boundary pairs, which the
 * result lists (as many as it counts): at a block's edge, inside one, at 0
 * and past the last face; one and two threads, with and without a pass. */
static void
test_column_begin_keeps_the_later_columns (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (260, 7, 0.95f, DIM);
  const gsize n = set->n;
  const gsize begins[] = { 0, 1, 256, 700, n - 1, n };
  static const LkPrefilterId passes[] = { LK_PREFILTER_OFF, LK_PREFILTER_INT8_PORTABLE };
  LkKernelId kernel = lk_kernel_get (LK_KERNEL_AUTO, NULL)->id;

  give_sizes (set);
  cal.w_size = 0.3;
  for (gsize p = 0; p < G_N_ELEMENTS (passes); p++)
    for (guint threads = 1; threads <= 2; threads++)
      {
        LkScanOptions all = { .kernel = kernel, .threads = threads, .prefilter = passes[p] };
        g_autoptr (LkScanResult) want = scan_with (set, &cal, 0.9, &all);
        g_assert_cmpuint (want->near_pairs->len, ==, want->near_boundary);
        for (gsize c = 0; c < G_N_ELEMENTS (begins); c++)
          {
            LkScanOptions later = all;
            later.column_begin = begins[c];
            g_autoptr (LkScanResult) got = scan_with (set, &cal, 0.9, &later);
            const GArray *lists[2][2]
                = { { want->pairs, got->pairs }, { want->near_pairs, got->near_pairs } };
            for (gsize l = 0; l < 2; l++)
              {
                g_autoptr (GArray) kept = g_array_new (FALSE, FALSE, sizeof (LkPair));
                for (guint h = 0; h < lists[l][0]->len; h++)
                  if (g_array_index (lists[l][0], LkPair, h).j >= begins[c])
                    g_array_append_val (kept, g_array_index (lists[l][0], LkPair, h));
                g_assert_cmpuint (lists[l][1]->len, ==, kept->len);
                if (kept->len > 0)
                  g_assert_cmpmem (lists[l][1]->data, kept->len * sizeof (LkPair), kept->data,
                                   kept->len * sizeof (LkPair));
              }
            g_assert_cmpuint (got->near_boundary, ==, got->near_pairs->len);
          }
      }
}

/* The canonical answer: every allowed pair whose lk_dot_canonical cosine
 * gives a probability at the bar, with that probability — no pruning, no
 * tiles, no threads. */
static GArray *
canonical_reference (const TestSet *set, const LkCalibration *cal, double bar)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));

  for (gsize i = 0; i < set->n; i++)
    for (gsize j = i + 1; j < set->n; j++)
      {
        if (set->photo[i] == set->photo[j] || !(set->gallery[i] || set->gallery[j]))
          continue;
        float cos = lk_dot_canonical (set->embeddings + i * set->dim,
                                      set->embeddings + j * set->dim, set->dim);
        double p = lk_scan_probability (cal, cos, MIN (set->crop_px[i], set->crop_px[j]));
        if (p >= bar)
          {
            LkPair pair = { (guint32) i, (guint32) j, (float) p };
            g_array_append_val (out, pair);
          }
      }
  return out;
}

/* One answer for every kernel this processor runs and 1, 2 and 3 threads:
 * the canonical reference's pairs and probabilities, byte for byte — no
 * near-boundary allowance — at a dimension with a tail for every width and
 * at 512, with photos shared, probes, and a bar that keeps hundreds of
 * pairs. */
static void
test_every_kernel_and_thread_count_is_canonical (void)
{
  LkCalibration cal = test_calibration ();
  guint dims[] = { 37, 512 };
  guint counts[] = { 1, 2, 3 };
  gsize n_kernels;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);

  cal.w_size = 0.3;
  for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      /* Identities of seven at 0.8: cosines spread across the bar; 777
       * faces are four row blocks, so three threads all get one. */
      g_autoptr (TestSet) set = test_population (111, 7, 0.8f, dims[d]);
      give_sizes (set);
      for (gsize i = 0; i < set->n; i++)
        {
          set->photo[i] = i / 2;
          set->gallery[i] = i % 5 != 3;
        }
      g_autoptr (GArray) want = canonical_reference (set, &cal, 0.9);
      g_assert_cmpuint (want->len, >, 100);
      guint ran = 0;
      for (gsize k = 0; k < n_kernels; k++)
        {
          if (!lk_kernel_runs_here (kernels[k]))
            continue;
          ran++;
          for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
            {
              LkScanOptions o = { .kernel = kernels[k]->id, .threads = counts[c] };
              g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &o);
              g_assert_cmpuint (r->threads, ==, counts[c]);
              g_assert_cmpuint (r->pairs->len, ==, want->len);
              g_assert_cmpmem (r->pairs->data, r->pairs->len * sizeof (LkPair), want->data,
                               want->len * sizeof (LkPair));
            }
        }
      g_assert_cmpuint (ran, >=, 1);
    }
}

/* Every kernel against the reference at dimensions that leave every kind of
 * tail, and ones that are all tail. (Length 1 is test-kernels' business: a
 * population needs a plane to place its vectors in.) */
static void
test_every_kernel_odd_dims (void)
{
  LkCalibration cal = test_calibration ();
  guint dims[] = { 2, 3, 15, 17, 37, 70, 129, 512 };
  gsize n_kernels;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);

  for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = test_population (24, 5, 0.95f, dims[d]);
      for (gsize k = 0; k < n_kernels; k++)
        {
          if (!lk_kernel_runs_here (kernels[k]))
            continue;
          LkScanOptions o = { .kernel = kernels[k]->id, .threads = 2 };
          assert_matches_reference (set, &cal, 0.9, &o);
        }
    }
}

/* The untiled walk, odd tile widths and the exhaustive (unfiltered) scan are
 * the same answer, near-boundary count included. */
static void
test_tiling_and_filter_do_not_change_the_answer (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (60, 8, 0.97f, DIM);

  give_sizes (set);
  cal.w_size = 0.5;
  cal.b = -30.0 * 0.35 - 0.5 * 7.0;
  g_autoptr (LkScanResult) base = scan (set, &cal, 0.9);
  LkScanOptions variants[] = {
    { .column_tile = set->n }, { .column_tile = 7 },
    { .column_tile = 1 },      { .column_tile = 100000 },
    { .no_prefilter = TRUE },  { .no_prefilter = TRUE, .column_tile = set->n, .threads = 3 },
  };
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &variants[v]);
      assert_identical (base, r);
    }
}

/* Pairs built to sit 3e-6 either side of their bar are counted, whichever way
 * they fall; pairs 1e-4 away are not. */
static void
test_near_boundary_is_counted (void)
{
  LkCalibration cal = test_calibration ();
  double boundary = (log (9.0) - cal.b) / cal.a;
  double offsets[] = { 3e-6, -3e-6, 1e-4, -1e-4 };
  g_autoptr (TestSet) set = test_set_new (2 * G_N_ELEMENTS (offsets), 512);

  for (guint k = 0; k < G_N_ELEMENTS (offsets); k++)
    {
      float *base = set->embeddings + 2 * k * 512;
      g_autofree float *off = g_new (float, 512);
      test_vector (k + 1, 512, base);
      test_vector (k + 500, 512, off);
      test_near (base, off, (float) (boundary + offsets[k]), 512, base + 512);
    }
  /* The construction is good to ~1e-7: check it before relying on it. */
  for (guint k = 0; k < G_N_ELEMENTS (offsets); k++)
    {
      double cos = test_exact_dot (set->embeddings + 2 * k * 512,
                                   set->embeddings + (2 * k + 1) * 512, 512);
      g_assert_cmpfloat_with_epsilon (cos, boundary + offsets[k], 1e-6);
    }

  gsize n_kernels;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);
  for (gsize k = 0; k < n_kernels; k++)
    {
      if (!lk_kernel_runs_here (kernels[k]))
        continue;
      LkScanOptions o = { .kernel = kernels[k]->id };
      g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &o);
      g_assert_cmpuint (r->near_boundary, ==, 2);
      /* The clear one above the bar is returned, the clear one below is not. */
      gboolean above = FALSE, below = FALSE;
      for (guint p = 0; p < r->pairs->len; p++)
        {
          above = above || g_array_index (r->pairs, LkPair, p).i == 4;
          below = below || g_array_index (r->pairs, LkPair, p).i == 6;
        }
      g_assert_true (above);
      g_assert_false (below);
    }
}

typedef struct
{
  GMutex lock;
  GCond cond;
  GCancellable *cancellable;
  gboolean asked;
  gboolean finished_first; /* the first report was the finished scan's 1.0 */
  guint calls_after_cancel;
} CancelFixture;

/* The first progress report asks the other thread to cancel and waits until
 * it has: the scan is then mid-way, with blocks still to hand out. With a
 * pool, the calling thread reports only when it wakes between blocks: on a
 * fast machine the workers can finish every block first, and the first
 * report is then the finished scan's 1.0 (a clean-clone CI run on a Zen 5
 * saw it, after the re-check by row made the scan faster). That round has
 * nothing mid-way to cancel: it is noted, the canceller is let go, and the
 * test runs another. */
static void
cancel_progress_cb (double fraction, gpointer data)
{
  CancelFixture *fx = data;

  if (g_cancellable_is_cancelled (fx->cancellable))
    {
      fx->calls_after_cancel++;
      return;
    }
  g_mutex_lock (&fx->lock);
  fx->asked = TRUE;
  g_cond_broadcast (&fx->cond);
  if (fraction >= 1.0 && !fx->finished_first)
    {
      fx->finished_first = TRUE;
      g_mutex_unlock (&fx->lock);
      return;
    }
  g_assert_cmpfloat (fraction, <, 1.0);
  while (!g_cancellable_is_cancelled (fx->cancellable))
    g_cond_wait (&fx->cond, &fx->lock);
  g_mutex_unlock (&fx->lock);
}

static gpointer
canceller_main (gpointer data)
{
  CancelFixture *fx = data;

  g_mutex_lock (&fx->lock);
  while (!fx->asked)
    g_cond_wait (&fx->cond, &fx->lock);
  g_cancellable_cancel (fx->cancellable);
  g_cond_broadcast (&fx->cond);
  g_mutex_unlock (&fx->lock);
  return NULL;
}

/* One scan cancelled from another thread at its first progress report;
 * FALSE when that report was already the finished scan's (nothing checked). */
static gboolean
cancel_round (const LkFaces *faces, const LkCalibration *cal, guint threads)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  CancelFixture fx = { .cancellable = cancellable };
  g_autoptr (GError) error = NULL;
  LkScanOptions o = { .threads = threads, .progress = cancel_progress_cb, .progress_data = &fx };

  g_mutex_init (&fx.lock);
  g_cond_init (&fx.cond);
  GThread *canceller = g_thread_new ("canceller", canceller_main, &fx);
  LkScanResult *r = lk_scan (faces, cal, 0.9, &o, cancellable, &error);
  g_thread_join (canceller);
  g_mutex_clear (&fx.lock);
  g_cond_clear (&fx.cond);

  g_assert_true (fx.asked);
  if (fx.finished_first)
    {
      /* Finished before anything reported: a whole list, and nothing after. */
      g_assert_nonnull (r);
      g_assert_no_error (error);
      g_assert_cmpuint (fx.calls_after_cancel, ==, 0);
      lk_scan_result_free (r);
      return FALSE;
    }
  g_assert_null (r);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (fx.calls_after_cancel, ==, 0);
  return TRUE;
}

static void
test_cancel_from_another_thread (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (500, 8, 0.97f, DIM);
  LkFaces faces = test_set_faces (set);
  guint counts[] = { 1, 2 };

  for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
    {
      /* One thread reports between its own blocks, so its first round is
       * always mid-way; a pool's is on most machines, and 50 rounds in which
       * the workers always won would say the test no longer tests. */
      guint rounds = 1;
      while (!cancel_round (&faces, &cal, counts[c]))
        {
          g_assert_cmpuint (counts[c], >, 1);
          g_assert_cmpuint (++rounds, <=, 50);
        }
      g_test_message ("%u thread(s): cancelled mid-way in round %u", counts[c], rounds);
    }

  /* Cancelled before it starts: no list at all. */
  g_autoptr (GCancellable) early = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  g_cancellable_cancel (early);
  g_assert_null (lk_scan (&faces, &cal, 0.9, NULL, early, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

typedef struct
{
  GArray *fractions;
  gint inside;
  gint64 first;
  gint64 last;
} ProgressLog;

static void
log_progress_cb (double fraction, gpointer data)
{
  ProgressLog *log = data;

  /* Never two calls at once. */
  g_assert_cmpint (g_atomic_int_add (&log->inside, 1), ==, 0);
  gint64 now = g_get_monotonic_time ();
  if (log->fractions->len == 0)
    log->first = now;
  log->last = now;
  g_array_append_val (log->fractions, fraction);
  g_atomic_int_add (&log->inside, -1);
}

static void
test_progress_monotone_ends_at_one (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (400, 8, 0.97f, DIM);
  guint counts[] = { 1, 2, 5 };

  for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
    {
      g_autoptr (GArray) fractions = g_array_new (FALSE, FALSE, sizeof (double));
      ProgressLog log = { fractions, 0, 0, 0 };
      LkScanOptions o
          = { .threads = counts[c], .progress = log_progress_cb, .progress_data = &log };
      g_autoptr (LkScanResult) r = scan_with (set, &cal, 0.9, &o);

      g_assert_cmpuint (r->pairs->len, >, 0);
      g_assert_cmpuint (fractions->len, >=, 1);
      for (guint k = 0; k < fractions->len; k++)
        {
          double f = g_array_index (fractions, double, k);
          g_assert_cmpfloat (f, >, 0.0);
          g_assert_cmpfloat (f, <=, 1.0);
          if (k > 0)
            g_assert_cmpfloat (f, >, g_array_index (fractions, double, k - 1));
          if (k + 1 < fractions->len)
            g_assert_cmpfloat (f, <, 1.0);
        }
      g_assert_cmpfloat (g_array_index (fractions, double, fractions->len - 1), ==, 1.0);
      /* At most ~30 a second: calls before the last are ≥ 1/30 s apart. */
      double span = (log.last - log.first) / (double) G_USEC_PER_SEC;
      g_assert_cmpfloat (fractions->len, <=, 2 + span * 30.0);
    }

  /* Nothing to scan still finishes with exactly one 1.0. */
  g_autoptr (TestSet) empty = test_set_new (0, DIM);
  g_autoptr (GArray) fractions = g_array_new (FALSE, FALSE, sizeof (double));
  ProgressLog log = { fractions, 0, 0, 0 };
  LkScanOptions o = { .progress = log_progress_cb, .progress_data = &log };
  g_autoptr (LkScanResult) r = scan_with (empty, &cal, 0.9, &o);
  g_assert_cmpuint (r->pairs->len, ==, 0);
  g_assert_cmpuint (fractions->len, ==, 1);
  g_assert_cmpfloat (g_array_index (fractions, double, 0), ==, 1.0);
}

/* Bad input is a clear error naming the face, never a crash. */
static void
test_invalid_input_is_an_error (void)
{
  LkCalibration cal = test_calibration ();
  struct
  {
    const char *what;
    gsize face;
    float crop;
    float value;
  } cases[] = {
    { "Face 5 has crop size 0", 5, 0.0f, 0 },
    { "Face 9 has crop size nan", 9, NAN, 0 },
    { "Face 3's embedding has L2 norm nan", 3, 150, NAN },
    { "Face 4's embedding has L2 norm inf", 4, 150, INFINITY },
    { "Face 7's embedding has L2 norm 3", 7, 150, 3.0f },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (TestSet) set = test_population (4, 3, 0.9f, 8);
      g_autoptr (GError) error = NULL;
      set->crop_px[cases[c].face] = cases[c].crop;
      if (cases[c].value != 0)
        {
          memset (set->embeddings + cases[c].face * 8, 0, 8 * sizeof (float));
          set->embeddings[cases[c].face * 8] = cases[c].value;
        }
      LkFaces faces = test_set_faces (set);
      g_assert_null (lk_scan (&faces, &cal, 0.9, NULL, NULL, &error));
      g_assert_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID);
      if (!g_str_has_prefix (error->message, cases[c].what))
        g_error ("expected “%s…”, got “%s”", cases[c].what, error->message);
    }

  g_autoptr (TestSet) set = test_population (2, 2, 0.9f, 8);
  LkFaces faces = test_set_faces (set);
  g_autoptr (GError) error = NULL;
  faces.dim = 0;
  g_assert_null (lk_scan (&faces, &cal, 0.9, NULL, NULL, &error));
  g_assert_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID);
}

static void
test_unsupported_kernel_is_an_error (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (2, 2, 0.9f, 8);
  LkFaces faces = test_set_faces (set);
  guint refused = 0;

  for (LkKernelId id = LK_KERNEL_PORTABLE; id <= LK_KERNEL_NEON; id++)
    {
      g_autoptr (GError) error = NULL;
      LkScanOptions o = { .kernel = id };
      g_autoptr (LkScanResult) r = lk_scan (&faces, &cal, 0.9, &o, NULL, &error);
      if (r != NULL)
        {
          g_assert_cmpstr (r->kernel, ==, lk_kernel_id_to_string (id));
          continue;
        }
      refused++;
      g_assert_error (error, LK_KERNEL_ERROR, LK_KERNEL_ERROR_UNSUPPORTED);
    }
  g_assert_cmpuint (refused, >=, 1);
}

/* A library folder holding `set` (LIBRARY-FORMAT.md): probes get quality 0.3
 * under the default gallery bar of 0.5, everything else 0.9. With `scale`
 * other than 1 the rows are written unnormalised and declared so. */
static char *
write_library (const TestSet *set, const LkCalibration *cal, double bar, float scale)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("lk-scan-XXXXXX", &error);
  g_autoptr (GString) json = g_string_new (NULL);
  g_autofree float *rows = g_memdup2 (set->embeddings, set->n * set->dim * sizeof (float));
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], w[G_ASCII_DTOSTR_BUF_SIZE],
      p[G_ASCII_DTOSTR_BUF_SIZE];

  g_assert_no_error (error);
  for (gsize k = 0; k < set->n * set->dim; k++)
    rows[k] *= scale;
  g_autofree char *embeddings = g_build_filename (dir, "embeddings.f32", NULL);
  g_file_set_contents (embeddings, (const char *) rows, set->n * set->dim * sizeof (float), &error);
  g_assert_no_error (error);

  g_string_append_printf (
      json,
      "{\"format\": \"likeness-library\", \"version\": 1,\n"
      " \"embeddings\": {\"file\": \"embeddings.f32\", \"dim\": %u, \"count\": %" G_GSIZE_FORMAT
      ", \"normalized\": %s},\n"
      " \"calibration\": {\"a\": %s, \"b\": %s, \"w_size\": %s},\n"
      " \"min_probability\": %s,\n \"faces\": [\n",
      set->dim, set->n, scale == 1.0f ? "true" : "false", g_ascii_dtostr (a, sizeof a, cal->a),
      g_ascii_dtostr (b, sizeof b, cal->b), g_ascii_dtostr (w, sizeof w, cal->w_size),
      g_ascii_dtostr (p, sizeof p, bar));
  for (gsize i = 0; i < set->n; i++)
    g_string_append_printf (json,
                            "  {\"photo\": %" G_GUINT64_FORMAT ", \"crop_px\": %s, "
                            "\"quality\": %s}%s\n",
                            set->photo[i], g_ascii_dtostr (a, sizeof a, set->crop_px[i]),
                            set->gallery[i] ? "0.9" : "0.3", i + 1 < set->n ? "," : "");
  g_string_append (json, " ]\n}\n");
  g_autofree char *manifest = g_build_filename (dir, "library.json", NULL);
  g_file_set_contents (manifest, json->str, json->len, &error);
  g_assert_no_error (error);
  return dir;
}

static void
remove_library (const char *dir)
{
  g_autofree char *manifest = g_build_filename (dir, "library.json", NULL);
  g_autofree char *embeddings = g_build_filename (dir, "embeddings.f32", NULL);
  g_autofree char *pairs = g_build_filename (dir, "pairs.tsv", NULL);

  g_remove (manifest);
  g_remove (embeddings);
  g_remove (pairs);
  g_rmdir (dir);
}

/* A set with every rule in play: shared photos, probes, sizes, a size weight. */
static TestSet *
rule_set (LkCalibration *cal)
{
  TestSet *set = test_population (60, 8, 0.97f, DIM);

  give_sizes (set);
  for (gsize i = 0; i < set->n; i++)
    {
      set->photo[i] = i % 11 == 0 ? i + 1 : i;
      set->gallery[i] = i % 3 != 0;
    }
  *cal = test_calibration ();
  cal->w_size = 0.5;
  cal->b = -30.0 * 0.35 - 0.5 * 7.0;
  return set;
}

/* lk_faces_from_library maps every field the scan reads: the scan of a
 * library loaded from disk equals the reference on the vectors written. */
static void
test_library_from_disk (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  float scales[] = { 1.0f, 3.5f };

  for (guint s = 0; s < G_N_ELEMENTS (scales); s++)
    {
      g_autofree char *dir = write_library (set, &cal, 0.9, scales[s]);
      g_autoptr (GError) error = NULL;
      g_autoptr (LkLibrary) library = lk_library_load (dir, &error);
      g_assert_no_error (error);

      LkFaces faces;
      lk_faces_from_library (&faces, library);
      g_assert_cmpuint (faces.n, ==, set->n);
      g_assert_cmpuint (faces.dim, ==, set->dim);
      g_autoptr (LkScanResult) got
          = lk_scan (&faces, &library->calibration, library->min_probability, NULL, NULL, &error);
      g_assert_no_error (error);
      LkFaces mine = test_set_faces (set);
      g_autoptr (GArray) want = test_reference (&mine, &cal, 0.9);
      g_assert_cmpuint (want->len, >, 0);
      test_assert_same_pairs (got, want, &mine, &cal, 0.9);
      remove_library (dir);
    }
}

/* Runs likeness-cli with `args`; returns its exit status. */
static int
run_cli (const char *const *args, char **out, char **err)
{
  const char *cli = g_getenv ("LIKENESS_CLI");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_assert_nonnull (cli);
  g_ptr_array_add (argv, (gpointer) cli);
  for (guint k = 0; args[k] != NULL; k++)
    g_ptr_array_add (argv, (gpointer) args[k]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status,
                &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, &error))
    {
      if (!g_error_matches (error, G_SPAWN_EXIT_ERROR, error->code))
        g_error ("likeness-cli did not exit normally: %s", error->message);
      return error->code;
    }
  return 0;
}

/* The summary line, exactly in the format, with the right count, and
 * nothing on stderr when it is not a terminal (no progress bar). */
static void
test_cli_summary_line (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  g_autofree char *dir = write_library (set, &cal, 0.9, 1.0f);
  LkFaces faces = test_set_faces (set);
  g_autoptr (GArray) want = test_reference (&faces, &cal, 0.9);
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "scan", dir, "--kernel", "portable", "--threads", "2", NULL };

  g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
  g_autofree char *pattern = g_strdup_printf (
      "^scan faces=%" G_GSIZE_FORMAT " dim=%u pairs=%u seconds=[0-9]+\\.[0-9]{3} "
      "gflops=[0-9]+\\.[0-9]{2} kernel=portable first_pass=[a-z0-9-]+ threads=2\\nchoice: forced "
      "by the caller.s kernel\\n$",
      set->n, set->dim, want->len);
  if (!g_regex_match_simple (pattern, out, 0, 0))
    g_error ("summary “%s” does not match %s", out, pattern);
  g_assert_cmpstr (err, ==, "");
  remove_library (dir);
}

/* --pairs writes i TAB j TAB probability, in (i, j) order, the reference's
 * pairs and probabilities; --min-probability overrides the library's bar. */
static void
test_cli_pairs_file (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  g_autofree char *dir = write_library (set, &cal, 0.9, 1.0f);
  g_autofree char *path = g_build_filename (dir, "pairs.tsv", NULL);
  LkFaces faces = test_set_faces (set);
  double bars[] = { 0.9, 0.999 };

  for (guint b = 0; b < G_N_ELEMENTS (bars); b++)
    {
      char bar[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_dtostr (bar, sizeof bar, bars[b]);
      /* The same kernel in-process: probabilities must survive the text. */
      g_autoptr (LkScanResult) scanned = scan (set, &cal, bars[b]);
      g_autoptr (GArray) reference = test_reference (&faces, &cal, bars[b]);
      test_assert_same_pairs (scanned, reference, &faces, &cal, bars[b]);
      GArray *want = scanned->pairs;
      g_autofree char *out = NULL, *err = NULL, *text = NULL;
      const char *args[] = { "scan", dir, "--pairs", path, "--min-probability", bar, NULL };
      g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));

      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
      g_assert_cmpuint (g_strv_length (lines), ==, want->len + 1);
      g_assert_cmpstr (lines[want->len], ==, "");
      for (guint k = 0; k < want->len; k++)
        {
          const LkPair *p = &g_array_index (want, LkPair, k);
          g_auto (GStrv) f = g_strsplit (lines[k], "\t", -1);
          g_assert_cmpuint (g_strv_length (f), ==, 3);
          g_assert_cmpuint (g_ascii_strtoull (f[0], NULL, 10), ==, p->i);
          g_assert_cmpuint (g_ascii_strtoull (f[1], NULL, 10), ==, p->j);
          g_assert_cmpfloat ((float) g_ascii_strtod (f[2], NULL), ==, p->probability);
        }
      if (b > 0)
        g_assert_cmpuint (want->len, >, 0);
    }
  remove_library (dir);
}

static void
test_cli_json (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  g_autofree char *dir = write_library (set, &cal, 0.9, 1.0f);
  LkFaces faces = test_set_faces (set);
  g_autoptr (GArray) want = test_reference (&faces, &cal, 0.9);
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "scan", dir, "--json", "--threads", "1", NULL };
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (o, "faces"), ==, set->n);
  g_assert_cmpint (json_object_get_int_member (o, "dim"), ==, set->dim);
  g_assert_cmpint (json_object_get_int_member (o, "pairs"), ==, want->len);
  g_assert_cmpint (json_object_get_int_member (o, "threads"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (o, "near_boundary"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (o, "kernel"), ==,
                   lk_kernel_get (LK_KERNEL_AUTO, NULL)->name);
  g_assert_cmpfloat (json_object_get_double_member (o, "seconds"), >=, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "gflops"), >=, 0);
  remove_library (dir);
}

/* A kernel this processor cannot run is exit 1 with a message naming it; an
 * unknown one, or a bar outside (0, 1), is bad usage (2); a missing library
 * is exit 1 naming the folder. */
static void
test_cli_errors (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  g_autofree char *dir = write_library (set, &cal, 0.9, 1.0f);
  const char *unrunnable = NULL;

  for (LkKernelId id = LK_KERNEL_PORTABLE; id <= LK_KERNEL_NEON && !unrunnable; id++)
    if (lk_kernel_get (id, NULL) == NULL)
      unrunnable = lk_kernel_id_to_string (id);
  g_assert_nonnull (unrunnable);

  struct
  {
    const char *args[6];
    int status;
    const char *says;
  } cases[] = {
    { { "scan", dir, "--kernel", unrunnable, NULL }, 1, unrunnable },
    { { "scan", dir, "--kernel", "sse9", NULL }, 2, "sse9" },
    { { "scan", dir, "--min-probability", "1.5", NULL }, 2, "1.5" },
    { { "scan", dir, "--min-probability", "0.9x", NULL }, 2, "0.9x" },
    { { "scan", dir, "--threads", "-2", NULL }, 2, "-2" },
    { { "scan", "/nonexistent/lk-library", NULL }, 1, "/nonexistent/lk-library" },
    { { "scan", NULL }, 2, "LIBRARY" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_assert_cmpint (run_cli (cases[c].args, &out, &err), ==, cases[c].status);
      g_assert_cmpstr (out, ==, "");
      if (strstr (err, cases[c].says) == NULL)
        g_error ("case %u: stderr “%s” does not mention “%s”", c, err, cases[c].says);
    }
  remove_library (dir);
}

/* `scan --rows A:B --pairs FILE` shards concatenate into exactly the full
 * scan's pair file (what a Slurm array or GNU parallel would do), "A:" runs
 * to the last face, and a malformed or out-of-range --rows is refused. */
static void
test_cli_row_shards (void)
{
  LkCalibration cal;
  g_autoptr (TestSet) set = rule_set (&cal);
  g_autofree char *dir = write_library (set, &cal, 0.9, 1.0f);
  g_autofree char *full_path = g_build_filename (dir, "full.tsv", NULL);
  g_autofree char *full = NULL;
  g_autoptr (GString) joined = g_string_new (NULL);
  g_autofree char *mid
      = g_strdup_printf ("%" G_GSIZE_FORMAT ":%" G_GSIZE_FORMAT, set->n / 3, set->n / 2);
  g_autofree char *last = g_strdup_printf ("%" G_GSIZE_FORMAT ":", set->n / 2);
  g_autofree char *first = g_strdup_printf ("7:%" G_GSIZE_FORMAT, set->n / 3);
  const char *shards[] = { "0:0", "0:7", first, mid, last };

  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "scan", dir, "--pairs", full_path, NULL };
    g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
    g_assert_true (g_file_get_contents (full_path, &full, NULL, NULL));
    g_assert_cmpuint (strlen (full), >, 0);
  }
  for (gsize k = 0; k < G_N_ELEMENTS (shards); k++)
    {
      g_autofree char *path = g_strdup_printf ("%s/shard-%" G_GSIZE_FORMAT ".tsv", dir, k);
      g_autofree char *out = NULL, *err = NULL, *text = NULL;
      const char *args[]
          = { "scan", dir, "--rows", shards[k], "--pairs", path, "--threads", "2", NULL };
      g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
      g_assert_nonnull (strstr (out, " rows="));
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_string_append (joined, text);
      g_remove (path);
    }
  g_assert_cmpstr (joined->str, ==, full);

  g_autofree char *beyond = g_strdup_printf ("0:%" G_GSIZE_FORMAT, set->n + 1);
  struct
  {
    const char *rows;
    int status;
  } cases[]
      = { { "5", 2 }, { "a:b", 2 }, { "1:2:3", 2 }, { "-1:4", 2 }, { "9:3", 1 }, { beyond, 1 } };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL;
      const char *args[] = { "scan", dir, "--rows", cases[c].rows, NULL };
      g_assert_cmpint (run_cli (args, &out, &err), ==, cases[c].status);
      g_assert_cmpstr (out, ==, "");
      if (strstr (err, cases[c].rows) == NULL)
        g_error ("--rows %s: stderr “%s” does not name it", cases[c].rows, err);
    }
  g_remove (full_path);
  remove_library (dir);
}

/* Issue 19: a calibration with a flipped sign (b = +10.5) made every pair a
 * candidate — 49 M pairs for 10,000 faces, 3.5 GB in `people`. A scan that
 * finds more pairs than its budget stops with an error naming the
 * calibration; exactly at the budget it still returns every pair, on one
 * thread or two. */
static void
test_pair_budget_stops_a_flipped_calibration (void)
{
  LkCalibration flipped = { 30.0, 10.5, 0.0, 0, 0 };
  g_autoptr (TestSet) set = test_population (1024, 1, 0.97f, DIM);
  LkFaces faces = test_set_faces (set);

  /* The default budget: 1,000 a face, never under 2^24. */
  g_assert_cmpuint (lk_scan_pair_budget (0), ==, (guint64) 1 << 24);
  g_assert_cmpuint (lk_scan_pair_budget (10000), ==, (guint64) 1 << 24);
  g_assert_cmpuint (lk_scan_pair_budget (100000), ==, 100000000);

  g_autoptr (LkScanResult) all = scan (set, &flipped, 0.9);
  /* Nearly every one of the 523,776 pairs. */
  g_assert_cmpuint (all->pairs->len, >, 500000);
  guint counts[] = { 1, 2 };
  for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
    {
      LkScanOptions at = { .threads = counts[c], .max_pairs = all->pairs->len };
      g_autoptr (LkScanResult) exact = scan_with (set, &flipped, 0.9, &at);
      assert_identical (all, exact);

      g_autoptr (GError) error = NULL;
      LkScanOptions over = { .threads = counts[c], .max_pairs = all->pairs->len - 1 };
      g_assert_null (lk_scan (&faces, &flipped, 0.9, &over, NULL, &error));
      g_assert_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_TOO_MANY_PAIRS);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, "more than"));
      g_assert_nonnull (strstr (error->message, "of the 1024 faces"));
      g_assert_nonnull (strstr (error->message, "calibration (a = 30, b = 10.5, w_size = 0)"));
      g_assert_nonnull (strstr (error->message, "min_probability 0.9"));

      /* Stopped early: a budget of 1,000 pairs is passed within the first
       * block, long before the end. */
      g_autoptr (GError) early = NULL;
      LkScanOptions small = { .threads = counts[c], .max_pairs = 1000 };
      g_assert_null (lk_scan (&faces, &flipped, 0.9, &small, NULL, &early));
      g_assert_error (early, LK_SCAN_ERROR, LK_SCAN_ERROR_TOO_MANY_PAIRS);
      g_test_message ("%s", early->message);
      g_assert_nonnull (strstr (early->message, "more than 1000 pairs"));
      g_assert_nonnull (strstr (early->message, "0.0 % of the pairs compared"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scan/nothing-to-pair-is-no-pairs", test_nothing_to_pair);
  g_test_add_func ("/scan/blocked-matches-reference", test_blocked_matches_reference);
  g_test_add_func ("/scan/threaded-matches-reference", test_threaded_matches_reference);
  g_test_add_func ("/scan/size-weighted-calibration-matches", test_size_weighted_calibration);
  g_test_add_func ("/scan/negative-size-weight-prunes-from-the-other-end",
                   test_negative_size_weight);
  g_test_add_func ("/scan/negative-weight-with-sub-pixel-crops",
                   test_negative_weight_with_tiny_crops);
  g_test_add_func ("/scan/flat-calibration-prunes-nothing", test_flat_calibration_prunes_nothing);
  g_test_add_func ("/scan/degenerate-calibrations-prune-nothing",
                   test_degenerate_calibrations_prune_nothing);
  g_test_add_func ("/scan/loosest-cosine-is-the-minimum-boundary",
                   test_loosest_cosine_is_the_minimum_boundary);
  g_test_add_func ("/scan/same-photo-never-paired", test_same_photo_never_paired);
  g_test_add_func ("/scan/two-probes-never-paired", test_two_probes_never_paired);
  g_test_add_func ("/scan/gallery-rule-at-scale", test_gallery_rule_at_scale);
  g_test_add_func ("/scan/pairs-in-index-order", test_index_order);
  g_test_add_func ("/scan/every-kernel-and-thread-count-is-canonical",
                   test_every_kernel_and_thread_count_is_canonical);
  g_test_add_func ("/scan/same-input-same-pairs", test_same_input_same_pairs);
  g_test_add_func ("/scan/filter-rejects-almost-everything", test_filter_rejects_almost_everything);
  g_test_add_func ("/scan/one-two-n-threads-identical", test_thread_counts_identical);
  g_test_add_func ("/scan/row-shards-concatenate-to-the-full-scan", test_row_shards_concatenate);
  g_test_add_func ("/scan/deferred-recheck-is-the-tile-answer",
                   test_deferred_recheck_is_the_tile_answer);
  g_test_add_func ("/scan/column-begin-keeps-the-later-columns",
                   test_column_begin_keeps_the_later_columns);
  g_test_add_func ("/scan/every-kernel-odd-dims-match-reference", test_every_kernel_odd_dims);
  g_test_add_func ("/scan/tiling-and-filter-do-not-change-the-answer",
                   test_tiling_and_filter_do_not_change_the_answer);
  g_test_add_func ("/scan/near-boundary-pairs-are-counted", test_near_boundary_is_counted);
  g_test_add_func ("/scan/cancel-from-another-thread", test_cancel_from_another_thread);
  g_test_add_func ("/scan/progress-monotone-ends-at-one", test_progress_monotone_ends_at_one);
  g_test_add_func ("/scan/invalid-input-is-an-error", test_invalid_input_is_an_error);
  g_test_add_func ("/scan/unsupported-kernel-is-an-error", test_unsupported_kernel_is_an_error);
  g_test_add_func ("/scan/library-from-disk", test_library_from_disk);
  g_test_add_func ("/scan/pair-budget-stops-a-flipped-calibration",
                   test_pair_budget_stops_a_flipped_calibration);
  g_test_add_func ("/scan/cli/summary-line", test_cli_summary_line);
  g_test_add_func ("/scan/cli/pairs-file", test_cli_pairs_file);
  g_test_add_func ("/scan/cli/json", test_cli_json);
  g_test_add_func ("/scan/cli/errors", test_cli_errors);
  g_test_add_func ("/scan/cli/row-shards-concatenate", test_cli_row_shards);
  return g_test_run ();
}
