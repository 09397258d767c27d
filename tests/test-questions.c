/* test-questions — "Is this Ada?": what is asked, of whom, and what is not */
#include "config.h"

#include "people/lk-cluster.h"
#include "people/lk-questions.h"
#include "people/lk-review.h"

#include "lk-test-pairs.h"

#define FP "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define N  28

/* Ada: faces 0–9 (named). Bo: 10–19 (unnamed). A small unnamed person:
 * 20–21. Unassigned: 22 (a pair with Ada), 23 (a pair with Bo only), 24 (a
 * pair with Ada, but in photo 100 with face 0), 25 (a weaker pair with Ada),
 * 26–27 alone. Every link to Ada is one pair per face, so its average
 * linkage (sum / (10 · size)) stays below the clustering's 0.1 and the
 * candidates stay apart. */
typedef struct
{
  GArray *pairs;
  guint64 photo[N];
  LkClusterInput input;
} World;

static void
world_init (World *w)
{
  w->pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (w->pairs, 0, 10, 0.99f);
  lk_test_add_clique (w->pairs, 10, 20, 0.99f);
  lk_test_add_pair (w->pairs, 20, 21, 0.99f);
  /* The small person: both its faces pair with Ada (score (0.95 + 0.93) / 2). */
  lk_test_add_pair (w->pairs, 20, 1, 0.95f);
  lk_test_add_pair (w->pairs, 21, 2, 0.93f);
  lk_test_add_pair (w->pairs, 22, 4, 0.97f);
  lk_test_add_pair (w->pairs, 23, 11, 0.96f);
  lk_test_add_pair (w->pairs, 24, 5, 0.99f);
  lk_test_add_pair (w->pairs, 25, 5, 0.91f);
  for (gsize f = 0; f < N; f++)
    w->photo[f] = f;
  w->photo[24] = w->photo[0] = 100;
  w->input = lk_test_cluster_input (w->pairs, N, w->photo);
}

static LkPeople *
people_of (World *w, LkReview *review)
{
  g_autoptr (GError) error = NULL;
  LkPeople *people = lk_cluster (&w->input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);
  return people;
}

static void
test_asks_about_unassigned_faces_and_small_people (void)
{
  World w;
  world_init (&w);
  g_autoptr (LkReview) review = lk_review_new (N, FP, w.photo);
  g_autoptr (LkPeople) before = people_of (&w, review);
  g_autoptr (GError) error = NULL;
  /* Nobody named: nothing to ask. */
  g_autoptr (GArray) none = lk_people_questions (before, &w.input, lk_review_pins (review), 0);
  g_assert_cmpuint (none->len, ==, 0);

  g_assert_true (lk_review_name (review, before, "p0", "Ada", &error));
  g_autoptr (LkPeople) people = people_of (&w, review);
  g_assert_cmpint (people->person_of[22], ==, -1);
  g_assert_cmpint (people->person_of[25], ==, -1);
  g_assert_cmpint (people->person_of[20], >=, 0);
  g_assert_cmpint (people->person_of[20], !=, people->person_of[0]);
  g_autoptr (GArray) q = lk_people_questions (people, &w.input, lk_review_pins (review), 0);
  /* Face 22 (0.97), then the small person (0.94), then face 25 (0.91);
   * not 23 (Bo is unnamed), not 24 (photo 100 is Ada's already). */
  g_assert_cmpuint (q->len, ==, 3);
  const LkQuestion *a = &g_array_index (q, LkQuestion, 0);
  const LkQuestion *b = &g_array_index (q, LkQuestion, 1);
  const LkQuestion *c = &g_array_index (q, LkQuestion, 2);
  gint32 ada = people->person_of[0];
  g_assert_cmpint (a->person, ==, ada);
  g_assert_cmpint (a->candidate, ==, -1);
  g_assert_cmpuint (a->face, ==, 22);
  g_assert_cmpfloat_with_epsilon (a->score, 0.97, 1e-6);
  g_assert_cmpint (b->person, ==, ada);
  g_assert_cmpint (b->candidate, ==, people->person_of[20]);
  g_assert_cmpfloat_with_epsilon (b->score, 0.94, 1e-6);
  g_assert_cmpuint (c->face, ==, 25);
  g_autoptr (GArray) two = lk_people_questions (people, &w.input, lk_review_pins (review), 2);
  g_assert_cmpuint (two->len, ==, 2);

  /* "No" to face 22 and to the small person: neither is asked again. */
  guint32 f22 = 22;
  g_assert_true (lk_review_reject_faces (review, people, "p0", &f22, 1, &error));
  const LkPerson *small = &people->people[b->candidate];
  g_assert_true (
      lk_review_reject_faces (review, people, "p0", small->faces, small->n_faces, &error));
  g_assert_no_error (error);
  g_autoptr (LkPeople) after = people_of (&w, review);
  g_autoptr (GArray) left = lk_people_questions (after, &w.input, lk_review_pins (review), 0);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpuint (g_array_index (left, LkQuestion, 0).face, ==, 25);

  /* Undone, both are asked again. */
  g_assert_true (lk_review_undo (review));
  g_assert_true (lk_review_undo (review));
  g_autoptr (LkPeople) undone = people_of (&w, review);
  g_autoptr (GArray) again = lk_people_questions (undone, &w.input, lk_review_pins (review), 0);
  g_assert_cmpuint (again->len, ==, 3);
  g_array_unref (w.pairs);
}

/* "Yes": the move or merge answers it, and the answered one is not asked. */
static void
test_yes_answers_it (void)
{
  World w;
  world_init (&w);
  g_autoptr (LkReview) review = lk_review_new (N, FP, w.photo);
  g_autoptr (LkPeople) before = people_of (&w, review);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_review_name (review, before, "p0", "Ada", &error));
  g_autoptr (LkPeople) people = people_of (&w, review);
  guint32 f22 = 22;
  g_assert_true (lk_review_move (review, people, NULL, &f22, 1, "p0", NULL, &error));
  g_autoptr (LkPeople) moved = people_of (&w, review);
  g_autoptr (GArray) q = lk_people_questions (moved, &w.input, lk_review_pins (review), 0);
  for (guint k = 0; k < q->len; k++)
    g_assert_cmpuint (g_array_index (q, LkQuestion, k).face, !=, 22);
  g_assert_cmpuint (q->len, ==, 2);
  g_array_unref (w.pairs);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/questions/asks-about-unassigned-faces-and-small-people",
                   test_asks_about_unassigned_faces_and_small_people);
  g_test_add_func ("/questions/yes-answers-it", test_yes_answers_it);
  return g_test_run ();
}
