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
/* TRUE once the write is over (finished or stopped). */
gboolean lk_export_dialog_is_done (LkExportDialog *self);
/* The text shown: the count, the progress or the summary. */
const char *lk_export_dialog_get_text (LkExportDialog *self);
/* The sidecars refused or failed, one message a line ("" when none). */
const char *lk_export_dialog_get_problems (LkExportDialog *self);

G_END_DECLS
