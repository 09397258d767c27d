/* test-ui-diagnostics — the diagnostics page races a real gate cell, under Xvfb
 *
 * Runs are tiny (a few repetitions of a few calls of a dot-product race) so
 * the suite stays quick on a loaded machine: these tests prove the plumbing —
 * one chart point per repetition, a verdict and summary, Stop between
 * repetitions, exports the engine reads back — never a speed.
 *
 * LK_DIAGNOSTICS_SCREENSHOT=FILE.png also runs a longer cell and renders the
 * window to FILE.png (the README's screenshot).
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "lk-diagnostics-window.h"
#include "lk-ratio-chart-private.h"
#include "timing/lk-race.h"
#include "scan/lk-gates.h"
#include "library/lk-sample.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "library/lk-thumbnail.h"
#include "lk-window-private.h"

typedef struct
{
  guint increments; /* notifications that added exactly one point */
  guint last;
} PointCount;

/* The most the page's repetitions field takes. */
#define MANY_REPS 10000

static const LkGate *race_gate;
static const LkGateCell *race_cell;

static void
find_race (void)
{
  const LkGate *gate = lk_gates_find ("dot-512d");

  g_assert_nonnull (gate);
  for (guint c = 0; c < gate->n_cells && race_cell == NULL; c++)
    {
      g_autofree char *unavailable = lk_gate_cell_unavailable (&gate->cells[c]);
      if (unavailable == NULL)
        {
          race_gate = gate;
          race_cell = &gate->cells[c];
        }
    }
}

static gboolean
is_idle (gpointer data)
{
  return !lk_diagnostics_window_is_busy (data);
}

static LkDiagnosticsWindow *
open_window (void)
{
  LkDiagnosticsWindow *window = lk_diagnostics_window_new (NULL);

  gtk_window_present (GTK_WINDOW (window));
  /* The FMA peak is measured first; no run may start during it. */
  lk_test_wait (is_idle, window);
  return window;
}

static void
on_n_points (GObject *chart, GParamSpec *pspec, gpointer user_data)
{
  PointCount *count = user_data;
  guint n = lk_ratio_chart_get_n_points (LK_RATIO_CHART (chart));

  if (n == count->last + 1)
    count->increments++;
  count->last = n;
}

static void
run_cell (LkDiagnosticsWindow *window, guint reps, guint64 iterations, guint64 seed)
{
  g_autoptr (GError) error = NULL;

  lk_diagnostics_window_set_reps (window, reps);
  lk_diagnostics_window_set_iterations (window, iterations);
  lk_diagnostics_window_set_seed (window, seed);
  g_assert_true (lk_diagnostics_window_run (window, race_gate->name, race_cell->name, &error));
  g_assert_no_error (error);
}

static void
test_run_shows_each_repetition (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  LkRatioChart *chart = lk_diagnostics_window_get_chart (window);
  PointCount count = { 0, 0 };
  g_autoptr (GError) error = NULL;

  g_signal_connect (chart, "notify::n-points", G_CALLBACK (on_n_points), &count);
  g_assert_cmpstr (lk_diagnostics_window_get_verdict (window), ==, "");
  run_cell (window, 8, 5, 42);

  /* A second run cannot start beside the first. */
  g_assert_false (lk_diagnostics_window_run (window, NULL, NULL, &error));
  g_assert_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BUSY);

  lk_test_wait (is_idle, window);
  g_assert_cmpuint (lk_ratio_chart_get_n_points (chart), ==, 8);
  g_assert_cmpuint (count.increments, ==, 8);

  const char *verdict = lk_diagnostics_window_get_verdict (window);
  g_assert_true (g_str_equal (verdict, "pass") || g_str_equal (verdict, "loss"));
  const char *summary = lk_diagnostics_window_get_summary (window);
  g_autofree char *prefix = g_strdup_printf ("%s %s ", race_gate->name, race_cell->name);
  g_assert_true (g_str_has_prefix (summary, prefix));
  g_assert_nonnull (strstr (summary, "median_ratio="));
  g_assert_nonnull (strstr (summary, " reps=8 "));
  g_assert_nonnull (strstr (summary, "verdict="));
  g_assert_true (g_str_has_prefix (lk_diagnostics_window_get_status (window), "Finished"));

  /* The chart shows what the verdict was computed from. */
  const LkPairedTiming *timing = lk_ratio_chart_get_timing (chart);
  g_assert_cmpuint (timing->iterations, ==, 5);
  g_assert_cmpuint (timing->seed, ==, 42);

  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_stop_between_repetitions (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  LkRatioChart *chart = lk_diagnostics_window_get_chart (window);
  g_autoptr (GError) error = NULL;

  /* Far more repetitions than the test waits for: ~16 CPU-seconds of them,
   * so the run cannot end on its own before the main loop sees 3 points. */
  run_cell (window, MANY_REPS, 200, 1);
  while (lk_ratio_chart_get_n_points (chart) < 3)
    g_main_context_iteration (NULL, TRUE);
  lk_diagnostics_window_stop (window);
  lk_test_wait (is_idle, window);

  guint landed = lk_ratio_chart_get_n_points (chart);
  g_assert_cmpuint (landed, >=, 3);
  g_assert_cmpuint (landed, <, MANY_REPS);
  g_assert_cmpstr (lk_diagnostics_window_get_verdict (window), ==, "");
  g_assert_true (g_str_has_prefix (lk_diagnostics_window_get_status (window), "Stopped"));
  /* A stopped cell was never judged: nothing to export as a run. */
  g_autofree char *dir = g_dir_make_tmp ("lk-diagnostics-XXXXXX", NULL);
  g_autofree char *json = g_build_filename (dir, "run.json", NULL);
  g_assert_false (lk_diagnostics_window_export_json (window, json, &error));
  g_assert_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_RESULT);
  g_assert_false (g_file_test (json, G_FILE_TEST_EXISTS));
  g_rmdir (dir);

  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_export_reads_back (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  LkRatioChart *chart = lk_diagnostics_window_get_chart (window);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("lk-diagnostics-XXXXXX", &error);
  g_autofree char *json = g_build_filename (dir, "run.json", NULL);
  g_autofree char *png = g_build_filename (dir, "chart.png", NULL);

  g_assert_no_error (error);
  g_assert_false (lk_diagnostics_window_export_png (window, png, &error));
  g_assert_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_RESULT);
  g_clear_error (&error);

  run_cell (window, 6, 3, 7);
  lk_test_wait (is_idle, window);
  g_assert_true (lk_diagnostics_window_export_json (window, json, &error));
  g_assert_no_error (error);
  g_assert_true (lk_diagnostics_window_export_png (window, png, &error));
  g_assert_no_error (error);

  g_autoptr (GPtrArray) cells = lk_timing_load_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cells->len, ==, 1);
  const LkTimingCell *cell = cells->pdata[0];
  const LkPairedTiming *shown = lk_ratio_chart_get_timing (chart);
  g_assert_cmpstr (cell->gate, ==, race_gate->name);
  g_assert_cmpstr (cell->cell, ==, race_cell->name);
  g_assert_cmpuint (cell->timing->reps, ==, 6);
  g_assert_cmpuint (cell->timing->seed, ==, 7);
  for (guint i = 0; i < 6; i++)
    {
      g_assert_cmpfloat_with_epsilon (cell->timing->ratios[i], shown->ratios[i],
                                      1e-9 * shown->ratios[i]);
      g_assert_cmpint (cell->timing->a_went_first[i], ==, shown->a_went_first[i]);
    }
  g_assert_cmpstr (lk_diagnostics_window_get_verdict (window), ==, cell->pass ? "pass" : "loss");

  g_autoptr (LkThumbnail) image = lk_thumbnail_load (png, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (image->width, ==, 960);
  g_assert_cmpuint (image->height, ==, 600);
  /* Something was drawn: not every pixel is the background. */
  gsize differing = 0;
  for (guint y = 0; y < image->height; y++)
    for (guint x = 0; x < image->width; x++)
      differing += memcmp (image->pixels + y * image->stride + 4 * x, image->pixels, 4) != 0;
  g_assert_cmpuint (differing, >, image->width);

  /* The PNG says what it shows: gate, cell, verdict and date, in a band of
   * text above the chart. */
  g_autofree char *caption = lk_diagnostics_window_dup_png_caption (window);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *year = g_date_time_format (now, "%Y-");
  g_assert_nonnull (strstr (caption, race_gate->name));
  g_assert_nonnull (strstr (caption, race_cell->name));
  g_assert_nonnull (strstr (caption, cell->pass ? "pass" : "loss"));
  g_assert_nonnull (strstr (caption, year));
  gsize ink = 0;
  for (guint y = 0; y < 30; y++)
    for (guint x = 70; x < 400; x++)
      ink += memcmp (image->pixels + y * image->stride + 4 * x, image->pixels, 4) != 0;
  g_assert_cmpuint (ink, >, 100);

  g_unlink (json);
  g_unlink (png);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
window_is_idle (gpointer data)
{
  return !lk_window_is_busy (data);
}

/* A scan in a library window and a gate would measure each other: the page
 * refuses to start while one runs, and starts once it is done. */
static void
test_refuses_while_scanning (void)
{
  const char *cli = g_getenv ("LIKENESS_CLI");
  g_autoptr (GError) error = NULL;

  if (race_cell == NULL || cli == NULL)
    {
      g_test_skip ("needs a dot-512d cell that runs here and LIKENESS_CLI");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("lk-diagnostics-XXXXXX", &error);
  g_autofree char *library = g_build_filename (dir, "library", NULL);
  const char *argv[] = { cli, "make-sample", library, "--faces", "400", "--no-thumbnails", NULL };
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  g_assert_no_error (error);

  g_autoptr (GtkApplication) app
      = gtk_application_new ("io.github.likeness.DiagnosticsTest", G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  LkWindow *library_window = lk_window_new (app);
  LkDiagnosticsWindow *window = lk_diagnostics_window_new (app);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait (is_idle, window);

  g_autoptr (GFile) folder = g_file_new_for_path (library);
  lk_window_open (library_window, folder);
  g_assert_true (lk_window_is_busy (library_window));
  lk_diagnostics_window_set_reps (window, 2);
  lk_diagnostics_window_set_iterations (window, 1);
  g_assert_false (lk_diagnostics_window_run (window, race_gate->name, race_cell->name, &error));
  g_assert_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "scanning"));
  g_clear_error (&error);

  lk_test_wait (window_is_idle, library_window);
  g_assert_true (lk_diagnostics_window_run (window, race_gate->name, race_cell->name, &error));
  g_assert_no_error (error);
  lk_test_wait (is_idle, window);
  g_assert_cmpuint (lk_ratio_chart_get_n_points (lk_diagnostics_window_get_chart (window)), ==, 2);

  gtk_window_destroy (GTK_WINDOW (window));
  gtk_window_destroy (GTK_WINDOW (library_window));
  g_autofree char *quoted = g_shell_quote (dir);
  g_autofree char *remove = g_strdup_printf ("rm -rf %s", quoted);
  g_assert_true (g_spawn_command_line_sync (remove, NULL, NULL, NULL, NULL));
}

/* A cell that runs here followed, in its gate, by another that runs here:
 * dot-512d's first where it has two (avx2, then avx512 or neon); on a
 * machine with AVX2 alone (AMD EPYC Zen 1), dot-512d runs only avx2, so the
 * first such cell of any gate (a scan gate's). FALSE when there is none. */
static gboolean
find_cell_with_a_next (const LkGate **gate_out, const LkGateCell **cell_out)
{
  guint n_gates;
  const LkGate *gates = lk_gates (&n_gates);

  for (guint g = 0; g < n_gates; g++)
    {
      const LkGate *gate = g == 0 ? lk_gates_find ("dot-512d") : &gates[g - 1];
      const LkGateCell *first = NULL;
      for (guint c = 0; c < gate->n_cells; c++)
        {
          g_autofree char *unavailable = lk_gate_cell_unavailable (&gate->cells[c]);
          if (unavailable != NULL)
            continue;
          if (first != NULL)
            {
              *gate_out = gate;
              *cell_out = first;
              return TRUE;
            }
          first = &gate->cells[c];
        }
    }
  return FALSE;
}

typedef struct
{
  const LkGate *gate;
  const LkGateCell *cell;
  LkDiagnosticsWindow *window;
} Shown;

static gboolean
cell_shown (gpointer data)
{
  Shown *shown = data;

  return lk_diagnostics_window_show_cell (shown->window, shown->gate->name, shown->cell->name)
         || !lk_diagnostics_window_is_busy (shown->window);
}

/* A finished cell's chart comes back with a click on its row, during a run
 * of the other cells too: the chart stays on it while the run goes on. */
static void
test_finished_cell_reopens (void)
{
  Shown shown = { NULL, NULL, NULL };

  if (!find_cell_with_a_next (&shown.gate, &shown.cell))
    {
      g_test_skip ("no gate has two cells that run on this machine");
      return;
    }
  gboolean dot = g_strcmp0 (shown.gate->name, "dot-512d") == 0;
  /* A scan gate's cells take seconds a repetition: fewer of them. */
  guint reps = dot ? 12 : 4;
  LkDiagnosticsWindow *window = open_window ();
  g_autoptr (GError) error = NULL;

  shown.window = window;
  g_test_message ("%s / %s, then the next cell of its gate", shown.gate->name, shown.cell->name);
  g_assert_false (lk_diagnostics_window_show_cell (window, shown.gate->name, shown.cell->name));
  lk_diagnostics_window_set_reps (window, reps);
  /* Long enough per cell that the cell finishes while the next runs (a
   * scan gate's cells are, with their own one call). */
  lk_diagnostics_window_set_iterations (window, dot ? 3000 : 0);
  lk_diagnostics_window_set_seed (window, 3);
  /* The whole gate: the cell, and the others after it. */
  g_assert_true (lk_diagnostics_window_run (window, shown.gate->name, NULL, &error));
  g_assert_no_error (error);
  lk_test_wait (cell_shown, &shown);
  gboolean during = lk_diagnostics_window_is_busy (window);
  /* The next cell was still running. */
  g_assert_true (during);
  /* What is left of the gate is not this test's: stopped (between two
   * repetitions of the next cell). */
  lk_diagnostics_window_stop (window);
  lk_test_wait (is_idle, window);
  /* The chart stayed on the reopened cell while the next cell ran. */
  g_autofree char *caption = lk_diagnostics_window_dup_png_caption (window);
  g_assert_nonnull (strstr (caption, shown.cell->name));
  g_assert_cmpuint (lk_ratio_chart_get_n_points (lk_diagnostics_window_get_chart (window)), ==,
                    reps);
  g_assert_cmpstr (lk_diagnostics_window_get_verdict (window), !=, "");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A reason with its load average figure taken out: the window read the load
 * a moment before the test does, and on a busy machine the figure moves
 * between the two reads (20.68 and 20.62 in one run). */
static char *
without_load_figure (const char *reason)
{
  if (reason == NULL)
    return NULL;
  const char *at = strstr (reason, "load average ");
  const char *over = at ? strstr (at, " over ") : NULL;
  if (over == NULL)
    return g_strdup (reason);
  return g_strdup_printf ("%.*sload average …%s", (int) (at - reason), reason, over);
}

/* A cell that cannot run here says why in its row, not only in a tooltip. */
static void
test_skip_reason_shown (void)
{
  LkDiagnosticsWindow *window = open_window ();
  guint n_gates, shown = 0;
  const LkGate *gates = lk_gates (&n_gates);

  for (guint g = 0; g < n_gates; g++)
    for (guint c = 0; c < gates[g].n_cells; c++)
      {
        g_autofree char *why = lk_gate_cell_unavailable (&gates[g].cells[c]);
        const char *reason
            = lk_diagnostics_window_get_reason (window, gates[g].name, gates[g].cells[c].name);
        g_autofree char *reason_shown = without_load_figure (reason);
        g_autofree char *reason_expected = without_load_figure (why);
        g_assert_cmpstr (reason_shown, ==, reason_expected);
        shown += why != NULL;
      }
  if (shown == 0)
    g_test_message ("every cell runs on this machine: no reason to show");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A cell this machine cannot run (NEON on x86, AVX-512 on most) has a
 * greyed ▶ that says why, and activating it starts nothing (issue 30: the
 * NEON row said "not here" beside an active ▶). */
static void
test_unavailable_cell_cannot_run (void)
{
  LkDiagnosticsWindow *window = open_window ();
  guint n_gates, unavailable = 0;
  const LkGate *gates = lk_gates (&n_gates);

  for (guint g = 0; g < n_gates; g++)
    for (guint c = 0; c < gates[g].n_cells; c++)
      {
        const char *gate = gates[g].name, *cell = gates[g].cells[c].name;
        const char *reason = lk_diagnostics_window_get_reason (window, gate, cell);
        GtkWidget *run = lk_diagnostics_window_get_run_button (window, gate, cell);
        g_assert_nonnull (run);
        g_assert_true (gtk_widget_get_sensitive (run) == (reason == NULL));
        g_assert_true (gtk_widget_is_sensitive (run) == (reason == NULL));
        if (reason == NULL)
          continue;
        unavailable++;
        const char *tooltip = gtk_widget_get_tooltip_text (run);
        g_assert_nonnull (tooltip);
        g_assert_nonnull (strstr (tooltip, reason));
        gtk_widget_activate (run);
        g_assert_false (lk_diagnostics_window_is_busy (window));
      }
  g_test_message ("%u cells cannot run here", unavailable);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* n repetitions of A and B in ns, A first on the even ones. */
static LkPairedTiming *
made_timing (guint n, double a_first_b_ns, double b_first_b_ns)
{
  LkPairedTiming *timing = lk_paired_timing_new (n, 5, 7, LK_CLOCK_WALL);
  for (guint i = 0; i < n; i++)
    lk_paired_timing_append (timing, 100.0, i % 2 == 0 ? a_first_b_ns : b_first_b_ns, i % 2 == 0);
  return timing;
}

/* The contract is said once, in words (issue 30: "contract “faster”:
 * faster"): each cell's line starts "A must be faster than B" or "A must be
 * no slower than B", and never repeats the contract's name after it. */
static void
test_contract_said_once (void)
{
  LkDiagnosticsWindow *window = open_window ();
  g_autoptr (LkPairedTiming) timing = made_timing (15, 150.0, 150.0);
  guint n_gates;
  const LkGate *gates = lk_gates (&n_gates);

  for (guint g = 0; g < n_gates; g++)
    for (guint c = 0; c < gates[g].n_cells; c++)
      {
        const LkGateCell *cell = &gates[g].cells[c];
        g_assert_true (
            lk_diagnostics_window_show_timing (window, gates[g].name, cell->name, timing));
        const char *line = lk_diagnostics_window_get_cell_subtitle (window);
        g_autofree char *start = g_strdup_printf (cell->contract == LK_CONTRACT_FASTER
                                                      ? "%s must be faster than %s"
                                                      : "%s must be no slower than %s",
                                                  cell->a_label, cell->b_label);
        g_assert_true (g_str_has_prefix (line, start));
        const char *rest = line + strlen (start);
        g_assert_null (strstr (rest, "contract"));
        g_assert_false (g_str_has_prefix (rest, ": faster"));
        g_assert_false (g_str_has_prefix (rest, ": not_slower"));
        g_assert_null (strstr (line, "“"));
      }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A position bias large beside the ratio qualifies the verdict where it is
 * read and says what it means (issue 30: −0.54 read a plain "pass"); a
 * small one leaves the verdict plain. Ratio B ÷ A: 1.8 when A went first,
 * 2.4 when B did — each arm did better second; bias −0.6, median 2.1. */
static void
test_large_position_bias_qualifies_the_verdict (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  g_autoptr (LkPairedTiming) biased = made_timing (20, 180.0, 240.0);
  g_assert_cmpfloat_with_epsilon (lk_paired_timing_first_position_bias (biased), -0.6, 1e-9);

  g_assert_true (
      lk_diagnostics_window_show_timing (window, race_gate->name, race_cell->name, biased));
  g_assert_cmpstr (lk_diagnostics_window_get_verdict (window), ==, "pass");
  const char *detail = lk_diagnostics_window_get_verdict_detail (window);
  const char *bias = lk_diagnostics_window_get_bias_text (window);
  g_test_message ("%s\n%s", detail, bias);
  g_assert_nonnull (strstr (detail, ": pass — but the order of the arms mattered"));
  g_assert_nonnull (strstr (bias, "Position bias -0.6000"));
  g_assert_nonnull (strstr (bias, "faster when it went second"));
  g_assert_nonnull (strstr (bias, "29 % of the median ratio 2.100"));
  g_assert_nonnull (strstr (bias, "first in 10 of 20 repetitions"));
  g_assert_nonnull (strstr (bias, "kept out of the median ratio"));

  /* The same ratios with A first in 16 of 20: no claim that the order was
   * kept out. */
  g_autoptr (LkPairedTiming) lopsided = lk_paired_timing_new (20, 5, 7, LK_CLOCK_WALL);
  for (guint i = 0; i < 20; i++)
    lk_paired_timing_append (lopsided, 100.0, i < 16 ? 180.0 : 240.0, i < 16);
  g_assert_true (
      lk_diagnostics_window_show_timing (window, race_gate->name, race_cell->name, lopsided));
  bias = lk_diagnostics_window_get_bias_text (window);
  g_assert_nonnull (strstr (bias, "first in 16 of 20 repetitions"));
  g_assert_null (strstr (bias, "kept out"));
  g_assert_nonnull (strstr (bias, "leans toward"));

  /* A bias of 1 % of the ratio: a plain pass, "near 0". */
  g_autoptr (LkPairedTiming) even = made_timing (20, 200.0, 202.0);
  g_assert_true (
      lk_diagnostics_window_show_timing (window, race_gate->name, race_cell->name, even));
  detail = lk_diagnostics_window_get_verdict_detail (window);
  g_assert_true (g_str_has_suffix (detail, ": pass"));
  g_assert_nonnull (strstr (lk_diagnostics_window_get_bias_text (window), "Near 0"));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_compute_size (GdkToplevel *toplevel, GdkToplevelSize *size, gpointer computed)
{
  *(gboolean *) computed = TRUE;
}

static gboolean
is_set (gpointer flag)
{
  return *(gboolean *) flag;
}

/* The interval's label ("96.5% CI") keeps clear of the chart's right edge,
 * on screen at the window's least width and in the exported PNG (issue
 * 30: it touched the edge). */
static void
test_interval_label_clear_of_the_edge (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  LkRatioChart *chart = lk_diagnostics_window_get_chart (window);
  g_autoptr (LkPairedTiming) timing = made_timing (15, 150.0, 160.0);
  g_autoptr (GError) error = NULL;

  g_assert_true (
      lk_diagnostics_window_show_timing (window, race_gate->name, race_cell->name, timing));
  int sizes[][2] = { { 1280, 850 }, { 1, 1 } }; /* 1 × 1: the least the window takes */
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      /* The margin is measured as the chart draws: once GTK has sized the
       * window anew and the chart has kept its new size over two frames. */
      GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
      gboolean computed = FALSE;
      gulong id
          = g_signal_connect (surface, "compute-size", G_CALLBACK (on_compute_size), &computed);
      gtk_window_set_default_size (GTK_WINDOW (window), sizes[k][0], sizes[k][1]);
      lk_test_wait_for (is_set, &computed, "the window sized anew");
      g_signal_handler_disconnect (surface, id);
      lk_test_wait_at_rest (GTK_WIDGET (chart), "the chart at the window's new size");
      double margin = lk_ratio_chart_get_interval_label_margin (chart);
      g_test_message ("at %d × %d the chart is %d px wide, its CI label %.1f px from the edge",
                      sizes[k][0], sizes[k][1], gtk_widget_get_width (GTK_WIDGET (chart)), margin);
      g_assert_cmpfloat (margin, >=, 12.0);
    }
  g_autoptr (LkThumbnail) image = lk_ratio_chart_render (chart, 960, 600, "caption", &error);
  g_assert_no_error (error);
  g_assert_nonnull (image);
  g_assert_cmpfloat (lk_ratio_chart_get_interval_label_margin (chart), >=, 12.0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- the chart's layout -------------------------------------------------- */

/* `value` is 1, 2 or 5 times a power of ten, up to rounding. */
static gboolean
is_one_two_five (double value)
{
  double e = floor (log10 (value) + 1e-9);
  double mantissa = value / pow (10.0, e);

  return fabs (mantissa - 1) < 1e-6 || fabs (mantissa - 2) < 1e-6 || fabs (mantissa - 5) < 1e-6;
}

/* Two boxes share more than a rounding pixel's sliver. */
static gboolean
overlap (const graphene_rect_t *a, const graphene_rect_t *b)
{
  graphene_rect_t common;

  return graphene_rect_intersection (a, b, &common) && common.size.width > 0.5
         && common.size.height > 0.5;
}

/* `inner` lies within `outer`, give or take a rounding pixel. */
static gboolean
within (const graphene_rect_t *inner, const graphene_rect_t *outer)
{
  return inner->origin.x >= outer->origin.x - 0.5 && inner->origin.y >= outer->origin.y - 0.5
         && inner->origin.x + inner->size.width <= outer->origin.x + outer->size.width + 0.5
         && inner->origin.y + inner->size.height <= outer->origin.y + outer->size.height + 0.5;
}

static void
say_rect (const char *what, const graphene_rect_t *r)
{
  g_test_message ("  %s %.1f,%.1f %.1f×%.1f", what, r->origin.x, r->origin.y, r->size.width,
                  r->size.height);
}

/* The chart's last drawing, `width` × `height`, read from the layout it
 * computed: the two axis titles keep clear of each other, of every tick
 * label and of the plots, each beside its own panel and inside the chart
 * (whole, not cut to "…", when `roomy`); the ratio axis's ticks are
 * 1-2-5 values or equal 1-2-5 steps and reach past the data at both ends,
 * every repetition's dot inside the panel; no two labels of an axis
 * overlap; the legend shows all four entries, inside the chart, above the
 * plot. */
static void
assert_chart_layout (LkRatioChart *chart, double width, double height, gboolean roomy)
{
  const LkRatioChartLayout *layout = lk_ratio_chart_get_layout (chart);
  const LkPairedTiming *timing = lk_ratio_chart_get_timing (chart);
  graphene_rect_t whole = GRAPHENE_RECT_INIT (0, 0, width, height);

  g_assert_nonnull (layout);
  g_assert_nonnull (timing);
  g_test_message ("chart %.0f×%.0f: ticks %g..%g (%u), axis %g..%g", width, height,
                  layout->ticks[0], layout->ticks[layout->n_ticks - 1], layout->n_ticks,
                  layout->axis_low, layout->axis_high);
  say_rect ("ratio panel", &layout->ratio_panel);
  say_rect ("wins panel", &layout->wins_panel);
  say_rect ("ratio title", &layout->ratio_title);
  say_rect ("wins title", &layout->wins_title);

  /* The titles: beside their own panels, clear of each other and of the
   * labels. */
  const struct
  {
    const graphene_rect_t *title, *panel;
    gboolean ellipsized;
  } titles[] = {
    { &layout->ratio_title, &layout->ratio_panel, layout->ratio_title_ellipsized },
    { &layout->wins_title, &layout->wins_panel, layout->wins_title_ellipsized },
  };
  for (guint k = 0; k < G_N_ELEMENTS (titles); k++)
    {
      const graphene_rect_t *title = titles[k].title, *panel = titles[k].panel;
      g_assert_cmpfloat (title->size.width, >, 0);
      g_assert_true (within (title, &whole));
      g_assert_cmpfloat (title->origin.y, >=, panel->origin.y - 0.5);
      g_assert_cmpfloat (title->origin.y + title->size.height, <=,
                         panel->origin.y + panel->size.height + 0.5);
      g_assert_cmpfloat (title->origin.x + title->size.width, <=, panel->origin.x);
      for (guint t = 0; t < layout->n_tick_labels; t++)
        g_assert_false (overlap (title, &layout->tick_labels[t]));
      for (guint t = 0; t < G_N_ELEMENTS (layout->wins_labels); t++)
        g_assert_false (overlap (title, &layout->wins_labels[t]));
      if (roomy)
        g_assert_false (titles[k].ellipsized);
    }
  g_assert_false (overlap (&layout->ratio_title, &layout->wins_title));
  g_assert_false (overlap (&layout->ratio_panel, &layout->wins_panel));

  /* The ticks: round, ascending, around every ratio. */
  double lo = INFINITY, hi = 0;
  for (guint i = 0; i < timing->reps; i++)
    if (isfinite (timing->ratios[i]) && timing->ratios[i] > 0)
      lo = MIN (lo, timing->ratios[i]), hi = MAX (hi, timing->ratios[i]);
  g_test_message ("  ratios %g..%g", lo, hi);
  g_assert_cmpuint (layout->n_ticks, >=, 2);
  double step = layout->ticks[1] - layout->ticks[0];
  gboolean equal_steps = is_one_two_five (step), ladder = TRUE;
  for (guint k = 0; k < layout->n_ticks; k++)
    {
      if (k > 0)
        {
          g_assert_cmpfloat (layout->ticks[k], >, layout->ticks[k - 1]);
          equal_steps
              = equal_steps && fabs (layout->ticks[k] - layout->ticks[k - 1] - step) < step * 1e-6;
        }
      ladder = ladder && is_one_two_five (layout->ticks[k]);
    }
  g_assert_true (equal_steps || ladder);
  g_assert_cmpfloat (layout->ticks[0], <=, lo);
  g_assert_cmpfloat (layout->ticks[layout->n_ticks - 1], >=, hi);
  g_assert_cmpfloat (layout->axis_low, <=, layout->ticks[0]);
  g_assert_cmpfloat (layout->axis_high, >=, layout->ticks[layout->n_ticks - 1]);
  g_assert_cmpuint (layout->n_points, ==, timing->reps);
  say_rect ("dots", &layout->points);
  g_assert_true (within (&layout->points, &layout->ratio_panel));

  /* The labels of each axis: inside the chart, none over another. */
  g_assert_cmpuint (layout->n_tick_labels, >=, 2);
  for (guint k = 0; k < layout->n_tick_labels; k++)
    {
      g_assert_true (within (&layout->tick_labels[k], &whole));
      g_assert_cmpfloat (layout->tick_labels[k].origin.x + layout->tick_labels[k].size.width, <=,
                         layout->ratio_panel.origin.x);
      for (guint j = 0; j < k; j++)
        g_assert_false (overlap (&layout->tick_labels[k], &layout->tick_labels[j]));
    }
  g_assert_cmpuint (layout->n_rep_labels, >=, 2);
  for (guint k = 0; k < layout->n_rep_labels; k++)
    {
      g_assert_true (within (&layout->rep_labels[k], &whole));
      if (k > 0)
        g_assert_false (overlap (&layout->rep_labels[k], &layout->rep_labels[k - 1]));
    }

  /* The legend: whole, above the plot. */
  g_assert_cmpuint (layout->n_legend, ==, G_N_ELEMENTS (layout->legend));
  for (guint k = 0; k < layout->n_legend; k++)
    {
      g_assert_true (within (&layout->legend[k], &whole));
      g_assert_cmpfloat (layout->legend[k].origin.y + layout->legend[k].size.height, <=,
                         layout->ratio_panel.origin.y);
      for (guint j = 0; j < k; j++)
        g_assert_false (overlap (&layout->legend[k], &layout->legend[j]));
    }
}

/* The chart as the window shows it at `width` × `height`, then as the PNG
 * export draws it at its least size and at a roomy one. */
static void
assert_chart_layout_at (LkDiagnosticsWindow *window, int width, int height)
{
  LkRatioChart *chart = lk_diagnostics_window_get_chart (window);
  g_autoptr (GError) error = NULL;

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window at its new size");
  /* A frame begun after that one draws the chart at its new size. */
  lk_test_wait_laid_out (GTK_WIDGET (window), "the chart drawn at its size");
  g_test_message ("window %d×%d", width, height);
  assert_chart_layout (chart, gtk_widget_get_width (GTK_WIDGET (chart)),
                       gtk_widget_get_height (GTK_WIDGET (chart)), width >= 1280);
  const int renders[][2] = { { 260, 240 }, { 960, 600 } };
  for (guint k = 0; k < G_N_ELEMENTS (renders); k++)
    {
      g_autoptr (LkThumbnail) image
          = lk_ratio_chart_render (chart, renders[k][0], renders[k][1], NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (image);
      assert_chart_layout (chart, renders[k][0], renders[k][1], renders[k][0] >= 960);
    }
}

/* A real run, once it finishes: its chart laid out as said, at 1280 × 720,
 * at a phone's 360 × 640 and in the PNG (when a run finished, "A wins" ran
 * into "B ÷ A time…" and both were cut). */
static void
test_chart_layout_after_a_run (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();

  run_cell (window, 12, 5, 3);
  lk_test_wait (is_idle, window);
  g_assert_cmpuint (lk_ratio_chart_get_n_points (lk_diagnostics_window_get_chart (window)), ==, 12);
  assert_chart_layout_at (window, 1280, 720);
  assert_chart_layout_at (window, 360, 640);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Ratios from 0.9 to 41, the range whose ticks read 1, 4, 11, 30 with the
 * data above 30: 1-2-5 ticks around all of it, at both sizes. */
static void
test_chart_layout_holds_a_wide_range (void)
{
  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();
  g_autoptr (LkPairedTiming) timing = lk_paired_timing_new (20, 5, 7, LK_CLOCK_WALL);

  /* 20 repetitions: labelled every 2nd, "2 4 6 8 10 12…", which ran
   * together on a phone's narrow plot. */
  for (guint i = 0; i < 20; i++)
    lk_paired_timing_append (timing, 100.0, 90.0 * pow (41.0 / 0.9, i / 19.0), i % 3 == 0);
  g_assert_true (
      lk_diagnostics_window_show_timing (window, race_gate->name, race_cell->name, timing));
  assert_chart_layout_at (window, 1280, 720);
  assert_chart_layout_at (window, 360, 640);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_screenshot (void)
{
  const char *path = g_getenv ("LK_DIAGNOSTICS_SCREENSHOT");

  if (race_cell == NULL)
    {
      g_test_skip ("no race cell runs on this machine: nothing to show");
      return;
    }
  LkDiagnosticsWindow *window = open_window ();

  run_cell (window, 40, 400, 1);
  lk_test_wait (is_idle, window);
  lk_test_wait_drawn (GTK_WIDGET (window), NULL, "the finished run drawn");
  lk_test_save_screenshot (GTK_WIDGET (window), path);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_autofree char *stem
      = g_strndup (path, strlen (path) - (g_str_has_suffix (path, ".png") ? 4 : 0));
  /* The finished run at half a 1280 × 720 screen's width and at a phone's
   * (folded, the chart shown). Screenshots only: the folding and the
   * switcher bar's slide are given a moment. */
  const int sizes[][2] = { { 1280, 720 }, { 360, 640 } };
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      gtk_window_set_default_size (GTK_WINDOW (window), sizes[k][0], sizes[k][1]);
      lk_test_wait_laid_out (GTK_WIDGET (window), "the window at its new size");
      lk_test_spin (800);
      g_autofree char *sized = g_strdup_printf ("%s-%dx%d.png", stem, sizes[k][0], sizes[k][1]);
      lk_test_save_screenshot (GTK_WIDGET (window), sized);
    }
  /* And the finished chart at the least size it asks, where the wins panel
   * is shortest: its axis title must stay clear of the ratio panel's. */
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) least
      = lk_ratio_chart_render (lk_diagnostics_window_get_chart (window), 260, 240, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *least_path = g_strdup_printf ("%s-chart-260x240.png", stem);
  g_assert_true (lk_thumbnail_save (least, least_path, &error));
  g_assert_no_error (error);
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
session_loaded (gpointer session)
{
  return !lk_session_is_loading (session);
}

/* The page asks the sessions, not the windows: a library loading in a
 * session no window shows (and a diagnostics window of no application)
 * still refuses a run, and its scan is the one the page reports after. */
static void
test_asks_the_sessions (void)
{
  g_autoptr (GError) error = NULL;

  if (race_cell == NULL)
    {
      g_test_skip ("no dot-512d cell runs on this machine");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("lk-diagnostics-XXXXXX", &error);
  g_autofree char *library = g_build_filename (dir, "library", NULL);
  LkSampleOptions options = LK_SAMPLE_OPTIONS_DEFAULT;
  options.faces = 400;
  options.thumbnails = FALSE;
  g_assert_true (lk_sample_write (library, &options, &error));
  g_assert_no_error (error);

  LkDiagnosticsWindow *window = open_window ();
  GtkLabel *scan_label = GTK_LABEL (gtk_widget_get_template_child (
      GTK_WIDGET (window), LK_TYPE_DIAGNOSTICS_WINDOW, "scan_label"));
  g_autoptr (LkSession) session = lk_session_new (library);
  lk_session_load_async (session, NULL, NULL, NULL);
  lk_diagnostics_window_set_reps (window, 2);
  lk_diagnostics_window_set_iterations (window, 1);
  g_assert_false (lk_diagnostics_window_run (window, race_gate->name, race_cell->name, &error));
  g_assert_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BUSY);
  g_clear_error (&error);

  lk_test_wait (session_loaded, session);
  g_assert_true (lk_session_is_loaded (session));
  g_assert_true (lk_diagnostics_window_run (window, race_gate->name, race_cell->name, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (gtk_label_get_label (scan_label), "400 faces"));
  lk_test_wait (is_idle, window);
  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&session);
  lk_test_remove_tree (dir);
}

/* ---- the Race Commands page ---------------------------------------------- */

/* lk-race-helper ($LK_RACE_HELPER) with `args`, as one command line. */
static char *
helper_line (const char *args)
{
  const char *helper = g_getenv ("LK_RACE_HELPER");
  g_assert_nonnull (helper);
  g_autofree char *quoted = g_shell_quote (helper);
  return g_strdup_printf ("%s %s", quoted, args);
}

static gboolean
race_idle (gpointer page)
{
  return !lk_race_page_is_running (page);
}

/* Two commands raced from the page: one point per repetition in the seed's
 * order, then the verdict and the CLI's summary line. */
static void
test_race_page_races_two_commands (void)
{
  LkDiagnosticsWindow *window = open_window ();
  LkRacePage *page = lk_diagnostics_window_show_race_page (window);
  LkRatioChart *chart = lk_race_page_get_chart (page);
  PointCount count = { 0, 0 };
  g_autofree char *a = helper_line ("--spin 20000");
  g_autofree char *b = helper_line ("--spin 40000");
  g_autoptr (GError) error = NULL;

  g_signal_connect (chart, "notify::n-points", G_CALLBACK (on_n_points), &count);
  g_assert_cmpstr (lk_race_page_get_verdict (page), ==, "");
  lk_race_page_set_commands (page, a, b);
  lk_race_page_set_reps (page, 8);
  lk_race_page_set_seed (page, 5);
  g_assert_true (lk_race_page_run (page, &error));
  g_assert_no_error (error);
  /* A second race cannot start beside the first. */
  g_assert_false (lk_race_page_run (page, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_BUSY);
  lk_test_wait (race_idle, page);

  g_assert_cmpuint (lk_ratio_chart_get_n_points (chart), ==, 8);
  g_assert_cmpuint (count.increments, >=, 1);
  g_assert_cmpstr (lk_race_page_get_verdict (page), ==, "no contract");
  const char *summary = lk_race_page_get_summary (page);
  g_assert_true (g_str_has_prefix (summary, "race A-vs-B A="));
  g_assert_nonnull (strstr (summary, " median_ratio="));
  g_assert_true (g_str_has_suffix (summary, " reps=8 clock=wall verdict=none"));
  g_assert_true (
      g_str_has_prefix (lk_race_page_get_status (page), "Finished: 8 repetitions, seed 5"));
  const LkPairedTiming *timing = lk_ratio_chart_get_timing (chart);
  guint64 coin = 5;
  for (guint i = 0; i < timing->reps; i++)
    g_assert_cmpint (timing->a_went_first[i], ==, lk_timing_coin_a_first (&coin));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* What cannot be raced is refused, naming the field; a command that fails
 * is named in the status. */
static void
test_race_page_refuses_and_reports (void)
{
  LkDiagnosticsWindow *window = open_window ();
  LkRacePage *page = lk_diagnostics_window_show_race_page (window);
  g_autofree char *good = helper_line ("");
  g_autofree char *failing = helper_line ("--stderr 'no such library' --exit 1");
  g_autoptr (GError) error = NULL;

  lk_race_page_set_commands (page, "", good);
  g_assert_false (lk_race_page_run (page, &error));
  g_assert_nonnull (strstr (error->message, "Command A cannot be read"));
  g_clear_error (&error);
  lk_race_page_set_commands (page, good, "'unterminated");
  g_assert_false (lk_race_page_run (page, &error));
  g_assert_nonnull (strstr (error->message, "Command B cannot be read"));
  g_clear_error (&error);

  lk_race_page_set_commands (page, good, failing);
  g_assert_true (lk_race_page_run (page, &error));
  lk_test_wait (race_idle, page);
  const char *status = lk_race_page_get_status (page);
  g_assert_nonnull (strstr (status, "arm B in warmup run 1 of 1 failed"));
  g_assert_nonnull (strstr (status, "no such library"));
  g_assert_cmpstr (lk_race_page_get_verdict (page), ==, "");
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
file_exists (gpointer path)
{
  /* The helper writes it whole and renames it into place. */
  return g_file_test (path, G_FILE_TEST_IS_REGULAR);
}

/* Stop kills the running command and reaps it: its pid is gone, not a
 * zombie. */
static void
test_race_page_stop_kills_the_command (void)
{
  LkDiagnosticsWindow *window = open_window ();
  LkRacePage *page = lk_diagnostics_window_show_race_page (window);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("lk-race-page-XXXXXX", &error);
  g_autofree char *pidfile = g_build_filename (dir, "child.pid", NULL);
  g_autofree char *quoted = g_shell_quote (pidfile);
  g_autofree char *args = g_strdup_printf ("--pidfile %s --pause", quoted);
  g_autofree char *a = helper_line (args);
  g_autofree char *b = helper_line ("");
  g_autofree char *text = NULL;

  lk_race_page_set_commands (page, a, b);
  g_assert_true (lk_race_page_run (page, &error));
  /* The warmup's run of A writes its pid and waits to be killed. */
  lk_test_wait_for (file_exists, pidfile, "the helper's pid file");
  g_assert_true (g_file_get_contents (pidfile, &text, NULL, NULL));
  GPid pid = (GPid) g_ascii_strtoll (text, NULL, 10);
  g_assert_cmpint (kill (pid, 0), ==, 0);
  lk_race_page_stop (page);
  lk_test_wait (race_idle, page);
  errno = 0;
  g_assert_cmpint (kill (pid, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
  g_assert_true (g_str_has_prefix (lk_race_page_get_status (page), "Stopped after 0 repetitions"));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (dir);
}

static gboolean
race_has_points (gpointer page)
{
  return lk_ratio_chart_get_n_points (lk_race_page_get_chart (page)) >= 14;
}

/* LK_RACE_SCREENSHOT=FILE.png: the page mid-race, rendered. */
static void
test_race_page_screenshot (void)
{
  const char *path = g_getenv ("LK_RACE_SCREENSHOT");
  LkDiagnosticsWindow *window = open_window ();
  LkRacePage *page = lk_diagnostics_window_show_race_page (window);
  g_autofree char *a = helper_line ("--spin 3000000");
  g_autofree char *b = helper_line ("--spin 4500000");
  g_autoptr (GError) error = NULL;

  lk_race_page_set_commands (page, a, b);
  lk_race_page_set_reps (page, 60);
  lk_race_page_set_seed (page, 7);
  g_assert_true (lk_race_page_run (page, &error));
  lk_test_wait (race_has_points, page);
  lk_test_save_screenshot (GTK_WIDGET (window), path);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  /* And at a phone's width, mid-race (screenshots only: a moment to fold). */
  g_autofree char *stem
      = g_strndup (path, strlen (path) - (g_str_has_suffix (path, ".png") ? 4 : 0));
  g_autofree char *narrow = g_strdup_printf ("%s-360x640.png", stem);
  gtk_window_set_default_size (GTK_WINDOW (window), 360, 640);
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window at a phone's width");
  lk_test_spin (800);
  lk_test_save_screenshot (GTK_WIDGET (window), narrow);
  lk_race_page_stop (page);
  lk_test_wait (race_idle, page);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, RESOURCE_PREFIX "/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  find_race ();

  g_test_add_func ("/diagnostics/run-shows-each-repetition", test_run_shows_each_repetition);
  g_test_add_func ("/diagnostics/stop-between-repetitions", test_stop_between_repetitions);
  g_test_add_func ("/diagnostics/export-reads-back", test_export_reads_back);
  g_test_add_func ("/diagnostics/skip-reason-shown", test_skip_reason_shown);
  g_test_add_func ("/diagnostics/unavailable-cell-cannot-run", test_unavailable_cell_cannot_run);
  g_test_add_func ("/diagnostics/contract-said-once", test_contract_said_once);
  g_test_add_func ("/diagnostics/large-position-bias-qualifies-the-verdict",
                   test_large_position_bias_qualifies_the_verdict);
  g_test_add_func ("/diagnostics/interval-label-clear-of-the-edge",
                   test_interval_label_clear_of_the_edge);
  g_test_add_func ("/diagnostics/chart-layout-after-a-run", test_chart_layout_after_a_run);
  g_test_add_func ("/diagnostics/chart-layout-holds-a-wide-range",
                   test_chart_layout_holds_a_wide_range);
  g_test_add_func ("/diagnostics/finished-cell-reopens", test_finished_cell_reopens);
  g_test_add_func ("/diagnostics/refuses-while-scanning", test_refuses_while_scanning);
  g_test_add_func ("/diagnostics/asks-the-sessions", test_asks_the_sessions);
  g_test_add_func ("/diagnostics/race-page-races-two-commands", test_race_page_races_two_commands);
  g_test_add_func ("/diagnostics/race-page-refuses-and-reports",
                   test_race_page_refuses_and_reports);
  g_test_add_func ("/diagnostics/race-page-stop-kills-the-command",
                   test_race_page_stop_kills_the_command);
  /* Pictures for people to look at, not tests: made only when asked for. */
  if (g_getenv ("LK_DIAGNOSTICS_SCREENSHOT") != NULL)
    g_test_add_func ("/diagnostics/screenshot", test_screenshot);
  if (g_getenv ("LK_RACE_SCREENSHOT") != NULL)
    g_test_add_func ("/diagnostics/race-page-screenshot", test_race_page_screenshot);
  return g_test_run ();
}
