/* test-ui-import — Import from Immich… / PhotoPrism… / Add a Photo Folder…
 * through the window,
 * under Xvfb
 *
 * PhotoPrism end to end: the window's action opens the dialog, the dialog
 * imports the SQLite index lk-test-photoprism.c writes, and the new library
 * opens in the window with the people named in the source. Immich: a URL
 * whose server refuses shows the importer's own message (without the
 * password), and Cancel while the importer waits for a server that never
 * answers leaves no output folder, not even the parents the dialog made.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lk-import-dialog.h"
#include "detect/lk-detect-dlib.h"
#include "import/lk-import-photos.h"
#include "library/lk-library.h"
#include "people/lk-person-item.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"
#include "lk-test-window.h"
#ifdef LK_TEST_PHOTOPRISM
#include "lk-test-photoprism.h"
#endif

static gboolean
import_done (gpointer data)
{
  return !lk_import_dialog_is_running (data);
}

static gboolean
pointer_cleared (gpointer data)
{
  return *(gpointer *) data == NULL;
}

/* The import dialog the window opened (the one toplevel of its type). */
static LkImportDialog *
find_dialog (LkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* not ours */
  LkImportDialog *found = NULL;

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, k);
      if (LK_IS_IMPORT_DIALOG (w))
        {
          g_assert_null (found);
          found = LK_IMPORT_DIALOG (w);
        }
    }
  g_assert_nonnull (found);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (found)) == GTK_WINDOW (window));
  g_assert_true (gtk_window_get_modal (GTK_WINDOW (found)));
  return found;
}

static LkImportDialog *
open_dialog (LkWindow *window, const char *action, LkImportDialogSource source)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), action, NULL));
  LkImportDialog *dialog = find_dialog (window);
  g_assert_cmpint (lk_import_dialog_get_source (dialog), ==, source);
  return dialog;
}

/* Nothing in `folder` but what the test put there: no library, no
 * .NAME.importing-XXXXXX left beside it. */
static void
assert_empty (const char *folder)
{
  g_autoptr (GDir) dir = g_dir_open (folder, 0, NULL);
  g_assert_nonnull (dir);
  const char *name = g_dir_read_name (dir);
  g_assert_cmpstr (name, ==, NULL);
}

#ifdef LK_TEST_PHOTOPRISM
static void
test_photoprism_imports_and_opens (void)
{
  LkTestPhotoprism fx;
  lk_test_photoprism_init (&fx, FALSE);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");

  LkImportDialog *dialog
      = open_dialog (window, "win.import-photoprism", LK_IMPORT_DIALOG_PHOTOPRISM);
  /* Until the user says where, the library goes to a folder named after
   * the source. */
  g_autofree char *default_output = lk_import_dialog_get_output (dialog);
  g_assert_true (g_str_has_suffix (default_output, "/PhotoPrism"));
  lk_import_dialog_set_database (dialog, fx.database);
  lk_import_dialog_set_media (dialog, fx.storage);
  lk_import_dialog_set_originals (dialog, fx.originals);
  lk_import_dialog_set_output (dialog, fx.outdir);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);

  /* The Import button's action. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "import.start", NULL));
  g_assert_true (lk_import_dialog_is_running (dialog));
  /* It closes once the library is written; the window opens it. */
  lk_test_wait (pointer_cleared, &dialog);
  lk_test_wait (lk_test_window_idle, window);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  LkSession *session = lk_window_get_session (window);
  g_assert_nonnull (session);
  const LkLibrary *library = lk_session_get_library (session);
  g_assert_cmpstr (library->folder, ==, fx.outdir);
  /* The label and the invalid marker stay out: four faces of three photos. */
  g_assert_cmpuint (library->count, ==, 4);
  g_assert_cmpstr (lk_window_get_toast (window), ==,
                   "Imported 4 faces of 3 photos; 1 without a "
                   "thumbnail (their image is missing or "
                   "unreadable); 1 face left unassigned: the source "
                   "gave it to a second person, or to a person "
                   "already in its photo");
  /* Ada, named in PhotoPrism, is a person in the grid (Bob is hidden). */
  GListModel *people = lk_window_get_visible_people (window);
  gboolean ada = FALSE;
  for (guint k = 0; k < g_list_model_get_n_items (people); k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      ada |= g_strcmp0 (lk_person_item_get_name (item), "Ada") == 0;
    }
  g_assert_true (ada);

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_photoprism_clear (&fx);
}

/* A file that is no PhotoPrism index: the importer's message, in the
 * dialog, which stays open with what was typed. */
static void
test_photoprism_not_an_index_shows_error (void)
{
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *index = g_build_filename (root, "index.db", NULL);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  g_assert_true (g_file_set_contents (index, "not a database, only words\n", -1, NULL));
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog
      = open_dialog (window, "win.import-photoprism", LK_IMPORT_DIALOG_PHOTOPRISM);
  lk_import_dialog_set_database (dialog, index);
  lk_import_dialog_set_output (dialog, outdir);

  lk_import_dialog_start (dialog);
  lk_test_wait (import_done, dialog);
  const char *error = lk_import_dialog_get_error (dialog);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error, index));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
}
#endif

static void
test_immich_refused_url_shows_error (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *outdir = g_build_filename (root, "made", "for", "it", "library", NULL);
  g_autofree char *made = g_build_filename (root, "made", NULL);
  g_autofree char *url = g_strdup_printf (
      "postgresql://immich:hunter2@127.0.0.1:%u/immich?sslmode=disable", lk_test_free_port ());
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-immich", LK_IMPORT_DIALOG_IMMICH);
  lk_import_dialog_set_database (dialog, url);
  lk_import_dialog_set_output (dialog, outdir);

  lk_import_dialog_start (dialog);
  lk_test_wait (import_done, dialog);
  const char *error = lk_import_dialog_get_error (dialog);
  g_assert_nonnull (error);
  g_assert_true (g_str_has_prefix (error, "Cannot connect to the Immich database "
                                          "postgresql://immich:***@127.0.0.1:"));
  g_assert_null (strstr (error, "hunter2"));
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");
  /* The parents made for the output are gone again. */
  g_assert_false (g_file_test (made, G_FILE_TEST_EXISTS));
  assert_empty (root);

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
}

/* Cancel (the Cancel button's action, Escape) while the importer waits for a
 * server that accepted the connection and never answers. */
/* TRUE once a client waits in `server`'s queue (a silent server never
 * accepts it): the importer is connecting. */
static gboolean
connecting (gpointer server)
{
  return (g_socket_condition_check (server, G_IO_IN) & G_IO_IN) != 0;
}

static void
test_cancel_leaves_no_folder (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  guint16 port = 0;
  g_autoptr (GSocket) server = lk_test_silent_server (&port);
  g_assert_true (G_IS_SOCKET (server)); /* held open until the end: it listens */

  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *outdir = g_build_filename (root, "Likeness", "Immich", NULL);
  g_autofree char *url
      = g_strdup_printf ("postgresql://immich:hunter2@127.0.0.1:%u/immich?sslmode=disable", port);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-immich", LK_IMPORT_DIALOG_IMMICH);
  lk_import_dialog_set_database (dialog, url);
  lk_import_dialog_set_output (dialog, outdir);

  lk_import_dialog_start (dialog);
  lk_test_wait_for (connecting, server, "the importer connecting to the silent server");
  g_assert_true (lk_import_dialog_is_running (dialog));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "import.cancel", NULL));
  lk_test_wait (import_done, dialog);
  g_assert_null (lk_import_dialog_get_error (dialog));
  g_assert_cmpstr (lk_import_dialog_get_note (dialog), ==,
                   "The import was stopped; nothing was written.");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  assert_empty (root);
  g_assert_cmpstr (lk_window_get_page (window), ==, "empty");

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
}

/* The window closed while the dialog imports: the import stops, the dialog
 * goes (its task lets go of it), and nothing is left. */
static void
test_window_closed_while_importing (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  guint16 port = 0;
  g_autoptr (GSocket) server = lk_test_silent_server (&port);
  g_assert_true (G_IS_SOCKET (server)); /* held open until the end: it listens */
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *outdir = g_build_filename (root, "Likeness", "Immich", NULL);
  g_autofree char *url
      = g_strdup_printf ("postgresql://immich@127.0.0.1:%u/immich?sslmode=disable", port);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-immich", LK_IMPORT_DIALOG_IMMICH);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);
  lk_import_dialog_set_database (dialog, url);
  lk_import_dialog_set_output (dialog, outdir);

  lk_import_dialog_start (dialog);
  lk_test_wait_for (connecting, server, "the importer connecting to the silent server");
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_wait (pointer_cleared, &dialog);
  assert_empty (root);
  lk_test_remove_tree (root);
}

/* The button under `widget` whose action is `action`, or NULL. */
static GtkWidget *
find_button (GtkWidget *widget, const char *action)
{
  if (GTK_IS_BUTTON (widget)
      && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), action) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_button (c, action);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Beside Open on the empty page, each importer this build has (a build
 * without one hides it: its action is not installed). */
static void
test_entries_beside_open (void)
{
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait_laid_out (GTK_WIDGET (window), "the empty window shown");
  const struct
  {
    const char *action;
    LkImportDialogSource source;
  } entries[] = {
    { "win.import-immich", LK_IMPORT_DIALOG_IMMICH },
    { "win.import-photoprism", LK_IMPORT_DIALOG_PHOTOPRISM },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (entries); k++)
    {
      gboolean available = lk_import_dialog_available (entries[k].source);
      GtkWidget *button = find_button (GTK_WIDGET (window), entries[k].action);
      g_assert_nonnull (button);
      g_assert_cmpint (gtk_widget_get_visible (button), ==, available);
      /* TRUE only when the action exists (it then opens its dialog). */
      g_assert_cmpint (gtk_widget_activate_action (GTK_WIDGET (window), entries[k].action, NULL),
                       ==, available);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The output follows the database until the user chooses it: named after
 * the source and, for a remote Immich server, its host. */
static void
test_default_output_follows_source (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-immich", LK_IMPORT_DIALOG_IMMICH);
  /* No Pictures folder is set (XDG_CONFIG_HOME has no user-dirs.dirs):
   * ~/Pictures/Likeness, as the README and the help say, never a hidden
   * folder. */
  g_assert_null (g_get_user_special_dir (G_USER_DIRECTORY_PICTURES));
  g_autofree char *base = g_build_filename (g_get_home_dir (), "Pictures", "Likeness", NULL);
  g_autofree char *plain = g_build_filename (base, "Immich", NULL);
  g_autofree char *remote = g_build_filename (base, "Immich (photos.example.org)", NULL);

  g_autofree char *first = lk_import_dialog_get_output (dialog);
  g_assert_cmpstr (first, ==, plain);
  lk_import_dialog_set_database (dialog, "postgresql://immich:pw@localhost/immich");
  g_autofree char *local = lk_import_dialog_get_output (dialog);
  g_assert_cmpstr (local, ==, plain);
  lk_import_dialog_set_database (dialog, "postgresql://immich:pw@photos.example.org/immich");
  g_autofree char *named = lk_import_dialog_get_output (dialog);
  g_assert_cmpstr (named, ==, remote);
  lk_import_dialog_set_output (dialog, "/srv/faces");
  lk_import_dialog_set_database (dialog, "postgresql://immich:pw@other.example.org/immich");
  g_autofree char *chosen = lk_import_dialog_get_output (dialog);
  g_assert_cmpstr (chosen, ==, "/srv/faces");

  gtk_window_destroy (GTK_WINDOW (window));
}

/* Add a Photo Folder…: the dialog finds the faces of three real photos
 * (dlib's models and photos from .ci/dlib-source) and the window opens the
 * new library. */
static void
test_photo_folder_imports_and_opens (void)
{
  const char *dlib = g_getenv ("LK_TEST_DLIB");
  g_autofree char *probe
      = dlib != NULL ? g_build_filename (dlib, "photos", "faces", "2008_001322.jpg", NULL) : NULL;
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS))
    {
      g_test_skip ("built without -Ddetect");
      return;
    }
  if (probe == NULL || !g_file_test (probe, G_FILE_TEST_EXISTS))
    {
      if (g_getenv ("LK_TEST_REQUIRE_DLIB") != NULL)
        g_error ("no dlib models and photos: run .ci/dlib-source");
      g_test_skip ("no dlib models and photos: run .ci/dlib-source");
      return;
    }
  g_autofree char *models = g_build_filename (dlib, "models", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  g_autofree char *root = g_dir_make_tmp ("lk-ui-photos-XXXXXX", NULL);
  g_autofree char *photos = g_build_filename (root, "Pictures", NULL);
  g_autofree char *outdir = g_build_filename (root, "Likeness", "Photos", NULL);
  const char *picks[] = { "faces/2008_001322.jpg", "johns/John_Simm/000300_00470148.jpg",
                          "johns/John_Simm/000305_00470162.jpg" };
  for (gsize k = 0; k < G_N_ELEMENTS (picks); k++)
    {
      g_autofree char *from = g_build_filename (dlib, "photos", picks[k], NULL);
      g_autofree char *to = g_build_filename (photos, picks[k], NULL);
      g_autofree char *parent = g_path_get_dirname (to);
      g_autofree char *data = NULL;
      gsize length = 0;
      g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
      g_assert_true (g_file_get_contents (from, &data, &length, NULL));
      g_assert_true (g_file_set_contents (to, data, (gssize) length, NULL));
    }

  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-photos", LK_IMPORT_DIALOG_PHOTOS);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (dialog)), ==, "Add a Photo Folder");
  g_autofree char *default_output = lk_import_dialog_get_output (dialog);
  g_assert_true (g_str_has_suffix (default_output, "/Photos"));
  lk_import_dialog_set_database (dialog, photos);
  lk_import_dialog_set_output (dialog, outdir);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "import.start", NULL));
  g_assert_true (lk_import_dialog_is_running (dialog));
  lk_test_wait (pointer_cleared, &dialog);
  lk_test_wait (lk_test_window_idle, window);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  const LkLibrary *library = lk_session_get_library (lk_window_get_session (window));
  g_assert_cmpstr (library->folder, ==, outdir);
  g_assert_cmpuint (library->count, ==, 5);
  g_assert_cmpstr (lk_window_get_toast (window), ==, "Imported 5 faces of 3 photos");
  /* The photos were only read. */
  g_autofree char *sidecar = g_build_filename (photos, "faces", "2008_001322.xmp", NULL);
  g_assert_false (g_file_test (sidecar, G_FILE_TEST_EXISTS));

  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
}

/* With LK_IMPORT_SHOTS=DIR, `widget` as it is now in DIR/NAME.png. */
static void
shoot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("LK_IMPORT_SHOTS");
  if (dir == NULL)
    return;
  lk_test_wait_idle ("the dialog's work before a screenshot");
  lk_test_wait_laid_out (widget, name);
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  lk_test_save_screenshot (widget, path);
}

/* The message of an import of `database` that fails before it reads a row. */
static char *
failed_import (LkImportDialogSource source, const char *action, const char *database)
{
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, action, source);
  lk_import_dialog_set_database (dialog, database);
  lk_import_dialog_set_output (dialog, outdir);
  lk_import_dialog_start (dialog);
  lk_test_wait (import_done, dialog);
  char *error = g_strdup (lk_import_dialog_get_error (dialog));
  g_test_message ("%s: %s", database, error);
  g_assert_nonnull (error);
  g_autofree char *name = g_path_get_basename (database);
  g_autofree char *shot = g_strdup_printf ("import-error-%s", name);
  shoot (GTK_WIDGET (dialog), shot);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_remove_tree (root);
  return error;
}

/* A Database field libpq cannot parse ("immich.local", a URL without its
 * scheme) is said in plain words with how a right one looks, never in
 * libpq's ("missing "=" after "immich.local" in connection info string"),
 * which quoted a password typed there. */
static void
test_immich_unreadable_address_in_plain_words (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  const char *fields[] = { "immich.local", "immich:hunter2@immich.local/immich" };
  for (guint k = 0; k < G_N_ELEMENTS (fields); k++)
    {
      g_autofree char *error
          = failed_import (LK_IMPORT_DIALOG_IMMICH, "win.import-immich", fields[k]);
      g_assert_true (g_str_has_prefix (error, "The Database field is not an address"));
      g_assert_nonnull (strstr (error, "postgresql://immich:PASSWORD@HOST:5432/immich"));
      g_assert_null (strstr (error, "connection info string"));
      g_assert_null (strstr (error, "hunter2"));
    }
}

/* PhotoPrism's index that is not there, or a folder chosen for it: sqlite's
 * "unable to open database file" becomes what is wrong and where the index
 * is. */
static void
test_photoprism_missing_index_in_plain_words (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOPRISM))
    {
      g_test_skip ("built without the PhotoPrism importer");
      return;
    }
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (root, "storage", "index.db", NULL);
  g_autofree char *error
      = failed_import (LK_IMPORT_DIALOG_PHOTOPRISM, "win.import-photoprism", missing);
  g_autofree char *expected = g_strdup_printf ("There is no file %s.", missing);
  g_assert_true (g_str_has_prefix (error, expected));
  g_assert_nonnull (strstr (error, "/photoprism/storage/index.db"));

  /* The storage folder itself, with the index in it: that file is named. */
  g_autofree char *storage = g_build_filename (root, "storage", NULL);
  g_assert_cmpint (g_mkdir (storage, 0755), ==, 0);
  g_assert_true (g_file_set_contents (missing, "", 0, NULL));
  g_autofree char *folder
      = failed_import (LK_IMPORT_DIALOG_PHOTOPRISM, "win.import-photoprism", storage);
  g_autofree char *named
      = g_strdup_printf ("%s is a folder: the index in it is %s.", storage, missing);
  g_test_message ("%s", folder);
  g_assert_true (g_str_has_prefix (folder, named));
  lk_test_remove_tree (root);
}

/* The password of an Immich address typed into the Database field is not
 * shown there: it moves to a password entry below (dots, with a peek
 * button, as GNOME's password entries), and the importer is given the
 * whole address again. It stayed in the field in clear. */
static void
test_immich_password_hidden (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_IMMICH))
    {
      g_test_skip ("built without the Immich importer");
      return;
    }
  const char *url = "postgresql://immich:hunter%402@db.example:5432/immich?sslmode=disable";
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-immich", LK_IMPORT_DIALOG_IMMICH);
  lk_import_dialog_set_database (dialog, url);
  GtkWidget *database = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "database_entry"));
  GtkWidget *password = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "password_entry"));
  g_test_message ("the field: %s", gtk_editable_get_text (GTK_EDITABLE (database)));
  g_assert_null (strstr (gtk_editable_get_text (GTK_EDITABLE (database)), "hunter"));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (database)), ==,
                   "postgresql://immich@db.example:5432/immich?sslmode=disable");
  g_assert_true (GTK_IS_PASSWORD_ENTRY (password));
  g_assert_true (gtk_widget_get_visible (password));
  g_assert_true (gtk_password_entry_get_show_peek_icon (GTK_PASSWORD_ENTRY (password)));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (password)), ==, "hunter@2");
  g_autofree char *given = lk_import_dialog_get_database (dialog);
  g_assert_cmpstr (given, ==, url);
  shoot (GTK_WIDGET (dialog), "import-immich-password");

  /* A key=value connection string gets it back in libpq's quoting. */
  lk_import_dialog_set_database (dialog, "host=db.example user=immich");
  gtk_editable_set_text (GTK_EDITABLE (password), "it's");
  g_autofree char *conninfo = lk_import_dialog_get_database (dialog);
  g_assert_cmpstr (conninfo, ==, "host=db.example user=immich password='it\\'s'");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A folder named by LIKENESS_MODELS_DIR holding files named as the models
 * the photo folder's import needs: enough for the dialog, which only looks
 * whether they are there (the import checks their SHA-256). */
static char *
fake_models (const char *root)
{
  char *models = g_build_filename (root, "models", NULL);
  const LkModelFile *needed[] = { &lk_dlib_model_recognition, &lk_dlib_model_shape };

  g_assert_cmpint (g_mkdir_with_parents (models, 0755), ==, 0);
  for (gsize k = 0; k < G_N_ELEMENTS (needed); k++)
    {
      g_autofree char *path = g_build_filename (models, needed[k]->file, NULL);
      g_assert_true (g_file_set_contents (path, "", 0, NULL));
    }
  return models;
}

/* Add a Photo Folder… without dlib's face models says so before the form,
 * with the command that fetches them, instead of letting the user fill a
 * form whose import then failed with a SHA-256 and `apt-get source` steps;
 * Check Again shows the form once the models are there. */
static void
test_photo_folder_without_models_says_so_first (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS))
    {
      g_test_skip ("built without the photo folder importer");
      return;
    }
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *empty = g_build_filename (root, "models", NULL);
  g_assert_cmpint (g_mkdir (empty, 0755), ==, 0);
  g_setenv ("LIKENESS_MODELS_DIR", empty, TRUE);
  g_auto (GStrv) missing = lk_import_photos_missing_models (LK_DETECTOR_HOG, NULL);
  if (missing[0] == NULL)
    {
      g_unsetenv ("LIKENESS_MODELS_DIR");
      lk_test_remove_tree (root);
      g_test_skip ("the face models are installed in a system data folder");
      return;
    }

  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-photos", LK_IMPORT_DIALOG_PHOTOS);
  g_assert_cmpstr (lk_import_dialog_get_page (dialog), ==, "models");
  GtkWidget *import = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "import_button"));
  g_assert_false (gtk_widget_get_visible (import));
  GtkLabel *text = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "models_label"));
  GtkLabel *command = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "models_command"));
  GtkLabel *after = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "models_after"));
  g_autofree char *said
      = g_strdup_printf ("%s\n%s\n%s", gtk_label_get_label (text), gtk_label_get_label (command),
                         gtk_label_get_label (after));
  g_test_message ("%s", said);
  g_assert_nonnull (strstr (gtk_label_get_label (text), "face models"));
  g_assert_nonnull (strstr (gtk_label_get_label (after), lk_dlib_model_recognition.file));
  g_assert_nonnull (strstr (gtk_label_get_label (after), empty));
  g_assert_null (strstr (said, "SHA-256"));
  g_assert_null (strstr (said, "apt-get"));
  g_assert_true (g_str_has_prefix (gtk_label_get_label (command), ".ci/dlib-source "));
  shoot (GTK_WIDGET (dialog), "import-photos-no-models");

  /* The Import action cannot start what cannot work. */
  lk_import_dialog_start (dialog);
  g_assert_false (lk_import_dialog_is_running (dialog));
  g_assert_cmpstr (lk_import_dialog_get_page (dialog), ==, "models");

  g_autofree char *models = fake_models (root);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "import.check-models", NULL));
  g_assert_cmpstr (lk_import_dialog_get_page (dialog), ==, "form");
  g_assert_true (gtk_widget_get_visible (import));

  gtk_window_destroy (GTK_WINDOW (window));
  g_unsetenv ("LIKENESS_MODELS_DIR");
  lk_test_remove_tree (root);
}

/* A photo folder's import is titled for what it does, not "Importing from
 * Photos" (no source of that name). */
static void
test_photo_folder_progress_title (void)
{
  if (!lk_import_dialog_available (LK_IMPORT_DIALOG_PHOTOS))
    {
      g_test_skip ("built without the photo folder importer");
      return;
    }
  g_autofree char *root = g_dir_make_tmp ("lk-ui-import-XXXXXX", NULL);
  g_autofree char *photos = g_build_filename (root, "photos", NULL);
  g_autofree char *outdir = g_build_filename (root, "library", NULL);
  g_autofree char *models = fake_models (root);
  g_assert_cmpint (g_mkdir (photos, 0755), ==, 0);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  LkImportDialog *dialog = open_dialog (window, "win.import-photos", LK_IMPORT_DIALOG_PHOTOS);
  lk_import_dialog_set_database (dialog, photos);
  lk_import_dialog_set_output (dialog, outdir);
  lk_import_dialog_start (dialog);
  GtkLabel *title = GTK_LABEL (
      gtk_widget_get_template_child (GTK_WIDGET (dialog), LK_TYPE_IMPORT_DIALOG, "progress_title"));
  g_assert_cmpstr (gtk_label_get_label (title), ==, "Finding the Faces in Your Photos");
  lk_import_dialog_cancel (dialog);
  lk_test_wait (import_done, dialog);
  gtk_window_destroy (GTK_WINDOW (window));
  g_unsetenv ("LIKENESS_MODELS_DIR");
  lk_test_remove_tree (root);
}

int
main (int argc, char **argv)
{
  /* The user's own face models (XDG_DATA_HOME/likeness/models) stay out of
   * what the dialog finds: set before GLib reads it. */
  g_autofree char *data_home = g_dir_make_tmp ("lk-ui-import-data-XXXXXX", NULL);
  g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  /* No user-dirs.dirs: the user has no Pictures folder set. */
  g_setenv ("XDG_CONFIG_HOME", data_home, TRUE);
  lk_test_display_init (&argc, &argv);

#ifdef LK_TEST_PHOTOPRISM
  g_test_add_func ("/ui-import/photoprism-imports-and-opens", test_photoprism_imports_and_opens);
  g_test_add_func ("/ui-import/photoprism-not-an-index-shows-error",
                   test_photoprism_not_an_index_shows_error);
#endif
  g_test_add_func ("/ui-import/entries-beside-open", test_entries_beside_open);
  g_test_add_func ("/ui-import/immich-refused-url-shows-error",
                   test_immich_refused_url_shows_error);
  g_test_add_func ("/ui-import/immich-unreadable-address-in-plain-words",
                   test_immich_unreadable_address_in_plain_words);
  g_test_add_func ("/ui-import/photoprism-missing-index-in-plain-words",
                   test_photoprism_missing_index_in_plain_words);
  g_test_add_func ("/ui-import/immich-password-hidden", test_immich_password_hidden);
  g_test_add_func ("/ui-import/photo-folder-progress-title", test_photo_folder_progress_title);
  g_test_add_func ("/ui-import/photo-folder-without-models-says-so-first",
                   test_photo_folder_without_models_says_so_first);
  g_test_add_func ("/ui-import/cancel-leaves-no-folder", test_cancel_leaves_no_folder);
  g_test_add_func ("/ui-import/window-closed-while-importing", test_window_closed_while_importing);
  g_test_add_func ("/ui-import/default-output-follows-source", test_default_output_follows_source);
  g_test_add_func ("/ui-import/photo-folder-imports-and-opens",
                   test_photo_folder_imports_and_opens);
  int status = g_test_run ();
  lk_test_remove_tree (data_home);
  return status;
}
