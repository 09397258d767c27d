/* test-import-photoprism.c — lk_import_photoprism against a real SQLite
 * index the test writes from PhotoPrism's schema facts (markers, files,
 * subjects, photos), with originals and cached thumbnails on disk as JPEGs
 * written with gdk-pixbuf. */
#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <sqlite3.h>
#include <string.h>

#include "lk-calibrate.h"
#include "lk-import-photoprism.h"
#include "lk-library.h"
#include "lk-test-util.h"
#include "lk-thumbnail.h"

#define DIM 512

typedef struct
{
  char *root; /* everything below is in here */
  char *database;
  char *storage;
  char *originals;
  char *outdir;
} Fixture;

static void
embedding (guint k, float *v)
{
  double norm = 0;
  for (guint d = 0; d < DIM; d++)
    {
      v[d] = (float) cos (0.29 * (k + 2) * (d + 1) + k);
      norm += (double) v[d] * v[d];
    }
  for (guint d = 0; d < DIM; d++)
    v[d] = (float) (v[d] / sqrt (norm));
}

static char *
embeddings_json (guint k)
{
  float v[DIM];
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  GString *s = g_string_new ("[[");
  embedding (k, v);
  for (guint d = 0; d < DIM; d++)
    {
      if (d > 0)
        g_string_append_c (s, ',');
      g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.9g", v[d]));
    }
  g_string_append (s, "]]");
  return g_string_free (s, FALSE);
}

static void
exec_or_die (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* A blue image with a red rectangle on every box (fractions of the image). */
static void
write_jpeg (const char *path, int width, int height, const double (*boxes)[4], guint n_boxes)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  gdk_pixbuf_fill (image, 0x0000ffff);
  for (guint k = 0; k < n_boxes; k++)
    {
      g_autoptr (GdkPixbuf) box = gdk_pixbuf_new_subpixbuf (
          image, (int) (boxes[k][0] * width), (int) (boxes[k][1] * height),
          (int) (boxes[k][2] * width), (int) (boxes[k][3] * height));
      gdk_pixbuf_fill (box, 0xff0000ff);
    }
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_pixbuf_save (image, path, "jpeg", &error, "quality", "95", NULL));
  g_assert_no_error (error);
}

/* Three files: fa1 (its original on disk, 1600 × 1200), fb2 (no original,
 * two cached fit thumbnails — the larger holds the face — and a crop), fc3
 * (nothing on disk). Markers: m1 and m2 on fa1, both Ada's (one photo: one
 * is refused); m3 a label and m4 invalid (both skipped); m5 on fb2, Bob's
 * (hidden); m6 on fc3, nobody's. */
static void
fixture_init (Fixture *fx, gboolean without_embedding)
{
  fx->root = g_dir_make_tmp ("likeness-photoprism-XXXXXX", NULL);
  fx->storage = g_build_filename (fx->root, "storage", NULL);
  fx->originals = g_build_filename (fx->root, "originals", NULL);
  fx->database = g_build_filename (fx->storage, "index.db", NULL);
  fx->outdir = g_build_filename (fx->root, "library", NULL);
  g_assert_cmpint (g_mkdir_with_parents (fx->storage, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (fx->originals, 0755), ==, 0);

  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  exec_or_die (db,
               "CREATE TABLE photos (id INTEGER PRIMARY KEY, photo_uid TEXT, taken_at DATETIME);"
               "CREATE TABLE files (id INTEGER PRIMARY KEY, photo_id INTEGER, file_uid TEXT,"
               " file_name TEXT, file_root TEXT, file_hash TEXT, file_width INTEGER,"
               " file_height INTEGER, file_orientation INTEGER, file_missing INTEGER);"
               "CREATE TABLE subjects (subj_uid TEXT PRIMARY KEY, subj_type TEXT, subj_name TEXT,"
               " subj_hidden INTEGER);"
               "CREATE TABLE markers (marker_uid TEXT PRIMARY KEY, file_uid TEXT, marker_type TEXT,"
               " subj_uid TEXT, face_id TEXT, embeddings_json TEXT, x REAL, y REAL, w REAL, h REAL,"
               " q INTEGER, size INTEGER, score INTEGER, marker_invalid INTEGER,"
               " marker_review INTEGER);"
               "INSERT INTO photos VALUES (1, 'pa1', '2019-06-01 10:00:00'), (2, 'pb2', NULL);"
               "INSERT INTO files VALUES"
               " (1, 1, 'fa1', '2019/a.jpg', '/', 'aaa111', 1600, 1200, 1, 0),"
               " (2, 2, 'fb2', '2020/b.jpg', '/', 'bbb222', 4000, 3000, 1, 1),"
               " (3, 2, 'fc3', '2020/c.jpg', '/', 'ccc333', 800, 600, 6, 1);"
               "INSERT INTO subjects VALUES ('sa', 'person', 'Ada', 0), ('sb', 'person', 'Bob', 1),"
               " ('sl', 'label', 'Beach', 0);");
  static const struct
  {
    const char *uid, *file, *type, *subject;
    double box[4];
    int invalid;
  } markers[] = {
    { "m1", "fa1", "face", "sa", { 0.10, 0.10, 0.10, 0.15 }, 0 },
    { "m2", "fa1", "face", "sa", { 0.50, 0.50, 0.10, 0.10 }, 0 },
    { "m3", "fa1", "label", "sl", { 0.0, 0.0, 1.0, 1.0 }, 0 },
    { "m4", "fa1", "face", NULL, { 0.7, 0.1, 0.1, 0.1 }, 1 },
    { "m5", "fb2", "face", "sb", { 0.20, 0.30, 0.20, 0.20 }, 0 },
    { "m6", "fc3", "face", NULL, { 0.40, 0.40, 0.10, 0.10 }, 0 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (markers); k++)
    {
      g_autofree char *json = without_embedding && k == 4 ? g_strdup ("[]") : embeddings_json (k);
      g_autofree char *subject
          = markers[k].subject ? g_strdup_printf ("'%s'", markers[k].subject) : g_strdup ("NULL");
      char x[32], y[32], w[32], h[32];
      g_autofree char *sql = g_strdup_printf (
          "INSERT INTO markers VALUES ('%s', '%s', '%s', %s, NULL, '%s', %s, %s, %s, %s, 50, 200,"
          " 40, %d, 0)",
          markers[k].uid, markers[k].file, markers[k].type, subject, json,
          g_ascii_dtostr (x, sizeof x, markers[k].box[0]),
          g_ascii_dtostr (y, sizeof y, markers[k].box[1]),
          g_ascii_dtostr (w, sizeof w, markers[k].box[2]),
          g_ascii_dtostr (h, sizeof h, markers[k].box[3]), markers[k].invalid);
      exec_or_die (db, sql);
    }
  sqlite3_close (db);

  const double fa1[2][4] = { { 0.10, 0.10, 0.10, 0.15 }, { 0.50, 0.50, 0.10, 0.10 } };
  g_autofree char *a = g_build_filename (fx->originals, "2019", "a.jpg", NULL);
  write_jpeg (a, 1600, 1200, fa1, 2);
  const double fb2[1][4] = { { 0.20, 0.30, 0.20, 0.20 } };
  g_autofree char *cache
      = g_build_filename (fx->storage, "cache", "thumbnails", "b", "b", "b", NULL);
  g_autofree char *big = g_build_filename (cache, "bbb222_1280x1024_fit.jpg", NULL);
  write_jpeg (big, 1280, 960, fb2, 1);
  g_autofree char *small = g_build_filename (cache, "bbb222_720x720_fit.jpg", NULL);
  write_jpeg (small, 720, 540, NULL, 0);
  g_autofree char *crop = g_build_filename (cache, "bbb222_3000x3000_center.jpg", NULL);
  write_jpeg (crop, 64, 64, NULL, 0);
}

static void
fixture_clear (Fixture *fx)
{
  lk_test_remove_tree (fx->root);
  g_free (fx->root);
  g_free (fx->database);
  g_free (fx->storage);
  g_free (fx->originals);
  g_free (fx->outdir);
}

static void
assert_red_face_on_blue (const LkLibrary *library, gsize k)
{
  g_autofree char *path = lk_library_thumbnail_path (library, k);
  g_assert_nonnull (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) t = lk_thumbnail_load (path, &error);
  g_assert_no_error (error);
  const guint8 *centre = t->pixels + 64 * t->stride + 64 * 4;
  g_assert_cmpuint (centre[0], >, 200);
  g_assert_cmpuint (centre[2], <, 60);
  const guint8 *corner = t->pixels + 3 * t->stride + 3 * 4;
  g_assert_cmpuint (corner[0], <, 60);
  g_assert_cmpuint (corner[2], >, 200);
}

static gsize read_last;

static void
on_progress (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  g_assert_cmpuint (done, <=, total);
  if (phase == LK_IMPORT_PHASE_READ)
    read_last = done;
}

static void
test_imports_faces_people_and_thumbnails (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  LkImportSummary summary = { 0 };
  LkImportPhotoprismOptions options
      = { fx.database, fx.storage, fx.originals, on_progress, NULL, &summary };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (read_last, ==, 4);
  g_autoptr (LkLibrary) library = lk_library_load (fx.outdir, &error);
  g_assert_no_error (error);

  /* The label and the invalid marker are gone. */
  g_assert_cmpuint (library->count, ==, 4);
  g_assert_cmpuint (library->n_photos, ==, 3);
  guint64 expected_photo[] = { 0, 0, 1, 2 };
  for (guint k = 0; k < 4; k++)
    g_assert_cmpuint (library->photo[k], ==, expected_photo[k]);
  /* Relative boxes in the file's pixels; fc3 is turned a quarter
   * (orientation 6): 600 wide as shown. */
  g_assert_cmpfloat_with_epsilon (library->box[0][0], 160, 1e-6);
  g_assert_cmpfloat_with_epsilon (library->box[0][3], 180, 1e-6);
  g_assert_cmpfloat_with_epsilon (library->crop_px[0], 180, 1e-3);
  g_assert_cmpfloat_with_epsilon (library->box[3][0], 0.4 * 600, 1e-6);
  g_assert_cmpstr (lk_library_find_photo (library, 0)->taken, ==, "2019-06-01T10:00:00Z");
  g_assert_null (lk_library_find_photo (library, 1)->taken);
  guint source_marker[] = { 0, 1, 4, 5 };
  for (guint k = 0; k < 4; k++)
    {
      float v[DIM];
      embedding (source_marker[k], v);
      const float *row = lk_library_row (library, k);
      for (guint d = 0; d < DIM; d++)
        g_assert_cmpfloat_with_epsilon (row[d], v[d], 1e-6);
    }

  /* From the original (fa1), from the largest cached fit thumbnail (fb2:
   * the smaller one holds no face, the "center" crop is not whole); fc3
   * has nothing on disk: a placeholder, counted. */
  assert_red_face_on_blue (library, 0);
  assert_red_face_on_blue (library, 1);
  assert_red_face_on_blue (library, 2);
  g_assert_null (library->thumbnail[3]);
  g_assert_cmpuint (summary.thumbnails, ==, 3);
  g_assert_cmpuint (summary.missing_previews, ==, 1);
  g_assert_cmpuint (summary.undecodable_previews, ==, 0);
  g_assert_cmpstr (summary.model, ==, "facenet");
  /* FaceNet's calibration prior, not the ArcFace default. */
  g_assert_true (summary.model_known);
  g_assert_cmpfloat (library->calibration.a, ==, lk_calibration_prior_for_model ("facenet")->a);
  g_assert_cmpfloat (library->calibration.b, ==, lk_calibration_prior_for_model ("facenet")->b);

  /* People: Ada (m1; m2 shares its photo and is refused) and hidden Bob. */
  g_assert_cmpuint (summary.people, ==, 2);
  g_assert_cmpuint (summary.refused_assignments, ==, 1);
  g_assert_cmpuint (library->n_source_people, ==, 2);
  g_assert_cmpstr (library->source_people[0].id, ==, "sa");
  g_assert_cmpstr (library->source_people[0].name, ==, "Ada");
  g_assert_cmpuint (library->source_people[0].n_faces, ==, 2);
  g_assert_true (library->source_people[1].hidden);
  g_assert_cmpuint (library->source_people[1].faces[0], ==, 2);

  g_autofree char *manifest_path = g_build_filename (fx.outdir, "library.json", NULL);
  g_autofree char *manifest = NULL;
  g_assert_true (g_file_get_contents (manifest_path, &manifest, NULL, NULL));
  g_assert_nonnull (strstr (manifest, "\"id\" : \"m5\""));
  g_assert_nonnull (strstr (manifest, "\"source_id\" : \"fb2\""));
  g_assert_nonnull (strstr (manifest, "\"kind\" : \"photoprism\""));
  g_assert_null (strstr (manifest, "Beach"));
  lk_import_summary_clear (&summary);
  fixture_clear (&fx);
}

static void
test_errors_name_what_is_wrong (void)
{
  Fixture fx;
  fixture_init (&fx, TRUE);
  LkImportPhotoprismOptions options = { fx.database, fx.storage, fx.originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  /* A face marker without an embedding, named. */
  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_assert_nonnull (strstr (error->message, "m5"));
  g_assert_false (g_file_test (fx.outdir, G_FILE_TEST_EXISTS));

  /* No such file. */
  g_clear_error (&error);
  g_autofree char *nowhere = g_build_filename (fx.root, "nowhere.db", NULL);
  options.database = nowhere;
  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, nowhere));
  g_assert_false (g_file_test (nowhere, G_FILE_TEST_EXISTS));

  /* A file that is no database. */
  g_clear_error (&error);
  g_autofree char *junk = g_build_filename (fx.root, "junk.db", NULL);
  g_assert_true (g_file_set_contents (junk, "this is not SQLite, not at all, no", -1, NULL));
  options.database = junk;
  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "junk.db"));

  /* SQLite, but not PhotoPrism's: the missing table is named. */
  g_clear_error (&error);
  g_autofree char *other = g_build_filename (fx.root, "other.db", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (other, &db), ==, SQLITE_OK);
  exec_or_die (db, "CREATE TABLE files (file_uid TEXT)");
  sqlite3_close (db);
  options.database = other;
  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA);
  g_assert_nonnull (strstr (error->message, "“markers” is missing"));

  /* MariaDB is not read yet, and says so. */
  g_clear_error (&error);
  options.database = "mysql://photoprism:secret@db/photoprism";
  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "MariaDB"));
  fixture_clear (&fx);
}

/* An embedding longer than any the library format takes, on the first marker
 * read: the error said "where 512 were expected", a number nothing expects
 * (no dimension is known yet, and 512 is no limit). */
static void
test_too_long_embedding_names_the_limit (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  LkImportPhotoprismOptions options = { fx.database, fx.storage, fx.originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) json = g_string_new ("[[");
  for (guint d = 0; d <= LK_LIBRARY_MAX_DIM; d++)
    g_string_append (json, d > 0 ? ",0.01" : "0.01");
  g_string_append (json, "]]");
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx.database, &db), ==, SQLITE_OK);
  g_autofree char *sql = g_strdup_printf (
      "UPDATE markers SET embeddings_json = '%s' WHERE marker_uid = 'm1'", json->str);
  exec_or_die (db, sql);
  sqlite3_close (db);

  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_autofree char *size = g_strdup_printf ("%u-float", LK_LIBRARY_MAX_DIM + 1);
  g_autofree char *limit = g_strdup_printf ("at most %u", LK_LIBRARY_MAX_DIM);
  g_assert_nonnull (strstr (error->message, "m1"));
  g_assert_nonnull (strstr (error->message, size));
  g_assert_nonnull (strstr (error->message, limit));
  g_assert_null (strstr (error->message, "512"));
  fixture_clear (&fx);
}

/* A subjects table that cannot be read (a damaged page here; a database
 * PhotoPrism keeps busy past the timeout does the same): the import used to
 * go on without the people the user named, saying nothing. */
static void
test_unreadable_subjects_are_an_error (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  LkImportPhotoprismOptions options = { fx.database, fx.storage, fx.originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;

  g_assert_cmpint (sqlite3_open (fx.database, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                                       "FROM sqlite_master WHERE name = 'subjects'",
                                       -1, &st, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 page = sqlite3_column_int64 (st, 0), page_size = sqlite3_column_int64 (st, 1);
  sqlite3_finalize (st);
  sqlite3_close (db);
  FILE *file = fopen (fx.database, "r+b");
  g_assert_nonnull (file);
  g_autofree char *garbage = g_malloc (page_size);
  memset (garbage, 0xff, page_size);
  g_assert_cmpint (fseek (file, (page - 1) * page_size, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (garbage, 1, page_size, file), ==, (gsize) page_size);
  fclose (file);

  g_assert_false (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "subjects"));
  g_assert_false (g_file_test (fx.outdir, G_FILE_TEST_EXISTS));
  fixture_clear (&fx);
}

static void
test_cancelled_import_leaves_nothing (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  LkImportPhotoprismOptions options = { fx.database, fx.storage, fx.originals, NULL, NULL, NULL };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (lk_import_photoprism (fx.outdir, &options, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autoptr (GDir) dir = g_dir_open (fx.root, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_true (strcmp (name, "storage") == 0 || strcmp (name, "originals") == 0);
  fixture_clear (&fx);
}

static void
test_cli_end_to_end (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photoprism", fx.outdir, "--database",
                                    fx.database, "--storage", fx.storage, "--originals",
                                    fx.originals, NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "Imported 4 faces of 3 photos"));
  g_assert_nonnull (strstr (out, "thumbnails=3 missing_previews=1"));
  g_assert_nonnull (strstr (out, "people=2 refused_assignments=1"));
  g_assert_nonnull (strstr (out, "calibration=prior of facenet"));
  g_assert_nonnull (strstr (err, "4 of 4 faces read"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photoprism", fx.outdir, "--media",
                                    fx.storage, "--database", fx.database, NULL),
                   ==, 2);
  fixture_clear (&fx);
}

static gsize
count_entries (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  gsize n = 0;
  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static void
test_reimport_updates_in_place_keeping_decisions (void)
{
  Fixture fx;
  fixture_init (&fx, FALSE);
  LkImportPhotoprismOptions options = { fx.database, fx.storage, fx.originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_no_error (error);
  /* The user names Ada's person and keeps a note beside the library. */
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "review", fx.outdir, "name", "sa", "Ada Lovelace", NULL), ==, 0);
  g_autofree char *notes = g_build_filename (fx.outdir, "notes.txt", NULL);
  g_assert_true (g_file_set_contents (notes, "mine", -1, NULL));

  /* In PhotoPrism meanwhile: m6 deleted, m7 found on fb2. */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx.database, &db), ==, SQLITE_OK);
  g_autofree char *json = embeddings_json (7);
  g_autofree char *sql = g_strdup_printf (
      "DELETE FROM markers WHERE marker_uid = 'm6';"
      "INSERT INTO markers VALUES ('m7', 'fb2', 'face', NULL, NULL, '%s', 0.6, 0.6, 0.1, 0.1, 50,"
      " 200, 40, 0, 0)",
      json);
  exec_or_die (db, sql);
  sqlite3_close (db);

  LkImportSummary summary = { 0 };
  options.summary = &summary;
  g_assert_true (lk_import_photoprism (fx.outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (LkLibrary) library = lk_library_load (fx.outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 4);
  const char *expected[] = { "m1", "m2", "m5", "m7" };
  for (guint k = 0; k < 4; k++)
    g_assert_cmpstr (library->face_id[k], ==, expected[k]);
  g_assert_cmpuint (summary.thumbnails, ==, 4);
  g_autofree char *thumbs = g_build_filename (fx.outdir, "thumbs", NULL);
  g_assert_cmpuint (count_entries (thumbs), ==, 4);

  /* What was not the importer's is still there, and the decision applies. */
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (notes, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, "mine");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", fx.outdir, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "sa\tAda Lovelace\t"));
  /* Nothing left beside: no temporary folder, no old library. */
  g_assert_cmpuint (count_entries (fx.root), ==, 3);

  /* A folder holding something else is refused, and left alone. */
  g_autofree char *other = g_build_filename (fx.root, "other", NULL);
  g_autofree char *other_file = g_build_filename (other, "library.json", NULL);
  g_assert_cmpint (g_mkdir (other, 0755), ==, 0);
  g_assert_true (
      g_file_set_contents (other_file, "{\"source\": {\"kind\": \"immich\"}}", -1, NULL));
  g_assert_false (lk_import_photoprism (other, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
  g_assert_nonnull (strstr (error->message, "imported from immich, not photoprism"));
  g_assert_cmpuint (count_entries (other), ==, 1);
  lk_import_summary_clear (&summary);
  fixture_clear (&fx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import-photoprism/imports-faces-people-and-thumbnails",
                   test_imports_faces_people_and_thumbnails);
  g_test_add_func ("/import-photoprism/errors-name-what-is-wrong", test_errors_name_what_is_wrong);
  g_test_add_func ("/import-photoprism/unreadable-subjects-are-an-error",
                   test_unreadable_subjects_are_an_error);
  g_test_add_func ("/import-photoprism/too-long-embedding-names-the-limit",
                   test_too_long_embedding_names_the_limit);
  g_test_add_func ("/import-photoprism/cancelled-import-leaves-nothing",
                   test_cancelled_import_leaves_nothing);
  g_test_add_func ("/import-photoprism/cli-end-to-end", test_cli_end_to_end);
  g_test_add_func ("/import-photoprism/reimport-updates-in-place-keeping-decisions",
                   test_reimport_updates_in_place_keeping_decisions);
  return g_test_run ();
}
