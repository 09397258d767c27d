#include "config.h"

#include <stdio.h>

#include "lk-cli.h"
#include "lk-cpu.h"

int
lk_cli_cpu (int argc, char **argv)
{
  if (!lk_cli_parse ("cpu", "", "Show the processor and the SIMD features the scan can use.", NULL,
                     &argc, &argv, 0, 0))
    return LK_CLI_USAGE;

  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  printf ("model=%s\ncores=%u\nfeatures=%s\nbuild=%s\n", lk_cpu_model_name (), lk_cpu_cores (),
          *features ? features : "(none)", LK_BUILD_TYPE);
  return LK_CLI_OK;
}
