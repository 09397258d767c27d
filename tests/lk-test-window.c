/* lk-test-window.c — what the window tests all need (see the header) */
#include "config.h"

#include "lk-test-display.h"
#include "lk-test-window.h"

gboolean
lk_test_window_idle (gpointer window)
{
  return !lk_window_is_busy (window);
}

gboolean
lk_test_window_settled (gpointer window)
{
  LkSession *session = lk_window_get_session (window);

  return !lk_window_is_busy (window)
         && (session == NULL
             || (!lk_session_is_committing (session) && !lk_session_is_loading (session)
                 && lk_session_get_n_queued (session) == 0));
}

LkWindow *
lk_test_open_window (GtkApplication *app, const char *folder, int width, int height)
{
  LkWindow *window = lk_window_new (app);
  g_autoptr (GFile) file = g_file_new_for_path (folder);

  if (width > 0 && height > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  return window;
}

static void
on_committing (GObject *session, GParamSpec *pspec, gpointer data)
{
  if (!lk_session_is_committing (LK_SESSION (session)))
    g_main_loop_quit (data);
}

void
lk_test_wait_committed (LkSession *session)
{
  while (lk_session_is_committing (session))
    {
      g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
      gulong id
          = g_signal_connect (session, "notify::committing", G_CALLBACK (on_committing), loop);

      g_main_loop_run (loop);
      g_signal_handler_disconnect (session, id);
    }
}

GtkWidget *
lk_test_window_child (LkWindow *window, const char *name)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, name));
}

void
lk_test_save_screenshot (GtkWidget *widget, const char *path)
{
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();

  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  g_autoptr (GdkTexture) texture
      = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)), node,
                                     &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

GtkWidget *
lk_test_toast_widget (LkWindow *window)
{
  GtkWidget *widget = GTK_WIDGET (lk_window_get_toast_label (window));

  while (widget != NULL && g_strcmp0 (gtk_widget_get_css_name (widget), "toast") != 0)
    widget = gtk_widget_get_parent (widget);
  return widget != NULL && gtk_widget_get_mapped (widget) ? widget : NULL;
}

static GtkWidget *
find_button (GtkWidget *widget, const char *label)
{
  if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, label);
      if (found != NULL)
        return found;
    }
  return NULL;
}

GtkWidget *
lk_test_toast_button (LkWindow *window, const char *label)
{
  GtkWidget *toast = lk_test_toast_widget (window);

  return toast != NULL ? find_button (toast, label) : NULL;
}

gboolean
lk_test_toast_shown (gpointer window)
{
  return lk_test_toast_widget (LK_WINDOW (window)) != NULL;
}

typedef struct
{
  guint frames;
} FrameCount;

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  ((FrameCount *) data)->frames++;
}

static gboolean
mapped (gpointer widget)
{
  return gtk_widget_get_mapped (widget);
}

static gboolean
painted (gpointer data)
{
  return ((FrameCount *) data)->frames > 0;
}

void
lk_test_wait_laid_out (GtkWidget *widget, const char *what)
{
  GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (widget));
  g_autofree char *shown = g_strdup_printf ("%s (the window shown)", what);

  g_assert_nonnull (root);
  lk_test_wait_for (mapped, root, shown);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (root);
  FrameCount count = { 0 };
  gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &count);
  /* A frame that paints, even when nothing else asks for one. */
  gtk_widget_queue_draw (root);
  lk_test_wait_for (painted, &count, what);
  g_signal_handler_disconnect (clock, id);
}

typedef struct
{
  GtkWidget *widget;
  graphene_rect_t last;
  guint same;
} AtRest;

static void
on_rest_paint (GdkFrameClock *clock, gpointer data)
{
  AtRest *rest = data;
  graphene_rect_t bounds;
  GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (rest->widget));

  if (!gtk_widget_get_mapped (rest->widget) || root == NULL
      || !gtk_widget_compute_bounds (rest->widget, root, &bounds))
    {
      rest->same = 0;
      return;
    }
  rest->same = graphene_rect_equal (&bounds, &rest->last) ? rest->same + 1 : 0;
  rest->last = bounds;
  /* Another frame to compare with. */
  gtk_widget_queue_draw (root);
}

static gboolean
at_rest (gpointer data)
{
  return ((AtRest *) data)->same >= 2;
}

void
lk_test_wait_at_rest (GtkWidget *widget, const char *what)
{
  GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (widget));
  AtRest rest = { widget, GRAPHENE_RECT_INIT (-1, -1, -1, -1), 0 };

  g_assert_nonnull (root);
  lk_test_wait_laid_out (widget, what);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (root);
  gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_rest_paint), &rest);
  gtk_widget_queue_draw (root);
  lk_test_wait_for (at_rest, &rest, what);
  g_signal_handler_disconnect (clock, id);
}

/* A revealer or a stack at `widget` or below that is still moving. */
static gboolean
in_transition (GtkWidget *widget)
{
  if (!gtk_widget_get_mapped (widget))
    return FALSE;
  if (GTK_IS_REVEALER (widget)
      && gtk_revealer_get_child_revealed (GTK_REVEALER (widget))
             != gtk_revealer_get_reveal_child (GTK_REVEALER (widget)))
    return TRUE;
  if (GTK_IS_STACK (widget) && gtk_stack_get_transition_running (GTK_STACK (widget)))
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (in_transition (child))
      return TRUE;
  return FALSE;
}

static gboolean
drawn_final (GtkWidget *widget, LkTextureCache *cache)
{
  return !in_transition (widget) && (cache == NULL || lk_texture_cache_get_n_loading (cache) == 0);
}

void
lk_test_wait_drawn (GtkWidget *widget, LkTextureCache *cache, const char *what)
{
  gint64 end = g_get_monotonic_time () + (gint64) LK_TEST_WAIT_SECONDS * G_USEC_PER_SEC;

  /* A frame binds tiles that ask for thumbnails, and a decoded one asks
   * for a frame: final is when neither side has anything left. */
  for (;;)
    {
      gboolean before = drawn_final (widget, cache);
      lk_test_wait_laid_out (widget, what);
      if (before && drawn_final (widget, cache))
        return;
      if (g_get_monotonic_time () > end)
        g_error ("waited %d s for %s: %s", LK_TEST_WAIT_SECONDS, what,
                 in_transition (widget) ? "a transition never ended"
                                        : "thumbnails were still decoding");
    }
}

typedef struct
{
  gboolean done;
  LkScrollProbeResult result;
} ProbeWait;

static void
on_probe_done (GtkScrolledWindow *scrolled, const LkScrollProbeResult *result, gpointer user_data)
{
  ProbeWait *wait = user_data;

  wait->result = *result;
  wait->done = TRUE;
}

static gboolean
probe_done (gpointer data)
{
  return ((ProbeWait *) data)->done;
}

LkScrollProbeResult
lk_test_scroll_probe (GtkWidget *scrolled, guint settle_ms)
{
  ProbeWait wait = { 0 };

  g_assert_true (GTK_IS_SCROLLED_WINDOW (scrolled));
  lk_scroll_probe_run (GTK_SCROLLED_WINDOW (scrolled), 1.0, settle_ms, on_probe_done, &wait);
  lk_test_wait (probe_done, &wait);
  return wait.result;
}
