/* test-ui-workers — the face viewer, the diagnostics window, the import
 * dialog, the race page and a session are finalized on the main thread when
 * their last reference goes while a worker runs, under Xvfb
 *
 * GLib's worker drops its own reference to a GTask after it handed the
 * result to the main context; when the main thread has finished with the
 * result first, whatever the task holds goes with the worker's reference,
 * off the main thread: a widget finalized outside GTK's thread, a session
 * calling g_application_release and g_file_monitor_cancel away from its
 * context. Each test drops the object's last reference of its own while a
 * worker runs and records, in the destroy notify of data set on it, the
 * thread it is finalized on.
 *
 * The viewer's worker is return-on-cancel, so it is made to outlive the
 * viewer for real: the photo of a decode cancelled by a step to the next
 * face is a FIFO that the test feeds only once the viewer is gone. The other
 * workers return before their callbacks run, so the losing race is staged:
 * a test hook takes a reference to the task on the worker, and the test
 * drops it from a thread of its own after the result landed, as GLib's
 * worker does when it is the last.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "library/lk-library.h"
#include "lk-diagnostics-window.h"
#include "lk-face-viewer.h"
#include "lk-import-dialog.h"
#include "lk-race-page.h"
#include "lk-session-private.h"
#include "lk-session.h"
#include "lk-test-display.h"
#include "lk-test-util.h"

static char *library_dir;
static GThread *main_thread;

/* ---- where an object is finalized -------------------------------------- */

typedef struct
{
  GMutex lock;
  gboolean done;
  GThread *thread;
} Finalized;

/* The destroy notify of the object's data: it runs in g_object_finalize
 * (a weak reference's notify would run in dispose). */
static void
on_finalized (gpointer data)
{
  Finalized *finalized = data;

  g_mutex_lock (&finalized->lock);
  finalized->done = TRUE;
  finalized->thread = g_thread_self ();
  g_mutex_unlock (&finalized->lock);
  g_main_context_wakeup (NULL);
}

static gboolean
is_finalized (gpointer data)
{
  Finalized *finalized = data;

  g_mutex_lock (&finalized->lock);
  gboolean done = finalized->done;
  g_mutex_unlock (&finalized->lock);
  return done;
}

static void
watch_finalize (gpointer object, Finalized *finalized)
{
  g_mutex_init (&finalized->lock);
  finalized->done = FALSE;
  finalized->thread = NULL;
  g_object_set_data_full (G_OBJECT (object), "lk-test-finalized", finalized, on_finalized);
}

static void
assert_finalized_on_main_thread (Finalized *finalized)
{
  lk_test_wait (is_finalized, finalized);
  g_assert_true (finalized->thread == main_thread);
  g_mutex_clear (&finalized->lock);
}

/* ---- the worker's last reference, staged ------------------------------- */

static GTask *held_task; /* set on the worker */

static void
hold_task (GTask *task)
{
  g_atomic_pointer_set (&held_task, g_object_ref (task));
}

static gboolean
held_task_landed (gpointer data)
{
  GTask *task = g_atomic_pointer_get (&held_task);

  return task != NULL && g_task_get_completed (task);
}

static gpointer
unref_in_thread (gpointer data)
{
  g_object_unref (data);
  return NULL;
}

/* Waits for the held task's result to land on the main thread, then drops
 * the task's last reference on another thread, as a worker that lost the
 * race does. */
static void
drop_held_task_off_main_thread (void)
{
  lk_test_wait (held_task_landed, NULL);
  GTask *task = g_atomic_pointer_exchange (&held_task, NULL);
  g_thread_join (g_thread_new ("worker-stand-in", unref_in_thread, task));
}

/* ---- the tests ----------------------------------------------------------- */

static gpointer
feed_fifo (gpointer data)
{
  const char *path = data;
  /* Blocks until the viewer's worker opens the photo. */
  int fd = open (path, O_WRONLY);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "not a photo", 11), ==, 11);
  close (fd);
  return NULL;
}

static gboolean
viewer_settled (gpointer data)
{
  return !lk_face_viewer_is_loading (data);
}

static void
test_viewer_finalized_on_main_thread (void)
{
  g_autoptr (LkSession) session = lk_session_new (library_dir);
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_open (session, &error));
  g_assert_no_error (error);
  const LkLibrary *library = lk_session_get_library (session);
  /* The first face's photo, and a face of another photo. */
  guint32 faces[2] = { 0, 0 };
  for (gsize f = 1; f < library->count && faces[1] == 0; f++)
    if (library->photo[f] != library->photo[0])
      faces[1] = (guint32) f;
  g_assert_cmpuint (faces[1], !=, 0);
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[faces[0]]);
  g_autofree char *path = lk_library_photo_file (library, photo, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (mkfifo (path, 0600), ==, 0);

  LkFaceViewer *viewer = lk_face_viewer_present (NULL, session, faces, 2, 0);
  g_assert_true (lk_face_viewer_is_loading (viewer));
  Finalized finalized;
  watch_finalize (viewer, &finalized);

  /* The first decode waits on the FIFO; stepping on cancels it, and its
   * cancelled result lands at once (return-on-cancel) while its worker still
   * reads. The second photo is shown, then the viewer goes. */
  lk_face_viewer_set_index (viewer, 1);
  lk_test_wait (viewer_settled, viewer);
  g_assert_nonnull (lk_face_viewer_get_texture (viewer));
  gtk_window_destroy (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (viewer))));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  /* Now the first worker may end. */
  g_thread_join (g_thread_new ("fifo", feed_fifo, path));
  assert_finalized_on_main_thread (&finalized);
  g_unlink (path);
}

static void
test_diagnostics_peak_finalized_on_main_thread (void)
{
  lk_diagnostics_window_worker_hook = hold_task;
  /* Measuring the FMA peak starts as the window is made. */
  LkDiagnosticsWindow *window = lk_diagnostics_window_new (NULL);
  Finalized finalized;
  watch_finalize (window, &finalized);

  gtk_window_destroy (GTK_WINDOW (window));
  drop_held_task_off_main_thread ();
  lk_diagnostics_window_worker_hook = NULL;
  assert_finalized_on_main_thread (&finalized);
}

static gboolean
is_idle (gpointer data)
{
  return !lk_diagnostics_window_is_busy (data);
}

static void
test_diagnostics_run_finalized_on_main_thread (void)
{
  LkDiagnosticsWindow *window = lk_diagnostics_window_new (NULL);
  g_autoptr (GError) error = NULL;

  gtk_window_present (GTK_WINDOW (window));
  lk_test_wait (is_idle, window);
  Finalized finalized;
  watch_finalize (window, &finalized);

  lk_diagnostics_window_worker_hook = hold_task;
  g_assert_true (lk_diagnostics_window_run (window, NULL, NULL, &error));
  g_assert_no_error (error);
  /* As closing the window does: stopped, then gone. */
  lk_diagnostics_window_stop (window);
  gtk_window_destroy (GTK_WINDOW (window));
  drop_held_task_off_main_thread ();
  lk_diagnostics_window_worker_hook = NULL;
  assert_finalized_on_main_thread (&finalized);
}

/* An import that fails at once (its source is not there) still runs on a
 * worker: the dialog, destroyed while it runs, goes with the task. */
static void
test_import_dialog_finalized_on_main_thread (void)
{
  const LkImportDialogSource sources[]
      = { LK_IMPORT_DIALOG_PHOTOPRISM, LK_IMPORT_DIALOG_PHOTOS, LK_IMPORT_DIALOG_IMMICH };
  guint k = 0;
  while (k < G_N_ELEMENTS (sources) && !lk_import_dialog_available (sources[k]))
    k++;
  if (k == G_N_ELEMENTS (sources))
    {
      g_test_skip ("built without an importer");
      return;
    }
  g_autofree char *root = g_dir_make_tmp ("lk-ui-workers-import-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (root, "not-there", NULL);
  g_autofree char *url = g_strdup_printf ("postgresql://immich@127.0.0.1:%u/immich?sslmode=disable",
                                          lk_test_free_port ());
  g_autofree char *output = g_build_filename (root, "library", NULL);
  LkImportDialog *dialog = lk_import_dialog_new (NULL, sources[k]);
  Finalized finalized;
  watch_finalize (dialog, &finalized);

  lk_import_dialog_set_database (dialog, sources[k] == LK_IMPORT_DIALOG_IMMICH ? url : missing);
  lk_import_dialog_set_media (dialog, missing);
  lk_import_dialog_set_output (dialog, output);
  lk_import_dialog_worker_hook = hold_task;
  lk_import_dialog_start (dialog);
  g_assert_true (lk_import_dialog_is_running (dialog));
  gtk_window_destroy (GTK_WINDOW (dialog));
  drop_held_task_off_main_thread ();
  lk_import_dialog_worker_hook = NULL;
  assert_finalized_on_main_thread (&finalized);
  lk_test_remove_tree (root);
}

/* A race of two commands that wait for a signal: stopped, as closing the
 * diagnostics window does, and the page's last reference dropped while the
 * worker is still killing and reaping the first. */
static void
test_race_page_finalized_on_main_thread (void)
{
  const char *helper = g_getenv ("LK_RACE_HELPER");
  g_assert_nonnull (helper);
  g_autofree char *command = g_strdup_printf ("'%s' --pause", helper);
  LkRacePage *page = LK_RACE_PAGE (g_object_ref_sink (lk_race_page_new ()));
  g_autoptr (GError) error = NULL;
  Finalized finalized;

  watch_finalize (page, &finalized);
  lk_race_page_set_commands (page, command, command);
  lk_race_page_set_reps (page, 2);
  lk_race_page_worker_hook = hold_task;
  g_assert_true (lk_race_page_run (page, &error));
  g_assert_no_error (error);
  lk_race_page_stop (page);
  g_object_unref (page);
  drop_held_task_off_main_thread ();
  lk_race_page_worker_hook = NULL;
  assert_finalized_on_main_thread (&finalized);
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  gboolean *landed = user_data;
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_load_finish (LK_SESSION (source), result, &error));
  g_assert_no_error (error);
  *landed = TRUE;
}

static gboolean
is_true (gpointer data)
{
  return *(gboolean *) data;
}

static void
test_session_finalized_on_main_thread (void)
{
  LkSession *session = lk_session_new (library_dir);
  gboolean landed = FALSE;
  Finalized finalized;

  watch_finalize (session, &finalized);
  lk_session_worker_hook = hold_task;
  lk_session_load_async (session, NULL, on_loaded, &landed);
  g_object_unref (session);
  lk_test_wait (is_true, &landed);
  drop_held_task_off_main_thread ();
  lk_session_worker_hook = NULL;
  assert_finalized_on_main_thread (&finalized);
}

int
main (int argc, char **argv)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-ui-workers-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;

  lk_test_display_init (&argc, &argv);
  main_thread = g_thread_self ();
  library_dir = g_build_filename (tmp, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "make-sample", library_dir, "--faces", "60",
                                    "--seed", "5", NULL),
                   ==, 0);

  g_test_add_func ("/ui-workers/viewer-finalized-on-main-thread",
                   test_viewer_finalized_on_main_thread);
  g_test_add_func ("/ui-workers/diagnostics-peak-finalized-on-main-thread",
                   test_diagnostics_peak_finalized_on_main_thread);
  g_test_add_func ("/ui-workers/diagnostics-run-finalized-on-main-thread",
                   test_diagnostics_run_finalized_on_main_thread);
  g_test_add_func ("/ui-workers/import-dialog-finalized-on-main-thread",
                   test_import_dialog_finalized_on_main_thread);
  g_test_add_func ("/ui-workers/race-page-finalized-on-main-thread",
                   test_race_page_finalized_on_main_thread);
  g_test_add_func ("/ui-workers/session-finalized-on-main-thread",
                   test_session_finalized_on_main_thread);
  int status = g_test_run ();

  lk_test_remove_tree (tmp);
  g_free (library_dir);
  return status;
}
