/* bench-window — the window at a large library, under Xvfb, step by step
 *
 *   likeness-cli make-sample /tmp/s100k --faces 100000 --no-photos
 *   GSK_RENDERER=cairo GTK_A11Y=none meson devenv -C _build-release \
 *       xvfb-run -a -s "-screen 0 1280x900x24" tests/bench-window /tmp/s100k \
 *       [--screenshot FILE.png]
 *
 * In one process, as the application does it (LkWindow, its session on a
 * worker thread): opens LIBRARY in a 1200 × 800 window and waits until the
 * people grid shows its first screenful ("open": load, the scan — from the
 * user's scan cache when it has one, as a second opening does —, the
 * clustering, the people models); makes one decision (renames the largest
 * person, saved to a folder of its own, so the library's review.json is
 * left alone) and waits until the people are grouped again and shown
 * ("decision"); scrolls the people grid to the bottom a page per frame, then
 * the largest person's faces (lk-scroll-probe: frame intervals, the main
 * thread's CPU per frame, what every tile on screen showed). Each step prints
 * its wall and CPU seconds and the process's RSS after it and peak so far
 * (VmRSS, VmHWM); the stall probe (lk-stall-probe.h) prints each step's
 * longest main-loop stall and frame intervals when the window closes.
 *
 * On a loaded machine the wall times and stalls are the load's as much as
 * the window's: the main thread's CPU (the stall probe's "busy", the scroll
 * probe's CPU per frame) is the window's own.
 * Not run by `meson test`: minutes at 100,000 faces.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>

#include "people/lk-person-item.h"
#include "lk-scroll-probe.h"
#include "lk-stall-probe.h"

#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"

/* Long enough for a screenful of thumbnails on a loaded machine. */
#define SETTLE_MS 5000

static void
scroll (LkWindow *window, GtkWidget *scrolled, const char *what)
{
  LkTestStep c;

  lk_stall_probe_mark (GTK_WIDGET (window), what);
  lk_test_step_start (&c);
  LkScrollProbeResult result = lk_test_scroll_probe (scrolled, SETTLE_MS);
  lk_test_step_report (&c, what, NULL);
  g_autofree char *line = lk_scroll_probe_describe (&result);
  printf ("  %s\n", line);
}

/* Until the people grid has drawn a frame with tiles in it. */
static gboolean
grid_drawn (gpointer data)
{
  GtkWidget *grid = data;

  return gtk_widget_get_mapped (grid) && gtk_widget_get_first_child (grid) != NULL
         && gtk_widget_get_height (grid) > 0;
}

static void
spin_frames (GtkWidget *widget, guint frames)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  gint64 first = clock ? gdk_frame_clock_get_frame_counter (clock) : 0;

  while (clock && gdk_frame_clock_get_frame_counter (clock) < first + frames)
    g_main_context_iteration (NULL, TRUE);
}

int
main (int argc, char **argv)
{
  g_autofree char *screenshot = NULL;
  const GOptionEntry entries[] = {
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, &screenshot,
      "Also render the people grid, once open, into FILE.png", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2)
    {
      fprintf (stderr, "usage: bench-window LIBRARY [--screenshot FILE.png]%s%s\n",
               error ? ": " : "", error ? error->message : "");
      return 2;
    }
  g_setenv ("LIKENESS_STALL_PROBE", "1", TRUE);
  /* The user's settings (recent libraries, window size) and where reviews
   * are kept (the decision's review is saved elsewhere, which is
   * remembered under XDG_CONFIG_HOME) are left alone; the scan cache
   * (XDG_CACHE_HOME) is the user's, as the application's is. */
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_autofree char *config = g_dir_make_tmp ("lk-bench-window-config-XXXXXX", NULL);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  lk_test_display_init (&argc, &argv);

  lk_test_step_header ();
  LkTestStep c;
  lk_test_step_start (&c);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  lk_stall_probe_install (GTK_WIDGET (window));
  lk_stall_probe_mark (GTK_WIDGET (window), "open");
  gtk_window_present (GTK_WINDOW (window));
  g_autoptr (GFile) folder = g_file_new_for_path (argv[1]);
  lk_window_open (window, folder);
  lk_test_wait (lk_test_window_idle, window);
  if (g_strcmp0 (lk_window_get_page (window), "people") != 0)
    {
      fprintf (stderr, "bench-window: the window shows \"%s\", not the people: %s\n",
               lk_window_get_page (window), lk_window_get_error_message (window));
      return 1;
    }
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  lk_test_wait (grid_drawn, grid);
  spin_frames (grid, 2);
  lk_test_step_report (&c, "open", NULL);
  LkSession *session = lk_window_get_session (window);
  const LkPeople *people = lk_session_peek_people (session);
  printf ("  %zu faces, %u pairs, %zu people, %zu unassigned\n", people->n_faces,
          lk_session_get_scan (session)->pairs->len, people->n_people, people->n_unassigned);

  if (screenshot != NULL)
    {
      lk_test_spin (SETTLE_MS);
      lk_test_save_screenshot (GTK_WIDGET (window), screenshot);
      printf ("  screenshot: %s\n", screenshot);
    }

  /* The decision is saved beside nothing of the library's. */
  g_autofree char *elsewhere = g_dir_make_tmp ("lk-bench-window-XXXXXX", NULL);
  if (!lk_session_save_elsewhere (session, elsewhere, &error))
    {
      fprintf (stderr, "bench-window: %s\n", error->message);
      return 1;
    }
  lk_test_wait_committed (session);
  lk_stall_probe_mark (GTK_WIDGET (window), "decision");
  lk_test_step_start (&c);
  g_autofree char *largest = g_strdup (people->people[0].id);
  if (!lk_session_rename (session, largest, "Bench Person", &error))
    {
      fprintf (stderr, "bench-window: %s\n", error->message);
      return 1;
    }
  lk_test_wait_committed (session);
  spin_frames (grid, 2);
  lk_test_step_report (&c, "decision", NULL);

  GtkWidget *people_scrolled = gtk_widget_get_ancestor (grid, GTK_TYPE_SCROLLED_WINDOW);
  scroll (window, people_scrolled, "people-scroll");

  GListModel *visible = lk_window_get_visible_people (window);
  g_autoptr (LkPersonItem) first = g_list_model_get_item (visible, 0);
  lk_window_show_person (window, first);
  GtkWidget *page = lk_test_window_child (window, "person_page");
  GtkWidget *faces
      = GTK_WIDGET (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "scrolled"));
  lk_test_step_start (&c);
  spin_frames (faces, 2);
  lk_test_step_report (&c, "person-open", NULL);
  scroll (window, faces, "person-scroll");

  lk_stall_probe_mark (GTK_WIDGET (window), "done");
  printf ("whole run: %.3f s CPU, peak RSS %.0f MB\n", lk_test_process_seconds (),
          lk_test_status_mb ("VmHWM:"));
  fflush (stdout);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_spin (100);
  lk_test_remove_tree (elsewhere);
  lk_test_remove_tree (config);
  return 0;
}
