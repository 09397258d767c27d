/* lk-session-load.c — a load, in the calling thread or on a worker: its progress and its landing */
#include "config.h"

#include <glib/gi18n.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "people/lk-calibrate.h"
#include "library/lk-review-location.h"
#include "library/lk-sample.h"
#include "scan/lk-scan-cache.h"
#include "scan/lk-scan.h"
#include "lk-session-private.h"
#include "lk-session.h"
#include "people/lk-source-people.h"

/* What a load's worker needs: its own copies, never the session's state. */
typedef struct
{
  LkSession *session;     /* for progress only */
  gboolean holds_session; /* a reference of the worker's (asynchronous loads) */
  char *folder;
  double probability_bar; /* 0: the library's own */
  gboolean start_over;
  gboolean background;
  gboolean release_embeddings; /* lk_session_set_release_embeddings */
  gboolean scan;               /* FALSE: the library and review.json only */
  gboolean notify;             /* progress through the idle (asynchronous loads) */
  /* The session's review is of the library with this fingerprint: a re-scan
   * of the same library keeps it (NULL: read review.json). */
  char *keep_fingerprint;
  GPtrArray *pins;       /* of LkPin *, that review's pins (a copy) */
  GArray *dismissed;     /* that review's faces dismissed as no face (a copy) */
  JsonNode *calibration; /* that review's "calibration" (a copy), or NULL */
  char *after;           /* that review's newest decision in effect (a calibration's "after") */
  LkCalibrationChange change; /* made before the scan */
  LkCalibrationFrom from;     /* of a LK_CALIBRATION_CHANGE_FIT */
  gboolean estimate_missing;  /* no calibration anywhere: estimate one (a change of its own) */
  GCancellable *cancellable;  /* the load's own (superseding cancels it) */
  gulong cancel_id;           /* linking the caller's cancellable to it */
  GCancellable *caller_cancellable;
  guint serial;
} LoadRequest;

static void
load_request_free (gpointer data)
{
  LoadRequest *request = data;

  if (request->holds_session)
    lk_session_unref_on_context (request->session);
  if (request->cancel_id != 0)
    g_cancellable_disconnect (request->caller_cancellable, request->cancel_id);
  g_clear_object (&request->caller_cancellable);
  g_clear_object (&request->cancellable);
  g_clear_pointer (&request->pins, g_ptr_array_unref);
  g_clear_pointer (&request->dismissed, g_array_unref);
  g_clear_pointer (&request->calibration, json_node_unref);
  g_free (request->after);
  g_free (request->keep_fingerprint);
  g_free (request->folder);
  g_free (request);
}

void
lk_session_load_result_free (gpointer data)
{
  LoadResult *result = data;

  if (result == NULL)
    return;
  g_clear_pointer (&result->people, lk_people_free);
  g_clear_pointer (&result->questions, g_array_unref);
  g_clear_pointer (&result->question_links, lk_question_links_free);
  g_clear_pointer (&result->memo, lk_cluster_memo_free);
  g_clear_pointer (&result->scan, lk_scan_result_free);
  g_clear_pointer (&result->review, lk_review_free);
  g_clear_pointer (&result->library, lk_library_free);
  g_clear_pointer (&result->calibration_node, json_node_unref);
  g_free (result->review_path);
  g_free (result->estimate_failure);
  g_free (result);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LoadResult, lk_session_load_result_free)

GPtrArray *
lk_session_copy_pins (const GPtrArray *pins)
{
  GPtrArray *copy = g_ptr_array_new_full (pins->len, (GDestroyNotify) lk_pin_free);

  for (guint k = 0; k < pins->len; k++)
    g_ptr_array_add (copy, lk_pin_copy (g_ptr_array_index (pins, k)));
  return copy;
}

void (*lk_session_worker_hook) (GTask *task);

/* ---- progress ---------------------------------------------------------- */

static gboolean
on_progress_idle (gpointer user_data)
{
  LkSession *self = user_data;

  g_mutex_lock (&self->lock);
  const char *message = self->w_message;
  double fraction = self->w_fraction;
  gint64 phase_start = self->w_phase_start;
  guint64 total = self->w_total;
  self->idle_pending = FALSE;
  g_mutex_unlock (&self->lock);

  g_object_freeze_notify (G_OBJECT (self));
  self->phase_start = phase_start;
  if (self->message != message)
    {
      self->message = message;
      g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_MESSAGE]);
    }
  if (self->fraction != fraction)
    {
      self->fraction = fraction;
      g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_FRACTION]);
    }
  if (self->total != total)
    {
      self->total = total;
      g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_TOTAL]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  return G_SOURCE_REMOVE;
}

/* From any thread. `message` is a static (translated) string; NULL keeps the
 * phase. With `notify`, one low-priority idle carries the latest values to
 * the session's main context, unless one is already pending. */
static void
report (LkSession *self, gboolean notify, const char *message, double fraction, guint64 total)
{
  gboolean schedule;

  g_mutex_lock (&self->lock);
  if (message != NULL && message != self->w_message)
    {
      self->w_message = message;
      self->w_phase_start = g_get_monotonic_time ();
    }
  self->w_fraction = fraction;
  if (total > 0)
    self->w_total = total;
  schedule = notify && !self->idle_pending;
  if (schedule)
    self->idle_pending = TRUE;
  g_mutex_unlock (&self->lock);

  if (schedule)
    {
      GSource *source = g_idle_source_new ();

      g_source_set_priority (source, G_PRIORITY_LOW);
      g_source_set_callback (source, on_progress_idle, g_object_ref (self), g_object_unref);
      g_source_set_static_name (source, "[likeness] session progress");
      g_source_attach (source, self->context);
      g_source_unref (source);
    }
}

void
lk_session_report_progress (LkSession *self, const char *message, double fraction)
{
  g_return_if_fail (LK_IS_SESSION (self));
  report (self, TRUE, message, fraction, 0);
}

gboolean
lk_session_holds_load (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->held_task != NULL;
}

const LkQuestionLinks *
lk_session_peek_question_links (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->question_links;
}

guint64
lk_session_peek_faces (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->faces;
}

/* ---- loading ----------------------------------------------------------- */

static void
on_scan_progress (double fraction, gpointer user_data)
{
  LoadRequest *request = user_data;

  report (request->session, request->notify, _ ("Comparing every pair of faces"), fraction, 0);
}

static void
fill_cluster_input (LkClusterInput *input, const LkLibrary *library, const LkScanResult *scan)
{
  lk_cluster_input_init (input, library, scan->pairs);
}

/* A calibration change a load makes before it scans (lk_session_set_calibration_change,
 * or estimate_missing's on a library without any calibration): the history in
 * `chosen` (the "calibration" of the review read from `review_read`, may be
 * NULL) changed into
 * result->calibration_node, which the scan then uses and the session saves
 * when the load lands. A fit runs here, on the load's worker: 0.1 s for 600
 * faces, and it cancels with the load. FALSE with `error` when the change
 * cannot be made (the load then fails and changes nothing); estimate_missing's
 * own failure only leaves the library's calibration in force (the guard then
 * says whether it fits). */
static gboolean
change_calibration (LoadRequest *request, LoadResult *result, const LkLibrary *library,
                    const GPtrArray *pins, JsonNode *chosen, const char *review_read,
                    GCancellable *cancellable, GError **error)
{
  LkCalibrationChange change = request->change;
  LkCalibrationFrom from = request->from;
  gboolean on_its_own = FALSE;

  if (change == LK_CALIBRATION_CHANGE_NONE && request->estimate_missing
      && !library->calibration_given && chosen == NULL)
    {
      change = LK_CALIBRATION_CHANGE_FIT;
      from = LK_CALIBRATION_FROM_ESTIMATE;
      on_its_own = TRUE;
    }
  if (change == LK_CALIBRATION_CHANGE_NONE)
    return TRUE;

  g_autoptr (GError) local = NULL;
  g_autoptr (LkCalibrationHistory) history = lk_calibration_history_new (chosen, &local);
  if (history == NULL)
    {
      /* A malformed choice in review.json: a new choice starts afresh (the
       * old object is replaced by the next save); undo has nothing to act on. */
      if (change != LK_CALIBRATION_CHANGE_FIT)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", review_read);
          return FALSE;
        }
      history = lk_calibration_history_new (NULL, NULL);
    }
  const char *after
      = result->review != NULL ? lk_review_last_decision_id (result->review) : request->after;
  switch (change)
    {
      case LK_CALIBRATION_CHANGE_FIT:
        {
          report (request->session, request->notify,
                  from == LK_CALIBRATION_FROM_ESTIMATE ? _ ("Estimating the pair model from the "
                                                            "faces")
                                                       : _ ("Fitting the pair model"),
                  -1.0, 0);
          LkCalibrateOptions options = { .seed = 1 };
          g_autoptr (LkCalibrationFit) fit
              = lk_calibrate (library, from, pins, &options, cancellable, &local);
          if (fit == NULL)
            {
              if (on_its_own && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                {
                  g_message ("%s has no calibration and none could be estimated: %s",
                             library->folder, local->message);
                  result->estimate_failure = g_strdup (local->message);
                  return TRUE;
                }
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          lk_calibration_history_set_after (history, &fit->calibration,
                                            lk_calibration_from_to_string (from), after);
          break;
        }
      case LK_CALIBRATION_CHANGE_UNDO:
      case LK_CALIBRATION_CHANGE_REDO:
        if (!(change == LK_CALIBRATION_CHANGE_UNDO ? lk_calibration_history_undo (history)
                                                   : lk_calibration_history_redo (history)))
          {
            g_set_error_literal (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_CHANGE,
                                 change == LK_CALIBRATION_CHANGE_UNDO
                                     ? _ ("There is no calibration change to undo")
                                     : _ ("There is no calibration change to redo"));
            return FALSE;
          }
        break;
      case LK_CALIBRATION_CHANGE_NONE:
        break;
    }
  result->calibration_changed = TRUE;
  result->calibration_node = lk_calibration_history_to_json (history);
  result->estimated_on_its_own = on_its_own;
  return TRUE;
}

/* The bundled sample is installed read-only (under the Flatpak's /app or a
 * system prefix), yet it is where a new user first tries naming someone. Its
 * decisions go to the user's data folder instead, remembered as a
 * read-only library's chosen folder is, so they are saved from the first one
 * and the banner says where. Nothing happens when a folder is remembered
 * already or the user's folder cannot be made. */
static void
save_sample_in_user_data (const char *folder, char **review_path)
{
  g_autofree char *sample = lk_sample_default_dir ();
  char *sample_real = realpath (sample, NULL);
  gboolean is_sample = sample_real != NULL && strcmp (sample_real, folder) == 0;
  free (sample_real);
  if (!is_sample)
    return;
  g_autofree char *remembered = lk_review_location_lookup (folder);
  if (remembered != NULL)
    return;
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "likeness", "sample", NULL);
  g_autofree char *review = g_build_filename (dir, "review.json", NULL);
  g_autoptr (GError) error = NULL;
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_warning ("Cannot make %s for the sample's decisions: %s", dir, g_strerror (errno));
      return;
    }
  if (!lk_review_location_remember (folder, review, &error))
    {
      g_warning ("Cannot remember where the sample's decisions go: %s", error->message);
      return;
    }
  g_free (*review_path);
  *review_path = g_steal_pointer (&review);
}

/* Runs in the calling thread or on a worker: touches nothing of the session
 * but its progress. */
static LoadResult *
load_in_thread (LoadRequest *request, GCancellable *cancellable, GError **error)
{
  LkSession *self = request->session;
  g_autoptr (LoadResult) result = g_new0 (LoadResult, 1);

  report (self, request->notify, _ ("Reading the library"), -1.0, 0);
  result->library = lk_library_load (request->folder, error);
  if (result->library == NULL)
    return NULL;

  const LkLibrary *library = result->library;
  report (self, request->notify, NULL, -1.0, library->count);
  /* A read-only library's decisions may have been saved elsewhere before: then
   * they are read from (and saved to) there; otherwise its own review.json is
   * the starting state, read-only or not. */
  g_autofree char *start = NULL;
  result->review_path = lk_review_location_resolve (library->folder, &start);
  result->read_only = g_access (library->folder, W_OK) != 0
                      && (errno == EROFS || errno == EACCES || errno == EPERM);
  if (result->read_only)
    save_sample_in_user_data (library->folder, &result->review_path);
  const GPtrArray *pins = request->pins;
  const GArray *dismissed = request->dismissed;
  if (request->keep_fingerprint == NULL
      || strcmp (request->keep_fingerprint, library->fingerprint) != 0)
    {
      g_autoptr (GError) local = NULL;
      result->review = lk_review_load_for_library (start, library, &local);
      if (result->review == NULL)
        {
          /* Starting over sets a corrupt or foreign file aside, never one
           * that could not be read at all. */
          if (!request->start_over || g_error_matches (local, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return NULL;
            }
          result->review = lk_review_new_for_library (library);
          result->replace_review = TRUE;
        }
      /* The source's people, below the user's decisions (lk-source-people.h). */
      g_autoptr (GPtrArray) base = lk_source_people_pins (library, NULL);
      lk_review_set_base_pins (result->review, base);
      pins = lk_review_pins (result->review);
      dismissed = lk_review_dismissed (result->review);
    }
  if (result->review != NULL)
    for (gsize k = 0; k < library->n_photos; k++)
      if (library->photos[k].path != NULL)
        lk_review_set_photo_path (result->review, library->photos[k].id, library->photos[k].path);
  JsonNode *chosen
      = result->review ? lk_review_get_calibration (result->review) : request->calibration;
  if (!change_calibration (request, result, library, pins, chosen, start, cancellable, error))
    return NULL;
  if (result->calibration_changed)
    chosen = result->calibration_node;
  /* The calibration every scan uses: the one the user chose (likeness-cli
   * calibrate, or the window's, kept in review.json), else the library's. A
   * malformed choice is the library's, never an error that stops the library
   * opening. */
  result->calibration
      = lk_calibration_in_force (library, chosen, &result->calibration_source, NULL);
  if (!request->scan)
    return g_steal_pointer (&result);

  result->probability_bar
      = request->probability_bar > 0.0 ? request->probability_bar : library->min_probability;
  LkScanOptions options = { .kernel = LK_KERNEL_AUTO,
                            .threads = 0,
                            .background = request->background,
                            .progress = on_scan_progress,
                            .progress_data = request };
  report (self, request->notify, _ ("Comparing every pair of faces"), 0.0, 0);
  /* The guard, before anything is built on the calibration: the share of
   * random pairs it makes candidates (lk-calibrate.h; a few milliseconds). */
  lk_calibration_guard (library, &result->calibration, result->probability_bar,
                        LK_CALIBRATION_GUARD_SAMPLES, 1, &result->guard);
  /* The last scan of this folder, kept in the user's cache, spares a grown
   * library all but the pairs of its new faces (lk-scan-cache.h). */
  g_autofree char *cache_path = lk_scan_cache_path (library->folder);
  LkScanReuse reuse = { 0 };
  result->scan = lk_scan_cached (library, &result->calibration, result->probability_bar, &options,
                                 cache_path, &reuse, cancellable, error);
  result->faces = reuse.faces;
  if (reuse.reused)
    g_debug ("%s: reused the kept scan for %" G_GSIZE_FORMAT " faces, scanned %" G_GSIZE_FORMAT
             " added ones (%" G_GSIZE_FORMAT " gone)",
             library->folder, reuse.kept, reuse.added, reuse.removed);
  else if (reuse.why_full != NULL)
    g_debug ("%s: a full scan: %s", library->folder, reuse.why_full);
  lk_scan_reuse_clear (&reuse);
  if (result->scan == NULL)
    return NULL;
  /* Before the clustering's peak, which it would otherwise sit under. */
  if (request->release_embeddings)
    lk_library_release_embeddings (result->library);

  report (self, request->notify, _ ("Grouping faces into people"), -1.0, 0);
  LkClusterInput input;
  fill_cluster_input (&input, library, result->scan);
  LkClusterOptions cluster_options = { .linkage = LK_LINKAGE_AVERAGE, .dismissed = dismissed };
  result->people = lk_cluster_with_memo (&input, pins, &cluster_options, &result->memo, error);
  if (result->people == NULL)
    return NULL;
  report (self, request->notify, _ ("Looking for faces that may be someone named"), -1.0, 0);
  result->questions = lk_session_find_questions (
      library, &result->calibration, result->probability_bar, result->people, &input, pins, NULL,
      result->faces, &result->question_links, request->background, cancellable);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return g_steal_pointer (&result);
}

/* Installs what a load built (main thread), in one step. */
static void
land (LkSession *self, LoadResult *result)
{
  /* The people go last: the items' update reads nothing else, but the
   * clustering input below must point into the new scan first. */
  LkPeople *people = g_steal_pointer (&result->people);
  GArray *questions = g_steal_pointer (&result->questions);
  LkQuestionLinks *links = g_steal_pointer (&result->question_links);

  g_clear_pointer (&self->memo, lk_cluster_memo_free);
  self->memo = g_steal_pointer (&result->memo);
  g_clear_pointer (&self->scan, lk_scan_result_free);
  self->scan = g_steal_pointer (&result->scan);
  g_clear_pointer (&self->library, lk_library_free);
  g_clear_pointer (&self->centroids, g_free);
  self->library = g_steal_pointer (&result->library);
  if (result->review != NULL)
    {
      g_clear_pointer (&self->review, lk_review_free);
      self->review = g_steal_pointer (&result->review);
      self->replace_review = result->replace_review;
    }
  g_free (self->review_path);
  self->review_path = g_steal_pointer (&result->review_path);
  self->read_only = result->read_only;
  self->calibration = result->calibration;
  self->calibration_source = result->calibration_source;
  /* Kept with the decisions; the caller saves it (land_calibration). */
  if (result->calibration_changed)
    lk_review_set_calibration (self->review, result->calibration_node);
  self->estimated_on_its_own = result->estimated_on_its_own;
  g_free (self->estimate_failure);
  self->estimate_failure = g_steal_pointer (&result->estimate_failure);
  if (self->scan != NULL)
    {
      self->probability_bar = result->probability_bar;
      self->guard = result->guard;
      self->faces = result->faces;
      fill_cluster_input (&self->input, self->library, self->scan);
      lk_session_set_people (self, people, questions, links);
    }
  else
    {
      g_clear_pointer (&people, lk_people_free);
      g_clear_pointer (&questions, g_array_unref);
      g_clear_pointer (&links, lk_question_links_free);
    }
  self->loaded = TRUE;
}

static LoadRequest *
load_request_new (LkSession *self, gboolean scan, gboolean notify)
{
  LoadRequest *request = g_new0 (LoadRequest, 1);

  request->session = self;
  request->folder = g_strdup (self->library != NULL ? self->library->folder : self->folder);
  request->probability_bar = self->requested_bar;
  request->start_over = self->start_over;
  request->background = self->background;
  request->release_embeddings = self->release_embeddings;
  request->scan = scan;
  request->notify = notify;
  if (self->review != NULL)
    {
      request->keep_fingerprint = g_strdup (lk_review_fingerprint (self->review));
      request->pins = lk_session_copy_pins (lk_review_pins (self->review));
      request->dismissed = g_array_copy ((GArray *) lk_review_dismissed (self->review));
      JsonNode *calibration = lk_review_get_calibration (self->review);
      request->calibration = calibration ? json_node_copy (calibration) : NULL;
      request->after = g_strdup (lk_review_last_decision_id (self->review));
    }
  /* The change is this load's: a cancelled or superseded load drops it. */
  request->change = self->change;
  request->from = self->change_from;
  request->estimate_missing = self->estimate_missing;
  self->change = LK_CALIBRATION_CHANGE_NONE;
  return request;
}

static gboolean
load_sync (LkSession *self, gboolean scan, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (!self->loading && !self->committing, FALSE);

  LoadRequest *request = load_request_new (self, scan, FALSE);
  LoadResult *result = load_in_thread (request, cancellable, error);
  load_request_free (request);
  if (result == NULL)
    return FALSE;
  gboolean changed = result->calibration_changed;
  land (self, result);
  lk_session_load_result_free (result);
  self->synchronous = TRUE;
  if (changed)
    {
      /* The calibration change is saved like a decision; its failure is the
       * load's (the CLI says it was not saved). */
      g_autoptr (GError) save_error = NULL;
      lk_review_save (self->review, self->review_path, lk_session_save_flags (self), &save_error);
      lk_session_saved (self, save_error);
      if (save_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&save_error));
          return FALSE;
        }
    }
  return TRUE;
}

void
lk_session_finish_load (LkSession *self, GTask *task, LoadResult *result)
{
  gboolean changed = result->calibration_changed;
  land (self, result);
  lk_session_load_result_free (result);
  self->loading = FALSE;
  /* The last progress the worker reported, so the window's final figures are right. */
  on_progress_idle (self);
  g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_LOADING]);
  g_signal_emit (self, lk_session_signals[SIGNAL_CHANGED], 0);
  g_task_return_boolean (task, TRUE);
  lk_session_watch_review (self);
  /* A calibration change is saved as a decision is (its failure says
   * "save-failed"); decisions queued meanwhile follow it. */
  if (changed)
    lk_session_start_commit (self, TRUE, 0);
  lk_session_make_queued (self);
  lk_session_refresh_when_idle (self);
}

static void
on_load_thread_done (GObject *source, GAsyncResult *async_result, gpointer user_data)
{
  g_autoptr (GTask) task = user_data; /* the caller's */
  LkSession *self = g_task_get_source_object (task);
  LoadRequest *request = g_task_get_task_data (G_TASK (async_result));
  g_autoptr (GError) error = NULL;
  LoadResult *result = g_task_propagate_pointer (G_TASK (async_result), &error);
  gboolean newest = request->serial == self->load_serial;

  if (newest)
    {
      g_clear_object (&self->load_cancellable);
      if (result == NULL)
        {
          self->loading = FALSE;
          g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_LOADING]);
        }
    }
  if (result != NULL && (!newest || g_cancellable_is_cancelled (request->cancellable)))
    {
      lk_session_load_result_free (result);
      result = NULL;
      g_clear_error (&error);
      g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                           _ ("The library was loaded again before this load ended"));
      if (newest)
        {
          self->loading = FALSE;
          g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_LOADING]);
        }
    }
  if (result == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      if (newest)
        {
          lk_session_make_queued (self);
          lk_session_refresh_when_idle (self);
        }
      return;
    }
  if (self->committing)
    {
      /* The commit's worker reads the pairs this load replaces. */
      self->held_task = g_steal_pointer (&task);
      self->held_result = result;
      return;
    }
  lk_session_finish_load (self, task, result);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadRequest *request = task_data;
  GError *error = NULL;
  LoadResult *result = load_in_thread (request, request->cancellable, &error);

  if (result != NULL)
    g_task_return_pointer (task, result, lk_session_load_result_free);
  else
    g_task_return_error (task, error);
  if (lk_session_worker_hook != NULL)
    lk_session_worker_hook (task);
}

static void
on_caller_cancelled (GCancellable *caller, gpointer user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
}

gboolean
lk_session_open (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return load_sync (self, FALSE, NULL, error);
}

gboolean
lk_session_load (LkSession *self, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return load_sync (self, TRUE, cancellable, error);
}

void
lk_session_load_async (LkSession *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                       gpointer user_data)
{
  g_return_if_fail (LK_IS_SESSION (self));
  g_return_if_fail (!self->synchronous);

  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, lk_session_load_async);

  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable); /* superseded */
  g_clear_object (&self->load_cancellable);

  LoadRequest *request = load_request_new (self, TRUE, TRUE);
  request->serial = ++self->load_serial;
  request->session = g_object_ref (self);
  request->holds_session = TRUE;
  request->cancellable = g_cancellable_new ();
  self->load_cancellable = g_object_ref (request->cancellable);
  if (cancellable != NULL)
    {
      request->caller_cancellable = g_object_ref (cancellable);
      request->cancel_id
          = g_cancellable_connect (cancellable, G_CALLBACK (on_caller_cancelled),
                                   g_object_ref (request->cancellable), g_object_unref);
    }

  g_mutex_lock (&self->lock);
  self->w_message = _ ("Reading the library");
  self->w_fraction = 0.0;
  self->w_phase_start = g_get_monotonic_time ();
  g_mutex_unlock (&self->lock);
  self->message = self->w_message;
  self->fraction = 0.0;
  self->phase_start = self->w_phase_start;
  if (!self->loading)
    {
      self->loading = TRUE;
      g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_LOADING]);
    }

  GTask *worker = g_task_new (NULL, NULL, on_load_thread_done, task);
  g_task_set_source_tag (worker, load_thread);
  g_task_set_task_data (worker, request, load_request_free);
  g_task_run_in_thread (worker, load_thread);
  g_object_unref (worker);

  /* A load that ended while a decision committed is superseded as well:
   * landing when that commit ends would put older people on screen and
   * clear "loading" while this one runs. Last, as its callback may run now. */
  if (self->held_task != NULL)
    {
      g_autoptr (GTask) held = g_steal_pointer (&self->held_task);

      g_clear_pointer (&self->held_result, lk_session_load_result_free);
      g_task_return_new_error (held, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s",
                               _ ("The library was loaded again before this load ended"));
    }
}

gboolean
lk_session_load_finish (LkSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
