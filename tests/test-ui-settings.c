/* test-ui-settings — the window starts cleanly with every saved setting, under Xvfb
 *
 * Each key of the GSettings schema is set, in turn, to each value its type
 * or range allows (an enum's every nick, a boolean's both, a range's ends),
 * and a window is started with it, opens a library and closes. The test
 * framework makes a CRITICAL or WARNING fatal, so a setting applied before
 * the window is ready for it (a saved sort by name reached
 * gtk_sorter_changed() before the sorter existed) fails here. The keys come
 * from the schema itself: a setting added later is covered without a change.
 */
#include "config.h"

#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "lk-window-private.h"

#define FACES 300

static char *library_dir;

/* TRUE once `window` is no longer among the toplevels (compared as a
 * pointer only: it may be finalized). */
static gboolean
window_gone (gpointer window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GObject) item = g_list_model_get_item (toplevels, i);
      if ((gpointer) item == window)
        return FALSE;
    }
  return TRUE;
}

static void
start_window (void)
{
  LkWindow *window = lk_window_new (NULL);
  g_autoptr (GFile) file = g_file_new_for_path (library_dir);

  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window shown with these settings");
  lk_window_open (window, file);
  lk_test_wait_for (lk_test_window_idle, window, "the library loaded");
  lk_test_wait_laid_out (GTK_WIDGET (window), "the people page laid out");
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  gtk_window_close (GTK_WINDOW (window));
  lk_test_wait_for (window_gone, window, "the window closed");
}

/* The values worth starting with for one key. */
static GPtrArray *
values_of (GSettingsSchemaKey *key)
{
  GPtrArray *values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autoptr (GVariant) range = g_settings_schema_key_get_range (key);
  const char *kind;
  g_autoptr (GVariant) detail = NULL;
  const GVariantType *type = g_settings_schema_key_get_value_type (key);

  g_variant_get (range, "(&sv)", &kind, &detail);
  if (g_str_equal (kind, "enum"))
    {
      GVariantIter iter;
      GVariant *value;
      g_variant_iter_init (&iter, detail);
      while ((value = g_variant_iter_next_value (&iter)) != NULL)
        g_ptr_array_add (values, value);
    }
  else if (g_str_equal (kind, "range"))
    {
      g_ptr_array_add (values, g_variant_get_child_value (detail, 0));
      g_ptr_array_add (values, g_variant_get_child_value (detail, 1));
    }
  else if (g_variant_type_equal (type, G_VARIANT_TYPE_BOOLEAN))
    {
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_new_boolean (TRUE)));
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_new_boolean (FALSE)));
    }
  else if (g_variant_type_equal (type, G_VARIANT_TYPE_STRING_ARRAY))
    {
      const char *recent[] = { library_dir, "/nonexistent/library", NULL };
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_new_strv (recent, -1)));
    }
  else if (g_variant_type_equal (type, G_VARIANT_TYPE ("(ii)")))
    {
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_new ("(ii)", 320, 240)));
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_new ("(ii)", 1600, 1000)));
    }
  else if (g_variant_type_equal (type, G_VARIANT_TYPE ("a{su}")))
    {
      /* refit-offered: this library offered at 50 decisions, another at a huge count. */
      GVariantBuilder builder;
      g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{su}"));
      g_variant_builder_add (&builder, "{su}", library_dir, (guint32) 50);
      g_variant_builder_add (&builder, "{su}", "/nonexistent/library", G_MAXUINT32);
      g_ptr_array_add (values, g_variant_ref_sink (g_variant_builder_end (&builder)));
    }
  else
    g_error ("test-ui-settings does not know values for a key of type %s: add them",
             g_variant_type_peek_string (type));
  return values;
}

static void
test_every_setting_starts_cleanly (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_autoptr (GSettingsSchema) schema = NULL;
  g_auto (GStrv) keys = NULL;
  guint started = 0;

  g_object_get (settings, "settings-schema", &schema, NULL);
  keys = g_settings_schema_list_keys (schema);
  for (guint k = 0; keys[k] != NULL; k++)
    {
      g_autoptr (GSettingsSchemaKey) key = g_settings_schema_get_key (schema, keys[k]);
      g_autoptr (GPtrArray) values = values_of (key);

      for (guint v = 0; v < values->len; v++)
        {
          GVariant *value = g_ptr_array_index (values, v);
          g_autofree char *text = g_variant_print (value, FALSE);

          g_test_message ("%s = %s", keys[k], text);
          g_assert_true (g_settings_set_value (settings, keys[k], value));
          start_window ();
          started++;
          g_settings_reset (settings, keys[k]);
        }
    }
  /* Every key at a non-default value at once, too. */
  g_settings_set_string (settings, "sort-order", "name");
  g_settings_set_boolean (settings, "show-hidden", TRUE);
  g_settings_set_boolean (settings, "window-maximized", TRUE);
  start_window ();
  g_assert_cmpuint (started, >=, 10);
}

/* The app's icon (the About dialog's logo, the empty page) is found without
 * an install: `meson devenv -C _build likeness` showed a broken image. */
static void
test_icon_found_uninstalled (void)
{
  g_autoptr (GtkApplication) app = g_object_new (
      GTK_TYPE_APPLICATION, "application-id", "io.github.likeness.TestIcon", "flags",
      G_APPLICATION_NON_UNIQUE, "resource-base-path", RESOURCE_PREFIX, NULL);
  GtkIconTheme *theme = gtk_icon_theme_get_for_display (gdk_display_get_default ());

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  g_assert_true (gtk_icon_theme_has_icon (theme, APP_ID));
  g_assert_true (gtk_icon_theme_has_icon (theme, APP_ID "-symbolic"));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-settings-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                    G_STRINGIFY (FACES), "--seed", "7", NULL),
                   ==, 0);

  g_test_add_func ("/ui-settings/every-setting-starts-cleanly", test_every_setting_starts_cleanly);
  g_test_add_func ("/ui-settings/icon-found-uninstalled", test_icon_found_uninstalled);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
