/* lk-session-people.c — the people: their store, their questions, and what the choosers ask */
#include "config.h"

#include <glib/gi18n.h>

#include <string.h>

#include "lk-session-private.h"
#include "lk-session.h"

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
GArray *
lk_session_find_questions (const LkLibrary *library, const LkCalibration *calibration, double bar,
                           const LkPeople *people, const LkClusterInput *input,
                           const GPtrArray *pins, const LkQuestionLinks *previous,
                           guint64 kept_faces, LkQuestionLinks **links, gboolean background,
                           GCancellable *cancellable)
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
void
lk_session_set_people (LkSession *self, LkPeople *people, GArray *questions, LkQuestionLinks *links)
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
  /* Which of the photo's faces it is, not the library's row number (a row
   * number means nothing to a user). A scan of the rows: 20,000 faces are
   * some 20,000 comparisons, microseconds, once per tile bound. */
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
 * averaging costs more than an open: with them kept an open is about 5×
 * faster (bench-chooser; docs/benchmarks.md). Most of what is left of an
 * open on a large library is lk_people_similar's walk over the pairs. */
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
   * this person's photos never can (two faces of one photo are two people):
   * offering one only for the merge to refuse it is worse than not offering. */
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
   * anyone (on a large library most people have no pair to anyone, and the
   * list would fall back to size order). */
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

GArray *
lk_session_pair_questions (LkSession *self, gsize limit)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  if (self->people == NULL || self->library == NULL || self->library->embeddings == NULL)
    return g_array_new (FALSE, FALSE, sizeof (LkPairQuestion));
  const char *source = NULL;
  const LkCalibration *calibration = lk_session_get_calibration (self, &source);
  /* The format's default on a library that gave none is no fit of its
   * model: its p = 0.5 says nothing about where this library's people end. */
  gboolean trusted = lk_session_get_estimate_failure (self) == NULL
                     && (g_strcmp0 (source, "library") != 0 || self->library->calibration_given);
  return lk_pair_questions (self->library, self->people, lk_review_pins (self->review),
                            trusted ? calibration : NULL, limit, 1);
}

/* What lk_pair_questions reads, copied on the main thread: a load or a
 * decision replaces the session's library and people while the worker runs. */
typedef struct
{
  LkLibrary library; /* count, dim, embeddings, photo, crop_px only */
  LkPeople people;   /* n_faces, person_of, n_people, dismissed only */
  GPtrArray *pins;
  LkCalibration calibration;
  gboolean trusted;
  gsize limit;
} PairJob;

static void
pair_job_free (PairJob *job)
{
  g_free ((float *) job->library.embeddings);
  g_free (job->library.photo);
  g_free (job->library.crop_px);
  g_free (job->people.person_of);
  g_free (job->people.dismissed);
  g_ptr_array_unref (job->pins);
  g_free (job);
}

static void
run_pair_job (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  PairJob *job = data;
  GArray *pairs = lk_pair_questions (&job->library, &job->people, job->pins,
                                     job->trusted ? &job->calibration : NULL, job->limit, 1);
  g_task_return_pointer (task, pairs, (GDestroyNotify) g_array_unref);
}

void
lk_session_pair_questions_async (LkSession *self, gsize limit, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer data)
{
  g_return_if_fail (LK_IS_SESSION (self));
  /* No source object: the task may outlive a window that closes. */
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, data);
  g_task_set_source_tag (task, lk_session_pair_questions_async);
  if (self->people == NULL || self->library == NULL || self->library->embeddings == NULL)
    {
      g_task_return_pointer (task, g_array_new (FALSE, FALSE, sizeof (LkPairQuestion)),
                             (GDestroyNotify) g_array_unref);
      return;
    }
  const LkLibrary *l = self->library;
  const LkPeople *people = self->people;
  PairJob *job = g_new0 (PairJob, 1);
  job->library.count = MIN (l->count, people->n_faces);
  job->library.dim = l->dim;
  job->library.embeddings
      = g_memdup2 (l->embeddings, sizeof (float) * job->library.count * MAX (l->dim, 1));
  job->library.photo = g_memdup2 (l->photo, sizeof (guint64) * MAX (job->library.count, 1));
  job->library.crop_px = g_memdup2 (l->crop_px, sizeof (float) * MAX (job->library.count, 1));
  job->people.n_faces = job->library.count;
  job->people.n_people = people->n_people;
  job->people.person_of
      = g_memdup2 (people->person_of, sizeof (gint32) * MAX (job->library.count, 1));
  job->people.n_dismissed = people->n_dismissed;
  job->people.dismissed = g_memdup2 (people->dismissed, sizeof (guint32) * people->n_dismissed);
  job->pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  const GPtrArray *pins = lk_review_pins (self->review);
  for (guint k = 0; pins && k < pins->len; k++)
    g_ptr_array_add (job->pins, lk_pin_copy (g_ptr_array_index (pins, k)));
  const char *source = NULL;
  job->calibration = *lk_session_get_calibration (self, &source);
  job->trusted = lk_session_get_estimate_failure (self) == NULL
                 && (g_strcmp0 (source, "library") != 0 || l->calibration_given);
  job->limit = limit;
  g_task_set_task_data (task, job, (GDestroyNotify) pair_job_free);
  g_task_run_in_thread (task, run_pair_job);
}

GArray *
lk_session_pair_questions_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

gboolean
lk_session_answer_pair (LkSession *self, guint32 a, guint32 b, gboolean same, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (self->people == NULL)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "no people are loaded to answer about");
      return FALSE;
    }
  g_autoptr (LkReviewRequest) request = lk_pair_answer_request (self->people, a, b, same, error);
  return request != NULL && lk_session_apply (self, request, NULL, error);
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
