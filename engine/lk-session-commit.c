/* lk-session-commit.c — decisions: queued, applied, then saved and re-clustered */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-session-private.h"
#include "lk-session.h"

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

  lk_session_unref_on_context (request->session);
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
LkReviewSaveFlags
lk_session_save_flags (LkSession *self)
{
  return self->replace_review ? LK_REVIEW_SAVE_REPLACE : LK_REVIEW_SAVE_DEFAULT;
}

/* What a save found beats what access () said when the library opened. */
void
lk_session_saved (LkSession *self, const GError *save_error)
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
        result->questions = lk_session_find_questions (
            self->library, &self->calibration, self->probability_bar, result->people, &self->input,
            request->pins, self->question_links, self->faces, &result->question_links,
            self->background, NULL);
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
    lk_session_saved (self, result->save_error);
  if (result->save_error != NULL)
    g_signal_emit (self, lk_session_signals[SIGNAL_SAVE_FAILED], 0, result->save_error);
  if (result->people != NULL)
    lk_session_set_people (self, g_steal_pointer (&result->people),
                           g_steal_pointer (&result->questions),
                           g_steal_pointer (&result->question_links));
  else if (result->cluster_error != NULL)
    g_warning ("The people could not be regrouped after a decision: %s",
               result->cluster_error->message);
  g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_COMMITTING]);
  if (result->cluster_error == NULL)
    g_signal_emit (self, lk_session_signals[SIGNAL_CHANGED], 0);
  if (request->n_refreshed > 0)
    g_signal_emit (self, lk_session_signals[SIGNAL_DECISIONS_REFRESHED], 0, request->n_refreshed);
  commit_result_free (result);
  if (self->held_task != NULL)
    {
      GTask *task = g_steal_pointer (&self->held_task);
      LoadResult *held = g_steal_pointer (&self->held_result);

      /* Cancelled while it waited: it changes nothing, as a running one. */
      if (g_task_return_error_if_cancelled (task))
        {
          lk_session_load_result_free (held);
          self->loading = FALSE;
          g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_LOADING]);
        }
      else
        lk_session_finish_load (self, task, held);
      g_object_unref (task);
    }
  /* The next decision's commit holds the application itself before this one
   * lets go, so closing the window cannot end the process in between. */
  lk_session_make_queued (self);
  lk_session_refresh_when_idle (self);
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

      lk_review_save (self->review, self->review_path, lk_session_save_flags (self), &save_error);
      lk_session_saved (self, save_error);
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
              GArray *questions = lk_session_find_questions (
                  self->library, &self->calibration, self->probability_bar, people, &self->input,
                  lk_review_pins (self->review), self->question_links, self->faces, &links,
                  self->background, NULL);
              lk_session_set_people (self, people, questions, links);
              g_signal_emit (self, lk_session_signals[SIGNAL_CHANGED], 0);
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

  lk_session_start_commit (self, TRUE, 0);
  return TRUE;
}

/* The worker of a commit: save (unless only other writers' decisions came
 * in) and re-cluster. */
void
lk_session_start_commit (LkSession *self, gboolean save, guint n_refreshed)
{
  CommitRequest *request = g_new0 (CommitRequest, 1);

  request->session = g_object_ref (self);
  request->pins = lk_session_copy_pins (lk_review_pins (self->review));
  request->dismissed = g_array_copy ((GArray *) lk_review_dismissed (self->review));
  request->flags = lk_session_save_flags (self);
  request->save = save;
  request->n_refreshed = n_refreshed;
  request->app = g_application_get_default ();
  if (request->app != NULL)
    g_application_hold (g_object_ref (request->app));

  self->committing = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), lk_session_properties[PROP_COMMITTING]);
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
void
lk_session_make_queued (LkSession *self)
{
  while (!self->committing && !self->loading && !g_queue_is_empty (&self->queue))
    {
      g_autoptr (LkReviewRequest) request = g_queue_pop_head (&self->queue);
      g_autoptr (GError) error = NULL;
      if (!decide (self, request, NULL, &error))
        g_signal_emit (self, lk_session_signals[SIGNAL_DECISION_FAILED], 0, error);
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
gboolean
lk_session_check_idle (LkSession *self, GError **error)
{
  if (!check_review (self, error))
    return FALSE;
  if (!self->committing)
    return TRUE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                       _ ("The previous change is still being saved; try again in a moment"));
  return FALSE;
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
