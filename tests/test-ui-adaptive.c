/* test-ui-adaptive — the window at half of a 1280 × 720 screen, and its
 * libadwaita parts (issue 30, points 5 and 6)
 *
 * Half of a 1280 × 720 screen is 640 pixels wide; its height, less a top bar
 * and a dock or task bar, about 640. At that size every page is laid out,
 * not cut: each control on screen gets at least the size it asks for and
 * lies inside the window. Notifications sit above a page's bar, never over
 * its buttons; the pages that say "nothing here" or "this failed" are
 * libadwaita's status pages, with a way back. With LK_ADAPTIVE_SHOTS set to
 * a folder, each view is saved there as a PNG at 1280 × 720 and at 640 × 640.
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "lk-application.h"
#include "lk-diagnostics-window.h"
#include "lk-error-page.h"
#include "lk-export-dialog.h"
#include "lk-face-viewer.h"
#include "lk-import-dialog.h"
#include "lk-loading-page.h"
#include "lk-person-page.h"
#include "lk-question-dialog.h"
#include "lk-texture-cache.h"
#include "lk-suggestions-page.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"
#include "scan/lk-gates.h"

#define FACES 400 /* seed 5: a sample with a question for Review Suggestions */

#define SMALL_WIDTH  640
#define SMALL_HEIGHT 640

/* The narrowest window the GNOME HIG designs for: a phone held upright. */
#define NARROW_WIDTH  360
#define NARROW_HEIGHT 640

static char *library_dir;
static GtkApplication *app;

static void
shoot (LkWindow *window, const char *name)
{
  const char *dir = g_getenv ("LK_ADAPTIVE_SHOTS");

  if (dir == NULL)
    return;
  int width = gtk_widget_get_width (GTK_WIDGET (window));
  int height = gtk_widget_get_height (GTK_WIDGET (window));
  g_autofree char *file = g_strdup_printf ("%s-%dx%d.png", name, width, height);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  if (lk_test_toast_widget (window) != NULL)
    lk_test_wait_at_rest (lk_test_toast_widget (window), "the toast's slide over");
  lk_test_wait_drawn (GTK_WIDGET (window), window->cache, "the window drawn for its screenshot");
  lk_test_save_screenshot (GTK_WIDGET (window), path);
}

static gboolean
is_control (GtkWidget *widget)
{
  return GTK_IS_BUTTON (widget) || GTK_IS_MENU_BUTTON (widget) || GTK_IS_DROP_DOWN (widget)
         || GTK_IS_EDITABLE (widget) || GTK_IS_PROGRESS_BAR (widget);
}

/* How far check_laid_out_in looks. */
typedef enum
{
  OUTSIDE_SCROLLERS, /* not into scrolled parts */
  INTO_SCROLLERS,    /* into those that scroll only up and down ... */
  ACROSS_ONLY,       /* ... where only the width is checked */
} Reach;

static guint check_laid_out_in (GtkWidget *widget, GtkWidget *window, const char *page,
                                Reach reach);

/* Every widget drawn at `widget` or below, outside scrolled parts (which
 * scroll what does not fit, by design): at least its minimum size, inside
 * the window; a control (a button, a menu, an entry) at least its natural
 * width, so no label of a button is cut. Returns the number of failures,
 * each said. */
static guint
check_laid_out (GtkWidget *widget, GtkWidget *window, const char *page)
{
  return check_laid_out_in (widget, window, page, OUTSIDE_SCROLLERS);
}

/* As check_laid_out, and inside the scrolled parts that scroll only up and
 * down, across only: there each widget gets its least width (a control its
 * natural one) and lies between the window's left and right edges, however
 * far down it is scrolled. */
static guint
check_laid_out_scrolling (GtkWidget *widget, GtkWidget *window, const char *page)
{
  return check_laid_out_in (widget, window, page, INTO_SCROLLERS);
}

static gboolean
scrolls_only_down (GtkWidget *widget)
{
  GtkPolicyType across;

  if (!GTK_IS_SCROLLED_WINDOW (widget))
    return FALSE;
  gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (widget), &across, NULL);
  return across == GTK_POLICY_NEVER;
}

static guint
check_laid_out_in (GtkWidget *widget, GtkWidget *window, const char *page, Reach reach)
{
  gboolean across_only = reach == ACROSS_ONLY;
  guint failures = 0;

  if (!gtk_widget_get_mapped (widget))
    return 0;
  /* A scroller's own bar is drawn over its edge, by its own rules. */
  if (across_only && GTK_IS_SCROLLBAR (widget))
    return 0;
  if (widget != window && !GTK_IS_POPOVER (widget))
    {
      graphene_rect_t bounds;
      int min_w, nat_w, min_h;
      GtkAllocation allocation;

      /* The allocation holds the CSS margin, border and padding, as a
       * measure does (gtk_widget_get_width is the content's only), but not
       * the widget's own margins, which a measure holds. */
      gtk_widget_get_allocation (widget, &allocation);
      int width = allocation.width + gtk_widget_get_margin_start (widget)
                  + gtk_widget_get_margin_end (widget);
      int height = allocation.height + gtk_widget_get_margin_top (widget)
                   + gtk_widget_get_margin_bottom (widget);

      g_assert_true (gtk_widget_compute_bounds (widget, window, &bounds));
      gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
      gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, width, &min_h, NULL, NULL, NULL);
      /* The header bar reaches over the window's 1-pixel border. */
      gboolean inside
          = bounds.origin.x >= -1.5
            && bounds.origin.x + bounds.size.width <= gtk_widget_get_width (window) + 1.5
            && (across_only
                || (bounds.origin.y >= -1.5
                    && bounds.origin.y + bounds.size.height
                           <= gtk_widget_get_height (window) + 1.5));
      gboolean big_enough = width >= min_w && (across_only || height >= min_h)
                            && (!is_control (widget) || GTK_IS_EDITABLE (widget) || width >= nat_w);
      /* A zero-sized widget draws nothing: a spacer, an empty label. */
      if ((width > 0 && height > 0) && (!inside || !big_enough))
        {
          const char *text = GTK_IS_LABEL (widget)    ? gtk_label_get_label (GTK_LABEL (widget))
                             : GTK_IS_BUTTON (widget) ? gtk_button_get_label (GTK_BUTTON (widget))
                                                      : NULL;
          g_test_message ("on %s: %s “%s” at %.0f,%.0f %d×%d, asks %d (natural %d)×%d%s", page,
                          G_OBJECT_TYPE_NAME (widget), text != NULL ? text : "", bounds.origin.x,
                          bounds.origin.y, width, height, min_w, nat_w, min_h,
                          inside ? "" : ", outside the window");
          for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
               child = gtk_widget_get_next_sibling (child))
            {
              int child_min, child_nat;
              gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &child_min, &child_nat,
                                  NULL, NULL);
              g_test_message ("  its %s asks %d (natural %d)", G_OBJECT_TYPE_NAME (child),
                              child_min, child_nat);
            }
          failures++;
        }
    }
  if (GTK_IS_POPOVER (widget))
    return failures;
  if (GTK_IS_SCROLLED_WINDOW (widget))
    {
      if (reach == OUTSIDE_SCROLLERS || !scrolls_only_down (widget))
        return failures;
      reach = ACROSS_ONLY;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    /* A squeezer keeps the children it does not show mapped, laid out at
     * their own size: only the one it shows is on screen. */
    if (!ADW_IS_SQUEEZER (widget)
        || child == adw_squeezer_get_visible_child (ADW_SQUEEZER (widget)))
      failures += check_laid_out_in (child, window, page, reach);
  return failures;
}

/* Which widget makes the window too wide (too tall): the widest (tallest)
 * child, down. */
static void
dump_largest (GtkWidget *widget, GtkOrientation orientation, int depth)
{
  GtkWidget *widest = NULL;
  int most = -1;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      int min;
      if (!gtk_widget_get_visible (child))
        continue;
      gtk_widget_measure (child, orientation, -1, &min, NULL, NULL, NULL);
      g_test_message ("%*s%s (%s) asks %d", depth * 2, "", G_OBJECT_TYPE_NAME (child),
                      gtk_widget_get_css_name (child), min);
      if (min > most)
        most = min, widest = child;
    }
  if (widest != NULL && depth < 12)
    dump_largest (widest, orientation, depth + 1);
}

/* The page shown laid out in a window of at most max_width × max_height:
 * the window can be that small (its least size fits), it was not grown past
 * it, and every widget on screen has what it asks for, inside it. */
static void
assert_laid_out_within (LkWindow *window, const char *page, int max_width, int max_height)
{
  g_assert_cmpstr (lk_window_get_page (window), ==, page);
  lk_test_wait_laid_out (GTK_WIDGET (window), "the page laid out");
  /* Not grown past the size asked for by a page's least size (under Xvfb,
   * with no window manager, a few pixels of it are the frame's). */
  g_test_message ("%s: the window is %d×%d", page, gtk_widget_get_width (GTK_WIDGET (window)),
                  gtk_widget_get_height (GTK_WIDGET (window)));
  guint failures = check_laid_out (GTK_WIDGET (window), GTK_WIDGET (window), page);
  int min_w, min_h;
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL,
                      NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, -1, &min_h, NULL, NULL, NULL);
  g_test_message ("%s: the window needs at least %d×%d", page, min_w, min_h);
  if (min_w > max_width)
    dump_largest (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, 0);
  g_assert_cmpint (min_w, <=, max_width);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, max_width);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (window)), <=, max_height);
  g_assert_cmpuint (failures, ==, 0);
}

static void
assert_laid_out (LkWindow *window, const char *page)
{
  assert_laid_out_within (window, page, SMALL_WIDTH, SMALL_HEIGHT);
}

static LkWindow *
open_at (const char *folder, int width, int height)
{
  LkWindow *window = lk_window_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  if (folder != NULL)
    {
      g_autoptr (GFile) file = g_file_new_for_path (folder);
      lk_window_open (window, file);
      lk_test_wait_for (lk_test_window_idle, window, "the library loaded");
    }
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window shown at its size");
  return window;
}

static LkPersonPage *
show_first_person (LkWindow *window)
{
  GListModel *people = lk_window_get_visible_people (window);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));

  for (guint i = 0; i < g_list_model_get_n_items (people); i++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, i);
      if (!lk_person_item_is_unassigned (item) && lk_person_item_get_n_faces (item) > 3)
        {
          lk_window_show_person (window, item);
          break;
        }
    }
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  lk_test_wait_laid_out (GTK_WIDGET (window), "the person page laid out");
  /* Faces selected: the action bar shows all its buttons. */
  gtk_selection_model_select_range (lk_person_page_get_selection (page), 0, 2, TRUE);
  return page;
}

/* Every page at 640 × 640: each widget on screen has what it asks for and
 * lies inside the window (issue 30, point 5: forced smaller than 813 × 650,
 * the title, Merge and the action bar were cut). */
static void
test_every_page_laid_out_at_half_a_small_screen (void)
{
  LkWindow *window = open_at (NULL, SMALL_WIDTH, SMALL_HEIGHT);
  assert_laid_out (window, "empty");
  shoot (window, "empty");
  gtk_window_destroy (GTK_WINDOW (window));

  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  window = open_at (missing, SMALL_WIDTH, SMALL_HEIGHT);
  assert_laid_out (window, "error");
  shoot (window, "error");
  gtk_window_destroy (GTK_WINDOW (window));

  /* Saved decisions that cannot be read: the error page offers all three
   * ways on (Start Over too). */
  g_autofree char *tmp = g_dir_make_tmp ("lk-adaptive-XXXXXX", NULL);
  g_autofree char *broken = g_build_filename (tmp, "library", NULL);
  const char *make[] = { "make-sample", broken, "--faces", "50", "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);
  g_autofree char *review = g_build_filename (broken, "review.json", NULL);
  g_assert_true (g_file_set_contents (review, "{", -1, NULL));
  window = open_at (broken, SMALL_WIDTH, SMALL_HEIGHT);
  assert_laid_out (window, "error");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (gtk_widget_get_template_child (
      lk_test_window_child (window, "error_page"), LK_TYPE_ERROR_PAGE, "start_over_button"))));
  shoot (window, "error-start-over");
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);

  window = open_at (library_dir, SMALL_WIDTH, SMALL_HEIGHT);
  assert_laid_out (window, "people");
  shoot (window, "people");
  show_first_person (window);
  assert_laid_out (window, "person");
  shoot (window, "person");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
  assert_laid_out (window, "suggestions");
  shoot (window, "suggestions");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Every page at 360 × 640, the HIG's narrowest: the window can be made that
 * narrow, and the people grid (in the selection mode, its hint shown, with
 * the review bar), a person (faces selected: the whole action bar), Review
 * Suggestions and the start and error pages each give every widget on
 * screen what it asks for, inside the window: no label cut short without
 * its "…", no button past the edge. */
static void
test_every_page_laid_out_at_the_narrowest (void)
{
  LkWindow *window = open_at (NULL, NARROW_WIDTH, NARROW_HEIGHT);
  assert_laid_out_within (window, "empty", NARROW_WIDTH, NARROW_HEIGHT);
  shoot (window, "empty");
  gtk_window_destroy (GTK_WINDOW (window));

  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  window = open_at (missing, NARROW_WIDTH, NARROW_HEIGHT);
  assert_laid_out_within (window, "error", NARROW_WIDTH, NARROW_HEIGHT);
  shoot (window, "error");
  gtk_window_destroy (GTK_WINDOW (window));

  window = open_at (library_dir, NARROW_WIDTH, NARROW_HEIGHT);
  /* The review bar over the grid shows only when someone named may have
   * more faces; laid out here as if that were so (its count ellipsizes). */
  gtk_widget_set_visible (lk_test_window_child (window, "review_bar"), TRUE);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (lk_test_window_child (window, "select_button")),
                                TRUE);
  assert_laid_out_within (window, "people", NARROW_WIDTH, NARROW_HEIGHT);
  /* The grid shows one column of people at least, inside the window. */
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  graphene_rect_t bounds;
  g_assert_true (gtk_widget_compute_bounds (grid, GTK_WIDGET (window), &bounds));
  g_assert_cmpfloat (bounds.origin.x, >=, 0);
  g_assert_cmpfloat (bounds.origin.x + bounds.size.width, <=, NARROW_WIDTH);
  g_assert_cmpfloat (bounds.size.height, >, 0);
  shoot (window, "people-selecting");
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (lk_test_window_child (window, "select_button")),
                                FALSE);
  assert_laid_out_within (window, "people", NARROW_WIDTH, NARROW_HEIGHT);
  shoot (window, "people");
  show_first_person (window);
  assert_laid_out_within (window, "person", NARROW_WIDTH, NARROW_HEIGHT);
  shoot (window, "person");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
  assert_laid_out_within (window, "suggestions", NARROW_WIDTH, NARROW_HEIGHT);
  shoot (window, "suggestions");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* At the window's first size the selection mode's hint is whole: "Click
 * people to select them; Merge Selected makes them one" was cut to "…makes
 * them o…" at 1,000 pixels, the one part that says what the mode is for. */
static void
test_selection_hint_whole_at_the_first_size (void)
{
  LkWindow *window = open_at (library_dir, 1000, 700);

  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (lk_test_window_child (window, "select_button")),
                                TRUE);
  lk_test_wait_laid_out (GTK_WIDGET (window), "the selection bar laid out");
  GtkLabel *hint = GTK_LABEL (lk_test_window_child (window, "selection_label"));
  g_test_message ("hint: %s", gtk_label_get_label (hint));
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (hint)));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The loading page (shown only while a library loads: alone here, so that
 * it stays) is a status page too, laid out at 640 × 640. */
static void
test_loading_page_is_a_status_page (void)
{
  GtkWidget *window = gtk_window_new ();
  LkLoadingPage *page = g_object_new (LK_TYPE_LOADING_PAGE, NULL);

  gtk_window_set_default_size (GTK_WINDOW (window), SMALL_WIDTH, SMALL_HEIGHT);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  lk_loading_page_start (page, "library");
  lk_loading_page_set_progress (page, 0.4, "Comparing faces", "1,234 faces per second");
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (window, "the loading page laid out");
  g_assert_true (ADW_IS_STATUS_PAGE (gtk_widget_get_first_child (GTK_WIDGET (page))));
  g_assert_cmpuint (check_laid_out (window, window, "loading"), ==, 0);
  g_assert_cmpint (gtk_widget_get_width (window), <=, SMALL_WIDTH);
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_autofree char *path
          = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), "loading.png", NULL);
      lk_test_save_screenshot (window, path);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The same views at 1280 × 720, for the screenshots only. */
static void
test_views_at_1280x720 (void)
{
  if (g_getenv ("LK_ADAPTIVE_SHOTS") == NULL)
    {
      g_test_skip ("screenshots only: set LK_ADAPTIVE_SHOTS");
      return;
    }
  LkWindow *window = open_at (NULL, 1280, 720);
  shoot (window, "empty");
  gtk_window_destroy (GTK_WINDOW (window));
  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  window = open_at (missing, 1280, 720);
  shoot (window, "error");
  gtk_window_destroy (GTK_WINDOW (window));
  window = open_at (library_dir, 1280, 720);
  shoot (window, "people");
  show_first_person (window);
  shoot (window, "person");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
  shoot (window, "suggestions");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A decision's notification on the person page and on Review Suggestions,
 * at both sizes: above the bar, clear of every button of it; one line. */
static void
assert_clear_of_buttons (LkWindow *window, GtkWidget *bar)
{
  GtkWidget *toast = lk_test_toast_widget (window);
  graphene_rect_t toast_bounds, bar_bounds;

  g_assert_nonnull (toast);
  g_assert_true (gtk_widget_compute_bounds (toast, GTK_WIDGET (window), &toast_bounds));
  g_assert_true (gtk_widget_compute_bounds (bar, GTK_WIDGET (window), &bar_bounds));
  g_test_message ("toast %.0f..%.0f, bar %.0f..%.0f", toast_bounds.origin.y,
                  toast_bounds.origin.y + toast_bounds.size.height, bar_bounds.origin.y,
                  bar_bounds.origin.y + bar_bounds.size.height);
  g_assert_cmpfloat (bar_bounds.size.height, >, 0);
  g_assert_cmpfloat (toast_bounds.origin.y + toast_bounds.size.height, <=, bar_bounds.origin.y);
  GtkLabel *label = lk_window_get_toast_label (window);
  g_assert_cmpint (pango_layout_get_line_count (gtk_label_get_layout (label)), ==, 1);
}

static void
test_notifications_above_the_bars (void)
{
  const int sizes[][2] = { { 1280, 720 }, { SMALL_WIDTH, SMALL_HEIGHT } };

  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      LkWindow *window = open_at (library_dir, sizes[k][0], sizes[k][1]);
      LkSession *session = lk_window_get_session (window);
      LkPersonPage *page = show_first_person (window);

      /* Two faces taken out: the longest message of a decision, with its
       * button ("Took 2 faces out… now" wrapped one word, issue 30). */
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "person.remove", NULL));
      lk_test_wait_committed (session);
      lk_test_wait_for (lk_test_toast_shown, window, "the decision's toast shown");
      lk_test_wait_at_rest (lk_test_toast_widget (window), "the toast's slide over");
      g_test_message ("%dx%d: %s", sizes[k][0], sizes[k][1], lk_window_get_toast (window));
      assert_clear_of_buttons (window, GTK_WIDGET (gtk_widget_get_template_child (
                                           GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "action_bar")));
      g_autofree char *name = g_strdup_printf ("person-toast");
      shoot (window, name);

      /* Back on the grid, the notification follows, above the selection bar. */
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
      g_assert_nonnull (lk_window_get_toast (window));
      gtk_widget_set_visible (lk_test_window_child (window, "selection_bar"), TRUE);
      lk_test_wait_for (lk_test_toast_shown, window, "the toast shown on the grid");
      lk_test_wait_at_rest (lk_test_toast_widget (window), "the toast at rest above the bar");
      assert_clear_of_buttons (window, lk_test_window_child (window, "selection_bar"));

      /* Review Suggestions: an answer's notification over the question,
       * above the answers. */
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.suggestions", NULL));
      LkSuggestionsPage *suggestions
          = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));
      g_assert_cmpuint (lk_suggestions_page_get_face (suggestions), !=, G_MAXUINT32);
      g_assert_true (
          gtk_widget_activate_action (GTK_WIDGET (suggestions), "suggest.confirm", NULL));
      lk_test_wait_committed (session);
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
      lk_test_wait_for (lk_test_window_settled, window, "the undo saved");
      lk_test_wait_for (lk_test_toast_shown, window, "the undo's toast shown");
      lk_test_wait_at_rest (lk_test_toast_widget (window), "the toast's slide over");
      assert_clear_of_buttons (
          window, GTK_WIDGET (gtk_widget_get_template_child (
                      GTK_WIDGET (suggestions), LK_TYPE_SUGGESTIONS_PAGE, "answer_bar")));
      shoot (window, "suggestions-toast");
      gtk_window_destroy (GTK_WINDOW (window));
    }
}

static gboolean
toast_said (gpointer window)
{
  return lk_window_get_toast (window) != NULL;
}

/* A save that fails says so in one line, not four over the grid (issue 30,
 * point 6); the engine's whole message is its tooltip. */
static void
test_save_failure_is_one_line (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-adaptive-XXXXXX", NULL);
  g_autofree char *copy = g_build_filename (tmp, "library", NULL);
  g_autofree char *review = NULL;

  const char *make[] = { "make-sample", copy, "--faces", "200", "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);
  review = g_build_filename (copy, "review.json", NULL);
  LkWindow *window = open_at (copy, SMALL_WIDTH, SMALL_HEIGHT);
  LkSession *session = lk_window_get_session (window);
  /* review.json a folder: no save can replace it, whoever runs the test. */
  g_assert_cmpint (g_mkdir (review, 0755), ==, 0);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  g_autoptr (GError) error = NULL;
  lk_session_rename (session, lk_person_item_get_id (item), "Ada", &error);
  lk_test_wait_committed (session);
  lk_test_wait_for (toast_said, window, "the failed save's toast");
  const char *toast = lk_window_get_toast (window);
  g_assert_nonnull (toast);
  g_test_message ("%s", toast);
  g_assert_true (strstr (toast, "could not be saved") != NULL);
  lk_test_wait_for (lk_test_toast_shown, window, "the failed save's toast shown");
  lk_test_wait_at_rest (lk_test_toast_widget (window), "the toast's slide over");
  GtkLabel *label = lk_window_get_toast_label (window);
  g_assert_cmpint (pango_layout_get_line_count (gtk_label_get_layout (label)), ==, 1);
  const char *tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (label));
  g_assert_nonnull (tooltip);
  g_assert_true (strstr (tooltip, "review.json") != NULL);
  GtkWidget *widget = lk_test_toast_widget (window);
  g_assert_cmpint (gtk_widget_get_height (widget), <, 60);
  shoot (window, "save-failed");
  gtk_window_destroy (GTK_WINDOW (window));
  g_rmdir (review);
  lk_test_remove_tree (tmp);
}

/* The pages that say nothing is there, or that a folder failed, are
 * libadwaita's status pages, each with a way on. */
static void
test_status_pages_are_adwaita_with_a_way_back (void)
{
  g_autofree char *missing = g_build_filename (library_dir, "no-such-library", NULL);
  LkWindow *window = open_at (missing, SMALL_WIDTH, SMALL_HEIGHT);

  g_assert_cmpstr (lk_window_get_page (window), ==, "error");
  GtkWidget *error_page = lk_test_window_child (window, "error_page");
  GtkWidget *status = gtk_widget_get_first_child (error_page);
  g_assert_true (ADW_IS_STATUS_PAGE (status));
  g_assert_true (
      g_str_has_prefix (adw_status_page_get_title (ADW_STATUS_PAGE (status)), "Cannot Open"));
  g_assert_true (gtk_widget_get_visible (lk_test_window_child (window, "back_button")));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  GtkWidget *empty = gtk_widget_get_first_child (lk_test_window_child (window, "empty_page"));
  g_assert_true (ADW_IS_STATUS_PAGE (empty));
  gtk_window_destroy (GTK_WINDOW (window));

  /* A search matching nobody, and no suggestion left. */
  window = open_at (library_dir, SMALL_WIDTH, SMALL_HEIGHT);
  g_assert_true (ADW_IS_STATUS_PAGE (lk_test_window_child (window, "no_match_page")));
  LkSuggestionsPage *suggestions
      = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));
  g_assert_true (ADW_IS_STATUS_PAGE (gtk_widget_get_template_child (
      GTK_WIDGET (suggestions), LK_TYPE_SUGGESTIONS_PAGE, "done_page")));
  gtk_window_destroy (GTK_WINDOW (window));
}

static GtkWindow *
find_toplevel (GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* not ours */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) window = g_list_model_get_item (toplevels, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (window, type) && gtk_widget_get_visible (GTK_WIDGET (window)))
        return window;
    }
  return NULL;
}

static gboolean
confirm_shown (gpointer data)
{
  return find_toplevel (ADW_TYPE_MESSAGE_DIALOG) != NULL;
}

static gboolean
about_shown (gpointer data)
{
  return find_toplevel (ADW_TYPE_ABOUT_WINDOW) != NULL;
}

/* The close confirmation and the About window fit half a small screen
 * (and are shot with LK_ADAPTIVE_SHOTS). */
static void
test_dialogs_fit_half_a_small_screen (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-adaptive-XXXXXX", NULL);
  g_autofree char *copy = g_build_filename (tmp, "library", NULL);
  const char *make[] = { "make-sample", copy, "--faces", "200", "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);
  g_autofree char *review = g_build_filename (copy, "review.json", NULL);
  LkWindow *window = lk_test_open_window (app, copy, SMALL_WIDTH, SMALL_HEIGHT);
  LkSession *session = lk_window_get_session (window);
  g_autoptr (GError) error = NULL;

  /* A decision that cannot be saved: closing asks. */
  g_assert_cmpint (g_mkdir (review, 0755), ==, 0);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  lk_session_rename (session, lk_person_item_get_id (item), "Ada", &error);
  lk_test_wait_committed (session);
  gtk_window_close (GTK_WINDOW (window));
  lk_test_wait_for (confirm_shown, NULL, "the close confirmation shown");
  GtkWindow *dialog = find_toplevel (ADW_TYPE_MESSAGE_DIALOG);
  lk_test_wait_laid_out (GTK_WIDGET (dialog), "the close confirmation laid out");
  g_test_message ("close confirmation %d×%d", gtk_widget_get_width (GTK_WIDGET (dialog)),
                  gtk_widget_get_height (GTK_WIDGET (dialog)));
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (dialog)), <=, SMALL_WIDTH);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (dialog)), <=, SMALL_HEIGHT);
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_autofree char *path
          = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), "close-confirm.png", NULL);
      lk_test_save_screenshot (GTK_WIDGET (dialog), path);
    }
  /* The response is emitted at once: nothing to wait for. */
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "cancel");

  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  lk_test_wait_for (about_shown, NULL, "the About window shown");
  GtkWindow *about = find_toplevel (ADW_TYPE_ABOUT_WINDOW);
  lk_test_wait_laid_out (GTK_WIDGET (about), "the About window laid out");
  g_test_message ("about %d×%d", gtk_widget_get_width (GTK_WIDGET (about)),
                  gtk_widget_get_height (GTK_WIDGET (about)));
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (about)), <=, SMALL_WIDTH);
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_autofree char *path = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), "about.png", NULL);
      lk_test_save_screenshot (GTK_WIDGET (about), path);
    }
  gtk_window_destroy (about);
  g_rmdir (review);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (tmp);
}

/* The header bar is libadwaita's, its title an AdwWindowTitle whose
 * subtitle says what the library holds. */
static void
test_header_is_adwaita (void)
{
  LkWindow *window = open_at (library_dir, SMALL_WIDTH, SMALL_HEIGHT);

  g_assert_true (ADW_IS_HEADER_BAR (gtk_window_get_titlebar (GTK_WINDOW (window))));
  AdwWindowTitle *title = ADW_WINDOW_TITLE (lk_test_window_child (window, "window_title"));
  g_assert_cmpstr (adw_window_title_get_title (title), ==, "library");
  g_assert_nonnull (lk_window_get_subtitle (window));
  g_assert_true (strstr (lk_window_get_subtitle (window), "faces") != NULL);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A window other than the main one, at half a small screen: it can be made
 * that small (its minimum size fits), and at that size each control on it
 * gets the size it asks for and lies inside it (assert_laid_out). Shot as
 * NAME with LK_ADAPTIVE_SHOTS. Destroys it. */
static void
assert_window_fits (GtkWindow *window, const char *name)
{
  int min_width, min_height;

  gtk_window_set_default_size (window, SMALL_WIDTH, SMALL_HEIGHT);
  gtk_window_present (window);
  lk_test_wait_laid_out (GTK_WIDGET (window), name);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL,
                      NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, SMALL_WIDTH, &min_height, NULL,
                      NULL, NULL);
  g_test_message ("%s: at least %d×%d, shown %d×%d", name, min_width, min_height,
                  gtk_widget_get_width (GTK_WIDGET (window)),
                  gtk_widget_get_height (GTK_WIDGET (window)));
  if (min_width > SMALL_WIDTH)
    dump_largest (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, 0);
  g_assert_cmpint (min_width, <=, SMALL_WIDTH);
  if (min_height > SMALL_HEIGHT)
    dump_largest (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, 0);
  g_assert_cmpint (min_height, <=, SMALL_HEIGHT);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, SMALL_WIDTH);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (window)), <=, SMALL_HEIGHT);
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_autofree char *file = g_strdup_printf ("%s-640.png", name);
      g_autofree char *path = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), file, NULL);
      lk_test_save_screenshot (GTK_WIDGET (window), path);
    }
  guint failures = check_laid_out (GTK_WIDGET (window), GTK_WIDGET (window), name);
  g_assert_cmpuint (failures, ==, 0);
  gtk_window_destroy (window);
}

static gboolean
viewer_loaded (gpointer viewer)
{
  return !lk_face_viewer_is_loading (viewer);
}

/* Issue 30, point 5 was checked on the main window's pages only: the face
 * viewer, the diagnostics window and every dialog fit half a small screen
 * too. */
static void
test_other_windows_fit_half_a_small_screen (void)
{
  LkWindow *window = open_at (library_dir, SMALL_WIDTH, SMALL_HEIGHT);
  LkSession *session = lk_window_get_session (window);
  guint32 faces[] = { 0, 1, 2 };

  LkFaceViewer *viewer = lk_face_viewer_present (GTK_WINDOW (window), session, faces, 3, 0);
  lk_test_wait_for (viewer_loaded, viewer, "the face viewer loaded");
  assert_window_fits (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))), "viewer");

  assert_window_fits (GTK_WINDOW (lk_diagnostics_window_new (app)), "diagnostics");

  if (lk_export_dialog_available ())
    assert_window_fits (GTK_WINDOW (lk_export_dialog_new (GTK_WINDOW (window), session)), "export");
  const LkImportDialogSource sources[]
      = { LK_IMPORT_DIALOG_IMMICH, LK_IMPORT_DIALOG_PHOTOPRISM, LK_IMPORT_DIALOG_PHOTOS };
  const char *const source_names[] = { "import-immich", "import-photoprism", "import-photos" };
  for (guint k = 0; k < G_N_ELEMENTS (sources); k++)
    if (lk_import_dialog_available (sources[k]))
      assert_window_fits (GTK_WINDOW (lk_import_dialog_new (GTK_WINDOW (window), sources[k])),
                          source_names[k]);

  g_autoptr (LkTextureCache) cache = lk_texture_cache_new (0);
  assert_window_fits (GTK_WINDOW (lk_question_dialog_new (GTK_WINDOW (window), session, cache)),
                      "questions");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Done revealing or hiding. */
static gboolean
revealer_at_rest (gpointer revealer)
{
  return gtk_revealer_get_child_revealed (revealer) == gtk_revealer_get_reveal_child (revealer);
}

/* Not on screen, or no child sliding and, folded, only the page shown
 * on screen (folding slides the other one out). */
static gboolean
leaflet_at_rest (gpointer leaflet)
{
  g_autoptr (GtkSelectionModel) pages = adw_leaflet_get_pages (leaflet);
  guint mapped = 0;

  if (!gtk_widget_get_mapped (leaflet))
    return TRUE; /* the race page is shown */
  if (adw_leaflet_get_child_transition_running (leaflet))
    return FALSE;
  for (guint k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (pages)); k++)
    {
      g_autoptr (AdwLeafletPage) page = g_list_model_get_item (G_LIST_MODEL (pages), k);
      mapped += adw_leaflet_page_get_navigatable (page)
                && gtk_widget_get_mapped (adw_leaflet_page_get_child (page));
    }
  return !adw_leaflet_get_folded (leaflet) || mapped == 1;
}

/* The first widget of `type` at `widget` or below, or NULL. */
static GtkWidget *
find_descendant (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_descendant (child, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The diagnostics window laid out at `width` × `height`: its least width
 * fits, it was not grown past it, and every widget on screen has what it
 * asks for inside it, down into the parts that scroll up and down. */
static void
assert_diagnostics_laid_out (LkDiagnosticsWindow *diagnostics, const char *view, int width,
                             int height)
{
  GtkWidget *widget = GTK_WIDGET (diagnostics);
  int min_width;

  /* Laid out at its size, the gates and the cell fold (or unfold) and
   * slide: checked where they come to rest. */
  lk_test_wait_laid_out (widget, view);
  lk_test_wait_for (leaflet_at_rest, find_descendant (widget, ADW_TYPE_LEAFLET),
                    "the gates and the cell at rest");
  lk_test_wait_for (
      revealer_at_rest,
      find_descendant (find_descendant (widget, ADW_TYPE_VIEW_SWITCHER_BAR), GTK_TYPE_REVEALER),
      "the switcher bar shown or hidden");
  lk_test_wait_laid_out (widget, view);
  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
  g_test_message ("%s: at least %d wide, shown %d×%d", view, min_width,
                  gtk_widget_get_width (widget), gtk_widget_get_height (widget));
  if (min_width > width)
    dump_largest (widget, GTK_ORIENTATION_HORIZONTAL, 0);
  g_assert_cmpint (min_width, <=, width);
  g_assert_cmpint (gtk_widget_get_width (widget), <=, width);
  g_assert_cmpint (gtk_widget_get_height (widget), <=, height);
  g_assert_cmpuint (check_laid_out_scrolling (widget, widget, view), ==, 0);
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_autofree char *file = g_strdup_printf ("%s-%dx%d.png", view, width, height);
      g_autofree char *path = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), file, NULL);
      lk_test_save_screenshot (widget, path);
    }
}

/* The diagnostics window at 360 × 640, the HIG's narrowest, as the main
 * window's pages are: the speed gates (before a run and with a cell's
 * result shown) and the race page each give every widget what it asks
 * for, inside the window; the pages are switched from a bar at the bottom
 * once the header has no room for their switcher, and from the header at
 * 1280 × 720. It asked 635 pixels: the header's switcher and buttons, the
 * chart's 420, the run settings and the race page's fields in fixed rows. */
static void
test_diagnostics_laid_out_at_the_narrowest (void)
{
  const int sizes[][2] = { { NARROW_WIDTH, NARROW_HEIGHT }, { 1280, 720 } };
  guint n_gates;
  const LkGate *gates = lk_gates (&n_gates);

  g_assert_cmpuint (n_gates, >, 0);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      LkDiagnosticsWindow *diagnostics = lk_diagnostics_window_new (app);
      int width = sizes[s][0], height = sizes[s][1];
      gboolean narrow = width == NARROW_WIDTH;

      gtk_window_set_default_size (GTK_WINDOW (diagnostics), width, height);
      gtk_window_present (GTK_WINDOW (diagnostics));
      assert_diagnostics_laid_out (diagnostics, "diagnostics", width, height);
      GtkWidget *bar = find_descendant (GTK_WIDGET (diagnostics), ADW_TYPE_VIEW_SWITCHER_BAR);
      g_assert_nonnull (bar);
      g_assert_cmpint (adw_view_switcher_bar_get_reveal (ADW_VIEW_SWITCHER_BAR (bar)), ==, narrow);

      /* A cell's result: the verdict, its lines and the chart drawn. */
      g_autoptr (LkPairedTiming) timing = lk_paired_timing_new (20, 5, 7, LK_CLOCK_WALL);
      for (guint i = 0; i < 20; i++)
        lk_paired_timing_append (timing, 100.0, 150.0 + 10.0 * (i % 5), i % 2 == 0);
      g_assert_true (lk_diagnostics_window_show_timing (diagnostics, gates[0].name,
                                                        gates[0].cells[0].name, timing));
      assert_diagnostics_laid_out (diagnostics, "diagnostics-result", width, height);
      /* Folded, the result brings the cell on screen in the gates' place;
       * its back button (shown only then) brings the gates back. */
      GtkWidget *chart = GTK_WIDGET (lk_diagnostics_window_get_chart (diagnostics));
      GtkWidget *back = GTK_WIDGET (gtk_widget_get_template_child (
          GTK_WIDGET (diagnostics), LK_TYPE_DIAGNOSTICS_WINDOW, "back_button"));
      GtkWidget *leaflet = find_descendant (GTK_WIDGET (diagnostics), ADW_TYPE_LEAFLET);
      g_assert_true (gtk_widget_get_mapped (chart));
      g_assert_cmpint (gtk_widget_get_mapped (back), ==, narrow);
      if (narrow)
        {
          g_signal_emit_by_name (back, "clicked");
          lk_test_wait_for (leaflet_at_rest, leaflet, "the gates back");
          g_assert_false (gtk_widget_get_mapped (chart));
        }

      lk_diagnostics_window_show_race_page (diagnostics);
      assert_diagnostics_laid_out (diagnostics, "diagnostics-race", width, height);
      gtk_window_destroy (GTK_WINDOW (diagnostics));
    }
}

/* Each import dialog in a window 360 wide, the HIG's narrowest: its height,
 * least and natural, fits a 640-px screen. The Immich form's hints wrapped
 * there to about 700 px, the Import button off the screen's bottom; now the
 * form scrolls inside the dialog. */
static void
test_import_dialogs_fit_the_narrowest (void)
{
  LkWindow *window = open_at (NULL, SMALL_WIDTH, SMALL_HEIGHT);
  const LkImportDialogSource sources[]
      = { LK_IMPORT_DIALOG_IMMICH, LK_IMPORT_DIALOG_PHOTOPRISM, LK_IMPORT_DIALOG_PHOTOS };
  const char *const names[] = { "import-immich", "import-photoprism", "import-photos" };
  guint measured = 0;

  for (guint k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      if (!lk_import_dialog_available (sources[k]))
        continue;
      GtkWidget *dialog = GTK_WIDGET (lk_import_dialog_new (GTK_WINDOW (window), sources[k]));
      int min_width, min_height, natural_height;
      gtk_window_set_default_size (GTK_WINDOW (dialog), NARROW_WIDTH, -1);
      gtk_window_present (GTK_WINDOW (dialog));
      lk_test_wait_laid_out (dialog, names[k]);
      gtk_widget_measure (dialog, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
      gtk_widget_measure (dialog, GTK_ORIENTATION_VERTICAL, NARROW_WIDTH, &min_height,
                          &natural_height, NULL, NULL);
      g_test_message ("%s at %d wide: height at least %d, natural %d; least width %d; shown %d×%d",
                      names[k], NARROW_WIDTH, min_height, natural_height, min_width,
                      gtk_widget_get_width (dialog), gtk_widget_get_height (dialog));
      if (min_width > NARROW_WIDTH)
        dump_largest (dialog, GTK_ORIENTATION_HORIZONTAL, 0);
      g_assert_cmpint (min_width, <=, NARROW_WIDTH);
      g_assert_cmpint (min_height, <=, NARROW_HEIGHT);
      g_assert_cmpint (natural_height, <=, NARROW_HEIGHT);
      g_assert_cmpint (gtk_widget_get_height (dialog), <=, NARROW_HEIGHT);
      gtk_window_destroy (GTK_WINDOW (dialog));
      measured++;
    }
  g_assert_cmpuint (measured, >, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The diagnostics window and the import dialogs at 1280 × 720 and at
 * 360 × 640, for the screenshots only: each says the least width it asks. */
static void
test_other_windows_at_both_sizes (void)
{
  const int sizes[][2] = { { 1280, 720 }, { NARROW_WIDTH, NARROW_HEIGHT } };

  if (g_getenv ("LK_ADAPTIVE_SHOTS") == NULL)
    {
      g_test_skip ("screenshots only: set LK_ADAPTIVE_SHOTS");
      return;
    }
  LkWindow *window = open_at (NULL, SMALL_WIDTH, SMALL_HEIGHT);
  const LkImportDialogSource sources[]
      = { LK_IMPORT_DIALOG_IMMICH, LK_IMPORT_DIALOG_PHOTOPRISM, LK_IMPORT_DIALOG_PHOTOS };
  const char *const names[] = { "import-immich", "import-photoprism", "import-photos" };
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint k = 0; k <= G_N_ELEMENTS (sources); k++)
      {
        if (k < G_N_ELEMENTS (sources) && !lk_import_dialog_available (sources[k]))
          continue;
        GtkWindow *other = k < G_N_ELEMENTS (sources)
                               ? GTK_WINDOW (lk_import_dialog_new (GTK_WINDOW (window), sources[k]))
                               : GTK_WINDOW (lk_diagnostics_window_new (app));
        const char *name = k < G_N_ELEMENTS (sources) ? names[k] : "diagnostics";
        int min_width;
        gtk_window_set_default_size (other, sizes[s][0], sizes[s][1]);
        gtk_window_present (other);
        lk_test_wait_laid_out (GTK_WIDGET (other), name);
        gtk_widget_measure (GTK_WIDGET (other), GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL,
                            NULL, NULL);
        g_test_message ("%s asked %d×%d: least width %d, shown %d×%d", name, sizes[s][0],
                        sizes[s][1], min_width, gtk_widget_get_width (GTK_WIDGET (other)),
                        gtk_widget_get_height (GTK_WIDGET (other)));
        g_autofree char *file = g_strdup_printf ("%s-%dx%d.png", name, sizes[s][0], sizes[s][1]);
        g_autofree char *path = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), file, NULL);
        lk_test_save_screenshot (GTK_WIDGET (other), path);
        if (LK_IS_DIAGNOSTICS_WINDOW (other))
          {
            /* The race page before a race: its empty chart and fields. */
            lk_diagnostics_window_show_race_page (LK_DIAGNOSTICS_WINDOW (other));
            lk_test_wait_laid_out (GTK_WIDGET (other), "the race page");
            g_autofree char *race
                = g_strdup_printf ("diagnostics-race-%dx%d.png", sizes[s][0], sizes[s][1]);
            g_autofree char *race_path
                = g_build_filename (g_getenv ("LK_ADAPTIVE_SHOTS"), race, NULL);
            lk_test_save_screenshot (GTK_WIDGET (other), race_path);
          }
        gtk_window_destroy (other);
      }
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-adaptive-XXXXXX", NULL);
  library_dir = g_build_filename (tmp, "library", NULL);
  const char *make[]
      = { "make-sample", library_dir, "--faces", G_STRINGIFY (FACES), "--seed", "5", NULL };
  g_assert_cmpint (lk_test_run_cli_argv (make, NULL, NULL), ==, 0);
  app = GTK_APPLICATION (lk_application_new ());
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  g_application_hold (G_APPLICATION (app));

  g_test_add_func ("/ui-adaptive/every-page-laid-out-at-half-a-small-screen",
                   test_every_page_laid_out_at_half_a_small_screen);
  g_test_add_func ("/ui-adaptive/every-page-laid-out-at-the-narrowest",
                   test_every_page_laid_out_at_the_narrowest);
  g_test_add_func ("/ui-adaptive/diagnostics-laid-out-at-the-narrowest",
                   test_diagnostics_laid_out_at_the_narrowest);
  g_test_add_func ("/ui-adaptive/selection-hint-whole-at-the-first-size",
                   test_selection_hint_whole_at_the_first_size);
  g_test_add_func ("/ui-adaptive/loading-page-is-a-status-page",
                   test_loading_page_is_a_status_page);
  g_test_add_func ("/ui-adaptive/notifications-above-the-bars", test_notifications_above_the_bars);
  g_test_add_func ("/ui-adaptive/save-failure-is-one-line", test_save_failure_is_one_line);
  g_test_add_func ("/ui-adaptive/status-pages-are-adwaita-with-a-way-back",
                   test_status_pages_are_adwaita_with_a_way_back);
  g_test_add_func ("/ui-adaptive/header-is-adwaita", test_header_is_adwaita);
  g_test_add_func ("/ui-adaptive/other-windows-fit-half-a-small-screen",
                   test_other_windows_fit_half_a_small_screen);
  g_test_add_func ("/ui-adaptive/import-dialogs-fit-the-narrowest",
                   test_import_dialogs_fit_the_narrowest);
  g_test_add_func ("/ui-adaptive/dialogs-fit-half-a-small-screen",
                   test_dialogs_fit_half_a_small_screen);
  /* Screenshot tools, not tests: in the test list only when asked for. */
  if (g_getenv ("LK_ADAPTIVE_SHOTS") != NULL)
    {
      g_test_add_func ("/ui-adaptive/views-at-1280x720", test_views_at_1280x720);
      g_test_add_func ("/ui-adaptive/other-windows-at-both-sizes",
                       test_other_windows_at_both_sizes);
    }
  int status = g_test_run ();

  g_application_release (G_APPLICATION (app));
  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
