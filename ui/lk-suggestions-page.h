/* lk-suggestions-page.h — "Review suggestions": one uncertain face at a time, from the keyboard */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_SUGGESTIONS_PAGE (lk_suggestions_page_get_type ())
G_DECLARE_FINAL_TYPE (LkSuggestionsPage, lk_suggestions_page, LK, SUGGESTIONS_PAGE, GtkWidget)

void lk_suggestions_page_set_session (LkSuggestionsPage *self, LkSession *session,
                                      LkTextureCache *cache);
/* Collects the current suggestions and shows the first. */
void lk_suggestions_page_start (LkSuggestionsPage *self);
/* Suggestions left to answer, the one on screen included. */
guint lk_suggestions_page_get_n_left (LkSuggestionsPage *self);
/* The person's faces shown beside the question, most like its face first
 * (guint32). */
GArray *lk_suggestions_page_get_similar (LkSuggestionsPage *self);
/* The face asked about, or G_MAXUINT32 when none is left. */
guint32 lk_suggestions_page_get_face (LkSuggestionsPage *self);
/* The keyboard focus on See Photo (never on an answer); FALSE when no
 * question is shown. */
gboolean lk_suggestions_page_focus_default (LkSuggestionsPage *self);
/* The session undid (redid) a decision while the page is shown: the last
 * answer's question is asked again (passed again). */
/* Where the window's notifications go on this page: over the question,
 * above the answers (an AdwToastOverlay). */
GtkWidget *lk_suggestions_page_get_toast_overlay (LkSuggestionsPage *self);
void lk_suggestions_page_undone (LkSuggestionsPage *self);
void lk_suggestions_page_redone (LkSuggestionsPage *self);

G_END_DECLS
