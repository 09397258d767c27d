/* lk-session.h — one open library: its faces, pairs, review decisions and people
 *
 * The one owner of a library's state, for the window and the CLI alike (no
 * GTK): load → scan → cluster → people + decisions, and the queue of the
 * decisions made while something else is in flight.
 *
 * Loading has Sysprof's document-loader shape: lk_session_load () runs in the
 * calling thread (the CLI), lk_session_load_async () on a GTask worker (the
 * window). While it runs, "message", "fraction" and "total" follow it as
 * properties, notified on the thread-default main context of the
 * lk_session_load_async () call through at most one pending low-priority idle:
 * a fast producer (the scan reports from every worker thread) cannot flood
 * the main loop, and no widget is needed. Loading the session again (a
 * re-scan) keeps its people, review and decisions until the new scan lands;
 * the people model is then updated in place (an item keeps its identity while
 * its person keeps its id), and decisions made meanwhile are applied to the
 * new people, in order.
 *
 * Decisions, once loaded asynchronously: each is applied to the review at
 * once, then saved and re-clustered on a worker; the people and "changed"
 * follow when that lands. Loaded synchronously (the CLI), a decision is
 * saved and re-clustered before the call returns.
 *
 * Other writers: an asynchronously loaded session watches its review.json;
 * when another process saves there, it takes those decisions in (keeping its
 * own), re-clusters, and emits "changed", then "decisions-refreshed" (guint:
 * how many decisions came into effect or left). Every save merges with the
 * file under a lock (lk_review_save), so no writer drops another's decision.
 */
#pragma once

#include <gio/gio.h>

#include "people/lk-calibrate.h"
#include "people/lk-cluster.h"
#include "library/lk-library.h"
#include "people/lk-outliers.h"
#include "people/lk-pair-questions.h"
#include "people/lk-person-item.h"
#include "people/lk-questions.h"
#include "people/lk-review.h"
#include "scan/lk-scan.h"

G_BEGIN_DECLS

#define LK_TYPE_SESSION (lk_session_get_type ())
G_DECLARE_FINAL_TYPE (LkSession, lk_session, LK, SESSION, GObject)

/* A session of the library in `folder`, not loaded yet. */
LkSession *lk_session_new (const char *folder);

/* Before loading. The pair bar: 0 (the default) is the library's own. */
void lk_session_set_probability_bar (LkSession *self, double probability_bar);
/* Start over: a corrupt or foreign review.json is set aside for an empty
 * review, and replaced by the next save (LK_REVIEW_SAVE_REPLACE). */
void lk_session_set_start_over (LkSession *self, gboolean start_over);
/* The scan's workers yield the CPU to the main loop (lk-scan.c): for the window. */
void lk_session_set_background (LkSession *self, gboolean background);
/* The library's embeddings are given back once the scan is done
 * (lk_library_release_embeddings): for a caller that reads only the people
 * (`likeness-cli people`). The people then mean the same; what reads the
 * rows after the load (centroids, ranking, outliers) must not be called. */
void lk_session_set_release_embeddings (LkSession *self, gboolean release);

/* A library with no calibration at all (none in library.json, none chosen in
 * review.json) gets one estimated from its own faces when it loads
 * (LK_CALIBRATION_FROM_ESTIMATE), kept in review.json like a choice of the
 * user's and undone like one: the format's default fits ArcFace-like models
 * only. For the window; the CLI says so through the guard. */
void lk_session_set_estimate_missing (LkSession *self, gboolean estimate);

typedef enum
{
  LK_CALIBRATION_CHANGE_NONE,
  LK_CALIBRATION_CHANGE_FIT,  /* lk_calibrate () from the given source */
  LK_CALIBRATION_CHANGE_UNDO, /* back to the calibration before the last change */
  LK_CALIBRATION_CHANGE_REDO,
} LkCalibrationChange;

/* The next load (lk_session_load (), _load_async ()) first changes the
 * calibration — fits one on its worker, with progress, cancelled with the
 * load — then scans and clusters with it; when it lands the change is saved
 * in review.json (lk-calibrate.h's history, undoable) as a decision is. A
 * change that cannot be made (too few decisions to fit from, nothing to
 * undo: an LK_CALIBRATE_ERROR) fails the load, which changes nothing. */
void lk_session_set_calibration_change (LkSession *self, LkCalibrationChange change,
                                        LkCalibrationFrom from);
/* The last load estimated a calibration on its own (set_estimate_missing). */
gboolean lk_session_estimated_on_its_own (LkSession *self);
/* Why the last load's estimate on its own (set_estimate_missing) failed, or
 * NULL: the library's calibration (the format's default when it has none)
 * stayed in force. */
const char *lk_session_get_estimate_failure (LkSession *self);
/* The decisions hold enough to fit from (lk_calibration_decisions_suffice). */
gboolean lk_session_can_fit_decisions (LkSession *self, double *positive_pairs, gsize *taken_out);

typedef enum
{
  LK_SESSION_STEP_NONE,
  LK_SESSION_STEP_DECISION,    /* lk_session_undo () / _redo () */
  LK_SESSION_STEP_CALIBRATION, /* a load with LK_CALIBRATION_CHANGE_UNDO / _REDO */
} LkSessionStep;

/* What undo (redo TRUE: redo) should take back next, of the decisions and the
 * calibration changes together, newest first (a calibration change remembers
 * the decision it followed). *calibration_source (may be NULL) receives the
 * source of the calibration change ("estimate", "decisions", "labels",
 * "library"), interned. */
LkSessionStep lk_session_next_step (LkSession *self, gboolean redo,
                                    const char **calibration_source);

/* Reads the library and its review.json, and nothing else: enough for an
 * undo or a redo (the CLI), which needs no people. */
gboolean lk_session_open (LkSession *self, GError **error);
/* Reads the library and its review.json, scans and clusters, in the calling
 * thread. Decisions are then synchronous. */
gboolean lk_session_load (LkSession *self, GCancellable *cancellable, GError **error);
/* The same on a worker thread. Called again (a re-scan), it supersedes a load
 * still running, which then finishes with G_IO_ERROR_CANCELLED, as a
 * cancelled one does; neither changes the session. */
void lk_session_load_async (LkSession *self, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);
gboolean lk_session_load_finish (LkSession *self, GAsyncResult *result, GError **error);
/* A load has landed: the people and the review below exist. */
gboolean lk_session_is_loaded (LkSession *self);
/* A load is running: reading, scanning or clustering (a cancelled one until
 * its worker has stopped). */
gboolean lk_session_is_loading (LkSession *self);
/* Every session alive in this process, the newest first, each with a
 * reference (g_ptr_array_unref drops them): what the diagnostics window asks
 * whether a scan runs, and what the last one measured, without knowing the
 * windows that hold them. */
GPtrArray *lk_session_list_all (void);

/* Progress of the running load (main thread): what it is doing ("Comparing
 * every pair of faces"), how far (0–1, or negative while the phase cannot
 * tell), since when (seconds in this phase) and how many faces it covers. */
const char *lk_session_get_message (LkSession *self);
double lk_session_get_fraction (LkSession *self);
double lk_session_get_phase_seconds (LkSession *self);
guint64 lk_session_get_total (LkSession *self);

/* The folder the session was made with, or the library's once loaded. */
const char *lk_session_get_folder (LkSession *self);

/* Where a folder the library names (a server's upload folder, a photo
 * folder that moved) is on this computer, as the user said it in Write
 * Names to Photos…: the face viewer looks there too. A copy is kept; NULL
 * forgets it. Main thread. */
void lk_session_set_photo_map (LkSession *self, const LkPathMap *map);
/* NULL when none was given. */
const LkPathMap *lk_session_get_photo_map (LkSession *self);
const LkLibrary *lk_session_get_library (LkSession *self);
LkReview *lk_session_get_review (LkSession *self);
const LkScanResult *lk_session_get_scan (LkSession *self);
const LkClusterInput *lk_session_get_cluster_input (LkSession *self);
/* The people as clustered, for the CLI. */
const LkPeople *lk_session_peek_people (LkSession *self);
double lk_session_get_probability_bar (LkSession *self);
double lk_session_get_scan_seconds (LkSession *self);
/* The pair model the last load used: review.json's chosen calibration
 * (lk-calibrate.h), else the library's; *source (may be NULL) receives
 * "library", "labels", "decisions" or "estimate". NULL before a load. */
const LkCalibration *lk_session_get_calibration (LkSession *self, const char **source);
/* The guard of the last scan (lk_calibration_guard_fails () says whether to
 * warn: a banner in the window, a line on stderr in the CLI); its sampled
 * is 0 before a scan. */
const LkCalibrationGuard *lk_session_get_guard (LkSession *self);
gsize lk_session_get_n_pairs (LkSession *self);
/* The people (LkPersonItem), largest first, then the "Unassigned faces" entry. */
GListModel *lk_session_get_people (LkSession *self);
guint lk_session_get_n_people (LkSession *self);
LkPersonItem *lk_session_find_person (LkSession *self, const char *id);
/* Absolute path of a face's thumbnail, or NULL. */
char *lk_session_thumbnail_path (LkSession *self, guint32 face);
/* The photo a face comes from, for a tooltip. */
char *lk_session_describe_face (LkSession *self, guint32 face);

/* What a chooser knows of how alike a candidate is. */
typedef struct
{
  double probability; /* mean pair probability to `id`; 0: no pair links them */
  double cosine;      /* between the centroids (mean faces) */
  gboolean alike;     /* the calibration calls that cosine a likely pair (p >= 0.5) */
} LkCandidateScore;

/* Other people in the order a merge chooser offers them: those joined to
 * `id` by pairs first, most similar first, then everyone else by the cosine
 * between centroids, highest first (`similarity` receives an LkCandidateScore
 * per person). The centroids are computed once per clustering. People with
 * a face in one of `id`'s photos are left out: that merge could never
 * succeed. */
GPtrArray *lk_session_merge_candidates (LkSession *self, const char *id, GArray **similarity);
/* The people `faces` (of `id`, a person or the unassigned entry) may move to,
 * in the same order (the rest by their cosine with the centroid of `faces`,
 * not of `id`: faces that move are unlike the rest of `id`): those with a
 * face in one of the photos of `faces` are left out, and only they (a person
 * photographed with `id` may take the faces that are really theirs). */
GPtrArray *lk_session_move_candidates (LkSession *self, const char *id, const guint32 *faces,
                                       gsize n_faces, GArray **similarity);

/* Two faces of one photo that keep `faces` (NULL: every face of `id`) and
 * `other_id` (may be NULL) from being one person, for a refusal that shows
 * them: TRUE with *a (of `faces`, or both) and *b. */
gboolean lk_session_find_photo_clash (LkSession *self, const char *id, const guint32 *faces,
                                      gsize n_faces, const char *other_id, guint32 *a, guint32 *b);

/* Faces worth a second look, nearest the bar first (of LkSuggestion). */
GArray *lk_session_suggestions (LkSession *self, gsize limit);
/* The id of people->people[index]. */
const char *lk_session_person_id (LkSession *self, gint32 index);

/* Decisions: each is applied at once, then saved and re-clustered (on a
 * worker once loaded asynchronously); the people and "changed" follow
 * ("committing" goes back to FALSE). FALSE with `error` when the request
 * cannot be done (nothing changed). One made while the previous decision is
 * still committing, or while a load (a re-scan) runs, is kept in the
 * session's queue and made, in order, once that lands, against the people it
 * produced (TRUE now; a move's `new_id` is then NULL); if by then it no
 * longer applies, "decision-failed" says why. A failed save keeps the
 * decision and emits "save-failed" (synchronously: returns FALSE with the
 * save's error); lk_session_retry_save() retries. */
gboolean lk_session_rename (LkSession *self, const char *id, const char *name, GError **error);
gboolean lk_session_merge (LkSession *self, const char *id, const char *other_id, GError **error);
gboolean lk_session_remove_faces (LkSession *self, const char *id, const guint32 *faces,
                                  gsize n_faces, GError **error);
/* "Not This Person", meaning what it says: the faces leave `id` for good and
 * become a person of their own (its id in `new_id`, NULL when the decision
 * was queued), so they do not land in some other person unannounced (issue
 * 14). Faces of one photo cannot be one person: then they only leave, as
 * lk_session_remove_faces () does, and `new_id` is NULL. */
gboolean lk_session_take_out_faces (LkSession *self, const char *id, const guint32 *faces,
                                    gsize n_faces, char **new_id, GError **error);
/* `id` NULL: the faces are unassigned. `target_id` NULL: a new person. */
gboolean lk_session_move_faces (LkSession *self, const char *id, const guint32 *faces,
                                gsize n_faces, const char *target_id, char **new_id,
                                GError **error);
gboolean lk_session_set_cover (LkSession *self, const char *id, guint32 face, GError **error);
gboolean lk_session_set_hidden (LkSession *self, const char *id, gboolean hidden, GError **error);
gboolean lk_session_confirm (LkSession *self, const char *id, guint32 face, GError **error);
/* "Not this person" for a face outside the person: it never joins it. */
gboolean lk_session_reject (LkSession *self, const char *id, guint32 face, GError **error);
/* Any of the above as one value (lk-review.h), as the CLI parses it: every
 * decision takes this one path (the functions above build a request), and
 * the queue holds copies of these. `new_id` as lk_session_move_faces. */
gboolean lk_session_apply (LkSession *self, const LkReviewRequest *request, char **new_id,
                           GError **error);
/* "No" to "Is this Ada?" for a small person: none of `faces` ever joins `id`. */
gboolean lk_session_reject_faces (LkSession *self, const char *id, const guint32 *faces,
                                  gsize n_faces, GError **error);
/* Several people join `id` at once: a merge decision each, one undo step
 * (lk_review_merge_many). */
gboolean lk_session_merge_many (LkSession *self, const char *id, const char *const *other_ids,
                                gsize n_others, GError **error);
/* "Not a face" (lk_review_dismiss), and back (lk_review_undismiss). */
gboolean lk_session_dismiss (LkSession *self, const guint32 *faces, gsize n_faces, GError **error);
gboolean lk_session_undismiss (LkSession *self, const guint32 *faces, gsize n_faces,
                               GError **error);
/* The faces dismissed as no face in the people on screen (ascending), or
 * NULL with *n 0. */
const guint32 *lk_session_dismissed_faces (LkSession *self, gsize *n);
/* "Is this Ada?" for the people on screen (lk_people_questions_below: scored
 * from links down to LK_QUESTION_BAR), found on the worker that grouped
 * them, so asking costs a copy: the first `limit` (0: all), of LkQuestion. */
GArray *lk_session_questions (LkSession *self, gsize limit);
/* How many there are, without a copy (the count over the people grid). */
guint lk_session_get_n_questions (LkSession *self);
/* "Same or different person?" (lk-pair-questions.h): up to `limit` pairs of
 * the people on screen, where the calibration in force is least sure — or,
 * when it is no fit of this library's (the estimate refused, or the
 * format's default for a library without one), spread over the near
 * neighbours' cosines. Empty before a load or once the rows are released.
 * Compares LK_PAIR_QUESTION_ANCHORS faces with every face, in the calling
 * thread. Array of LkPairQuestion. */
GArray *lk_session_pair_questions (LkSession *self, gsize limit);
/* The same on a GTask worker (the window), on copies of what it reads, so a
 * load or decision meanwhile changes nothing under it; a cancelled one
 * finishes with G_IO_ERROR_CANCELLED. */
void lk_session_pair_questions_async (LkSession *self, gsize limit, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer data);
GArray *lk_session_pair_questions_finish (GAsyncResult *result, GError **error);
/* Records the answer about faces a and b as a decision (lk_pair_answer_request),
 * applied as lk_session_apply () does: undone by lk_session_undo (). */
gboolean lk_session_answer_pair (LkSession *self, guint32 a, guint32 b, gboolean same,
                                 GError **error);
/* `faces` reordered least like the rest first (lk_outliers_first). */
void lk_session_outliers_first (LkSession *self, guint32 *faces, gsize n_faces, double *score);
gboolean lk_session_undo (LkSession *self, GError **error);
gboolean lk_session_redo (LkSession *self, GError **error);
gboolean lk_session_is_committing (LkSession *self);
/* Decisions waiting in the queue (for a commit or a load to land). */
guint lk_session_get_n_queued (LkSession *self);
gboolean lk_session_can_undo (LkSession *self);
gboolean lk_session_can_redo (LkSession *self);
gboolean lk_session_retry_save (LkSession *self, GError **error);

/* Read-only libraries (lk-review-location.h). The library's folder cannot be
 * written: found when it opens (access W_OK), or when a save there failed with
 * LK_REVIEW_ERROR_READ_ONLY. */
gboolean lk_session_is_read_only (LkSession *self);
/* Decisions go to a review.json outside the library (chosen before, or now). */
gboolean lk_session_saves_elsewhere (LkSession *self);
/* The review.json decisions are saved to. */
const char *lk_session_get_review_path (LkSession *self);
/* The last save failed: some decisions are only in memory. */
gboolean lk_session_has_unsaved (LkSession *self);
/* Saves every decision (past ones, and from now on every next one) to
 * `folder`/review.json, atomically, and remembers that file for this library
 * in the user's configuration. FALSE with `error` when the save fails (nothing
 * changes: decisions still go where they went), when `folder` already holds a
 * review.json other than the current one (G_IO_ERROR_EXISTS: never saved
 * over), or when it succeeded but could not be remembered. Refused
 * (G_IO_ERROR_BUSY) while a decision is committing or a load runs. */
gboolean lk_session_save_elsewhere (LkSession *self, const char *folder, GError **error);

G_END_DECLS
