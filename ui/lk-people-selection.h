/* lk-people-selection.h — the people grid's selection, as GTK's list widget sees it
 *
 * A GtkSelectionModel over the window's GtkMultiSelection that takes the
 * grid's own requests (hover, arrow keys, Shift+arrows, Ctrl+Space, Ctrl+A)
 * and turns them into what the selection mode means. The window changes
 * the selection through the model it wraps, never through this one.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_PEOPLE_SELECTION (lk_people_selection_get_type ())
G_DECLARE_FINAL_TYPE (LkPeopleSelection, lk_people_selection, LK, PEOPLE_SELECTION, GObject)

/* Takes a reference on `model`. */
LkPeopleSelection *lk_people_selection_new (GtkSelectionModel *model);
/* The selection mode started or ended: the grid's requests select again,
 * or are ignored; a range starts anew either way. */
void lk_people_selection_set_selecting (LkPeopleSelection *self, gboolean selecting);
/* A click selected or unselected the person at `position`: Shift+arrows
 * extend from there. */
void lk_people_selection_set_anchor (LkPeopleSelection *self, guint position);
/* The keyboard focus is on the person at `position` (GTK_INVALID_LIST_POSITION:
 * outside the grid). */
void lk_people_selection_set_focus (LkPeopleSelection *self, guint position);

G_END_DECLS
