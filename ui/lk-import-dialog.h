/* lk-import-dialog.h — Import from Immich… / Import from PhotoPrism… /
 * Add a Photo Folder…
 *
 * Asks for what the importer needs (the database, the media folders, the
 * owner for Immich, the photo folder, where the library goes), runs
 * lk_import_immich (), lk_import_photoprism () or lk_import_photos () on a worker with the CLI's
 * progress (faces read, thumbnails cut, per second, time left), cancellable, shows the importer's
 * own error messages, and emits ::imported with the new library's folder
 * when it is written. The window opens it.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum
{
  LK_IMPORT_DIALOG_IMMICH,
  LK_IMPORT_DIALOG_PHOTOPRISM,
  LK_IMPORT_DIALOG_PHOTOS, /* a folder of photos: faces found here (lk-import-photos.h) */
} LkImportDialogSource;

#define LK_TYPE_IMPORT_DIALOG (lk_import_dialog_get_type ())
G_DECLARE_FINAL_TYPE (LkImportDialog, lk_import_dialog, LK, IMPORT_DIALOG, GtkWindow)

/* FALSE when this build has no importer for `source` (-Dimmich=disabled,
 * -Dphotoprism=disabled). */
gboolean lk_import_dialog_available (LkImportDialogSource source);

/* TRUE when `folder` is no library but a folder of photos (no
 * library.json; photos in it or in a folder inside), which Add a Photo
 * Folder… makes a library of. Reads the disk: call it from a worker. */
gboolean lk_import_dialog_is_photo_folder (const char *folder);

/* A modal dialog over `parent`. */
LkImportDialog *lk_import_dialog_new (GtkWindow *parent, LkImportDialogSource source);

LkImportDialogSource lk_import_dialog_get_source (LkImportDialog *self);

/* The fields, as the user would type them: the database (Immich: a libpq
 * URL; PhotoPrism: its index.db file; a photo folder: the folder), the media folder (Immich: its
 * upload location; PhotoPrism: its storage folder), PhotoPrism's originals, the Immich owner (email
 * or uuid; "" for everyone's), and the output folder. The output starts at a default under the
 * user's Pictures folder named after the source, until it is set. */
void lk_import_dialog_set_database (LkImportDialog *self, const char *database);
/* What the importer will be given as the database: for Immich, the address
 * with the password from its own entry put back. */
char *lk_import_dialog_get_database (LkImportDialog *self);
void lk_import_dialog_set_media (LkImportDialog *self, const char *folder);
void lk_import_dialog_set_originals (LkImportDialog *self, const char *folder);
void lk_import_dialog_set_owner (LkImportDialog *self, const char *owner);
void lk_import_dialog_set_output (LkImportDialog *self, const char *folder);
/* The output folder as a path ("~" expanded), or NULL when empty. */
char *lk_import_dialog_get_output (LkImportDialog *self);

/* Starts the import (the Import button, action "import.start"); does nothing
 * while one runs or when a required field is empty. */
void lk_import_dialog_start (LkImportDialog *self);
/* Cancels a running import (the Cancel button while it runs). */
void lk_import_dialog_cancel (LkImportDialog *self);
/* TRUE while an import runs. */
gboolean lk_import_dialog_is_running (LkImportDialog *self);
/* For the tests: called on the import's worker with its task as the worker
 * returns; see lk_session_worker_hook. */
extern void (*lk_import_dialog_worker_hook) (GTask *task);
/* The error shown (the importer's message), or NULL. */
const char *lk_import_dialog_get_error (LkImportDialog *self);
/* The note shown above the form (a cancelled import), or NULL. */
const char *lk_import_dialog_get_note (LkImportDialog *self);
/* What the dialog shows: "form", "progress", or "models" (a photo folder's
 * import without dlib's face models: what is missing and how to get it, in
 * place of the form). */
const char *lk_import_dialog_get_page (LkImportDialog *self);
/* The progress line: "4,000 of 20,000 faces read · 2,000 per second · about 8 s left". */
const char *lk_import_dialog_get_progress (LkImportDialog *self);

G_END_DECLS
