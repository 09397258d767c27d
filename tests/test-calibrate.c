/* test-calibrate — the pair model's fit, estimate, guard, priors and their
 * place in review.json, on synthetic pairs and on sample libraries */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "people/lk-calibrate.h"
#include "people/lk-cluster.h"
#include "people/lk-evaluate.h"
#include "people/lk-review.h"
#include "library/lk-sample.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

static char *tmp;
static char *sample; /* a 1,500-face sample library, seed 4 */

/* Pairs drawn from a known model: cos uniform in [0, 1], crop 32 … 512 px. */
static GArray *
draw_model (const LkCalibration *truth, gsize n, double negative_keep, gboolean weigh)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  for (gsize k = 0; k < n; k++)
    {
      double cos = g_rand_double (rand);
      double crop = 32 * pow (2, 4 * g_rand_double (rand));
      double p = lk_scan_probability (truth, cos, crop);
      double y = g_rand_double (rand) < p ? 1 : 0;
      double weight = 1;
      if (y == 0 && negative_keep < 1)
        {
          if (g_rand_double (rand) >= negative_keep)
            continue;
          weight = weigh ? 1 / negative_keep : 1;
        }
      LkCalibrationSample s = { cos, crop, y, weight, k % 5 == 0 };
      g_array_append_val (out, s);
    }
  return out;
}

static void
test_fit_recovers_known_model (void)
{
  LkCalibration truth = { 20, -12, 0.5, 0, 0 };
  g_autoptr (GArray) s = draw_model (&truth, 200000, 1, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fit
      = lk_calibration_fit ((const LkCalibrationSample *) s->data, s->len, 0.9, 128, &error);
  g_assert_no_error (error);
  g_assert_true (fit->fitted_size);
  g_assert_cmpfloat_with_epsilon (fit->calibration.a, 20, 0.6);
  g_assert_cmpfloat_with_epsilon (fit->calibration.b, -12, 0.5);
  g_assert_cmpfloat_with_epsilon (fit->calibration.w_size, 0.5, 0.05);
  g_assert_cmpuint (fit->held_out_positive + fit->held_out_negative, ==, 40000);
  g_assert_cmpfloat (fit->log_loss, >, 0);
  g_assert_cmpfloat (fit->log_loss, <, 0.5);
  g_assert_cmpfloat (fit->brier, <, 0.2);
  /* p = 0.9 at 128 px: 20 cos − 12 + 3.5 = ln 9. */
  g_assert_cmpfloat_with_epsilon (fit->cos_at_bar, (log (9) + 12 - 3.5) / 20, 0.01);
}

/* Negatives kept one in ten weigh ten each: the same model. Unweighted, b
 * moves by about ln 10. */
static void
test_fit_weights_undo_sampling (void)
{
  LkCalibration truth = { 20, -12, 0, 0, 0 };
  g_autoptr (GArray) weighted = draw_model (&truth, 400000, 0.1, TRUE);
  g_autoptr (GArray) unweighted = draw_model (&truth, 400000, 0.1, FALSE);
  g_autoptr (LkCalibrationFit) w = lk_calibration_fit ((const LkCalibrationSample *) weighted->data,
                                                       weighted->len, 0.9, 128, NULL);
  g_autoptr (LkCalibrationFit) u = lk_calibration_fit (
      (const LkCalibrationSample *) unweighted->data, unweighted->len, 0.9, 128, NULL);
  g_assert_nonnull (w);
  g_assert_nonnull (u);
  g_assert_cmpfloat_with_epsilon (w->calibration.a, 20, 1);
  g_assert_cmpfloat_with_epsilon (w->calibration.b, -12, 0.8);
  g_assert_cmpfloat (u->calibration.b - w->calibration.b, >, 1.8);
}

/* Pairs of one person all above 0.7, of two people all below 0.5: the
 * unpenalised optimum is a = ∞; the ridge keeps it finite, between them. */
static void
test_fit_separable_stays_finite (void)
{
  g_autoptr (GArray) s = g_array_new (FALSE, FALSE, sizeof (LkCalibrationSample));
  for (int k = 0; k < 2000; k++)
    {
      LkCalibrationSample pos = { 0.7 + 0.3 * (k % 97) / 97.0, 100, 1, 1, k % 5 == 0 };
      LkCalibrationSample neg = { 0.5 * (k % 89) / 89.0, 100, 0, 50, k % 5 == 1 };
      g_array_append_val (s, pos);
      g_array_append_val (s, neg);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fit
      = lk_calibration_fit ((const LkCalibrationSample *) s->data, s->len, 0.9, 100, &error);
  g_assert_no_error (error);
  g_assert_true (isfinite (fit->calibration.a) && isfinite (fit->calibration.b));
  g_assert_cmpfloat (fit->calibration.a, >, 10);
  g_assert_cmpfloat (fit->calibration.a, <, 1000);
  g_assert_cmpfloat (fit->cos_at_bar, >, 0.5);
  g_assert_cmpfloat (fit->cos_at_bar, <, 0.7);
  g_assert_false (fit->fitted_size); /* one crop size */
  g_assert_cmpfloat (fit->calibration.w_size, ==, 0);
}

/* Pairs from a model whose w_size is negative (small crops convincing at
 * lower cosines): the fit keeps w_size at its bound, 0, and says so; the
 * unconstrained fit would have recovered −0.5. */
static void
test_fit_keeps_size_weight_non_negative (void)
{
  LkCalibration truth = { 20, -12, -0.5, 0, 0 };
  g_autoptr (GArray) s = draw_model (&truth, 200000, 1, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fit
      = lk_calibration_fit ((const LkCalibrationSample *) s->data, s->len, 0.9, 128, &error);
  g_assert_no_error (error);
  g_assert_true (fit->fitted_size);
  g_assert_true (fit->size_at_bound);
  g_assert_cmpfloat (fit->calibration.w_size, ==, 0);
  g_assert_cmpfloat (fit->calibration.a, >, 10);
  /* With a positive truth nothing is at the bound (fit-recovers-known-model). */
  LkCalibration positive = { 20, -12, 0.5, 0, 0 };
  g_autoptr (GArray) t = draw_model (&positive, 200000, 1, TRUE);
  g_autoptr (LkCalibrationFit) free_fit
      = lk_calibration_fit ((const LkCalibrationSample *) t->data, t->len, 0.9, 128, &error);
  g_assert_no_error (error);
  g_assert_false (free_fit->size_at_bound);
  g_assert_cmpfloat (free_fit->calibration.w_size, >, 0.4);
}

static void
test_fit_refuses_one_class (void)
{
  LkCalibrationSample s[3]
      = { { 0.9, 100, 1, 1, FALSE }, { 0.8, 100, 1, 1, FALSE }, { 0.1, 100, 1, 1, TRUE } };
  g_autoptr (GError) error = NULL;
  g_assert_null (lk_calibration_fit (s, 3, 0.9, 100, &error));
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW);
  g_clear_error (&error);
  s[2].weight = NAN;
  g_assert_null (lk_calibration_fit (s, 3, 0.9, 100, &error));
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT);
  g_assert_nonnull (strstr (error->message, "pair 2"));
}

/* Labels whose only pairs the scan could compare are of one label (here two
 * faces of A; B's face shares A's photo or is a probe beside A's probe):
 * there are no pairs of two people to fit against. The draw of negatives
 * used to loop for ever, rejecting the one pair it could draw; now it says
 * so. In a subprocess, so a hang fails the test instead of stalling it. */
static void
test_labels_without_negatives_refused (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *folder = g_build_filename (tmp, "no-negatives", NULL);
      g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
      const char *manifest
          = "{ \"format\": \"likeness-library\", \"version\": 1,\n"
            "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 4, \"count\": 3,"
            " \"normalized\": false },\n"
            "  \"faces\": [\n"
            "    { \"photo\": 1, \"crop_px\": 100, \"quality\": 1.0, \"label\": \"A\" },\n"
            "    { \"photo\": 1, \"crop_px\": 100, \"quality\": 0.1, \"label\": \"B\" },\n"
            "    { \"photo\": 2, \"crop_px\": 100, \"quality\": 0.1, \"label\": \"A\" } ] }\n";
      const float rows[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0.9f, 0.1f, 0, 0 };
      g_autofree char *json = g_build_filename (folder, "library.json", NULL);
      g_autofree char *f32 = g_build_filename (folder, "embeddings.f32", NULL);
      g_assert_true (g_file_set_contents (json, manifest, -1, NULL));
      g_assert_true (g_file_set_contents (f32, (const char *) rows, sizeof rows, NULL));
      g_autoptr (GError) error = NULL;
      g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
      g_assert_no_error (error);
      g_autoptr (LkCalibrationFit) fit
          = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, &error);
      g_assert_null (fit);
      g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW);
      g_assert_nonnull (strstr (error->message, folder));
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* The library a test reads: written into tmp for it and removed after it,
 * or the shared sample (written once, in main). */
typedef enum
{
  SHARED_SAMPLE,
  SAMPLE,    /* lk_sample_write with `options` */
  STRANGERS, /* lk_test_write_strangers: `n` rows of 128 floats, `dups` duplicated */
  PEOPLE,    /* lk_test_write_people: 5 people of 11 faces, 44 strangers, 128 floats */
} Kind;

typedef struct
{
  Kind kind;
  const char *name; /* its folder in tmp */
  LkSampleOptions options;
  gsize n, dups;
} Written;

typedef struct
{
  char *folder;
  LkLibrary *library;
} Loaded;

static void
loaded_setup (Loaded *fx, gconstpointer data)
{
  const Written *w = data;
  fx->folder = w->kind == SHARED_SAMPLE ? g_strdup (sample) : g_build_filename (tmp, w->name, NULL);
  g_autoptr (GError) error = NULL;
  if (w->kind == SAMPLE)
    g_assert_true (lk_sample_write (fx->folder, &w->options, &error));
  else if (w->kind == STRANGERS)
    lk_test_write_strangers (fx->folder, w->n, 128, w->dups);
  else if (w->kind == PEOPLE)
    lk_test_write_people (fx->folder, 5, 11, 44, 128);
  g_assert_no_error (error);
  fx->library = lk_library_load (fx->folder, &error);
  g_assert_no_error (error);
}

static void
loaded_teardown (Loaded *fx, gconstpointer data)
{
  const Written *w = data;
  g_clear_pointer (&fx->library, lk_library_free);
  if (w->kind != SHARED_SAMPLE)
    lk_test_remove_tree (fx->folder);
  g_free (fx->folder);
}

static const Written the_sample = { SHARED_SAMPLE };
static const Written dlib_800
    = { SAMPLE, "dlib", { 800, LK_SAMPLE_DEFAULT_DIM, 6, FALSE, LK_SAMPLE_MODEL_DLIB } };
static const Written dlib_600_of_64
    = { SAMPLE, "dlib-64", { 600, 64, 5, FALSE, LK_SAMPLE_MODEL_DLIB } };
static const Written lookalike_family
    = { SAMPLE,
        "lookalikes",
        { 1500, LK_SAMPLE_DEFAULT_DIM, 4, FALSE, LK_SAMPLE_MODEL_ARCFACE,
          LK_SAMPLE_FAMILY_LOOKALIKES } };
static const Written bridge_family = { SAMPLE,
                                       "bridges",
                                       { 2000, LK_SAMPLE_DEFAULT_DIM, 3, FALSE,
                                         LK_SAMPLE_MODEL_ARCFACE, LK_SAMPLE_FAMILY_BRIDGES } };
static const Written group_family = { SAMPLE,
                                      "groups",
                                      { 1000, LK_SAMPLE_DEFAULT_DIM, 4, FALSE,
                                        LK_SAMPLE_MODEL_ARCFACE, LK_SAMPLE_FAMILY_GROUPS } };
static const Written strangers_only = { STRANGERS, "strangers", .n = 400 };
static const Written near_duplicate_strangers
    = { STRANGERS, "near-duplicates", .n = 400, .dups = 20 };
static const Written few_big_people = { PEOPLE, "few-big-people" };

/* A library likeness-cli make-sample wrote (no thumbnails), for the CLI's
 * tests: `faces` and `seed` as its options say them. */
typedef struct
{
  const char *name;
  const char *faces, *seed;
} MadeBy;

typedef struct
{
  char *folder;
} Made;

static void
made_setup (Made *fx, gconstpointer data)
{
  const MadeBy *by = data;
  fx->folder = g_build_filename (tmp, by->name, NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", fx->folder, "--faces", by->faces,
                                    "--seed", by->seed, "--no-thumbnails", NULL),
                   ==, 0);
}

static void
made_teardown (Made *fx, gconstpointer data)
{
  lk_test_remove_tree (fx->folder);
  g_free (fx->folder);
}

static double
f1_with (const LkLibrary *library, const LkCalibration *calibration)
{
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r
      = lk_scan (&faces, calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input;
  lk_cluster_input_init (&input, library, r->pairs);
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_evaluate_same_photo (people, library->photo), ==, 0);
  LkScore score;
  g_assert_true (lk_evaluate (people, (const char *const *) library->label, &score, &error));
  return score.bcubed.f1;
}

/* The BCubed precision of the people a calibration makes of a library. */
static double
precision_with (const LkLibrary *library, const LkCalibration *calibration)
{
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r
      = lk_scan (&faces, calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input;
  lk_cluster_input_init (&input, library, r->pairs);
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, NULL, &error);
  g_assert_no_error (error);
  LkScore score;
  g_assert_true (lk_evaluate (people, (const char *const *) library->label, &score, &error));
  return score.bcubed.precision;
}

/* On a sample library: the labelled fit is a sane model, and the estimate
 * without labels clusters within 0.02 BCubed F1 of it. */
static void
test_labels_and_estimate_on_sample (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (fitted->calibration.a, >, 10);
  g_assert_cmpfloat (fitted->cos_at_bar, >, 0.3);
  g_assert_cmpfloat (fitted->cos_at_bar, <, 0.6);
  g_assert_cmpint (fitted->calibration.positive_pairs, >, 1000);
  g_assert_cmpint (fitted->calibration.negative_pairs, >, 1000);
  g_assert_cmpuint (fitted->held_out_positive, >, 100);
  /* 1,500 faces have ~1.1 million pairs; the negatives stand for them. */
  g_assert_cmpfloat (fitted->negative_weight, >, 0.9e6);
  g_assert_cmpfloat (fitted->negative_weight, <, 1.2e6);

  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);
  g_test_message ("BCubed F1: fitted %.4f (cos at bar %.3f), estimated %.4f (%.3f)", f_fit,
                  fitted->cos_at_bar, f_est, estimated->cos_at_bar);
  g_assert_cmpfloat (f_fit, >, 0.95);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
}

/* A dlib-like library (every cosine ≥ 0.7): ArcFace's numbers make every
 * pair a candidate and the guard says so; the estimate, without labels,
 * fits it and clusters within 0.02 BCubed F1 of the labelled fit. */
static void
test_dlib_like_guard_and_estimate (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrationGuard guard;
  lk_calibration_guard (library, &library->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_assert_cmpfloat (guard.fraction, >, 0.99);
  g_assert_true (lk_calibration_guard_fails (&guard, NULL));

  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  lk_calibration_guard (library, &estimated->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_assert_false (lk_calibration_guard_fails (&guard, NULL));
  g_assert_cmpfloat (estimated->cos_at_bar, >, 0.8);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);
  g_test_message ("dlib-like BCubed F1: fitted %.4f (cos at bar %.3f), estimated %.4f (%.3f)",
                  f_fit, fitted->cos_at_bar, f_est, estimated->cos_at_bar);
  g_assert_cmpfloat (f_fit, >, 0.95);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
}

/* BCubed F1 of connected components of the pairs a calibration makes. */
static double
components_f1 (const LkLibrary *library, const LkCalibration *calibration)
{
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r
      = lk_scan (&faces, calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input;
  lk_cluster_input_init (&input, library, r->pairs);
  LkClusterOptions single = { LK_LINKAGE_SINGLE, 0, 0, 0 };
  g_autoptr (LkPeople) components = lk_cluster (&input, NULL, &single, &error);
  g_assert_no_error (error);
  LkScore score;
  g_assert_true (lk_evaluate (components, (const char *const *) library->label, &score, &error));
  return score.bcubed.f1;
}

/* Look-alike relatives (make-sample --family lookalikes): the tail estimate
 * alone read them as one person (BCubed F1 0.924 against the labelled fit's
 * 1.000 on this library); refitted on its own people the estimate lands
 * within 0.02 of the labelled fit and above Immich's rule. */
static void
test_estimate_on_lookalikes (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);
  g_test_message ("look-alikes BCubed F1: fitted %.4f (cos at bar %.3f), estimated %.4f (%.3f)",
                  f_fit, fitted->cos_at_bar, f_est, estimated->cos_at_bar);
  g_assert_cmpfloat (f_fit, >, 0.99);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
  g_assert_cmpfloat (estimated->calibration.w_size, >=, 0);
  /* Issue 29: at least 0.99, and never below connected components of the
   * same calibration's pairs. */
  double f_cc = components_f1 (library, &estimated->calibration);
  g_test_message ("look-alikes: connected components of the estimate's pairs %.4f", f_cc);
  g_assert_cmpfloat (f_est, >=, 0.99);
  g_assert_cmpfloat (f_est, >=, f_cc);
}

/* Blurred faces between two people (make-sample --family bridges): the
 * pair-by-pair fit gave small crops a lower bar (w_size −1.26) and lost to
 * the default calibration (0.939 against 0.956 on this library). Now w_size
 * is never negative, the labels choose the bar, and the fit and the
 * estimate both beat the default and connected components of its pairs. */
static void
test_fit_on_bridges (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (fitted->calibration.w_size, >=, 0);
  double f_default = f1_with (library, &library->calibration);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);

  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (LkScanResult) r
      = lk_scan (&faces, &library->calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input;
  lk_cluster_input_init (&input, library, r->pairs);
  LkClusterOptions single = { LK_LINKAGE_SINGLE, 0, 0, 0 };
  g_autoptr (LkPeople) components = lk_cluster (&input, NULL, &single, &error);
  g_assert_no_error (error);
  LkScore cc;
  g_assert_true (lk_evaluate (components, (const char *const *) library->label, &cc, &error));
  g_test_message ("bridges BCubed F1: default %.4f, fitted %.4f (w_size %.2f), estimated %.4f, "
                  "connected components %.4f",
                  f_default, f_fit, fitted->calibration.w_size, f_est, cc.bcubed.f1);
  g_assert_cmpfloat (f_fit, >, f_default);
  g_assert_cmpfloat (f_fit, >, cc.bcubed.f1);
  g_assert_cmpfloat (f_est, >, cc.bcubed.f1);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
}

/* Group photos (make-sample --family groups), 1,000 faces, seed 4: two
 * related identities (24 and 13 faces, cosine 0.30 across, 0.62 within)
 * that only the clustering's weak end joined were left out of every refit
 * as "unsure", so the estimate kept them one person: BCubed F1 0.982,
 * below connected components of the default's pairs (0.988) and 0.016
 * short of the labelled fit (0.998). Two sure people of several faces
 * closer to random faces than to themselves are now two people to the
 * refit. */
static void
test_estimate_on_groups (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);
  double f_cc = components_f1 (library, &library->calibration);
  g_test_message ("groups BCubed F1: fitted %.4f (cos at bar %.3f), estimated %.4f (%.3f), "
                  "connected components %.4f",
                  f_fit, fitted->cos_at_bar, f_est, estimated->cos_at_bar, f_cc);
  g_assert_cmpfloat (f_est, >=, f_cc);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
}

/* The library of tests/test-ui-calibration.c: 600 dlib-like faces of 64
 * floats, seed 5, estimated with the window's seed. Few faces and short
 * rows make loosely joined people: an estimate that took every two sure
 * people inside one person as two people split them further at each refit
 * (BCubed F1 0.915 against the labelled fit's 0.982); the estimate stays
 * within 0.02 of the fit and above connected components of the fit's own
 * pairs. */
static void
test_estimate_on_small_dlib_like (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  double f_fit = f1_with (library, &fitted->calibration);
  double f_est = f1_with (library, &estimated->calibration);
  double f_cc = components_f1 (library, &fitted->calibration);
  g_test_message ("64-d dlib-like BCubed F1: fitted %.4f (cos at bar %.3f), estimated %.4f "
                  "(%.3f), connected components of the fit's pairs %.4f",
                  f_fit, fitted->cos_at_bar, f_est, estimated->cos_at_bar, f_cc);
  g_assert_cmpfloat (f_fit, >, 0.95);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.02);
  g_assert_cmpfloat (f_est, >, f_cc);
}

static void
family_counts (LkSampleFamily family, gsize *blurred, gsize *in_groups)
{
  g_autofree char *folder = g_strdup_printf ("%s/family-%d", tmp, family);
  LkSampleOptions options = { 1000, 32, 2, FALSE, LK_SAMPLE_MODEL_ARCFACE, family };
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_autoptr (GHashTable) per_photo = g_hash_table_new (g_int64_hash, g_int64_equal);
  *blurred = *in_groups = 0;
  for (gsize f = 0; f < library->count; f++)
    {
      *blurred += !library->gallery[f];
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (per_photo, &library->photo[f]));
      g_hash_table_insert (per_photo, &library->photo[f], GUINT_TO_POINTER (n + 1));
    }
  for (gsize f = 0; f < library->count; f++)
    *in_groups += GPOINTER_TO_UINT (g_hash_table_lookup (per_photo, &library->photo[f])) >= 4;
}

/* The families of make-sample --family differ where they say they do. */
static void
test_sample_families (void)
{
  gsize blurred[4], groups[4];
  for (int k = 0; k < 4; k++)
    family_counts ((LkSampleFamily) k, &blurred[k], &groups[k]);
  g_test_message ("blurred %zu %zu %zu %zu; in photos of 4+ faces %zu %zu %zu %zu", blurred[0],
                  blurred[1], blurred[2], blurred[3], groups[0], groups[1], groups[2], groups[3]);
  g_assert_cmpuint (blurred[LK_SAMPLE_FAMILY_BRIDGES], >, 2 * blurred[0]);
  g_assert_cmpuint (groups[LK_SAMPLE_FAMILY_GROUPS], >, 2 * groups[0]);
}

/* Decisions as pins: the biggest identities kept together, with a few faces
 * of others taken out of them. */
static void
test_decisions (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_autoptr (LkCalibrationFit) none
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, pins, NULL, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_TOO_FEW);
  g_assert_nonnull (strstr (error->message, "0 pairs"));
  g_clear_error (&error);

  const char *labels[] = { NULL, NULL, NULL, NULL, NULL };
  for (gsize f = 0; f < library->count; f++)
    {
      for (int k = 0; k < 5; k++)
        {
          if (labels[k] == NULL)
            labels[k] = library->label[f];
          if (strcmp (labels[k], library->label[f]) == 0)
            {
              if (pins->len <= (guint) k)
                g_ptr_array_add (pins, lk_pin_new ("x"));
              LkPin *pin = g_ptr_array_index (pins, k);
              guint32 face = (guint32) f;
              g_array_append_val (pin->faces, face);
              break;
            }
        }
    }
  LkPin *pin = g_ptr_array_index (pins, 0);
  for (guint32 f = 0; f < library->count && pin->excluded->len < 20; f++)
    if (strcmp (library->label[f], labels[0]) != 0)
      g_array_append_val (pin->excluded, f);
  g_autoptr (LkCalibrationFit) fit
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, pins, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (fit->calibration.a, >, 5);
  g_assert_cmpfloat (fit->cos_at_bar, >, 0.2);
  g_assert_cmpfloat (fit->cos_at_bar, <, 0.7);
}

/* Pins of the first `n_people` labels, each holding every `step`-th face of
 * its label (step 2: half the person gathered, the other half unassigned),
 * and the first pin keeping 20 faces of other labels out. */
static GPtrArray *
pins_of_labels (const LkLibrary *library, guint n_people, guint step)
{
  GPtrArray *pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_autofree const char **labels = g_new0 (const char *, n_people);
  g_autofree guint *seen = g_new0 (guint, n_people);
  for (gsize f = 0; f < library->count; f++)
    for (guint k = 0; k < n_people; k++)
      {
        if (labels[k] == NULL)
          {
            labels[k] = library->label[f];
            g_ptr_array_add (pins, lk_pin_new ("x"));
          }
        if (strcmp (labels[k], library->label[f]) != 0)
          continue;
        if (seen[k]++ % step == 0)
          {
            guint32 face = (guint32) f;
            g_array_append_val (((LkPin *) g_ptr_array_index (pins, k))->faces, face);
          }
        break;
      }
  LkPin *pin = g_ptr_array_index (pins, 0);
  for (guint32 f = 0; f < library->count && pin->excluded->len < 20; f++)
    if (strcmp (library->label[f], labels[0]) != 0)
      g_array_append_val (pin->excluded, f);
  return pins;
}

/* A person half gathered is no evidence that its other half is someone
 * else: the fit from decisions counts only the pairs they decide (within a
 * pin; across two pins; a face kept out), so pinning every other face of
 * each person puts the bar where pinning all of them does. Counting every
 * face outside a pin as another person put it at cosine 0.95 against 0.37. */
static void
test_decisions_count_only_known_pairs (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (GPtrArray) whole = pins_of_labels (library, 8, 1);
  g_autoptr (GPtrArray) half = pins_of_labels (library, 8, 2);
  g_autoptr (LkCalibrationFit) all
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, whole, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) some
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, half, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) labels
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("p = 0.9 at cosine %.4f (every face pinned), %.4f (half), %.4f (labels)",
                  all->cos_at_bar, some->cos_at_bar, labels->cos_at_bar);
  g_assert_cmpfloat (fabs (some->cos_at_bar - all->cos_at_bar), <, 0.05);
  g_assert_cmpfloat (fabs (some->cos_at_bar - labels->cos_at_bar), <, 0.1);
}

/* Answers to "same or different person?" may all be "same": decisions that
 * keep faces together and take none out still fit, the faces of the other
 * pins being the people each pin is not. */
static void
test_decisions_without_a_face_taken_out_fit (Loaded *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  LkLibrary *library = fx->library;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (GPtrArray) taken = pins_of_labels (library, 8, 2);
  g_autoptr (GPtrArray) kept = pins_of_labels (library, 8, 2);
  g_array_set_size (((LkPin *) g_ptr_array_index (kept, 0))->excluded, 0);
  gsize taken_out = 99;
  g_assert_true (lk_calibration_decisions_suffice (library, kept, NULL, &taken_out));
  g_assert_cmpuint (taken_out, ==, 0);
  g_autoptr (LkCalibrationFit) with
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, taken, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) without
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, kept, &options, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("p = 0.9 at cosine %.4f (faces taken out), %.4f (none)", with->cos_at_bar,
                  without->cos_at_bar);
  g_assert_cmpfloat (fabs (with->cos_at_bar - without->cos_at_bar), <, 0.05);

  /* One pin alone has nothing to be told apart from. */
  g_ptr_array_set_size (kept, 1);
  g_assert_false (lk_calibration_decisions_suffice (library, kept, NULL, NULL));
}

/* Two faces the scan compares (and a fit counts): of two photos, one a
 * gallery face. */
static gboolean
comparable (const LkLibrary *l, gsize i, gsize j)
{
  return i != j && l->photo[i] != l->photo[j] && (l->gallery[i] || l->gallery[j]);
}

/* Answers settle one pair each: three "same" and seven "different" are
 * ten pairs settled, enough to fit from; two kept together are not. */
static void
test_decisions_count_pairs_settled_either_way (Loaded *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  LkLibrary *library = fx->library;
  /* Two faces of each of three labels (one pin each), from different photos. */
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (gsize f = 0; f < library->count && pins->len < 3; f++)
    {
      gboolean taken = FALSE;
      for (guint k = 0; k < pins->len; k++)
        {
          LkPin *pin = g_ptr_array_index (pins, k);
          guint32 first = g_array_index (pin->faces, guint32, 0);
          taken |= strcmp (library->label[first], library->label[f]) == 0;
        }
      if (taken)
        continue;
      for (gsize g = f + 1; g < library->count; g++)
        if (strcmp (library->label[f], library->label[g]) == 0 && comparable (library, f, g))
          {
            LkPin *pin = lk_pin_new ("x");
            guint32 a = (guint32) f, b = (guint32) g;
            g_array_append_val (pin->faces, a);
            g_array_append_val (pin->faces, b);
            g_ptr_array_add (pins, pin);
            break;
          }
    }
  g_assert_cmpuint (pins->len, ==, 3);
  /* Seven faces taken out of the first pin's person: 14 pairs settled apart. */
  LkPin *first = g_ptr_array_index (pins, 0);
  const char *label = library->label[g_array_index (first->faces, guint32, 0)];
  for (guint32 f = 0; f < library->count && first->excluded->len < 7; f++)
    if (strcmp (library->label[f], label) != 0
        && comparable (library, f, g_array_index (first->faces, guint32, 0))
        && comparable (library, f, g_array_index (first->faces, guint32, 1)))
      g_array_append_val (first->excluded, f);
  double pairs = 0;
  gsize taken_out = 0;
  g_assert_true (lk_calibration_decisions_suffice (library, pins, &pairs, &taken_out));
  g_assert_cmpfloat (pairs, ==, 3);
  g_assert_cmpuint (taken_out, ==, 7);
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fit
      = lk_calibrate (library, LK_CALIBRATION_FROM_DECISIONS, pins, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (fit);

  g_ptr_array_set_size (pins, 2);
  g_assert_false (lk_calibration_decisions_suffice (library, pins, &pairs, NULL));
  g_assert_cmpfloat (pairs, ==, 2);
}

static void
test_guard (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  LkCalibrationGuard guard;
  lk_calibration_guard (library, &library->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_assert_cmpuint (guard.sampled, ==, LK_CALIBRATION_GUARD_SAMPLES);
  g_assert_cmpfloat (guard.fraction, <, LK_CALIBRATION_GUARD_BAR);
  g_autofree char *message = NULL;
  g_assert_false (lk_calibration_guard_fails (&guard, &message));
  g_assert_null (message);

  /* A dlib-like mistake: every pair a candidate. */
  LkCalibration everything = { 30, 10, 0, 0, 0 };
  lk_calibration_guard (library, &everything, 0.9, 1000, 2, &guard);
  g_assert_cmpuint (guard.candidates, ==, guard.sampled);
  g_assert_true (lk_calibration_guard_fails (&guard, &message));
  g_assert_cmpstr (message, ==,
                   "This calibration makes 100 % of pairs candidates: it does not fit this "
                   "library's model");
}

static void
test_priors (void)
{
  const LkCalibration *arcface = lk_calibration_prior_for_model ("buffalo_l");
  g_assert_nonnull (arcface);
  g_assert_cmpfloat (arcface->a, ==, 30);
  const LkCalibration *facenet = lk_calibration_prior_for_model ("FaceNet");
  const LkCalibration *dlib = lk_calibration_prior_for_model ("dlib");
  g_assert_nonnull (facenet);
  g_assert_nonnull (dlib);
  g_assert_null (lk_calibration_prior_for_model ("no-such-model"));
  g_assert_null (lk_calibration_prior_for_model (NULL));
  /* PhotoPrism's ClusterDist 0.64 on unit vectors is cosine 0.795: p = 0.9
   * there. dlib's, fitted on 123 real faces (LIBRARY-FORMAT.md): p = 0.9 at
   * cosine 0.948, in the gap between its strangers (highest 0.942) and its
   * people (5th percentile 0.957); dlib's own Euclidean 0.6, cosine 0.82,
   * made 53 % of that library's random pairs candidates. */
  g_assert_cmpfloat_with_epsilon (lk_calibration_cos_at (facenet, 0.9, 100), 0.795, 0.005);
  g_assert_cmpfloat_with_epsilon (lk_calibration_cos_at (dlib, 0.9, 100), 0.948, 0.002);
  g_assert_cmpfloat_with_epsilon (lk_calibration_cos_at (arcface, 0.9, 100), 0.423, 0.001);
}

/* review.json keeps the choice, with undo and redo, and loses nothing else. */
static void
test_history_in_review (void)
{
  g_autoptr (LkCalibrationHistory) h = lk_calibration_history_new (NULL, NULL);
  g_assert_null (lk_calibration_history_current (h, NULL));
  g_assert_false (lk_calibration_history_undo (h));
  LkCalibration one = { 12, -9, 0.25, 10, 20 }, two = { 50, -40, 0, 1, 2 };
  lk_calibration_history_set (h, &one, "labels");
  lk_calibration_history_set (h, &two, "estimate");

  guint64 photo[4] = { 1, 2, 3, 4 };
  g_autoptr (LkReview) review = lk_review_new (4, "f00d", photo);
  g_autoptr (JsonNode) node = lk_calibration_history_to_json (h);
  lk_review_set_calibration (review, node);
  g_autofree char *path = g_build_filename (tmp, "review-history.json", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_review_save (review, path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);

  g_autoptr (LkReview) again = lk_review_load (path, 4, "f00d", photo, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationHistory) read
      = lk_calibration_history_new (lk_review_get_calibration (again), &error);
  g_assert_no_error (error);
  const char *source = NULL;
  const LkCalibration *c = lk_calibration_history_current (read, &source);
  g_assert_cmpstr (source, ==, "estimate");
  g_assert_cmpfloat (c->a, ==, 50);
  g_assert_true (lk_calibration_history_undo (read));
  c = lk_calibration_history_current (read, &source);
  g_assert_cmpstr (source, ==, "labels");
  g_assert_cmpfloat (c->w_size, ==, 0.25);
  g_assert_cmpint (c->negative_pairs, ==, 20);
  g_assert_true (lk_calibration_history_undo (read));
  g_assert_null (lk_calibration_history_current (read, NULL));
  g_assert_false (lk_calibration_history_undo (read));
  g_assert_true (lk_calibration_history_redo (read));
  g_assert_cmpfloat (lk_calibration_history_current (read, NULL)->a, ==, 12);

  /* Malformed: a named error, and the library's own calibration in force. */
  g_autoptr (JsonNode) bad
      = json_from_string ("{\"current\": {\"a\": -1, \"b\": 0, \"w_size\": 0}}", NULL);
  g_assert_null (lk_calibration_history_new (bad, &error));
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "a = -1"));
  g_clear_error (&error);
  g_autoptr (LkLibrary) library = lk_library_load (sample, NULL);
  LkCalibration in_force = lk_calibration_in_force (library, bad, &source, &error);
  g_assert_nonnull (error);
  g_assert_cmpstr (source, ==, "library");
  g_assert_cmpfloat (in_force.a, ==, library->calibration.a);
}

static gboolean
has_line (const char *text, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int k = 0; lines[k]; k++)
    if (g_str_has_prefix (lines[k], prefix))
      return TRUE;
  return FALSE;
}

static const MadeBy made_cli = { "cli", "400", "9" };
static const MadeBy made_cli_too_few = { "cli-too-few", "400", "9" };
static const MadeBy made_bad_calibration = { "bad-calibration", "200", "4" };

/* The CLI: calibrate saves into review.json (the library untouched), every
 * later scan uses it, the guard warns, --undo goes back. */
static void
test_cli (Made *fx, gconstpointer data)
{
  const char *library = fx->folder;
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *manifest = g_build_filename (library, "library.json", NULL);
  g_autofree char *before = NULL;
  g_assert_true (g_file_get_contents (manifest, &before, NULL, NULL));

  /* A calibration that makes every pair a candidate, as the library's own. */
  g_autofree char *broken = g_strdup (before);
  char *b = strstr (broken, "\"b\":-10.5");
  if (b == NULL)
    b = strstr (broken, "\"b\" : -10.5");
  g_assert_nonnull (b);
  *strchr (b, '-') = ' '; /* b = +10.5: every pair a candidate */
  g_assert_true (g_file_set_contents (manifest, broken, -1, NULL));

  g_assert_cmpint (lk_test_run_cli (&out, &err, "scan", library, NULL), ==, 0);
  g_assert_nonnull (strstr (err, "% of pairs candidates: it does not fit this library's model"));
  g_assert_nonnull (strstr (err, "likeness-cli calibrate --from estimate"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, "--json", NULL), ==, 0);
  g_autoptr (JsonNode) fit = json_from_string (out, NULL);
  g_assert_nonnull (fit);
  JsonObject *o = json_node_get_object (fit);
  g_assert_cmpstr (json_object_get_string_member (o, "from"), ==, "labels");
  g_assert_cmpfloat (json_object_get_double_member (o, "a"), >, 5);
  g_assert_cmpfloat (json_object_get_double_member (o, "candidate_fraction"), <, 0.05);
  g_assert_true (json_object_has_member (o, "log_loss"));
  g_assert_true (json_object_has_member (o, "brier"));
  g_assert_true (json_object_has_member (o, "cos_at_bar"));
  /* The sample's blurred crops: the likelihood wanted w_size < 0; held at 0. */
  g_assert_true (json_object_get_boolean_member (o, "size_at_bound"));
  g_assert_cmpfloat (json_object_get_double_member (o, "w_size"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (o, "held_out_positive"), >, 0);
  g_autofree char *after = NULL;
  g_assert_true (g_file_get_contents (manifest, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, broken);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* Now every scan uses it: no warning, and people are people. */
  g_assert_cmpint (lk_test_run_cli (&out, &err, "scan", library, NULL), ==, 0);
  g_assert_null (strstr (err, "candidates"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "evaluate", library, NULL), ==, 0);
  g_assert_true (has_line (out, "400 faces"));
  g_assert_nonnull (strstr (out, "labels calibration"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, "--undo", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "now the library calibration"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "scan", library, NULL), ==, 0);
  g_assert_nonnull (strstr (err, "pairs candidates"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, "--redo", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "now the labels calibration"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, "--from", "nonsense", NULL),
                   ==, 2);
}

/* A malformed calibration in review.json is named with the review's own path
 * (the CLI and the window may read it from a place other than the library's
 * folder: lk-review-location.h), and the command changes nothing. */
static void
test_cli_names_the_review_of_a_bad_calibration (Made *fx, gconstpointer data)
{
  const char *library = fx->folder;
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_autofree char *review = g_build_filename (library, "review.json", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, review, &error));
  g_assert_no_error (error);
  JsonObject *calibration = json_object_get_object_member (
      json_node_get_object (json_parser_get_root (parser)), "calibration");
  g_assert_nonnull (calibration);
  json_object_set_double_member (json_object_get_object_member (calibration, "current"), "a", -1.0);
  g_autofree char *bad = json_to_string (json_parser_get_root (parser), FALSE);
  g_assert_true (g_file_set_contents (review, bad, -1, NULL));

  g_assert_cmpint (lk_test_run_cli (&out, &err, "calibrate", library, "--undo", NULL), !=, 0);
  g_autofree char *expected = g_strdup_printf ("%s: “calibration” has a = -1", review);
  g_assert_nonnull (strstr (err, expected));
  g_autofree char *after = NULL;
  g_assert_true (g_file_get_contents (review, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, bad);
}

/* Issue 29: a real dlib library was estimated at p = 0.9 at cosine 1.1654
 * (a bar no pair can reach), saved, and shown as 0 people with no word. A
 * library of 400 strangers has no pair of one person to find: the old
 * estimate either returned a bar above every pair as if all were well (p =
 * 0.9 at cosine 0.3995 against a highest pair of 0.3991, on another draw of
 * such rows) or, on this one, failed with "the fit needs pairs of one
 * person and pairs of two people", which says neither what is in force nor
 * what to do. Both are now a failed estimate that says why, that the
 * calibration in force is kept, and what to do. */
static void
test_estimate_refuses_impossible_bar (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fit
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_test_message ("%s", error ? error->message : "no error");
  g_assert_null (fit);
  g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT);
  g_assert_nonnull (strstr (error->message, "The estimate failed"));
  g_assert_true (strstr (error->message, "nobody anybody's pair") != NULL
                 || strstr (error->message, "no pairs stand out") != NULL);
  g_assert_nonnull (strstr (error->message, "The calibration in force is kept"));
  g_assert_nonnull (strstr (error->message, "--from labels"));
}

/* Near-duplicates (the same photograph twice) are plainly one person: 20
 * such pairs at cosine 0.9998 among 400 strangers whose highest pair is
 * 0.40. The old estimate capped their one-bin spike at a third of itself
 * and failed ("the fit needs pairs of one person"); now the bar lies in the
 * gap and the people are right. */
static void
test_estimate_finds_near_duplicates (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fit
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("near-duplicates: p = 0.9 at cosine %.4f, %u Newton steps, %u refits",
                  fit->cos_at_bar, fit->iterations, fit->refits);
  g_assert_true (fit->converged);
  g_assert_cmpfloat (fit->cos_at_bar, >, 0.45);
  g_assert_cmpfloat (fit->cos_at_bar, <, 0.99);
  g_assert_cmpfloat (f1_with (library, &fit->calibration), ==, 1.0);
}

/* The fit says whether it converged, and in how many steps. */
static void
test_fit_reports_convergence (void)
{
  LkCalibration truth = { 20, -12, 0, 0, 0 };
  g_autoptr (GArray) s = draw_model (&truth, 20000, 1, TRUE);
  g_autoptr (LkCalibrationFit) fit
      = lk_calibration_fit ((const LkCalibrationSample *) s->data, s->len, 0.9, 128, NULL);
  g_assert_nonnull (fit);
  g_assert_true (fit->converged);
  g_assert_cmpuint (fit->iterations, >, 1);
  g_assert_cmpuint (fit->iterations, <, 100);
  g_assert_cmpuint (fit->refits, ==, 0);
}

static LkLibrary *
model_library (const char *name, gsize faces, guint dim, guint64 seed, LkSampleModel model)
{
  g_autofree char *folder = g_build_filename (tmp, name, NULL);
  LkSampleOptions options = { faces, dim, seed, FALSE, model, LK_SAMPLE_FAMILY_PERSONAL };
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_sample_write (folder, &options, &error));
  LkLibrary *library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  return library;
}

/* The guard in both directions (issue 29): a library calibrated for
 * ArcFace but embedded dlib-like makes nearly every pair a candidate (too
 * many); one calibrated for dlib but embedded ArcFace-like pairs nobody
 * (too few: the random pairs alone, 0 candidates, read as "all is well").
 * Each library's own fit passes. */
static void
test_guard_both_directions (void)
{
  g_autoptr (LkLibrary) arcface
      = model_library ("guard-arcface", 1000, 128, 2, LK_SAMPLE_MODEL_ARCFACE);
  g_autoptr (LkLibrary) dlib = model_library ("guard-dlib", 1000, 128, 2, LK_SAMPLE_MODEL_DLIB);
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) arcface_fit
      = lk_calibrate (arcface, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) dlib_fit
      = lk_calibrate (dlib, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("fitted bars: ArcFace-like %.3f, dlib-like %.3f", arcface_fit->cos_at_bar,
                  dlib_fit->cos_at_bar);

  LkCalibrationGuard guard;
  g_autofree char *message = NULL;
  /* dlib-like faces, ArcFace's calibration: too many. */
  lk_calibration_guard (dlib, &arcface_fit->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_TOO_MANY);
  g_assert_true (lk_calibration_guard_fails (&guard, &message));
  g_assert_nonnull (strstr (message, "% of pairs candidates"));
  g_clear_pointer (&message, g_free);
  /* ArcFace-like faces, dlib's calibration: too few. */
  lk_calibration_guard (arcface, &dlib_fit->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_test_message ("ArcFace-like faces with dlib's calibration: %u of %u pairs, %u of %u faces",
                  guard.candidates, guard.sampled, guard.faces_paired, guard.faces_sampled);
  g_assert_cmpuint (guard.faces_sampled, ==, LK_CALIBRATION_GUARD_FACES);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_TOO_FEW);
  g_assert_true (lk_calibration_guard_fails (&guard, &message));
  g_assert_nonnull (strstr (message, "makes nobody anybody's pair"));
  g_clear_pointer (&message, g_free);
  /* Each with its own: no verdict. */
  lk_calibration_guard (arcface, &arcface_fit->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_test_message ("ArcFace-like with its own: %u of %u faces paired", guard.faces_paired,
                  guard.faces_sampled);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_OK);
  lk_calibration_guard (dlib, &dlib_fit->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1, &guard);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_OK);
  /* A small library may be all strangers: no verdict below GUARD_MIN_FACES. */
  g_autoptr (LkLibrary) small = model_library ("guard-small", 150, 64, 2, LK_SAMPLE_MODEL_ARCFACE);
  lk_calibration_guard (small, &dlib_fit->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_assert_cmpuint (guard.faces_sampled, ==, 0);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_OK);
}

/* One estimate for every model's scale (issue 29): the gap between
 * strangers and people lies near cosine 0.4 for ArcFace, 0.8 for FaceNet and
 * 0.94 for dlib; the same code finds each from the shape of the library's
 * own cosines, clusters as well as the labels' fit (within 0.005) and never
 * below connected components of its own pairs. */
static void
test_estimate_finds_each_models_gap (void)
{
  static const struct
  {
    LkSampleModel model;
    const char *name;
    double lo, hi;
  } models[] = {
    { LK_SAMPLE_MODEL_ARCFACE, "gap-arcface", 0.33, 0.47 },
    { LK_SAMPLE_MODEL_FACENET, "gap-facenet", 0.72, 0.82 },
    { LK_SAMPLE_MODEL_DLIB, "gap-dlib", 0.93, 0.97 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (models); k++)
    {
      g_autoptr (LkLibrary) library = model_library (models[k].name, 1000, 128, 3, models[k].model);
      g_autoptr (GError) error = NULL;
      LkCalibrateOptions options = { .seed = 1 };
      g_autoptr (LkCalibrationFit) estimated
          = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (LkCalibrationFit) fitted
          = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
      g_assert_no_error (error);
      double f_est = f1_with (library, &estimated->calibration);
      double f_fit = f1_with (library, &fitted->calibration);
      double f_cc = components_f1 (library, &estimated->calibration);
      g_test_message ("%s: estimated p = 0.9 at %.3f (F1 %.4f, CC %.4f), labels at %.3f (%.4f)",
                      models[k].name, estimated->cos_at_bar, f_est, f_cc, fitted->cos_at_bar,
                      f_fit);
      g_assert_true (estimated->converged);
      g_assert_cmpfloat (estimated->cos_at_bar, >, models[k].lo);
      g_assert_cmpfloat (estimated->cos_at_bar, <, models[k].hi);
      g_assert_cmpfloat (f_est, >=, f_fit - 0.005);
      g_assert_cmpfloat (f_est, >=, f_cc);
    }
}

/* A library of a few big people, as a family's or issue 29's real one (5
 * people of 11 faces, 44 seen once: 5.7 % of its pairs are one person).
 * Its right calibration makes more than 5 % of random pairs candidates, and
 * the fixed bar called it wrong (and refused the estimate that found it);
 * the bar now follows the shoulder the cosines show, and a mismatch still
 * fails. The estimate (the peak read from its lower half: the sample's own
 * 95th percentile lies in the shoulder) clusters it perfectly. */
static void
test_guard_follows_the_shoulder (Loaded *fx, gconstpointer data)
{
  LkLibrary *library = fx->library;
  g_autoptr (GError) error = NULL;
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  LkCalibrationGuard guard;
  lk_calibration_guard (library, &fitted->calibration, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  g_test_message ("labels' calibration: %.2f %% of pairs candidates, shoulder %.2f %%, bar %.2f %%",
                  100 * guard.fraction, 100 * guard.shoulder,
                  100 * lk_calibration_guard_bar (&guard));
  g_assert_cmpfloat (guard.fraction, >, LK_CALIBRATION_GUARD_BAR);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_OK);
  LkCalibration everything = { 30, 10, 0, 0, 0 };
  lk_calibration_guard (library, &everything, 0.9, LK_CALIBRATION_GUARD_SAMPLES, 1, &guard);
  g_assert_cmpint (lk_calibration_guard_verdict (&guard), ==, LK_CALIBRATION_GUARD_TOO_MANY);

  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("estimated p = 0.9 at %.3f, labels at %.3f", estimated->cos_at_bar,
                  fitted->cos_at_bar);
  g_assert_cmpfloat (f1_with (library, &estimated->calibration), ==, 1.0);
}

/* The CLI's warning covers "too few" as it covers "too many". */
static void
test_cli_warns_too_few (Made *fx, gconstpointer data)
{
  const char *library = fx->folder;
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *manifest = g_build_filename (library, "library.json", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (manifest, &text, NULL, NULL));
  /* b = −28.5: p = 0.9 at cosine 1.02, as the estimate of issue 29 put it. */
  char *b = strstr (text, "-10.5");
  g_assert_nonnull (b);
  memcpy (b, "-28.5", 5);
  g_assert_true (g_file_set_contents (manifest, text, -1, NULL));
  g_assert_cmpint (lk_test_run_cli (&out, &err, "scan", library, NULL), ==, 0);
  g_assert_nonnull (strstr (err, "makes nobody anybody's pair"));
  g_assert_nonnull (strstr (err, "likeness-cli calibrate --from estimate"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", library, NULL), ==, 0);
  g_assert_nonnull (strstr (err, "makes nobody anybody's pair"));
}

/* Draws of tests/make-family whose look-alikes the estimate joined, at a
 * bar where its own pair model saw nothing wrong (BCubed precision 0.94 on
 * both). The estimate must refuse, and say why, or make people at least
 * 95 % one person. */
static void
test_estimate_never_merges_silently (void)
{
  const char *make = g_getenv ("MAKE_FAMILY");
  if (make == NULL)
    {
      g_test_skip ("MAKE_FAMILY is not set (meson test sets it)");
      return;
    }
  const struct
  {
    const char *seed, *why;
  } draws[] = { { "3", "look alike" }, { "9", "look alike" } };
  for (guint k = 0; k < G_N_ELEMENTS (draws); k++)
    {
      g_autofree char *folder = g_strdup_printf ("%s/family-%s", tmp, draws[k].seed);
      const char *argv[] = { make, "--faces", "800", draws[k].seed, folder, NULL };
      g_autoptr (GError) error = NULL;
      int status = 0;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                   NULL, NULL, NULL, &status, &error));
      g_assert_no_error (error);
      g_assert_true (g_spawn_check_wait_status (status, &error));
      g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
      g_assert_no_error (error);
      g_autoptr (LkCalibrationFit) estimated
          = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &error);
      if (estimated == NULL)
        {
          g_test_message ("seed %s: %s", draws[k].seed, error->message);
          g_assert_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT);
          g_assert_nonnull (strstr (error->message, draws[k].why));
        }
      else
        {
          double precision = precision_with (library, &estimated->calibration);
          g_test_message ("seed %s: BCubed precision %.4f", draws[k].seed, precision);
          g_assert_cmpfloat (precision, >=, 0.95);
        }
      lk_test_remove_tree (folder);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-calibrate-XXXXXX", &error);
  g_assert_no_error (error);
  sample = g_build_filename (tmp, "sample", NULL);
  LkSampleOptions options = { 1500, LK_SAMPLE_DEFAULT_DIM, 4, FALSE, LK_SAMPLE_MODEL_ARCFACE };
  g_assert_true (lk_sample_write (sample, &options, &error));
  g_assert_no_error (error);

  g_test_add_func ("/calibrate/fit-recovers-known-model", test_fit_recovers_known_model);
  g_test_add_func ("/calibrate/fit-weights-undo-sampling", test_fit_weights_undo_sampling);
  g_test_add_func ("/calibrate/fit-separable-stays-finite", test_fit_separable_stays_finite);
  g_test_add_func ("/calibrate/fit-keeps-size-weight-non-negative",
                   test_fit_keeps_size_weight_non_negative);
  g_test_add_func ("/calibrate/fit-refuses-one-class", test_fit_refuses_one_class);
  g_test_add_func ("/calibrate/labels-without-negatives-refused",
                   test_labels_without_negatives_refused);
  g_test_add ("/calibrate/labels-and-estimate-on-sample", Loaded, &the_sample, loaded_setup,
              test_labels_and_estimate_on_sample, loaded_teardown);
  g_test_add ("/calibrate/dlib-like-guard-and-estimate", Loaded, &dlib_800, loaded_setup,
              test_dlib_like_guard_and_estimate, loaded_teardown);
  g_test_add ("/calibrate/estimate-on-lookalikes", Loaded, &lookalike_family, loaded_setup,
              test_estimate_on_lookalikes, loaded_teardown);
  g_test_add_func ("/calibrate/estimate-never-merges-silently",
                   test_estimate_never_merges_silently);
  g_test_add ("/calibrate/fit-on-bridges", Loaded, &bridge_family, loaded_setup,
              test_fit_on_bridges, loaded_teardown);
  g_test_add ("/calibrate/estimate-on-groups", Loaded, &group_family, loaded_setup,
              test_estimate_on_groups, loaded_teardown);
  g_test_add ("/calibrate/estimate-on-small-dlib-like", Loaded, &dlib_600_of_64, loaded_setup,
              test_estimate_on_small_dlib_like, loaded_teardown);
  g_test_add ("/calibrate/decisions", Loaded, &the_sample, loaded_setup, test_decisions,
              loaded_teardown);
  g_test_add ("/calibrate/decisions-count-only-known-pairs", Loaded, &the_sample, loaded_setup,
              test_decisions_count_only_known_pairs, loaded_teardown);
  g_test_add ("/calibrate/decisions-without-a-face-taken-out-fit", Loaded, &the_sample,
              loaded_setup, test_decisions_without_a_face_taken_out_fit, loaded_teardown);
  g_test_add ("/calibrate/decisions-count-pairs-settled-either-way", Loaded, &the_sample,
              loaded_setup, test_decisions_count_pairs_settled_either_way, loaded_teardown);
  g_test_add_func ("/calibrate/sample-families", test_sample_families);
  g_test_add ("/calibrate/guard", Loaded, &the_sample, loaded_setup, test_guard, loaded_teardown);
  g_test_add_func ("/calibrate/priors", test_priors);
  g_test_add_func ("/calibrate/history-in-review", test_history_in_review);
  g_test_add ("/calibrate/cli", Made, &made_cli, made_setup, test_cli, made_teardown);
  g_test_add ("/calibrate/estimate-refuses-impossible-bar", Loaded, &strangers_only, loaded_setup,
              test_estimate_refuses_impossible_bar, loaded_teardown);
  g_test_add ("/calibrate/estimate-finds-near-duplicates", Loaded, &near_duplicate_strangers,
              loaded_setup, test_estimate_finds_near_duplicates, loaded_teardown);
  g_test_add_func ("/calibrate/fit-reports-convergence", test_fit_reports_convergence);
  g_test_add_func ("/calibrate/guard-both-directions", test_guard_both_directions);
  g_test_add ("/calibrate/guard-follows-the-shoulder", Loaded, &few_big_people, loaded_setup,
              test_guard_follows_the_shoulder, loaded_teardown);
  g_test_add_func ("/calibrate/estimate-finds-each-models-gap",
                   test_estimate_finds_each_models_gap);
  g_test_add ("/calibrate/cli-warns-too-few", Made, &made_cli_too_few, made_setup,
              test_cli_warns_too_few, made_teardown);
  g_test_add ("/calibrate/cli-names-the-review-of-a-bad-calibration", Made, &made_bad_calibration,
              made_setup, test_cli_names_the_review_of_a_bad_calibration, made_teardown);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (sample);
  g_free (tmp);
  return status;
}
