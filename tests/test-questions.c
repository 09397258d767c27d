/* test-questions — "Is this Ada?": what is asked, of whom, and what is not */
#include "config.h"

#include <math.h>
#include <string.h>

#include "people/lk-cluster.h"
#include "people/lk-questions.h"
#include "people/lk-review.h"
#include "scan/lk-scan.h"

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

/* Below the bar: faces with embeddings, scanned at the clustering's bar 0.9
 * by the pair model p = sigmoid (40 (cos − 0.9)) (p 0.5 at cos 0.9, 0.9 at
 * 0.955). Ada: faces 0–5, cos 0.990 to each other (p 0.97). Face 6: cos 0.93
 * to each of Ada's (p 0.77): below the clustering's bar, above the question
 * bar. Face 7: cos 0.88 (p 0.31): below both. Face 8: as face 6, but in the
 * photo of face 0. Face 9: orthogonal to everyone. Each face has an axis of
 * its own beside Ada's direction e0, so every cosine is the product of the
 * two e0 components. */
#define BN   10
#define BDIM 16

typedef struct
{
  float rows[BN * BDIM];
  float crop[BN];
  guint64 photo[BN];
  guint8 gallery[BN];
  LkFaces faces;
  LkCalibration calibration;
  LkScanResult *scan;
  LkClusterInput input;
} Below;

static void
below_init (Below *w)
{
  static const double ada = 0.995;
  const double along[BN] = { ada, ada, ada, ada, ada, ada, 0.93 / ada, 0.88 / ada, 0.93 / ada, 0 };
  memset (w->rows, 0, sizeof w->rows);
  for (gsize f = 0; f < BN; f++)
    {
      w->rows[f * BDIM] = (float) along[f];
      w->rows[f * BDIM + 1 + f] = (float) sqrt (1.0 - along[f] * along[f]);
      w->crop[f] = 100.0f;
      w->photo[f] = f;
      w->gallery[f] = 1;
    }
  w->photo[8] = w->photo[0];
  w->faces = (LkFaces){ w->rows, BN, BDIM, w->crop, w->photo, w->gallery };
  w->calibration = (LkCalibration){ .a = 40.0, .b = -36.0, .w_size = 0.0 };
  g_autoptr (GError) error = NULL;
  w->scan = lk_scan (&w->faces, &w->calibration, 0.9, NULL, NULL, &error);
  g_assert_no_error (error);
  w->input = (LkClusterInput){
    BN, w->photo, NULL, NULL, (const LkPair *) w->scan->pairs->data, w->scan->pairs->len
  };
}

/* The questions scored from the links down to `bar` (what the session does). */
static GArray *
questions_below (const LkPeople *people, const LkClusterInput *input, const LkFaces *faces,
                 const LkCalibration *calibration, double bar, const GPtrArray *pins)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkQuestionLinks) links
      = lk_people_question_links (people, faces, calibration, bar, NULL, FALSE, NULL, &error);
  g_assert_no_error (error);
  return lk_people_questions_from_links (people, input, links, pins, 0);
}

/* A face linked to Ada only below the clustering's bar is asked about; one
 * below the question bar is not, nor one in a photo Ada already has a face
 * in; the scan's pairs alone ask nothing here (issue 30). */
static void
test_asks_below_the_clustering_bar (void)
{
  Below w;
  below_init (&w);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkReview) review = lk_review_new (BN, FP, w.photo);
  g_autoptr (LkPeople) before = lk_cluster (&w.input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);
  gint32 ada = before->person_of[0];
  g_assert_cmpint (ada, >=, 0);
  g_assert_cmpuint (before->people[ada].n_faces, ==, 6);
  for (guint32 f = 6; f < BN; f++)
    g_assert_cmpint (before->person_of[f], ==, -1);
  g_assert_true (lk_review_name (review, before, before->people[ada].id, "Ada", &error));
  g_autoptr (LkPeople) people = lk_cluster (&w.input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);

  g_autoptr (GArray) at_the_bar
      = lk_people_questions (people, &w.input, lk_review_pins (review), 0);
  g_assert_cmpuint (at_the_bar->len, ==, 0);

  g_autoptr (GArray) q = questions_below (people, &w.input, &w.faces, &w.calibration,
                                          LK_QUESTION_BAR, lk_review_pins (review));
  g_assert_cmpuint (q->len, ==, 1);
  const LkQuestion *asked = &g_array_index (q, LkQuestion, 0);
  g_assert_cmpuint (asked->face, ==, 6);
  g_assert_cmpint (asked->candidate, ==, -1);
  g_assert_cmpint (asked->person, ==, people->person_of[0]);
  g_assert_cmpfloat_with_epsilon (asked->score, 1.0 / (1.0 + exp (-40.0 * (0.93 - 0.9))), 1e-5);

  /* Face 8 pairs with Ada's other faces as face 6 does: the photo rule alone
   * keeps it out. Face 7 is linked, but below the question bar. */
  g_autoptr (LkQuestionLinks) links
      = lk_people_question_links (people, &w.faces, &w.calibration, 0.2, NULL, FALSE, NULL, &error);
  g_assert_no_error (error);
  gboolean linked[BN] = { FALSE };
  for (guint k = 0; k < links->links->len; k++)
    linked[g_array_index (links->links, LkPair, k).j] = TRUE;
  g_assert_true (linked[6] && linked[7] && linked[8] && !linked[9]);
  /* Linked at 0.31, face 7 scores below LK_QUESTION_MIN_SCORE even so. */
  g_autoptr (GArray) lower
      = questions_below (people, &w.input, &w.faces, &w.calibration, 0.2, lk_review_pins (review));
  g_assert_cmpuint (lower->len, ==, 1);
  g_assert_cmpuint (g_array_index (lower, LkQuestion, 0).face, ==, 6);

  /* "No" to face 6: not asked again. */
  guint32 six = 6;
  g_assert_true (
      lk_review_reject_faces (review, people, people->people[asked->person].id, &six, 1, &error));
  g_autoptr (LkPeople) after = lk_cluster (&w.input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) left = questions_below (after, &w.input, &w.faces, &w.calibration,
                                             LK_QUESTION_BAR, lk_review_pins (review));
  g_assert_cmpuint (left->len, ==, 0);
  lk_scan_result_free (w.scan);
}

/* The full scan's pairs at `low`'s bar between a candidate's face and a named
 * face are exactly `links`, with the same probabilities. */
static void
assert_links_are_the_scans (const LkPeople *people, const LkQuestionLinks *links,
                            const LkScanResult *low)
{
  g_autoptr (GHashTable) want = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) keys = g_array_sized_new (FALSE, FALSE, sizeof (gint64), low->pairs->len);
  g_autoptr (GArray) probability
      = g_array_sized_new (FALSE, FALSE, sizeof (float), low->pairs->len);
  for (guint k = 0; k < low->pairs->len; k++)
    {
      const LkPair *pair = &g_array_index (low->pairs, LkPair, k);
      gboolean candidate[2], named[2];
      guint32 ends[2] = { pair->i, pair->j };
      for (int e = 0; e < 2; e++)
        {
          gint32 p = people->person_of[ends[e]];
          const LkPerson *person = p >= 0 ? &people->people[p] : NULL;
          candidate[e] = person == NULL
                         || (person->name == NULL && !person->hidden
                             && person->n_faces <= LK_QUESTION_SMALL_PERSON);
          named[e] = person != NULL && person->name != NULL && !person->hidden;
        }
      if ((candidate[0] && named[1]) || (candidate[1] && named[0]))
        {
          gint64 key = (gint64) pair->i * people->n_faces + pair->j;
          g_array_append_val (keys, key);
          g_array_append_val (probability, pair->probability);
        }
    }
  for (guint k = 0; k < keys->len; k++)
    g_hash_table_insert (want, &g_array_index (keys, gint64, k),
                         &g_array_index (probability, float, k));
  g_test_message ("%u links (%" G_GUINT64_FORMAT " pairs compared) of %u pairs at the bar",
                  links->links->len, links->compared, low->pairs->len);
  g_assert_cmpuint (links->links->len, >, 0);
  g_assert_cmpuint (links->links->len, ==, keys->len);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint k = 0; k < links->links->len; k++)
    {
      const LkPair *pair = &g_array_index (links->links, LkPair, k);
      g_assert_cmpuint (pair->i, <, pair->j);
      gint64 key = (gint64) pair->i * people->n_faces + pair->j;
      gint64 *stored = g_hash_table_lookup (want, &key);
      g_assert_nonnull (stored);
      g_assert_false (g_hash_table_contains (seen, stored));
      g_hash_table_add (seen, stored);
      g_assert_cmpfloat (*(const float *) g_hash_table_lookup (want, &key), ==, pair->probability);
    }
}

/* The rectangular pass is the scan's own answer: on 600 faces of 30 people
 * with noise, its links are exactly the full scan's pairs (same bar) between
 * a candidate's face and a named face, with the same probabilities; and so
 * are the links found again after names come and go and people are hidden,
 * from the previous ones, comparing only the faces whose roles changed. */
static void
test_links_are_the_full_scans_pairs (void)
{
  enum
  {
    FACES = 600,
    DIM = 32,
    IDS = 30
  };
  g_autoptr (GRand) rand = g_rand_new_with_seed (30);
  g_autofree float *centre = g_new (float, IDS *DIM);
  g_autofree float *rows = g_new (float, FACES *DIM);
  g_autofree float *crop = g_new (float, FACES);
  g_autofree guint64 *photo = g_new (guint64, FACES);
  g_autofree guint8 *gallery = g_new (guint8, FACES);
  for (gsize k = 0; k < IDS * DIM; k++)
    centre[k] = (float) g_rand_double_range (rand, -1, 1);
  for (gsize f = 0; f < FACES; f++)
    {
      /* Identities of very different sizes, so there are named people, small
       * unnamed ones and unassigned faces. */
      gsize id = (gsize) (IDS * pow (g_rand_double (rand), 2.0));
      double norm = 0;
      for (gsize d = 0; d < DIM; d++)
        {
          rows[f * DIM + d]
              = centre[id * DIM + d] + (float) g_rand_double_range (rand, -0.25, 0.25);
          norm += (double) rows[f * DIM + d] * rows[f * DIM + d];
        }
      for (gsize d = 0; d < DIM; d++)
        rows[f * DIM + d] = (float) (rows[f * DIM + d] / sqrt (norm));
      crop[f] = (float) g_rand_double_range (rand, 40, 400);
      photo[f] = g_rand_int_range (rand, 0, FACES / 2);
      gallery[f] = g_rand_int_range (rand, 0, 4) != 0;
    }
  LkFaces faces = { rows, FACES, DIM, crop, photo, gallery };
  LkCalibration calibration = { .a = 30.0, .b = -26.0, .w_size = 0.05 };
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) scan = lk_scan (&faces, &calibration, 0.9, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input
      = { FACES, photo, NULL, crop, (const LkPair *) scan->pairs->data, scan->pairs->len };
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkScanResult) low = lk_scan (&faces, &calibration, 0.3, NULL, NULL, &error);
  g_assert_no_error (error);
  guint named = 0, large = 0;
  for (gsize p = 0; p < people->n_people; p++)
    if (people->people[p].n_faces >= 8 && large++ % 2 == 0)
      {
        people->people[p].name = g_strdup_printf ("Person %zu", p);
        named++;
      }
  g_assert_cmpuint (named, >, 2);
  g_autoptr (LkQuestionLinks) first
      = lk_people_question_links (people, &faces, &calibration, 0.3, NULL, FALSE, NULL, &error);
  g_assert_no_error (error);
  assert_links_are_the_scans (people, first, low);

  /* The first named person loses the name, the next one is hidden, the
   * other large ones are named, and so is a small person (its faces are a
   * candidate's no more); one small person is hidden. */
  gboolean unnamed = FALSE, hid = FALSE, small_named = FALSE, small_hidden = FALSE;
  for (gsize p = 0; p < people->n_people; p++)
    {
      LkPerson *person = &people->people[p];
      if (person->name != NULL && !unnamed)
        {
          g_clear_pointer (&person->name, g_free);
          unnamed = TRUE;
        }
      else if (person->name != NULL && !hid)
        hid = person->hidden = TRUE;
      else if (person->name == NULL && person->n_faces >= 8)
        person->name = g_strdup_printf ("Person %zu", p);
      else if (person->n_faces <= LK_QUESTION_SMALL_PERSON && !small_named)
        {
          person->name = g_strdup_printf ("Small %zu", p);
          small_named = TRUE;
        }
      else if (person->n_faces <= LK_QUESTION_SMALL_PERSON && !small_hidden)
        small_hidden = person->hidden = TRUE;
    }
  g_assert_true (unnamed && hid && small_named && small_hidden);
  g_autoptr (LkQuestionLinks) again
      = lk_people_question_links (people, &faces, &calibration, 0.3, first, FALSE, NULL, &error);
  g_assert_no_error (error);
  assert_links_are_the_scans (people, again, low);
  g_autoptr (LkQuestionLinks) fresh
      = lk_people_question_links (people, &faces, &calibration, 0.3, NULL, FALSE, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (again->compared, <, fresh->compared);
  /* Another bar: nothing kept. */
  g_autoptr (LkQuestionLinks) other
      = lk_people_question_links (people, &faces, &calibration, 0.5, first, FALSE, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (other->compared, ==, fresh->compared);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/questions/asks-about-unassigned-faces-and-small-people",
                   test_asks_about_unassigned_faces_and_small_people);
  g_test_add_func ("/questions/yes-answers-it", test_yes_answers_it);
  g_test_add_func ("/questions/asks-below-the-clustering-bar", test_asks_below_the_clustering_bar);
  g_test_add_func ("/questions/links-are-the-full-scans-pairs",
                   test_links_are_the_full_scans_pairs);
  return g_test_run ();
}
