/* lk-error-page.h — a library that could not be opened: why, and what to do */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_ERROR_PAGE (lk_error_page_get_type ())
G_DECLARE_FINAL_TYPE (LkErrorPage, lk_error_page, LK, ERROR_PAGE, GtkWidget)

/* Says that the library called `name` cannot be opened because of `error`,
 * with advice for its kind; Start Over is offered when the saved decisions
 * are what failed. */
void lk_error_page_show (LkErrorPage *self, const char *name, const GError *error);
/* Says that `name` is a folder of photos, not a library, and (`can_find`:
 * this build finds faces) offers to find the faces in it (win.find-faces). */
void lk_error_page_show_photos (LkErrorPage *self, const char *name, gboolean can_find);
/* Focuses the way on: Try Again, or Find the Faces in These Photos; FALSE
 * when it cannot take the focus. */
gboolean lk_error_page_focus_retry (LkErrorPage *self);
/* The message and the advice as shown. */
const char *lk_error_page_get_message (LkErrorPage *self);
const char *lk_error_page_get_hint (LkErrorPage *self);

G_END_DECLS
