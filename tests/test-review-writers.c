/* test-review-writers — many writers of one review.json, none loses a decision
 *
 * Issue 13: two `likeness-cli review` started together lost a decision in 86
 * rounds of 100, and the window's next save erased what the CLI had saved.
 * Every save now takes a lock, reads the file again and merges (lk-review.c);
 * these tests run the real likeness-cli ($LIKENESS_CLI) on a sample library,
 * concurrently with itself and interleaved with a long-lived in-process writer
 * that decides and saves as the window does, and count the decisions after.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "people/lk-cluster.h"
#include "library/lk-library.h"
#include "people/lk-review.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

static char *library_dir;

static GPid
spawn_cli (const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) g_getenv ("LIKENESS_CLI"));
  for (guint k = 0; args[k]; k++)
    g_ptr_array_add (argv, (gpointer) args[k]);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GError) error = NULL;
  GPid pid = 0;
  g_assert_true (g_spawn_async (NULL, (char **) argv->pdata, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                &pid, &error));
  g_assert_no_error (error);
  return pid;
}

static int
wait_cli (GPid pid)
{
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

/* A fresh copy of the sample library, with no review.json. */
static char *
fresh_library (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("test-review-writers-XXXXXX", NULL);
  char *folder = g_build_filename (tmp, "lib", NULL);
  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  static const char *const files[] = { "library.json", "embeddings.f32" };
  for (gsize k = 0; k < G_N_ELEMENTS (files); k++)
    {
      g_autofree char *from = g_build_filename (library_dir, files[k], NULL);
      g_autofree char *to = g_build_filename (folder, files[k], NULL);
      g_autofree char *data = NULL;
      gsize length = 0;
      g_assert_true (g_file_get_contents (from, &data, &length, NULL));
      g_assert_true (g_file_set_contents (to, data, (gssize) length, NULL));
    }
  return folder;
}

static void
remove_library (char *folder)
{
  g_autofree char *tmp = g_path_get_dirname (folder);
  lk_test_remove_tree (tmp);
  g_free (folder);
}

/* The library, its pairs and the people a review makes of them: what a
 * window holds while it is open. */
typedef struct
{
  LkLibrary *library;
  LkScanResult *scan;
  LkClusterInput input;
} Window;

static void
window_open (Window *w, const char *folder)
{
  g_autoptr (GError) error = NULL;
  w->library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  LkFaces faces;
  lk_faces_from_library (&faces, w->library);
  w->scan
      = lk_scan (&faces, &w->library->calibration, w->library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  lk_cluster_input_init (&w->input, w->library, w->scan->pairs);
}

static void
window_close (Window *w)
{
  lk_scan_result_free (w->scan);
  lk_library_free (w->library);
}

static LkPeople *
window_people (Window *w, LkReview *review)
{
  g_autoptr (GError) error = NULL;
  LkPeople *people = lk_cluster (&w->input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (people->n_people, >=, 2);
  return people;
}

static LkReview *
window_load (Window *w, const char *path)
{
  g_autoptr (GError) error = NULL;
  LkReview *review = lk_review_load_for_library (path, w->library, &error);
  g_assert_no_error (error);
  return review;
}

/* The id of the k-th person of a clustering without decisions (names never
 * move faces, so it stays the person's id while only names are decided). */
static char *
person_at (Window *w, guint k)
{
  g_autoptr (LkReview) empty = lk_review_new_for_library (w->library);
  g_autoptr (LkPeople) people = window_people (w, empty);
  return g_strdup (people->people[k].id);
}

/* Two likeness-cli review processes started together, 100 times: each round
 * both must exit 0 and review.json must end with all 200 decisions. */
static void
test_two_cli_processes_lose_nothing (void)
{
  char *folder = fresh_library ();
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  Window w;
  window_open (&w, folder);
  g_autoptr (LkReview) empty = lk_review_new_for_library (w.library);
  g_autoptr (LkPeople) people = window_people (&w, empty);
  const char *a = people->people[0].id, *b = people->people[1].id;
  const guint rounds = 100;

  for (guint r = 0; r < rounds; r++)
    {
      g_autofree char *name_a = g_strdup_printf ("A %u", r);
      g_autofree char *name_b = g_strdup_printf ("B %u", r);
      const char *args_a[] = { "review", folder, "name", a, name_a, NULL };
      const char *args_b[] = { "review", folder, "name", b, name_b, NULL };
      GPid pa = spawn_cli (args_a);
      GPid pb = spawn_cli (args_b);
      g_assert_cmpint (wait_cli (pa), ==, 0);
      g_assert_cmpint (wait_cli (pb), ==, 0);
    }

  g_autoptr (LkReview) review = window_load (&w, path);
  g_assert_cmpuint (lk_review_n_decisions (review), ==, 2 * rounds);
  g_autoptr (LkPeople) named = window_people (&w, review);
  g_assert_cmpstr (lk_people_find (named, a)->name, ==, "A 99");
  g_assert_cmpstr (lk_people_find (named, b)->name, ==, "B 99");
  window_close (&w);
  remove_library (folder);
}

/* The window's state lives for the whole session and saves after each
 * decision; between its decision and its save the CLI saves one of its own
 * (issue 13's "the window's next save erases it"). Nothing is lost, and the
 * window takes the CLI's decisions in when it refreshes. */
static void
test_window_and_cli_interleaved (void)
{
  char *folder = fresh_library ();
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  Window w;
  window_open (&w, folder);
  g_autofree char *mine = person_at (&w, 0);
  g_autofree char *theirs = person_at (&w, 1);
  g_autoptr (LkReview) window = window_load (&w, path);
  const guint rounds = 20;

  for (guint r = 0; r < rounds; r++)
    {
      g_autoptr (LkPeople) people = window_people (&w, window);
      g_autofree char *name = g_strdup_printf ("Window %u", r);
      g_autoptr (GError) error = NULL;
      g_assert_true (lk_review_name (window, people, mine, name, &error));
      g_assert_no_error (error);

      g_autofree char *cli_name = g_strdup_printf ("CLI %u", r);
      const char *args[] = { "review", folder, "name", theirs, cli_name, NULL };
      g_assert_cmpint (wait_cli (spawn_cli (args)), ==, 0);

      g_assert_true (lk_review_save (window, path, LK_REVIEW_SAVE_DEFAULT, &error));
      g_assert_no_error (error);
      /* The window's undo of its own decision, saved, while the CLI's stays. */
      if (r % 5 == 4)
        {
          g_assert_true (lk_review_undo (window));
          g_assert_true (lk_review_save (window, path, LK_REVIEW_SAVE_DEFAULT, &error));
          g_assert_no_error (error);
          g_assert_true (lk_review_redo (window));
          g_assert_true (lk_review_save (window, path, LK_REVIEW_SAVE_DEFAULT, &error));
          g_assert_no_error (error);
        }
    }

  g_autoptr (LkReview) on_disk = window_load (&w, path);
  g_assert_cmpuint (lk_review_n_decisions (on_disk), ==, 2 * rounds);
  g_autoptr (LkPeople) people = window_people (&w, on_disk);
  g_assert_cmpstr (lk_people_find (people, mine)->name, ==, "Window 19");
  g_assert_cmpstr (lk_people_find (people, theirs)->name, ==, "CLI 19");

  /* The window has made only its own; a refresh brings in the CLI's. */
  g_assert_cmpuint (lk_review_n_decisions (window), ==, rounds);
  g_autoptr (GError) error = NULL;
  guint changed = 0;
  g_assert_true (lk_review_refresh (window, path, &changed, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (changed, ==, rounds);
  g_assert_cmpuint (lk_review_n_decisions (window), ==, 2 * rounds);
  g_autoptr (LkPeople) refreshed = window_people (&w, window);
  g_assert_cmpstr (lk_people_find (refreshed, theirs)->name, ==, "CLI 19");
  window_close (&w);
  remove_library (folder);
}

/* A save that fails ends the CLI with status 1 and says plainly that the
 * decision was not saved; nothing claims it was. review.json is a link into
 * a folder that does not exist: the lock and the write both fail, even for
 * root (which ignores permission bits). */
static void
test_failed_save_exits_1 (void)
{
  char *folder = fresh_library ();
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  g_autofree char *nowhere = g_build_filename (folder, "gone", "review.json", NULL);
  g_assert_cmpint (symlink (nowhere, path), ==, 0);
  Window w;
  window_open (&w, folder);
  g_autofree char *person = person_at (&w, 0);

  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "review", folder, "name", person, "Lost?", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "the decision was NOT saved"));
  g_assert_nonnull (strstr (err, "Lost?"));
  g_assert_null (strstr (err, "kept"));
  g_assert_cmpstr (out, ==, "");
  window_close (&w);
  remove_library (folder);
}

/* A review.json with a member named twice is refused by the CLI with the
 * member and its line, and is left as it is; --start-over replaces it. */
static void
test_duplicate_key_refused_and_start_over (void)
{
  char *folder = fresh_library ();
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  Window w;
  window_open (&w, folder);
  g_autofree char *person = person_at (&w, 0);
  g_autofree char *twice = g_strdup_printf (
      "{\"format\": \"likeness-review\", \"version\": 1,\n \"fingerprint\": \"%s\",\n"
      " \"decisions\": [],\n \"decisions\": []\n}\n",
      w.library->fingerprint);
  g_assert_true (g_file_set_contents (path, twice, -1, NULL));

  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "review", folder, "hide", person, NULL), ==, 1);
  g_assert_nonnull (strstr (err, "line 4 names “decisions” a second time"));
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (path, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, twice);

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "review", folder, "--start-over", "hide", person, NULL), ==, 0);
  g_autoptr (LkReview) review = window_load (&w, path);
  g_assert_cmpuint (lk_review_n_decisions (review), ==, 1);
  window_close (&w);
  remove_library (folder);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-review-writers-sample-XXXXXX", &error);
  g_assert_no_error (error);
  library_dir = g_build_filename (dir, "lib", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces", "200",
                                    "--seed", "13", "--no-thumbnails", NULL),
                   ==, 0);

  g_test_add_func ("/review-writers/two-cli-processes-lose-nothing",
                   test_two_cli_processes_lose_nothing);
  g_test_add_func ("/review-writers/window-and-cli-interleaved", test_window_and_cli_interleaved);
  g_test_add_func ("/review-writers/failed-save-exits-1", test_failed_save_exits_1);
  g_test_add_func ("/review-writers/duplicate-key-refused-and-start-over",
                   test_duplicate_key_refused_and_start_over);
  int status = g_test_run ();
  lk_test_remove_tree (dir);
  g_free (library_dir);
  return status;
}
