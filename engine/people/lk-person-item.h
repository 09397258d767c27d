/* lk-person-item.h — one entry of the people grid: a person, or the unassigned faces */
#pragma once

#include <gio/gio.h>

#include "lk-cluster.h"

G_BEGIN_DECLS

#define LK_TYPE_PERSON_ITEM (lk_person_item_get_type ())
G_DECLARE_FINAL_TYPE (LkPersonItem, lk_person_item, LK, PERSON_ITEM, GObject)

/* The id of the "Unassigned faces" entry; person ids start with "p". */
#define LK_PERSON_ITEM_UNASSIGNED_ID "unassigned"

LkPersonItem *lk_person_item_new_person (const LkPerson *person);
LkPersonItem *lk_person_item_new_unassigned (const guint32 *faces, gsize n_faces);
/* Takes the new state of the same person (same id), notifying what changed. */
void lk_person_item_update (LkPersonItem *self, const LkPerson *person);
void lk_person_item_update_unassigned (LkPersonItem *self, const guint32 *faces, gsize n_faces);

const char *lk_person_item_get_id (LkPersonItem *self);
/* The user's name, or NULL. */
const char *lk_person_item_get_name (LkPersonItem *self);
/* What to show: the name, "Unnamed person" or "Unassigned faces". */
const char *lk_person_item_get_title (LkPersonItem *self);
guint lk_person_item_get_n_faces (LkPersonItem *self);
const guint32 *lk_person_item_get_faces (LkPersonItem *self);
/* The cover face, or -1 (the unassigned entry with no faces). */
gint64 lk_person_item_get_cover (LkPersonItem *self);
gboolean lk_person_item_get_hidden (LkPersonItem *self);
gboolean lk_person_item_is_unassigned (LkPersonItem *self);

G_END_DECLS
