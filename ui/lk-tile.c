/* lk-tile.c — a face thumbnail with an optional title and subtitle
 *
 * Tiles are recycled by the grid views: lk_tile_set_face() on bind, clear on
 * unbind. While bound, a tile listens to the texture cache's "loaded" signal
 * and swaps its placeholder for the texture when its own path arrives; the
 * placeholder says whether the thumbnail is loading, missing or broken.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-tile.h"

struct _LkTile
{
  GtkWidget parent_instance;

  LkTextureCache *cache;
  gulong loaded_id;
  char *path;

  GtkWidget *frame;
  GtkWidget *placeholder;
  GtkWidget *picture;
  GtkWidget *title;
  GtkWidget *subtitle;
};

G_DEFINE_FINAL_TYPE (LkTile, lk_tile, GTK_TYPE_WIDGET)

static void
show_state (LkTile *self)
{
  LkTextureState state;
  GdkTexture *texture = lk_texture_cache_lookup (self->cache, self->path, &state);

  gtk_picture_set_paintable (GTK_PICTURE (self->picture), GDK_PAINTABLE (texture));
  gtk_widget_set_visible (self->picture, texture != NULL);
  gtk_widget_set_visible (self->placeholder, texture == NULL);
  switch (state)
    {
    case LK_TEXTURE_LOADING:
    case LK_TEXTURE_READY:
    case LK_TEXTURE_MISSING:
      gtk_image_set_from_icon_name (GTK_IMAGE (self->placeholder), "avatar-default-symbolic");
      gtk_widget_set_tooltip_text (self->frame, NULL);
      break;
    case LK_TEXTURE_BROKEN:
      gtk_image_set_from_icon_name (GTK_IMAGE (self->placeholder), "image-missing-symbolic");
      gtk_widget_set_tooltip_text (self->frame,
                                   lk_texture_cache_get_error (self->cache, self->path));
      break;
    }
}

static void
on_cache_loaded (LkTextureCache *cache, const char *path, gpointer user_data)
{
  LkTile *self = user_data;

  if (g_strcmp0 (path, self->path) == 0)
    show_state (self);
}

static void
lk_tile_dispose (GObject *object)
{
  LkTile *self = LK_TILE (object);

  lk_tile_clear (self);
  g_clear_pointer (&self->frame, gtk_widget_unparent);
  g_clear_pointer (&self->title, gtk_widget_unparent);
  g_clear_pointer (&self->subtitle, gtk_widget_unparent);
  g_clear_object (&self->cache);
  G_OBJECT_CLASS (lk_tile_parent_class)->dispose (object);
}

static void
lk_tile_class_init (LkTileClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_tile_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "lk-tile");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
lk_tile_init (LkTile *self)
{
  GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));

  gtk_orientable_set_orientation (GTK_ORIENTABLE (layout), GTK_ORIENTATION_VERTICAL);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 4);

  self->frame = gtk_overlay_new ();
  gtk_widget_add_css_class (self->frame, "thumbnail");
  gtk_widget_set_overflow (self->frame, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_halign (self->frame, GTK_ALIGN_CENTER);
  gtk_widget_set_parent (self->frame, GTK_WIDGET (self));

  self->placeholder = gtk_image_new_from_icon_name ("avatar-default-symbolic");
  gtk_widget_add_css_class (self->placeholder, "dim-label");
  gtk_overlay_set_child (GTK_OVERLAY (self->frame), self->placeholder);

  self->picture = gtk_picture_new ();
  gtk_picture_set_can_shrink (GTK_PICTURE (self->picture), TRUE);
  gtk_picture_set_content_fit (GTK_PICTURE (self->picture), GTK_CONTENT_FIT_COVER);
  gtk_overlay_add_overlay (GTK_OVERLAY (self->frame), self->picture);

  self->title = gtk_label_new (NULL);
  /* Two lines before an ellipsis: "Unnamed person" in German is
   * "Unbenannte Person", and a full name often needs the second line. */
  gtk_label_set_ellipsize (GTK_LABEL (self->title), PANGO_ELLIPSIZE_END);
  gtk_label_set_wrap (GTK_LABEL (self->title), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->title), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_lines (GTK_LABEL (self->title), 2);
  gtk_label_set_justify (GTK_LABEL (self->title), GTK_JUSTIFY_CENTER);
  gtk_label_set_max_width_chars (GTK_LABEL (self->title), 18);
  gtk_widget_add_css_class (self->title, "heading");
  gtk_widget_set_visible (self->title, FALSE);
  gtk_widget_set_parent (self->title, GTK_WIDGET (self));

  self->subtitle = gtk_label_new (NULL);
  gtk_widget_add_css_class (self->subtitle, "dim-label");
  gtk_widget_add_css_class (self->subtitle, "caption");
  gtk_widget_set_visible (self->subtitle, FALSE);
  gtk_widget_set_parent (self->subtitle, GTK_WIDGET (self));
}

GtkWidget *
lk_tile_new (LkTextureCache *cache, int size)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (cache), NULL);

  LkTile *self = g_object_new (LK_TYPE_TILE, NULL);
  self->cache = g_object_ref (cache);
  gtk_widget_set_size_request (self->frame, size, size);
  gtk_image_set_pixel_size (GTK_IMAGE (self->placeholder), size / 2);
  return GTK_WIDGET (self);
}

void
lk_tile_set_face (LkTile *self, const char *path, const char *description)
{
  g_return_if_fail (LK_IS_TILE (self));

  g_free (self->path);
  self->path = g_strdup (path);
  if (self->loaded_id == 0)
    self->loaded_id = g_signal_connect (self->cache, "loaded", G_CALLBACK (on_cache_loaded), self);
  gtk_picture_set_alternative_text (GTK_PICTURE (self->picture), description);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  description, -1);
  show_state (self);
}

void
lk_tile_set_text (LkTile *self, const char *title, const char *subtitle)
{
  g_return_if_fail (LK_IS_TILE (self));

  gtk_label_set_label (GTK_LABEL (self->title), title);
  gtk_widget_set_visible (self->title, title != NULL);
  gtk_label_set_label (GTK_LABEL (self->subtitle), subtitle);
  gtk_widget_set_visible (self->subtitle, subtitle != NULL);
}

void
lk_tile_clear (LkTile *self)
{
  g_return_if_fail (LK_IS_TILE (self));

  g_clear_signal_handler (&self->loaded_id, self->cache);
  g_clear_pointer (&self->path, g_free);
  if (self->picture != NULL)
    gtk_picture_set_paintable (GTK_PICTURE (self->picture), NULL);
}
