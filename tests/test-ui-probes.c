/* test-ui-probes — the developer probes attach from outside the window, under Xvfb
 *
 * The window says when a load starts and lands ("load-started",
 * "load-finished"); the probes (lk-window-probes.c) act on those, and only on
 * a window the application attached them to: with LIKENESS_SCREENSHOT set, a
 * window nobody attached them to opens its library and stays as it is,
 * while an attached one shows the page asked for, writes the PNG and closes.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "library/lk-sample.h"
#include "people/lk-person-item.h"
#include "lk-face-viewer.h"
#include "lk-screenshot.h"
#include "lk-scroll-probe.h"

#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"
#include "lk-window-probes.h"

static char *library_dir;
static char *tmp_dir;

typedef struct
{
  guint started;
  guint finished;
  gboolean loaded;
  gboolean session_at_start; /* lk_window_get_session () != NULL at "load-started" */
} Events;

static void
on_started (LkWindow *window, gpointer data)
{
  Events *events = data;

  events->started++;
  events->session_at_start = lk_window_get_session (window) != NULL;
}

static void
on_finished (LkWindow *window, gboolean loaded, gpointer data)
{
  Events *events = data;

  events->finished++;
  events->loaded = loaded;
}

static gboolean
finished (gpointer data)
{
  return ((Events *) data)->finished > 0;
}

static gboolean
session_loaded (gpointer session)
{
  return !lk_session_is_loading (session);
}

/* A library, a re-scan, a folder that is none, a cancelled load: the
 * signals say each landing once, and nothing for the cancelled one. */
static void
test_load_signals (void)
{
  LkWindow *window = lk_window_new (NULL);
  Events events = { 0 };
  g_autoptr (GFile) library = g_file_new_for_path (library_dir);
  g_autofree char *missing = g_build_filename (tmp_dir, "no-such-library", NULL);
  g_autoptr (GFile) nowhere = g_file_new_for_path (missing);

  g_signal_connect (window, "load-started", G_CALLBACK (on_started), &events);
  g_signal_connect (window, "load-finished", G_CALLBACK (on_finished), &events);
  gtk_window_present (GTK_WINDOW (window));

  lk_window_open (window, library);
  g_assert_cmpuint (events.started, ==, 1);
  g_assert_false (events.session_at_start);
  g_assert_cmpuint (events.finished, ==, 0);
  lk_test_wait (finished, &events);
  g_assert_true (events.loaded);
  g_assert_nonnull (lk_window_get_session (window));

  events = (Events){ 0 };
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.rescan", NULL));
  g_assert_cmpuint (events.started, ==, 1);
  g_assert_true (events.session_at_start);
  lk_test_wait (finished, &events);
  g_assert_true (events.loaded);

  events = (Events){ 0 };
  lk_window_open (window, nowhere);
  lk_test_wait (finished, &events);
  g_assert_false (events.loaded);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");

  /* Cancelled: started, never finished. */
  events = (Events){ 0 };
  lk_window_open (window, library);
  g_autoptr (LkSession) cancelled = g_object_ref (window->loading);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  g_assert_false (lk_window_is_busy (window));
  /* The cancelled load's worker has come back, and its answer has reached
   * the window (which must drop it). */
  lk_test_wait_for (session_loaded, cancelled, "the cancelled load's worker to end");
  lk_test_wait_idle ("the cancelled load's answer handled");
  g_assert_cmpuint (events.started, ==, 1);
  g_assert_cmpuint (events.finished, ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
loaded (gpointer data)
{
  return !lk_window_is_busy (data) && lk_window_get_session (data) != NULL;
}

static gboolean
file_written (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_IS_REGULAR);
}

static void
test_absent_unless_attached (void)
{
  g_autofree char *shot = g_build_filename (tmp_dir, "absent.png", NULL);
  g_autoptr (GFile) library = g_file_new_for_path (library_dir);

  g_setenv ("LIKENESS_SCREENSHOT", shot, TRUE);
  g_setenv ("LIKENESS_SCREENSHOT_PAGE", "person", TRUE);
  g_setenv ("LIKENESS_STALL_PROBE", "1", TRUE);
  LkWindow *window = g_object_ref_sink (lk_window_new (NULL));
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, library);
  lk_test_wait (loaded, window);
  lk_test_wait_idle ("the landed load handled");
  /* The screenshot and the stall probe start from the window's load
   * signals: with nothing listening to them, neither can come later. */
  g_assert_false (g_signal_has_handler_pending (
      window, g_signal_lookup ("load-finished", LK_TYPE_WINDOW), 0, TRUE));
  g_assert_false (g_signal_has_handler_pending (
      window, g_signal_lookup ("load-started", LK_TYPE_WINDOW), 0, TRUE));
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_false (g_file_test (shot, G_FILE_TEST_EXISTS));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));
  g_assert_null (g_object_get_data (G_OBJECT (window), "lk-stall-probe"));
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (window);

  g_unsetenv ("LIKENESS_SCREENSHOT");
  g_unsetenv ("LIKENESS_SCREENSHOT_PAGE");
  g_unsetenv ("LIKENESS_STALL_PROBE");
  window = lk_window_new (NULL);
  /* Nothing asked for: nothing attached. */
  g_assert_false (lk_window_probes_attach (window));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_screenshot_when_attached (void)
{
  g_autofree char *shot = g_build_filename (tmp_dir, "attached.png", NULL);
  g_autoptr (GFile) library = g_file_new_for_path (library_dir);

  g_setenv ("LIKENESS_SCREENSHOT", shot, TRUE);
  g_setenv ("LIKENESS_SCREENSHOT_PAGE", "person", TRUE);
  LkWindow *window = g_object_ref_sink (lk_window_new (NULL));
  g_assert_true (lk_window_probes_attach (window));
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, library);
  lk_test_wait (loaded, window);
  /* The page the screenshot asked for, then the PNG, then the window closes. */
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  lk_test_wait (file_written, shot);
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (shot, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), >, 100);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window)));
  g_object_unref (window);
  g_unsetenv ("LIKENESS_SCREENSHOT");
  g_unsetenv ("LIKENESS_SCREENSHOT_PAGE");
}

/* LIKENESS_SCREENSHOT_PAGE=merge: the largest unnamed person's page with
 * the merge chooser open, the chooser drawn into the PNG (a popover is a
 * surface of its own that the window's rendering leaves out). */
/* Keeps the window open while *held: the probe closes it once its own PNG
 * is written, 1.5 s after the chooser opens — under load before this test
 * had drawn its two pictures (a landing saw drawn.png never written). */
static gboolean
hold_close (GtkWindow *window, gpointer held)
{
  return *(gboolean *) held;
}

static void
test_screenshot_draws_the_chooser (void)
{
  g_autofree char *shot = g_build_filename (tmp_dir, "merge.png", NULL);
  g_autofree char *plain = g_build_filename (tmp_dir, "plain.png", NULL);
  g_autoptr (GFile) library = g_file_new_for_path (library_dir);

  g_setenv ("LIKENESS_SCREENSHOT", shot, TRUE);
  g_setenv ("LIKENESS_SCREENSHOT_PAGE", "merge", TRUE);
  LkWindow *window = g_object_ref_sink (lk_window_new (NULL));
  g_assert_true (lk_window_probes_attach (window));
  gtk_window_set_default_size (GTK_WINDOW (window), 700, 500);
  gboolean held = TRUE;
  g_signal_connect (window, "close-request", G_CALLBACK (hold_close), &held);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, library);
  lk_test_wait (loaded, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  g_assert_null (lk_person_item_get_name (
      lk_person_page_get_person (LK_PERSON_PAGE (lk_test_window_child (window, "person_page")))));
  while (g_object_get_data (G_OBJECT (window), LK_SCREENSHOT_POPOVER) == NULL)
    g_main_context_iteration (NULL, TRUE);
  GtkWidget *popover = g_object_get_data (G_OBJECT (window), LK_SCREENSHOT_POPOVER);
  g_assert_true (gtk_widget_get_visible (popover));
  /* The chooser placed is not enough: taken while its thumbnails came in,
   * the window's picture was empty. Every thumbnail in, then a frame. */
  lk_test_wait_at_rest (popover, "the chooser shown");
  lk_test_wait_drawn (GTK_WIDGET (window), window->cache, "the window and its chooser drawn");
  /* Back to back, the window alone and with the chooser: they differ only
   * where the chooser is drawn. */
  g_autofree char *drawn = g_build_filename (tmp_dir, "drawn.png", NULL);
  g_autoptr (GError) saved = NULL;
  g_assert_true (lk_screenshot_save (GTK_WINDOW (window), NULL, plain, &saved));
  g_assert_true (lk_screenshot_save (GTK_WINDOW (window), popover, drawn, &saved));
  g_assert_no_error (saved);
  held = FALSE;
  lk_test_wait (file_written, shot);
  gtk_window_destroy (GTK_WINDOW (window));

  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) with = gdk_texture_new_from_filename (drawn, &error);
  g_assert_no_error (error);
  g_autoptr (GdkTexture) without = gdk_texture_new_from_filename (plain, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (with), >=, gdk_texture_get_width (without));
  g_assert_cmpint (gdk_texture_get_height (with), >=, gdk_texture_get_height (without));
  /* The two pictures differ where the chooser is. */
  gsize stride = (gsize) gdk_texture_get_width (without) * 4;
  g_autofree guchar *a = g_malloc (stride * gdk_texture_get_height (without));
  g_autofree guchar *b
      = g_malloc ((gsize) gdk_texture_get_width (with) * 4 * gdk_texture_get_height (with));
  gdk_texture_download (without, a, stride);
  gdk_texture_download (with, b, (gsize) gdk_texture_get_width (with) * 4);
  gsize differ = 0;
  for (int y = 0; y < gdk_texture_get_height (without); y++)
    differ
        += memcmp (a + y * stride, b + y * (gsize) gdk_texture_get_width (with) * 4, stride) != 0;
  g_assert_cmpuint (differ, >, 50);
  g_object_unref (window);
  g_unsetenv ("LIKENESS_SCREENSHOT");
  g_unsetenv ("LIKENESS_SCREENSHOT_PAGE");
}

static gboolean
window_hidden (gpointer window)
{
  return !gtk_widget_get_visible (GTK_WIDGET (window));
}

typedef struct
{
  const char *shot;
  int width, height; /* the face viewer's window, as last seen */
} ViewerWatch;

/* The PNG written; meanwhile, the size of the face viewer's window. */
static gboolean
viewer_shot_written (gpointer data)
{
  ViewerWatch *watch = data;
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWidget) window = g_list_model_get_item (toplevels, k);
      GtkWidget *child = gtk_window_get_child (GTK_WINDOW (window));
      if (child != NULL && LK_IS_FACE_VIEWER (child) && gtk_widget_get_width (window) > 0)
        {
          watch->width = gtk_widget_get_width (window);
          watch->height = gtk_widget_get_height (window);
        }
    }
  return g_file_test (watch->shot, G_FILE_TEST_IS_REGULAR);
}

/* LIKENESS_SCREENSHOT_PAGE=viewer: the face viewer opened on the first face
 * of the largest person as a double-click opens it, its photo decoded, and
 * the viewer's window (not the main one) in the PNG; the report says what
 * it showed. .ci/flatpak runs it in the sandbox on a library under
 * ~/Pictures. */
static void
test_screenshot_shows_the_viewer (void)
{
  g_autofree char *shot = g_build_filename (tmp_dir, "viewer.png", NULL);
  g_autoptr (GFile) library = g_file_new_for_path (library_dir);

  g_setenv ("LIKENESS_SCREENSHOT", shot, TRUE);
  g_setenv ("LIKENESS_SCREENSHOT_PAGE", "viewer", TRUE);
  LkWindow *window = g_object_ref_sink (lk_window_new (NULL));
  g_assert_true (lk_window_probes_attach (window));
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, library);
  lk_test_wait (loaded, window);
  ViewerWatch watch = { .shot = shot };
  lk_test_wait (viewer_shot_written, &watch);
  const char *report = g_object_get_data (G_OBJECT (window), LK_SCREENSHOT_REPORT);
  g_test_message ("%s", report);
  g_assert_nonnull (report);
  /* make-sample's photos are LK_SAMPLE_PHOTO_SIDE on the long side. */
  g_autofree char *pattern = g_strdup_printf (
      "^face [0-9]+: photo %d×[0-9]+ shown, [1-9][0-9]* face boxes$", LK_SAMPLE_PHOTO_SIDE);
  g_assert_true (g_regex_match_simple (pattern, report, 0, 0));
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (shot, &error);
  g_assert_no_error (error);
  /* The viewer's window, as big as it was on screen. */
  g_assert_cmpint (watch.width, >, 0);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, watch.width);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, watch.height);
  lk_test_wait (window_hidden, window);
  g_object_unref (window);

  /* The same library with its photos gone: the viewer says where it looked,
   * and so does the report (the stage's check can fail). */
  g_autofree char *bare = g_build_filename (tmp_dir, "bare", NULL);
  const char *make[] = { "make-sample", bare, "--faces", "40", "--seed", "5", "--no-photos", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);
  g_autoptr (GFile) bare_library = g_file_new_for_path (bare);
  g_remove (shot);
  window = g_object_ref_sink (lk_window_new (NULL));
  g_assert_true (lk_window_probes_attach (window));
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, bare_library);
  lk_test_wait (loaded, window);
  lk_test_wait (file_written, shot);
  report = g_object_get_data (G_OBJECT (window), LK_SCREENSHOT_REPORT);
  g_test_message ("%s", report);
  g_assert_nonnull (report);
  g_assert_true (g_str_has_prefix (report, "no photo shown: "));
  g_assert_nonnull (strstr (report, bare));
  lk_test_wait (window_hidden, window);
  g_object_unref (window);
  g_unsetenv ("LIKENESS_SCREENSHOT");
  g_unsetenv ("LIKENESS_SCREENSHOT_PAGE");
}

/* A page that fits on one screen is not scrolled: the probe says so rather
 * than "0 frames to the end in 29632 s" (the time since boot). */
static void
test_scroll_probe_says_it_did_not_scroll (void)
{
  LkScrollProbeResult r = { .items = 6, .frames = 0, .reached_end = TRUE, .settled = TRUE };
  g_autofree char *line = lk_scroll_probe_describe (&r);

  g_test_message ("%s", line);
  g_assert_nonnull (strstr (line, "did not scroll (they fit on one screen)"));
  g_assert_null (strstr (line, " s ("));
}

/* A window not shown yet has no renderer to draw it with: the screenshot
 * fails and says so, where it wrote nothing without a word before. */
static void
test_screenshot_without_renderer_fails (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "never.png", NULL);
  GtkWidget *window = gtk_window_new ();
  g_autoptr (GError) error = NULL;

  g_assert_null (gtk_native_get_renderer (GTK_NATIVE (window)));
  g_assert_false (lk_screenshot_save (GTK_WINDOW (window), NULL, path, &error));
  g_assert_error (error, LK_SCREENSHOT_ERROR, LK_SCREENSHOT_ERROR_NOT_DRAWN);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "renderer"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  tmp_dir = g_dir_make_tmp ("lk-ui-probes-XXXXXX", NULL);
  library_dir = g_build_filename (tmp_dir, "library", NULL);
  const char *make[] = { "make-sample", library_dir, "--faces", "80", "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);

  g_test_add_func ("/ui-probes/load-signals", test_load_signals);
  g_test_add_func ("/ui-probes/absent-unless-attached", test_absent_unless_attached);
  g_test_add_func ("/ui-probes/screenshot-when-attached", test_screenshot_when_attached);
  g_test_add_func ("/ui-probes/screenshot-draws-the-chooser", test_screenshot_draws_the_chooser);
  g_test_add_func ("/ui-probes/screenshot-shows-the-viewer", test_screenshot_shows_the_viewer);
  g_test_add_func ("/ui-probes/screenshot-without-renderer-fails",
                   test_screenshot_without_renderer_fails);
  g_test_add_func ("/ui-probes/scroll-probe-says-it-did-not-scroll",
                   test_scroll_probe_says_it_did_not_scroll);
  int status = g_test_run ();

  lk_test_remove_tree (tmp_dir);
  g_free (library_dir);
  g_free (tmp_dir);
  return status;
}
