#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_WINDOW (lk_window_get_type ())
G_DECLARE_FINAL_TYPE (LkWindow, lk_window, LK, WINDOW, GtkApplicationWindow)

LkWindow *lk_window_new  (GtkApplication *application);
void      lk_window_open (LkWindow       *self,
                          GFile          *folder);

G_END_DECLS
