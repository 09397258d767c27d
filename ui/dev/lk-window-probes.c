/* lk-window-probes.c — the developer probes, attached to a window from outside
 *
 * The stall probe (LIKENESS_STALL_PROBE=1, =rescan), the scroll probe
 * (LIKENESS_STALL_PROBE=scroll) and the screenshot (LIKENESS_SCREENSHOT,
 * LIKENESS_SCREENSHOT_PAGE) watch a window through its "load-started" and
 * "load-finished" signals; the application attaches them to each window it
 * makes (app/lk-application.c), so the window's own code has no probe in
 * it and a window nobody attached them to (every display test's) has none.
 */
#include "config.h"

#include <stdio.h>

#include "lk-face-viewer.h"
#include "lk-screenshot.h"
#include "lk-scroll-probe.h"
#include "lk-stall-probe.h"
#include "lk-window-private.h"
#include "lk-window-probes.h"

/* Long enough for the people grid's first showing to be over on a loaded machine. */
#define FIRST_SHOW_SECONDS 2
/* The window's run: long enough for a screenful of thumbnails on a loaded machine. */
#define WINDOW_SETTLE_MS   5000

/* ---- LIKENESS_STALL_PROBE=scroll: the people grid, then a person -------- */

static gboolean
scroll_probe_requested (void)
{
  return g_strcmp0 (g_getenv ("LIKENESS_STALL_PROBE"), "scroll") == 0;
}

static void
on_person_done (GtkScrolledWindow *scrolled, const LkScrollProbeResult *result, gpointer user_data)
{
  g_autoptr (LkWindow) window = user_data;
  g_autofree char *line = lk_scroll_probe_describe (result);

  g_printerr ("scroll-probe: person page: %s\n", line);
  lk_stall_probe_mark (GTK_WIDGET (window), "done");
  gtk_window_close (GTK_WINDOW (window));
}

static void
on_people_done (GtkScrolledWindow *scrolled, const LkScrollProbeResult *result, gpointer user_data)
{
  g_autoptr (LkWindow) window = user_data;
  g_autofree char *line = lk_scroll_probe_describe (result);
  GListModel *people = lk_window_get_visible_people (window);

  g_printerr ("scroll-probe: people grid: %s\n", line);
  if (lk_screenshot_requested ())
    {
      lk_screenshot_take (GTK_WINDOW (window));
      return;
    }
  if (g_list_model_get_n_items (people) == 0)
    {
      gtk_window_close (GTK_WINDOW (window));
      return;
    }

  /* Sorted by size: the first is the largest person. */
  g_autoptr (LkPersonItem) largest = g_list_model_get_item (people, 0);
  lk_window_show_person (window, largest);
  GtkWidget *page = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, "person_page"));
  GtkWidget *faces
      = GTK_WIDGET (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "scrolled"));
  lk_stall_probe_mark (GTK_WIDGET (window), "person-scroll");
  lk_scroll_probe_run (GTK_SCROLLED_WINDOW (faces), 1.0, WINDOW_SETTLE_MS, on_person_done,
                       g_object_ref (window));
}

static gboolean
start_window_run (gpointer user_data)
{
  LkWindow *window = user_data;
  GtkWidget *grid = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, "people_grid"));
  GtkWidget *people = gtk_widget_get_ancestor (grid, GTK_TYPE_SCROLLED_WINDOW);
  /* With a screenshot: the frame halfway down, as a fling shows it. */
  double stop = lk_screenshot_requested () ? 0.5 : 1.0;

  lk_stall_probe_mark (GTK_WIDGET (window), "people-scroll");
  lk_scroll_probe_run (GTK_SCROLLED_WINDOW (people), stop,
                       lk_screenshot_requested () ? 0 : WINDOW_SETTLE_MS, on_people_done,
                       g_object_ref (window));
  return G_SOURCE_REMOVE;
}

static void
scroll_probe_window (LkWindow *window)
{
  /* Once the grid's first showing is over: it is measured on its own, in
   * the stall probe's "loaded" span. */
  g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, FIRST_SHOW_SECONDS, start_window_run,
                              g_object_ref (window), g_object_unref);
}

/* ---- LIKENESS_STALL_PROBE=rescan --------------------------------------- */

static gboolean
rescan_for_probe (gpointer user_data)
{
  gtk_widget_activate_action (GTK_WIDGET (user_data), "win.rescan", NULL);
  return G_SOURCE_REMOVE;
}

/* ---- LIKENESS_SCREENSHOT ---------------------------------------------- */

/* The largest unnamed person the grid shows, or NULL. */
static LkPersonItem *
largest_unnamed (LkWindow *self)
{
  GListModel *people = G_LIST_MODEL (self->filtered);
  LkPersonItem *found = NULL;

  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      if (lk_person_item_get_name (item) == NULL && !lk_person_item_is_unassigned (item)
          && (found == NULL
              || lk_person_item_get_n_faces (item) > lk_person_item_get_n_faces (found)))
        g_set_object (&found, item);
    }
  return found;
}

/* The merge or move chooser on the person page, popped up once the page is
 * mapped, and drawn into the screenshot. */
static gboolean
open_picker (gpointer user_data)
{
  LkWindow *self = user_data;
  gboolean move = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (self), "lk-probe-move"));
  GtkMenuButton *button = GTK_MENU_BUTTON (gtk_widget_get_template_child (
      GTK_WIDGET (self->person_page), LK_TYPE_PERSON_PAGE, move ? "move_button" : "merge_button"));

  gtk_widget_activate_action (GTK_WIDGET (self->person_page), move ? "person.move" : "person.merge",
                              NULL);
  g_object_set_data (G_OBJECT (self), LK_SCREENSHOT_POPOVER, gtk_menu_button_get_popover (button));
  lk_screenshot_when_ready (GTK_WINDOW (self));
  return G_SOURCE_REMOVE;
}

/* ---- LIKENESS_SCREENSHOT_PAGE=viewer ------------------------------------ */

/* How long the viewer may take to decode its photo: a 1,600-pixel JPEG
 * decodes in well under a second, but a loaded CI machine running the app
 * in a Flatpak sandbox was seen to take 20 s to draw its first window. */
#define VIEWER_WAIT_MS  60000
#define VIEWER_POLL_MS  100
#define VIEWER_CLOSE_MS 300

/* The face viewer the person page opened over `parent`, or NULL. */
static LkFaceViewer *
find_viewer (GtkWindow *parent)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) window = g_list_model_get_item (toplevels, k);
      GtkWidget *child = gtk_window_get_child (window);
      if (gtk_window_get_transient_for (window) == parent && child != NULL
          && LK_IS_FACE_VIEWER (child))
        return LK_FACE_VIEWER (child);
    }
  return NULL;
}

/* What the viewer shows, in one line for the log (and the window's
 * LK_SCREENSHOT_REPORT data, for the tests). */
static char *
describe_viewer (LkFaceViewer *viewer)
{
  GdkTexture *texture;

  if (viewer == NULL)
    return g_strdup ("no face viewer opened");
  texture = lk_face_viewer_get_texture (viewer);
  guint n = lk_face_viewer_get_n_boxes (viewer);
  guint32 face = n > 0 ? lk_face_viewer_get_box_face (viewer, 0) : 0;
  if (texture != NULL)
    return g_strdup_printf ("face %u: photo %d×%d shown, %u face boxes", face,
                            gdk_texture_get_width (texture), gdk_texture_get_height (texture), n);
  return g_strdup_printf ("no photo shown: %s", lk_face_viewer_get_message (viewer));
}

static gboolean
viewer_settled (LkFaceViewer *viewer)
{
  return !lk_face_viewer_is_loading (viewer);
}

static gboolean
close_window (gpointer user_data)
{
  gtk_window_close (GTK_WINDOW (user_data));
  return G_SOURCE_REMOVE;
}

/* Polled until the viewer has its photo or says why not (or the wait is
 * over): the viewer's window is rendered into the PNG, the report printed,
 * and both windows closed. */
static gboolean
viewer_poll (gpointer user_data)
{
  LkWindow *self = user_data;
  guint waited = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (self), "lk-probe-waited"));
  LkFaceViewer *viewer = find_viewer (GTK_WINDOW (self));
  /* A viewer that says at once why it has no photo (a photo folder outside
   * what a Flatpak was granted) settles before its window is mapped: its
   * window has no renderer yet, and the PNG was silently not written (once
   * in two runs in .ci/flatpak). So also wait for the window to be shown. */
  GtkWidget *root = viewer != NULL ? GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer))) : NULL;
  gboolean drawable = root != NULL && gtk_widget_get_mapped (root)
                      && gtk_widget_get_width (root) > 0
                      && gtk_native_get_renderer (GTK_NATIVE (root)) != NULL;

  if (viewer != NULL && (!viewer_settled (viewer) || !drawable) && waited < VIEWER_WAIT_MS)
    {
      g_object_set_data (G_OBJECT (self), "lk-probe-waited",
                         GUINT_TO_POINTER (waited + VIEWER_POLL_MS));
      return G_SOURCE_CONTINUE;
    }
  char *report = describe_viewer (viewer);
  /* Not g_print: it turns "×" into "?" in a C locale's log. */
  printf ("screenshot: viewer: %s\n", report);
  fflush (stdout);
  g_object_set_data_full (G_OBJECT (self), LK_SCREENSHOT_REPORT, report, g_free);
  GtkWindow *shown
      = viewer != NULL ? GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))) : GTK_WINDOW (self);
  g_autoptr (GError) error = NULL;
  if (!lk_screenshot_save (shown, NULL, g_getenv ("LIKENESS_SCREENSHOT"), &error))
    g_printerr ("%s\n", error->message);
  if (viewer != NULL)
    gtk_window_destroy (shown);
  /* Not in this same tick: the modal viewer's end hands focus and the
   * pointer back to this window, and closing it meanwhile made GTK ask a
   * surface already gone for the pointer (a Gdk-CRITICAL, fatal in the
   * tests, seen once in two runs under load). */
  g_timeout_add_full (G_PRIORITY_DEFAULT, VIEWER_CLOSE_MS, close_window, g_object_ref (self),
                      g_object_unref);
  return G_SOURCE_REMOVE;
}

/* Once the person page shows its faces: the first one opened as a
 * double-click opens it (the grid's "activate"), so the viewer is reached
 * the way a user reaches it. */
static gboolean
open_viewer (gpointer user_data)
{
  LkWindow *self = user_data;
  GtkWidget *grid = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (self->person_page),
                                                               LK_TYPE_PERSON_PAGE, "faces_grid"));

  g_signal_emit_by_name (grid, "activate", 0);
  g_timeout_add_full (G_PRIORITY_DEFAULT, VIEWER_POLL_MS, viewer_poll, g_object_ref (self),
                      g_object_unref);
  return G_SOURCE_REMOVE;
}

/* LIKENESS_SCREENSHOT_PAGE=person shows the largest person with a few faces
 * selected, =suggestions the first suggestion, =unnamed the grid filtered to
 * unnamed people (as a click on Unnamed would: the choice is kept), =merge
 * and =move the largest unnamed person with that chooser open (move: two
 * faces selected), =viewer the face viewer on the first face of the grid's
 * first item (the largest person; the faces in no person when there is no
 * person, as in dlib's 11 example photos of strangers) — the window rendered
 * is the viewer's — for screenshots of those pages. */
static void
prepare_screenshot (LkWindow *self)
{
  const char *page = g_getenv ("LIKENESS_SCREENSHOT_PAGE");

  if (self->session != NULL && g_strcmp0 (page, "person") == 0
      && g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) > 0)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (G_LIST_MODEL (self->filtered), 0);

      lk_window_show_person (self, item);
      gtk_selection_model_select_range (lk_person_page_get_selection (self->person_page), 1, 2,
                                        TRUE);
    }
  else if (self->session != NULL && g_strcmp0 (page, "viewer") == 0
           && g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) > 0)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (G_LIST_MODEL (self->filtered), 0);

      lk_window_show_person (self, item);
      /* As the chooser does: the page's grid gets its faces first. */
      g_timeout_add_full (G_PRIORITY_DEFAULT, 500, open_viewer, g_object_ref (self),
                          g_object_unref);
      return;
    }
  else if (self->session != NULL && g_strcmp0 (page, "suggestions") == 0)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.suggestions", NULL);
  else if (self->session != NULL && g_strcmp0 (page, "unnamed") == 0)
    lk_people_filter_set_filter (self->people_filter, "unnamed");
  else if (self->session != NULL
           && (g_strcmp0 (page, "merge") == 0 || g_strcmp0 (page, "move") == 0))
    {
      g_autoptr (LkPersonItem) item = largest_unnamed (self);
      if (item != NULL)
        {
          gboolean move = g_str_equal (page, "move");
          lk_window_show_person (self, item);
          if (move)
            gtk_selection_model_select_range (lk_person_page_get_selection (self->person_page), 1,
                                              2, TRUE);
          g_object_set_data (G_OBJECT (self), "lk-probe-move", GINT_TO_POINTER (move));
          g_timeout_add_full (G_PRIORITY_DEFAULT, 500, open_picker, g_object_ref (self),
                              g_object_unref);
          return;
        }
    }
  lk_screenshot_when_ready (GTK_WINDOW (self));
}

/* ---- attaching ---------------------------------------------------------- */

static void
on_load_started (LkWindow *window, gpointer user_data)
{
  lk_stall_probe_mark (GTK_WIDGET (window),
                       lk_window_get_session (window) != NULL ? "rescan" : "scan");
}

static void
on_load_finished (LkWindow *self, gboolean loaded, gpointer user_data)
{
  lk_stall_probe_mark (GTK_WIDGET (self), "loaded");
  if (self->session != NULL && lk_stall_probe_wants_rescan (GTK_WIDGET (self)))
    /* Once the grid has settled, so the re-scan runs behind a shown window. */
    g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, 2, rescan_for_probe, g_object_ref (self),
                                g_object_unref);
  else if (self->session != NULL && scroll_probe_requested ())
    scroll_probe_window (self);
  else if (lk_screenshot_requested ())
    prepare_screenshot (self);
}

gboolean
lk_window_probes_attach (LkWindow *window)
{
  g_return_val_if_fail (LK_IS_WINDOW (window), FALSE);

  const char *stall = g_getenv ("LIKENESS_STALL_PROBE");
  if ((stall == NULL || stall[0] == '\0' || g_str_equal (stall, "0"))
      && !lk_screenshot_requested ())
    return FALSE;
  lk_stall_probe_install (GTK_WIDGET (window));
  g_signal_connect (window, "load-started", G_CALLBACK (on_load_started), NULL);
  g_signal_connect (window, "load-finished", G_CALLBACK (on_load_finished), NULL);
  return TRUE;
}
