/* lk-import-photoprism.h — a PhotoPrism index's faces as a Likeness library
 *
 * Reads PhotoPrism's SQLite index (storage/index.db, opened read-only):
 * every face marker (markers.marker_type 'face', not marker_invalid) with
 * its FaceNet embedding (the first of markers.embeddings_json), its box
 * (x, y, w, h relative to the image) scaled to the file's pixels, its file
 * numbered 0, 1, … in file_uid order with the uid kept beside as
 * photos[].source_id, and the people (subjects of type 'person') with the
 * markers assigned to them. Thumbnails are cut from the original under
 * --originals, else from the smallest cached "fit" thumbnail under
 * storage/cache/thumbnails that still gives each of the photo's faces its
 * 128 pixels (the largest when none does; lk-import.h for the rest).
 *
 * MariaDB-backed PhotoPrism servers are not read yet: a URL is refused
 * with a message saying so.
 */
#pragma once

#include "lk-import.h"

G_BEGIN_DECLS

typedef struct
{
  const char *database;  /* the index.db file */
  const char *storage;   /* PhotoPrism's storage folder (its cache), or NULL */
  const char *originals; /* PhotoPrism's originals folder, or NULL */
  LkImportProgress progress;
  gpointer progress_data;
  LkImportSummary *summary; /* filled on success; may be NULL */
} LkImportPhotoprismOptions;

/* FALSE when this build has no PhotoPrism importer (-Dphotoprism=disabled): the window
 * hides its entry, lk_import_photoprism () fails with LK_IMPORT_ERROR_UNSUPPORTED. */
gboolean lk_import_photoprism_available (void);

/* Writes the library into `outdir`, which must not exist or be empty. */
gboolean lk_import_photoprism (const char *outdir, const LkImportPhotoprismOptions *options,
                               GCancellable *cancellable, GError **error);

G_END_DECLS
