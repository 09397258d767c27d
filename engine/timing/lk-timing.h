/* lk-timing.h — "does A beat B": paired, interleaved timing and speed gates
 *
 * Every speed claim in Likeness is measured here, the same way: both
 * arms timed adjacent in time once per repetition, in an order drawn from a
 * reproducible coin, and the claim read off the distribution of the paired
 * per-repetition ratios. lk-timing.c says why; lk-gates.h lists the races.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LK_TIMING_ERROR (lk_timing_error_quark ())
GQuark lk_timing_error_quark (void);

typedef enum
{
  LK_TIMING_ERROR_NON_FINITE, /* an arm's checksum was NaN or infinite */
  LK_TIMING_ERROR_GATE_LOST,  /* a speed gate had a cell that missed its contract */
  LK_TIMING_ERROR_EMPTY_GATE, /* a speed gate finished having measured nothing */
  LK_TIMING_ERROR_JSON,       /* a timing file that does not follow the schema below */
} LkTimingError;

/* One timed arm. `nudge` is derived from the running checksum (it is tiny,
 * ~1e-18 of it) and the returned value is folded back into that checksum, so
 * consecutive calls carry a data dependence the optimiser cannot hoist or
 * merge across. The value must be finite. */
typedef double (*LkArmFunc) (double nudge, gpointer user_data);

/* What a timing reads. CPU: the process's CPU time (CLOCK_PROCESS_CPUTIME_ID),
 * which leaves out the time the process waited for a core — the default, for
 * arms that compute on one thread at a time. WALL: the monotonic clock, for
 * arms whose point is wall time, such as one using every core against one
 * using one (their CPU time would be the sum over threads). */
typedef enum
{
  LK_CLOCK_CPU,
  LK_CLOCK_WALL,
} LkClock;

const char *lk_clock_name (LkClock clock);

/* Paired per-repetition timings of two implementations of one computation.
 * a_ns[i] and b_ns[i] were measured adjacent in time within repetition i, in
 * the order a_went_first[i] says; ratios[i] = b_ns[i] / a_ns[i], so a value
 * ABOVE 1 MEANS A IS FASTER. */
typedef struct
{
  guint reps;             /* repetitions held */
  guint capacity;         /* repetitions the arrays have room for */
  guint64 iterations;     /* calls of each arm per repetition */
  guint64 seed;           /* seed of the order coin */
  LkClock clock;          /* the clock a_ns and b_ns were read on */
  double *a_ns;           /* ns per call of arm A, per repetition */
  double *b_ns;           /* ns per call of arm B, per repetition */
  double *ratios;         /* b_ns / a_ns, per repetition */
  gboolean *a_went_first; /* TRUE when A was timed first in that repetition */
} LkPairedTiming;

/* Called after each repetition with everything measured so far; `rep` is the
 * index of the repetition that just landed (timing->reps == rep + 1). Called
 * on the measuring thread: a UI must hand it over, not draw from here. */
typedef void (*LkRepFunc) (const LkPairedTiming *timing, guint rep, gpointer user_data);

/* An empty timing with room for `capacity` repetitions (the harness and the
 * JSON reader fill it with lk_paired_timing_append). */
LkPairedTiming *lk_paired_timing_new (guint capacity, guint64 iterations, guint64 seed,
                                      LkClock clock);
void lk_paired_timing_append (LkPairedTiming *timing, double a_ns, double b_ns,
                              gboolean a_went_first);
LkPairedTiming *lk_paired_timing_copy (const LkPairedTiming *timing);
void lk_paired_timing_free (LkPairedTiming *timing);

/* Median of the paired ratios: the headline estimate, and the only number a
 * gate asserts on. NaN with no repetition. */
double lk_paired_timing_median_ratio (const LkPairedTiming *timing);
/* Median ns per call of each arm (to check the arm dwarfs the harness). */
double lk_paired_timing_median_a_ns (const LkPairedTiming *timing);
double lk_paired_timing_median_b_ns (const LkPairedTiming *timing);
/* Fraction of repetitions in which A was faster. Evidence, never a bar. */
double lk_paired_timing_wins_fraction (const LkPairedTiming *timing);
/* Half the central 90% span of the ratios over their median: the harness's
 * own resolution at this repetition count. NaN with fewer than 2. */
double lk_paired_timing_ratio_resolution (const LkPairedTiming *timing);
/* Median ratio where A went first minus median where B went first; NaN
 * unless both orders occurred. */
double lk_paired_timing_first_position_bias (const LkPairedTiming *timing);

/* The widest-rank (narrowest) sign-test interval [r(k), r(n+1-k)] of the
 * sorted ratios whose coverage of the true median is at least
 * LK_MEDIAN_CI_LEVEL, whatever the distribution of the ratios. Returns FALSE
 * (bounds NaN) when n is too small for any such interval (n < 6). */
#define LK_MEDIAN_CI_LEVEL 0.95
gboolean lk_paired_timing_median_interval (const LkPairedTiming *timing, double *low, double *high,
                                           double *confidence);
/* The rank k of that interval for n observations, and its exact coverage
 * 1 - 2·P(Binomial(n, 1/2) < k); 0 when no k reaches min_confidence. */
guint lk_sign_test_rank (guint n, double min_confidence, double *confidence);

/* One line carrying the verdict's numbers and the ones that could overturn it:
 * "A=… ns/iter B=… ns/iter median_ratio=… wins=… resolution=… ci=[lo,hi]@96.5%
 *  position_bias=… reps=… clock=cpu|wall" (ci=none when reps < 6).
 * Locale-independent. */
char *lk_paired_timing_summary (const LkPairedTiming *timing, const char *a_label,
                                const char *b_label);

/* Times arm_a and arm_b `iterations` calls each, `reps` times, interleaved,
 * in an order drawn per repetition from a SplitMix64 coin seeded by `seed`,
 * on the CPU clock.
 * Both arms must compute the same quantity (establish that first with a
 * parity check): this measures speed only.
 *
 * Zero reps or iterations is a programming error (a critical, NULL). A
 * non-finite checksum means the timed body degenerated, so the timing is
 * meaningless: a critical, and NULL. */
LkPairedTiming *lk_paired_interleaved (guint reps, guint64 iterations, guint64 seed,
                                       LkArmFunc arm_a, gpointer a_data, LkArmFunc arm_b,
                                       gpointer b_data);
/* The same on `clock`, calling `on_rep` as each repetition lands and checking
 * `cancellable` before each repetition: cancelled, it returns NULL with
 * G_IO_ERROR_CANCELLED (the repetitions already reported stay reported). A
 * non-finite checksum also sets LK_TIMING_ERROR_NON_FINITE. */
LkPairedTiming *lk_paired_interleaved_full (guint reps, guint64 iterations, guint64 seed,
                                            LkClock clock, LkArmFunc arm_a, gpointer a_data,
                                            LkArmFunc arm_b, gpointer b_data, LkRepFunc on_rep,
                                            gpointer on_rep_data, GCancellable *cancellable,
                                            GError **error);

/* The order coin: advances `state` (start it at the seed) and says whether A
 * goes first in the next repetition. lk_paired_interleaved_full and
 * lk_race_run draw every order from it, so a seed names one order sequence. */
gboolean lk_timing_coin_a_first (guint64 *state);

/* The harness's own cost per arm call, measured on an empty arm (median of a
 * short paired run, ~0.1 s): the number every arm's ns/iter must dwarf. */
double lk_harness_call_ns (void);

/* Makes one arm call evaluate `rows` independent rows of a small arm, so the
 * harness's per-call cost is a negligible part of what is timed. Use as
 * lk_paired_interleaved (…, lk_batched, &(LkBatched){ small_arm, data, 64 }, …).
 * Row r is called with nudge + r·1e-18, so no two rows share an input. */
typedef struct
{
  LkArmFunc arm;
  gpointer data;
  guint rows;
} LkBatched;

double lk_batched (double nudge, gpointer batched);

/* ---- speed gates ------------------------------------------------------- */

typedef enum
{
  LK_CONTRACT_FASTER,     /* A strictly faster than B: loss when median_ratio <= 1 */
  LK_CONTRACT_NOT_SLOWER, /* A not slower beyond resolution: loss when median + resolution < 1 */
} LkContract;

const char *lk_contract_name (LkContract contract);

/* One measured, judged cell: what a gate recorded and what the JSON holds. */
typedef struct
{
  char *gate;
  char *cell;
  char *a_label;
  char *b_label;
  LkContract contract;
  gboolean pass;
  char *verdict; /* "pass", or the contract that was missed */
  LkPairedTiming *timing;
} LkTimingCell;

LkTimingCell *lk_timing_cell_copy (const LkTimingCell *cell);
void lk_timing_cell_free (LkTimingCell *cell);
/* "GATE cell <summary> verdict=…", the line a gate prints per cell. */
char *lk_timing_cell_line (const LkTimingCell *cell);

/* A named set of paired cells, each judged on median_ratio alone (wins and
 * resolution travel on the same line as evidence), all asserted together by
 * lk_speed_gate_finish. A gate finished with no cell, or freed without being
 * finished or abandoned, verified nothing: both are criticals. */
typedef struct _LkSpeedGate LkSpeedGate;

LkSpeedGate *lk_speed_gate_open (const char *token);
/* Judge and record a cell (the gate takes the timing). Returns the record. */
const LkTimingCell *lk_speed_gate_faster (LkSpeedGate *gate, const char *cell,
                                          LkPairedTiming *timing, const char *a_label,
                                          const char *b_label);
const LkTimingCell *lk_speed_gate_not_slower (LkSpeedGate *gate, const char *cell,
                                              LkPairedTiming *timing, const char *a_label,
                                              const char *b_label);
/* FALSE with LK_TIMING_ERROR_GATE_LOST naming every lost cell. */
gboolean lk_speed_gate_finish (LkSpeedGate *gate, GError **error);
/* Stops a gate that could not complete (cancelled, an arm failed): it is
 * neither a pass nor a loss, and may then be freed. */
void lk_speed_gate_abandon (LkSpeedGate *gate);
guint lk_speed_gate_n_cells (const LkSpeedGate *gate);
const LkTimingCell *lk_speed_gate_cell (const LkSpeedGate *gate, guint index);
void lk_speed_gate_free (LkSpeedGate *gate);

/* ---- JSON ---------------------------------------------------------------
 *
 * A run is written in Google Benchmark's JSON shape, so its comparison tools
 * read it, with fields of ours prefixed "likeness_" (they ignore them):
 *
 * {
 *   "context": {
 *     "date": ISO 8601 UTC, "host_name", "executable", "num_cpus",
 *     "load_avg": [1, 5, 15 min], "library_build_type": meson buildtype,
 *     "likeness_schema": "likeness-paired-timing", "likeness_schema_version": 1,
 *     "likeness_cpu_model", "likeness_cpu_features"
 *   },
 *   "benchmarks": [
 *     one "iteration" row per arm per repetition, in the order they ran:
 *     { "name": "GATE/cell/label", "run_name": same, "run_type": "iteration",
 *       "repetitions": n, "repetition_index": i, "threads": 1,
 *       "iterations": calls per repetition, "real_time": ns per call,
 *       "cpu_time": ns per call, "time_unit": "ns" — one run reads one
 *       clock, and both fields carry that reading: "likeness_clock" says
 *       which ("cpu" or "wall"),
 *       "likeness_gate", "likeness_cell", "likeness_arm": "a" | "b",
 *       "likeness_went_first": bool, "likeness_ratio": b_ns / a_ns },
 *     then per cell one "aggregate" row per arm,
 *     { "name": "GATE/cell/label_median", "run_type": "aggregate",
 *       "aggregate_name": "median", "real_time", "cpu_time", … as above }
 *   ],
 *   "likeness_cells": [
 *     { "gate", "cell", "a_label", "b_label", "contract": "faster" | "not_slower",
 *       "pass": bool, "verdict", "clock", "reps", "iterations", "seed" (decimal string:
 *       JSON numbers lose 64-bit integers), "a_ns_median", "b_ns_median",
 *       "median_ratio", "wins", "resolution", "position_bias" (null if NaN),
 *       "ci_low", "ci_high", "ci_confidence" (null when reps < 6) }
 *   ]
 * }
 *
 * The statistics in likeness_cells are for a script's convenience; the
 * reader rebuilds every timing from the iteration rows and ignores them.
 * Google Benchmark's compare.py (Debian libbenchmark-tools 1.7.1) reads
 * these files: `compare.py benchmarks old.json new.json` compares two runs,
 * `compare.py filters run.json GATE/cell/A GATE/cell/B` the two arms of one. */
gboolean lk_timing_save_json (const char *path, LkTimingCell *const *cells, guint n_cells,
                              GError **error);
/* Returns a GPtrArray of LkTimingCell in file order, or NULL with
 * LK_TIMING_ERROR_JSON naming the file, the row and the field. */
GPtrArray *lk_timing_load_json (const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkPairedTiming, lk_paired_timing_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkTimingCell, lk_timing_cell_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkSpeedGate, lk_speed_gate_free)

G_END_DECLS
