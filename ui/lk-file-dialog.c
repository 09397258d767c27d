/* lk-file-dialog.c — GtkFileDialog on GTK ≥ 4.10, GtkFileChooserNative before
 *
 * Both go through the portal when there is one (the Flatpak), so the user
 * sees the same dialog; what differs is the API. The 4.10 side is what the
 * Flatpak runs but Debian 12's GTK 4.8 never compiles, so `.ci/check`
 * compiles this file with -fsyntax-only against the headers of a newer
 * libgtk-4-dev (Debian trixie's, extracted with dpkg-deb, never installed).
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-file-dialog.h"

typedef struct
{
  GtkWindow *parent; /* a strong reference while the dialog is up */
  LkFileDialogCallback callback;
  gpointer user_data;
} Request;

static Request *
request_new (GtkWindow *parent, LkFileDialogCallback callback, gpointer user_data)
{
  Request *request = g_new (Request, 1);

  request->parent = g_object_ref (parent);
  request->callback = callback;
  request->user_data = user_data;
  return request;
}

static void
request_finish (Request *request, GFile *file)
{
  if (file != NULL)
    request->callback (request->parent, file, request->user_data);
  g_object_unref (request->parent);
  g_free (request);
}

typedef enum
{
  ACTION_SELECT_FOLDER,
  ACTION_OPEN,
  ACTION_SAVE,
} Action;

#if GTK_CHECK_VERSION(4, 10, 0)

static void
on_folder_chosen (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GFile) file
      = gtk_file_dialog_select_folder_finish (GTK_FILE_DIALOG (source), result, NULL);
  request_finish (data, file);
}

static void
on_save_chosen (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GFile) file = gtk_file_dialog_save_finish (GTK_FILE_DIALOG (source), result, NULL);
  request_finish (data, file);
}

static void
on_file_chosen (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GFile) file = gtk_file_dialog_open_finish (GTK_FILE_DIALOG (source), result, NULL);
  request_finish (data, file);
}

static void
run (GtkWindow *parent, Action action, const char *title, const char *accept,
     const char *initial_name, GFile *start, Request *request)
{
  g_autoptr (GtkFileDialog) dialog = gtk_file_dialog_new ();

  gtk_file_dialog_set_title (dialog, title);
  gtk_file_dialog_set_accept_label (dialog, accept);
  gtk_file_dialog_set_modal (dialog, TRUE);
  if (initial_name != NULL)
    gtk_file_dialog_set_initial_name (dialog, initial_name);
  if (start != NULL)
    {
      if (g_file_query_file_type (start, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY)
        gtk_file_dialog_set_initial_folder (dialog, start);
      else
        gtk_file_dialog_set_initial_file (dialog, start);
    }
  switch (action)
    {
      case ACTION_SELECT_FOLDER:
        gtk_file_dialog_select_folder (dialog, parent, NULL, on_folder_chosen, request);
        break;
      case ACTION_OPEN:
        gtk_file_dialog_open (dialog, parent, NULL, on_file_chosen, request);
        break;
      case ACTION_SAVE:
        gtk_file_dialog_save (dialog, parent, NULL, on_save_chosen, request);
        break;
    }
}

#else

static void
on_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT
                               ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog))
                               : NULL;
  request_finish (data, file);
  g_object_unref (dialog);
}

static void
run (GtkWindow *parent, Action action, const char *title, const char *accept,
     const char *initial_name, GFile *start, Request *request)
{
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      title, parent,
      action == ACTION_SELECT_FOLDER ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
      : action == ACTION_OPEN        ? GTK_FILE_CHOOSER_ACTION_OPEN
                                     : GTK_FILE_CHOOSER_ACTION_SAVE,
      accept, _ ("_Cancel"));

  if (initial_name != NULL)
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), initial_name);
  if (start != NULL)
    {
      if (g_file_query_file_type (start, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), start, NULL);
      else
        gtk_file_chooser_set_file (GTK_FILE_CHOOSER (dialog), start, NULL);
    }
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_response), request);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

#endif

void
lk_file_dialog_select_folder (GtkWindow *parent, const char *title, const char *accept,
                              LkFileDialogCallback callback, gpointer user_data)
{
  g_return_if_fail (GTK_IS_WINDOW (parent));
  g_return_if_fail (callback != NULL);
  run (parent, ACTION_SELECT_FOLDER, title, accept, NULL, NULL,
       request_new (parent, callback, user_data));
}

void
lk_file_dialog_save (GtkWindow *parent, const char *title, const char *accept,
                     const char *initial_name, LkFileDialogCallback callback, gpointer user_data)
{
  g_return_if_fail (GTK_IS_WINDOW (parent));
  g_return_if_fail (callback != NULL);
  run (parent, ACTION_SAVE, title, accept, initial_name, NULL,
       request_new (parent, callback, user_data));
}

void
lk_file_dialog_choose (GtkWindow *parent, const char *title, const char *accept, gboolean folder,
                       GFile *start, LkFileDialogCallback callback, gpointer user_data)
{
  g_return_if_fail (GTK_IS_WINDOW (parent));
  g_return_if_fail (start == NULL || G_IS_FILE (start));
  g_return_if_fail (callback != NULL);
  run (parent, folder ? ACTION_SELECT_FOLDER : ACTION_OPEN, title, accept, NULL, start,
       request_new (parent, callback, user_data));
}
