/* test-session-calibration — the session changes the calibration as it does
 * a decision (issue 14): a library without any calibration gets one estimated
 * on its own, a fit or an undo runs in a load and is saved in review.json,
 * a change that cannot be made changes nothing, and undo takes decisions and
 * calibration changes back in the order they were made.
 *
 * The library is dlib-like (every cosine >= 0.7), so the format's default
 * calibration makes every pair a candidate and the guard fails: the tests
 * tell the calibration in force by the guard as well as by its source. */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "library/lk-sample.h"
#include "lk-session.h"
#include "lk-test-util.h"

static char *tmp;
static char *library_dir; /* with the default calibration in library.json */
static char *bare_dir;    /* without any */

static LkSession *
load (const char *folder, gboolean estimate_missing)
{
  g_autofree char *review = g_build_filename (folder, "review.json", NULL);
  g_remove (review);
  LkSession *session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;
  lk_session_set_estimate_missing (session, estimate_missing);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

static gboolean
guard_fails (LkSession *session)
{
  const LkCalibrationGuard *guard = lk_session_get_guard (session);
  g_assert_cmpuint (guard->sampled, >, 0);
  return lk_calibration_guard_fails (guard, NULL);
}

static const char *
source_in_force (LkSession *session)
{
  const char *source = NULL;
  g_assert_nonnull (lk_session_get_calibration (session, &source));
  return source;
}

/* The source of the calibration review.json holds as chosen, read back from
 * the file ("library" when none is). */
static char *
saved_source (const char *folder)
{
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_autoptr (LkCalibrationHistory) history
      = lk_calibration_history_new (json_object_get_member (root, "calibration"), &error);
  g_assert_no_error (error);
  const char *source = NULL;
  return g_strdup (lk_calibration_history_current (history, &source) ? source : "library");
}

static void
change (LkSession *session, LkCalibrationChange what, LkCalibrationFrom from)
{
  g_autoptr (GError) error = NULL;
  lk_session_set_calibration_change (session, what, from);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
}

static void
test_estimate_missing (void)
{
  /* Without the window's setting, the default is used and the guard says so. */
  g_autoptr (LkSession) plain = load (bare_dir, FALSE);
  g_assert_cmpstr (source_in_force (plain), ==, "library");
  g_assert_true (guard_fails (plain));
  g_assert_false (lk_session_estimated_on_its_own (plain));

  g_autoptr (LkSession) session = load (bare_dir, TRUE);
  g_assert_cmpstr (source_in_force (session), ==, "estimate");
  g_assert_false (guard_fails (session));
  g_assert_true (lk_session_estimated_on_its_own (session));
  g_autofree char *saved = saved_source (bare_dir);
  g_assert_cmpstr (saved, ==, "estimate");
  /* Undone like a choice of the user's. */
  const char *source = NULL;
  g_assert_cmpint (lk_session_next_step (session, FALSE, &source), ==, LK_SESSION_STEP_CALIBRATION);
  g_assert_cmpstr (source, ==, "estimate");

  /* A library whose manifest has a calibration keeps it. */
  g_autoptr (LkSession) given = load (library_dir, TRUE);
  g_assert_cmpstr (source_in_force (given), ==, "library");
  g_assert_false (lk_session_estimated_on_its_own (given));
  g_assert_cmpint (lk_session_next_step (given, FALSE, NULL), ==, LK_SESSION_STEP_NONE);
}

/* An estimate on its own that fails (issue 29: 400 strangers, nobody
 * anybody's pair to find) is not saved: the format's default stays in
 * force, the session says why, and the guard says what that default does
 * here (too few: no face has a candidate). */
static void
test_estimate_missing_fails_openly (void)
{
  g_autofree char *folder = g_build_filename (tmp, "strangers", NULL);
  lk_test_write_strangers (folder, 400, 256, 0);
  g_autoptr (LkSession) session = load (folder, TRUE);
  g_assert_cmpstr (source_in_force (session), ==, "library");
  g_assert_false (lk_session_estimated_on_its_own (session));
  const char *why = lk_session_get_estimate_failure (session);
  g_assert_nonnull (why);
  g_assert_true (g_str_has_prefix (why, "The estimate failed: "));
  /* Nothing saved: no review.json, or one that chose no calibration. */
  g_autofree char *review = g_build_filename (folder, "review.json", NULL);
  if (g_file_test (review, G_FILE_TEST_EXISTS))
    {
      g_autofree char *saved = saved_source (folder);
      g_assert_cmpstr (saved, ==, "library");
    }
  g_assert_cmpint (lk_calibration_guard_verdict (lk_session_get_guard (session)), ==,
                   LK_CALIBRATION_GUARD_TOO_FEW);
  /* A library whose estimate works says nothing of a failure. */
  g_autoptr (LkSession) fine = load (bare_dir, TRUE);
  g_assert_null (lk_session_get_estimate_failure (fine));
}

static void
test_fit_undo_redo_saved (void)
{
  g_autoptr (LkSession) session = load (library_dir, FALSE);
  g_assert_true (guard_fails (session));
  guint n_before = lk_session_get_n_people (session);

  change (session, LK_CALIBRATION_CHANGE_FIT, LK_CALIBRATION_FROM_ESTIMATE);
  g_assert_cmpstr (source_in_force (session), ==, "estimate");
  g_assert_false (guard_fails (session));
  /* One person of everyone no more. */
  g_assert_cmpuint (lk_session_get_n_people (session), >, n_before);
  g_autofree char *saved = saved_source (library_dir);
  g_assert_cmpstr (saved, ==, "estimate");

  change (session, LK_CALIBRATION_CHANGE_UNDO, 0);
  g_assert_cmpstr (source_in_force (session), ==, "library");
  g_assert_true (guard_fails (session));
  g_autofree char *undone = saved_source (library_dir);
  g_assert_cmpstr (undone, ==, "library");
  const char *source = NULL;
  g_assert_cmpint (lk_session_next_step (session, TRUE, &source), ==, LK_SESSION_STEP_CALIBRATION);
  g_assert_cmpstr (source, ==, "estimate");

  change (session, LK_CALIBRATION_CHANGE_REDO, 0);
  g_assert_cmpstr (source_in_force (session), ==, "estimate");
  g_assert_false (guard_fails (session));
}

static void
test_failed_change_changes_nothing (void)
{
  g_autoptr (LkSession) session = load (library_dir, FALSE);
  guint n_people = lk_session_get_n_people (session);
  double pairs = -1;
  gsize taken_out = 99;

  g_assert_false (lk_session_can_fit_decisions (session, &pairs, &taken_out));
  g_assert_cmpfloat (pairs, ==, 0);
  g_assert_cmpuint (taken_out, ==, 0);
  g_autoptr (GError) error = NULL;
  lk_session_set_calibration_change (session, LK_CALIBRATION_CHANGE_FIT,
                                     LK_CALIBRATION_FROM_DECISIONS);
  g_assert_false (lk_session_load (session, NULL, &error));
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW);
  g_clear_error (&error);
  lk_session_set_calibration_change (session, LK_CALIBRATION_CHANGE_UNDO, 0);
  g_assert_false (lk_session_load (session, NULL, &error));
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_CHANGE);
  g_clear_error (&error);
  g_assert_cmpstr (source_in_force (session), ==, "library");
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_people);
  g_autofree char *review = g_build_filename (library_dir, "review.json", NULL);
  g_assert_false (g_file_test (review, G_FILE_TEST_EXISTS));
  /* The change was the failed load's: the next load makes none. */
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (source_in_force (session), ==, "library");
}

static void
rename_largest (LkSession *session, const char *name)
{
  g_autoptr (GError) error = NULL;
  const LkPeople *people = lk_session_peek_people (session);
  g_assert_cmpuint (people->n_people, >, 0);
  g_autofree char *id = g_strdup (people->people[0].id);
  g_assert_true (lk_session_rename (session, id, name, &error));
  g_assert_no_error (error);
}

static void
undo_step (LkSession *session, gboolean redo, LkSessionStep expected)
{
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (lk_session_next_step (session, redo, NULL), ==, expected);
  if (expected == LK_SESSION_STEP_CALIBRATION)
    change (session, redo ? LK_CALIBRATION_CHANGE_REDO : LK_CALIBRATION_CHANGE_UNDO, 0);
  else
    {
      g_assert_true (redo ? lk_session_redo (session, &error) : lk_session_undo (session, &error));
      g_assert_no_error (error);
    }
}

/* Decision, calibration change, decision: undone newest first, redone oldest
 * first. */
static void
test_undo_order (void)
{
  g_autoptr (LkSession) session = load (library_dir, FALSE);

  rename_largest (session, "Ada");
  change (session, LK_CALIBRATION_CHANGE_FIT, LK_CALIBRATION_FROM_ESTIMATE);
  rename_largest (session, "Grace");

  undo_step (session, FALSE, LK_SESSION_STEP_DECISION);
  undo_step (session, FALSE, LK_SESSION_STEP_CALIBRATION);
  g_assert_cmpstr (source_in_force (session), ==, "library");
  undo_step (session, FALSE, LK_SESSION_STEP_DECISION);
  g_assert_cmpint (lk_session_next_step (session, FALSE, NULL), ==, LK_SESSION_STEP_NONE);

  undo_step (session, TRUE, LK_SESSION_STEP_DECISION);
  undo_step (session, TRUE, LK_SESSION_STEP_CALIBRATION);
  g_assert_cmpstr (source_in_force (session), ==, "estimate");
  undo_step (session, TRUE, LK_SESSION_STEP_DECISION);
  g_assert_cmpint (lk_session_next_step (session, TRUE, NULL), ==, LK_SESSION_STEP_NONE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-session-calibration-XXXXXX", &error);
  g_assert_no_error (error);
  library_dir = g_build_filename (tmp, "library", NULL);
  bare_dir = g_build_filename (tmp, "bare", NULL);
  LkSampleOptions options = { 600, 64, 5, FALSE, LK_SAMPLE_MODEL_DLIB };
  g_assert_true (lk_sample_write (library_dir, &options, &error));
  g_assert_no_error (error);
  g_assert_true (lk_sample_write (bare_dir, &options, &error));
  g_assert_no_error (error);

  /* The bare library: library.json without "calibration". */
  g_autofree char *manifest = g_build_filename (bare_dir, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  JsonNode *root = json_parser_get_root (parser);
  json_object_remove_member (json_node_get_object (root), "calibration");
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, root);
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_assert_no_error (error);

  g_test_add_func ("/session-calibration/estimate-missing", test_estimate_missing);
  g_test_add_func ("/session-calibration/estimate-missing-fails-openly",
                   test_estimate_missing_fails_openly);
  g_test_add_func ("/session-calibration/fit-undo-redo-saved", test_fit_undo_redo_saved);
  g_test_add_func ("/session-calibration/failed-change-changes-nothing",
                   test_failed_change_changes_nothing);
  g_test_add_func ("/session-calibration/undo-order", test_undo_order);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (library_dir);
  g_free (bare_dir);
  g_free (tmp);
  return status;
}
