/* lk-gates.h — the catalogue of speed gates: real races between Likeness's
 * own implementations
 *
 * Data that `likeness-cli gates`, the meson 'speed' suite and the
 * diagnostics page all enumerate. A gate is a named set of cells; a cell is
 * one paired race (arm A against arm B) with a contract: A `faster` than B,
 * or A `not_slower` than B beyond the measurement's own resolution. Running a
 * cell first proves both arms compute the same answer (parity), then times
 * them with lk_paired_interleaved.
 */
#pragma once

#include <gio/gio.h>

#include "timing/lk-timing.h"
#include "lk-tune.h"

G_BEGIN_DECLS

#define LK_GATES_ERROR (lk_gates_error_quark ())
GQuark lk_gates_error_quark (void);

typedef enum
{
  LK_GATES_ERROR_PARITY,      /* the two arms computed different answers */
  LK_GATES_ERROR_UNAVAILABLE, /* this machine cannot run the cell (no such kernel, one core) */
  LK_GATES_ERROR_FAILED,      /* an arm failed outright */
} LkGatesError;

/* Repetitions when a caller asks for 0: with 15 the sign-test interval of
 * the median is [r(4), r(12)] at 96.5%, and wins = 1.00 is a sign test at
 * 2^-15; more buys little but time. */
#define LK_GATES_DEFAULT_REPS 15

typedef struct
{
  const char *name;    /* unique within its gate */
  const char *a_label; /* the implementation making the claim */
  const char *b_label; /* its opponent */
  LkContract contract;
  guint64 iterations; /* arm calls per repetition unless the caller overrides */
  const char *reason; /* why this contract */
  gconstpointer impl; /* private to lk-gates.c */
} LkGateCell;

typedef struct
{
  const char *name;    /* e.g. "scan-tiling"; what --gate takes */
  const char *summary; /* one line: what races what, and on what */
  const LkGateCell *cells;
  guint n_cells;
} LkGate;

/* Every catalogued gate, in a fixed order. */
const LkGate *lk_gates (guint *n_gates);
/* The gate of that name, or NULL. */
const LkGate *lk_gates_find (const char *name);

/* NULL when the cell runs here; otherwise why not (a newly allocated
 * sentence: "this processor lacks avx512f", "this machine has one core"). */
char *lk_gate_cell_unavailable (const LkGateCell *cell);

typedef struct
{
  guint reps;         /* 0: LK_GATES_DEFAULT_REPS */
  guint64 iterations; /* 0: the cell's own */
  guint64 seed;       /* of the order coin */
  LkRepFunc on_rep;   /* each repetition as it lands, on the measuring thread */
  gpointer on_rep_data;
  gsize faces; /* scan races: 0, the cell's own fixture; else this many faces
                * (tests shrink the 8,192-face races to run in a debug build) */
} LkGateRunOptions;

/* Builds the cell's fixture, checks parity, then times the two arms. NULL
 * with LK_GATES_ERROR_UNAVAILABLE, _PARITY, _FAILED, or G_IO_ERROR_CANCELLED
 * when `cancellable` is cancelled between repetitions. */
LkPairedTiming *lk_gate_cell_measure (const LkGateCell *cell, const LkGateRunOptions *options,
                                      GCancellable *cancellable, GError **error);

/* Called once per cell as it is judged (skipped cells: `skipped` is the
 * reason and `cell` NULL). */
typedef void (*LkGateCellFunc) (const LkGate *gate, const LkGateCell *info,
                                const LkTimingCell *cell, const char *skipped, gpointer user_data);

/* Runs every cell of `gate` that runs here through one LkSpeedGate and
 * finishes it: FALSE with LK_TIMING_ERROR_GATE_LOST naming every lost cell,
 * or with the error that stopped a cell. `cells`, if not NULL, receives a
 * copy of each judged cell (for the JSON export). A gate none of whose cells
 * runs here returns FALSE with LK_GATES_ERROR_UNAVAILABLE: it verified
 * nothing. */
gboolean lk_gate_run (const LkGate *gate, const LkGateRunOptions *options, LkGateCellFunc on_cell,
                      gpointer on_cell_data, GPtrArray *cells, GCancellable *cancellable,
                      GError **error);

/* lk_tune_measure() on the scan races' synthetic library of `n` faces (the
 * fixture every scan gate uses), remembered like a scan's: what
 * `likeness-cli cpu --tune` runs when no library is given. */
LkTuneChoice *lk_gates_tune (gsize n);

G_END_DECLS
