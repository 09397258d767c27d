/* test-evaluate — the scores, worked out by hand on small clusterings */
#include "config.h"

#include <string.h>

#include "people/lk-evaluate.h"

static LkPeople *
people_from (const guint32 *pairs, gsize n_pairs, gsize n)
{
  g_autoptr (GArray) a = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (gsize k = 0; k < n_pairs; k++)
    g_array_append_val (a, ((LkPair){ pairs[2 * k], pairs[2 * k + 1], 1.0f }));
  LkClusterInput in = { n, NULL, NULL, NULL, (const LkPair *) a->data, a->len };
  LkClusterOptions o = { LK_LINKAGE_SINGLE, 0, 0 };
  g_autoptr (GError) error = NULL;
  LkPeople *people = lk_cluster (&in, NULL, &o, &error);
  g_assert_no_error (error);
  return people;
}

/* Groups {0,1,2} and {3,4}, face 5 unassigned; truth A A B | B B | A. */
static void
test_hand_worked_scores (void)
{
  guint32 pairs[] = { 0, 1, 1, 2, 3, 4 };
  g_autoptr (LkPeople) people = people_from (pairs, 3, 6);
  const char *labels[] = { "A", "A", "B", "B", "B", "A" };
  LkScore s;
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_evaluate (people, labels, &s, &error));
  g_assert_no_error (error);
  /* Precision per face: 2/3 2/3 1/3 | 1 1 | 1 → 14/3 / 6. */
  g_assert_cmpfloat_with_epsilon (s.bcubed.precision, (14.0 / 3) / 6, 1e-12);
  /* Recall per face (A has 3 faces, B 3): 2/3 2/3 1/3 | 2/3 2/3 | 1/3 → 10/3 / 6. */
  g_assert_cmpfloat_with_epsilon (s.bcubed.recall, (10.0 / 3) / 6, 1e-12);
  double p = 14.0 / 18, r = 10.0 / 18;
  g_assert_cmpfloat_with_epsilon (s.bcubed.f1, 2 * p * r / (p + r), 1e-12);
  /* Pairs put together: 3 + 1 = 4, of which true: (0,1) and (3,4); truth has 3 + 3. */
  g_assert_cmpfloat_with_epsilon (s.pairwise.precision, 2.0 / 4, 1e-12);
  g_assert_cmpfloat_with_epsilon (s.pairwise.recall, 2.0 / 6, 1e-12);
  g_assert_cmpuint (s.people, ==, 2);
  g_assert_cmpuint (s.identities, ==, 2);
  g_assert_cmpuint (s.split, ==, 2); /* A over {0,1,2} and face 5; B over both */
  g_assert_cmpuint (s.mixed, ==, 1);
  g_assert_cmpuint (s.labelled, ==, 6);
}

static void
test_perfect_and_unlabelled (void)
{
  guint32 pairs[] = { 0, 1, 2, 3 };
  g_autoptr (LkPeople) people = people_from (pairs, 2, 5);
  const char *labels[] = { "x", "x", "y", "y", NULL };
  LkScore s;
  g_assert_true (lk_evaluate (people, labels, &s, NULL));
  g_assert_cmpfloat (s.bcubed.f1, ==, 1.0);
  g_assert_cmpfloat (s.pairwise.precision, ==, 1.0);
  g_assert_cmpfloat (s.pairwise.recall, ==, 1.0);
  g_assert_cmpuint (s.split, ==, 0);
  g_assert_cmpuint (s.mixed, ==, 0);
  g_assert_cmpuint (s.labelled, ==, 4);

  const char *none[] = { NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_assert_false (lk_evaluate (people, none, &s, &error));
  g_assert_error (error, LK_EVALUATE_ERROR, LK_EVALUATE_ERROR_NO_LABELS);
  g_assert_nonnull (strstr (error->message, "5 faces"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/evaluate/hand-worked-scores", test_hand_worked_scores);
  g_test_add_func ("/evaluate/perfect-and-unlabelled", test_perfect_and_unlabelled);
  return g_test_run ();
}
