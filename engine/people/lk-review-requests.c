/* lk-review-requests.c — what the user asks, checked against the people they saw and logged */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lk-review-private.h"

/* --- checks of a request against the people the user saw ------------------------------------- */

static const LkPerson *
find_person (const LkPeople *people, const char *id, GError **error)
{
  const LkPerson *p = id ? lk_people_find (people, id) : NULL;
  if (p == NULL)
    g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_NO_PERSON,
                 "there is no person “%s”; run “likeness-cli people” for the ids",
                 id ? id : "(none)");
  return p;
}

static gboolean
person_has (const LkPerson *p, guint32 face)
{
  gsize lo = 0, hi = p->n_faces;
  while (lo < hi)
    {
      gsize mid = (lo + hi) / 2;
      if (p->faces[mid] == face)
        return TRUE;
      if (p->faces[mid] < face)
        lo = mid + 1;
      else
        hi = mid;
    }
  return FALSE;
}

static gboolean
check_faces_in (const LkPeople *people, const LkPerson *p, const guint32 *faces, gsize n,
                GError **error)
{
  if (n == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "no faces were given");
      return FALSE;
    }
  g_autofree guint8 *given = g_new0 (guint8, people->n_faces / 8 + 1);
  for (gsize k = 0; k < n; k++)
    {
      if (faces[k] >= people->n_faces)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u does not exist; the library has %zu faces", faces[k],
                       people->n_faces);
          return FALSE;
        }
      gboolean in = p ? person_has (p, faces[k]) : people->person_of[faces[k]] < 0;
      if (!in)
        {
          if (p)
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                         "face %u is not in person %s", faces[k], p->id);
          else
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                         "face %u is not unassigned; it is in person %s", faces[k],
                         people->people[people->person_of[faces[k]]].id);
          return FALSE;
        }
      /* One bit per face of the library (12.5 KB at 100,000): a
       * selection of thousands is checked in linear time, where comparing
       * each face with those before it was quadratic. */
      guint8 bit = (guint8) (1u << (faces[k] & 7));
      if (given[faces[k] >> 3] & bit)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "face %u is given twice",
                       faces[k]);
          return FALSE;
        }
      given[faces[k] >> 3] |= bit;
    }
  return TRUE;
}

static gboolean
check_people_match (const LkReview *review, const LkPeople *people, GError **error)
{
  if (people->n_faces != review->n_faces)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "the people were clustered from %zu faces but the review is for %zu",
                   people->n_faces, review->n_faces);
      return FALSE;
    }
  return TRUE;
}

/* Refuses faces `a` ∪ `b` when two of them come from one photo. */
static gboolean
check_photos (const LkReview *review, const guint32 *a, gsize na, const guint32 *b, gsize nb,
              GError **error)
{
  if (review->photo == NULL)
    return TRUE;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (gsize k = 0; k < na + nb; k++)
    {
      guint32 f = k < na ? a[k] : b[k - na];
      guint32 *prev = g_hash_table_lookup (seen, &review->photo[f]);
      if (prev && *prev != f)
        {
          const char *path = review->photo_paths
                                 ? g_hash_table_lookup (review->photo_paths, &review->photo[f])
                                 : NULL;
          if (path != NULL)
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO,
                         "%s holds two of these faces (%u and %u); two faces of one photo are "
                         "never one person",
                         path, *prev, f);
          else
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO,
                         "faces %u and %u are both in photo %" G_GUINT64_FORMAT
                         "; two faces of one photo are never one person",
                         *prev, f, review->photo[f]);
          return FALSE;
        }
      g_hash_table_insert (seen, &review->photo[f],
                           k < na ? (gpointer) &a[k] : (gpointer) &b[k - na]);
    }
  return TRUE;
}

static void
set_faces (GArray *array, const guint32 *faces, gsize n)
{
  g_array_set_size (array, 0);
  g_array_append_vals (array, faces, (guint) n);
  g_array_sort (array, lk_review_compare_faces);
}

static Decision *
person_decision (Op op, const LkPerson *p)
{
  Decision *d = lk_review_decision_new (op, p->id);
  set_faces (d->faces, p->faces, p->n_faces);
  return d;
}

/* An id for a new person made of `faces`, unused by people and pins. */
static char *
new_person_id (LkReview *review, const LkPeople *people, guint32 first)
{
  const GPtrArray *pins = lk_review_pins (review);
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize k = 0; k < people->n_people; k++)
    g_hash_table_add (used, people->people[k].id);
  for (guint k = 0; k < pins->len; k++)
    g_hash_table_add (used, ((LkPin *) g_ptr_array_index (pins, k))->id);
  for (guint k = 0; k < review->done->len; k++)
    {
      const Decision *d = g_ptr_array_index (review->done, k);
      if (d->person)
        g_hash_table_add (used, d->person);
      if (d->other)
        g_hash_table_add (used, d->other);
    }
  char *id = g_strdup_printf ("p%u", first);
  for (guint s = 1; g_hash_table_contains (used, id); s++)
    {
      g_free (id);
      id = g_strdup_printf ("p%u.%u", first, s);
    }
  return id;
}

gboolean
lk_review_name (LkReview *review, const LkPeople *people, const char *person_id, const char *name,
                GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  g_autofree char *clean = name ? g_strstrip (g_strdup (name)) : NULL;
  if (clean && !g_utf8_validate (clean, -1, NULL))
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "the name is not valid UTF-8");
      return FALSE;
    }
  Decision *d = person_decision (LK_REVIEW_NAME, p);
  d->name = clean && *clean ? g_steal_pointer (&clean) : NULL;
  lk_review_commit (review, d);
  return TRUE;
}

/* One merge is a merge of one: the same checks, the same decision. */
gboolean
lk_review_merge (LkReview *review, const LkPeople *people, const char *person_id,
                 const char *other_id, GError **error)
{
  return lk_review_merge_many (review, people, person_id, &other_id, 1, error);
}

gboolean
lk_review_remove (LkReview *review, const LkPeople *people, const char *person_id,
                  const guint32 *faces, gsize n_faces, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_in (people, p, faces, n_faces, error))
    return FALSE;
  Decision *d = person_decision (LK_REVIEW_REMOVE, p);
  set_faces (d->selected, faces, n_faces);
  lk_review_commit (review, d);
  return TRUE;
}

/* Faces that exist, each given once; `outside` (may be NULL) must hold none. */
static gboolean
check_faces_exist (const LkPeople *people, const LkPerson *outside, const guint32 *faces, gsize n,
                   GError **error)
{
  if (n == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "no faces were given");
      return FALSE;
    }
  g_autoptr (GHashTable) given = g_hash_table_new (NULL, NULL);
  for (gsize k = 0; k < n; k++)
    {
      if (faces[k] >= people->n_faces)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u does not exist; the library has %zu faces", faces[k],
                       people->n_faces);
          return FALSE;
        }
      if (outside != NULL && person_has (outside, faces[k]))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u is in person %s; take it out with “remove” instead", faces[k],
                       outside->id);
          return FALSE;
        }
      if (!g_hash_table_add (given, GUINT_TO_POINTER (faces[k])))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "face %u is given twice",
                       faces[k]);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
lk_review_reject_faces (LkReview *review, const LkPeople *people, const char *person_id,
                        const guint32 *faces, gsize n_faces, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_exist (people, p, faces, n_faces, error))
    return FALSE;
  /* A removal of faces the person does not hold: replayed the same way —
   * the person keeps its faces and never takes these. */
  Decision *d = person_decision (LK_REVIEW_REMOVE, p);
  set_faces (d->selected, faces, n_faces);
  lk_review_commit (review, d);
  return TRUE;
}

gboolean
lk_review_apart (LkReview *review, const LkPeople *people, guint32 face, const guint32 *others,
                 gsize n_others, char **new_id, GError **error)
{
  if (!check_people_match (review, people, error) || !check_faces_in (people, NULL, &face, 1, error)
      || !check_faces_exist (people, NULL, others, n_others, error))
    return FALSE;
  for (gsize k = 0; k < n_others; k++)
    if (others[k] == face)
      {
        g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                     "face %u cannot be kept apart from itself", face);
        return FALSE;
      }
  /* A removal from a person of one face that did not exist before: replayed,
   * it makes the person and keeps the others out, so the file's readers
   * need nothing new. */
  g_autofree char *id = new_person_id (review, people, face);
  Decision *d = lk_review_decision_new (LK_REVIEW_REMOVE, id);
  set_faces (d->faces, &face, 1);
  set_faces (d->selected, others, n_others);
  if (new_id)
    *new_id = g_strdup (id);
  lk_review_commit (review, d);
  return TRUE;
}

gboolean
lk_review_reject (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                  GError **error)
{
  return lk_review_reject_faces (review, people, person_id, &face, 1, error);
}

gboolean
lk_review_merge_many (LkReview *review, const LkPeople *people, const char *person_id,
                      const char *const *other_ids, gsize n_others, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  if (n_others == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "no people were given to merge into %s", p->id);
      return FALSE;
    }
  g_autofree const LkPerson **others = g_new (const LkPerson *, n_others);
  g_autoptr (GArray) all = lk_review_face_array ();
  g_array_append_vals (all, p->faces, (guint) p->n_faces);
  for (gsize k = 0; k < n_others; k++)
    {
      if ((others[k] = find_person (people, other_ids[k], error)) == NULL)
        return FALSE;
      if (others[k] == p)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                       "cannot merge person %s with itself", p->id);
          return FALSE;
        }
      for (gsize m = 0; m < k; m++)
        if (others[m] == others[k])
          {
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                         "person %s is given twice", others[k]->id);
            return FALSE;
          }
      g_array_append_vals (all, others[k]->faces, (guint) others[k]->n_faces);
    }
  if (!check_photos (review, (const guint32 *) all->data, all->len, NULL, 0, error))
    return FALSE;
  /* Each merge records the person as it stands after the ones before it
   * (what replaying them one by one produces), so each is the decision a
   * single merge would have made. */
  g_autofree char *group = n_others > 1 ? lk_review_new_decision_id () : NULL;
  g_autoptr (GArray) held = lk_review_face_array ();
  g_array_append_vals (held, p->faces, (guint) p->n_faces);
  for (gsize k = 0; k < n_others; k++)
    {
      Decision *d = lk_review_decision_new (LK_REVIEW_MERGE, p->id);
      set_faces (d->faces, (const guint32 *) held->data, held->len);
      d->other = g_strdup (others[k]->id);
      set_faces (d->other_faces, others[k]->faces, others[k]->n_faces);
      d->group = g_strdup (group);
      g_array_append_vals (held, others[k]->faces, (guint) others[k]->n_faces);
      if (k == 0)
        lk_review_commit (review, d);
      else
        {
          /* lk_review_commit () empties the redo list; once is enough. */
          d->id = lk_review_new_decision_id ();
          g_ptr_array_add (review->done, d);
        }
    }
  g_clear_pointer (&review->pins, g_ptr_array_unref);
  return TRUE;
}

static gboolean
dismissal (LkReview *review, const LkPeople *people, Op op, const guint32 *faces, gsize n_faces,
           GError **error)
{
  if (!check_people_match (review, people, error)
      || !check_faces_exist (people, NULL, faces, n_faces, error))
    return FALSE;
  /* Ascending: a binary search per face (a scan of the whole list per
   * face was quadratic in a dismissal of many faces). */
  const GArray *dismissed = lk_review_dismissed (review);
  for (gsize k = 0; k < n_faces; k++)
    {
      gboolean is = dismissed->len > 0
                    && bsearch (&faces[k], dismissed->data, dismissed->len, sizeof (guint32),
                                lk_review_compare_faces)
                           != NULL;
      if (is != (op == LK_REVIEW_UNDISMISS))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       is ? "face %u is already dismissed as no face"
                          : "face %u is not dismissed; there is nothing to bring back",
                       faces[k]);
          return FALSE;
        }
    }
  Decision *d = lk_review_decision_new (op, NULL);
  set_faces (d->selected, faces, n_faces);
  lk_review_commit (review, d);
  return TRUE;
}

gboolean
lk_review_dismiss (LkReview *review, const LkPeople *people, const guint32 *faces, gsize n_faces,
                   GError **error)
{
  return dismissal (review, people, LK_REVIEW_DISMISS, faces, n_faces, error);
}

gboolean
lk_review_undismiss (LkReview *review, const LkPeople *people, const guint32 *faces, gsize n_faces,
                     GError **error)
{
  return dismissal (review, people, LK_REVIEW_UNDISMISS, faces, n_faces, error);
}

gboolean
lk_review_move (LkReview *review, const LkPeople *people, const char *person_id,
                const guint32 *faces, gsize n_faces, const char *target_id, char **new_id,
                GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = NULL, *t = NULL;
  if (person_id && (p = find_person (people, person_id, error)) == NULL)
    return FALSE;
  if (!check_faces_in (people, p, faces, n_faces, error))
    return FALSE;
  if (target_id && (t = find_person (people, target_id, error)) == NULL)
    return FALSE;
  if (t && t == p)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "the faces are already in person %s", t->id);
      return FALSE;
    }
  if (!check_photos (review, faces, n_faces, t ? t->faces : NULL, t ? t->n_faces : 0, error))
    return FALSE;

  Decision *d
      = p ? person_decision (LK_REVIEW_MOVE, p) : lk_review_decision_new (LK_REVIEW_MOVE, NULL);
  set_faces (d->selected, faces, n_faces);
  if (t)
    {
      d->other = g_strdup (t->id);
      set_faces (d->other_faces, t->faces, t->n_faces);
    }
  else
    d->other = new_person_id (review, people, g_array_index (d->selected, guint32, 0));
  if (new_id)
    *new_id = g_strdup (d->other);
  lk_review_commit (review, d);
  return TRUE;
}

static gboolean
face_decision (LkReview *review, const LkPeople *people, Op op, const char *person_id, guint32 face,
               GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_in (people, p, &face, 1, error))
    return FALSE;
  Decision *d = person_decision (op, p);
  d->face = face;
  lk_review_commit (review, d);
  return TRUE;
}

gboolean
lk_review_set_cover (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                     GError **error)
{
  return face_decision (review, people, LK_REVIEW_COVER, person_id, face, error);
}

gboolean
lk_review_confirm (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                   GError **error)
{
  return face_decision (review, people, LK_REVIEW_CONFIRM, person_id, face, error);
}

gboolean
lk_review_set_hidden (LkReview *review, const LkPeople *people, const char *person_id,
                      gboolean hidden, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  lk_review_commit (review, person_decision (hidden ? LK_REVIEW_HIDE : LK_REVIEW_UNHIDE, p));
  return TRUE;
}

/* --- requests -------------------------------------------------------------------------------- */

LkReviewRequest *
lk_review_request_new (LkReviewAction action, const char *person)
{
  g_return_val_if_fail (action < LK_REVIEW_N_ACTIONS, NULL);
  LkReviewRequest *request = g_new0 (LkReviewRequest, 1);
  request->action = action;
  request->person = g_strdup (person);
  request->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  return request;
}

LkReviewRequest *
lk_review_request_copy (const LkReviewRequest *request)
{
  LkReviewRequest *copy = lk_review_request_new (request->action, request->person);
  copy->other = g_strdup (request->other);
  copy->name = g_strdup (request->name);
  copy->others = g_strdupv (request->others);
  g_array_append_vals (copy->faces, request->faces->data, request->faces->len);
  return copy;
}

void
lk_review_request_free (LkReviewRequest *request)
{
  if (request == NULL)
    return;
  g_free (request->person);
  g_free (request->other);
  g_free (request->name);
  g_strfreev (request->others);
  g_array_unref (request->faces);
  g_free (request);
}

const char *
lk_review_action_name (LkReviewAction action)
{
  g_return_val_if_fail (action < LK_REVIEW_N_ACTIONS, NULL);
  return lk_review_op_names[action];
}

/* What each action takes after its name on a command line. */
static const struct
{
  int min_words, max_words; /* -1: any number */
  const char *usage;
} shapes[LK_REVIEW_N_ACTIONS] = {
  [LK_REVIEW_NAME] = { 2, 2, "name PERSON NAME" },
  [LK_REVIEW_MERGE] = { 2, -1, "merge PERSON OTHER…" },
  [LK_REVIEW_REMOVE] = { 2, -1, "remove PERSON FACE…" },
  [LK_REVIEW_MOVE] = { 3, -1, "move PERSON TARGET FACE…" },
  [LK_REVIEW_COVER] = { 2, 2, "cover PERSON FACE" },
  [LK_REVIEW_HIDE] = { 1, 1, "hide PERSON" },
  [LK_REVIEW_UNHIDE] = { 1, 1, "unhide PERSON" },
  [LK_REVIEW_CONFIRM] = { 2, 2, "confirm PERSON FACE" },
  [LK_REVIEW_DISMISS] = { 1, -1, "dismiss FACE…" },
  [LK_REVIEW_UNDISMISS] = { 1, -1, "undismiss FACE…" },
  [LK_REVIEW_REJECT] = { 2, -1, "reject PERSON FACE…" },
  [LK_REVIEW_UNDO] = { 0, 0, "undo" },
  [LK_REVIEW_REDO] = { 0, 0, "redo" },
};

LkReviewRequest *
lk_review_request_parse (const char *const *words, int n_words, GError **error)
{
  g_return_val_if_fail (words != NULL && n_words >= 1, NULL);
  LkReviewAction action = LK_REVIEW_N_ACTIONS;
  for (int k = 0; k < LK_REVIEW_N_ACTIONS; k++)
    if (strcmp (words[0], lk_review_op_names[k]) == 0)
      action = k;
  if (action == LK_REVIEW_N_ACTIONS)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "“%s” is not an action",
                   words[0]);
      return NULL;
    }
  int n = n_words - 1;
  if (n < shapes[action].min_words
      || (shapes[action].max_words >= 0 && n > shapes[action].max_words))
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "“%s” with %d argument%s is not an action; it takes %s", words[0], n,
                   n == 1 ? "" : "s", shapes[action].usage);
      return NULL;
    }
  const char *person = n > 0 ? words[1] : NULL;
  if (action == LK_REVIEW_MOVE && strcmp (person, "unassigned") == 0)
    person = NULL;
  if (action == LK_REVIEW_DISMISS || action == LK_REVIEW_UNDISMISS)
    person = NULL;
  g_autoptr (LkReviewRequest) request = lk_review_request_new (action, person);
  int first_face = n + 1;
  switch (action)
    {
      case LK_REVIEW_NAME:
        request->name = g_strdup (words[2]);
        break;
      case LK_REVIEW_MERGE:
        request->other = g_strdup (words[2]);
        if (n_words > 3)
          {
            request->others = g_new0 (char *, n_words - 2);
            for (int k = 3; k < n_words; k++)
              request->others[k - 3] = g_strdup (words[k]);
          }
        break;
      case LK_REVIEW_DISMISS:
      case LK_REVIEW_UNDISMISS:
        first_face = 1;
        break;
      case LK_REVIEW_MOVE:
        request->other = strcmp (words[2], "new") == 0 ? NULL : g_strdup (words[2]);
        first_face = 3;
        break;
      case LK_REVIEW_REMOVE:
      case LK_REVIEW_COVER:
      case LK_REVIEW_CONFIRM:
      case LK_REVIEW_REJECT:
        first_face = 2;
        break;
      case LK_REVIEW_HIDE:
      case LK_REVIEW_UNHIDE:
      case LK_REVIEW_UNDO:
      case LK_REVIEW_REDO:
      case LK_REVIEW_N_ACTIONS:
      default:
        break;
    }
  for (int k = first_face; k < n_words; k++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (words[k], 10, 0, G_MAXUINT32, &v, NULL))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE, "“%s” is not a face index",
                       words[k]);
          return NULL;
        }
      guint32 f = (guint32) v;
      g_array_append_val (request->faces, f);
    }
  return g_steal_pointer (&request);
}

gboolean
lk_review_apply (LkReview *review, const LkPeople *people, const LkReviewRequest *request,
                 char **new_id, GError **error)
{
  g_return_val_if_fail (review != NULL && request != NULL, FALSE);
  const guint32 *faces = (const guint32 *) request->faces->data;
  gsize n = request->faces->len;
  LkReviewAction a = request->action;

  if (a == LK_REVIEW_UNDO || a == LK_REVIEW_REDO)
    {
      if (a == LK_REVIEW_UNDO ? lk_review_undo (review) : lk_review_redo (review))
        return TRUE;
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "there is nothing to %s",
                   lk_review_op_names[a]);
      return FALSE;
    }
  g_return_val_if_fail (people != NULL, FALSE);
  if ((a == LK_REVIEW_COVER || a == LK_REVIEW_CONFIRM) && n != 1)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "%s takes one face, not %zu",
                   lk_review_op_names[a], n);
      return FALSE;
    }
  switch (a)
    {
      case LK_REVIEW_NAME:
        return lk_review_name (review, people, request->person, request->name, error);
      case LK_REVIEW_MERGE:
        {
          g_autoptr (GPtrArray) ids = g_ptr_array_new ();
          g_ptr_array_add (ids, request->other);
          for (char **o = request->others; o != NULL && *o != NULL; o++)
            g_ptr_array_add (ids, *o);
          return lk_review_merge_many (review, people, request->person,
                                       (const char *const *) ids->pdata, ids->len, error);
        }
      case LK_REVIEW_DISMISS:
        return lk_review_dismiss (review, people, faces, n, error);
      case LK_REVIEW_UNDISMISS:
        return lk_review_undismiss (review, people, faces, n, error);
      case LK_REVIEW_REMOVE:
        return lk_review_remove (review, people, request->person, faces, n, error);
      case LK_REVIEW_MOVE:
        return lk_review_move (review, people, request->person, faces, n, request->other, new_id,
                               error);
      case LK_REVIEW_COVER:
        return lk_review_set_cover (review, people, request->person, faces[0], error);
      case LK_REVIEW_HIDE:
      case LK_REVIEW_UNHIDE:
        return lk_review_set_hidden (review, people, request->person, a == LK_REVIEW_HIDE, error);
      case LK_REVIEW_CONFIRM:
        return lk_review_confirm (review, people, request->person, faces[0], error);
      case LK_REVIEW_REJECT:
        if (request->person == NULL && n < 2)
          {
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                         "keeping faces apart takes two faces or more, not %zu", n);
            return FALSE;
          }
        if (request->person == NULL)
          return lk_review_apart (review, people, faces[0], faces + 1, n - 1, new_id, error);
        return lk_review_reject_faces (review, people, request->person, faces, n, error);
      case LK_REVIEW_UNDO:
      case LK_REVIEW_REDO:
      case LK_REVIEW_N_ACTIONS:
      default:
        break;
    }
  g_return_val_if_reached (FALSE);
}
