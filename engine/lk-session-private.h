/* lk-session-private.h — what the session's files (lk-session*.c) share, and
 * the test-only hooks into them */
#pragma once

#include "lk-session.h"
#include "people/lk-questions.h"

G_BEGIN_DECLS

/* ---- shared by the session's files -------------------------------------- */

/* What a load hands over to the main thread. */
typedef struct
{
  LkLibrary *library;
  LkReview *review;   /* NULL: the session keeps its own */
  LkScanResult *scan; /* NULL for lk_session_open */
  LkPeople *people;
  GArray *questions;               /* of LkQuestion, for `people` (lk_session_find_questions) */
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
   * clustering everything and 0.86 s with the memo, bench-people).
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

enum
{
  SIGNAL_CHANGED,
  SIGNAL_SAVE_FAILED,
  SIGNAL_DECISION_FAILED,
  SIGNAL_DECISIONS_REFRESHED,
  N_SIGNALS
};

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

G_GNUC_INTERNAL extern guint lk_session_signals[N_SIGNALS];
G_GNUC_INTERNAL extern GParamSpec *lk_session_properties[N_PROPS];

/* lk-session-load.c */
G_GNUC_INTERNAL void lk_session_load_result_free (gpointer data);
G_GNUC_INTERNAL GPtrArray *lk_session_copy_pins (const GPtrArray *pins);
G_GNUC_INTERNAL void lk_session_finish_load (LkSession *self, GTask *task, LoadResult *result);

/* lk-session-people.c */
G_GNUC_INTERNAL GArray *lk_session_find_questions (
    const LkLibrary *library, const LkCalibration *calibration, double bar, const LkPeople *people,
    const LkClusterInput *input, const GPtrArray *pins, const LkQuestionLinks *previous,
    guint64 kept_faces, LkQuestionLinks **links, gboolean background, GCancellable *cancellable);
G_GNUC_INTERNAL void lk_session_set_people (LkSession *self, LkPeople *people, GArray *questions,
                                            LkQuestionLinks *links);

/* lk-session-commit.c */
G_GNUC_INTERNAL LkReviewSaveFlags lk_session_save_flags (LkSession *self);
G_GNUC_INTERNAL void lk_session_saved (LkSession *self, const GError *save_error);
G_GNUC_INTERNAL void lk_session_make_queued (LkSession *self);
G_GNUC_INTERNAL void lk_session_start_commit (LkSession *self, gboolean save, guint n_refreshed);
G_GNUC_INTERNAL gboolean lk_session_check_idle (LkSession *self, GError **error);

/* lk-session-watch.c */
G_GNUC_INTERNAL void lk_session_refresh_when_idle (LkSession *self);
G_GNUC_INTERNAL void lk_session_watch_review (LkSession *self);
G_GNUC_INTERNAL void lk_session_on_review_changed (GFileMonitor *monitor, GFile *file, GFile *other,
                                                   GFileMonitorEvent event, gpointer user_data);

/* Drops a worker's reference to the session on the session's main context,
 * where its finalize must run: at once when called there, else from an idle. */
void lk_session_unref_on_context (LkSession *self);

/* ---- for the tests -------------------------------------------------------- */

/* From any thread: reports progress exactly as a load's worker does (the
 * latest value stored, one low-priority idle carrying it to the session's
 * main context unless one is pending). `message` is a static string. */
void lk_session_report_progress (LkSession *self, const char *message, double fraction);
/* A load has ended on its worker and waits for the decision committing. */
gboolean lk_session_holds_load (LkSession *self);
/* The links the questions were last scored from (lk_session_find_questions), or NULL. */
const LkQuestionLinks *lk_session_peek_question_links (LkSession *self);
/* LkScanReuse.faces of the scan the session loaded: what its links are kept under. */
guint64 lk_session_peek_faces (LkSession *self);
/* Called on a load's worker with its task as the worker returns. GLib's
 * worker drops its reference to the task only after handing the result to
 * the main context, so it can be the last; a test takes a reference here and
 * drops it from a thread of its own to be that last one every time. */
extern void (*lk_session_worker_hook) (GTask *task);

G_END_DECLS
