/* test-review-location — the remembered review.json of read-only libraries
 *
 * XDG_CONFIG_HOME points into a temporary folder, set before GLib reads it,
 * so the user's own configuration is never read or written; each test starts
 * without the key file. (G_TEST_OPTION_ISOLATE_DIRS would do the same, but
 * GLib 2.74 leaks the strings it sets per test, which valgrind and LSan
 * report.)
 */
#include "config.h"

#include <glib/gstdio.h>

#include "lk-test-util.h"

#include "library/lk-review-location.h"

static void
forget_all (void)
{
  g_autofree char *store
      = g_build_filename (g_get_user_config_dir (), "likeness", "review-locations.ini", NULL);
  g_unlink (store);
}

static void
test_remember_lookup_forget (void)
{
  forget_all ();
  g_autoptr (GError) error = NULL;
  const char *library = "/media/dvd/photos";
  /* Bytes a key file group or key could not hold raw. */
  const char *odd = "/media/odd [x]=y\nz";

  g_assert_null (lk_review_location_lookup (library));
  g_assert_true (lk_review_location_remember (library, "/home/ada/keep/review.json", &error));
  g_assert_no_error (error);
  g_assert_true (lk_review_location_remember (odd, "/home/ada/o d d]=/review.json", &error));
  g_assert_no_error (error);

  g_autofree char *found = lk_review_location_lookup (library);
  g_assert_cmpstr (found, ==, "/home/ada/keep/review.json");
  g_autofree char *found_odd = lk_review_location_lookup (odd);
  g_assert_cmpstr (found_odd, ==, "/home/ada/o d d]=/review.json");
  g_assert_null (lk_review_location_lookup ("/media/dvd"));
  g_assert_null (lk_review_location_lookup ("/media/dvd/photos/"));

  /* It lives in the user's configuration, and only there. */
  g_autofree char *store
      = g_build_filename (g_get_user_config_dir (), "likeness", "review-locations.ini", NULL);
  g_assert_true (g_file_test (store, G_FILE_TEST_IS_REGULAR));

  /* Remembering again replaces; forgetting leaves the others. */
  g_assert_true (lk_review_location_remember (library, "/srv/other/review.json", &error));
  g_autofree char *replaced = lk_review_location_lookup (library);
  g_assert_cmpstr (replaced, ==, "/srv/other/review.json");
  g_assert_true (lk_review_location_remember (library, NULL, &error));
  g_assert_no_error (error);
  g_assert_null (lk_review_location_lookup (library));
  g_autofree char *still_odd = lk_review_location_lookup (odd);
  g_assert_cmpstr (still_odd, ==, "/home/ada/o d d]=/review.json");
  g_assert_true (lk_review_location_remember ("/never/remembered", NULL, &error));
  g_assert_no_error (error);
}

/* The file decisions start from: the remembered one when it exists, else the
 * library's own review.json; saves always go to the remembered one. */
static void
test_resolve_prefers_the_remembered_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("test-review-location-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *library = g_build_filename (tmp, "library", NULL);
  g_autofree char *elsewhere = g_build_filename (tmp, "elsewhere", NULL);
  g_autofree char *own = g_build_filename (library, "review.json", NULL);
  g_autofree char *remembered = g_build_filename (elsewhere, "review.json", NULL);
  char *start = NULL;

  forget_all ();
  g_autofree char *plain = lk_review_location_resolve (library, &start);
  g_assert_cmpstr (plain, ==, own);
  g_assert_cmpstr (start, ==, own);
  g_clear_pointer (&start, g_free);

  g_assert_true (lk_review_location_remember (library, remembered, &error));
  g_autofree char *not_yet = lk_review_location_resolve (library, &start);
  g_assert_cmpstr (not_yet, ==, remembered);
  g_assert_cmpstr (start, ==, own);
  g_clear_pointer (&start, g_free);

  g_assert_cmpint (g_mkdir (elsewhere, 0755), ==, 0);
  g_assert_true (g_file_set_contents (remembered, "{}", -1, NULL));
  g_autofree char *there = lk_review_location_resolve (library, &start);
  g_assert_cmpstr (there, ==, remembered);
  g_assert_cmpstr (start, ==, remembered);
  g_clear_pointer (&start, g_free);

  g_unlink (remembered);
  g_rmdir (elsewhere);
  g_rmdir (tmp);
}

int
main (int argc, char **argv)
{
  g_autofree char *config = g_dir_make_tmp ("test-review-location-config-XXXXXX", NULL);

  g_assert_nonnull (config);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/review-location/remember-lookup-forget", test_remember_lookup_forget);
  g_test_add_func ("/review-location/resolve-prefers-the-remembered-file",
                   test_resolve_prefers_the_remembered_file);
  int status = g_test_run ();
  lk_test_remove_tree (config);
  return status;
}
