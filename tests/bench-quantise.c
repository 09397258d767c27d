/* bench-quantise — the int8 rows' quantisers against each other, in one run
 *
 *   bench-quantise [--reps R] [LIBRARY]
 *
 * Quantises every row of the library to the int8 rows (bias 128, m the
 * limit for its dim) with the portable quantiser and with each vector one
 * that runs here (lk-prefilter-private.h, LkPrefilterQuantiser), one
 * thread, R rounds whose order alternates (portable first, then the vector
 * one first), and prints each one's median thread CPU time for the whole
 * library and the median of the per-round ratios. Every round also checks
 * that both wrote the same bytes, scales, corrections, errors and maximum
 * norm (tests/test-prefilter.c proves it on the hard cases). Only the
 * quantisation: the scan runs it once per scan, on its threads, before the
 * first pass (lk-prefilter.c, int8_rows).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing/lk-cpu.h"
#include "library/lk-library.h"
#include "scan/lk-prefilter-private.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

static double
load_average (void)
{
  double load = -1.0;
  FILE *f = fopen ("/proc/loadavg", "r");
  if (f != NULL)
    {
      if (fscanf (f, "%lf", &load) != 1)
        load = -1.0;
      fclose (f);
    }
  return load;
}

/* Every row quantised by `quantiser` into pf; returns the thread CPU
 * seconds and the maximum norm² in *max_norm2. */
static double
quantise_all (LkPrefilter *pf, const LkPrefilterQuantiser *quantiser, const LkFaces *f, gint32 m,
              double *errors, double *max_norm2)
{
  double start = lk_test_thread_seconds ();
  double max = 0.0;

  for (gsize i = 0; i < f->n; i++)
    max = MAX (max, lk_prefilter_int8_row (pf, quantiser, f->embeddings, i, m, 128, errors));
  *max_norm2 = max;
  return lk_test_thread_seconds () - start;
}

int
main (int argc, char **argv)
{
  int reps = 11;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Rounds (default 11)", "R" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || reps < 1)
    {
      fprintf (stderr, "bench-quantise: %s\n",
               error ? error->message : "one LIBRARY, --reps at least 1");
      return 2;
    }
  g_autoptr (LkLibrary) library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "bench-quantise: %s\n", error->message);
      return 1;
    }
  LkFaces f;
  lk_faces_from_library (&f, library);
  const LkPrefilterQuantiser *portable = &lk_prefilter_quantiser_portable;
  const LkPrefilterQuantiser *native = lk_prefilter_quantiser ();
  printf ("bench-quantise: library=%s faces=%zu dim=%u reps=%d\n", argv[1], f.n, f.dim, reps);
  printf ("bench-quantise: cpu=\"%s\" one thread, thread CPU time, load %.2f\n",
          lk_cpu_model_name (), load_average ());
  if (native == portable)
    {
      printf ("bench-quantise: no vector quantiser runs on this processor\n");
      return 0;
    }

  const LkPrefilterPass *pass = NULL;
  if (!lk_prefilter_pass_get (LK_PREFILTER_INT8_PORTABLE, &pass, &error))
    {
      fprintf (stderr, "bench-quantise: %s\n", error->message);
      return 1;
    }
  gint32 m = lk_prefilter_int8_max (f.dim);
  g_autoptr (LkPrefilter) p = lk_prefilter_new (pass, f.embeddings, f.n, f.dim);
  g_autoptr (LkPrefilter) v = lk_prefilter_new (pass, f.embeddings, f.n, f.dim);
  g_autofree double *errors_p = g_new (double, MAX (f.n, 1));
  g_autofree double *errors_v = g_new (double, MAX (f.n, 1));
  gsize words = (f.n + LK_PREFILTER_LANES - 1) / LK_PREFILTER_LANES * p->pairs * LK_PREFILTER_LANES;
  g_autoptr (GArray) seconds_p = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) seconds_v = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));

  for (int r = 0; r < reps; r++)
    {
      double norm_p, norm_v, tp, tv;
      if (r % 2 == 0)
        {
          tp = quantise_all (p, portable, &f, m, errors_p, &norm_p);
          tv = quantise_all (v, native, &f, m, errors_v, &norm_v);
        }
      else
        {
          tv = quantise_all (v, native, &f, m, errors_v, &norm_v);
          tp = quantise_all (p, portable, &f, m, errors_p, &norm_p);
        }
      if (memcmp (&norm_p, &norm_v, sizeof norm_p) != 0
          || memcmp (p->panels, v->panels, words * sizeof (guint32)) != 0
          || memcmp (p->scales, v->scales, f.n * sizeof (float)) != 0
          || memcmp (p->corrections, v->corrections, f.n * sizeof (gint32)) != 0
          || memcmp (errors_p, errors_v, f.n * sizeof (double)) != 0)
        {
          fprintf (stderr, "bench-quantise: %s differs from portable\n", native->name);
          return 1;
        }
      g_array_append_val (seconds_p, tp);
      g_array_append_val (seconds_v, tv);
      double ratio = tp / tv;
      g_array_append_val (ratios, ratio);
    }
  printf ("bench-quantise: portable %.2f ms, %s %.2f ms, ratio %.2fx (median of %d; load %.2f)\n",
          lk_test_median (seconds_p) * 1e3, native->name, lk_test_median (seconds_v) * 1e3,
          lk_test_median (ratios), reps, load_average ());
  return 0;
}
