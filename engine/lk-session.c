/* lk-session.c — one open library: its faces, pairs, review decisions and people
 *
 * Why it is shaped this way:
 *
 * - One session object, in the engine, for the window and the CLI. The
 *   pipeline used to live twice (the window's, GTK-bound by one GtkWidget *
 *   for its progress ticks, and the CLI's), and neither knew the other's
 *   decisions; now everything the window does with a library, the CLI and the
 *   tests do without a display.
 * - Loading (read the library and review.json, scan, cluster) is one function
 *   that runs in the calling thread (lk_session_load, the CLI) or on a GTask
 *   worker (lk_session_load_async, the window), in Sysprof's document-loader
 *   shape. The worker never touches the session's state: it builds a
 *   LoadResult that lands on the main thread in one step, so nothing ever
 *   sees a half-loaded library, and a cancelled or superseded load is simply
 *   freed.
 * - Progress: the scan reports from its worker threads up to ~30 times a
 *   second. The worker stores the latest value under a mutex and schedules an
 *   idle only when none is pending, at G_PRIORITY_LOW (below redraws and
 *   input), so however fast it reports, the main loop runs at most one
 *   progress update per turn and the properties change only there. This
 *   replaces the window's LkJob, whose frame tick needed a widget.
 * - A decision is applied to the review at once (checked against the people
 *   the user is looking at), then saved and re-clustered on a worker thread.
 *   Done in the same main-loop turn, that cost 146-262 ms of main-thread time
 *   per decision on an 18,143-face library (765,265 pairs; lk_cluster ~170 ms,
 *   the save ~3 ms), far over the 50 ms frame budget; now the decision call
 *   takes ~0.1 ms and the people follow when the worker lands.
 * - Every decision is one LkReviewRequest (lk-review.h), whoever made it,
 *   applied by lk_review_apply; the queue holds copies of them.
 * - One queue, owned here, serialises decisions: one made while the previous
 *   one is in flight, or while a re-scan runs, is kept as asked and made when
 *   that lands, against the people it produced — the commit worker's save
 *   reads the review, so nothing may change it meanwhile, and checking a
 *   decision against people about to be replaced could undo the one in
 *   flight. A re-scan used to read review.json afresh and replace the review
 *   under a decision made while it ran (rename during F5: the window reverted
 *   and the next save dropped the rename); now a re-scan of the same library
 *   keeps the review in memory and clusters with a copy of its pins, and the
 *   decisions queued meanwhile are made against the new people. One that no
 *   longer applies by its turn is reported ("decision-failed"), never dropped.
 * - A load that lands while a decision is committing waits for that commit:
 *   the commit's worker reads the scan's pairs being replaced.
 * - Loaded asynchronously (the window), the session watches its review.json
 *   (GFileMonitor). When another process (a second window, likeness-cli
 *   review) saved there, it takes their decisions in with lk_review_refresh,
 *   which keeps its own (saved or not), re-clusters, and says so
 *   ("decisions-refreshed"); its own saves change nothing there. Events are
 *   gathered for REFRESH_DELAY_MS (one atomic save is several events), and
 *   the refresh waits while a decision commits or a load runs, as a decision
 *   does. Saving merges under a lock (lk_review_save), so a decision this
 *   session has not read yet is never overwritten either.
 * - The commit's worker holds the session (so its review), and the
 *   application, if there is one, is held until the commit lands: closing the
 *   window or opening another library never loses a decision.
 * - The people model is updated in place by id: a person that keeps its id
 *   keeps its LkPersonItem, so bound tiles follow renames and re-scans without
 *   a rebuild and the grid keeps its scroll position.
 * - A library whose folder cannot be written is found twice over: access
 *   (W_OK) when it loads (cheap, and lets the window say so before the first
 *   decision), and a save failing with LK_REVIEW_ERROR_READ_ONLY (access can
 *   be wrong: ACLs, network file systems, a medium turned read-only since).
 *   Whatever the last save found wins. lk_session_save_elsewhere moves the
 *   review.json for good (lk-review-location.h); the library folder is never
 *   written then.
 */
#include "config.h"

#include <glib/gi18n.h>

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "people/lk-calibrate.h"
#include "library/lk-review-location.h"
#include "scan/lk-scan-cache.h"
#include "scan/lk-scan.h"
#include "lk-session-private.h"
#include "lk-session.h"
#include "people/lk-source-people.h"

#define REVIEW_FILE      "review.json"
/* Milliseconds of quiet in review.json's events before it is read again:
 * long enough to take one atomic save (temporary file, rename, folder fsync)
 * as one change, short enough that another window's decision shows at once. */
#define REFRESH_DELAY_MS 150

/* What a load's worker needs: its own copies, never the session's state. */
typedef struct
{
  LkSession *session; /* for progress only; held by the task */
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

/* What a load hands over to the main thread. */
typedef struct
{
  LkLibrary *library;
  LkReview *review;   /* NULL: the session keeps its own */
  LkScanResult *scan; /* NULL for lk_session_open */
  LkPeople *people;
  GArray *questions;               /* of LkQuestion, for `people` (find_questions) */
  LkQuestionLinks *question_links; /* what they were scored from, or NULL */
  guint64 faces;                   /* LkScanReuse.faces of `scan`: what the links are kept under */
  LkClusterMemo *memo;             /* what clustered `people`, for the decisions' re-clustering */
  double probability_bar;
  char *review_path;         /* where decisions are saved (lk_review_location_resolve) */
  gboolean read_only;        /* the library's folder cannot be written */
  gboolean replace_review;   /* start over: the next save replaces review.json */
  LkCalibration calibration; /* what the scan used (lk_calibration_in_force) */
  const char *calibration_source;
  LkCalibrationGuard guard;      /* of that calibration; sampled 0 without a scan */
  gboolean calibration_changed;  /* the review's "calibration" becomes calibration_node */
  JsonNode *calibration_node;    /* may be NULL (back to the library's own) */
  gboolean estimated_on_its_own; /* the change was estimate_missing's */
  char *estimate_failure;        /* estimate_missing's estimate failed: why; else NULL */
} LoadResult;

struct _LkSession
{
  GObject parent_instance;

  GList *live_link; /* its entry in `live` */

  char *folder;        /* as given */
  LkPathMap photo_map; /* from == NULL: none (lk_session_set_photo_map) */
  double requested_bar;
  gboolean start_over;
  gboolean background;
  gboolean release_embeddings;
  GMainContext *context; /* where progress is notified and loads land */

  /* What a landed load installed (main thread). */
  gboolean loaded;
  gboolean synchronous; /* loaded by lk_session_load: decisions commit in place */
  LkLibrary *library;
  LkReview *review;
  LkScanResult *scan;
  LkPeople *people;
  GArray *questions; /* of LkQuestion: "Is this Ada?" for `people`, found with them */
  /* What they were scored from, or NULL: the next commit's pass compares
   * only the faces whose roles its decision changed. Of this scan's faces. */
  LkQuestionLinks *question_links;
  guint64 faces; /* LkScanReuse.faces of `scan`: the links are kept under it */
  LkClusterInput input;
  /* The last clustering of `input`, so a decision clusters again only the
   * components of the pair graph its pins reach (lk_cluster_with_memo: at
   * 100,000 faces, a merge of the two largest people took 14.4 s of CPU
   * clustering everything and 0.86 s with the memo, bench-people, Zen 1).
   * Read and replaced by the commit's worker, which
   * runs alone (see commit_in_thread); dropped with the scan it points into. */
  LkClusterMemo *memo;
  double probability_bar;
  char *review_path;
  gboolean read_only;
  gboolean replace_review;
  LkCalibration calibration;
  const char *calibration_source;
  LkCalibrationGuard guard;
  gboolean estimate_missing;  /* lk_session_set_estimate_missing */
  LkCalibrationChange change; /* for the next load (lk_session_set_calibration_change) */
  LkCalibrationFrom change_from;
  gboolean estimated_on_its_own; /* the last load did (lk_session_estimated_on_its_own) */
  char *estimate_failure;   /* the last load's estimate failed (lk_session_get_estimate_failure) */
  GListStore *people_store; /* of LkPersonItem */
  float *centroids;         /* per person of `people`, lazily (ensure_centroids) */
  double median_crop;       /* of the library's faces, with the centroids */
  GHashTable *items;        /* id → LkPersonItem (borrowed from the store) */

  /* Decisions. */
  gboolean committing;     /* a decision's save and re-cluster are running */
  GQueue queue;            /* of LkReviewRequest *: decisions made meanwhile, in order */
  GApplication *queue_app; /* held while the queue is not empty, or NULL */
  gboolean unsaved;        /* the last save failed: decisions only in memory */

  /* Other writers (asynchronous sessions only). */
  GFileMonitor *monitor; /* of review_path */
  char *monitored_path;
  GSource *refresh_source; /* the REFRESH_DELAY_MS timeout, in `context` */
  gboolean refresh_wanted; /* review.json changed; read it once nothing is in flight */

  /* Loading. */
  guint load_serial; /* of the newest load; older ones are superseded */
  gboolean loading;  /* the newest load runs */
  GCancellable *load_cancellable;
  GTask *held_task; /* a load that landed while a decision committed */
  LoadResult *held_result;

  /* Progress: written by the worker under `lock`, copied by the idle. */
  GMutex lock;
  const char *w_message;
  double w_fraction;
  gint64 w_phase_start;
  guint64 w_total;
  gboolean idle_pending;
  /* Main thread only. */
  const char *message;
  double fraction;
  gint64 phase_start;
  guint64 total;
};

G_DEFINE_FINAL_TYPE (LkSession, lk_session, G_TYPE_OBJECT)

/* Every session of the process, for lk_session_list_all (): a weak
 * reference each (GWeakRef *), newest first, so listing never revives a
 * session being finalized on a worker thread (a GTask may drop the last
 * reference there). */
static GMutex live_lock;
static GQueue live = G_QUEUE_INIT;

enum
{
  SIGNAL_CHANGED,
  SIGNAL_SAVE_FAILED,
  SIGNAL_DECISION_FAILED,
  SIGNAL_DECISIONS_REFRESHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_COMMITTING,
  PROP_MESSAGE,
  PROP_FRACTION,
  PROP_TOTAL,
  PROP_LOADING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
load_request_free (gpointer data)
{
  LoadRequest *request = data;

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

static void
load_result_free (gpointer data)
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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LoadResult, load_result_free)

static GPtrArray *
copy_pins (const GPtrArray *pins)
{
  GPtrArray *copy = g_ptr_array_new_full (pins->len, (GDestroyNotify) lk_pin_free);

  for (guint k = 0; k < pins->len; k++)
    g_ptr_array_add (copy, lk_pin_copy (g_ptr_array_index (pins, k)));
  return copy;
}

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
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MESSAGE]);
    }
  if (self->fraction != fraction)
    {
      self->fraction = fraction;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FRACTION]);
    }
  if (self->total != total)
    {
      self->total = total;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOTAL]);
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

/* "Is this Ada?" for `people`, found where they were grouped (a load's or a
 * commit's worker): the window's grid and dialog then only read the list.
 * Scored from the links down to the question bar (lk_people_question_links:
 * candidates × named faces, the scan's kernels; after a decision only the
 * faces whose roles it changed, against `previous`, the links of the people
 * before it, kept in *links); without the embeddings
 * (lk_session_set_release_embeddings) from the scan's pairs alone. A pass
 * that fails (cancelled, over the pair budget) leaves the scan's pairs'
 * questions, said once in the log. The links are kept in the user's cache
 * after every pass that compared something (lk_question_links_keep, under
 * `kept_faces`, LkScanReuse.faces), and an opening, which has no `previous`,
 * starts from them when they are of these faces: at 100,000 faces its pass
 * is then as small as a decision's (README "What the pass costs"). */
static GArray *
find_questions (const LkLibrary *library, const LkCalibration *calibration, double bar,
                const LkPeople *people, const LkClusterInput *input, const GPtrArray *pins,
                const LkQuestionLinks *previous, guint64 kept_faces, LkQuestionLinks **links,
                gboolean background, GCancellable *cancellable)
{
  *links = NULL;
  if (library->embeddings != NULL)
    {
      LkFaces faces;
      lk_faces_from_library (&faces, library);
      g_autoptr (GError) error = NULL;
      g_autofree char *path = lk_question_links_path (library->folder);
      g_autoptr (LkQuestionLinks) kept = NULL;
      double question_bar = MIN (bar, LK_QUESTION_BAR);
      if (previous == NULL)
        {
          g_autofree char *why = NULL;
          kept = lk_question_links_kept (path, kept_faces, library->count, calibration,
                                         question_bar, &why);
          if (kept == NULL)
            g_debug ("%s: the questions' pass in full: %s", library->folder, why);
          previous = kept;
        }
      *links = lk_people_question_links (people, &faces, calibration, question_bar, previous,
                                         background, cancellable, &error);
      if (*links != NULL && (*links)->compared > 0
          && !lk_question_links_keep (*links, kept_faces, path))
        g_debug ("%s: the questions' links could not be kept in %s", library->folder, path);
      if (*links != NULL)
        return lk_people_questions_from_links (people, input, *links, pins, 0);
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("%s: the questions below the bar were not looked for: %s", library->folder,
                   error->message);
    }
  return lk_people_questions (people, input, pins, 0);
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
  result->questions = find_questions (library, &result->calibration, result->probability_bar,
                                      result->people, &input, pins, NULL, result->faces,
                                      &result->question_links, request->background, cancellable);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return g_steal_pointer (&result);
}

/* Brings the people store in line with self->people, reusing the items of
 * `items` (id → LkPersonItem, may be NULL) by id. */
static void
sync_people (LkSession *self, GHashTable *items)
{
  const LkPeople *people = self->people;
  g_autoptr (GPtrArray) next = g_ptr_array_new_full (people->n_people + 1, g_object_unref);
  gboolean same_order
      = g_list_model_get_n_items (G_LIST_MODEL (self->people_store)) == people->n_people + 1;

  self->items = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *person = &people->people[k];
      LkPersonItem *item = items != NULL ? g_hash_table_lookup (items, person->id) : NULL;

      if (item != NULL)
        {
          g_object_ref (item);
          lk_person_item_update (item, person);
        }
      else
        item = lk_person_item_new_person (person);
      g_ptr_array_add (next, item);
      g_hash_table_insert (self->items, (gpointer) lk_person_item_get_id (item), item);
    }

  LkPersonItem *unassigned
      = items != NULL ? g_hash_table_lookup (items, LK_PERSON_ITEM_UNASSIGNED_ID) : NULL;
  if (unassigned != NULL)
    {
      g_object_ref (unassigned);
      lk_person_item_update_unassigned (unassigned, people->unassigned, people->n_unassigned);
    }
  else
    unassigned = lk_person_item_new_unassigned (people->unassigned, people->n_unassigned);
  g_ptr_array_add (next, unassigned);
  g_hash_table_insert (self->items, (gpointer) lk_person_item_get_id (unassigned), unassigned);

  for (guint k = 0; same_order && k < next->len; k++)
    {
      g_autoptr (GObject) old = g_list_model_get_item (G_LIST_MODEL (self->people_store), k);
      same_order = old == g_ptr_array_index (next, k);
    }
  if (!same_order)
    g_list_store_splice (self->people_store, 0,
                         g_list_model_get_n_items (G_LIST_MODEL (self->people_store)), next->pdata,
                         next->len);
}

/* Replaces the people and their questions, keeping the items of the people
 * who keep their ids. */
static void
set_people (LkSession *self, LkPeople *people, GArray *questions, LkQuestionLinks *links)
{
  g_clear_pointer (&self->people, lk_people_free);
  g_clear_pointer (&self->questions, g_array_unref);
  g_clear_pointer (&self->question_links, lk_question_links_free);
  g_clear_pointer (&self->centroids, g_free);
  self->people = people;
  self->questions = questions;
  self->question_links = links;
  g_autoptr (GHashTable) items = g_steal_pointer (&self->items);
  sync_people (self, items);
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
      set_people (self, people, questions, links);
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
      request->pins = copy_pins (lk_review_pins (self->review));
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

static LkReviewSaveFlags save_flags (LkSession *self);
static void saved (LkSession *self, const GError *save_error);

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
  load_result_free (result);
  self->synchronous = TRUE;
  if (changed)
    {
      /* The calibration change is saved like a decision; its failure is the
       * load's (the CLI says it was not saved). */
      g_autoptr (GError) save_error = NULL;
      lk_review_save (self->review, self->review_path, save_flags (self), &save_error);
      saved (self, save_error);
      if (save_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&save_error));
          return FALSE;
        }
    }
  return TRUE;
}

static void make_queued (LkSession *self);
static void refresh_when_idle (LkSession *self);
static void watch_review (LkSession *self);
static void start_commit (LkSession *self, gboolean save, guint n_refreshed);

static void
finish_load (LkSession *self, GTask *task, LoadResult *result)
{
  gboolean changed = result->calibration_changed;
  land (self, result);
  load_result_free (result);
  self->loading = FALSE;
  /* The last progress the worker reported, so the window's final figures are right. */
  on_progress_idle (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  g_task_return_boolean (task, TRUE);
  watch_review (self);
  /* A calibration change is saved as a decision is (its failure says
   * "save-failed"); decisions queued meanwhile follow it. */
  if (changed)
    start_commit (self, TRUE, 0);
  make_queued (self);
  refresh_when_idle (self);
}

static void
on_load_thread_done (GObject *source, GAsyncResult *async_result, gpointer user_data)
{
  LkSession *self = LK_SESSION (source);
  g_autoptr (GTask) task = user_data; /* the caller's */
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
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
        }
    }
  if (result != NULL && (!newest || g_cancellable_is_cancelled (request->cancellable)))
    {
      load_result_free (result);
      result = NULL;
      g_clear_error (&error);
      g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                           _ ("The library was loaded again before this load ended"));
      if (newest)
        {
          self->loading = FALSE;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
        }
    }
  if (result == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      if (newest)
        {
          make_queued (self);
          refresh_when_idle (self);
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
  finish_load (self, task, result);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadRequest *request = task_data;
  GError *error = NULL;
  LoadResult *result = load_in_thread (request, request->cancellable, &error);

  if (result != NULL)
    g_task_return_pointer (task, result, load_result_free);
  else
    g_task_return_error (task, error);
}

static void
on_caller_cancelled (GCancellable *caller, gpointer user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
}

/* ---- decisions --------------------------------------------------------- */

/* What a commit's worker needs. The pins are its own copy, so the main thread
 * may read the review's (lazily built) pins while it runs. The session is
 * borrowed: the completion callback holds it, so the review being saved
 * outlives a window that closed meanwhile, and the last reference is dropped
 * on the main thread. */
typedef struct
{
  LkSession *session;
  GPtrArray *pins;   /* of LkPin *, owned */
  GArray *dismissed; /* faces dismissed as no face, owned */
  LkReviewSaveFlags flags;
  gboolean save;     /* FALSE: only re-cluster (decisions other writers saved) */
  guint n_refreshed; /* decisions that came in from other writers */
  GApplication *app; /* held until the commit lands, or NULL */
} CommitRequest;

typedef struct
{
  LkPeople *people;  /* NULL with cluster_error */
  GArray *questions; /* for `people` */
  LkQuestionLinks *question_links;
  GError *cluster_error;
  GError *save_error; /* NULL when review.json was written */
} CommitResult;

static void
commit_request_free (gpointer data)
{
  CommitRequest *request = data;

  g_ptr_array_unref (request->pins);
  g_array_unref (request->dismissed);
  g_free (request);
}

static void
commit_result_free (gpointer data)
{
  CommitResult *result = data;

  g_clear_pointer (&result->people, lk_people_free);
  g_clear_pointer (&result->questions, g_array_unref);
  g_clear_pointer (&result->question_links, lk_question_links_free);
  g_clear_error (&result->cluster_error);
  g_clear_error (&result->save_error);
  g_free (result);
}

/* The corrupt or foreign review.json the user chose to start over from (the
 * library's own, or the remembered one elsewhere) is replaced; once a save
 * elsewhere wrote a file of ours, nothing needs replacing any more. */
static LkReviewSaveFlags
save_flags (LkSession *self)
{
  return self->replace_review ? LK_REVIEW_SAVE_REPLACE : LK_REVIEW_SAVE_DEFAULT;
}

/* What a save found beats what access () said when the library opened. */
static void
saved (LkSession *self, const GError *save_error)
{
  self->unsaved = save_error != NULL;
  if (!lk_session_saves_elsewhere (self))
    {
      if (save_error == NULL)
        self->read_only = FALSE;
      else if (g_error_matches (save_error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_READ_ONLY))
        self->read_only = TRUE;
    }
}

static void
commit_in_thread (GTask *task, gpointer source_object, gpointer task_data,
                  GCancellable *cancellable)
{
  CommitRequest *request = task_data;
  LkSession *self = request->session;
  CommitResult *result = g_new0 (CommitResult, 1);

  /* No decision changes the review while self->committing (they wait in
   * self->queue), and a load landing meanwhile waits too, so reading the
   * review and the pairs here races with nothing. */
  if (request->save)
    lk_review_save (self->review, self->review_path, request->flags, &result->save_error);
  if (self->scan != NULL)
    {
      LkClusterOptions options = { .linkage = LK_LINKAGE_AVERAGE, .dismissed = request->dismissed };
      result->people = lk_cluster_with_memo (&self->input, request->pins, &options, &self->memo,
                                             &result->cluster_error);
      if (result->people != NULL)
        result->questions
            = find_questions (self->library, &self->calibration, self->probability_bar,
                              result->people, &self->input, request->pins, self->question_links,
                              self->faces, &result->question_links, self->background, NULL);
    }
  g_task_return_pointer (task, result, commit_result_free);
}

static void
on_commit_done (GObject *source_object, GAsyncResult *async_result, gpointer user_data)
{
  g_autoptr (LkSession) self = user_data;
  CommitRequest *request = g_task_get_task_data (G_TASK (async_result));
  CommitResult *result = g_task_propagate_pointer (G_TASK (async_result), NULL);

  self->committing = FALSE;
  if (request->save)
    saved (self, result->save_error);
  if (result->save_error != NULL)
    g_signal_emit (self, signals[SIGNAL_SAVE_FAILED], 0, result->save_error);
  if (result->people != NULL)
    set_people (self, g_steal_pointer (&result->people), g_steal_pointer (&result->questions),
                g_steal_pointer (&result->question_links));
  else if (result->cluster_error != NULL)
    g_warning ("The people could not be regrouped after a decision: %s",
               result->cluster_error->message);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMITTING]);
  if (result->cluster_error == NULL)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  if (request->n_refreshed > 0)
    g_signal_emit (self, signals[SIGNAL_DECISIONS_REFRESHED], 0, request->n_refreshed);
  commit_result_free (result);
  if (self->held_task != NULL)
    {
      GTask *task = g_steal_pointer (&self->held_task);
      LoadResult *held = g_steal_pointer (&self->held_result);

      /* Cancelled while it waited: it changes nothing, as a running one. */
      if (g_task_return_error_if_cancelled (task))
        {
          load_result_free (held);
          self->loading = FALSE;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
        }
      else
        finish_load (self, task, held);
      g_object_unref (task);
    }
  /* The next decision's commit holds the application itself before this one
   * lets go, so closing the window cannot end the process in between. */
  make_queued (self);
  refresh_when_idle (self);
  if (request->app != NULL)
    {
      g_application_release (request->app);
      g_clear_object (&request->app);
    }
}

/* After a decision was recorded: save and re-cluster — on a worker once
 * loaded asynchronously (the people and "changed" follow when it lands; the
 * application, if any, is held meanwhile, so closing the last window does not
 * end the process before review.json is written), in place when loaded
 * synchronously (FALSE with the save's error). */
static gboolean
commit (LkSession *self, GError **error)
{
  if (self->synchronous)
    {
      g_autoptr (GError) save_error = NULL;

      lk_review_save (self->review, self->review_path, save_flags (self), &save_error);
      saved (self, save_error);
      g_autoptr (GError) cluster_error = NULL;
      if (self->scan != NULL)
        {
          LkClusterOptions options
              = { .linkage = LK_LINKAGE_AVERAGE, .dismissed = lk_review_dismissed (self->review) };
          LkPeople *people = lk_cluster_with_memo (&self->input, lk_review_pins (self->review),
                                                   &options, &self->memo, &cluster_error);
          if (people != NULL)
            {
              LkQuestionLinks *links = NULL;
              GArray *questions = find_questions (
                  self->library, &self->calibration, self->probability_bar, people, &self->input,
                  lk_review_pins (self->review), self->question_links, self->faces, &links,
                  self->background, NULL);
              set_people (self, people, questions, links);
              g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
            }
        }
      /* The save's failure first: it is the one that loses a decision. */
      if (save_error != NULL || cluster_error != NULL)
        {
          g_propagate_error (error, save_error != NULL ? g_steal_pointer (&save_error)
                                                       : g_steal_pointer (&cluster_error));
          return FALSE;
        }
      return TRUE;
    }

  start_commit (self, TRUE, 0);
  return TRUE;
}

/* The worker of a commit: save (unless only other writers' decisions came
 * in) and re-cluster. */
static void
start_commit (LkSession *self, gboolean save, guint n_refreshed)
{
  CommitRequest *request = g_new0 (CommitRequest, 1);

  request->session = self;
  request->pins = copy_pins (lk_review_pins (self->review));
  request->dismissed = g_array_copy ((GArray *) lk_review_dismissed (self->review));
  request->flags = save_flags (self);
  request->save = save;
  request->n_refreshed = n_refreshed;
  request->app = g_application_get_default ();
  if (request->app != NULL)
    g_application_hold (g_object_ref (request->app));

  self->committing = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMITTING]);
  g_autoptr (GTask) task = g_task_new (NULL, NULL, on_commit_done, g_object_ref (self));
  g_task_set_source_tag (task, commit);
  g_task_set_task_data (task, request, commit_request_free);
  g_task_run_in_thread (task, commit_in_thread);
}

/* A decision made while the previous one is still being saved and
 * re-clustered, or while a re-scan runs. It is not checked against the
 * people on screen — they are about to be replaced, and a decision recorded
 * against them could undo the one in flight (a rename of a person just merged
 * away would pin its old faces again) — but kept as asked and made, in order,
 * against the people that land. */
/* TRUE: something is in flight, and (a copy of) the decision waits in the queue. */
static gboolean
defer (LkSession *self, const LkReviewRequest *request)
{
  if (!self->committing && !self->loading)
    return FALSE;
  if (!self->loaded)
    return FALSE; /* nothing to decide on yet: check_people says so */
  g_queue_push_tail (&self->queue, lk_review_request_copy (request));
  /* Like a commit, a queued decision keeps the application (if any) running
   * until it is made: closing the window during a re-scan must not end the
   * process before the decision is saved. */
  if (self->queue_app == NULL && g_application_get_default () != NULL)
    {
      self->queue_app = g_object_ref (g_application_get_default ());
      g_application_hold (self->queue_app);
    }
  return TRUE;
}

static gboolean check_people (LkSession *self, GError **error);
static gboolean check_review (LkSession *self, GError **error);

/* Every decision's one path, whoever asked (the window's actions, the CLI's
 * command line, the queue): queued while something is in flight, else
 * checked against the people on screen, applied and committed. */
static gboolean
decide (LkSession *self, const LkReviewRequest *request, char **new_id, GError **error)
{
  gboolean history = request->action == LK_REVIEW_UNDO || request->action == LK_REVIEW_REDO;

  if (defer (self, request))
    {
      if (new_id != NULL)
        *new_id = NULL; /* named when its turn comes */
      return TRUE;
    }
  if (!check_review (self, error) || (!history && !check_people (self, error)))
    return FALSE;
  if (history
      && !(request->action == LK_REVIEW_UNDO ? lk_review_can_undo (self->review)
                                             : lk_review_can_redo (self->review)))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                           request->action == LK_REVIEW_UNDO ? _ ("There is nothing to undo")
                                                             : _ ("There is nothing to redo"));
      return FALSE;
    }
  return lk_review_apply (self->review, self->people, request, new_id, error)
         && commit (self, error);
}

/* The next waiting decisions, until one is in flight again. */
static void
make_queued (LkSession *self)
{
  while (!self->committing && !self->loading && !g_queue_is_empty (&self->queue))
    {
      g_autoptr (LkReviewRequest) request = g_queue_pop_head (&self->queue);
      g_autoptr (GError) error = NULL;
      if (!decide (self, request, NULL, &error))
        g_signal_emit (self, signals[SIGNAL_DECISION_FAILED], 0, error);
    }
  /* Made (each commit holds the application itself) or reported. */
  if (g_queue_is_empty (&self->queue) && self->queue_app != NULL)
    {
      g_application_release (self->queue_app);
      g_clear_object (&self->queue_app);
    }
}

/* A decision needs people to be checked against (lk_session_open loads none). */
static gboolean
check_people (LkSession *self, GError **error)
{
  if (self->people != NULL)
    return TRUE;
  g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
               _ ("%s has not been scanned yet, so there are no people to decide on"),
               self->folder);
  return FALSE;
}

static gboolean
check_review (LkSession *self, GError **error)
{
  if (self->review != NULL)
    return TRUE;
  g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, _ ("%s has not been opened yet"),
               self->folder);
  return FALSE;
}

/* Saving elsewhere and retrying a save wait for the decision in flight: they
 * change where it is being written. (Decisions themselves wait in the queue
 * instead; see defer().) */
static gboolean
check_idle (LkSession *self, GError **error)
{
  if (!check_review (self, error))
    return FALSE;
  if (!self->committing)
    return TRUE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                       _ ("The previous change is still being saved; try again in a moment"));
  return FALSE;
}

/* ---- other writers ------------------------------------------------------ */

/* review.json changed and nothing is in flight: take in what other writers
 * saved there. On the main thread, because lk_review_refresh changes the
 * review, which the main thread reads (pins, undo descriptions) at any time,
 * so a worker would race with it; the re-clustering, the larger part, runs
 * on a worker as a decision's does. Its cost grows with the file: 11-26 ms
 * for a 300-decision, 70 KB review.json of the 2,000-face sample (read,
 * parsed and merged; Zen 4 EPYC, 2 cores shared with other builds, load ~8),
 * once per change another process makes, never per own decision. */
static void
refresh_when_idle (LkSession *self)
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
    start_commit (self, FALSE, n_changed);
}

static gboolean
on_refresh_timeout (gpointer user_data)
{
  LkSession *self = user_data;

  g_clear_pointer (&self->refresh_source, g_source_unref);
  self->refresh_wanted = TRUE;
  refresh_when_idle (self);
  return G_SOURCE_REMOVE;
}

static void
on_review_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event,
                   gpointer user_data)
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
static void
watch_review (LkSession *self)
{
  if (self->synchronous || self->review_path == NULL
      || g_strcmp0 (self->monitored_path, self->review_path) == 0)
    return;
  if (self->monitor != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->monitor, on_review_changed, self);
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
  g_signal_connect (self->monitor, "changed", G_CALLBACK (on_review_changed), self);
}

/* ---- GObject ----------------------------------------------------------- */

static void
lk_session_finalize (GObject *object)
{
  LkSession *self = LK_SESSION (object);

  g_mutex_lock (&live_lock);
  GWeakRef *live_ref = self->live_link->data;
  g_queue_delete_link (&live, self->live_link);
  g_mutex_unlock (&live_lock);
  g_weak_ref_clear (live_ref);
  g_free (live_ref);

  g_queue_clear_full (&self->queue, (GDestroyNotify) lk_review_request_free);
  if (self->queue_app != NULL)
    {
      g_application_release (self->queue_app);
      g_clear_object (&self->queue_app);
    }
  if (self->refresh_source != NULL)
    {
      g_source_destroy (self->refresh_source);
      g_clear_pointer (&self->refresh_source, g_source_unref);
    }
  if (self->monitor != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->monitor, on_review_changed, self);
      g_file_monitor_cancel (self->monitor);
      g_clear_object (&self->monitor);
    }
  g_free (self->estimate_failure);
  g_free (self->monitored_path);
  g_clear_pointer (&self->held_result, load_result_free);
  g_clear_object (&self->held_task);
  g_clear_object (&self->load_cancellable);
  g_clear_pointer (&self->items, g_hash_table_unref);
  g_clear_object (&self->people_store);
  g_clear_pointer (&self->people, lk_people_free);
  g_clear_pointer (&self->questions, g_array_unref);
  g_clear_pointer (&self->question_links, lk_question_links_free);
  g_clear_pointer (&self->centroids, g_free);
  g_clear_pointer (&self->memo, lk_cluster_memo_free);
  g_clear_pointer (&self->scan, lk_scan_result_free);
  g_clear_pointer (&self->review, lk_review_free);
  g_clear_pointer (&self->library, lk_library_free);
  g_free (self->review_path);
  g_free (self->folder);
  lk_path_map_clear (&self->photo_map);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (lk_session_parent_class)->finalize (object);
}

static void
lk_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkSession *self = LK_SESSION (object);

  switch (prop_id)
    {
      case PROP_COMMITTING:
        g_value_set_boolean (value, self->committing);
        break;
      case PROP_MESSAGE:
        g_value_set_string (value, self->message);
        break;
      case PROP_FRACTION:
        g_value_set_double (value, self->fraction);
        break;
      case PROP_TOTAL:
        g_value_set_uint64 (value, self->total);
        break;
      case PROP_LOADING:
        g_value_set_boolean (value, self->loading);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_session_class_init (LkSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = lk_session_finalize;
  object_class->get_property = lk_session_get_property;

  /* A decision's save and re-cluster are running; decisions wait for it. */
  properties[PROP_COMMITTING]
      = g_param_spec_boolean ("committing", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* What the running load is doing, how far (negative: cannot tell), and how
   * many faces it covers; updated at most once per main-loop turn. */
  properties[PROP_MESSAGE]
      = g_param_spec_string ("message", NULL, NULL, NULL,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FRACTION]
      = g_param_spec_double ("fraction", NULL, NULL, -1.0, 1.0, 0.0,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TOTAL]
      = g_param_spec_uint64 ("total", NULL, NULL, 0, G_MAXUINT64, 0,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* An asynchronous load runs; decisions wait for it. */
  properties[PROP_LOADING]
      = g_param_spec_boolean ("loading", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The people changed: a load landed, or a decision, an undo or a redo. */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* review.json could not be written; the decisions are kept in memory. */
  signals[SIGNAL_SAVE_FAILED]
      = g_signal_new ("save-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* A decision made while another was saving or a re-scan ran, which no
   * longer applied when its turn came (its person was merged away, nothing
   * left to undo). */
  signals[SIGNAL_DECISION_FAILED]
      = g_signal_new ("decision-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* Decisions another process saved in review.json (a second window,
   * likeness-cli review) were taken in; the people follow ("changed" came
   * first). The argument counts the decisions that came into effect or left. */
  signals[SIGNAL_DECISIONS_REFRESHED]
      = g_signal_new ("decisions-refreshed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
lk_session_init (LkSession *self)
{
  g_mutex_init (&self->lock);
  self->people_store = g_list_store_new (LK_TYPE_PERSON_ITEM);
  self->items = g_hash_table_new (g_str_hash, g_str_equal);
  self->context = g_main_context_ref_thread_default ();

  GWeakRef *live_ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (live_ref, self);
  g_mutex_lock (&live_lock);
  g_queue_push_head (&live, live_ref);
  self->live_link = live.head;
  g_mutex_unlock (&live_lock);
}

/* ---- public API -------------------------------------------------------- */

LkSession *
lk_session_new (const char *folder)
{
  g_return_val_if_fail (folder != NULL, NULL);

  LkSession *self = g_object_new (LK_TYPE_SESSION, NULL);
  self->folder = g_strdup (folder);
  return self;
}

void
lk_session_set_probability_bar (LkSession *self, double probability_bar)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->requested_bar = probability_bar;
}

void
lk_session_set_start_over (LkSession *self, gboolean start_over)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->start_over = start_over;
}

void
lk_session_set_release_embeddings (LkSession *self, gboolean release)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->release_embeddings = release;
}

void
lk_session_set_background (LkSession *self, gboolean background)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->background = background;
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
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
    }

  GTask *worker = g_task_new (self, NULL, on_load_thread_done, task);
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

      g_clear_pointer (&self->held_result, load_result_free);
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

gboolean
lk_session_is_loaded (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->loaded;
}

GPtrArray *
lk_session_list_all (void)
{
  GPtrArray *sessions = g_ptr_array_new_with_free_func (g_object_unref);

  g_mutex_lock (&live_lock);
  for (GList *l = live.head; l != NULL; l = l->next)
    {
      LkSession *session = g_weak_ref_get (l->data);
      if (session != NULL)
        g_ptr_array_add (sessions, session);
    }
  g_mutex_unlock (&live_lock);
  return sessions;
}

gboolean
lk_session_is_loading (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->loading;
}

const char *
lk_session_get_message (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->message;
}

double
lk_session_get_fraction (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->fraction;
}

double
lk_session_get_phase_seconds (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->phase_start > 0 ? (g_get_monotonic_time () - self->phase_start) / 1e6 : 0.0;
}

guint64
lk_session_get_total (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->total;
}

const char *
lk_session_get_folder (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->library != NULL ? self->library->folder : self->folder;
}

void
lk_session_set_photo_map (LkSession *self, const LkPathMap *map)
{
  g_return_if_fail (LK_IS_SESSION (self));
  lk_path_map_clear (&self->photo_map);
  if (map != NULL && map->from != NULL && map->to != NULL)
    {
      self->photo_map.from = g_strdup (map->from);
      self->photo_map.to = g_strdup (map->to);
    }
}

const LkPathMap *
lk_session_get_photo_map (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->photo_map.from != NULL ? &self->photo_map : NULL;
}

const LkLibrary *
lk_session_get_library (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->library;
}

LkReview *
lk_session_get_review (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->review;
}

const LkScanResult *
lk_session_get_scan (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->scan;
}

const LkClusterInput *
lk_session_get_cluster_input (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->scan != NULL ? &self->input : NULL;
}

const LkPeople *
lk_session_peek_people (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->people;
}

double
lk_session_get_probability_bar (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->probability_bar;
}

double
lk_session_get_scan_seconds (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->scan != NULL ? self->scan->seconds : 0.0;
}

const LkCalibration *
lk_session_get_calibration (LkSession *self, const char **source)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  if (source != NULL)
    *source = self->calibration_source;
  return self->loaded ? &self->calibration : NULL;
}

const LkCalibrationGuard *
lk_session_get_guard (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return &self->guard;
}

gsize
lk_session_get_n_pairs (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->scan != NULL ? self->scan->pairs->len : 0;
}

GListModel *
lk_session_get_people (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return G_LIST_MODEL (self->people_store);
}

guint
lk_session_get_n_people (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->people != NULL ? self->people->n_people : 0;
}

LkPersonItem *
lk_session_find_person (LkSession *self, const char *id)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return id != NULL ? g_hash_table_lookup (self->items, id) : NULL;
}

char *
lk_session_thumbnail_path (LkSession *self, guint32 face)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (self->library != NULL && face < self->library->count, NULL);
  return lk_library_thumbnail_path (self->library, face);
}

char *
lk_session_describe_face (LkSession *self, guint32 face)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (self->library != NULL && face < self->library->count, NULL);

  const LkLibrary *library = self->library;
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
  /* Which of the photo's faces it is, not the library's row number ("Face
   * 561" meant nothing to a user, issue 30). A scan of the rows: 20,000
   * faces are some 20,000 comparisons, microseconds, once per tile bound. */
  guint rank = 0, in_photo = 0;
  for (gsize k = 0; k < library->count; k++)
    if (library->photo[k] == library->photo[face])
      {
        in_photo++;
        rank += k < face;
      }
  g_autofree char *where = NULL;
  if (photo != NULL && photo->path != NULL)
    where = g_strdup (photo->path);
  else
    {
      /* xgettext cannot expand G_GUINT64_FORMAT inside _(): translate a %s */
      g_autofree char *photo_id = g_strdup_printf ("%" G_GUINT64_FORMAT, library->photo[face]);
      /* Translators: a photo known only by its id, "photo 1234" */
      where = g_strdup_printf (_ ("photo %s"), photo_id);
    }
  if (in_photo <= 1)
    /* Translators: the only face of a photo, "The face in 2019/IMG_1.jpg" */
    return g_strdup_printf (_ ("The face in %s"), where);
  /* Translators: "Face 2 of 3 in 2019/IMG_1.jpg" */
  return g_strdup_printf (_ ("Face %u of %u in %s"), rank + 1, in_photo, where);
}

gboolean
lk_session_find_photo_clash (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                             const char *other_id, guint32 *a, guint32 *b)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (self->people == NULL)
    return FALSE;
  const LkLibrary *library = self->library;
  const LkPerson *me = id ? lk_people_find (self->people, id) : NULL;
  const LkPerson *other = other_id ? lk_people_find (self->people, other_id) : NULL;
  if (faces == NULL)
    {
      if (me == NULL)
        return FALSE;
      faces = me->faces;
      n_faces = me->n_faces;
    }
  /* Photo → its first face among `faces`, then among the other's. */
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  gsize n_other = other ? other->n_faces : 0;
  for (gsize k = 0; k < n_faces + n_other; k++)
    {
      guint32 f = k < n_faces ? faces[k] : other->faces[k - n_faces];
      if (f >= library->count)
        continue;
      const guint32 *prev = g_hash_table_lookup (seen, &library->photo[f]);
      if (prev != NULL && *prev != f)
        {
          *a = *prev;
          *b = f;
          return TRUE;
        }
      g_hash_table_insert (seen, &library->photo[f],
                           (gpointer) (k < n_faces ? &faces[k] : &other->faces[k - n_faces]));
    }
  return FALSE;
}

static GPtrArray *candidates (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                              GArray **similarity);

GPtrArray *
lk_session_merge_candidates (LkSession *self, const char *id, GArray **similarity)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (similarity != NULL, NULL);
  g_return_val_if_fail (self->people != NULL, NULL);
  g_return_val_if_fail (self->library->embeddings != NULL, NULL);
  return candidates (self, id, NULL, 0, similarity);
}

GPtrArray *
lk_session_move_candidates (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                            GArray **similarity)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (similarity != NULL, NULL);
  g_return_val_if_fail (self->people != NULL, NULL);
  g_return_val_if_fail (self->library->embeddings != NULL, NULL);
  g_return_val_if_fail (faces != NULL || n_faces == 0, NULL);
  return candidates (self, id, faces, n_faces, similarity);
}

static int
compare_float (gconstpointer x, gconstpointer y)
{
  float a = *(const float *) x, b = *(const float *) y;
  return a < b ? -1 : a > b;
}

/* The centroids of the people, computed once per clustering (set_people and
 * land drop them): a chooser opens many times between two clusterings, and
 * averaging costs more than an open. bench-chooser, AMD EPYC (Zen 4), load
 * 8.5–11: centroids 29 ms at 20,000 faces (1,670 people), 196 ms at 100,000
 * (6,598); an open with them kept 6.6 ms and 76 ms, 5.9× and 5.4× faster
 * than recomputing them per open. Most of an open at 100,000 is
 * lk_people_similar's walk over the 16.8 million pairs (62 ms). */
static void
ensure_centroids (LkSession *self)
{
  const LkLibrary *library = self->library;
  if (self->centroids != NULL)
    return;
  self->centroids
      = lk_people_centroids (self->people, library->embeddings, library->dim, library->count);
  self->median_crop = 0.0;
  if (library->count > 0 && library->crop_px != NULL)
    {
      g_autofree float *crops = g_memdup2 (library->crop_px, sizeof (float) * library->count);
      qsort (crops, library->count, sizeof (float), compare_float);
      self->median_crop = crops[library->count / 2];
    }
}

/* faces NULL: every face of `id` must be able to join (a merge); else only
 * those (a move). */
static GPtrArray *
candidates (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
            GArray **similarity)
{
  const LkPeople *people = self->people;
  const LkLibrary *library = self->library;
  g_autoptr (GPtrArray) result = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GArray) scores = g_array_new (FALSE, FALSE, sizeof (LkCandidateScore));
  g_autofree gboolean *taken = g_new0 (gboolean, MAX (people->n_people, 1));
  gssize self_index = -1;

  for (gsize k = 0; k < people->n_people; k++)
    if (strcmp (people->people[k].id, id) == 0)
      self_index = (gssize) k;

  /* Only merges that can succeed are offered: a person with a face in one of
   * this person's photos never can (two faces of one photo are two people),
   * and issue 14 saw such merges offered first, then refused. */
  if (self_index >= 0 || faces != NULL)
    {
      /* A move checks the faces that move: a person photographed with this
       * one (a face in the same group photo) may still take the faces that
       * are really theirs. */
      const LkPerson *me = self_index >= 0 ? &people->people[self_index] : NULL;
      const guint32 *mine = faces != NULL ? faces : me->faces;
      gsize n_mine = faces != NULL ? n_faces : me->n_faces;
      g_autoptr (GHashTable) photos = g_hash_table_new (g_int64_hash, g_int64_equal);
      for (gsize f = 0; f < n_mine; f++)
        if (mine[f] < library->count)
          g_hash_table_add (photos, &library->photo[mine[f]]);
      for (gsize k = 0; k < people->n_people; k++)
        for (gsize f = 0; f < people->people[k].n_faces && !taken[k]; f++)
          taken[k] = g_hash_table_contains (photos, &library->photo[people->people[k].faces[f]]);
    }

  /* Pairs link only the people the scan found close; the rest are ranked by
   * their centroids, so "most similar first" holds when no pair links
   * anyone (issue 15: at 20,000 faces the list fell back to size order). */
  ensure_centroids (self);
  g_autofree float *query = g_new0 (float, MAX (library->dim, 1));
  if (faces != NULL)
    lk_faces_centroid (library->embeddings, library->dim, library->count, faces, n_faces, query);
  else if (self_index >= 0)
    memcpy (query, self->centroids + (gsize) self_index * library->dim,
            sizeof (float) * library->dim);
  g_autoptr (GArray) ranked
      = lk_people_rank (people, &self->input, self_index, self->centroids, library->dim, query);
  /* "Alike": the pair model calls the centroids a likely pair (p >= 0.5) at
   * the library's median crop; a centroid is a face of the person's mean.
   * Without crop sizes the size term is left out (log2 1 = 0). */
  double crop = self->median_crop > 0 ? self->median_crop : 1.0;

  if (self_index >= 0)
    taken[self_index] = TRUE;
  for (guint k = 0; k < ranked->len; k++)
    {
      const LkSimilarPerson *s = &g_array_index (ranked, LkSimilarPerson, k);
      if (taken[s->person])
        continue;
      LkCandidateScore score = {
        .probability = s->pairs > 0 ? s->mean : 0.0,
        .cosine = s->cosine,
        .alike = lk_scan_probability (&self->calibration, s->cosine, crop) >= 0.5,
      };
      g_ptr_array_add (result,
                       g_object_ref (lk_session_find_person (self, people->people[s->person].id)));
      g_array_append_val (scores, score);
      taken[s->person] = TRUE;
    }
  *similarity = g_steal_pointer (&scores);
  return g_steal_pointer (&result);
}

GArray *
lk_session_suggestions (LkSession *self, gsize limit)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (self->people != NULL, NULL);

  /* Faces whose linkage sits within this of the merge threshold: wide enough to
   * catch the faces a user would disagree about, narrow enough that the list is
   * a short review rather than the whole library. */
  const double margin = 0.15;
  return lk_people_suggestions (self->people, &self->input, lk_review_pins (self->review),
                                LK_CLUSTER_DEFAULT_THRESHOLD, margin, limit);
}

const char *
lk_session_person_id (LkSession *self, gint32 index)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  if (self->people == NULL || index < 0 || (gsize) index >= self->people->n_people)
    return NULL;
  return self->people->people[index].id;
}

/* Each builds its request; decide () does the rest. */
static LkReviewRequest *
request_new (LkReviewAction action, const char *person, const char *other, const guint32 *faces,
             gsize n_faces)
{
  LkReviewRequest *request = lk_review_request_new (action, person);

  request->other = g_strdup (other);
  if (n_faces > 0)
    g_array_append_vals (request->faces, faces, (guint) n_faces);
  return request;
}

gboolean
lk_session_rename (LkSession *self, const char *id, const char *name, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_NAME, id, NULL, NULL, 0);
  request->name = g_strdup (name);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_merge (LkSession *self, const char *id, const char *other_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_MERGE, id, other_id, NULL, 0);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_remove_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                         GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_REMOVE, id, NULL, faces, n_faces);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_take_out_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                           char **new_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (new_id != NULL)
    *new_id = NULL;
  /* Two faces of one photo are never one person: then they can only leave. */
  const LkLibrary *library = self->library;
  gboolean one_photo = FALSE;
  for (gsize a = 0; library != NULL && a < n_faces && !one_photo; a++)
    for (gsize b = a + 1; b < n_faces && !one_photo; b++)
      one_photo = faces[a] < library->count && faces[b] < library->count
                  && library->photo[faces[a]] == library->photo[faces[b]];
  if (one_photo)
    return lk_session_remove_faces (self, id, faces, n_faces, error);
  return lk_session_move_faces (self, id, faces, n_faces, NULL, new_id, error);
}

gboolean
lk_session_move_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                       const char *target_id, char **new_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_MOVE, id, target_id, faces, n_faces);
  return decide (self, request, new_id, error);
}

gboolean
lk_session_set_cover (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_COVER, id, NULL, &face, 1);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_set_hidden (LkSession *self, const char *id, gboolean hidden, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request
      = request_new (hidden ? LK_REVIEW_HIDE : LK_REVIEW_UNHIDE, id, NULL, NULL, 0);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_confirm (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_CONFIRM, id, NULL, &face, 1);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_reject (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_REJECT, id, NULL, &face, 1);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_reject_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                         GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_REJECT, id, NULL, faces, n_faces);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_merge_many (LkSession *self, const char *id, const char *const *other_ids,
                       gsize n_others, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (n_others == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "no people were given to merge into %s", id);
      return FALSE;
    }
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_MERGE, id, other_ids[0], NULL, 0);
  if (n_others > 1)
    {
      request->others = g_new0 (char *, n_others);
      for (gsize k = 1; k < n_others; k++)
        request->others[k - 1] = g_strdup (other_ids[k]);
    }
  return decide (self, request, NULL, error);
}

gboolean
lk_session_dismiss (LkSession *self, const guint32 *faces, gsize n_faces, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_DISMISS, NULL, NULL, faces, n_faces);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_undismiss (LkSession *self, const guint32 *faces, gsize n_faces, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request
      = request_new (LK_REVIEW_UNDISMISS, NULL, NULL, faces, n_faces);
  return decide (self, request, NULL, error);
}

const guint32 *
lk_session_dismissed_faces (LkSession *self, gsize *n)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  *n = self->people != NULL ? self->people->n_dismissed : 0;
  return self->people != NULL ? self->people->dismissed : NULL;
}

GArray *
lk_session_questions (LkSession *self, gsize limit)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  guint n = lk_session_get_n_questions (self);
  if (limit > 0)
    n = MIN (n, (guint) MIN (limit, G_MAXUINT));
  GArray *copy = g_array_sized_new (FALSE, FALSE, sizeof (LkQuestion), n);
  if (n > 0)
    g_array_append_vals (copy, self->questions->data, n);
  return copy;
}

guint
lk_session_get_n_questions (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->people != NULL && self->scan != NULL && self->questions != NULL
             ? self->questions->len
             : 0;
}

void
lk_session_outliers_first (LkSession *self, guint32 *faces, gsize n_faces, double *score)
{
  g_return_if_fail (LK_IS_SESSION (self) && self->library != NULL
                    && self->library->embeddings != NULL);
  lk_outliers_first (self->library->embeddings, self->library->dim, self->library->count, faces,
                     n_faces, score);
}

gboolean
lk_session_undo (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_UNDO, NULL, NULL, NULL, 0);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_redo (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autoptr (LkReviewRequest) request = request_new (LK_REVIEW_REDO, NULL, NULL, NULL, 0);
  return decide (self, request, NULL, error);
}

gboolean
lk_session_is_committing (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->committing;
}

guint
lk_session_get_n_queued (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return g_queue_get_length (&self->queue);
}

void
lk_session_set_estimate_missing (LkSession *self, gboolean estimate)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->estimate_missing = estimate;
}

void
lk_session_set_calibration_change (LkSession *self, LkCalibrationChange change,
                                   LkCalibrationFrom from)
{
  g_return_if_fail (LK_IS_SESSION (self));
  self->change = change;
  self->change_from = from;
}

gboolean
lk_session_estimated_on_its_own (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->estimated_on_its_own;
}

const char *
lk_session_get_estimate_failure (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->estimate_failure;
}

gboolean
lk_session_can_fit_decisions (LkSession *self, double *positive_pairs, gsize *taken_out)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (positive_pairs)
    *positive_pairs = 0;
  if (taken_out)
    *taken_out = 0;
  if (self->library == NULL || self->review == NULL)
    return FALSE;
  return lk_calibration_decisions_suffice (self->library, lk_review_pins (self->review),
                                           positive_pairs, taken_out);
}

LkSessionStep
lk_session_next_step (LkSession *self, gboolean redo, const char **calibration_source)
{
  g_return_val_if_fail (LK_IS_SESSION (self), LK_SESSION_STEP_NONE);
  if (calibration_source)
    *calibration_source = NULL;
  if (self->review == NULL)
    return LK_SESSION_STEP_NONE;

  gboolean decision = redo ? lk_review_can_redo (self->review) : lk_review_can_undo (self->review);
  g_autoptr (LkCalibrationHistory) history
      = lk_calibration_history_new (lk_review_get_calibration (self->review), NULL);
  const char *source = NULL, *after = NULL;
  /* The calibration change was made after the newest decision in effect
   * (its "after" names it): it is the one to take back first, and, undone
   * with that decision still in effect, the one to bring back first. */
  if (history != NULL && lk_calibration_history_peek (history, redo, &source, &after)
      && (!decision || g_strcmp0 (after, lk_review_last_decision_id (self->review)) == 0))
    {
      if (calibration_source)
        *calibration_source = g_intern_string (source);
      return LK_SESSION_STEP_CALIBRATION;
    }
  return decision ? LK_SESSION_STEP_DECISION : LK_SESSION_STEP_NONE;
}

gboolean
lk_session_can_undo (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->review != NULL && lk_review_can_undo (self->review);
}

gboolean
lk_session_can_redo (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->review != NULL && lk_review_can_redo (self->review);
}

gboolean
lk_session_retry_save (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (!check_idle (self, error))
    return FALSE;

  if (!lk_review_save (self->review, self->review_path, save_flags (self), error))
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
  if (!check_idle (self, error))
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
  watch_review (self);
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

gboolean
lk_session_apply (LkSession *self, const LkReviewRequest *request, char **new_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self) && request != NULL, FALSE);
  gsize n = request->faces->len;
  LkReviewAction a = request->action;

  /* Refused now rather than when a queued request's turn comes. */
  if ((a == LK_REVIEW_COVER || a == LK_REVIEW_CONFIRM) && n != 1)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "%s takes one face, not %zu",
                   lk_review_action_name (a), n);
      return FALSE;
    }
  return decide (self, request, new_id, error);
}
