/* likeness-cli gates — run the speed gates of lk-gates.h and judge them
 *
 * One line per cell as it is measured (the summary that carries the numbers
 * which could overturn the verdict), the harness's own share of the faster
 * arm beside it, each gate's verdict, and an exit status a script or the
 * meson 'speed' suite can act on: 0 every measured gate met its contract,
 * 1 a gate lost or failed, 2 bad usage, 77 (the test-harness "skipped")
 * when the one gate asked for has no cell that runs on this machine.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <unistd.h>

#include "lk-cli.h"
#include "timing/lk-cpu.h"
#include "scan/lk-gates.h"

#define GATES_SKIPPED 77

typedef struct
{
  double harness_ns;
  gboolean progress;  /* stderr is a terminal: draw each repetition */
  const LkGate *gate; /* being measured, for the progress line */
  guint reps;
} Run;

static void
on_rep (const LkPairedTiming *timing, guint rep, gpointer user_data)
{
  const Run *run = user_data;
  char ratio[G_ASCII_DTOSTR_BUF_SIZE];

  g_ascii_formatd (ratio, sizeof ratio, "%.4f", timing->ratios[rep]);
  fprintf (stderr, "\r\033[K%s: repetition %u/%u ratio=%s", run->gate->name, rep + 1, run->reps,
           ratio);
  fflush (stderr);
}

static void
on_cell (const LkGate *gate, const LkGateCell *info, const LkTimingCell *cell, const char *skipped,
         gpointer user_data)
{
  const Run *run = user_data;
  char share[G_ASCII_DTOSTR_BUF_SIZE];

  if (run->progress)
    fprintf (stderr, "\r\033[K");
  if (skipped != NULL)
    {
      printf ("%s %s skipped: %s\n", gate->name, info->name, skipped);
      return;
    }
  g_autofree char *line = lk_timing_cell_line (cell);
  double faster = MIN (lk_paired_timing_median_a_ns (cell->timing),
                       lk_paired_timing_median_b_ns (cell->timing));
  g_ascii_formatd (share, sizeof share, "%.3f", 100.0 * run->harness_ns / faster);
  printf ("%s\n  contract=%s harness=%s%% of the faster arm\n", line,
          lk_contract_name (info->contract), share);
  fflush (stdout);
}

static void
print_list (void)
{
  guint n;
  const LkGate *gates = lk_gates (&n);

  for (guint g = 0; g < n; g++)
    {
      printf ("%s\t%s\n", gates[g].name, gates[g].summary);
      for (guint c = 0; c < gates[g].n_cells; c++)
        {
          const LkGateCell *cell = &gates[g].cells[c];
          g_autofree char *unavailable = lk_gate_cell_unavailable (cell);
          printf ("  %s\t%s vs %s, %s, %" G_GUINT64_FORMAT " calls per repetition%s%s\n",
                  cell->name, cell->a_label, cell->b_label, lk_contract_name (cell->contract),
                  cell->iterations, unavailable ? "; not on this machine: " : "",
                  unavailable ? unavailable : "");
        }
    }
}

int
lk_cli_gates (int argc, char **argv)
{
  gboolean list = FALSE;
  g_autofree char *gate_name = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *seed_text = NULL;
  int reps = LK_GATES_DEFAULT_REPS;
  gint64 iterations = -1; /* not given: each cell's own */
  const GOptionEntry entries[] = {
    { "list", 0, 0, G_OPTION_ARG_NONE, &list, N_ ("List the gates and their cells, then exit"),
      NULL },
    { "gate", 0, 0, G_OPTION_ARG_STRING, &gate_name, N_ ("Run only this gate"), "NAME" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, N_ ("Repetitions per cell (default 15)"), "N" },
    { "iterations", 0, 0, G_OPTION_ARG_INT64, &iterations,
      N_ ("Arm calls per repetition (default: each cell's own)"), "N" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text,
      N_ ("Seed of the arm-order coin, decimal or 0x… (default 1)"), "S" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path,
      N_ ("Also write every repetition and statistic as Google Benchmark JSON"), "FILE" },
    { NULL },
  };
  guint64 seed = 1;
  g_autoptr (GError) error = NULL;

  if (!lk_cli_parse ("gates", "",
                     N_ ("Race Likeness's own implementations against each other and "
                         "judge each race against its contract."),
                     entries, &argc, &argv, 0, 0))
    return LK_CLI_USAGE;
  if (reps < 1 || (iterations != -1 && iterations < 1))
    {
      fprintf (stderr,
               _ ("likeness-cli gates: --reps and --iterations need at least 1 (got %d and "
                  "%lld)\n"),
               reps, (long long) iterations);
      return LK_CLI_USAGE;
    }
  gboolean hex = seed_text != NULL && g_ascii_strncasecmp (seed_text, "0x", 2) == 0;
  if (seed_text != NULL
      && !g_ascii_string_to_unsigned (seed_text + (hex ? 2 : 0), hex ? 16 : 10, 0, G_MAXUINT64,
                                      &seed, &error))
    {
      fprintf (stderr, _ ("likeness-cli gates: --seed: %s\n"), error->message);
      return LK_CLI_USAGE;
    }
  if (list)
    {
      print_list ();
      return LK_CLI_OK;
    }

  guint n_gates;
  const LkGate *gates = lk_gates (&n_gates);
  const LkGate *only = NULL;
  if (gate_name != NULL && (only = lk_gates_find (gate_name)) == NULL)
    {
      fprintf (stderr, _ ("likeness-cli gates: there is no gate “%s”; the gates are:"), gate_name);
      for (guint g = 0; g < n_gates; g++)
        fprintf (stderr, " %s", gates[g].name);
      fprintf (stderr, "\n");
      return LK_CLI_USAGE;
    }

#if !LK_RELEASE_BUILD
  fprintf (stderr,
           _ ("likeness-cli gates: warning: this is a %s build; a verdict measured here is "
              "about another program than the one that ships (configure with "
              "--buildtype=release)\n"),
           LK_BUILD_TYPE);
#endif

  Run run = { lk_harness_call_ns (), isatty (STDERR_FILENO), NULL, (guint) reps };
  LkGateRunOptions options = { (guint) reps, iterations == -1 ? 0 : (guint64) iterations, seed,
                               run.progress ? on_rep : NULL, &run };
  g_autoptr (GPtrArray) cells
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_timing_cell_free);
  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  char harness[G_ASCII_DTOSTR_BUF_SIZE];
  guint passed = 0, lost = 0, skipped = 0;

  printf ("gates seed=%" G_GUINT64_FORMAT " reps=%d build=%s cpu=%s cores=%u features=%s "
          "harness=%s ns/call\n",
          seed, reps, LK_BUILD_TYPE, lk_cpu_model_name (), lk_cpu_cores (),
          *features ? features : "(none)",
          g_ascii_formatd (harness, sizeof harness, "%.2f", run.harness_ns));
  for (guint g = 0; g < n_gates; g++)
    {
      if (only != NULL && only != &gates[g])
        continue;
      g_autoptr (GError) gate_error = NULL;
      run.gate = &gates[g];
      printf ("%s: %s\n", gates[g].name, gates[g].summary);
      if (lk_gate_run (&gates[g], &options, on_cell, &run, cells, NULL, &gate_error))
        {
          printf ("%s: pass\n", gates[g].name);
          passed++;
        }
      else if (g_error_matches (gate_error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE))
        {
          printf ("%s: skipped: %s\n", gates[g].name, gate_error->message);
          skipped++;
        }
      else
        {
          printf ("%s: FAIL: %s\n", gates[g].name, gate_error->message);
          lost++;
        }
      fflush (stdout);
    }
  printf ("gates: %u passed, %u failed, %u skipped\n", passed, lost, skipped);

  if (json_path != NULL
      && !lk_timing_save_json (json_path, (LkTimingCell *const *) cells->pdata, cells->len, &error))
    return lk_cli_fail (error);
  if (lost > 0)
    return LK_CLI_ERROR;
  if (only != NULL && skipped > 0)
    return GATES_SKIPPED;
  return LK_CLI_OK;
}
