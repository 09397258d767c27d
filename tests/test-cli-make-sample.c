/* test-cli-make-sample — `likeness-cli make-sample`: its exit statuses
 *
 * Runs the built likeness-cli ($LIKENESS_CLI): 0 and a loadable library on
 * success, 1 with the reason on stderr for a folder it must not touch, 2 for
 * bad usage, 0 for --help.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "library/lk-library.h"
#include "lk-test-util.h"

static gboolean
photo_exists (const LkLibrary *library, gsize p)
{
  g_autofree char *path = g_build_filename (library->folder, library->photos[p].path, NULL);
  return g_file_test (path, G_FILE_TEST_IS_REGULAR);
}

/* The library loads, with thumbnails and photos. */
static void
test_writes_a_library (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("test-cli-make-sample-XXXXXX", NULL);
  g_autofree char *folder = g_build_filename (tmp, "new", "lib", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", folder, "--faces", "25", "--seed",
                                    "4", "--dim", "64", NULL),
                   ==, 0);
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 25);
  g_assert_cmpuint (library->dim, ==, 64);
  g_autofree char *thumb = lk_library_thumbnail_path (library, 24);
  g_assert_true (g_file_test (thumb, G_FILE_TEST_IS_REGULAR));
  g_assert_true (photo_exists (library, library->n_photos - 1));
  /* The progress on stderr, as the importers show theirs (issue 30: 20,000
   * faces ran 57 s printing nothing), ending with every photo drawn. */
  g_autofree char *last
      = g_strdup_printf ("\r%zu of %zu photos drawn", library->n_photos, library->n_photos);
  g_assert_nonnull (strstr (err, last));
  g_assert_true (g_str_has_suffix (err, "\n"));
  lk_test_remove_tree (tmp);
}

static void
test_no_photos (void)
{
  g_autofree char *folder = g_dir_make_tmp ("test-cli-make-sample-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "make-sample", folder, "--faces", "10", "--no-photos", NULL), ==,
      0);
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_autofree char *thumb = lk_library_thumbnail_path (library, 9);
  g_assert_true (g_file_test (thumb, G_FILE_TEST_IS_REGULAR));
  g_assert_nonnull (library->photos[0].path);
  g_assert_false (photo_exists (library, 0));
  lk_test_remove_tree (folder);
}

static void
test_no_thumbnails (void)
{
  g_autofree char *folder = g_dir_make_tmp ("test-cli-make-sample-XXXXXX", NULL);
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "make-sample", folder, "--faces", "10", "--no-thumbnails", NULL),
      ==, 0);
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->dim, ==, 512);
  g_assert_null (library->thumbnail[0]);
  g_assert_false (g_file_test (thumbs, G_FILE_TEST_EXISTS));
  g_assert_false (photo_exists (library, 0)); /* photos are made of the drawn faces */
  lk_test_remove_tree (folder);
}

static void
test_refuses_foreign_folder (void)
{
  g_autofree char *folder = g_dir_make_tmp ("test-cli-make-sample-XXXXXX", NULL);
  g_autofree char *precious = g_build_filename (folder, "notes.txt", NULL);
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (g_file_set_contents (precious, "mine", -1, NULL));
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", folder, "--faces", "10", NULL), ==,
                   1);
  g_assert_nonnull (strstr (err, folder));
  g_assert_nonnull (strstr (err, "not a Likeness library"));
  g_assert_true (g_file_test (precious, G_FILE_TEST_IS_REGULAR));
  lk_test_remove_tree (folder);
}

static void
test_bad_usage (void)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *out2 = NULL, *err2 = NULL;
  g_autofree char *out3 = NULL, *err3 = NULL;
  g_autofree char *out4 = NULL, *err4 = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", "--faces", "10", NULL), ==, 2);
  g_assert_cmpint (lk_test_run_cli (&out2, &err2, "make-sample", "/tmp/x", NULL), ==, 2);
  g_assert_nonnull (strstr (err2, "--faces"));
  g_assert_cmpint (lk_test_run_cli (&out3, &err3, "make-sample", "/tmp/x", "--faces", "ten", NULL),
                   ==, 2);
  g_assert_cmpint (
      lk_test_run_cli (&out4, &err4, "make-sample", "/tmp/x", "--faces", "10", "--dim", "8", NULL),
      ==, 1);
  g_assert_nonnull (strstr (err4, "not 8"));
}

static void
test_help (void)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", "--help", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "--no-thumbnails"));
  g_assert_nonnull (strstr (out, "--seed"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli-make-sample/writes-a-library", test_writes_a_library);
  g_test_add_func ("/cli-make-sample/no-thumbnails", test_no_thumbnails);
  g_test_add_func ("/cli-make-sample/no-photos", test_no_photos);
  g_test_add_func ("/cli-make-sample/refuses-foreign-folder", test_refuses_foreign_folder);
  g_test_add_func ("/cli-make-sample/bad-usage", test_bad_usage);
  g_test_add_func ("/cli-make-sample/help", test_help);
  return g_test_run ();
}
