/* test-ui-export — Write Names to Photos… through the window, under Xvfb
 *
 * The window's action opens the dialog over the window, modal; it counts
 * before it writes (sidecars to create, nothing written yet), writes on
 * Write, and sums up; the sidecars are on disk and a second count finds
 * every one up to date. Stop right after Write leaves every sidecar whole.
 * With LK_EXPORT_SCREENSHOTS=DIR the dialog is saved before and after.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lk-export-dialog.h"
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
static void
check_fits (LkExportDialog *dialog, const char *name)
{
  lk_test_spin (500);
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

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);
  if (lk_export_dialog_available ())
    {
      g_test_add_func ("/ui-export/counts-then-writes", test_counts_then_writes);
      g_test_add_func ("/ui-export/refused-listed", test_refused_listed);
      g_test_add_func ("/ui-export/stop", test_stop);
    }
  return g_test_run ();
}
