/* lk-person-item.c — one entry of the people grid
 *
 * Items are updated in place when the people are re-clustered (same id, new
 * faces or name), so a tile bound to a person follows it through a rename
 * instead of being rebuilt, and the grid keeps its scroll position.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-person-item.h"

struct _LkPersonItem
{
  GObject parent_instance;

  char *id;
  char *name;
  GArray *faces; /* guint32 */
  gint64 cover;
  gboolean hidden;
  gboolean unassigned;
};

G_DEFINE_FINAL_TYPE (LkPersonItem, lk_person_item, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_ID,
  PROP_NAME,
  PROP_TITLE,
  PROP_N_FACES,
  PROP_COVER,
  PROP_HIDDEN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
set_faces (LkPersonItem *self, const guint32 *faces, gsize n_faces, gint64 cover)
{
  gboolean same
      = self->faces->len == n_faces
        && (n_faces == 0 || memcmp (self->faces->data, faces, n_faces * sizeof *faces) == 0);

  if (!same)
    {
      guint old_len = self->faces->len;

      g_array_set_size (self->faces, 0);
      g_array_append_vals (self->faces, faces, n_faces);
      if (old_len != n_faces)
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_FACES]);
    }
  if (cover != self->cover)
    {
      self->cover = cover;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COVER]);
    }
}

static void
lk_person_item_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkPersonItem *self = LK_PERSON_ITEM (object);

  switch (prop_id)
    {
      case PROP_ID:
        g_value_set_string (value, self->id);
        break;
      case PROP_NAME:
        g_value_set_string (value, self->name);
        break;
      case PROP_TITLE:
        g_value_set_string (value, lk_person_item_get_title (self));
        break;
      case PROP_N_FACES:
        g_value_set_uint (value, self->faces->len);
        break;
      case PROP_COVER:
        g_value_set_int64 (value, self->cover);
        break;
      case PROP_HIDDEN:
        g_value_set_boolean (value, self->hidden);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_person_item_finalize (GObject *object)
{
  LkPersonItem *self = LK_PERSON_ITEM (object);

  g_free (self->id);
  g_free (self->name);
  g_array_unref (self->faces);
  G_OBJECT_CLASS (lk_person_item_parent_class)->finalize (object);
}

static void
lk_person_item_class_init (LkPersonItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = lk_person_item_get_property;
  object_class->finalize = lk_person_item_finalize;

  properties[PROP_ID]
      = g_param_spec_string ("id", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_NAME]
      = g_param_spec_string ("name", NULL, NULL, NULL,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE]
      = g_param_spec_string ("title", NULL, NULL, NULL,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_FACES]
      = g_param_spec_uint ("n-faces", NULL, NULL, 0, G_MAXUINT, 0,
                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COVER]
      = g_param_spec_int64 ("cover", NULL, NULL, -1, G_MAXINT64, -1,
                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_HIDDEN]
      = g_param_spec_boolean ("hidden", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
lk_person_item_init (LkPersonItem *self)
{
  self->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->cover = -1;
}

LkPersonItem *
lk_person_item_new_person (const LkPerson *person)
{
  g_return_val_if_fail (person != NULL, NULL);

  LkPersonItem *self = g_object_new (LK_TYPE_PERSON_ITEM, NULL);
  self->id = g_strdup (person->id);
  self->name = g_strdup (person->name);
  self->hidden = person->hidden;
  set_faces (self, person->faces, person->n_faces, person->cover);
  return self;
}

LkPersonItem *
lk_person_item_new_unassigned (const guint32 *faces, gsize n_faces)
{
  LkPersonItem *self = g_object_new (LK_TYPE_PERSON_ITEM, NULL);

  self->id = g_strdup (LK_PERSON_ITEM_UNASSIGNED_ID);
  self->unassigned = TRUE;
  set_faces (self, faces, n_faces, n_faces > 0 ? (gint64) faces[0] : -1);
  return self;
}

void
lk_person_item_update (LkPersonItem *self, const LkPerson *person)
{
  g_return_if_fail (LK_IS_PERSON_ITEM (self));
  g_return_if_fail (g_strcmp0 (self->id, person->id) == 0);

  g_object_freeze_notify (G_OBJECT (self));
  if (g_strcmp0 (self->name, person->name) != 0)
    {
      g_free (self->name);
      self->name = g_strdup (person->name);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
    }
  if (self->hidden != person->hidden)
    {
      self->hidden = person->hidden;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDDEN]);
    }
  set_faces (self, person->faces, person->n_faces, person->cover);
  g_object_thaw_notify (G_OBJECT (self));
}

void
lk_person_item_update_unassigned (LkPersonItem *self, const guint32 *faces, gsize n_faces)
{
  g_return_if_fail (LK_IS_PERSON_ITEM (self));
  g_return_if_fail (self->unassigned);

  g_object_freeze_notify (G_OBJECT (self));
  set_faces (self, faces, n_faces, n_faces > 0 ? (gint64) faces[0] : -1);
  g_object_thaw_notify (G_OBJECT (self));
}

const char *
lk_person_item_get_id (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), NULL);
  return self->id;
}

const char *
lk_person_item_get_name (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), NULL);
  return self->name;
}

const char *
lk_person_item_get_title (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), NULL);
  if (self->unassigned)
    return _ ("Unassigned faces");
  if (self->name != NULL && self->name[0] != '\0')
    return self->name;
  return _ ("Unnamed person");
}

guint
lk_person_item_get_n_faces (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), 0);
  return self->faces->len;
}

const guint32 *
lk_person_item_get_faces (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), NULL);
  return (const guint32 *) self->faces->data;
}

gint64
lk_person_item_get_cover (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), -1);
  return self->cover;
}

gboolean
lk_person_item_get_hidden (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), FALSE);
  return self->hidden;
}

gboolean
lk_person_item_is_unassigned (LkPersonItem *self)
{
  g_return_val_if_fail (LK_IS_PERSON_ITEM (self), FALSE);
  return self->unassigned;
}
