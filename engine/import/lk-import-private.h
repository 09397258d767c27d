/* lk-import-private.h — the source an importer fills and lk-import.c writes
 *
 * An importer reads its database into an LkImportSource (photos, faces,
 * embeddings, people) and hands it to lk_import_write (), which cuts the
 * thumbnails, writes the folder beside OUTDIR and renames it into place.
 */
#pragma once

#include "lk-import.h"

#ifdef LK_HAVE_IMPORT_THUMBNAILS
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif

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
  char *original; /* relative to the source's photo_folders[folder] (photos[].original), or NULL */
  guint folder;
} LkImportPhoto;

typedef struct
{
  char *source_id;
  guint photo;    /* index into the source's photos */
  double rel[4];  /* x, y, w, h as fractions of the image it was found on */
  double quality; /* in [0, 1], or < 0 when the source has none */
  gboolean has_score;
  double score; /* the detector's score (faces[].score), when has_score */
  /* A thumbnail already cut and encoded (lk_import_cut_thumbnail) into this
   * file, which the writer links (or copies) into the library; NULL, or a
   * file gone: the writer cuts it from the photo's image. */
  char *thumbnail_file;
} LkImportFace;

typedef struct
{
  char *source_id;
  char *name; /* "" when unnamed */
  gboolean hidden;
  GPtrArray *faces; /* of char *: the source ids of the faces the source assigned */
} LkImportPerson;

typedef struct _LkImportWriter LkImportWriter;

typedef struct
{
  const char *kind;  /* "immich", "photoprism" */
  char *model;       /* the source's recognition model */
  GPtrArray *photos; /* of LkImportPhoto * */
  GArray *faces;     /* of LkImportFace */
  GArray *floats;    /* faces->len × dim */
  guint dim;
  GPtrArray *people;        /* of LkImportPerson * */
  GPtrArray *photo_folders; /* of char *, absolute (the manifest's photo_folders); may be empty */
  /* Private to lk-import.c: the thumbnails being cut while the source is
   * read (lk_import_source_write_early), and the faces handed to it. */
  LkImportWriter *writer;
  guint dispatched_faces;
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

#ifdef LK_HAVE_IMPORT_THUMBNAILS
/* The thumbnail of the face at `rel` (x, y, w, h as fractions of `image`):
 * the square the writer cuts, as a PNG; NULL and `error` when out of memory. */
GBytes *lk_import_cut_thumbnail (GdkPixbuf *image, const double rel[4], GError **error);
#endif

/* Starts writing the library beside `outdir` before the source is read
 * whole (`sink` and `cancellable` must last until lk_import_finish): the
 * folder is made now, and from here on a thread per core cuts the
 * thumbnails of every photo whose faces are all read (each
 * lk_import_source_add_photo () hands over the faces read before it, so
 * faces must be added grouped by photo to be cut early) while the importer
 * reads on. lk_import_finish cuts the rest and writes the library;
 * lk_import_source_clear without it stops the threads and removes the
 * folder. FALSE and `error` when the folder cannot be made. */
gboolean lk_import_source_write_early (LkImportSource *source, const char *outdir,
                                       const LkImportSink *sink, GCancellable *cancellable,
                                       GError **error);

#ifdef LK_HAVE_IMPORT_THUMBNAILS
/* The importers decode at most at 1/2: libjpeg-turbo 2.1.5 (Debian 12), at
 * 1/4 and 1/8, leaves the last one or two columns of every row
 * uninitialised (valgrind, through gdk-pixbuf too: dlib's example photos,
 * 11 of 12 at 1/8, 8 at 1/4, none at 1/2 nor in 40 make-immich previews),
 * and a thumbnail at the right edge would differ from run to run. */
#define LK_IMPORT_MAX_DENOMINATOR 2

/* The 1/d (d = 1, 2, 4 or 8) of a width × height image that libjpeg can
 * decode and from which every one of the `n` faces at rel[] (as in
 * LkImportFace) is still cut from at least as many pixels as its
 * 128-pixel thumbnail has; 1 when one of them needs the whole image. */
guint lk_import_decode_denominator (int width, int height, const double (*rel)[4], guint n);

/* TRUE when every one of the `n` faces at rel[] is cut from at least as
 * many pixels of a width × height image as its 128-pixel thumbnail has:
 * a smaller image that serves them gives the same thumbnails, and is
 * cheaper to decode. */
gboolean lk_import_size_serves_faces (int width, int height, const double (*rel)[4], guint n);

/* The image at `path`, turned by its EXIF orientation, for cutting the
 * faces at rel[0 … n): a JPEG decoded by libjpeg at the scale
 * lk_import_decode_denominator chooses (at most 1/max_denominator; 1: the
 * full size), any image at most 2560 pixels on its longer side.
 * *denominator (may be NULL): the scale used. NULL and `error` when it
 * cannot be read or decoded. */
GdkPixbuf *lk_import_decode_for_faces (const char *path, const double (*rel)[4], guint n,
                                       guint max_denominator, guint *denominator, GError **error);
#endif

/* Cuts thumbnails, writes the library beside `outdir`, renames it there. */
gboolean lk_import_write (const char *outdir, LkImportSource *source, const LkImportSink *sink,
                          GCancellable *cancellable, GError **error);

G_END_DECLS
