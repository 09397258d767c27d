/* lk-tile.c — a face thumbnail with an optional title and subtitle
 *
 * Why it is shaped this way:
 *
 * - One widget that draws its thumbnail, placeholder and text itself in
 *   snapshot(), with two PangoLayouts it keeps. GtkGridView (GTK 4.8) keeps
 *   some 32 rows × max-columns tiles alive, 384 in the people grid: as a
 *   GtkOverlay + GtkImage + GtkPicture + two wrapping GtkLabels, a tile was
 *   six widgets with six CSS nodes to style, and the labels' height-for-width
 *   measuring on every bind. The first showing of the people grid of an
 *   18,143-face library kept the main thread busy 250–340 ms; as one widget,
 *   see the commit that made it so for the figures.
 * - Tiles are recycled by the grid views: lk_tile_set_face() on bind,
 *   lk_tile_clear() on unbind. While its thumbnail loads, a tile listens to
 *   the texture cache's "batch-loaded" signal (once per batch of decodes, not
 *   once per thumbnail), and stops listening once it knows.
 * - The placeholder says whether the thumbnail is loading, missing or broken
 *   (the tooltip then says why). A tile with the CSS class "person" draws its
 *   thumbnail round.
 */
#include "config.h"

#include "lk-tile.h"

/* Logical pixels between the thumbnail, the title and the subtitle. */
#define SPACING                   4
/* Corner radius of a face's thumbnail, in logical pixels (a person's is round). */
#define RADIUS                    12
/* The theme's .dim-label opacity, and its .heading and .caption font sizes. */
#define DIM_OPACITY               0.55
#define HEADING_SCALE             1.1
#define CAPTION_SCALE             0.9
/* Of an unnamed person's title: "Unnamed person" is a placeholder, not a name. */
#define PLACEHOLDER_TITLE_OPACITY 0.7

struct _LkTile
{
  GtkWidget parent_instance;

  LkTextureCache *cache;
  int size;

  gulong batch_id; /* connected while the thumbnail loads */
  char *path;
  char *description;
  char *label; /* the accessible name when it says more; NULL: the description */
  gboolean description_tooltip;
  gboolean bound;
  LkTextureState state;
  GdkTexture *texture; /* shown; NULL: the placeholder */

  gboolean title_dimmed;
  char *title;    /* NULL: no title */
  char *subtitle; /* NULL: no subtitle */
  /* Made at the first drawing, from the window's PangoContext: a widget's
   * own context costs ~50 µs to make, and most bound tiles are never drawn. */
  PangoLayout *title_layout;
  PangoLayout *subtitle_layout;

  guint metrics_serial; /* of the PangoContext the line heights are for */
  int title_line;       /* pixels */
  int caption_line;

  GdkPaintable *icon; /* the placeholder's, for icon_name at icon_scale */
  const char *icon_name;
  int icon_scale;
  const char *no_face_icon; /* interned; NULL: avatar-default-symbolic */
  gboolean checked;
  GdkPaintable *check_icon; /* object-select-symbolic, at check_scale */
  int check_scale;
};

G_DEFINE_FINAL_TYPE (LkTile, lk_tile, GTK_TYPE_WIDGET)

static void
get_color (GtkWidget *widget, GdkRGBA *color)
{
#if GTK_CHECK_VERSION(4, 10, 0)
  gtk_widget_get_color (widget, color);
#else
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), color);
#endif
}

static void
disconnect_cache (LkTile *self)
{
  g_clear_signal_handler (&self->batch_id, self->cache);
}

static void on_batch_loaded (LkTextureCache *cache, gpointer user_data);

static void
show_state (LkTile *self)
{
  LkTextureState state;
  GdkTexture *texture = lk_texture_cache_lookup (self->cache, self->path, &state);

  if (state == LK_TEXTURE_LOADING && self->batch_id == 0)
    self->batch_id
        = g_signal_connect (self->cache, "batch-loaded", G_CALLBACK (on_batch_loaded), self);
  else if (state != LK_TEXTURE_LOADING)
    disconnect_cache (self);

  if (state == self->state && texture == self->texture)
    return;
  self->state = state;
  g_set_object (&self->texture, texture);
  if (state == LK_TEXTURE_BROKEN)
    gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_batch_loaded (LkTextureCache *cache, gpointer user_data)
{
  show_state (LK_TILE (user_data));
}

/* The window's: one for every tile. */
static PangoContext *
shared_context (LkTile *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

  return gtk_widget_get_pango_context (root != NULL ? GTK_WIDGET (root) : GTK_WIDGET (self));
}

static void
set_title_attributes (LkTile *self)
{
  PangoAttrList *attrs = pango_attr_list_new ();

  pango_attr_list_insert (attrs, pango_attr_scale_new (HEADING_SCALE));
  pango_attr_list_insert (
      attrs, pango_attr_weight_new (self->title_dimmed ? PANGO_WEIGHT_NORMAL : PANGO_WEIGHT_BOLD));
  pango_layout_set_attributes (self->title_layout, attrs);
  pango_attr_list_unref (attrs);
}

static PangoLayout *
new_layout (LkTile *self)
{
  PangoLayout *layout = pango_layout_new (shared_context (self));

  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_width (layout, self->size * PANGO_SCALE);
  return layout;
}

static void
ensure_layouts (LkTile *self)
{
  if (self->title != NULL && self->title_layout == NULL)
    {
      self->title_layout = new_layout (self);
      /* Two lines before the ellipsis: "Unnamed person" in German is
       * "Unbenannte Person", and a full name often needs the second. */
      pango_layout_set_wrap (self->title_layout, PANGO_WRAP_WORD_CHAR);
      pango_layout_set_height (self->title_layout, -2);
      set_title_attributes (self);
    }
  if (self->subtitle != NULL && self->subtitle_layout == NULL)
    {
      PangoAttrList *attrs = pango_attr_list_new ();

      self->subtitle_layout = new_layout (self);
      pango_layout_set_height (self->subtitle_layout, -1);
      pango_attr_list_insert (attrs, pango_attr_scale_new (CAPTION_SCALE));
      pango_layout_set_attributes (self->subtitle_layout, attrs);
      pango_attr_list_unref (attrs);
    }
  if (self->title != NULL
      && g_strcmp0 (pango_layout_get_text (self->title_layout), self->title) != 0)
    pango_layout_set_text (self->title_layout, self->title, -1);
  if (self->subtitle != NULL
      && g_strcmp0 (pango_layout_get_text (self->subtitle_layout), self->subtitle) != 0)
    pango_layout_set_text (self->subtitle_layout, self->subtitle, -1);
}

/* The height of a line of the title and of the subtitle, from the font's
 * metrics: measuring never shapes text, so binding a tile off screen costs
 * no text layout; only the tiles drawn shape theirs. One table for all
 * tiles, by font. */
static void
ensure_line_heights (LkTile *self)
{
  static GHashTable *by_font; /* font description string → int[2] */
  PangoContext *context = shared_context (self);

  if (self->title_line > 0 && self->metrics_serial == pango_context_get_serial (context))
    return;

  const PangoFontDescription *base = pango_context_get_font_description (context);
  g_autofree char *key = pango_font_description_to_string (base);
  int *lines;

  if (by_font == NULL)
    by_font = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  lines = g_hash_table_lookup (by_font, key);
  if (lines == NULL)
    {
      static const double scales[2] = { HEADING_SCALE, CAPTION_SCALE };

      lines = g_new (int, 2);
      for (guint k = 0; k < 2; k++)
        {
          PangoFontDescription *desc = pango_font_description_copy (base);
          int size = pango_font_description_get_size (desc);

          if (pango_font_description_get_size_is_absolute (desc))
            pango_font_description_set_absolute_size (desc, size * scales[k]);
          else
            pango_font_description_set_size (desc, (int) (size * scales[k]));
          if (k == 0)
            pango_font_description_set_weight (desc, PANGO_WEIGHT_BOLD);
          PangoFontMetrics *metrics = pango_context_get_metrics (context, desc, NULL);
          lines[k] = PANGO_PIXELS_CEIL (pango_font_metrics_get_ascent (metrics)
                                        + pango_font_metrics_get_descent (metrics));
          pango_font_metrics_unref (metrics);
          pango_font_description_free (desc);
        }
      g_hash_table_insert (by_font, g_steal_pointer (&key), lines);
    }
  self->title_line = lines[0];
  self->caption_line = lines[1];
  self->metrics_serial = pango_context_get_serial (context);
}

static GdkPaintable *
placeholder_icon (LkTile *self)
{
  const char *name = self->state == LK_TEXTURE_BROKEN ? "image-missing-symbolic"
                     : self->no_face_icon != NULL     ? self->no_face_icon
                                                      : "avatar-default-symbolic";
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));

  if (self->icon == NULL || self->icon_name != name || self->icon_scale != scale)
    {
      GtkIconTheme *theme
          = gtk_icon_theme_get_for_display (gtk_widget_get_display (GTK_WIDGET (self)));

      g_clear_object (&self->icon);
      self->icon = GDK_PAINTABLE (
          gtk_icon_theme_lookup_icon (theme, name, NULL, self->size / 2, scale,
                                      gtk_widget_get_direction (GTK_WIDGET (self)), 0));
      self->icon_name = name;
      self->icon_scale = scale;
    }
  return self->icon;
}

static void
snapshot_thumbnail (LkTile *self, GtkSnapshot *snapshot, float x, const GdkRGBA *color)
{
  float size = self->size;
  float radius
      = gtk_widget_has_css_class (GTK_WIDGET (self), "person") ? size / 2 : MIN (RADIUS, size / 4);
  GskRoundedRect clip;
  GdkRGBA background = *color;

  gsk_rounded_rect_init_from_rect (&clip, &GRAPHENE_RECT_INIT (x, 0, size, size), radius);
  gtk_snapshot_push_rounded_clip (snapshot, &clip);
  background.alpha *= 0.08f;
  gtk_snapshot_append_color (snapshot, &background, &clip.bounds);

  if (self->texture != NULL)
    {
      /* Cover the square, like GTK_CONTENT_FIT_COVER. */
      float w = gdk_texture_get_width (self->texture);
      float h = gdk_texture_get_height (self->texture);
      float fit = MAX (size / w, size / h);

      gtk_snapshot_append_texture (
          snapshot, self->texture,
          &GRAPHENE_RECT_INIT (x + (size - w * fit) / 2, (size - h * fit) / 2, w * fit, h * fit));
    }
  else if (self->bound)
    {
      GdkPaintable *icon = placeholder_icon (self);
      float icon_size = size / 2;
      GdkRGBA colors[4] = {
        *color, { 0.75f, 0.11f, 0.16f, 1 }, { 0.96f, 0.47f, 0, 1 }, { 0.18f, 0.76f, 0.49f, 1 }
      };

      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (
          snapshot, &GRAPHENE_POINT_INIT (x + (size - icon_size) / 2, (size - icon_size) / 2));
      gtk_snapshot_push_opacity (snapshot, DIM_OPACITY);
      if (GTK_IS_SYMBOLIC_PAINTABLE (icon))
        gtk_symbolic_paintable_snapshot_symbolic (GTK_SYMBOLIC_PAINTABLE (icon), snapshot,
                                                  icon_size, icon_size, colors,
                                                  G_N_ELEMENTS (colors));
      else if (icon != NULL)
        gdk_paintable_snapshot (icon, snapshot, icon_size, icon_size);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
    }
  gtk_snapshot_pop (snapshot);
}

/* The accent colour of the theme (libadwaita's @accent_bg_color). */
static void
get_accent (GtkWidget *widget, GdkRGBA *color)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (gtk_widget_get_style_context (widget), "accent_bg_color",
                                       color))
    *color = (GdkRGBA){ 0.21f, 0.52f, 0.89f, 1 };
  G_GNUC_END_IGNORE_DEPRECATIONS
}

/* A selected tile's check mark: a white tick on an accent disc at the
 * thumbnail's top right, as in Files and Photos (a greyed tile looked like
 * the pointer's hover). */
static void
snapshot_check (LkTile *self, GtkSnapshot *snapshot, float x)
{
  float disc = MAX (20.0f, self->size / 5.0f);
  float glyph = disc * 0.6f;
  float left = x + self->size - disc, top = 0;
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  GdkRGBA accent, white = { 1, 1, 1, 1 };
  GskRoundedRect round;

  if (self->check_icon == NULL || self->check_scale != scale)
    {
      GtkIconTheme *theme
          = gtk_icon_theme_get_for_display (gtk_widget_get_display (GTK_WIDGET (self)));
      g_clear_object (&self->check_icon);
      self->check_icon = GDK_PAINTABLE (
          gtk_icon_theme_lookup_icon (theme, "object-select-symbolic", NULL, (int) glyph, scale,
                                      gtk_widget_get_direction (GTK_WIDGET (self)), 0));
      self->check_scale = scale;
    }
  get_accent (GTK_WIDGET (self), &accent);
  gsk_rounded_rect_init_from_rect (&round, &GRAPHENE_RECT_INIT (left, top, disc, disc), disc / 2);
  gtk_snapshot_push_rounded_clip (snapshot, &round);
  gtk_snapshot_append_color (snapshot, &white, &round.bounds);
  gsk_rounded_rect_shrink (&round, 2, 2, 2, 2);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_push_rounded_clip (snapshot, &round);
  gtk_snapshot_append_color (snapshot, &accent, &round.bounds);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (
      snapshot, &GRAPHENE_POINT_INIT (left + (disc - glyph) / 2, top + (disc - glyph) / 2));
  if (GTK_IS_SYMBOLIC_PAINTABLE (self->check_icon))
    gtk_symbolic_paintable_snapshot_symbolic (GTK_SYMBOLIC_PAINTABLE (self->check_icon), snapshot,
                                              glyph, glyph, &white, 1);
  else if (self->check_icon != NULL)
    gdk_paintable_snapshot (self->check_icon, snapshot, glyph, glyph);
  gtk_snapshot_restore (snapshot);
}

static void
snapshot_text (GtkSnapshot *snapshot, PangoLayout *layout, float x, float y, double opacity,
               const GdkRGBA *color)
{
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x, y));
  if (opacity < 1.0)
    gtk_snapshot_push_opacity (snapshot, opacity);
  gtk_snapshot_append_layout (snapshot, layout, color);
  if (opacity < 1.0)
    gtk_snapshot_pop (snapshot);
  gtk_snapshot_restore (snapshot);
}

/* Under the two lines measure () keeps for every title, whatever its own:
 * right under a one-line name, "12 faces" stood a line higher than under
 * its two-line neighbour's, and a row's counts zigzagged. */
static int
subtitle_y (LkTile *self)
{
  if (self->title == NULL)
    return self->size + SPACING;
  ensure_line_heights (self);
  return self->size + SPACING + 2 * self->title_line + SPACING;
}

static void
lk_tile_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  LkTile *self = LK_TILE (widget);
  float x = (gtk_widget_get_width (widget) - self->size) / 2.0f;
  float y = self->size;
  GdkRGBA color;

  get_color (widget, &color);
  snapshot_thumbnail (self, snapshot, x, &color);
  if (self->checked)
    snapshot_check (self, snapshot, x);
  ensure_layouts (self);
  if (self->title != NULL)
    snapshot_text (snapshot, self->title_layout, x, y + SPACING,
                   self->title_dimmed ? PLACEHOLDER_TITLE_OPACITY : 1.0, &color);
  if (self->subtitle != NULL)
    snapshot_text (snapshot, self->subtitle_layout, x, subtitle_y (self), DIM_OPACITY, &color);
}

static void
lk_tile_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                 int *natural, int *minimum_baseline, int *natural_baseline)
{
  LkTile *self = LK_TILE (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = *natural = self->size;
      return;
    }
  /* Room for two lines of title whatever the name: every row of a grid is
   * as high, and no tile needs its text shaped to be measured. */
  int height = self->size;
  if (self->title != NULL || self->subtitle != NULL)
    ensure_line_heights (self);
  if (self->title != NULL)
    height += SPACING + 2 * self->title_line;
  if (self->subtitle != NULL)
    height += SPACING + self->caption_line;
  *minimum = *natural = height;
}

static gboolean
lk_tile_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  LkTile *self = LK_TILE (widget);
  const char *error = self->state == LK_TEXTURE_BROKEN
                          ? lk_texture_cache_get_error (self->cache, self->path)
                          : NULL;

  if (error != NULL)
    {
      gtk_tooltip_set_text (tooltip, error);
      return TRUE;
    }
  if (self->description_tooltip && self->bound && self->description != NULL)
    {
      gtk_tooltip_set_text (tooltip, self->description);
      return TRUE;
    }
  return GTK_WIDGET_CLASS (lk_tile_parent_class)->query_tooltip (widget, x, y, keyboard, tooltip);
}

static void
lk_tile_root (GtkWidget *widget)
{
  LkTile *self = LK_TILE (widget);

  GTK_WIDGET_CLASS (lk_tile_parent_class)->root (widget);
  /* Another window may mean another display: its own fonts and icons. */
  g_clear_object (&self->icon);
  g_clear_object (&self->title_layout);
  g_clear_object (&self->subtitle_layout);
  self->title_line = 0;
}

static void
lk_tile_dispose (GObject *object)
{
  LkTile *self = LK_TILE (object);

  lk_tile_clear (self);
  g_clear_object (&self->title_layout);
  g_clear_object (&self->subtitle_layout);
  g_clear_object (&self->icon);
  g_clear_object (&self->check_icon);
  g_clear_object (&self->cache);
  G_OBJECT_CLASS (lk_tile_parent_class)->dispose (object);
}

static void
lk_tile_finalize (GObject *object)
{
  LkTile *self = LK_TILE (object);

  g_free (self->description);
  g_free (self->label);
  g_free (self->title);
  g_free (self->subtitle);
  G_OBJECT_CLASS (lk_tile_parent_class)->finalize (object);
}

static void
lk_tile_class_init (LkTileClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_tile_dispose;
  object_class->finalize = lk_tile_finalize;
  widget_class->snapshot = lk_tile_snapshot;
  widget_class->measure = lk_tile_measure;
  widget_class->query_tooltip = lk_tile_query_tooltip;
  widget_class->root = lk_tile_root;
  gtk_widget_class_set_css_name (widget_class, "lk-tile");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
lk_tile_init (LkTile *self)
{
  self->state = LK_TEXTURE_MISSING;
}

/* A grid's keyboard focus is on the cell that holds the tile, not on the
 * tile: unnamed, GTK 4.8 gives a screen reader the cell's type name
 * ("GtkListItemWidget") to say. So the cell takes the tile's name too
 * (GTK 4.12's gtk_list_item_set_accessible_label, done on the widget). */
static void
update_label (LkTile *self)
{
  const char *label = self->label != NULL ? self->label : self->description;
  GtkWidget *parent = gtk_widget_get_parent (GTK_WIDGET (self));

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
  if (parent == NULL)
    return;
  GtkAccessibleRole role = gtk_accessible_get_accessible_role (GTK_ACCESSIBLE (parent));
  if (role == GTK_ACCESSIBLE_ROLE_GRID_CELL || role == GTK_ACCESSIBLE_ROLE_LIST_ITEM)
    gtk_accessible_update_property (GTK_ACCESSIBLE (parent), GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                    -1);
}

GtkWidget *
lk_tile_new (LkTextureCache *cache, int size)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (cache), NULL);
  g_return_val_if_fail (size > 0, NULL);

  LkTile *self = g_object_new (LK_TYPE_TILE, NULL);
  self->cache = g_object_ref (cache);
  self->size = size;
  return GTK_WIDGET (self);
}

void
lk_tile_set_face (LkTile *self, const char *path, const char *description)
{
  g_return_if_fail (LK_IS_TILE (self));

  if (g_strcmp0 (self->path, path) != 0)
    {
      disconnect_cache (self);
      g_free (self->path);
      self->path = g_strdup (path);
    }
  if (!self->bound)
    {
      self->bound = TRUE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  if (g_strcmp0 (self->description, description) != 0)
    {
      g_free (self->description);
      self->description = g_strdup (description);
      if (self->label == NULL)
        update_label (self);
    }
  show_state (self);
}

void
lk_tile_set_label (LkTile *self, const char *label)
{
  g_return_if_fail (LK_IS_TILE (self));

  if (g_strcmp0 (self->label, label) == 0)
    return;
  g_free (self->label);
  self->label = g_strdup (label);
  update_label (self);
}

void
lk_tile_set_icon (LkTile *self, const char *icon_name)
{
  g_return_if_fail (LK_IS_TILE (self));

  const char *interned = g_intern_string (icon_name);
  if (self->no_face_icon == interned)
    return;
  self->no_face_icon = interned;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
lk_tile_set_text (LkTile *self, const char *title, const char *subtitle)
{
  g_return_if_fail (LK_IS_TILE (self));

  gboolean resize
      = (self->title != NULL) != (title != NULL) || (self->subtitle != NULL) != (subtitle != NULL);

  if (g_strcmp0 (self->title, title) == 0 && g_strcmp0 (self->subtitle, subtitle) == 0)
    return;
  g_free (self->title);
  self->title = g_strdup (title);
  g_free (self->subtitle);
  self->subtitle = g_strdup (subtitle);
  if (resize)
    gtk_widget_queue_resize (GTK_WIDGET (self));
  else
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
lk_tile_set_description_tooltip (LkTile *self, gboolean show)
{
  g_return_if_fail (LK_IS_TILE (self));

  self->description_tooltip = show;
  if (show)
    gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
}

void
lk_tile_set_title_dimmed (LkTile *self, gboolean dimmed)
{
  g_return_if_fail (LK_IS_TILE (self));

  if (self->title_dimmed == dimmed)
    return;
  self->title_dimmed = dimmed;
  if (self->title_layout != NULL)
    set_title_attributes (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
lk_tile_set_checked (LkTile *self, gboolean checked)
{
  g_return_if_fail (LK_IS_TILE (self));

  if (self->checked == checked)
    return;
  self->checked = checked;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
lk_tile_get_checked (LkTile *self)
{
  g_return_val_if_fail (LK_IS_TILE (self), FALSE);

  return self->checked;
}

void
lk_tile_clear (LkTile *self)
{
  g_return_if_fail (LK_IS_TILE (self));

  disconnect_cache (self);
  g_clear_pointer (&self->path, g_free);
  g_clear_object (&self->texture);
  self->state = LK_TEXTURE_MISSING;
  if (self->bound)
    {
      self->bound = FALSE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

LkTileCheck
lk_tile_check (LkTile *self)
{
  g_return_val_if_fail (LK_IS_TILE (self), LK_TILE_UNBOUND);

  if (!self->bound)
    return LK_TILE_UNBOUND;
  if (self->texture != NULL)
    return g_strcmp0 (lk_texture_cache_texture_path (self->texture), self->path) == 0
               ? LK_TILE_THUMBNAIL
               : LK_TILE_STALE;

  LkTextureState state;
  GdkTexture *texture;
  if (!lk_texture_cache_peek (self->cache, self->path, &state, &texture))
    /* Evicted since: a failure shown stays right, a wait would never end. */
    return self->state == LK_TEXTURE_MISSING || self->state == LK_TEXTURE_BROKEN
               ? LK_TILE_NO_THUMBNAIL
               : LK_TILE_OUT_OF_DATE;
  if (state != self->state || state == LK_TEXTURE_READY)
    return LK_TILE_OUT_OF_DATE;
  return state == LK_TEXTURE_LOADING ? LK_TILE_LOADING : LK_TILE_NO_THUMBNAIL;
}

const char *
lk_tile_get_path (LkTile *self)
{
  g_return_val_if_fail (LK_IS_TILE (self), NULL);
  return self->path;
}

const char *
lk_tile_get_title (LkTile *self)
{
  g_return_val_if_fail (LK_IS_TILE (self), NULL);
  return self->title;
}
