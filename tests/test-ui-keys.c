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

static void
close_viewer (void)
{
  LkFaceViewer *viewer = find_viewer ();

  g_assert_nonnull (viewer);
  gtk_window_destroy (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))));
  lk_test_spin (100);
  g_assert_null (find_viewer ());
}

static LkSuggestionsPage *
open_suggestions (LkWindow *window)
{
  LkSuggestionsPage *page = LK_SUGGESTIONS_PAGE (lk_test_window_child (window, "suggestions_page"));

  lk_test_press (GTK_WIDGET (window), GDK_KEY_e, GDK_CONTROL_MASK);
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

  lk_test_press (GTK_WIDGET (window), GDK_KEY_y, 0);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session));
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), <, n_left);
  g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, first);

  lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_false (lk_session_can_undo (session));
  g_assert_cmpstr (lk_window_get_page (window), ==, "suggestions");
  g_assert_cmpuint (lk_suggestions_page_get_face (page), ==, first);
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), ==, n_left);

  lk_test_press (GTK_WIDGET (window), GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
  lk_test_wait (lk_test_window_settled, window);
  g_assert_true (lk_session_can_undo (session));
  g_assert_cmpuint (lk_suggestions_page_get_face (page), !=, first);
  g_assert_cmpuint (lk_suggestions_page_get_n_left (page), <, n_left);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The dialog asking before `window` closes, or NULL. */
static GtkWindow *
close_dialog (LkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) other = g_list_model_get_item (toplevels, k);
      if (GTK_IS_MESSAGE_DIALOG (other) && gtk_widget_get_visible (GTK_WIDGET (other))
          && gtk_window_get_transient_for (other) == GTK_WINDOW (window))
        return other;
    }
  G_GNUC_END_IGNORE_DEPRECATIONS
  return NULL;
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
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  g_autofree char *text = NULL;
  g_object_get (ask, "text", &text, NULL);
  g_assert_cmpstr (text, ==, "Save Your Decisions Before Closing?");
  gtk_dialog_response (GTK_DIALOG (ask), GTK_RESPONSE_CANCEL);
  G_GNUC_END_IGNORE_DEPRECATIONS
  lk_test_spin (100);
  g_assert_nonnull (window);
  g_assert_null (close_dialog (window));
  g_assert_true (lk_session_has_unsaved (session));

  /* Saved after all: Ctrl+Q closes at once, keeping the size. */
  g_assert_true (lk_session_retry_save (session, &error));
  g_assert_no_error (error);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_q, GDK_CONTROL_MASK);
  lk_test_spin (100);
  g_assert_null (window);
  int width, height;
  g_settings_get (settings, "window-size", "(ii)", &width, &height);
  g_assert_cmpint (width, ==, 900);
  g_assert_cmpint (height, ==, 640);
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
  g_test_add_func ("/ui-keys/quit-asks-about-unsaved-decisions", test_quit_asks_about_unsaved);
  int status = g_test_run ();

  g_application_release (G_APPLICATION (app));
  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
