/* lk-recent-row.h — one library in the empty page's Recent Libraries */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_RECENT_ROW (lk_recent_row_get_type ())
G_DECLARE_FINAL_TYPE (LkRecentRow, lk_recent_row, LK, RECENT_ROW, GtkListBoxRow)

/* A row for the library in `folder` (a path in the file system's encoding). */
GtkWidget *lk_recent_row_new (const char *folder);
const char *lk_recent_row_get_folder (LkRecentRow *self);

G_END_DECLS
