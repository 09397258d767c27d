/* lk-review-bar.h — over the people grid: how many "Is this Ada?" questions are left */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_REVIEW_BAR (lk_review_bar_get_type ())
G_DECLARE_FINAL_TYPE (LkReviewBar, lk_review_bar, LK, REVIEW_BAR, GtkWidget)

/* Follows `session` (NULL: none): counts its questions each time the people
 * land, and hides itself when there are none. */
void lk_review_bar_set_session (LkReviewBar *self, LkSession *session, LkTextureCache *cache);
/* The questions left, as shown. */
guint lk_review_bar_get_count (LkReviewBar *self);
/* Opens the "Is this Ada?" dialog (what the bar's button does). */
void lk_review_bar_open (LkReviewBar *self);

G_END_DECLS
