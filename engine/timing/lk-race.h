/* lk-race.h — race two commands, as whole processes, with the paired harness
 *
 * The harness of lk-timing.h times two functions compiled into Likeness; a
 * race times two programs: each repetition runs command A and command B back
 * to back, in the order the same seeded coin draws (lk_timing_coin_a_first),
 * each as a process of its own (posix_spawn, no shell unless the argv is one),
 * and records its wall time and its user + system CPU time (wait4's rusage:
 * the child and every descendant it waited for). The statistics and the
 * verdict are lk-timing's: the paired ratios B/A of the chosen clock, so a
 * ratio ABOVE 1 MEANS A IS FASTER, exactly as in a speed gate.
 */
#pragma once

#include <gio/gio.h>

#include "lk-timing.h"

G_BEGIN_DECLS

#define LK_RACE_ERROR (lk_race_error_quark ())
GQuark lk_race_error_quark (void);

typedef enum
{
  LK_RACE_ERROR_SPAWN,          /* a command could not be started */
  LK_RACE_ERROR_FAILED,         /* a command exited non-zero, died of a signal or timed out */
  LK_RACE_ERROR_OUTPUT_DIFFERS, /* --same-output: the arms printed different things */
  LK_RACE_ERROR_IO,             /* the race's own temporary files */
} LkRaceError;

typedef struct
{
  char **argv_a; /* NULL-terminated, run as given (PATH searched) */
  char **argv_b;
  char *prepare; /* a shell command run (sh -c) before every run of an arm, untimed; or NULL */
  guint reps;
  guint warmup;         /* untimed runs of each arm before the first repetition */
  guint64 seed;         /* of the order coin */
  LkClock clock;        /* the clock the ratios, and so the verdict, are read on */
  double timeout;       /* seconds one run may take before it is killed and fails; 0: none */
  gboolean same_output; /* compare the arms' stdout in every repetition */
} LkRaceOptions;

/* Everything measured, per repetition, for both arms. */
typedef struct
{
  guint reps; /* repetitions completed */
  guint64 seed;
  LkClock clock;
  char **argv[2];       /* arm A's and B's argv */
  char *command[2];     /* the same, quoted for a shell, for display */
  LkPairedTiming *wall; /* wall ns per run, paired */
  LkPairedTiming *cpu;  /* user + system ns per run, paired (same order) */
  double *user_s[2];    /* per arm, per repetition: user CPU seconds */
  double *system_s[2];  /* and system CPU seconds */
  int *exit_codes[2];   /* always 0 in a completed race: a failure stops it */
} LkRace;

/* The timing the race is judged on (race->clock's). */
const LkPairedTiming *lk_race_timing (const LkRace *race);
void lk_race_free (LkRace *race);

/* Called after each repetition, on the racing thread. */
typedef void (*LkRaceRepFunc) (const LkRace *race, guint rep, gpointer user_data);

/* Runs the race. A run that cannot start, exits non-zero, dies of a signal
 * or outlives options->timeout stops the race with LK_RACE_ERROR_FAILED (or
 * _SPAWN) naming the arm, the repetition (or warmup run, or the --prepare
 * command) and the last lines the command wrote to stderr; with
 * same_output, arms that printed different stdout stop it with
 * LK_RACE_ERROR_OUTPUT_DIFFERS naming the repetition and the first line that
 * differs. Cancelling `cancellable` kills the running command (its whole
 * process group) at once, reaps it and returns NULL with
 * G_IO_ERROR_CANCELLED. Each command's stdin is /dev/null; its stdout goes
 * to /dev/null unless compared, its stderr to a temporary file. */
LkRace *lk_race_run (const LkRaceOptions *options, LkRaceRepFunc on_rep, gpointer user_data,
                     GCancellable *cancellable, GError **error);

/* Judges a finished race as a speed gate's one cell ("race", "A-vs-B", arms
 * "A" and "B") under `contract`, by lk-timing's own rules: the verdict
 * `likeness-cli gates` would give. */
LkTimingCell *lk_race_judge (const LkRace *race, LkContract contract);
/* The line `likeness-cli race` prints: "race A-vs-B <lk_paired_timing_summary>
 * verdict=…", verdict=none when `verdict` is NULL (no contract). */
char *lk_race_line (const LkRace *race, const LkTimingCell *verdict);

/* Forwards `signo` to the process group of the command running now, if any.
 * Async-signal-safe: for a front end's SIGINT/SIGTERM handler, since each
 * command runs in a process group of its own (so a timeout or a Stop can kill
 * all of it) and the terminal's Ctrl-C therefore does not reach it. */
void lk_race_signal_running (int signo);

/* The command line of an argv, each word quoted for a POSIX shell only when
 * it needs to be. */
char *lk_race_quote_argv (char *const *argv);

/* ---- JSON ---------------------------------------------------------------
 *
 * In hyperfine's --export-json shape, so its scripts read it:
 *
 * { "results": [ one per arm, A then B:
 *     { "command": the quoted command line,
 *       "mean", "stddev", "median", "min", "max": of "times", in seconds,
 *       "user", "system": mean user / system CPU seconds,
 *       "times": wall seconds per repetition, in repetition order,
 *       "exit_codes": per repetition,
 *       "likeness_arm": "a" | "b", "likeness_argv": [ words ],
 *       "likeness_cpu_times": user + system seconds per repetition } ],
 *   "likeness_race": {
 *     "schema": "likeness-race", "schema_version": 1,
 *     "seed": decimal string, "clock": "wall" | "cpu", "reps",
 *     "contract": "faster" | "not_slower" | null, "pass": bool | null,
 *     "verdict": string | null,
 *     "a_went_first": [ bool per repetition ],
 *     "ratios": [ B/A on the race's clock, per repetition ],
 *     "median_ratio", "wins", "resolution", "position_bias",
 *     "ci_low", "ci_high", "ci_confidence" (null when not defined),
 *     "summary": lk_paired_timing_summary's line,
 *     "cpu_model", "cores", "load_avg": [1, 5, 15 min] } }
 *
 * hyperfine's sample is the wall clock whatever --clock says ("times" is wall
 * time to every hyperfine script); the CPU sample is beside it. */
gboolean lk_race_save_json (const LkRace *race, const LkTimingCell *verdict, const char *path,
                            GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkRace, lk_race_free)

G_END_DECLS
