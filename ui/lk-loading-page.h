/* lk-loading-page.h — a library being read and scanned, with its progress */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_LOADING_PAGE (lk_loading_page_get_type ())
G_DECLARE_FINAL_TYPE (LkLoadingPage, lk_loading_page, LK, LOADING_PAGE, GtkWidget)

/* Starts over for the library called `name`: “Opening “name””, reading. */
void lk_loading_page_start (LkLoadingPage *self, const char *name);
/* `fraction` 0..1, or negative when unknown (the bar pulses); `phase` what
 * runs; `detail` the rate and time left, or NULL while there is none. */
void lk_loading_page_set_progress (LkLoadingPage *self, double fraction, const char *phase,
                                   const char *detail);

G_END_DECLS
