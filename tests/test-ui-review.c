/* test-ui-review — issue 30's review features on the person page and the
 * "Is this Ada?" dialog, under Xvfb
 *
 * Outliers first: a person of more than a screenful opens with the faces
 * least like the rest first (a wrong face planted from its look-alike is at
 * the top), a small one in the library's order, and the Order menu switches.
 * Not a Face: the selected faces leave the person, the unassigned entry's
 * Dismissed shows them, Bring Back returns them. "Is this Ada?": the
 * dialog's count is what is left, No is not asked again, Undo asks again,
 * Yes moves the face. Several people selected in the window's grid merge
 * into one, and one undo parts them again; the bar over the grid counts the
 * questions. LK_REVIEW_SCREENSHOTS=DIR saves the views at 1280 × 720.
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include "library/lk-sample.h"
#include "lk-clash-popover.h"
#include "lk-face-viewer.h"
#include "lk-person-chooser.h"
#include "lk-person-page.h"
#include "lk-question-dialog.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-keys.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#include "lk-tile.h"
#include "lk-window-private.h"

static char *tmp;

static void
screenshot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("LK_REVIEW_SCREENSHOTS");
  static GtkCssProvider *style;
  if (dir == NULL || dir[0] == '\0')
    return;
  /* Shot with the application's own stylesheet, as it is shown. */
  if (style == NULL)
    {
      style = gtk_css_provider_new ();
      gtk_css_provider_load_from_resource (style, RESOURCE_PREFIX "/style.css");
      gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                                  GTK_STYLE_PROVIDER (style),
                                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    }
  lk_test_wait_idle ("the thumbnails before a screenshot");
  lk_test_wait_laid_out (widget, name);
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  lk_test_save_screenshot (widget, path);
}

static char *
make_library (const char *name, gsize faces, LkSampleFamily family)
{
  g_autoptr (GError) error = NULL;
  char *folder = g_build_filename (tmp, name, NULL);
  LkSampleOptions options = LK_SAMPLE_OPTIONS_DEFAULT;
  options.faces = faces;
  options.dim = 64;
  options.seed = 7;
  options.family = family;
  options.photos = FALSE;
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  return folder;
}

static LkSession *
load (const char *folder)
{
  LkSession *session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

typedef struct
{
  GtkWidget *window;
  LkPersonPage *page;
  LkTextureCache *cache;
  char *toast;
} Page;

static void
on_toast (LkPersonPage *page, const char *message, gpointer data)
{
  Page *p = data;
  g_free (p->toast);
  p->toast = g_strdup (message);
}

static void
page_open (Page *p, LkSession *session)
{
  p->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (p->window), 1280, 720);
  p->page = g_object_new (LK_TYPE_PERSON_PAGE, NULL);
  p->cache = lk_texture_cache_new (0);
  p->toast = NULL;
  g_signal_connect (p->page, "toast", G_CALLBACK (on_toast), p);
  gtk_window_set_child (GTK_WINDOW (p->window), GTK_WIDGET (p->page));
  lk_person_page_set_session (p->page, session, p->cache);
  gtk_window_present (GTK_WINDOW (p->window));
}

static void
page_close (Page *p)
{
  gtk_window_destroy (GTK_WINDOW (p->window));
  g_object_unref (p->cache);
  g_free (p->toast);
}

static void
select_face (LkPersonPage *page, guint32 face)
{
  guint n;
  const guint32 *shown = lk_person_page_get_shown (page, &n);
  for (guint k = 0; k < n; k++)
    if (shown[k] == face)
      {
        gtk_selection_model_select_item (lk_person_page_get_selection (page), k, TRUE);
        return;
      }
  g_assert_not_reached ();
}

static guint
place_of (LkPersonPage *page, guint32 face)
{
  guint n;
  const guint32 *shown = lk_person_page_get_shown (page, &n);
  for (guint k = 0; k < n; k++)
    if (shown[k] == face)
      return k;
  g_assert_not_reached ();
}

/* A person of more than a screenful with three faces of its look-alike
 * moved in by mistake: outliers first shows them in the first row. */
static void
test_outliers_first (void)
{
  g_autofree char *folder = make_library ("order", 1200, LK_SAMPLE_FAMILY_LOOKALIKES);
  g_autoptr (LkSession) session = load (folder);
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  g_assert_cmpuint (people->people[0].n_faces, >, 40);
  g_autofree char *big = g_strdup (people->people[0].id);
  g_autofree float *centroids
      = lk_people_centroids (people, library->embeddings, library->dim, library->count);
  gsize best = 1;
  double best_cos = -2.0;
  for (gsize q = 1; q < people->n_people; q++)
    {
      double dot = 0.0;
      for (guint d = 0; d < library->dim; d++)
        dot += (double) centroids[d] * centroids[q * library->dim + d];
      if (people->people[q].n_faces > 3 && dot > best_cos)
        {
          best_cos = dot;
          best = q;
        }
    }
  const LkPerson *alike = &people->people[best];
  /* Three of its faces spread over it, none of a photo the big person (or
   * another of the three) has a face in. */
  g_autoptr (GHashTable) photos = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (gsize k = 0; k < people->people[0].n_faces; k++)
    g_hash_table_add (photos, (gpointer) &library->photo[people->people[0].faces[k]]);
  guint32 planted[3];
  guint n_planted = 0;
  for (gsize k = 0; k < alike->n_faces && n_planted < 3; k++)
    {
      guint32 f = alike->faces[(k * 7 + alike->n_faces / 4) % alike->n_faces];
      if (g_hash_table_contains (photos, &library->photo[f]))
        continue;
      g_hash_table_add (photos, (gpointer) &library->photo[f]);
      planted[n_planted++] = f;
    }
  g_assert_cmpuint (n_planted, ==, 3);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_move_faces (session, alike->id, planted, 3, big, NULL, &error));
  g_assert_no_error (error);

  Page p;
  page_open (&p, session);
  lk_person_page_show (p.page, lk_session_find_person (session, big));
  g_assert_true (lk_person_page_get_outliers_first (p.page));
  for (int k = 0; k < 3; k++)
    g_assert_cmpuint (place_of (p.page, planted[k]), <, 8);
  screenshot (p.window, "person-outliers-first");

  /* The same person in the window at 1280 × 720: what a screenful is (the
   * figure in README counts 40 faces: 10 columns × 4 whole rows). */
  if (g_getenv ("LK_REVIEW_SCREENSHOTS") != NULL)
    {
      LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
      lk_window_show_person (window, lk_session_find_person (lk_window_get_session (window), big));
      screenshot (GTK_WIDGET (window), "window-person-outliers-first");
      gtk_window_destroy (GTK_WINDOW (window));
    }

  /* The library's order on request: ascending faces, as before. */
  lk_person_page_set_outliers_first (p.page, FALSE);
  guint n;
  const guint32 *shown = lk_person_page_get_shown (p.page, &n);
  for (guint k = 1; k < n; k++)
    g_assert_cmpuint (shown[k - 1], <, shown[k]);
  g_assert_false (lk_person_page_get_outliers_first (p.page));

  /* A person that fits a screen opens in the library's order. */
  people = lk_session_peek_people (session); /* the move re-clustered */
  LkPersonItem *small = NULL;
  for (gsize k = 0; k < people->n_people && small == NULL; k++)
    if (people->people[k].n_faces > 2 && people->people[k].n_faces <= 40)
      small = lk_session_find_person (session, people->people[k].id);
  g_assert_nonnull (small);
  Page q;
  page_open (&q, session);
  lk_person_page_show (q.page, small);
  g_assert_false (lk_person_page_get_outliers_first (q.page));
  page_close (&q);
  page_close (&p);
}

/* Not a Face, then Dismissed on the unassigned entry, then Bring Back. */
static void
test_not_a_face (void)
{
  g_autofree char *folder = make_library ("dismiss", 400, LK_SAMPLE_FAMILY_PERSONAL);
  g_autoptr (LkSession) session = load (folder);
  const LkPeople *people = lk_session_peek_people (session);
  g_autofree char *id = g_strdup (people->people[0].id);
  guint n_before = (guint) people->people[0].n_faces;
  guint32 victim = people->people[0].faces[1];

  Page p;
  page_open (&p, session);
  lk_person_page_show (p.page, lk_session_find_person (session, id));
  select_face (p.page, victim);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (p.page), "person.dismiss", NULL));
  g_assert_cmpstr (p.toast, ==, "Dismissed 1 face: not a face");
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, id)), ==,
                    n_before - 1);
  gsize n_dismissed;
  const guint32 *dismissed = lk_session_dismissed_faces (session, &n_dismissed);
  g_assert_cmpuint (n_dismissed, ==, 1);
  g_assert_cmpuint (dismissed[0], ==, victim);

  /* The unassigned entry offers the dismissed faces, and brings one back. */
  lk_person_page_show (p.page, lk_session_find_person (session, LK_PERSON_ITEM_UNASSIGNED_ID));
  lk_person_page_show_dismissed (p.page, TRUE);
  guint n;
  const guint32 *shown = lk_person_page_get_shown (p.page, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (shown[0], ==, victim);
  screenshot (p.window, "dismissed-faces");
  select_face (p.page, victim);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (p.page), "person.undismiss", NULL));
  g_assert_cmpstr (p.toast, ==, "Brought back 1 face");
  lk_session_dismissed_faces (session, &n_dismissed);
  g_assert_cmpuint (n_dismissed, ==, 0);
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, id)), ==,
                    n_before);
  page_close (&p);
}

static gboolean
is_unassigned (LkSession *session, guint32 face)
{
  return lk_session_peek_people (session)->person_of[face] < 0;
}

/* Whether the session asks whether `face` is the person `id`. */
static gboolean
asks (LkSession *session, guint32 face, const char *id)
{
  g_autoptr (GArray) all = lk_session_questions (session, 0);
  for (guint k = 0; k < all->len; k++)
    {
      const LkQuestion *q = &g_array_index (all, LkQuestion, k);
      if (q->face == face && strcmp (lk_session_person_id (session, q->person), id) == 0)
        return TRUE;
    }
  return FALSE;
}

/* "Is this Ada?": the count is what is left; No is never asked again (the
 * face may then be asked about the next named person it is linked to:
 * links reach down to LK_QUESTION_BAR, and these are look-alikes); Undo
 * asks again; Yes moves the face into the person. */
static void
test_is_this_ada (void)
{
  g_autofree char *folder = make_library ("ada", 1200, LK_SAMPLE_FAMILY_LOOKALIKES);
  g_autoptr (LkSession) session = load (folder);
  g_autoptr (GError) error = NULL;
  /* Name everybody of 4 faces or more, so there is somebody to ask about. */
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  for (gsize k = 0; k < people->n_people; k++)
    if (people->people[k].n_faces >= 4)
      g_ptr_array_add (ids, g_strdup (people->people[k].id));
  for (guint k = 0; k < ids->len; k++)
    {
      g_autofree char *name = g_strdup_printf ("Person %u", k);
      g_assert_true (lk_session_rename (session, g_ptr_array_index (ids, k), name, &error));
    }
  guint total = lk_question_dialog_count (session);
  g_assert_cmpuint (total, >, 1);

  g_autoptr (LkTextureCache) cache = lk_texture_cache_new (0);
  GtkWidget *parent = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (parent), 1280, 720);
  gtk_window_present (GTK_WINDOW (parent));
  LkQuestionDialog *dialog = lk_question_dialog_new (GTK_WINDOW (parent), session, cache);
  gtk_window_present (GTK_WINDOW (dialog));
  g_assert_cmpuint (lk_question_dialog_get_n_left (dialog), ==, total);
  screenshot (GTK_WIDGET (dialog), "is-this-ada");

  guint32 first;
  g_autofree char *person = g_strdup (lk_question_dialog_get_person (dialog, &first));
  g_assert_nonnull (person);
  g_assert_true (asks (session, first, person));
  g_assert_true (lk_question_dialog_answer (dialog, FALSE));
  /* Synchronous session: the people have landed. */
  g_assert_false (asks (session, first, person));
  guint left = lk_question_dialog_count (session);
  g_test_message ("%u questions, %u after a No", total, left);
  g_assert_cmpuint (left, >=, total - 1);
  g_assert_cmpuint (left, <=, total);
  g_assert_cmpuint (lk_question_dialog_get_n_left (dialog), ==, left);
  guint32 next;
  const char *next_person = lk_question_dialog_get_person (dialog, &next);
  g_assert_false (next == first && g_strcmp0 (next_person, person) == 0);

  g_assert_true (lk_question_dialog_undo (dialog));
  g_assert_cmpuint (lk_question_dialog_get_n_left (dialog), ==, total);
  guint32 again;
  lk_question_dialog_get_person (dialog, &again);
  g_assert_cmpuint (again, ==, first);

  gboolean single = is_unassigned (session, first);
  g_assert_true (lk_question_dialog_answer (dialog, TRUE));
  LkPersonItem *named = lk_session_find_person (session, person);
  g_assert_nonnull (named);
  const guint32 *faces = lk_person_item_get_faces (named);
  gboolean in = FALSE;
  for (guint k = 0; k < lk_person_item_get_n_faces (named); k++)
    in = in || faces[k] == first;
  g_assert_true (in || !single);
  g_assert_false (asks (session, first, person));
  g_assert_cmpuint (lk_question_dialog_get_n_left (dialog), ==, lk_question_dialog_count (session));
  gtk_window_destroy (GTK_WINDOW (dialog));
  gtk_window_destroy (GTK_WINDOW (parent));
}

static gboolean
settled (gpointer window)
{
  return lk_test_window_settled (window);
}

/* The window's grid: three people selected (as Ctrl+click does), merged into
 * one by Merge Selected, and back in one Ctrl+Z; the bar over the grid says
 * how many questions are left and opens them. */
static void
test_merge_several_people (void)
{
  g_autofree char *folder = make_library ("merge", 600, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  LkSession *session = lk_window_get_session (window);
  g_assert_nonnull (session);
  GListModel *grid = G_LIST_MODEL (window->people_selection);
  guint n_before = lk_session_get_n_people (session);
  g_assert_cmpuint (g_list_model_get_n_items (grid), >, 4);

  /* Three people with no photo in common (two faces of one photo are never
   * one person: such a merge is refused, and says so). */
  const LkLibrary *library = lk_session_get_library (session);
  g_autoptr (GHashTable) photos = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint chosen[3], n_chosen = 0;
  for (guint k = 0; k < g_list_model_get_n_items (grid) && n_chosen < 3; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (grid, k);
      if (lk_person_item_is_unassigned (item))
        continue;
      const guint32 *f = lk_person_item_get_faces (item);
      gboolean clash = FALSE;
      for (guint m = 0; m < lk_person_item_get_n_faces (item) && !clash; m++)
        clash = g_hash_table_contains (photos, &library->photo[f[m]]);
      if (clash)
        continue;
      for (guint m = 0; m < lk_person_item_get_n_faces (item); m++)
        g_hash_table_add (photos, (gpointer) &library->photo[f[m]]);
      chosen[n_chosen++] = k;
    }
  g_assert_cmpuint (n_chosen, ==, 3);
  /* Select starts the selection mode (Ctrl+click too: ctrl-click-selects). */
  gtk_toggle_button_set_active (window->select_button, TRUE);
  g_assert_true (window->selecting);
  gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection), chosen[0],
                                   FALSE);
  gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection), chosen[1],
                                   FALSE);
  gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection), chosen[2],
                                   FALSE);
  g_assert_cmpstr (gtk_label_get_label (window->selection_label), ==, "3 people selected");
  screenshot (GTK_WIDGET (window), "grid-three-selected");
  g_autoptr (LkPersonItem) a = g_list_model_get_item (grid, chosen[0]);
  g_autoptr (LkPersonItem) b = g_list_model_get_item (grid, chosen[1]);
  g_autoptr (LkPersonItem) c = g_list_model_get_item (grid, chosen[2]);
  g_autofree char *ida = g_strdup (lk_person_item_get_id (a));
  g_autofree char *idb = g_strdup (lk_person_item_get_id (b));
  g_autofree char *idc = g_strdup (lk_person_item_get_id (c));
  guint faces = lk_person_item_get_n_faces (a) + lk_person_item_get_n_faces (b)
                + lk_person_item_get_n_faces (c);

  g_autoptr (GError) error = NULL;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.merge-selected", NULL));
  lk_test_wait (settled, window);
  g_test_message ("after the merge: %s", lk_window_get_toast (window));
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before - 2);
  guint found = 0;
  const char *ids[] = { ida, idb, idc };
  for (int k = 0; k < 3; k++)
    if (lk_session_find_person (session, ids[k]) != NULL)
      {
        found++;
        g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, ids[k])), ==,
                          faces);
      }
  g_assert_cmpuint (found, ==, 1);
  g_assert_false (window->selecting);
  screenshot (GTK_WIDGET (window), "grid-merged");

  /* One undo step brings the three back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  lk_test_wait (settled, window);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before);
  for (int k = 0; k < 3; k++)
    g_assert_nonnull (lk_session_find_person (session, ids[k]));

  /* The count over the grid is the session's questions: none before
   * anybody is named, some once the larger people are. */
  g_assert_cmpuint (lk_review_bar_get_count (window->review_bar), ==, 0);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->review_bar)));
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GPtrArray) named = g_ptr_array_new_with_free_func (g_free);
  for (gsize k = 0; k < people->n_people && named->len < 40; k++)
    g_ptr_array_add (named, g_strdup (people->people[k].id));
  for (guint k = 0; k < named->len; k++)
    {
      g_autofree char *name = g_strdup_printf ("Person %u", k);
      g_assert_true (lk_session_rename (session, g_ptr_array_index (named, k), name, &error));
      lk_test_wait (settled, window);
    }
  guint questions = lk_question_dialog_count (session);
  g_test_message ("%u questions after naming %u people", questions, named->len);
  g_assert_cmpuint (lk_review_bar_get_count (window->review_bar), ==, questions);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->review_bar)) == (questions > 0));
  screenshot (GTK_WIDGET (window), "grid-review-bar");
  if (g_getenv ("LK_REVIEW_SCREENSHOTS") != NULL)
    {
      /* As small as the window goes: the bars' labels shorten, nothing is cut. */
      gtk_window_set_default_size (GTK_WINDOW (window), 360, 360);
      gtk_toggle_button_set_active (window->select_button, TRUE);
      gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection), chosen[0],
                                       FALSE);
      screenshot (GTK_WIDGET (window), "grid-smallest");
      gtk_toggle_button_set_active (window->select_button, FALSE);
      lk_window_show_person (window, lk_session_find_person (session, ida));
      screenshot (GTK_WIDGET (window), "person-smallest");
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

typedef int (*FakeButton) (Display *display, unsigned int button, Bool is_press,
                           unsigned long delay);
typedef int (*FakeMotion) (Display *display, int screen, int x, int y, unsigned long delay);

/* The grid's tile at `position` (its children are the list items, in order). */
static GtkWidget *
grid_tile (GtkWidget *grid, guint position)
{
  guint k = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (grid); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *tile = gtk_widget_get_first_child (c);
      if (tile == NULL || !LK_IS_TILE (tile))
        continue;
      if (k++ == position)
        return tile;
    }
  return NULL;
}

/* A real click, with `mods` held, at the middle of `widget`: through the X
 * server (XTest), as a user's, the server held from focus to release. */
static gboolean
click (LkWindow *window, GtkWidget *widget, GdkModifierType mods)
{
  void *xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);
  if (xtst == NULL || !lk_test_keys_available (GTK_WIDGET (window)))
    return FALSE;
  FakeButton button = (FakeButton) dlsym (xtst, "XTestFakeButtonEvent");
  FakeMotion motion = (FakeMotion) dlsym (xtst, "XTestFakeMotionEvent");
  if (button == NULL || motion == NULL)
    return FALSE;
  graphene_point_t middle = GRAPHENE_POINT_INIT (gtk_widget_get_width (widget) / 2.0f,
                                                 gtk_widget_get_height (widget) / 2.0f),
                   at;
  g_assert_true (gtk_widget_compute_point (widget, GTK_WIDGET (window), &middle, &at));
  double sx, sy;
  gtk_native_get_surface_transform (GTK_NATIVE (window), &sx, &sy);
  Display *x = gdk_x11_display_get_xdisplay (gtk_widget_get_display (GTK_WIDGET (window)));
  Window xid = gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window)));
  int rx, ry;
  Window child;
  XTranslateCoordinates (x, xid, DefaultRootWindow (x), (int) (at.x + sx), (int) (at.y + sy), &rx,
                         &ry, &child);
  /* A click goes to the window under the pointer, not the focused one, and
   * the display tests share one Xvfb with no window manager: every window
   * sits at the top left. Raised first, or the click lands on another
   * test's window (it closed test-ui-keys' merge chooser once). */
  XGrabServer (x);
  XRaiseWindow (x, xid);
  XSetInputFocus (x, xid, RevertToParent, CurrentTime);
  motion (x, -1, rx, ry, CurrentTime);
  if (mods & GDK_CONTROL_MASK)
    lk_test_fake (x, GDK_KEY_Control_L, TRUE);
  if (mods & GDK_SHIFT_MASK)
    lk_test_fake (x, GDK_KEY_Shift_L, TRUE);
  button (x, 1, True, CurrentTime);
  button (x, 1, False, CurrentTime);
  if (mods & GDK_SHIFT_MASK)
    lk_test_fake (x, GDK_KEY_Shift_L, FALSE);
  if (mods & GDK_CONTROL_MASK)
    lk_test_fake (x, GDK_KEY_Control_L, FALSE);
  XUngrabServer (x);
  XSync (x, False);
  /* The events are this client's once XSync returns (as lk_test_press's). */
  lk_test_wait_idle ("the click handled");
  return TRUE;
}

static gboolean
has_third_tile (gpointer grid)
{
  return grid_tile (grid, 2) != NULL;
}

/* Ctrl+click and Shift+click on the grid select people (the first starts
 * the selection mode) instead of opening one; a plain click then opens
 * nobody either, until the mode ends. */
static void
test_ctrl_click_selects (void)
{
  g_autofree char *folder = make_library ("clicks", 300, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  lk_test_wait_for (has_third_tile, grid, "the grid's first three tiles");
  lk_test_wait_laid_out (grid, "the grid laid out");
  GtkWidget *first = grid_tile (grid, 0), *third = grid_tile (grid, 2);
  g_assert_nonnull (first);
  g_assert_nonnull (third);
  if (!click (window, first, GDK_CONTROL_MASK))
    {
      g_test_skip ("no XTest");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  g_assert_true (window->selecting);
  GtkSelectionModel *selection = GTK_SELECTION_MODEL (window->people_selection);
  g_assert_true (gtk_selection_model_is_selected (selection, 0));
  click (window, third, GDK_SHIFT_MASK);
  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  for (guint k = 0; k < 3; k++)
    g_assert_true (gtk_selection_model_is_selected (selection, k));
  g_assert_cmpstr (gtk_label_get_label (window->selection_label), ==, "3 people selected");
  /* Out of the mode, a click opens the person again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.select-none", NULL));
  g_assert_false (window->selecting);
  click (window, grid_tile (grid, 1), 0);
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The grid's position of person `id`, or -1. */
static gint
position_of (GListModel *grid, const char *id)
{
  for (guint k = 0; k < g_list_model_get_n_items (grid); k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (grid, k);
      if (g_strcmp0 (lk_person_item_get_id (item), id) == 0)
        return (gint) k;
    }
  return -1;
}

/* Merge Selected with two named people among the three selected asks who
 * stays (issue 30: it kept the named one of most faces and dropped the
 * other name unasked): the chooser lists exactly the selected, named first;
 * picking the smaller named person keeps its id and name with every face,
 * and one Ctrl+Z brings all three back, names included. On the old code the
 * merge went through at once, into the larger. */
/* `focus` is `widget` or inside it. */
static gboolean
in_widget (GtkWidget *focus, GtkWidget *widget)
{
  return focus != NULL && (focus == widget || gtk_widget_is_ancestor (focus, widget));
}

typedef struct
{
  GtkWidget *window;
  GtkWidget *widget;
} FocusWithin;

static gboolean
focus_within (gpointer data)
{
  const FocusWithin *in = data;
  return in_widget (gtk_root_get_focus (GTK_ROOT (in->window)), in->widget);
}

static gboolean
says_ada (gpointer search)
{
  return g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (search)), "ada") == 0;
}

static void
test_merge_selected_asks_who_stays (void)
{
  g_autofree char *folder = make_library ("keeper", 600, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  LkSession *session = lk_window_get_session (window);
  g_autoptr (GError) error = NULL;
  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return;
    }
  g_assert_nonnull (session);
  GListModel *grid = G_LIST_MODEL (window->people_selection);
  guint n_before = lk_session_get_n_people (session);

  /* Three people of no photo in common and of different sizes. */
  const LkLibrary *library = lk_session_get_library (session);
  g_autoptr (GHashTable) photos = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  guint sizes[3];
  for (guint k = 0; k < g_list_model_get_n_items (grid) && ids->len < 3; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (grid, k);
      if (lk_person_item_is_unassigned (item))
        continue;
      const guint32 *f = lk_person_item_get_faces (item);
      guint n = lk_person_item_get_n_faces (item);
      gboolean clash = ids->len > 0 && n == sizes[ids->len - 1];
      for (guint m = 0; m < n && !clash; m++)
        clash = g_hash_table_contains (photos, &library->photo[f[m]]);
      if (clash)
        continue;
      for (guint m = 0; m < n; m++)
        g_hash_table_add (photos, (gpointer) &library->photo[f[m]]);
      sizes[ids->len] = n;
      g_ptr_array_add (ids, g_strdup (lk_person_item_get_id (item)));
    }
  g_assert_cmpuint (ids->len, ==, 3);
  /* The grid is by size: ids[0] is the largest. "Bob" the larger named,
   * "Ada" the smaller, the third unnamed. */
  const char *bob = g_ptr_array_index (ids, 0), *ada = g_ptr_array_index (ids, 1);
  const char *third = g_ptr_array_index (ids, 2);
  guint big = MAX (sizes[0], sizes[1]), small = MIN (sizes[0], sizes[1]);
  if (sizes[1] > sizes[0])
    {
      bob = g_ptr_array_index (ids, 1);
      ada = g_ptr_array_index (ids, 0);
    }
  g_assert_cmpuint (big, >, small);
  g_assert_true (lk_session_rename (session, bob, "Bob", &error));
  g_assert_no_error (error);
  lk_test_wait (settled, window);
  g_assert_true (lk_session_rename (session, ada, "Ada", &error));
  g_assert_no_error (error);
  lk_test_wait (settled, window);

  gtk_toggle_button_set_active (window->select_button, TRUE);
  const char *picked[] = { bob, ada, third };
  for (int k = 0; k < 3; k++)
    {
      gint position = position_of (grid, picked[k]);
      g_assert_cmpint (position, >=, 0);
      gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection),
                                       (guint) position, FALSE);
    }
  g_assert_cmpstr (gtk_label_get_label (window->selection_label), ==, "3 people selected");

  /* Merge Selected asks, and merges nothing yet. The window has the
   * keyboard first (a Shift alone does nothing), as when a user clicks. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Shift_L, 0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.merge-selected", NULL));
  lk_test_wait (settled, window);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before);
  g_assert_nonnull (window->keeper_chooser);
  g_assert_true (gtk_widget_get_visible (window->keeper_chooser));
  GListModel *rows = lk_person_chooser_get_rows (LK_PERSON_CHOOSER (window->keeper_chooser));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 3);
  const char *expected[] = { bob, ada, third }; /* named first, then by faces */
  for (guint k = 0; k < 3; k++)
    {
      g_autoptr (LkPersonItem) row = g_list_model_get_item (rows, k);
      g_assert_cmpstr (lk_person_item_get_id (row), ==, expected[k]);
    }
  screenshot (GTK_WIDGET (window), "grid-who-stays");
  screenshot (window->keeper_chooser, "who-stays-chooser");

  /* Ada, the smaller, is picked as a user does: typed, then Enter (real
   * keys: a popover that never had the keyboard warns when it closes).
   * Typed faster than the search entry's delay, as a user may: Enter must
   * choose from what is typed, not from what the list was filtered for
   * (it failed once in a loaded suite run, Enter before the delay ran out). */
  GtkWidget *search = lk_person_chooser_get_search (LK_PERSON_CHOOSER (window->keeper_chooser));
  g_object_set (search, "search-delay", 60000, NULL);
  /* Until the keyboard is in the search entry. It asked whether the
   * entry's first child had the focus: that child is its search icon
   * (GTK 4.8), which never does, so this waited its whole 10 s every run. */
  FocusWithin in_search = { GTK_WIDGET (window), search };
  lk_test_wait_for (focus_within, &in_search, "the keyboard in the chooser's search");
  g_assert_true (in_widget (gtk_root_get_focus (GTK_ROOT (window)), search));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_a, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_d, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_a, 0);
  lk_test_wait_for (says_ada, search, "“ada” in the chooser's search");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (search)), ==, "ada");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Return, 0);
  lk_test_wait (settled, window);
  g_test_message ("after the merge: %s", lk_window_get_toast (window));
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before - 2);
  LkPersonItem *kept = lk_session_find_person (session, ada);
  g_assert_nonnull (kept);
  g_assert_cmpstr (lk_person_item_get_name (kept), ==, "Ada");
  g_assert_cmpuint (lk_person_item_get_n_faces (kept), ==, sizes[0] + sizes[1] + sizes[2]);
  g_assert_null (lk_session_find_person (session, bob));
  g_assert_null (lk_session_find_person (session, third));
  g_assert_nonnull (strstr (lk_window_get_toast (window), "Ada"));
  g_assert_false (window->selecting);

  /* One undo step: the three back, both names too. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  lk_test_wait (settled, window);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before);
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, bob)), ==, "Bob");
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, ada)), ==, "Ada");
  g_assert_nonnull (lk_session_find_person (session, third));

  /* With one named person among them nobody is asked: it stays. */
  gtk_toggle_button_set_active (window->select_button, TRUE);
  const char *two[] = { bob, third };
  for (int k = 0; k < 2; k++)
    gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection),
                                     (guint) position_of (grid, two[k]), FALSE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.merge-selected", NULL));
  lk_test_wait (settled, window);
  g_assert_false (gtk_widget_get_visible (window->keeper_chooser));
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before - 1);
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, bob)), ==, "Bob");
  g_assert_null (lk_session_find_person (session, third));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The button of `window` (or below it) whose action is `action`. */
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

/* The people `selection` holds, as "0 1 2". */
static char *
selected_positions (GtkSelectionModel *selection)
{
  g_autoptr (GtkBitset) set = gtk_selection_model_get_selection (selection);
  GString *text = g_string_new (NULL);
  GtkBitsetIter iter;
  guint position;

  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &position); ok;
       ok = gtk_bitset_iter_next (&iter, &position))
    g_string_append_printf (text, text->len > 0 ? " %u" : "%u", position);
  return g_string_free (text, FALSE);
}

/* The keyboard selects as clicks do (Shift+Right and Shift+End
 * greyed a run of tiles from wherever the pointer had rested, the bar did
 * not count them, an arrow key alone selected the tile it reached and
 * dropped the rest, and outside the selection mode a tile looked selected
 * after the arrows). Outside the mode arrows select nobody; in it,
 * Shift+Right selects from the focused person on and the bar counts them,
 * an arrow moves the focus and keeps the selection, Shift+End adds the run
 * to the last person, and the selected tiles show a check mark. */
static void
test_keyboard_selects (void)
{
  g_autofree char *folder = make_library ("keyboard", 300, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  if (!lk_test_keys_available (GTK_WIDGET (window)))
    {
      gtk_window_destroy (GTK_WINDOW (window));
      g_test_skip ("no X11 display or no libXtst: keys cannot be pressed");
      return;
    }
  GtkSelectionModel *selection = GTK_SELECTION_MODEL (window->people_selection);
  GtkWidget *grid = lk_test_window_child (window, "people_grid");
  guint n = g_list_model_get_n_items (G_LIST_MODEL (selection));
  g_assert_cmpuint (n, >, 12);

  /* Outside the selection mode an arrow moves the focus and selects nobody. */
  g_assert_true (gtk_widget_grab_focus (grid));
  FocusWithin in_grid = { GTK_WIDGET (window), grid };
  lk_test_wait_for (focus_within, &in_grid, "the keyboard on the grid");
  g_assert_true (in_widget (gtk_root_get_focus (GTK_ROOT (window)), grid));
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Left, 0);
  g_autofree char *outside = selected_positions (selection);
  g_assert_cmpstr (outside, ==, "");
  g_assert_false (window->selecting);

  gtk_toggle_button_set_active (window->select_button, TRUE);
  g_assert_true (window->selecting);
  g_assert_true (gtk_widget_grab_focus (grid));
  lk_test_wait_for (focus_within, &in_grid, "the keyboard on the grid again");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, GDK_SHIFT_MASK);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, GDK_SHIFT_MASK);
  g_autofree char *run = selected_positions (selection);
  g_test_message ("Shift+Right twice: %s; the bar says %s", run,
                  gtk_label_get_label (window->selection_label));
  g_assert_cmpstr (run, ==, "0 1 2");
  g_assert_cmpstr (gtk_label_get_label (window->selection_label), ==, "3 people selected");
  g_assert_true (gtk_widget_is_sensitive (find_button (GTK_WIDGET (window), "win.merge-selected")));
  g_assert_true (lk_tile_get_checked (LK_TILE (grid_tile (grid, 1))));
  g_assert_false (lk_tile_get_checked (LK_TILE (grid_tile (grid, 3))));
  screenshot (GTK_WIDGET (window), "grid-keyboard-selected");

  /* An arrow alone moves on and drops nobody; Shift+End then adds the run
   * from there to the last person. */
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  lk_test_press (GTK_WIDGET (window), GDK_KEY_Right, 0);
  g_autofree char *kept = selected_positions (selection);
  g_assert_cmpstr (kept, ==, "0 1 2");
  lk_test_press (GTK_WIDGET (window), GDK_KEY_End, GDK_SHIFT_MASK);
  g_autoptr (GtkBitset) all = gtk_selection_model_get_selection (selection);
  g_assert_cmpuint (gtk_bitset_get_size (all), ==, n - 1);
  g_assert_false (gtk_selection_model_is_selected (selection, 3));
  g_assert_true (gtk_selection_model_is_selected (selection, 4));
  g_assert_true (gtk_selection_model_is_selected (selection, n - 1));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The face viewer's window that is shown, or NULL. */
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

/* Merge Selected refused because two of the people selected are side by
 * side in one photo says so with the people's names and their two faces,
 * and offers the photo; it said "2009/IMG_0051.png holds two of these faces
 * (127 and 129)" in a notification, numbers a user never sees. */
static void
test_merge_refusal_names_the_people (void)
{
  g_autofree char *folder = make_library ("refusal", 600, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  LkSession *session = lk_window_get_session (window);
  const LkLibrary *library = lk_session_get_library (session);
  GListModel *grid = G_LIST_MODEL (window->people_selection);
  g_autoptr (GError) error = NULL;

  /* Two people with a photo in common. */
  g_autofree char *ida = NULL, *idb = NULL;
  guint n = g_list_model_get_n_items (grid);
  for (guint i = 0; i < n && ida == NULL; i++)
    for (guint j = i + 1; j < n && ida == NULL; j++)
      {
        g_autoptr (LkPersonItem) a = g_list_model_get_item (grid, i);
        g_autoptr (LkPersonItem) b = g_list_model_get_item (grid, j);
        if (lk_person_item_is_unassigned (a) || lk_person_item_is_unassigned (b))
          continue;
        const guint32 *fa = lk_person_item_get_faces (a), *fb = lk_person_item_get_faces (b);
        for (guint x = 0; x < lk_person_item_get_n_faces (a) && ida == NULL; x++)
          for (guint y = 0; y < lk_person_item_get_n_faces (b) && ida == NULL; y++)
            if (library->photo[fa[x]] == library->photo[fb[y]])
              {
                ida = g_strdup (lk_person_item_get_id (a));
                idb = g_strdup (lk_person_item_get_id (b));
              }
      }
  g_assert_nonnull (ida);
  g_assert_true (lk_session_rename (session, ida, "Ada Lovelace", &error));
  g_assert_no_error (error);
  lk_test_wait (settled, window);
  guint n_before = lk_session_get_n_people (session);

  gtk_toggle_button_set_active (window->select_button, TRUE);
  const char *both[] = { ida, idb };
  for (int k = 0; k < 2; k++)
    gtk_selection_model_select_item (GTK_SELECTION_MODEL (window->people_selection),
                                     (guint) position_of (grid, both[k]), FALSE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.merge-selected", NULL));
  lk_test_wait (settled, window);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_before);
  g_test_message ("notification: %s", lk_window_get_toast (window));
  /* No face numbers: no notification of the engine's words. */
  g_assert_null (lk_window_get_toast (window));
  g_assert_nonnull (window->clash_popover);
  g_assert_true (gtk_widget_get_visible (window->clash_popover));
  const char *text = lk_clash_popover_get_text (LK_CLASH_POPOVER (window->clash_popover));
  g_test_message ("the refusal: %s", text);
  g_assert_nonnull (strstr (text, "“Ada Lovelace”"));
  g_assert_nonnull (strstr (text, "an unnamed person"));
  const LkPhoto *photo = NULL;
  guint32 a, b;
  g_assert_true (lk_clash_popover_get_faces (LK_CLASH_POPOVER (window->clash_popover), &a, &b));
  g_assert_cmpuint (library->photo[a], ==, library->photo[b]);
  photo = lk_library_find_photo (library, library->photo[a]);
  g_assert_nonnull (photo);
  g_assert_nonnull (strstr (text, photo->path));
  screenshot (GTK_WIDGET (window), "grid-merge-refused");
  screenshot (window->clash_popover, "merge-refused-popover");

  /* Show Photo: the viewer, on the two faces' photo. */
  g_assert_null (find_viewer ());
  lk_clash_popover_view_photo (LK_CLASH_POPOVER (window->clash_popover));
  LkFaceViewer *viewer = find_viewer ();
  g_assert_nonnull (viewer);
  g_assert_false (gtk_widget_get_visible (window->clash_popover));
  gtk_window_destroy (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Not This Person's notification has Undo, as every other decision's has
 * (it had only Show): its button undoes the take-out, and Show, beside the
 * message, still opens the new person. */
static void
test_not_this_person_undo (void)
{
  g_autofree char *folder = make_library ("take-out", 300, LK_SAMPLE_FAMILY_PERSONAL);
  LkWindow *window = lk_test_open_window (NULL, folder, 1280, 720);
  LkSession *session = lk_window_get_session (window);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_window_get_visible_people (window), 0);
  g_autofree char *id = g_strdup (lk_person_item_get_id (item));
  guint n_faces = lk_person_item_get_n_faces (item);
  guint n_people = lk_session_get_n_people (session);
  g_assert_cmpuint (n_faces, >, 3);

  lk_window_show_person (window, item);
  LkPersonPage *page = LK_PERSON_PAGE (lk_test_window_child (window, "person_page"));
  lk_test_wait_laid_out (GTK_WIDGET (page), "the person page shown");
  guint n;
  lk_person_page_get_shown (page, &n);
  g_assert_cmpuint (n, ==, n_faces);
  gtk_selection_model_select_item (lk_person_page_get_selection (page), 0, TRUE);
  gtk_selection_model_select_item (lk_person_page_get_selection (page), 1, FALSE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "person.remove", NULL));
  lk_test_wait (settled, window);
  lk_test_wait (lk_test_toast_shown, window);
  g_test_message ("notification: %s", lk_window_get_toast (window));
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, id)), ==,
                    n_faces - 2);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_people + 1);
  screenshot (GTK_WIDGET (window), "not-this-person-toast");
  g_assert_nonnull (lk_test_toast_button (window, "_Undo"));
  GtkWidget *show = lk_test_toast_button (window, "_Show");
  g_assert_nonnull (show);

  /* Show opens the new person; the notification stays, Undo in it. */
  g_signal_emit_by_name (show, "clicked");
  g_assert_cmpstr (lk_window_get_page (window), ==, "person");
  g_assert_cmpstr (lk_person_item_get_id (lk_person_page_get_person (page)), !=, id);
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_person_page_get_person (page)), ==, 2);

  /* The notification's own button undoes: the two faces are back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toast-action", NULL));
  lk_test_wait (settled, window);
  g_assert_cmpuint (lk_person_item_get_n_faces (lk_session_find_person (session, id)), ==, n_faces);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_people);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);
  tmp = g_dir_make_tmp ("lk-ui-review-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", tmp, TRUE);
  g_test_add_func ("/ui-review/outliers-first", test_outliers_first);
  g_test_add_func ("/ui-review/not-a-face", test_not_a_face);
  g_test_add_func ("/ui-review/is-this-ada", test_is_this_ada);
  g_test_add_func ("/ui-review/merge-several-people", test_merge_several_people);
  g_test_add_func ("/ui-review/merge-selected-asks-who-stays", test_merge_selected_asks_who_stays);
  g_test_add_func ("/ui-review/ctrl-click-selects", test_ctrl_click_selects);
  g_test_add_func ("/ui-review/keyboard-selects", test_keyboard_selects);
  g_test_add_func ("/ui-review/not-this-person-undo", test_not_this_person_undo);
  g_test_add_func ("/ui-review/merge-refusal-names-the-people",
                   test_merge_refusal_names_the_people);
  int status = g_test_run ();
  lk_test_remove_tree (tmp);
  g_free (tmp);
  return status;
}
