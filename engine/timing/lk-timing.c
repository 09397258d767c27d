/* lk-timing.c — one way to measure "does A beat B", for every speed gate
 *
 * Ported from the paired harness of the project this one descends from,
 * where fifteen timing loops had grown in three shapes and the shape decided
 * whether a gate could tell a regression from a busy machine. Its lessons,
 * which are why this file looks the way it does:
 *
 * Timing A to completion and then B — each as a minimum over a few rounds —
 * cannot resolve a margin of a few percent. The two arms sit in different
 * windows of wall-clock time, so whatever drifts between the windows (a
 * neighbour's job, a frequency ramp, caches and predictors warmed by the arm
 * that ran first, page faults paid by it) lands whole in the ratio; and a
 * minimum, the single luckiest draw of each arm, keeps a systematic offset
 * intact where it rejects only spikes. There, one gate passed on a quiet
 * node (suite 5.1 s) and failed at 1.62x against a 1.5x bar on a loaded one
 * (219.1 s) with the same code; another named a different loser on two runs
 * of one tree. This machine (two cores shared by several builds) is the
 * loaded case every day.
 *
 * So:
 *  - each repetition times A and B back to back, and drift slower than one
 *    repetition divides out of that repetition's ratio;
 *  - the order within a repetition is a coin flip (SplitMix64, so a run is
 *    reproducible from its seed), so a first-or-second advantage cancels in
 *    expectation instead of accruing to one arm — and first_position_bias()
 *    reports what is left, a measured field rather than an argument (there it
 *    apportioned a 6% result as 0.0001 ordering and 0.061 code, which a fixed
 *    order could never separate);
 *  - the claim is read from the distribution of the PAIRED ratios: their
 *    median (robust to a descheduled repetition, which is an outlier in one
 *    direction only) as the estimate, their spread as the harness's own
 *    resolution, and a sign-test interval for the median that holds whatever
 *    that distribution is;
 *  - each call's input is derived from the previous call's result through an
 *    empty asm the compiler must assume reads and rewrites the value, so it
 *    can neither hoist an arm out of the loop nor merge calls. The arms are
 *    called through function pointers from a separate translation unit of a
 *    static library built without LTO, so they are not inlined either.
 *
 * Wins are evidence, not a bar. wins_fraction() = 1.00 over 15 repetitions
 * is a sign test at 2^-15 that needs no model of the noise, so a report
 * leads with it; but as a bar it degrades with the host's noise rather than
 * with the code (one 1.6% effect read wins 0.67 / 0.87 / 1.00 on three runs
 * of identical code while the median ratio stayed inside a 0.8% band), so
 * gates assert on median_ratio() alone and print wins and resolution beside
 * it. Nor is a margin derived from the resolution an added tolerance: the
 * resolution of a real measurement can say that no margin is warranted, and
 * whether a cell that sits inside its resolution keeps a strict bar is a
 * contract decision taken with a reason (lk-gates.c), never by widening a
 * bar in the commit that measured it.
 *
 * The arm must dwarf one call of the harness. That cost lands in both arms,
 * and an equal cost c turns a true b/a into (b + c)/(a + c), which moves
 * toward 1 and never crosses it — but the two arms need not cost the same to
 * call, and a few nanoseconds of asymmetry decides a margin of one or two: a
 * 43 ns arm there changed the sign of its verdict, and batched 64 rows per
 * call (overhead under 2%) it read 1.045 with wins 1.00 the other way. Hence
 * lk_batched() for small arms, and ns per call in every summary so the
 * overhead is checkable against the arm.
 *
 * Arms that cannot share machine state — one using every core, one serial —
 * are not rescued by normalising with a separately sampled "headroom": there
 * that gave false greens at one sample and red working code at the max of
 * five. Take the confound away in the runner instead: the meson 'speed'
 * suite runs alone (is_parallel: false).
 *
 * Clock. Interleaving cancels drift slower than a repetition; it cannot
 * cancel the scheduler. On a busy shared machine an identical-arms test,
 * timed on the wall clock with 1.2 ms arms, read median_ratio 0.31 and 3.41
 * in two runs: whole time slices of other processes landed in one arm of
 * most repetitions. Lengthening the arms until slices average out would
 * make every gate minutes long. So, following the seed's rule — take a
 * confound away rather than model it — the default clock is the process's
 * CPU time (CLOCK_PROCESS_CPUTIME_ID), which does not run while the process
 * waits for a core: on the same busy machine identical arms read within 1 %
 * of 1.0 on it. The CPU clock counts every thread of the process, so an arm
 * whose claim is wall time across threads (all cores against one) asks for
 * LK_CLOCK_WALL, CLOCK_MONOTONIC, and for a quiet machine (the 'speed' suite
 * runs alone). Both clocks are read in nanoseconds once at each end of an
 * arm's loop; g_get_monotonic_time's microseconds are too coarse.
 */
#include "config.h"

#include "lk-timing.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lk-cpu.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-timing-error-quark, lk_timing_error)
/* clang-format on */

#define SCHEMA_NAME    "likeness-paired-timing"
#define SCHEMA_VERSION 1

/* Scale of the checksum feedback: small enough that an arm's arithmetic stays
 * in its intended regime (1e-18 of a checksum of order 1e6 is below one ulp
 * of most inputs), large enough that the compiler cannot prove it zero. */
#define FEEDBACK_SCALE 1e-18

struct _LkSpeedGate
{
  char *token;
  GPtrArray *cells;  /* of LkTimingCell */
  GPtrArray *losses; /* of char *, one line per lost cell */
  gboolean finished;
  gboolean abandoned;
};

/* ---- statistics helpers ------------------------------------------------ */

static int
compare_doubles (gconstpointer pa, gconstpointer pb)
{
  double a = *(const double *) pa, b = *(const double *) pb;

  /* NaN sorts last, so it never hides inside the central ranks. */
  if (isnan (a) || isnan (b))
    return isnan (a) - isnan (b);
  return (a > b) - (a < b);
}

static double *
sorted_copy (const double *values, guint n)
{
  double *sorted = g_memdup2 (values, n * sizeof (double));
  qsort (sorted, n, sizeof (double), compare_doubles);
  return sorted;
}

static double
median_sorted (const double *sorted, guint n)
{
  if (n == 0)
    return NAN;
  if (n % 2 == 1)
    return sorted[n / 2];
  return 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

static double
median (const double *values, guint n)
{
  if (n == 0)
    return NAN;
  g_autofree double *sorted = sorted_copy (values, n);
  return median_sorted (sorted, n);
}

/* Linearly interpolated quantile of a sorted array. */
static double
quantile_sorted (const double *sorted, guint n, double q)
{
  if (n == 0)
    return NAN;
  if (n == 1)
    return sorted[0];
  double pos = CLAMP (q, 0.0, 1.0) * (n - 1);
  guint lo = (guint) floor (pos), hi = (guint) ceil (pos);
  double frac = pos - lo;
  return sorted[lo] * (1.0 - frac) + sorted[hi] * frac;
}

/* ---- the order coin ---------------------------------------------------- */

/* SplitMix64: a reproducible order sequence with no allocation or library
 * call between the two timed arms. */
static guint64
splitmix64_next (guint64 *state)
{
  *state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  guint64 z = *state;
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

gboolean
lk_timing_coin_a_first (guint64 *state)
{
  return (splitmix64_next (state) & 1) == 1;
}

/* ---- the timed loop ---------------------------------------------------- */

/* Returns `v` unchanged, but the compiler must assume the empty asm read and
 * rewrote it: nothing computed from it can be hoisted or folded. */
static inline double
opaque (double v)
{
#if defined(__x86_64__)
  __asm__ volatile("" : "+x"(v));
#elif defined(__aarch64__)
  __asm__ volatile("" : "+w"(v));
#else
  __asm__ volatile("" : "+m"(v));
#endif
  return v;
}

static inline guint64
now_ns (clockid_t id)
{
  struct timespec ts;
  clock_gettime (id, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

/* ns per call of one arm over `iterations` calls, each fed from the running
 * checksum; the checksum is returned through `checksum` to be checked. */
static double
time_arm (clockid_t clock, guint64 iterations, LkArmFunc arm, gpointer data, double *checksum)
{
  double sum = 0.0;
  guint64 started = now_ns (clock);
  for (guint64 k = 0; k < iterations; k++)
    sum += arm (opaque (sum * FEEDBACK_SCALE), data);
  guint64 elapsed = now_ns (clock) - started;
  *checksum = opaque (sum);
  return (double) elapsed / (double) iterations;
}

/* ---- LkPairedTiming ---------------------------------------------------- */

const char *
lk_clock_name (LkClock clock)
{
  switch (clock)
    {
      case LK_CLOCK_CPU:
        return "cpu";
      case LK_CLOCK_WALL:
        return "wall";
    }
  g_return_val_if_reached ("unknown");
}

LkPairedTiming *
lk_paired_timing_new (guint capacity, guint64 iterations, guint64 seed, LkClock clock)
{
  LkPairedTiming *timing = g_new0 (LkPairedTiming, 1);

  timing->capacity = capacity;
  timing->iterations = iterations;
  timing->seed = seed;
  timing->clock = clock;
  timing->a_ns = g_new0 (double, capacity);
  timing->b_ns = g_new0 (double, capacity);
  timing->ratios = g_new0 (double, capacity);
  timing->a_went_first = g_new0 (gboolean, capacity);
  return timing;
}

void
lk_paired_timing_append (LkPairedTiming *timing, double a_ns, double b_ns, gboolean a_went_first)
{
  g_return_if_fail (timing != NULL);
  g_return_if_fail (timing->reps < timing->capacity);

  guint i = timing->reps++;
  timing->a_ns[i] = a_ns;
  timing->b_ns[i] = b_ns;
  timing->ratios[i] = b_ns / a_ns;
  timing->a_went_first[i] = a_went_first;
}

LkPairedTiming *
lk_paired_timing_copy (const LkPairedTiming *timing)
{
  g_return_val_if_fail (timing != NULL, NULL);

  LkPairedTiming *copy
      = lk_paired_timing_new (timing->reps, timing->iterations, timing->seed, timing->clock);
  for (guint i = 0; i < timing->reps; i++)
    lk_paired_timing_append (copy, timing->a_ns[i], timing->b_ns[i], timing->a_went_first[i]);
  return copy;
}

void
lk_paired_timing_free (LkPairedTiming *timing)
{
  if (timing == NULL)
    return;
  g_free (timing->a_ns);
  g_free (timing->b_ns);
  g_free (timing->ratios);
  g_free (timing->a_went_first);
  g_free (timing);
}

double
lk_paired_timing_median_ratio (const LkPairedTiming *timing)
{
  return median (timing->ratios, timing->reps);
}

double
lk_paired_timing_median_a_ns (const LkPairedTiming *timing)
{
  return median (timing->a_ns, timing->reps);
}

double
lk_paired_timing_median_b_ns (const LkPairedTiming *timing)
{
  return median (timing->b_ns, timing->reps);
}

/* A median of 1.06 with wins 1.00 is a real effect; the same 1.06 with wins
 * 0.55 is a point estimate riding on a few draws. */
double
lk_paired_timing_wins_fraction (const LkPairedTiming *timing)
{
  if (timing->reps == 0)
    return NAN;
  guint wins = 0;
  for (guint i = 0; i < timing->reps; i++)
    wins += timing->a_ns[i] < timing->b_ns[i];
  return (double) wins / timing->reps;
}

/* A margin smaller than this is not measurable by this harness at this
 * repetition count; a gate prints it beside the margin. */
double
lk_paired_timing_ratio_resolution (const LkPairedTiming *timing)
{
  guint n = timing->reps;
  if (n < 2)
    return NAN;
  g_autofree double *sorted = sorted_copy (timing->ratios, n);
  double lo = quantile_sorted (sorted, n, 0.05);
  double hi = quantile_sorted (sorted, n, 0.95);
  double med = median_sorted (sorted, n);
  if (!isfinite (med) || med == 0.0)
    return NAN;
  return fabs ((hi - lo) / 2.0 / med);
}

/* A value near 0 says position does not matter on this host; a large one
 * says whichever arm goes first dominates, and no fixed order would have
 * been trustworthy. */
double
lk_paired_timing_first_position_bias (const LkPairedTiming *timing)
{
  guint n = timing->reps, n_a = 0, n_b = 0;
  g_autofree double *a_first = g_new (double, MAX (n, 1));
  g_autofree double *b_first = g_new (double, MAX (n, 1));

  for (guint i = 0; i < n; i++)
    {
      if (timing->a_went_first[i])
        a_first[n_a++] = timing->ratios[i];
      else
        b_first[n_b++] = timing->ratios[i];
    }
  if (n_a == 0 || n_b == 0)
    return NAN;
  return median (a_first, n_a) - median (b_first, n_b);
}

/* The interval [x(k), x(n+1-k)] of n sorted draws misses the median exactly
 * when at least n+1-k draws fall on one side of it; each draw falls below
 * the median with probability 1/2 whatever the distribution (continuous), so
 * the coverage is 1 - 2·P(Bin(n, 1/2) <= k-1). The largest k whose coverage
 * still reaches the level gives the narrowest such interval. For 15
 * repetitions: k = 4, [r(4), r(12)], coverage 1 - 2·576/32768 = 96.48%
 * (k = 5 would give 88.15%). Below 6 draws even [min, max] covers less than
 * 95% (n = 5: 93.75%). */
guint
lk_sign_test_rank (guint n, double min_confidence, double *confidence)
{
  double below = 0.0; /* P(Bin <= k - 1) */
  guint best = 0;
  double best_confidence = NAN;

  for (guint k = 1; k <= (n + 1) / 2; k++)
    {
      guint j = k - 1;
      below += exp (lgamma (n + 1.0) - lgamma (j + 1.0) - lgamma (n - j + 1.0) - n * G_LN2);
      double coverage = 1.0 - 2.0 * below;
      if (coverage < min_confidence)
        break;
      best = k;
      best_confidence = coverage;
    }
  if (confidence != NULL)
    *confidence = best_confidence;
  return best;
}

gboolean
lk_paired_timing_median_interval (const LkPairedTiming *timing, double *low, double *high,
                                  double *confidence)
{
  double achieved;
  guint n = timing->reps;
  guint k = lk_sign_test_rank (n, LK_MEDIAN_CI_LEVEL, &achieved);

  *low = *high = NAN;
  if (confidence != NULL)
    *confidence = achieved;
  if (k == 0)
    return FALSE;
  g_autofree double *sorted = sorted_copy (timing->ratios, n);
  *low = sorted[k - 1];
  *high = sorted[n - k];
  return TRUE;
}

static void
append_number (GString *line, const char *format, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (value))
    g_string_append (line, "nan");
  else
    g_string_append (line, g_ascii_formatd (buf, sizeof buf, format, value));
}

char *
lk_paired_timing_summary (const LkPairedTiming *timing, const char *a_label, const char *b_label)
{
  GString *line = g_string_new (NULL);
  double low, high, confidence;

  g_string_append_printf (line, "%s=", a_label);
  append_number (line, "%.2f", lk_paired_timing_median_a_ns (timing));
  g_string_append_printf (line, " ns/iter %s=", b_label);
  append_number (line, "%.2f", lk_paired_timing_median_b_ns (timing));
  g_string_append (line, " ns/iter median_ratio=");
  append_number (line, "%.6f", lk_paired_timing_median_ratio (timing));
  g_string_append (line, " wins=");
  append_number (line, "%.2f", lk_paired_timing_wins_fraction (timing));
  g_string_append (line, " resolution=");
  append_number (line, "%.4f", lk_paired_timing_ratio_resolution (timing));
  if (lk_paired_timing_median_interval (timing, &low, &high, &confidence))
    {
      g_string_append (line, " ci=[");
      append_number (line, "%.4f", low);
      g_string_append (line, ",");
      append_number (line, "%.4f", high);
      g_string_append (line, "]@");
      append_number (line, "%.1f", 100.0 * confidence);
      g_string_append (line, "%");
    }
  else
    g_string_append (line, " ci=none");
  g_string_append (line, " position_bias=");
  append_number (line, "%.4f", lk_paired_timing_first_position_bias (timing));
  g_string_append_printf (line, " reps=%u clock=%s", timing->reps, lk_clock_name (timing->clock));
  return g_string_free (line, FALSE);
}

/* ---- the harness ------------------------------------------------------- */

LkPairedTiming *
lk_paired_interleaved (guint reps, guint64 iterations, guint64 seed, LkArmFunc arm_a,
                       gpointer a_data, LkArmFunc arm_b, gpointer b_data)
{
  return lk_paired_interleaved_full (reps, iterations, seed, LK_CLOCK_CPU, arm_a, a_data, arm_b,
                                     b_data, NULL, NULL, NULL, NULL);
}

LkPairedTiming *
lk_paired_interleaved_full (guint reps, guint64 iterations, guint64 seed, LkClock clock,
                            LkArmFunc arm_a, gpointer a_data, LkArmFunc arm_b, gpointer b_data,
                            LkRepFunc on_rep, gpointer on_rep_data, GCancellable *cancellable,
                            GError **error)
{
  g_return_val_if_fail (arm_a != NULL && arm_b != NULL, NULL);
  if (reps == 0)
    {
      g_critical ("lk_paired_interleaved needs at least one repetition (reps = 0)");
      return NULL;
    }
  if (iterations == 0)
    {
      g_critical ("lk_paired_interleaved needs at least one iteration per repetition "
                  "(iterations = 0)");
      return NULL;
    }

  g_autoptr (LkPairedTiming) timing = lk_paired_timing_new (reps, iterations, seed, clock);
  clockid_t id = clock == LK_CLOCK_WALL ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
  guint64 coin = seed;

  for (guint rep = 0; rep < reps; rep++)
    {
      double ta, tb, sum_a, sum_b;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      gboolean a_first = lk_timing_coin_a_first (&coin);
      if (a_first)
        {
          ta = time_arm (id, iterations, arm_a, a_data, &sum_a);
          tb = time_arm (id, iterations, arm_b, b_data, &sum_b);
        }
      else
        {
          tb = time_arm (id, iterations, arm_b, b_data, &sum_b);
          ta = time_arm (id, iterations, arm_a, a_data, &sum_a);
        }
      if (!isfinite (sum_a) || !isfinite (sum_b))
        {
          const char *which = isfinite (sum_a) ? "B" : "A";
          double sum = isfinite (sum_a) ? sum_b : sum_a;
          g_critical ("lk_paired_interleaved: arm %s accumulated a non-finite checksum (%g) in "
                      "repetition %u, so the loop it timed is not the computation being compared",
                      which, sum, rep);
          g_set_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_NON_FINITE,
                       "Arm %s returned a non-finite value in repetition %u; its timing is "
                       "meaningless",
                       which, rep);
          return NULL;
        }
      lk_paired_timing_append (timing, ta, tb, a_first);
      if (on_rep != NULL)
        on_rep (timing, rep, on_rep_data);
    }
  return g_steal_pointer (&timing);
}

static double
empty_arm (double nudge, gpointer data)
{
  return nudge;
}

double
lk_harness_call_ns (void)
{
  g_autoptr (LkPairedTiming) t
      = lk_paired_interleaved (9, 1000000, 1, empty_arm, NULL, empty_arm, NULL);
  double both[2] = { lk_paired_timing_median_a_ns (t), lk_paired_timing_median_b_ns (t) };
  return median (both, 2);
}

double
lk_batched (double nudge, gpointer batched)
{
  const LkBatched *b = batched;
  double fold = 0.0;

  if (b->rows == 0)
    {
      g_critical ("lk_batched: a batched arm needs at least one row (rows = 0)");
      return NAN;
    }
  /* Independent rows, as production's are: the processor may overlap them,
   * so a batch measures throughput. Chaining row r + 1 on row r's result
   * instead measures the latency of one input's path through the arm, and
   * there it turned a 1.56x win into a 0.99 loss. */
  for (guint r = 0; r < b->rows; r++)
    fold += b->arm (nudge + r * FEEDBACK_SCALE, b->data);
  return fold;
}

/* ---- speed gates ------------------------------------------------------- */

const char *
lk_contract_name (LkContract contract)
{
  switch (contract)
    {
      case LK_CONTRACT_FASTER:
        return "faster";
      case LK_CONTRACT_NOT_SLOWER:
        return "not_slower";
    }
  g_return_val_if_reached ("unknown");
}

LkTimingCell *
lk_timing_cell_copy (const LkTimingCell *cell)
{
  LkTimingCell *copy = g_new0 (LkTimingCell, 1);

  copy->gate = g_strdup (cell->gate);
  copy->cell = g_strdup (cell->cell);
  copy->a_label = g_strdup (cell->a_label);
  copy->b_label = g_strdup (cell->b_label);
  copy->contract = cell->contract;
  copy->pass = cell->pass;
  copy->verdict = g_strdup (cell->verdict);
  copy->timing = lk_paired_timing_copy (cell->timing);
  return copy;
}

void
lk_timing_cell_free (LkTimingCell *cell)
{
  if (cell == NULL)
    return;
  g_free (cell->gate);
  g_free (cell->cell);
  g_free (cell->a_label);
  g_free (cell->b_label);
  g_free (cell->verdict);
  lk_paired_timing_free (cell->timing);
  g_free (cell);
}

char *
lk_timing_cell_line (const LkTimingCell *cell)
{
  g_autofree char *summary = lk_paired_timing_summary (cell->timing, cell->a_label, cell->b_label);
  return g_strdup_printf ("%s %s %s verdict=%s", cell->gate, cell->cell, summary, cell->verdict);
}

LkSpeedGate *
lk_speed_gate_open (const char *token)
{
  LkSpeedGate *gate = g_new0 (LkSpeedGate, 1);

  gate->token = g_strdup (token);
  gate->cells = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_timing_cell_free);
  gate->losses = g_ptr_array_new_with_free_func (g_free);
  return gate;
}

static const LkTimingCell *
speed_gate_record (LkSpeedGate *gate, LkContract contract, const char *cell_name,
                   LkPairedTiming *timing, const char *a_label, const char *b_label)
{
  g_return_val_if_fail (timing != NULL, NULL);
  if (gate->finished || gate->abandoned)
    {
      g_critical ("%s: cell “%s” recorded after the gate was finished or abandoned", gate->token,
                  cell_name);
      lk_paired_timing_free (timing);
      return NULL;
    }

  LkTimingCell *cell = g_new0 (LkTimingCell, 1);
  cell->gate = g_strdup (gate->token);
  cell->cell = g_strdup (cell_name);
  cell->a_label = g_strdup (a_label);
  cell->b_label = g_strdup (b_label);
  cell->contract = contract;
  cell->timing = timing;

  double ratio = lk_paired_timing_median_ratio (timing);
  if (contract == LK_CONTRACT_FASTER)
    {
      cell->pass = ratio > 1.0;
      cell->verdict = g_strdup (cell->pass ? "pass" : "FAIL: A must be faster than B");
    }
  else
    {
      /* No chosen tolerance: the instrument's own noise floor is the only
       * denominator a parity bar can honestly be stated in. */
      cell->pass = ratio + lk_paired_timing_ratio_resolution (timing) >= 1.0;
      cell->verdict = g_strdup (cell->pass ? "pass"
                                           : "FAIL: A is slower than B beyond the "
                                             "measurement's resolution");
    }
  g_ptr_array_add (gate->cells, cell);
  if (!cell->pass)
    {
      g_autofree char *summary = lk_paired_timing_summary (timing, a_label, b_label);
      g_ptr_array_add (gate->losses,
                       g_strdup_printf ("%s: %s (%s)", cell_name, summary, cell->verdict));
    }
  return cell;
}

const LkTimingCell *
lk_speed_gate_faster (LkSpeedGate *gate, const char *cell, LkPairedTiming *timing,
                      const char *a_label, const char *b_label)
{
  return speed_gate_record (gate, LK_CONTRACT_FASTER, cell, timing, a_label, b_label);
}

const LkTimingCell *
lk_speed_gate_not_slower (LkSpeedGate *gate, const char *cell, LkPairedTiming *timing,
                          const char *a_label, const char *b_label)
{
  return speed_gate_record (gate, LK_CONTRACT_NOT_SLOWER, cell, timing, a_label, b_label);
}

gboolean
lk_speed_gate_finish (LkSpeedGate *gate, GError **error)
{
  gate->finished = TRUE;
  if (gate->cells->len == 0)
    {
      g_critical ("%s: a speed gate finished with no measured cell verifies nothing", gate->token);
      g_set_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_EMPTY_GATE,
                   "%s: the gate measured no cell, so it verified nothing", gate->token);
      return FALSE;
    }
  if (gate->losses->len > 0)
    {
      g_autoptr (GString) all = g_string_new (NULL);
      for (guint k = 0; k < gate->losses->len; k++)
        g_string_append_printf (all, "\n%s", (const char *) gate->losses->pdata[k]);
      g_set_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_GATE_LOST,
                   "%s: %u of %u cell(s) failed their speed contract:%s", gate->token,
                   gate->losses->len, gate->cells->len, all->str);
      return FALSE;
    }
  return TRUE;
}

void
lk_speed_gate_abandon (LkSpeedGate *gate)
{
  gate->abandoned = TRUE;
}

guint
lk_speed_gate_n_cells (const LkSpeedGate *gate)
{
  return gate->cells->len;
}

const LkTimingCell *
lk_speed_gate_cell (const LkSpeedGate *gate, guint index)
{
  g_return_val_if_fail (index < gate->cells->len, NULL);
  return gate->cells->pdata[index];
}

void
lk_speed_gate_free (LkSpeedGate *gate)
{
  if (gate == NULL)
    return;
  if (!gate->finished && !gate->abandoned)
    g_critical ("%s: a speed gate was opened and freed without lk_speed_gate_finish (); it "
                "asserted nothing",
                gate->token);
  g_free (gate->token);
  g_ptr_array_unref (gate->cells);
  g_ptr_array_unref (gate->losses);
  g_free (gate);
}

/* ---- JSON -------------------------------------------------------------- */

static void
add_double_or_null (JsonBuilder *b, const char *name, double value)
{
  json_builder_set_member_name (b, name);
  if (isfinite (value))
    json_builder_add_double_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
add_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
add_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static void
add_context (JsonBuilder *b)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);
  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  double load[3];
  int n_load = getloadavg (load, 3);

  json_builder_set_member_name (b, "context");
  json_builder_begin_object (b);
  add_string (b, "date", date);
  add_string (b, "host_name", g_get_host_name ());
  add_string (b, "executable", g_get_prgname () ? g_get_prgname () : "unknown");
  add_int (b, "num_cpus", lk_cpu_cores ());
  if (n_load == 3)
    {
      json_builder_set_member_name (b, "load_avg");
      json_builder_begin_array (b);
      for (int k = 0; k < 3; k++)
        json_builder_add_double_value (b, load[k]);
      json_builder_end_array (b);
    }
  add_string (b, "library_build_type", LK_BUILD_TYPE);
  add_string (b, "likeness_schema", SCHEMA_NAME);
  add_int (b, "likeness_schema_version", SCHEMA_VERSION);
  add_string (b, "likeness_cpu_model", lk_cpu_model_name ());
  add_string (b, "likeness_cpu_features", features);
  json_builder_end_object (b);
}

static void
add_row (JsonBuilder *b, const LkTimingCell *cell, guint rep, gboolean arm_a)
{
  const LkPairedTiming *t = cell->timing;
  double ns = arm_a ? t->a_ns[rep] : t->b_ns[rep];
  g_autofree char *name
      = g_strdup_printf ("%s/%s/%s", cell->gate, cell->cell, arm_a ? cell->a_label : cell->b_label);

  json_builder_begin_object (b);
  add_string (b, "name", name);
  add_string (b, "run_name", name);
  add_string (b, "run_type", "iteration");
  add_int (b, "repetitions", t->reps);
  add_int (b, "repetition_index", rep);
  add_int (b, "threads", 1);
  add_int (b, "iterations", (gint64) t->iterations);
  add_double_or_null (b, "real_time", ns);
  add_double_or_null (b, "cpu_time", ns);
  add_string (b, "time_unit", "ns");
  add_string (b, "likeness_clock", lk_clock_name (t->clock));
  add_string (b, "likeness_gate", cell->gate);
  add_string (b, "likeness_cell", cell->cell);
  add_string (b, "likeness_arm", arm_a ? "a" : "b");
  json_builder_set_member_name (b, "likeness_went_first");
  json_builder_add_boolean_value (b, arm_a == t->a_went_first[rep]);
  add_double_or_null (b, "likeness_ratio", t->ratios[rep]);
  json_builder_end_object (b);
}

static void
add_aggregate (JsonBuilder *b, const LkTimingCell *cell, gboolean arm_a)
{
  const LkPairedTiming *t = cell->timing;
  double ns = arm_a ? lk_paired_timing_median_a_ns (t) : lk_paired_timing_median_b_ns (t);
  g_autofree char *run_name
      = g_strdup_printf ("%s/%s/%s", cell->gate, cell->cell, arm_a ? cell->a_label : cell->b_label);
  g_autofree char *name = g_strdup_printf ("%s_median", run_name);

  json_builder_begin_object (b);
  add_string (b, "name", name);
  add_string (b, "run_name", run_name);
  add_string (b, "run_type", "aggregate");
  add_string (b, "aggregate_name", "median");
  add_int (b, "repetitions", t->reps);
  add_int (b, "threads", 1);
  add_int (b, "iterations", (gint64) t->iterations);
  add_double_or_null (b, "real_time", ns);
  add_double_or_null (b, "cpu_time", ns);
  add_string (b, "time_unit", "ns");
  add_string (b, "likeness_gate", cell->gate);
  add_string (b, "likeness_cell", cell->cell);
  add_string (b, "likeness_arm", arm_a ? "a" : "b");
  json_builder_end_object (b);
}

static void
add_cell_summary (JsonBuilder *b, const LkTimingCell *cell)
{
  const LkPairedTiming *t = cell->timing;
  g_autofree char *seed = g_strdup_printf ("%" G_GUINT64_FORMAT, t->seed);
  double low, high, confidence;
  lk_paired_timing_median_interval (t, &low, &high, &confidence);

  json_builder_begin_object (b);
  add_string (b, "gate", cell->gate);
  add_string (b, "cell", cell->cell);
  add_string (b, "a_label", cell->a_label);
  add_string (b, "b_label", cell->b_label);
  add_string (b, "contract", lk_contract_name (cell->contract));
  json_builder_set_member_name (b, "pass");
  json_builder_add_boolean_value (b, cell->pass);
  add_string (b, "verdict", cell->verdict);
  add_string (b, "clock", lk_clock_name (t->clock));
  add_int (b, "reps", t->reps);
  add_int (b, "iterations", (gint64) t->iterations);
  add_string (b, "seed", seed);
  add_double_or_null (b, "a_ns_median", lk_paired_timing_median_a_ns (t));
  add_double_or_null (b, "b_ns_median", lk_paired_timing_median_b_ns (t));
  add_double_or_null (b, "median_ratio", lk_paired_timing_median_ratio (t));
  add_double_or_null (b, "wins", lk_paired_timing_wins_fraction (t));
  add_double_or_null (b, "resolution", lk_paired_timing_ratio_resolution (t));
  add_double_or_null (b, "position_bias", lk_paired_timing_first_position_bias (t));
  add_double_or_null (b, "ci_low", low);
  add_double_or_null (b, "ci_high", high);
  add_double_or_null (b, "ci_confidence", confidence);
  json_builder_end_object (b);
}

gboolean
lk_timing_save_json (const char *path, LkTimingCell *const *cells, guint n_cells, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_context (b);
  json_builder_set_member_name (b, "benchmarks");
  json_builder_begin_array (b);
  for (guint c = 0; c < n_cells; c++)
    {
      const LkPairedTiming *t = cells[c]->timing;
      for (guint rep = 0; rep < t->reps; rep++)
        {
          add_row (b, cells[c], rep, t->a_went_first[rep]);
          add_row (b, cells[c], rep, !t->a_went_first[rep]);
        }
    }
  for (guint c = 0; c < n_cells; c++)
    {
      add_aggregate (b, cells[c], TRUE);
      add_aggregate (b, cells[c], FALSE);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "likeness_cells");
  json_builder_begin_array (b);
  for (guint c = 0; c < n_cells; c++)
    add_cell_summary (b, cells[c]);
  json_builder_end_array (b);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  g_autoptr (GString) contents = g_string_new (text);
  g_string_append_c (contents, '\n');
  return g_file_set_contents (path, contents->str, contents->len, error);
}

/* Reader helpers: each names the file, where in it, and the field. */

static gboolean G_GNUC_PRINTF (3, 4)
    json_fail (GError **error, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, LK_TIMING_ERROR, LK_TIMING_ERROR_JSON, "%s: %s", path, what);
  return FALSE;
}

static gboolean
get_string (JsonObject *o, const char *field, const char **out, const char *path, const char *where,
            GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return json_fail (error, path, "%s: field “%s” must be a string", where, field);
  *out = json_node_get_string (node);
  return TRUE;
}

static gboolean
get_number (JsonObject *o, const char *field, double *out, const char *path, const char *where,
            GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  GType type = node && JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : 0;
  if (type == G_TYPE_DOUBLE)
    *out = json_node_get_double (node);
  else if (type == G_TYPE_INT64)
    *out = (double) json_node_get_int (node);
  else
    return json_fail (error, path, "%s: field “%s” must be a number", where, field);
  return TRUE;
}

static gboolean
get_count (JsonObject *o, const char *field, guint64 max, guint64 *out, const char *path,
           const char *where, GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_INT64 || json_node_get_int (node) < 0
      || (guint64) json_node_get_int (node) > max)
    return json_fail (error, path, "%s: field “%s” must be an integer from 0 to %" G_GUINT64_FORMAT,
                      where, field, max);
  *out = (guint64) json_node_get_int (node);
  return TRUE;
}

static gboolean
get_bool (JsonObject *o, const char *field, gboolean *out, const char *path, const char *where,
          GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return json_fail (error, path, "%s: field “%s” must be true or false", where, field);
  *out = json_node_get_boolean (node);
  return TRUE;
}

static JsonArray *
get_array (JsonObject *o, const char *field, const char *path, GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    {
      json_fail (error, path, "field “%s” must be an array", field);
      return NULL;
    }
  return json_node_get_array (node);
}

/* What the reader collects for one cell before the timing is rebuilt. */
typedef struct
{
  LkTimingCell *cell;
  guint reps;
  double *ns[2]; /* per arm, per repetition; NaN until seen */
  gboolean *a_first;
} PendingCell;

static void
pending_cell_clear (PendingCell *p)
{
  lk_timing_cell_free (p->cell);
  g_free (p->ns[0]);
  g_free (p->ns[1]);
  g_free (p->a_first);
}

static gboolean
read_cell_summary (JsonArray *summaries, guint k, const char *path, PendingCell *p, GError **error)
{
  JsonNode *node = json_array_get_element (summaries, k);
  g_autofree char *where = g_strdup_printf ("likeness_cells[%u]", k);
  const char *gate = NULL, *cell = NULL, *a_label = NULL, *b_label = NULL, *contract = NULL;
  const char *verdict = NULL, *seed_text = NULL, *clock = NULL;
  gboolean pass = FALSE;
  guint64 reps = 0, iterations = 0, seed = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return json_fail (error, path, "%s must be an object", where);
  JsonObject *o = json_node_get_object (node);
  if (!get_string (o, "gate", &gate, path, where, error)
      || !get_string (o, "cell", &cell, path, where, error)
      || !get_string (o, "a_label", &a_label, path, where, error)
      || !get_string (o, "b_label", &b_label, path, where, error)
      || !get_string (o, "contract", &contract, path, where, error)
      || !get_bool (o, "pass", &pass, path, where, error)
      || !get_string (o, "verdict", &verdict, path, where, error)
      || !get_string (o, "clock", &clock, path, where, error)
      || !get_count (o, "reps", G_MAXUINT, &reps, path, where, error)
      || !get_count (o, "iterations", G_MAXINT64, &iterations, path, where, error)
      || !get_string (o, "seed", &seed_text, path, where, error))
    return FALSE;
  if (!g_ascii_string_to_unsigned (seed_text, 10, 0, G_MAXUINT64, &seed, NULL))
    return json_fail (error, path,
                      "%s: field “seed” must be a decimal 64-bit unsigned integer, "
                      "not “%s”",
                      where, seed_text);
  LkContract c;
  if (g_str_equal (contract, lk_contract_name (LK_CONTRACT_FASTER)))
    c = LK_CONTRACT_FASTER;
  else if (g_str_equal (contract, lk_contract_name (LK_CONTRACT_NOT_SLOWER)))
    c = LK_CONTRACT_NOT_SLOWER;
  else
    return json_fail (error, path,
                      "%s: field “contract” must be “faster” or “not_slower”, not "
                      "“%s”",
                      where, contract);
  LkClock clk;
  if (g_str_equal (clock, lk_clock_name (LK_CLOCK_CPU)))
    clk = LK_CLOCK_CPU;
  else if (g_str_equal (clock, lk_clock_name (LK_CLOCK_WALL)))
    clk = LK_CLOCK_WALL;
  else
    return json_fail (error, path, "%s: field “clock” must be “cpu” or “wall”, not “%s”", where,
                      clock);

  p->cell = g_new0 (LkTimingCell, 1);
  p->cell->gate = g_strdup (gate);
  p->cell->cell = g_strdup (cell);
  p->cell->a_label = g_strdup (a_label);
  p->cell->b_label = g_strdup (b_label);
  p->cell->contract = c;
  p->cell->pass = pass;
  p->cell->verdict = g_strdup (verdict);
  p->cell->timing = lk_paired_timing_new ((guint) reps, iterations, seed, clk);
  p->reps = (guint) reps;
  for (int arm = 0; arm < 2; arm++)
    {
      p->ns[arm] = g_new (double, MAX (reps, 1));
      for (guint i = 0; i < reps; i++)
        p->ns[arm][i] = NAN;
    }
  p->a_first = g_new0 (gboolean, MAX (reps, 1));
  return TRUE;
}

static gboolean
read_row (JsonArray *rows, guint k, const char *path, GArray *pending, GError **error)
{
  JsonNode *node = json_array_get_element (rows, k);
  g_autofree char *where = g_strdup_printf ("benchmarks[%u]", k);
  const char *run_type = NULL, *gate = NULL, *cell = NULL, *arm = NULL;
  guint64 rep = 0, iterations = 0;
  double ns = 0.0;
  gboolean went_first = FALSE;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return json_fail (error, path, "%s must be an object", where);
  JsonObject *o = json_node_get_object (node);
  if (!get_string (o, "run_type", &run_type, path, where, error))
    return FALSE;
  if (!g_str_equal (run_type, "iteration"))
    return TRUE; /* aggregates are recomputed from the iteration rows */
  if (!get_string (o, "likeness_gate", &gate, path, where, error)
      || !get_string (o, "likeness_cell", &cell, path, where, error)
      || !get_string (o, "likeness_arm", &arm, path, where, error)
      || !get_count (o, "repetition_index", G_MAXUINT, &rep, path, where, error)
      || !get_count (o, "iterations", G_MAXINT64, &iterations, path, where, error)
      || !get_number (o, "real_time", &ns, path, where, error)
      || !get_bool (o, "likeness_went_first", &went_first, path, where, error))
    return FALSE;
  int a = g_str_equal (arm, "a") ? 0 : g_str_equal (arm, "b") ? 1 : -1;
  if (a < 0)
    return json_fail (error, path, "%s: field “likeness_arm” must be “a” or “b”, not “%s”", where,
                      arm);
  if (!isfinite (ns) || ns < 0)
    return json_fail (error, path, "%s: field “real_time” must be a finite time in ns, not %g",
                      where, ns);

  for (guint c = 0; c < pending->len; c++)
    {
      PendingCell *p = &g_array_index (pending, PendingCell, c);
      if (!g_str_equal (p->cell->gate, gate) || !g_str_equal (p->cell->cell, cell))
        continue;
      if (rep >= p->reps)
        return json_fail (error, path,
                          "%s: repetition_index %" G_GUINT64_FORMAT " but cell "
                          "%s/%s has %u repetitions",
                          where, rep, gate, cell, p->reps);
      if (iterations != p->cell->timing->iterations)
        return json_fail (error, path,
                          "%s: iterations %" G_GUINT64_FORMAT " but cell %s/%s "
                          "ran %" G_GUINT64_FORMAT,
                          where, iterations, gate, cell, p->cell->timing->iterations);
      if (!isnan (p->ns[a][rep]))
        return json_fail (
            error, path, "%s: a second row for arm %s of repetition %" G_GUINT64_FORMAT " of %s/%s",
            where, arm, rep, gate, cell);
      p->ns[a][rep] = ns;
      if (a == 0)
        p->a_first[rep] = went_first;
      return TRUE;
    }
  return json_fail (error, path, "%s: cell %s/%s is not listed in likeness_cells", where, gate,
                    cell);
}

GPtrArray *
lk_timing_load_json (const char *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;

  if (!json_parser_load_from_file (parser, path, &local))
    {
      json_fail (error, path, "not a JSON file: %s", local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      json_fail (error, path, "the top level must be an object");
      return NULL;
    }
  JsonObject *top = json_node_get_object (root);
  JsonNode *context = json_object_get_member (top, "context");
  const char *schema = NULL;
  guint64 version = 0;
  if (context == NULL || !JSON_NODE_HOLDS_OBJECT (context))
    {
      json_fail (error, path, "field “context” must be an object");
      return NULL;
    }
  if (!get_string (json_node_get_object (context), "likeness_schema", &schema, path, "context",
                   error)
      || !get_count (json_node_get_object (context), "likeness_schema_version", G_MAXINT, &version,
                     path, "context", error))
    return NULL;
  if (!g_str_equal (schema, SCHEMA_NAME) || version != SCHEMA_VERSION)
    {
      json_fail (error, path,
                 "this is “%s” version %" G_GUINT64_FORMAT "; Likeness reads “%s” "
                 "version %d",
                 schema, version, SCHEMA_NAME, SCHEMA_VERSION);
      return NULL;
    }

  JsonArray *summaries = get_array (top, "likeness_cells", path, error);
  JsonArray *rows = summaries ? get_array (top, "benchmarks", path, error) : NULL;
  if (rows == NULL)
    return NULL;

  g_autoptr (GArray) pending = g_array_new (FALSE, TRUE, sizeof (PendingCell));
  g_array_set_clear_func (pending, (GDestroyNotify) pending_cell_clear);
  for (guint k = 0; k < json_array_get_length (summaries); k++)
    {
      PendingCell p = { 0 };
      gboolean ok = read_cell_summary (summaries, k, path, &p, error);
      g_array_append_val (pending, p);
      if (!ok)
        return NULL;
    }
  for (guint k = 0; k < json_array_get_length (rows); k++)
    if (!read_row (rows, k, path, pending, error))
      return NULL;

  GPtrArray *cells = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_timing_cell_free);
  for (guint c = 0; c < pending->len; c++)
    {
      PendingCell *p = &g_array_index (pending, PendingCell, c);
      for (guint rep = 0; rep < p->reps; rep++)
        {
          if (isnan (p->ns[0][rep]) || isnan (p->ns[1][rep]))
            {
              json_fail (error, path, "cell %s/%s: repetition %u lacks the row of arm %s",
                         p->cell->gate, p->cell->cell, rep, isnan (p->ns[0][rep]) ? "a" : "b");
              g_ptr_array_unref (cells);
              return NULL;
            }
          lk_paired_timing_append (p->cell->timing, p->ns[0][rep], p->ns[1][rep], p->a_first[rep]);
        }
      g_ptr_array_add (cells, g_steal_pointer (&p->cell));
    }
  return cells;
}
