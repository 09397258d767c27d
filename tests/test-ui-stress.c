/* test-ui-stress — open, switch, cancel and close mid-scan, 50 times, under Xvfb
 *
 * Two generated libraries of different sizes (so their people grids differ).
 * Each round opens a window and runs a random sequence of: open A, open B,
 * cancel, and a wait of 0 … 80 ms (the load may be reading, scanning or
 * clustering, or done). After every main-loop iteration the window is
 * checked: a session it shows must be one of the library opened last and not
 * cancelled since — never the result of a superseded or cancelled load. A
 * round ends either by closing the window at once (mid-scan or not: no
 * crash, and the abandoned worker's result is dropped) or by opening a
 * library and letting it finish: the grid then holds exactly that library's
 * people. Random choices come from g_test_rand_*, so --seed repeats a run.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"

#define ROUNDS 50

typedef struct
{
  LkWindow *window;
  const char *last_open; /* folder opened last; NULL once cancelled */
  LkSession *shown;
  guint changes;
} Round;

static char *folders[2];
static guint people[2];
/* Sessions the windows have loaded and not yet disposed of (atomic: an
 * abandoned worker may drop the last reference). */
static gint live_sessions;

static void
on_session_gone (gpointer data, GObject *session)
{
  g_atomic_int_dec_and_test (&live_sessions);
}

static gboolean
no_live_sessions (gpointer data)
{
  return g_atomic_int_get (&live_sessions) == 0;
}

/* Whatever the window shows now, it may only have changed to the library
 * opened last, and not after a cancel. */
static void
check (Round *r)
{
  LkSession *session = lk_window_get_session (r->window);

  if (session == r->shown)
    return;
  g_assert_nonnull (session);
  if (r->last_open == NULL)
    g_error ("a cancelled load reached the window (%s)", lk_session_get_folder (session));
  g_assert_cmpstr (lk_session_get_folder (session), ==, r->last_open);
  r->shown = session;
  r->changes++;
}

static void
spin_checked (Round *r, guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  do
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (500);
      check (r);
    }
  while (g_get_monotonic_time () < end);
}

static void
open_folder (Round *r, guint which)
{
  g_autoptr (GFile) file = g_file_new_for_path (folders[which]);

  lk_window_open (r->window, file);
  g_atomic_int_inc (&live_sessions);
  g_object_weak_ref (G_OBJECT (r->window->loading), on_session_gone, NULL);
  r->last_open = folders[which];
  check (r);
}

static guint
shown_people (LkWindow *window)
{
  return g_list_model_get_n_items (lk_window_get_visible_people (window));
}

static void
test_switch_cancel_close_mid_scan (void)
{
  guint closed_busy = 0, finished = 0;

  for (guint round = 0; round < ROUNDS; round++)
    {
      Round r = { lk_window_new (NULL), NULL, NULL, 0 };
      guint steps = (guint) g_test_rand_int_range (1, 6);

      gtk_window_present (GTK_WINDOW (r.window));
      for (guint s = 0; s < steps; s++)
        {
          switch (g_test_rand_int_range (0, 4))
            {
              case 0:
              case 1:
                open_folder (&r, (guint) g_test_rand_int_range (0, 2));
                break;
              case 2:
                gtk_widget_activate_action (GTK_WIDGET (r.window), "win.cancel", NULL);
                g_assert_false (lk_window_is_busy (r.window));
                /* From here until the next open, the window must not change. */
                r.last_open = NULL;
                break;
              default:
                break;
            }
          spin_checked (&r, (guint) g_test_rand_int_range (0, 80));
        }

      if (round % 3 == 0)
        {
          /* Close now, whatever it is doing; the worker may still be running. */
          closed_busy += lk_window_is_busy (r.window);
          gtk_window_destroy (GTK_WINDOW (r.window));
          /* Deliberate jitter, not a wait: the next round races this one's
           * abandoned worker, which is what this test is for. */
          lk_test_spin (50);
          continue;
        }

      guint which = (guint) g_test_rand_int_range (0, 2);
      open_folder (&r, which);
      while (lk_window_is_busy (r.window))
        spin_checked (&r, 1);
      spin_checked (&r, 20);
      g_assert_cmpstr (lk_window_get_page (r.window), ==, "people");
      g_assert_cmpstr (lk_session_get_folder (lk_window_get_session (r.window)), ==,
                       folders[which]);
      g_assert_cmpuint (shown_people (r.window), ==, people[which]);
      finished++;
      gtk_window_destroy (GTK_WINDOW (r.window));
    }
  /* The abandoned workers have finished and freed their results. */
  lk_test_wait_for (no_live_sessions, NULL, "every session loaded to be disposed of");
  g_test_message ("%u rounds finished, %u windows closed while busy", finished, closed_busy);
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-stress-XXXXXX", NULL);
  const char *sizes[] = { "1500", "700" };
  const char *seeds[] = { "3", "5" };

  for (guint k = 0; k < 2; k++)
    {
      folders[k] = g_strdup_printf ("%s/library-%u", tmp, k);
      const char *make[] = { "make-sample", folders[k], "--faces",         sizes[k],
                             "--seed",      seeds[k],   "--no-thumbnails", NULL };
      g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);

      /* Each library's people, from an undisturbed load. */
      Round r = { lk_window_new (NULL), NULL, NULL, 0 };
      gtk_window_present (GTK_WINDOW (r.window));
      open_folder (&r, k);
      while (lk_window_is_busy (r.window))
        spin_checked (&r, 1);
      g_assert_cmpstr (lk_window_get_page (r.window), ==, "people");
      people[k] = shown_people (r.window);
      gtk_window_destroy (GTK_WINDOW (r.window));
    }
  /* Otherwise a stale grid could pass for the right one. */
  g_assert_cmpuint (people[0], !=, people[1]);

  g_test_add_func ("/ui-stress/switch-cancel-close-mid-scan", test_switch_cancel_close_mid_scan);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  for (guint k = 0; k < 2; k++)
    g_free (folders[k]);
  return status;
}
