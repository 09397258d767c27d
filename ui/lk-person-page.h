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
/* Where the window's notifications go on this page: over the faces, above
 * the action bar (an AdwToastOverlay). */
GtkWidget *lk_person_page_get_toast_overlay (LkPersonPage *self);
/* Opens the photo of the face at `position` (what Space and a double-click do). */
void lk_person_page_view_photo (LkPersonPage *self, guint position);
/* A name being typed is committed, as Enter commits it (the window does
 * this before it closes: an edit in progress is kept, as GNOME's entry rows
 * keep one on focus-out). */
void lk_person_page_commit_name (LkPersonPage *self);
/* Puts the keyboard focus on the faces (the page's main widget). */
gboolean lk_person_page_focus_faces (LkPersonPage *self);
/* Puts it on the first face: where a person's page starts, so that Space
 * shows a photo rather than pressing the first button of the header. */
gboolean lk_person_page_focus_first_face (LkPersonPage *self);
/* The faces grid's selection (of LkFaceItem). */
GtkSelectionModel *lk_person_page_get_selection (LkPersonPage *self);
/* The faces' order: TRUE least like the rest of the person first, FALSE the
 * library's (set: as the user's choice in the Order menu). */
gboolean lk_person_page_get_outliers_first (LkPersonPage *self);
void lk_person_page_set_outliers_first (LkPersonPage *self, gboolean outliers_first);
/* The faces shown, in the grid's order. */
const guint32 *lk_person_page_get_shown (LkPersonPage *self, guint *n);
/* On the unassigned entry: shows the faces dismissed as no face (Dismissed). */
void lk_person_page_show_dismissed (LkPersonPage *self, gboolean show);
/* A refused merge or move shows the two faces of one photo that stopped it:
 * TRUE while it does, with the faces. */
gboolean lk_person_page_get_clash (LkPersonPage *self, guint32 *a, guint32 *b);

G_END_DECLS
