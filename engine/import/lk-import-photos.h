/* lk-import-photos.h — a folder of photos as a Likeness library: faces
 * detected, aligned and embedded here (engine/detect)
 *
 * Walks the folders (recursively; hidden folders and files skipped, a
 * folder reached twice through symbolic links searched once), decodes every
 * JPEG, PNG, WebP, TIFF or HEIF file gdk-pixbuf has a loader for, turned by
 * its EXIF orientation, at most LK_PHOTOS_DETECT_SIDE pixels on its longer
 * side, finds the faces in it and embeds them (dlib: lk-detect-dlib.h),
 * photos in parallel on `threads` workers. The library gets every face with
 * its box, crop_px, detection score (faces[].score), thumbnail and a stable
 * id (the photo's content hash and the box: a re-import keeps the user's
 * decisions), every photo by its path inside its folder (photos[].original,
 * the folders absolute in photo_folders: the face viewer and export --xmp
 * find the originals there) and its absolute path as source_path, and the
 * model's calibration prior. Nothing is written into the photo folders.
 *
 * Every photo searched is appended at once to a journal beside OUTDIR
 * (.OUTDIR.photos-journal, lk-photos-journal.h) by its content hash: an
 * import stopped (the cancellable, Ctrl+C) or killed leaves the previous
 * library (or none) as it was, and the next run reuses what the journal
 * has; a re-import searches only new and changed photos, and faces keep
 * their ids, so the user's decisions keep applying.
 *
 * A file that is empty, not an image, undecodable, or whose header claims
 * more than LK_PHOTOS_MAX_PIXELS, and a folder that cannot be read, is
 * counted in the summary by kind and named in summary->problems; the import
 * goes on.
 */
#pragma once

#include "lk-import.h"
#include "detect/lk-detect.h"

G_BEGIN_DECLS

/* Photos are decoded at most this many pixels on their longer side before
 * detection (gdk-pixbuf's JPEG loader scales while decoding). */
#define LK_PHOTOS_DETECT_SIDE 2048
/* A header claiming more pixels than this (a 50,000 × 50,000 PNG) is refused
 * before any pixel is decoded: 200 megapixels, more than any camera's. */
#define LK_PHOTOS_MAX_PIXELS  (200 * 1000 * 1000)

typedef struct
{
  const char *const *folders; /* NULL-terminated; at least one */
  LkDetectorKind detector;
  guint threads; /* workers; 0: one per core */
  LkImportProgress progress;
  gpointer progress_data;
  LkImportSummary *summary; /* filled on success; may be NULL */
  gsize *faces_found; /* when not NULL, the faces found so far, set before each progress call */
  /* For tests (NULL otherwise): called, on a worker thread, after a photo's
   * bytes are read and before they are decoded, so that a test can rewrite
   * the photo at that moment. */
  void (*read_hook) (const char *path);
} LkImportPhotosOptions;

/* FALSE when this build cannot find faces (-Ddetect=disabled). */
gboolean lk_import_photos_available (void);

/* TRUE when `folder` is no library (no library.json in it) but holds a
 * photo (a file named as lk_import_photos searches), in it or in a folder
 * inside it; hidden files and folders are left out. It reads a few
 * thousand names at most: a folder whose photos lie deeper is not
 * recognised. */
gboolean lk_import_photos_probe (const char *folder);

/* The model files `detector` needs that are in none of the folders
 * lk_face_models_dirs () lists (a NULL-terminated list of file names, empty
 * when none is missing), and in *looked_in (when not NULL) those folders.
 * Only whether they are there: each is checked against its SHA-256 when an
 * import loads it. */
char **lk_import_photos_missing_models (LkDetectorKind detector, char ***looked_in);

/* The image formats this build decodes (gdk-pixbuf's loaders), "jpeg, png, …". */
char *lk_import_photos_formats (void);

/* Writes the library into `outdir`: new, empty, or a library imported from
 * photos before (then updated in place, review.json kept). */
gboolean lk_import_photos (const char *outdir, const LkImportPhotosOptions *options,
                           GCancellable *cancellable, GError **error);

G_END_DECLS
