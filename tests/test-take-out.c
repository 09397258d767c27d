/* test-take-out — decisions that mean what they say (issue 14): "Not This
 * Person" makes the faces a person of their own, merging them back brings
 * them back, merges that cannot succeed are not offered, and a refused one
 * names the photo by its path */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "library/lk-sample.h"
#include "lk-session.h"
#include "lk-test-util.h"

static char *tmp;
static char *library_dir;

/* A fresh session: the decisions of the test before are forgotten. */
static LkSession *
load (void)
{
  g_autofree char *review = g_build_filename (library_dir, "review.json", NULL);
  g_remove (review);
  LkSession *session = lk_session_new (library_dir);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

static const LkPerson *
find (LkSession *session, const char *id)
{
  const LkPeople *people = lk_session_peek_people (session);
  for (gsize k = 0; k < people->n_people; k++)
    if (strcmp (people->people[k].id, id) == 0)
      return &people->people[k];
  return NULL;
}

static void
test_own_person_and_merge_back (void)
{
  g_autoptr (LkSession) session = load ();
  const LkLibrary *library = lk_session_get_library (session);
  const LkPerson *biggest = &lk_session_peek_people (session)->people[0];
  g_autofree char *id = g_strdup (biggest->id);
  gsize before = biggest->n_faces;
  g_assert_cmpuint (before, >=, 4);
  guint32 faces[2] = { biggest->faces[before - 1], biggest->faces[before - 2] };
  g_assert_cmpuint (library->photo[faces[0]], !=, library->photo[faces[1]]);

  g_autoptr (GError) error = NULL;
  g_autofree char *new_id = NULL;
  g_assert_true (lk_session_take_out_faces (session, id, faces, 2, &new_id, &error));
  g_assert_no_error (error);
  g_assert_nonnull (new_id);
  const LkPerson *taken = find (session, new_id);
  g_assert_nonnull (taken);
  g_assert_cmpuint (taken->n_faces, ==, 2);
  g_assert_cmpuint (find (session, id)->n_faces, ==, before - 2);

  /* Merging them back works (it said "Merged" and did nothing). */
  g_assert_true (lk_session_merge (session, id, new_id, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (find (session, id)->n_faces, ==, before);
  g_assert_null (find (session, new_id));
}

static void
test_merges_offered_can_succeed (void)
{
  g_autoptr (LkSession) session = load ();
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  gsize refused = 0;
  for (gsize p = 0; p < MIN (people->n_people, 40); p++)
    {
      g_autofree char *id = g_strdup (people->people[p].id);
      g_autoptr (GArray) similarity = NULL;
      g_autoptr (GPtrArray) offered = lk_session_merge_candidates (session, id, &similarity);
      g_autoptr (GHashTable) mine = g_hash_table_new (g_int64_hash, g_int64_equal);
      const LkPerson *me = find (session, id);
      for (gsize f = 0; f < me->n_faces; f++)
        g_hash_table_add (mine, &library->photo[me->faces[f]]);
      g_autoptr (GHashTable) offered_ids = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint k = 0; k < offered->len; k++)
        g_hash_table_add (offered_ids,
                          (gpointer) lk_person_item_get_id (g_ptr_array_index (offered, k)));
      for (gsize q = 0; q < people->n_people; q++)
        {
          const LkPerson *other = &people->people[q];
          if (other == me)
            continue;
          gboolean clash = FALSE;
          for (gsize f = 0; f < other->n_faces; f++)
            clash |= g_hash_table_contains (mine, &library->photo[other->faces[f]]);
          g_assert_cmpint (clash, !=, g_hash_table_contains (offered_ids, other->id));
          if (clash && refused == 0)
            {
              /* The merge the chooser no longer offers is refused by path. */
              g_autoptr (GError) error = NULL;
              g_assert_false (lk_session_merge (session, id, other->id, &error));
              g_assert_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO);
              g_assert_nonnull (strstr (error->message, "/IMG_"));
              g_assert_nonnull (strstr (error->message, ".png holds two of these faces"));
              refused++;
            }
        }
    }
  g_assert_cmpuint (refused, ==, 1);
}

/* A move is checked against the faces that move, not the whole person: a
 * person photographed with this one (in one group photo) is not offered a
 * merge, but may still take the faces that are really theirs. */
static void
test_move_offers_people_photographed_together (void)
{
  g_autoptr (LkSession) session = load ();
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  gboolean found = FALSE;
  for (gsize p = 0; !found && p < people->n_people; p++)
    for (gsize q = 0; !found && q < people->n_people; q++)
      {
        const LkPerson *me = &people->people[p], *other = &people->people[q];
        if (p == q || me->n_faces < 2)
          continue;
        /* A face of `me` in a photo `other` has a face in, and one that is not. */
        gint64 clash = -1, free_face = -1;
        for (gsize f = 0; f < me->n_faces; f++)
          {
            gboolean shared = FALSE;
            for (gsize g = 0; g < other->n_faces; g++)
              shared |= library->photo[me->faces[f]] == library->photo[other->faces[g]];
            if (shared && clash < 0)
              clash = me->faces[f];
            else if (!shared && free_face < 0)
              free_face = me->faces[f];
          }
        if (clash < 0 || free_face < 0)
          continue;
        found = TRUE;
        g_autoptr (GArray) similarity = NULL;
        g_autoptr (GPtrArray) merge = lk_session_merge_candidates (session, me->id, &similarity);
        for (guint k = 0; k < merge->len; k++)
          g_assert_cmpstr (lk_person_item_get_id (g_ptr_array_index (merge, k)), !=, other->id);

        guint32 ok = (guint32) free_face, bad = (guint32) clash;
        g_autoptr (GArray) s1 = NULL, s2 = NULL;
        g_autoptr (GPtrArray) can = lk_session_move_candidates (session, me->id, &ok, 1, &s1);
        g_autoptr (GPtrArray) cannot = lk_session_move_candidates (session, me->id, &bad, 1, &s2);
        gboolean offered = FALSE, offered_bad = FALSE;
        for (guint k = 0; k < can->len; k++)
          offered |= strcmp (lk_person_item_get_id (g_ptr_array_index (can, k)), other->id) == 0;
        for (guint k = 0; k < cannot->len; k++)
          offered_bad
              |= strcmp (lk_person_item_get_id (g_ptr_array_index (cannot, k)), other->id) == 0;
        g_assert_true (offered);
        g_assert_false (offered_bad);
        /* And the move offered succeeds. */
        g_autofree char *me_id = g_strdup (me->id), *other_id = g_strdup (other->id);
        g_autoptr (GError) error = NULL;
        g_assert_true (lk_session_move_faces (session, me_id, &ok, 1, other_id, NULL, &error));
        g_assert_no_error (error);
      }
  g_assert_true (found);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-take-out-XXXXXX", &error);
  g_assert_no_error (error);
  library_dir = g_build_filename (tmp, "library", NULL);
  LkSampleOptions options = { 600, 64, 5, FALSE };
  g_assert_true (lk_sample_write (library_dir, &options, &error));
  g_assert_no_error (error);
  g_test_add_func ("/take-out/own-person-and-merge-back", test_own_person_and_merge_back);
  g_test_add_func ("/take-out/merges-offered-can-succeed", test_merges_offered_can_succeed);
  g_test_add_func ("/take-out/move-offers-people-photographed-together",
                   test_move_offers_people_photographed_together);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (library_dir);
  g_free (tmp);
  return status;
}
