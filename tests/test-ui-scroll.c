/* test-ui-scroll — the scroll probe through the people grid and a person page, under Xvfb
 *
 * A generated library of a few thousand faces (`likeness-cli make-sample
 * --no-thumbnails`, then one flat-coloured PNG per face written here, which
 * is much faster than drawing faces) is opened in the window, and
 * lk_scroll_probe_run() scrolls each grid from top to bottom a page per
 * frame, judging every tile on screen in every frame. Once the library is on
 * screen, some thumbnails are deleted and some overwritten with garbage, so
 * the placeholders of missing and broken thumbnails are on the way.
 *
 * What is asserted is structural, never a time: the probe reached the
 * bottom; most items of the grid (every one on a normal run) were on screen
 * in some frame, and nothing else was; every tile on screen showed its own thumbnail
 * or a placeholder that matches the texture cache, never another face's
 * thumbnail (tiles are recycled hundreds of times on the way down) nor a
 * placeholder for a thumbnail the cache already has; and at the bottom
 * every tile ends with its thumbnail or the placeholder of a missing one.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "people/lk-person-item.h"
#include "lk-person-page.h"
#include "lk-scroll-probe.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "library/lk-thumbnail.h"
#include "lk-window-private.h"

/* A few thousand faces: more people (672) than the ~384 tiles GtkGridView
 * keeps bound in the people grid, and more unassigned faces (680) than the
 * ~528 of a person page, so both grids recycle tiles on the way down. */
#define FACES          7000
#define THUMBNAIL_SIDE 96
/* Long enough for a screenful of thumbnails on a loaded machine. */
#define SETTLE_MS      30000

static char *library_dir;

/* One flat colour per face, from its index: every thumbnail differs. */
static void
write_thumbnail (const char *path, guint face)
{
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_new (THUMBNAIL_SIDE, THUMBNAIL_SIDE);
  g_autoptr (GError) error = NULL;

  for (gsize k = 0; k < thumbnail->stride * THUMBNAIL_SIDE; k += 4)
    {
      thumbnail->pixels[k] = face & 0xff;
      thumbnail->pixels[k + 1] = (face >> 8) & 0xff;
      thumbnail->pixels[k + 2] = 128;
      thumbnail->pixels[k + 3] = 255;
    }
  g_autoptr (GBytes) png = lk_thumbnail_encode (thumbnail, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents_full (path, g_bytes_get_data (png, NULL),
                                           (gssize) g_bytes_get_size (png),
                                           G_FILE_SET_CONTENTS_NONE, 0644, &error));
  g_assert_no_error (error);
}

/* Gives every face of the library a thumbnail: thumbs/NNNNNN.png. */
static void
add_thumbnails (const char *folder)
{
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (thumbs, 0755), ==, 0);

  JsonArray *faces = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "faces");
  g_assert_cmpuint (json_array_get_length (faces), ==, FACES);
  for (guint k = 0; k < FACES; k++)
    {
      g_autofree char *relative = g_strdup_printf ("thumbs/%06u.png", k);
      g_autofree char *path = g_build_filename (folder, relative, NULL);

      json_object_set_string_member (json_array_get_object_element (faces, k), "thumbnail",
                                     relative);
      write_thumbnail (path, k);
    }

  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_assert_no_error (error);
}

/* Every `stride`-th face from the second loses its thumbnail, alternately
 * deleted and overwritten with bytes that are no PNG. */
static void
spoil_thumbnails (LkSession *session, const guint32 *faces, guint n, guint stride)
{
  for (guint k = 1, i = 0; k < n; k += stride, i++)
    {
      g_autofree char *path = lk_session_thumbnail_path (session, faces[k]);
      g_autoptr (GError) error = NULL;

      if (i % 2 == 0)
        g_assert_cmpint (g_unlink (path), ==, 0);
      else
        {
          g_assert_true (g_file_set_contents (path, "not a PNG", -1, &error));
          g_assert_no_error (error);
        }
    }
}

static LkWindow *
open_library (void)
{
  LkWindow *window = lk_test_open_window (NULL, library_dir, 1024, 768);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  return window;
}

static LkScrollProbeResult
scroll_to_bottom (GtkWidget *scrolled)
{
  LkScrollProbeResult result = lk_test_scroll_probe (scrolled, SETTLE_MS);
  g_autofree char *line = lk_scroll_probe_describe (&result);

  g_test_message ("%s", line);
  return result;
}

/* What every scroll must show, whatever the grid. */
static void
assert_every_tile_right (const LkScrollProbeResult *r, guint expected_faces)
{
  g_assert_true (r->reached_end);
  /* More than one screenful: the tiles were recycled on the way. */
  g_assert_cmpuint (r->frames, >, 3);
  g_assert_cmpuint (r->seen, >, 0);
  g_assert_cmpuint (r->stale, ==, 0);
  g_assert_cmpuint (r->out_of_date, ==, 0);
  g_assert_cmpuint (r->unbound, ==, 0);
  g_assert_cmpuint (r->thumbnails + r->loading + r->no_thumbnail, ==, r->seen);
  /* The items were on screen, a page per frame. Every one of them, on a
   * normal run; but the view can move by more than the page the probe asked
   * for (GtkGridView places rows it has not measured by an estimate and
   * re-anchors), and on a loaded machine it did: 414 of 673 seen at load
   * average 12, 309 of 673 in 11 frames at ~25 (the page-per-frame walk
   * needs ~19). How far the view jumps is GTK's and the load's; what the
   * probe must show is that each frame brought items of its own (a tile
   * showing a stale face repeats one) and none that is not an item: at
   * least half the tiles seen were different faces, and never more faces
   * than the items. */
  g_assert_cmpuint (r->distinct_faces, <=, expected_faces);
  g_assert_cmpuint (r->distinct_faces, >=, MIN (expected_faces, r->seen) / 2);

  g_assert_true (r->settled);
  g_assert_cmpuint (r->final_tiles, >, 0);
  g_assert_cmpuint (r->final_thumbnails + r->final_placeholders, ==, r->final_tiles);
}

static void
test_people_grid (void)
{
  /* A first window finds the covers; every third is spoiled before a second
   * window (with a cache of its own) opens the library. */
  LkWindow *window = open_library ();
  GListModel *people = lk_window_get_visible_people (window);
  guint n = g_list_model_get_n_items (people);
  guint covers = 0;
  g_autoptr (GArray) cover_faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint k = 0; k < n; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      gint64 cover = lk_person_item_get_cover (item);

      if (cover >= 0)
        {
          guint32 face = (guint32) cover;
          g_array_append_val (cover_faces, face);
          covers++;
        }
    }
  g_assert_cmpuint (covers, >, 400);
  spoil_thumbnails (lk_window_get_session (window), (const guint32 *) cover_faces->data,
                    cover_faces->len, 3);
  gtk_window_destroy (GTK_WINDOW (window));

  window = open_library ();
  g_assert_cmpuint (g_list_model_get_n_items (lk_window_get_visible_people (window)), ==, n);

  GtkWidget *grid = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, "people_grid"));
  LkScrollProbeResult r
      = scroll_to_bottom (gtk_widget_get_ancestor (grid, GTK_TYPE_SCROLLED_WINDOW));

  g_assert_cmpuint (r.items, ==, n);
  assert_every_tile_right (&r, covers);
  g_assert_cmpuint (r.final_placeholders, >, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The person page with the most faces here: the unassigned ones. */
static void
test_person_page (void)
{
  LkWindow *window = open_library ();
  LkSession *session = lk_window_get_session (window);
  GListModel *people = lk_window_get_visible_people (window);
  g_autoptr (LkPersonItem) unassigned
      = g_list_model_get_item (people, g_list_model_get_n_items (people) - 1);
  guint n = lk_person_item_get_n_faces (unassigned);

  g_assert_true (lk_person_item_is_unassigned (unassigned));
  g_assert_cmpuint (n, >, 600);
  spoil_thumbnails (session, lk_person_item_get_faces (unassigned), n, 10);

  lk_window_show_person (window, unassigned);
  GtkWidget *page = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, "person_page"));
  LkScrollProbeResult r = scroll_to_bottom (
      GTK_WIDGET (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "scrolled")));

  g_assert_cmpuint (r.items, ==, n);
  assert_every_tile_right (&r, n);
  g_assert_cmpuint (r.final_placeholders, >, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-scroll-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *faces = g_strdup_printf ("%d", FACES);
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces", faces,
                                    "--seed", "5", "--no-thumbnails", NULL),
                   ==, 0);
  add_thumbnails (library_dir);

  g_test_add_func ("/ui-scroll/people-grid-top-to-bottom", test_people_grid);
  g_test_add_func ("/ui-scroll/unassigned-faces-top-to-bottom", test_person_page);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
