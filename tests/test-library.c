/* test-library — every rule of LIBRARY-FORMAT.md v1, each fed a bad library
 *
 * Each test writes a library into a fresh temporary folder: a manifest that
 * differs from a good one by one edit, and the embedding rows. Errors are
 * checked for their domain and code and for naming the field, the face and
 * the numbers involved.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "library/lk-json.h"
#include "library/lk-library.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

#define GOOD_MANIFEST                                                                              \
  "{\n"                                                                                            \
  "  \"format\": \"likeness-library\",\n"                                                          \
  "  \"version\": 1,\n"                                                                            \
  "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 4, \"count\": 3 },\n"                \
  "  \"faces\": [\n"                                                                               \
  "    { \"photo\": 7, \"crop_px\": 150.0 },\n"                                                    \
  "    { \"photo\": 7, \"crop_px\": 96 },\n"                                                       \
  "    { \"photo\": 9, \"crop_px\": 310.5, \"quality\": 0.4 }\n"                                   \
  "  ]\n"                                                                                          \
  "}\n"

/* Rows e0, e1, e2 of a 4-dimensional space: unit norm. */
static const float good_rows[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_set_up (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  fixture->dir = g_dir_make_tmp ("test-library-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *fixture, gconstpointer data)
{
  lk_test_remove_tree (fixture->dir);
  g_free (fixture->dir);
}

static void
write_file (const char *dir, const char *name, const void *data, gssize length)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_file_set_contents (path, data, length, &error);
  g_assert_no_error (error);
}

static void
write_rows (const char *dir, const float *rows, gsize n)
{
  g_assert_true (G_BYTE_ORDER == G_LITTLE_ENDIAN);
  write_file (dir, "embeddings.f32", rows, (gssize) (n * sizeof (float)));
}

/* GOOD_MANIFEST with the one occurrence of `from` replaced by `to`. */
static char *
manifest_with (const char *from, const char *to)
{
  const char *at = strstr (GOOD_MANIFEST, from);
  g_assert_nonnull (at);
  g_assert_null (strstr (at + 1, from));
  return g_strdup_printf ("%.*s%s%s", (int) (at - GOOD_MANIFEST), GOOD_MANIFEST, to,
                          at + strlen (from));
}

static void
write_library (const char *dir, const char *manifest)
{
  write_file (dir, "library.json", manifest, -1);
  write_rows (dir, good_rows, G_N_ELEMENTS (good_rows));
}

/* Checks the error's domain and code, and that its message holds every one
 * of the NULL-terminated fragments. */
static void G_GNUC_NULL_TERMINATED
assert_error (const GError *error, int code, ...)
{
  va_list args;
  const char *fragment;

  g_assert_nonnull (error);
  g_test_message ("error: %s", error->message);
  g_assert_error (error, LK_LIBRARY_ERROR, code);
  va_start (args, code);
  while ((fragment = va_arg (args, const char *)) != NULL)
    if (strstr (error->message, fragment) == NULL)
      g_error ("“%s” does not mention “%s”", error->message, fragment);
  va_end (args);
}

/* Loads `manifest` with the good rows and expects an error of `code`. */
static GError *
load_error (Fixture *fixture, const char *manifest)
{
  GError *error = NULL;
  write_library (fixture->dir, manifest);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_null (library);
  return error;
}

static LkLibrary *
load_ok (Fixture *fixture, const char *manifest)
{
  g_autoptr (GError) error = NULL;
  write_library (fixture->dir, manifest);
  LkLibrary *library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  g_assert_nonnull (library);
  return library;
}

/* Replaces `from` in GOOD_MANIFEST by `to` and expects an error naming the
 * fragments. */
#define EXPECT_EDIT_ERROR(fixture, from, to, code, ...)                                            \
  G_STMT_START                                                                                     \
  {                                                                                                \
    g_autofree char *m_ = manifest_with (from, to);                                                \
    g_autoptr (GError) e_ = load_error (fixture, m_);                                              \
    assert_error (e_, code, __VA_ARGS__, NULL);                                                    \
  }                                                                                                \
  G_STMT_END

/* ── Good libraries ──────────────────────────────────────────────────────── */

static void
test_defaults_applied (Fixture *fixture, gconstpointer data)
{
  g_autoptr (LkLibrary) library = load_ok (fixture, GOOD_MANIFEST);
  g_autofree char *real = realpath (fixture->dir, NULL);

  g_assert_cmpstr (library->folder, ==, real);
  g_assert_true (g_str_has_suffix (library->embeddings_path, "/embeddings.f32"));
  g_assert_cmpuint (library->dim, ==, 4);
  g_assert_cmpuint (library->count, ==, 3);
  g_assert_true (library->normalized_on_disk);
  g_assert_cmpfloat (library->calibration.a, ==, 30.0);
  g_assert_cmpfloat (library->calibration.b, ==, -10.5);
  g_assert_cmpfloat (library->calibration.w_size, ==, 0.0);
  g_assert_cmpint (library->calibration.positive_pairs, ==, 0);
  g_assert_cmpint (library->calibration.negative_pairs, ==, 0);
  g_assert_cmpfloat (library->min_probability, ==, 0.9);
  g_assert_cmpfloat (library->min_gallery_quality, ==, 0.5);
  g_assert_cmpuint (library->n_photos, ==, 0);
  g_assert_null (lk_library_find_photo (library, 7));

  g_assert_cmpuint (library->photo[0], ==, 7);
  g_assert_cmpuint (library->photo[2], ==, 9);
  g_assert_cmpfloat (library->crop_px[1], ==, 96.0f);
  g_assert_cmpfloat (library->crop_px[2], ==, 310.5f);
  g_assert_cmpfloat (library->quality[0], ==, 1.0f);
  g_assert_cmpfloat (library->quality[2], ==, 0.4f);
  g_assert_cmpuint (library->gallery[0], ==, 1);
  g_assert_cmpuint (library->gallery[2], ==, 0);
  for (gsize i = 0; i < 3; i++)
    {
      g_assert_null (library->thumbnail[i]);
      g_assert_null (library->label[i]);
      g_assert_false (library->has_box[i]);
      g_assert_null (lk_library_thumbnail_path (library, i));
      g_assert_cmpmem (lk_library_row (library, i), 4 * sizeof (float), good_rows + 4 * i,
                       4 * sizeof (float));
    }
}

static void
test_every_field_read (Fixture *fixture, gconstpointer data)
{
  const char *manifest
      = "{ \"format\": \"likeness-library\", \"version\": 1,\n"
        "  \"embeddings\": { \"file\": \"rows.bin\", \"dim\": 4, \"count\": 3,\n"
        "                    \"normalized\": true },\n"
        "  \"calibration\": { \"a\": 25.5, \"b\": -8, \"w_size\": 0.25,\n"
        "                     \"positive_pairs\": 120, \"negative_pairs\": 4000 },\n"
        "  \"min_probability\": 0.75, \"min_gallery_quality\": 0.4,\n"
        "  \"photos\": [ { \"id\": 7, \"path\": \"2019/IMG_0042.jpg\", \"width\": 4032,\n"
        "                  \"height\": 3024, \"taken\": \"2019-06-01T10:00:00Z\" },\n"
        "                { \"id\": 9007199254740991 } ],\n"
        "  \"faces\": [\n"
        "    { \"photo\": 7, \"crop_px\": 150.0, \"quality\": 0.83,\n"
        "      \"thumbnail\": \"thumbs/000000.png\", \"box\": [1200, 800, 240, 240.5],\n"
        "      \"label\": \"p0007\" },\n"
        "    { \"photo\": 7, \"crop_px\": 96.0, \"quality\": 0.39 },\n"
        "    { \"photo\": 9007199254740991, \"crop_px\": 310.5, \"quality\": 0.4 } ] }\n";
  g_autoptr (GError) error = NULL;

  write_file (fixture->dir, "library.json", manifest, -1);
  write_file (fixture->dir, "rows.bin", good_rows, sizeof good_rows);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);

  g_assert_true (g_str_has_suffix (library->embeddings_path, "/rows.bin"));
  g_assert_cmpfloat (library->calibration.a, ==, 25.5);
  g_assert_cmpfloat (library->calibration.b, ==, -8.0);
  g_assert_cmpfloat (library->calibration.w_size, ==, 0.25);
  g_assert_cmpint (library->calibration.positive_pairs, ==, 120);
  g_assert_cmpint (library->calibration.negative_pairs, ==, 4000);
  g_assert_cmpfloat (library->min_probability, ==, 0.75);
  g_assert_cmpfloat (library->min_gallery_quality, ==, 0.4);

  g_assert_cmpuint (library->n_photos, ==, 2);
  const LkPhoto *photo = lk_library_find_photo (library, 7);
  g_assert_true (photo == &library->photos[0]);
  g_assert_cmpstr (photo->path, ==, "2019/IMG_0042.jpg");
  g_assert_cmpint (photo->width, ==, 4032);
  g_assert_cmpint (photo->height, ==, 3024);
  g_assert_cmpstr (photo->taken, ==, "2019-06-01T10:00:00Z");
  photo = lk_library_find_photo (library, 9007199254740991);
  g_assert_true (photo == &library->photos[1]);
  g_assert_null (photo->path);
  g_assert_cmpint (photo->width, ==, 0);
  g_assert_null (photo->taken);
  g_assert_null (lk_library_find_photo (library, 8));

  g_assert_cmpuint (library->photo[2], ==, 9007199254740991);
  g_assert_cmpfloat (library->quality[0], ==, 0.83f);
  /* quality 0.39 < 0.4 is a probe; 0.4 >= 0.4 is gallery, although the float
   * 0.4f is a little less than the double 0.4. */
  g_assert_cmpuint (library->gallery[0], ==, 1);
  g_assert_cmpuint (library->gallery[1], ==, 0);
  g_assert_cmpuint (library->gallery[2], ==, 1);
  g_assert_cmpstr (library->thumbnail[0], ==, "thumbs/000000.png");
  g_assert_cmpstr (library->label[0], ==, "p0007");
  g_assert_null (library->label[1]);
  g_assert_true (library->has_box[0]);
  g_assert_false (library->has_box[1]);
  g_assert_cmpfloat (library->box[0][0], ==, 1200);
  g_assert_cmpfloat (library->box[0][3], ==, 240.5);

  g_autofree char *thumb = lk_library_thumbnail_path (library, 0);
  g_autofree char *expected = g_build_filename (library->folder, "thumbs/000000.png", NULL);
  g_assert_cmpstr (thumb, ==, expected);
}

static void
test_unknown_fields_ignored (Fixture *fixture, gconstpointer data)
{
  g_autofree char *manifest = manifest_with (
      "\"version\": 1,",
      "\"version\": 1, \"generator\": { \"name\": \"x\", \"nested\": [ { \"k\": [1, 2] } ] },"
      " \"future\": null,");
  g_autofree char *manifest2 = NULL;
  {
    g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
    g_assert_cmpuint (library->count, ==, 3);
  }
  /* Also inside a face and inside embeddings. */
  manifest2 = manifest_with ("\"crop_px\": 96 }", "\"crop_px\": 96, \"pose\": [0, 1] }");
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest2);
  g_assert_cmpfloat (library->crop_px[1], ==, 96.0f);
}

static void
test_empty_library_valid (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const char *manifest = "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                         "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 512,"
                         " \"count\": 0 },\n"
                         "  \"faces\": [] }";

  write_file (fixture->dir, "library.json", manifest, -1);
  write_file (fixture->dir, "embeddings.f32", "", 0);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 0);
  g_assert_cmpuint (library->dim, ==, 512);
  g_assert_cmpuint (library->n_photos, ==, 0);
  g_assert_nonnull (library->fingerprint);
}

static void
test_rows_read_into_an_aligned_copy (Fixture *fixture, gconstpointer data)
{
  g_autoptr (LkLibrary) library = load_ok (fixture, GOOD_MANIFEST);

  g_assert_nonnull (library->owned);
  g_assert_true (library->embeddings == library->owned);
  g_assert_cmpuint ((guintptr) library->embeddings % 64, ==, 0);
  g_assert_cmpmem (library->embeddings, sizeof good_rows, good_rows, sizeof good_rows);
}

/* A library of n faces of dim random unit rows, one photo each, crop 100. */
static float *
write_random_library (const char *dir, gsize n, guint dim, guint32 seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  float *rows = g_new (float, n *dim);
  GString *json = g_string_new (NULL);

  for (gsize i = 0; i < n; i++)
    {
      double sum = 0;
      for (guint k = 0; k < dim; k++)
        {
          /* A few directions shared by many rows, so that pairs exist. */
          rows[i * dim + k] = (float) g_rand_double_range (rand, -1, 1) + (k == i % 7 ? 4.0f : 0);
          sum += (double) rows[i * dim + k] * rows[i * dim + k];
        }
      for (guint k = 0; k < dim; k++)
        rows[i * dim + k] = (float) (rows[i * dim + k] / sqrt (sum));
    }
  g_string_append_printf (json,
                          "{\"format\": \"likeness-library\", \"version\": 1,\n"
                          " \"embeddings\": {\"file\": \"embeddings.f32\", \"dim\": %u, "
                          "\"count\": %" G_GSIZE_FORMAT "},\n \"faces\": [",
                          dim, n);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (json, "%s{\"photo\": %" G_GSIZE_FORMAT ", \"crop_px\": 100}",
                            i > 0 ? ", " : "", i);
  g_string_append (json, "]}\n");
  write_file (dir, "library.json", json->str, (gssize) json->len);
  write_rows (dir, rows, n * dim);
  g_string_free (json, TRUE);
  return rows;
}

typedef struct
{
  const char *path;
  guint calls;
} TruncateOnProgress;

static void
truncate_on_progress (double fraction, gpointer data)
{
  TruncateOnProgress *t = data;
  if (t->calls++ == 0)
    g_assert_cmpint (truncate (t->path, 0), ==, 0);
}

static gboolean
same_pairs (const GArray *a, const GArray *b)
{
  return a->len == b->len && memcmp (a->data, b->data, a->len * sizeof (LkPair)) == 0;
}

/* Issue 19: embeddings.f32 truncated while a scan ran killed it with SIGBUS
 * (the rows were a mapping of the file). The library's rows are its own now:
 * truncated between the load and the scan, or in the middle of the scan (the
 * first progress report, after the first of four blocks), the scan runs to
 * the end on the rows that were loaded, with the same pairs as before. */
static void
test_embeddings_truncated_after_load_scan_unharmed (Fixture *fixture, gconstpointer data)
{
  const gsize n = 4 * LK_SCAN_BLOCK;
  const guint dim = 32;
  g_autofree float *rows = write_random_library (fixture->dir, n, dim, 19);
  g_autofree char *path = g_build_filename (fixture->dir, "embeddings.f32", NULL);
  g_autoptr (GError) error = NULL;
  LkScanOptions options = { .kernel = LK_KERNEL_PORTABLE, .threads = 1 };
  LkCalibration calibration = LK_CALIBRATION_DEFAULT;
  LkFaces faces;

  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  lk_faces_from_library (&faces, library);
  g_autoptr (LkScanResult) before = lk_scan (&faces, &calibration, 0.5, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (before->pairs->len, >, 0);

  g_assert_cmpint (truncate (path, (off_t) (n * dim * sizeof (float) / 2)), ==, 0);
  g_autoptr (LkScanResult) between = lk_scan (&faces, &calibration, 0.5, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (same_pairs (before->pairs, between->pairs));

  write_rows (fixture->dir, rows, n * dim);
  g_autoptr (LkLibrary) again = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  lk_faces_from_library (&faces, again);
  TruncateOnProgress t = { path, 0 };
  options.progress = truncate_on_progress;
  options.progress_data = &t;
  g_autoptr (LkScanResult) during = lk_scan (&faces, &calibration, 0.5, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t.calls, >=, 2);
  g_assert_true (same_pairs (before->pairs, during->pairs));
  g_assert_cmpmem (again->embeddings, n * dim * sizeof (float), rows, n * dim * sizeof (float));

  /* Loaded from the truncated file: a clear error, naming the sizes. */
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "embeddings.f32 holds 0 bytes", NULL);
}

typedef struct
{
  const char *path;
  const float *rows;
  gsize bytes;
  gint stop;
} Truncator;

static gpointer
truncate_and_restore (gpointer data)
{
  Truncator *t = data;
  int fd = g_open (t->path, O_WRONLY, 0);
  g_assert_cmpint (fd, >=, 0);
  while (!g_atomic_int_get (&t->stop))
    {
      g_assert_cmpint (ftruncate (fd, (off_t) (t->bytes / 3)), ==, 0);
      g_usleep (50);
      g_assert_cmpint (pwrite (fd, (const char *) t->rows + t->bytes / 3, t->bytes - t->bytes / 3,
                               (off_t) (t->bytes / 3)),
                       ==, (gssize) (t->bytes - t->bytes / 3));
      g_usleep (50);
    }
  close (fd);
  return NULL;
}

/* Issue 19, the load itself: while another thread truncates embeddings.f32
 * to a third and writes it back, over and over, every load either has
 * exactly the file's rows or fails with an error that says what happened —
 * never a crash. */
static void
test_embeddings_truncated_while_loading_refused_cleanly (Fixture *fixture, gconstpointer data)
{
  const gsize n = 1024;
  const guint dim = 256;
  g_autofree float *rows = write_random_library (fixture->dir, n, dim, 7);
  g_autofree char *path = g_build_filename (fixture->dir, "embeddings.f32", NULL);
  Truncator t = { path, rows, n * dim * sizeof (float), 0 };
  guint loaded = 0, refused = 0;

  GThread *thread = g_thread_new ("truncator", truncate_and_restore, &t);
  for (int k = 0; k < 60; k++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
      if (library != NULL)
        {
          /* Whole when it was read; a write in progress may still show as a
           * row of zeros or a torn row, which the row checks refuse. */
          g_assert_cmpmem (library->embeddings, t.bytes, rows, t.bytes);
          loaded++;
          continue;
        }
      g_assert_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_EMBEDDINGS);
      g_assert_true (strstr (error->message, "embeddings.f32") != NULL);
      g_assert_true (strstr (error->message, "changed while it was read") != NULL
                     || strstr (error->message, "bytes; 1 024 faces of 256 floats need") != NULL
                     || strstr (error->message, "face ") != NULL);
      refused++;
    }
  g_atomic_int_set (&t.stop, 1);
  g_thread_join (thread);
  g_test_message ("%u loads whole, %u refused", loaded, refused);
  g_assert_cmpuint (loaded + refused, ==, 60);
}

static void
test_unnormalized_rows_normalised_in_a_copy (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *manifest
      = manifest_with ("\"count\": 3 }", "\"count\": 3, \"normalized\": false }");
  const float rows[12] = { 3, 4, 0, 0, 0, 0.001f, 0, 0, -2, 2, -2, 2 };

  write_file (fixture->dir, "library.json", manifest, -1);
  write_rows (fixture->dir, rows, 12);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);

  g_assert_false (library->normalized_on_disk);
  g_assert_nonnull (library->owned);
  g_assert_true (library->embeddings == library->owned);
  const float expected[12] = { 0.6f, 0.8f, 0, 0, 0, 1, 0, 0, -0.5f, 0.5f, -0.5f, 0.5f };
  for (gsize k = 0; k < 12; k++)
    g_assert_cmpfloat_with_epsilon (library->embeddings[k], expected[k], 1e-6);
}

static void
test_near_unit_rows_accepted (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const float rows[12] = { 1.0009f, 0, 0, 0, 0, 0.9991f, 0, 0, 0.6f, 0.8f, 0, 0 };

  write_file (fixture->dir, "library.json", GOOD_MANIFEST, -1);
  write_rows (fixture->dir, rows, 12);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (library->embeddings[0], ==, 1.0009f);
}

static void
test_fingerprint (Fixture *fixture, gconstpointer data)
{
  g_autoptr (LkLibrary) library = load_ok (fixture, GOOD_MANIFEST);
  g_autoptr (GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  const guint8 size_le[8] = { sizeof good_rows, 0, 0, 0, 0, 0, 0, 0 };

  g_checksum_update (checksum, (const guchar *) GOOD_MANIFEST, strlen (GOOD_MANIFEST));
  g_checksum_update (checksum, size_le, sizeof size_le);
  g_assert_cmpstr (library->fingerprint, ==, g_checksum_get_string (checksum));

  /* One byte more in the manifest (a space) changes it. */
  g_autofree char *spaced = manifest_with ("\"version\": 1", "\"version\":  1");
  g_autoptr (LkLibrary) other = load_ok (fixture, spaced);
  g_assert_cmpstr (other->fingerprint, !=, library->fingerprint);
}

/* ── The manifest as JSON ────────────────────────────────────────────────── */

static void
test_missing_manifest (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_IO, "library.json", NULL);

  g_autofree char *nowhere = g_build_filename (fixture->dir, "nowhere", NULL);
  g_clear_error (&error);
  g_assert_null (lk_library_load (nowhere, &error));
  assert_error (error, LK_LIBRARY_ERROR_IO, "nowhere", NULL);
}

static void
test_not_json (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error
      = load_error (fixture, "{ \"format\": \"likeness-library\",\n  version: 1 }");
  assert_error (error, LK_LIBRARY_ERROR_JSON, "library.json: not valid JSON: 1:", NULL);
  g_assert_null (strstr (error->message, "<data>"));

  g_autoptr (GError) blank = load_error (fixture, "  \n");
  assert_error (blank, LK_LIBRARY_ERROR_JSON, "library.json", "empty", NULL);
  g_autoptr (GError) empty = load_error (fixture, "");
  assert_error (empty, LK_LIBRARY_ERROR_JSON, "library.json", "empty", NULL);
}

/* Issue 19: 200,000 nested "[" overflowed json-glib's stack (a segfault). */
static void
test_deep_nesting_refused_not_a_crash (Fixture *fixture, gconstpointer data)
{
  g_autofree char *deep = g_strnfill (200000, '[');
  g_autoptr (GError) error = load_error (fixture, deep);
  g_autofree char *limit = g_strdup_printf ("nested deeper than %d", LK_JSON_MAX_DEPTH);
  assert_error (error, LK_LIBRARY_ERROR_JSON, "library.json", "line 1", limit, NULL);

  /* Inside a real manifest, on the line it happens. */
  g_autofree char *levels = g_strnfill (LK_JSON_MAX_DEPTH, '[');
  g_autofree char *deep_field = g_strdup_printf ("  \"extra\":\n%s,\n  \"faces\": [\n", levels);
  EXPECT_EDIT_ERROR (fixture, "  \"faces\": [\n", deep_field, LK_LIBRARY_ERROR_JSON, "line 6",
                     limit);
}

/* Issue 19: json-glib read "count": -18446744073709551613 as 3. */
static void
test_integers_beyond_64_bits_refused (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"count\": 3", "\"count\": -18446744073709551613",
                     LK_LIBRARY_ERROR_FORMAT, "library.json", "line 4", "-18446744073709551613",
                     "out of range");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1", "\"version\": -18446744073709551615",
                     LK_LIBRARY_ERROR_FORMAT, "line 3", "out of range");
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9", "\"photo\": 18446744073709551625",
                     LK_LIBRARY_ERROR_FORMAT, "line 8", "18446744073709551625", "out of range");
}

/* Issue 19: open(2) of a FIFO waits for a writer: the load hung forever. */
static void
test_fifo_refused_not_a_hang (Fixture *fixture, gconstpointer data)
{
  g_autofree char *manifest = g_build_filename (fixture->dir, "library.json", NULL);
  g_autofree char *rows = g_build_filename (fixture->dir, "embeddings.f32", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (mkfifo (manifest, 0600), ==, 0);
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_IO, "library.json", "is a FIFO (named pipe), not a file",
                NULL);
  g_assert_cmpint (g_unlink (manifest), ==, 0);

  /* Mapped (normalized: true) and read (false), the embedding rows. */
  const char *normalized[] = { "\"count\": 3", "\"count\": 3, \"normalized\": false" };
  for (gsize k = 0; k < G_N_ELEMENTS (normalized); k++)
    {
      g_autofree char *m = manifest_with ("\"count\": 3", normalized[k]);
      write_file (fixture->dir, "library.json", m, -1);
      g_assert_cmpint (mkfifo (rows, 0600), ==, 0);
      g_autoptr (GError) rows_error = NULL;
      g_assert_null (lk_library_load (fixture->dir, &rows_error));
      assert_error (rows_error, LK_LIBRARY_ERROR_IO, "embeddings.file", "embeddings.f32",
                    "is a FIFO (named pipe), not a file", NULL);
      g_assert_cmpint (g_unlink (rows), ==, 0);
    }
}

/* Issue 19: mmap() of a folder or a device failed with "Invalid argument". */
static void
test_folder_or_device_as_embeddings_refused (Fixture *fixture, gconstpointer data)
{
  g_autofree char *rows = g_build_filename (fixture->dir, "embeddings.f32", NULL);
  const char *normalized[] = { "\"count\": 3", "\"count\": 3, \"normalized\": false" };

  for (gsize k = 0; k < G_N_ELEMENTS (normalized); k++)
    {
      g_autofree char *m = manifest_with ("\"count\": 3", normalized[k]);
      write_file (fixture->dir, "library.json", m, -1);
      g_assert_cmpint (g_mkdir (rows, 0700), ==, 0);
      g_autoptr (GError) error = NULL;
      g_assert_null (lk_library_load (fixture->dir, &error));
      assert_error (error, LK_LIBRARY_ERROR_IO, "embeddings.f32", "is a folder, not a file", NULL);
      g_assert_cmpint (g_rmdir (rows), ==, 0);

      /* A device: /dev/null's own numbers, where mknod is allowed (root). */
      GStatBuf null_st;
      g_assert_cmpint (g_stat ("/dev/null", &null_st), ==, 0);
      if (mknod (rows, S_IFCHR | 0600, null_st.st_rdev) != 0)
        {
          g_test_message ("mknod: %s; the device case is not tried", g_strerror (errno));
          continue;
        }
      g_autoptr (GError) device_error = NULL;
      g_assert_null (lk_library_load (fixture->dir, &device_error));
      assert_error (device_error, LK_LIBRARY_ERROR_IO, "embeddings.f32", "is a device, not a file",
                    NULL);
      g_assert_cmpint (g_unlink (rows), ==, 0);
    }
}

/* Issue 19: after a UTF-8 byte-order mark json-glib saw an empty file. */
static void
test_byte_order_mark_accepted (Fixture *fixture, gconstpointer data)
{
  g_autoptr (LkLibrary) plain = load_ok (fixture, GOOD_MANIFEST);
  g_autoptr (LkLibrary) marked = load_ok (fixture, "\xEF\xBB\xBF" GOOD_MANIFEST);
  g_assert_cmpuint (marked->count, ==, 3);
  g_assert_cmpuint (marked->photo[2], ==, 9);
  /* Other bytes, but the same faces: a different file, a different review. */
  g_assert_cmpstr (marked->fingerprint, !=, plain->fingerprint);

  /* What follows it is checked as without it. */
  g_autoptr (GError) error
      = load_error (fixture, "\xEF\xBB\xBF{\n  \"format\": 1,\n  \"format\": 2 }");
  assert_error (error, LK_LIBRARY_ERROR_FORMAT, "library.json", "format", NULL);
}

/* Issue 19: a \u0000 cut a path or a name at the NUL, silently; refused,
 * naming the field that holds it. */
static void
test_nul_in_a_string_refused_naming_the_field (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (
      fixture, "\"photo\": 9,", "\"photo\": 9, \"thumbnail\": \"a.png\\u0000../../x\",",
      LK_LIBRARY_ERROR_FORMAT, "library.json", "faces[2].thumbnail (line 8)", "\\u0000");
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": 9, \"label\": \"Ada\\u0000\",",
                     LK_LIBRARY_ERROR_FORMAT, "faces[2].label (line 8)", "\\u0000");
  EXPECT_EDIT_ERROR (fixture, "\"file\"", "\"fi\\u0000le\"", LK_LIBRARY_ERROR_FORMAT,
                     "a member name in embeddings", "\\u0000");
}

static void
test_top_level_not_an_object (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = load_error (fixture, "[1, 2]");
  assert_error (error, LK_LIBRARY_ERROR_FORMAT, "library.json", "an array", NULL);
}

static void
test_second_top_level_value (Fixture *fixture, gconstpointer data)
{
  g_autofree char *twice = g_strconcat (GOOD_MANIFEST, "{ \"format\": 1 }\n", NULL);
  g_autoptr (GError) error = load_error (fixture, twice);
  assert_error (error, LK_LIBRARY_ERROR_JSON, "library.json", "line 11", NULL);

  /* After a comment (json-glib's extension) too, and json-glib never sees
   * the second value: it leaked the first one's nodes (found with
   * G_SLICE=always-malloc under ASan). */
  g_autofree char *commented = g_strconcat (GOOD_MANIFEST, "/* x */ []\n", NULL);
  g_autoptr (GError) error2 = load_error (fixture, commented);
  assert_error (error2, LK_LIBRARY_ERROR_JSON, "library.json", "second JSON value", "line 11",
                NULL);
}

static void
test_duplicate_members (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,", "\"version\": 1, \"version\": 1,",
                     LK_LIBRARY_ERROR_FORMAT, "the top-level object", "“version” more than once");
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", "\"crop_px\": 96, \"crop_px\": 97",
                     LK_LIBRARY_ERROR_FORMAT, "faces[1] ", "“crop_px”");
  EXPECT_EDIT_ERROR (fixture, "\"dim\": 4,", "\"dim\": 4, \"dim\": 4,", LK_LIBRARY_ERROR_FORMAT,
                     "embeddings ", "“dim”");
  /* In an unknown member, too: the file is ambiguous either way. */
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"x\": [ {}, { \"a\": 1, \"a\": 2 } ],",
                     LK_LIBRARY_ERROR_FORMAT, "x[1] ", "“a”");
  /* Inside unknown members of the objects the loader walks. */
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96",
                     "\"crop_px\": 96, \"pose\": { \"yaw\": 1, \"yaw\": 2 }",
                     LK_LIBRARY_ERROR_FORMAT, "faces[1].pose ", "“yaw”");
  EXPECT_EDIT_ERROR (
      fixture, "\"version\": 1,",
      "\"version\": 1, \"photos\": [ { \"id\": 7, \"exif\": [ { \"f\": 1, \"f\": 1 } ] } ],",
      LK_LIBRARY_ERROR_FORMAT, "photos[0].exif[0] ", "“f”");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"calibration\": { \"fit\": { \"n\": 1, \"n\": 2 } },",
                     LK_LIBRARY_ERROR_FORMAT, "calibration.fit ", "“n”");
  EXPECT_EDIT_ERROR (fixture, "\"count\": 3", "\"count\": 3, \"x\": { \"y\": 1, \"y\": 1 }",
                     LK_LIBRARY_ERROR_FORMAT, "embeddings.x ", "“y”");
  /* A duplicate is reported before the error it may have caused. */
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": 9, \"photo\": \"nine\",",
                     LK_LIBRARY_ERROR_FORMAT, "faces[2] ", "“photo” more than once");
  /* A ':' inside a string is no member, and does not make a duplicate. */
  g_autofree char *colons
      = manifest_with ("\"crop_px\": 96 }", "\"crop_px\": 96, \"label\": \"a:b:\\\":\" }");
  g_autoptr (LkLibrary) library = load_ok (fixture, colons);
  g_assert_cmpstr (library->label[1], ==, "a:b:\":");
}

static void
test_duplicate_members_with_comments (Fixture *fixture, gconstpointer data)
{
  /* json-glib accepts comments and single quotes; the byte scan does not
   * model them and leaves the decision to the parser's signals. */
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", "\"crop_px\": 96, /* \" */ 'crop_px': 97",
                     LK_LIBRARY_ERROR_FORMAT, "faces[1] ", "“crop_px”");
  g_autofree char *commented = manifest_with ("\"crop_px\": 96", "/* a: b \" */ \"crop_px\": 96");
  g_autoptr (LkLibrary) library = load_ok (fixture, commented);
  g_assert_cmpfloat (library->crop_px[1], ==, 96.0f);
}

/* ── Fields ──────────────────────────────────────────────────────────────── */

static void
test_wrong_format (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"likeness-library\"", "\"likeness-album\"", LK_LIBRARY_ERROR_FORMAT,
                     "format", "“likeness-album”", "“likeness-library”");
}

static void
test_higher_version (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1", "\"version\": 2", LK_LIBRARY_ERROR_VERSION,
                     "library.json", "version 2", "version 1");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1", "\"version\": 0", LK_LIBRARY_ERROR_FORMAT,
                     "version must be 1, not 0");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1", "\"version\": 1.0", LK_LIBRARY_ERROR_FORMAT,
                     "version must be an integer, not 1.0");
}

static void
test_missing_fields (Fixture *fixture, gconstpointer data)
{
  static const struct
  {
    const char *from, *to, *field, *kind;
  } cases[] = {
    { "\"format\": \"likeness-library\",", "", "format is missing", "a string" },
    { "\"version\": 1,", "", "version is missing", "an integer" },
    { "\"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 4, \"count\": 3 },", "",
      "embeddings is missing", "an object" },
    { "\"file\": \"embeddings.f32\", ", "", "embeddings.file is missing", "a string" },
    { "\"dim\": 4, ", "", "embeddings.dim is missing", "an integer" },
    { ", \"count\": 3", "", "embeddings.count is missing", "an integer" },
    { "\"photo\": 7, \"crop_px\": 96", "\"crop_px\": 96", "faces[1].photo is missing",
      "an integer" },
    { "\"photo\": 9, \"crop_px\": 310.5,", "\"photo\": 9,", "faces[2].crop_px is missing",
      "a number" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    EXPECT_EDIT_ERROR (fixture, cases[k].from, cases[k].to, LK_LIBRARY_ERROR_FORMAT, "library.json",
                       cases[k].field, cases[k].kind);

  /* faces: the rest of the manifest without it. */
  const char *no_faces = "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                         "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 4,"
                         " \"count\": 3 } }";
  g_autoptr (GError) error = load_error (fixture, no_faces);
  assert_error (error, LK_LIBRARY_ERROR_FORMAT, "faces is missing", "an array", NULL);

  /* A required member that is null is of the wrong type. */
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", "\"crop_px\": null", LK_LIBRARY_ERROR_FORMAT,
                     "faces[1].crop_px must be a number, not null");
}

static void
test_wrong_json_types (Fixture *fixture, gconstpointer data)
{
  static const struct
  {
    const char *from, *to, *message;
  } cases[] = {
    { "\"likeness-library\"", "[\"likeness-library\"]", "format must be a string, not an array" },
    { "\"version\": 1", "\"version\": \"1\"", "version must be an integer, not the string “1”" },
    { "\"embeddings\": {", "\"embeddings\": 5, \"x\": {", "embeddings must be an object, not 5" },
    { "\"embeddings.f32\"", "7", "embeddings.file must be a string, not 7" },
    { "\"dim\": 4", "\"dim\": \"4\"", "embeddings.dim must be an integer, not the string “4”" },
    { "\"dim\": 4", "\"dim\": 4.5", "embeddings.dim must be an integer, not 4.5" },
    { "\"count\": 3", "\"count\": true", "embeddings.count must be an integer, not true" },
    { "\"count\": 3", "\"count\": 3, \"normalized\": \"yes\"",
      "embeddings.normalized must be true or false, not the string “yes”" },
    { "\"faces\": [", "\"faces\": { \"a\": 1 }, \"x\": [",
      "faces must be an array, not an object" },
    { "{ \"photo\": 7, \"crop_px\": 96 }", "[7, 96]", "faces[1] must be an object, not an array" },
    { "\"photo\": 9,", "\"photo\": \"9\",",
      "faces[2].photo must be an integer, not the string “9”" },
    { "\"crop_px\": 96", "\"crop_px\": \"96px\"",
      "faces[1].crop_px must be a number, not the string “96px”" },
    { "\"quality\": 0.4", "\"quality\": false", "faces[2].quality must be a number, not false" },
    { "\"crop_px\": 96", "\"crop_px\": 96, \"thumbnail\": 3",
      "faces[1].thumbnail must be a string, not 3" },
    { "\"crop_px\": 96", "\"crop_px\": 96, \"label\": 12",
      "faces[1].label must be a string, not 12" },
    { "\"crop_px\": 96", "\"crop_px\": 96, \"box\": \"1 2 3 4\"", "faces[1].box must be an array" },
    { "\"crop_px\": 96", "\"crop_px\": 96, \"box\": [1, 2, \"3\", 4]",
      "faces[1].box[2] must be a finite number, not the string “3”" },
    { "\"version\": 1,", "\"version\": 1, \"calibration\": [30, -10.5],",
      "calibration must be an object, not an array" },
    { "\"version\": 1,", "\"version\": 1, \"calibration\": { \"a\": \"30\" },",
      "calibration.a must be a number, not the string “30”" },
    { "\"version\": 1,", "\"version\": 1, \"calibration\": { \"positive_pairs\": 1.5 },",
      "calibration.positive_pairs must be an integer, not 1.5" },
    { "\"version\": 1,", "\"version\": 1, \"min_probability\": \"0.9\",",
      "min_probability must be a number, not the string “0.9”" },
    { "\"version\": 1,", "\"version\": 1, \"min_gallery_quality\": [],",
      "min_gallery_quality must be a number, not an array" },
    { "\"version\": 1,", "\"version\": 1, \"photos\": { \"id\": 7 },",
      "photos must be an array, not an object" },
    { "\"version\": 1,", "\"version\": 1, \"photos\": [ 7 ],",
      "photos[0] must be an object, not 7" },
    { "\"version\": 1,", "\"version\": 1, \"photos\": [ { \"id\": 7, \"path\": 1 } ],",
      "photos[0].path must be a string, not 1" },
    { "\"version\": 1,", "\"version\": 1, \"photos\": [ { \"id\": 7, \"width\": \"4032\" } ],",
      "photos[0].width must be an integer, not the string “4032”" },
    { "\"version\": 1,", "\"version\": 1, \"photos\": [ { \"id\": 7, \"taken\": 2019 } ],",
      "photos[0].taken must be a string, not 2019" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    EXPECT_EDIT_ERROR (fixture, cases[k].from, cases[k].to, LK_LIBRARY_ERROR_FORMAT, "library.json",
                       cases[k].message);
}

static void
test_photo_ids (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": -1,", LK_LIBRARY_ERROR_FORMAT,
                     "faces[2].photo", "from 0 to 2^53", "not -1");
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": 9007199254740992,",
                     LK_LIBRARY_ERROR_FORMAT, "faces[2].photo", "not 9007199254740992");
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": 1.5,", LK_LIBRARY_ERROR_FORMAT,
                     "faces[2].photo must be an integer, not 1.5");
  EXPECT_EDIT_ERROR (fixture, "\"photo\": 9,", "\"photo\": 9.0,", LK_LIBRARY_ERROR_FORMAT,
                     "faces[2].photo must be an integer, not 9.0");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,", "\"version\": 1, \"photos\": [ { \"id\": -5 } ],",
                     LK_LIBRARY_ERROR_FORMAT, "photos[0].id", "not -5");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"photos\": [ { \"id\": 3 }, { \"id\": 7 }, { \"id\": 3 } ],",
                     LK_LIBRARY_ERROR_FORMAT, "photos[2].id 3", "photos[0]");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"photos\": [ { \"path\": \"a.jpg\" } ],",
                     LK_LIBRARY_ERROR_FORMAT, "photos[0].id is missing");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"photos\": [ { \"id\": 1, \"height\": -3 } ],",
                     LK_LIBRARY_ERROR_FORMAT, "photos[0].height", "not -3");
}

static void
test_crop_px_range (Fixture *fixture, gconstpointer data)
{
  static const char *const bad[] = { "0", "-3", "1e39", "1e400", "1e-50" };
  static const char *const shown[] = { "not 0", "not -3", "not 1e+39", "not inf", "not 1e-50" };
  for (gsize k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autofree char *to = g_strdup_printf ("\"crop_px\": %s", bad[k]);
      EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", to, LK_LIBRARY_ERROR_FORMAT,
                         "faces[1].crop_px must be a finite number > 0", shown[k]);
    }
}

static void
test_quality_range (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 1.5", LK_LIBRARY_ERROR_FORMAT,
                     "faces[2].quality must be in [0, 1], not 1.5");
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": -0.01", LK_LIBRARY_ERROR_FORMAT,
                     "faces[2].quality", "not -0.01");
  g_autofree char *edges = manifest_with ("\"quality\": 0.4", "\"quality\": 0");
  g_autoptr (LkLibrary) library = load_ok (fixture, edges);
  g_assert_cmpuint (library->gallery[2], ==, 0);
}

static void
test_thresholds_range (Fixture *fixture, gconstpointer data)
{
  static const char *const bad_probability[] = { "0", "1", "1.5", "-0.2" };
  for (gsize k = 0; k < G_N_ELEMENTS (bad_probability); k++)
    {
      g_autofree char *to
          = g_strdup_printf ("\"version\": 1, \"min_probability\": %s,", bad_probability[k]);
      g_autofree char *shown = g_strdup_printf ("not %s", bad_probability[k]);
      EXPECT_EDIT_ERROR (fixture, "\"version\": 1,", to, LK_LIBRARY_ERROR_FORMAT,
                         "min_probability must be between 0 and 1, exclusive", shown);
    }
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,", "\"version\": 1, \"min_gallery_quality\": 50,",
                     LK_LIBRARY_ERROR_FORMAT, "min_gallery_quality must be in [0, 1], not 50");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"calibration\": { \"a\": 1e999 },", LK_LIBRARY_ERROR_FORMAT,
                     "calibration.a must be finite, not inf");
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,",
                     "\"version\": 1, \"calibration\": { \"negative_pairs\": -1 },",
                     LK_LIBRARY_ERROR_FORMAT, "calibration.negative_pairs", "not -1");
}

static void
test_gallery_flags_follow_min_gallery_quality (Fixture *fixture, gconstpointer data)
{
  g_autofree char *manifest
      = manifest_with ("\"version\": 1,", "\"version\": 1, \"min_gallery_quality\": 0.3,");
  g_autoptr (LkLibrary) low = load_ok (fixture, manifest);
  g_assert_cmpuint (low->gallery[2], ==, 1);

  g_autofree char *high_manifest
      = manifest_with ("\"version\": 1,", "\"version\": 1, \"min_gallery_quality\": 1,");
  g_autoptr (LkLibrary) high = load_ok (fixture, high_manifest);
  g_assert_cmpuint (high->gallery[0], ==, 1); /* quality 1.0 (the default) >= 1 */
  g_assert_cmpuint (high->gallery[2], ==, 0);
}

static void
test_dim_range (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"dim\": 4", "\"dim\": 0", LK_LIBRARY_ERROR_FORMAT,
                     "embeddings.dim must be from 1 to 4096, not 0");
  EXPECT_EDIT_ERROR (fixture, "\"dim\": 4", "\"dim\": 4097", LK_LIBRARY_ERROR_FORMAT,
                     "embeddings.dim", "not 4097");
  EXPECT_EDIT_ERROR (fixture, "\"count\": 3", "\"count\": -3", LK_LIBRARY_ERROR_FORMAT,
                     "embeddings.count must be 0 or more, not -3");
}

static void
test_faces_length_must_match_count (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"count\": 3", "\"count\": 4", LK_LIBRARY_ERROR_FORMAT,
                     "faces has 3 entries", "embeddings.count is 4");
}

static void
test_box_must_have_four_numbers (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", "\"crop_px\": 96, \"box\": [1, 2, 3]",
                     LK_LIBRARY_ERROR_FORMAT, "faces[1].box must be 4 numbers", "not 3");
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", "\"crop_px\": 96, \"box\": [1, 2, 3, 4, 5]",
                     LK_LIBRARY_ERROR_FORMAT, "faces[1].box", "not 5");
}

/* ── Embeddings ──────────────────────────────────────────────────────────── */

static void
test_size_mismatch (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  write_file (fixture->dir, "library.json", GOOD_MANIFEST, -1);
  write_rows (fixture->dir, good_rows, 11);
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "embeddings.f32 holds 44 bytes",
                "3 faces of 4 floats need 48", NULL);

  /* The figures of the format document, on a sparse file; both loading paths. */
  g_autofree char *path = g_build_filename (fixture->dir, "embeddings.f32", NULL);
  g_assert_cmpint (truncate (path, 37156860), ==, 0);
  for (int normalized = 0; normalized < 2; normalized++)
    {
      g_autoptr (GString) manifest = g_string_new (NULL);
      g_string_printf (manifest,
                       "{ \"format\": \"likeness-library\", \"version\": 1,"
                       " \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 512,"
                       " \"count\": 18143, \"normalized\": %s }, \"faces\": [",
                       normalized ? "true" : "false");
      for (int k = 0; k < 18143; k++)
        g_string_append_printf (manifest, "%s{ \"photo\": %d, \"crop_px\": 100 }", k ? "," : "", k);
      g_string_append (manifest, "] }");
      write_file (fixture->dir, "library.json", manifest->str, -1);
      g_clear_error (&error);
      g_assert_null (lk_library_load (fixture->dir, &error));
      assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS,
                    "embeddings.f32 holds 37 156 860 bytes; 18 143 faces of 512 floats need "
                    "37 156 864",
                    NULL);
    }
}

static void
test_count_overflow (Fixture *fixture, gconstpointer data)
{
  /* 2^62 × 512 × 4 = 2^73 bytes: beyond size_t, checked before the faces
   * array's length or the file. */
  EXPECT_EDIT_ERROR (fixture, "\"dim\": 4, \"count\": 3",
                     "\"dim\": 512, \"count\": 4611686018427387904", LK_LIBRARY_ERROR_FORMAT,
                     "embeddings.count × embeddings.dim × 4", "4 611 686 018 427 387 904 × 512 × 4",
                     "more than the", "bytes this computer can address");
  EXPECT_EDIT_ERROR (fixture, "\"dim\": 4, \"count\": 3",
                     "\"dim\": 4096, \"count\": 1125899906842624", LK_LIBRARY_ERROR_FORMAT,
                     "1 125 899 906 842 624 × 4096 × 4");
}

static void
test_missing_embeddings_file (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\"", "\"missing.f32\"", LK_LIBRARY_ERROR_IO,
                     "embeddings.file", "missing.f32");
  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\", \"dim\": 4, \"count\": 3",
                     "\"missing.f32\", \"dim\": 4, \"count\": 3, \"normalized\": false",
                     LK_LIBRARY_ERROR_IO, "embeddings.file", "missing.f32");
}

static void
check_bad_row (Fixture *fixture, const char *manifest, float bad, const char *what)
{
  float rows[12];
  memcpy (rows, good_rows, sizeof rows);
  rows[4 + 2] = bad;
  write_file (fixture->dir, "library.json", manifest, -1);
  write_rows (fixture->dir, rows, 12);
  g_autoptr (GError) error = NULL;
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "embeddings.f32", "face 1 ", what,
                "value 2 of 4", NULL);
}

static void
test_nan_and_inf_rows (Fixture *fixture, gconstpointer data)
{
  g_autofree char *unnormalized
      = manifest_with ("\"count\": 3", "\"count\": 3, \"normalized\": false");
  check_bad_row (fixture, GOOD_MANIFEST, NAN, "NaN");
  check_bad_row (fixture, GOOD_MANIFEST, INFINITY, "an infinity");
  check_bad_row (fixture, GOOD_MANIFEST, -INFINITY, "an infinity");
  check_bad_row (fixture, unnormalized, NAN, "NaN");
  check_bad_row (fixture, unnormalized, INFINITY, "an infinity");
}

static void
test_zero_row (Fixture *fixture, gconstpointer data)
{
  g_autofree char *unnormalized
      = manifest_with ("\"count\": 3", "\"count\": 3, \"normalized\": false");
  const char *manifests[] = { GOOD_MANIFEST, unnormalized };
  float rows[12];

  memcpy (rows, good_rows, sizeof rows);
  rows[8 + 2] = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (manifests); k++)
    {
      g_autoptr (GError) error = NULL;
      write_file (fixture->dir, "library.json", manifests[k], -1);
      write_rows (fixture->dir, rows, 12);
      g_assert_null (lk_library_load (fixture->dir, &error));
      assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "embeddings.f32", "face 2 ", "4 zeros",
                    NULL);
    }
}

static void
test_non_unit_row_when_normalized (Fixture *fixture, gconstpointer data)
{
  float rows[12];
  g_autoptr (GError) error = NULL;

  memcpy (rows, good_rows, sizeof rows);
  rows[4 + 1] = 2;
  write_file (fixture->dir, "library.json", GOOD_MANIFEST, -1);
  write_rows (fixture->dir, rows, 12);
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "embeddings.f32", "face 1 has norm 2,",
                "“normalized”: true", "0.001", NULL);

  rows[4 + 1] = 0.998f;
  write_rows (fixture->dir, rows, 12);
  g_clear_error (&error);
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_EMBEDDINGS, "face 1 has norm 0.998", NULL);
}

static void
test_manifest_error_before_row_error (Fixture *fixture, gconstpointer data)
{
  /* The rows are checked on a thread beside the faces; the manifest's error
   * must still be the one reported, as it may be why the rows look wrong. */
  g_autofree char *manifest = manifest_with ("\"crop_px\": 310.5", "\"crop_px\": -1");
  float rows[12];
  g_autoptr (GError) error = NULL;

  memcpy (rows, good_rows, sizeof rows);
  rows[0] = NAN;
  write_file (fixture->dir, "library.json", manifest, -1);
  write_rows (fixture->dir, rows, 12);
  g_assert_null (lk_library_load (fixture->dir, &error));
  assert_error (error, LK_LIBRARY_ERROR_FORMAT, "faces[2].crop_px", NULL);
}

/* ── Paths ───────────────────────────────────────────────────────────────── */

static void
test_absolute_paths_refused (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\"", "\"/etc/passwd\"", LK_LIBRARY_ERROR_PATH,
                     "embeddings.file", "absolute path “/etc/passwd”");
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"/tmp/a.png\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail", "“/tmp/a.png”");
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail is empty");
}

static void
test_dotdot_paths_refused (Fixture *fixture, gconstpointer data)
{
  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\"", "\"../embeddings.f32\"", LK_LIBRARY_ERROR_PATH,
                     "embeddings.file", "“../embeddings.f32”", "..");
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4",
                     "\"quality\": 0.4, \"thumbnail\": \"thumbs/../../x.png\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail", "“thumbs/../../x.png”");
  /* Two dots inside a name are no “..” component. */
  g_autofree char *dots
      = manifest_with ("\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"a..b.png\"");
  g_autoptr (LkLibrary) library = load_ok (fixture, dots);
  g_assert_cmpstr (library->thumbnail[2], ==, "a..b.png");
}

/* A photo's path obeys the same rule as every other path, though Likeness
 * never opens photos: an exporter that writes "/home/…" or "../" has made a
 * library that cannot move, and the user hears it on load. */
static void
test_photo_paths_refused (Fixture *fixture, gconstpointer data)
{
#define PHOTOS(path)                                                                               \
  "\"photos\": [ { \"id\": 7, \"path\": \"2019/a.jpg\" },\n"                                       \
  "              { \"id\": 9, \"path\": \"" path "\" } ],\n  \"faces\""
  g_autofree char *absolute = g_strdup (PHOTOS ("/home/me/b.jpg"));
  g_autofree char *up = g_strdup (PHOTOS ("2019/../../b.jpg"));
  g_autofree char *empty = g_strdup (PHOTOS (""));
  g_autofree char *fine = g_strdup (PHOTOS ("2019/..b.jpg"));

  EXPECT_EDIT_ERROR (fixture, "\"faces\"", absolute, LK_LIBRARY_ERROR_PATH, "photos[1].path",
                     "absolute path “/home/me/b.jpg”");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", up, LK_LIBRARY_ERROR_PATH, "photos[1].path",
                     "“2019/../../b.jpg”", "..");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", empty, LK_LIBRARY_ERROR_PATH, "photos[1].path is empty");
  g_autofree char *manifest = manifest_with ("\"faces\"", fine);
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_assert_cmpuint (library->n_photos, ==, 2);
  g_assert_cmpstr (library->photos[1].path, ==, "2019/..b.jpg");
}

/* Photos outside the library (a library made from photo folders):
 * photo_folders absolute, each photo's original relative to its folder;
 * every break of those rules is refused naming the field. Where a photo is
 * (lk_library_photo_file): path first, then the original in its folder,
 * then a source_path only through a map, whose prefix matches whole
 * components; a mapped path that climbs with ".." is refused. */
static void
test_photos_outside_the_library (Fixture *fixture, gconstpointer data)
{
#define OUTSIDE(folders, original, folder)                                                         \
  "\"photo_folders\": " folders ",\n"                                                              \
  "  \"photos\": [ { \"id\": 7, \"path\": \"2019/a.jpg\" },\n"                                     \
  "              { \"id\": 9, \"original\": \"" original "\", \"folder\": " folder " },\n"         \
  "              { \"id\": 11, \"source_path\": \"/srv/up/library/c.jpg\" },\n"                    \
  "              { \"id\": 12, \"source_path\": \"/srv/upload/d.jpg\" },\n"                        \
  "              { \"id\": 13, \"source_path\": \"/srv/up/../../etc/e.jpg\" } ],\n  \"faces\""
  g_autofree char *relative = g_strdup (OUTSIDE ("[\"Pictures\"]", "b.jpg", "0"));
  g_autofree char *folder_up = g_strdup (OUTSIDE ("[\"/home/../etc\"]", "b.jpg", "0"));
  g_autofree char *not_string = g_strdup (OUTSIDE ("[7]", "b.jpg", "0"));
  g_autofree char *original_up = g_strdup (OUTSIDE ("[\"/home/ada/Pictures\"]", "../b.jpg", "0"));
  g_autofree char *original_abs
      = g_strdup (OUTSIDE ("[\"/home/ada/Pictures\"]", "/etc/passwd", "0"));
  g_autofree char *out_of_range = g_strdup (OUTSIDE ("[\"/home/ada/Pictures\"]", "b.jpg", "1"));
  g_autofree char *fine
      = g_strdup (OUTSIDE ("[\"/home/ada/Pictures\", \"/media/cam\"]", "2020/b.jpg", "1"));

  EXPECT_EDIT_ERROR (fixture, "\"faces\"", relative, LK_LIBRARY_ERROR_PATH, "photo_folders[0]",
                     "“Pictures”", "absolute");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", folder_up, LK_LIBRARY_ERROR_PATH, "photo_folders[0]",
                     "..");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", not_string, LK_LIBRARY_ERROR_FORMAT, "photo_folders[0]",
                     "7");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", original_up, LK_LIBRARY_ERROR_PATH, "photos[1].original",
                     "..", "its photo folder");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", original_abs, LK_LIBRARY_ERROR_PATH,
                     "photos[1].original", "absolute path “/etc/passwd”");
  EXPECT_EDIT_ERROR (fixture, "\"faces\"", out_of_range, LK_LIBRARY_ERROR_FORMAT,
                     "photos[1].folder", "0 to 0", "not 1");
  g_autofree char *without_folders = manifest_with (
      "\"faces\"", "\"photos\": [ { \"id\": 9, \"original\": \"b.jpg\" } ],\n  \"faces\"");
  g_autoptr (GError) no_folders = load_error (fixture, without_folders);
  assert_error (no_folders, LK_LIBRARY_ERROR_FORMAT, "photos[0].original", "photo_folders", NULL);

  g_autofree char *manifest = manifest_with ("\"faces\"", fine);
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_assert_cmpuint (library->n_photo_folders, ==, 2);
  g_assert_cmpstr (library->photo_folders[1], ==, "/media/cam");
  g_autoptr (GError) error = NULL;
  g_autofree char *inside = lk_library_photo_file (library, &library->photos[0], NULL, 0, &error);
  g_assert_no_error (error);
  g_autofree char *expected_inside = g_build_filename (library->folder, "2019/a.jpg", NULL);
  g_assert_cmpstr (inside, ==, expected_inside);
  g_autofree char *original = lk_library_photo_file (library, &library->photos[1], NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (original, ==, "/media/cam/2020/b.jpg");

  /* A server's path without a map is never opened. */
  g_autofree char *unmapped = lk_library_photo_file (library, &library->photos[2], NULL, 0, &error);
  g_assert_null (unmapped);
  assert_error (error, LK_LIBRARY_ERROR_UNMAPPED, "/srv/up/library/c.jpg", "--map", NULL);
  g_clear_error (&error);

  LkPathMap maps[2] = { { 0 } };
  g_assert_true (lk_path_map_parse ("/srv/up/=/data/immich", &maps[0], &error));
  g_assert_true (lk_path_map_parse ("/media/cam=/mnt/cam", &maps[1], &error));
  g_assert_no_error (error);
  g_assert_cmpstr (maps[0].from, ==, "/srv/up");
  g_autofree char *mapped = lk_library_photo_file (library, &library->photos[2], maps, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (mapped, ==, "/data/immich/library/c.jpg");
  /* The map applies to a photo folder that moved, too. */
  g_autofree char *moved = lk_library_photo_file (library, &library->photos[1], maps, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (moved, ==, "/mnt/cam/2020/b.jpg");
  /* /srv/up is not a prefix of /srv/upload: whole components. */
  g_autofree char *other = lk_library_photo_file (library, &library->photos[3], maps, 2, &error);
  g_assert_null (other);
  assert_error (error, LK_LIBRARY_ERROR_UNMAPPED, "/srv/upload/d.jpg", NULL);
  g_clear_error (&error);
  /* Mapped, a path that climbs out of the folder is refused. */
  g_autofree char *climbs = lk_library_photo_file (library, &library->photos[4], maps, 2, &error);
  g_assert_null (climbs);
  assert_error (error, LK_LIBRARY_ERROR_PATH, "..", NULL);
  g_clear_error (&error);
  for (int k = 0; k < 2; k++)
    lk_path_map_clear (&maps[k]);

  LkPathMap bad = { 0 };
  g_assert_false (lk_path_map_parse ("relative=/x", &bad, &error));
  g_assert_nonnull (strstr (error->message, "absolute"));
  g_clear_error (&error);
  g_assert_false (lk_path_map_parse ("/no-equals", &bad, &error));
  g_assert_nonnull (strstr (error->message, "PREFIX=DIR"));
#undef OUTSIDE
}

static void
test_symlinks_out_refused (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *outside = g_dir_make_tmp ("test-library-outside-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *real_outside = realpath (outside, NULL);
  write_rows (outside, good_rows, 12);
  write_file (outside, "a.png", "x", 1);

  g_autofree char *inside_thumbs = g_build_filename (fixture->dir, "thumbs", NULL);
  g_autofree char *outside_rows = g_build_filename (outside, "embeddings.f32", NULL);
  g_autofree char *outside_png = g_build_filename (outside, "a.png", NULL);
  g_autofree char *link_rows = g_build_filename (fixture->dir, "rows.f32", NULL);
  g_autofree char *link_dir = g_build_filename (fixture->dir, "out", NULL);
  g_autofree char *link_png = g_build_filename (inside_thumbs, "b.png", NULL);
  g_autofree char *dangling = g_build_filename (inside_thumbs, "c.png", NULL);
  g_autofree char *dangling_in = g_build_filename (inside_thumbs, "d.png", NULL);
  g_autofree char *link_in = g_build_filename (inside_thumbs, "e.png", NULL);
  g_assert_cmpint (g_mkdir (inside_thumbs, 0700), ==, 0);
  g_assert_cmpint (symlink (outside_rows, link_rows), ==, 0);
  g_assert_cmpint (symlink (outside, link_dir), ==, 0);
  g_assert_cmpint (symlink (outside_png, link_png), ==, 0);
  g_assert_cmpint (symlink ("/nonexistent-likeness/c.png", dangling), ==, 0);
  g_assert_cmpint (symlink ("../missing.png", dangling_in), ==, 0);
  g_assert_cmpint (symlink ("../library.json", link_in), ==, 0);

  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\"", "\"rows.f32\"", LK_LIBRARY_ERROR_PATH,
                     "embeddings.file", "“rows.f32”", real_outside, "symbolic link");
  EXPECT_EDIT_ERROR (fixture, "\"embeddings.f32\"", "\"out/embeddings.f32\"", LK_LIBRARY_ERROR_PATH,
                     "embeddings.file", real_outside);
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"out/a.png\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail", "“out/a.png”");
  /* A missing file below a directory link that leads out. */
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"out/zz.png\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail", real_outside);
  /* The second face in the same directory: the cached directory must not
   * let a symlinked file through. */
  {
    g_autofree char *m = manifest_with ("\"crop_px\": 150.0",
                                        "\"crop_px\": 150.0, \"thumbnail\": \"thumbs/x.png\"");
    g_autofree char *m2 = g_strdup (m);
    g_autofree char *edited = NULL;
    const char *at = strstr (m2, "\"crop_px\": 96");
    edited = g_strdup_printf ("%.*s%s%s", (int) (at - m2), m2,
                              "\"crop_px\": 96, \"thumbnail\": \"thumbs/b.png\"",
                              at + strlen ("\"crop_px\": 96"));
    g_autoptr (GError) e = load_error (fixture, edited);
    assert_error (e, LK_LIBRARY_ERROR_PATH, "faces[1].thumbnail", "“thumbs/b.png”", real_outside,
                  NULL);
  }
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4",
                     "\"quality\": 0.4, \"thumbnail\": \"thumbs/c.png\"", LK_LIBRARY_ERROR_PATH,
                     "faces[2].thumbnail", "/nonexistent-likeness/c.png");

  /* A link at the top of the folder, beside library.json. */
  g_autofree char *link_top = g_build_filename (fixture->dir, "top.png", NULL);
  g_assert_cmpint (symlink (outside_png, link_top), ==, 0);
  EXPECT_EDIT_ERROR (fixture, "\"quality\": 0.4", "\"quality\": 0.4, \"thumbnail\": \"top.png\"",
                     LK_LIBRARY_ERROR_PATH, "faces[2].thumbnail", "“top.png”", real_outside);

  /* Links that stay inside are fine, dangling or not. */
  g_autofree char *fine
      = manifest_with ("\"crop_px\": 96", "\"crop_px\": 96, \"thumbnail\": \"thumbs/d.png\"");
  g_autoptr (LkLibrary) library = load_ok (fixture, fine);
  g_assert_cmpstr (library->thumbnail[1], ==, "thumbs/d.png");
  g_autofree char *fine2
      = manifest_with ("\"crop_px\": 96", "\"crop_px\": 96, \"thumbnail\": \"thumbs/e.png\"");
  g_autoptr (LkLibrary) library2 = load_ok (fixture, fine2);
  g_assert_cmpstr (library2->thumbnail[1], ==, "thumbs/e.png");

  lk_test_remove_tree (outside);
}

static void
test_missing_thumbnail_not_an_error (Fixture *fixture, gconstpointer data)
{
  g_autofree char *manifest = manifest_with (
      "\"crop_px\": 96", "\"crop_px\": 96, \"thumbnail\": \"thumbs/none/000001.png\"");
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_autofree char *path = lk_library_thumbnail_path (library, 1);
  g_assert_true (g_str_has_suffix (path, "/thumbs/none/000001.png"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Issue 19: a thumbnail path of 100 MB of missing folders hung the load,
 * its cost growing with the square of the length (80,000 "a/" took 1.6 s;
 * the 2,097,152 here would take about 20 minutes). Refused at once, naming
 * the face, without a system call per level; photo paths and the embeddings
 * file too. A path at the limit is still judged by the usual rules. */
static void
test_huge_path_refused_in_linear_time (Fixture *fixture, gconstpointer data)
{
  gsize levels = 2 * 1024 * 1024;
  GString *huge = g_string_sized_new (2 * levels + 8);
  for (gsize k = 0; k < levels; k++)
    g_string_append (huge, "a/");
  g_string_append (huge, "x.png");

  g_autofree char *thumbnail
      = g_strdup_printf ("\"crop_px\": 96, \"thumbnail\": \"%s\"", huge->str);
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", thumbnail, LK_LIBRARY_ERROR_PATH, "library.json",
                     "faces[1].thumbnail is a path of 4 194 309 bytes", "at most 4095 bytes");
  /* One long file name in a short folder. */
  g_autofree char *name = g_strnfill (5000, 'n');
  g_autofree char *long_name
      = g_strdup_printf ("\"crop_px\": 96, \"thumbnail\": \"thumbs/%s\"", name);
  EXPECT_EDIT_ERROR (fixture, "\"crop_px\": 96", long_name, LK_LIBRARY_ERROR_PATH,
                     "faces[1].thumbnail is a path of 5 007 bytes");
  g_autofree char *file = g_strdup_printf ("\"file\": \"%s\"", huge->str);
  EXPECT_EDIT_ERROR (fixture, "\"file\": \"embeddings.f32\"", file, LK_LIBRARY_ERROR_PATH,
                     "embeddings.file is a path of");
  g_autofree char *photos
      = g_strdup_printf ("\"version\": 1, \"photos\": [{\"id\": 7, \"path\": \"%s\"}],", huge->str);
  EXPECT_EDIT_ERROR (fixture, "\"version\": 1,", photos, LK_LIBRARY_ERROR_PATH,
                     "photos[0].path is a path of");

  /* 3,900 bytes of missing folders (room left for the folder's own path):
   * not refused for its length; the load succeeds (a missing thumbnail is no
   * error). */
  g_string_truncate (huge, 0);
  while (huge->len + 2 + 5 <= 3900)
    g_string_append (huge, "a/");
  g_string_append (huge, "x.png");
  g_autofree char *at_limit = g_strdup_printf ("\"crop_px\": 96, \"thumbnail\": \"%s\"", huge->str);
  g_autofree char *manifest = manifest_with ("\"crop_px\": 96", at_limit);
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_assert_cmpstr (library->thumbnail[1], ==, huge->str);
  g_string_free (huge, TRUE);
}

static void
assert_placeholders (Fixture *fixture, const char *manifest, const char *reason)
{
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_test_message ("warning: %s", library->thumbnail_warning);
  g_assert_null (library->thumbnail[0]);
  g_assert_null (library->thumbnail[1]);
  g_assert_cmpstr (library->thumbnail[2], ==, "top.png");
  g_assert_nonnull (library->thumbnail_warning);
  g_assert_nonnull (strstr (library->thumbnail_warning, "2 faces are shown without their"));
  g_assert_nonnull (strstr (library->thumbnail_warning, "“thumbs/a.png”, the first of them,"));
  g_assert_nonnull (strstr (library->thumbnail_warning, reason));
}

/* Issue 19: a thumbnail folder that cannot be read refused the whole
 * library. Now its faces have no thumbnail (the window shows placeholders)
 * and the library carries one warning naming the folder and why; the other
 * faces keep theirs. Root reads a mode-000 folder, so the root-proof case is
 * a folder that no one can resolve: a symbolic link to itself (ELOOP). */
static void
test_unreadable_thumbnail_folder_gives_placeholders (Fixture *fixture, gconstpointer data)
{
  g_autofree char *thumbs = g_build_filename (fixture->dir, "thumbs", NULL);
  g_autofree char *manifest
      = manifest_with ("\"photo\": 7, \"crop_px\": 150.0 },\n"
                       "    { \"photo\": 7, \"crop_px\": 96 },\n"
                       "    { \"photo\": 9, \"crop_px\": 310.5,",
                       "\"photo\": 7, \"crop_px\": 150.0, \"thumbnail\": "
                       "\"thumbs/a.png\" },\n"
                       "    { \"photo\": 7, \"crop_px\": 96, \"thumbnail\": "
                       "\"thumbs/b.png\" },\n"
                       "    { \"photo\": 9, \"crop_px\": 310.5, \"thumbnail\": "
                       "\"top.png\",");
  write_file (fixture->dir, "top.png", "", 0);

  /* Root-proof: thumbs is a loop of symbolic links. */
  g_assert_cmpint (symlink ("thumbs", thumbs), ==, 0);
  assert_placeholders (fixture, manifest, g_strerror (ELOOP));
  g_assert_cmpint (g_unlink (thumbs), ==, 0);

  /* A folder without permission to search it, where that denies (not root). */
  g_assert_cmpint (g_mkdir (thumbs, 0700), ==, 0);
  write_file (thumbs, "a.png", "", 0);
  g_assert_cmpint (g_chmod (thumbs, 0), ==, 0);
  g_autofree char *probe = g_build_filename (thumbs, "a.png", NULL);
  if (access (probe, F_OK) == 0)
    g_test_message ("this user (uid %u) reads a mode-000 folder; only the symlink loop was tried",
                    (guint) geteuid ());
  else
    assert_placeholders (fixture, manifest, g_strerror (EACCES));
  g_assert_cmpint (g_chmod (thumbs, 0700), ==, 0);

  /* Readable again: every thumbnail is back, no warning. */
  g_autoptr (LkLibrary) library = load_ok (fixture, manifest);
  g_assert_cmpstr (library->thumbnail[0], ==, "thumbs/a.png");
  g_assert_cmpstr (library->thumbnail[1], ==, "thumbs/b.png");
  g_assert_null (library->thumbnail_warning);
}

static void
test_resolve_path (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *real = realpath (fixture->dir, NULL);
  g_autofree char *expected = g_build_filename (real, "thumbs/a.png", NULL);

  g_autofree char *path = lk_library_resolve_path (fixture->dir, "thumbs/a.png", "x.y", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (path, ==, expected);

  g_assert_null (lk_library_resolve_path (fixture->dir, "a/../../b", "x.y", &error));
  assert_error (error, LK_LIBRARY_ERROR_PATH, "x.y", "“a/../../b”", NULL);
}

/* A manifest in standard JSON is read in chunks (lk-library.c, "Streaming");
 * the same manifest with a comment, which only the whole tree's parse reads,
 * gives every field the same: 700 faces and 600 photos (chunks of 256, a last
 * one short), the photos' array after the faces', ids (one empty, one given
 * twice) that the source's people name, boxes, labels and thumbnails. */
static void
test_streamed_load_equals_whole_tree (Fixture *fixture, gconstpointer data)
{
  const gsize n = 700, n_photos = 600;
  const guint dim = 8;
  g_autoptr (GString) json = g_string_new (NULL);
  g_autofree float *rows = g_new (float, n *dim);

  g_string_append_printf (json,
                          "{\"format\": \"likeness-library\", \"version\": 1,\n"
                          " \"embeddings\": {\"file\": \"embeddings.f32\", \"dim\": %u, "
                          "\"count\": %" G_GSIZE_FORMAT "},\n \"min_gallery_quality\": 0.4,\n"
                          " \"faces\": [",
                          dim, n);
  for (gsize i = 0; i < n; i++)
    {
      for (guint d = 0; d < dim; d++)
        rows[i * dim + d] = d == i % dim ? 1.0f : 0.0f;
      g_string_append_printf (json, "%s\n  { \"photo\": %" G_GSIZE_FORMAT ", \"crop_px\": %g",
                              i > 0 ? "," : "", i % n_photos, 40.0 + (double) (i % 97));
      if (i % 3 == 0)
        g_string_append_printf (json, ", \"quality\": %g", (double) (i % 10) / 10.0);
      if (i % 4 == 0)
        g_string_append_printf (json, ", \"box\": [%" G_GSIZE_FORMAT ", 2.5, 30, 31]", i);
      if (i % 5 == 0)
        g_string_append_printf (json, ", \"label\": \"p%" G_GSIZE_FORMAT "\"", i % 13);
      if (i % 2 == 0)
        g_string_append_printf (json, ", \"thumbnail\": \"thumbs/%" G_GSIZE_FORMAT ".png\"", i);
      if (i == 11)
        g_string_append (json, ", \"id\": \"\"");
      else if (i % 7 == 0)
        g_string_append_printf (json, ", \"id\": \"face-%" G_GSIZE_FORMAT "\"",
                                i == 14 ? (gsize) 7 : i);
      g_string_append (json, " }");
    }
  g_string_append (json, "],\n \"photos\": [");
  for (gsize k = 0; k < n_photos; k++)
    g_string_append_printf (json,
                            "%s{\"id\": %" G_GSIZE_FORMAT ", \"path\": \"p/%" G_GSIZE_FORMAT
                            ".jpg\", \"width\": %" G_GSIZE_FORMAT "%s}",
                            k > 0 ? ", " : "", k, k, 100 + k, k % 2 ? ", \"taken\": \"2020\"" : "");
  g_string_append (json,
                   "],\n \"people\": [{\"id\": \"a\", \"name\": \"Ada\", \"faces\": "
                   "[\"face-7\", \"\", \"face-21\", \"nobody\"]}],\n \"extra\": {\"x\": [1]}}\n");

  g_autofree char *plain = g_build_filename (fixture->dir, "plain", NULL);
  g_autofree char *commented = g_build_filename (fixture->dir, "commented", NULL);
  g_assert_cmpint (g_mkdir (plain, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (commented, 0700), ==, 0);
  write_file (plain, "library.json", json->str, (gssize) json->len);
  g_autofree char *with_comment = g_strconcat ("/* whole tree */ ", json->str, NULL);
  write_file (commented, "library.json", with_comment, -1);
  write_file (plain, "embeddings.f32", rows, (gssize) (n * dim * sizeof (float)));
  write_file (commented, "embeddings.f32", rows, (gssize) (n * dim * sizeof (float)));

  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) a = lk_library_load (plain, &error);
  g_assert_no_error (error);
  g_autoptr (LkLibrary) b = lk_library_load (commented, &error);
  g_assert_no_error (error);
  g_assert_true (a->streamed);
  g_assert_false (b->streamed);

  g_assert_cmpuint (a->count, ==, n);
  g_assert_cmpuint (b->count, ==, n);
  g_assert_cmpmem (a->embeddings, n * dim * sizeof (float), b->embeddings,
                   n * dim * sizeof (float));
  g_assert_cmpmem (a->photo, n * sizeof *a->photo, b->photo, n * sizeof *b->photo);
  g_assert_cmpmem (a->crop_px, n * sizeof (float), b->crop_px, n * sizeof (float));
  g_assert_cmpmem (a->quality, n * sizeof (float), b->quality, n * sizeof (float));
  g_assert_cmpmem (a->gallery, n, b->gallery, n);
  g_assert_cmpmem (a->has_box, n * sizeof (gboolean), b->has_box, n * sizeof (gboolean));
  g_assert_cmpmem (a->box, n * sizeof *a->box, b->box, n * sizeof *b->box);
  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpstr (a->thumbnail[i], ==, b->thumbnail[i]);
      g_assert_cmpstr (a->label[i], ==, b->label[i]);
      g_assert_cmpstr (a->face_id[i], ==, b->face_id[i]);
    }
  g_assert_nonnull (a->thumbnail[698]);
  g_assert_cmpstr (a->label[695], ==, "p6");
  g_assert_cmpuint (a->n_photos, ==, n_photos);
  g_assert_cmpuint (b->n_photos, ==, n_photos);
  for (gsize k = 0; k < n_photos; k++)
    {
      g_assert_cmpuint (a->photos[k].id, ==, b->photos[k].id);
      g_assert_cmpstr (a->photos[k].path, ==, b->photos[k].path);
      g_assert_cmpint (a->photos[k].width, ==, b->photos[k].width);
      g_assert_cmpstr (a->photos[k].taken, ==, b->photos[k].taken);
    }
  g_assert_cmpstr (lk_library_find_photo (a, 599)->path, ==, "p/599.jpg");
  g_assert_cmpuint (a->n_source_people, ==, 1);
  g_assert_cmpuint (b->n_source_people, ==, 1);
  g_assert_cmpuint (a->source_people[0].n_faces, ==, b->source_people[0].n_faces);
  g_assert_cmpmem (a->source_people[0].faces, a->source_people[0].n_faces * sizeof (guint32),
                   b->source_people[0].faces, b->source_people[0].n_faces * sizeof (guint32));
  /* "face-7" is the id of faces 7 and 14: the later one; "" is face 11's. */
  g_assert_cmpuint (a->source_people[0].n_faces, ==, 3);
  g_assert_cmpuint (a->source_people[0].faces[0], ==, 14);
  g_assert_cmpuint (a->source_people[0].faces[1], ==, 11);
  g_assert_cmpuint (a->source_unknown_faces, ==, b->source_unknown_faces);
}

/* A streamed load that goes wrong past the first chunk says what the whole
 * tree's parse says, line and field: a syntax error in face 600, a field
 * out of range in face 500, a member given twice in face 400. */
static void
test_streamed_errors_are_the_whole_trees (Fixture *fixture, gconstpointer data)
{
  static const struct
  {
    gsize face;
    const char *entry;
    const char *fragments[2];
  } cases[] = {
    { 600, "{\"photo\": 1 \"crop_px\": 50}", { "not valid JSON", "604:" } },
    { 500, "{\"photo\": 1, \"crop_px\": -3}", { "faces[500].crop_px", "-3" } },
    { 400, "{\"photo\": 1, \"crop_px\": 5, \"crop_px\": 6}", { "faces[400]", "crop_px" } },
  };
  const gsize n = 700;
  g_autofree float *rows = g_new0 (float, n);
  for (gsize i = 0; i < n; i++)
    rows[i] = 1.0f;

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GString) json = g_string_new (
          "{\"format\": \"likeness-library\", \"version\": 1,\n\"embeddings\": "
          "{\"file\": \"embeddings.f32\", \"dim\": 1, \"count\": 700},\n\"faces\": [");
      for (gsize i = 0; i < n; i++)
        g_string_append_printf (json, "%s\n%s", i > 0 ? "," : "",
                                i == cases[c].face ? cases[c].entry
                                                   : "{\"photo\": 1, \"crop_px\": 50}");
      g_string_append (json, "]}\n");
      write_file (fixture->dir, "library.json", json->str, (gssize) json->len);
      write_file (fixture->dir, "embeddings.f32", rows, (gssize) (n * sizeof (float)));
      g_autoptr (GError) error = NULL;
      g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
      g_assert_null (library);
      g_assert_nonnull (error);
      for (gsize f = 0; f < G_N_ELEMENTS (cases[c].fragments); f++)
        if (strstr (error->message, cases[c].fragments[f]) == NULL)
          g_error ("case %" G_GSIZE_FORMAT ": “%s” lacks “%s”", c, error->message,
                   cases[c].fragments[f]);
    }
}

/* The lexical rules of a library path, as an importer asks them: the same
 * the loader refuses a manifest by. */
static void
test_relative_path_ok (void)
{
  g_assert_true (lk_library_relative_path_ok ("2019/IMG_0042.jpg"));
  g_assert_true (lk_library_relative_path_ok ("a..b/..c/d.."));
  g_assert_true (lk_library_relative_path_ok ("./x.jpg"));
  g_assert_false (lk_library_relative_path_ok (""));
  g_assert_false (lk_library_relative_path_ok ("/home/ada/x.jpg"));
  g_assert_false (lk_library_relative_path_ok (".."));
  g_assert_false (lk_library_relative_path_ok ("../x.jpg"));
  g_assert_false (lk_library_relative_path_ok ("a/../../x.jpg"));
  g_assert_false (lk_library_relative_path_ok ("a/.."));
  g_autofree char *longest = g_strnfill (4095, 'a');
  g_autofree char *too_long = g_strnfill (4096, 'a');
  g_assert_true (lk_library_relative_path_ok (longest));
  g_assert_false (lk_library_relative_path_ok (too_long));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/library/defaults-applied", test_defaults_applied);
  ADD ("/library/streamed-load-equals-whole-tree", test_streamed_load_equals_whole_tree);
  ADD ("/library/streamed-errors-are-the-whole-trees", test_streamed_errors_are_the_whole_trees);
  ADD ("/library/every-field-read", test_every_field_read);
  ADD ("/library/unknown-fields-ignored", test_unknown_fields_ignored);
  ADD ("/library/empty-library-valid", test_empty_library_valid);
  ADD ("/library/rows-read-into-an-aligned-copy", test_rows_read_into_an_aligned_copy);
  ADD ("/library/embeddings-truncated-after-load-scan-unharmed",
       test_embeddings_truncated_after_load_scan_unharmed);
  ADD ("/library/embeddings-truncated-while-loading-refused-cleanly",
       test_embeddings_truncated_while_loading_refused_cleanly);
  ADD ("/library/unnormalized-rows-normalised-in-a-copy",
       test_unnormalized_rows_normalised_in_a_copy);
  ADD ("/library/near-unit-rows-accepted", test_near_unit_rows_accepted);
  ADD ("/library/fingerprint", test_fingerprint);
  ADD ("/library/missing-manifest", test_missing_manifest);
  ADD ("/library/not-json", test_not_json);
  ADD ("/library/deep-nesting-refused-not-a-crash", test_deep_nesting_refused_not_a_crash);
  ADD ("/library/integers-beyond-64-bits-refused", test_integers_beyond_64_bits_refused);
  ADD ("/library/fifo-refused-not-a-hang", test_fifo_refused_not_a_hang);
  ADD ("/library/folder-or-device-as-embeddings-refused",
       test_folder_or_device_as_embeddings_refused);
  ADD ("/library/byte-order-mark-accepted", test_byte_order_mark_accepted);
  ADD ("/library/nul-in-a-string-refused-naming-the-field",
       test_nul_in_a_string_refused_naming_the_field);
  ADD ("/library/top-level-not-an-object", test_top_level_not_an_object);
  ADD ("/library/second-top-level-value", test_second_top_level_value);
  ADD ("/library/duplicate-members", test_duplicate_members);
  ADD ("/library/duplicate-members-with-comments", test_duplicate_members_with_comments);
  ADD ("/library/wrong-format", test_wrong_format);
  ADD ("/library/higher-version", test_higher_version);
  ADD ("/library/missing-fields", test_missing_fields);
  ADD ("/library/wrong-json-types", test_wrong_json_types);
  ADD ("/library/photo-ids", test_photo_ids);
  ADD ("/library/crop-px-range", test_crop_px_range);
  ADD ("/library/quality-range", test_quality_range);
  ADD ("/library/thresholds-range", test_thresholds_range);
  ADD ("/library/gallery-flags-follow-min-gallery-quality",
       test_gallery_flags_follow_min_gallery_quality);
  ADD ("/library/dim-range", test_dim_range);
  ADD ("/library/faces-length-must-match-count", test_faces_length_must_match_count);
  ADD ("/library/box-must-have-four-numbers", test_box_must_have_four_numbers);
  ADD ("/library/size-mismatch", test_size_mismatch);
  ADD ("/library/count-overflow", test_count_overflow);
  ADD ("/library/missing-embeddings-file", test_missing_embeddings_file);
  ADD ("/library/nan-and-inf-rows", test_nan_and_inf_rows);
  ADD ("/library/zero-row", test_zero_row);
  ADD ("/library/non-unit-row-when-normalized", test_non_unit_row_when_normalized);
  ADD ("/library/manifest-error-before-row-error", test_manifest_error_before_row_error);
  ADD ("/library/absolute-paths-refused", test_absolute_paths_refused);
  ADD ("/library/photo-paths-refused", test_photo_paths_refused);
  ADD ("/library/photos-outside-the-library", test_photos_outside_the_library);
  ADD ("/library/dotdot-paths-refused", test_dotdot_paths_refused);
  ADD ("/library/symlinks-out-refused", test_symlinks_out_refused);
  ADD ("/library/missing-thumbnail-not-an-error", test_missing_thumbnail_not_an_error);
  ADD ("/library/resolve-path", test_resolve_path);
  ADD ("/library/unreadable-thumbnail-folder-gives-placeholders",
       test_unreadable_thumbnail_folder_gives_placeholders);
  ADD ("/library/huge-path-refused-in-linear-time", test_huge_path_refused_in_linear_time);
#undef ADD

  g_test_add_func ("/library/relative-path-ok", test_relative_path_ok);
  return g_test_run ();
}
