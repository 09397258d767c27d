/* lk-face-viewer.c — the photo a face comes from, its faces boxed and named
 *
 * "Is this the same person?" is answered by the photo, not the 96-pixel
 * crop: who else was there, the light, the age. So Space (or a double-click)
 * on a face opens the photo it came from (photos[].path, or photos[].original
 * in the photo folder a library made from one names), scaled to fit,
 * every face of the photo boxed — this one highlighted — with the other
 * faces' people named; scroll zooms around the pointer, +/− (and the header
 * bar's buttons) zoom on the face, a drag pans, ←/→ step through the
 * person's faces, Escape closes.
 *
 * The window is a real one, not an undecorated overlay a user cannot tell
 * how to close or zoom: a header bar with the step and zoom buttons, each
 * tooltip naming its key, and the close button.
 * Fitting never enlarges: a 150-pixel photo shown at 4× in a 600-pixel
 * window was a blur, which tells nothing about a face; it is shown at 1:1,
 * and only an explicit zoom enlarges it.
 *
 * Photos are decoded off the main thread (gdk-pixbuf's loaders in a GTask:
 * JPEG, PNG, and WebP/HEIF where their loader is installed) and handed over
 * as a GdkTexture; a step to the next face cancels a decode still running.
 * The worker has its own copy of the path and never sees the viewer: the
 * viewer's reference rides in the callback's data and is dropped there, on
 * the main thread. As the task's source object it went with the worker's
 * last reference to the task, which a cancelled decode (return-on-cancel)
 * drops after the viewer is gone, finalizing a widget off GTK's thread.
 * A photo's decoded size may differ from the manifest's width × height (a
 * smaller export, or the sample's reduced photos): boxes are scaled by the
 * ratio. A missing photo says where it was looked for.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-face-viewer.h"
#include "library/lk-sandbox.h"

#define MIN_ZOOM  1.0
#define MAX_ZOOM  16.0
/* One scroll step or key press: ×1.25 feels like a step, not a jump. */
#define ZOOM_STEP 1.25

typedef struct
{
  guint32 face;
  graphene_rect_t box; /* in the decoded photo's pixels */
  char *label;         /* the person's name, or NULL */
} Box;

struct _LkFaceViewer
{
  GtkWidget parent_instance;

  LkSession *session;
  GArray *faces; /* guint32: the person's faces */
  guint index;
  GdkTexture *texture;
  GArray *boxes; /* Box */
  char *message;
  GCancellable *cancellable;
  gboolean loading; /* a decode is under way (lk_face_viewer_is_loading) */
  double zoom;
  double pan_x, pan_y;   /* widget pixels the photo is moved by */
  double drag_x, drag_y; /* the pan when a drag began */
  double pointer_x, pointer_y;
  GtkWidget *step_buttons[2]; /* previous, next: sensitive where there is one */
};

G_DEFINE_FINAL_TYPE (LkFaceViewer, lk_face_viewer, GTK_TYPE_WIDGET)

static void
clear_boxes (LkFaceViewer *self)
{
  for (guint k = 0; k < self->boxes->len; k++)
    g_free (g_array_index (self->boxes, Box, k).label);
  g_array_set_size (self->boxes, 0);
}

/* The name of the person holding `face`, "Unnamed person", "In no person" for
 * a face of no person (the grid's "Unassigned faces"), or NULL when the face
 * is in no entry of the grid. */
static char *
name_of_face (LkFaceViewer *self, guint32 face)
{
  GListModel *people = lk_session_get_people (self->session);
  guint n = people != NULL ? g_list_model_get_n_items (people) : 0;

  for (guint k = 0; k < n; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      const guint32 *faces = lk_person_item_get_faces (item);
      guint count = lk_person_item_get_n_faces (item);

      for (guint j = 0; j < count; j++)
        if (faces[j] == face)
          {
            if (lk_person_item_is_unassigned (item))
              /* Translators: the label under a face box in the photo viewer, for a
               * face that belongs to no person (the grid's "Unassigned faces").
               * "Unassigned" beside "Unnamed person" left users asking what
               * the difference was. */
              return g_strdup (C_ ("face", "In no person"));
            return lk_person_item_get_name (item) != NULL
                       ? g_strdup (lk_person_item_get_name (item))
                       : g_strdup (_ ("Unnamed person"));
          }
    }
  return NULL;
}

/* Every face of the photo of the face on screen, scaled to the texture. */
static void
collect_boxes (LkFaceViewer *self)
{
  const LkLibrary *library = lk_session_get_library (self->session);
  guint32 face = g_array_index (self->faces, guint32, self->index);
  guint64 photo_id = library->photo[face];
  const LkPhoto *photo = lk_library_find_photo (library, photo_id);
  double tw = gdk_texture_get_width (self->texture);
  double th = gdk_texture_get_height (self->texture);
  double sx = photo != NULL && photo->width > 0 ? tw / (double) photo->width : 1.0;
  double sy = photo != NULL && photo->height > 0 ? th / (double) photo->height : 1.0;

  clear_boxes (self);
  for (gsize f = 0; f < library->count; f++)
    {
      if (library->photo[f] != photo_id || !library->has_box[f])
        continue;
      Box box = { (guint32) f,
                  GRAPHENE_RECT_INIT (library->box[f][0] * sx, library->box[f][1] * sy,
                                      library->box[f][2] * sx, library->box[f][3] * sy),
                  name_of_face (self, (guint32) f) };
      /* The face on screen first: drawn last, on top. */
      if (f == face)
        g_array_prepend_val (self->boxes, box);
      else
        g_array_append_val (self->boxes, box);
    }
}

static void
set_message (LkFaceViewer *self, const char *message)
{
  g_free (self->message);
  self->message = g_strdup (message);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
decode_photo (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  GdkPixbuf *pixbuf = gdk_pixbuf_new_from_file (task_data, &error);

  if (pixbuf == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, pixbuf, g_object_unref);
}

static void
on_decoded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkFaceViewer) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) pixbuf = g_task_propagate_pointer (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self->loading = FALSE;
  if (pixbuf == NULL)
    {
      const char *path = g_task_get_task_data (G_TASK (result));
      g_autofree char *message
          = g_strdup_printf (_ ("Cannot show the photo %s: %s"), path, error->message);
      set_message (self, message);
      return;
    }
  g_clear_object (&self->texture);
  /* gdk_texture_new_for_pixbuf: GTK 4.8's way, deprecated in later GTKs. */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  self->texture = gdk_texture_new_for_pixbuf (pixbuf);
  G_GNUC_END_IGNORE_DEPRECATIONS
  collect_boxes (self);
  set_message (self, "");
}

static void
load (LkFaceViewer *self)
{
  const LkLibrary *library = lk_session_get_library (self->session);
  guint32 face = g_array_index (self->faces, guint32, self->index);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
  g_autofree char *photo_id = g_strdup_printf ("%" G_GUINT64_FORMAT, library->photo[face]);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->loading = FALSE;
  g_clear_object (&self->texture);
  clear_boxes (self);
  self->zoom = 1.0;
  self->pan_x = self->pan_y = 0.0;

  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  g_autofree char *title
      = g_strdup_printf (_ ("Face %'u of %'u"), self->index + 1, self->faces->len);
  if (GTK_IS_WINDOW (root))
    gtk_window_set_title (GTK_WINDOW (root), title);
  if (self->step_buttons[0] != NULL)
    {
      gtk_widget_set_sensitive (self->step_buttons[0], self->index > 0);
      gtk_widget_set_sensitive (self->step_buttons[1], self->index + 1 < self->faces->len);
    }

  g_autoptr (GError) error = NULL;
  /* The folder mapping the user gave in Write Names to Photos…, if any. */
  const LkPathMap *map = lk_session_get_photo_map (self->session);
  g_autofree char *path
      = photo != NULL ? lk_library_photo_file (library, photo, map, map != NULL ? 1 : 0, &error)
                      : NULL;
  if (g_error_matches (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_UNMAPPED))
    {
      g_autofree char *message = g_strdup_printf (
          _ ("The photo of face %u is %s on the server the library was imported from. Say where "
             "that server's folder is on this computer in Write Names to Photos…, then it shows "
             "here."),
          face, photo->source_path);
      set_message (self, message);
      return;
    }
  if (path == NULL && error != NULL)
    {
      set_message (self, error->message);
      return;
    }
  if (path == NULL)
    {
      g_autofree char *message = g_strdup_printf (
          _ ("library.json names no file for photo %s, which face %u comes from."), photo_id, face);
      set_message (self, message);
      return;
    }
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* In a Flatpak, a photo in a folder the sandbox was not granted is
       * "not there" too: lk_sandbox_hint says so, and how to grant it. */
      g_autofree char *message = NULL;
      if (photo->path != NULL)
        {
          g_autofree char *hint = lk_sandbox_hint (path);
          message = g_strdup_printf (_ ("The photo of face %u is not there: looked for %s "
                                        "(photos[].path “%s” of photo %s).%s"),
                                     face, path, photo->path, photo_id, hint != NULL ? hint : "");
        }
      else if (photo->original != NULL && photo->folder < library->n_photo_folders)
        {
          /* A library made from a photo folder, moved to another computer,
           * or whose folder was moved or unmounted: the folder it names is
           * the first thing to check. In a Flatpak, a photo folder outside
           * every granted folder is not there either, and that is the
           * likelier cause: the hint then names the photo folder, the one
           * grant that shows all its photos (the photo's own folder, e.g.
           * 2019/, would be one of many). */
          const char *folder = library->photo_folders[photo->folder];
          gboolean folder_there = g_file_test (folder, G_FILE_TEST_IS_DIR);
          g_autofree char *hint = lk_sandbox_hint (folder_there ? path : folder);
          const char *state
              = folder_there ? _ ("the folder is there, the photo is not")
                : hint != NULL
                    ? _ ("that folder is not there in this Flatpak's sandbox: not granted to "
                         "it, or moved, renamed or not mounted")
                    : _ ("that folder is not there on this computer: moved, renamed or not "
                         "mounted");
          message = g_strdup_printf (_ ("The photo of face %u is not there: looked for %s "
                                        "(photo %s, “%s” in the photo folder %s; %s).%s"),
                                     face, path, photo_id, photo->original, folder, state,
                                     hint != NULL ? hint : "");
        }
      else
        {
          /* Only source_path is left (an Immich library, no photo_folders):
           * lk_library_photo_file gave a path only through the user's folder
           * mapping, so that mapping is what to check. */
          g_autofree char *hint = lk_sandbox_hint (path);
          message = g_strdup_printf (_ ("The photo of face %u is not there: looked for %s, "
                                        "mapped from %s on the server the library was imported "
                                        "from (photo %s; check the folder mapping in Write Names "
                                        "to Photos…).%s"),
                                     face, path, photo->source_path, photo_id,
                                     hint != NULL ? hint : "");
        }
      set_message (self, message);
      return;
    }
  set_message (self, _ ("Loading the photo…"));
  self->loading = TRUE;
  self->cancellable = g_cancellable_new ();
  g_autoptr (GTask) task = g_task_new (NULL, self->cancellable, on_decoded, g_object_ref (self));
  g_task_set_task_data (task, g_steal_pointer (&path), g_free);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, decode_photo);
}

/* ---- drawing ------------------------------------------------------------- */

/* The photo's rectangle in widget pixels. */
static graphene_rect_t
photo_rect (LkFaceViewer *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  double tw = gdk_texture_get_width (self->texture);
  double th = gdk_texture_get_height (self->texture);
  /* Fitted, but never enlarged: a small photo stays sharp at 1:1. */
  double scale = MIN (MIN (w / tw, h / th), 1.0) * self->zoom;

  return GRAPHENE_RECT_INIT ((w - tw * scale) / 2 + self->pan_x, (h - th * scale) / 2 + self->pan_y,
                             tw * scale, th * scale);
}

static void
append_label (GtkSnapshot *snapshot, GtkWidget *widget, const char *text, double x, double y,
              gboolean current)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, text);
  int lw, lh;

  pango_layout_get_pixel_size (layout, &lw, &lh);
  graphene_rect_t back = GRAPHENE_RECT_INIT (x, y + 4, lw + 12, lh + 4);
  GskRoundedRect rounded;
  gsk_rounded_rect_init_from_rect (&rounded, &back, 4);
  gtk_snapshot_push_rounded_clip (snapshot, &rounded);
  gtk_snapshot_append_color (
      snapshot, current ? &(GdkRGBA){ 0.21, 0.52, 0.89, 0.95 } : &(GdkRGBA){ 0, 0, 0, 0.7 }, &back);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x + 6, y + 6));
  gtk_snapshot_append_layout (snapshot, layout, &(GdkRGBA){ 1, 1, 1, 1 });
  gtk_snapshot_restore (snapshot);
}

static void
lk_face_viewer_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  LkFaceViewer *self = LK_FACE_VIEWER (widget);
  double w = gtk_widget_get_width (widget);
  double h = gtk_widget_get_height (widget);

  gtk_snapshot_append_color (snapshot, &(GdkRGBA){ 0.12, 0.12, 0.12, 1 },
                             &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (self->texture == NULL)
    {
      g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, self->message);
      int lw, lh;

      pango_layout_set_width (layout, (int) (MAX (w - 48, 100) * PANGO_SCALE));
      pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
      pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
      pango_layout_get_pixel_size (layout, &lw, &lh);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (24, (h - lh) / 2));
      gtk_snapshot_append_layout (snapshot, layout, &(GdkRGBA){ 0.9, 0.9, 0.9, 1 });
      gtk_snapshot_restore (snapshot);
      return;
    }

  graphene_rect_t rect = photo_rect (self);
  double scale = rect.size.width / gdk_texture_get_width (self->texture);
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gtk_snapshot_append_texture (snapshot, self->texture, &rect);
  /* Others first, the face on screen (boxes[0]) last, on top. */
  for (guint n = self->boxes->len; n > 0; n--)
    {
      const Box *box = &g_array_index (self->boxes, Box, n - 1);
      gboolean current = n - 1 == 0;
      graphene_rect_t r = GRAPHENE_RECT_INIT (
          rect.origin.x + box->box.origin.x * scale, rect.origin.y + box->box.origin.y * scale,
          box->box.size.width * scale, box->box.size.height * scale);
      float width = current ? 4 : 2;
      GdkRGBA color = current ? (GdkRGBA){ 0.21, 0.52, 0.89, 1 } : (GdkRGBA){ 1, 1, 1, 0.85 };
      GskRoundedRect outline;
      graphene_rect_t around;

      /* Drawn outside the box: a face 20 pixels wide on screen (a small
       * face of a 4,032-pixel photo fitted to the window) lost a third of
       * itself under the highlight's 4-pixel border. */
      graphene_rect_inset_r (&r, -width, -width, &around);
      gsk_rounded_rect_init_from_rect (&outline, &around, 6);
      gtk_snapshot_append_border (snapshot, &outline, (float[4]){ width, width, width, width },
                                  (GdkRGBA[4]){ color, color, color, color });
      if (box->label != NULL)
        append_label (snapshot, widget, box->label, r.origin.x, r.origin.y + r.size.height,
                      current);
    }
  gtk_snapshot_pop (snapshot);
}

/* ---- zoom, pan, keys ----------------------------------------------------- */

/* Zooms to `zoom`, keeping the photo point under (x, y) where it is. */
static void
zoom_at (LkFaceViewer *self, double zoom, double x, double y)
{
  zoom = CLAMP (zoom, MIN_ZOOM, MAX_ZOOM);
  if (self->texture == NULL || zoom == self->zoom)
    return;
  graphene_rect_t before = photo_rect (self);
  double u = (x - before.origin.x) / before.size.width;
  double v = (y - before.origin.y) / before.size.height;

  self->zoom = zoom;
  if (zoom == MIN_ZOOM)
    self->pan_x = self->pan_y = 0.0;
  else
    {
      graphene_rect_t after = photo_rect (self);
      self->pan_x += x - (after.origin.x + u * after.size.width);
      self->pan_y += y - (after.origin.y + v * after.size.height);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
on_scroll (GtkEventControllerScroll *controller, double dx, double dy, gpointer user_data)
{
  LkFaceViewer *self = user_data;

  zoom_at (self, dy < 0 ? self->zoom * ZOOM_STEP : self->zoom / ZOOM_STEP, self->pointer_x,
           self->pointer_y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller, double x, double y, gpointer user_data)
{
  LkFaceViewer *self = user_data;

  self->pointer_x = x;
  self->pointer_y = y;
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, gpointer user_data)
{
  LkFaceViewer *self = user_data;

  self->drag_x = self->pan_x;
  self->drag_y = self->pan_y;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, gpointer user_data)
{
  LkFaceViewer *self = user_data;

  if (self->zoom <= MIN_ZOOM)
    return;
  self->pan_x = self->drag_x + dx;
  self->pan_y = self->drag_y + dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
action_step (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkFaceViewer *self = LK_FACE_VIEWER (widget);
  int step = g_variant_get_int32 (parameter);

  if ((step < 0 && self->index == 0) || (step > 0 && self->index + 1 >= self->faces->len))
    return;
  lk_face_viewer_set_index (self, self->index + step);
}

/* The face on screen (box 0) in widget pixels; FALSE when there is none. */
static gboolean
face_rect (LkFaceViewer *self, guint k, graphene_rect_t *out)
{
  if (self->texture == NULL || k >= self->boxes->len)
    return FALSE;
  graphene_rect_t rect = photo_rect (self);
  double scale = rect.size.width / gdk_texture_get_width (self->texture);
  const Box *box = &g_array_index (self->boxes, Box, k);

  *out = GRAPHENE_RECT_INIT (rect.origin.x + box->box.origin.x * scale,
                             rect.origin.y + box->box.origin.y * scale, box->box.size.width * scale,
                             box->box.size.height * scale);
  return TRUE;
}

/* A key or button zooms on the face, which it brings to the middle: zoomed
 * on the photo's centre (as it did), a face near an edge left the window at
 * the second step. The wheel keeps zooming where the pointer is. */
static void
zoom_on_face (LkFaceViewer *self, double zoom)
{
  GtkWidget *widget = GTK_WIDGET (self);
  double w = gtk_widget_get_width (widget) / 2.0, h = gtk_widget_get_height (widget) / 2.0;
  graphene_rect_t face;

  zoom = CLAMP (zoom, MIN_ZOOM, MAX_ZOOM);
  if (zoom == MIN_ZOOM || !face_rect (self, 0, &face))
    {
      zoom_at (self, zoom, w, h);
      return;
    }
  self->zoom = zoom;
  face_rect (self, 0, &face);
  self->pan_x += w - (face.origin.x + face.size.width / 2);
  self->pan_y += h - (face.origin.y + face.size.height / 2);
  gtk_widget_queue_draw (widget);
}

static void
action_zoom (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkFaceViewer *self = LK_FACE_VIEWER (widget);
  int how = g_variant_get_int32 (parameter);

  if (how == 0)
    lk_face_viewer_set_zoom (self, MIN_ZOOM);
  else
    zoom_on_face (self, how > 0 ? self->zoom * ZOOM_STEP : self->zoom / ZOOM_STEP);
}

static void
action_close (GtkWidget *widget, const char *name, GVariant *parameter)
{
  GtkRoot *root = gtk_widget_get_root (widget);

  if (GTK_IS_WINDOW (root))
    gtk_window_close (GTK_WINDOW (root));
}

/* ---- GObject ------------------------------------------------------------- */

static void
lk_face_viewer_dispose (GObject *object)
{
  LkFaceViewer *self = LK_FACE_VIEWER (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->texture);
  g_clear_object (&self->session);
  G_OBJECT_CLASS (lk_face_viewer_parent_class)->dispose (object);
}

static void
lk_face_viewer_finalize (GObject *object)
{
  LkFaceViewer *self = LK_FACE_VIEWER (object);

  clear_boxes (self);
  g_array_unref (self->boxes);
  g_array_unref (self->faces);
  g_free (self->message);
  G_OBJECT_CLASS (lk_face_viewer_parent_class)->finalize (object);
}

static void
lk_face_viewer_class_init (LkFaceViewerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_face_viewer_dispose;
  object_class->finalize = lk_face_viewer_finalize;
  widget_class->snapshot = lk_face_viewer_snapshot;
  gtk_widget_class_set_css_name (widget_class, "lk-face-viewer");

  gtk_widget_class_install_action (widget_class, "viewer.step", "i", action_step);
  gtk_widget_class_install_action (widget_class, "viewer.zoom", "i", action_zoom);
  gtk_widget_class_install_action (widget_class, "viewer.close", NULL, action_close);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0, "viewer.step", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "viewer.step", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "viewer.zoom", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "viewer.zoom", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "viewer.zoom", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "viewer.zoom", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "viewer.zoom", "i",
                                       -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "viewer.zoom", "i", 0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "viewer.close", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_space, 0, "viewer.close", NULL);
}

static void
lk_face_viewer_init (LkFaceViewer *self)
{
  GtkEventController *scroll
      = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();

  self->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  self->message = g_strdup ("");
  self->zoom = 1.0;
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}

/* ---- public API ---------------------------------------------------------- */

/* The header bar is the window's, not the viewer's: its buttons are outside
 * the widget whose actions they name, so a click activates the action on
 * the viewer. */
static void
on_header_button (GtkButton *button, gpointer user_data)
{
  const char *action = g_object_get_data (G_OBJECT (button), "lk-action");
  GVariant *target = g_object_get_data (G_OBJECT (button), "lk-target");

  gtk_widget_activate_action_variant (GTK_WIDGET (user_data), action, target);
  gtk_widget_grab_focus (GTK_WIDGET (user_data));
}

static GtkWidget *
header_button (LkFaceViewer *self, const char *icon, const char *tooltip, const char *action,
               GVariant *target)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);

  gtk_widget_set_tooltip_text (button, tooltip);
  /* Keys stay the photo's (the viewer keeps the focus after a click). */
  gtk_widget_set_focus_on_click (button, FALSE);
  g_object_set_data (G_OBJECT (button), "lk-action", (gpointer) action);
  g_object_set_data_full (G_OBJECT (button), "lk-target", g_variant_ref_sink (target),
                          (GDestroyNotify) g_variant_unref);
  g_signal_connect_object (button, "clicked", G_CALLBACK (on_header_button), self, 0);
  return button;
}

LkFaceViewer *
lk_face_viewer_present (GtkWindow *parent, LkSession *session, const guint32 *faces, guint n_faces,
                        guint index)
{
  g_return_val_if_fail (LK_IS_SESSION (session), NULL);
  g_return_val_if_fail (n_faces > 0, NULL);

  GtkWidget *window = gtk_window_new ();
  LkFaceViewer *self = g_object_new (LK_TYPE_FACE_VIEWER, NULL);
  GtkWidget *header = gtk_header_bar_new ();
  int width = 1000, height = 700;

  if (parent != NULL)
    {
      width = MAX (gtk_widget_get_width (GTK_WIDGET (parent)) - 80, 480);
      height = MAX (gtk_widget_get_height (GTK_WIDGET (parent)) - 80, 360);
      gtk_window_set_transient_for (GTK_WINDOW (window), parent);
      gtk_window_set_modal (GTK_WINDOW (window), TRUE);
      gtk_window_set_destroy_with_parent (GTK_WINDOW (window), TRUE);
    }
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  self->step_buttons[0] = header_button (self, "go-previous-symbolic", _ ("Previous Face (←)"),
                                         "viewer.step", g_variant_new_int32 (-1));
  self->step_buttons[1] = header_button (self, "go-next-symbolic", _ ("Next Face (→)"),
                                         "viewer.step", g_variant_new_int32 (1));
  GtkWidget *steps = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class (steps, "linked");
  gtk_box_append (GTK_BOX (steps), self->step_buttons[0]);
  gtk_box_append (GTK_BOX (steps), self->step_buttons[1]);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), steps);
  /* Packed from the end: + outermost, as Loupe and Image Viewer place it. */
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header),
                           header_button (self, "zoom-in-symbolic", _ ("Zoom In (+)"),
                                          "viewer.zoom", g_variant_new_int32 (1)));
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header),
                           header_button (self, "zoom-fit-best-symbolic", _ ("Fit to Window (0)"),
                                          "viewer.zoom", g_variant_new_int32 (0)));
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header),
                           header_button (self, "zoom-out-symbolic", _ ("Zoom Out (−)"),
                                          "viewer.zoom", g_variant_new_int32 (-1)));
  gtk_window_set_titlebar (GTK_WINDOW (window), header);
  self->session = g_object_ref (session);
  g_array_append_vals (self->faces, faces, n_faces);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (self));
  lk_face_viewer_set_index (self, index);
  gtk_window_present (GTK_WINDOW (window));
  gtk_widget_grab_focus (GTK_WIDGET (self));
  return self;
}

void
lk_face_viewer_set_index (LkFaceViewer *self, guint index)
{
  g_return_if_fail (LK_IS_FACE_VIEWER (self));

  self->index = MIN (index, self->faces->len - 1);
  load (self);
}

guint
lk_face_viewer_get_index (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), 0);
  return self->index;
}

GdkTexture *
lk_face_viewer_get_texture (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), NULL);
  return self->texture;
}

gboolean
lk_face_viewer_is_loading (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), FALSE);
  return self->loading;
}

const char *
lk_face_viewer_get_message (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), NULL);
  return self->message;
}

guint
lk_face_viewer_get_n_boxes (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), 0);
  return self->boxes->len;
}

const char *
lk_face_viewer_get_box_label (LkFaceViewer *self, guint k)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), NULL);
  g_return_val_if_fail (k < self->boxes->len, NULL);
  return g_array_index (self->boxes, Box, k).label;
}

guint32
lk_face_viewer_get_box_face (LkFaceViewer *self, guint k)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), 0);
  g_return_val_if_fail (k < self->boxes->len, 0);
  return g_array_index (self->boxes, Box, k).face;
}

double
lk_face_viewer_get_zoom (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), 1.0);
  return self->zoom;
}

void
lk_face_viewer_set_zoom (LkFaceViewer *self, double zoom)
{
  g_return_if_fail (LK_IS_FACE_VIEWER (self));
  zoom_at (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
           gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

double
lk_face_viewer_get_scale (LkFaceViewer *self)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), 0.0);
  if (self->texture == NULL)
    return 0.0;
  return photo_rect (self).size.width / gdk_texture_get_width (self->texture);
}

gboolean
lk_face_viewer_get_box_rect (LkFaceViewer *self, guint k, graphene_rect_t *rect)
{
  g_return_val_if_fail (LK_IS_FACE_VIEWER (self), FALSE);
  g_return_val_if_fail (rect != NULL, FALSE);
  return face_rect (self, k, rect);
}
