#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>

#include "lk-cli.h"
#include "import/lk-import-photos.h"
#include "timing/lk-cpu.h"
#include "scan/lk-gates.h"
#include "scan/lk-peak.h"
#include "scan/lk-tune.h"

int
lk_cli_cpu (int argc, char **argv)
{
  gboolean peak = FALSE;
  gboolean tune = FALSE;
  const GOptionEntry entries[] = {
    { "tune", 0, 0, G_OPTION_ARG_NONE, &tune,
      N_ ("Race every kernel × first pass that runs here on a scan-shaped workload (about 0.3 s) "
          "and remember the fastest for \"auto\""),
      NULL },
    { "peak", 0, 0, G_OPTION_ARG_NONE, &peak,
      N_ ("Also measure the float32 FMA peak of all cores (about 0.3 s)"), NULL },
    { NULL },
  };

  if (!lk_cli_parse ("cpu", "", N_ ("Show the processor and the SIMD features the scan can use."),
                     entries, &argc, &argv, 0, 0))
    return LK_CLI_USAGE;

  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  printf ("model=%s\ncores=%u\nfeatures=%s\nbuild=%s\namx=%s\n", lk_cpu_model_name (),
          lk_cpu_cores (), *features ? features : "(none)", LK_BUILD_TYPE, lk_cpu_amx_note ());
  /* What the photo-folder importer and the face viewer can decode here
   * (gdk-pixbuf's loaders: WebP, HEIF and AVIF are packages of their own). */
  g_autofree char *formats = lk_import_photos_formats ();
  printf ("photo_formats=%s\n", *formats ? formats : "(none: built without -Ddetect)");
  g_autofree char *path = lk_tune_cache_path ();
  g_autofree char *key = lk_tune_cache_key_here (512);
  if (tune)
    {
      /* The workload: the scan gates' synthetic 512-d library, at the size
       * from which a scan measures by itself. */
      g_autoptr (LkTuneChoice) c = lk_gates_tune (LK_TUNE_SCAN_ABOVE);
      for (guint k = 0; k < c->candidates->len; k++)
        {
          const LkTuneCandidate *t = &g_array_index (c->candidates, LkTuneCandidate, k);
          char ms[G_ASCII_DTOSTR_BUF_SIZE], ratio[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (ms, sizeof ms, "%.2f", t->screen_ns / 1e6);
          g_ascii_formatd (ratio, sizeof ratio, "%.3f", t->ratio);
          printf ("candidate=%s screen_ms=%s ratio=%s\n", t->name, ms,
                  isnan (t->ratio) ? "eliminated-in-screening" : ratio);
        }
      printf ("choice=%s\nreason=%s\n", c->name, c->reason);
    }
  else
    {
      LkKernelId kernel;
      LkPrefilterId pass;
      g_autoptr (GArray) cands = lk_tune_candidates ();
      for (guint k = 0; k < cands->len; k++)
        printf ("candidate=%s\n", g_array_index (cands, LkTuneCandidate, k).name);
      if (lk_tune_cache_lookup (path, key, &kernel, &pass))
        {
          g_autofree char *name = lk_tune_candidate_name (kernel, pass);
          printf ("choice=%s (remembered for 512-d rows)\n", name);
        }
      else
        printf ("choice=(not measured yet: the first scan of %u faces or more, or "
                "likeness-cli cpu --tune, measures it)\n",
                LK_TUNE_SCAN_ABOVE);
    }
  printf ("cache=%s\n", path);
  if (peak)
    {
      const LkPeak *p = lk_peak_fma ();
      printf ("peak_isa=%s\npeak_threads=%u\npeak_gflops=%.1f\npeak_gflops_per_core=%.1f\n", p->isa,
              p->threads, p->gflops, p->gflops_per_core);
    }
  return LK_CLI_OK;
}
