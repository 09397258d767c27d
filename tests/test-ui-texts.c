/* test-ui-texts — what the window says, and where, under Xvfb
 *
 * The notification of a decision: one line for a short message, clear of the
 * person page's action bar, and on screen long enough to reach its Undo. The
 * header bar over the error page of another folder. Counts in the right
 * plural ("1 of 491 faces selected"). A thumbnail folder that cannot be
 * read: the library opens, with placeholders and the one warning.
 */
#include "config.h"

#include <locale.h>
#include <string.h>
#include <unistd.h>

#include "lk-face-viewer.h"
#include "lk-people-filter.h"
#include "scan/lk-scan.h"
#include "people/lk-person-item.h"
#include "lk-person-page.h"
#include "lk-session.h"
#include "lk-suggestions-page.h"
#include "lk-tile.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "lk-window-private.h"

#define FACES 400

static char *library_dir;

static LkWindow *
open_window (const char *folder)
{
  return lk_test_open_window (NULL, folder, 1000, 700);
}

static LkPersonPage *
show_first_person (LkWindow *window)
{
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));

  g_assert_false (lk_person_item_is_unassigned (item));
  lk_window_show_person (window, item);
  lk_test_wait_laid_out (GTK_WIDGET (page), "the person page shown");
  return page;
}

static gboolean
says_cover_changed (gpointer window)
{
  return g_strcmp0 (lk_window_get_toast (window), "Cover changed") == 0;
}

static gboolean
no_toast (gpointer window)
{
  return lk_window_get_toast (window) == NULL;
}

static void
test_toast_one_line_clear_of_bar_and_long_enough (void)
{
  LkWindow *window = open_window (library_dir);
  LkPersonPage *page = show_first_person (window);

  gtk_selection_model_select_item (lk_person_page_get_selection (page), 1, TRUE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "person.set-cover", NULL));
  lk_test_wait_committed (lk_window_get_session (window));
  lk_test_wait_for (says_cover_changed, window, "the notification “Cover changed”");
  gint64 shown = g_get_monotonic_time ();
  lk_test_wait_at_rest (lk_test_toast_widget (window), "the notification's slide over");
  g_assert_cmpstr (lk_window_get_toast (window), ==, "Cover changed");

  /* A two-word message is one line. */
  GtkLabel *label = lk_window_get_toast_label (window);
  g_assert_cmpint (pango_layout_get_line_count (gtk_label_get_layout (label)), ==, 1);

  /* It stays clear of the action bar's buttons. */
  GtkWidget *bar = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "action_bar"));
  graphene_rect_t toast_bounds, bar_bounds;
  g_assert_nonnull (lk_test_toast_widget (window));
  g_assert_true (gtk_widget_compute_bounds (lk_test_toast_widget (window), GTK_WIDGET (window),
                                            &toast_bounds));
  g_assert_true (gtk_widget_compute_bounds (bar, GTK_WIDGET (window), &bar_bounds));
  g_test_message ("toast %g..%g, bar from %g", toast_bounds.origin.y,
                  toast_bounds.origin.y + toast_bounds.size.height, bar_bounds.origin.y);
  g_assert_cmpfloat (bar_bounds.size.height, >, 0);
  g_assert_cmpfloat (toast_bounds.origin.y + toast_bounds.size.height, <=, bar_bounds.origin.y);

  /* With Undo, it stays at least 8 s (its timer cannot end early, so
   * measured from when it was first seen this cannot fail by load), then
   * goes by itself (10 s: when exactly depends on the machine's load). */
  lk_test_wait_for (no_toast, window, "the notification gone by itself");
  g_test_message ("the notification stayed %.1f s",
                  (g_get_monotonic_time () - shown) / (double) G_USEC_PER_SEC);
  g_assert_cmpint (g_get_monotonic_time () - shown, >=, 8 * G_USEC_PER_SEC);
  g_assert_null (lk_window_get_toast (window));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_selection_count_plural (void)
{
  LkWindow *window = open_window (library_dir);
  LkPersonPage *page = show_first_person (window);
  LkPersonItem *item = lk_person_page_get_person (page);
  GtkLabel *label = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "selection_label"));
  guint n = lk_person_item_get_n_faces (item);

  g_assert_cmpuint (n, >, 1);
  gtk_selection_model_select_item (lk_person_page_get_selection (page), 0, TRUE);
  g_autofree char *one = g_strdup_printf ("1 of %u faces selected", n);
  g_assert_cmpstr (gtk_label_get_label (label), ==, one);
  gtk_selection_model_select_item (lk_person_page_get_selection (page), 1, FALSE);
  g_autofree char *two = g_strdup_printf ("2 of %u faces selected", n);
  g_assert_cmpstr (gtk_label_get_label (label), ==, two);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A library is open, another folder fails: the header no longer names the
 * open library over the error page, and does again back on its people. */
static void
test_error_page_header (void)
{
  LkWindow *window = open_window (library_dir);
  g_autofree char *dir = g_dir_make_tmp ("lk-broken-XXXXXX", NULL);
  g_autofree char *manifest = g_build_filename (dir, "library.json", NULL);
  g_autoptr (GFile) broken = g_file_new_for_path (dir);

  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "library");
  g_assert_true (g_file_set_contents (manifest, "{", -1, NULL));
  lk_window_open (window, broken);
  lk_test_wait (lk_test_window_idle, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Likeness");
  g_assert_null (lk_window_get_subtitle (window));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "library");
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (dir);
}

static guint
count_visible (LkWindow *window, gboolean (*check) (LkPersonItem *item))
{
  GListModel *people = lk_window_get_visible_people (window);
  guint n = g_list_model_get_n_items (people);

  for (guint k = 0; k < n; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      g_assert_true (check (item));
    }
  return n;
}

static gboolean
is_named (LkPersonItem *item)
{
  return lk_person_item_get_name (item) != NULL && !lk_person_item_get_hidden (item);
}

static gboolean
is_unnamed (LkPersonItem *item)
{
  return lk_person_item_get_name (item) == NULL && !lk_person_item_is_unassigned (item)
         && !lk_person_item_get_hidden (item);
}

static gboolean
is_hidden (LkPersonItem *item)
{
  return lk_person_item_get_hidden (item);
}

/* Two people named and one hidden: the header counts them, and each filter
 * shows exactly its people; the choice is the saved setting. */
static void
test_people_filter_and_progress (void)
{
  g_autofree char *copy = g_dir_make_tmp ("lk-filter-XXXXXX", NULL);
  g_autofree char *folder = g_build_filename (copy, "library", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", folder, "--faces",
                                    G_STRINGIFY (FACES), "--seed", "11", NULL),
                   ==, 0);
  LkWindow *window = open_window (folder);
  LkSession *session = lk_window_get_session (window);
  LkPeopleFilter *filter = LK_PEOPLE_FILTER (lk_test_window_child (window, "people_filter"));
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_autoptr (GError) error = NULL;
  GListModel *people = lk_session_get_people (session);
  guint total = 0;

  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      total += !lk_person_item_is_unassigned (item) && lk_person_item_get_n_faces (item) > 0;
    }
  g_assert_cmpuint (total, >, 5);
  g_autofree char *none = g_strdup_printf ("%'u of %'u people named", 0, total);
  g_assert_cmpstr (lk_people_filter_get_summary (filter), ==, none);
  g_autofree char *everyone = g_strdup_printf ("%'u people · %'u faces", total, (guint) FACES);
  g_assert_cmpstr (lk_window_get_subtitle (window), ==, everyone);

  g_autoptr (LkPersonItem) first = g_list_model_get_item (people, 0);
  g_autoptr (LkPersonItem) second = g_list_model_get_item (people, 1);
  g_autoptr (LkPersonItem) third = g_list_model_get_item (people, 2);
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (first), "Ada", &error));
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (second), "Grace", &error));
  g_assert_true (lk_session_set_hidden (session, lk_person_item_get_id (third), TRUE, &error));
  g_assert_no_error (error);
  lk_test_wait_committed (session);
  g_autofree char *two = g_strdup_printf ("%'u of %'u people named", 2, total - 1);
  g_assert_cmpstr (lk_people_filter_get_summary (filter), ==, two);
  /* The subtitle counts the same people as the progress line, and says the
   * hidden one apart (it said "total people" above "… of total − 1"). */
  g_autofree char *with_hidden
      = g_strdup_printf ("%'u people · 1 hidden · %'u faces", total - 1, (guint) FACES);
  g_assert_cmpstr (lk_window_get_subtitle (window), ==, with_hidden);

  g_settings_set_string (settings, "people-filter", "named");
  g_assert_cmpstr (lk_people_filter_get_filter (filter), ==, "named");
  g_assert_cmpuint (count_visible (window, is_named), ==, 2);
  g_settings_set_string (settings, "people-filter", "unnamed");
  g_assert_cmpuint (count_visible (window, is_unnamed), ==, total - 3);
  g_settings_set_string (settings, "people-filter", "hidden");
  g_assert_cmpuint (count_visible (window, is_hidden), ==, 1);
  /* A click on All, as a user does, is saved. */
  GtkToggleButton *all = GTK_TOGGLE_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (filter), LK_TYPE_PEOPLE_FILTER, "all_button"));
  gtk_toggle_button_set_active (all, TRUE);
  g_autofree char *saved = g_settings_get_string (settings, "people-filter");
  g_assert_cmpstr (saved, ==, "all");
  g_assert_cmpuint (g_list_model_get_n_items (lk_window_get_visible_people (window)), >=,
                    total - 1);

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (copy);
}

/* Two libraries called "sample" in the recent list: the menu and the empty
 * page tell them apart by the folder they are in. */
static void
test_recent_twins_told_apart (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  const char *recent[] = { "/srv/photos/a_b/sample", "/srv/other/sample", library_dir, NULL };

  g_settings_set_strv (settings, "recent-libraries", recent);
  LkWindow *window = lk_window_new (NULL);
  GMenuModel *section = G_MENU_MODEL (
      gtk_widget_get_template_child (GTK_WIDGET (window), LK_TYPE_WINDOW, "recent_section"));
  g_autofree char *first = NULL, *second = NULL, *third = NULL;

  g_assert_cmpint (g_menu_model_get_n_items (section), ==, 3);
  g_assert_true (g_menu_model_get_item_attribute (section, 0, "label", "s", &first));
  g_assert_true (g_menu_model_get_item_attribute (section, 1, "label", "s", &second));
  g_assert_true (g_menu_model_get_item_attribute (section, 2, "label", "s", &third));
  g_assert_cmpstr (first, ==, "sample — /srv/photos/a__b");
  g_assert_cmpstr (second, ==, "sample — /srv/other");
  g_assert_cmpstr (third, ==, "library");

  GtkListBox *list = GTK_LIST_BOX (gtk_widget_get_template_child (
      lk_test_window_child (window, "empty_page"), LK_TYPE_EMPTY_PAGE, "recent_list"));
  GtkWidget *row_box = gtk_list_box_row_get_child (gtk_list_box_get_row_at_index (list, 1));
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (gtk_widget_get_last_child (row_box))), ==,
                   "/srv/other");
  gtk_window_destroy (GTK_WINDOW (window));
  g_settings_reset (settings, "recent-libraries");
}

/* Review Suggestions shows, beside the face and the cover, the person's faces
 * most like the face: members of the person, most alike first, none left
 * out that is more alike than the last shown, each captioned with the pair
 * model's chance that it and the face are one person (not the cosine, whose
 * meaning depends on the face model). */
static void
test_suggestions_show_similar_faces (void)
{
  LkWindow *window = open_window (library_dir);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  LkSuggestionsPage *page = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
  guint32 face = lk_suggestions_page_get_face (page);
  GArray *similar = lk_suggestions_page_get_similar (page);
  g_assert_cmpuint (face, !=, G_MAXUINT32);
  g_assert_cmpuint (similar->len, >=, 1);
  g_assert_cmpuint (similar->len, <=, 5);

  /* The person the shown faces belong to. */
  LkPersonItem *person = NULL;
  GListModel *people = lk_session_get_people (session);
  for (guint k = 0; k < g_list_model_get_n_items (people) && person == NULL; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      for (guint j = 0; j < lk_person_item_get_n_faces (item); j++)
        if (lk_person_item_get_faces (item)[j] == g_array_index (similar, guint32, 0))
          person = item;
    }
  g_assert_nonnull (person);
  double last = G_MAXDOUBLE;
  GtkWidget *box = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_SUGGESTIONS_PAGE, "similar_box"));
  GtkWidget *tile = gtk_widget_get_first_child (box);
  for (guint k = 0; k < similar->len; k++, tile = gtk_widget_get_next_sibling (tile))
    {
      guint32 f = g_array_index (similar, guint32, k);
      double p = lk_scan_probability (lk_session_get_calibration (session, NULL),
                                      lk_test_cosine (library, face, f),
                                      MIN (library->crop_px[face], library->crop_px[f]));
      g_autofree char *caption = g_strdup_printf ("%.0f %%", 100.0 * p);
      g_assert_nonnull (tile);
      g_assert_cmpstr (lk_tile_get_title (LK_TILE (tile)), ==, caption);
      gboolean member = FALSE;
      for (guint j = 0; j < lk_person_item_get_n_faces (person); j++)
        member |= lk_person_item_get_faces (person)[j] == f;
      g_assert_true (member);
      g_assert_cmpuint (f, !=, face);
      g_assert_cmpfloat (lk_test_cosine (library, face, f), <=, last);
      last = lk_test_cosine (library, face, f);
    }
  /* The line below says which figure is which, on the one scale: the
   * closest face's chance (the first caption) and the average (issue 29). */
  GtkLabel *detail = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_SUGGESTIONS_PAGE, "detail_label"));
  double first = lk_scan_probability (
      lk_session_get_calibration (session, NULL),
      lk_test_cosine (library, face, g_array_index (similar, guint32, 0)),
      MIN (library->crop_px[face], library->crop_px[g_array_index (similar, guint32, 0)]));
  g_autofree char *closest
      = g_strdup_printf ("chance of one person: %.0f %% with the closest face, ", 100.0 * first);
  g_assert_nonnull (strstr (gtk_label_get_label (detail), closest));
  /* The average on the same scale: the mean chance over the person's other
   * faces, not the clustering's linkage (which counts pairs under the bar
   * as 0 and read 11 % beside captions of 95 to 79 %). */
  double sum = 0;
  guint others = 0;
  for (guint j = 0; j < lk_person_item_get_n_faces (person); j++)
    {
      guint32 f = lk_person_item_get_faces (person)[j];
      if (f == face)
        continue;
      sum += lk_scan_probability (lk_session_get_calibration (session, NULL),
                                  lk_test_cosine (library, face, f),
                                  MIN (library->crop_px[face], library->crop_px[f]));
      others++;
    }
  g_autofree char *average
      = g_strdup_printf ("%.0f %% on average over the person's ", 100.0 * sum / MAX (others, 1));
  g_assert_nonnull (strstr (gtk_label_get_label (detail), average));
  for (guint j = 0; j < lk_person_item_get_n_faces (person); j++)
    {
      guint32 f = lk_person_item_get_faces (person)[j];
      gboolean shown = f == face;
      for (guint k = 0; k < similar->len; k++)
        shown |= g_array_index (similar, guint32, k) == f;
      if (!shown)
        g_assert_cmpfloat (lk_test_cosine (library, face, f), <=, last);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Issue 19: a thumbnail folder that cannot be read (here a symbolic link to
 * itself, which refuses root too) opens the library with placeholders and
 * says so once, in the window as `likeness-cli info` does. */
static void
test_unreadable_thumbnail_folder_warns_once (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-thumbs-XXXXXX", NULL);
  g_autofree char *folder = g_build_filename (tmp, "library", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "make-sample", folder, "--faces", "60", "--seed", "5", NULL), ==,
      0);
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  lk_test_remove_tree (thumbs);
  g_assert_cmpint (symlink ("thumbs", thumbs), ==, 0);

  LkWindow *window = open_window (folder);
  g_assert_nonnull (lk_window_get_session (window));
  const char *toast = lk_window_get_toast (window);
  g_assert_nonnull (toast);
  g_assert_nonnull (strstr (toast, "shown without their"));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_wait_idle ("the window gone");
  g_assert_cmpint (unlink (thumbs), ==, 0);
  lk_test_remove_tree (tmp);
}

/* Counts use the locale's thousands separator (issue 30: "1234 faces" where
 * German writes 1.234). The German locale is compiled into the test's own
 * folder with localedef (Debian's `locales` data), as no locale but C may be
 * installed; without it the test skips. */
static void
test_counts_use_the_locale_separators (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-texts-locale-XXXXXX", NULL);
  g_autofree char *german = g_build_filename (tmp, "de_DE.UTF-8", NULL);
  const char *argv[] = { "localedef", "-i", "de_DE", "-f", "UTF-8", german, NULL };
  g_autofree char *saved = g_strdup (setlocale (LC_NUMERIC, NULL));

  g_spawn_sync (NULL, (char **) argv, NULL,
                G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                NULL, NULL, NULL, NULL, NULL);
  g_setenv ("LOCPATH", tmp, TRUE);
  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") == NULL)
    {
      g_unsetenv ("LOCPATH");
      lk_test_remove_tree (tmp);
      g_test_skip ("no German locale: localedef or its data (Debian's locales) is missing");
      return;
    }

  LkWindow *window = open_window (library_dir);
  LkSession *session = lk_window_get_session (window);
  guint n = 1500;
  g_autofree guint32 *faces = g_new (guint32, n);
  for (guint k = 0; k < n; k++)
    faces[k] = k % lk_session_get_library (session)->count;
  LkFaceViewer *viewer = lk_face_viewer_present (GTK_WINDOW (window), session, faces, n, 1233);
  GtkWindow *viewer_window = GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer)));
  g_assert_cmpstr (gtk_window_get_title (viewer_window), ==, "Face 1.234 of 1.500");
  gtk_window_destroy (viewer_window);
  gtk_window_destroy (GTK_WINDOW (window));

  setlocale (LC_NUMERIC, saved);
  g_unsetenv ("LOCPATH");
  lk_test_remove_tree (tmp);
}

/* The lowest row of `widget` as drawn that is not transparent. */
static int
lowest_ink (GtkWidget *widget)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();

  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  g_autoptr (GdkTexture) texture
      = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)), node,
                                     &GRAPHENE_RECT_INIT (0, 0, width, height));
  int w = gdk_texture_get_width (texture), h = gdk_texture_get_height (texture);
  g_autofree guchar *pixels = g_malloc ((gsize) w * h * 4);
  gdk_texture_download (texture, pixels, (gsize) w * 4);
  for (int y = h - 1; y >= 0; y--)
    for (int x = 0; x < w; x++)
      if (pixels[((gsize) y * w + x) * 4 + 3] != 0)
        return y;
  return -1;
}

/* A name of two lines does not push its tile's count below its
 * neighbours': every tile of a row draws "12 faces" on one line. */
static void
test_two_line_names_keep_the_row_aligned (void)
{
  g_autoptr (LkTextureCache) cache = lk_texture_cache_new (0);
  GtkWidget *window = gtk_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *one = lk_tile_new (cache, 128), *two = lk_tile_new (cache, 128);

  gtk_widget_set_valign (one, GTK_ALIGN_START);
  gtk_widget_set_valign (two, GTK_ALIGN_START);
  lk_tile_set_text (LK_TILE (one), "Ada", "12 faces");
  lk_tile_set_text (LK_TILE (two), "Augusta Ada King, Countess of Lovelace", "12 faces");
  gtk_box_append (GTK_BOX (box), one);
  gtk_box_append (GTK_BOX (box), two);
  gtk_window_set_child (GTK_WINDOW (window), box);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (box, "two tiles");
  g_assert_cmpint (gtk_widget_get_height (one), ==, gtk_widget_get_height (two));
  int low_one = lowest_ink (one), low_two = lowest_ink (two);
  g_test_message ("the counts' lowest ink: row %d and row %d", low_one, low_two);
  g_assert_cmpint (low_one, >, 128);
  g_assert_cmpint (low_one, ==, low_two);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Skip is "not now": after only skips, the end of Review Suggestions says
 * how many were skipped and asks them again on request (it said "Nothing
 * Left to Review", with no way back to them). */
static void
test_suggestions_skipped_asked_again (void)
{
  LkWindow *window = open_window (library_dir);
  LkSuggestionsPage *page = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));
  AdwStatusPage *done = ADW_STATUS_PAGE (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_SUGGESTIONS_PAGE, "done_page"));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
  guint n = lk_suggestions_page_get_n_left (page);
  g_assert_cmpuint (n, >, 0);
  guint32 first = lk_suggestions_page_get_face (page);
  for (guint k = 0; k < n; k++)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "suggest.skip", NULL));
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, 0);
  g_assert_cmpstr (adw_status_page_get_title (done), ==, "No More Suggestions");
  g_autofree char *said = g_strdup_printf ("You skipped %u faces", n);
  g_test_message ("%s", adw_status_page_get_description (done));
  if (n > 1)
    g_assert_true (g_str_has_prefix (adw_status_page_get_description (done), said));
  GtkWidget *again = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_SUGGESTIONS_PAGE, "again_button"));
  g_assert_true (gtk_widget_get_visible (again));
  g_signal_emit_by_name (again, "clicked");
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, n);
  g_assert_cmpuint (lk_suggestions_page_get_face (page), ==, first);

  /* Skipped once more, they are offered once more. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "suggest.skip", NULL));
  for (guint k = 1; k < n; k++)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "suggest.skip", NULL));
  g_signal_emit_by_name (again, "clicked");
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, n);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A library whose every face is alone shows one tile, "Unassigned faces":
 * the grid says why, with the help's page on calibration; a library with
 * people does not. */
static void
test_every_face_alone_says_why (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-texts-alone-XXXXXX", NULL);
  g_autofree char *strangers = g_build_filename (tmp, "strangers", NULL);
  g_autofree char *people = g_build_filename (tmp, "people", NULL);
  lk_test_write_strangers (strangers, 12, 64, 0);
  lk_test_write_people (people, 3, 4, 2, 64);

  LkWindow *window = open_window (strangers);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  GListModel *visible = lk_window_get_visible_people (window);
  g_assert_cmpuint (g_list_model_get_n_items (visible), ==, 1);
  g_autoptr (LkPersonItem) only = g_list_model_get_item (visible, 0);
  g_assert_true (lk_person_item_is_unassigned (only));
  const char *text = lk_window_get_alone_text (window);
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_true (g_str_has_prefix (text, "Every face is on its own under Unassigned faces: each "
                                         "looks like no other closely enough"));
  GtkLabel *label = GTK_LABEL (lk_test_window_child (window, "alone_label"));
  g_assert_nonnull (strstr (gtk_label_get_label (label), "<a href=\"calibration\">"));
  gtk_window_destroy (GTK_WINDOW (window));

  window = open_window (people);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_null (lk_window_get_alone_text (window));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-texts-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                    G_STRINGIFY (FACES), "--seed", "11", NULL),
                   ==, 0);

  g_test_add_func ("/ui-texts/toast-one-line-clear-of-bar-and-long-enough",
                   test_toast_one_line_clear_of_bar_and_long_enough);
  g_test_add_func ("/ui-texts/selection-count-plural", test_selection_count_plural);
  g_test_add_func ("/ui-texts/error-page-header", test_error_page_header);
  g_test_add_func ("/ui-texts/people-filter-and-progress", test_people_filter_and_progress);
  g_test_add_func ("/ui-texts/recent-twins-told-apart", test_recent_twins_told_apart);
  g_test_add_func ("/ui-texts/suggestions-show-similar-faces", test_suggestions_show_similar_faces);
  g_test_add_func ("/ui-texts/unreadable-thumbnail-folder-warns-once",
                   test_unreadable_thumbnail_folder_warns_once);
  g_test_add_func ("/ui-texts/every-face-alone-says-why", test_every_face_alone_says_why);
  g_test_add_func ("/ui-texts/two-line-names-keep-the-row-aligned",
                   test_two_line_names_keep_the_row_aligned);
  g_test_add_func ("/ui-texts/suggestions-skipped-asked-again",
                   test_suggestions_skipped_asked_again);
  g_test_add_func ("/ui-texts/counts-use-the-locale-separators",
                   test_counts_use_the_locale_separators);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
