/* lk-screenshot.h — LIKENESS_SCREENSHOT=FILE.png renders the window to a PNG
 *
 * For the README, the metainfo and for looking at the window under Xvfb
 * without a screen grabber: once the window says it is ready, the thumbnails
 * get a moment to load, the window is rendered through its own GskRenderer
 * (at its scale factor) into FILE.png, and the window closes.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* TRUE when LIKENESS_SCREENSHOT is set. */
gboolean lk_screenshot_requested (void);
void lk_screenshot_when_ready (GtkWindow *window);
/* Renders the window into LIKENESS_SCREENSHOT at once, then closes it. */
void lk_screenshot_take (GtkWindow *window);

G_END_DECLS
