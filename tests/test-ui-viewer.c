/* test-ui-viewer — the face viewer on real photo files, under Xvfb
 *
 * `likeness-cli make-sample` names photos it does not write, so the test
 * writes them: each photo of the manifest as a PNG at an eighth of its
 * width × height (the viewer scales boxes by the decoded size), with each
 * face's thumbnail pasted at its box. The viewer must decode the photo off
 * the main thread, box every face of the photo with the other faces' people
 * named, step with ←/→ through the person's faces, zoom, say where it
 * looked for a missing photo, and close on Escape.
 *
 * LK_VIEWER_SCREENSHOT=FILE.png also renders the viewer to FILE.png.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "lk-face-viewer.h"
#include "lk-library.h"
#include "lk-person-item.h"
#include "lk-person-page.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "lk-thumbnail.h"
#include "lk-window-private.h"

#define FACES  500
/* The photos are written this many times smaller than the manifest says. */
#define SHRINK 8

static char *library_dir;

/* Writes every photo of `folder`'s manifest (see the top of the file). */
static void
write_photos (const char *folder)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);

  g_assert_no_error (error);
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      guint w = (guint) (photo->width / SHRINK), h = (guint) (photo->height / SHRINK);
      g_autoptr (LkThumbnail) image = lk_thumbnail_new (w, h);

      for (guint y = 0; y < h; y++)
        for (guint x = 0; x < w; x++)
          {
            guint8 *px = image->pixels + y * image->stride + 4 * x;
            px[0] = (guint8) (90 + 60 * y / h);
            px[1] = (guint8) (110 + 50 * x / w);
            px[2] = (guint8) (130 + (photo->id * 37) % 80);
            px[3] = 255;
          }
      for (gsize f = 0; f < library->count; f++)
        {
          if (library->photo[f] != photo->id || !library->has_box[f])
            continue;
          g_autofree char *thumb_path = lk_library_thumbnail_path (library, f);
          g_autoptr (LkThumbnail) thumb = thumb_path ? lk_thumbnail_load (thumb_path, NULL) : NULL;
          if (thumb == NULL)
            continue;
          guint bx = (guint) (library->box[f][0] / SHRINK),
                by = (guint) (library->box[f][1] / SHRINK);
          guint bw = MAX ((guint) (library->box[f][2] / SHRINK), 1);
          guint bh = MAX ((guint) (library->box[f][3] / SHRINK), 1);
          for (guint y = 0; y < bh && by + y < h; y++)
            for (guint x = 0; x < bw && bx + x < w; x++)
              memcpy (image->pixels + (by + y) * image->stride + 4 * (bx + x),
                      thumb->pixels + (y * thumb->height / bh) * thumb->stride
                          + 4 * (x * thumb->width / bw),
                      4);
        }
      g_autofree char *path = g_build_filename (folder, photo->path, NULL);
      g_autofree char *dir = g_path_get_dirname (path);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_true (lk_thumbnail_save (image, path, &error));
      g_assert_no_error (error);
    }
}

static gboolean
viewer_settled (gpointer data)
{
  LkFaceViewer *viewer = data;

  return lk_face_viewer_get_texture (viewer) != NULL
         || !g_str_has_suffix (lk_face_viewer_get_message (viewer), "…");
}

/* A person with faces on photos holding other faces too. */
static LkPersonItem *
person_with_company (LkSession *session, guint *position)
{
  const LkLibrary *library = lk_session_get_library (session);
  GListModel *people = lk_session_get_people (session);

  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      const guint32 *faces = lk_person_item_get_faces (item);
      if (lk_person_item_is_unassigned (item) || lk_person_item_get_n_faces (item) < 3)
        continue;
      for (guint j = 0; j < lk_person_item_get_n_faces (item); j++)
        {
          guint others = 0;
          for (gsize f = 0; f < library->count; f++)
            others += library->photo[f] == library->photo[faces[j]] && f != faces[j];
          if (others >= 1)
            {
              *position = j;
              return g_steal_pointer (&item);
            }
        }
    }
  g_assert_not_reached ();
}

static void
test_viewer_shows_photo_boxes_and_steps (void)
{
  LkWindow *window = lk_window_new (NULL);
  g_autoptr (GFile) file = g_file_new_for_path (library_dir);

  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 760);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  guint position;
  g_autoptr (LkPersonItem) item = person_with_company (session, &position);
  g_autoptr (GError) error = NULL;

  /* Name one of the other people on that photo, to see the name drawn. */
  guint32 face = lk_person_item_get_faces (item)[position];
  GListModel *people = lk_session_get_people (session);
  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) other = g_list_model_get_item (people, k);
      if (other == item || lk_person_item_is_unassigned (other))
        continue;
      for (guint j = 0; j < lk_person_item_get_n_faces (other); j++)
        if (library->photo[lk_person_item_get_faces (other)[j]] == library->photo[face])
          g_assert_true (
              lk_session_rename (session, lk_person_item_get_id (other), "Grace Hopper", &error));
    }
  g_assert_no_error (error);
  while (lk_session_is_committing (session))
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (item), "Ada Lovelace", &error));
  while (lk_session_is_committing (session))
    g_main_context_iteration (NULL, TRUE);

  lk_window_show_person (window, item);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_test_spin (200);

  /* What Space and a double-click do. */
  lk_person_page_view_photo (page, position);
  GtkWindow *viewer_window = NULL;
  GListModel *toplevels = gtk_window_get_toplevels ();
  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_FACE_VIEWER (gtk_window_get_child (w)))
        viewer_window = w;
    }
  g_assert_nonnull (viewer_window);
  g_assert_true (gtk_window_get_transient_for (viewer_window) == GTK_WINDOW (window));
  LkFaceViewer *viewer = LK_FACE_VIEWER (gtk_window_get_child (viewer_window));
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  g_assert_cmpstr (lk_face_viewer_get_message (viewer), ==, "");
  GdkTexture *texture = lk_face_viewer_get_texture (viewer);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, photo->width / SHRINK);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, photo->height / SHRINK);

  /* Every face of the photo is boxed, this one first, the others named. */
  guint on_photo = 0;
  for (gsize f = 0; f < library->count; f++)
    on_photo += library->photo[f] == library->photo[face];
  g_assert_cmpuint (lk_face_viewer_get_n_boxes (viewer), ==, on_photo);
  g_assert_cmpstr (lk_face_viewer_get_box_label (viewer, 0), ==, "Ada Lovelace");
  gboolean named_other = FALSE;
  for (guint k = 1; k < on_photo; k++)
    named_other |= g_strcmp0 (lk_face_viewer_get_box_label (viewer, k), "Grace Hopper") == 0;
  g_assert_true (named_other);

  const char *shot = g_getenv ("LK_VIEWER_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_spin (500);
      lk_test_save_screenshot (GTK_WIDGET (viewer_window), shot);
    }

  /* Zoom in and back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", 1));
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), >, 1.2);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", 0));
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), ==, 1.0);

  /* → : the next face of the person, on its own photo. */
  guint n = lk_person_item_get_n_faces (item);
  guint next = position + 1 < n ? position + 1 : position - 1;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.step", "i",
                                             next > position ? 1 : -1));
  g_assert_cmpuint (lk_face_viewer_get_index (viewer), ==, next);
  lk_test_wait (viewer_settled, viewer);
  g_assert_nonnull (lk_face_viewer_get_texture (viewer));
  g_assert_cmpstr (lk_face_viewer_get_box_label (viewer, 0), ==, "Ada Lovelace");

  /* A missing photo says where it was looked for. */
  guint32 next_face = lk_person_item_get_faces (item)[next];
  const LkPhoto *gone = lk_library_find_photo (library, library->photo[next_face]);
  g_autofree char *gone_path = g_build_filename (library_dir, gone->path, NULL);
  g_assert_cmpint (g_unlink (gone_path), ==, 0);
  lk_face_viewer_set_index (viewer, next);
  lk_test_wait (viewer_settled, viewer);
  g_assert_null (lk_face_viewer_get_texture (viewer));
  g_assert_nonnull (strstr (lk_face_viewer_get_message (viewer), gone->path));

  /* Escape closes. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_spin (100);
  g_assert_null (gtk_widget_get_root (GTK_WIDGET (viewer)));
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-viewer-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                    G_STRINGIFY (FACES), "--seed", "13", NULL),
                   ==, 0);
  write_photos (library_dir);

  g_test_add_func ("/ui-viewer/shows-photo-boxes-and-steps",
                   test_viewer_shows_photo_boxes_and_steps);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
