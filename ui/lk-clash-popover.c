/* lk-clash-popover.c — two faces of one photo, shown when a merge or move is refused
 *
 * Used by the person page (Merge With…, Move To…) and by the grid's Merge
 * Selected: one look for one refusal. The faces are the photo's own
 * thumbnails, the photo one click away (Show Photo opens the face viewer
 * on the two), so the user sees why rather than reading face numbers.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-clash-popover.h"
#include "lk-face-viewer.h"
#include "lk-tile.h"

/* The thumbnails' side, in logical pixels: two fit a 360-pixel window. */
#define CLASH_FACE_SIZE 96

struct _LkClashPopover
{
  GtkPopover parent_instance;

  LkTextureCache *cache;
  LkSession *session;
  guint32 faces[2];
  GtkWidget *tiles[2];
  GtkLabel *label;
};

G_DEFINE_FINAL_TYPE (LkClashPopover, lk_clash_popover, GTK_TYPE_POPOVER)

static void
on_show_photo (GtkButton *button, gpointer user_data)
{
  lk_clash_popover_view_photo (LK_CLASH_POPOVER (user_data));
}

static void
lk_clash_popover_dispose (GObject *object)
{
  LkClashPopover *self = LK_CLASH_POPOVER (object);

  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  G_OBJECT_CLASS (lk_clash_popover_parent_class)->dispose (object);
}

static void
lk_clash_popover_class_init (LkClashPopoverClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = lk_clash_popover_dispose;
}

static void
lk_clash_popover_init (LkClashPopover *self)
{
}

GtkWidget *
lk_clash_popover_new (LkTextureCache *cache)
{
  LkClashPopover *self = g_object_new (LK_TYPE_CLASH_POPOVER, NULL);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);

  self->cache = g_object_ref (cache);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  gtk_widget_set_margin_start (box, 6);
  gtk_widget_set_margin_end (box, 6);
  GtkWidget *title = gtk_label_new (_ ("These Two Faces Are in One Photo"));
  gtk_widget_add_css_class (title, "heading");
  gtk_box_append (GTK_BOX (box), title);
  GtkWidget *faces = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_halign (faces, GTK_ALIGN_CENTER);
  for (guint k = 0; k < 2; k++)
    {
      self->tiles[k] = lk_tile_new (cache, CLASH_FACE_SIZE);
      gtk_box_append (GTK_BOX (faces), self->tiles[k]);
    }
  gtk_box_append (GTK_BOX (box), faces);
  self->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->label, TRUE);
  gtk_label_set_max_width_chars (self->label, 40);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->label));
  GtkWidget *show = gtk_button_new_with_mnemonic (_ ("_Show Photo"));
  gtk_widget_set_halign (show, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (show, "pill");
  g_signal_connect (show, "clicked", G_CALLBACK (on_show_photo), self);
  gtk_box_append (GTK_BOX (box), show);
  gtk_popover_set_child (GTK_POPOVER (self), box);
  return GTK_WIDGET (self);
}

void
lk_clash_popover_show (LkClashPopover *self, LkSession *session, guint32 a, guint32 b,
                       const char *text, const GdkRectangle *anchor)
{
  g_return_if_fail (LK_IS_CLASH_POPOVER (self));

  g_set_object (&self->session, session);
  self->faces[0] = a;
  self->faces[1] = b;
  for (guint k = 0; k < 2; k++)
    {
      g_autofree char *path = lk_session_thumbnail_path (session, self->faces[k]);
      g_autofree char *description = lk_session_describe_face (session, self->faces[k]);
      lk_tile_set_face (LK_TILE (self->tiles[k]), path, description);
      gtk_widget_set_tooltip_text (self->tiles[k], description);
    }
  gtk_label_set_label (self->label, text);
  gtk_popover_set_pointing_to (GTK_POPOVER (self), anchor);
  gtk_popover_popup (GTK_POPOVER (self));
}

gboolean
lk_clash_popover_get_faces (LkClashPopover *self, guint32 *a, guint32 *b)
{
  g_return_val_if_fail (LK_IS_CLASH_POPOVER (self), FALSE);

  if (!gtk_widget_get_visible (GTK_WIDGET (self)))
    return FALSE;
  *a = self->faces[0];
  *b = self->faces[1];
  return TRUE;
}

const char *
lk_clash_popover_get_text (LkClashPopover *self)
{
  g_return_val_if_fail (LK_IS_CLASH_POPOVER (self), NULL);
  return gtk_label_get_label (self->label);
}

void
lk_clash_popover_view_photo (LkClashPopover *self)
{
  g_return_if_fail (LK_IS_CLASH_POPOVER (self));

  if (self->session == NULL)
    return;
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  gtk_popover_popdown (GTK_POPOVER (self));
  lk_face_viewer_present (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, self->session,
                          self->faces, 2, 0);
}

char *
lk_clash_popover_describe_photo (LkSession *session, guint32 face)
{
  const LkLibrary *library = lk_session_get_library (session);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);

  if (photo != NULL && photo->path != NULL)
    return g_strdup_printf ("“%s”", photo->path);
  /* xgettext cannot expand G_GUINT64_FORMAT inside _(): the id as a %s. */
  g_autofree char *photo_id = g_strdup_printf ("%" G_GUINT64_FORMAT, library->photo[face]);
  return g_strdup_printf (_ ("photo %s"), photo_id);
}
