/* lk-export-dialog.h — Write Names to Photos…
 *
 * Says what it will do, in numbers, before it does it (a dry run of
 * lk_export_xmp on a worker: sidecars to create, change and leave, photos
 * refused), then writes on a worker with progress and Stop (each sidecar is
 * the old one or the new one, never half), then the summary with every
 * sidecar that could not be written. The photos are never written.
 */
#pragma once

#include <gtk/gtk.h>

#include "export/lk-export-xmp.h"
#include "lk-session.h"

G_BEGIN_DECLS

#define LK_TYPE_EXPORT_DIALOG (lk_export_dialog_get_type ())
G_DECLARE_FINAL_TYPE (LkExportDialog, lk_export_dialog, LK, EXPORT_DIALOG, GtkWindow)

/* FALSE when this build has no XMP sidecars (-Dxmp=disabled). */
gboolean lk_export_dialog_available (void);

/* A modal dialog over `parent` for the people `session` has now (a copy:
 * decisions made while it is open are not in it). Starts counting at once. */
LkExportDialog *lk_export_dialog_new (GtkWindow *parent, LkSession *session);

/* Writes (the Write button); does nothing unless the count is shown. */
void lk_export_dialog_start (LkExportDialog *self);
/* Stops a write (the Stop button). */
void lk_export_dialog_stop (LkExportDialog *self);
/* TRUE while counting or writing. */
gboolean lk_export_dialog_is_busy (LkExportDialog *self);
/* TRUE while the window is being fitted to its text, frame by frame. */
gboolean lk_export_dialog_is_fitting (LkExportDialog *self);
/* TRUE once the write is over (finished or stopped). */
gboolean lk_export_dialog_is_done (LkExportDialog *self);
/* The text shown: the count, the progress or the summary. */
const char *lk_export_dialog_get_text (LkExportDialog *self);
/* The sidecars refused or failed, one message a line ("" when none). */
const char *lk_export_dialog_get_problems (LkExportDialog *self);

/* The options, as their controls set them (each change counts again,
 * unless the write has started): the sidecars' names, digiKam's tags, and
 * where a folder the library names (an imported library's server folder,
 * a photo folder that moved) is on this computer (`from` NULL or "": no
 * mapping). */
void lk_export_dialog_set_sidecar_name (LkExportDialog *self, LkExportXmpSidecarName name);
void lk_export_dialog_set_digikam_tags (LkExportDialog *self, gboolean digikam_tags);
void lk_export_dialog_set_map (LkExportDialog *self, const char *from, const char *to);
/* TRUE when the dialog offers the mapping (the library has photos outside
 * its folder: photo_folders, or a source's paths). */
gboolean lk_export_dialog_offers_map (LkExportDialog *self);

G_END_DECLS
