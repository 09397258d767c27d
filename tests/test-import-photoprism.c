/* test-import-photoprism.c — lk_import_photoprism against a real SQLite
 * index the test writes from PhotoPrism's schema facts (markers, files,
 * subjects, photos), with originals and cached thumbnails on disk as JPEGs
 * written with gdk-pixbuf (lk-test-photoprism.c). */
#include "config.h"

#include <errno.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "people/lk-calibrate.h"
#include "import/lk-import-photoprism.h"
#include "import/lk-import-private.h"
#include "library/lk-library.h"
#include "lk-test-photoprism.h"
#include "lk-test-util.h"
#include "library/lk-thumbnail.h"

#define DIM LK_TEST_PHOTOPRISM_DIM

static gsize read_last;

/* Every test's own index and images (lk-test-photoprism.c); user data
 * GINT_TO_POINTER (TRUE): marker m5 without its embedding. */
static void
photoprism_setup (LkTestPhotoprism *fx, gconstpointer data)
{
  lk_test_photoprism_init (fx, GPOINTER_TO_INT (data));
}

static void
photoprism_teardown (LkTestPhotoprism *fx, gconstpointer data)
{
  lk_test_photoprism_clear (fx);
}

static void
on_progress (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  g_assert_cmpuint (done, <=, total);
  if (phase == LK_IMPORT_PHASE_READ)
    read_last = done;
}

static void
test_imports_faces_people_and_thumbnails (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportSummary summary = { 0 };
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, on_progress, NULL, &summary };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (read_last, ==, 4);
  g_autoptr (LkLibrary) library = lk_library_load (fx->outdir, &error);
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
  /* With --originals, the library names that folder and each original in
   * it: the face viewer and export --xmp find photo 0's original there. */
  g_autofree char *originals = g_canonicalize_filename (fx->originals, NULL);
  g_assert_cmpuint (library->n_photo_folders, ==, 1);
  g_assert_cmpstr (library->photo_folders[0], ==, originals);
  const LkPhoto *first = lk_library_find_photo (library, 0);
  g_assert_nonnull (first->original);
  g_autofree char *original = lk_library_photo_file (library, first, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (original, originals));
  g_assert_true (g_file_test (original, G_FILE_TEST_IS_REGULAR));
  g_assert_null (lk_library_find_photo (library, 1)->taken);
  guint source_marker[] = { 0, 1, 4, 5 };
  for (guint k = 0; k < 4; k++)
    {
      float v[DIM];
      lk_test_photoprism_embedding (source_marker[k], v);
      const float *row = lk_library_row (library, k);
      for (guint d = 0; d < DIM; d++)
        g_assert_cmpfloat_with_epsilon (row[d], v[d], 1e-6);
    }

  /* From the original (fa1), from the smallest cached fit thumbnail that
   * gives m5 its 128 pixels (fb2: the 720-px one, the only one holding the
   * face; the "center" crop is not whole); fc3 has nothing on disk: a
   * placeholder, counted. */
  lk_test_assert_red_face_on_blue (library, 0);
  lk_test_assert_red_face_on_blue (library, 1);
  lk_test_assert_red_face_on_blue (library, 2);
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

  g_autofree char *manifest_path = g_build_filename (fx->outdir, "library.json", NULL);
  g_autofree char *manifest = NULL;
  g_assert_true (g_file_get_contents (manifest_path, &manifest, NULL, NULL));
  g_assert_nonnull (strstr (manifest, "\"id\" : \"m5\""));
  g_assert_nonnull (strstr (manifest, "\"source_id\" : \"fb2\""));
  g_assert_nonnull (strstr (manifest, "\"kind\" : \"photoprism\""));
  g_assert_null (strstr (manifest, "Beach"));
  lk_import_summary_clear (&summary);
}

static void
test_errors_name_what_is_wrong (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  /* A face marker without an embedding, named. */
  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_assert_nonnull (strstr (error->message, "m5"));
  g_assert_false (g_file_test (fx->outdir, G_FILE_TEST_EXISTS));

  /* No such file. */
  g_clear_error (&error);
  g_autofree char *nowhere = g_build_filename (fx->root, "nowhere.db", NULL);
  options.database = nowhere;
  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, nowhere));
  g_assert_false (g_file_test (nowhere, G_FILE_TEST_EXISTS));

  /* A file that is no database. */
  g_clear_error (&error);
  g_autofree char *junk = g_build_filename (fx->root, "junk.db", NULL);
  g_assert_true (g_file_set_contents (junk, "this is not SQLite, not at all, no", -1, NULL));
  options.database = junk;
  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "junk.db"));

  /* SQLite, but not PhotoPrism's: the missing table is named. */
  g_clear_error (&error);
  g_autofree char *other = g_build_filename (fx->root, "other.db", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (other, &db), ==, SQLITE_OK);
  lk_test_photoprism_exec (db, "CREATE TABLE files (file_uid TEXT)");
  sqlite3_close (db);
  options.database = other;
  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA);
  g_assert_nonnull (strstr (error->message, "“markers” is missing"));

  /* MariaDB is not read yet, and says so. */
  g_clear_error (&error);
  options.database = "mysql://photoprism:secret@db/photoprism";
  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "MariaDB"));
}

/* An embedding longer than any the library format takes, on the first marker
 * read: the error said "where 512 were expected", a number nothing expects
 * (no dimension is known yet, and 512 is no limit). */
static void
test_too_long_embedding_names_the_limit (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) json = g_string_new ("[[");
  for (guint d = 0; d <= LK_LIBRARY_MAX_DIM; d++)
    g_string_append (json, d > 0 ? ",0.01" : "0.01");
  g_string_append (json, "]]");
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  g_autofree char *sql = g_strdup_printf (
      "UPDATE markers SET embeddings_json = '%s' WHERE marker_uid = 'm1'", json->str);
  lk_test_photoprism_exec (db, sql);
  sqlite3_close (db);

  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_autofree char *size = g_strdup_printf ("%u-float", LK_LIBRARY_MAX_DIM + 1);
  g_autofree char *limit = g_strdup_printf ("1 to %u", LK_LIBRARY_MAX_DIM);
  g_assert_nonnull (strstr (error->message, "m1"));
  g_assert_nonnull (strstr (error->message, size));
  g_assert_nonnull (strstr (error->message, limit));
  g_assert_null (strstr (error->message, "512"));
}

/* A subjects table that cannot be read (a damaged page here; a database
 * PhotoPrism keeps busy past the timeout does the same): the import used to
 * go on without the people the user named, saying nothing. */
static void
test_unreadable_subjects_are_an_error (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;

  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                                       "FROM sqlite_master WHERE name = 'subjects'",
                                       -1, &st, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 page = sqlite3_column_int64 (st, 0), page_size = sqlite3_column_int64 (st, 1);
  sqlite3_finalize (st);
  sqlite3_close (db);
  FILE *file = fopen (fx->database, "r+b");
  g_assert_nonnull (file);
  g_autofree char *garbage = g_malloc (page_size);
  memset (garbage, 0xff, page_size);
  g_assert_cmpint (fseek (file, (page - 1) * page_size, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (garbage, 1, page_size, file), ==, (gsize) page_size);
  fclose (file);

  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "subjects"));
  g_assert_false (g_file_test (fx->outdir, G_FILE_TEST_EXISTS));
}

static void
test_cancelled_import_leaves_nothing (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (lk_import_photoprism (fx->outdir, &options, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autoptr (GDir) dir = g_dir_open (fx->root, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_true (strcmp (name, "storage") == 0 || strcmp (name, "originals") == 0);
}

static void
test_cli_end_to_end (LkTestPhotoprism *fx, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photoprism", fx->outdir, "--database",
                                    fx->database, "--storage", fx->storage, "--originals",
                                    fx->originals, NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "Imported 4 faces of 3 photos"));
  g_assert_nonnull (strstr (out, "thumbnails=3 missing_previews=1"));
  g_assert_nonnull (strstr (out, "people=2 refused_assignments=1"));
  g_assert_nonnull (strstr (out, "calibration=prior of facenet"));
  g_assert_nonnull (strstr (err, "4 of 4 faces read"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "import", "photoprism", fx->outdir, "--media",
                                    fx->storage, "--database", fx->database, NULL),
                   ==, 2);
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
test_reimport_updates_in_place_keeping_decisions (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  /* The user names Ada's person and keeps a note beside the library. */
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "review", fx->outdir, "name", "sa", "Ada Lovelace", NULL), ==,
      0);
  g_autofree char *notes = g_build_filename (fx->outdir, "notes.txt", NULL);
  g_assert_true (g_file_set_contents (notes, "mine", -1, NULL));

  /* In PhotoPrism meanwhile: m6 deleted, m7 found on fb2. */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  g_autofree char *json = lk_test_photoprism_embeddings_json (7);
  g_autofree char *sql = g_strdup_printf (
      "DELETE FROM markers WHERE marker_uid = 'm6';"
      "INSERT INTO markers VALUES ('m7', 'fb2', 'face', NULL, NULL, '%s', 0.6, 0.6, 0.1, 0.1, 50,"
      " 200, 40, 0, 0)",
      json);
  lk_test_photoprism_exec (db, sql);
  sqlite3_close (db);

  LkImportSummary summary = { 0 };
  options.summary = &summary;
  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (LkLibrary) library = lk_library_load (fx->outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 4);
  const char *expected[] = { "m1", "m2", "m5", "m7" };
  for (guint k = 0; k < 4; k++)
    g_assert_cmpstr (library->face_id[k], ==, expected[k]);
  g_assert_cmpuint (summary.thumbnails, ==, 4);
  g_autofree char *thumbs = g_build_filename (fx->outdir, "thumbs", NULL);
  g_assert_cmpuint (count_entries (thumbs), ==, 4);

  /* What was not the importer's is still there, and the decision applies. */
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (notes, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, "mine");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", fx->outdir, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "sa\tAda Lovelace\t"));
  /* Nothing left beside: no temporary folder, no old library. */
  g_assert_cmpuint (count_entries (fx->root), ==, 3);

  /* A folder holding something else is refused, and left alone. */
  g_autofree char *other = g_build_filename (fx->root, "other", NULL);
  g_autofree char *other_file = g_build_filename (other, "library.json", NULL);
  g_assert_cmpint (g_mkdir (other, 0755), ==, 0);
  g_assert_true (
      g_file_set_contents (other_file, "{\"source\": {\"kind\": \"immich\"}}", -1, NULL));
  g_assert_false (lk_import_photoprism (other, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
  g_assert_nonnull (strstr (error->message, "imported from immich, not photoprism"));
  g_assert_cmpuint (count_entries (other), ==, 1);
  lk_import_summary_clear (&summary);
}

/* A file system without RENAME_EXCHANGE: the swap takes two renames (old
 * library aside, new one in, old one to the temporary name to be removed).
 * `fail_at` makes that rename (1, 2 or 3) fail as a full disk or a
 * concurrent process could; 0 none. */
static int rename_calls;
static int rename_fail_at;

static int
rename_without_exchange (const char *from, const char *to, gboolean exchange)
{
  if (exchange)
    {
      errno = EINVAL;
      return -1;
    }
  if (++rename_calls == rename_fail_at)
    {
      errno = EIO;
      return -1;
    }
  return rename (from, to);
}

static void
reimport_without_exchange (LkTestPhotoprism *fx, int fail_at)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "review", fx->outdir, "name", "sa", "Ada Lovelace", NULL), ==,
      0);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  lk_test_photoprism_exec (db, "DELETE FROM markers WHERE marker_uid = 'm6'");
  sqlite3_close (db);

  rename_calls = 0;
  rename_fail_at = fail_at;
  LkImportRenameFunc real = lk_import_rename_func;
  lk_import_rename_func = rename_without_exchange;
  gboolean ok = lk_import_photoprism (fx->outdir, &options, NULL, &error);
  lk_import_rename_func = real;
  /* Aside, in, out (or, when "in" fails, the old library back in). */
  g_assert_cmpint (rename_calls, ==, fail_at == 1 ? 1 : 3);
  /* Only a failure before the new library is in place fails the import. */
  if (fail_at == 1 || fail_at == 2)
    {
      g_assert_false (ok);
      g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
      g_assert_nonnull (strstr (error->message, "Cannot replace the library in"));
      g_clear_error (&error);
    }
  else
    {
      g_assert_true (ok);
      g_assert_no_error (error);
    }
  g_autoptr (LkLibrary) library = lk_library_load (fx->outdir, &error);
  g_assert_no_error (error);
  /* m6 gone when the new library went in; all four faces when the old stayed. */
  g_assert_cmpuint (library->count, ==, (fail_at == 1 || fail_at == 2) ? 4 : 3);
  /* The decision is there either way, and nothing is left beside. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", fx->outdir, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "sa\tAda Lovelace\t"));
  g_assert_cmpuint (count_entries (fx->root), ==, 3);
}

static void
test_reimport_without_exchange_replaces (LkTestPhotoprism *fx, gconstpointer data)
{
  reimport_without_exchange (fx, 0);
}

static void
test_reimport_without_exchange_survives_each_failed_rename (LkTestPhotoprism *fx,
                                                            gconstpointer data)
{
  for (int fail_at = 1; fail_at <= 3; fail_at++)
    {
      /* Each failure on an index and library of its own. */
      if (fail_at > 1)
        {
          lk_test_photoprism_clear (fx);
          lk_test_photoprism_init (fx, FALSE);
        }
      reimport_without_exchange (fx, fail_at);
    }
}

/* A lock file planted as a symbolic link is not followed (it could create
 * or lock a file anywhere): the re-import stops, naming it, and the library
 * stays as it was. */
static void
test_reimport_refuses_a_symlinked_lock (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *lock = g_build_filename (fx->outdir, ".review.json.lock", NULL);
  g_autofree char *elsewhere = g_build_filename (fx->root, "planted", NULL);
  g_assert_cmpint (symlink (elsewhere, lock), ==, 0);

  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
  g_assert_nonnull (strstr (error->message, ".review.json.lock"));
  g_assert_false (g_file_test (elsewhere, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  g_autoptr (LkLibrary) library = lk_library_load (fx->outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 4);
  g_assert_true (g_file_test (lock, G_FILE_TEST_IS_SYMLINK));
}

/* A smaller fit thumbnail serves a photo only when it gives every one of
 * its faces 128 pixels: with m7 (a tenth of fb2's width: 108 pixels in the
 * 720-px thumbnail) beside m5, both are cut from the 1280-px one, which
 * holds no face (blue all over). */
static void
test_smaller_fit_only_when_it_serves_every_face (LkTestPhotoprism *fx, gconstpointer data)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  g_autofree char *json = lk_test_photoprism_embeddings_json (7);
  g_autofree char *sql = g_strdup_printf (
      "INSERT INTO markers VALUES ('m7', 'fb2', 'face', NULL, NULL, '%s', 0.6, 0.6, 0.1, 0.1, 50,"
      " 200, 40, 0, 0)",
      json);
  lk_test_photoprism_exec (db, sql);
  sqlite3_close (db);
  LkImportPhotoprismOptions options = { fx->database, fx->storage, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (LkLibrary) library = lk_library_load (fx->outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (library->face_id[2], ==, "m5");
  g_assert_cmpstr (library->face_id[3], ==, "m7");
  for (gsize k = 2; k < 4; k++)
    {
      g_autofree char *path = lk_library_thumbnail_path (library, k);
      g_assert_nonnull (path);
      g_autoptr (LkThumbnail) t = lk_thumbnail_load (path, &error);
      g_assert_no_error (error);
      const guint8 *centre = t->pixels + 64 * t->stride + 64 * 4;
      g_assert_cmpuint (centre[0], <, 60);
      g_assert_cmpuint (centre[2], >, 200);
    }
}

/* LkImportProgress for test_unwritable_embeddings_stop_the_import: once
 * faces are read, a folder is planted where embeddings.f32 goes in the
 * import's own (hidden) folder beside `parent`, so writing it fails. */
static void
plant_embeddings_folder (LkImportPhase phase, gsize done, gsize total, gpointer parent)
{
  (void) done;
  (void) total;
  if (phase != LK_IMPORT_PHASE_READ)
    return;
  g_autoptr (GDir) dir = g_dir_open (parent, 0, NULL);
  g_assert_nonnull (dir);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (name[0] == '.' && strstr (name, "importing") != NULL)
      {
        g_autofree char *planted = g_build_filename (parent, name, "embeddings.f32", "kept", NULL);
        g_assert_cmpint (g_mkdir_with_parents (planted, 0755), ==, 0);
      }
}

/* The embeddings are written while the thumbnails are still being cut: when
 * that fails, the import fails naming it, the workers stop, the thumbnails
 * already cut are removed and no library appears. */
static void
test_unwritable_embeddings_stop_the_import (LkTestPhotoprism *fx, gconstpointer data)
{
  LkImportPhotoprismOptions options
      = { fx->database, fx->storage, fx->originals, plant_embeddings_folder, fx->root, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_photoprism (fx->outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
  g_assert_nonnull (strstr (error->message, "Cannot write the library"));
  g_assert_nonnull (strstr (error->message, "embeddings.f32"));
  g_assert_false (g_file_test (fx->outdir, G_FILE_TEST_EXISTS));
  /* Of the import's folder only the planted one is left (it is not the
   * import's to remove). */
  g_autoptr (GDir) dir = g_dir_open (fx->root, 0, NULL);
  const char *name;
  guint hidden = 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (name[0] == '.' && strstr (name, "importing") != NULL)
      {
        g_autofree char *folder = g_build_filename (fx->root, name, NULL);
        g_assert_cmpuint (count_entries (folder), ==, 1);
        g_autofree char *planted = g_build_filename (folder, "embeddings.f32", NULL);
        g_assert_true (g_file_test (planted, G_FILE_TEST_IS_DIR));
        hidden++;
      }
  g_assert_cmpuint (hidden, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/import-photoprism/imports-faces-people-and-thumbnails", LkTestPhotoprism, NULL,
              photoprism_setup, test_imports_faces_people_and_thumbnails, photoprism_teardown);
  g_test_add ("/import-photoprism/errors-name-what-is-wrong", LkTestPhotoprism,
              GINT_TO_POINTER (TRUE), photoprism_setup, test_errors_name_what_is_wrong,
              photoprism_teardown);
  g_test_add ("/import-photoprism/unreadable-subjects-are-an-error", LkTestPhotoprism, NULL,
              photoprism_setup, test_unreadable_subjects_are_an_error, photoprism_teardown);
  g_test_add ("/import-photoprism/too-long-embedding-names-the-limit", LkTestPhotoprism, NULL,
              photoprism_setup, test_too_long_embedding_names_the_limit, photoprism_teardown);
  g_test_add ("/import-photoprism/cancelled-import-leaves-nothing", LkTestPhotoprism, NULL,
              photoprism_setup, test_cancelled_import_leaves_nothing, photoprism_teardown);
  g_test_add ("/import-photoprism/cli-end-to-end", LkTestPhotoprism, NULL, photoprism_setup,
              test_cli_end_to_end, photoprism_teardown);
  g_test_add ("/import-photoprism/reimport-updates-in-place-keeping-decisions", LkTestPhotoprism,
              NULL, photoprism_setup, test_reimport_updates_in_place_keeping_decisions,
              photoprism_teardown);
  g_test_add ("/import-photoprism/reimport-without-exchange-replaces", LkTestPhotoprism, NULL,
              photoprism_setup, test_reimport_without_exchange_replaces, photoprism_teardown);
  g_test_add ("/import-photoprism/reimport-without-exchange-survives-each-failed-rename",
              LkTestPhotoprism, NULL, photoprism_setup,
              test_reimport_without_exchange_survives_each_failed_rename, photoprism_teardown);
  g_test_add ("/import-photoprism/reimport-refuses-a-symlinked-lock", LkTestPhotoprism, NULL,
              photoprism_setup, test_reimport_refuses_a_symlinked_lock, photoprism_teardown);
  g_test_add ("/import-photoprism/smaller-fit-only-when-it-serves-every-face", LkTestPhotoprism,
              NULL, photoprism_setup, test_smaller_fit_only_when_it_serves_every_face,
              photoprism_teardown);
  g_test_add ("/import-photoprism/unwritable-embeddings-stop-the-import", LkTestPhotoprism, NULL,
              photoprism_setup, test_unwritable_embeddings_stop_the_import, photoprism_teardown);
  return g_test_run ();
}
