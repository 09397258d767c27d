#include "config.h"

#include <stdio.h>

#include "lk-cli.h"
#include "lk-cpu.h"
#include "lk-peak.h"

int
lk_cli_cpu (int argc, char **argv)
{
  gboolean peak = FALSE;
  const GOptionEntry entries[] = {
    { "peak", 0, 0, G_OPTION_ARG_NONE, &peak,
      "Also measure the float32 FMA peak of all cores (about 0.3 s)", NULL },
    { NULL },
  };

  if (!lk_cli_parse ("cpu", "", "Show the processor and the SIMD features the scan can use.",
                     entries, &argc, &argv, 0, 0))
    return LK_CLI_USAGE;

  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  printf ("model=%s\ncores=%u\nfeatures=%s\nbuild=%s\n", lk_cpu_model_name (), lk_cpu_cores (),
          *features ? features : "(none)", LK_BUILD_TYPE);
  if (peak)
    {
      const LkPeak *p = lk_peak_fma ();
      printf ("peak_isa=%s\npeak_threads=%u\npeak_gflops=%.1f\npeak_gflops_per_core=%.1f\n",
              p->isa, p->threads, p->gflops, p->gflops_per_core);
    }
  return LK_CLI_OK;
}
