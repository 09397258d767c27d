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
 * The folder is written beside OUTDIR (OUTDIR.importing-XXXXXX) and renamed
 * over it only when complete, so an interrupted import leaves no
 * half-written library.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LK_IMPORT_ERROR (lk_import_error_quark ())
GQuark lk_import_error_quark (void);

typedef enum
{
  LK_IMPORT_ERROR_CONNECT,      /* the database cannot be reached */
  LK_IMPORT_ERROR_SCHEMA,       /* the database is not what the importer reads (a table is missing) */
  LK_IMPORT_ERROR_DATA,         /* a row is unusable (a face without an embedding, a bad box) */
  LK_IMPORT_ERROR_OUTPUT,       /* OUTDIR cannot be written or is not empty */
  LK_IMPORT_ERROR_CANCELLED,
  LK_IMPORT_ERROR_UNSUPPORTED,  /* built without this importer */
} LkImportError;

/* Called from the importing thread after every batch of faces read. */
typedef void (*LkImportProgress) (gsize faces_read, gsize faces_total, gpointer user_data);

typedef struct
{
  const char *database;   /* a libpq connection URI or key=value string */
  const char *owner;      /* an email or user uuid, or NULL for every owner */
  LkImportProgress progress;
  gpointer progress_data;
} LkImportImmichOptions;

/* Writes the library into `outdir`, which must not exist or be empty. */
gboolean lk_import_immich (const char                  *outdir,
                           const LkImportImmichOptions *options,
                           GCancellable                *cancellable,
                           GError                     **error);

/* `uri` with any password replaced by "***", for messages. */
char    *lk_import_redact_uri (const char *uri);

G_END_DECLS
