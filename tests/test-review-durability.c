/* test-review-durability — review.json survives kills, full disks and
 * read-only folders
 *
 * lk-review's own tests fail each step of a save from inside the process.
 * These fail it from outside: a SIGKILL at a random moment of a save loop, and
 * a preloaded library (lk-fail-shim.c) that makes the file system refuse
 * writes the way a full disk or a read-only medium does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "people/lk-cluster.h"
#include "people/lk-review.h"

#define N_FACES     8
#define FINGERPRINT "0123456789abcdef"

static const guint64 photos[N_FACES] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const LkPair pairs[]
    = { { 0, 1, 0.99f }, { 0, 2, 0.97f }, { 1, 2, 0.98f }, { 3, 4, 0.99f } };

static LkPeople *
cluster (LkReview *review)
{
  LkClusterInput input = { N_FACES, photos, NULL, NULL, pairs, G_N_ELEMENTS (pairs) };
  g_autoptr (GError) error = NULL;
  LkPeople *people = lk_cluster (&input, lk_review_pins (review), NULL, &error);

  g_assert_no_error (error);
  return people;
}

static LkReview *
load (const char *path, GError **error)
{
  return lk_review_load (path, N_FACES, FINGERPRINT, photos, error);
}

/* One more decision: a new name for the person holding face 0. */
static void
decide (LkReview *review, guint k)
{
  g_autoptr (LkPeople) people = cluster (review);
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strdup_printf ("Name %u", k);

  g_assert_cmpint (people->person_of[0], >=, 0);
  g_assert_true (
      lk_review_name (review, people, people->people[people->person_of[0]].id, name, &error));
  g_assert_no_error (error);
}

/* The child: decide and save as fast as it can until it is killed; after
 * each save that returned TRUE, it writes the number of decisions saved to
 * `report` (4 bytes: a pipe write this small is atomic, so a kill never
 * leaves half a number). */
G_GNUC_NORETURN static void
save_forever (const char *path, int report)
{
  LkReview *review = load (path, NULL);

  if (review == NULL)
    _exit (3);
  for (guint k = lk_review_n_decisions (review);; k++)
    {
      decide (review, k);
      if (!lk_review_save (review, path, LK_REVIEW_SAVE_DEFAULT, NULL))
        _exit (4);
      guint32 saved = lk_review_n_decisions (review);
      if (write (report, &saved, sizeof saved) != sizeof saved)
        _exit (5);
    }
}

/* The last number the child reported before it died (0 when none). */
static guint32
last_reported (int fd)
{
  guint32 value = 0, last = 0;
  ssize_t n;
  while ((n = read (fd, &value, sizeof value)) == sizeof value)
    last = value;
  g_assert_cmpint (n, ==, 0);
  return last;
}

static void
test_sigkill_during_saves_leaves_old_or_new (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lk-durability-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "review.json", NULL);
  GRand *rand = g_rand_new_with_seed (20261202);
  guint last = 0, kills = 0, reported_saves = 0;

  /* One cycle of the child's (load, decide, save), timed here in a folder of
   * its own: the kills land from half a cycle to several cycles in, whatever
   * the machine's speed. A fixed 2–30 ms let no save finish in any of the 60
   * rounds under qemu-user (aarch64 CI, load 6), where natively a cycle
   * takes a few milliseconds. */
  gint64 cycle;
  {
    g_autofree char *scratch_dir = g_dir_make_tmp ("lk-durability-cycle-XXXXXX", NULL);
    g_autofree char *scratch = g_build_filename (scratch_dir, "review.json", NULL);
    gint64 start = g_get_monotonic_time ();
    g_autoptr (LkReview) review = load (scratch, NULL);
    g_assert_nonnull (review);
    decide (review, 0);
    g_assert_true (lk_review_save (review, scratch, LK_REVIEW_SAVE_DEFAULT, NULL));
    cycle = MAX (g_get_monotonic_time () - start, 1000);
    g_autofree char *lock = g_build_filename (scratch_dir, ".review.json.lock", NULL);
    g_unlink (scratch);
    g_unlink (lock);
    g_assert_cmpint (g_rmdir (scratch_dir), ==, 0);
  }
  gint32 delay_lo = (gint32) MIN (cycle / 2, G_USEC_PER_SEC);
  gint32 delay_hi = delay_lo + (gint32) MIN (MAX (4 * cycle, 28000), 4 * G_USEC_PER_SEC);

  for (guint round = 0; round < 60; round++)
    {
      int report[2];
      g_assert_cmpint (pipe (report), ==, 0);
      pid_t pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          close (report[0]);
          save_forever (path, report[1]);
        }
      close (report[1]);

      /* Long enough for a few saves to complete, random so the kill lands on
       * every step of the save over the rounds. */
      g_usleep ((gulong) g_rand_int_range (rand, delay_lo, delay_hi));
      kill (pid, SIGKILL);
      int status;
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      if (WIFSIGNALED (status))
        kills++;
      else
        g_assert_cmpint (WEXITSTATUS (status), ==, 0);

      guint32 reported = last_reported (report[0]);
      close (report[0]);
      reported_saves += reported > last;

      g_autoptr (GError) error = NULL;
      g_autoptr (LkReview) review = load (path, &error);
      g_assert_no_error (error);
      /* Never older than what the previous round found on disk, and every
       * save the child was told had succeeded is in the file: the one save
       * the kill may have cut short adds at most one decision more. */
      g_assert_cmpuint (lk_review_n_decisions (review), >=, last);
      g_assert_cmpuint (lk_review_n_decisions (review), >=, reported);
      g_assert_cmpuint (lk_review_n_decisions (review), <=, MAX (reported, last) + 1);
      last = lk_review_n_decisions (review);
    }
  g_assert_cmpuint (kills, ==, 60);
  /* Saves were reported done before kills (20 of 60 rounds on a loaded
   * 2-core Zen 4): the check above had work. */
  g_assert_cmpuint (reported_saves, >, 0);
  /* The children got saves through: the kills hit a live save loop. */
  g_assert_cmpuint (last, >, 0);

  /* Temporary files a kill left behind mid-save: the evidence that kills
   * landed inside saves, never mistaken for the review itself. */
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint leftovers = 0;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      leftovers += !g_str_equal (name, "review.json") && !g_str_equal (name, ".review.json.lock");
      g_unlink (p);
    }
  g_test_message (
      "%u kills, %u decisions on disk at the end, %u kills left a temporary file, "
      "%u rounds reported a save done before the kill (one save cycle: %" G_GINT64_FORMAT " us)",
      kills, last, leftovers, reported_saves, cycle);
  g_rmdir (dir);
  g_rand_free (rand);
}

typedef struct
{
  char *dir;
  char *path;
  char *control;
} ShimFixture;

static gboolean
shim_setup (ShimFixture *f)
{
  const char *control = g_getenv ("LK_FAIL_SHIM_CONTROL");

  if (control == NULL || g_getenv ("LD_PRELOAD") == NULL)
    {
      g_test_skip ("needs lk-fail-shim preloaded (meson sets it up in builds without sanitizers)");
      return FALSE;
    }
  f->control = g_strdup (control);
  f->dir = g_dir_make_tmp ("lk-shim-XXXXXX", NULL);
  f->path = g_build_filename (f->dir, "review.json", NULL);
  return TRUE;
}

static void
shim_set (ShimFixture *f, const char *mode)
{
  g_autofree char *line = mode ? g_strdup_printf ("%s %s\n", mode, f->dir) : g_strdup ("");
  g_autoptr (GError) error = NULL;

  /* The control file lives outside the failing folder. */
  g_assert_true (g_file_set_contents (f->control, line, -1, &error));
  g_assert_no_error (error);
}

static void
shim_teardown (ShimFixture *f)
{
  shim_set (f, NULL);
  g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (f->dir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->control);
}

/* After a failed save the folder holds what it held before: review.json and
 * the lock file, never a temporary file left behind (issue 19). */
static void
assert_no_temporary (const ShimFixture *f)
{
  g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
  const char *name;
  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (strcmp (name, "review.json") != 0 && strcmp (name, ".review.json.lock") != 0)
      g_error ("a failed save left “%s” in %s", name, f->dir);
}

static void
check_refused_then_retried (const char *mode, const char *expected_in_message)
{
  ShimFixture f;
  g_autoptr (GError) error = NULL;

  if (!shim_setup (&f))
    return;

  /* A first version on disk. */
  g_autoptr (LkReview) review = load (f.path, &error);
  g_assert_no_error (error);
  decide (review, 1);
  g_assert_true (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);

  /* The disk fills (or the medium turns read-only); two more decisions. */
  shim_set (&f, mode);
  decide (review, 2);
  decide (review, 3);
  g_assert_false (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_nonnull (error);
  g_test_message ("%s: %s", mode, error->message);
  g_assert_true (strstr (error->message, f.path) != NULL);
  g_assert_true (strstr (error->message, expected_in_message) != NULL);
  g_clear_error (&error);
  assert_no_temporary (&f);

  /* The decisions are kept in memory; the file on disk is the first version. */
  g_assert_cmpuint (lk_review_n_decisions (review), ==, 3);
  shim_set (&f, NULL);
  g_autoptr (LkReview) on_disk = load (f.path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (on_disk), ==, 1);

  /* Space (or write access) returns: the same review saves, nothing lost. */
  g_assert_true (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  g_autoptr (LkReview) again = load (f.path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (again), ==, 3);

  shim_teardown (&f);
}

static void
test_full_disk_keeps_decisions_and_retry_succeeds (void)
{
  check_refused_then_retried ("enospc", g_strerror (ENOSPC));
}

static void
test_read_only_folder_keeps_decisions_and_retry_succeeds (void)
{
  check_refused_then_retried ("erofs", g_strerror (EROFS));
}

/* Issue 19: the disk could not store the temporary file (fsync fails). */
static void
test_failing_fsync_keeps_decisions_and_retry_succeeds (void)
{
  check_refused_then_retried ("eio-fsync", g_strerror (EIO));
}

/* Issue 19: the rename finds the folder itself full. */
static void
test_full_folder_on_rename_keeps_decisions_and_retry_succeeds (void)
{
  check_refused_then_retried ("enospc-rename", g_strerror (ENOSPC));
}

/* Issue 19: every write() under the folder writes a third of what it was
 * asked. The save goes on writing until the file is whole: what loads back
 * is every decision, and no temporary file is left. */
static void
test_short_writes_still_save_the_whole_file (void)
{
  ShimFixture f;
  g_autoptr (GError) error = NULL;

  if (!shim_setup (&f))
    return;
  g_autoptr (LkReview) review = load (f.path, &error);
  g_assert_no_error (error);
  for (guint k = 1; k <= 5; k++)
    decide (review, k);
  shim_set (&f, "short");
  /* The shim is in the way: a write of 90 bytes writes 30. */
  g_autofree char *probe = g_build_filename (f.dir, "probe", NULL);
  int fd = g_open (probe, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  char bytes[90] = { 0 };
  g_assert_cmpint (write (fd, bytes, sizeof bytes), ==, 30);
  g_assert_cmpint (close (fd), ==, 0);
  g_assert_cmpint (g_unlink (probe), ==, 0);
  g_assert_true (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  assert_no_temporary (&f);
  shim_set (&f, NULL);
  g_autoptr (LkReview) again = load (f.path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (again), ==, 5);
  shim_teardown (&f);
}

/* A file system without locks (ENOLCK from flock, as NFS without its lock
 * daemon): the save goes on unlocked (and says so once), nothing is lost. */
static void
test_no_locks_saves_unlocked (void)
{
  ShimFixture f;
  g_autoptr (GError) error = NULL;

  if (!shim_setup (&f))
    return;
  shim_set (&f, "enolck");
  g_autoptr (LkReview) review = load (f.path, &error);
  g_assert_no_error (error);
  decide (review, 1);
  g_assert_true (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  decide (review, 2);
  g_assert_true (lk_review_save (review, f.path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  shim_set (&f, NULL);
  g_autoptr (LkReview) on_disk = load (f.path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lk_review_n_decisions (on_disk), ==, 2);
  shim_teardown (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/review-durability/sigkill-during-saves-leaves-old-or-new",
                   test_sigkill_during_saves_leaves_old_or_new);
  g_test_add_func ("/review-durability/full-disk-keeps-decisions-and-retry-succeeds",
                   test_full_disk_keeps_decisions_and_retry_succeeds);
  g_test_add_func ("/review-durability/read-only-folder-keeps-decisions-and-retry-succeeds",
                   test_read_only_folder_keeps_decisions_and_retry_succeeds);
  g_test_add_func ("/review-durability/failing-fsync-keeps-decisions-and-retry-succeeds",
                   test_failing_fsync_keeps_decisions_and_retry_succeeds);
  g_test_add_func ("/review-durability/full-folder-on-rename-keeps-decisions-and-retry-succeeds",
                   test_full_folder_on_rename_keeps_decisions_and_retry_succeeds);
  g_test_add_func ("/review-durability/short-writes-still-save-the-whole-file",
                   test_short_writes_still_save_the_whole_file);
  g_test_add_func ("/review-durability/no-locks-saves-unlocked", test_no_locks_saves_unlocked);
  return g_test_run ();
}
