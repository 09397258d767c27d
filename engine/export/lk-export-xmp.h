/* lk-export-xmp.h — the review written as XMP face regions in sidecars
 *
 * For every photo of a library holding a face of a named, shown person, a
 * sidecar beside the photo (PHOTO.EXT.xmp, or PHOTO.xmp) with the regions
 * Immich, PhotoPrism, digiKam, Lightroom and ExifTool read: mwg-rs:Regions,
 * MP:RegionInfo, Iptc4xmpExt:PersonInImage (and digiKam:TagsList when
 * asked). Originals are never written. An existing sidecar is merged: only
 * Likeness's regions are replaced. Built with -Dxmp (gexiv2); without it
 * lk_export_xmp fails with LK_EXPORT_XMP_ERROR_UNSUPPORTED.
 */
#pragma once

#include <gio/gio.h>

#include "library/lk-library.h"
#include "people/lk-people.h"

G_BEGIN_DECLS

#define LK_EXPORT_XMP_ERROR (lk_export_xmp_error_quark ())
GQuark lk_export_xmp_error_quark (void);

typedef enum
{
  LK_EXPORT_XMP_ERROR_UNSUPPORTED, /* built without gexiv2 */
  LK_EXPORT_XMP_ERROR_PHOTO,       /* the photo is unreadable, or not a file */
  LK_EXPORT_XMP_ERROR_SIDECAR,     /* the sidecar cannot be parsed: left alone */
  LK_EXPORT_XMP_ERROR_WRITE,       /* the sidecar could not be written */
  LK_EXPORT_XMP_ERROR_MISSING,     /* the photo is not where its path (mapped or not) says */
} LkExportXmpError;

typedef enum
{
  LK_EXPORT_XMP_CREATED,
  LK_EXPORT_XMP_UPDATED,
  LK_EXPORT_XMP_UNCHANGED,
  LK_EXPORT_XMP_REFUSED, /* not written: the photo is missing, the sidecar unparsable */
  LK_EXPORT_XMP_FAILED,  /* a write was tried and failed (read-only folder, full disk) */
} LkExportXmpOutcome;

typedef enum
{
  LK_EXPORT_XMP_NAME_FULL,     /* IMG_0042.jpg.xmp: Immich's and darktable's first choice */
  LK_EXPORT_XMP_NAME_BASENAME, /* IMG_0042.xmp: Lightroom's habit */
} LkExportXmpSidecarName;

typedef void (*LkExportXmpProgress) (gsize done, gsize total, gpointer data);

typedef struct
{
  LkExportXmpSidecarName sidecar_name;
  gboolean digikam_tags; /* also digiKam:TagsList People/NAME */
  gboolean dry_run;      /* decide every outcome, write nothing */
  GCancellable *cancellable;
  LkExportXmpProgress progress; /* called in the calling thread, after each photo */
  gpointer progress_data;
  /* Where the photos' folders are on this computer (lk_library_photo_file):
   * an imported library's server folder (its photos[].source_path), or a
   * photo-folder library's folder after a move. */
  const LkPathMap *maps;
  gsize n_maps;
} LkExportXmpOptions;

typedef struct
{
  char *photo;   /* absolute */
  char *sidecar; /* absolute, as named (a symbolic link is written through) */
  LkExportXmpOutcome outcome;
  guint regions; /* Likeness's regions in the sidecar after the run */
  char *message; /* why, for REFUSED and FAILED; NULL otherwise */
} LkExportXmpEntry;

typedef struct
{
  GArray *entries; /* LkExportXmpEntry, one per photo visited */
  gsize photos;    /* photos with a face of a named, shown person */
  gsize regions;   /* regions written (or that would be) */
  gsize created, updated, unchanged, refused, failed;
  gsize without_path; /* photos holding a named face but no file named at all */
  /* Photos holding a named face whose server path (photos[].source_path) no
   * map covers: never opened. */
  gsize unmapped;
  char *unmapped_example; /* the first such path, or NULL */
  /* Of `refused`: photos with a named face that are not where their path
   * (mapped or not) says (LK_EXPORT_XMP_ERROR_MISSING). */
  gsize missing;
  char *missing_example; /* the first such photo's path, or NULL */
  gboolean cancelled;    /* stopped by the cancellable: the rest not visited */
} LkExportXmpReport;

void lk_export_xmp_report_free (LkExportXmpReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkExportXmpReport, lk_export_xmp_report_free)

/* TRUE when built with gexiv2. */
gboolean lk_export_xmp_supported (void);

/* Writes (or with dry_run, plans) every sidecar. Fails (NULL) only when
 * nothing can be done at all (no gexiv2); each photo's own trouble is an
 * entry of the report. */
LkExportXmpReport *lk_export_xmp (const LkLibrary *library, const LkPeople *people,
                                  const LkExportXmpOptions *options, GError **error);

/* The sidecar path for a photo path. */
char *lk_export_xmp_sidecar_path (const char *photo, LkExportXmpSidecarName name);

/* A region's box from display pixels (the library's, photos[].width ×
 * height, the photo turned by its EXIF orientation) to the normalised
 * centre and size in the image as stored (before the orientation is
 * applied), which is what mwg-rs:Area means (see the .c). */
void lk_export_xmp_area (const double box[4], double display_w, double display_h, int orientation,
                         double area[4]);

G_END_DECLS
