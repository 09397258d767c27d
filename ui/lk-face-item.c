/* lk-face-item.c — one face in a person page's grid: just its index, since
 * everything else about a face is read from the session when a tile binds. */
#include "config.h"

#include "lk-face-item.h"

struct _LkFaceItem
{
  GObject parent_instance;
  guint32 face;
};

G_DEFINE_FINAL_TYPE (LkFaceItem, lk_face_item, G_TYPE_OBJECT)

static void
lk_face_item_class_init (LkFaceItemClass *klass)
{
}

static void
lk_face_item_init (LkFaceItem *self)
{
}

LkFaceItem *
lk_face_item_new (guint32 face)
{
  LkFaceItem *self = g_object_new (LK_TYPE_FACE_ITEM, NULL);

  self->face = face;
  return self;
}

guint32
lk_face_item_get_face (LkFaceItem *self)
{
  g_return_val_if_fail (LK_IS_FACE_ITEM (self), 0);
  return self->face;
}
