/* fuzz-review — lk_review_load on an arbitrary review.json, then everything a
 * loaded review feeds: replay into pins, clustering with those pins, undo and
 * redo to both ends, and a save that must load back the same
 *
 * The review belongs to a fixed 16-face library (two faces per photo) with the
 * fingerprint FINGERPRINT, so inputs that pass the header checks reach the
 * decision log. Anything may be refused with a LK_REVIEW_ERROR; nothing may
 * crash, leak, or produce people that break LkPeople's invariants.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "people/lk-cluster.h"
#include "people/lk-review.h"

#define N_FACES     16
#define FINGERPRINT "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static char *folder;
static char *review_path;
static char *saved_path;
static char *saved_lock; /* the lock file each save of saved_path takes */

static const guint64 photo[N_FACES] = { 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7 };

/* A chain of strong pairs, faces of one photo never paired: something to
 * cluster, so pins have groups to split and join. */
static const LkPair pairs[] = {
  { 0, 2, 0.99f },  { 2, 4, 0.95f },   { 4, 6, 0.9f },    { 1, 3, 0.97f },
  { 3, 5, 0.6f },   { 5, 7, 0.92f },   { 8, 10, 0.99f },  { 9, 11, 0.8f },
  { 10, 12, 0.3f }, { 12, 14, 0.99f }, { 13, 15, 0.98f }, { 0, 14, 0.4f },
};

static void
remove_folder (void)
{
  g_remove (review_path);
  g_remove (saved_path);
  g_remove (saved_lock);
  g_rmdir (folder);
}

static void
make_folder (void)
{
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  g_autofree char *template = g_build_filename (base, "likeness-fuzz-review-XXXXXX", NULL);

  folder = g_mkdtemp (g_steal_pointer (&template));
  g_assert_nonnull (folder);
  review_path = g_build_filename (folder, "review.json", NULL);
  saved_path = g_build_filename (folder, "saved.json", NULL);
  saved_lock = g_build_filename (folder, ".saved.json.lock", NULL);
  atexit (remove_folder);
}

static void
check_people (const LkPeople *people)
{
  gsize seen = people->n_unassigned;

  g_assert_cmpuint (people->n_faces, ==, N_FACES);
  for (gsize p = 0; p < people->n_people; p++)
    {
      const LkPerson *person = &people->people[p];
      gboolean has_cover = FALSE;
      g_assert_cmpuint (person->n_faces, >=, 1);
      for (gsize k = 0; k < person->n_faces; k++)
        {
          g_assert_cmpuint (person->faces[k], <, N_FACES);
          g_assert_cmpint (people->person_of[person->faces[k]], ==, (gint32) p);
          g_assert_true (k == 0 || person->faces[k - 1] < person->faces[k]);
          has_cover |= person->faces[k] == person->cover;
        }
      g_assert_true (has_cover);
      g_assert_true (lk_people_find (people, person->id) == person);
      seen += person->n_faces;
    }
  for (gsize k = 0; k < people->n_unassigned; k++)
    g_assert_cmpint (people->person_of[people->unassigned[k]], ==, -1);
  g_assert_cmpuint (seen, ==, N_FACES);
}

static void
cluster_with_pins (LkReview *review)
{
  const LkClusterInput input = {
    .n_faces = N_FACES,
    .photo = photo,
    .pairs = pairs,
    .n_pairs = G_N_ELEMENTS (pairs),
  };
  const LkClusterOptions options = { .linkage = LK_LINKAGE_AVERAGE };
  GError *error = NULL;

  LkPeople *people = lk_cluster (&input, lk_review_pins (review), &options, &error);
  if (people == NULL)
    {
      g_assert_true (error != NULL && error->domain == LK_CLUSTER_ERROR);
      g_error_free (error);
      return;
    }
  check_people (people);
  lk_people_free (people);
}

static void
exercise (LkReview *review)
{
  guint n = lk_review_n_decisions (review);
  g_free (lk_review_describe_undo (review));
  g_free (lk_review_describe_redo (review));
  cluster_with_pins (review);

  while (lk_review_undo (review))
    g_free (lk_review_describe_redo (review));
  g_assert_false (lk_review_can_undo (review));
  cluster_with_pins (review);
  while (lk_review_redo (review))
    g_free (lk_review_describe_undo (review));
  g_assert_false (lk_review_can_redo (review));
  cluster_with_pins (review);
  g_assert_cmpuint (lk_review_n_decisions (review), >=, n);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError *error = NULL;

  if (folder == NULL)
    make_folder ();
  /* GLib 2.74's G_FILE_SET_CONTENTS_NONE does not truncate: start afresh. */
  g_remove (review_path);
  g_file_set_contents_full (review_path, (const char *) data, size, G_FILE_SET_CONTENTS_NONE, 0644,
                            &error);
  g_assert_no_error (error);

  LkReview *review = lk_review_load (review_path, N_FACES, FINGERPRINT, photo, &error);
  if (review == NULL)
    {
      g_assert_true (error != NULL && error->domain == LK_REVIEW_ERROR);
      g_assert_cmpstr (error->message, !=, "");
      g_error_free (error);
      return 0;
    }
  g_assert_no_error (error);
  g_assert_cmpstr (lk_review_fingerprint (review), ==, FINGERPRINT);

  guint decisions = lk_review_n_decisions (review);
  gboolean can_redo = lk_review_can_redo (review);
  /* A save merges with the file it replaces: the previous input's is not
   * this one's. */
  g_remove (saved_path);
  g_assert_true (lk_review_save (review, saved_path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  LkReview *back = lk_review_load (saved_path, N_FACES, FINGERPRINT, photo, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (back), ==, decisions);
  g_assert_true (lk_review_can_redo (back) == can_redo);
  lk_review_free (back);

  exercise (review);
  lk_review_free (review);
  return 0;
}
