/* test-ui-keys — keys that must never make or lose a decision by accident, under Xvfb
 *
 * Issue 30 found two: in Review Suggestions the focus sat on Yes, so Space
 * (which the window advertises as "See Photo (Space)") recorded "Confirmed",
 * and after Ctrl+Z the undone question was gone from the queue; Ctrl+Q
 * destroyed the windows, skipping the question a close button asks when
 * decisions could not be saved (and the saving of the window's size). The
 * keys are pressed through the X server as a user presses them
 * (lk-test-keys.h), with the application's own accelerators: this test runs
 * the real LkApplication (app/lk-application.c is built into it).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "lk-application.h"
#include "lk-face-viewer.h"
#include "lk-person-chooser.h"
#include "lk-person-page.h"
#include "lk-screenshot.h"
#include "lk-session.h"
#include "lk-suggestions-page.h"
#include "lk-test-display.h"
#include "lk-test-keys.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window-private.h"
#include "people/lk-review-private.h"

#define FACES 400

static char *library_dir;
static GtkApplication *app;

static void shoot (LkWindow *window, const char *name);

static LkWindow *
open_window (int width, int height)
{
  LkWindow *window = lk_test_open_window (app, library_dir, width, height);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return NULL;
    }
  return window;
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

static gboolean
no_viewer (gpointer data)
{
  return find_viewer () == NULL;
}

static void
close_viewer (void)
{
  LkFaceViewer *viewer = find_viewer ();

  g_assert_nonnull (viewer);
  gtk_window_destroy (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))));
  lk_test_wait_for (no_viewer, NULL, "the viewer closed");
  g_assert_null (find_viewer ());
}

/* TRUE once the object behind the weak pointer at `data` is gone. */
static gboolean
is_gone (gpointer data)
{
  return *(gpointer *) data == NULL;
}

static gboolean
on_suggestions (gpointer window)
{
  return g_strcmp0 (lk_window_get_page (window), "suggestions") == 0;
}

static LkSuggestionsPage *
open_suggestions (LkWindow *window)
{
  LkSuggestionsPage *page = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));

  /* The first Ctrl+E after the window opened was lost twice in seven
   * loaded runs of the whole suite (the page stayed "people" for 5 minutes:
   * a press, not the shortcut — every later Ctrl+E of the file works), so a
   * press handled without leaving the people is made again, up to five
   * times; a shortcut that never works still fails here. */
  for (int tries = 0; tries < 5 && !on_suggestions (window); tries++)
    {
      if (tries > 0)
        g_test_message ("Ctrl+E pressed again (try %d): the last press was lost", tries + 1);
      lk_test_press (GTK_WIDGET (window), GDK_KEY_e, GDK_CONTROL_MASK);
    }
  g_assert_cmpstr (lk_window_get_page (window), ==, "suggestions");
  /* The sample has faces the grouping is unsure of: a question is shown. */
  g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, G_MAXUINT32);
  return page;
}

/* Ctrl+E, then Space: the photo, not "Confirmed" — and not from a focused
 * Yes or No either (a click leaves the focus there). */
static void
test_space_in_suggestions_sees_photo (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  LkSession *session = lk_window_get_session (window);
  g_assert_false (lk_session_can_undo (session));
  LkSuggestionsPage *page = open_suggestions (window);
  guint32 face = lk_suggestions_page_get_face (page);
  guint n_left = lk_suggestions_page_get_n_left (page);
  GtkWidget *yes = find_button (GTK_WIDGET (page), "suggest.confirm");
  GtkWidget *no = find_button (GTK_WIDGET (page), "suggest.reject");
  GtkWidget *photo = find_button (GTK_WIDGET (page), "suggest.photo");
  g_assert_nonnull (yes);
  g_assert_nonnull (no);
  g_assert_nonnull (photo);

  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  g_test_message ("focus on %s", focus != NULL ? G_OBJECT_TYPE_NAME (focus) : "nothing");
  g_assert_true (focus != yes && (focus == NULL || !gtk_widget_is_ancestor (focus, yes)));
  g_assert_true (focus != no && (focus == NULL || !gtk_widget_is_ancestor (focus, no)));

  g_assert_null (find_viewer ());
  lk_test_press (GTK_WIDGET (window), GDK_KEY_space, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_false (lk_session_can_undo (session));
  g_assert_cmpuint (lk_suggestions_page_get_face (page), ==, face);
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, n_left);
  g_assert_nonnull (find_viewer ());
  close_viewer ();

  /* The focus on Yes, then on No, as a click leaves it: Space is still the
   * photo. */
  GtkWidget *answers[] = { yes, no };
  for (guint k = 0; k < G_N_ELEMENTS (answers); k++)
    {
      g_assert_true (gtk_widget_grab_focus (answers[k]));
      lk_test_press (GTK_WIDGET (window), GDK_KEY_space, 0);
      lk_test_wait (lk_test_window_settled, window);
      g_assert_false (lk_session_can_undo (session));
      g_assert_cmpuint (lk_suggestions_page_get_face (page), ==, face);
      g_assert_nonnull (find_viewer ());
      close_viewer ();
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Escape leaves Review Suggestions for the people, as Back does, and
 * answers nothing; it did nothing there. */
static void
test_escape_leaves_suggestions (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  LkSession *session = lk_window_get_session (window);
  gboolean could_undo = lk_session_can_undo (session);
  open_suggestions (window);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_true (lk_session_can_undo (session) == could_undo);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The person whose tile in the grid has the keys, or NULL. */
static LkPersonItem *
focused_tile (LkWindow *window)
{
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));

  while (focus != NULL && gtk_widget_get_parent (focus) != grid)
    focus = gtk_widget_get_parent (focus);
  GtkWidget *tile = focus != NULL ? gtk_widget_get_first_child (focus) : NULL;
  GtkListItem *list_item
      = tile != NULL ? g_object_get_data (G_OBJECT (tile), "lk-list-item") : NULL;
  return list_item != NULL ? gtk_list_item_get_item (list_item) : NULL;
}

/* The keys are on a widget shown inside `within` (or on it), and GTK draws
 * its focus ring there: the window shows the focus and the widget has
 * :focus-visible, what the theme draws the ring for. */
static void
assert_focus_visible (LkWindow *window, GtkWidget *within, const char *step)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));

  g_test_message ("%s: the keys on %s (%s), focus %s", step,
                  focus != NULL ? G_OBJECT_TYPE_NAME (focus) : "nothing",
                  focus != NULL && GTK_IS_BUTTON (focus) ? gtk_button_get_label (GTK_BUTTON (focus))
                                                         : "-",
                  gtk_window_get_focus_visible (GTK_WINDOW (window)) ? "shown" : "not shown");
  g_assert_nonnull (focus);
  g_assert_true (gtk_widget_get_mapped (focus));
  g_assert_true (focus == within || gtk_widget_is_ancestor (focus, within));
  g_assert_true (gtk_window_get_focus_visible (GTK_WINDOW (window)));
  g_assert_true ((gtk_widget_get_state_flags (focus) & GTK_STATE_FLAG_FOCUS_VISIBLE) != 0);
}

typedef struct
{
  LkWindow *window;
  GtkWidget *within;
} KeysWithin;

static gboolean
keys_within (gpointer data)
{
  KeysWithin *in = data;
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (in->window));

  return gtk_window_is_active (GTK_WINDOW (in->window)) && focus != NULL
         && gtk_widget_get_mapped (focus)
         && (focus == in->within || gtk_widget_is_ancestor (focus, in->within));
}

static void
wait_focus_visible (LkWindow *window, GtkWidget *within, const char *step)
{
  KeysWithin in = { window, within };

  lk_test_wait_for (keys_within, &in, step);
  assert_focus_visible (window, within, step);
}

static gboolean
has_viewer (gpointer data)
{
  return find_viewer () != NULL;
}

/* The whole of Review Suggestions by keys alone, the focus drawn at every
 * step: Ctrl+E from the grid, Space for the photo and Escape to close it,
 * S to skip, Enter on "Review the Skipped Again", Y to answer, Ctrl+Z to
 * take it back, Escape to leave — to the grid with the keys on the tile
 * they left, or to the person page it was opened from. Escape led to the
 * grid's first tile (or wherever GTK put the keys) from either. */
static void
test_review_by_keyboard_alone (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  LkSession *session = lk_window_get_session (window);
  gboolean could_undo = lk_session_can_undo (session);
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  GtkWidget *page = lk_test_window_child (window, "suggestions_page");
  GtkWidget *person_page = lk_test_window_child (window, "person_page");
  GtkWidget *photo = find_button (page, "suggest.photo");

  /* On the grid, the keys moved to the second tile as a user moves them
   * (GTK draws the focus once a key has been pressed). */
  KeysWithin on_grid = { window, grid };
  lk_test_wait_for (keys_within, &on_grid, "the keys on the grid");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  LkPersonItem *tile = focused_tile (window);
  g_assert_nonnull (tile);
  g_autofree char *tile_id = g_strdup (lk_person_item_get_id (tile));
  g_autoptr (LkPersonItem) first = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  g_assert_cmpstr (tile_id, !=, lk_person_item_get_id (first));
  assert_focus_visible (window, grid, "Right on the grid");

  open_suggestions (window);
  guint32 face = lk_suggestions_page_get_face (LK_SUGGESTIONS_PAGE (page));
  wait_focus_visible (window, photo, "Review Suggestions opened by Ctrl+E");
  shoot (window, "keys-suggestions-opened");

  /* Space: the photo; Escape there closes it, the keys back on See Photo. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_space, 0);
  lk_test_wait_for (has_viewer, NULL, "the photo shown by Space");
  LkFaceViewer *viewer = find_viewer ();
  lk_test_wait_at_rest (GTK_WIDGET (viewer), "the photo on screen");
  lk_test_press (GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (viewer))), GDK_KEY_Escape, 0);
  lk_test_wait_for (no_viewer, NULL, "the photo closed by Escape");
  /* Xvfb has no window manager to give the window the X focus back from
   * the closed viewer (GTK draws no focus in an inactive window): as one. */
  gtk_window_present (GTK_WINDOW (window));
  g_assert_cmpstr (lk_window_get_page (window), ==, "suggestions");
  g_assert_cmpuint (lk_suggestions_page_get_face (LK_SUGGESTIONS_PAGE (page)), ==, face);
  wait_focus_visible (window, photo, "the photo closed");

  /* S skips: the next question, or the end offering the skipped ones
   * again, the keys on a way on. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_s, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_false (lk_session_can_undo (session) != could_undo);
  while (lk_suggestions_page_get_face (LK_SUGGESTIONS_PAGE (page)) != G_MAXUINT32)
    {
      wait_focus_visible (window, photo, "a question skipped");
      lk_test_press (GTK_WIDGET (window), GDK_KEY_s, 0);
      lk_test_wait (lk_test_window_settled, window);
    }
  GtkWidget *again = find_button (page, "suggest.review-skipped");
  wait_focus_visible (window, again, "every question skipped");
  shoot (window, "keys-suggestions-skipped");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  g_assert_cmpuint (lk_suggestions_page_get_face (LK_SUGGESTIONS_PAGE (page)), ==, face);
  wait_focus_visible (window, photo, "the skipped asked again by Enter");

  /* Y answers; Ctrl+Z asks again, the keys on See Photo. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_y, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session));
  wait_focus_visible (window, find_button (page, "win.back"), "answered by Y: nothing left");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session) == could_undo);
  g_assert_cmpuint (lk_suggestions_page_get_face (LK_SUGGESTIONS_PAGE (page)), ==, face);
  wait_focus_visible (window, photo, "the answer undone by Ctrl+Z");

  /* Escape: the grid, the keys on the tile they left. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  wait_focus_visible (window, grid, "Review Suggestions left by Escape");
  g_assert_nonnull (focused_tile (window));
  g_assert_cmpstr (lk_person_item_get_id (focused_tile (window)), ==, tile_id);

  /* Enter opens that person; Ctrl+E from there, and Escape comes back to
   * the person, the keys on the faces; Alt+← then to the grid. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  wait_focus_visible (window, person_page, "the person opened by Enter");
  open_suggestions (window);
  wait_focus_visible (window, photo, "Review Suggestions opened from the person");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  g_assert_cmpstr (lk_person_item_get_id (lk_person_page_get_person (LK_PERSON_PAGE (person_page))),
                   ==, tile_id);
  wait_focus_visible (window, person_page, "back on the person by Escape");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Left, GDK_ALT_MASK);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  wait_focus_visible (window, grid, "back on the grid by Alt+Left");
  g_assert_cmpstr (lk_person_item_get_id (focused_tile (window)), ==, tile_id);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Y answers and the next question shows; Ctrl+Z asks the undone one again;
 * Ctrl+Shift+Z passes it again. */
static void
test_undo_asks_again (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  LkSession *session = lk_window_get_session (window);
  LkSuggestionsPage *page = open_suggestions (window);
  guint32 first = lk_suggestions_page_get_face (page);
  guint n_left = lk_suggestions_page_get_n_left (page);

  /* The face is named by its place in its photo, not by the library's row
   * number ("Face 561"). */
  g_autofree char *described = lk_session_describe_face (session, first);
  g_autofree char *row_number = g_strdup_printf ("Face %u in", first);
  g_test_message ("face %u: %s", first, described);
  g_assert_true (g_str_has_prefix (described, "The face in ")
                 || (g_str_has_prefix (described, "Face ") && strstr (described, " of ") != NULL));
  g_assert_false (g_str_has_prefix (described, row_number));

  lk_test_press (GTK_WIDGET (window), GDK_KEY_y, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session));
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), <, n_left);
  g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, first);
  g_autofree char *answer = g_strdup (lk_window_get_toast (window));
  g_assert_nonnull (answer);

  lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_false (lk_session_can_undo (session));
  g_assert_cmpstr (lk_window_get_page (window), ==, "suggestions");
  g_assert_cmpuint (lk_suggestions_page_get_face (page), ==, first);
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, n_left);
  /* "Undone" says what: the answer's own words. */
  g_autofree char *undone = g_strdup_printf ("Undone: %s", answer);
  g_assert_cmpstr (lk_window_get_toast (window), ==, undone);

  lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session));
  g_autofree char *redone = g_strdup_printf ("Redone: %s", answer);
  g_assert_cmpstr (lk_window_get_toast (window), ==, redone);
  g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, first);
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), <, n_left);
  /* The library as it was, for the tests after this one. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  lk_test_wait (lk_test_window_settled, window);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The dialog asking before `window` closes, or NULL. */
static GtkWindow *
close_dialog (LkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) other = g_list_model_get_item (toplevels, k);
      if (ADW_IS_MESSAGE_DIALOG (other) && gtk_widget_get_visible (GTK_WIDGET (other))
          && gtk_window_get_transient_for (other) == GTK_WINDOW (window))
        return other;
    }
  return NULL;
}

static gboolean
no_close_dialog (gpointer window)
{
  return close_dialog (window) == NULL;
}

/* Clicks the dialog's button labelled `label`, as a user does: the dialog
 * answers and closes itself (adw_message_dialog_response () alone only
 * answers, and leaves the modal dialog up). */
static gboolean
click_response (GtkWidget *widget, const char *label)
{
  if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0)
    {
      g_signal_emit_by_name (widget, "clicked");
      return TRUE;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (click_response (child, label))
      return TRUE; /* the dialog may be gone: no more walking it */
  return FALSE;
}

/* A decision that could not be saved: Ctrl+Q asks, as the close button does,
 * and Cancel keeps the window; once saved, Ctrl+Q closes it and its size is
 * kept for the next start. */
static void
test_quit_asks_about_unsaved (void)
{
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_settings_reset (settings, "window-size");
  LkWindow *window = open_window (900, 640);

  if (window == NULL)
    return;
  LkSession *session = lk_window_get_session (window);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_session_get_people (session), 0);
  g_autoptr (GError) error = NULL;

  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  lk_review_inject_failure (LK_REVIEW_STEP_WRITE, EIO);
  /* A window's session saves on a worker: the failure comes later. */
  lk_session_rename (session, lk_person_item_get_id (item), "Unsaved", &error);
  g_clear_error (&error);
  lk_test_wait_committed (session);
  g_assert_true (lk_session_has_unsaved (session));

  lk_test_press (GTK_WIDGET (window), GDK_KEY_q, GDK_CONTROL_MASK);
  g_assert_nonnull (window);
  GtkWindow *ask = close_dialog (window);
  g_assert_nonnull (ask);
  g_assert_cmpstr (adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (ask)), ==,
                   "Save Your Decisions Before Closing?");
  g_assert_true (click_response (GTK_WIDGET (ask), "_Cancel"));
  lk_test_wait_for (no_close_dialog, window, "the close dialog gone after Cancel");
  g_assert_nonnull (window);
  g_assert_null (close_dialog (window));
  g_assert_true (lk_session_has_unsaved (session));

  /* Saved after all: Ctrl+Q closes at once, keeping the size. */
  g_assert_true (lk_session_retry_save (session, &error));
  g_assert_no_error (error);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_q, GDK_CONTROL_MASK);
  lk_test_wait_for (is_gone, &window, "the window closed by Ctrl+Q");
  g_assert_null (window);
  int width, height;
  g_settings_get (settings, "window-size", "(ii)", &width, &height);
  g_assert_cmpint (width, ==, 900);
  g_assert_cmpint (height, ==, 640);
}

/* A name typed into the person's name field without Enter is kept when the
 * window closes, as GNOME's entry rows keep an edit on focus-out: Ctrl+Q
 * (and the close button, the same close-request) commits it, and the
 * library opened again has it. It was dropped: nothing saved. */
static void
test_typed_name_survives_quit (void)
{
  LkWindow *window = open_window (900, 640);

  if (window == NULL)
    return;
  g_autoptr (LkSession) session = g_object_ref (lk_window_get_session (window));
  /* An unnamed person (another test may have named the first). */
  GListModel *people = lk_window_get_visible_people (window);
  g_autoptr (LkPersonItem) item = NULL;
  for (guint k = 0; k < g_list_model_get_n_items (people) && item == NULL; k++)
    {
      g_autoptr (LkPersonItem) person = g_list_model_get_item (people, k);
      if (lk_person_item_get_name (person) == NULL && !lk_person_item_is_unassigned (person))
        item = g_steal_pointer (&person);
    }
  g_assert_nonnull (item);
  g_autofree char *id = g_strdup (lk_person_item_get_id (item));

  lk_window_show_person (window, item);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  GtkWidget *name = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "name_label"));
  lk_test_wait_at_rest (name, "the person's name on screen");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_F2, 0);
  g_assert_true (gtk_editable_label_get_editing (GTK_EDITABLE_LABEL (name)));
  gtk_editable_set_text (GTK_EDITABLE (name), "");
  const guint keys[] = { GDK_KEY_H, GDK_KEY_e, GDK_KEY_d, GDK_KEY_y };
  for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
    lk_test_press (GTK_WIDGET (window), keys[k], keys[k] == GDK_KEY_H ? GDK_SHIFT_MASK : 0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (name)), ==, "Hedy");
  shoot (window, "person-name-typed");

  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_q, GDK_CONTROL_MASK);
  lk_test_wait_for (is_gone, &window, "the window closed by Ctrl+Q");
  g_assert_null (window);
  lk_test_wait_committed (session);
  g_assert_false (lk_session_has_unsaved (session));

  g_autoptr (LkSession) again = lk_session_new (library_dir);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_load (again, NULL, &error));
  g_assert_no_error (error);
  LkPersonItem *kept = lk_session_find_person (again, id);
  g_assert_nonnull (kept);
  g_assert_cmpstr (lk_person_item_get_name (kept), ==, "Hedy");
}

static const char *
search_text (LkWindow *window)
{
  return gtk_editable_get_text (GTK_EDITABLE (lk_test_window_child (window, "search_entry")));
}

static gboolean
search_off (gpointer bar)
{
  return !gtk_search_bar_get_search_mode (bar);
}

/* Waits for the search bar's reveal to end: an Escape pressed while it
 * slides in was lost (the search stayed on), which lk_test_press's old
 * 150 ms per key always outlasted. */
static void
wait_revealed (LkWindow *window)
{
  lk_test_wait_at_rest (lk_test_window_child (window, "search_entry"), "the search bar revealed");
}

static void
on_search_reported (GtkSearchEntry *entry, gpointer reported)
{
  *(gboolean *) reported = TRUE;
}

static gboolean
is_true (gpointer flag)
{
  return *(gboolean *) flag;
}

static void
type_search (LkWindow *window, const guint *keys, guint n)
{
  for (guint k = 0; k < n; k++)
    lk_test_press (GTK_WIDGET (window), keys[k], 0);
}

/* Ctrl+F, then letters: they go into the search, which narrows the grid. */
static void
test_ctrl_f_then_typing_searches (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  GtkSearchBar *bar = GTK_SEARCH_BAR (lk_test_window_child (window, "search_bar"));
  /* From the grid, where the keys are while one looks at people. Whether
   * the bar was revealed before the window settled its focus is a matter of
   * timing: several rounds (on the old code, one in three or so lost the
   * letters, the focus taken back to the grid). */
  for (guint round = 0; round < 8; round++)
    {
      g_assert_true (gtk_widget_grab_focus (lk_test_window_child (window, "people_grid")));
      lk_test_press (GTK_WIDGET (window), GDK_KEY_f, GDK_CONTROL_MASK);
      g_test_message ("round %u: page %s, search %s", round, lk_window_get_page (window),
                      gtk_search_bar_get_search_mode (bar) ? "on" : "off");
      g_assert_true (gtk_search_bar_get_search_mode (bar));
      wait_revealed (window);
      type_search (window, (const guint[]){ GDK_KEY_u, GDK_KEY_n }, 2);
      g_assert_cmpstr (search_text (window), ==, "un");
      lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
      lk_test_wait_for (search_off, bar, "Escape ending the search");
      g_assert_false (gtk_search_bar_get_search_mode (bar));
    }

  /* As fast as a typist: Ctrl+F and the letters in one go, GTK seeing them
   * only after the last. */
  GtkWidget *entry = lk_test_window_child (window, "search_entry");
  gboolean reported = FALSE;
  gulong id
      = g_signal_connect (entry, "search-changed", G_CALLBACK (on_search_reported), &reported);
  Display *x = gdk_x11_display_get_xdisplay (gtk_widget_get_display (GTK_WIDGET (window)));
  XGrabServer (x);
  XSetInputFocus (x, gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window))),
                  RevertToParent, CurrentTime);
  lk_test_fake (x, GDK_KEY_Control_L, TRUE);
  lk_test_fake (x, GDK_KEY_f, TRUE);
  lk_test_fake (x, GDK_KEY_f, FALSE);
  lk_test_fake (x, GDK_KEY_Control_L, FALSE);
  const guint letters[] = { GDK_KEY_a, GDK_KEY_d, GDK_KEY_a };
  for (guint k = 0; k < G_N_ELEMENTS (letters); k++)
    {
      lk_test_fake (x, letters[k], TRUE);
      lk_test_fake (x, letters[k], FALSE);
    }
  XUngrabServer (x);
  XSync (x, False);
  lk_test_wait_idle ("Ctrl+F and the letters handled");
  g_assert_true (gtk_search_bar_get_search_mode (bar));
  g_assert_cmpstr (search_text (window), ==, "ada");
  lk_test_wait_for (is_true, &reported, "the search entry reporting “ada”");
  g_signal_handler_disconnect (entry, id);
  wait_revealed (window);
  /* Escape leaves the search, and the grid has the keys again. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
  lk_test_wait_for (search_off, bar, "Escape ending the search");
  g_assert_false (gtk_search_bar_get_search_mode (bar));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Escape pressed right after Ctrl+F, the bar still sliding in: the search
 * ends. Both keys go in one go, so GTK handles the Escape before the
 * reveal has drawn a frame; that Escape was lost (the search stayed on). */
static void
test_escape_while_search_slides_in (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  GtkSearchBar *bar = GTK_SEARCH_BAR (lk_test_window_child (window, "search_bar"));
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  Display *x = gdk_x11_display_get_xdisplay (gtk_widget_get_display (GTK_WIDGET (window)));

  for (guint round = 0; round < 3; round++)
    {
      g_assert_true (gtk_widget_grab_focus (grid));
      XGrabServer (x);
      XSetInputFocus (x, gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window))),
                      RevertToParent, CurrentTime);
      lk_test_fake (x, GDK_KEY_Control_L, TRUE);
      lk_test_fake (x, GDK_KEY_f, TRUE);
      lk_test_fake (x, GDK_KEY_f, FALSE);
      lk_test_fake (x, GDK_KEY_Control_L, FALSE);
      lk_test_fake (x, GDK_KEY_Escape, TRUE);
      lk_test_fake (x, GDK_KEY_Escape, FALSE);
      XUngrabServer (x);
      XSync (x, False);
      lk_test_wait_idle ("Ctrl+F and Escape handled");
      g_test_message ("round %u: search %s", round,
                      gtk_search_bar_get_search_mode (bar) ? "on" : "off");
      lk_test_wait_for (search_off, bar, "Escape ending the search as it slid in");
      /* Not a search ended and begun again: it stays off. */
      lk_test_wait_laid_out (GTK_WIDGET (window), "the window after the search");
      g_assert_false (gtk_search_bar_get_search_mode (bar));
      wait_focus_visible (window, grid, "the search ended as it slid in");
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Typing on the grid starts a search with what was typed (GNOME's
 * type-to-search). */
static void
test_typing_on_the_grid_searches (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  GtkSearchBar *bar = GTK_SEARCH_BAR (lk_test_window_child (window, "search_bar"));
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  GtkWidget *filter = lk_test_window_child (window, "people_filter");

  /* As the library opened: the keys on the grid (they sat on the filter's
   * first button, where letters did nothing). */
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_true (focus == grid || gtk_widget_is_ancestor (focus, grid));
  g_assert_false (gtk_search_bar_get_search_mode (bar));
  type_search (window, (const guint[]){ GDK_KEY_u, GDK_KEY_n }, 2);
  g_assert_true (gtk_search_bar_get_search_mode (bar));
  g_assert_cmpstr (search_text (window), ==, "un");
  wait_revealed (window);
  shoot (window, "typed-search");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
  lk_test_wait_for (search_off, bar, "Escape ending the search");
  g_assert_false (gtk_search_bar_get_search_mode (bar));

  /* From the filter's buttons above the grid too. */
  g_assert_true (gtk_widget_child_focus (filter, GTK_DIR_TAB_FORWARD));
  type_search (window, (const guint[]){ GDK_KEY_x }, 1);
  g_assert_true (gtk_search_bar_get_search_mode (bar));
  g_assert_cmpstr (search_text (window), ==, "x");
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
chooser_shown (GtkMenuButton *button)
{
  GtkPopover *popover = gtk_menu_button_get_popover (button);

  return popover != NULL && gtk_widget_get_visible (GTK_WIDGET (popover));
}

/* The no-match line says the whole search (the entry reports a search
 * 150 ms after the last key, so a part of it may come first). */
static gboolean
says_qqzx (gpointer label)
{
  return gtk_widget_get_visible (label)
         && strstr (gtk_label_get_label (GTK_LABEL (label)), "qqzx") != NULL;
}

static gboolean
chooser_open (gpointer button)
{
  return chooser_shown (button);
}

static gboolean
chooser_closed (gpointer button)
{
  return !chooser_shown (button);
}

static gboolean
faces_focused (gpointer page)
{
  return gtk_widget_get_mapped (page) && lk_person_page_focus_faces (page);
}

static gboolean
focus_in_page (gpointer page)
{
  GtkWidget *focus = gtk_root_get_focus (gtk_widget_get_root (page));
  return focus != NULL && gtk_widget_get_mapped (focus) && gtk_widget_is_ancestor (focus, page);
}

static void
type_text (LkWindow *window, const char *text)
{
  for (const char *c = text; *c != '\0'; c++)
    lk_test_press (GTK_WIDGET (window), gdk_unicode_to_keyval ((guint32) *c), 0);
}

/* Ctrl+M on a person: the merge chooser. A search matching nobody says so
 * (not "No one looks like this person" over an empty list); Escape clears
 * the search, and Escape again closes the chooser — from the list too. */
static void
test_chooser_escape_and_no_match (void)
{
  LkWindow *window = open_window (0, 0);

  if (window == NULL)
    return;
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_window_show_person (window, item);
  lk_test_wait_for (faces_focused, page, "the person's faces shown and focused");
  GtkMenuButton *merge = GTK_MENU_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "merge_button"));

  for (guint round = 0; round < 3; round++)
    {
      /* Ctrl+M is the person page's binding: after the chooser closed, the
       * focus comes back into the page at GTK's pace. */
      lk_test_wait_for (focus_in_page, page, "the focus back in the person page");
      lk_test_press (GTK_WIDGET (window), GDK_KEY_m, GDK_CONTROL_MASK);
      lk_test_wait_for (chooser_open, merge, "the merge chooser shown by Ctrl+M");
      LkPersonChooser *chooser = LK_PERSON_CHOOSER (gtk_menu_button_get_popover (merge));
      g_assert_true (chooser_shown (merge));
      GtkWidget *search = lk_person_chooser_get_search (chooser);
      GtkWidget *no_match = lk_person_chooser_get_no_match (chooser);
      g_assert_false (gtk_widget_get_visible (no_match));

      type_text (window, "qqzx");
      lk_test_wait_for (says_qqzx, no_match, "the chooser saying no one matches “qqzx”");
      g_assert_true (gtk_widget_get_visible (no_match));
      g_assert_false (gtk_widget_get_visible (lk_person_chooser_get_notice (chooser)));
      g_assert_nonnull (strstr (gtk_label_get_label (GTK_LABEL (no_match)), "qqzx"));
      g_assert_cmpuint (g_list_model_get_n_items (lk_person_chooser_get_rows (chooser)), ==, 0);
      if (round == 0)
        {
          const char *dir = g_getenv ("LK_KEYS_SHOTS");
          g_autofree char *path
              = dir != NULL ? g_build_filename (dir, "chooser-no-match.png", NULL) : NULL;
          if (path != NULL)
            {
              lk_test_wait_at_rest (GTK_WIDGET (chooser), "the chooser at rest");
              g_autoptr (GError) error = NULL;
              g_assert_true (
                  lk_screenshot_save (GTK_WINDOW (window), GTK_WIDGET (chooser), path, &error));
            }
        }

      /* Escape: the search is cleared, the chooser stays. */
      lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
      g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (search)), ==, "");
      g_assert_false (gtk_widget_get_visible (no_match));
      g_assert_true (chooser_shown (merge));
      g_assert_cmpuint (g_list_model_get_n_items (lk_person_chooser_get_rows (chooser)), >, 0);

      /* Escape again (the second round from the list): closed. */
      if (round == 1)
        lk_test_press (GTK_WIDGET (window), GDK_KEY_Down, 0);
      lk_test_press (GTK_WIDGET (window), GDK_KEY_Escape, 0);
      lk_test_wait_for (chooser_closed, merge, "the merge chooser closed by Escape");
      g_assert_false (chooser_shown (merge));
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Screenshots of what the tests look at, into $LK_KEYS_SHOTS/NAME.png when
 * set (to look at them as a user would). */
static void
shoot (LkWindow *window, const char *name)
{
  const char *dir = g_getenv ("LK_KEYS_SHOTS");

  if (dir == NULL)
    return;
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  lk_test_wait_idle ("the thumbnails loaded");
  lk_test_wait_laid_out (GTK_WIDGET (window), "the window laid out for its screenshot");
  lk_test_save_screenshot (GTK_WIDGET (window), path);
}

static void
assert_apart (GtkWidget *a, GtkWidget *b, GtkWidget *window)
{
  graphene_rect_t ra, rb;

  g_assert_true (gtk_widget_compute_bounds (a, window, &ra));
  g_assert_true (gtk_widget_compute_bounds (b, window, &rb));
  g_test_message ("%s %.0f,%.0f %.0f×%.0f / %s %.0f,%.0f %.0f×%.0f", G_OBJECT_TYPE_NAME (a),
                  ra.origin.x, ra.origin.y, ra.size.width, ra.size.height, G_OBJECT_TYPE_NAME (b),
                  rb.origin.x, rb.origin.y, rb.size.width, rb.size.height);
  g_assert_false (graphene_rect_intersection (&ra, &rb, NULL));
}

/* A notification sits clear of the question's buttons, at 1280 × 720 and in
 * a half-screen window. */
static void
test_notification_leaves_the_answers_free (void)
{
  const int sizes[][2] = { { 1280, 720 }, { 640, 680 } };

  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      LkWindow *window = open_window (sizes[k][0], sizes[k][1]);

      if (window == NULL)
        return;
      LkSuggestionsPage *page = open_suggestions (window);
      /* An answer, and its undo: the question is back, under the
       * notification "Undone: …" (this sample has one question, so the
       * answer alone leaves none on screen). */
      lk_test_press (GTK_WIDGET (window), GDK_KEY_y, 0);
      lk_test_wait (lk_test_window_settled, window);
      lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK);
      lk_test_wait (lk_test_window_settled, window);
      g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, G_MAXUINT32);
      lk_test_wait_for (lk_test_toast_shown, window, "the notification “Undone: …”");
      g_assert_nonnull (lk_window_get_toast (window));
      GtkWidget *toast = lk_test_toast_widget (window);
      lk_test_wait_at_rest (toast, "the notification's slide over");
      const char *actions[]
          = { "suggest.reject", "suggest.photo", "suggest.skip", "suggest.confirm" };
      for (guint a = 0; a < G_N_ELEMENTS (actions); a++)
        assert_apart (toast, find_button (GTK_WIDGET (page), actions[a]), GTK_WIDGET (window));
      g_autofree char *name = g_strdup_printf ("suggestions-toast-%dx%d", sizes[k][0], sizes[k][1]);
      shoot (window, name);
      gtk_window_destroy (GTK_WINDOW (window));
    }
}

static void
measure_window (LkWindow *window, const char *page)
{
  GtkWidget *stack = lk_test_window_child (window, "stack");
  int min_w, min_h;

  g_assert_cmpstr (lk_window_get_page (window), ==, page);
  for (GtkWidget *child = gtk_widget_get_first_child (stack); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL, NULL);
      gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, -1, &min_h, NULL, NULL, NULL);
      g_test_message ("on %s, page %s: at least %d × %d", page,
                      gtk_stack_page_get_name (gtk_stack_get_page (GTK_STACK (stack), child)),
                      min_w, min_h);
    }
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL,
                      NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, -1, &min_h, NULL, NULL, NULL);
  g_test_message ("on %s, the window: at least %d × %d", page, min_w, min_h);
  g_assert_cmpint (min_w, <=, 640);
  g_assert_cmpint (min_h, <=, 680);
}

/* Half of a 1280 × 720 screen, side by side with another window: the window
 * must fit in 640 × 680 (a top bar takes the rest), every page laid out
 * for it (issue 30: nothing smaller than 813 × 650). */
static void
test_window_fits_half_a_small_screen (void)
{
  LkWindow *window = open_window (640, 680);

  if (window == NULL)
    return;
  /* Each page with what it shows: the suggestions page asking, a person's
   * page on its person. */
  open_suggestions (window);
  measure_window (window, "suggestions");
  shoot (window, "small-suggestions");
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  lk_window_show_person (window, item);
  lk_test_wait_laid_out (lk_test_window_child (window, "person_page"), "the person page shown");
  gtk_selection_model_select_range (
      lk_person_page_get_selection (LK_PERSON_PAGE (lk_test_window_child (window, "person_page"))),
      0, 2, TRUE);
  measure_window (window, "person");
  shoot (window, "small-person");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.back", NULL));
  lk_test_wait_laid_out (lk_test_window_child (window, "people_grid"), "the people shown again");
  measure_window (window, "people");
  shoot (window, "small-people");
  gtk_window_destroy (GTK_WINDOW (window));
}

typedef struct
{
  guint groups_of_one;
  gboolean escape;
  gboolean drag;
} ShortcutsSeen;

static void
walk_shortcuts (GtkWidget *widget, ShortcutsSeen *seen)
{
  if (GTK_IS_SHORTCUTS_GROUP (widget))
    {
      guint n = 0;
      for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
           c = gtk_widget_get_next_sibling (c))
        n += GTK_IS_SHORTCUTS_SHORTCUT (c);
      g_autofree char *title = NULL;
      g_object_get (widget, "title", &title, NULL);
      g_test_message ("group “%s”: %u shortcuts", title, n);
      seen->groups_of_one += n < 2;
    }
  if (GTK_IS_SHORTCUTS_SHORTCUT (widget))
    {
      g_autofree char *accelerator = NULL, *title = NULL, *subtitle = NULL;
      g_object_get (widget, "accelerator", &accelerator, "title", &title, "subtitle", &subtitle,
                    NULL);
      if (accelerator != NULL)
        {
          g_auto (GStrv) keys = g_strsplit (accelerator, " ", -1);
          for (guint k = 0; keys[k] != NULL; k++)
            seen->escape = seen->escape || g_str_equal (keys[k], "Escape");
        }
      seen->drag = seen->drag
                   || (subtitle != NULL && strstr (subtitle, "Drag") != NULL && title != NULL
                       && strstr (title, "move around") != NULL);
    }
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    walk_shortcuts (c, seen);
}

/* The shortcuts window (Ctrl+?) has no group of one entry, lists Escape
 * and the photo's drag to pan (issue 30: a "General" group of one, neither
 * listed); each of its sections, shown, lays out without a warning (fatal in
 * these tests): one section of two pages showed GTK 4.8's page switcher,
 * whose "1" and "2" labels reported a min width of -4 (-3 under
 * libadwaita), the two Gtk-WARNINGs. */
static void
test_shortcuts_window_complete (void)
{
  g_autoptr (GtkBuilder) builder
      = gtk_builder_new_from_resource (RESOURCE_PREFIX "/gtk/help-overlay.ui");
  GtkWidget *overlay = GTK_WIDGET (gtk_builder_get_object (builder, "help_overlay"));
  ShortcutsSeen seen = { 0, FALSE, FALSE };

  g_assert_nonnull (overlay);
  gtk_window_present (GTK_WINDOW (overlay));
  const char *sections[] = { "people", "person" };
  for (guint k = 0; k < G_N_ELEMENTS (sections); k++)
    {
      g_object_set (overlay, "section-name", sections[k], NULL);
      /* Laid out: a warning there is fatal. */
      lk_test_wait_laid_out (overlay, "the shortcuts section laid out");
      g_autofree char *shown = NULL;
      g_object_get (overlay, "section-name", &shown, NULL);
      g_assert_cmpstr (shown, ==, sections[k]);
      if (g_getenv ("LK_KEYS_SHOTS") != NULL)
        {
          g_autofree char *name = g_strdup_printf ("shortcuts-%s.png", sections[k]);
          g_autofree char *path = g_build_filename (g_getenv ("LK_KEYS_SHOTS"), name, NULL);
          lk_test_save_screenshot (overlay, path);
        }
    }
  walk_shortcuts (overlay, &seen);
  g_assert_cmpuint (seen.groups_of_one, ==, 0);
  g_assert_true (seen.escape);
  g_assert_true (seen.drag);
  gtk_window_destroy (GTK_WINDOW (overlay));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-keys-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces",
                                    G_STRINGIFY (FACES), "--seed", "5", NULL),
                   ==, 0);

  /* The application itself: its accelerators (Ctrl+E, Ctrl+Z, Ctrl+Q) and
   * its app.quit. Registered, not run: startup installs them. */
  app = GTK_APPLICATION (lk_application_new ());
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  /* The last window closing would otherwise end nothing here, but keep the
   * application alive between tests all the same. */
  g_application_hold (G_APPLICATION (app));
  g_test_add_func ("/ui-keys/space-in-suggestions-sees-photo",
                   test_space_in_suggestions_sees_photo);
  g_test_add_func ("/ui-keys/undo-asks-the-question-again", test_undo_asks_again);
  g_test_add_func ("/ui-keys/escape-leaves-suggestions", test_escape_leaves_suggestions);
  g_test_add_func ("/ui-keys/review-by-keyboard-alone", test_review_by_keyboard_alone);
  g_test_add_func ("/ui-keys/quit-asks-about-unsaved-decisions", test_quit_asks_about_unsaved);
  g_test_add_func ("/ui-keys/typed-name-survives-quit", test_typed_name_survives_quit);
  g_test_add_func ("/ui-keys/ctrl-f-then-typing-searches", test_ctrl_f_then_typing_searches);
  g_test_add_func ("/ui-keys/escape-while-search-slides-in", test_escape_while_search_slides_in);
  g_test_add_func ("/ui-keys/typing-on-the-grid-searches", test_typing_on_the_grid_searches);
  g_test_add_func ("/ui-keys/chooser-escape-and-no-match", test_chooser_escape_and_no_match);
  g_test_add_func ("/ui-keys/notification-leaves-the-answers-free",
                   test_notification_leaves_the_answers_free);
  g_test_add_func ("/ui-keys/shortcuts-window-complete", test_shortcuts_window_complete);
  g_test_add_func ("/ui-keys/window-fits-half-a-small-screen",
                   test_window_fits_half_a_small_screen);
  int status = g_test_run ();

  g_application_release (G_APPLICATION (app));
  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
