/* test-ui-help — F1, the menu's Help and the Learn More of the error page and the calibration
 * banner open the help, under Xvfb
 *
 * The real LkApplication is built in (its actions and accelerators are what
 * is tested). LIKENESS_HELP_URI_LOG makes lk_help_show () write the help:
 * URI it would hand to the desktop into a file instead of launching a help
 * viewer; everything up to that call is the application's own path.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lk-application.h"
#include "lk-guard-banner.h"
#include "lk-help.h"
#include "lk-test-display.h"
#include "lk-test-keys.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"

static GtkApplication *app;
static char *library_dir;
static char *missing_dir;
static char *log_path;

static char *
read_log (void)
{
  char *contents = NULL;

  if (!g_file_get_contents (log_path, &contents, NULL, NULL))
    return g_strdup ("");
  return contents;
}

static gboolean
log_written (gpointer data)
{
  return g_file_test (log_path, G_FILE_TEST_EXISTS);
}

static void
test_uri_names_the_installed_help (void)
{
  g_autofree char *index = lk_help_uri (NULL);
  g_autofree char *also_index = lk_help_uri ("index");
  g_autofree char *page = lk_help_uri ("calibration");

  /* gnome.yelp installs the pages under the project's name (help/meson.build). */
  g_assert_cmpstr (index, ==, "help:likeness");
  g_assert_cmpstr (also_index, ==, "help:likeness");
  g_assert_cmpstr (page, ==, "help:likeness/calibration");
}

static void
test_help_action_has_f1_and_opens_the_index (void)
{
  GAction *help = g_action_map_lookup_action (G_ACTION_MAP (app), "help");
  g_auto (GStrv) accels = gtk_application_get_accels_for_action (app, "app.help");

  g_assert_nonnull (help);
  g_assert_true (g_action_get_enabled (help));
  g_assert_true (g_strv_contains ((const char *const *) accels, "F1"));

  g_remove (log_path);
  g_action_group_activate_action (G_ACTION_GROUP (app), "help", NULL);
  g_autofree char *log = read_log ();
  g_assert_cmpstr (log, ==, "help:likeness\n");

  g_remove (log_path);
  g_action_group_activate_action (G_ACTION_GROUP (app), "help-page",
                                  g_variant_new_string ("calibration"));
  g_autofree char *page_log = read_log ();
  g_assert_cmpstr (page_log, ==, "help:likeness/calibration\n");
}

/* The item of `model` (or of its sections and submenus) whose action is
 * `action`: its label, or NULL. */
static char *
menu_label_of (GMenuModel *model, const char *action)
{
  for (int k = 0; k < g_menu_model_get_n_items (model); k++)
    {
      g_autofree char *item_action = NULL;
      if (g_menu_model_get_item_attribute (model, k, G_MENU_ATTRIBUTE_ACTION, "s", &item_action)
          && g_strcmp0 (item_action, action) == 0)
        {
          char *label = NULL;
          g_menu_model_get_item_attribute (model, k, G_MENU_ATTRIBUTE_LABEL, "s", &label);
          return label;
        }
      const char *links[] = { G_MENU_LINK_SECTION, G_MENU_LINK_SUBMENU };
      for (gsize l = 0; l < G_N_ELEMENTS (links); l++)
        {
          g_autoptr (GMenuModel) inner = g_menu_model_get_item_link (model, k, links[l]);
          char *label = inner != NULL ? menu_label_of (inner, action) : NULL;
          if (label != NULL)
            return label;
        }
    }
  return NULL;
}

static void
test_f1_and_the_menu_open_the_help (void)
{
  LkWindow *window = lk_test_open_window (app, library_dir, 800, 600);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  GMenuModel *menu = gtk_menu_button_get_menu_model (window->menu_button);
  g_autofree char *label = menu_label_of (menu, "app.help");
  g_assert_cmpstr (label, ==, "_Help");

  if (lk_test_keys_available (GTK_WIDGET (window)))
    {
      g_remove (log_path);
      lk_test_press (GTK_WIDGET (window), GDK_KEY_F1, 0);
      lk_test_wait (log_written, NULL);
      g_autofree char *log = read_log ();
      g_assert_cmpstr (log, ==, "help:likeness\n");
    }
  else
    g_test_message ("no X11 display or no libXtst: F1 itself not pressed");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The button under `widget` whose action is `action`, or NULL. */
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

static void
test_error_page_learn_more_opens_its_section (void)
{
  LkWindow *window = lk_test_open_window (app, missing_dir, 800, 600);

  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  GtkWidget *learn_more = find_button (GTK_WIDGET (window->error_page), "app.help-page");
  g_assert_nonnull (learn_more);
  g_assert_true (gtk_widget_is_visible (learn_more));

  g_remove (log_path);
  g_assert_true (gtk_widget_activate (learn_more));
  lk_test_wait (log_written, NULL);
  g_autofree char *log = read_log ();
  g_assert_cmpstr (log, ==, "help:likeness/troubleshooting#open\n");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_guard_banner_link_opens_the_calibration_page (void)
{
  GtkWidget *window = gtk_application_window_new (app);
  GtkWidget *banner = g_object_new (LK_TYPE_GUARD_BANNER, NULL);
  gtk_window_set_child (GTK_WINDOW (window), banner);
  GtkLabel *label
      = GTK_LABEL (gtk_widget_get_template_child (banner, LK_TYPE_GUARD_BANNER, "label"));
  gboolean handled = FALSE;

  g_remove (log_path);
  g_signal_emit_by_name (label, "activate-link", "calibration", &handled);
  g_assert_true (handled);
  g_autofree char *log = read_log ();
  g_assert_cmpstr (log, ==, "help:likeness/calibration\n");
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-help-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_build_filename (tmp, "library", NULL);
  missing_dir = g_build_filename (tmp, "not-there", NULL);
  log_path = g_build_filename (tmp, "help-uris.log", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces", "200",
                                    "--seed", "5", NULL),
                   ==, 0);
  g_setenv ("LIKENESS_HELP_URI_LOG", log_path, TRUE);

  app = GTK_APPLICATION (lk_application_new ());
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  g_application_hold (G_APPLICATION (app));
  g_test_add_func ("/ui-help/uri-names-the-installed-help", test_uri_names_the_installed_help);
  g_test_add_func ("/ui-help/action-has-f1-and-opens-the-index",
                   test_help_action_has_f1_and_opens_the_index);
  g_test_add_func ("/ui-help/f1-and-the-menu-open-the-help", test_f1_and_the_menu_open_the_help);
  g_test_add_func ("/ui-help/error-page-learn-more-opens-its-section",
                   test_error_page_learn_more_opens_its_section);
  g_test_add_func ("/ui-help/guard-banner-link-opens-the-calibration-page",
                   test_guard_banner_link_opens_the_calibration_page);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  return status;
}
