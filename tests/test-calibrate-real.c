/* test-calibrate-real — the calibration on REAL photographs of real people,
 * embedded by a real model (issue 29)
 *
 * Every photo of Debian's dlib source package that tests/photos/README.md
 * lists (fetched by .ci/dlib-source into $LK_TEST_DLIB) is imported with
 * dlib's HOG detector and ResNet: 123 faces of 66 photos, labelled by
 * looking (tests/photos/labels.tsv: 9 people of 6–11 faces, 44 seen once).
 * On them the estimate without labels must cluster as well as the labels'
 * own fit, never below connected components of its own pairs, and the
 * dlib prior must be the one LIBRARY-FORMAT.md says was fitted there.
 * Skipped without the photos, unless LK_TEST_REQUIRE_DLIB is set.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "import/lk-import-photos.h"
#include "library/lk-library.h"
#include "lk-test-util.h"
#include "people/lk-calibrate.h"
#include "people/lk-cluster.h"
#include "people/lk-evaluate.h"
#include "scan/lk-scan.h"

static char *dlib_dir;
static char *library_dir; /* the imported, labelled library */

static gboolean
have_dlib (void)
{
  g_autofree char *probe = g_build_filename (dlib_dir, "photos", "johns", NULL);
  return lk_test_have_dlib (probe);
}

/* faces[].label from labels.tsv: the line of the face's photo whose centre
 * lies in its box. */
static void
label_library (const char *folder)
{
  g_autofree char *tsv = g_test_build_filename (G_TEST_DIST, "photos", "labels.tsv", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (tsv, &text, NULL, NULL));
  g_auto (GStrv) rows = g_strsplit (text, "\n", -1);
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, NULL));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *photos = json_object_get_array_member (root, "photos");
  JsonArray *faces = json_object_get_array_member (root, "faces");
  guint labelled = 0;
  for (guint k = 0; k < json_array_get_length (faces); k++)
    {
      JsonObject *face = json_array_get_object_element (faces, k);
      gint64 photo = json_object_get_int_member (face, "photo");
      const char *source = NULL;
      for (guint p = 0; p < json_array_get_length (photos) && source == NULL; p++)
        {
          JsonObject *o = json_array_get_object_element (photos, p);
          if (json_object_get_int_member (o, "id") == photo)
            source = json_object_get_string_member (o, "source_id");
        }
      g_assert_nonnull (source);
      JsonArray *box = json_object_get_array_member (face, "box");
      double b[4];
      for (int d = 0; d < 4; d++)
        b[d] = json_array_get_double_element (box, d);
      for (char **r = rows; *r != NULL; r++)
        {
          if (**r == '#' || **r == '\0')
            continue;
          g_auto (GStrv) f = g_strsplit (*r, "\t", -1);
          if (g_strv_length (f) != 4 || strcmp (f[0], source) != 0)
            continue;
          double x = g_ascii_strtod (f[1], NULL), y = g_ascii_strtod (f[2], NULL);
          if (x >= b[0] && x <= b[0] + b[2] && y >= b[1] && y <= b[1] + b[3])
            {
              json_object_set_string_member (face, "label", f[3]);
              labelled++;
              break;
            }
        }
    }
  g_assert_cmpuint (labelled, ==, json_array_get_length (faces));
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (gen, manifest, NULL));
}

static const char *
library (void)
{
  if (library_dir == NULL)
    {
      g_autofree char *root = g_dir_make_tmp ("lk-test-calibrate-real-XXXXXX", NULL);
      g_assert_nonnull (root);
      library_dir = g_build_filename (root, "library", NULL);
      g_autofree char *photos = g_build_filename (dlib_dir, "photos", NULL);
      const char *folders[] = { photos, NULL };
      LkImportPhotosOptions options = { folders, LK_DETECTOR_HOG, 0, NULL, NULL, NULL };
      g_autoptr (GError) error = NULL;
      g_assert_true (lk_import_photos (library_dir, &options, NULL, &error));
      g_assert_no_error (error);
      label_library (library_dir);
    }
  return library_dir;
}

/* BCubed F1 of the people a calibration makes, on the faces whose label
 * does not start with `leave_out` (NULL: every face). */
static double
f1_of (const LkLibrary *l, const LkCalibration *calibration, LkLinkage linkage,
       const char *leave_out)
{
  LkFaces faces;
  lk_faces_from_library (&faces, l);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r
      = lk_scan (&faces, calibration, l->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  LkClusterInput input;
  lk_cluster_input_init (&input, l, r->pairs);
  LkClusterOptions options = { linkage, 0, 0, 0 };
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, &options, &error);
  g_assert_no_error (error);
  g_autofree const char **labels = g_new0 (const char *, l->count + 1);
  for (gsize f = 0; f < l->count; f++)
    labels[f] = leave_out && g_str_has_prefix (l->label[f], leave_out) ? NULL : l->label[f];
  LkScore score;
  g_assert_true (lk_evaluate (people, labels, &score, &error));
  return score.bcubed.f1;
}

/* Issue 29's first failure, on real faces: the estimate finds dlib's gap
 * (between its strangers, highest 0.942 here, and its people, 5th
 * percentile 0.957) and clusters as the labels' fit does. Before, it read
 * the strangers' peak from the sample's own 75th and 95th percentiles, which
 * the 3.9 % of pairs of one person widened by half: p = 0.9 at 0.969,
 * BCubed F1 0.879 against the labels' 0.9115. */
static void
test_estimate_on_real_dlib (void)
{
  if (!have_dlib ())
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) l = lk_library_load (library (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (l->count, ==, 123);
  LkCalibrateOptions options = { .seed = 1 };
  g_autoptr (LkCalibrationFit) estimated
      = lk_calibrate (l, LK_CALIBRATION_FROM_ESTIMATE, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (LkCalibrationFit) fitted
      = lk_calibrate (l, LK_CALIBRATION_FROM_LABELS, NULL, &options, NULL, &error);
  g_assert_no_error (error);
  double f_est = f1_of (l, &estimated->calibration, LK_LINKAGE_AVERAGE, NULL);
  double f_cc = f1_of (l, &estimated->calibration, LK_LINKAGE_SINGLE, NULL);
  double f_fit = f1_of (l, &fitted->calibration, LK_LINKAGE_AVERAGE, NULL);
  const LkCalibration *prior = lk_calibration_prior_for_model ("dlib");
  double f_prior = f1_of (l, prior, LK_LINKAGE_AVERAGE, NULL);
  /* bald_guys.jpg is a collage: 4 people × 6 faces in ONE photo, whose
   * faces the scan never compares (two faces of one photo are two people,
   * the format's rule), so every method stops at 0.9115 with it. Outside
   * it the people must be right. */
  double f_outside = f1_of (l, &estimated->calibration, LK_LINKAGE_AVERAGE, "bald-");
  g_test_message ("real dlib, 123 faces: estimated p = 0.9 at %.4f (F1 %.4f, connected "
                  "components %.4f; outside the collage %.4f), labels at %.4f (%.4f), the "
                  "prior %.4f",
                  estimated->cos_at_bar, f_est, f_cc, f_outside, fitted->cos_at_bar, f_fit,
                  f_prior);
  g_assert_cmpfloat (f_outside, >=, 0.99);
  g_assert_true (estimated->converged);
  g_assert_cmpfloat (estimated->cos_at_bar, >, 0.92);
  g_assert_cmpfloat (estimated->cos_at_bar, <, 0.955);
  g_assert_cmpfloat (f_est, >=, f_fit - 0.005);
  g_assert_cmpfloat (f_est, >=, f_cc);
  g_assert_cmpfloat (f_prior, >=, f_fit - 0.005);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *env = g_getenv ("LK_TEST_DLIB");
  dlib_dir = g_strdup (env != NULL ? env : "_build-dlib");
  g_autofree char *models = g_build_filename (dlib_dir, "models", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  g_setenv ("XDG_DATA_HOME", "/nonexistent/likeness-test", TRUE);
  g_test_add_func ("/calibrate-real/estimate-on-real-dlib", test_estimate_on_real_dlib);
  int status = g_test_run ();
  if (library_dir != NULL)
    {
      g_autofree char *root = g_path_get_dirname (library_dir);
      lk_test_remove_tree (root);
      g_free (library_dir);
    }
  g_free (dlib_dir);
  return status;
}
