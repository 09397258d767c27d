/* lk-session-watch.c — review.json: other writers' decisions taken in, and Save Elsewhere */
#include "config.h"

#include <glib/gi18n.h>

#include "library/lk-review-location.h"
#include "lk-session-private.h"
#include "lk-session.h"

#define REVIEW_FILE      "review.json"
/* Milliseconds of quiet in review.json's events before it is read again:
 * long enough to take one atomic save (temporary file, rename, folder fsync)
 * as one change, short enough that another window's decision shows at once. */
#define REFRESH_DELAY_MS 150

/* ---- other writers ------------------------------------------------------ */

/* review.json changed and nothing is in flight: take in what other writers
 * saved there. On the main thread, because lk_review_refresh changes the
 * review, which the main thread reads (pins, undo descriptions) at any time,
 * so a worker would race with it; the re-clustering, the larger part, runs
 * on a worker as a decision's does. Its cost grows with the file (a few
 * tens of milliseconds for a few hundred decisions: read, parsed and
 * merged), once per change another process makes, never per own
 * decision. */
void
lk_session_refresh_when_idle (LkSession *self)
{
  if (!self->refresh_wanted || self->committing || self->loading || self->review == NULL)
    return;
  self->refresh_wanted = FALSE;

  g_autoptr (GError) error = NULL;
  guint n_changed = 0;
  if (!lk_review_refresh (self->review, self->review_path, &n_changed, &error))
    {
      /* Another writer left a file this session cannot merge with: its next
       * save says so ("save-failed"); nothing here is lost meanwhile. */
      g_message ("%s changed but could not be read again: %s", self->review_path, error->message);
      return;
    }
  if (n_changed > 0)
    lk_session_start_commit (self, FALSE, n_changed);
}

static gboolean
on_refresh_timeout (gpointer user_data)
{
  LkSession *self = user_data;

  g_clear_pointer (&self->refresh_source, g_source_unref);
  self->refresh_wanted = TRUE;
  lk_session_refresh_when_idle (self);
  return G_SOURCE_REMOVE;
}

void
lk_session_on_review_changed (GFileMonitor *monitor, GFile *file, GFile *other,
                              GFileMonitorEvent event, gpointer user_data)
{
  LkSession *self = user_data;

  switch (event)
    {
      case G_FILE_MONITOR_EVENT_CHANGED:
      case G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT:
      case G_FILE_MONITOR_EVENT_CREATED:
      case G_FILE_MONITOR_EVENT_MOVED_IN:
      case G_FILE_MONITOR_EVENT_RENAMED:
        /* In the session's context, where the monitor reports and loads
         * land: the global default context is not iterated by a session
         * made under a pushed context. */
        if (self->refresh_source != NULL)
          {
            g_source_destroy (self->refresh_source);
            g_source_unref (self->refresh_source);
          }
        self->refresh_source = g_timeout_source_new (REFRESH_DELAY_MS);
        g_source_set_callback (self->refresh_source, on_refresh_timeout, self, NULL);
        g_source_attach (self->refresh_source, self->context);
        break;
      default:
        break;
    }
}

/* Watches review_path (asynchronous sessions: the CLI's synchronous ones
 * live for one decision). Again after Save Elsewhere moved it. */
void
lk_session_watch_review (LkSession *self)
{
  if (self->synchronous || self->review_path == NULL
      || g_strcmp0 (self->monitored_path, self->review_path) == 0)
    return;
  if (self->monitor != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->monitor, lk_session_on_review_changed, self);
      g_file_monitor_cancel (self->monitor);
      g_clear_object (&self->monitor);
    }
  g_free (self->monitored_path);
  self->monitored_path = g_strdup (self->review_path);

  g_autoptr (GFile) file = g_file_new_for_path (self->review_path);
  g_autoptr (GError) error = NULL;
  self->monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
  if (self->monitor == NULL)
    {
      /* Decisions are still merged on every save; only the live update is missing. */
      g_message ("Likeness cannot watch %s for other writers' decisions: %s", self->review_path,
                 error->message);
      return;
    }
  g_signal_connect (self->monitor, "changed", G_CALLBACK (lk_session_on_review_changed), self);
}

gboolean
lk_session_retry_save (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (!lk_session_check_idle (self, error))
    return FALSE;

  if (!lk_review_save (self->review, self->review_path, lk_session_save_flags (self), error))
    {
      self->unsaved = TRUE;
      return FALSE;
    }
  self->unsaved = FALSE;
  if (!lk_session_saves_elsewhere (self))
    self->read_only = FALSE;
  return TRUE;
}

gboolean
lk_session_is_read_only (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->read_only;
}

gboolean
lk_session_saves_elsewhere (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (self->library == NULL)
    return FALSE;
  g_autofree char *own = g_build_filename (self->library->folder, REVIEW_FILE, NULL);
  return g_strcmp0 (own, self->review_path) != 0;
}

const char *
lk_session_get_review_path (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->review_path;
}

gboolean
lk_session_has_unsaved (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->unsaved;
}

gboolean
lk_session_save_elsewhere (LkSession *self, const char *folder, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_return_val_if_fail (folder != NULL && g_path_is_absolute (folder), FALSE);
  if (!lk_session_check_idle (self, error))
    return FALSE;
  /* A running load resolved where decisions go before this choice, and
   * landing would put that back. */
  if (self->loading)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                           _ ("The library is being read again; try again once it is loaded"));
      return FALSE;
    }

  const char *library_folder = self->library->folder;
  g_autofree char *path = g_build_filename (folder, REVIEW_FILE, NULL);
  g_autofree char *own = g_build_filename (library_folder, REVIEW_FILE, NULL);
  gboolean is_own = g_strcmp0 (path, own) == 0;
  /* A review.json there holds decisions this session has not read (the same
   * library from another mount, another library, an older copy): saving over
   * it would drop them, so the user chooses another folder. */
  if (g_strcmp0 (path, self->review_path) != 0 && !is_own && g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   _ ("it already holds a review.json, whose decisions would be lost. Choose "
                      "another folder, or move that file away first."));
      return FALSE;
    }
  /* Never over another library's review.json (no REPLACE): the error says whose it is. */
  LkReviewSaveFlags flags
      = is_own && self->replace_review ? LK_REVIEW_SAVE_REPLACE : LK_REVIEW_SAVE_DEFAULT;
  if (!lk_review_save (self->review, path, flags, error))
    return FALSE;
  if (!is_own)
    self->replace_review = FALSE;

  /* Saved: from now on every decision goes there, in this run and the next. */
  g_free (self->review_path);
  self->review_path = g_steal_pointer (&path);
  self->unsaved = FALSE;
  if (is_own)
    self->read_only = FALSE;
  lk_session_watch_review (self);
  g_autoptr (GError) remember_error = NULL;
  if (!lk_review_location_remember (library_folder, is_own ? NULL : self->review_path,
                                    &remember_error))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _ ("The decisions were saved in %s, but Likeness could not remember that for "
                      "the next time you open this library: %s"),
                   self->review_path, remember_error->message);
      return FALSE;
    }
  return TRUE;
}
