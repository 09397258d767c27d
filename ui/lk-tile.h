/* lk-tile.h — a face thumbnail with an optional title and subtitle, for the grids */
#pragma once

#include <gtk/gtk.h>

#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_TILE (lk_tile_get_type ())
G_DECLARE_FINAL_TYPE (LkTile, lk_tile, LK, TILE, GtkWidget)

/* `size`: the thumbnail's side in logical pixels. */
GtkWidget *lk_tile_new       (LkTextureCache *cache,
                              int             size);
/* Shows the thumbnail at `path` (NULL: none); `description` is the accessible
 * name of the image. */
void       lk_tile_set_face  (LkTile         *self,
                              const char     *path,
                              const char     *description);
void       lk_tile_set_text  (LkTile         *self,
                              const char     *title,
                              const char     *subtitle);
void       lk_tile_clear     (LkTile         *self);

G_END_DECLS
