/* lk-person-page.h — every face of one person, and the review actions on them */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_PERSON_PAGE (lk_person_page_get_type ())
G_DECLARE_FINAL_TYPE (LkPersonPage, lk_person_page, LK, PERSON_PAGE, GtkWidget)

void lk_person_page_set_session (LkPersonPage *self, LkSession *session, LkTextureCache *cache);
void lk_person_page_show (LkPersonPage *self, LkPersonItem *item);
LkPersonItem *lk_person_page_get_person (LkPersonPage *self);
/* Logical pixels of the action bar at the bottom, which notifications keep clear of. */
int lk_person_page_get_bar_height (LkPersonPage *self);
/* Opens the photo of the face at `position` (what Space and a double-click do). */
void lk_person_page_view_photo (LkPersonPage *self, guint position);
/* Puts the keyboard focus on the faces (the page's main widget). */
gboolean lk_person_page_focus_faces (LkPersonPage *self);
/* The faces grid's selection (of LkFaceItem). */
GtkSelectionModel *lk_person_page_get_selection (LkPersonPage *self);
/* A refused merge or move shows the two faces of one photo that stopped it:
 * TRUE while it does, with the faces. */
gboolean lk_person_page_get_clash (LkPersonPage *self, guint32 *a, guint32 *b);

G_END_DECLS
