/* lk-screenshot.c — LIKENESS_SCREENSHOT=FILE.png renders the window to a PNG */
#include "config.h"

#include "lk-screenshot.h"
#include "lk-stall-probe.h"

/* Long enough for a screenful of thumbnails to decode on a loaded machine. */
#define SETTLE_MS 1500

gboolean
lk_screenshot_requested (void)
{
  const char *path = g_getenv ("LIKENESS_SCREENSHOT");

  return path != NULL && path[0] != '\0';
}

void
lk_screenshot_take (GtkWindow *window)
{
  const char *path = g_getenv ("LIKENESS_SCREENSHOT");
  int width = gtk_widget_get_width (GTK_WIDGET (window));
  int height = gtk_widget_get_height (GTK_WIDGET (window));
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (window));
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  GtkSnapshot *snapshot = gtk_snapshot_new ();

  /* Rendering the whole window at once is not what the app does per frame. */
  lk_stall_probe_mark (GTK_WIDGET (window), "shot");
  gtk_snapshot_scale (snapshot, scale, scale);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  if (node != NULL && renderer != NULL)
    {
      g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (
          renderer, node, &GRAPHENE_RECT_INIT (0, 0, width * scale, height * scale));
      if (!gdk_texture_save_to_png (texture, path))
        g_printerr ("Cannot write the screenshot to %s\n", path);
    }
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
