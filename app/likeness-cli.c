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
  { "cpu", N_ ("Show the processor features the scan kernels are chosen from"), lk_cli_cpu },
  { "gates", N_ ("Race the kernels and scan variants against each other (speed gates)"),
    lk_cli_gates },
  { "race",
    N_ ("Race two commands, interleaved in a seeded random order, paired ratios and verdict"),
    lk_cli_race },
  { "scan", N_ ("Find every pair of faces that could be the same person"), lk_cli_scan },
  { "make-sample", N_ ("Write a synthetic library with ground-truth labels"), lk_cli_make_sample },
  { "people", N_ ("Group a library's faces into people, with the review's decisions"),
    lk_cli_people },
  { "review", N_ ("Name, merge, remove, move, cover, hide, undo, redo: one decision per run"),
    lk_cli_review },
  { "calibrate", N_ ("Fit the pair model to a library (labels, decisions or an estimate)"),
    lk_cli_calibrate },
  { "evaluate", N_ ("Score the people against ground-truth labels, with two baselines"),
    lk_cli_evaluate },
  { "info", N_ ("Check a library and show its faces, photos, calibration and thumbnails"),
    lk_cli_info },
  { "import", N_ ("Make a library of the faces Immich or PhotoPrism already found"),
    lk_cli_import },
  { "export", N_ ("Every source face id with the person Likeness gives it (for scripts)"),
    lk_cli_export },
};

/* Also what help2man makes the man page of: its "Commands:" and
 * "Examples:" become sections of likeness-cli(1). */
static void
print_usage (FILE *out)
{
  fprintf (out, "%s",
           _ ("Usage: likeness-cli COMMAND [OPTIONS…] ARGS…\n\n"
              "Review the people in a photo library without a display.\n\nCommands:\n"));
  for (gsize k = 0; k < G_N_ELEMENTS (commands); k++)
    fprintf (out, "  %-12s %s\n", commands[k].name, _ (commands[k].summary));
  fprintf (out, "%s",
           _ ("\nRun “likeness-cli COMMAND --help” or “likeness-cli help COMMAND” for a "
              "command's options.\n"));
  fprintf (out, "%s", _ ("\nExamples:\n"));
  for (gsize k = 0; k < G_N_ELEMENTS (commands); k++)
    fprintf (out, "  %-12s %s\n", commands[k].name, lk_cli_example (commands[k].name));
}

static int
find_command (const char *name)
{
  for (gsize k = 0; k < G_N_ELEMENTS (commands); k++)
    if (strcmp (name, commands[k].name) == 0)
      return (int) k;
  return -1;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* As the window's main: `meson devenv` (and the tests) point this at
   * catalogues outside the installed prefix. */
  const char *localedir = g_getenv ("LIKENESS_LOCALEDIR");
  bindtextdomain (GETTEXT_PACKAGE, localedir != NULL && *localedir ? localedir : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  if (argc < 2)
    {
      print_usage (stderr);
      return LK_CLI_USAGE;
    }
  /* `likeness-cli help COMMAND` is `likeness-cli COMMAND --help`. */
  if (strcmp (argv[1], "help") == 0 && argc >= 3)
    {
      int k = find_command (argv[2]);
      if (k < 0)
        {
          fprintf (stderr, _ ("likeness-cli help: unknown command “%s”\n\n"), argv[2]);
          print_usage (stderr);
          return LK_CLI_USAGE;
        }
      char *help_argv[] = { argv[2], (char *) "--help", NULL };
      return commands[k].run (2, help_argv);
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

  int k = find_command (argv[1]);
  if (k >= 0)
    return commands[k].run (argc - 1, argv + 1);

  fprintf (stderr, _ ("likeness-cli: unknown command “%s”\n\n"), argv[1]);
  print_usage (stderr);
  return LK_CLI_USAGE;
}
