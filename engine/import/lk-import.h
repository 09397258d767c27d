/* lk-import.h — what every importer shares: errors, progress, the summary
 *
 * An importer (lk-import-immich.h, lk-import-photoprism.h) reads a photo
 * manager's faces and writes a library folder in the v1 format: every face
 * with its source id as faces[].id, every photo with its source id beside the
 * integer Likeness numbers it with, a PNG thumbnail cut from the source's
 * preview (or original), and the people the user named in the source
 * (LIBRARY-FORMAT.md, "people").
 *
 * The folder is written beside OUTDIR (.OUTDIR.importing-XXXXXX) and renamed
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
  LK_IMPORT_ERROR_CONNECT, /* the database cannot be reached */
  LK_IMPORT_ERROR_SCHEMA,  /* the database is not what the importer reads (a table is missing) */
  LK_IMPORT_ERROR_DATA,    /* a row is unusable (a face without an embedding, a bad box) */
  LK_IMPORT_ERROR_OUTPUT,  /* OUTDIR cannot be written or is not empty */
  LK_IMPORT_ERROR_CANCELLED,
  LK_IMPORT_ERROR_UNSUPPORTED, /* built without this importer */
} LkImportError;

typedef enum
{
  LK_IMPORT_PHASE_READ,       /* faces read from the database */
  LK_IMPORT_PHASE_THUMBNAILS, /* faces whose thumbnail was cut (or found missing) */
  LK_IMPORT_PHASE_DETECT,     /* photos searched for faces (lk-import-photos.h) */
} LkImportPhase;

/* Called from the importing thread (or one of its workers, never two at once)
 * after every batch. */
typedef void (*LkImportProgress) (LkImportPhase phase, gsize done, gsize total, gpointer user_data);

/* What an import did, for the summary a front end prints. */
typedef struct
{
  gsize faces;
  gsize photos;
  gsize thumbnails;           /* cut and written */
  gsize missing_previews;     /* faces whose preview and original are both missing */
  gsize undecodable_previews; /* faces whose image exists but could not be decoded */
  gsize people;               /* source people written (named or hidden) */
  gsize refused_assignments;  /* source assignments Likeness's rules refuse */
  char *model;                /* the source's recognition model */
  gboolean model_known;       /* its calibration prior was written; FALSE: the default applies */
  char *first_problem;        /* the first missing/undecodable image or refusal, or NULL */

  /* A folder of photos (lk-import-photos.h): the photos searched, and every
   * file or folder refused, by what was wrong with it. */
  gsize photos_searched;   /* decoded and searched for faces */
  gsize photos_with_faces; /* of those, with at least one face */
  gsize photos_reused;     /* of those, whose faces came from the previous import or the journal */
  gsize bad_empty;         /* zero-byte files */
  gsize bad_not_image;     /* not in a format this build reads (a text file named .jpg) */
  gsize
      bad_no_loader; /* a WebP, HEIF, AVIF or TIFF file (by its bytes) with no gdk-pixbuf loader */
  gsize bad_undecodable; /* an image gdk-pixbuf starts reading and fails on (truncated, corrupt) */
  gsize bad_too_large;   /* refused from its header's dimensions, before decoding */
  gsize bad_unreadable;  /* files and folders that cannot be opened (permissions, gone) */
  gsize bad_changed;     /* changed or deleted while it was read */
  GPtrArray *problems;   /* of char *: "PATH: what is wrong", every refusal, in walk order */
} LkImportSummary;

void lk_import_summary_clear (LkImportSummary *summary);

/* The figures a front end shows while an import runs (the CLI on stderr,
 * the window's import dialog): fed every progress call, it knows the
 * phase's rate and the time left. */
typedef struct
{
  LkImportPhase phase;
  gint64 phase_start; /* g_get_monotonic_time () when the phase began */
  gsize done;
  gsize total;
  double per_second;   /* items of the phase per second, 0 until measurable */
  double seconds_left; /* < 0 until measurable */
} LkImportRate;

/* An import started at `now` (monotonic µs), reading faces. */
void lk_import_rate_init (LkImportRate *rate, gint64 now);
/* A progress call at `now`: a new phase starts its clock again. */
void lk_import_rate_update (LkImportRate *rate, LkImportPhase phase, gsize done, gsize total,
                            gint64 now);

/* `uri` with any password replaced by "***", for messages. */
char *lk_import_redact_uri (const char *uri);

G_END_DECLS
