/* bench-cluster — how long clustering takes on 1.5 million pairs
 *
 *   bench-cluster [--pairs N] [--reps R]
 *
 * Builds a synthetic pair graph shaped like a real library's (people of very
 * unequal sizes, each a dense web of pairs, plus 1 % look-alike pairs across
 * people; probabilities in [0.9, 1]) and clusters it with Likeness's average
 * linkage (the default, approximate: epsilon 0.1), exact average linkage, and
 * connected components, R times each in an order rotated every repetition.
 * Prints each arm's median wall and CPU seconds and the load average, because
 * on a shared machine the load is part of the figure.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "people/lk-cluster.h"

#include "lk-test-pairs.h"
#include "lk-test-util.h"

static int
compare_doubles (const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? -1 : a > b;
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof (double), compare_doubles);
  return v[n / 2];
}

/* Faces are numbered person by person; person k has about 2000 / (k + 1)
 * faces (Zipf), so a few people hold thousands of faces and most a handful. */
static GArray *
synthetic_pairs (gsize target, gsize *n_faces)
{
  GRand *rand = g_rand_new_with_seed (7);
  g_autoptr (GArray) start = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint32 n = 0;
  double weight = 0;
  for (guint k = 0; n < 40000; k++)
    {
      guint32 size = MAX (1, 2000 / (k + 1));
      g_array_append_val (start, n);
      n += size;
      weight += (double) size * size;
    }
  g_array_append_val (start, n);
  /* Pairs within a person: density d of all its pairs, d set so that the
   * total is 99 % of the target; the rest are look-alikes across people. */
  double d = MIN (1.0, 0.99 * target * 2 / weight);
  GArray *pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint k = 0; k + 1 < start->len; k++)
    {
      guint32 a = g_array_index (start, guint32, k), b = g_array_index (start, guint32, k + 1);
      /* Drawing with replacement: -M·ln (1 - d) draws give d·M distinct pairs. */
      double all = (double) (b - a) * (b - a - 1) / 2;
      guint64 want = (guint64) (-all * log (1.0 - MIN (d, 0.999)));
      for (guint64 m = 0; m < want; m++)
        {
          guint32 i = g_rand_int_range (rand, a, b), j = g_rand_int_range (rand, a, b);
          if (i != j)
            g_array_append_val (pairs, ((LkPair){ MIN (i, j), MAX (i, j),
                                                  (float) g_rand_double_range (rand, 0.9, 1) }));
        }
    }
  while (pairs->len < target + target / 100)
    {
      guint32 i = g_rand_int_range (rand, 0, n), j = g_rand_int_range (rand, 0, n);
      if (i != j)
        g_array_append_val (pairs, ((LkPair){ MIN (i, j), MAX (i, j),
                                              (float) g_rand_double_range (rand, 0.9, 0.95) }));
    }
  g_array_sort (pairs, lk_test_compare_pairs);
  guint w = 0;
  for (guint k = 0; k < pairs->len; k++)
    {
      LkPair p = g_array_index (pairs, LkPair, k);
      if (w > 0 && g_array_index (pairs, LkPair, w - 1).i == p.i
          && g_array_index (pairs, LkPair, w - 1).j == p.j)
        continue;
      g_array_index (pairs, LkPair, w++) = p;
    }
  g_array_set_size (pairs, w);
  g_rand_free (rand);
  *n_faces = n;
  return pairs;
}

static void
print_load (const char *when)
{
  g_autofree char *load = NULL;
  if (g_file_get_contents ("/proc/loadavg", &load, NULL, NULL))
    printf ("load average %s: %s", when, load);
}

int
main (int argc, char **argv)
{
  gint64 target = 1500000;
  int reps = 5;
  const GOptionEntry entries[] = {
    { "pairs", 0, 0, G_OPTION_ARG_INT64, &target, "Pairs in the graph (1500000)", "N" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions per arm (5)", "R" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error) || target < 1 || reps < 1)
    {
      fprintf (stderr, "bench-cluster: %s\n", error ? error->message : "bad --pairs or --reps");
      return 2;
    }

  gsize n = 0;
  g_autoptr (GArray) pairs = synthetic_pairs ((gsize) target, &n);
  LkClusterInput input = { n, NULL, NULL, NULL, (const LkPair *) pairs->data, pairs->len };
  printf ("%zu faces, %u pairs, %d repetitions\n", n, pairs->len, reps);
  print_load ("before");

  static const struct
  {
    const char *name;
    LkClusterOptions options;
  } arms[] = {
    { "average (default)", { LK_LINKAGE_AVERAGE, 0, 0, 0 } },
    { "average (exact)", { LK_LINKAGE_AVERAGE, 0, 0, -1 } },
    { "connected components", { LK_LINKAGE_SINGLE, 0, 0, 0 } },
  };
  enum
  {
    N_ARMS = G_N_ELEMENTS (arms)
  };
  double wall[N_ARMS][64], cpu[N_ARMS][64];
  gsize people[N_ARMS];
  reps = MIN (reps, 64);
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < N_ARMS; k++)
      {
        int a = (k + r) % N_ARMS;
        gint64 t0 = g_get_monotonic_time ();
        double c0 = lk_test_process_seconds ();
        LkPeople *result = lk_cluster (&input, NULL, &arms[a].options, &error);
        cpu[a][r] = lk_test_process_seconds () - c0;
        wall[a][r] = (g_get_monotonic_time () - t0) / 1e6;
        if (result == NULL)
          {
            fprintf (stderr, "bench-cluster: %s\n", error->message);
            return 1;
          }
        people[a] = result->n_people;
        lk_people_free (result);
      }

  printf ("%-22s %12s %12s %8s\n", "arm", "wall (med)", "cpu (med)", "people");
  for (int a = 0; a < N_ARMS; a++)
    printf ("%-22s %11.3fs %11.3fs %8zu\n", arms[a].name, median (wall[a], reps),
            median (cpu[a], reps), people[a]);
  print_load ("after");
  return 0;
}
