/* lk-import-private.h — the source an importer fills and lk-import.c writes
 *
 * An importer reads its database into an LkImportSource (photos, faces,
 * embeddings, people) and hands it to lk_import_write (), which cuts the
 * thumbnails, writes the folder beside OUTDIR and renames it into place.
 */
#pragma once

#include "lk-import.h"

G_BEGIN_DECLS

typedef struct
{
  char *source_id;   /* the source's id of the photo (Immich asset uuid, PhotoPrism file uid) */
  char *source_path; /* the photo's path as the source sees it, or NULL */
  char *taken;       /* ISO 8601, or NULL */
  gint64 width;      /* the original's pixels, oriented as shown; 0 when unknown */
  gint64 height;
  char *image;    /* local file to cut thumbnails from (a preview), or NULL */
  char *fallback; /* local file to cut from when `image` is missing (the original), or NULL */
} LkImportPhoto;

typedef struct
{
  char *source_id;
  guint photo;    /* index into the source's photos */
  double rel[4];  /* x, y, w, h as fractions of the image it was found on */
  double quality; /* in [0, 1], or < 0 when the source has none */
  gboolean has_score;
  double score; /* the detector's score (faces[].score), when has_score */
} LkImportFace;

typedef struct
{
  char *source_id;
  char *name; /* "" when unnamed */
  gboolean hidden;
  GPtrArray *faces; /* of char *: the source ids of the faces the source assigned */
} LkImportPerson;

typedef struct
{
  const char *kind;  /* "immich", "photoprism" */
  char *model;       /* the source's recognition model */
  GPtrArray *photos; /* of LkImportPhoto * */
  GArray *faces;     /* of LkImportFace */
  GArray *floats;    /* faces->len × dim */
  guint dim;
  GPtrArray *people; /* of LkImportPerson * */
} LkImportSource;

typedef struct
{
  LkImportProgress progress;
  gpointer progress_data;
  LkImportSummary *summary; /* may be NULL */
} LkImportSink;

/* The renames a re-import's swap makes (`exchange`: renameat2 with
 * RENAME_EXCHANGE), replaceable by tests to take the paths of a file system
 * without the exchange or of a rename failing half-way. Returns 0 or -1 with
 * errno set. */
typedef int (*LkImportRenameFunc) (const char *from, const char *to, gboolean exchange);
extern LkImportRenameFunc lk_import_rename_func;

/* An embedding of `n` floats read for face `id` (`what`: "Face", "Marker"):
 * 1 to LK_LIBRARY_MAX_DIM, and as long as the first one read (*dim, 0 until
 * then, set here). The error names the face and both lengths. */
gboolean lk_import_check_dim (const char *what, const char *id, guint n, guint *dim,
                              GError **error);

void lk_import_source_init (LkImportSource *source, const char *kind);
void lk_import_source_clear (LkImportSource *source);
LkImportPhoto *lk_import_source_add_photo (LkImportSource *source);
LkImportPerson *lk_import_source_add_person (LkImportSource *source, const char *source_id);

/* TRUE when `outdir` does not exist, is empty, or is a library imported
 * before from a source of this `kind` (then lk_import_write updates it in
 * place). */
gboolean lk_import_check_outdir (const char *outdir, const char *kind, GError **error);

/* Ends an import whose source was read (`read_ok`; else only clears it):
 * a source without faces is refused with the message `empty_format`, the
 * people none of whose faces were imported (all deleted, or another
 * owner's) are dropped, and the library is written (lk_import_write).
 * `source` is cleared either way. */
gboolean lk_import_finish (const char *outdir, LkImportSource *source, gboolean read_ok,
                           const LkImportSink *sink, GCancellable *cancellable, GError **error,
                           const char *empty_format, ...) G_GNUC_PRINTF (7, 8);

/* Cuts thumbnails, writes the library beside `outdir`, renames it there. */
gboolean lk_import_write (const char *outdir, LkImportSource *source, const LkImportSink *sink,
                          GCancellable *cancellable, GError **error);

G_END_DECLS
