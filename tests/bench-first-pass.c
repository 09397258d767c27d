/* bench-first-pass — each first pass on the scan's own tiles, against the
 * measured peak of the instruction it is built on, in one run
 *
 *   bench-first-pass [--reps R] [--every B] [LIBRARY]
 *
 * Issue 16 asks for the bf16 pass "at ≥ 75 % of the measured vdpbf16ps
 * peak on its tiles". This walks what one scan thread walks — blocks of
 * LK_SCAN_BLOCK rows against every column after them, in tiles of
 * LK_SCAN_COLUMN_TILE columns, at the scan's own bar for the library's
 * calibration — for every native first pass this processor runs, on every
 * B-th block (default 9: eight blocks of the 18,143-face sample, short rows
 * and long), one thread, R times in an order that rotates. It prints each
 * pass's median thread CPU time, the useful multiply-adds it did (pairs
 * above the diagonal × dim, as flops: 2 a multiply-add) per second, and,
 * for the passes whose instruction lk-peak.h measures (vdpbf16ps for bf16,
 * vpdpbusd for int8 on AVX-512), that instruction's one-thread peak
 * measured in the same run and the pass's fraction of it. Only the pass: the
 * survivors' float32 re-check is bench-scan's business.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing/lk-cpu.h"
#include "library/lk-library.h"
#include "scan/lk-peak.h"
#include "scan/lk-prefilter.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

/* The lk-peak.h family of the instruction a pass is built on, or NULL. */
static const char *
peak_family (const LkPrefilterPass *pass)
{
  if (g_str_equal (pass->name, "bf16-avx512"))
    return "bf16-avx512";
  if (g_str_equal (pass->name, "int8-avx512vnni"))
    return "int8-avx512vnni";
  return NULL;
}

/* The family's one-thread peak in GFLOP/s: the best of five timed runs. */
static double
one_thread_peak (const char *family)
{
  double best = 0.0;
  for (int r = 0; r < 5; r++)
    {
      double checksum, start = lk_test_thread_seconds ();
      double flops = lk_peak_run_one (family, 2000000, &checksum);
      double seconds = lk_test_thread_seconds () - start;
      if (seconds > 0 && flops / seconds / 1e9 > best)
        best = flops / seconds / 1e9;
    }
  return best;
}

typedef struct
{
  const LkPrefilterPass *pass;
  LkPrefilter *prefilter;
  GArray *seconds;
  guint64 survivors;
} Arm;

/* The tiles of every `every`-th block; returns the useful multiply-adds. */
static double
walk (const Arm *arm, const LkFaces *f, float tau, gsize every, LkHit *hits, guint64 *survivors)
{
  double macs = 0.0;
  *survivors = 0;
  for (gsize b = 0; b < f->n; b += every * LK_SCAN_BLOCK)
    {
      LkTile tile = {
        .embeddings = f->embeddings,
        .dim = f->dim,
        .photo = f->photo,
        .gallery = f->gallery,
        .tau = tau,
        .row_begin = b,
        .row_end = MIN (b + LK_SCAN_BLOCK, f->n),
      };
      for (gsize c = b; c < f->n; c += LK_SCAN_COLUMN_TILE)
        {
          tile.col_begin = c;
          tile.col_end = MIN (c + LK_SCAN_COLUMN_TILE, f->n);
          *survivors += lk_prefilter_survivors (arm->prefilter, &tile, hits);
          for (gsize i = tile.row_begin; i < tile.row_end; i++)
            if (MAX (i + 1, tile.col_begin) < tile.col_end)
              macs += (double) (tile.col_end - MAX (i + 1, tile.col_begin)) * (double) f->dim;
        }
    }
  return macs;
}

int
main (int argc, char **argv)
{
  int reps = 7, every = 9;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of every pass (default 7)", "R" },
    { "every", 0, 0, G_OPTION_ARG_INT, &every, "Walk every B-th block of rows (default 9)", "B" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || reps < 1 || every < 1)
    {
      fprintf (stderr, "bench-first-pass: %s\n",
               error ? error->message : "one LIBRARY, --reps and --every at least 1");
      return 2;
    }
  g_autoptr (LkLibrary) library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "bench-first-pass: %s\n", error->message);
      return 1;
    }
  LkFaces f;
  lk_faces_from_library (&f, library);
  double tau
      = lk_scan_loosest_cosine (f.crop_px, f.n, &library->calibration, library->min_probability);
  if (!isfinite (tau))
    {
      fprintf (stderr, "bench-first-pass: the library's calibration bounds no pair\n");
      return 1;
    }
  tau -= 2 * LK_SCAN_NEAR_BOUNDARY; /* the scan's margin (lk-scan.c, KERNEL_MARGIN) */

  g_autoptr (GPtrArray) arms = g_ptr_array_new ();
  gsize n_passes = 0;
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n_passes);
  for (gsize p = 0; p < n_passes; p++)
    {
      if (!lk_prefilter_pass_runs_here (passes[p])
          || g_str_has_suffix (passes[p]->name, "-portable"))
        continue;
      Arm *arm = g_new0 (Arm, 1);
      arm->pass = passes[p];
      arm->prefilter = lk_prefilter_new (passes[p], f.embeddings, f.n, f.dim);
      lk_prefilter_prepare (arm->prefilter, (float) tau);
      arm->seconds = g_array_new (FALSE, FALSE, sizeof (double));
      g_ptr_array_add (arms, arm);
    }
  printf ("bench-first-pass: library=%s faces=%zu dim=%u tau=%.5f every=%d reps=%d\n", argv[1], f.n,
          f.dim, tau, every, reps);
  printf ("bench-first-pass: cpu=\"%s\" one thread, thread CPU time\n", lk_cpu_model_name ());
  if (arms->len == 0)
    {
      printf ("bench-first-pass: no native first pass runs on this processor\n");
      return 0;
    }

  g_autofree LkHit *hits = g_new (LkHit, (gsize) LK_SCAN_BLOCK * LK_SCAN_COLUMN_TILE);
  double macs = 0.0;
  for (int r = 0; r < reps; r++)
    for (guint k = 0; k < arms->len; k++)
      {
        Arm *arm = g_ptr_array_index (arms, (k + (guint) r) % arms->len);
        double start = lk_test_thread_seconds ();
        macs = walk (arm, &f, (float) tau, (gsize) every, hits, &arm->survivors);
        double seconds = lk_test_thread_seconds () - start;
        g_array_append_val (arm->seconds, seconds);
      }

  printf ("%-18s %9s %12s %10s %13s %9s\n", "pass", "ms", "GFLOP/s", "survivors", "peak 1 thread",
          "of peak");
  for (guint k = 0; k < arms->len; k++)
    {
      Arm *arm = g_ptr_array_index (arms, k);
      double median = lk_test_median (arm->seconds);
      double gflops = 2.0 * macs / median / 1e9;
      const char *family = peak_family (arm->pass);
      double peak = family != NULL ? one_thread_peak (family) : 0.0;
      if (peak > 0)
        printf ("%-18s %9.1f %12.1f %10" G_GUINT64_FORMAT " %13.1f %8.0f%%\n", arm->pass->name,
                median * 1e3, gflops, arm->survivors, peak, 100.0 * gflops / peak);
      else
        printf ("%-18s %9.1f %12.1f %10" G_GUINT64_FORMAT " %13s %9s\n", arm->pass->name,
                median * 1e3, gflops, arm->survivors, "-", "-");
      lk_prefilter_free (arm->prefilter);
      g_array_unref (arm->seconds);
      g_free (arm);
    }
  return 0;
}
