/* test-ui-a11y — the accessible names and roles the widgets set, under Xvfb
 *
 * What a screen reader is told, read back from each widget's accessible
 * properties (GTK's test AT context, GTK_A11Y=test):
 * a grid's cell is named as its tile (the focus is on the cell, and GTK 4.8
 * names an unnamed one "GtkListItemWidget"); a person page's buttons that
 * show only an icon, a menu or a drop-down say what they do; the timing
 * chart is an image whose description carries its figures. The AT-SPI
 * test (tests/a11y) walks the same names through the real bus.
 */
#include "config.h"

#include "lk-ratio-chart.h"
#include "lk-person-page.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-texture-cache.h"
#include "lk-tile.h"

/* gtk_test_accessible_assert_property passes the value through a printf
 * format, which "100 % of" breaks: the check, and its message on failure. */
static void
assert_text (gpointer accessible, GtkAccessibleProperty property, const char *expected)
{
  g_autofree char *wrong
      = gtk_test_accessible_check_property (GTK_ACCESSIBLE (accessible), property, expected);

  if (wrong != NULL)
    g_error ("%s: %s, not “%s”", G_OBJECT_TYPE_NAME (accessible), wrong, expected);
}

static void
on_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer cache)
{
  gtk_list_item_set_child (item, lk_tile_new (cache, 64));
}

static void
on_bind (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer cache)
{
  const char *text = gtk_string_object_get_string (gtk_list_item_get_item (item));

  lk_tile_set_face (LK_TILE (gtk_list_item_get_child (item)), NULL, text);
}

static void
test_grid_cell_takes_its_tiles_name (void)
{
  const char *names[] = { "Ada Lovelace, 58 faces", "Unnamed person, 12 faces", NULL };
  g_autoptr (LkTextureCache) cache = lk_texture_cache_new (16);
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (on_setup), cache);
  g_signal_connect (factory, "bind", G_CALLBACK (on_bind), cache);
  GtkSelectionModel *model
      = GTK_SELECTION_MODEL (gtk_no_selection_new (G_LIST_MODEL (gtk_string_list_new (names))));
  GtkWidget *grid = gtk_grid_view_new (model, factory);
  GtkWidget *window = gtk_window_new ();

  gtk_window_set_child (GTK_WINDOW (window), grid);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (grid, "the grid");

  guint seen = 0;
  for (GtkWidget *cell = gtk_widget_get_first_child (grid); cell != NULL;
       cell = gtk_widget_get_next_sibling (cell))
    {
      GtkWidget *tile = gtk_widget_get_first_child (cell);
      if (tile == NULL || !LK_IS_TILE (tile))
        continue;
      g_autofree char *label = NULL;
      for (guint k = 0; names[k] != NULL; k++)
        if (gtk_test_accessible_check_property (GTK_ACCESSIBLE (tile),
                                                GTK_ACCESSIBLE_PROPERTY_LABEL, names[k])
            == NULL)
          label = g_strdup (names[k]);
      g_assert_nonnull (label);
      gtk_test_accessible_assert_role (GTK_ACCESSIBLE (tile), GTK_ACCESSIBLE_ROLE_IMG);
      assert_text (cell, GTK_ACCESSIBLE_PROPERTY_LABEL, label);
      seen++;
    }
  g_assert_cmpuint (seen, ==, 2);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Buttons a screen reader reaches by Tab whose label GTK 4.8 does not
 * pass on: an icon-only button, a menu button (its label is its inner
 * button's). Each must be named itself; hidden ones are not reached. */
static guint
count_unnamed_buttons (GtkWidget *widget, GString *which)
{
  guint unnamed = 0;

  if (!gtk_widget_get_visible (widget))
    return 0;
  if (GTK_IS_MENU_BUTTON (widget)
      || (GTK_IS_BUTTON (widget) && gtk_button_get_label (GTK_BUTTON (widget)) == NULL
          && !GTK_IS_MENU_BUTTON (gtk_widget_get_parent (widget))
          && !GTK_IS_DROP_DOWN (gtk_widget_get_parent (widget))))
    if (!gtk_test_accessible_has_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL))
      {
        g_string_append_printf (which, " %s", G_OBJECT_TYPE_NAME (widget));
        unnamed++;
      }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    unnamed += count_unnamed_buttons (child, which);
  return unnamed;
}

static void
test_person_page_buttons_are_named (void)
{
  GtkWidget *page = g_object_new (LK_TYPE_PERSON_PAGE, NULL);
  GtkWidget *window = gtk_window_new ();
  g_autoptr (GString) which = g_string_new (NULL);

  gtk_window_set_child (GTK_WINDOW (window), page);
  assert_text (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "merge_button"),
               GTK_ACCESSIBLE_PROPERTY_LABEL, "Merge With…");
  assert_text (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "move_button"),
               GTK_ACCESSIBLE_PROPERTY_LABEL, "Move To…");
  g_assert_cmpuint (count_unnamed_buttons (page, which), ==, 0);
  g_assert_cmpstr (which->str, ==, "");

  /* The drop-down's own button, where the focus lands. */
  GtkWidget *dropdown
      = GTK_WIDGET (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "order_dropdown"));
  guint toggles = 0;
  for (GtkWidget *child = gtk_widget_get_first_child (dropdown); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_TOGGLE_BUTTON (child))
      {
        assert_text (child, GTK_ACCESSIBLE_PROPERTY_LABEL, "Order");
        toggles++;
      }
  g_assert_cmpuint (toggles, ==, 1);

  /* The text F2 edits the name in. */
  GtkEditable *name
      = GTK_EDITABLE (gtk_widget_get_template_child (page, LK_TYPE_PERSON_PAGE, "name_label"));
  assert_text (gtk_editable_get_delegate (name), GTK_ACCESSIBLE_PROPERTY_LABEL, "Name");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_chart_describes_its_figures (void)
{
  GtkWidget *chart = g_object_ref_sink (lk_ratio_chart_new ());

  gtk_test_accessible_assert_role (GTK_ACCESSIBLE (chart), GTK_ACCESSIBLE_ROLE_IMG);
  assert_text (chart, GTK_ACCESSIBLE_PROPERTY_LABEL, "B ÷ A time per repetition");
  assert_text (chart, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, "No repetitions yet");

  /* B takes twice A's time in every repetition: A wins them all. */
  lk_ratio_chart_reset (LK_RATIO_CHART (chart), "scalar", "AVX2", 8);
  for (guint k = 0; k < 8; k++)
    lk_ratio_chart_append (LK_RATIO_CHART (chart), 100.0, 200.0, k % 2 == 0);
  assert_text (chart, GTK_ACCESSIBLE_PROPERTY_LABEL, "AVX2 ÷ scalar time per repetition");
  assert_text (
      chart, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
      "8 repetitions; median ratio 2.00; scalar faster in 100 % of them; 99.2 % interval 2.00 "
      "to 2.00");
  g_object_unref (chart);
}

int
main (int argc, char **argv)
{
  /* The display tests run with GTK_A11Y=none, which makes no accessible
   * context at all; GTK's test context keeps what the widgets set. */
  g_setenv ("GTK_A11Y", "test", TRUE);
  lk_test_display_init (&argc, &argv);

  g_test_add_func ("/ui-a11y/grid-cell-takes-its-tiles-name", test_grid_cell_takes_its_tiles_name);
  g_test_add_func ("/ui-a11y/person-page-buttons-are-named", test_person_page_buttons_are_named);
  g_test_add_func ("/ui-a11y/chart-describes-its-figures", test_chart_describes_its_figures);
  return g_test_run ();
}
