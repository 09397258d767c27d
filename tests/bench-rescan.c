/* bench-rescan — a re-scan of a grown library against the full scan, in one run
 *
 *   bench-rescan [--faces N] [--added M] [--seed S] [--reps R] [--threads T]
 *
 * Generates a library of N + M faces (make-sample statistics, default
 * 18,143 + 1,000, seed 7), derives from it the library of its first N faces
 * (the same faces: the manifest's first N entries and rows), scans that one
 * through lk_scan_cached to keep its scan, then times, R times in an order
 * that alternates, on the grown library:
 *
 *   full    lk_scan, every pair;
 *   rescan  lk_scan_cached from a fresh copy of the kept scan of the N faces:
 *           the face keys and hashes, reading the kept pairs, the pairs of
 *           the M added faces, the merge, and writing the new kept scan.
 *
 * It checks that both give the same pairs, byte for byte, and prints each
 * arm's median wall and CPU seconds, the median of the per-repetition ratio
 * full / rescan, the CPU and the load average before and after.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing/lk-cpu.h"
#include "library/lk-sample.h"
#include "scan/lk-scan-cache.h"
#include "lk-test-util.h"

/* The three load averages of /proc/loadavg. */
static char *
load_average (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("?");
  g_auto (GStrv) words = g_strsplit (text, " ", 4);
  if (g_strv_length (words) < 3)
    return g_strdup ("?");
  return g_strdup_printf ("%s %s %s", words[0], words[1], words[2]);
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, values->len / 2);
}

/* The first `n` faces of `grown` into `folder`: the manifest's first n
 * entries, its first n rows. */
static void
write_prefix (const char *grown, const char *folder, gsize n)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *manifest = g_build_filename (grown, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();

  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *embeddings = json_object_get_object_member (root, "embeddings");
  JsonArray *faces = json_object_get_array_member (root, "faces");
  gsize dim = (gsize) json_object_get_int_member (embeddings, "dim");
  while (json_array_get_length (faces) > n)
    json_array_remove_element (faces, json_array_get_length (faces) - 1);
  json_object_set_int_member (embeddings, "count", (gint64) n);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_autofree char *out = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, out, &error));

  const char *file = json_object_get_string_member (embeddings, "file");
  g_autofree char *rows_in = g_build_filename (grown, file, NULL);
  g_autofree char *rows_out = g_build_filename (folder, file, NULL);
  g_autofree char *rows = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (rows_in, &rows, &length, &error));
  g_assert_true (g_file_set_contents (rows_out, rows, (gssize) (n * dim * sizeof (float)), &error));
}

int
main (int argc, char **argv)
{
  int faces = 18143, added = 1000, reps = 3, threads = 0;
  gint64 seed = 7;
  const GOptionEntry entries[] = {
    { "faces", 0, 0, G_OPTION_ARG_INT, &faces, "Faces of the kept scan (18143)", "N" },
    { "added", 0, 0, G_OPTION_ARG_INT, &added, "Faces the library grows by (1000)", "M" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Generator seed (7)", "S" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of each arm (3)", "R" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Scan threads (0: one per core)", "T" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || faces < 1 || added < 0 || reps < 1)
    {
      fprintf (stderr, "bench-rescan: %s\n", error ? error->message : "bad arguments");
      return 2;
    }

  g_autofree char *work = g_dir_make_tmp ("lk-bench-rescan-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *grown_dir = g_build_filename (work, "grown", NULL);
  g_autofree char *base_dir = g_build_filename (work, "base", NULL);
  g_autofree char *kept = g_build_filename (work, "kept.scan", NULL);
  g_autofree char *cache = g_build_filename (work, "work.scan", NULL);
  LkSampleOptions sample
      = { (gsize) (faces + added), LK_SAMPLE_DEFAULT_DIM, (guint64) seed, FALSE };
  g_assert_true (lk_sample_write (grown_dir, &sample, &error));
  write_prefix (grown_dir, base_dir, (gsize) faces);

  LkScanOptions options = { .threads = (guint) threads };
  {
    g_autoptr (LkLibrary) base = lk_library_load (base_dir, &error);
    g_assert_no_error (error);
    LkScanReuse reuse = { 0 };
    g_autoptr (LkScanResult) r = lk_scan_cached (base, &base->calibration, base->min_probability,
                                                 &options, kept, &reuse, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (r);
    g_assert_true (reuse.saved);
    lk_scan_reuse_clear (&reuse);
  }
  g_autoptr (LkLibrary) library = lk_library_load (grown_dir, &error);
  g_assert_no_error (error);
  LkFaces all;
  lk_faces_from_library (&all, library);
  g_autofree char *kept_bytes = NULL;
  gsize kept_length;
  g_assert_true (g_file_get_contents (kept, &kept_bytes, &kept_length, &error));

  g_autoptr (GArray) full_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) full_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) re_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) re_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *load_before = load_average ();
  const char *kernel = "?", *first_pass = "?";
  guint64 pairs = 0;
  LkScanReuse reuse = { 0 };

  for (int rep = 0; rep < reps; rep++)
    {
      double seconds[2], cpu[2];
      g_autoptr (LkScanResult) full = NULL;
      g_autoptr (LkScanResult) again = NULL;
      for (int k = 0; k < 2; k++)
        {
          int arm = (k + rep) % 2;
          if (arm == 1)
            g_assert_true (g_file_set_contents (cache, kept_bytes, (gssize) kept_length, &error));
          double c0 = lk_cpu_process_seconds ();
          gint64 t0 = g_get_monotonic_time ();
          if (arm == 0)
            full = lk_scan (&all, &library->calibration, library->min_probability, &options, NULL,
                            &error);
          else
            {
              lk_scan_reuse_clear (&reuse);
              again = lk_scan_cached (library, &library->calibration, library->min_probability,
                                      &options, cache, &reuse, NULL, &error);
            }
          g_assert_no_error (error);
          seconds[arm] = (g_get_monotonic_time () - t0) / (double) G_USEC_PER_SEC;
          cpu[arm] = lk_cpu_process_seconds () - c0;
        }
      g_assert_true (reuse.reused);
      g_assert_cmpuint (full->pairs->len, ==, again->pairs->len);
      g_assert_cmpmem (full->pairs->data, full->pairs->len * sizeof (LkPair), again->pairs->data,
                       again->pairs->len * sizeof (LkPair));
      g_assert_cmpuint (full->near_boundary, ==, again->near_boundary);
      kernel = full->kernel;
      first_pass = full->prefilter;
      pairs = full->pairs->len;
      g_array_append_val (full_s, seconds[0]);
      g_array_append_val (full_cpu, cpu[0]);
      g_array_append_val (re_s, seconds[1]);
      g_array_append_val (re_cpu, cpu[1]);
      double ratio = seconds[0] / seconds[1];
      g_array_append_val (ratios, ratio);
      fprintf (stderr, "bench-rescan: rep %d/%d: full %.3f s, rescan %.3f s\n", rep + 1, reps,
               seconds[0], seconds[1]);
    }
  g_autofree char *load_after = load_average ();
  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());

  printf ("bench-rescan: %d + %d faces (seed %" G_GINT64_FORMAT "), %" G_GUINT64_FORMAT
          " pairs, identical; kernel %s, first pass %s; %d reps\n",
          faces, added, seed, pairs, kernel, first_pass, reps);
  printf ("  full    %8.3f s wall %8.3f s CPU\n", median (full_s), median (full_cpu));
  printf ("  rescan  %8.3f s wall %8.3f s CPU  (kept %" G_GSIZE_FORMAT ", added %" G_GSIZE_FORMAT
          ")\n",
          median (re_s), median (re_cpu), reuse.kept, reuse.added);
  printf ("  full / rescan: %.2fx (median of per-repetition ratios)\n", median (ratios));
  printf ("  cpu: %s, %u cores, %s; loadavg %s -> %s\n", lk_cpu_model_name (), lk_cpu_cores (),
          features, load_before, load_after);
  lk_scan_reuse_clear (&reuse);
  lk_test_remove_tree (work);
  return 0;
}
