/* lk-texture-cache.h — face thumbnails as GdkTextures, decoded off the main thread
 *
 * Keyed by absolute path. A lookup answers at once from the cache; a miss
 * queues a decode (libpng, engine/library/lk-thumbnail) on a small thread pool and the
 * "loaded" signal names the path when its texture (or its failure) is known;
 * "batch-loaded" follows each batch of "loaded".
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_TEXTURE_CACHE (lk_texture_cache_get_type ())
G_DECLARE_FINAL_TYPE (LkTextureCache, lk_texture_cache, LK, TEXTURE_CACHE, GObject)

typedef enum
{
  LK_TEXTURE_LOADING,
  LK_TEXTURE_READY,
  LK_TEXTURE_MISSING, /* no thumbnail, or the file does not exist */
  LK_TEXTURE_BROKEN,  /* the file exists but is not a PNG Likeness can show */
} LkTextureState;

/* `capacity`: textures kept; 0 for the default. */
LkTextureCache *lk_texture_cache_new (guint capacity);

/* The texture for `path` (NULL: the face has no thumbnail), or NULL while it
 * loads or when it cannot be shown; `state` says which. Never blocks. */
GdkTexture *lk_texture_cache_lookup (LkTextureCache *self, const char *path, LkTextureState *state);
/* What the cache holds for `path`, without queueing a decode or touching the
 * least-recently-used order (for checks): FALSE when it holds nothing. */
gboolean lk_texture_cache_peek (LkTextureCache *self, const char *path, LkTextureState *state,
                                GdkTexture **texture);
/* The path a texture of the cache was decoded from. */
const char *lk_texture_cache_texture_path (GdkTexture *texture);
/* Why `path` is LK_TEXTURE_BROKEN, or NULL. */
const char *lk_texture_cache_get_error (LkTextureCache *self, const char *path);
guint lk_texture_cache_get_size (LkTextureCache *self);
/* How many textures asked for are still being decoded (for checks). */
guint lk_texture_cache_get_n_loading (LkTextureCache *self);

G_END_DECLS
