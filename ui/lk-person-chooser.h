/* lk-person-chooser.h — a popover that picks a person: most similar first, searchable */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_PERSON_CHOOSER (lk_person_chooser_get_type ())
G_DECLARE_FINAL_TYPE (LkPersonChooser, lk_person_chooser, LK, PERSON_CHOOSER, GtkPopover)

/* `offer_new`: the first row is "New person" (chosen with a NULL id). */
GtkWidget *lk_person_chooser_new (LkTextureCache *cache,
                                  gboolean        offer_new);
/* Fills the list with everyone but `id`, in lk_session_merge_candidates' order. */
void       lk_person_chooser_set_person (LkPersonChooser *self,
                                         LkSession       *session,
                                         const char      *id);

G_END_DECLS
