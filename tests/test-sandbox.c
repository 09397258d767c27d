/* test-sandbox — a path that is not there, named with what a Flatpak sees
 *
 * Inside the Flatpak a folder the app was not granted does not exist
 * (.ci/flatpak proves that in the real sandbox: a library outside every
 * granted folder). Here the message itself: from a /.flatpak-info written
 * as flatpak writes it, the hint names the path, the granted folders and the
 * override that grants the missing one; outside a Flatpak there is no hint,
 * and the library loader's "Cannot open" stays as it was.
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "lk-test-util.h"

#include "library/lk-library.h"
#include "library/lk-sandbox.h"

static char *
write_info (const char *dir, const char *contents)
{
  char *info = g_build_filename (dir, "flatpak-info", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (info, contents, -1, &error));
  g_assert_no_error (error);
  return info;
}

static void
test_hint_names_grants_and_override (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lk-sandbox-XXXXXX", NULL);
  g_autofree char *info = write_info (dir, "[Application]\n"
                                           "name=io.github.likeness.Likeness\n"
                                           "runtime=runtime/org.gnome.Platform/x86_64/51\n"
                                           "\n"
                                           "[Context]\n"
                                           "shared=network;ipc;\n"
                                           "filesystems=xdg-pictures:ro;\n");
  g_autofree char *photo = lk_sandbox_hint_from (info, "/srv/photos/2024/beach.jpg");
  g_assert_nonnull (photo);
  g_assert_true (g_str_has_prefix (photo, " "));
  g_assert_nonnull (strstr (photo, "Flatpak"));
  g_assert_nonnull (strstr (photo, "(xdg-pictures:ro)"));
  g_assert_nonnull (strstr (photo, "/srv/photos/2024/beach.jpg"));
  /* A file's folder is what gets granted; a folder is granted itself. */
  g_assert_nonnull (strstr (
      photo,
      "flatpak override --user --filesystem=/srv/photos/2024:ro io.github.likeness.Likeness"));
  g_autofree char *library = lk_sandbox_hint_from (info, "/srv/faces");
  g_assert_nonnull (strstr (library, "--filesystem=/srv/faces:ro "));
  lk_test_remove_tree (dir);
}

static void
test_hint_without_grants (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lk-sandbox-XXXXXX", NULL);
  /* No [Context] filesystems (none granted) and no name: the app's own id. */
  g_autofree char *info = write_info (dir, "[Application]\n");
  g_autofree char *hint = lk_sandbox_hint_from (info, "/data/lib");
  g_assert_nonnull (strstr (hint, "granted (none)"));
  g_assert_nonnull (strstr (hint, "--filesystem=/data/lib:ro " APP_ID));
  lk_test_remove_tree (dir);
}

static void
test_no_hint_outside_flatpak (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lk-sandbox-XXXXXX", NULL);
  g_autofree char *absent = g_build_filename (dir, "flatpak-info", NULL);
  g_assert_null (lk_sandbox_hint_from (absent, "/srv/photos/beach.jpg"));
  lk_test_remove_tree (dir);
}

static void
test_library_message_outside_flatpak (void)
{
  /* The tests do not run in a Flatpak: the loader's message is the plain
   * one, naming the folder and the system's reason. */
  if (g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("running inside a Flatpak");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("lk-sandbox-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "no-such-library", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (missing, &error);
  g_assert_null (library);
  g_assert_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO);
  g_autofree char *want
      = g_strdup_printf ("Cannot open the library folder “%s”: %s.", missing, g_strerror (ENOENT));
  g_assert_cmpstr (error->message, ==, want);
  lk_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sandbox/hint-names-grants-and-override", test_hint_names_grants_and_override);
  g_test_add_func ("/sandbox/hint-without-grants", test_hint_without_grants);
  g_test_add_func ("/sandbox/no-hint-outside-flatpak", test_no_hint_outside_flatpak);
  g_test_add_func ("/sandbox/library-message-outside-flatpak",
                   test_library_message_outside_flatpak);
  return g_test_run ();
}
