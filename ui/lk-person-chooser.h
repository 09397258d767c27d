/* lk-person-chooser.h — a popover that picks a person: most similar first, searchable */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_PERSON_CHOOSER (lk_person_chooser_get_type ())
G_DECLARE_FINAL_TYPE (LkPersonChooser, lk_person_chooser, LK, PERSON_CHOOSER, GtkPopover)

/* `offer_new`: the first row is "New person" (chosen with a NULL id). */
GtkWidget *lk_person_chooser_new (LkTextureCache *cache, gboolean offer_new);
/* Fills the list with everyone but `id`, in lk_session_merge_candidates' order. */
void lk_person_chooser_set_person (LkPersonChooser *self, LkSession *session, const char *id);
/* For a move: the people `faces` of `id` can move to (lk_session_move_candidates). */
void lk_person_chooser_set_faces (LkPersonChooser *self, LkSession *session, const char *id,
                                  const guint32 *faces, gsize n_faces);
/* Exactly `people` (of LkPersonItem), in their order, under `heading` (or
 * NULL): a choice among them, such as who stays when several merge. */
void lk_person_chooser_set_people (LkPersonChooser *self, LkSession *session, GPtrArray *people,
                                   const char *heading);
/* A row's two lines: "Ada" / "12 faces · 87 % match · 2019–2021", or for an
 * unnamed person "Unnamed · 52 faces · 2019–2021" / "87 % match". The match
 * is the pairs' percentage where it rounds to 1 % or more, else "Looks
 * alike" where the mean faces are a likely pair, else nothing. */
void lk_person_chooser_describe (LkPersonChooser *self, LkPersonItem *item, char **title,
                                 char **subtitle);
/* The rows as listed (of LkPersonItem), and the search entry, for tests. */
GListModel *lk_person_chooser_get_rows (LkPersonChooser *self);
GtkWidget *lk_person_chooser_get_search (LkPersonChooser *self);
/* The "No one looks like this person" line, visible when nobody is alike. */
GtkWidget *lk_person_chooser_get_notice (LkPersonChooser *self);
/* The "No one matches “…”" line, visible when a search matches nobody. */
GtkWidget *lk_person_chooser_get_no_match (LkPersonChooser *self);

G_END_DECLS
