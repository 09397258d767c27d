/* test-pair-questions — "Same or different person?": which pairs are asked, what an answer
 * records, and that twenty answers fit a calibration as good as the labels' */
#include "config.h"

#include <json-glib/json-glib.h>
#include <math.h>

#include "library/lk-sample.h"
#include "lk-session.h"
#include "people/lk-calibrate.h"
#include "people/lk-evaluate.h"
#include "people/lk-pair-questions.h"

#include "lk-test-util.h"

static char *tmp;

static LkSession *
loaded_sample (const char *name, LkSampleFamily family, gsize faces, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *folder = g_build_filename (tmp, name, NULL);
  LkSampleOptions options
      = { faces, LK_SAMPLE_DEFAULT_DIM, seed, FALSE, LK_SAMPLE_MODEL_ARCFACE, family };
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  LkSession *session = lk_session_new (folder);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

static void
assert_rules (LkSession *session, const GArray *qs)
{
  const LkLibrary *l = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  g_autofree guint8 *face_used = g_new0 (guint8, l->count);
  g_autofree guint *uses = g_new0 (guint, people->n_people);
  g_autoptr (GHashTable) pairs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  for (guint k = 0; k < qs->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      g_assert_cmpuint (l->photo[q->a], !=, l->photo[q->b]);
      g_assert_false (face_used[q->a] || face_used[q->b]);
      face_used[q->a] = face_used[q->b] = 1;
      gint32 pa = people->person_of[q->a], pb = people->person_of[q->b];
      g_assert_cmpint (pa, >=, 0);
      g_assert_cmpuint (++uses[pa], <=, 2);
      if (pb >= 0 && pb != pa)
        g_assert_cmpuint (++uses[pb], <=, 2);
      char *key = g_strdup_printf ("%d-%d", MIN (pa, pb), MAX (pa, pb));
      g_ptr_array_add (keys, key);
      g_assert_false (g_hash_table_contains (pairs, key));
      g_hash_table_add (pairs, key);
    }
}

/* With a calibration: the pair nearest p = 0.5 first, then both sides of
 * it, within the rules; the same seed gives the same pairs. */
static void
test_choice_is_least_sure_first_within_the_rules (void)
{
  g_autoptr (LkSession) session = loaded_sample ("choice", LK_SAMPLE_FAMILY_PERSONAL, 800, 2);
  const LkLibrary *l = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  const GPtrArray *pins = lk_review_pins (lk_session_get_review (session));
  const LkCalibration *cal = lk_session_get_calibration (session, NULL);
  g_autoptr (GArray) qs = lk_pair_questions (l, people, pins, cal, LK_PAIR_QUESTIONS, 1);
  g_assert_cmpuint (qs->len, ==, LK_PAIR_QUESTIONS);
  assert_rules (session, qs);
  /* The first is the least sure; the rest lie on both sides of p = 0.5. */
  guint below = 0, above = 0;
  double first = fabs (g_array_index (qs, LkPairQuestion, 0).p - 0.5);
  for (guint k = 0; k < qs->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      g_assert_cmpfloat (fabs (q->p - 0.5), >=, first);
      below += q->p < 0.5;
      above += q->p > 0.5;
    }
  /* Unsure: a random pair of this library is p ≈ 0. */
  g_assert_cmpfloat (first, <, 0.2);
  g_assert_cmpuint (below, >=, 5);
  g_assert_cmpuint (above, >=, 5);
  g_autoptr (GArray) again = lk_pair_questions (l, people, pins, cal, LK_PAIR_QUESTIONS, 1);
  g_assert_cmpmem (again->data, again->len * sizeof (LkPairQuestion), qs->data,
                   qs->len * sizeof (LkPairQuestion));
}

/* Without a calibration: spread over the near neighbours' cosines. */
static void
test_choice_without_calibration_spreads_over_cosines (void)
{
  g_autoptr (LkSession) session = loaded_sample ("spread", LK_SAMPLE_FAMILY_PERSONAL, 800, 3);
  const LkLibrary *l = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GArray) qs = lk_pair_questions (
      l, people, lk_review_pins (lk_session_get_review (session)), NULL, LK_PAIR_QUESTIONS, 1);
  g_assert_cmpuint (qs->len, ==, LK_PAIR_QUESTIONS);
  assert_rules (session, qs);
  double lo = 1, hi = -1;
  for (guint k = 0; k < qs->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      g_assert_true (isnan (q->p));
      lo = MIN (lo, q->cos);
      hi = MAX (hi, q->cos);
    }
  g_assert_cmpfloat (hi - lo, >, 0.2);
}

/* "Same" and "Different" are decisions review.json knows; undo takes one back,
 * and a pair the decisions settle is not asked again. */
static void
test_answers_are_decisions_that_undo (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = loaded_sample ("answers", LK_SAMPLE_FAMILY_PERSONAL, 400, 5);
  const LkLibrary *l = lk_session_get_library (session);
  const LkCalibration *cal = lk_session_get_calibration (session, NULL);
  g_autoptr (GArray) qs
      = lk_pair_questions (l, lk_session_peek_people (session),
                           lk_review_pins (lk_session_get_review (session)), cal, 4, 1);
  g_assert_cmpuint (qs->len, >=, 2);
  for (guint k = 0; k < 2; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      g_autoptr (LkReviewRequest) r
          = lk_pair_answer_request (lk_session_peek_people (session), q->a, q->b, k == 0, &error);
      g_assert_no_error (error);
      g_assert_true (lk_session_apply (session, r, NULL, &error));
      g_assert_no_error (error);
      const LkPeople *people = lk_session_peek_people (session);
      if (k == 0)
        g_assert_cmpint (people->person_of[q->a], ==, people->person_of[q->b]);
      else
        g_assert_cmpint (people->person_of[q->a], !=, people->person_of[q->b]);
    }
  g_assert_cmpuint (lk_review_n_decisions (lk_session_get_review (session)), ==, 2);
  g_autoptr (GArray) after
      = lk_pair_questions (l, lk_session_peek_people (session),
                           lk_review_pins (lk_session_get_review (session)), cal, 50, 1);
  for (guint k = 0; k < after->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (after, LkPairQuestion, k);
      const LkPairQuestion *first = &g_array_index (qs, LkPairQuestion, 0);
      g_assert_false (MIN (q->a, q->b) == MIN (first->a, first->b)
                      && MAX (q->a, q->b) == MAX (first->a, first->b));
    }
  g_assert_true (lk_session_undo (session, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (lk_session_get_review (session)), ==, 1);
}

/* A calibration that pairs nobody (the format's default left in force when
 * the estimate refuses) leaves every face alone: the pairs are still asked,
 * between faces of no person, and the answers are decisions too — "same" a
 * new person of the two, "different" a person of the first that the second
 * never joins. */
static void
test_asked_when_every_face_is_alone (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *folder = g_build_filename (tmp, "alone", NULL);
  LkSampleOptions options = { 400,   LK_SAMPLE_DEFAULT_DIM,   6,
                              FALSE, LK_SAMPLE_MODEL_ARCFACE, LK_SAMPLE_FAMILY_PERSONAL };
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  JsonObject *calibration = json_object_get_object_member (
      json_node_get_object (json_parser_get_root (parser)), "calibration");
  json_object_set_double_member (calibration, "b", -40);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_autoptr (LkSession) session = lk_session_new (folder);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lk_session_peek_people (session)->n_people, ==, 0);

  g_autoptr (GArray) qs = lk_session_pair_questions (session, LK_PAIR_QUESTIONS);
  g_assert_cmpuint (qs->len, ==, LK_PAIR_QUESTIONS);
  const LkLibrary *l = lk_session_get_library (session);
  g_autofree guint8 *used = g_new0 (guint8, l->count);
  for (guint k = 0; k < qs->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      g_assert_cmpuint (l->photo[q->a], !=, l->photo[q->b]);
      g_assert_false (used[q->a] || used[q->b]);
      used[q->a] = used[q->b] = 1;
    }
  const LkPairQuestion *same = &g_array_index (qs, LkPairQuestion, 0);
  const LkPairQuestion *apart = &g_array_index (qs, LkPairQuestion, 1);
  g_assert_true (lk_session_answer_pair (session, same->a, same->b, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (lk_session_answer_pair (session, apart->a, apart->b, FALSE, &error));
  g_assert_no_error (error);
  const LkPeople *people = lk_session_peek_people (session);
  g_assert_cmpint (people->person_of[same->a], >=, 0);
  g_assert_cmpint (people->person_of[same->a], ==, people->person_of[same->b]);
  g_assert_cmpint (people->person_of[apart->a], >=, 0);
  g_assert_cmpint (people->person_of[apart->a], !=, people->person_of[apart->b]);
  const GPtrArray *pins = lk_review_pins (lk_session_get_review (session));
  gboolean kept_out = FALSE;
  for (guint k = 0; k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; m < pin->excluded->len; m++)
        kept_out |= g_array_index (pin->excluded, guint32, m) == apart->b;
    }
  g_assert_true (kept_out);
  g_assert_true (lk_session_undo (session, &error));
  g_assert_no_error (error);
  g_assert_cmpint (lk_session_peek_people (session)->person_of[apart->a], <, 0);
}

static double
f1_of (LkSession *session)
{
  g_autoptr (GError) error = NULL;
  LkScore score;
  g_assert_true (lk_evaluate (lk_session_peek_people (session),
                              (const char *const *) lk_session_get_library (session)->label, &score,
                              &error));
  g_assert_no_error (error);
  return score.bcubed.f1;
}

/* An oracle answers twenty questions from the labels; the calibration fitted
 * from those decisions alone clusters within 0.02 F1 of the labels' own
 * fit — so twenty answers are enough to fit from. */
static void
test_twenty_answers_fit_as_well_as_the_labels (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) labelled = loaded_sample ("labels", LK_SAMPLE_FAMILY_LOOKALIKES, 1200, 4);
  lk_session_set_calibration_change (labelled, LK_CALIBRATION_CHANGE_FIT,
                                     LK_CALIBRATION_FROM_LABELS);
  g_assert_true (lk_session_load (labelled, NULL, &error));
  g_assert_no_error (error);
  double labels_f1 = f1_of (labelled);

  g_autoptr (LkSession) session = loaded_sample ("oracle", LK_SAMPLE_FAMILY_LOOKALIKES, 1200, 4);
  const LkLibrary *l = lk_session_get_library (session);
  g_autoptr (GArray) qs = lk_pair_questions (
      l, lk_session_peek_people (session), lk_review_pins (lk_session_get_review (session)),
      lk_session_get_calibration (session, NULL), LK_PAIR_QUESTIONS, 1);
  guint answered = 0;
  for (guint k = 0; k < qs->len; k++)
    {
      const LkPairQuestion *q = &g_array_index (qs, LkPairQuestion, k);
      gboolean same = g_strcmp0 (l->label[q->a], l->label[q->b]) == 0;
      g_autoptr (LkReviewRequest) r
          = lk_pair_answer_request (lk_session_peek_people (session), q->a, q->b, same, NULL);
      /* An earlier answer may have settled this one (a merge of its people). */
      if (r && lk_session_apply (session, r, NULL, NULL))
        answered++;
    }
  g_assert_cmpuint (answered, >=, LK_PAIR_QUESTIONS / 2);
  g_assert_true (lk_session_can_fit_decisions (session, NULL, NULL));
  lk_session_set_calibration_change (session, LK_CALIBRATION_CHANGE_FIT,
                                     LK_CALIBRATION_FROM_DECISIONS);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  const char *source = NULL;
  lk_session_get_calibration (session, &source);
  g_assert_cmpstr (source, ==, "decisions");
  double f1 = f1_of (session);
  g_test_message ("labels' fit F1 %.3f, twenty answers' %.3f", labels_f1, f1);
  g_assert_cmpfloat (f1, >=, labels_f1 - 0.02);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-pair-questions-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/pair-questions/choice-is-least-sure-first-within-the-rules",
                   test_choice_is_least_sure_first_within_the_rules);
  g_test_add_func ("/pair-questions/choice-without-calibration-spreads-over-cosines",
                   test_choice_without_calibration_spreads_over_cosines);
  g_test_add_func ("/pair-questions/answers-are-decisions-that-undo",
                   test_answers_are_decisions_that_undo);
  g_test_add_func ("/pair-questions/asked-when-every-face-is-alone",
                   test_asked_when_every_face_is_alone);
  g_test_add_func ("/pair-questions/twenty-answers-fit-as-well-as-the-labels",
                   test_twenty_answers_fit_as_well_as_the_labels);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (tmp);
  return status;
}
