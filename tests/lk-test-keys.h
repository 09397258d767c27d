/* lk-test-keys.h — real key presses for the display tests, through the X server
 *
 * GTK 4 has no public way to send a key event, and a shortcut that stops
 * working is a property of the whole path a key takes (X server → GDK → the
 * focus widget and its ancestors' controllers → the window's shortcuts), so
 * the tests press keys where a user does: XTest fakes them in the X server
 * (Xvfb), after giving the window the input focus. libXtst is opened at run
 * time (it is part of every X server install, its headers are not); without
 * X11 or libXtst, lk_test_keys_available() is FALSE and a test skips.
 *
 * The display tests share one Xvfb and run in parallel, and the X server's
 * input focus and modifier state are global: another test's window that
 * presents itself takes the focus (GDK calls XSetInputFocus where there is
 * no window manager), so a key pressed between our XSetInputFocus and our
 * key events went to that window. CI saw it (the Ctrl+M of
 * /ui-focus/merge-chooser-keyboard never reached the window: 'chooser'
 * NULL after 10 s). So a press holds the server (XGrabServer) from the
 * focus to the last release: other clients wait, and XTest delivers its
 * events while the request is processed, so every one reaches our window
 * before the grab ends.
 */
#pragma once

#include <dlfcn.h>
#include <gdk/x11/gdkx.h>
#include <gtk/gtk.h>

#include "lk-test-display.h"

typedef int (*LkFakeKey) (Display *display, unsigned int keycode, Bool is_press,
                          unsigned long delay);

static inline LkFakeKey
lk_test_keys_fake (void)
{
  static LkFakeKey fake;
  static gboolean tried;

  if (!tried)
    {
      void *xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);

      tried = TRUE;
      if (xtst != NULL)
        fake = (LkFakeKey) dlsym (xtst, "XTestFakeKeyEvent");
    }
  return fake;
}

static void lk_test_press (GtkWidget *window, guint keyval, GdkModifierType mods);

static inline gboolean
lk_test_keys_seen (GtkEventControllerKey *keys, guint keyval, guint keycode, GdkModifierType state,
                   gpointer data)
{
  *(gboolean *) data = TRUE;
  return FALSE;
}

/* TRUE when keys can be pressed into `window` (X11 and libXtst), once a
 * press has reached it: the first key pressed into a window just opened was
 * lost now and then — the first Ctrl+E, and once the first Ctrl+F, of
 * test-ui-keys, 3 times in about 30 runs of the whole suite at load 10-19
 * (every later key of the file arrived; the cause, in GDK or the X server,
 * was not found). So Shift, which does nothing, is pressed until the
 * window's own key controller sees it. */
static inline gboolean
lk_test_keys_available (GtkWidget *window)
{
  if (!GDK_IS_X11_DISPLAY (gtk_widget_get_display (window)) || lk_test_keys_fake () == NULL)
    return FALSE;
  gboolean seen = FALSE;
  GtkEventController *keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (lk_test_keys_seen), &seen);
  gtk_widget_add_controller (window, keys);
  for (int tries = 0; tries < 20 && !seen; tries++)
    {
      if (tries > 0)
        g_test_message ("Shift pressed again (try %d): the window has not seen a key yet",
                        tries + 1);
      lk_test_press (window, GDK_KEY_Shift_L, 0);
    }
  gtk_widget_remove_controller (window, keys);
  g_assert_true (seen);
  return TRUE;
}

static inline void
lk_test_fake (Display *x, guint keyval, gboolean press)
{
  KeyCode code = XKeysymToKeycode (x, keyval);

  g_assert_cmpuint (code, !=, 0);
  lk_test_keys_fake () (x, code, press, CurrentTime);
}

/* Presses and releases `keyval` with `mods` (Control, Shift, Alt) in
 * `window`, then runs the main loop until GTK has handled them. XTest
 * delivers the events while the server processes the request, so once
 * XSync's reply is back they are in this client's queue, ahead of it; GDK's
 * event source is ready while any is left, so an idle main loop has handled
 * them all (and what they scheduled at once). A key whose effect comes
 * later (a search typed, a popover shown) is waited for by the caller. */
static inline void
lk_test_press (GtkWidget *window, guint keyval, GdkModifierType mods)
{
  GdkDisplay *display = gtk_widget_get_display (window);
  Display *x = gdk_x11_display_get_xdisplay (display);
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));

  XGrabServer (x);
  XSetInputFocus (x, gdk_x11_surface_get_xid (surface), RevertToParent, CurrentTime);
  if (mods & GDK_CONTROL_MASK)
    lk_test_fake (x, GDK_KEY_Control_L, TRUE);
  if (mods & GDK_SHIFT_MASK)
    lk_test_fake (x, GDK_KEY_Shift_L, TRUE);
  if (mods & GDK_ALT_MASK)
    lk_test_fake (x, GDK_KEY_Alt_L, TRUE);
  lk_test_fake (x, keyval, TRUE);
  lk_test_fake (x, keyval, FALSE);
  if (mods & GDK_ALT_MASK)
    lk_test_fake (x, GDK_KEY_Alt_L, FALSE);
  if (mods & GDK_SHIFT_MASK)
    lk_test_fake (x, GDK_KEY_Shift_L, FALSE);
  if (mods & GDK_CONTROL_MASK)
    lk_test_fake (x, GDK_KEY_Control_L, FALSE);
  XUngrabServer (x);
  XSync (x, False);
  g_autofree char *what = g_strdup_printf ("the key %s handled", gdk_keyval_name (keyval));
  lk_test_wait_idle (what);
}
