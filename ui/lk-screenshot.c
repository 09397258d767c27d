/* lk-screenshot.c — LIKENESS_SCREENSHOT=FILE.png renders the window to a PNG */
#include "config.h"

#include "lk-screenshot.h"
#include "lk-stall-probe.h"

/* Long enough for a screenful of thumbnails to decode on a loaded machine. */
#define SETTLE_MS 1500

/* clang-format off */
G_DEFINE_QUARK (lk-screenshot-error-quark, lk_screenshot_error)
/* clang-format on */

gboolean
lk_screenshot_requested (void)
{
  const char *path = g_getenv ("LIKENESS_SCREENSHOT");

  return path != NULL && path[0] != '\0';
}

/* Where a popover's widget sits in its window's widget coordinates: its
 * surface's position relative to the window's surface, each surface's
 * offset of its widget (CSD shadows, the popover's arrow margin) taken out. */
static gboolean
popover_origin (GtkWindow *window, GtkWidget *popover, double *x, double *y)
{
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (popover));
  double wx, wy, px, py;

  if (surface == NULL || !GDK_IS_POPUP (surface))
    return FALSE;
  gtk_native_get_surface_transform (GTK_NATIVE (window), &wx, &wy);
  gtk_native_get_surface_transform (GTK_NATIVE (popover), &px, &py);
  *x = gdk_popup_get_position_x (GDK_POPUP (surface)) + px - wx;
  *y = gdk_popup_get_position_y (GDK_POPUP (surface)) + py - wy;
  return TRUE;
}

gboolean
lk_screenshot_save (GtkWindow *window, GtkWidget *popover, const char *path, GError **error)
{
  /* A window draws through the renderer it gets when it is realized: one
   * not shown yet (a viewer that settled before its window was mapped)
   * has none, and would write no PNG without a word: say so. */
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  if (renderer == NULL)
    {
      g_set_error (error, LK_SCREENSHOT_ERROR, LK_SCREENSHOT_ERROR_NOT_DRAWN,
                   "Cannot write the screenshot %s: the window is not shown yet, so it has no "
                   "renderer to draw it with",
                   path);
      return FALSE;
    }
  int width = gtk_widget_get_width (GTK_WIDGET (window));
  int height = gtk_widget_get_height (GTK_WIDGET (window));
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (window));
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  graphene_rect_t canvas = GRAPHENE_RECT_INIT (0, 0, width, height);
  double x = 0, y = 0;
  gboolean over = popover != NULL && gtk_widget_get_visible (popover)
                  && popover_origin (window, popover, &x, &y);

  /* A popover is a surface of its own, which the window's paintable does
   * not draw: drawn on top where the compositor would show it, the picture
   * grown to hold it (a popover may reach past the window's edge). */
  if (over)
    graphene_rect_union (&canvas,
                         &GRAPHENE_RECT_INIT ((float) x, (float) y, gtk_widget_get_width (popover),
                                              gtk_widget_get_height (popover)),
                         &canvas);
  gtk_snapshot_scale (snapshot, scale, scale);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (-canvas.origin.x, -canvas.origin.y));
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  if (over)
    {
      g_autoptr (GdkPaintable) drawn = gtk_widget_paintable_new (popover);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) x, (float) y));
      gdk_paintable_snapshot (drawn, snapshot, gtk_widget_get_width (popover),
                              gtk_widget_get_height (popover));
      gtk_snapshot_restore (snapshot);
    }
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    {
      g_set_error (error, LK_SCREENSHOT_ERROR, LK_SCREENSHOT_ERROR_NOT_DRAWN,
                   "Cannot write the screenshot %s: the window (%d × %d) drew nothing", path, width,
                   height);
      return FALSE;
    }
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (
      renderer, node,
      &GRAPHENE_RECT_INIT (0, 0, canvas.size.width * scale, canvas.size.height * scale));
  /* Encoded here and written by GLib, which says why a write failed
   * (gdk_texture_save_to_png only says whether). */
  g_autoptr (GBytes) png = gdk_texture_save_to_png_bytes (texture);
  g_autoptr (GError) local = NULL;
  if (!g_file_set_contents (path, g_bytes_get_data (png, NULL), (gssize) g_bytes_get_size (png),
                            &local))
    {
      g_set_error (error, LK_SCREENSHOT_ERROR, LK_SCREENSHOT_ERROR_WRITE,
                   "Cannot write the screenshot: %s", local->message);
      return FALSE;
    }
  return TRUE;
}

void
lk_screenshot_take (GtkWindow *window)
{
  /* Rendering the whole window at once is not what the app does per frame. */
  lk_stall_probe_mark (GTK_WIDGET (window), "shot");
  g_autoptr (GError) error = NULL;
  if (!lk_screenshot_save (window, g_object_get_data (G_OBJECT (window), LK_SCREENSHOT_POPOVER),
                           g_getenv ("LIKENESS_SCREENSHOT"), &error))
    g_printerr ("%s\n", error->message);
  gtk_window_close (window);
}

static gboolean
on_settled (gpointer user_data)
{
  GtkWindow *window = user_data;

  lk_screenshot_take (window);
  g_object_unref (window);
  return G_SOURCE_REMOVE;
}

void
lk_screenshot_when_ready (GtkWindow *window)
{
  if (lk_screenshot_requested ())
    g_timeout_add (SETTLE_MS, on_settled, g_object_ref (window));
}
