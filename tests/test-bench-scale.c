/* test-bench-scale — bench-scale's judgement cannot rot silently
 *
 * The benchmark's figures are only as good as three steps: reading a child's
 * peak RSS, reading what the child printed, and deciding whether two pair
 * lists agree. Each is proven here on inputs whose answer is known, and the
 * whole benchmark runs once on a 300-face library ($BENCH_SCALE, set by
 * meson; about a second).
 */
#include "config.h"

#include <stdio.h>
#include <sys/wait.h>

#include "lk-bench-scale.h"
#include "library/lk-sample.h"
#include "lk-test-faces.h"
#include "lk-test-util.h"

static const char *
bench_path (void)
{
  const char *path = g_getenv ("BENCH_SCALE");
  if (path == NULL)
    g_test_skip ("BENCH_SCALE is not set (run through meson test)");
  return path;
}

/* Runs bench-scale with the NULL-terminated arguments; returns its stdout. */
static char *
run_bench (LkBenchChild *child, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) bench_path ());
  va_list args;
  va_start (args, child);
  for (const char *a = va_arg (args, const char *); a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  g_autoptr (GError) error = NULL;
  g_assert_true (lk_bench_run_child ((char *const *) argv->pdata, TRUE, child, &error));
  g_assert_no_error (error);
  g_test_message ("bench-scale printed:\n%s", child->output);
  g_assert_true (WIFEXITED (child->wait_status));
  return child->output;
}

static void
test_status_kb_reads_only_the_named_field (void)
{
  const char *status = "Name:\tbench-scale\n"
                       "VmPeak:\t  900000 kB\n"
                       "VmHWM:\t   71234 kB\n"
                       "VmRSS:\t   70000 kB\n"
                       "Threads:\t2\n";
  guint64 kb = 0;

  g_assert_true (lk_bench_status_kb (status, "VmHWM", &kb));
  g_assert_cmpuint (kb, ==, 71234);
  g_assert_true (lk_bench_status_kb (status, "VmRSS", &kb));
  g_assert_cmpuint (kb, ==, 70000);
  /* A prefix of a field is not the field; a count without kB is not a size. */
  g_assert_false (lk_bench_status_kb (status, "Vm", &kb));
  g_assert_false (lk_bench_status_kb (status, "Threads", &kb));
  g_assert_false (lk_bench_status_kb (status, "VmSwap", &kb));
  g_assert_false (lk_bench_status_kb ("VmHWM:\t12 MB\n", "VmHWM", &kb));
  g_assert_false (lk_bench_status_kb ("VmHWM:\tlots kB\n", "VmHWM", &kb));
  g_assert_false (lk_bench_status_kb ("VmHWM:\t99999999999999999999999 kB\n", "VmHWM", &kb));
  g_assert_cmpuint (kb, ==, 70000);

  /* And this process's own status has both fields, peak ≥ current. */
  guint64 rss = lk_bench_self_kb ("VmRSS"), hwm = lk_bench_self_kb ("VmHWM");
  g_assert_cmpuint (rss, >, 0);
  g_assert_cmpuint (hwm, >=, rss);
}

static void
test_field_reads_the_result_line (void)
{
  const char *output = "openblas: OpenBLAS 0.3.21 Haswell; seconds=99\n"
                       "resultx seconds=98\n"
                       "result arm=scan seconds=1.250 pairs=765265 ab=3 a=7 empty= word\n";
  g_autofree char *arm = lk_bench_field (output, "arm");
  g_autofree char *missing = lk_bench_field (output, "kernel");
  double seconds;
  guint64 value;

  g_assert_cmpstr (arm, ==, "scan");
  g_assert_null (missing);
  g_assert_true (lk_bench_field_double (output, "seconds", &seconds));
  g_assert_cmpfloat (seconds, ==, 1.25);
  g_assert_true (lk_bench_field_uint (output, "pairs", &value));
  g_assert_cmpuint (value, ==, 765265);
  g_assert_true (lk_bench_field_uint (output, "a", &value));
  g_assert_cmpuint (value, ==, 7);
  g_assert_false (lk_bench_field_uint (output, "arm", &value));
  g_assert_false (lk_bench_field_double (output, "empty", &seconds));
  g_assert_false (lk_bench_field_double (output, "word", &seconds));
  g_assert_false (lk_bench_field_uint (NULL, "arm", &value));
}

static void
test_sizes_parse_and_refuse (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) sizes = lk_bench_parse_sizes ("18143, 50000,100000", 10000000, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (sizes->len, ==, 3);
  g_assert_cmpuint (g_array_index (sizes, gsize, 0), ==, 18143);
  g_assert_cmpuint (g_array_index (sizes, gsize, 2), ==, 100000);

  const char *bad[] = { "", "1", "300,", "12x", "300,,400", "20000000", "-5" };
  for (gsize k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autoptr (GError) e = NULL;
      g_autoptr (GArray) none = lk_bench_parse_sizes (bad[k], 10000000, &e);
      g_assert_null (none);
      g_assert_error (e, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_assert_true (g_str_has_prefix (e->message, "--faces: "));
    }
}

/* Faces 0, 1 exactly at the bar's cosine; 2, 3 far above it; 4 a stranger. */
static TestSet *
boundary_set (LkCalibration *cal, double *bar)
{
  const guint dim = 32;
  TestSet *set = test_set_new (5, dim);
  g_autofree float *other = g_new (float, dim);

  *cal = test_calibration ();
  *bar = 0.5; /* logit 0: cos = -b / a = 0.35 */
  test_vector (1, dim, set->embeddings);
  test_vector (2, dim, other);
  test_near (set->embeddings, other, 0.35f, dim, set->embeddings + dim);
  test_vector (3, dim, set->embeddings + 2 * dim);
  test_near (set->embeddings + 2 * dim, other, 0.9f, dim, set->embeddings + 3 * dim);
  test_vector (4, dim, set->embeddings + 4 * dim);
  return set;
}

static void
test_agreement_allows_only_the_boundary (void)
{
  LkCalibration cal;
  double bar;
  g_autoptr (TestSet) set = boundary_set (&cal, &bar);
  LkFaces faces = test_set_faces (set);
  g_assert_cmpfloat (test_distance_to_bar (&faces, &cal, bar, 0, 1), <=, LK_SCAN_NEAR_BOUNDARY);
  g_assert_cmpfloat (test_distance_to_bar (&faces, &cal, bar, 2, 3), >, 0.1);

  const LkPair with_boundary[] = { { 0, 1, 0.5f }, { 2, 3, 0.99f } };
  const LkPair without[] = { { 2, 3, 0.99f } };
  const LkPair stranger[] = { { 2, 3, 0.99f }, { 2, 4, 0.99f } };
  const LkPair out_of_range[] = { { 2, 3, 0.99f }, { 3, 9, 0.99f } };
  LkBenchAgreement g;

  lk_bench_compare_pairs (with_boundary, 2, with_boundary, 2, &faces, &cal, bar, &g);
  g_assert_cmpuint (g.only_a + g.only_b + g.beyond, ==, 0);

  /* A pair at the bar in one list only: allowed, and counted. */
  lk_bench_compare_pairs (with_boundary, 2, without, 1, &faces, &cal, bar, &g);
  g_assert_cmpuint (g.only_a, ==, 1);
  g_assert_cmpuint (g.only_b, ==, 0);
  g_assert_cmpuint (g.beyond, ==, 0);

  /* A pair far from the bar missing from one list, on either side. */
  lk_bench_compare_pairs (without, 1, with_boundary + 0, 1, &faces, &cal, bar, &g);
  g_assert_cmpuint (g.beyond, ==, 1); /* (2,3) only in a */
  g_assert_cmpuint (g.first_i, ==, 2);
  g_assert_cmpuint (g.first_j, ==, 3);
  lk_bench_compare_pairs (without, 1, stranger, 2, &faces, &cal, bar, &g);
  g_assert_cmpuint (g.only_b, ==, 1);
  g_assert_cmpuint (g.beyond, ==, 1);
  g_assert_cmpuint (g.first_i, ==, 2);
  g_assert_cmpuint (g.first_j, ==, 4);

  /* A pair naming a face that does not exist is never "near the bar". */
  lk_bench_compare_pairs (out_of_range, 2, without, 1, &faces, &cal, bar, &g);
  g_assert_cmpuint (g.beyond, ==, 1);
  g_assert_cmpuint (g.first_j, ==, 9);
}

static void
test_edges_budget_adds_its_three_terms (void)
{
  g_assert_cmpuint (lk_bench_edges_bytes (100000, 512, 0, 0), ==, 204800000);
  g_assert_cmpuint (lk_bench_edges_bytes (10, 8, 1000, 2), ==,
                    320 + 1000 * sizeof (LkPair) + 2 * LK_BENCH_SCRATCH_PER_THREAD);
}

static void
test_child_peak_rss_is_its_own (void)
{
  if (bench_path () == NULL)
    return;
  LkBenchChild child;
  const char *out = run_bench (&child, "--child", "touch", "--mb", "64", NULL);
  guint64 start, hwm, reset;

  g_assert_cmpint (WEXITSTATUS (child.wait_status), ==, 0);
  g_assert_true (lk_bench_field_uint (out, "rss_start_kb", &start));
  g_assert_true (lk_bench_field_uint (out, "hwm_kb", &hwm));
  g_assert_true (lk_bench_field_uint (out, "peak_reset", &reset));
  /* 64 MiB written: the child's own peak grew by that much and not by much
   * more, and wait4's figure for it (which may include a floor from the
   * forking parent, never less) saw it — give or take the few pages the
   * kernel's batched RSS counters had not yet folded in when it exited. */
  g_assert_cmpuint (hwm, >=, start + 64 * 1024);
  g_assert_cmpuint (hwm, <, start + 96 * 1024);
  g_assert_cmpuint (child.maxrss_kb, >=, 63 * 1024);
  g_assert_cmpuint (child.maxrss_kb + 1024, >=, hwm);
  g_assert_cmpuint (reset, ==, 1);
  lk_bench_child_clear (&child);
}

static void
test_child_refuses_unknown_arm (void)
{
  if (bench_path () == NULL)
    return;
  LkBenchChild child;
  run_bench (&child, "--child", "faiss", "--library", "/nonexistent", "--pairs-out", "/dev/null",
             NULL);
  g_assert_cmpint (WEXITSTATUS (child.wait_status), !=, 0);
  lk_bench_child_clear (&child);
}

static void
write_pairs_file (const char *path, const GArray *pairs, gsize skip)
{
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  for (gsize k = 0; k < pairs->len; k++)
    if (k != skip)
      g_byte_array_append (bytes, (const guint8 *) &g_array_index (pairs, LkPair, k),
                           sizeof (LkPair));
  g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len, NULL));
}

/* The compare child on a real generated library: the scan's own list against
 * itself agrees; with one pair far from the bar dropped, it names that pair. */
static void
test_compare_child_names_a_dropped_pair (void)
{
  if (bench_path () == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-bench-scale-XXXXXX", &error);
  g_assert_no_error (error);
  LkSampleOptions options = { 300, 64, 7, FALSE };
  g_assert_true (lk_sample_write (dir, &options, &error));
  g_assert_no_error (error);
  g_autoptr (LkLibrary) library = lk_library_load (dir, &error);
  g_assert_no_error (error);
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  LkScanOptions scan_options = { .threads = 1 };
  g_autoptr (LkScanResult) r = lk_scan (&faces, &library->calibration, library->min_probability,
                                        &scan_options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->pairs->len, >, 10);

  /* The pair furthest from its bar. */
  gsize far = 0;
  double best = -1;
  for (gsize k = 0; k < r->pairs->len; k++)
    {
      const LkPair *p = &g_array_index (r->pairs, LkPair, k);
      double d = test_distance_to_bar (&faces, &library->calibration, library->min_probability,
                                       p->i, p->j);
      if (d > best)
        best = d, far = k;
    }
  g_assert_cmpfloat (best, >, LK_SCAN_NEAR_BOUNDARY);

  g_autofree char *all = g_build_filename (dir, "all.pairs", NULL);
  g_autofree char *dropped = g_build_filename (dir, "dropped.pairs", NULL);
  write_pairs_file (all, r->pairs, G_MAXSIZE);
  write_pairs_file (dropped, r->pairs, far);

  LkBenchChild same, differ;
  const char *out = run_bench (&same, "--child", "compare", "--library", dir, "--pairs-out", all,
                               "--against", all, NULL);
  guint64 beyond, only_a, n;
  g_assert_cmpint (WEXITSTATUS (same.wait_status), ==, 0);
  g_assert_true (lk_bench_field_uint (out, "beyond", &beyond));
  g_assert_true (lk_bench_field_uint (out, "a_pairs", &n));
  g_assert_cmpuint (beyond, ==, 0);
  g_assert_cmpuint (n, ==, r->pairs->len);

  out = run_bench (&differ, "--child", "compare", "--library", dir, "--pairs-out", all, "--against",
                   dropped, NULL);
  guint64 first_i, first_j;
  g_assert_cmpint (WEXITSTATUS (differ.wait_status), ==, 0);
  g_assert_true (lk_bench_field_uint (out, "beyond", &beyond));
  g_assert_true (lk_bench_field_uint (out, "only_a", &only_a));
  g_assert_true (lk_bench_field_uint (out, "first_i", &first_i));
  g_assert_true (lk_bench_field_uint (out, "first_j", &first_j));
  g_assert_cmpuint (beyond, ==, 1);
  g_assert_cmpuint (only_a, ==, 1);
  g_assert_cmpuint (first_i, ==, g_array_index (r->pairs, LkPair, far).i);
  g_assert_cmpuint (first_j, ==, g_array_index (r->pairs, LkPair, far).j);

  lk_bench_child_clear (&same);
  lk_bench_child_clear (&differ);
  lk_test_remove_tree (dir);
}

/* The whole benchmark on 300 generated faces: every arm ran in its own
 * child, reported a peak RSS, and agreed with the scan; the OpenBLAS
 * children ran without the machine's OpenBLAS overrides. */
static void
test_whole_bench_on_300_faces (void)
{
  if (bench_path () == NULL)
    return;
  LkBenchChild child;
  const char *out = run_bench (&child, "--faces", "300", "--threads", "2", NULL);
  gboolean openblas = g_strcmp0 (g_getenv ("BENCH_SCALE_OPENBLAS"), "1") == 0;

  g_assert_cmpint (WEXITSTATUS (child.wait_status), ==, 0);
  g_assert_nonnull (strstr (out, "every arm's pairs agree with the scan's"));
  const char *arms[] = { "scan", "sgemm", "ssyrk" };
  guint64 scan_pairs = 0;
  for (gsize a = 0; a < (openblas ? 3 : 1); a++)
    {
      g_autofree char *prefix = g_strdup_printf ("    300 %-6s ", arms[a]);
      const char *row = strstr (out, prefix);
      g_assert_nonnull (row);
      g_autofree char *line = g_strndup (row, strcspn (row, "\n"));
      g_auto (GStrv) w = g_strsplit_set (line, " ", -1);
      g_autoptr (GPtrArray) words = g_ptr_array_new ();
      for (char **p = w; *p != NULL; p++)
        if (**p != '\0')
          g_ptr_array_add (words, *p);
      /* faces arm kernel seconds cpu-s GFLOP/s GF/cpu-s peak vs vs pairs agree rss edges
       * loaded arm */
      g_assert_cmpuint (words->len, ==, 16);
      guint64 pairs = g_ascii_strtoull (g_ptr_array_index (words, 10), NULL, 10);
      const char *agree = g_ptr_array_index (words, 11);
      double rss = g_ascii_strtod (g_ptr_array_index (words, 12), NULL);
      double loaded = g_ascii_strtod (g_ptr_array_index (words, 14), NULL);
      if (a == 0)
        {
          scan_pairs = pairs;
          g_assert_cmpstr (agree, ==, "reference");
        }
      else
        g_assert_true (g_str_has_prefix (agree, "yes("));
      g_assert_cmpuint (pairs, >, 0);
      g_assert_cmpfloat (loaded, >, 1);
      g_assert_cmpfloat (rss, >=, loaded - 1);
    }
  if (openblas)
    {
      g_assert_nonnull (strstr (out, "sgemm child: openblas: "));
      g_assert_nonnull (strstr (out, "OPENBLAS_CORETYPE=(unset) OPENBLAS_L2_SIZE=(unset)"));
    }
  g_assert_cmpuint (scan_pairs, >, 0);
  lk_bench_child_clear (&child);
}

static void
test_whole_bench_refuses_bad_sizes (void)
{
  if (bench_path () == NULL)
    return;
  LkBenchChild child;
  run_bench (&child, "--faces", "300,x", NULL);
  g_assert_cmpint (WEXITSTATUS (child.wait_status), ==, 2);
  lk_bench_child_clear (&child);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bench-scale/status/kb-of-the-named-field-only",
                   test_status_kb_reads_only_the_named_field);
  g_test_add_func ("/bench-scale/field/reads-the-result-line", test_field_reads_the_result_line);
  g_test_add_func ("/bench-scale/sizes/parse-and-refuse", test_sizes_parse_and_refuse);
  g_test_add_func ("/bench-scale/agreement/only-the-boundary-may-differ",
                   test_agreement_allows_only_the_boundary);
  g_test_add_func ("/bench-scale/edges/budget-adds-three-terms",
                   test_edges_budget_adds_its_three_terms);
  g_test_add_func ("/bench-scale/child/peak-rss-is-its-own", test_child_peak_rss_is_its_own);
  g_test_add_func ("/bench-scale/child/refuses-unknown-arm", test_child_refuses_unknown_arm);
  g_test_add_func ("/bench-scale/child/compare-names-a-dropped-pair",
                   test_compare_child_names_a_dropped_pair);
  g_test_add_func ("/bench-scale/run/300-faces-every-arm-agrees", test_whole_bench_on_300_faces);
  g_test_add_func ("/bench-scale/run/refuses-bad-sizes", test_whole_bench_refuses_bad_sizes);
  return g_test_run ();
}
