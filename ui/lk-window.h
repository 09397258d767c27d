/* lk-window.h — one library's window: open, scan, review people */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"

G_BEGIN_DECLS

#define LK_TYPE_WINDOW (lk_window_get_type ())
G_DECLARE_FINAL_TYPE (LkWindow, lk_window, LK, WINDOW, GtkApplicationWindow)

/* Signals:
 * - "load-started": a library began loading, or the one on screen re-scanning
 *   (lk_window_get_session is still the one on screen, or NULL).
 * - "load-finished" (gboolean loaded): that load landed: its library is on
 *   screen (TRUE), or the error page says why not (FALSE). Not emitted for a
 *   load that was cancelled or superseded by another. */

LkWindow *lk_window_new (GtkApplication *application);
/* Starts loading and scanning `folder` in the background. */
void lk_window_open (LkWindow *self, GFile *folder);
/* Opens the bundled sample library; FALSE when it is not installed. */
gboolean lk_window_open_sample (LkWindow *self);

/* The library on screen, or NULL. */
LkSession *lk_window_get_session (LkWindow *self);

G_END_DECLS
