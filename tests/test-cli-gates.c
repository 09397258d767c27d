/* test-cli-gates — `likeness-cli gates`: its lines, its JSON, its exit statuses
 *
 * Runs the built likeness-cli ($LIKENESS_CLI). Verdicts are not asserted
 * (two repetitions of a few calls in a debug build prove nothing about
 * speed): a run exits 0 on a pass or 1 on a loss, and either way prints and
 * writes every judged cell.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "scan/lk-gates.h"
#include "lk-test-util.h"

static void
test_list_names_every_gate_and_cell (void)
{
  g_autofree char *out = NULL, *err = NULL;
  guint n;
  const LkGate *gates = lk_gates (&n);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "gates", "--list", NULL), ==, 0);
  for (guint g = 0; g < n; g++)
    {
      g_autofree char *gate_line = g_strdup_printf ("%s\t%s\n", gates[g].name, gates[g].summary);
      g_assert_nonnull (strstr (out, gate_line));
      for (guint c = 0; c < gates[g].n_cells; c++)
        {
          const LkGateCell *cell = &gates[g].cells[c];
          g_autofree char *cell_line
              = g_strdup_printf ("  %s\t%s vs %s, %s,", cell->name, cell->a_label, cell->b_label,
                                 lk_contract_name (cell->contract));
          g_assert_nonnull (strstr (out, cell_line));
        }
    }
}

/* One gate, measured briefly: a line per cell with the summary's fields and
 * the harness's share, the gate's verdict, and JSON that reads back as the
 * same cells. */
static void
test_a_gate_prints_each_cell_and_writes_json (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-gates-XXXXXX", &error);
  g_autofree char *json = g_build_filename (dir, "run.json", NULL);
  g_autofree char *out = NULL, *err = NULL;

  int status = lk_test_run_cli (&out, &err, "gates", "--gate", "scan-prefilter", "--reps", "2",
                                "--iterations", "1", "--seed", "0x2a", "--json", json, NULL);
  g_assert_true (status == 0 || status == 1);
  g_assert_true (g_str_has_prefix (out, "gates seed=42 reps=2 build=" LK_BUILD_TYPE " "));
  g_assert_nonnull (strstr (out, "\nscan-prefilter 2048-faces cheap-rejection="));
  g_assert_nonnull (strstr (out, " ns/iter exact-every-pair="));
  g_assert_nonnull (strstr (out, " reps=2 clock=cpu verdict="));
  g_assert_nonnull (strstr (out, "\n  contract=faster harness="));
  g_assert_nonnull (
      strstr (out, status == 0 ? "\nscan-prefilter: pass\n" : "\nscan-prefilter: FAIL: "));
  g_assert_nonnull (strstr (out, status == 0 ? "\ngates: 1 passed, 0 failed, 0 skipped\n"
                                             : "\ngates: 0 passed, 1 failed, 0 skipped\n"));
#if !LK_RELEASE_BUILD
  g_assert_nonnull (strstr (err, "a verdict measured here is about another program"));
#endif

  g_autoptr (GPtrArray) cells = lk_timing_load_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cells->len, ==, 1);
  const LkTimingCell *cell = cells->pdata[0];
  g_assert_cmpstr (cell->gate, ==, "scan-prefilter");
  g_assert_cmpuint (cell->timing->reps, ==, 2);
  g_assert_cmpuint (cell->timing->seed, ==, 42);
  g_assert_cmpint (cell->pass, ==, status == 0);
  g_autofree char *line = lk_timing_cell_line (cell);
  g_assert_nonnull (strstr (out, line));
  g_unlink (json);
  g_rmdir (dir);
}

static void
test_bad_usage_is_refused (void)
{
  const char *cases[][3] = {
    { "--gate", "no-such-gate", "there is no gate “no-such-gate”; the gates are: dot-512d" },
    { "--reps", "0", "--reps and --iterations need at least 1" },
    { "--iterations", "0", "--reps and --iterations need at least 1" },
    { "--seed", "soon", "--seed: " },
  };

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_assert_cmpint (lk_test_run_cli (&out, &err, "gates", cases[k][0], cases[k][1], NULL), ==,
                       2);
      if (strstr (err, cases[k][2]) == NULL)
        g_error ("expected “%s” in: %s", cases[k][2], err);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli-gates/list-names-every-gate-and-cell",
                   test_list_names_every_gate_and_cell);
  g_test_add_func ("/cli-gates/a-gate-prints-each-cell-and-writes-json",
                   test_a_gate_prints_each_cell_and_writes_json);
  g_test_add_func ("/cli-gates/bad-usage-is-refused", test_bad_usage_is_refused);
  return g_test_run ();
}
