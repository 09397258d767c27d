/* lk-window-load.c — a library onto the window: loading, the session's
 * wiring, the recent libraries
 *
 * Why it is a file of its own: a load is the window's longest path (start,
 * progress, landing, failure, a re-scan landing in the session on screen)
 * and the session it lands is wired here too (its signals, its people into
 * the grid's models), so lk-window.c keeps the pages, the grid and the
 * GObject. The recent libraries are here because only a landed load adds
 * one.
 *
 * - While a library is already on screen, a new load or re-scan shows its
 *   progress in a bar above the people instead of replacing them, so the
 *   user can keep scrolling and Cancel leaves the previous people exactly as
 *   they were. A re-scan loads the session on screen again, so decisions
 *   made while it runs wait in the session's queue and apply to the new
 *   people; opening another library loads a new session, swapped in when it
 *   lands. Starting a load cancels the one before it, whose result is then
 *   dropped unseen.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "library/lk-library.h"
#include "lk-display-path.h"
#include "lk-import-dialog.h"
#include "lk-grid-fit.h"
#include "lk-window-private.h"
#include "people/lk-review.h"

/* Libraries remembered in the menu and on the empty page. */
#define MAX_RECENT 8

/* ---- recent libraries ------------------------------------------------- */

static void
update_recent (LkWindow *self)
{
  g_auto (GStrv) recent = g_settings_get_strv (self->settings, "recent-libraries");

  g_menu_remove_all (self->recent_section);
  for (guint k = 0; recent[k] != NULL; k++)
    {
      g_autofree char *name = lk_display_name (recent[k]);
      /* The folder it is in tells two libraries of one name apart. */
      g_autofree char *parent = g_path_get_dirname (recent[k]);
      g_autofree char *parent_text = lk_display_path (parent);
      gboolean twin = FALSE;

      for (guint j = 0; recent[j] != NULL && !twin; j++)
        {
          g_autofree char *other = lk_display_name (recent[j]);
          twin = j != k && g_strcmp0 (name, other) == 0;
        }
      /* Translators: a recent library in the menu when two share a name,
       * "sample — ~/Pictures" */
      g_autofree char *label
          = twin ? g_strdup_printf (_ ("%s — %s"), name, parent_text) : g_strdup (name);
      /* A menu label's "_" marks a mnemonic: a folder's own is doubled. */
      g_auto (GStrv) parts = g_strsplit (label, "_", -1);
      g_autofree char *escaped = g_strjoinv ("__", parts);
      g_autoptr (GMenuItem) item = g_menu_item_new (escaped, NULL);

      g_menu_item_set_action_and_target_value (item, "win.open-recent",
                                               g_variant_new_string (recent[k]));
      g_menu_append_item (self->recent_section, item);
    }
  /* The empty page's list follows the same model (lk-empty-page.c). */
  gtk_string_list_splice (self->recent, 0, g_list_model_get_n_items (G_LIST_MODEL (self->recent)),
                          (const char *const *) recent);
}

static void
remember_recent (LkWindow *self, const char *folder)
{
  g_auto (GStrv) recent = g_settings_get_strv (self->settings, "recent-libraries");
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  guint n = 1;

  g_strv_builder_add (builder, folder);
  for (guint k = 0; recent[k] != NULL && n < MAX_RECENT; k++)
    if (g_strcmp0 (recent[k], folder) != 0)
      {
        g_strv_builder_add (builder, recent[k]);
        n++;
      }
  g_auto (GStrv) next = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-libraries", (const char *const *) next);
}

static void
on_recent_changed (GSettings *settings, const char *key, gpointer user_data)
{
  update_recent (LK_WINDOW (user_data));
}

void
_lk_window_recent_init (LkWindow *self)
{
  g_signal_connect (self->settings, "changed::recent-libraries", G_CALLBACK (on_recent_changed),
                    self);
  update_recent (self);
}

/* ---- loading ---------------------------------------------------------- */

static void
show_progress (LkWindow *self)
{
  double fraction = lk_session_get_fraction (self->loading);
  const char *phase = lk_session_get_message (self->loading);
  double seconds = lk_session_get_phase_seconds (self->loading);
  guint64 total = lk_session_get_total (self->loading);
  g_autofree char *detail = NULL;

  if (fraction >= 0.0)
    gtk_progress_bar_set_fraction (self->scan_bar, fraction);
  else
    gtk_progress_bar_pulse (self->scan_bar);

  /* A rate needs a little history before it means anything. */
  if (fraction > 0.01 && fraction < 1.0 && seconds > 0.5 && total > 0)
    {
      double rate = fraction * (double) total / seconds;
      double left = seconds * (1.0 - fraction) / fraction;
      g_autofree char *left_text = left < 60.0
                                       ? g_strdup_printf (_ ("about %.0f s left"), MAX (left, 1.0))
                                       : g_strdup_printf (_ ("about %.0f min left"), left / 60.0);
      /* Translators: "1,234 faces per second · about 12 s left" */
      detail = g_strdup_printf (_ ("%'.0f faces per second · %s"), rate, left_text);
    }

  lk_loading_page_set_progress (self->loading_page, fraction, phase, detail);

  g_autofree char *name = lk_display_name (self->job_folder);
  g_autofree char *bar_text = detail != NULL ? g_strdup_printf ("%s — %s · %s", name, phase, detail)
                                             : g_strdup_printf ("%s — %s", name, phase);
  gtk_label_set_label (self->scan_label, bar_text);
}

static void
on_load_progress (LkSession *session, GParamSpec *pspec, gpointer user_data)
{
  LkWindow *self = user_data;

  if (session == self->loading)
    show_progress (self);
}

void
_lk_window_clear_job (LkWindow *self)
{
  if (self->probe_cancellable != NULL)
    {
      g_cancellable_cancel (self->probe_cancellable);
      g_clear_object (&self->probe_cancellable);
    }
  if (self->loading != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->loading, on_load_progress, self);
      g_cancellable_cancel (self->load_cancellable);
      g_clear_object (&self->load_cancellable);
      g_clear_object (&self->loading);
    }
  gtk_revealer_set_reveal_child (self->scan_revealer, FALSE);
  _lk_window_update_header (self);
}

void
_lk_window_show_error (LkWindow *self, const char *folder, const GError *error)
{
  g_autofree char *name = lk_display_name (folder);

  g_free (self->failed_folder);
  self->failed_folder = g_strdup (folder);
  lk_error_page_show (self->error_page, name, error);
  _lk_window_set_page (self, "error");
  lk_error_page_focus_retry (self->error_page);
}

/* A decision made while another was saving, which no longer applied when
 * its turn came. */
static void
on_decision_failed (LkSession *session, const GError *error, gpointer user_data)
{
  LkWindow *self = user_data;
  g_autofree char *message
      = g_strdup_printf (_ ("A decision could not be made: %s"), error->message);

  _lk_window_show_toast (self, message, TOAST_PLAIN);
}

static void set_session (LkWindow *self, LkSession *session);

/* ---- a folder of photos opened as a library --------------------------- */

/* A library that cannot be read may be no library at all but a folder of
 * photos, the first thing a new user opens: said as such, with the way on
 * (finding the faces), instead of "Cannot read the library manifest". The
 * folder is looked at on a worker (a few thousand names at most): the main
 * thread never waits for a disk. */
typedef struct
{
  char *folder;
  GError *error;
} Probe;

static void
probe_free (gpointer data)
{
  Probe *probe = data;

  g_free (probe->folder);
  g_clear_error (&probe->error);
  g_free (probe);
}

static void
probe_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Probe *probe = data;

  g_task_return_boolean (task, lk_import_dialog_is_photo_folder (probe->folder));
}

static void
on_probe_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LkWindow *self = LK_WINDOW (source);
  GCancellable *cancellable = g_task_get_cancellable (G_TASK (result));
  Probe *probe = g_task_get_task_data (G_TASK (result));
  gboolean photos = g_task_propagate_boolean (G_TASK (result), NULL);

  /* Another load started meanwhile, or the window went. */
  if (g_cancellable_is_cancelled (cancellable) || cancellable != self->probe_cancellable)
    return;
  g_clear_object (&self->probe_cancellable);
  if (photos)
    {
      g_autofree char *name = lk_display_name (probe->folder);
      g_free (self->failed_folder);
      self->failed_folder = g_strdup (probe->folder);
      lk_error_page_show_photos (self->error_page, name,
                                 lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS));
      _lk_window_set_page (self, "error");
      lk_error_page_focus_retry (self->error_page);
    }
  else
    _lk_window_show_error (self, probe->folder, probe->error);
  _lk_window_update_header (self);
  _lk_window_emit_load_finished (self, FALSE);
}

/* The error page for a failed load of `folder`: at once, or once the folder
 * has been looked at for photos when its manifest could not be read. TRUE
 * when that look was started (load-finished is emitted once it is done). */
static gboolean
show_load_error (LkWindow *self, const char *folder, const GError *error)
{
  if (!g_error_matches (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO))
    {
      _lk_window_show_error (self, folder, error);
      return FALSE;
    }
  Probe *probe = g_new0 (Probe, 1);
  probe->folder = g_strdup (folder);
  probe->error = g_error_copy (error);
  self->probe_cancellable = g_cancellable_new ();
  g_autoptr (GTask) task = g_task_new (self, self->probe_cancellable, on_probe_done, NULL);
  g_task_set_source_tag (task, show_load_error);
  g_task_set_task_data (task, probe, probe_free);
  g_task_run_in_thread (task, probe_thread);
  _lk_window_update_header (self);
  return TRUE;
}

static void
on_load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkWindow) self = user_data;
  LkSession *session = LK_SESSION (source);
  g_autoptr (GError) error = NULL;
  gboolean loaded = lk_session_load_finish (session, result, &error);

  /* Cancelled or superseded: nothing of it may reach the window. */
  if (session != self->loading || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_autofree char *folder = g_strdup (self->job_folder);
  g_signal_handlers_disconnect_by_func (session, on_load_progress, self);
  g_clear_object (&self->load_cancellable);
  g_autoptr (LkSession) landed = g_steal_pointer (&self->loading);
  gtk_revealer_set_reveal_child (self->scan_revealer, FALSE);
  if (!loaded)
    {
      /* A calibration change that could not be made leaves the people be. */
      if (!_lk_window_calibration_load_done (self, landed, FALSE, error)
          && show_load_error (self, folder, error))
        return;
    }
  else
    {
      /* A re-scan landed in the session on screen, which said "changed". */
      if (landed != self->session)
        set_session (self, landed);
      else
        _lk_window_update_header (self);
      remember_recent (self, lk_session_get_folder (landed));
      _lk_window_calibration_load_done (self, landed, TRUE, NULL);
    }
  _lk_window_emit_load_finished (self, loaded);
}

void
_lk_window_start_load (LkWindow *self, const char *folder, gboolean replace_review)
{
  _lk_window_clear_job (self);
  _lk_window_hide_toast (self);
  self->calibration_change = LK_CALIBRATION_CHANGE_NONE;

  g_free (self->job_folder);
  self->job_folder = g_strdup (folder);
  double bar = g_settings_get_double (self->settings, "probability-bar");
  /* The same library again (F5): the session on screen loads again and keeps
   * its people and decisions until the new scan lands. */
  if (self->session != NULL && !replace_review
      && g_strcmp0 (lk_session_get_folder (self->session), folder) == 0)
    {
      self->loading = g_object_ref (self->session);
      lk_session_set_probability_bar (self->loading, bar);
    }
  else
    {
      self->loading = lk_session_new (folder);
      lk_session_set_probability_bar (self->loading, bar);
      lk_session_set_start_over (self->loading, replace_review);
      /* The scan's workers yield the CPU to the main loop (lk-scan.c). */
      lk_session_set_background (self->loading, TRUE);
      _lk_window_calibration_prepare (self, self->loading);
    }
  self->load_cancellable = g_cancellable_new ();
  g_signal_connect (self->loading, "notify::fraction", G_CALLBACK (on_load_progress), self);
  g_signal_connect (self->loading, "notify::message", G_CALLBACK (on_load_progress), self);

  g_autofree char *name = lk_display_name (folder);
  lk_loading_page_start (self->loading_page, name);
  gtk_progress_bar_set_fraction (self->scan_bar, 0.0);
  g_autofree char *bar_text = g_strdup_printf ("%s — %s", name, _ ("Reading the library"));
  gtk_label_set_label (self->scan_label, bar_text);

  const char *page = gtk_stack_get_visible_child_name (self->stack);
  if (self->session != NULL && g_strcmp0 (page, "error") != 0 && g_strcmp0 (page, "loading") != 0)
    gtk_revealer_set_reveal_child (self->scan_revealer, TRUE);
  else
    _lk_window_set_page (self, "loading");

  _lk_window_emit_load_started (self);
  lk_session_load_async (self->loading, self->load_cancellable, on_load_done, g_object_ref (self));
  _lk_window_update_header (self);
}

/* ---- the session ------------------------------------------------------ */

static void
on_session_changed (LkSession *session, gpointer user_data)
{
  LkWindow *self = user_data;

  gtk_sorter_changed (GTK_SORTER (self->sorter), GTK_SORTER_CHANGE_DIFFERENT);
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  lk_people_filter_count (self->people_filter, lk_session_get_people (session));
  _lk_window_update_people_stack (self);
  _lk_window_update_header (self);
  _lk_window_update_banner (self);
  _lk_window_calibration_changed (self);
}

void
_lk_window_save_failed (LkSession *session, const GError *error, gpointer user_data)
{
  LkWindow *self = user_data;
  gboolean read_only = g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_READ_ONLY)
                       && !lk_session_saves_elsewhere (session);

  _lk_window_update_banner (self);
  /* A decision kept but unannounced: the words no longer match the history. */
  _lk_window_remember_decision (self, NULL);
  /* Told once per library; after that the banner says it, and each decision
   * keeps its Undo notification instead of repeating the failure. */
  if (read_only && self->told_read_only)
    return;
  self->told_read_only = read_only;
  /* The engine's message names every path and step; for a read-only folder
   * the banner says the rest, so the notification stays short. */
  /* One line or two over the grid, not four: the engine's message, which
   * names every path and step, is the label's tooltip. */
  const char *message
      = read_only ? _ ("Your decision is kept but could not be saved: the folder is read-only")
                  : _ ("Your decision is kept but could not be saved");
  _lk_window_show_toast_detail (self, message,
                                g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_READ_ONLY)
                                    ? TOAST_SAVE_ELSEWHERE
                                    : TOAST_RETRY_SAVE,
                                error->message);
}

/* Another window or likeness-cli saved decisions in this library's
 * review.json; the session took them in and the people already follow. */
static void
on_decisions_refreshed (LkSession *session, guint n_changed, gpointer user_data)
{
  _lk_window_remember_decision (LK_WINDOW (user_data), NULL);
  _lk_window_show_toast (LK_WINDOW (user_data),
                         _ ("Decisions from another window or likeness-cli were applied"),
                         TOAST_PLAIN);
}

static void
set_session (LkWindow *self, LkSession *session)
{
  /* A re-scan (the same library again) keeps the page on screen: the person
   * page stays on its person while that person keeps their id. */
  const char *page = gtk_stack_get_visible_child_name (self->stack);
  gboolean rescan
      = self->session != NULL && session != NULL
        && g_strcmp0 (lk_session_get_folder (self->session), lk_session_get_folder (session)) == 0;
  gboolean keep_person = rescan && g_strcmp0 (page, "person") == 0;
  gboolean keep_suggestions = rescan && g_strcmp0 (page, "suggestions") == 0;

  if (self->session != NULL)
    {
      g_clear_signal_handler (&self->changed_id, self->session);
      g_clear_signal_handler (&self->save_failed_id, self->session);
      g_clear_signal_handler (&self->decision_failed_id, self->session);
      g_clear_signal_handler (&self->refreshed_id, self->session);
    }
  if (!rescan)
    _lk_window_remember_decision (self, NULL);
  g_set_object (&self->session, session);
  self->told_read_only = FALSE;
  _lk_window_update_banner (self);
  lk_guard_banner_set_session (self->guard_banner, session);
  lk_person_page_set_session (self->person_page, session, self->cache);
  lk_suggestions_page_set_session (self->suggestions_page, session, self->cache);
  lk_review_bar_set_session (self->review_bar, session, self->cache);
  lk_grid_fit_columns_now (self->people_grid);
  gtk_sort_list_model_set_model (self->sorted,
                                 session != NULL ? lk_session_get_people (session) : NULL);
  lk_people_filter_count (self->people_filter,
                          session != NULL ? lk_session_get_people (session) : NULL);
  if (session != NULL)
    {
      self->changed_id
          = g_signal_connect (session, "changed", G_CALLBACK (on_session_changed), self);
      self->save_failed_id
          = g_signal_connect (session, "save-failed", G_CALLBACK (_lk_window_save_failed), self);
      self->decision_failed_id
          = g_signal_connect (session, "decision-failed", G_CALLBACK (on_decision_failed), self);
      self->refreshed_id = g_signal_connect (session, "decisions-refreshed",
                                             G_CALLBACK (on_decisions_refreshed), self);
      _lk_window_update_people_stack (self);
      /* A thumbnail folder that cannot be read costs the faces their
       * thumbnails, not the library: said once, when the library opens (a
       * re-scan of the same folder does not say it again). */
      const LkLibrary *library = lk_session_get_library (session);
      if (!rescan && library != NULL && library->thumbnail_warning != NULL)
        _lk_window_show_toast (self, library->thumbnail_warning, TOAST_PLAIN);
      if (keep_person && lk_person_page_get_person (self->person_page) != NULL)
        _lk_window_set_page (self, "person");
      else if (keep_suggestions)
        {
          lk_suggestions_page_start (self->suggestions_page);
          _lk_window_set_page (self, "suggestions");
        }
      else
        _lk_window_set_page (self, "people");
    }
  else
    _lk_window_set_page (self, "empty");
}
