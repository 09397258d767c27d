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
/* Renders the window into LIKENESS_SCREENSHOT at once (with the popover
 * set as the window's LK_SCREENSHOT_POPOVER data, if any), then closes it. */
void lk_screenshot_take (GtkWindow *window);
#define LK_SCREENSHOT_POPOVER "lk-screenshot-popover"
/* What a screenshot of LIKENESS_SCREENSHOT_PAGE=viewer showed, one line
 * (also printed), set as the main window's data of this name. */
#define LK_SCREENSHOT_REPORT  "lk-screenshot-report"
#define LK_SCREENSHOT_ERROR   (lk_screenshot_error_quark ())
GQuark lk_screenshot_error_quark (void);

typedef enum
{
  LK_SCREENSHOT_ERROR_NOT_DRAWN, /* no renderer yet (not realized), or nothing drawn */
  LK_SCREENSHOT_ERROR_WRITE,     /* the PNG could not be written */
} LkScreenshotError;

/* Renders the window, and `popover` (may be NULL) where it shows, into
 * `path`; FALSE with the reason when nothing could be written. */
gboolean lk_screenshot_save (GtkWindow *window, GtkWidget *popover, const char *path,
                             GError **error);

G_END_DECLS
