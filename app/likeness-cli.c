/* likeness-cli — everything the window does to a library, headless
 *
 * `likeness-cli COMMAND [OPTIONS] ARGS`; each command is one LkCliRun in its
 * own file, listed in `commands` below.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"

static const struct
{
  const char *name;
  const char *summary;
  LkCliRun run;
} commands[] = {
  { "cpu", "Show the processor features the scan kernels are chosen from", lk_cli_cpu },
  { "gates", "Race the kernels and scan variants against each other (speed gates)", lk_cli_gates },
  { "race", "Race two commands, interleaved in a seeded random order, paired ratios and verdict",
    lk_cli_race },
  { "scan", "Find every pair of faces that could be the same person", lk_cli_scan },
  { "make-sample", "Write a synthetic library with ground-truth labels", lk_cli_make_sample },
  { "people", "Group a library's faces into people, with the review's decisions", lk_cli_people },
  { "review", "Name, merge, remove, move, cover, hide, undo, redo: one decision per run",
    lk_cli_review },
  { "calibrate", "Fit the pair model to a library (labels, decisions or an estimate)",
    lk_cli_calibrate },
  { "evaluate", "Score the people against ground-truth labels, with two baselines",
    lk_cli_evaluate },
  { "info", "Check a library and show its faces, photos, calibration and thumbnails", lk_cli_info },
  { "import", "Make a library of the faces Immich or PhotoPrism already found", lk_cli_import },
  { "export", "Every source face id with the person Likeness gives it (for scripts)",
    lk_cli_export },
};

static void
print_usage (FILE *out)
{
  fprintf (out, "Usage: likeness-cli COMMAND [OPTIONS…] ARGS…\n\n"
                "Review the people in a photo library without a display.\n\nCommands:\n");
  for (gsize k = 0; k < G_N_ELEMENTS (commands); k++)
    fprintf (out, "  %-12s %s\n", commands[k].name, commands[k].summary);
  fprintf (out, "\nRun “likeness-cli COMMAND --help” for a command's options.\n");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  if (argc < 2)
    {
      print_usage (stderr);
      return LK_CLI_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      print_usage (stdout);
      return LK_CLI_OK;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("likeness-cli %s\n", PACKAGE_VERSION);
      return LK_CLI_OK;
    }

  for (gsize k = 0; k < G_N_ELEMENTS (commands); k++)
    if (strcmp (argv[1], commands[k].name) == 0)
      return commands[k].run (argc - 1, argv + 1);

  fprintf (stderr, "likeness-cli: unknown command “%s”\n\n", argv[1]);
  print_usage (stderr);
  return LK_CLI_USAGE;
}
