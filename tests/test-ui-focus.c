/* test-ui-focus — where the keyboard focus is after the window changes page, under Xvfb
 *
 * GTK delivers a key press to the focus widget and lets every ancestor's
 * controllers see it on the way, the window's shortcuts (Ctrl+F, F5, …)
 * among them. A focus widget that has left the window (a row of the recent
 * list, rebuilt when the list changed) or sits on a page no longer shown
 * takes the window out of that path: every shortcut stops until a click
 * moves the focus. GTK 4 has no public way to send a key press, so the tests
 * assert what the shortcuts need: the focus widget is mapped, inside the
 * window, on the page shown — and a re-scan keeps the page and the focus.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "lk-face-viewer.h"
#include "lk-person-chooser.h"
#include "people/lk-person-item.h"
#include "lk-person-page.h"
#include "lk-session.h"
#include "lk-import-dialog.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-keys.h"
#include "lk-test-util.h"
#include "lk-tile.h"
#include "lk-window-private.h"

#define FACES 400

static char *library_dir;

/* The focus is where a key press reaches the window's shortcuts, on `page`. */
static void
assert_focus_on (LkWindow *window, const char *page)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  GtkWidget *stack = lk_test_window_child (window, "stack");
  GtkWidget *shown = gtk_stack_get_child_by_name (GTK_STACK (stack), page);

  g_assert_cmpstr (lk_window_get_page (window), ==, page);
  g_assert_nonnull (focus);
  g_assert_true (gtk_widget_get_root (focus) == GTK_ROOT (window));
  g_assert_true (gtk_widget_get_mapped (focus));
  g_assert_true (focus == shown || gtk_widget_is_ancestor (focus, shown));
}

typedef struct
{
  LkWindow *window;
  const char *page;
} FocusOn;

/* TRUE once the focus is on a mapped widget of `page` (a FocusOn). */
static gboolean
focus_is_on (gpointer data)
{
  const FocusOn *on = data;
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (on->window));
  GtkWidget *stack = lk_test_window_child (on->window, "stack");
  GtkWidget *shown = gtk_stack_get_child_by_name (GTK_STACK (stack), on->page);

  return g_strcmp0 (lk_window_get_page (on->window), on->page) == 0 && focus != NULL
         && gtk_widget_get_mapped (focus)
         && (focus == shown || gtk_widget_is_ancestor (focus, shown));
}

/* Waits for the focus to settle on `page`, then asserts it is there. */
static void
wait_focus_on (LkWindow *window, const char *page)
{
  FocusOn on = { window, page };
  g_autofree char *what = g_strdup_printf ("the focus on the %s page", page);

  lk_test_wait_for (focus_is_on, &on, what);
  assert_focus_on (window, page);
}

/* The window's shortcuts are application accelerators (lk-application.c). */
static GtkApplication *app;

static LkWindow *
open_window (const char *folder)
{
  return lk_test_open_window (app, folder, 0, 0);
}

/* Ctrl+F opens the search bar: the key reached the window's shortcuts. */
static void
assert_shortcuts_work (LkWindow *window)
{
  GtkSearchBar *bar = GTK_SEARCH_BAR (lk_test_window_child (window, "search_bar"));

  g_assert_false (gtk_search_bar_get_search_mode (bar));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_f, GDK_CONTROL_MASK);
  g_assert_true (gtk_search_bar_get_search_mode (bar));
}

static gboolean
loaded (gpointer data)
{
  return lk_window_get_session (data) != NULL && !lk_window_is_busy (data);
}

static LkWindow *
empty_window_with_recent (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  const char *recent[] = { library_dir, NULL };

  g_settings_set_strv (settings, "recent-libraries", recent);
  LkWindow *window = lk_window_new (app);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window without a library shown");
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return NULL;
    }
  return window;
}

/* Enter on a row of the empty page's Recent Libraries. */
static void
test_recent_row_keeps_shortcuts (void)
{
  LkWindow *window = empty_window_with_recent ();

  if (window == NULL)
    return;
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (
      GTK_LIST_BOX (gtk_widget_get_template_child (lk_test_window_child (window, "empty_page"),
                                                   LK_TYPE_EMPTY_PAGE, "recent_list")),
      0);
  g_assert_true (gtk_widget_grab_focus (GTK_WIDGET (row)));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  lk_test_wait (loaded, window);
  wait_focus_on (window, "people");
  assert_shortcuts_work (window);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* F10, down to Recent Libraries, into it, down to the library, Enter: the
 * closing menu gives the focus back to the empty page, hidden by then. */
static void
test_recent_menu_keeps_shortcuts (void)
{
  LkWindow *window = empty_window_with_recent ();

  if (window == NULL)
    return;
  lk_test_press (GTK_WIDGET (window), GDK_KEY_F10, 0);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (gtk_menu_button_get_popover (
      GTK_MENU_BUTTON (lk_test_window_child (window, "menu_button"))))));
  /* Past Open Library… and the import entries this build has (an entry
   * whose action is missing is hidden) to Recent Libraries. */
  guint above = 1;
  above += lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS) ? 1 : 0;
  above += lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH) ? 1 : 0;
  above += lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOPRISM) ? 1 : 0;
  for (guint k = 0; k < above; k++)
    lk_test_press (GTK_WIDGET (window), GDK_KEY_Down, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Down, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  lk_test_wait (loaded, window);
  wait_focus_on (window, "people");
  assert_shortcuts_work (window);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_rescan_keeps_person_page_and_focus (void)
{
  LkWindow *window = open_window (library_dir);
  GListModel *people = lk_window_get_visible_people (window);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (people, 0);
  g_autofree char *id = g_strdup (lk_person_item_get_id (item));
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));

  lk_window_show_person (window, item);
  GtkWidget *faces = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "faces_grid"));
  lk_test_wait_laid_out (faces, "the person's faces shown");
  g_assert_true (gtk_widget_grab_focus (faces));
  gtk_selection_model_select_item (lk_person_page_get_selection (page), 1, TRUE);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.rescan", NULL));
  g_assert_true (lk_window_is_busy (window));
  lk_test_wait (lk_test_window_idle, window);
  wait_focus_on (window, "person");
  g_assert_true (gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (window)), faces)
                 || gtk_root_get_focus (GTK_ROOT (window)) == faces);
  g_assert_cmpstr (lk_person_item_get_id (lk_person_page_get_person (page)), ==, id);
  g_assert_true (gtk_root_get_focus (GTK_ROOT (window))
                 != lk_test_window_child (window, "open_button"));
  /* The selection survives too: the same faces, the same person. */
  g_assert_true (gtk_selection_model_is_selected (lk_person_page_get_selection (page), 1));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_chosen (LkPersonChooser *chooser, const char *id, gpointer data)
{
  g_free (*(char **) data);
  *(char **) data = g_strdup (id);
}

static void
on_any_chosen (LkPersonChooser *chooser, const char *id, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static gboolean
chooser_shown (GtkMenuButton *button)
{
  GtkPopover *popover = gtk_menu_button_get_popover (button);

  return popover != NULL && gtk_widget_get_visible (GTK_WIDGET (popover));
}

static gboolean
faces_focused (gpointer page)
{
  return gtk_widget_get_mapped (page) && lk_person_page_focus_faces (page);
}

static gboolean
is_chooser_shown (gpointer merge)
{
  return chooser_shown (merge);
}

static gboolean
chooser_searching (gpointer merge)
{
  if (!chooser_shown (merge))
    return FALSE;
  GtkWidget *search
      = lk_person_chooser_get_search (LK_PERSON_CHOOSER (gtk_menu_button_get_popover (merge)));
  GtkWidget *focus = gtk_root_get_focus (gtk_widget_get_root (merge));
  return focus != NULL && (focus == search || gtk_widget_is_ancestor (focus, search));
}

/* Ctrl+M: the merge chooser opens with the keyboard in its search entry and
 * no row chosen, so Enter alone merges nobody; Down, then Enter, merges the
 * most similar person, whose row says who they are. */
static void
test_merge_chooser_keyboard (void)
{
  LkWindow *window = open_window (library_dir);
  LkSession *session = lk_window_get_session (window);

  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return;
    }
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_window_show_person (window, item);
  /* Ctrl+M is the person page's binding: it reaches the page only from a
   * focus inside it. The faces take the focus once the page is shown, which
   * under load is later than any fixed delay: wait for it, and say so if it
   * never comes, rather than failing later on a chooser the key never
   * opened. */
  lk_test_wait_for (faces_focused, page, "the person's faces shown and focused");
  GtkWidget *before = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_nonnull (before);
  g_assert_true (gtk_widget_is_ancestor (before, GTK_WIDGET (page)));
  GtkMenuButton *merge = GTK_MENU_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "merge_button"));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_m, GDK_CONTROL_MASK);
  /* Until the chooser shows with the keyboard in its search (a fixed 200 ms
   * was too short for an ASan build beside two other display tests). */
  lk_test_wait_for (chooser_searching, merge, "the merge chooser shown, its search focused");

  LkPersonChooser *chooser = LK_PERSON_CHOOSER (gtk_menu_button_get_popover (merge));
  g_assert_nonnull (chooser);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (chooser)));
  const char *shot = g_getenv ("LK_CHOOSER_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_wait_idle ("the chooser's thumbnails");
      lk_test_wait_at_rest (GTK_WIDGET (chooser), "the chooser at rest");
      lk_test_save_screenshot (GTK_WIDGET (chooser), shot);
    }
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  GtkWidget *search = lk_person_chooser_get_search (chooser);
  g_assert_true (focus == search || gtk_widget_is_ancestor (focus, search));

  /* Rows say who they are: most similar first, unnamed by faces and years. */
  GListModel *rows = lk_person_chooser_get_rows (chooser);
  g_assert_cmpuint (g_list_model_get_n_items (rows), >, 1);
  g_autoptr (LkPersonItem) first = g_list_model_get_item (rows, 0);
  g_autofree char *first_id = g_strdup (lk_person_item_get_id (first));
  g_autofree char *title = NULL, *subtitle = NULL;
  lk_person_chooser_describe (chooser, first, &title, &subtitle);
  g_test_message ("first row: %s / %s", title, subtitle);
  g_assert_true (g_str_has_prefix (title, "Unnamed · "));
  g_assert_nonnull (strstr (title, " faces · 20"));
  g_assert_true (subtitle[0] == '\0' || strstr (subtitle, "% match") != NULL
                 || strstr (subtitle, "Looks alike") != NULL);

  /* Enter alone: nobody chosen. */
  g_autofree char *chosen = NULL;
  gboolean any = FALSE;
  g_signal_connect (chooser, "chosen", G_CALLBACK (on_chosen), &chosen);
  g_signal_connect (chooser, "chosen", G_CALLBACK (on_any_chosen), &any);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  g_assert_false (any);

  /* Down, Enter: the first row, chosen by the user. */
  if (!gtk_widget_get_visible (GTK_WIDGET (chooser)))
    gtk_menu_button_popup (merge);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Down, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  g_assert_true (any);
  g_assert_cmpstr (chosen, ==, first_id);
  while (lk_session_is_committing (session))
    g_main_context_iteration (NULL, TRUE);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The cosine between two people's mean faces, in doubles: the test's own
 * reckoning, not the engine's. */
static double
centroid_cosine (const LkLibrary *library, const LkPerson *a, const LkPerson *b)
{
  g_autofree double *ca = g_new0 (double, library->dim), *cb = g_new0 (double, library->dim);
  double dot = 0, na = 0, nb = 0;
  for (gsize f = 0; f < a->n_faces; f++)
    for (guint d = 0; d < library->dim; d++)
      ca[d] += lk_library_row (library, a->faces[f])[d];
  for (gsize f = 0; f < b->n_faces; f++)
    for (guint d = 0; d < library->dim; d++)
      cb[d] += lk_library_row (library, b->faces[f])[d];
  for (guint d = 0; d < library->dim; d++)
    {
      dot += ca[d] * cb[d];
      na += ca[d] * ca[d];
      nb += cb[d] * cb[d];
    }
  return dot / sqrt (na * nb);
}

static LkPersonChooser *
open_merge_chooser (LkWindow *window, const char *id)
{
  LkSession *session = lk_window_get_session (window);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_window_show_person (window, lk_session_find_person (session, id));
  lk_test_wait_laid_out (GTK_WIDGET (page), "the person page shown");
  GtkMenuButton *merge = GTK_MENU_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "merge_button"));
  gtk_menu_button_popup (merge);
  lk_test_wait_for (is_chooser_shown, merge, "the merge chooser shown");
  LkPersonChooser *chooser = LK_PERSON_CHOOSER (gtk_menu_button_get_popover (merge));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (chooser)));
  return chooser;
}

/* Issue 15: with no pair linking a person to anyone, the merge chooser
 * listed the rest by size ("Unnamed · 9 faces" first, whoever that was).
 * Now its first row is the person whose mean face is closest, and when
 * nobody is alike a line above the list says so; when someone is (faces
 * taken out of a person and offered back), the line is hidden. */
static void
test_merge_chooser_most_alike_first (void)
{
  LkWindow *window = open_window (library_dir);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  g_autofree char *id = NULL, *best_id = NULL;

  /* A person no pair links to anyone, whose most alike candidate is not the
   * largest one (size order would list it elsewhere than first). */
  for (gsize p = 0; p < people->n_people && id == NULL; p++)
    {
      g_autoptr (GArray) scores = NULL;
      g_autoptr (GPtrArray) offered
          = lk_session_merge_candidates (session, people->people[p].id, &scores);
      gboolean linked = FALSE;
      double best = -2;
      const LkPerson *best_person = NULL, *largest = NULL;
      for (guint k = 0; k < offered->len; k++)
        {
          const LkPerson *other
              = lk_people_find (people, lk_person_item_get_id (g_ptr_array_index (offered, k)));
          double cosine = centroid_cosine (library, &people->people[p], other);
          linked |= g_array_index (scores, LkCandidateScore, k).probability > 0;
          if (cosine > best)
            best = cosine, best_person = other;
          if (largest == NULL || other < largest) /* people are largest first */
            largest = other;
        }
      if (!linked && offered->len >= 2 && best_person != largest)
        {
          id = g_strdup (people->people[p].id);
          best_id = g_strdup (best_person->id);
          g_test_message ("%s: most alike %s (cos %.3f), largest %s", id, best_id, best,
                          largest->id);
        }
    }
  g_assert_nonnull (id);

  LkPersonChooser *chooser = open_merge_chooser (window, id);
  g_autoptr (LkPersonItem) first = g_list_model_get_item (lk_person_chooser_get_rows (chooser), 0);
  g_assert_cmpstr (lk_person_item_get_id (first), ==, best_id);
  /* The sample's people are far apart: nobody is alike, and the line says so. */
  GtkWidget *notice = lk_person_chooser_get_notice (chooser);
  g_assert_true (gtk_widget_get_visible (notice));
  g_autofree char *title = NULL, *subtitle = NULL;
  lk_person_chooser_describe (chooser, first, &title, &subtitle);
  g_assert_null (strstr (subtitle, "match"));
  g_assert_null (strstr (subtitle, "alike"));
  const char *shot = g_getenv ("LK_CHOOSER_ALIKE_SCREENSHOT");
  if (shot != NULL)
    {
      lk_test_wait_idle ("the chooser's thumbnails");
      lk_test_wait_at_rest (GTK_WIDGET (chooser), "the chooser at rest");
      lk_test_save_screenshot (GTK_WIDGET (chooser), shot);
    }
  gtk_popover_popdown (GTK_POPOVER (chooser));

  /* Half of a person's faces taken out: the rest is alike, offered first,
   * and the line is hidden. */
  const LkPerson *big = &people->people[0];
  g_autofree char *big_id = g_strdup (big->id);
  g_autoptr (GArray) half = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize f = 0; f < big->n_faces / 2; f++)
    g_array_append_val (half, big->faces[f]);
  g_autofree char *new_id = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_take_out_faces (session, big_id, (const guint32 *) half->data,
                                            half->len, &new_id, &error));
  g_assert_no_error (error);
  lk_test_wait_committed (session);
  /* Two halves of one person: their mean faces are a likely pair by the
   * calibration, whatever the pairs say. */
  g_autoptr (GArray) scores = NULL;
  g_autoptr (GPtrArray) offered = lk_session_merge_candidates (session, new_id, &scores);
  g_assert_cmpstr (lk_person_item_get_id (g_ptr_array_index (offered, 0)), ==, big_id);
  g_test_message ("halves: cosine %.3f, pair probability %.3f",
                  g_array_index (scores, LkCandidateScore, 0).cosine,
                  g_array_index (scores, LkCandidateScore, 0).probability);
  g_assert_true (g_array_index (scores, LkCandidateScore, 0).alike);
  for (guint k = 1; k < scores->len; k++)
    g_assert_false (g_array_index (scores, LkCandidateScore, k).alike);
  chooser = open_merge_chooser (window, new_id);
  g_autoptr (LkPersonItem) back = g_list_model_get_item (lk_person_chooser_get_rows (chooser), 0);
  g_assert_cmpstr (lk_person_item_get_id (back), ==, big_id);
  g_assert_false (gtk_widget_get_visible (lk_person_chooser_get_notice (chooser)));
  g_autofree char *title2 = NULL, *subtitle2 = NULL;
  lk_person_chooser_describe (chooser, back, &title2, &subtitle2);
  g_test_message ("taken out, first row: %s / %s", title2, subtitle2);
  g_assert_true (strstr (subtitle2, "% match") != NULL
                 || strstr (subtitle2, "Looks alike") != NULL);
  gtk_popover_popdown (GTK_POPOVER (chooser));
  gtk_window_destroy (GTK_WINDOW (window));
}

static LkFaceViewer *
find_viewer (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_FACE_VIEWER (gtk_window_get_child (w)) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return LK_FACE_VIEWER (gtk_window_get_child (w));
    }
  return NULL;
}

/* Space on a face opens the viewer (the grid would take Space to select);
 * → steps to the person's next face; Escape closes it. */
static void
test_space_opens_viewer (void)
{
  LkWindow *window = open_window (library_dir);

  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return;
    }
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_window_show_person (window, item);
  lk_test_wait_for (faces_focused, page, "the person's faces shown and focused");
  g_assert_true (lk_person_page_focus_faces (page));
  g_assert_null (find_viewer ());
  lk_test_press (GTK_WIDGET (window), GDK_KEY_space, 0);
  LkFaceViewer *viewer = find_viewer ();
  g_assert_nonnull (viewer);
  GtkWidget *viewer_window = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer)));
  guint index = lk_face_viewer_get_index (viewer);
  g_assert_cmpuint (index + 1, <, lk_person_item_get_n_faces (item));
  lk_test_press (viewer_window, GDK_KEY_Right, 0);
  g_assert_cmpuint (lk_face_viewer_get_index (viewer), ==, index + 1);
  lk_test_press (viewer_window, GDK_KEY_Escape, 0);
  g_assert_null (find_viewer ());
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The face whose tile holds the keyboard focus on `page`, or -1. */
static gint64
focused_face (LkWindow *window)
{
  for (GtkWidget *w = gtk_root_get_focus (GTK_ROOT (window)); w != NULL;
       w = gtk_widget_get_parent (w))
    {
      GtkWidget *tile = LK_IS_TILE (w) ? w : gtk_widget_get_first_child (w);
      if (tile != NULL && LK_IS_TILE (tile) && g_object_get_data (G_OBJECT (tile), "lk-face"))
        return GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (tile), "lk-face")) - 1;
    }
  return -1;
}

/* The person whose grid tile holds the keyboard focus, or NULL. */
static LkPersonItem *
focused_person (LkWindow *window)
{
  for (GtkWidget *w = gtk_root_get_focus (GTK_ROOT (window)); w != NULL;
       w = gtk_widget_get_parent (w))
    {
      GtkWidget *tile = LK_IS_TILE (w) ? w : gtk_widget_get_first_child (w);
      GtkListItem *list_item
          = tile != NULL ? g_object_get_data (G_OBJECT (tile), "lk-list-item") : NULL;
      if (list_item != NULL)
        return gtk_list_item_get_item (list_item);
    }
  return NULL;
}

typedef struct
{
  LkWindow *window;
  gint64 face;
} FaceFocus;

static gboolean
face_has_focus (gpointer data)
{
  const FaceFocus *on = data;
  return focused_face (on->window) == on->face;
}

typedef struct
{
  LkWindow *window;
  const char *id;
} PersonFocus;

static gboolean
person_has_focus (gpointer data)
{
  const PersonFocus *on = data;
  LkPersonItem *item = focused_person (on->window);
  return item != NULL && g_strcmp0 (lk_person_item_get_id (item), on->id) == 0;
}

/* Opened from the keyboard, a person's page has the focus on its first
 * face, so Space shows that face's photo (it landed on Hide or the Order
 * menu: Space hid the person or opened the menu); Back puts it on the
 * person one came from, not the grid's first. */
static void
test_person_focus_first_face_and_back (void)
{
  LkWindow *window = open_window (library_dir);

  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return;
    }
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  g_assert_true (gtk_widget_grab_focus (grid));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  LkPersonItem *chosen = focused_person (window);
  g_assert_nonnull (chosen);
  g_autofree char *id = g_strdup (lk_person_item_get_id (chosen));
  g_autoptr (LkPersonItem) first = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  g_assert_cmpstr (lk_person_item_get_id (first), !=, id);

  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  g_assert_cmpstr (lk_person_item_get_id (lk_person_page_get_person (page)), ==, id);
  guint n;
  const guint32 *shown = lk_person_page_get_shown (page, &n);
  g_assert_cmpuint (n, >, 1);
  FaceFocus on_first = { window, shown[0] };
  lk_test_wait_for (face_has_focus, &on_first, "the focus on the person's first face");
  g_test_message ("the focus is on %s",
                  G_OBJECT_TYPE_NAME (gtk_root_get_focus (GTK_ROOT (window))));
  g_assert_cmpint (focused_face (window), ==, shown[0]);
  /* Space sees the photo, and hides nobody. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_space, 0);
  LkFaceViewer *viewer = find_viewer ();
  g_assert_nonnull (viewer);
  g_assert_false (lk_person_item_get_hidden (lk_person_page_get_person (page)));
  lk_test_press (GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer))), GDK_KEY_Escape, 0);
  g_assert_null (find_viewer ());

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
  PersonFocus on_chosen = { window, id };
  lk_test_wait_for (person_has_focus, &on_chosen, "the focus back on the person one came from");
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  LkPersonItem *back = focused_person (window);
  g_assert_nonnull (back);
  g_assert_cmpstr (lk_person_item_get_id (back), ==, id);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-focus-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_getenv ("LK_FOCUS_LIBRARY") != NULL ? g_strdup (g_getenv ("LK_FOCUS_LIBRARY"))
                                                      : g_build_filename (tmp, "library", NULL);
  if (g_getenv ("LK_FOCUS_LIBRARY") == NULL)
    g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                      G_STRINGIFY (FACES), "--seed", "5", NULL),
                     ==, 0);

  app = gtk_application_new ("io.github.likeness.TestFocus", G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  gtk_application_set_accels_for_action (app, "win.search", (const char *[]){ "<Control>f", NULL });
  g_test_add_func ("/ui-focus/rescan-keeps-person-page-and-focus",
                   test_rescan_keeps_person_page_and_focus);
  g_test_add_func ("/ui-focus/merge-chooser-keyboard", test_merge_chooser_keyboard);
  g_test_add_func ("/ui-focus/merge-chooser-most-alike-first", test_merge_chooser_most_alike_first);
  g_test_add_func ("/ui-focus/space-opens-viewer", test_space_opens_viewer);
  g_test_add_func ("/ui-focus/person-focus-first-face-and-back",
                   test_person_focus_first_face_and_back);
  g_test_add_func ("/ui-focus/recent-row-keeps-shortcuts", test_recent_row_keeps_shortcuts);
  g_test_add_func ("/ui-focus/recent-menu-keeps-shortcuts", test_recent_menu_keeps_shortcuts);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
