/* bench-people — what `likeness-cli people` costs after the scan, step by step
 *
 *   bench-people LIBRARY [--reps N]
 *
 * In one process, the steps lk-session takes for `people` with no review
 * decisions: load the library (lk_library_load), scan it (lk_scan, full,
 * automatic kernel, every core: the scan cache is not used, so the scan is
 * timed whole), the faces' stable keys (lk_library_face_keys, what
 * review.json names faces by) and the clustering (lk_cluster, average
 * linkage, N times: the median is given), then once more after a decision
 * (the two largest people merged and named): everything clustered again
 * ("decision", as lk_cluster does), and re-using the opening's clustering
 * ("again", lk_cluster_with_memo, as a session does; the bench fails if
 * its people are not the decision's). Each step prints its wall and CPU
 * seconds, the process's RSS after it and its peak so far (VmRSS, VmHWM of
 * /proc/self/status, Linux), then the after-scan steps' share of the scan's
 * time — the goal is ≤ 25 % — and the peak against the embeddings
 * plus the pair list (goal ≤ 1.5×). --threads N clusters the pair graph's
 * connected components on N threads (default: every core), to tell what
 * the threads buy from what clustering one component at a time buys.
 *
 * The whole command against today's code (arm A: a release build of main
 * kept aside, e.g. cp _build-release/app/likeness-cli /tmp/likeness-cli-main
 * before the change), on the machine the figure is for, interleaved:
 *
 *   likeness-cli make-sample /tmp/s100k --faces 100000 --no-thumbnails
 *   /usr/bin/time -v /tmp/likeness-cli-main people /tmp/s100k   # peak RSS, A
 *   /usr/bin/time -v _build-release/app/likeness-cli people /tmp/s100k   # B
 *   _build-release/app/likeness-cli race --reps 5 --same-output \
 *       -- /tmp/likeness-cli-main people --json /tmp/s100k \
 *       -- _build-release/app/likeness-cli people --json /tmp/s100k
 *   _build-release/tests/bench-people /tmp/s100k --reps 3
 *
 * (the second and later `people` runs read the scan from the user's cache;
 * --same-output also proves the people are the same, ids, order and faces).
 * --scan-cache reads the scan from the user's cache (lk_scan_cached, as
 * `likeness-cli people` does), to profile the clustering without the
 * scan's minutes; it prints no ratio, since the scan was not timed.
 * Not run by `meson test`: minutes at 100,000 faces.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "library/lk-library.h"
#include "people/lk-calibrate.h"
#include "people/lk-cluster.h"
#include "scan/lk-scan-cache.h"
#include "scan/lk-scan.h"

#include "lk-test-util.h"

static int
compare_faces (gconstpointer a, gconstpointer b)
{
  guint32 x = *(const guint32 *) a, y = *(const guint32 *) b;
  return x < y ? -1 : x > y;
}

static int
compare_doubles (const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? -1 : a > b;
}

int
main (int argc, char **argv)
{
  gint reps = 3;
  gboolean cached = FALSE;
  gint threads = 0;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Clusterings timed (median)", "N" },
    { "scan-cache", 0, 0, G_OPTION_ARG_NONE, &cached,
      "Read the scan from the user's scan cache (for profiling the clustering; no ratio)", NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads,
      "Threads clustering the pair graph's components (0: every core)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || reps < 1
      || threads < 0)
    {
      fprintf (stderr, "usage: bench-people LIBRARY [--reps N] [--scan-cache] [--threads N]%s%s\n",
               error ? ": " : "", error ? error->message : "");
      return 2;
    }

  lk_test_step_header ();
  LkTestStep c;
  lk_test_step_start (&c);
  g_autoptr (LkLibrary) library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "bench-people: %s\n", error->message);
      return 1;
    }
  lk_test_step_report (&c, "load", NULL);

  LkCalibration calibration = lk_calibration_in_force (library, NULL, NULL, NULL);
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  LkScanOptions options = { .kernel = LK_KERNEL_AUTO };
  lk_test_step_start (&c);
  g_autofree char *cache_path = lk_scan_cache_path (library->folder);
  g_autoptr (LkScanResult) scan
      = cached ? lk_scan_cached (library, &calibration, library->min_probability, &options,
                                 cache_path, NULL, NULL, &error)
               : lk_scan (&faces, &calibration, library->min_probability, &options, NULL, &error);
  if (scan == NULL)
    {
      fprintf (stderr, "bench-people: %s\n", error->message);
      return 1;
    }
  double scan_wall, scan_cpu = lk_test_step_report (&c, "scan", &scan_wall);

  lk_test_step_start (&c);
  g_auto (GStrv) keys = lk_library_face_keys (library);
  double keys_wall, keys_cpu = lk_test_step_report (&c, "keys", &keys_wall);
  /* Held, as the session holds them, while the people are made. */
  g_assert (keys != NULL);

  LkClusterInput input;
  const LkClusterOptions cluster_options = { .threads = (guint) threads };
  lk_cluster_input_init (&input, library, scan->pairs);
  g_autofree double *walls = g_new (double, reps);
  g_autofree double *cpus = g_new (double, reps);
  gsize n_people = 0;
  for (int r = 0; r < reps; r++)
    {
      lk_test_step_start (&c);
      LkPeople *people = lk_cluster (&input, NULL, &cluster_options, &error);
      if (people == NULL)
        {
          fprintf (stderr, "bench-people: %s\n", error->message);
          return 1;
        }
      n_people = people->n_people;
      lk_people_free (people);
      cpus[r] = lk_test_step_report (&c, "cluster", &walls[r]);
    }
  qsort (walls, reps, sizeof (double), compare_doubles);
  qsort (cpus, reps, sizeof (double), compare_doubles);

  /* A decision, as a session re-clusters after one: the two largest people
   * merged and named (one pin holding both's faces). "decision" clusters
   * everything again; "again" re-uses the opening's clustering
   * (lk_cluster_with_memo, as the session does), which must give the same
   * people. */
  {
    g_autoptr (LkClusterMemo) memo = NULL;
    LkPeople *people = lk_cluster_with_memo (&input, NULL, &cluster_options, &memo, &error);
    g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
    if (people->n_people >= 2)
      {
        LkPin *pin = lk_pin_new (people->people[0].id);
        pin->name = g_strdup ("Ada");
        g_array_append_vals (pin->faces, people->people[0].faces, people->people[0].n_faces);
        g_array_append_vals (pin->faces, people->people[1].faces, people->people[1].n_faces);
        g_array_sort (pin->faces, compare_faces);
        g_ptr_array_add (pins, pin);
      }
    lk_people_free (people);
    lk_test_step_start (&c);
    people = lk_cluster (&input, pins, &cluster_options, &error);
    if (people == NULL)
      {
        fprintf (stderr, "bench-people: %s\n", error->message);
        return 1;
      }
    lk_test_step_report (&c, "decision", NULL);
    lk_test_step_start (&c);
    LkPeople *again = lk_cluster_with_memo (&input, pins, &cluster_options, &memo, &error);
    if (again == NULL)
      {
        fprintf (stderr, "bench-people: %s\n", error->message);
        return 1;
      }
    lk_test_step_report (&c, "again", NULL);
    gsize again_faces, again_pairs;
    gboolean reused = lk_cluster_memo_last (memo, &again_faces, &again_pairs);
    gboolean same
        = again->n_people == people->n_people && again->n_unassigned == people->n_unassigned;
    for (gsize k = 0; same && k < people->n_people; k++)
      same = g_strcmp0 (again->people[k].id, people->people[k].id) == 0
             && again->people[k].n_faces == people->people[k].n_faces
             && again->people[k].cover == people->people[k].cover
             && memcmp (again->people[k].faces, people->people[k].faces,
                        people->people[k].n_faces * sizeof (guint32))
                    == 0;
    printf ("again: %s, %zu faces and %zu pairs clustered again; people %s the decision's\n",
            reused ? "re-used the opening" : "clustered everything", again_faces, again_pairs,
            same ? "identical to" : "DIFFERENT FROM");
    lk_people_free (people);
    lk_people_free (again);
    if (!same)
      return 1;
  }

  double embeddings_mb
      = (double) library->count * library->dim * sizeof (float) / (1024.0 * 1024.0);
  double pairs_mb = (double) scan->pairs->len * sizeof (LkPair) / (1024.0 * 1024.0);
  double peak = lk_test_status_mb ("VmHWM:");
  printf ("\nfaces %zu, pairs %u, people %zu; cluster median %.3f s wall, %.3f s CPU\n",
          library->count, scan->pairs->len, n_people, walls[reps / 2], cpus[reps / 2]);
  if (cached)
    printf ("the scan came from the cache: no after-the-scan ratio\n");
  else
    printf ("after the scan (keys + cluster) / scan: wall %.1f %%, CPU %.1f %%  (goal <= 25 %%)\n",
            100.0 * (keys_wall + walls[reps / 2]) / scan_wall,
            100.0 * (keys_cpu + cpus[reps / 2]) / scan_cpu);
  printf ("peak %.0f MB = %.2f x (embeddings %.0f MB + pairs %.0f MB)  (goal <= 1.5 x)\n", peak,
          peak / (embeddings_mb + pairs_mb), embeddings_mb, pairs_mb);
  return 0;
}
