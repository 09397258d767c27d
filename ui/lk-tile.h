/* lk-tile.h — a face thumbnail with an optional title and subtitle, for the grids
 *
 * With the CSS class "person", the thumbnail is drawn round. */
#pragma once

#include <gtk/gtk.h>

#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_TILE (lk_tile_get_type ())
G_DECLARE_FINAL_TYPE (LkTile, lk_tile, LK, TILE, GtkWidget)

/* `size`: the thumbnail's side in logical pixels. */
GtkWidget *lk_tile_new (LkTextureCache *cache, int size);
/* Shows the thumbnail at `path` (NULL: none); `description` is the accessible
 * name of the image. */
void lk_tile_set_face (LkTile *self, const char *path, const char *description);
/* The accessible name when it must say more than the description (a face's
 * place among the person's, a figure drawn under it); NULL: the description.
 * The list cell holding the tile takes the same name. */
void lk_tile_set_label (LkTile *self, const char *label);
void lk_tile_set_text (LkTile *self, const char *title, const char *subtitle);
/* Shows the description as the tooltip. (gtk_widget_set_tooltip_text() on
 * every bind asks the display where the pointer is: 0.2 ms each, 100 ms for
 * the 512 tiles of a person page's first showing under Xvfb.) */
void lk_tile_set_description_tooltip (LkTile *self, gboolean show);
/* The icon drawn when the tile has no thumbnail (NULL: the default, a
 * person's silhouette), for a tile that stands for no person. */
void lk_tile_set_icon (LkTile *self, const char *icon_name);
/* A title that is a placeholder ("Unnamed person") rather than a name. */
void lk_tile_set_title_dimmed (LkTile *self, gboolean dimmed);
/* A check mark on the thumbnail: the tile is selected. */
void lk_tile_set_checked (LkTile *self, gboolean checked);
gboolean lk_tile_get_checked (LkTile *self);
void lk_tile_clear (LkTile *self);

/* What a tile shows, judged against the texture cache (for the scroll probe
 * and the tests). */
typedef enum
{
  LK_TILE_UNBOUND,      /* set to no face */
  LK_TILE_THUMBNAIL,    /* the texture decoded from its face's thumbnail */
  LK_TILE_LOADING,      /* the placeholder, while the thumbnail loads */
  LK_TILE_NO_THUMBNAIL, /* the placeholder of a missing or broken thumbnail */
  LK_TILE_STALE,        /* a texture decoded from another face's thumbnail */
  LK_TILE_OUT_OF_DATE,  /* the placeholder, though the cache has the thumbnail */
} LkTileCheck;

LkTileCheck lk_tile_check (LkTile *self);
/* The thumbnail the tile is set to, or NULL. */
const char *lk_tile_get_path (LkTile *self);
/* The title under the thumbnail, or NULL. */
const char *lk_tile_get_title (LkTile *self);

G_END_DECLS
