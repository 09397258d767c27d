/* lk-file-dialog.h — the one place that chooses a file or folder
 *
 * GTK 4.10 replaced GtkFileChooserNative with GtkFileDialog (and deprecated
 * the former). Likeness builds on GTK 4.8 (Debian 12) and runs in the Flatpak
 * on the GNOME runtime (GTK ≥ 4.10), so both sides exist; this file holds the
 * only GTK_CHECK_VERSION for file choosing, and `.ci/check` compiles its 4.10
 * side against newer GTK headers (see lk-file-dialog.c).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Called once, only when the user chose `file`; `parent` is the window the
 * dialog was shown for, kept alive until then. */
typedef void (*LkFileDialogCallback) (GtkWindow *parent, GFile *file, gpointer user_data);

/* A modal folder chooser titled `title`, its accept button `accept` (with a
 * mnemonic, "_Open"). */
void lk_file_dialog_select_folder (GtkWindow *parent, const char *title, const char *accept,
                                   LkFileDialogCallback callback, gpointer user_data);

/* A modal save dialog proposing `initial_name`. */
void lk_file_dialog_save (GtkWindow *parent, const char *title, const char *accept,
                          const char *initial_name, LkFileDialogCallback callback,
                          gpointer user_data);

/* A modal chooser of an existing file (or, when `folder`, a folder) that
 * starts at `start` (a folder, or a file to select; NULL for the default). */
void lk_file_dialog_choose (GtkWindow *parent, const char *title, const char *accept,
                            gboolean folder, GFile *start, LkFileDialogCallback callback,
                            gpointer user_data);

G_END_DECLS
