/* lk-empty-page.h — the window with no library: open one, the sample, or a recent one */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_EMPTY_PAGE (lk_empty_page_get_type ())
G_DECLARE_FINAL_TYPE (LkEmptyPage, lk_empty_page, LK, EMPTY_PAGE, GtkWidget)

/* The recent libraries (a GListModel of GtkStringObject, folder paths, the
 * last opened first); NULL for none. Rows follow the model's changes;
 * activating one activates win.open-recent with its folder. */
void lk_empty_page_set_recent (LkEmptyPage *self, GListModel *recent);

G_END_DECLS
