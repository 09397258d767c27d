/* lk-window-actions.c — the window's actions (win.*) and its notification
 *
 * Why it is a file of its own: every button, menu item and shortcut of the
 * window goes through a `win.` action installed here, and every decision's
 * outcome comes back as the one notification at the bottom, whose button
 * does what its kind says (Undo, Redo, Retry, Save Elsewhere…); the window's
 * state and its wiring to the session stay in lk-window.c.
 *
 * - Decisions come back as a notification with Undo at the bottom: an
 *   AdwToast in the AdwToastOverlay of the visible page, which holds the
 *   page's content only, so the notification sits above the page's bar
 *   (Merge Selected, the faces' actions, the answers) and never over it.
 *   libadwaita 1.2 keeps no toast above a bar of the overlay's own child,
 *   hence one overlay per page with a bar; the window moves the shown
 *   notification when the page changes.
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

/* Seconds a notification stays: long enough to read it; one with Undo long
 * enough to decide and reach the button (at 6 s, a click on Undo landed on
 * the face under a notification already gone); a failed save's longest. */
#define TOAST_SECONDS         6
#define TOAST_UNDO_SECONDS    10
#define TOAST_FAILURE_SECONDS 18

/* ---- the notification ------------------------------------------------- */

/* A notification is dismissed only once its overlay has shown it for this
 * long, counted in the overlay's frames: libadwaita 1.2 frees a toast's
 * state when its hide animation ends, but leaves its show animation (300
 * ms, 500 when it replaces one) connected to that freed state, so a toast
 * dismissed before its show animation ended crashed the window when the
 * show animation ended or its page was unmapped (a freed pointer
 * unreferenced in adw_animation_skip's "done": 4 of 15 runs of
 * test-ui-adaptive beside test-ui-keys on one Xvfb at load 10-15, AMD EPYC
 * Zen 1). A delay in wall-clock time (500 ms, before) is not enough: on a
 * loaded machine the overlay's frames, which drive the animation, come
 * later than that. So the delay is counted by a tick callback on the
 * overlay, which runs after the animation's own in the same frame (GTK runs
 * a widget's tick callbacks in the order they were added). An overlay not
 * mapped has no show animation running (libadwaita skips it then). */
#define TOAST_SETTLE_MS 600

static const char *const settle_key = "lk-toast-settle";

typedef struct
{
  GtkWidget *home;    /* the overlay (it lives as long as the window) */
  gint64 first_frame; /* µs: the overlay's first frame after the toast came, or 0 */
  gboolean settled;
} ToastSettle;

static gboolean
on_toast_tick (GtkWidget *home, GdkFrameClock *clock, gpointer user_data)
{
  ToastSettle *settle = g_object_get_data (G_OBJECT (user_data), settle_key);
  gint64 now = gdk_frame_clock_get_frame_time (clock);

  if (settle->first_frame == 0)
    settle->first_frame = now;
  if (now - settle->first_frame < TOAST_SETTLE_MS * 1000)
    return G_SOURCE_CONTINUE;
  settle->settled = TRUE;
  return G_SOURCE_REMOVE;
}

/* Called once `toast` is in `home`. */
static void
watch_toast_settle (AdwToast *toast, GtkWidget *home)
{
  ToastSettle *settle = g_new0 (ToastSettle, 1);

  settle->home = home;
  settle->settled = !gtk_widget_get_mapped (home);
  g_object_set_data_full (G_OBJECT (toast), settle_key, settle, g_free);
  if (!settle->settled)
    gtk_widget_add_tick_callback (home, on_toast_tick, g_object_ref (toast), g_object_unref);
}

static gboolean
toast_settled (AdwToast *toast)
{
  ToastSettle *settle = g_object_get_data (G_OBJECT (toast), settle_key);

  return settle->settled || !gtk_widget_get_mapped (settle->home);
}

static gboolean
on_retired_due (gpointer user_data)
{
  LkWindow *self = user_data;

  for (guint i = 0; i < self->retired->len;)
    {
      AdwToast *toast = g_ptr_array_index (self->retired, i);
      if (toast_settled (toast))
        {
          adw_toast_dismiss (toast);
          g_ptr_array_remove_index (self->retired, i);
        }
      else
        i++;
    }
  if (self->retired->len > 0)
    return G_SOURCE_CONTINUE;
  self->retired_id = 0;
  return G_SOURCE_REMOVE;
}

/* Dismisses `toast` (taking it) once it has settled: at once when it has. */
static void
retire_toast (LkWindow *self, AdwToast *toast)
{
  if (toast_settled (toast))
    {
      adw_toast_dismiss (toast);
      g_object_unref (toast);
      return;
    }
  g_ptr_array_add (self->retired, toast);
  if (self->retired_id == 0)
    self->retired_id = g_timeout_add (100, on_retired_due, self);
}

void
_lk_window_hide_toast (LkWindow *self)
{
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  if (self->toast != NULL)
    retire_toast (self, g_steal_pointer (&self->toast));
}

/* The window goes: its overlays take their toasts with them; none is
 * dismissed (see TOAST_SETTLE_MS). */
void
_lk_window_drop_toasts (LkWindow *self)
{
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  g_clear_handle_id (&self->retired_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  g_clear_object (&self->toast);
  g_ptr_array_set_size (self->retired, 0);
}

static gboolean
on_toast_timeout (gpointer user_data)
{
  LkWindow *self = user_data;

  self->toast_timeout_id = 0;
  _lk_window_hide_toast (self);
  return G_SOURCE_REMOVE;
}

/* Its close button, or the overlay making room for another. */
static void
on_toast_dismissed (AdwToast *toast, gpointer user_data)
{
  LkWindow *self = user_data;

  if (toast != self->toast)
    return;
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  g_clear_object (&self->toast);
}

/* The overlay over the visible page's content, above its bar if it has one. */
static GtkWidget *
toast_home (LkWindow *self)
{
  const char *page = gtk_stack_get_visible_child_name (self->stack);

  if (g_strcmp0 (page, "person") == 0)
    return lk_person_page_get_toast_overlay (self->person_page);
  if (g_strcmp0 (page, "suggestions") == 0)
    return lk_suggestions_page_get_toast_overlay (self->suggestions_page);
  if (g_strcmp0 (page, "people") == 0)
    return self->people_toast_overlay;
  return self->toast_overlay;
}

/* Shows self->toast_message (kind self->toast_kind) in the visible page's
 * overlay, in place of the notification shown. The window's own timeout
 * dismisses it (the toast's is 0), so a notification moved to another page
 * keeps the time it had left. */
static void
post_toast (LkWindow *self)
{
  static const char *const labels[] = {
    [TOAST_PLAIN] = NULL,
    [TOAST_UNDO] = N_ ("_Undo"),
    [TOAST_REDO] = N_ ("_Redo"),
    [TOAST_RETRY_SAVE] = N_ ("_Retry"),
    [TOAST_SAVE_ELSEWHERE] = N_ ("_Save Elsewhere…"),
    [TOAST_SHOW_PERSON] = N_ ("_Show"),
    [TOAST_REFIT] = N_ ("_Fit"),
  };
  GtkWidget *home = toast_home (self);
  /* One line, ending in … when the window is too narrow for it (issue 30:
   * a wrapped notification covered four lines of the grid, and "now" sat
   * alone on a second line); the whole message, or the failure's detail,
   * is the tooltip. A label of ours, not the toast's title: that one is
   * Pango markup, which a library's name may not be. */
  GtkWidget *title = gtk_label_new (self->toast_message);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_single_line_mode (GTK_LABEL (title), TRUE);
  gtk_widget_set_tooltip_text (title, self->toast_detail != NULL ? self->toast_detail
                                                                 : self->toast_message);
  gtk_widget_add_css_class (title, "heading");

  AdwToast *toast = adw_toast_new ("");
  adw_toast_set_custom_title (toast, title);
  adw_toast_set_timeout (toast, 0);
  adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);
  if (labels[self->toast_kind] != NULL)
    {
      adw_toast_set_button_label (toast, _ (labels[self->toast_kind]));
      adw_toast_set_action_name (toast, "win.toast-action");
    }
  g_signal_connect_object (toast, "dismissed", G_CALLBACK (on_toast_dismissed), self, 0);

  /* The new one first (high priority: at once), then the one it replaces,
   * out of the queue, later. */
  AdwToast *shown = g_steal_pointer (&self->toast);
  self->toast = g_object_ref (toast);
  self->toast_label = GTK_LABEL (title);
  self->toast_home = home;
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (home), toast);
  watch_toast_settle (toast, home);
  if (shown != NULL)
    retire_toast (self, shown);
}

/* The page changed: the notification follows it, above its bar. */
void
_lk_window_place_toast (LkWindow *self)
{
  if (self->toast != NULL && toast_home (self) != self->toast_home)
    post_toast (self);
}

void
_lk_window_show_toast_detail (LkWindow *self, const char *message, ToastKind kind,
                              const char *detail)
{
  g_free (self->toast_message);
  self->toast_message = g_strdup (message);
  g_free (self->toast_detail);
  self->toast_detail = g_strdup (detail);
  self->toast_kind = kind;
  post_toast (self);
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_timeout_id = g_timeout_add_seconds (
      kind == TOAST_RETRY_SAVE || kind == TOAST_SAVE_ELSEWHERE ? TOAST_FAILURE_SECONDS
      : kind == TOAST_UNDO || kind == TOAST_REDO || kind == TOAST_SHOW_PERSON || kind == TOAST_REFIT
          ? TOAST_UNDO_SECONDS
          : TOAST_SECONDS,
      on_toast_timeout, self);
}

void
_lk_window_show_toast (LkWindow *self, const char *message, ToastKind kind)
{
  _lk_window_show_toast_detail (self, message, kind, NULL);
}

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

static void
action_back (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session != NULL)
    _lk_window_set_page (self, "people");
  else
    _lk_window_set_page (self, "empty");
}

static void
action_search (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

void
_lk_window_remember_decision (LkWindow *self, const char *message)
{
  g_ptr_array_set_size (self->undone_messages, 0);
  if (message != NULL)
    g_ptr_array_add (self->done_messages, g_strdup (message));
  else
    g_ptr_array_set_size (self->done_messages, 0);
}

/* Moves the newest message of `from` to `to`; returns it, or NULL when
 * `from` is empty (a decision this window did not announce). */
static const char *
shift_message (GPtrArray *from, GPtrArray *to)
{
  if (from->len == 0)
    return NULL;
  char *message = g_ptr_array_steal_index (from, from->len - 1);
  g_ptr_array_add (to, message);
  return message;
}

static void
undo_or_redo (LkWindow *self, gboolean undo)
{
  g_autoptr (GError) error = NULL;

  if (self->session == NULL)
    return;
  /* A calibration change made after the last decision is taken back first:
   * a re-scan, whose notification names it when it lands. */
  if (_lk_window_calibration_undo (self, !undo))
    return;
  if (!(undo ? lk_session_undo (self->session, &error) : lk_session_redo (self->session, &error)))
    {
      _lk_window_show_toast (self, error->message, TOAST_PLAIN);
      return;
    }
  /* Review Suggestions asks the undone answer's question again (issue 30:
   * the queue had moved on, so the face undone was nowhere to be seen). */
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "suggestions") == 0)
    {
      if (undo)
        lk_suggestions_page_undone (self->suggestions_page);
      else
        lk_suggestions_page_redone (self->suggestions_page);
    }
  /* "Undone" alone did not say what (issue 30): the decision's own words. */
  const char *what = undo ? shift_message (self->done_messages, self->undone_messages)
                          : shift_message (self->undone_messages, self->done_messages);
  /* Translators: the notification after Ctrl+Z, "Undone: Named “Ada”" */
  g_autofree char *message = what == NULL ? g_strdup (undo ? _ ("Undone") : _ ("Redone"))
                             : undo       ? g_strdup_printf (_ ("Undone: %s"), what)
                                    /* Translators: after Ctrl+Shift+Z, "Redone: Named “Ada”" */
                                    : g_strdup_printf (_ ("Redone: %s"), what);
  if (undo)
    _lk_window_show_toast (self, message,
                           lk_session_can_redo (self->session) ? TOAST_REDO : TOAST_PLAIN);
  else
    _lk_window_show_toast (self, message, TOAST_UNDO);
}

static void
action_suggestions (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);

  if (self->session == NULL)
    return;
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
  undo_or_redo (LK_WINDOW (widget), TRUE);
}

static void
action_redo (GtkWidget *widget, const char *name, GVariant *parameter)
{
  undo_or_redo (LK_WINDOW (widget), FALSE);
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
        undo_or_redo (self, TRUE);
        break;
      case TOAST_REDO:
        undo_or_redo (self, FALSE);
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
        {
          LkPersonItem *person = self->session != NULL && self->toast_person != NULL
                                     ? lk_session_find_person (self->session, self->toast_person)
                                     : NULL;
          if (person != NULL && lk_person_item_get_n_faces (person) > 0)
            {
              _lk_window_hide_toast (self);
              lk_window_show_person (self, person);
            }
          else
            _lk_window_show_toast (self, _ ("Those faces are no longer a person of their own"),
                                   TOAST_PLAIN);
          break;
        }
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

static void
action_import (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkImportDialogSource source = g_str_equal (name, "win.import-immich") ? LK_IMPORT_DIALOG_IMMICH
                                : g_str_equal (name, "win.import-photos")
                                    ? LK_IMPORT_DIALOG_PHOTOS
                                    : LK_IMPORT_DIALOG_PHOTOPRISM;
  LkImportDialog *dialog = lk_import_dialog_new (GTK_WINDOW (widget), source);

  g_signal_connect_object (dialog, "imported", G_CALLBACK (on_imported), widget, 0);
  gtk_window_present (GTK_WINDOW (dialog));
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
    gtk_widget_class_install_action (widget_class, "win.import-photos", NULL, action_import);
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
