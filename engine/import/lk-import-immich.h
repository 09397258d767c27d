/* lk-import-immich.h — an Immich server's faces as a Likeness library
 *
 * Reads a live Immich PostgreSQL database through libpq (both the 2025
 * singular table names — asset_face, asset, asset_exif — and the older
 * plural ones — asset_faces, assets, exif — detected per database) and
 * writes a library folder in the v1 format: every face with its source id
 * as faces[].id, its 512-d ArcFace embedding, its box scaled from the
 * preview the model ran on to the original's pixels, crop_px from that box,
 * and its photo numbered 0, 1, … in asset order with the asset's uuid kept
 * beside as photos[].source_id.
 *
 * Thumbnails are cut from each asset's preview (asset_file type 'preview'),
 * else its original, found under the media folder (lk-import.h for the rest:
 * people, the folder written beside and renamed).
 */
#pragma once

#include "lk-import.h"

G_BEGIN_DECLS

typedef struct
{
  const char *database; /* a libpq connection URI or key=value string */
  const char *owner;    /* an email or user uuid, or NULL for every owner */
  const char *media;    /* the server's media (upload) folder here, or NULL: no thumbnails */
  const char *model;    /* the server's facial recognition model, or NULL: "buffalo_l" */
  LkImportProgress progress;
  gpointer progress_data;
  LkImportSummary *summary; /* filled on success; may be NULL */
} LkImportImmichOptions;

/* FALSE when this build has no Immich importer (-Dimmich=disabled): the window
 * hides its entry, lk_import_immich () fails with LK_IMPORT_ERROR_UNSUPPORTED. */
gboolean lk_import_immich_available (void);

/* Writes the library into `outdir`, which must not exist or be empty. */
gboolean lk_import_immich (const char *outdir, const LkImportImmichOptions *options,
                           GCancellable *cancellable, GError **error);

/* `path` as the server sees it, found under `media` (NULL when either is
 * NULL): the server's absolute paths start with its own media folder
 * (/usr/src/app/upload, /data, …) whose layout — library/, upload/, thumbs/,
 * encoded-video/, profile/, backups/ — is Immich's; the part from one of
 * those folders on is joined to `media` (the first such cut whose file
 * exists, else the first). A relative path is joined as it is. */
char *lk_import_immich_map_media (const char *media, const char *path);

G_END_DECLS
