/* lk-window.h — one library's window: open, scan, review people */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"

G_BEGIN_DECLS

#define LK_TYPE_WINDOW (lk_window_get_type ())
G_DECLARE_FINAL_TYPE (LkWindow, lk_window, LK, WINDOW, GtkApplicationWindow)

LkWindow *lk_window_new (GtkApplication *application);
/* Starts loading and scanning `folder` in the background. */
void lk_window_open (LkWindow *self, GFile *folder);
/* Opens the bundled sample library; FALSE when it is not installed. */
gboolean lk_window_open_sample (LkWindow *self);

/* The visible page: "empty", "loading", "error", "people", "person",
 * "suggestions". */
const char *lk_window_get_page (LkWindow *self);
/* TRUE while a library loads or scans. */
gboolean lk_window_is_busy (LkWindow *self);
/* The library on screen, or NULL. */
LkSession *lk_window_get_session (LkWindow *self);
/* The people as the grid shows them (sorted, filtered; of LkPersonItem). */
GListModel *lk_window_get_visible_people (LkWindow *self);
/* Opens a person's page. */
void lk_window_show_person (LkWindow *self, LkPersonItem *item);
/* The error page's message and advice. */
const char *lk_window_get_error_message (LkWindow *self);
const char *lk_window_get_error_hint (LkWindow *self);
/* The text of the notification at the bottom, or NULL when none is shown. */
const char *lk_window_get_toast (LkWindow *self);
/* The text of the read-only banner under the header bar, or NULL when hidden. */
const char *lk_window_get_banner (LkWindow *self);
/* What choosing `folder` in Save Elsewhere's folder chooser does. */
void lk_window_save_elsewhere (LkWindow *self, GFile *folder);

G_END_DECLS
