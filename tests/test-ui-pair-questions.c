/* test-ui-pair-questions — "Help Likeness tell people apart", under Xvfb
 *
 * The primary menu's action opens the dialog over a library's people; its
 * pairs are answered through the dialog as a user would (the labels say
 * which) once a worker has chosen them, one answer is undone and given again, every answer lands in
 * review.json as a decision, and after the last pair the window fits the
 * calibration to them: the one in force then comes from "decisions".
 *
 * LK_PAIR_SCREENSHOT=FILE saves the dialog, with its first pair, as a PNG.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "library/lk-sample.h"
#include "lk-pair-dialog.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window.h"

static char *tmp;

static LkPairDialog *
find_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_PAIR_DIALOG (w))
        return LK_PAIR_DIALOG (w);
    }
  return NULL;
}

static guint
decisions_in_review_json (const char *folder)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  return json_array_get_length (json_object_get_array_member (root, "decisions"));
}

static gboolean
chosen (gpointer data)
{
  return !lk_pair_dialog_is_choosing (data);
}

static gboolean
cleared (gpointer data)
{
  return *(gpointer *) data == NULL;
}

static gboolean
fitted_from_decisions (gpointer data)
{
  LkWindow *window = data;
  const char *source = NULL;
  if (!lk_test_window_settled (window))
    return FALSE;
  lk_session_get_calibration (lk_window_get_session (window), &source);
  return g_strcmp0 (source, "decisions") == 0;
}

static void
test_answers_are_saved_and_fitted_from (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *folder = g_build_filename (tmp, "sample", NULL);
  LkSampleOptions options = { 600, 64, 5, TRUE, LK_SAMPLE_MODEL_ARCFACE };
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.ask-pairs", NULL));
  LkPairDialog *dialog = find_dialog ();
  g_assert_nonnull (dialog);
  /* The pairs are chosen on a worker: the dialog shows before they are. */
  g_assert_true (lk_pair_dialog_is_choosing (dialog));
  g_assert_false (lk_pair_dialog_answer (dialog, TRUE));
  lk_test_wait (chosen, dialog);

  guint32 a, b;
  guint position, total;
  g_assert_true (lk_pair_dialog_get_pair (dialog, &a, &b, &position, &total));
  g_assert_cmpuint (position, ==, 0);
  g_assert_cmpuint (total, ==, 20);
  const char *shot = g_getenv ("LK_PAIR_SCREENSHOT");
  if (shot != NULL && shot[0] != '\0')
    {
      lk_test_wait_drawn (GTK_WIDGET (dialog), window->cache, "the first pair drawn");
      lk_test_save_screenshot (GTK_WIDGET (dialog), shot);
    }

  const LkLibrary *library = lk_session_get_library (lk_window_get_session (window));
  /* The first answer is taken back and given again: the same pair returns. */
  g_assert_true (lk_pair_dialog_answer (dialog, FALSE));
  g_assert_true (lk_pair_dialog_undo (dialog));
  guint32 a2, b2;
  g_assert_true (lk_pair_dialog_get_pair (dialog, &a2, &b2, &position, NULL));
  g_assert_cmpuint (position, ==, 0);
  g_assert_cmpuint (a2, ==, a);
  g_assert_cmpuint (b2, ==, b);
  while (lk_pair_dialog_get_pair (dialog, &a, &b, &position, NULL))
    {
      if (position == 5)
        {
          lk_pair_dialog_skip (dialog);
          continue;
        }
      lk_pair_dialog_answer (dialog, g_strcmp0 (library->label[a], library->label[b]) == 0);
      lk_test_wait_committed (lk_window_get_session (window));
    }
  guint answers = lk_pair_dialog_get_n_answers (dialog);
  g_assert_cmpuint (answers, >=, 15);
  lk_test_wait (fitted_from_decisions, window);
  g_assert_cmpuint (decisions_in_review_json (folder), ==, answers);
  gtk_window_destroy (GTK_WINDOW (dialog));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Closed while the pairs are being chosen: the worker's result is dropped
 * (the dialog is finalized once it lands) and nothing is asked or decided. */
static void
test_closing_while_choosing_cancels (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *folder = g_build_filename (tmp, "closing", NULL);
  LkSampleOptions options = { 600, 64, 7, TRUE, LK_SAMPLE_MODEL_ARCFACE };
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.ask-pairs", NULL));
  LkPairDialog *dialog = find_dialog ();
  g_assert_nonnull (dialog);
  g_assert_true (lk_pair_dialog_is_choosing (dialog));
  gpointer watch = dialog;
  g_object_add_weak_pointer (G_OBJECT (dialog), &watch);
  gtk_window_close (GTK_WINDOW (dialog));
  lk_test_wait (cleared, &watch);
  g_assert_null (find_dialog ());
  g_assert_cmpuint (lk_review_n_decisions (lk_session_get_review (lk_window_get_session (window))),
                    ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);
  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, RESOURCE_PREFIX "/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-ui-pair-questions-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/ui-pair-questions/answers-are-saved-and-fitted-from",
                   test_answers_are_saved_and_fitted_from);
  g_test_add_func ("/ui-pair-questions/closing-while-choosing-cancels",
                   test_closing_while_choosing_cancels);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (tmp);
  return status;
}
