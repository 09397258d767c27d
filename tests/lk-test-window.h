/* lk-test-window.h — what the window tests (suite 'ui') all need
 *
 * Opening a library in a window and waiting for it, waiting for the
 * session's saves, reaching a template child, saving a screenshot: written
 * once here rather than again in every test-ui-*.c.
 */
#pragma once

#include <gtk/gtk.h>

#include "lk-scroll-probe.h"
#include "lk-session.h"
#include "lk-texture-cache.h"
#include "lk-window-private.h"

G_BEGIN_DECLS

/* TRUE once the window has no load or scan running (for lk_test_wait). */
gboolean lk_test_window_idle (gpointer window);

/* TRUE once the window is idle and its session, if any, has nothing loading,
 * committing or queued: every decision made so far is in review.json. */
gboolean lk_test_window_settled (gpointer window);

/* A new window of `app` (NULL for none), `width` × `height` when both are
 * positive, presented, opening `folder`; returns once the load and scan are
 * over. The page it lands on is the caller's to check. */
LkWindow *lk_test_open_window (GtkApplication *app, const char *folder, int width, int height);

/* Runs the main loop until no decision is in flight or waiting in `session`
 * (a landing decision starts the next). */
void lk_test_wait_committed (LkSession *session);

/* The window's template child called `name`. */
GtkWidget *lk_test_window_child (LkWindow *window, const char *name);

/* The notification shown: the "toast" node around its title (libadwaita's
 * toast widget), or NULL when none is on screen. */
GtkWidget *lk_test_toast_widget (LkWindow *window);

/* The button of the notification shown whose label is `label` ("_Undo"),
 * or NULL. */
GtkWidget *lk_test_toast_button (LkWindow *window, const char *label);

/* TRUE once a notification is on screen (for lk_test_wait). */
gboolean lk_test_toast_shown (gpointer window);

/* Runs the main loop until `widget`'s window has drawn a frame begun after
 * this call: every size and layout asked for before it is then done (GTK
 * lays out before it paints). Fails the test, naming `what`, if no frame
 * comes. */
void lk_test_wait_laid_out (GtkWidget *widget, const char *what);

/* Runs the main loop until `widget` is mapped and has kept its place and
 * size (relative to its root) over two frames in a row: an animation that
 * moves it (a toast's slide) is over. Fails the test naming `what`. */
void lk_test_wait_at_rest (GtkWidget *widget, const char *what);

/* Runs the main loop until what `widget`'s window shows is final, as a
 * screenshot wants it: no revealer or stack under `widget` in mid-transition
 * and no thumbnail of `cache` (NULL: none to wait for) still decoding, both
 * before and after a frame that draws it. Fails the test naming `what`. */
void lk_test_wait_drawn (GtkWidget *widget, LkTextureCache *cache, const char *what);

/* Scrolls `scrolled` to its end a page per frame with the scroll probe
 * (lk-scroll-probe.h), tiles given `settle_ms` to settle, and returns what
 * the probe saw. */
LkScrollProbeResult lk_test_scroll_probe (GtkWidget *scrolled, guint settle_ms);

/* Renders `widget` as it is now into a PNG at `path` (asserts it is written). */
void lk_test_save_screenshot (GtkWidget *widget, const char *path);

G_END_DECLS
