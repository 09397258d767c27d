/* test-timing — the paired harness measures what it claims, and gates fail loudly
 *
 * The timing-dependent tests assert the statistical behaviour of the harness,
 * not the speed of anything Likeness ships. They must hold on a loaded
 * two-core machine, so their arms are milliseconds long: a descheduling of a
 * few milliseconds lands in one arm of one repetition and the median and the
 * sign of each repetition survive it.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>

#include "timing/lk-timing.h"

/* A dependent chain of `steps` multiply-adds seeded by the harness's nudge:
 * it cannot be vectorised, folded or hoisted, and its cost is linear in
 * steps. */
static double
chain (double x, guint steps)
{
  double acc = x;
  for (guint i = 0; i < steps; i++)
    acc = acc * 1.000001 + i * 1e-9;
  return acc;
}

static double
work_64 (double x, gpointer data)
{
  return chain (x, 64);
}

static double
work_16 (double x, gpointer data)
{
  return chain (x, 16);
}

static double
work_256 (double x, gpointer data)
{
  return chain (x, 256);
}

static double
work_tiny (double x, gpointer data)
{
  return x * 1.000001 + 1e-9;
}

static double
work_nan (double x, gpointer data)
{
  return NAN;
}

/* Identical arms must land near ratio 1 AND win about half the repetitions:
 * the signature of "no measurable difference", which keeps a point estimate
 * of 1.02 from being read as a 2% win. */
static void
test_identical_arms_report_no_winner (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (21, 10000, 0xA5A51234, work_64, NULL, work_64, NULL);
  g_autofree char *line = lk_paired_timing_summary (t, "a", "b");

  g_test_message ("%s", line);
  g_assert_cmpuint (t->reps, ==, 21);
  if (fabs (lk_paired_timing_median_ratio (t) - 1.0) >= 0.35)
    g_error ("identical arms should sit near ratio 1: %s", line);
  double wins = lk_paired_timing_wins_fraction (t);
  if (wins < 0.15 || wins > 0.85)
    g_error ("identical arms should win about half the repetitions: %s", line);
}

/* A genuinely faster arm must be detected with every repetition agreeing.
 * The slow arm is ~20 ms per repetition longer than the fast one, so even a
 * descheduling inside the fast arm does not flip a repetition. */
static void
test_large_real_difference_detected_unanimously (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (15, 32000, 0x5EED, work_16, NULL, work_256, NULL);
  g_autofree char *line = lk_paired_timing_summary (t, "fast", "slow");

  g_test_message ("%s", line);
  if (!(lk_paired_timing_median_ratio (t) > 2.0))
    g_error ("a 16x work difference must show as a large ratio: %s", line);
  if (lk_paired_timing_wins_fraction (t) != 1.0)
    g_error ("a large real difference must win EVERY repetition: %s", line);
}

/* The wall clock sees the same difference (the clock for arms that use many
 * threads). Unanimity is not asserted here: on a loaded machine a whole time
 * slice of another process can land in the fast arm of one repetition — the
 * reason the CPU clock is the default. */
static void
test_wall_clock_sees_a_large_difference (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkPairedTiming) t = lk_paired_interleaved_full (
      15, 32000, 0x5EED, LK_CLOCK_WALL, work_16, NULL, work_256, NULL, NULL, NULL, NULL, &error);
  g_autofree char *line = lk_paired_timing_summary (t, "fast", "slow");

  g_test_message ("%s", line);
  g_assert_true (g_str_has_suffix (line, " clock=wall"));
  if (!(lk_paired_timing_median_ratio (t) > 2.0))
    g_error ("a 16x work difference must show on the wall clock too: %s", line);
}

/* A harness that believes it randomises but does not is the thing it
 * replaces, and its position-bias diagnostic would silently be NaN. */
static void
test_both_orders_occur_and_position_bias_is_reportable (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (20, 500, 7, work_tiny, NULL, work_tiny, NULL);
  guint a_first = 0;

  for (guint i = 0; i < t->reps; i++)
    a_first += t->a_went_first[i];
  g_assert_cmpuint (a_first, >, 0);
  g_assert_cmpuint (a_first, <, t->reps);
  g_assert_true (isfinite (lk_paired_timing_first_position_bias (t)));
}

/* The order is a function of the seed alone: a run can be reproduced, and a
 * verdict re-checked under another order sequence. */
static void
test_order_is_reproducible_from_the_seed (void)
{
  g_autoptr (LkPairedTiming) one
      = lk_paired_interleaved (32, 1, 42, work_tiny, NULL, work_tiny, NULL);
  g_autoptr (LkPairedTiming) two
      = lk_paired_interleaved (32, 1, 42, work_tiny, NULL, work_tiny, NULL);
  g_autoptr (LkPairedTiming) other
      = lk_paired_interleaved (32, 1, 43, work_tiny, NULL, work_tiny, NULL);
  gboolean differs = FALSE;

  for (guint i = 0; i < 32; i++)
    {
      g_assert_cmpint (one->a_went_first[i], ==, two->a_went_first[i]);
      differs |= one->a_went_first[i] != other->a_went_first[i];
    }
  g_assert_true (differs);
  g_assert_cmpuint (one->seed, ==, 42);
  g_assert_cmpuint (one->iterations, ==, 1);
}

/* The resolution tells a caller whether its bar is assertable at all. */
static void
test_resolution_is_reported_and_positive (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (15, 500, 99, work_tiny, NULL, work_tiny, NULL);
  double resolution = lk_paired_timing_ratio_resolution (t);
  g_autofree char *line = lk_paired_timing_summary (t, "a", "b");

  if (!(isfinite (resolution) && resolution > 0.0))
    g_error ("resolution must be a usable number: %s", line);
}

/* The summary carries the numbers that could overturn the verdict, not just
 * the verdict: a ratio alone is how a 3% claim with 6% resolution gets read
 * as established. */
static void
test_summary_carries_the_overturning_numbers (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (9, 500, 3, work_tiny, NULL, work_tiny, NULL);
  g_autofree char *line = lk_paired_timing_summary (t, "production", "hand");
  const char *fields[]
      = { "production=", " ns/iter hand=", "median_ratio=", "wins=",    "resolution=",
          "ci=[",        "position_bias=", "reps=9",        "clock=cpu" };

  for (guint k = 0; k < G_N_ELEMENTS (fields); k++)
    if (strstr (line, fields[k]) == NULL)
      g_error ("summary is missing %s: %s", fields[k], line);
}

/* Known numbers, so the summary's formats and the statistics are pinned. */
static void
test_statistics_on_known_ratios (void)
{
  g_autoptr (LkPairedTiming) t = lk_paired_timing_new (6, 10, 1, LK_CLOCK_CPU);
  /* ratios 2, 0.5, 1.5, 1.25, 4, 1 ; A first in reps 0, 2, 4 */
  lk_paired_timing_append (t, 100, 200, TRUE);
  lk_paired_timing_append (t, 100, 50, FALSE);
  lk_paired_timing_append (t, 100, 150, TRUE);
  lk_paired_timing_append (t, 100, 125, FALSE);
  lk_paired_timing_append (t, 100, 400, TRUE);
  lk_paired_timing_append (t, 100, 100, FALSE);

  g_assert_cmpfloat_with_epsilon (lk_paired_timing_median_ratio (t), 1.375, 1e-12);
  g_assert_cmpfloat_with_epsilon (lk_paired_timing_median_b_ns (t), 137.5, 1e-12);
  /* A won where b > a: reps 0, 2, 3, 4 (rep 5 is a tie, not a win). */
  g_assert_cmpfloat_with_epsilon (lk_paired_timing_wins_fraction (t), 4.0 / 6.0, 1e-12);
  /* sorted 0.5 1 1.25 1.5 2 4: q05 = 0.5 + 0.25·0.5, q95 = 2 + 0.75·2 */
  g_assert_cmpfloat_with_epsilon (lk_paired_timing_ratio_resolution (t), (3.5 - 0.625) / 2 / 1.375,
                                  1e-12);
  /* A first: 2, 1.5, 4 → 2; B first: 0.5, 1.25, 1 → 1 */
  g_assert_cmpfloat_with_epsilon (lk_paired_timing_first_position_bias (t), 1.0, 1e-12);

  double low, high, confidence;
  g_assert_true (lk_paired_timing_median_interval (t, &low, &high, &confidence));
  g_assert_cmpfloat (low, ==, 0.5);
  g_assert_cmpfloat (high, ==, 4.0);
  g_assert_cmpfloat_with_epsilon (confidence, 1.0 - 2.0 / 64, 1e-12);

  g_autofree char *line = lk_paired_timing_summary (t, "x", "y");
  g_assert_cmpstr (
      line, ==,
      "x=100.00 ns/iter y=137.50 ns/iter median_ratio=1.375000 wins=0.67 "
      "resolution=1.0455 ci=[0.5000,4.0000]@96.9% position_bias=1.0000 reps=6 clock=cpu");
}

/* Below six repetitions no sign-test interval reaches 95%: the summary says
 * so rather than printing a narrower, weaker interval. */
static void
test_too_few_reps_have_no_interval (void)
{
  g_autoptr (LkPairedTiming) t = lk_paired_timing_new (5, 1, 1, LK_CLOCK_CPU);
  double low, high, confidence;

  for (guint i = 0; i < 5; i++)
    lk_paired_timing_append (t, 10, 10 + i, i % 2);
  g_assert_false (lk_paired_timing_median_interval (t, &low, &high, &confidence));
  g_assert_true (isnan (low) && isnan (high));
  g_autofree char *line = lk_paired_timing_summary (t, "a", "b");
  g_assert_nonnull (strstr (line, " ci=none "));
}

/* The ranks of the sign-test interval against published tables (and 15 →
 * [r(4), r(12)] as the harness promises). */
static void
test_sign_test_ranks_match_the_binomial (void)
{
  double confidence;

  g_assert_cmpuint (lk_sign_test_rank (15, 0.95, &confidence), ==, 4);
  g_assert_cmpfloat_with_epsilon (confidence, 1.0 - 2.0 * 576 / 32768, 1e-12);
  g_assert_cmpuint (lk_sign_test_rank (6, 0.95, &confidence), ==, 1);
  g_assert_cmpfloat_with_epsilon (confidence, 1.0 - 2.0 / 64, 1e-12);
  g_assert_cmpuint (lk_sign_test_rank (5, 0.95, &confidence), ==, 0);
  g_assert_true (isnan (confidence));
  g_assert_cmpuint (lk_sign_test_rank (0, 0.95, NULL), ==, 0);
  g_assert_cmpuint (lk_sign_test_rank (20, 0.95, NULL), ==, 6);
  g_assert_cmpuint (lk_sign_test_rank (25, 0.95, NULL), ==, 8);
  g_assert_cmpuint (lk_sign_test_rank (100, 0.95, NULL), ==, 40);
  g_assert_cmpuint (lk_sign_test_rank (2000, 0.95, &confidence), ==, 956);
  g_assert_cmpfloat (confidence, >=, 0.95);
}

/* Draw ratios from a known, skewed distribution (0.5 + Exp(1): median
 * 0.5 + ln 2) many times with a fixed seed: the interval must cover the true
 * median at the rate it promises — at least 95%, and at its exact computed
 * level within Monte-Carlo error (so an interval wider than promised fails
 * too). */
static void
test_interval_covers_the_true_median_as_promised (void)
{
  const guint sizes[] = { 6, 9, 15, 25 };
  const guint trials = 4000;
  const double true_median = 0.5 + G_LN2;
  g_autoptr (GRand) rand = g_rand_new_with_seed (20261202);

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      guint n = sizes[s], covered = 0;
      double promised = NAN;
      for (guint trial = 0; trial < trials; trial++)
        {
          g_autoptr (LkPairedTiming) t = lk_paired_timing_new (n, 1, trial, LK_CLOCK_CPU);
          for (guint i = 0; i < n; i++)
            {
              double ratio = 0.5 - log (1.0 - g_rand_double (rand));
              lk_paired_timing_append (t, 1.0, ratio, i % 2);
            }
          double low, high;
          g_assert_true (lk_paired_timing_median_interval (t, &low, &high, &promised));
          covered += low <= true_median && true_median <= high;
        }
      double coverage = (double) covered / trials;
      g_test_message ("n=%u coverage=%.4f promised=%.4f", n, coverage, promised);
      g_assert_cmpfloat (coverage, >=, LK_MEDIAN_CI_LEVEL);
      g_assert_cmpfloat (fabs (coverage - promised), <, 0.015);
    }
}

typedef struct
{
  guint calls;
  guint cancel_after;
  GCancellable *cancellable;
} RepLog;

static void
on_rep (const LkPairedTiming *timing, guint rep, gpointer user_data)
{
  RepLog *log = user_data;

  g_assert_cmpuint (rep, ==, log->calls);
  g_assert_cmpuint (timing->reps, ==, rep + 1);
  g_assert_cmpfloat (timing->ratios[rep], ==, timing->b_ns[rep] / timing->a_ns[rep]);
  log->calls++;
  if (log->cancellable != NULL && log->calls == log->cancel_after)
    g_cancellable_cancel (log->cancellable);
}

/* Each repetition is handed over as it lands, so a UI can draw it. */
static void
test_each_repetition_is_reported_as_it_lands (void)
{
  RepLog log = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (LkPairedTiming) t = lk_paired_interleaved_full (
      7, 10, 1, LK_CLOCK_WALL, work_tiny, NULL, work_tiny, NULL, on_rep, &log, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (log.calls, ==, 7);
  g_assert_cmpuint (t->reps, ==, 7);
  g_assert_cmpint (t->clock, ==, LK_CLOCK_WALL);
}

/* Stop between repetitions: no timing, G_IO_ERROR_CANCELLED, and no
 * repetition measured after the one during which Stop was pressed. */
static void
test_cancellation_stops_between_repetitions (void)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  RepLog log = { .cancel_after = 3, .cancellable = cancellable };
  g_autoptr (GError) error = NULL;
  g_autoptr (LkPairedTiming) t = lk_paired_interleaved_full (
      50, 10, 1, LK_CLOCK_CPU, work_tiny, NULL, work_tiny, NULL, on_rep, &log, cancellable, &error);

  g_assert_null (t);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (log.calls, ==, 3);
}

/* Each arm gets its own data. */
static double
count_calls (double x, gpointer data)
{
  (*(guint64 *) data)++;
  return x;
}

static void
test_each_arm_gets_its_own_data (void)
{
  guint64 a_calls = 0, b_calls = 0;
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (3, 11, 1, count_calls, &a_calls, count_calls, &b_calls);

  g_assert_cmpuint (t->reps, ==, 3);
  g_assert_cmpuint (a_calls, ==, 33);
  g_assert_cmpuint (b_calls, ==, 33);
}

typedef struct
{
  guint calls;
  double nudges[8];
} Recorder;

static double
record_nudge (double x, gpointer data)
{
  Recorder *r = data;
  r->nudges[r->calls++] = x;
  return 1.0 + r->calls;
}

/* A batch calls the small arm `rows` times, each with its own input, and
 * folds every result. */
static void
test_batched_calls_every_row_with_its_own_input (void)
{
  Recorder r = { 0 };
  LkBatched batch = { record_nudge, &r, 5 };
  double fold = lk_batched (0.25, &batch);

  g_assert_cmpuint (r.calls, ==, 5);
  g_assert_cmpfloat (fold, ==, 2 + 3 + 4 + 5 + 6);
  g_assert_cmpfloat (r.nudges[0], ==, 0.25);
  /* 0.25 + r·1e-18 rounds back to 0.25, so distinctness is asserted on a
   * nudge of the order the harness passes (checksum · 1e-18). */
  Recorder small = { 0 };
  LkBatched small_batch = { record_nudge, &small, 4 };
  lk_batched (1e-17, &small_batch);
  for (guint i = 1; i < 4; i++)
    g_assert_cmpfloat (small.nudges[i], >, small.nudges[i - 1]);
}

/* The harness's own per-call cost is a small positive number: what the CLI
 * divides by each arm's ns/iter to show the overhead fraction. (The bound is
 * generous — a function call, not a claim about this machine.) */
static void
test_harness_call_cost_is_measured (void)
{
  double ns = lk_harness_call_ns ();

  g_test_message ("harness: %.3f ns per call", ns);
  g_assert_cmpfloat (ns, >, 0.0);
  g_assert_cmpfloat (ns, <, 1000.0);
}

/* ---- refusals that must be loud ---------------------------------------- */

/* Zero repetitions or iterations would return an empty or meaningless
 * timing; a gate built on it would assert nothing. */
static void
test_zero_repetitions_is_refused_not_silently_empty (void)
{
  if (g_test_subprocess ())
    {
      lk_paired_interleaved (0, 10, 1, work_tiny, NULL, work_tiny, NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*needs at least one repetition (reps = 0)*");
}

static void
test_zero_iterations_is_refused (void)
{
  if (g_test_subprocess ())
    {
      lk_paired_interleaved (10, 0, 1, work_tiny, NULL, work_tiny, NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*needs at least one iteration per repetition (iterations = 0)*");
}

/* A NaN short-circuit is often much faster than the real computation: a
 * timing of it is meaningless, so it is refused, loudly. */
static void
test_non_finite_checksum_is_refused (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (GError) error = NULL;
      /* Criticals are fatal under g_test_init; let this one return so the
       * GError a UI would show is checked too. */
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_assert_null (lk_paired_interleaved_full (3, 10, 1, LK_CLOCK_CPU, work_tiny, NULL, work_nan,
                                                 NULL, NULL, NULL, NULL, &error));
      g_assert_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_NON_FINITE);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*arm B accumulated a non-finite checksum (nan) in repetition 0*");
}

static void
test_batch_of_zero_rows_is_refused (void)
{
  if (g_test_subprocess ())
    {
      LkBatched batch = { work_tiny, NULL, 0 };
      lk_batched (1.0, &batch);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*batched arm needs at least one row (rows = 0)*");
}

/* ---- speed gates -------------------------------------------------------- */

/* A timing whose ratios are exactly `ratios`. */
static LkPairedTiming *
timing_with_ratios (const double *ratios, guint n)
{
  LkPairedTiming *t = lk_paired_timing_new (n, 1000, 5, LK_CLOCK_WALL);
  for (guint i = 0; i < n; i++)
    lk_paired_timing_append (t, 1000.0, 1000.0 * ratios[i], i % 2 == 0);
  return t;
}

static void
test_faster_loses_at_a_ratio_of_one (void)
{
  const double tie[] = { 0.99, 1.0, 1.01 };
  const double win[] = { 1.0, 1.01, 1.02 };
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("TEST-FASTER");
  g_autoptr (GError) error = NULL;

  const LkTimingCell *lost
      = lk_speed_gate_faster (gate, "tie", timing_with_ratios (tie, 3), "new", "old");
  const LkTimingCell *won
      = lk_speed_gate_faster (gate, "win", timing_with_ratios (win, 3), "new", "old");
  g_assert_false (lost->pass);
  g_assert_true (won->pass);
  g_assert_cmpstr (won->verdict, ==, "pass");
  g_assert_cmpuint (lk_speed_gate_n_cells (gate), ==, 2);
  g_assert_true (lk_speed_gate_cell (gate, 1) == won);

  g_autofree char *line = lk_timing_cell_line (lost);
  g_assert_true (g_str_has_prefix (line, "TEST-FASTER tie new=1000.00 ns/iter old=1000.00"));
  g_assert_true (g_str_has_suffix (line, "verdict=FAIL: A must be faster than B"));

  g_assert_false (lk_speed_gate_finish (gate, &error));
  g_assert_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_GATE_LOST);
  g_assert_nonnull (strstr (error->message, "TEST-FASTER: 1 of 2 cell(s)"));
  g_assert_nonnull (strstr (error->message, "\ntie: new="));
  g_assert_null (strstr (error->message, "win:"));
}

/* not_slower's only tolerance is the measurement's own resolution. */
static void
test_not_slower_tolerates_exactly_the_resolution (void)
{
  /* median 0.98, resolution (1.064 - 0.91) / 2 / 0.98 ≈ 0.079: within its noise floor */
  const double noisy[] = { 0.90, 0.95, 0.98, 1.0, 1.08 };
  /* median 0.90, resolution (0.9 - 0.8964) / 2 / 0.9 = 0.002: measurably slower */
  const double slower[] = { 0.896, 0.898, 0.90, 0.90, 0.9 };
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("TEST-NOT-SLOWER");
  g_autoptr (GError) error = NULL;

  g_assert_true (
      lk_speed_gate_not_slower (gate, "noisy", timing_with_ratios (noisy, 5), "a", "b")->pass);
  g_assert_false (
      lk_speed_gate_not_slower (gate, "slower", timing_with_ratios (slower, 5), "a", "b")->pass);
  g_assert_false (lk_speed_gate_finish (gate, &error));
  g_assert_nonnull (strstr (error->message, "slower: a="));
  g_assert_nonnull (strstr (error->message, "beyond the measurement's resolution"));
}

static void
test_two_losses_are_both_named (void)
{
  const double lose[] = { 0.5, 0.6, 0.7 };
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("TEST-TWO");
  g_autoptr (GError) error = NULL;

  lk_speed_gate_faster (gate, "first", timing_with_ratios (lose, 3), "a", "b");
  lk_speed_gate_not_slower (gate, "second", timing_with_ratios (lose, 3), "a", "b");
  g_assert_false (lk_speed_gate_finish (gate, &error));
  g_assert_nonnull (strstr (error->message, "2 of 2 cell(s)"));
  g_assert_nonnull (strstr (error->message, "\nfirst: "));
  g_assert_nonnull (strstr (error->message, "\nsecond: "));
}

static void
test_a_passing_gate_finishes_clean (void)
{
  const double win[] = { 1.2, 1.3, 1.25 };
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("TEST-PASS");
  g_autoptr (GError) error = NULL;

  lk_speed_gate_faster (gate, "cell", timing_with_ratios (win, 3), "a", "b");
  g_assert_true (lk_speed_gate_finish (gate, &error));
  g_assert_no_error (error);
}

/* A gate that measured nothing, or was never finished, verified nothing and
 * would otherwise print "ok": both are loud. */
static void
test_gate_finished_with_no_cell_fails_loudly (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("EMPTY-GATE");
      lk_speed_gate_finish (gate, NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*EMPTY-GATE: a speed gate finished with no measured cell "
                             "verifies nothing*");
}

static void
test_gate_freed_without_finish_fails_loudly (void)
{
  if (g_test_subprocess ())
    {
      const double win[] = { 1.2, 1.3, 1.25 };
      g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("UNFINISHED-GATE");
      lk_speed_gate_faster (gate, "cell", timing_with_ratios (win, 3), "a", "b");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*UNFINISHED-GATE: a speed gate was opened and freed without "
                             "lk_speed_gate_finish*");
}

/* A gate stopped on purpose (Stop pressed) is neither pass nor loss. */
static void
test_an_abandoned_gate_frees_quietly (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("STOPPED-GATE");
      lk_speed_gate_abandon (gate);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("");
}

/* ---- JSON ---------------------------------------------------------------- */

static char *
temp_path (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-timing-XXXXXX", &error);
  g_assert_no_error (error);
  return g_build_filename (dir, name, NULL);
}

static void
remove_temp (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_json_round_trip (void)
{
  const double awkward[]
      = { 1.0 / 3.0, 2.718281828459045, 0.1 + 0.2, 1e-300 * 1e300, 7.125, 1.000000000000001, 0.5 };
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("ROUND-TRIP");
  g_autoptr (GError) error = NULL;
  g_autofree char *path = temp_path ("run.json");

  LkPairedTiming *t = timing_with_ratios (awkward, 7);
  t->seed = G_MAXUINT64 - 2; /* beyond what a JSON double holds exactly */
  t->a_ns[3] = 123456.78901234567;
  t->ratios[3] = t->b_ns[3] / t->a_ns[3];
  lk_speed_gate_faster (gate, "cell/one", t, "fast path", "slow");
  lk_speed_gate_not_slower (gate, "two", timing_with_ratios (awkward, 3), "x", "y");
  lk_speed_gate_finish (gate, NULL);

  LkTimingCell *cells[] = { (LkTimingCell *) lk_speed_gate_cell (gate, 0),
                            (LkTimingCell *) lk_speed_gate_cell (gate, 1) };
  g_assert_true (lk_timing_save_json (path, cells, 2, &error));
  g_assert_no_error (error);

  g_autoptr (GPtrArray) back = lk_timing_load_json (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->len, ==, 2);
  for (guint c = 0; c < 2; c++)
    {
      const LkTimingCell *x = cells[c], *y = back->pdata[c];
      g_assert_cmpstr (y->gate, ==, x->gate);
      g_assert_cmpstr (y->cell, ==, x->cell);
      g_assert_cmpstr (y->a_label, ==, x->a_label);
      g_assert_cmpstr (y->b_label, ==, x->b_label);
      g_assert_cmpint (y->contract, ==, x->contract);
      g_assert_cmpint (y->pass, ==, x->pass);
      g_assert_cmpstr (y->verdict, ==, x->verdict);
      g_assert_cmpuint (y->timing->seed, ==, x->timing->seed);
      g_assert_cmpint (y->timing->clock, ==, x->timing->clock);
      g_assert_cmpuint (y->timing->iterations, ==, x->timing->iterations);
      g_assert_cmpuint (y->timing->reps, ==, x->timing->reps);
      for (guint i = 0; i < x->timing->reps; i++)
        {
          g_assert_cmpfloat (y->timing->a_ns[i], ==, x->timing->a_ns[i]);
          g_assert_cmpfloat (y->timing->b_ns[i], ==, x->timing->b_ns[i]);
          g_assert_cmpfloat (y->timing->ratios[i], ==, x->timing->ratios[i]);
          g_assert_cmpint (y->timing->a_went_first[i], ==, x->timing->a_went_first[i]);
        }
      g_autofree char *line_x = lk_timing_cell_line (x);
      g_autofree char *line_y = lk_timing_cell_line (y);
      g_assert_cmpstr (line_y, ==, line_x);
    }

  /* The file is Google Benchmark's shape: rows a tool can read by name. */
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, NULL));
  JsonObject *top = json_node_get_object (json_parser_get_root (parser));
  JsonArray *rows = json_object_get_array_member (top, "benchmarks");
  g_assert_cmpuint (json_array_get_length (rows), ==, 2 * 7 + 2 * 3 + 4);
  JsonObject *first = json_array_get_object_element (rows, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "run_type"), ==, "iteration");
  g_assert_cmpstr (json_object_get_string_member (first, "time_unit"), ==, "ns");
  g_assert_true (
      g_str_has_prefix (json_object_get_string_member (first, "name"), "ROUND-TRIP/cell/one/"));
  JsonObject *context = json_object_get_object_member (top, "context");
  g_assert_cmpstr (json_object_get_string_member (context, "library_build_type"), ==,
                   LK_BUILD_TYPE);
  JsonObject *summary
      = json_array_get_object_element (json_object_get_array_member (top, "likeness_cells"), 0);
  g_assert_cmpfloat (json_object_get_double_member (summary, "median_ratio"), ==,
                     lk_paired_timing_median_ratio (cells[0]->timing));
  g_assert_cmpint (json_object_get_int_member (summary, "reps"), ==, 7);
  remove_temp (path);
}

/* A file that does not follow the schema is refused naming file, row and
 * field. */
static void
test_json_reader_names_what_is_wrong (void)
{
  const struct
  {
    const char *text;
    const char *message;
  } cases[] = {
    { "not json", "not a JSON file" },
    { "{\"context\": {\"likeness_schema\": \"likeness-paired-timing\", "
      "\"likeness_schema_version\": 2}, \"benchmarks\": [], \"likeness_cells\": []}",
      "version 2; Likeness reads “likeness-paired-timing” version 1" },
    { "{\"context\": {\"likeness_schema\": \"likeness-paired-timing\", "
      "\"likeness_schema_version\": 1}, \"benchmarks\": [], \"likeness_cells\": [{\"gate\": "
      "\"G\", \"cell\": \"c\", \"a_label\": \"a\", \"b_label\": \"b\", \"contract\": "
      "\"faster\", \"pass\": true, \"verdict\": \"pass\", \"clock\": \"cpu\", \"reps\": 1, "
      "\"iterations\": 3, "
      "\"seed\": \"9\"}]}",
      "cell G/c: repetition 0 lacks the row of arm a" },
    { "{\"context\": {\"likeness_schema\": \"likeness-paired-timing\", "
      "\"likeness_schema_version\": 1}, \"likeness_cells\": [], \"benchmarks\": [{\"run_type\": "
      "\"iteration\", \"likeness_gate\": \"G\", \"likeness_cell\": \"c\", \"likeness_arm\": "
      "\"a\", \"repetition_index\": 0, \"iterations\": 1, \"real_time\": \"fast\", "
      "\"likeness_went_first\": true}]}",
      "benchmarks[0]: field “real_time” must be a number" },
  };

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *path = temp_path ("bad.json");
      g_autoptr (GError) error = NULL;
      g_assert_true (g_file_set_contents (path, cases[k].text, -1, NULL));
      g_autoptr (GPtrArray) cells = lk_timing_load_json (path, &error);
      g_assert_null (cells);
      g_assert_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_JSON);
      g_assert_true (g_str_has_prefix (error->message, path));
      if (strstr (error->message, cases[k].message) == NULL)
        g_error ("expected “%s” in: %s", cases[k].message, error->message);
      remove_temp (path);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/timing/identical-arms-report-no-winner", test_identical_arms_report_no_winner);
  g_test_add_func ("/timing/large-real-difference-detected-unanimously",
                   test_large_real_difference_detected_unanimously);
  g_test_add_func ("/timing/wall-clock-sees-a-large-difference",
                   test_wall_clock_sees_a_large_difference);
  g_test_add_func ("/timing/both-orders-occur-and-position-bias-is-reportable",
                   test_both_orders_occur_and_position_bias_is_reportable);
  g_test_add_func ("/timing/order-is-reproducible-from-the-seed",
                   test_order_is_reproducible_from_the_seed);
  g_test_add_func ("/timing/resolution-is-reported-and-positive",
                   test_resolution_is_reported_and_positive);
  g_test_add_func ("/timing/summary-carries-the-overturning-numbers",
                   test_summary_carries_the_overturning_numbers);
  g_test_add_func ("/timing/statistics-on-known-ratios", test_statistics_on_known_ratios);
  g_test_add_func ("/timing/too-few-reps-have-no-interval", test_too_few_reps_have_no_interval);
  g_test_add_func ("/timing/sign-test-ranks-match-the-binomial",
                   test_sign_test_ranks_match_the_binomial);
  g_test_add_func ("/timing/interval-covers-the-true-median-as-promised",
                   test_interval_covers_the_true_median_as_promised);
  g_test_add_func ("/timing/each-repetition-is-reported-as-it-lands",
                   test_each_repetition_is_reported_as_it_lands);
  g_test_add_func ("/timing/cancellation-stops-between-repetitions",
                   test_cancellation_stops_between_repetitions);
  g_test_add_func ("/timing/each-arm-gets-its-own-data", test_each_arm_gets_its_own_data);
  g_test_add_func ("/timing/batched-calls-every-row-with-its-own-input",
                   test_batched_calls_every_row_with_its_own_input);
  g_test_add_func ("/timing/harness-call-cost-is-measured", test_harness_call_cost_is_measured);
  g_test_add_func ("/timing/zero-repetitions-is-refused-not-silently-empty",
                   test_zero_repetitions_is_refused_not_silently_empty);
  g_test_add_func ("/timing/zero-iterations-is-refused", test_zero_iterations_is_refused);
  g_test_add_func ("/timing/non-finite-checksum-is-refused", test_non_finite_checksum_is_refused);
  g_test_add_func ("/timing/batch-of-zero-rows-is-refused", test_batch_of_zero_rows_is_refused);
  g_test_add_func ("/timing/gate/faster-loses-at-a-ratio-of-one",
                   test_faster_loses_at_a_ratio_of_one);
  g_test_add_func ("/timing/gate/not-slower-tolerates-exactly-the-resolution",
                   test_not_slower_tolerates_exactly_the_resolution);
  g_test_add_func ("/timing/gate/two-losses-are-both-named", test_two_losses_are_both_named);
  g_test_add_func ("/timing/gate/a-passing-gate-finishes-clean",
                   test_a_passing_gate_finishes_clean);
  g_test_add_func ("/timing/gate/finished-with-no-cell-fails-loudly",
                   test_gate_finished_with_no_cell_fails_loudly);
  g_test_add_func ("/timing/gate/freed-without-finish-fails-loudly",
                   test_gate_freed_without_finish_fails_loudly);
  g_test_add_func ("/timing/gate/an-abandoned-gate-frees-quietly",
                   test_an_abandoned_gate_frees_quietly);
  g_test_add_func ("/timing/json/round-trip", test_json_round_trip);
  g_test_add_func ("/timing/json/reader-names-what-is-wrong", test_json_reader_names_what_is_wrong);
  return g_test_run ();
}
