/* lk-window-actions.c — the window's actions (win.*)
 *
 * Why it is a file of its own: every button, menu item and shortcut of the
 * window goes through a `win.` action installed here; what the one
 * notification at the bottom says is lk-window-toasts.c's, what Undo and
 * Redo say lk-window-history.c's, and the window's state and its wiring to
 * the session stay in lk-window.c.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-export-dialog.h"
#include "lk-import-dialog.h"
#include "lk-pair-dialog.h"
#include "lk-display-path.h"
#include "lk-file-dialog.h"
#include "people/lk-review.h"
#include "library/lk-sample.h"
#include "lk-window-private.h"

/* ---- actions ---------------------------------------------------------- */

void
_lk_window_open_folder_file (LkWindow *self, GFile *file)
{
  g_autofree char *path = g_file_get_path (file);

  if (path == NULL)
    {
      g_autoptr (GError) error = g_error_new (G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                              _ ("Likeness can only open local folders"));
      g_autofree char *uri = g_file_get_uri (file);
      _lk_window_show_error (self, uri, error);
      return;
    }
  _lk_window_start_load (self, path, FALSE);
}

static void
on_folder_chosen (GtkWindow *parent, GFile *file, gpointer user_data)
{
  _lk_window_open_folder_file (LK_WINDOW (parent), file);
}

static void
action_open (GtkWidget *widget, const char *name, GVariant *parameter)
{
  lk_file_dialog_select_folder (GTK_WINDOW (widget), _ ("Open a Library Folder"), _ ("_Open"),
                                on_folder_chosen, NULL);
}

/* The decisions go to `folder`/review.json from now on; the banner and a
 * notification say where, or why not. */
void
_lk_window_save_elsewhere (LkWindow *self, GFile *folder)
{
  g_autofree char *path = g_file_get_path (folder);
  g_autoptr (GError) error = NULL;

  if (self->session == NULL)
    return;
  if (path == NULL)
    error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                 _ ("Decisions can only be saved in a local folder"));
  else if (lk_session_save_elsewhere (self->session, path, &error))
    {
      g_autofree char *where = lk_display_path (lk_session_get_review_path (self->session));
      g_autofree char *message = g_strdup_printf (_ ("Decisions saved in %s"), where);
      self->told_read_only = FALSE;
      _lk_window_update_banner (self);
      _lk_window_show_toast (self, message, TOAST_PLAIN);
      return;
    }
  _lk_window_update_banner (self);
  g_autofree char *name = lk_display_path (path != NULL ? path : "");
  g_autofree char *message
      = g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_READ_ONLY)
            ? g_strdup_printf (_ ("The decisions could not be saved in “%s” either: it cannot be "
                                  "written (a read-only medium, or no permission). Choose another "
                                  "folder."),
                               name)
            : g_strdup_printf (_ ("The decisions could not be saved in “%s”: %s"), name,
                               error->message);
  _lk_window_show_toast (self, message, TOAST_SAVE_ELSEWHERE);
}

static void
on_review_folder_chosen (GtkWindow *parent, GFile *file, gpointer user_data)
{
  _lk_window_save_elsewhere (LK_WINDOW (parent), file);
}

static void
action_save_elsewhere (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session == NULL)
    return;
  lk_file_dialog_select_folder (GTK_WINDOW (self), _ ("Choose a Folder for the Decisions"),
                                _ ("_Save Here"), on_review_folder_chosen, NULL);
}

static void
action_open_sample (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (!lk_window_open_sample (self))
    {
      g_autofree char *folder = lk_sample_default_dir ();
      g_autoptr (GError) error = g_error_new (
          G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
          _ ("The sample library is not installed in %s. Build it with “likeness-cli make-sample "
             "%s”, or open a library of your own."),
          folder, folder);
      _lk_window_show_error (self, folder, error);
    }
}

static void
action_open_recent (GtkWidget *widget, const char *name, GVariant *parameter)
{
  _lk_window_start_load (LK_WINDOW (widget), g_variant_get_string (parameter, NULL), FALSE);
}

static void
action_rescan (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session != NULL)
    _lk_window_start_load (self, lk_session_get_folder (self->session), FALSE);
}

static void
action_retry (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->failed_folder != NULL)
    _lk_window_start_load (self, self->failed_folder, FALSE);
}

static void
action_start_over (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->failed_folder != NULL)
    _lk_window_start_load (self, self->failed_folder, TRUE);
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  _lk_window_clear_job (self);
  if (self->session != NULL)
    {
      const char *page = gtk_stack_get_visible_child_name (self->stack);
      if (g_strcmp0 (page, "loading") == 0)
        _lk_window_set_page (self, "people");
    }
  else
    _lk_window_set_page (self, "empty");
}

/* The person whose tile in the grid has the keys, or NULL. */
static LkPersonItem *
focused_tile_person (LkWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  while (focus != NULL && gtk_widget_get_parent (focus) != GTK_WIDGET (self->people_grid))
    focus = gtk_widget_get_parent (focus);
  GtkWidget *tile = focus != NULL ? gtk_widget_get_first_child (focus) : NULL;
  GtkListItem *list_item
      = tile != NULL ? g_object_get_data (G_OBJECT (tile), "lk-list-item") : NULL;
  return list_item != NULL ? gtk_list_item_get_item (list_item) : NULL;
}

/* Review Suggestions is left for where it was opened from: the person page
 * if its person is still one (an answer may have merged or emptied them),
 * else the grid, the keys on the tile that had them, as a dialog closing
 * gives the focus back. */
static void
back_from_suggestions (LkWindow *self)
{
  LkPersonItem *person = lk_person_page_get_person (self->person_page);
  LkPersonItem *tile = self->review_from_tile != NULL
                           ? lk_session_find_person (self->session, self->review_from_tile)
                           : NULL;

  if (self->review_from_person && person != NULL
      && lk_session_find_person (self->session, lk_person_item_get_id (person)) == person)
    {
      _lk_window_set_page (self, "person");
      lk_person_page_focus_faces (self->person_page);
      return;
    }
  _lk_window_set_page (self, "people");
  if (tile != NULL)
    _lk_window_focus_person (self, tile);
}

static void
action_back (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);
  const char *page = lk_window_get_page (self);
  gboolean from_person = g_strcmp0 (page, "person") == 0;

  if (self->session != NULL && g_strcmp0 (page, "suggestions") == 0)
    {
      back_from_suggestions (self);
      return;
    }
  if (self->session != NULL)
    _lk_window_set_page (self, "people");
  else
    _lk_window_set_page (self, "empty");
  /* Back where one came from: on the person just seen. */
  if (from_person && self->session != NULL && lk_person_page_get_person (self->person_page) != NULL)
    _lk_window_focus_person (self, lk_person_page_get_person (self->person_page));
}

static void
action_search (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
action_suggestions (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session == NULL)
    return;
  const char *page = lk_window_get_page (self);
  if (g_strcmp0 (page, "suggestions") != 0)
    {
      LkPersonItem *tile = focused_tile_person (self);
      self->review_from_person = g_strcmp0 (page, "person") == 0;
      g_free (self->review_from_tile);
      self->review_from_tile = tile != NULL ? g_strdup (lk_person_item_get_id (tile)) : NULL;
    }
  lk_suggestions_page_start (self->suggestions_page);
  _lk_window_set_page (self, "suggestions");
}

static void
action_ask_pairs (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session == NULL || !lk_session_is_loaded (self->session))
    return;
  gtk_window_present (
      GTK_WINDOW (lk_pair_dialog_new (GTK_WINDOW (self), self->session, self->cache)));
}

static void
action_fit_decisions (GtkWidget *widget, const char *name, GVariant *parameter)
{
  _lk_window_calibrate (LK_WINDOW (widget), LK_CALIBRATION_CHANGE_FIT,
                        LK_CALIBRATION_FROM_DECISIONS);
}

static void
action_undo (GtkWidget *widget, const char *name, GVariant *parameter)
{
  _lk_window_undo_or_redo (LK_WINDOW (widget), TRUE);
}

static void
action_redo (GtkWidget *widget, const char *name, GVariant *parameter)
{
  _lk_window_undo_or_redo (LK_WINDOW (widget), FALSE);
}

static void
action_dismiss (GtkWidget *widget, const char *name, GVariant *parameter)
{
  _lk_window_hide_toast (LK_WINDOW (widget));
}

static void
action_toast (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);
  g_autoptr (GError) error = NULL;

  switch (self->toast_kind)
    {
      case TOAST_PLAIN:
        _lk_window_hide_toast (self);
        break;
      case TOAST_UNDO:
        _lk_window_undo_or_redo (self, TRUE);
        break;
      case TOAST_REDO:
        _lk_window_undo_or_redo (self, FALSE);
        break;
      case TOAST_RETRY_SAVE:
        if (self->session != NULL && !lk_session_retry_save (self->session, &error))
          _lk_window_save_failed (self->session, error, self);
        else
          {
            _lk_window_update_banner (self);
            _lk_window_show_toast (self, _ ("Saved"), TOAST_PLAIN);
          }
        break;
      case TOAST_SAVE_ELSEWHERE:
        _lk_window_hide_toast (self);
        gtk_widget_activate_action (widget, "win.save-elsewhere", NULL);
        break;
      case TOAST_SHOW_PERSON:
        _lk_window_undo_or_redo (self, TRUE);
        break;
      case TOAST_REFIT:
        _lk_window_hide_toast (self);
        _lk_window_calibrate (self, LK_CALIBRATION_CHANGE_FIT, LK_CALIBRATION_FROM_DECISIONS);
        break;
    }
}

/* ---- installing them -------------------------------------------------- */

/* Import from Immich… / PhotoPrism…, Add a Photo Folder…: the dialog imports, the window opens
 * the new library and says what came across. */
static void
on_imported (LkImportDialog *dialog, const char *folder, const char *summary, gpointer user_data)
{
  LkWindow *self = user_data;

  _lk_window_start_load (self, folder, FALSE);
  _lk_window_show_toast (self, summary, TOAST_PLAIN);
}

static LkImportDialog *
open_import_dialog (GtkWidget *widget, LkImportDialogSource source)
{
  LkImportDialog *dialog = lk_import_dialog_new (GTK_WINDOW (widget), source);

  g_signal_connect_object (dialog, "imported", G_CALLBACK (on_imported), widget, 0);
  gtk_window_present (GTK_WINDOW (dialog));
  return dialog;
}

static void
action_import (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkImportDialogSource source = g_str_equal (name, "win.import-immich") ? LK_IMPORT_DIALOG_IMMICH
                                : g_str_equal (name, "win.import-photos")
                                    ? LK_IMPORT_DIALOG_PHOTOS
                                    : LK_IMPORT_DIALOG_PHOTOPRISM;
  open_import_dialog (widget, source);
}

/* A folder of photos opened as a library (the error page's Find the Faces
 * in These Photos…): Add a Photo Folder… with that folder filled in. */
static void
action_find_faces (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->failed_folder == NULL)
    return;
  LkImportDialog *dialog = open_import_dialog (widget, LK_IMPORT_DIALOG_PHOTOS);
  lk_import_dialog_set_database (dialog, self->failed_folder);
}

/* Write Names to Photos…: the dialog counts, asks, writes and sums up. */
static void
action_write_names (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);
  if (self->session == NULL || lk_session_peek_people (self->session) == NULL)
    return;
  LkExportDialog *dialog = lk_export_dialog_new (GTK_WINDOW (widget), self->session);
  gtk_window_present (GTK_WINDOW (dialog));
}

void
_lk_window_class_install_actions (GtkWidgetClass *widget_class)
{
  /* Only with XMP sidecars in this build (-Dxmp): hidden otherwise. */
  if (lk_export_dialog_available ())
    gtk_widget_class_install_action (widget_class, "win.write-names", NULL, action_write_names);
  /* Only the importers this build has: a missing action hides its menu
   * item (hidden-when action-missing) and its empty-page button (visible
   * bound to sensitive in lk-window.ui). */
  if (lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    gtk_widget_class_install_action (widget_class, "win.import-immich", NULL, action_import);
  if (lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOPRISM))
    gtk_widget_class_install_action (widget_class, "win.import-photoprism", NULL, action_import);
  if (lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS))
    {
      gtk_widget_class_install_action (widget_class, "win.import-photos", NULL, action_import);
      gtk_widget_class_install_action (widget_class, "win.find-faces", NULL, action_find_faces);
    }
  gtk_widget_class_install_action (widget_class, "win.open", NULL, action_open);
  gtk_widget_class_install_action (widget_class, "win.open-sample", NULL, action_open_sample);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action (widget_class, "win.rescan", NULL, action_rescan);
  gtk_widget_class_install_action (widget_class, "win.retry", NULL, action_retry);
  gtk_widget_class_install_action (widget_class, "win.start-over", NULL, action_start_over);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "win.back", NULL, action_back);
  gtk_widget_class_install_action (widget_class, "win.search", NULL, action_search);
  gtk_widget_class_install_action (widget_class, "win.suggestions", NULL, action_suggestions);
  gtk_widget_class_install_action (widget_class, "win.ask-pairs", NULL, action_ask_pairs);
  gtk_widget_class_install_action (widget_class, "win.fit-decisions", NULL, action_fit_decisions);
  gtk_widget_class_install_action (widget_class, "win.undo", NULL, action_undo);
  gtk_widget_class_install_action (widget_class, "win.redo", NULL, action_redo);
  gtk_widget_class_install_action (widget_class, "win.dismiss", NULL, action_dismiss);
  gtk_widget_class_install_action (widget_class, "win.toast-action", NULL, action_toast);
  gtk_widget_class_install_action (widget_class, "win.save-elsewhere", NULL, action_save_elsewhere);
  gtk_widget_class_install_property_action (widget_class, "win.sort", "sort-order");
  gtk_widget_class_install_property_action (widget_class, "win.show-hidden", "show-hidden");
}
