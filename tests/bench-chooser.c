/* bench-chooser — how long the merge chooser takes to rank a library's people
 *
 *   bench-chooser LIBRARY [--opens N] [--reps R]
 *
 * Loads LIBRARY as the window does (lk_session_load: scan, cluster), then
 * times, each R times in a rotated order, the median of:
 * - centroids: lk_people_centroids over every person (the session does this
 *   once per clustering);
 * - open: lk_session_merge_candidates for N people (the centroids kept),
 *   i.e. what opening the chooser costs: photo clash check, pairs, cosines,
 *   sort;
 * - open, centroids each time: the same with the centroids recomputed per
 *   open, the opponent the cache is measured against;
 * - pairs: lk_people_similar alone for the same people (what the chooser
 *   ranked by before), and rank: lk_people_rank (pairs, then cosines), so
 *   the cosines' own share shows.
 * Prints faces, people, the CPU and the load average: on a shared machine
 * the load is part of the figure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "people/lk-cluster.h"
#include "timing/lk-cpu.h"
#include "scan/lk-scan.h"
#include "lk-session.h"

static double
now (void)
{
  return g_get_monotonic_time () / 1e6;
}

static int
compare_doubles (const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? -1 : a > b;
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof (double), compare_doubles);
  return v[n / 2];
}

int
main (int argc, char **argv)
{
  gint opens = 50, reps = 5;
  GOptionEntry entries[] = {
    { "opens", 0, 0, G_OPTION_ARG_INT, &opens, "people whose chooser is opened", "N" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "repetitions", "R" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || opens < 1 || reps < 1)
    {
      fprintf (stderr, "usage: bench-chooser LIBRARY [--opens N] [--reps R]\n");
      return 2;
    }

  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  double t0 = now ();
  if (!lk_session_load (session, NULL, &error))
    {
      fprintf (stderr, "%s: %s\n", argv[1], error->message);
      return 1;
    }
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  gsize n = MIN ((gsize) opens, people->n_people);
  printf ("%zu faces of %u floats, %zu people; loaded in %.1f s\n%s\n", library->count,
          library->dim, people->n_people, now () - t0, lk_cpu_model_name ());

  LkClusterInput input;
  lk_cluster_input_init (&input, library, lk_session_get_scan (session)->pairs);
  g_autofree float *kept
      = lk_people_centroids (people, library->embeddings, library->dim, library->count);
  g_autofree double *centroids = g_new (double, reps), *open = g_new (double, reps),
                    *uncached = g_new (double, reps), *pairs = g_new (double, reps),
                    *rank = g_new (double, reps);
  for (int r = 0; r < reps; r++)
    for (int arm = 0; arm < 5; arm++)
      switch ((arm + r) % 5)
        {
          case 3:
            {
              double t = now ();
              for (gsize k = 0; k < n; k++)
                g_array_unref (lk_people_similar (people, &input, k, 0));
              pairs[r] = (now () - t) / (double) n;
              break;
            }
          case 4:
            {
              double t = now ();
              for (gsize k = 0; k < n; k++)
                g_array_unref (lk_people_rank (people, &input, (gssize) k, kept, library->dim,
                                               kept + k * library->dim));
              rank[r] = (now () - t) / (double) n;
              break;
            }
          case 0:
            {
              double t = now ();
              g_free (
                  lk_people_centroids (people, library->embeddings, library->dim, library->count));
              centroids[r] = now () - t;
              break;
            }
          case 1:
            {
              double t = now ();
              for (gsize k = 0; k < n; k++)
                {
                  GArray *scores = NULL;
                  g_ptr_array_unref (
                      lk_session_merge_candidates (session, people->people[k].id, &scores));
                  g_array_unref (scores);
                }
              open[r] = (now () - t) / (double) n;
              break;
            }
          default:
            {
              double t = now ();
              for (gsize k = 0; k < n; k++)
                {
                  g_free (lk_people_centroids (people, library->embeddings, library->dim,
                                               library->count));
                  GArray *scores = NULL;
                  g_ptr_array_unref (
                      lk_session_merge_candidates (session, people->people[k].id, &scores));
                  g_array_unref (scores);
                }
              uncached[r] = (now () - t) / (double) n;
            }
        }
  double load[3] = { 0 };
  if (getloadavg (load, 3) < 0)
    load[0] = -1;
  double c = median (centroids, reps), o = median (open, reps), u = median (uncached, reps);
  printf ("centroids, once per clustering: %.2f ms\n", c * 1e3);
  printf ("open (centroids kept):          %.2f ms per open (%zu people)\n", o * 1e3, n);
  printf ("open, centroids each time:      %.2f ms per open: %.1f x the kept\n", u * 1e3, u / o);
  double pr = median (pairs, reps), rk = median (rank, reps);
  printf ("pairs only (lk_people_similar): %.2f ms per person, %u pairs\n", pr * 1e3,
          lk_session_get_scan (session)->pairs->len);
  printf ("rank (pairs, then cosines):     %.2f ms per person: the cosines add %.2f ms\n", rk * 1e3,
          (rk - pr) * 1e3);
  printf ("median of %d; load average %.2f\n", reps, load[0]);
  return 0;
}
