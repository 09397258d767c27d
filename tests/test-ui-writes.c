/* test-ui-writes — where Likeness writes, and read-only libraries
 *
 * Likeness writes review.json in the library (or, for a library whose folder
 * cannot be written, in the folder the user chose with Save Elsewhere…) and
 * its own configuration and cache — nothing else, anywhere. Every test runs
 * in one temporary tree: HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME,
 * XDG_DATA_HOME, XDG_STATE_HOME and TMPDIR point into it (set before GLib
 * caches them) and the libraries live in it. Every path of the tree is
 * recorded (type, size, modification time) before and after likeness-cli and
 * the window open, scan, decide, undo, redo and save, and what changed must be
 * exactly what is allowed.
 *
 * A read-only medium: chmod 0555 where that stops writes; CI runs as root,
 * where it does not (the test tries to create a file to know), so there
 * lk-fail-shim (preloaded by meson in builds without sanitizers) makes every
 * write under the folder fail with EROFS and access (W_OK) say so. Without
 * either, the read-only cases skip and say why.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "library/lk-review-location.h"
#include "people/lk-person-item.h"
#include "people/lk-review-private.h"
#include "people/lk-review.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-window.h"
#include "lk-test-util.h"
#include "lk-window-private.h"

/* Small enough to scan in a moment on a loaded machine. */
#define FACES "300"

static char *root; /* the temporary tree */

/* ---- the tree's snapshot ---------------------------------------------- */

static void
snapshot_into (GHashTable *table, const char *path, const char *relative)
{
  GStatBuf st;

  if (g_lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      /* A folder's own time changes with its entries, which are recorded. */
      if (relative[0] != '\0')
        g_hash_table_insert (table, g_strdup (relative), g_strdup ("folder"));
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          g_autofree char *child_relative
              = relative[0] != '\0' ? g_build_filename (relative, name, NULL) : g_strdup (name);
          snapshot_into (table, child, child_relative);
        }
      return;
    }
  g_hash_table_insert (table, g_strdup (relative),
                       g_strdup_printf ("%o %" G_GINT64_FORMAT " %" G_GINT64_FORMAT ".%09ld",
                                        (unsigned) (st.st_mode & S_IFMT), (gint64) st.st_size,
                                        (gint64) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec));
}

static GHashTable *
snapshot (void)
{
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  snapshot_into (table, root, "");
  return table;
}

/* `path` is allowed to change: equal to an entry, or, for an entry ending in
 * "/", that folder itself or anything below it. */
static gboolean
allowed (const char *path, const char *const *allow)
{
  for (guint k = 0; allow[k] != NULL; k++)
    {
      gsize n = strlen (allow[k]);
      if (g_str_equal (path, allow[k]))
        return TRUE;
      if (n > 0 && allow[k][n - 1] == '/' && strncmp (path, allow[k], n - 1) == 0
          && (path[n - 1] == '\0' || path[n - 1] == '/'))
        return TRUE;
    }
  return FALSE;
}

/* Fails naming every path that was added, removed or changed between the
 * snapshots and is not allowed; returns how many allowed ones changed. */
static guint
assert_only_changed (GHashTable *before, GHashTable *after, const char *const *allow)
{
  g_autoptr (GPtrArray) wrong = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer key, value;
  guint changed = 0;

  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const char *old = g_hash_table_lookup (before, key);
      if (g_strcmp0 (old, value) == 0)
        continue;
      if (allowed (key, allow))
        changed++;
      else
        g_ptr_array_add (
            wrong, g_strdup_printf ("%s %s", old == NULL ? "added" : "changed", (char *) key));
    }
  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!g_hash_table_contains (after, key) && !allowed (key, allow))
      g_ptr_array_add (wrong, g_strdup_printf ("removed %s", (char *) key));

  for (guint k = 0; k < wrong->len; k++)
    g_test_message ("written outside what is allowed: %s", (char *) g_ptr_array_index (wrong, k));
  g_assert_cmpuint (wrong->len, ==, 0);
  return changed;
}

/* ---- helpers ---------------------------------------------------------- */

static char *
tree_path (const char *relative)
{
  return g_build_filename (root, relative, NULL);
}

static void cli_ok (char **out, ...) G_GNUC_NULL_TERMINATED;

/* Runs likeness-cli with up to 6 arguments and checks it succeeded. */
static void
cli_ok (char **out, ...)
{
  const char *a[7] = { NULL };
  va_list args;
  g_autofree char *stdout_text = NULL;
  g_autofree char *stderr_text = NULL;

  va_start (args, out);
  for (guint k = 0; k < 6 && (a[k] = va_arg (args, const char *)) != NULL; k++)
    ;
  va_end (args);
  g_assert_cmpint (
      lk_test_run_cli (&stdout_text, &stderr_text, a[0], a[1], a[2], a[3], a[4], a[5], NULL), ==,
      0);
  if (out != NULL)
    *out = g_steal_pointer (&stdout_text);
}

static void
make_library (const char *folder)
{
  cli_ok (NULL, "make-sample", folder, "--faces", FACES, "--seed", "5", NULL);
}

/* The ids and names of `likeness-cli people --json`, largest first. */
static JsonArray *
cli_people (const char *folder)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  cli_ok (&out, "people", folder, "--json", NULL);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  JsonObject *result = json_node_get_object (json_parser_get_root (parser));
  return json_array_ref (json_object_get_array_member (result, "people"));
}

static const char *
person_id (JsonArray *people, guint k)
{
  return json_object_get_string_member (json_array_get_object_element (people, k), "id");
}

static gboolean
cli_has_name (const char *folder, const char *name)
{
  g_autoptr (JsonArray) people = cli_people (folder);

  for (guint k = 0; k < json_array_get_length (people); k++)
    {
      JsonObject *person = json_array_get_object_element (people, k);
      JsonNode *node = json_object_get_member (person, "name");
      if (!JSON_NODE_HOLDS_NULL (node) && g_str_equal (json_node_get_string (node), name))
        return TRUE;
    }
  return FALSE;
}

/* The names a review.json holds, through the engine's own reader. */
static gboolean
file_has_name (LkSession *session, const char *path, const char *name)
{
  const LkLibrary *library = lk_session_get_library (session);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkReview) review = lk_review_load_for_library (path, library, &error);

  g_assert_no_error (error);
  const GPtrArray *pins = lk_review_pins (review);
  for (guint k = 0; k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      if (g_strcmp0 (pin->name, name) == 0)
        return TRUE;
    }
  return FALSE;
}

static LkWindow *
open_window (const char *folder)
{
  LkWindow *window = lk_test_open_window (NULL, folder, 0, 0);

  g_assert_cmpstr (lk_window_get_page (window), ==, "people");
  return window;
}

static void
rename_person (LkWindow *window, guint k, const char *name)
{
  LkSession *session = lk_window_get_session (window);
  g_autoptr (LkPersonItem) item = g_list_model_get_item (lk_session_get_people (session), k);
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_rename (session, lk_person_item_get_id (item), name, &error));
  g_assert_no_error (error);
  lk_test_wait_committed (session);
  g_assert_cmpstr (lk_person_item_get_title (item), ==, name);
}

/* The dialog asking before `window` closes, or NULL. */
static AdwMessageDialog *
close_dialog (LkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint k = 0; k < g_list_model_get_n_items (toplevels); k++)
    {
      g_autoptr (GtkWindow) other = g_list_model_get_item (toplevels, k);
      if (ADW_IS_MESSAGE_DIALOG (other) && gtk_widget_get_visible (GTK_WIDGET (other))
          && gtk_window_get_transient_for (other) == GTK_WINDOW (window))
        return ADW_MESSAGE_DIALOG (other);
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

static gboolean
is_gone (gpointer pointer)
{
  return *(gpointer *) pointer == NULL;
}

/* Closes `window` and waits until it is finalized: whatever held it (a
 * load, a save) is over. */
static void
close_window (LkWindow *window)
{
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  gtk_window_destroy (GTK_WINDOW (window));
  lk_test_wait_for (is_gone, &window, "the closed window finalized");
}

/* ---- read-only folders ------------------------------------------------- */

static gboolean
can_create_in (const char *folder)
{
  g_autofree char *probe = g_build_filename (folder, ".lk-write-probe", NULL);
  int fd = g_open (probe, O_WRONLY | O_CREAT | O_EXCL, 0644);

  if (fd < 0)
    return FALSE;
  g_close (fd, NULL);
  g_unlink (probe);
  return TRUE;
}

static void
shim_control (const char *line)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (g_getenv ("LK_FAIL_SHIM_CONTROL"), line, -1, &error));
  g_assert_no_error (error);
}

/* Makes `folder` (and everything below it) a read-only medium for this
 * process and its children. FALSE (the test skipped) when nothing can. */
static gboolean
make_read_only (const char *folder)
{
  g_autofree char *command = g_strdup_printf ("chmod -R a-w '%s'", folder);

  g_assert_true (g_spawn_command_line_sync (command, NULL, NULL, NULL, NULL));
  if (!can_create_in (folder))
    return TRUE;
  /* Root: permission bits stop nothing. */
  if (g_getenv ("LK_FAIL_SHIM_CONTROL") == NULL || g_getenv ("LD_PRELOAD") == NULL)
    {
      g_test_skip ("running as root, where chmod does not stop writes, and lk-fail-shim is not "
                   "preloaded (meson preloads it in builds without sanitizers)");
      return FALSE;
    }
  g_autofree char *line = g_strdup_printf ("erofs %s\n", folder);
  shim_control (line);
  g_assert_false (can_create_in (folder));
  return TRUE;
}

static void
make_writable (const char *folder)
{
  g_autofree char *command = g_strdup_printf ("chmod -R u+w '%s'", folder);

  if (g_getenv ("LK_FAIL_SHIM_CONTROL") != NULL)
    shim_control ("");
  g_assert_true (g_spawn_command_line_sync (command, NULL, NULL, NULL, NULL));
}

/* ---- tests ------------------------------------------------------------ */

/* A writable library: the CLI's and the window's whole loop write
 * <library>/review.json and nothing else outside the app's config and cache. */
static void
test_writable_library_writes_only_review_json (void)
{
  g_autofree char *library = tree_path ("libraries/writable");
  make_library (library);
  /* The lock file beside review.json serialises every writer's save. */
  static const char *const allow[]
      = { "libraries/writable/review.json", "libraries/writable/.review.json.lock", "config/",
          "cache/", NULL };
  g_autoptr (GHashTable) start = snapshot ();

  g_autoptr (JsonArray) people = cli_people (library);
  const char *first = person_id (people, 0);
  g_autofree char *out = NULL;
  cli_ok (&out, "info", library, NULL);
  g_clear_pointer (&out, g_free);
  cli_ok (&out, "scan", library, NULL);
  cli_ok (NULL, "review", library, "name", first, "Ada Lovelace", NULL);
  cli_ok (NULL, "review", library, "undo", NULL);
  cli_ok (NULL, "review", library, "redo", NULL);
  cli_ok (NULL, "review", library, "hide", first, NULL);
  cli_ok (NULL, "review", library, "unhide", first, NULL);
  g_autoptr (GHashTable) after_cli = snapshot ();
  g_assert_cmpuint (assert_only_changed (start, after_cli, allow), >=, 1);
  g_assert_true (cli_has_name (library, "Ada Lovelace"));

  LkWindow *window = open_window (library);
  g_assert_null (lk_window_get_banner (window));
  rename_person (window, 1, "Grace Hopper");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  lk_test_wait_committed (lk_window_get_session (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  lk_test_wait_committed (lk_window_get_session (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.rescan", NULL));
  lk_test_wait (lk_test_window_idle, window);
  close_window (window);
  g_autoptr (GHashTable) after_window = snapshot ();
  g_assert_cmpuint (assert_only_changed (after_cli, after_window, allow), >=, 1);
  g_assert_true (cli_has_name (library, "Grace Hopper"));
}

/* A read-only library opens and scans with its own review.json as the starting
 * state; the banner says decisions cannot be saved there; a decision is kept
 * in memory and nothing is written anywhere; Save Elsewhere… into a folder
 * that is read-only too fails with a clear message and changes nothing; into
 * a writable one it saves every decision there and, from then on, each new
 * one; the association is remembered in the config, so the window and the CLI
 * use that file the next time. Only that file and the config change. */
static void
test_read_only_library_saves_elsewhere (void)
{
  g_autofree char *media = tree_path ("libraries/read-only-medium");
  g_autofree char *library = g_build_filename (media, "photos", NULL);
  g_autofree char *also_read_only = g_build_filename (media, "other-folder", NULL);
  g_autofree char *chosen = tree_path ("home/Decisions");
  g_autofree char *chosen_review = g_build_filename (chosen, "review.json", NULL);
  g_autofree char *store = tree_path ("config/likeness/review-locations.ini");
  static const char *const nothing[] = { "config/", "cache/", NULL };
  static const char *const elsewhere[]
      = { "home/Decisions/review.json", "home/Decisions/.review.json.lock", "config/", "cache/",
          NULL };

  make_library (library);
  g_assert_cmpint (g_mkdir_with_parents (also_read_only, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (chosen, 0755), ==, 0);
  g_autofree char *occupied_dir = tree_path ("home/Occupied");
  g_autofree char *occupied_review = g_build_filename (occupied_dir, "review.json", NULL);
  g_assert_cmpint (g_mkdir_with_parents (occupied_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (occupied_review, "{}", -1, NULL));
  /* A decision made while the medium was still writable. */
  g_autoptr (JsonArray) people = cli_people (library);
  cli_ok (NULL, "review", library, "name", person_id (people, 0), "Before", NULL);
  if (!make_read_only (media))
    {
      make_writable (media);
      return;
    }
  g_autoptr (GHashTable) start = snapshot ();

  /* likeness-cli reads it and refuses to record, naming why. */
  g_assert_true (cli_has_name (library, "Before"));
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "review", library, "name", person_id (people, 1),
                                    "Refused", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, g_strerror (geteuid () == 0 ? EROFS : EACCES)));

  /* The window: opens, scans, shows the saved decision and the banner. */
  LkWindow *window = open_window (library);
  LkSession *session = lk_window_get_session (window);
  g_assert_true (lk_session_is_read_only (session));
  g_assert_false (lk_session_saves_elsewhere (session));
  g_assert_nonnull (lk_window_get_banner (window));
  g_assert_nonnull (strstr (lk_window_get_banner (window), "read-only"));
  g_assert_true (lk_session_find_person (session, person_id (people, 0)) != NULL);
  g_assert_cmpstr (
      lk_person_item_get_name (lk_session_find_person (session, person_id (people, 0))), ==,
      "Before");

  /* A decision: kept, on screen, not saved; the user is told, once. */
  rename_person (window, 1, "Kept In Memory");
  g_assert_true (lk_session_has_unsaved (session));
  g_assert_nonnull (lk_window_get_toast (window));
  g_assert_nonnull (strstr (lk_window_get_toast (window), "could not be saved"));
  g_assert_nonnull (strstr (lk_window_get_banner (window), "kept only until you close it"));
  g_autoptr (GHashTable) after_decision = snapshot ();
  assert_only_changed (start, after_decision, nothing);

  /* Closing now would lose it: the window asks first; Cancel keeps it open. */
  gtk_window_close (GTK_WINDOW (window));
  AdwMessageDialog *ask = close_dialog (window);
  g_assert_nonnull (ask);
  g_assert_true (click_response (GTK_WIDGET (ask), "_Cancel"));
  lk_test_wait_for (no_close_dialog, window, "the close dialog gone after Cancel");
  g_assert_true (lk_window_get_session (window) == session);

  /* Save Elsewhere… into a folder that cannot be written either. */
  g_autoptr (GFile) bad = g_file_new_for_path (also_read_only);
  lk_window_save_elsewhere (window, bad);
  g_assert_nonnull (strstr (lk_window_get_toast (window), "could not be saved in"));
  g_assert_false (lk_session_saves_elsewhere (session));
  g_assert_true (lk_session_has_unsaved (session));
  g_autoptr (GHashTable) after_refused = snapshot ();
  assert_only_changed (start, after_refused, nothing);
  g_assert_false (g_file_test (store, G_FILE_TEST_EXISTS));

  /* …or into one that already holds a review.json: never saved over. */
  g_autoptr (GFile) occupied_file = g_file_new_for_path (occupied_dir);
  lk_window_save_elsewhere (window, occupied_file);
  g_assert_nonnull (strstr (lk_window_get_toast (window), "already holds a review.json"));
  g_assert_false (lk_session_saves_elsewhere (session));
  g_autoptr (GHashTable) after_occupied = snapshot ();
  assert_only_changed (start, after_occupied, nothing);

  /* …and into one that can: every decision so far is saved there. */
  g_autoptr (GFile) good = g_file_new_for_path (chosen);
  lk_window_save_elsewhere (window, good);
  g_assert_true (lk_session_saves_elsewhere (session));
  g_assert_false (lk_session_has_unsaved (session));
  g_assert_cmpstr (lk_session_get_review_path (session), ==, chosen_review);
  g_assert_nonnull (strstr (lk_window_get_toast (window), "~/Decisions/review.json"));
  g_assert_nonnull (strstr (lk_window_get_banner (window), "~/Decisions/review.json"));
  g_assert_true (file_has_name (session, chosen_review, "Before"));
  g_assert_true (file_has_name (session, chosen_review, "Kept In Memory"));
  g_assert_true (g_file_test (store, G_FILE_TEST_IS_REGULAR));

  /* The next decision, and an undo, go there too. */
  rename_person (window, 2, "Saved Elsewhere");
  g_assert_false (lk_session_has_unsaved (session));
  g_assert_true (file_has_name (session, chosen_review, "Saved Elsewhere"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  lk_test_wait_committed (session);
  g_assert_false (file_has_name (session, chosen_review, "Saved Elsewhere"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  lk_test_wait_committed (session);
  close_window (window);

  /* Opening the library again reads that file; so does the CLI, which now
   * records there as well. */
  window = open_window (library);
  session = lk_window_get_session (window);
  g_assert_true (lk_session_saves_elsewhere (session));
  g_assert_nonnull (strstr (lk_window_get_banner (window), "~/Decisions/review.json"));
  g_assert_nonnull (lk_session_find_person (session, person_id (people, 0)));
  g_assert_true (file_has_name (session, lk_session_get_review_path (session), "Saved Elsewhere"));
  close_window (window);
  g_assert_true (cli_has_name (library, "Kept In Memory"));
  cli_ok (NULL, "review", library, "name", person_id (people, 3), "From The CLI", NULL);
  g_assert_true (cli_has_name (library, "From The CLI"));

  g_autoptr (GHashTable) end = snapshot ();
  g_assert_cmpuint (assert_only_changed (start, end, elsewhere), >=, 2);
  make_writable (media);
}

/* A folder that looked writable but refuses the save (EROFS): the window
 * learns it then, shows the banner and offers Save Elsewhere…; once saving
 * there works again, the banner goes. */
static void
test_failed_save_reveals_read_only (void)
{
  g_autofree char *library = tree_path ("libraries/turns-read-only");
  make_library (library);
  LkWindow *window = open_window (library);
  LkSession *session = lk_window_get_session (window);

  g_assert_false (lk_session_is_read_only (session));
  g_assert_null (lk_window_get_banner (window));
  lk_review_inject_failure (LK_REVIEW_STEP_LOCK, EROFS);
  rename_person (window, 0, "Not Yet Saved");
  g_assert_true (lk_session_is_read_only (session));
  g_assert_true (lk_session_has_unsaved (session));
  g_assert_nonnull (lk_window_get_banner (window));
  g_assert_nonnull (strstr (lk_window_get_toast (window), "could not be saved"));

  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_retry_save (session, &error));
  g_assert_no_error (error);
  g_assert_false (lk_session_has_unsaved (session));
  g_assert_false (lk_session_is_read_only (session));

  /* Unsaved again; closing asks, and Discard closes for real. */
  lk_review_inject_failure (LK_REVIEW_STEP_WRITE, EIO);
  rename_person (window, 1, "Discarded");
  g_assert_true (lk_session_has_unsaved (session));
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  gtk_window_close (GTK_WINDOW (window));
  g_assert_nonnull (window);
  AdwMessageDialog *ask = close_dialog (window);
  g_assert_nonnull (ask);
  g_assert_true (click_response (GTK_WIDGET (ask), "_Discard Decisions"));
  lk_test_wait_for (is_gone, &window, "the window closed after Discard Decisions");
}

/* The bundled sample, installed where the user cannot write (the Flatpak's
 * /app): a new user's first name is saved from the start, in the user's data
 * folder, and the banner says where; the sample's folder is not touched and
 * the place is remembered for the next opening. */
static void
test_read_only_sample_saves_in_user_data (void)
{
  g_autofree char *installed = tree_path ("libraries/installed");
  g_autofree char *sample = g_build_filename (installed, "sample", NULL);
  g_autofree char *saved = tree_path ("data/likeness/sample/review.json");
  static const char *const user_data[] = { "data/likeness/",
                                           "data/likeness/sample/",
                                           "data/likeness/sample/review.json",
                                           "data/likeness/sample/.review.json.lock",
                                           "config/",
                                           "cache/",
                                           NULL };

  make_library (sample);
  if (!make_read_only (installed))
    {
      make_writable (installed);
      return;
    }
  g_setenv ("LIKENESS_SAMPLE_DIR", sample, TRUE);
  g_autoptr (GHashTable) start = snapshot ();

  LkWindow *window = lk_window_new (NULL);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (lk_window_open_sample (window));
  lk_test_wait (lk_test_window_idle, window);
  LkSession *session = lk_window_get_session (window);
  g_assert_nonnull (session);
  g_assert_true (lk_session_is_read_only (session));
  g_assert_true (lk_session_saves_elsewhere (session));
  g_assert_cmpstr (lk_session_get_review_path (session), ==, saved);
  g_assert_nonnull (strstr (lk_window_get_banner (window), "saved in"));

  rename_person (window, 0, "First Try");
  g_assert_false (lk_session_has_unsaved (session));
  g_assert_true (g_file_test (saved, G_FILE_TEST_IS_REGULAR));
  g_autofree char *remembered
      = lk_review_location_lookup (lk_session_get_library (session)->folder);
  g_assert_cmpstr (remembered, ==, saved);
  close_window (window);

  g_autoptr (GHashTable) end = snapshot ();
  g_assert_cmpuint (assert_only_changed (start, end, user_data), >=, 1);
  g_unsetenv ("LIKENESS_SAMPLE_DIR");
  make_writable (installed);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  /* Before GLib reads (and caches) any of them. */
  root = g_dir_make_tmp ("lk-ui-writes-XXXXXX", &error);
  g_assert_no_error (error);
  static const char *const dirs[][2] = {
    { "HOME", "home" },          { "XDG_CONFIG_HOME", "config" }, { "XDG_CACHE_HOME", "cache" },
    { "XDG_DATA_HOME", "data" }, { "XDG_STATE_HOME", "state" },   { "TMPDIR", "tmp" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (dirs); k++)
    {
      g_autofree char *dir = tree_path (dirs[k][1]);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
      g_setenv (dirs[k][0], dir, TRUE);
    }
  g_autofree char *libraries = tree_path ("libraries");
  g_assert_cmpint (g_mkdir (libraries, 0755), ==, 0);
  /* A file beside the libraries, which nothing may touch. */
  g_autofree char *beside = tree_path ("libraries/notes.txt");
  g_assert_true (g_file_set_contents (beside, "mine", -1, NULL));

  lk_test_display_init (&argc, &argv);
  g_test_add_func ("/ui-writes/writable-library-writes-only-review-json",
                   test_writable_library_writes_only_review_json);
  g_test_add_func ("/ui-writes/read-only-library-saves-elsewhere",
                   test_read_only_library_saves_elsewhere);
  g_test_add_func ("/ui-writes/failed-save-reveals-read-only", test_failed_save_reveals_read_only);
  g_test_add_func ("/ui-writes/read-only-sample-saves-in-user-data",
                   test_read_only_sample_saves_in_user_data);
  int status = g_test_run ();

  lk_test_remove_tree (root);
  g_free (root);
  return status;
}
