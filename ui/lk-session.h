/* lk-session.h — one open library: its faces, pairs, review decisions and people
 *
 * Built on a worker thread by the job of lk_session_load() (read the library
 * and review.json, scan, cluster), then owned by the window on the main
 * thread. Every review decision is applied to the review at once, then saved
 * to review.json and re-clustered on a worker; the people model is updated in place
 * (an item keeps its identity while its person keeps its id).
 */
#pragma once

#include <gtk/gtk.h>

#include "lk-cluster.h"
#include "lk-job.h"
#include "lk-library.h"
#include "lk-person-item.h"

G_BEGIN_DECLS

#define LK_TYPE_SESSION (lk_session_get_type ())
G_DECLARE_FINAL_TYPE (LkSession, lk_session, LK, SESSION, GObject)

/* What the load job hands over. */
typedef struct _LkLoaded LkLoaded;
void lk_loaded_free (LkLoaded *loaded);

/* A job (not started) that loads `folder`, scans with `probability_bar`
 * (0: the library's own bar) and clusters. Its result is an LkLoaded. With
 * `replace_review`, an unreadable review.json is ignored and later replaced. */
LkJob           *lk_session_load               (GtkWidget      *widget,
                                                const char     *folder,
                                                double          probability_bar,
                                                gboolean        replace_review);
/* Takes `loaded`. With `previous` (a session of the same library, or NULL),
 * people who keep their id keep their LkPersonItem, so a re-scan updates the
 * grid in place instead of rebuilding every tile. */
LkSession       *lk_session_new                (LkLoaded       *loaded,
                                                LkSession      *previous);

const char      *lk_session_get_folder         (LkSession      *self);
const LkLibrary *lk_session_get_library        (LkSession      *self);
double           lk_session_get_probability_bar (LkSession     *self);
double           lk_session_get_scan_seconds   (LkSession      *self);
gsize            lk_session_get_n_pairs        (LkSession      *self);
/* The people (LkPersonItem), largest first, then the "Unassigned faces" entry. */
GListModel      *lk_session_get_people         (LkSession      *self);
guint            lk_session_get_n_people       (LkSession      *self);
LkPersonItem    *lk_session_find_person        (LkSession      *self,
                                                const char     *id);
/* Absolute path of a face's thumbnail, or NULL. */
char            *lk_session_thumbnail_path     (LkSession      *self,
                                                guint32         face);
/* The photo a face comes from, for a tooltip. */
char            *lk_session_describe_face      (LkSession      *self,
                                                guint32         face);

/* Other people in the order a merge chooser offers them: those joined to
 * `id` by pairs first, most similar first (`similarity` receives the mean
 * pair probability, 0 for the rest), then everyone else, largest first. */
GPtrArray       *lk_session_merge_candidates   (LkSession      *self,
                                                const char     *id,
                                                GArray        **similarity);

/* Faces worth a second look, nearest the bar first (of LkSuggestion). */
GArray          *lk_session_suggestions        (LkSession      *self,
                                                gsize           limit);
/* The id of people->people[index]. */
const char      *lk_session_person_id          (LkSession      *self,
                                                gint32          index);

/* Decisions: each is applied at once, then saved and re-clustered on a worker
 * thread; the people and "changed" follow when that lands ("committing" goes
 * back to FALSE). FALSE with `error` when the request cannot be done (nothing
 * changed). One made while the previous decision is still committing is kept
 * and made, in order, once that lands (TRUE now; a move's `new_id` is then
 * NULL); if by then it no longer applies, "decision-failed" says why. A
 * failed save keeps the decision and emits "save-failed";
 * lk_session_retry_save() retries. */
gboolean lk_session_rename       (LkSession *self, const char *id, const char *name,
                                  GError **error);
gboolean lk_session_merge        (LkSession *self, const char *id, const char *other_id,
                                  GError **error);
gboolean lk_session_remove_faces (LkSession *self, const char *id, const guint32 *faces,
                                  gsize n_faces, GError **error);
/* `id` NULL: the faces are unassigned. `target_id` NULL: a new person. */
gboolean lk_session_move_faces   (LkSession *self, const char *id, const guint32 *faces,
                                  gsize n_faces, const char *target_id, char **new_id,
                                  GError **error);
gboolean lk_session_set_cover    (LkSession *self, const char *id, guint32 face,
                                  GError **error);
gboolean lk_session_set_hidden   (LkSession *self, const char *id, gboolean hidden,
                                  GError **error);
gboolean lk_session_confirm      (LkSession *self, const char *id, guint32 face,
                                  GError **error);
/* "Not this person" for a face outside the person: it never joins it. */
gboolean lk_session_reject       (LkSession *self, const char *id, guint32 face,
                                  GError **error);
gboolean lk_session_undo         (LkSession *self, GError **error);
gboolean lk_session_redo         (LkSession *self, GError **error);
gboolean lk_session_is_committing (LkSession *self);
gboolean lk_session_can_undo     (LkSession *self);
gboolean lk_session_can_redo     (LkSession *self);
gboolean lk_session_retry_save   (LkSession *self, GError **error);

/* Read-only libraries (lk-review-location.h). The library's folder cannot be
 * written: found when it opens (access W_OK), or when a save there failed with
 * LK_REVIEW_ERROR_READ_ONLY. */
gboolean    lk_session_is_read_only    (LkSession *self);
/* Decisions go to a review.json outside the library (chosen before, or now). */
gboolean    lk_session_saves_elsewhere (LkSession *self);
/* The review.json decisions are saved to. */
const char *lk_session_get_review_path (LkSession *self);
/* The last save failed: some decisions are only in memory. */
gboolean    lk_session_has_unsaved     (LkSession *self);
/* Saves every decision (past ones, and from now on every next one) to
 * `folder`/review.json, atomically, and remembers that file for this library
 * in the user's configuration. FALSE with `error` when the save fails (nothing
 * changes: decisions still go where they went), when `folder` already holds a
 * review.json other than the current one (G_IO_ERROR_EXISTS: never saved
 * over), or when it succeeded but could not be remembered. Refused while a
 * decision is committing. */
gboolean    lk_session_save_elsewhere  (LkSession *self, const char *folder, GError **error);

G_END_DECLS
