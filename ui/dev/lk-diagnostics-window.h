/* lk-diagnostics-window.h — race the kernels live: this machine, the speed gates, their charts */
#pragma once

#include <gtk/gtk.h>

#include "lk-race-page.h"
#include "lk-ratio-chart.h"

G_BEGIN_DECLS

#define LK_DIAGNOSTICS_ERROR (lk_diagnostics_error_quark ())
GQuark lk_diagnostics_error_quark (void);

typedef enum
{
  LK_DIAGNOSTICS_ERROR_BUSY,     /* gates already run, the peak is being measured, or a scan runs */
  LK_DIAGNOSTICS_ERROR_NO_CELL,  /* no gate or cell of that name */
  LK_DIAGNOSTICS_ERROR_BAD_SEED, /* the seed field is not a 64-bit number */
  LK_DIAGNOSTICS_ERROR_NO_RESULT, /* nothing measured yet to export */
} LkDiagnosticsError;

#define LK_TYPE_DIAGNOSTICS_WINDOW (lk_diagnostics_window_get_type ())
G_DECLARE_FINAL_TYPE (LkDiagnosticsWindow, lk_diagnostics_window, LK, DIAGNOSTICS_WINDOW,
                      GtkApplicationWindow)

/* `application` may be NULL (the tests). */
LkDiagnosticsWindow *lk_diagnostics_window_new (GtkApplication *application);

/* Starts measuring on a worker thread: every cell of every gate (gate NULL),
 * of one gate (cell NULL), or one cell, with the repetitions, iterations and
 * seed the page shows. FALSE with LK_DIAGNOSTICS_ERROR when it cannot start. */
gboolean lk_diagnostics_window_run (LkDiagnosticsWindow *self, const char *gate, const char *cell,
                                    GError **error);
/* Stops the run before its next repetition. */
void lk_diagnostics_window_stop (LkDiagnosticsWindow *self);
/* TRUE while gates run or this machine's FMA peak is being measured. */
gboolean lk_diagnostics_window_is_busy (LkDiagnosticsWindow *self);
/* For the tests: called on a worker (the FMA peak's, a run's) with its task
 * as the worker returns; see lk_session_worker_hook. */
extern void (*lk_diagnostics_window_worker_hook) (GTask *task);

void lk_diagnostics_window_set_reps (LkDiagnosticsWindow *self, guint reps);
/* 0: each cell's own. */
void lk_diagnostics_window_set_iterations (LkDiagnosticsWindow *self, guint64 iterations);
void lk_diagnostics_window_set_seed (LkDiagnosticsWindow *self, guint64 seed);

LkRatioChart *lk_diagnostics_window_get_chart (LkDiagnosticsWindow *self);
/* Brings the "Race Commands" page to the front and returns it. */
LkRacePage *lk_diagnostics_window_show_race_page (LkDiagnosticsWindow *self);
/* What the page says about the run, the shown cell's verdict badge ("" when
 * none) and its copyable summary line ("" when none). */
const char *lk_diagnostics_window_get_status (LkDiagnosticsWindow *self);
const char *lk_diagnostics_window_get_verdict (LkDiagnosticsWindow *self);
const char *lk_diagnostics_window_get_summary (LkDiagnosticsWindow *self);

/* The last run's cells in the schema of `likeness-cli gates --json`, and the
 * chart on screen as a PNG. */
gboolean lk_diagnostics_window_export_json (LkDiagnosticsWindow *self, const char *path,
                                            GError **error);
/* What a click on a cell's row does: shows its last finished chart and
 * verdict, during a run too; FALSE when it has none. */
gboolean lk_diagnostics_window_show_cell (LkDiagnosticsWindow *self, const char *gate,
                                          const char *cell);
/* Judges `timing` (copied) as a run of that cell would and shows it as the
 * cell's result: the tests' way to a result of a known shape. FALSE when no
 * such cell. */
gboolean lk_diagnostics_window_show_timing (LkDiagnosticsWindow *self, const char *gate,
                                            const char *cell, const LkPairedTiming *timing);
/* A cell's ▶ button in the catalogue, or NULL. */
GtkWidget *lk_diagnostics_window_get_run_button (LkDiagnosticsWindow *self, const char *gate,
                                                 const char *cell);
/* The shown cell's contract line, its verdict's detail line and its
 * position bias line ("" when no result is shown). */
const char *lk_diagnostics_window_get_cell_subtitle (LkDiagnosticsWindow *self);
const char *lk_diagnostics_window_get_verdict_detail (LkDiagnosticsWindow *self);
const char *lk_diagnostics_window_get_bias_text (LkDiagnosticsWindow *self);
/* Why a cell is skipped, as its row in the catalogue shows it, or NULL. */
const char *lk_diagnostics_window_get_reason (LkDiagnosticsWindow *self, const char *gate,
                                              const char *cell);
/* The caption the exported PNG carries above the chart: gate / cell, its
 * verdict, the date. */
char *lk_diagnostics_window_dup_png_caption (LkDiagnosticsWindow *self);
gboolean lk_diagnostics_window_export_png (LkDiagnosticsWindow *self, const char *path,
                                           GError **error);

G_END_DECLS
