/* test-ui-calibration — the window's part of issue 14, under Xvfb
 *
 * A library made with a calibration that does not fit its model (a dlib-like
 * sample with ArcFace's numbers: every pair a candidate) shows the guard
 * banner, whose Estimate button fits, saves and re-scans; Ctrl+Z takes the
 * calibration back like a decision, naming it; a library without any
 * calibration gets an estimate on first open; "Not This Person" makes the
 * faces a new person, and the notification's button goes there; after 50
 * decisions about who is who the window offers once to fit from them.
 *
 * LK_CALIBRATION_SCREENSHOTS=DIR saves the banner and the notifications as
 * PNGs there, to look at them as a user would.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "lk-face-item.h"
#include "lk-guard-banner.h"
#include "people/lk-person-item.h"
#include "lk-person-page.h"
#include "library/lk-sample.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-window.h"

static char *tmp;

static void
screenshot (LkWindow *window, const char *name)
{
  const char *dir = g_getenv ("LK_CALIBRATION_SCREENSHOTS");
  if (dir == NULL || dir[0] == '\0')
    return;
  lk_test_wait_drawn (GTK_WIDGET (window), window->cache, "the revealers and thumbnails settled");
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  lk_test_save_screenshot (GTK_WIDGET (window), path);
}

/* A fresh library in tmp/name: 600 faces of `model`; without a calibration
 * in library.json when `bare`. */
static char *
make_library (const char *name, LkSampleModel model, gboolean bare, gboolean thumbnails)
{
  g_autoptr (GError) error = NULL;
  char *folder = g_build_filename (tmp, name, NULL);
  LkSampleOptions options = { 600, 64, 5, thumbnails, model };
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  if (bare)
    {
      g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_file (parser, manifest, &error));
      g_assert_no_error (error);
      JsonNode *root = json_parser_get_root (parser);
      json_object_remove_member (json_node_get_object (root), "calibration");
      g_autoptr (JsonGenerator) generator = json_generator_new ();
      json_generator_set_root (generator, root);
      g_assert_true (json_generator_to_file (generator, manifest, &error));
      g_assert_no_error (error);
    }
  return folder;
}

static LkGuardBanner *
banner_of (LkWindow *window)
{
  return LK_GUARD_BANNER (lk_test_window_child (window, "guard_banner"));
}

static const char *
source_in_force (LkWindow *window)
{
  const char *source = NULL;
  g_assert_nonnull (lk_session_get_calibration (lk_window_get_session (window), &source));
  return source;
}

static void
wait_settled (LkWindow *window)
{
  lk_test_wait (lk_test_window_settled, window);
}

static void
test_guard_banner_estimate_and_undo (void)
{
  g_autofree char *folder = make_library ("dlib", LK_SAMPLE_MODEL_DLIB, FALSE, TRUE);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  LkGuardBanner *banner = banner_of (window);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_cmpstr (source_in_force (window), ==, "library");

  /* The banner: the guard's share, and why a fit from decisions cannot run. */
  const char *text = lk_guard_banner_get_text (banner);
  g_assert_nonnull (text);
  g_assert_true (g_str_has_prefix (text, "This calibration makes "));
  g_assert_nonnull (strstr (text, " % of pairs candidates: it does not fit this library's model"));
  /* It links to the help's page about it (opened by app.help-page: test-ui-help). */
  GtkLabel *label = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (banner), LK_TYPE_GUARD_BANNER, "label"));
  g_assert_nonnull (strstr (gtk_label_get_label (label), "<a href=\"calibration\">Learn More</a>"));
  const char *tooltip = NULL;
  g_assert_false (lk_guard_banner_can_fit_decisions (banner, &tooltip));
  g_assert_nonnull (strstr (tooltip, "too few"));
  g_assert_nonnull (strstr (tooltip, "they hold 0 pairs kept together and 0 faces taken out"));
  guint n_before = lk_session_get_n_people (lk_window_get_session (window));
  screenshot (window, "guard-banner");

  /* Estimate from This Library: a re-scan, the banner gone, the fit saved. */
  GtkWidget *estimate = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (banner), LK_TYPE_GUARD_BANNER, "estimate_button"));
  g_signal_emit_by_name (estimate, "clicked");
  g_assert_true (lk_window_is_busy (window));
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "estimate");
  g_assert_null (lk_guard_banner_get_text (banner));
  guint n_after = lk_session_get_n_people (lk_window_get_session (window));
  g_assert_cmpuint (n_after, >, n_before);
  g_autofree char *people
      = g_strdup_printf ("Calibration estimated from this library: %u people", n_after);
  g_assert_cmpstr (lk_window_get_toast (window), ==, people);
  g_autofree char *review_path = g_build_filename (folder, "review.json", NULL);
  g_autofree char *saved = NULL;
  g_assert_true (g_file_get_contents (review_path, &saved, NULL, NULL));
  g_assert_nonnull (strstr (saved, "\"source\":\"estimate\""));
  screenshot (window, "estimated-toast");

  /* Ctrl+Z takes it back like a decision, and says what came back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_true (lk_window_is_busy (window));
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "library");
  g_assert_nonnull (lk_guard_banner_get_text (banner));
  g_assert_true (g_str_has_prefix (lk_window_get_toast (window),
                                   "Calibration change undone: the library's own calibration "
                                   "is back ("));
  screenshot (window, "undo-toast");

  /* And Ctrl+Shift+Z brings it back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "estimate");
  g_assert_true (g_str_has_prefix (lk_window_get_toast (window),
                                   "Calibration change redone: the calibration estimated from "
                                   "this library is back ("));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_missing_calibration_estimated_on_open (void)
{
  g_autofree char *folder = make_library ("bare", LK_SAMPLE_MODEL_DLIB, TRUE, FALSE);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  wait_settled (window);

  g_assert_cmpstr (source_in_force (window), ==, "estimate");
  g_assert_null (lk_guard_banner_get_text (banner_of (window)));
  g_assert_true (g_str_has_prefix (lk_window_get_toast (window),
                                   "This library has no calibration for its model: one was "
                                   "estimated from its faces ("));
  /* Undone, the format's default shows what it does to this library, and
   * the notification names it: this library has no calibration of its own
   * to be "back" (issue 29). */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "library");
  g_assert_nonnull (lk_guard_banner_get_text (banner_of (window)));
  g_assert_true (g_str_has_prefix (lk_window_get_toast (window),
                                   "Calibration change undone: this library has no calibration "
                                   "of its own, so the format's default (made for ArcFace-like "
                                   "models) is in force ("));
  screenshot (window, "undo-default-toast");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The other direction of the guard (issue 29): a library calibrated for
 * dlib (p = 0.9 at cosine 1.02 here: no pair reaches it) but embedded
 * ArcFace-like is one "Unassigned faces" tile; the banner says why, with
 * the same way out. And a library whose estimate on open fails says so
 * and what to do, instead of showing 0 people as if all were well. */
static void
test_guard_banner_too_few (void)
{
  g_autofree char *folder = make_library ("too-few", LK_SAMPLE_MODEL_ARCFACE, FALSE, FALSE);
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (manifest, &text, NULL, NULL));
  char *b = strstr (text, "-10.5");
  g_assert_nonnull (b);
  memcpy (b, "-28.5", 5);
  g_assert_true (g_file_set_contents (manifest, text, -1, NULL));
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  wait_settled (window);
  const char *shown = lk_guard_banner_get_text (banner_of (window));
  g_assert_nonnull (shown);
  g_assert_true (g_str_has_prefix (shown, "This calibration makes nobody anybody's pair (0 of "));
  screenshot (window, "guard-banner-too-few");
  gtk_window_destroy (GTK_WINDOW (window));

  g_autofree char *strangers = g_build_filename (tmp, "strangers", NULL);
  lk_test_write_strangers (strangers, 400, 256, 0);
  window = lk_test_open_window (NULL, strangers, 1000, 700);
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "library");
  g_assert_true (g_str_has_prefix (lk_window_get_toast (window),
                                   "No calibration could be estimated from this library's faces: "
                                   "the format's default (made for ArcFace-like models) is in "
                                   "force."));
  g_assert_nonnull (lk_guard_banner_get_text (banner_of (window)));
  screenshot (window, "estimate-failed-toast");
  /* Estimate from This Library fails the same way: said in the window's
   * terms, nothing saved, the banner still there. */
  GtkWidget *estimate = GTK_WIDGET (gtk_widget_get_template_child (
      GTK_WIDGET (banner_of (window)), LK_TYPE_GUARD_BANNER, "estimate_button"));
  g_signal_emit_by_name (estimate, "clicked");
  wait_settled (window);
  const char *toast = lk_window_get_toast (window);
  g_assert_true (g_str_has_prefix (toast, "The estimate failed: "));
  g_assert_nonnull (strstr (toast, "The calibration in force is kept: confirm or merge a few "
                                   "people, take a face out of one, then use Fit from My "
                                   "Decisions"));
  g_assert_null (strstr (toast, "likeness-cli"));
  g_assert_cmpstr (source_in_force (window), ==, "library");
  g_assert_nonnull (lk_guard_banner_get_text (banner_of (window)));
  screenshot (window, "banner-estimate-failed-toast");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_not_this_person_goes_to_new_person (void)
{
  g_autofree char *folder = make_library ("arcface", LK_SAMPLE_MODEL_ARCFACE, FALSE, TRUE);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  g_assert_null (lk_guard_banner_get_text (banner_of (window)));

  GListModel *people = lk_window_get_visible_people (window);
  g_autoptr (LkPersonItem) person = g_list_model_get_item (people, 0);
  g_autofree char *id = g_strdup (lk_person_item_get_id (person));
  guint n_faces = lk_person_item_get_n_faces (person);
  g_assert_cmpuint (n_faces, >=, 4);
  lk_window_show_person (window, person);

  /* Two faces of two photos. */
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  GtkSelectionModel *selection = lk_person_page_get_selection (page);
  guint first = 0, second = G_MAXUINT;
  g_autoptr (GObject) a = g_list_model_get_item (G_LIST_MODEL (selection), first);
  guint32 face_a = lk_face_item_get_face (LK_FACE_ITEM (a));
  for (guint k = 1; k < g_list_model_get_n_items (G_LIST_MODEL (selection)) && second == G_MAXUINT;
       k++)
    {
      g_autoptr (GObject) b = g_list_model_get_item (G_LIST_MODEL (selection), k);
      if (library->photo[lk_face_item_get_face (LK_FACE_ITEM (b))] != library->photo[face_a])
        second = k;
    }
  g_assert_cmpuint (second, !=, G_MAXUINT);
  gtk_selection_model_select_item (selection, first, TRUE);
  gtk_selection_model_select_item (selection, second, FALSE);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "person.remove", NULL));
  wait_settled (window);
  const char *toast = lk_window_get_toast (window);
  g_assert_nonnull (toast);
  g_assert_cmpstr (toast, ==, "Took 2 faces out: a new person now");
  screenshot (window, "not-this-person-toast");

  /* Show, beside the message, goes to them: a person of exactly those two
   * faces (the notification's own button is Undo, as on every decision's). */
  lk_test_wait (lk_test_toast_shown, window);
  GtkWidget *show = lk_test_toast_button (window, "_Show");
  g_assert_nonnull (show);
  g_signal_emit_by_name (show, "clicked");
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  LkPersonItem *shown = lk_person_page_get_person (page);
  g_assert_cmpstr (lk_person_item_get_id (shown), !=, id);
  g_assert_cmpuint (lk_person_item_get_n_faces (shown), ==, 2);
  g_autofree char *new_id = g_strdup (lk_person_item_get_id (shown));

  /* Merging them back works. */
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_merge (session, id, new_id, &error));
  g_assert_no_error (error);
  wait_settled (window);
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, id)), ==, n_faces);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* 50 decisions about who is who, one of them "not this person". */
static void
decide_fifty (LkSession *session, guint n)
{
  g_autoptr (GError) error = NULL;
  const LkPeople *people = lk_session_peek_people (session);
  guint made = 0;
  for (gsize p = 0; p < people->n_people && made < n; p++)
    {
      const LkPerson *person = &people->people[p];
      for (gsize f = 0; f + 1 < person->n_faces && made < n; f++, made++)
        {
          g_assert_true (lk_session_confirm (session, person->id, person->faces[f], &error));
          g_assert_no_error (error);
        }
    }
  g_assert_cmpuint (made, ==, n);
}

static void
test_refit_offered_once (void)
{
  g_autofree char *folder = make_library ("refit", LK_SAMPLE_MODEL_ARCFACE, FALSE, FALSE);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  LkSession *session = lk_window_get_session (window);
  g_autoptr (GError) error = NULL;

  /* One face taken out, then confirmations up to 49: no offer yet. */
  const LkPerson *largest = &lk_session_peek_people (session)->people[0];
  guint32 out = largest->faces[largest->n_faces - 1];
  g_autofree char *largest_id = g_strdup (largest->id);
  g_assert_true (lk_session_remove_faces (session, largest_id, &out, 1, &error));
  g_assert_no_error (error);
  wait_settled (window);
  decide_fifty (session, 48);
  wait_settled (window);
  g_assert_cmpuint (lk_review_n_identity_decisions (lk_session_get_review (session)), ==, 49);
  const char *toast = lk_window_get_toast (window);
  g_assert_true (toast == NULL || strstr (toast, "fit the calibration") == NULL);

  /* The 50th: the offer. */
  decide_fifty (session, 1);
  wait_settled (window);
  g_assert_cmpstr (lk_window_get_toast (window), ==,
                   "You made 50 decisions about who is who: fit the calibration to them?");
  screenshot (window, "refit-toast");

  /* Not again for this library until 50 more, in this window or the next. */
  g_autoptr (GSettings) settings = g_settings_new (APP_ID);
  g_autoptr (GVariant) offered = g_settings_get_value (settings, "refit-offered");
  guint32 at = 0;
  g_assert_true (g_variant_lookup (offered, folder, "u", &at));
  g_assert_cmpuint (at, ==, 50);

  /* Fit: from the decisions, then the notification says so. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toast-action", NULL));
  wait_settled (window);
  g_assert_cmpstr (source_in_force (window), ==, "decisions");
  g_assert_true (
      g_str_has_prefix (lk_window_get_toast (window), "Calibration fitted to your decisions: "));
  g_assert_null (lk_guard_banner_get_text (banner_of (window)));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss", NULL));
  decide_fifty (session, 2);
  wait_settled (window);
  toast = lk_window_get_toast (window);
  g_assert_true (toast == NULL || strstr (toast, "fit the calibration") == NULL);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A merge that cannot succeed is not offered; one made anyway (the people
 * changed since the chooser opened) shows the two faces of one photo by
 * thumbnail, beside the button. */
static void
test_refused_merge_shows_faces (void)
{
  g_autofree char *folder = make_library ("clash", LK_SAMPLE_MODEL_ARCFACE, FALSE, TRUE);
  LkWindow *window = lk_test_open_window (NULL, folder, 1000, 700);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  const LkPerson *me = NULL, *other = NULL;
  guint32 a, b;
  for (gsize p = 0; p < people->n_people && other == NULL; p++)
    for (gsize q = 0; q < people->n_people && other == NULL; q++)
      if (p != q
          && lk_session_find_photo_clash (session, people->people[p].id, NULL, 0,
                                          people->people[q].id, &a, &b))
        me = &people->people[p], other = &people->people[q];
  g_assert_nonnull (other);
  g_autofree char *other_id = g_strdup (other->id);
  lk_window_show_person (window, lk_session_find_person (session, me->id));
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  GtkMenuButton *merge = GTK_MENU_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (page), LK_TYPE_PERSON_PAGE, "merge_button"));
  gtk_menu_button_popup (merge);
  GtkPopover *chooser = gtk_menu_button_get_popover (merge);
  g_assert_nonnull (chooser);
  gtk_popover_popdown (chooser);
  g_signal_emit_by_name (chooser, "chosen", other_id);

  guint32 shown_a, shown_b;
  g_assert_true (lk_person_page_get_clash (page, &shown_a, &shown_b));
  g_assert_cmpuint (library->photo[shown_a], ==, library->photo[shown_b]);
  g_assert_cmpuint (shown_a, !=, shown_b);
  /* No notification with face numbers instead. */
  g_assert_null (lk_window_get_toast (window));
  /* The popover is a surface of its own: its picture is taken apart. */
  const char *dir = g_getenv ("LK_CALIBRATION_SCREENSHOTS");
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (page));
       dir != NULL && child != NULL; child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_POPOVER (child) && gtk_widget_get_visible (child))
      {
        lk_test_wait_at_rest (child, "the merge chooser shown");
        lk_test_wait_drawn (child, window->cache, "the merge chooser drawn");
        g_autofree char *path = g_build_filename (dir, "refused-merge.png", NULL);
        lk_test_save_screenshot (child, path);
      }
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);
  /* The application's style (banners, notifications), as the app loads it. */
  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, RESOURCE_PREFIX "/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_autoptr (GError) error = NULL;
  tmp = g_dir_make_tmp ("test-ui-calibration-XXXXXX", &error);
  g_assert_no_error (error);

  g_test_add_func ("/ui-calibration/guard-banner-estimate-and-undo",
                   test_guard_banner_estimate_and_undo);
  g_test_add_func ("/ui-calibration/guard-banner-too-few", test_guard_banner_too_few);
  g_test_add_func ("/ui-calibration/missing-calibration-estimated-on-open",
                   test_missing_calibration_estimated_on_open);
  g_test_add_func ("/ui-calibration/not-this-person-goes-to-new-person",
                   test_not_this_person_goes_to_new_person);
  g_test_add_func ("/ui-calibration/refit-offered-once", test_refit_offered_once);
  g_test_add_func ("/ui-calibration/refused-merge-shows-faces", test_refused_merge_shows_faces);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (tmp);
  return status;
}
