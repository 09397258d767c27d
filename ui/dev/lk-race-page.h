/* lk-race-page.h — race two commands live: the diagnostics window's "Race Commands" page */
#pragma once

#include <gtk/gtk.h>

#include "lk-ratio-chart.h"

G_BEGIN_DECLS

#define LK_TYPE_RACE_PAGE (lk_race_page_get_type ())
G_DECLARE_FINAL_TYPE (LkRacePage, lk_race_page, LK, RACE_PAGE, GtkBox)

GtkWidget *lk_race_page_new (void);

/* The two command lines (split as a shell would, run without one), the
 * repetitions and the seed the page shows. */
void lk_race_page_set_commands (LkRacePage *self, const char *command_a, const char *command_b);
void lk_race_page_set_reps (LkRacePage *self, guint reps);
void lk_race_page_set_seed (LkRacePage *self, guint64 seed);

/* Starts the race on a worker thread (lk_race_run); FALSE with an error
 * naming the field when a command line or the seed cannot be read, or a race
 * already runs. */
gboolean lk_race_page_run (LkRacePage *self, GError **error);
/* Kills the running command at once and ends the race (lk_race_run's
 * cancellation: the command is reaped before the worker returns). */
void lk_race_page_stop (LkRacePage *self);
gboolean lk_race_page_is_running (LkRacePage *self);
/* For the tests: called on the race's worker with its task as the worker
 * returns; see lk_session_worker_hook. */
extern void (*lk_race_page_worker_hook) (GTask *task);

LkRatioChart *lk_race_page_get_chart (LkRacePage *self);
/* What the page says about the race, its verdict ("" until a race has
 * finished) and the copyable summary line (the CLI's, "" until then). */
const char *lk_race_page_get_status (LkRacePage *self);
const char *lk_race_page_get_verdict (LkRacePage *self);
const char *lk_race_page_get_summary (LkRacePage *self);

G_END_DECLS
