/* test-ui-pages — the window's pages as widgets of their own, under Xvfb
 *
 * The empty page shows the model of recent libraries it is given (rows made
 * by gtk_list_box_bind_model, one LkRecentRow per folder) and activates
 * win.open-recent with a row's folder; the window feeds it the
 * recent-libraries setting. The loading page shows the progress it is told;
 * the error page advises by the kind of error. The window's drop target,
 * declared in its template, opens a dropped library.json's folder.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lk-empty-page.h"
#include "lk-error-page.h"
#include "lk-import-dialog.h"
#include "library/lk-library.h"
#include "lk-loading-page.h"
#include "lk-recent-row.h"
#include "people/lk-review.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"

static char *library_dir;

static GtkWidget *
page_child (GtkWidget *page, GType type, const char *name)
{
  GtkWidget *child = GTK_WIDGET (gtk_widget_get_template_child (page, type, name));

  g_assert_nonnull (child);
  return child;
}

static gboolean
mapped (gpointer widget)
{
  return gtk_widget_get_mapped (widget);
}

static gboolean
loaded (gpointer data)
{
  return !lk_window_is_busy (data) && lk_window_get_session (data) != NULL;
}

/* The folders of the list's rows, in order, joined by "|". */
static char *
row_folders (GtkListBox *list)
{
  g_autoptr (GString) text = g_string_new (NULL);
  GtkListBoxRow *row;

  for (int k = 0; (row = gtk_list_box_get_row_at_index (list, k)) != NULL; k++)
    {
      g_assert_true (LK_IS_RECENT_ROW (row));
      g_string_append_printf (text, "%s%s", k > 0 ? "|" : "",
                              lk_recent_row_get_folder (LK_RECENT_ROW (row)));
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
test_empty_page_rows_follow_the_model (void)
{
  GtkWidget *window = gtk_window_new ();
  LkEmptyPage *page = g_object_new (LK_TYPE_EMPTY_PAGE, NULL);
  const char *folders[] = { "/srv/photos/family", "/srv/other/sample", NULL };
  g_autoptr (GtkStringList) recent = gtk_string_list_new (folders);
  GtkListBox *list
      = GTK_LIST_BOX (page_child (GTK_WIDGET (page), LK_TYPE_EMPTY_PAGE, "recent_list"));
  GtkWidget *title = page_child (GTK_WIDGET (page), LK_TYPE_EMPTY_PAGE, "recent_title");

  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  /* No model: no heading over an empty list. */
  g_assert_false (gtk_widget_get_visible (title));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (list)));

  lk_empty_page_set_recent (page, G_LIST_MODEL (recent));
  g_autofree char *first = row_folders (list);
  g_assert_cmpstr (first, ==, "/srv/photos/family|/srv/other/sample");
  g_assert_true (gtk_widget_get_visible (title));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (list)));
  /* The row says the folder's name, and the folder it is in under it. */
  GtkWidget *box = gtk_list_box_row_get_child (gtk_list_box_get_row_at_index (list, 1));
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (gtk_widget_get_first_child (box))), ==,
                   "sample");
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (gtk_widget_get_last_child (box))), ==,
                   "/srv/other");

  /* The rows follow the model's changes. */
  gtk_string_list_splice (recent, 0, 1, (const char *const[]){ "/a/b", "/c/d", NULL });
  g_autofree char *second = row_folders (list);
  g_assert_cmpstr (second, ==, "/a/b|/c/d|/srv/other/sample");
  gtk_string_list_splice (recent, 0, 3, NULL);
  g_assert_null (gtk_list_box_get_row_at_index (list, 0));
  g_assert_false (gtk_widget_get_visible (title));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (list)));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_open_recent (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  char **opened = data;

  g_free (*opened);
  *opened = g_variant_dup_string (parameter, NULL);
}

static void
test_recent_row_opens_its_folder (void)
{
  GtkWidget *window = gtk_window_new ();
  LkEmptyPage *page = g_object_new (LK_TYPE_EMPTY_PAGE, NULL);
  const char *folders[] = { "/srv/one", "/srv/two", NULL };
  g_autoptr (GtkStringList) recent = gtk_string_list_new (folders);
  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();
  g_autoptr (GSimpleAction) action = g_simple_action_new ("open-recent", G_VARIANT_TYPE_STRING);
  g_autofree char *opened = NULL;

  g_signal_connect (action, "activate", G_CALLBACK (on_open_recent), &opened);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (action));
  gtk_widget_insert_action_group (window, "win", G_ACTION_GROUP (group));
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  lk_empty_page_set_recent (page, G_LIST_MODEL (recent));

  GtkListBox *list
      = GTK_LIST_BOX (page_child (GTK_WIDGET (page), LK_TYPE_EMPTY_PAGE, "recent_list"));
  g_signal_emit_by_name (gtk_list_box_get_row_at_index (list, 1), "activate");
  g_assert_cmpstr (opened, ==, "/srv/two");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The window's empty page lists the recent-libraries setting, and follows it. */
static void
test_window_recent_list_follows_the_setting (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  const char *recent[] = { "/srv/photos/a", "/srv/photos/b", NULL };
  const char *later[] = { "/srv/photos/c", NULL };

  g_settings_set_strv (settings, "recent-libraries", recent);
  LkWindow *window = lk_window_new (NULL);
  GtkListBox *list = GTK_LIST_BOX (
      page_child (lk_test_window_child (window, "empty_page"), LK_TYPE_EMPTY_PAGE, "recent_list"));
  g_autofree char *first = row_folders (list);
  g_assert_cmpstr (first, ==, "/srv/photos/a|/srv/photos/b");

  g_settings_set_strv (settings, "recent-libraries", later);
  g_autofree char *second = row_folders (list);
  g_assert_cmpstr (second, ==, "/srv/photos/c");
  gtk_window_destroy (GTK_WINDOW (window));
  g_settings_reset (settings, "recent-libraries");
}

static void
test_loading_page_shows_progress (void)
{
  GtkWidget *window = gtk_window_new ();
  LkLoadingPage *page = g_object_new (LK_TYPE_LOADING_PAGE, NULL);
  GtkWidget *widget = GTK_WIDGET (page);
  AdwStatusPage *title = ADW_STATUS_PAGE (page_child (widget, LK_TYPE_LOADING_PAGE, "status_page"));
  GtkLabel *phase = GTK_LABEL (page_child (widget, LK_TYPE_LOADING_PAGE, "phase_label"));
  GtkLabel *detail = GTK_LABEL (page_child (widget, LK_TYPE_LOADING_PAGE, "detail_label"));
  GtkProgressBar *bar = GTK_PROGRESS_BAR (page_child (widget, LK_TYPE_LOADING_PAGE, "bar"));

  gtk_window_set_child (GTK_WINDOW (window), widget);
  lk_loading_page_set_progress (page, 0.7, "Scanning", "9 faces per second");
  lk_loading_page_start (page, "sample");
  g_assert_cmpstr (adw_status_page_get_title (title), ==, "Opening “sample”");
  g_assert_cmpstr (gtk_label_get_label (phase), ==, "Reading the library");
  g_assert_cmpfloat (gtk_progress_bar_get_fraction (bar), ==, 0.0);
  g_assert_cmpstr (gtk_label_get_label (detail), ==, " ");

  lk_loading_page_set_progress (page, 0.5, "Comparing faces", "1,234 faces per second");
  g_assert_cmpstr (gtk_label_get_label (phase), ==, "Comparing faces");
  g_assert_cmpfloat (gtk_progress_bar_get_fraction (bar), ==, 0.5);
  g_assert_cmpstr (gtk_label_get_label (detail), ==, "1,234 faces per second");
  /* No rate yet: the line keeps its height. */
  lk_loading_page_set_progress (page, -1.0, "Grouping people", NULL);
  g_assert_cmpstr (gtk_label_get_label (detail), ==, " ");
  g_assert_cmpfloat (gtk_progress_bar_get_fraction (bar), ==, 0.5);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_error_page_advises_by_kind (void)
{
  GtkWidget *window = gtk_window_new ();
  LkErrorPage *page = g_object_new (LK_TYPE_ERROR_PAGE, NULL);
  GtkWidget *widget = GTK_WIDGET (page);
  AdwStatusPage *status = ADW_STATUS_PAGE (page_child (widget, LK_TYPE_ERROR_PAGE, "status_page"));
  GtkWidget *start_over = page_child (widget, LK_TYPE_ERROR_PAGE, "start_over_button");
  g_autoptr (GError) io
      = g_error_new_literal (LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO, "library.json: gone");
  g_autoptr (GError) review
      = g_error_new_literal (LK_REVIEW_ERROR, LK_REVIEW_ERROR_CORRUPT, "review.json: line 3: oops");

  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();
  g_autoptr (GSimpleAction) retry = g_simple_action_new ("retry", NULL);

  /* Try Again is win.retry: without it, insensitive and not focusable. */
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (retry));
  gtk_widget_insert_action_group (window, "win", G_ACTION_GROUP (group));
  gtk_window_set_child (GTK_WINDOW (window), widget);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait (mapped, widget);

  lk_error_page_show (page, "family", review);
  g_assert_cmpstr (adw_status_page_get_title (status), ==, "Cannot Open “family”");
  g_assert_cmpstr (lk_error_page_get_message (page), ==, "review.json: line 3: oops");
  g_assert_nonnull (strstr (lk_error_page_get_hint (page), "start over"));
  /* Only the saved decisions are at fault: starting without them is offered. */
  g_assert_true (gtk_widget_get_visible (start_over));

  lk_error_page_show (page, "family", io);
  g_assert_cmpstr (lk_error_page_get_message (page), ==, "library.json: gone");
  g_assert_nonnull (strstr (lk_error_page_get_hint (page), "holds library.json"));
  g_assert_false (gtk_widget_get_visible (start_over));
  g_assert_true (lk_error_page_focus_retry (page));
  g_assert_true (gtk_root_get_focus (GTK_ROOT (window))
                 == page_child (widget, LK_TYPE_ERROR_PAGE, "retry_button"));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The window's drop target is declared in its template: dropping a
 * library.json opens the folder it is in. */
static void
test_dropped_library_json_opens_its_folder (void)
{
  LkWindow *window = lk_window_new (NULL);
  GtkDropTarget *target = NULL;
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));

  for (guint k = 0; k < g_list_model_get_n_items (controllers) && target == NULL; k++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, k);
      if (GTK_IS_DROP_TARGET (controller))
        target = GTK_DROP_TARGET (controller);
    }
  g_assert_nonnull (target);
  g_assert_true (
      gdk_content_formats_contain_gtype (gtk_drop_target_get_formats (target), GDK_TYPE_FILE_LIST));

  gtk_window_present (GTK_WINDOW (window));
  g_autofree char *manifest = g_build_filename (library_dir, "library.json", NULL);
  GSList *files = g_slist_prepend (NULL, g_file_new_for_path (manifest));
  GValue value = G_VALUE_INIT;
  gboolean accepted = FALSE;
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, files);
  g_signal_emit_by_name (target, "drop", &value, 0.0, 0.0, &accepted);
  g_value_unset (&value);
  g_assert_true (accepted);
  lk_test_wait (loaded, window);
  g_assert_cmpstr (lk_session_get_folder (lk_window_get_session (window)), ==, library_dir);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* LK_PAGES_SCREENSHOTS=DIR saves each page as the window shows it. */
static void
shoot (LkWindow *window, const char *page)
{
  const char *dir = g_getenv ("LK_PAGES_SCREENSHOTS");

  if (dir == NULL)
    return;
  /* The page as it settles, not halfway through the stack's crossfade. */
  gtk_stack_set_transition_type (GTK_STACK (lk_test_window_child (window, "stack")),
                                 GTK_STACK_TRANSITION_TYPE_NONE);
  lk_test_wait_laid_out (GTK_WIDGET (window), "the page laid out for its screenshot");
  g_autofree char *name = g_strdup_printf ("%s-page.png", page);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  lk_test_save_screenshot (GTK_WIDGET (window), path);
}

/* The window goes empty → loading → people for a library, and to the error
 * page for a folder that is none, each page saying what it is about. */
static void
test_window_shows_each_page (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_autofree char *home_library = g_build_filename (g_get_home_dir (), "Pictures", "family", NULL);
  const char *recent[] = { library_dir, "/srv/photos/sample", home_library, NULL };
  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  /* LK_PAGES_LIBRARY: a library large enough for its loading page to be
   * seen (the screenshot), instead of the small generated one. */
  const char *folder
      = g_getenv ("LK_PAGES_LIBRARY") != NULL ? g_getenv ("LK_PAGES_LIBRARY") : library_dir;
  g_autofree char *folder_name = g_path_get_basename (folder);
  g_autofree char *opening = g_strdup_printf ("Opening “%s”", folder_name);
  g_autoptr (GFile) library = g_file_new_for_path (folder);
  g_autoptr (GFile) nowhere = g_file_new_for_path (missing);

  g_settings_set_strv (settings, "recent-libraries", recent);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 640);
  /* What GtkApplication does for the application's windows: the empty
   * page's icon is in the resource. */
  gtk_icon_theme_add_resource_path (gtk_icon_theme_get_for_display (gdk_display_get_default ()),
                                    RESOURCE_PREFIX "/icons");
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait (mapped, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  shoot (window, "empty");

  if (g_getenv ("LK_PAGES_SCREENSHOTS") != NULL)
    gtk_stack_set_transition_type (GTK_STACK (lk_test_window_child (window, "stack")),
                                   GTK_STACK_TRANSITION_TYPE_NONE);
  lk_window_open (window, library);
  g_assert_cmpstr (lk_window_get_page (window), ==, "loading");
  AdwStatusPage *title = ADW_STATUS_PAGE (page_child (lk_test_window_child (window, "loading_page"),
                                                      LK_TYPE_LOADING_PAGE, "status_page"));
  g_assert_cmpstr (adw_status_page_get_title (title), ==, opening);
  shoot (window, "loading");
  lk_test_wait (loaded, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");

  lk_window_open (window, nowhere);
  lk_test_wait (lk_test_window_idle, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Likeness");
  g_assert_nonnull (strstr (lk_window_get_error_message (window), "no-such-library"));
  g_assert_true (gtk_widget_has_focus (page_child (lk_test_window_child (window, "error_page"),
                                                   LK_TYPE_ERROR_PAGE, "retry_button")));
  shoot (window, "error");
  gtk_window_destroy (GTK_WINDOW (window));
  g_settings_reset (settings, "recent-libraries");
}

/* The button of `widget` (or below it) whose action is `action`, or NULL. */
static GtkWidget *
find_button (GtkWidget *widget, const char *action)
{
  if (GTK_IS_BUTTON (widget)
      && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), action) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, action);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
empty_page_sample_button (LkWindow *window)
{
  GtkWidget *button = find_button (lk_test_window_child (window, "empty_page"), "win.open-sample");

  g_assert_nonnull (button);
  return button;
}

/* The start page offers the sample only where it is installed (issue 30:
 * offered when there was none, it led to an error page advising a bug
 * report); the error page then has a way back to the start. */
static void
test_sample_offered_only_when_installed (void)
{
  g_autofree char *saved = g_strdup (g_getenv ("LIKENESS_SAMPLE_DIR"));
  g_autofree char *nowhere = g_build_filename (library_dir, "no-sample-here", NULL);

  g_setenv ("LIKENESS_SAMPLE_DIR", nowhere, TRUE);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (GTK_WIDGET (window), "the empty page shown");
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  g_assert_false (gtk_widget_get_visible (empty_page_sample_button (window)));
  shoot (window, "empty-no-sample");
  gtk_window_destroy (GTK_WINDOW (window));

  g_setenv ("LIKENESS_SAMPLE_DIR", library_dir, TRUE);
  window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (GTK_WIDGET (window), "the empty page shown");
  g_assert_true (gtk_widget_get_visible (empty_page_sample_button (window)));
  gtk_window_destroy (GTK_WINDOW (window));
  if (saved != NULL)
    g_setenv ("LIKENESS_SAMPLE_DIR", saved, TRUE);
  else
    g_unsetenv ("LIKENESS_SAMPLE_DIR");
}

/* A folder that failed to open, with no library open before: Back (Alt+←,
 * the header's back button) returns to the start page, and the advice is
 * not a bug report. */
static void
test_error_page_has_a_way_back (void)
{
  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  g_autoptr (GFile) nowhere = g_file_new_for_path (missing);
  LkWindow *window = lk_window_new (NULL);

  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, nowhere);
  lk_test_wait (lk_test_window_idle, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  g_assert_null (strstr (lk_window_get_error_hint (window), "bug"));
  g_assert_true (gtk_widget_get_visible (lk_test_window_child (window, "back_button")));
  shoot (window, "error-way-back");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The import dialog the window opened, or NULL. */
static LkImportDialog *
find_import_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* not ours */

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_IMPORT_DIALOG (w))
        return LK_IMPORT_DIALOG (w);
    }
  return NULL;
}

/* Open Library… on a plain folder of photos (no library.json, photos in
 * it and in a folder inside) says what it is and offers to find the faces
 * in it, which opens Add a Photo Folder… with that folder filled in: not
 * "Cannot read the library manifest … library.json" with Try Again. */
static void
test_photo_folder_opened_offers_to_find_faces (void)
{
  g_autofree char *root = g_dir_make_tmp ("lk-ui-pages-photos-XXXXXX", NULL);
  g_autofree char *photos = g_build_filename (root, "Holiday", NULL);
  g_autofree char *year = g_build_filename (photos, "2019", NULL);
  g_autofree char *photo = g_build_filename (year, "IMG_0001.JPG", NULL);
  g_autofree char *note = g_build_filename (photos, "notes.txt", NULL);
  g_assert_cmpint (g_mkdir_with_parents (year, 0755), ==, 0);
  g_assert_true (g_file_set_contents (photo, "\xff\xd8\xff", 3, NULL));
  g_assert_true (g_file_set_contents (note, "x", 1, NULL));
  g_autoptr (GFile) folder = g_file_new_for_path (photos);
  LkWindow *window = lk_window_new (NULL);

  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, folder);
  lk_test_wait (lk_test_window_idle, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  GtkWidget *error_page = lk_test_window_child (window, "error_page");
  AdwStatusPage *status
      = ADW_STATUS_PAGE (page_child (error_page, LK_TYPE_ERROR_PAGE, "status_page"));
  g_assert_cmpstr (adw_status_page_get_title (status), ==, "“Holiday” Holds Photos, Not a Library");
  const char *message = lk_window_get_error_message (window);
  g_test_message ("%s", message);
  g_assert_null (strstr (message, "manifest"));
  g_assert_nonnull (strstr (message, "library.json"));
  g_assert_false (
      gtk_widget_get_visible (page_child (error_page, LK_TYPE_ERROR_PAGE, "retry_button")));
  GtkWidget *find = page_child (error_page, LK_TYPE_ERROR_PAGE, "find_faces_button");
  shoot (window, "photo-folder");
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS))
    {
      g_assert_false (gtk_widget_get_visible (find));
      g_assert_nonnull (strstr (message, "Immich"));
      gtk_window_destroy (GTK_WINDOW (window));
      lk_test_remove_tree (root);
      return;
    }
  g_assert_true (gtk_widget_get_visible (find));
  g_assert_true (gtk_root_get_focus (GTK_ROOT (window)) == find);
  g_assert_null (find_import_dialog ());
  g_signal_emit_by_name (find, "clicked");
  LkImportDialog *dialog = find_import_dialog ();
  g_assert_nonnull (dialog);
  g_assert_cmpint (lk_import_dialog_get_source (dialog), ==, LK_IMPORT_DIALOG_PHOTOS);
  g_autofree char *filled = lk_import_dialog_get_database (dialog);
  g_assert_cmpstr (filled, ==, photos);
  gtk_window_destroy (GTK_WINDOW (window));

  /* A folder with neither a library nor photos keeps the plain error. */
  g_assert_cmpint (g_unlink (photo), ==, 0);
  window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  lk_window_open (window, folder);
  lk_test_wait (lk_test_window_idle, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  g_assert_nonnull (strstr (lk_window_get_error_message (window), "manifest"));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-pages-XXXXXX", NULL);
  library_dir = g_build_filename (tmp, "library", NULL);
  const char *make[] = { "make-sample", library_dir, "--faces", "60", "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);

  g_test_add_func ("/ui-pages/empty-page-rows-follow-the-model",
                   test_empty_page_rows_follow_the_model);
  g_test_add_func ("/ui-pages/recent-row-opens-its-folder", test_recent_row_opens_its_folder);
  g_test_add_func ("/ui-pages/window-recent-list-follows-the-setting",
                   test_window_recent_list_follows_the_setting);
  g_test_add_func ("/ui-pages/loading-page-shows-progress", test_loading_page_shows_progress);
  g_test_add_func ("/ui-pages/error-page-advises-by-kind", test_error_page_advises_by_kind);
  g_test_add_func ("/ui-pages/dropped-library-json-opens-its-folder",
                   test_dropped_library_json_opens_its_folder);
  g_test_add_func ("/ui-pages/window-shows-each-page", test_window_shows_each_page);
  g_test_add_func ("/ui-pages/sample-offered-only-when-installed",
                   test_sample_offered_only_when_installed);
  g_test_add_func ("/ui-pages/error-page-has-a-way-back", test_error_page_has_a_way_back);
  g_test_add_func ("/ui-pages/photo-folder-opened-offers-to-find-faces",
                   test_photo_folder_opened_offers_to_find_faces);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
