/* lk-test-display.h — shared start of the display tests (suite 'ui')
 *
 * gtk_test_init aborts without a display, so a display test first checks for
 * one and, when there is none, says so and exits 77 (the GNU "skipped"
 * status): `meson test` outside xvfb-run shows it as skipped.
 */
#pragma once

#include <adwaita.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>

static inline void
lk_test_display_init (int *argc, char ***argv)
{
  const char *x11 = g_getenv ("DISPLAY");
  const char *wayland = g_getenv ("WAYLAND_DISPLAY");

  if ((x11 == NULL || x11[0] == '\0') && (wayland == NULL || wayland[0] == '\0'))
    {
      printf ("1..0 # SKIP no display (run under xvfb-run -a)\n");
      exit (77);
    }
  gtk_test_init (argc, argv, NULL);
  /* The application is an AdwApplication, whose startup does this: the
   * windows are tested with libadwaita's stylesheet, as they are shown. */
  adw_init ();
}

/* Runs the main loop until `done (data)` holds; meson's timeout ends a hang. */
static inline void
lk_test_wait (gboolean (*done) (gpointer data), gpointer data)
{
  while (!done (data))
    g_main_context_iteration (NULL, TRUE);
}

/* How long lk_test_wait_for waits before failing: generous, so that only a
 * condition that never comes fails, however busy the machine. */
#define LK_TEST_WAIT_SECONDS 60

/* Runs the main loop until `done (data)` holds; fails the test naming
 * `what` (what never happened) if it has not after LK_TEST_WAIT_SECONDS. */
static inline void
lk_test_wait_for (gboolean (*done) (gpointer data), gpointer data, const char *what)
{
  gint64 end = g_get_monotonic_time () + (gint64) LK_TEST_WAIT_SECONDS * G_USEC_PER_SEC;

  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        g_error ("waited %d s for %s: it never happened", LK_TEST_WAIT_SECONDS, what);
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    }
}

/* Runs the main loop until nothing in it is ready to run: every event the
 * display has delivered so far is handled, and whatever handling it
 * scheduled at once (an idle, a layout) is done. Fails the test naming
 * `what` if the loop is never idle in LK_TEST_WAIT_SECONDS (an animation
 * whose frames come faster than they are drawn). */
static inline void
lk_test_wait_idle (const char *what)
{
  gint64 end = g_get_monotonic_time () + (gint64) LK_TEST_WAIT_SECONDS * G_USEC_PER_SEC;

  while (g_main_context_pending (NULL))
    {
      if (g_get_monotonic_time () > end)
        g_error ("waited %d s for %s: the main loop was never idle", LK_TEST_WAIT_SECONDS, what);
      g_main_context_iteration (NULL, FALSE);
    }
}

/* Runs the main loop for `ms` milliseconds. */
static inline void
lk_test_spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  /* On a loaded machine the process may sleep past `end`: still dispatch
   * every source that became due meanwhile. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}
