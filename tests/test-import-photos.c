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
#include "export/lk-export-xmp.h"
#include "import/lk-import-photos.h"
#include "import/lk-import-private.h"
#include "import/lk-photos-journal.h"
#include "library/lk-library.h"
#include "lk-test-thumbnails.h"
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
  g_autofree char *probe = g_build_filename (dlib_dir, "photos", test_photos[0], NULL);
  return lk_test_have_dlib (probe);
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
  char *dir = lk_test_make_dir ("photos");
  for (gsize k = 0; k < G_N_ELEMENTS (test_photos); k++)
    {
      g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[k], NULL);
      g_autofree char *to = g_build_filename (dir, test_photos[k], NULL);
      copy_file (from, to);
    }
  return dir;
}

/* A new folder `photos` holding good.jpg, one photo of one face (a John
 * Simm of dlib's johns), returned; *good gets good.jpg's path. */
static char *
one_face_folder (char **good)
{
  char *photos = lk_test_make_dir ("photos");
  g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[0], NULL);
  *good = g_build_filename (photos, "good.jpg", NULL);
  copy_file (from, *good);
  return photos;
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

static gboolean
import (const char *outdir, const char *folder, guint threads, LkImportSummary *summary,
        GError **error)
{
  const char *folders[] = { folder, NULL };
  LkImportPhotosOptions options = { folders, LK_DETECTOR_HOG, threads, NULL, NULL, summary };
  return lk_import_photos (outdir, &options, NULL, error);
}

/* What a test's `photos` folder holds: the user data of its g_test_add. */
typedef enum
{
  NO_PHOTOS,  /* nothing: the test writes its own */
  ALL_PHOTOS, /* the test photos (photo_folder) */
  ONE_FACE,   /* good.jpg alone (one_face_folder) */
} Holds;

static const Holds no_photos = NO_PHOTOS, all_photos = ALL_PHOTOS, one_face = ONE_FACE;

/* Every test's own temporary root, holding `photos` and the place of its
 * library (`library`, not made). Without dlib's photos and models the
 * setup skips the test (have_dlib) and makes nothing. */
typedef struct
{
  gboolean skipped;
  char *root, *photos, *outdir;
  char *good; /* ONE_FACE: photos/good.jpg */
} Photos;

static void
photos_setup (Photos *fx, gconstpointer data)
{
  if (!have_dlib ())
    {
      fx->skipped = TRUE;
      return;
    }
  switch (*(const Holds *) data)
    {
      case NO_PHOTOS:
        fx->photos = lk_test_make_dir ("photos");
        break;
      case ALL_PHOTOS:
        fx->photos = photo_folder ();
        break;
      case ONE_FACE:
        fx->photos = one_face_folder (&fx->good);
        break;
    }
  fx->root = g_path_get_dirname (fx->photos);
  fx->outdir = g_build_filename (fx->root, "library", NULL);
}

static void
photos_teardown (Photos *fx, gconstpointer data)
{
  if (fx->root != NULL)
    lk_test_remove_tree (fx->root);
  g_free (fx->root);
  g_free (fx->photos);
  g_free (fx->outdir);
  g_free (fx->good);
}

static void
test_finds_and_embeds_real_faces (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
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
  g_auto (GStrv) ids = lk_test_source_ids (outdir);
  g_autoptr (GPtrArray) lines = read_labels ();

  /* The photos stay where they are, outside the library: photo_folders
   * names the folder, each photo is relative to it, and photos[].path
   * (inside the library only) is absent. */
  g_autofree char *canonical = g_canonicalize_filename (photos, NULL);
  g_assert_cmpuint (library->n_photo_folders, ==, 1);
  g_assert_cmpstr (library->photo_folders[0], ==, canonical);
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      g_assert_null (photo->path);
      g_assert_cmpstr (photo->original, ==, ids[photo->id]);
      g_assert_cmpuint (photo->folder, ==, 0);
      g_autofree char *file = lk_library_photo_file (library, photo, NULL, 0, &error);
      g_assert_no_error (error);
      g_autofree char *expected = g_build_filename (canonical, ids[photo->id], NULL);
      g_assert_cmpstr (file, ==, expected);
      g_assert_true (g_file_test (file, G_FILE_TEST_IS_REGULAR));
    }

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
        if (j != i && lk_test_cosine (library, i, j) > best_cos)
          {
            best = j;
            best_cos = lk_test_cosine (library, i, j);
          }
      g_assert_cmpstr (labels[best], ==, labels[i]);
      g_assert_cmpfloat (best_cos, >, 0.9);
    }
  lk_import_summary_clear (&summary);
}

/* One thread or two: the same library, byte for byte (the photos are
 * assembled in walk order, and each worker's network is a copy). */
static void
test_same_library_whatever_the_threads (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root;
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
test_exif_orientation_applied_before_detection (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *from = g_build_filename (dlib_dir, "photos", "faces", "2008_001322.jpg", NULL);
  g_autofree char *turned = g_build_filename (photos, "turned.jpg", NULL);
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
test_bad_inputs_counted_and_named (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir, *good = fx->good;

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
  copy_file (good, hidden);
  g_autofree char *loop = g_build_filename (photos, "loop", NULL);
  g_assert_cmpint (symlink (".", loop), ==, 0);
  /* a folder that cannot be read (not as root: root reads it anyway) */
  g_autofree char *locked = g_build_filename (photos, "locked", NULL);
  g_assert_cmpint (g_mkdir (locked, 0755), ==, 0);
  g_autofree char *locked_photo = g_build_filename (locked, "y.jpg", NULL);
  copy_file (good, locked_photo);
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
}

static void
test_models_missing_or_wrong_are_refused (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  /* The empty photos folder stands for a models folder without the models. */
  const char *models = fx->photos, *outdir = fx->outdir;
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
  g_assert_false (import (outdir, models, 1, NULL, &error));
  g_assert_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_MISSING);
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));

  g_setenv ("LIKENESS_MODELS_DIR", saved, TRUE);
}

static void
assert_same_file (const char *a_dir, const char *b_dir, const char *name)
{
  g_autofree char *a = g_build_filename (a_dir, name, NULL);
  g_autofree char *b = g_build_filename (b_dir, name, NULL);
  g_autofree char *da = NULL, *db = NULL;
  gsize la = 0, lb = 0;
  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  g_assert_cmpmem (da, la, db, lb);
}

/* The journal of an import into `outdir`. */
static char *
journal_path (const char *outdir)
{
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autofree char *base = g_path_get_basename (outdir);
  return g_strdup_printf ("%s/.%s.photos-journal", parent, base);
}

/* A photo removed, another added, review.json beside: the re-import
 * searches only the new photo, keeps every other face's id and embedding,
 * keeps review.json, and gives the library a fresh import gives. */
static void
test_reimport_searches_only_new_photos_and_keeps_ids (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *fresh = g_build_filename (root, "fresh", NULL);
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 0);
  lk_import_summary_clear (&summary);
  g_autoptr (LkLibrary) before = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_autofree char *review = g_build_filename (outdir, "review.json", NULL);
  const char *decisions
      = "{ \"format\": \"likeness-review\", \"version\": 2, \"decisions\": [] }\n";
  g_assert_true (g_file_set_contents (review, decisions, -1, NULL));

  g_autofree char *gone = g_build_filename (photos, test_photos[0], NULL);
  g_assert_cmpint (g_unlink (gone), ==, 0);
  g_autofree char *from
      = g_build_filename (dlib_dir, "photos", "johns", "John_Salley", "000179_02159509.jpg", NULL);
  g_autofree char *added = g_build_filename (photos, "johns", "John_Salley", "new.jpg", NULL);
  copy_file (from, added);

  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_searched, ==, 8);
  g_assert_cmpuint (summary.photos_reused, ==, 7);
  g_assert_cmpuint (summary.faces, ==, 9);
  lk_import_summary_clear (&summary);
  g_autoptr (LkLibrary) after = lk_library_load (outdir, &error);
  g_assert_no_error (error);

  /* Every face of a photo still there: the same id, the same row. */
  guint kept = 0;
  for (gsize i = 0; i < before->count; i++)
    for (gsize j = 0; j < after->count; j++)
      if (strcmp (before->face_id[i], after->face_id[j]) == 0)
        {
          kept++;
          g_assert_cmpmem (lk_library_row (before, i), before->dim * sizeof (float),
                           lk_library_row (after, j), after->dim * sizeof (float));
        }
  g_assert_cmpuint (kept, ==, 8);
  g_autofree char *kept_review = NULL;
  g_assert_true (g_file_get_contents (review, &kept_review, NULL, NULL));
  g_assert_cmpstr (kept_review, ==, decisions);

  import (fresh, photos, 1, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 0);
  lk_import_summary_clear (&summary);
  assert_same_file (outdir, fresh, "library.json");
  assert_same_file (outdir, fresh, "embeddings.f32");
}

static void
cancel_after_three (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  if (phase == LK_IMPORT_PHASE_DETECT && done == 3)
    g_cancellable_cancel (data);
}

/* Stopped after 3 photos: no library, and the next run searches only the
 * other 5, to the library an uninterrupted import gives. */
static void
test_stopped_import_resumes (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *fresh = g_build_filename (root, "fresh", NULL);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  const char *folders[] = { photos, NULL };
  LkImportSummary summary = { 0 };
  LkImportPhotosOptions options
      = { folders, LK_DETECTOR_HOG, 1, cancel_after_three, cancellable, &summary, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_photos (outdir, &options, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));
  g_autofree char *journal = journal_path (outdir);
  g_assert_true (g_file_test (journal, G_FILE_TEST_EXISTS));

  options.progress = NULL;
  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 3);
  g_assert_cmpuint (summary.faces, ==, 9);
  lk_import_summary_clear (&summary);
  import (fresh, photos, 2, NULL, &error);
  g_assert_no_error (error);
  assert_same_file (outdir, fresh, "library.json");
  assert_same_file (outdir, fresh, "embeddings.f32");
}

/* likeness-cli killed (SIGKILL) once its journal holds a photo: the next
 * run reuses what was journalled, to the same library. */
static void
test_killed_import_resumes (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *fresh = g_build_filename (root, "fresh", NULL);
  g_autofree char *journal = journal_path (outdir);
  g_autoptr (GError) error = NULL;

  const char *cli = g_getenv ("LIKENESS_CLI");
  g_assert_nonnull (cli);
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (
      G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr (GSubprocess) child
      = g_subprocess_launcher_spawn (launcher, &error, cli, "import", "photos", outdir, "--photos",
                                     photos, "--threads", "1", NULL);
  g_assert_no_error (error);
  /* A header (80 bytes) and at least one whole photo's record. */
  gboolean journalled = FALSE;
  for (guint wait = 0; wait < 6000 && !journalled; wait++)
    {
      GStatBuf st;
      journalled = g_stat (journal, &st) == 0 && st.st_size > 80 + 100;
      if (!journalled)
        g_usleep (10000);
      if (g_subprocess_get_identifier (child) == NULL) /* it ended */
        break;
    }
  g_subprocess_force_exit (child);
  g_subprocess_wait (child, NULL, NULL);
  g_assert_true (journalled);

  LkImportSummary summary = { 0 };
  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, >=, 1);
  g_assert_cmpuint (summary.faces, ==, 9);
  g_test_message ("%zu of 8 photos reused after the kill", summary.photos_reused);
  lk_import_summary_clear (&summary);
  import (fresh, photos, 2, NULL, &error);
  g_assert_no_error (error);
  assert_same_file (outdir, fresh, "library.json");
  assert_same_file (outdir, fresh, "embeddings.f32");
}

/* A journal cut in the middle of a record (a kill during write) keeps its
 * whole records, and the next append goes after them; another model's
 * journal, or garbage, is ignored and started over. */
static void
test_journal_survives_a_cut_record (void)
{
  g_autofree char *dir = lk_test_make_dir ("j");
  g_autofree char *root = g_path_get_dirname (dir);
  g_autofree char *path = g_build_filename (dir, "journal", NULL);
  g_autoptr (GError) error = NULL;
  LkDetectedFace face = { { 10, 20, 30, 40 }, 1.5, { 0 } };
  float row[4] = { 0.5f, 0.5f, 0.5f, 0.5f };

  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "m", 4, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 0);
    g_assert_true (
        lk_photos_journal_append (j, "aaaaaaaaaaaaaaaa", 640, 480, &face, 1, row, &error));
    /* What was appended is looked up at once; the same digest appended
     * again (the same bytes) keeps the entry a lookup handed out. */
    const LkJournalEntry *e = lk_photos_journal_lookup (j, "aaaaaaaaaaaaaaaa");
    g_assert_nonnull (e);
    g_assert_cmpuint (e->n_faces, ==, 1);
    g_assert_cmpfloat (e->faces[0].box[1], ==, 20);
    g_assert_cmpfloat (e->floats[0], ==, 0.5f);
    g_assert_true (
        lk_photos_journal_append (j, "aaaaaaaaaaaaaaaa", 640, 480, &face, 1, row, &error));
    g_assert_true (lk_photos_journal_lookup (j, "aaaaaaaaaaaaaaaa") == e);
    g_assert_true (
        lk_photos_journal_append (j, "bbbbbbbbbbbbbbbb", 640, 480, NULL, 0, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 2);
    const LkJournalEntry *none = lk_photos_journal_lookup (j, "bbbbbbbbbbbbbbbb");
    g_assert_nonnull (none);
    g_assert_cmpuint (none->n_faces, ==, 0);
  }
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (truncate (path, st.st_size - 5), ==, 0);
  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "m", 4, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 1);
    const LkJournalEntry *e = lk_photos_journal_lookup (j, "aaaaaaaaaaaaaaaa");
    g_assert_nonnull (e);
    g_assert_cmpint (e->width, ==, 640);
    g_assert_cmpuint (e->n_faces, ==, 1);
    g_assert_cmpfloat (e->faces[0].box[3], ==, 40);
    g_assert_cmpfloat (e->faces[0].score, ==, 1.5);
    g_assert_cmpfloat (e->floats[3], ==, 0.5f);
    g_assert_null (lk_photos_journal_lookup (j, "bbbbbbbbbbbbbbbb"));
    g_assert_true (lk_photos_journal_append (j, "cccccccccccccccc", 10, 10, NULL, 0, NULL, &error));
  }
  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "m", 4, &error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 2);
  }
  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "another model", 4, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 0);
  }
  g_assert_true (g_file_set_contents (path, "garbage, not a journal", -1, NULL));
  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "m", 4, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 0);
    g_assert_true (lk_photos_journal_append (j, "dddddddddddddddd", 10, 10, NULL, 0, NULL, &error));
  }
  {
    g_autoptr (LkPhotosJournal) j = lk_photos_journal_open (path, "m", 4, &error);
    g_assert_cmpuint (lk_photos_journal_size (j), ==, 1);
  }
  lk_test_remove_tree (root);
}

typedef struct
{
  const char *doomed;
  gboolean deleted;
} DeleteJob;

static void
delete_on_first_photo (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  DeleteJob *job = data;
  if (phase == LK_IMPORT_PHASE_DETECT && !job->deleted)
    {
      g_assert_cmpint (g_unlink (job->doomed), ==, 0);
      job->deleted = TRUE;
    }
}

/* A photo listed by the walk and deleted before it is read: counted as
 * changed, named, and the rest imported. */
static void
test_photo_deleted_mid_import_is_counted (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  /* Walk order is by path: johns/John_Simm/… come last. */
  g_autofree char *doomed = g_build_filename (photos, test_photos[0], NULL);
  DeleteJob job = { doomed, FALSE };
  const char *folders[] = { photos, NULL };
  LkImportSummary summary = { 0 };
  LkImportPhotosOptions options
      = { folders, LK_DETECTOR_HOG, 1, delete_on_first_photo, &job, &summary, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.bad_changed, ==, 1);
  g_assert_cmpuint (summary.faces, ==, 8);
  g_assert_nonnull (summary.problems);
  g_assert_cmpuint (summary.problems->len, ==, 1);
  const char *problem = g_ptr_array_index (summary.problems, 0);
  g_assert_true (g_str_has_prefix (problem, doomed));
  g_assert_nonnull (strstr (problem, "deleted"));
  lk_import_summary_clear (&summary);
}

typedef struct
{
  const char *doomed; /* deleted once the last photo has been searched */
  gsize total;
} LateDeleteJob;

static void
delete_after_search (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  LateDeleteJob *job = data;
  if (phase == LK_IMPORT_PHASE_DETECT && done == job->total)
    g_assert_cmpint (g_unlink (job->doomed), ==, 0);
}

/* The bytes of face f's thumbnail in the library at `outdir`. */
static GBytes *
read_thumbnail (const char *outdir, guint f)
{
  g_autofree char *name = g_strdup_printf ("thumbs/%06u.png", f);
  g_autofree char *path = g_build_filename (outdir, name, NULL);
  char *data = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &data, &length, NULL));
  return g_bytes_new_take (data, length);
}

/* The thumbnails are cut from the image the search decoded, not from a
 * second decode when the library is written: a photo deleted after it was
 * searched still has its thumbnails (the writer alone named it missing).
 * They are the writer's: a re-import whose staged thumbnails were removed
 * cuts them again from the photos, the same squares — not byte for byte
 * since the writer decodes a JPEG's face region with libjpeg itself, where
 * the search decoded the whole photo with gdk-pixbuf: apart as the two
 * decodes of test-import-thumbnails' real photos are (4 × 4 block averages
 * 3 of 255 apart on average, 7 for any face; measured here 2.47 at most,
 * AMD EPYC Zen 1: the same on every CPU, libjpeg's integer DCT). */
static void
test_thumbnails_cut_while_searching (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *staging = g_build_filename (root, ".library.photos-thumbs", NULL);
  /* Walk order is by path: faces/2008_001322.jpg (3 faces) is searched first. */
  g_autofree char *doomed = g_build_filename (photos, test_photos[6], NULL);
  LateDeleteJob job = { doomed, G_N_ELEMENTS (test_photos) };
  const char *folders[] = { photos, NULL };
  LkImportSummary summary = { 0 };
  LkImportPhotosOptions options
      = { folders, LK_DETECTOR_HOG, 1, delete_after_search, &job, &summary, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.faces, ==, 9);
  g_assert_cmpuint (summary.thumbnails, ==, 9);
  g_assert_cmpuint (summary.missing_previews, ==, 0);
  lk_import_summary_clear (&summary);
  GBytes *made[9];
  for (guint f = 0; f < 9; f++)
    made[f] = read_thumbnail (outdir, f);
  /* One staged file per face, kept for the next import. */
  g_autoptr (GDir) dir = g_dir_open (staging, 0, &error);
  g_assert_no_error (error);
  guint staged = 0;
  while (g_dir_read_name (dir) != NULL)
    staged++;
  g_assert_cmpuint (staged, ==, 9);

  g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[6], NULL);
  copy_file (from, doomed);
  lk_test_remove_tree (staging);
  options.progress = NULL;
  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 8);
  g_assert_cmpuint (summary.thumbnails, ==, 9);
  lk_import_summary_clear (&summary);
  double sum_apart = 0;
  for (guint f = 0; f < 9; f++)
    {
      g_autoptr (GBytes) again_bytes = read_thumbnail (outdir, f);
      gsize length = 0;
      const guint8 *data = g_bytes_get_data (again_bytes, &length);
      gsize made_length = 0;
      const guint8 *made_data = g_bytes_get_data (made[f], &made_length);
      g_autoptr (GError) decode_error = NULL;
      LkThumbnail *again = lk_thumbnail_decode (data, length, "<again>", &decode_error);
      g_assert_no_error (decode_error);
      LkThumbnail *first = lk_thumbnail_decode (made_data, made_length, "<made>", &decode_error);
      g_assert_no_error (decode_error);
      g_assert_cmpuint (again->width, ==, first->width);
      g_assert_cmpuint (again->height, ==, first->height);
      double apart = block_difference (first, again);
      g_test_message ("face %u: blocks %.2f of 255 apart", f, apart);
      g_assert_cmpfloat (apart, <, 7);
      sum_apart += apart;
      lk_thumbnail_free (again);
      lk_thumbnail_free (first);
      g_bytes_unref (made[f]);
    }
  g_assert_cmpfloat (sum_apart / 9, <, 3);
}

/* A photo folder that is not there (a mistyped --photos) is refused naming
 * it, and nothing is left beside OUTDIR: no library, journal or staging
 * folder (the staging folder was made before the photo folders were
 * looked at, and stayed behind, empty). */
static void
test_missing_photo_folder_leaves_nothing (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *root = fx->root, *outdir = fx->outdir;
  g_autofree char *mistyped = g_build_filename (root, "photoss", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_false (import (outdir, mistyped, 1, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, mistyped));
  g_autoptr (GDir) dir = g_dir_open (root, 0, NULL);
  g_assert_nonnull (dir);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_cmpstr (name, ==, "photos");
}

/* The library's thumbnails, thumbs/000000.png on, as bytes. */
static GPtrArray *
read_thumbnails (const char *outdir, guint n)
{
  GPtrArray *thumbs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint f = 0; f < n; f++)
    {
      g_autofree char *name = g_strdup_printf ("thumbs/%06u.png", f);
      g_autofree char *path = g_build_filename (outdir, name, NULL);
      g_autofree char *data = NULL;
      gsize length = 0;
      g_assert_true (g_file_get_contents (path, &data, &length, NULL));
      g_ptr_array_add (thumbs, g_bytes_new_take (g_steal_pointer (&data), length));
    }
  return thumbs;
}

/* A photo larger than LK_PHOTOS_DETECT_SIDE is searched in a downscaled
 * decode; its thumbnails are the writer's, cut from the original's pixels,
 * the same bytes whether or not the search ran in this import (they were
 * cut from the downscaled image while searching: a 3 × 2048-px photo's
 * thumbnails had a third of the pixels, and differed from a re-import's). */
static void
test_large_photo_thumbnails_from_the_original (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *staging = g_build_filename (root, ".library.photos-thumbs", NULL);
  g_autoptr (GError) error = NULL;

  /* A real photo of one face, upscaled past the detection side. */
  g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[0], NULL);
  g_autoptr (GdkPixbuf) small = gdk_pixbuf_new_from_file (from, &error);
  g_assert_no_error (error);
  int w = gdk_pixbuf_get_width (small), h = gdk_pixbuf_get_height (small);
  int scale = LK_PHOTOS_DETECT_SIDE / MAX (w, h) + 2;
  g_autoptr (GdkPixbuf) large
      = gdk_pixbuf_scale_simple (small, w * scale, h * scale, GDK_INTERP_BILINEAR);
  g_assert_cmpint (MAX (w, h) * scale, >, LK_PHOTOS_DETECT_SIDE);
  g_autofree char *to = g_build_filename (photos, "large.jpg", NULL);
  g_assert_true (gdk_pixbuf_save (large, to, "jpeg", &error, "quality", "95", NULL));
  g_assert_no_error (error);

  LkImportSummary summary = { 0 };
  import (outdir, photos, 1, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_searched, ==, 1);
  guint n = summary.faces;
  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpuint (summary.thumbnails, ==, n);
  lk_import_summary_clear (&summary);
  g_autoptr (GPtrArray) searched = read_thumbnails (outdir, n);

  /* Again from the journal, nothing staged: the writer cuts them. */
  lk_test_remove_tree (staging);
  import (outdir, photos, 1, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 1);
  g_assert_cmpuint (summary.thumbnails, ==, n);
  lk_import_summary_clear (&summary);
  g_autoptr (GPtrArray) written = read_thumbnails (outdir, n);
  for (guint f = 0; f < n; f++)
    g_assert_true (g_bytes_equal (searched->pdata[f], written->pdata[f]));
}

/* The journal lost, the staged thumbnails kept: every photo is searched
 * again, and its thumbnails, already staged under the same content and box,
 * are kept as they are (the same files, not written again), to the same
 * library. */
static void
test_staged_thumbnails_kept_when_searched_again (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir;
  g_autofree char *fresh = g_build_filename (root, "fresh", NULL);
  g_autofree char *staging = g_build_filename (root, ".library.photos-thumbs", NULL);
  g_autofree char *journal = journal_path (outdir);
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  import (outdir, photos, 2, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GHashTable) inodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  {
    g_autoptr (GDir) dir = g_dir_open (staging, 0, &error);
    g_assert_no_error (error);
    const char *name;
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (staging, name, NULL);
        GStatBuf st;
        g_assert_cmpint (g_stat (path, &st), ==, 0);
        g_hash_table_insert (inodes, g_strdup (name), GSIZE_TO_POINTER ((gsize) st.st_ino));
      }
  }
  g_assert_cmpuint (g_hash_table_size (inodes), ==, 9);
  g_assert_cmpint (g_unlink (journal), ==, 0);

  import (outdir, photos, 2, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary.photos_reused, ==, 0);
  g_assert_cmpuint (summary.thumbnails, ==, 9);
  lk_import_summary_clear (&summary);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, inodes);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autofree char *path = g_build_filename (staging, key, NULL);
      GStatBuf st;
      g_assert_cmpint (g_stat (path, &st), ==, 0);
      g_assert_cmpuint ((gsize) st.st_ino, ==, GPOINTER_TO_SIZE (value));
    }
  import (fresh, photos, 1, NULL, &error);
  g_assert_no_error (error);
  assert_same_file (outdir, fresh, "library.json");
  assert_same_file (outdir, fresh, "embeddings.f32");
  for (guint f = 0; f < 9; f++)
    {
      g_autofree char *name = g_strdup_printf ("thumbs/%06u.png", f);
      assert_same_file (outdir, fresh, name);
    }
}

/* What the read hook rewrites, and with what. */
static struct
{
  const char *target;
  const char *with[2]; /* contents, alternated */
  gsize lengths[2];
  guint rewrites;
  guint max_rewrites;
} rewrite;

static void
rewrite_on_read (const char *path)
{
  if (strcmp (path, rewrite.target) != 0 || rewrite.rewrites >= rewrite.max_rewrites)
    return;
  guint k = rewrite.rewrites++ % 2;
  g_assert_true (g_file_set_contents (path, rewrite.with[k], (gssize) rewrite.lengths[k], NULL));
}

/* import () on two threads with rewrite_on_read watching every read. */
static gboolean
import_rewriting (const char *outdir, const char *folder, LkImportSummary *summary, GError **error)
{
  const char *folders[] = { folder, NULL };
  LkImportPhotosOptions options
      = { folders, LK_DETECTOR_HOG, 2, NULL, NULL, summary, NULL, rewrite_on_read };
  return lk_import_photos (outdir, &options, NULL, error);
}

/* A photo rewritten after its bytes were read and before they were decoded
 * (a photo editor saving, a sync client replacing it): the face found is the
 * new photo's, under the new content's id, never the new pixels under the
 * old bytes' hash. */
static void
test_photo_rewritten_mid_import_takes_the_consistent_version (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *target = g_build_filename (photos, test_photos[3], NULL);
  g_autofree char *other_path
      = g_build_filename (dlib_dir, "photos", "johns", "John_Salley", "000179_02159509.jpg", NULL);
  g_autofree char *other = NULL;
  gsize other_length = 0;
  g_assert_true (g_file_get_contents (other_path, &other, &other_length, NULL));
  rewrite.target = target;
  rewrite.with[0] = rewrite.with[1] = other;
  rewrite.lengths[0] = rewrite.lengths[1] = other_length;
  rewrite.rewrites = 0;
  rewrite.max_rewrites = 1;
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  import_rewriting (outdir, photos, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rewrite.rewrites, ==, 1);
  g_assert_cmpuint (summary.bad_changed, ==, 0);
  g_assert_cmpuint (summary.faces, ==, 9);
  lk_import_summary_clear (&summary);
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_auto (GStrv) ids = lk_test_source_ids (outdir);
  g_autofree char *sum
      = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) other, other_length);
  g_autofree char *digest = g_strndup (sum, 16);
  guint found = 0;
  for (gsize k = 0; k < library->count; k++)
    if (strcmp (ids[library->photo[k]], test_photos[3]) == 0)
      {
        found++;
        g_assert_true (g_str_has_prefix (library->face_id[k], digest));
      }
  g_assert_cmpuint (found, ==, 1);
}

/* A photo that changes at every reading (a file still being written): read
 * three times, then counted as changed and named; the rest imported. */
static void
test_photo_changing_while_read_is_counted (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *target = g_build_filename (photos, test_photos[3], NULL);
  g_autofree char *a = NULL, *b = NULL;
  gsize la = 0, lb = 0;
  g_autofree char *a_path
      = g_build_filename (dlib_dir, "photos", "johns", "John_Salley", "000179_02159509.jpg", NULL);
  g_assert_true (g_file_get_contents (a_path, &a, &la, NULL));
  g_assert_true (g_file_get_contents (target, &b, &lb, NULL));
  rewrite.target = target;
  rewrite.with[0] = a;
  rewrite.with[1] = b;
  rewrite.lengths[0] = la;
  rewrite.lengths[1] = lb;
  rewrite.rewrites = 0;
  rewrite.max_rewrites = G_MAXUINT;
  LkImportSummary summary = { 0 };
  g_autoptr (GError) error = NULL;

  import_rewriting (outdir, photos, &summary, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rewrite.rewrites, ==, 3);
  g_assert_cmpuint (summary.bad_changed, ==, 1);
  g_assert_cmpuint (summary.faces, ==, 8);
  g_assert_nonnull (summary.problems);
  g_assert_cmpuint (summary.problems->len, ==, 1);
  const char *problem = g_ptr_array_index (summary.problems, 0);
  g_assert_true (g_str_has_prefix (problem, target));
  g_assert_nonnull (strstr (problem, "changed while the import read it"));
  lk_import_summary_clear (&summary);
}

/* A folder the importing user cannot read: counted as unreadable and named,
 * the other photos imported. Root reads every folder, so as root the CLI is
 * run as nobody (setpriv); without setpriv, or where nobody cannot read the
 * models, the test says so and skips. */
static void
test_unreadable_folder_counted_and_named (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root, *outdir = fx->outdir, *good = fx->good;
  g_autofree char *locked = g_build_filename (photos, "locked", NULL);
  g_autofree char *locked_photo = g_build_filename (locked, "y.jpg", NULL);
  copy_file (good, locked_photo);
  g_assert_cmpint (g_chmod (locked, 0), ==, 0);
  const char *cli = g_getenv ("LIKENESS_CLI");
  g_assert_nonnull (cli);
  g_autofree char *models = g_build_filename (dlib_dir, "models", NULL);
  g_autofree char *cache = g_build_filename (root, "cache", NULL);
  g_autofree char *setpriv = g_find_program_in_path ("setpriv");

  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  if (geteuid () == 0)
    {
      if (setpriv == NULL)
        {
          g_test_skip ("running as root without setpriv: root reads every folder");
          g_assert_cmpint (g_chmod (locked, 0755), ==, 0);
          return;
        }
      /* Everything nobody needs: the folders (mkdtemp makes them 0700). */
      const char *mine[] = { root, photos, good };
      for (gsize k = 0; k < G_N_ELEMENTS (mine); k++)
        g_assert_cmpint (chown (mine[k], 65534, 65534), ==, 0);
      /* By its full path, as the CLI finds it: every folder above must let nobody through. */
      g_autofree char *model = g_build_filename (models, lk_dlib_model_shape.file, NULL);
      const char *probe[] = {
        setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", model, NULL
      };
      g_autoptr (GSubprocess) p = g_subprocess_newv (probe, G_SUBPROCESS_FLAGS_NONE, NULL);
      if (p == NULL || !g_subprocess_wait_check (p, NULL, NULL))
        {
          g_test_skip ("nobody cannot read the models here: the unreadable folder is not tested");
          g_assert_cmpint (g_chmod (locked, 0755), ==, 0);
          return;
        }
      const char *as_nobody[] = { setpriv, "--reuid=65534", "--regid=65534", "--clear-groups" };
      for (gsize k = 0; k < G_N_ELEMENTS (as_nobody); k++)
        g_ptr_array_add (argv, (gpointer) as_nobody[k]);
    }
  const char *command[] = { cli, "import", "photos", outdir, "--photos", photos, "--threads", "1" };
  for (gsize k = 0; k < G_N_ELEMENTS (command); k++)
    g_ptr_array_add (argv, (gpointer) command[k]);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (
      G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_setenv (launcher, "LIKENESS_MODELS_DIR", models, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CACHE_HOME", cache, TRUE);
  g_subprocess_launcher_setenv (launcher, "HOME", root, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) child
      = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_autofree char *out = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (child, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_true (g_subprocess_get_if_exited (child));
  g_assert_cmpint (g_subprocess_get_exit_status (child), ==, 0);
  g_assert_nonnull (strstr (out, "Imported 1 face of 1 photo"));
  g_assert_nonnull (strstr (out, "unreadable=1"));
  g_autofree char *named = g_strdup_printf ("%s: the folder cannot be read", locked);
  g_assert_nonnull (strstr (out, named));
  g_assert_cmpint (g_chmod (locked, 0755), ==, 0);
}

/* dlib's HOG detector decoded from libdlib (cache cold), read back from the
 * user's cache (warm), and decoded again after the cache file was altered:
 * the same library, byte for byte, and the altered file rewritten whole. */
static void
test_hog_detector_cache_gives_the_same_library (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *root = fx->root;
  g_autofree char *cache = lk_face_engine_dlib_hog_cache_path ();
  const char *runs[] = { "cold", "warm", "altered" };
  g_autofree char *written = NULL;
  gsize written_length = 0;
  g_autoptr (GError) error = NULL;

  g_unlink (cache);
  for (gsize r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      if (r == 2)
        {
          /* One byte of the detector's weights changed, after its digest. */
          g_autofree char *bytes = g_memdup2 (written, written_length);
          bytes[written_length / 2] ^= 0x01;
          g_assert_true (g_file_set_contents (cache, bytes, (gssize) written_length, NULL));
        }
      g_autofree char *outdir = g_build_filename (root, runs[r], NULL);
      import (outdir, photos, 2, NULL, &error);
      g_assert_no_error (error);
      g_autofree char *now = NULL;
      gsize now_length = 0;
      g_assert_true (g_file_get_contents (cache, &now, &now_length, NULL));
      g_assert_cmpuint (now_length, >, 100000);
      if (r == 0)
        {
          written = g_steal_pointer (&now);
          written_length = now_length;
          continue;
        }
      g_assert_cmpmem (now, now_length, written, written_length);
      g_autofree char *cold = g_build_filename (root, runs[0], NULL);
      assert_same_file (cold, outdir, "library.json");
      assert_same_file (cold, outdir, "embeddings.f32");
    }
}

/* likeness-cli import photos: the summary on stdout names every refusal;
 * a missing --photos is a usage error. */
static void
test_cli_import_photos (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *empty = g_build_filename (photos, "empty.jpg", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photos", outdir, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--photos DIR is required"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photos", outdir, "--photos", photos,
                                    "--threads", "1", NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "Imported 1 face of 1 photo"));
  g_assert_nonnull (strstr (out, "photos_searched=1 photos_with_faces=1 photos_reused=0"));
  g_assert_nonnull (strstr (out, "refused: empty=1 not_image=0"));
  g_assert_nonnull (strstr (out, "formats read: jpeg, png"));
  g_assert_nonnull (strstr (out, empty));
  g_assert_nonnull (strstr (err, "photos searched"));
}

/* --detector cnn: dlib's MMOD CNN finds the same three people of the VOC
 * photo (boxes placed differently from HOG's, each on a labelled face). */
static void
test_cnn_detector_finds_the_faces (Photos *fx, gconstpointer user_data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *from = g_build_filename (dlib_dir, "photos", "faces", "2008_001322.jpg", NULL);
  g_autofree char *to = g_build_filename (photos, "faces", "2008_001322.jpg", NULL);
  copy_file (from, to);
  const char *folders[] = { photos, NULL };
  LkImportSummary summary = { 0 };
  LkImportPhotosOptions options = { folders, LK_DETECTOR_CNN, 1, NULL, NULL, &summary, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.faces, ==, 3);
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) lines = read_labels ();
  const char *ids[] = { "faces/2008_001322.jpg", NULL };
  for (gsize k = 0; k < library->count; k++)
    g_assert_nonnull (face_label (library, NULL, k, lines, ids));
  lk_import_summary_clear (&summary);
}

/* Every file under `dir`, relative, sorted, with its SHA-256: what a run
 * must leave as it was. */
static void
list_tree (const char *dir, const char *relative, GPtrArray *out)
{
  g_autofree char *path
      = relative[0] != '\0' ? g_build_filename (dir, relative, NULL) : g_strdup (dir);
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  g_assert_nonnull (d);
  for (const char *name; (name = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *child
          = relative[0] != '\0' ? g_build_filename (relative, name, NULL) : g_strdup (name);
      g_autofree char *full = g_build_filename (dir, child, NULL);
      if (g_file_test (full, G_FILE_TEST_IS_DIR))
        list_tree (dir, child, out);
      else
        {
          g_autofree char *data = NULL;
          gsize length = 0;
          g_assert_true (g_file_get_contents (full, &data, &length, NULL));
          g_autofree char *sum
              = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) data, length);
          g_ptr_array_add (out, g_strdup_printf ("%s %s", child, sum));
        }
    }
}

static int
compare_lines (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static GPtrArray *
tree (const char *dir)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  list_tree (dir, "", out);
  g_ptr_array_sort (out, compare_lines);
  return out;
}

/* ExifTool's regions of `sidecar`, as Immich places them (orientation 1:
 * corners from the centre), checked against the library's faces of
 * `photo`: each within a pixel of one. Returns the regions read. */
static guint
check_regions (const char *exiftool, const char *sidecar, const LkLibrary *library, guint64 photo)
{
  const char *argv[] = { exiftool, "-j", "-struct", "-n", "-RegionInfo", sidecar, NULL };
  g_autofree char *out = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  JsonObject *o
      = json_array_get_object_element (json_node_get_array (json_parser_get_root (parser)), 0);
  JsonObject *info = json_object_get_object_member (o, "RegionInfo");
  JsonObject *dims = json_object_get_object_member (info, "AppliedToDimensions");
  double dw = json_object_get_double_member (dims, "W"),
         dh = json_object_get_double_member (dims, "H");
  JsonArray *list = json_object_get_array_member (info, "RegionList");
  guint n = json_array_get_length (list);
  for (guint r = 0; r < n; r++)
    {
      JsonObject *region = json_array_get_object_element (list, r);
      JsonObject *area = json_object_get_object_member (region, "Area");
      double x = json_object_get_double_member (area, "X"),
             y = json_object_get_double_member (area, "Y");
      double w = json_object_get_double_member (area, "W"),
             h = json_object_get_double_member (area, "H");
      double c[4] = { (x - w / 2) * dw, (y - h / 2) * dh, (x + w / 2) * dw, (y + h / 2) * dh };
      gboolean found = FALSE;
      for (gsize f = 0; f < library->count && !found; f++)
        {
          const double *b = library->box[f];
          if (library->photo[f] != photo)
            continue;
          double want[4] = { b[0], b[1], b[0] + b[2], b[1] + b[3] };
          found = TRUE;
          for (int k = 0; k < 4; k++)
            found &= fabs (c[k] - want[k]) <= 1.0;
        }
      g_test_message ("%s: “%s” at %.1f,%.1f–%.1f,%.1f", sidecar,
                      json_object_get_string_member (region, "Name"), c[0], c[1], c[2], c[3]);
      if (!found)
        g_error ("%s: region %u is on no face the library found on that photo", sidecar, r);
    }
  return n;
}

/* likeness-cli export --xmp on a library made from two photo folders (issue
 * 32 on issue 31's libraries): the sidecars land beside the originals, in
 * the folders photo_folders names, ExifTool reads every named face back
 * within a pixel of its box; the library folder gains only review.json (and
 * its lock), no original changes a byte. The folders moved (another
 * computer, a renamed disk), each photo is reported missing, named with
 * where it was looked for, and --map OLD=NEW finds them again. */
static void
test_xmp_sidecars_beside_the_originals (void)
{
  if (!have_dlib ())
    return;
  g_autofree char *exiftool = g_find_program_in_path ("exiftool");
  if (!lk_export_xmp_supported () || exiftool == NULL)
    {
      lk_test_skip_unless_required ("LK_TEST_REQUIRE_EXIFTOOL",
                                    !lk_export_xmp_supported ()
                                        ? "built without gexiv2 (-Dxmp)"
                                        : "no exiftool (libimage-exiftool-perl)");
      return;
    }
  g_autofree char *first = lk_test_make_dir ("johns-folder");
  g_autofree char *root = g_path_get_dirname (first);
  g_autofree char *second = g_build_filename (root, "faces-folder", NULL);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  for (gsize k = 0; k < G_N_ELEMENTS (test_photos); k++)
    {
      g_autofree char *from = g_build_filename (dlib_dir, "photos", test_photos[k], NULL);
      g_autofree char *to = g_build_filename (
          g_str_has_prefix (test_photos[k], "johns/") ? first : second, test_photos[k], NULL);
      copy_file (from, to);
    }
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photos", outdir, "--photos", first,
                                    "--photos", second, "--threads", "2", NULL),
                   ==, 0);
  g_autoptr (GPtrArray) library_before = tree (outdir);
  g_autoptr (GPtrArray) first_before = tree (first);
  g_autoptr (GPtrArray) second_before = tree (second);

  /* Every person named. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, NULL, "people", outdir, NULL), ==, 0);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  guint named = 0, named_faces = 0;
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto (GStrv) f = g_strsplit (*l, "\t", -1);
      if (g_strv_length (f) < 3 || strcmp (f[0], "unassigned") == 0)
        continue;
      g_autofree char *name = g_strdup_printf ("Person %u", named++);
      named_faces += (guint) g_ascii_strtoull (f[2], NULL, 10);
      g_assert_cmpint (lk_test_run_cli (NULL, NULL, "review", outdir, "name", f[0], name, NULL), ==,
                       0);
    }
  g_assert_cmpuint (named, >=, 2); /* the two johns at least */

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", outdir, "--xmp", NULL), ==, 0);
  g_test_message ("%s%s", out, err);
  g_assert_nonnull (strstr (out, " 0 updated, 0 unchanged, 0 refused, 0 failed"));

  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->n_photo_folders, ==, 2);
  guint regions = 0, sidecars = 0;
  for (gsize p = 0; p < library->n_photos; p++)
    {
      g_autofree char *file = lk_library_photo_file (library, &library->photos[p], NULL, 0, &error);
      g_assert_no_error (error);
      g_assert_true (g_str_has_prefix (file, library->photo_folders[library->photos[p].folder]));
      g_autofree char *sidecar = g_strconcat (file, ".xmp", NULL);
      if (!g_file_test (sidecar, G_FILE_TEST_EXISTS))
        continue;
      sidecars++;
      regions += check_regions (exiftool, sidecar, library, library->photos[p].id);
    }
  g_assert_cmpuint (regions, ==, named_faces);
  g_assert_cmpuint (sidecars, >=, 6);

  /* The library folder gained review.json and its lock, nothing else; the
   * photo folders gained sidecars, and no original changed a byte. */
  g_autoptr (GPtrArray) library_after = tree (outdir);
  guint kept = 0;
  for (guint k = 0; k < library_after->len; k++)
    {
      const char *line = g_ptr_array_index (library_after, k);
      if (g_str_has_prefix (line, "review.json ") || g_str_has_prefix (line, ".review.json.lock "))
        continue;
      g_assert_true (g_ptr_array_find_with_equal_func (library_before, line, g_str_equal, NULL));
      kept++;
    }
  g_assert_cmpuint (kept, ==, library_before->len);
  const char *folders[] = { first, second };
  GPtrArray *befores[] = { first_before, second_before };
  for (guint r = 0; r < 2; r++)
    {
      g_autoptr (GPtrArray) after = tree (folders[r]);
      guint originals = 0;
      for (guint k = 0; k < after->len; k++)
        {
          const char *line = g_ptr_array_index (after, k);
          if (strstr (line, ".xmp ") != NULL)
            continue;
          g_assert_true (g_ptr_array_find_with_equal_func (befores[r], line, g_str_equal, NULL));
          originals++;
        }
      g_assert_cmpuint (originals, ==, befores[r]->len);
    }

  /* The first folder moved, and with it every photo of a named person (the
   * VOC photo's three faces are unassigned: nobody's): each is named as
   * missing, where it was looked for, and with no sidecar to write the
   * export fails; the second folder's files are left as they are. */
  g_autofree char *moved = g_strconcat (first, "-moved", NULL);
  g_assert_cmpint (g_rename (first, moved), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", outdir, "--xmp", NULL), ==, 1);
  g_test_message ("%s%s", out, err);
  g_assert_nonnull (strstr (out, " 0 created, 0 updated, "));
  g_assert_null (strstr (out, " 0 refused"));
  g_autofree char *looked = g_build_filename (first, test_photos[0], NULL);
  g_assert_nonnull (strstr (err, looked));
  g_assert_nonnull (strstr (err, "is where the library says (the first: "));
  g_assert_nonnull (strstr (err, "no sidecar was written"));
  /* Mapped to where it went: every sidecar is found there, as it was. */
  g_autofree char *map = g_strdup_printf ("%s=%s", first, moved);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", outdir, "--xmp", "--map", map, NULL), ==,
                   0);
  g_test_message ("%s%s", out, err);
  g_assert_nonnull (strstr (out, " 0 created, 0 updated, "));
  g_assert_nonnull (strstr (out, " 0 refused, 0 failed"));
  lk_test_remove_tree (root);
}

static void
touch (const char *root, const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, "x", 1, NULL));
}

/* A folder of photos (in it or one folder down, hidden ones left out) is
 * told from a library (library.json, whatever images it holds) and from a
 * folder of neither, by names only. */
static void
test_probe_tells_photos_from_a_library (void)
{
  g_autofree char *root = g_dir_make_tmp ("lk-probe-XXXXXX", NULL);
  struct
  {
    const char *name;
    const char *files[3];
    gboolean photos;
  } cases[] = {
    { "top", { "IMG_0001.JPG", "notes.txt" }, TRUE },
    { "below", { "2019/summer.heic", "readme" }, TRUE },
    { "hidden", { ".thumbnails/a.png", ".b.jpg" }, FALSE },
    { "deep", { "2019/07/a.jpg" }, FALSE },
    { "library", { "library.json", "thumbs/0.png" }, FALSE },
    { "neither", { "a.txt", "b/c.pdf" }, FALSE },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *folder = g_build_filename (root, cases[k].name, NULL);
      g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
      for (gsize f = 0; f < G_N_ELEMENTS (cases[k].files) && cases[k].files[f] != NULL; f++)
        touch (folder, cases[k].files[f]);
      g_test_message ("%s", cases[k].name);
      g_assert_cmpint (lk_import_photos_probe (folder), ==, cases[k].photos);
    }
  g_autofree char *missing = g_build_filename (root, "missing", NULL);
  g_assert_false (lk_import_photos_probe (missing));
  lk_test_remove_tree (root);
}

/* The models a detector needs and that are in no model folder are named,
 * by presence only (an empty file counts: its SHA-256 is checked when an
 * import loads it), with the folders looked in. */
static void
test_missing_models_named (void)
{
  g_autofree char *saved = g_strdup (g_getenv ("LIKENESS_MODELS_DIR"));
  g_autofree char *root = g_dir_make_tmp ("lk-models-XXXXXX", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", root, TRUE);
  g_auto (GStrv) looked = NULL;
  g_auto (GStrv) hog = lk_import_photos_missing_models (LK_DETECTOR_HOG, &looked);
  if (hog[0] == NULL)
    {
      g_setenv ("LIKENESS_MODELS_DIR", saved, TRUE);
      lk_test_remove_tree (root);
      g_test_skip ("the face models are installed in a system data folder");
      return;
    }
  g_assert_cmpstr (looked[0], ==, root);
  g_assert_cmpuint (g_strv_length (hog), ==, 2);
  g_assert_true (g_strv_contains ((const char *const *) hog, lk_dlib_model_recognition.file));
  g_assert_true (g_strv_contains ((const char *const *) hog, lk_dlib_model_shape.file));
  g_auto (GStrv) cnn = lk_import_photos_missing_models (LK_DETECTOR_CNN, NULL);
  g_assert_cmpuint (g_strv_length (cnn), ==, 3);

  touch (root, lk_dlib_model_recognition.file);
  touch (root, lk_dlib_model_shape.file);
  g_auto (GStrv) none = lk_import_photos_missing_models (LK_DETECTOR_HOG, NULL);
  g_assert_cmpuint (g_strv_length (none), ==, 0);
  g_auto (GStrv) detector = lk_import_photos_missing_models (LK_DETECTOR_CNN, NULL);
  g_assert_cmpstrv (detector, ((const char *const[]){ lk_dlib_model_cnn.file, NULL }));

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

  g_test_add_func ("/import-photos/probe-tells-photos-from-a-library",
                   test_probe_tells_photos_from_a_library);
  g_test_add_func ("/import-photos/missing-models-named", test_missing_models_named);
  g_test_add ("/import-photos/finds-and-embeds-real-faces", Photos, &all_photos, photos_setup,
              test_finds_and_embeds_real_faces, photos_teardown);
  g_test_add ("/import-photos/same-library-whatever-the-threads", Photos, &all_photos, photos_setup,
              test_same_library_whatever_the_threads, photos_teardown);
  g_test_add ("/import-photos/exif-orientation-applied-before-detection", Photos, &no_photos,
              photos_setup, test_exif_orientation_applied_before_detection, photos_teardown);
  g_test_add ("/import-photos/bad-inputs-counted-and-named", Photos, &one_face, photos_setup,
              test_bad_inputs_counted_and_named, photos_teardown);
  g_test_add ("/import-photos/reimport-searches-only-new-photos-and-keeps-ids", Photos, &all_photos,
              photos_setup, test_reimport_searches_only_new_photos_and_keeps_ids, photos_teardown);
  g_test_add ("/import-photos/stopped-import-resumes", Photos, &all_photos, photos_setup,
              test_stopped_import_resumes, photos_teardown);
  g_test_add ("/import-photos/killed-import-resumes", Photos, &all_photos, photos_setup,
              test_killed_import_resumes, photos_teardown);
  g_test_add ("/import-photos/photo-deleted-mid-import-is-counted", Photos, &all_photos,
              photos_setup, test_photo_deleted_mid_import_is_counted, photos_teardown);
  g_test_add ("/import-photos/thumbnails-cut-while-searching", Photos, &all_photos, photos_setup,
              test_thumbnails_cut_while_searching, photos_teardown);
  g_test_add ("/import-photos/missing-photo-folder-leaves-nothing", Photos, &no_photos,
              photos_setup, test_missing_photo_folder_leaves_nothing, photos_teardown);
  g_test_add ("/import-photos/large-photo-thumbnails-from-the-original", Photos, &no_photos,
              photos_setup, test_large_photo_thumbnails_from_the_original, photos_teardown);
  g_test_add ("/import-photos/staged-thumbnails-kept-when-searched-again", Photos, &all_photos,
              photos_setup, test_staged_thumbnails_kept_when_searched_again, photos_teardown);
  g_test_add ("/import-photos/photo-rewritten-mid-import-takes-the-consistent-version", Photos,
              &all_photos, photos_setup,
              test_photo_rewritten_mid_import_takes_the_consistent_version, photos_teardown);
  g_test_add ("/import-photos/photo-changing-while-read-is-counted", Photos, &all_photos,
              photos_setup, test_photo_changing_while_read_is_counted, photos_teardown);
  g_test_add ("/import-photos/unreadable-folder-counted-and-named", Photos, &one_face, photos_setup,
              test_unreadable_folder_counted_and_named, photos_teardown);
  g_test_add ("/import-photos/hog-detector-cache-gives-the-same-library", Photos, &all_photos,
              photos_setup, test_hog_detector_cache_gives_the_same_library, photos_teardown);
  g_test_add ("/import-photos/cli-import-photos", Photos, &one_face, photos_setup,
              test_cli_import_photos, photos_teardown);
  g_test_add_func ("/import-photos/xmp-sidecars-beside-the-originals",
                   test_xmp_sidecars_beside_the_originals);
  g_test_add ("/import-photos/cnn-detector-finds-the-faces", Photos, &no_photos, photos_setup,
              test_cnn_detector_finds_the_faces, photos_teardown);
  g_test_add_func ("/import-photos/journal-survives-a-cut-record",
                   test_journal_survives_a_cut_record);
  g_test_add ("/import-photos/models-missing-or-wrong-are-refused", Photos, &no_photos,
              photos_setup, test_models_missing_or_wrong_are_refused, photos_teardown);
  int status = g_test_run ();
  g_free (dlib_dir);
  return status;
}
