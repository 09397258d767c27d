/* test-ui-export — Write Names to Photos… through the window, under Xvfb
 *
 * The window's action opens the dialog over the window, modal; it counts
 * before it writes (sidecars to create, nothing written yet), writes on
 * Write, and sums up; the sidecars are on disk and a second count finds
 * every one up to date. Stop right after Write leaves every sidecar whole.
 * The options (issue 32): PHOTO.xmp instead of PHOTO.jpg.xmp, digiKam's
 * tags (read back by ExifTool), and for a library whose photos are known
 * only by the server's paths, a folder mapping that turns "known only on
 * the server" into sidecars written here, and that the face viewer then
 * looks through too (before it, the viewer says where to give it).
 * With LK_EXPORT_SCREENSHOTS=DIR the dialog is saved before and after.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "lk-export-dialog.h"
#include "lk-face-viewer.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"

static gboolean
not_busy (gpointer data)
{
  return !lk_export_dialog_is_busy (data);
}

static LkExportDialog *
open_dialog (LkWindow *window)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.write-names", NULL));
  GListModel *toplevels = gtk_window_get_toplevels (); /* not ours */
  LkExportDialog *found = NULL;
  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_EXPORT_DIALOG (w))
        found = LK_EXPORT_DIALOG (w);
    }
  g_assert_nonnull (found);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (found)) == GTK_WINDOW (window));
  g_assert_true (gtk_window_get_modal (GTK_WINDOW (found)));
  return found;
}

/* The dialog shows all its text: its height is at least what it measures
 * for its width (a mapped window does not grow with its content by itself:
 * lk-export-dialog.c, fit). With LK_EXPORT_SCREENSHOTS=DIR, saved there. */
static gboolean
fitted (gpointer dialog)
{
  return gtk_widget_get_mapped (dialog) && !lk_export_dialog_is_fitting (dialog);
}

static void
check_fits (LkExportDialog *dialog, const char *name)
{
  lk_test_wait_for (fitted, dialog, "the dialog fitted to its text");
  lk_test_wait_laid_out (GTK_WIDGET (dialog), "the dialog laid out at its size");
  int width = gtk_widget_get_width (GTK_WIDGET (dialog));
  int height = gtk_widget_get_height (GTK_WIDGET (dialog));
  int min_h = 0, nat_h = 0;
  gtk_widget_measure (GTK_WIDGET (dialog), GTK_ORIENTATION_VERTICAL, width, &min_h, &nat_h, NULL,
                      NULL);
  GtkNative *native = GTK_NATIVE (dialog);
  double dx = 0, dy = 0;
  gtk_native_get_surface_transform (native, &dx, &dy);
  g_test_message ("%s: %d x %d, needs %d (+%g shadow)", name, width, height, min_h, 2 * dy);
  g_assert_cmpint (height + (int) (2 * dy), >=, min_h);
  const char *dir = g_getenv ("LK_EXPORT_SCREENSHOTS");
  if (dir == NULL || dir[0] == '\0')
    return;
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  lk_test_save_screenshot (GTK_WIDGET (dialog), path);
}

/* A sample library with its first person named. */
static char *
make_library (char **tmp)
{
  *tmp = g_dir_make_tmp ("likeness-ui-export-XXXXXX", NULL);
  char *lib = g_build_filename (*tmp, "lib", NULL);
  g_assert_cmpint (lk_test_run_cli (NULL, NULL, "make-sample", "-n", "300", lib, NULL), ==, 0);
  g_autofree char *people = NULL;
  g_assert_cmpint (lk_test_run_cli (&people, NULL, "people", lib, NULL), ==, 0);
  g_auto (GStrv) fields = g_strsplit (people, "\t", 2);
  g_assert_cmpint (
      lk_test_run_cli (NULL, NULL, "review", lib, "name", fields[0], "Zoë Ångström", NULL), ==, 0);
  return lib;
}

static guint
count_sidecars (const char *lib)
{
  guint n = 0;
  g_autoptr (GDir) top = g_dir_open (lib, 0, NULL);
  for (const char *year; (year = g_dir_read_name (top)) != NULL;)
    {
      g_autofree char *path = g_build_filename (lib, year, NULL);
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      if (dir == NULL)
        continue;
      for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
        {
          g_assert_false (name[0] == '.'); /* no temporary file left */
          n += g_str_has_suffix (name, ".xmp");
        }
    }
  return n;
}

static void
test_counts_then_writes (void)
{
  g_autofree char *tmp = NULL;
  g_autofree char *lib = make_library (&tmp);
  LkWindow *window = lk_test_open_window (NULL, lib, 900, 700);
  LkExportDialog *dialog = open_dialog (window);
  g_object_ref (dialog);
  lk_test_wait (not_busy, dialog);
  g_test_message ("count: %s", lk_export_dialog_get_text (dialog));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "to create, 0 to change"));
  g_assert_false (lk_export_dialog_is_done (dialog));
  g_assert_cmpuint (count_sidecars (lib), ==, 0);
  check_fits (dialog, "export-before");

  lk_export_dialog_start (dialog);
  g_assert_true (lk_export_dialog_is_busy (dialog));
  lk_test_wait (not_busy, dialog);
  g_test_message ("summary: %s", lk_export_dialog_get_text (dialog));
  g_assert_true (lk_export_dialog_is_done (dialog));
  g_assert_true (g_str_has_prefix (lk_export_dialog_get_text (dialog), "Done: "));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "0 could not be written"));
  guint written = count_sidecars (lib);
  g_assert_cmpuint (written, >, 0);
  check_fits (dialog, "export-after");
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);

  /* Counted again: every sidecar up to date, Write not offered. */
  dialog = g_object_ref (open_dialog (window));
  lk_test_wait (not_busy, dialog);
  g_autofree char *want
      = g_strdup_printf ("0 sidecars to create, 0 to change, %u already up to date", written);
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), want));
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

/* A photo that is gone is refused in the count, named in the list. */
static void
test_refused_listed (void)
{
  g_autofree char *tmp = NULL;
  g_autofree char *lib = make_library (&tmp);
  g_autofree char *out = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, NULL, "export", lib, "--xmp", "--dry-run", NULL), ==, 0);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  g_autofree char *sidecar = g_strdup (strrchr (lines[0], '\t') + 1);
  g_autofree char *photo = g_strndup (sidecar, strlen (sidecar) - strlen (".xmp"));
  g_assert_cmpint (g_unlink (photo), ==, 0);
  LkWindow *window = lk_test_open_window (NULL, lib, 900, 700);
  LkExportDialog *dialog = g_object_ref (open_dialog (window));
  lk_test_wait (not_busy, dialog);
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), ", 1 refused."));
  g_assert_nonnull (strstr (lk_export_dialog_get_problems (dialog), photo));
  g_assert_nonnull (strstr (lk_export_dialog_get_problems (dialog), "is missing"));
  check_fits (dialog, "export-refused");
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

static void
test_stop (void)
{
  g_autofree char *tmp = NULL;
  g_autofree char *lib = make_library (&tmp);
  LkWindow *window = lk_test_open_window (NULL, lib, 900, 700);
  LkExportDialog *dialog = g_object_ref (open_dialog (window));
  lk_test_wait (not_busy, dialog);
  lk_export_dialog_start (dialog);
  lk_export_dialog_stop (dialog);
  lk_test_wait (not_busy, dialog);
  g_test_message ("stopped: %s", lk_export_dialog_get_text (dialog));
  g_assert_true (lk_export_dialog_is_done (dialog));
  g_assert_true (g_str_has_prefix (lk_export_dialog_get_text (dialog), "Stopped after ")
                 || g_str_has_prefix (lk_export_dialog_get_text (dialog), "Done: "));
  /* Whatever was written is whole: the CLI reads every sidecar, none
   * refused. */
  g_autofree char *out = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, NULL, "export", lib, "--xmp", "--dry-run", NULL), ==, 0);
  g_assert_nonnull (strstr (out, " 0 refused, 0 failed"));
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

/* Sidecars under `dir` (recursively) whose name ends with `suffix`. */
static guint
count_suffix (const char *dir, const char *suffix, char **one)
{
  guint n = 0;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return 0;
  for (const char *name; (name = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        n += count_suffix (path, suffix, one);
      else if (g_str_has_suffix (name, suffix))
        {
          n++;
          if (one != NULL && *one == NULL)
            *one = g_strdup (path);
        }
    }
  return n;
}

static gboolean
viewer_settled (gpointer data)
{
  LkFaceViewer *viewer = data;
  return !lk_face_viewer_is_loading (viewer);
}

static gboolean
viewer_closed (gpointer viewer)
{
  return !gtk_widget_get_mapped (viewer);
}

/* The face viewer on face 0 of the window's library: its texture (the
 * photo decoded) or NULL, its message in *message. */
static gboolean
viewer_shows_photo (LkWindow *window, char **message)
{
  LkSession *session = lk_window_get_session (window);
  const guint32 faces[] = { 0 };
  LkFaceViewer *viewer
      = g_object_ref (lk_face_viewer_present (GTK_WINDOW (window), session, faces, 1, 0));
  lk_test_wait (viewer_settled, viewer);
  gboolean shown = lk_face_viewer_get_texture (viewer) != NULL;
  *message = g_strdup (lk_face_viewer_get_message (viewer));
  g_test_message ("viewer: %s", *message);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  lk_test_wait_idle ("the viewer's window gone");
  g_object_unref (viewer);
  return shown;
}

static gboolean
counted (gpointer data)
{
  return !lk_export_dialog_is_busy (data)
         && strstr (lk_export_dialog_get_text (data), "Counting") == NULL;
}

/* Sidecar names and digiKam's tags, chosen in the dialog: PHOTO.xmp, not
 * PHOTO.png.xmp, with digiKam:TagsList People/NAME, as ExifTool reads. */
static void
test_options (void)
{
  g_autofree char *tmp = NULL;
  g_autofree char *lib = make_library (&tmp);
  LkWindow *window = lk_test_open_window (NULL, lib, 900, 700);
  LkExportDialog *dialog = g_object_ref (open_dialog (window));
  lk_test_wait (counted, dialog);
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "(PHOTO.jpg.xmp)"));
  g_assert_false (lk_export_dialog_offers_map (dialog)); /* the photos are in the library */
  lk_export_dialog_set_sidecar_name (dialog, LK_EXPORT_XMP_NAME_BASENAME);
  lk_export_dialog_set_digikam_tags (dialog, TRUE);
  lk_test_wait (counted, dialog);
  g_test_message ("count: %s", lk_export_dialog_get_text (dialog));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "(PHOTO.xmp)"));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "to create, 0 to change"));
  check_fits (dialog, "export-options");
  lk_export_dialog_start (dialog);
  lk_test_wait (not_busy, dialog);
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "0 could not be written"));
  g_autofree char *one = NULL;
  guint all = count_suffix (lib, ".xmp", &one);
  g_assert_cmpuint (all, >, 0);
  g_assert_cmpuint (count_suffix (lib, ".png.xmp", NULL), ==, 0);
  g_assert_cmpuint (count_suffix (lib, ".jpg.xmp", NULL), ==, 0);

  g_autofree char *exiftool = g_find_program_in_path ("exiftool");
  if (exiftool == NULL && g_getenv ("LK_TEST_REQUIRE_EXIFTOOL") != NULL)
    g_error ("no exiftool (LK_TEST_REQUIRE_EXIFTOOL is set: the tags must be read back)");
  if (exiftool == NULL)
    g_test_message ("no exiftool: the tags are not read back");
  else
    {
      const char *argv[] = { exiftool, "-j", "-TagsList", one, NULL };
      g_autofree char *out = NULL;
      int status = -1;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                                   NULL, &out, NULL, &status, NULL));
      g_test_message ("%s: %s", one, out);
      g_assert_nonnull (strstr (out, "People/Zoë Ångström"));
    }
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

/* A library whose photos are known only by an Immich server's paths
 * (photos[].source_path, no photos[].path): the count says so and offers
 * nothing to write; the folder mapped in the dialog, the sidecars are
 * written there. */
static void
test_map (void)
{
  g_autofree char *tmp = NULL;
  g_autofree char *lib = make_library (&tmp);
  g_autofree char *upload = g_build_filename (tmp, "upload", NULL);
  g_autofree char *manifest = g_build_filename (lib, "library.json", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  JsonArray *photos = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "photos");
  for (guint k = 0; k < json_array_get_length (photos); k++)
    {
      JsonObject *photo = json_array_get_object_element (photos, k);
      g_autofree char *path = g_strdup (json_object_get_string_member (photo, "path"));
      g_autofree char *from = g_build_filename (lib, path, NULL);
      g_autofree char *to = g_build_filename (upload, "library", path, NULL);
      g_autofree char *dir = g_path_get_dirname (to);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_cmpint (g_rename (from, to), ==, 0);
      json_object_remove_member (photo, "path");
      g_autofree char *server = g_strconcat ("/usr/src/app/upload/library/", path, NULL);
      json_object_set_string_member (photo, "source_path", server);
    }
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_assert_no_error (error);

  LkWindow *window = lk_test_open_window (NULL, lib, 900, 700);
  g_autofree char *message = NULL;
  g_assert_false (viewer_shows_photo (window, &message));
  g_assert_nonnull (strstr (message, "/usr/src/app/upload/library/"));
  g_assert_nonnull (strstr (message, "Write Names to Photos"));
  LkExportDialog *dialog = g_object_ref (open_dialog (window));
  lk_test_wait (counted, dialog);
  g_test_message ("count: %s", lk_export_dialog_get_text (dialog));
  g_assert_true (lk_export_dialog_offers_map (dialog));
  g_assert_nonnull (
      strstr (lk_export_dialog_get_text (dialog), "known only by their path on the server"));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "/usr/src/app/upload/library/"));
  check_fits (dialog, "export-map-before");

  lk_export_dialog_set_map (dialog, "/usr/src/app/upload", upload);
  lk_test_wait (counted, dialog);
  g_test_message ("count: %s", lk_export_dialog_get_text (dialog));
  g_assert_null (strstr (lk_export_dialog_get_text (dialog), "known only"));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "to create, 0 to change"));
  g_assert_cmpuint (count_suffix (upload, ".xmp", NULL), ==, 0);
  check_fits (dialog, "export-map-counted");
  lk_export_dialog_start (dialog);
  lk_test_wait (not_busy, dialog);
  g_test_message ("summary: %s", lk_export_dialog_get_text (dialog));
  g_assert_nonnull (strstr (lk_export_dialog_get_text (dialog), "0 could not be written"));
  g_assert_cmpuint (count_suffix (upload, ".xmp", NULL), >, 0);
  g_assert_cmpuint (count_suffix (lib, ".xmp", NULL), ==, 0);
  check_fits (dialog, "export-map-after");
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  /* The viewer looks where the dialog was told to. */
  g_clear_pointer (&message, g_free);
  g_assert_true (viewer_shows_photo (window, &message));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);
  if (lk_export_dialog_available ())
    {
      g_test_add_func ("/ui-export/counts-then-writes", test_counts_then_writes);
      g_test_add_func ("/ui-export/refused-listed", test_refused_listed);
      g_test_add_func ("/ui-export/stop", test_stop);
      g_test_add_func ("/ui-export/options", test_options);
      g_test_add_func ("/ui-export/map", test_map);
    }
  return g_test_run ();
}
