/* test-import-photos.c — lk_import_photos on REAL photographs of real people,
 * embedded by dlib's real models
 *
 * The photos and models come from Debian's dlib source package, fetched by
 * .ci/dlib-source into $LK_TEST_DLIB (models/, photos/); the identities of
 * the faces are tests/photos/labels.tsv, assigned by looking at them. Without
 * that folder the tests are skipped, unless LK_TEST_REQUIRE_DLIB is set (as
 * .ci/check sets it): then they fail.
 *
 * The photos are kept few (dlib's ResNet runs ~50 ms a face on one core, and
 * the suite also runs under ASan): two people of dlib's "johns" three times
 * each, a PASCAL VOC photo of three people, and a photo of dogs (no face).
 */
#include "config.h"

#include <errno.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "detect/lk-detect-dlib.h"
#include "import/lk-import-photos.h"
#include "library/lk-library.h"
#include "lk-test-util.h"

static const char *const test_photos[] = {
  "johns/John_Simm/000310_00470511.jpg",
  "johns/John_Simm/000305_00470162.jpg",
  "johns/John_Simm/000300_00470148.jpg",
  "johns/John_Salley/000200_02159354.jpg",
  "johns/John_Salley/000189_02159361.jpg",
  "johns/John_Salley/000194_02159572.jpg",
  "faces/2008_001322.jpg",
  "faces/dogs.jpg",
};

static char *dlib_dir;

static gboolean
have_dlib (void)
{
  if (!lk_import_photos_available ())
    {
      g_test_skip ("built without -Ddetect");
      return FALSE;
    }
  g_autofree char *probe = g_build_filename (dlib_dir, "photos", test_photos[0], NULL);
  if (g_file_test (probe, G_FILE_TEST_EXISTS))
    return TRUE;
  if (g_getenv ("LK_TEST_REQUIRE_DLIB") != NULL)
    g_error ("%s is missing: run .ci/dlib-source", probe);
  g_test_skip ("no dlib models and photos: run .ci/dlib-source");
  return FALSE;
}

/* A fresh folder under the test's temporary root. */
static char *
make_dir (const char *name)
{
  g_autofree char *root = g_build_filename (g_get_tmp_dir (), "lk-test-photos-XXXXXX", NULL);
  g_assert_nonnull (g_mkdtemp (root));
  char *dir = g_build_filename (root, name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  return dir;
}

static void
copy_file (const char *from, const char *to)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (from, &data, &length, NULL));
  g_autofree char *parent = g_path_get_dirname (to);
  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (to, data, (gssize) length, NULL));
}

/* The test photos copied into a new folder, returned. */
static char *
photo_folder (void)
{
  char *dir = make_dir ("photos");
  for (gsize k = 0; k < G_N_ELEMENTS (test_photos); k++)
    {
      g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[k], NULL);
      g_autofree char *to = g_build_filename (dir, test_photos[k], NULL);
      copy_file (from, to);
    }
  return dir;
}

static GPtrArray *
read_labels (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "photos", "labels.tsv", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  GPtrArray *lines = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_auto (GStrv) rows = g_strsplit (text, "\n", -1);
  for (char **r = rows; *r != NULL; r++)
    if (**r != '#' && **r != '\0')
      {
        char **f = g_strsplit (*r, "\t", -1);
        g_assert_cmpuint (g_strv_length (f), ==, 4);
        g_ptr_array_add (lines, f);
      }
  return lines;
}

/* The label for face k of `library` (photos[].source_id relative to the
 * folder imported), or NULL when no line's centre is inside its box. */
static const char *
face_label (const LkLibrary *library, const char *manifest_text, gsize k, GPtrArray *lines,
            const char *const *source_ids)
{
  (void) manifest_text;
  guint64 photo = library->photo[k];
  const char *source = source_ids[photo];
  const double *b = library->box[k];
  for (guint l = 0; l < lines->len; l++)
    {
      char **f = g_ptr_array_index (lines, l);
      if (strcmp (f[0], source) != 0)
        continue;
      double x = g_ascii_strtod (f[1], NULL), y = g_ascii_strtod (f[2], NULL);
      if (x >= b[0] && x <= b[0] + b[2] && y >= b[1] && y <= b[1] + b[3])
        return f[3];
    }
  return NULL;
}

/* photos[].source_id by photo id, read from the manifest (LkPhoto has no
 * source_id: only importers write it). */
static char **
source_ids (const char *outdir)
{
  g_autofree char *manifest = g_build_filename (outdir, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, NULL));
  JsonArray *photos = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "photos");
  guint n = json_array_get_length (photos);
  char **ids = g_new0 (char *, n + 1);
  for (guint k = 0; k < n; k++)
    {
      JsonObject *p = json_array_get_object_element (photos, k);
      guint64 id = (guint64) json_object_get_int_member (p, "id");
      g_assert_cmpuint (id, <, n);
      ids[id] = g_strdup (json_object_get_string_member (p, "source_id"));
    }
  return ids;
}

static double
cosine (const LkLibrary *library, gsize i, gsize j)
{
  const float *a = lk_library_row (library, i), *b = lk_library_row (library, j);
  double dot = 0;
  for (guint d = 0; d < library->dim; d++)
    dot += (double) a[d] * b[d];
  return dot;
}

static gboolean
import (const char *outdir, const char *folder, guint threads, LkImportSummary *summary,
        GError **error)
{
  const char *folders[] = { folder, NULL };
  LkImportPhotosOptions options = { folders, LK_DETECTOR_HOG, threads, NULL, NULL, summary };
  return lk_import_photos (outdir, &options, NULL, error);
}

static void
test_finds_and_embeds_real_faces (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *photos = photo_folder ();
  g_autofree char *root = g_path_get_dirname (photos);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_searched, ==, 8);
  g_assert_cmpuint (summary.photos_with_faces, ==, 7); /* not the dogs */
  g_assert_cmpuint (summary.faces, ==, 9);
  g_assert_cmpuint (summary.thumbnails, ==, 9);
  g_assert_null (summary.problems);
  g_assert_cmpstr (summary.model, ==, LK_DLIB_MODEL_NAME);
  g_assert_true (summary.model_known);

  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->dim, ==, 128);
  g_assert_cmpuint (library->count, ==, 9);
  g_auto (GStrv) ids = source_ids (outdir);
  g_autoptr (GPtrArray) lines = read_labels ();

  /* Every face found is one a person labelled (precision), at its place. */
  const char *labels[9];
  for (gsize k = 0; k < 9; k++)
    {
      labels[k] = face_label (library, NULL, k, lines, (const char *const *) ids);
      g_assert_nonnull (labels[k]);
      g_assert_true (library->has_box[k]);
      g_assert_nonnull (library->thumbnail[k]);
      g_assert_nonnull (library->face_id[k]);
      g_assert_cmpfloat (library->crop_px[k], >=, 20);
    }
  /* Each of the 3 + 3 johns' nearest other face is the same person: the
   * ResNet's embeddings tell them apart (measured: same-person cosines
   * 0.93–0.99, different people 0.72–0.94 on the 123 faces of
   * tests/photos/labels.tsv). */
  for (gsize i = 0; i < 9; i++)
    {
      if (!g_str_has_prefix (labels[i], "john_"))
        continue;
      gsize best = i;
      double best_cos = -2;
      for (gsize j = 0; j < 9; j++)
        if (j != i && cosine (library, i, j) > best_cos)
          {
            best = j;
            best_cos = cosine (library, i, j);
          }
      g_assert_cmpstr (labels[best], ==, labels[i]);
      g_assert_cmpfloat (best_cos, >, 0.9);
    }
  lk_import_summary_clear (&summary);
  lk_test_remove_tree (root);
}

/* One thread or two: the same library, byte for byte (the photos are
 * assembled in walk order, and each worker's network is a copy). */
static void
test_same_library_whatever_the_threads (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *photos = photo_folder ();
  g_autofree char *root = g_path_get_dirname (photos);
  g_autofree char *one = g_build_filename (root, "one", NULL);
  g_autofree char *two = g_build_filename (root, "two", NULL);
  g_autoptr (GError) error = NULL;

  import (one, photos, 1, NULL, &error);
  g_assert_no_error (error);
  import (two, photos, 2, NULL, &error);
  g_assert_no_error (error);
  const char *files[] = { "library.json", "embeddings.f32", "thumbs/000004.png" };
  for (gsize k = 0; k < G_N_ELEMENTS (files); k++)
    {
      g_autofree char *a = g_build_filename (one, files[k], NULL);
      g_autofree char *b = g_build_filename (two, files[k], NULL);
      g_autofree char *da = NULL, *db = NULL;
      gsize la = 0, lb = 0;
      g_assert_true (g_file_get_contents (a, &da, &la, NULL));
      g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
      g_assert_cmpmem (da, la, db, lb);
    }
  lk_test_remove_tree (root);
}

/* The photo stored turned a quarter, with EXIF orientation 6 saying so: the
 * frontal detector finds the face only once the orientation is applied. */
static void
write_turned (const char *from, const char *to, gboolean with_orientation)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) upright = gdk_pixbuf_new_from_file (from, &error);
  g_assert_no_error (error);
  g_autoptr (GdkPixbuf) stored
      = gdk_pixbuf_rotate_simple (upright, GDK_PIXBUF_ROTATE_COUNTERCLOCKWISE);
  gchar *jpeg = NULL;
  gsize length = 0;
  g_assert_true (
      gdk_pixbuf_save_to_buffer (stored, &jpeg, &length, "jpeg", &error, "quality", "95", NULL));
  g_assert_no_error (error);
  /* An APP1 Exif segment right after SOI: a little-endian TIFF header and
   * one IFD entry, Orientation (0x0112, SHORT) = 6, "turn clockwise". */
  static const guint8 app1[]
      = { 0xFF, 0xE1, 0x00, 0x22, 'E',  'x',  'i',  'f',  0,    0,    'I',  'I',
          0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00,
          0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
  GByteArray *out = g_byte_array_new ();
  g_byte_array_append (out, (const guint8 *) jpeg, 2);
  if (with_orientation)
    g_byte_array_append (out, app1, sizeof app1);
  g_byte_array_append (out, (const guint8 *) jpeg + 2, (guint) length - 2);
  g_assert_true (g_file_set_contents (to, (const char *) out->data, out->len, NULL));
  g_byte_array_unref (out);
  g_free (jpeg);
}

static void
test_exif_orientation_applied_before_detection (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *photos = make_dir ("photos");
  g_autofree char *root = g_path_get_dirname (photos);
  g_autofree char *from = g_build_filename (dlib_dir, "photos", "faces", "2008_001322.jpg", NULL);
  g_autofree char *turned = g_build_filename (photos, "turned.jpg", NULL);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  /* Without the tag, the same turned pixels: no face is upright. */
  write_turned (from, turned, FALSE);
  g_assert_false (import (outdir, photos, 1, &summary, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_clear_error (&error);
  lk_import_summary_clear (&summary);

  write_turned (from, turned, TRUE);
  import (outdir, photos, 1, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.faces, ==, 3);
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  /* The photo's size and boxes as shown: 500 wide, 375 high. */
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[0]);
  g_assert_cmpint (photo->width, ==, 500);
  g_assert_cmpint (photo->height, ==, 375);
  g_autoptr (GPtrArray) lines = read_labels ();
  const char *ids[] = { "faces/2008_001322.jpg", NULL };
  for (gsize k = 0; k < library->count; k++)
    g_assert_nonnull (face_label (library, NULL, k, lines, ids));
  lk_import_summary_clear (&summary);
  lk_test_remove_tree (root);
}

static guint32
png_crc (const guint8 *bytes, gsize n)
{
  guint32 crc = 0xFFFFFFFFu;
  for (gsize k = 0; k < n; k++)
    {
      crc ^= bytes[k];
      for (int b = 0; b < 8; b++)
        crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
  return ~crc;
}

/* A PNG whose header claims width × height, then an empty IDAT (libpng
 * reports the size when the first IDAT starts) and IEND. */
static void
write_png_header (const char *path, guint32 width, guint32 height)
{
  GByteArray *png = g_byte_array_new ();
  static const guint8 signature[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n' };
  g_byte_array_append (png, signature, sizeof signature);
  guint8 ihdr[25] = { 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
  guint32 w = GUINT32_TO_BE (width), h = GUINT32_TO_BE (height);
  memcpy (ihdr + 8, &w, 4);
  memcpy (ihdr + 12, &h, 4);
  ihdr[16] = 8; /* bit depth */
  ihdr[17] = 2; /* RGB */
  guint32 crc = GUINT32_TO_BE (png_crc (ihdr + 4, 17));
  memcpy (ihdr + 21, &crc, 4);
  g_byte_array_append (png, ihdr, sizeof ihdr);
  guint8 idat[12] = { 0, 0, 0, 0, 'I', 'D', 'A', 'T' };
  crc = GUINT32_TO_BE (png_crc (idat + 4, 4));
  memcpy (idat + 8, &crc, 4);
  g_byte_array_append (png, idat, sizeof idat);
  static const guint8 iend[] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
  g_byte_array_append (png, iend, sizeof iend);
  g_assert_true (g_file_set_contents (path, (const char *) png->data, png->len, NULL));
  g_byte_array_unref (png);
}

static void
test_bad_inputs_counted_and_named (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *photos = make_dir ("photos");
  g_autofree char *root = g_path_get_dirname (photos);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  g_autofree char *good_from
      = g_build_filename (dlib_dir, "photos", "johns", "John_Simm", "000310_00470511.jpg", NULL);
  g_autofree char *good = g_build_filename (photos, "good.jpg", NULL);
  copy_file (good_from, good);

  /* zero bytes */
  g_autofree char *empty = g_build_filename (photos, "empty.jpg", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  /* text named .jpg */
  g_autofree char *text = g_build_filename (photos, "notes.jpg", NULL);
  g_assert_true (g_file_set_contents (text, "a shopping list, not a photo\n", -1, NULL));
  /* the first half of a real JPEG */
  g_autofree char *truncated = g_build_filename (photos, "truncated.jpg", NULL);
  {
    g_autofree char *data = NULL;
    gsize length = 0;
    g_assert_true (g_file_get_contents (good, &data, &length, NULL));
    g_assert_true (g_file_set_contents (truncated, data, (gssize) length / 2, NULL));
  }
  /* 50,000 × 50,000 in its header: 7.5 GB of pixels if decoded */
  g_autofree char *huge = g_build_filename (photos, "huge.png", NULL);
  write_png_header (huge, 50000, 50000);
  /* a hidden folder (skipped, not counted) and a link loop (searched once) */
  g_autofree char *hidden = g_build_filename (photos, ".thumbnails", "x.jpg", NULL);
  copy_file (good_from, hidden);
  g_autofree char *loop = g_build_filename (photos, "loop", NULL);
  g_assert_cmpint (symlink (".", loop), ==, 0);
  /* a folder that cannot be read (not as root: root reads it anyway) */
  g_autofree char *locked = g_build_filename (photos, "locked", NULL);
  g_assert_cmpint (g_mkdir (locked, 0755), ==, 0);
  g_autofree char *locked_photo = g_build_filename (locked, "y.jpg", NULL);
  copy_file (good_from, locked_photo);
  gboolean can_lock = geteuid () != 0;
  if (can_lock)
    g_assert_cmpint (g_chmod (locked, 0), ==, 0);

  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;
  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.faces, ==, can_lock ? 1 : 2);
  g_assert_cmpuint (summary.bad_empty, ==, 1);
  g_assert_cmpuint (summary.bad_not_image, ==, 1);
  g_assert_cmpuint (summary.bad_undecodable, ==, 1);
  g_assert_cmpuint (summary.bad_too_large, ==, 1);
  g_assert_cmpuint (summary.bad_unreadable, ==, can_lock ? 1 : 0);
  g_assert_nonnull (summary.problems);
  g_assert_cmpuint (summary.problems->len, ==, can_lock ? 5 : 4);
  const char *named[] = { empty, text, truncated, huge };
  const char *why[] = { "empty", "not an image", "truncated", "50000 × 50000" };
  for (gsize k = 0; k < G_N_ELEMENTS (named); k++)
    {
      gboolean found = FALSE;
      for (guint p = 0; p < summary.problems->len; p++)
        {
          const char *problem = g_ptr_array_index (summary.problems, p);
          found |= g_str_has_prefix (problem, named[k]) && strstr (problem, why[k]) != NULL;
        }
      g_assert_true (found);
    }
  if (can_lock)
    g_assert_cmpint (g_chmod (locked, 0755), ==, 0);
  else
    g_test_message ("running as root: the unreadable folder is not tested");
  lk_import_summary_clear (&summary);
  lk_test_remove_tree (root);
}

static void
test_models_missing_or_wrong_are_refused (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *models = make_dir ("models");
  g_autofree char *root = g_path_get_dirname (models);
  g_autoptr (GError) error = NULL;
  g_autofree char *saved = g_strdup (g_getenv ("LIKENESS_MODELS_DIR"));

  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  g_assert_null (lk_face_models_find (&lk_dlib_model_shape, &error));
  g_assert_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_MISSING);
  g_assert_nonnull (strstr (error->message, "shape_predictor_5_face_landmarks.dat"));
  g_assert_nonnull (strstr (error->message, models));
  g_assert_nonnull (strstr (error->message, "apt-get source"));
  g_clear_error (&error);

  g_autofree char *wrong = g_build_filename (models, "shape_predictor_5_face_landmarks.dat", NULL);
  g_assert_true (g_file_set_contents (wrong, "not the model", -1, NULL));
  g_assert_null (lk_face_models_find (&lk_dlib_model_shape, &error));
  g_assert_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_WRONG);
  g_assert_nonnull (strstr (error->message, wrong));
  g_assert_nonnull (strstr (error->message, lk_dlib_model_shape.sha256));
  g_clear_error (&error);

  /* The import stops before writing anything. */
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  g_assert_false (import (outdir, models, 1, NULL, &error));
  g_assert_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_MISSING);
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));

  g_setenv ("LIKENESS_MODELS_DIR", saved, TRUE);
  lk_test_remove_tree (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *env = g_getenv ("LK_TEST_DLIB");
  dlib_dir = g_strdup (env != NULL ? env : "_build-dlib");
  g_autofree char *models = g_build_filename (dlib_dir, "models", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  /* No model of the user's: the tests see only these. (XDG_DATA_DIRS stays:
   * gdk-pixbuf tells formats apart with the MIME database found there.) */
  g_setenv ("XDG_DATA_HOME", "/nonexistent/likeness-test", TRUE);

  g_test_add_func ("/import-photos/finds-and-embeds-real-faces", test_finds_and_embeds_real_faces);
  g_test_add_func ("/import-photos/same-library-whatever-the-threads",
                   test_same_library_whatever_the_threads);
  g_test_add_func ("/import-photos/exif-orientation-applied-before-detection",
                   test_exif_orientation_applied_before_detection);
  g_test_add_func ("/import-photos/bad-inputs-counted-and-named",
                   test_bad_inputs_counted_and_named);
  g_test_add_func ("/import-photos/models-missing-or-wrong-are-refused",
                   test_models_missing_or_wrong_are_refused);
  int status = g_test_run ();
  g_free (dlib_dir);
  return status;
}
