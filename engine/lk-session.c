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
 * - A worker's reference to the session (its task's data holds one) is
 *   dropped on the session's main context (lk_session_unref_on_context),
 *   never as the task's source object: GLib's worker drops its reference to
 *   the task after the result landed and can be the last, and the finalize
 *   releases the application and cancels the review's file monitor, which
 *   belong to the main context.
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

#include "lk-session-private.h"
#include "lk-session.h"

G_DEFINE_FINAL_TYPE (LkSession, lk_session, G_TYPE_OBJECT)

/* Every session of the process, for lk_session_list_all (): a weak
 * reference each (GWeakRef *), newest first, so listing (from any thread)
 * never revives a session being finalized. */
static GMutex live_lock;
static GQueue live = G_QUEUE_INIT;

guint lk_session_signals[N_SIGNALS];

GParamSpec *lk_session_properties[N_PROPS];

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
      g_signal_handlers_disconnect_by_func (self->monitor, lk_session_on_review_changed, self);
      g_file_monitor_cancel (self->monitor);
      g_clear_object (&self->monitor);
    }
  g_free (self->estimate_failure);
  g_free (self->monitored_path);
  g_clear_pointer (&self->held_result, lk_session_load_result_free);
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
  lk_session_properties[PROP_COMMITTING]
      = g_param_spec_boolean ("committing", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* What the running load is doing, how far (negative: cannot tell), and how
   * many faces it covers; updated at most once per main-loop turn. */
  lk_session_properties[PROP_MESSAGE]
      = g_param_spec_string ("message", NULL, NULL, NULL,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  lk_session_properties[PROP_FRACTION]
      = g_param_spec_double ("fraction", NULL, NULL, -1.0, 1.0, 0.0,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  lk_session_properties[PROP_TOTAL]
      = g_param_spec_uint64 ("total", NULL, NULL, 0, G_MAXUINT64, 0,
                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* An asynchronous load runs; decisions wait for it. */
  lk_session_properties[PROP_LOADING]
      = g_param_spec_boolean ("loading", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, lk_session_properties);

  /* The people changed: a load landed, or a decision, an undo or a redo. */
  lk_session_signals[SIGNAL_CHANGED] = g_signal_new (
      "changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* review.json could not be written; the decisions are kept in memory. */
  lk_session_signals[SIGNAL_SAVE_FAILED]
      = g_signal_new ("save-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* A decision made while another was saving or a re-scan ran, which no
   * longer applied when its turn came (its person was merged away, nothing
   * left to undo). */
  lk_session_signals[SIGNAL_DECISION_FAILED]
      = g_signal_new ("decision-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* Decisions another process saved in review.json (a second window,
   * likeness-cli review) were taken in; the people follow ("changed" came
   * first). The argument counts the decisions that came into effect or left. */
  lk_session_signals[SIGNAL_DECISIONS_REFRESHED]
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

static gboolean
unref_idle (gpointer user_data)
{
  return G_SOURCE_REMOVE; /* the reference goes with the source's data */
}

void
lk_session_unref_on_context (LkSession *self)
{
  if (g_main_context_is_owner (self->context))
    {
      g_object_unref (self);
      return;
    }
  GSource *source = g_idle_source_new ();
  g_source_set_callback (source, unref_idle, self, g_object_unref);
  g_source_set_static_name (source, "[likeness] session unref");
  g_source_attach (source, self->context);
  g_source_unref (source);
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
