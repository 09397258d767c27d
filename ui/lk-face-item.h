/* lk-face-item.h — one face in a person page's grid */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define LK_TYPE_FACE_ITEM (lk_face_item_get_type ())
G_DECLARE_FINAL_TYPE (LkFaceItem, lk_face_item, LK, FACE_ITEM, GObject)

LkFaceItem *lk_face_item_new (guint32 face);
guint32 lk_face_item_get_face (LkFaceItem *self);

G_END_DECLS
