/* lk-help.h — the user's help (the pages in help/C), opened in the help viewer */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

char *lk_help_uri (const char *page);
void lk_help_show (GtkWindow *parent, const char *page);

G_END_DECLS
