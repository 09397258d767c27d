/* test-ui-viewer — the face viewer on real photo files, under Xvfb
 *
 * `likeness-cli make-sample` writes each photo of the manifest as a PNG
 * LK_SAMPLE_PHOTO_SIDE pixels on its long side (the viewer scales boxes by
 * the decoded size), with each face's thumbnail pasted at its box. The
 * viewer must decode the photo off the main thread, box every face of the
 * photo with the other faces' people named (a face of nobody as
 * "In no person"), step with ←/→ through the person's faces, zoom, say where
 * it looked for a missing photo, and close on Escape. A library made from
 * a photo folder (photo_folders + photos[].original, the photos outside the
 * library) shows its photos too, and one whose folder moved says so, naming
 * the folder and the path it looked for; so does a server's photo
 * (source_path only) that the user's folder mapping puts where it is not,
 * naming the server path it was mapped from. Its window has a header bar with a
 * close button and zoom buttons whose tooltips name their keys (issue 30),
 * + keeps the face in the middle, and a small photo is never enlarged to
 * fit.
 *
 * LK_VIEWER_SCREENSHOT=FILE.png also renders the viewer to FILE.png, and
 * LK_VIEWER_UNASSIGNED_SCREENSHOT=FILE.png the viewer on an unassigned face,
 * LK_VIEWER_SMALL_SCREENSHOT=FILE.png the viewer on a 150-pixel photo and
 * LK_VIEWER_ZOOM_SCREENSHOT=FILE.png zoomed twice with +.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <json-glib/json-glib.h>

#include "lk-face-viewer.h"
#include "library/lk-library.h"
#include "people/lk-person-item.h"
#include "lk-person-page.h"
#include "library/lk-review-location.h"
#include "library/lk-sample.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "library/lk-thumbnail.h"
#include "lk-window-private.h"

#define FACES 500

static char *library_dir;
static gboolean own_library; /* LK_VIEWER_LIBRARY: a library that is not the test's to change */

/* TRUE once the viewer is out of its window (closed). */
static gboolean
viewer_closed (gpointer viewer)
{
  return gtk_widget_get_root (viewer) == NULL;
}

static gboolean
viewer_settled (gpointer data)
{
  LkFaceViewer *viewer = data;

  return !lk_face_viewer_is_loading (viewer);
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

  /* Name each other person on that photo, each differently: issue 15's
   * screenshot showed four faces labelled "Grace Hopper" because this test
   * gave every one of them that name, which read as one person four times
   * in one photo (never possible: faces of one photo are never one person). */
  static const char *const names[]
      = { "Grace Hopper",      "Alan Turing",    "Emmy Noether",  "Hedy Lamarr",
          "Katherine Johnson", "Barbara Liskov", "Frances Allen", "Margaret Hamilton" };
  guint named = 0;
  guint32 face = lk_person_item_get_faces (item)[position];
  GListModel *people = lk_session_get_people (session);
  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) other = g_list_model_get_item (people, k);
      if (other == item || lk_person_item_is_unassigned (other))
        continue;
      gboolean on_photo = FALSE;
      for (guint j = 0; j < lk_person_item_get_n_faces (other); j++)
        on_photo |= library->photo[lk_person_item_get_faces (other)[j]] == library->photo[face];
      if (on_photo)
        {
          g_assert_cmpuint (named, <, G_N_ELEMENTS (names));
          g_assert_true (
              lk_session_rename (session, lk_person_item_get_id (other), names[named++], &error));
        }
    }
  g_assert_no_error (error);
  while (lk_session_is_committing (session))
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (item), "Ada Lovelace", &error));
  while (lk_session_is_committing (session))
    g_main_context_iteration (NULL, TRUE);

  lk_window_show_person (window, item);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_test_wait_laid_out (GTK_WIDGET (page), "the person page shown");

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
  g_assert_cmpint (MAX (gdk_texture_get_width (texture), gdk_texture_get_height (texture)), ==,
                   LK_SAMPLE_PHOTO_SIDE);
  g_assert_cmpint (gdk_texture_get_width (texture), ==,
                   photo->width * LK_SAMPLE_PHOTO_SIDE / MAX (photo->width, photo->height));

  /* Every face of the photo is boxed, this one first, the others named. */
  guint on_photo = 0;
  for (gsize f = 0; f < library->count; f++)
    on_photo += library->photo[f] == library->photo[face];
  g_assert_cmpuint (lk_face_viewer_get_n_boxes (viewer), ==, on_photo);
  g_assert_cmpstr (lk_face_viewer_get_box_label (viewer, 0), ==, "Ada Lovelace");
  g_assert_cmpuint (lk_face_viewer_get_box_face (viewer, 0), ==, face);
  /* Each box is labelled with the person holding its own face, and no two
   * boxes name one person. */
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint named_boxes = 0;
  for (guint k = 0; k < on_photo; k++)
    {
      guint32 boxed = lk_face_viewer_get_box_face (viewer, k);
      const char *label = lk_face_viewer_get_box_label (viewer, k);
      g_assert_cmpuint (library->photo[boxed], ==, library->photo[face]);
      LkPersonItem *holder = NULL;
      for (guint p = 0; p < g_list_model_get_n_items (people) && holder == NULL; p++)
        {
          g_autoptr (LkPersonItem) candidate = g_list_model_get_item (people, p);
          for (guint j = 0; j < lk_person_item_get_n_faces (candidate); j++)
            if (lk_person_item_get_faces (candidate)[j] == boxed)
              holder = candidate;
        }
      g_assert_nonnull (holder);
      if (lk_person_item_is_unassigned (holder))
        {
          g_assert_cmpstr (label, ==, "In no person");
          continue;
        }
      g_assert_cmpstr (label, ==, lk_person_item_get_name (holder));
      g_assert_false (g_hash_table_contains (seen, label));
      g_hash_table_add (seen, (gpointer) label);
      named_boxes++;
    }
  g_assert_cmpuint (named_boxes, ==, named + 1);

  const char *shot = g_getenv ("LK_VIEWER_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_wait_at_rest (GTK_WIDGET (viewer), "the viewer at rest");
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

  /* A missing photo says where it was looked for. The photo is deleted for
   * that, so only from the test's own sample: a library of one's own
   * (LK_VIEWER_LIBRARY) is never touched. */
  if (own_library)
    g_test_message ("LK_VIEWER_LIBRARY: the missing-photo check is skipped (it deletes a photo)");
  else
    {
      guint32 next_face = lk_person_item_get_faces (item)[next];
      const LkPhoto *gone = lk_library_find_photo (library, library->photo[next_face]);
      g_autofree char *gone_path = g_build_filename (library_dir, gone->path, NULL);
      g_assert_cmpint (g_unlink (gone_path), ==, 0);
      lk_face_viewer_set_index (viewer, next);
      lk_test_wait (viewer_settled, viewer);
      g_assert_null (lk_face_viewer_get_texture (viewer));
      g_assert_nonnull (strstr (lk_face_viewer_get_message (viewer), gone->path));
    }

  /* Escape closes. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  g_assert_null (gtk_widget_get_root (GTK_WIDGET (viewer)));
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A face of no person is boxed with "In no person" (the grid's "Unassigned
 * faces" holds it), not left without a word. */
static void
test_unassigned_face_is_labelled (void)
{
  LkWindow *window = lk_window_new (NULL);
  g_autoptr (GFile) file = g_file_new_for_path (library_dir);

  gtk_window_set_default_size (GTK_WINDOW (window), 900, 640);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  GListModel *people = lk_session_get_people (session);
  g_autoptr (LkPersonItem) unassigned = NULL;

  for (guint k = 0; k < g_list_model_get_n_items (people) && unassigned == NULL; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      if (lk_person_item_is_unassigned (item))
        unassigned = g_steal_pointer (&item);
    }
  g_assert_nonnull (unassigned);
  g_assert_cmpuint (lk_person_item_get_n_faces (unassigned), >, 0);

  LkFaceViewer *viewer
      = lk_face_viewer_present (GTK_WINDOW (window), session, lk_person_item_get_faces (unassigned),
                                lk_person_item_get_n_faces (unassigned), 0);
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  g_assert_nonnull (lk_face_viewer_get_texture (viewer));
  g_assert_cmpuint (lk_face_viewer_get_n_boxes (viewer), >=, 1);
  g_assert_cmpstr (lk_face_viewer_get_box_label (viewer, 0), ==, "In no person");

  const char *shot = g_getenv ("LK_VIEWER_UNASSIGNED_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_wait_at_rest (GTK_WIDGET (viewer), "the viewer at rest");
      lk_test_save_screenshot (gtk_widget_get_parent (GTK_WIDGET (viewer)), shot);
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The sample rewritten as `likeness-cli import photos` writes a library:
 * the photos moved out of the library into a folder of their own, named
 * absolutely by photo_folders, each photo by photos[].original inside it
 * and no photos[].path. Returns the photo folder. */
static char *
make_photo_folder_library (const char *tmp, char **library_out)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  char *library = g_build_filename (tmp, "pf-library", NULL);
  char *pictures = g_build_filename (tmp, "Pictures", NULL);
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "make-sample", library, "--faces", "120", "--seed", "5", NULL),
      ==, 0);
  g_autofree char *manifest = g_build_filename (library, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *photos = json_object_get_array_member (root, "photos");
  guint moved = 0;
  for (guint k = 0; k < json_array_get_length (photos); k++)
    {
      JsonObject *photo = json_array_get_object_element (photos, k);
      if (!json_object_has_member (photo, "path"))
        continue;
      g_autofree char *path = g_strdup (json_object_get_string_member (photo, "path"));
      g_autofree char *from = g_build_filename (library, path, NULL);
      g_autofree char *to = g_build_filename (pictures, path, NULL);
      g_autofree char *dir = g_path_get_dirname (to);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_cmpint (g_rename (from, to), ==, 0);
      json_object_remove_member (photo, "path");
      json_object_set_string_member (photo, "original", path);
      moved++;
    }
  g_assert_cmpuint (moved, >, 0);
  JsonArray *folders = json_array_new ();
  json_array_add_string_element (folders, pictures);
  json_object_set_array_member (root, "photo_folders", folders);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_assert_no_error (error);
  *library_out = library;
  return pictures;
}

/* The viewer opens the original in the photo folder; with the folder gone
 * (moved, renamed, another computer), it names the folder, says it is not
 * there, and the path it looked for. */
static void
test_viewer_finds_photo_in_photo_folder (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-viewer-pf-XXXXXX", NULL);
  g_autofree char *library_path = NULL;
  g_autofree char *pictures = make_photo_folder_library (tmp, &library_path);
  LkWindow *window = lk_window_new (NULL);
  g_autoptr (GFile) file = g_file_new_for_path (library_path);

  gtk_window_set_default_size (GTK_WINDOW (window), 900, 640);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  g_assert_cmpuint (library->n_photo_folders, ==, 1);
  g_assert_cmpstr (library->photo_folders[0], ==, pictures);

  /* Two faces of two photos: the second is looked for after the move. */
  guint32 faces[2] = { 0, 0 };
  for (gsize f = 1; f < library->count; f++)
    if (library->photo[f] != library->photo[0])
      {
        faces[1] = (guint32) f;
        break;
      }
  g_assert_cmpuint (faces[1], >, 0);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[faces[1]]);
  g_assert_nonnull (photo);
  g_assert_null (photo->path);
  g_assert_nonnull (photo->original);

  LkFaceViewer *viewer = lk_face_viewer_present (GTK_WINDOW (window), session, faces, 2, 0);
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  g_assert_cmpstr (lk_face_viewer_get_message (viewer), ==, "");
  g_assert_nonnull (lk_face_viewer_get_texture (viewer));
  g_assert_cmpuint (lk_face_viewer_get_n_boxes (viewer), >=, 1);

  g_autofree char *moved = g_strconcat (pictures, "-moved", NULL);
  g_assert_cmpint (g_rename (pictures, moved), ==, 0);
  lk_face_viewer_set_index (viewer, 1);
  lk_test_wait (viewer_settled, viewer);
  g_assert_null (lk_face_viewer_get_texture (viewer));
  const char *message = lk_face_viewer_get_message (viewer);
  g_test_message ("%s", message);
  g_autofree char *looked = g_build_filename (pictures, photo->original, NULL);
  g_assert_nonnull (strstr (message, looked));
  g_assert_nonnull (strstr (message, "photo folder"));
  g_assert_nonnull (strstr (message, "not there on this computer"));

  /* Back where it was, the photo shows again. */
  g_assert_cmpint (g_rename (moved, pictures), ==, 0);
  lk_face_viewer_set_index (viewer, 1);
  /* The decode runs in a thread: the viewer says it is loading until it lands. */
  g_assert_true (lk_face_viewer_is_loading (viewer));
  lk_test_wait (viewer_settled, viewer);
  g_assert_false (lk_face_viewer_is_loading (viewer));
  g_assert_nonnull (lk_face_viewer_get_texture (viewer));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_wait_idle ("the window gone");
  lk_test_remove_tree (tmp);
}

/* A library as `import immich` writes it: each photo named only by
 * photos[].source_path, the server's absolute path, with no photo_folders.
 * Returns the library's folder. */
static char *
make_server_library (const char *tmp, const char *server_folder)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  char *library = g_build_filename (tmp, "server-library", NULL);
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "make-sample", library, "--faces", "60", "--seed", "7", NULL),
      ==, 0);
  g_autofree char *manifest = g_build_filename (library, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *photos = json_object_get_array_member (root, "photos");
  for (guint k = 0; k < json_array_get_length (photos); k++)
    {
      JsonObject *photo = json_array_get_object_element (photos, k);
      if (!json_object_has_member (photo, "path"))
        continue;
      g_autofree char *source
          = g_build_filename (server_folder, json_object_get_string_member (photo, "path"), NULL);
      json_object_remove_member (photo, "path");
      json_object_set_string_member (photo, "source_path", source);
    }
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_assert_no_error (error);
  return library;
}

/* A library of a server's photos (source_path only, no photo_folders) with
 * a folder mapping that points where the photos are not: the viewer says
 * where it looked and which server path that was mapped from. It read
 * photo_folders[folder] for any photo without photos[].path, a NULL
 * dereference here. */
static void
test_viewer_missing_mapped_server_photo (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-viewer-server-XXXXXX", NULL);
  g_autofree char *library_path = make_server_library (tmp, "/srv/immich/upload");
  g_autofree char *elsewhere = g_build_filename (tmp, "not-the-photos", NULL);
  LkWindow *window = lk_window_new (NULL);
  g_autoptr (GFile) file = g_file_new_for_path (library_path);

  gtk_window_set_default_size (GTK_WINDOW (window), 900, 640);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  g_assert_cmpuint (library->n_photo_folders, ==, 0);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[0]);
  g_assert_nonnull (photo);
  g_assert_null (photo->path);
  g_assert_null (photo->original);
  g_assert_nonnull (photo->source_path);

  LkPathMap map = { .from = (char *) "/srv/immich/upload", .to = elsewhere };
  lk_session_set_photo_map (session, &map);
  guint32 faces[1] = { 0 };
  LkFaceViewer *viewer = lk_face_viewer_present (GTK_WINDOW (window), session, faces, 1, 0);
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  g_assert_null (lk_face_viewer_get_texture (viewer));
  const char *message = lk_face_viewer_get_message (viewer);
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "not there"));
  g_assert_nonnull (strstr (message, elsewhere));
  g_assert_nonnull (strstr (message, photo->source_path));
  g_assert_nonnull (strstr (message, "mapped from"));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_wait_idle ("the window gone");
  lk_test_remove_tree (tmp);
}

/* The window holding `viewer`, opened on the person with company's faces. */
static LkFaceViewer *
open_viewer (LkWindow *window, int width, int height, guint *position_out, LkPersonItem **item_out)
{
  g_autoptr (GFile) file = g_file_new_for_path (library_dir);

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, file);
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  guint position;
  LkPersonItem *item = person_with_company (session, &position);
  LkFaceViewer *viewer
      = lk_face_viewer_present (GTK_WINDOW (window), session, lk_person_item_get_faces (item),
                                lk_person_item_get_n_faces (item), position);
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  lk_test_wait_laid_out (GTK_WIDGET (viewer), "the photo laid out in the viewer");
  if (position_out != NULL)
    *position_out = position;
  if (item_out != NULL)
    *item_out = item;
  else
    g_object_unref (item);
  return viewer;
}

static void
close_viewer (LkFaceViewer *viewer, LkWindow *window)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.close", NULL));
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed");
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The first descendant of `widget` (itself included) that is a GtkButton
 * whose action is `action` or whose tooltip contains `tooltip`. */
static GtkWidget *
find_button (GtkWidget *widget, const char *action, const char *tooltip)
{
  if (GTK_IS_BUTTON (widget))
    {
      const char *name = gtk_actionable_get_action_name (GTK_ACTIONABLE (widget));
      const char *text = gtk_widget_get_tooltip_text (widget);
      if ((action != NULL && g_strcmp0 (name, action) == 0)
          || (tooltip != NULL && text != NULL && strstr (text, tooltip) != NULL))
        return widget;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, action, tooltip);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Issue 30: the viewer was an undecorated window, with no close button, no
 * zoom controls and no key hints. Its header bar has all three, and the
 * buttons work. */
static void
test_window_has_close_and_zoom_buttons (void)
{
  LkWindow *window = lk_window_new (NULL);
  LkFaceViewer *viewer = open_viewer (window, 1100, 760, NULL, NULL);
  GtkWindow *viewer_window = GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer)));
  GtkWidget *titlebar = gtk_window_get_titlebar (viewer_window);

  g_assert_nonnull (titlebar);
  GtkWidget *close = find_button (titlebar, "window.close", NULL);
  g_assert_nonnull (close);
  g_assert_true (gtk_widget_get_mapped (close));
  /* Each zoom button's tooltip names its key. */
  GtkWidget *zoom_in = find_button (titlebar, NULL, "(+)");
  GtkWidget *zoom_out = find_button (titlebar, NULL, "(−)");
  GtkWidget *fit = find_button (titlebar, NULL, "(0)");
  g_assert_nonnull (zoom_in);
  g_assert_nonnull (zoom_out);
  g_assert_nonnull (fit);
  g_assert_true (gtk_widget_get_mapped (zoom_in) && gtk_widget_get_mapped (zoom_out)
                 && gtk_widget_get_mapped (fit));
  g_assert_nonnull (find_button (titlebar, NULL, "(←)"));
  g_assert_nonnull (find_button (titlebar, NULL, "(→)"));

  g_signal_emit_by_name (zoom_in, "clicked");
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), >, 1.2);
  double zoomed = lk_face_viewer_get_zoom (viewer);
  g_signal_emit_by_name (zoom_out, "clicked");
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), <, zoomed);
  g_signal_emit_by_name (zoom_in, "clicked");
  g_signal_emit_by_name (fit, "clicked");
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), ==, 1.0);
  /* The viewer keeps the keys after a click. */
  g_assert_true (gtk_root_get_focus (GTK_ROOT (viewer_window)) == GTK_WIDGET (viewer));

  /* The close button closes the viewer, not the library's window. */
  g_signal_emit_by_name (close, "clicked");
  lk_test_wait_for (viewer_closed, viewer, "the viewer closed by its close button");
  g_assert_null (gtk_widget_get_root (GTK_WIDGET (viewer)));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));
  g_object_unref (viewer);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
box_centre_offset (LkFaceViewer *viewer, double *dx, double *dy)
{
  graphene_rect_t box;

  g_assert_true (lk_face_viewer_get_box_rect (viewer, 0, &box));
  *dx = box.origin.x + box.size.width / 2 - gtk_widget_get_width (GTK_WIDGET (viewer)) / 2.0;
  *dy = box.origin.y + box.size.height / 2 - gtk_widget_get_height (GTK_WIDGET (viewer)) / 2.0;
}

/* + zooms on the face, which it brings to the middle and keeps there: it
 * zoomed on the photo's centre, and a face off-centre drifted to the edge
 * and out (issue 30). */
static void
test_zoom_keeps_face_centred (void)
{
  LkWindow *window = lk_window_new (NULL);
  guint position;
  g_autoptr (LkPersonItem) item = NULL;
  LkFaceViewer *viewer = open_viewer (window, 1100, 760, &position, &item);
  double dx, dy;
  guint n = lk_person_item_get_n_faces (item);

  /* A face well away from the middle when fitted, so the test can fail. */
  box_centre_offset (viewer, &dx, &dy);
  for (guint k = 0; k < n && hypot (dx, dy) < 40.0; k++)
    {
      lk_face_viewer_set_index (viewer, k);
      lk_test_wait (viewer_settled, viewer);
      /* A photo the first test deleted shows no box. */
      dx = dy = 0.0;
      if (lk_face_viewer_get_texture (viewer) != NULL)
        box_centre_offset (viewer, &dx, &dy);
    }
  g_assert_cmpfloat (hypot (dx, dy), >=, 40.0);

  for (int step = 0; step < 3; step++)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", 1));
      box_centre_offset (viewer, &dx, &dy);
      g_assert_cmpfloat (fabs (dx), <, 1.0);
      g_assert_cmpfloat (fabs (dy), <, 1.0);
    }
  const char *shot = g_getenv ("LK_VIEWER_ZOOM_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_wait_at_rest (GTK_WIDGET (viewer), "the zoomed viewer at rest");
      lk_test_save_screenshot (GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer))), shot);
    }
  /* − keeps it there too, and 0 fits the whole photo again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", -1));
  box_centre_offset (viewer, &dx, &dy);
  g_assert_cmpfloat (fabs (dx), <, 1.0);
  g_assert_cmpfloat (fabs (dy), <, 1.0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", 0));
  g_assert_cmpfloat (lk_face_viewer_get_zoom (viewer), ==, 1.0);
  close_viewer (viewer, window);
}

/* A 150-pixel photo is shown at 1:1, not stretched to the window until it is
 * a blur (issue 30); + still enlarges it when asked. */
static void
test_small_photo_not_enlarged (void)
{
  if (own_library)
    {
      g_test_skip ("LK_VIEWER_LIBRARY: the photo is made small by writing over it");
      return;
    }
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
  guint32 face = lk_person_item_get_faces (item)[position];
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
  g_autofree char *path = g_build_filename (library_dir, photo->path, NULL);
  g_autoptr (GError) error = NULL;

  /* The photo written over at 150 pixels on its long side. */
  g_autoptr (GdkPixbuf) big = gdk_pixbuf_new_from_file (path, &error);
  g_assert_no_error (error);
  int w = gdk_pixbuf_get_width (big), h = gdk_pixbuf_get_height (big);
  int sw = w >= h ? 150 : MAX (1, w * 150 / h), sh = h >= w ? 150 : MAX (1, h * 150 / w);
  g_autoptr (GdkPixbuf) small = gdk_pixbuf_scale_simple (big, sw, sh, GDK_INTERP_BILINEAR);
  g_assert_true (gdk_pixbuf_save (small, path, "png", &error, NULL));
  g_assert_no_error (error);

  LkFaceViewer *viewer
      = lk_face_viewer_present (GTK_WINDOW (window), session, lk_person_item_get_faces (item),
                                lk_person_item_get_n_faces (item), position);
  g_object_ref (viewer);
  lk_test_wait (viewer_settled, viewer);
  lk_test_wait_laid_out (GTK_WIDGET (viewer), "the photo laid out in the viewer");
  GdkTexture *texture = lk_face_viewer_get_texture (viewer);
  g_assert_nonnull (texture);
  g_assert_cmpint (MAX (gdk_texture_get_width (texture), gdk_texture_get_height (texture)), ==,
                   150);
  /* The window is far larger than the photo: fitting would have enlarged it. */
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (viewer)), >, 300);
  g_assert_cmpfloat (lk_face_viewer_get_scale (viewer), <=, 1.0);
  g_assert_cmpfloat (lk_face_viewer_get_scale (viewer), >, 0.99);
  /* The boxes still sit on the faces of the smaller photo. */
  graphene_rect_t box;
  g_assert_true (lk_face_viewer_get_box_rect (viewer, 0, &box));
  g_assert_cmpfloat (box.size.width, <, 150.0);

  const char *shot = g_getenv ("LK_VIEWER_SMALL_SCREENSHOT");
  if (shot != NULL)
    lk_test_save_screenshot (GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer))), shot);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.zoom", "i", 1));
  g_assert_cmpfloat (lk_face_viewer_get_scale (viewer), >, 1.2);
  close_viewer (viewer, window);
}

int
main (int argc, char **argv)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-viewer-XXXXXX", NULL);
  /* LK_VIEWER_LIBRARY: a library of one's own for the screenshots. Nothing
   * of it is changed: the names the test gives go to a review.json of the
   * test's own, where the library's remembered review location (a
   * configuration folder of the test's own, set before GLib reads it) says
   * its decisions are, and the missing-photo check, which deletes a photo,
   * is skipped. */
  own_library = g_getenv ("LK_VIEWER_LIBRARY") != NULL;
  g_autofree char *config = g_build_filename (tmp, "config", NULL);
  if (own_library)
    g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  lk_test_display_init (&argc, &argv);

  g_autofree char *out = NULL, *err = NULL;
  if (own_library)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *review = g_build_filename (tmp, "review.json", NULL);
      library_dir = g_canonicalize_filename (g_getenv ("LK_VIEWER_LIBRARY"), NULL);
      g_assert_true (g_str_has_prefix (g_get_user_config_dir (), tmp));
      g_assert_true (lk_review_location_remember (library_dir, review, &error));
      g_assert_no_error (error);
    }
  else
    {
      library_dir = g_build_filename (tmp, "library", NULL);
      g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                        G_STRINGIFY (FACES), "--seed", "13", NULL),
                       ==, 0);
    }

  g_test_add_func ("/ui-viewer/shows-photo-boxes-and-steps",
                   test_viewer_shows_photo_boxes_and_steps);
  g_test_add_func ("/ui-viewer/unassigned-face-is-labelled", test_unassigned_face_is_labelled);
  g_test_add_func ("/ui-viewer/finds-photo-in-photo-folder",
                   test_viewer_finds_photo_in_photo_folder);
  g_test_add_func ("/ui-viewer/missing-mapped-server-photo",
                   test_viewer_missing_mapped_server_photo);
  g_test_add_func ("/ui-viewer/window-has-close-and-zoom-buttons",
                   test_window_has_close_and_zoom_buttons);
  g_test_add_func ("/ui-viewer/zoom-keeps-face-centred", test_zoom_keeps_face_centred);
  /* Last: it writes over a photo of the sample. */
  g_test_add_func ("/ui-viewer/small-photo-not-enlarged", test_small_photo_not_enlarged);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
