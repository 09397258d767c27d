/* test-session — the engine's one session: loads, progress, decisions, re-scans
 *
 * No display: the session is GIO only. Asynchronous loads land on the
 * default main context, which the test iterates itself, so "a decision made
 * while the re-scan runs" is a state the test creates on purpose (the load
 * cannot land before the test iterates) rather than a race it hopes to win.
 */
#include "config.h"

#include <fcntl.h>
#include <sys/file.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <unistd.h>
/* Guarded as in test-cpu.c: the Flatpak's SDK stand-in (and any machine
 * without valgrind's headers) builds this test too. */
#if HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "library/lk-sample.h"
#include "scan/lk-scan-cache.h"
#include "lk-session-private.h"
#include "lk-session.h"
#include "lk-test-util.h"

/* A few dozen people in a moment, even under valgrind and qemu. */
#define FACES 300

/* A fresh copy of the sample library (so every test starts without review.json). */
static char *
make_library_of (gsize faces)
{
  g_autofree char *tmp = g_dir_make_tmp ("lk-session-XXXXXX", NULL);
  char *folder = g_build_filename (tmp, "library", NULL);
  LkSampleOptions options = LK_SAMPLE_OPTIONS_DEFAULT;
  g_autoptr (GError) error = NULL;

  g_assert_nonnull (tmp);
  options.faces = faces;
  options.seed = 5;
  options.thumbnails = FALSE;
  options.photos = FALSE;
  g_assert_true (lk_sample_write (folder, &options, &error));
  g_assert_no_error (error);
  return folder;
}

static char *
make_library (void)
{
  return make_library_of (FACES);
}

static void
remove_library (const char *folder)
{
  g_autofree char *parent = g_path_get_dirname (folder);
  lk_test_remove_tree (parent);
}

typedef struct
{
  gboolean done;
  gboolean ok;
  GError *error;
} LoadOutcome;

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadOutcome *outcome = user_data;

  outcome->ok = lk_session_load_finish (LK_SESSION (source), result, &outcome->error);
  outcome->done = TRUE;
}

static void
wait_for (gboolean *flag)
{
  while (!*flag)
    g_main_context_iteration (g_main_context_get_thread_default (), TRUE);
}

/* Until nothing is in flight or waiting: a landing commit starts the next. */
static void
wait_idle (LkSession *session)
{
  while (lk_session_is_committing (session) || lk_session_is_loading (session)
         || lk_session_get_n_queued (session) > 0)
    g_main_context_iteration (g_main_context_get_thread_default (), TRUE);
}

/* Runs the main context for `ms` milliseconds. */
static void
spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (g_main_context_get_thread_default (), FALSE))
      g_usleep (1000);
}

static LkSession *
load_async (const char *folder)
{
  LkSession *session = lk_session_new (folder);
  LoadOutcome outcome = { 0 };

  lk_session_load_async (session, NULL, on_loaded, &outcome);
  g_assert_true (lk_session_is_loading (session));
  wait_for (&outcome.done);
  g_assert_no_error (outcome.error);
  g_assert_true (outcome.ok);
  g_assert_true (lk_session_is_loaded (session));
  g_assert_false (lk_session_is_loading (session));
  return session;
}

static LkPersonItem *
person_at (LkSession *session, guint k)
{
  GListModel *people = lk_session_get_people (session);

  g_assert_cmpuint (g_list_model_get_n_items (people), >, k + 1);
  return g_list_model_get_item (people, k);
}

/* The name review.json gives `id`, read back by a session of its own (the
 * CLI's path: synchronous). */
static char *
saved_name (const char *folder, const char *id)
{
  g_autoptr (LkSession) session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  LkPersonItem *item = lk_session_find_person (session, id);
  g_assert_nonnull (item);
  return g_strdup (lk_person_item_get_name (item));
}

/* The CLI's path: a synchronous load, a decision saved and re-clustered
 * before the call returns, and the next session reads it back. */
static void
test_sync_load_and_decide (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (lk_session_is_loaded (session));
  const LkPeople *people = lk_session_peek_people (session);
  g_assert_cmpuint (people->n_people, >, 2);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, people->n_people);
  g_assert_cmpuint (lk_session_get_n_pairs (session), >, 0);
  g_autofree char *id = g_strdup (people->people[0].id);

  g_assert_true (lk_session_rename (session, id, "Ada Lovelace", &error));
  g_assert_no_error (error);
  g_assert_false (lk_session_is_committing (session));
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, id)), ==,
                   "Ada Lovelace");
  g_autofree char *saved = saved_name (folder, id);
  g_assert_cmpstr (saved, ==, "Ada Lovelace");

  /* A decision that cannot be done changes nothing and says why. */
  g_assert_false (lk_session_rename (session, "p-none", "Nobody", &error));
  g_assert_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_NO_PERSON);
  remove_library (folder);
}

/* `likeness-cli people`'s session gives the embeddings back after the scan
 * (they were 195 MB of its peak at 100,000 faces): the rows are gone, and
 * the people are a session's that kept them, person for person, face for
 * face, with a decision made after too (a re-clustering reads no row). */
static void
test_released_embeddings_same_people (void)
{
  /* Two copies of one sample, so each session's decision is its own. */
  g_autofree char *folder = make_library (), *other = make_library ();
  g_autoptr (LkSession) kept = lk_session_new (folder);
  g_autoptr (LkSession) lean = lk_session_new (other);
  g_autoptr (GError) error = NULL;

  lk_session_set_release_embeddings (lean, TRUE);
  g_assert_true (lk_session_load (kept, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (lk_session_load (lean, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (lk_session_get_library (kept)->embeddings);
  g_assert_null (lk_session_get_library (lean)->embeddings);
  g_assert_cmpuint (lk_session_get_library (lean)->count, ==, FACES);
  for (int round = 0; round < 2; round++)
    {
      const LkPeople *want = lk_session_peek_people (kept), *got = lk_session_peek_people (lean);
      g_assert_cmpuint (got->n_people, ==, want->n_people);
      g_assert_cmpuint (got->n_people, >, 2);
      for (gsize k = 0; k < want->n_people; k++)
        {
          g_assert_cmpstr (got->people[k].id, ==, want->people[k].id);
          g_assert_cmpuint (got->people[k].cover, ==, want->people[k].cover);
          g_assert_cmpmem (got->people[k].faces, got->people[k].n_faces * sizeof (guint32),
                           want->people[k].faces, want->people[k].n_faces * sizeof (guint32));
        }
      g_assert_cmpuint (got->n_unassigned, ==, want->n_unassigned);
      if (round == 1)
        break;
      /* The same merge in both. */
      g_autofree char *a = g_strdup (want->people[0].id), *b = g_strdup (want->people[1].id);
      g_assert_true (lk_session_merge (kept, a, b, &error));
      g_assert_no_error (error);
      g_assert_true (lk_session_merge (lean, a, b, &error));
      g_assert_no_error (error);
    }
  remove_library (folder);
  remove_library (other);
}

/* A load keeps its scan in the user's cache (the tests' XDG_CACHE_HOME),
 * never in the library folder, and the next load of the library, one face
 * smaller, reuses it: the pairs of the other faces are the kept ones, and
 * equal to a full scan's. */
static void
test_load_keeps_its_scan_in_the_user_cache (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (GError) error = NULL;
  g_autofree char *cache = NULL;

  {
    g_autoptr (LkSession) session = lk_session_new (folder);
    g_assert_true (lk_session_load (session, NULL, &error));
    g_assert_no_error (error);
    cache = lk_scan_cache_path (lk_session_get_library (session)->folder);
  }
  g_autofree char *user_cache = g_build_filename (g_get_user_cache_dir (), "likeness", NULL);
  g_assert_true (g_str_has_prefix (cache, user_cache));
  g_assert_true (g_file_test (cache, G_FILE_TEST_IS_REGULAR));
  g_autoptr (GDir) dir = g_dir_open (folder, 0, &error);
  g_assert_no_error (error);
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    g_assert_false (g_str_has_suffix (name, ".scan"));

  /* The last face gone: its row cut from embeddings.f32, its entry from
   * library.json. */
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *embeddings = json_object_get_object_member (root, "embeddings");
  gint64 dim = json_object_get_int_member (embeddings, "dim");
  json_array_remove_element (json_object_get_array_member (root, "faces"), FACES - 1);
  json_object_set_int_member (embeddings, "count", FACES - 1);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  g_assert_true (json_generator_to_file (generator, manifest, &error));
  g_autofree char *rows
      = g_build_filename (folder, json_object_get_string_member (embeddings, "file"), NULL);
  g_assert_cmpint (truncate (rows, (off_t) ((FACES - 1) * dim * sizeof (float))), ==, 0);

  g_autoptr (LkSession) again = lk_session_new (folder);
  g_assert_true (lk_session_load (again, NULL, &error));
  g_assert_no_error (error);
  const LkScanResult *scan = lk_session_get_scan (again);
  g_assert_cmpuint (scan->reused_faces, ==, FACES - 1);
  const LkLibrary *library = lk_session_get_library (again);
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (LkScanResult) full
      = lk_scan (&faces, &library->calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scan->pairs->len, ==, full->pairs->len);
  g_assert_cmpmem (scan->pairs->data, scan->pairs->len * sizeof (LkPair), full->pairs->data,
                   full->pairs->len * sizeof (LkPair));
  remove_library (folder);
}

/* lk_session_open reads no more than the review: an undo works, a decision
 * that needs people says the library was not scanned. */
static void
test_open_only_undoes (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (GError) error = NULL;
  g_autofree char *id = NULL;
  {
    g_autoptr (LkSession) session = lk_session_new (folder);
    g_assert_true (lk_session_load (session, NULL, &error));
    id = g_strdup (lk_session_peek_people (session)->people[0].id);
    g_assert_true (lk_session_rename (session, id, "Grace", &error));
    g_assert_no_error (error);
  }
  g_autoptr (LkSession) session = lk_session_new (folder);
  g_assert_true (lk_session_open (session, &error));
  g_assert_no_error (error);
  g_assert_null (lk_session_get_scan (session));
  g_assert_false (lk_session_rename (session, id, "Hopper", &error));
  g_assert_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_true (lk_session_can_undo (session));
  g_assert_true (lk_session_undo (session, &error));
  g_assert_no_error (error);
  g_autofree char *saved = saved_name (folder, id);
  g_assert_null (saved);
  remove_library (folder);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

/* The window's path: the load runs on a worker, its progress reaches the
 * main context as properties, and it lands there. */
static void
test_async_load_reports_progress (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = lk_session_new (folder);
  LoadOutcome outcome = { 0 };
  guint messages = 0, totals = 0, changed = 0;

  g_signal_connect (session, "notify::message", G_CALLBACK (count_notify), &messages);
  g_signal_connect (session, "notify::total", G_CALLBACK (count_notify), &totals);
  g_signal_connect (session, "changed", G_CALLBACK (count_notify), &changed);
  lk_session_load_async (session, NULL, on_loaded, &outcome);
  g_assert_cmpstr (lk_session_get_message (session), ==, "Reading the library");
  g_assert_false (lk_session_is_loaded (session));
  wait_for (&outcome.done);
  g_assert_no_error (outcome.error);
  g_assert_true (outcome.ok);
  g_assert_cmpuint (messages, >=, 1); /* at least "Grouping faces into people" */
  g_assert_cmpuint (totals, ==, 1);
  g_assert_cmpuint (lk_session_get_total (session), ==, FACES);
  g_assert_cmpuint (changed, ==, 1);
  g_assert_cmpuint (lk_session_get_n_people (session), >, 2);
  remove_library (folder);
}

typedef struct
{
  LkSession *session;
  guint n;
} Producer;

static gpointer
produce (gpointer data)
{
  Producer *producer = data;

  for (guint k = 1; k <= producer->n; k++)
    lk_session_report_progress (producer->session, "Working", (double) k / producer->n);
  return NULL;
}

static guint
dispatch_pending (void)
{
  guint n = 0;

  while (g_main_context_iteration (NULL, FALSE))
    n++;
  return n;
}

/* A producer reporting 100,000 times from another thread while the main loop
 * is busy costs the main loop one update, carrying the latest value: one idle
 * is pending at most. */
static void
test_progress_is_coalesced (void)
{
  g_autoptr (LkSession) session = lk_session_new ("/nonexistent");
  guint fractions = 0, messages = 0;
  Producer producer = { session, 100000 };

  dispatch_pending (); /* what earlier tests left, so the count below is this session's */
  g_signal_connect (session, "notify::fraction", G_CALLBACK (count_notify), &fractions);
  g_signal_connect (session, "notify::message", G_CALLBACK (count_notify), &messages);
  GThread *thread = g_thread_new ("producer", produce, &producer);
  g_thread_join (thread);
  g_assert_cmpuint (fractions, ==, 0); /* nothing reaches the main context by itself */
  g_assert_cmpuint (dispatch_pending (), ==, 1);
  g_assert_cmpuint (fractions, ==, 1);
  g_assert_cmpuint (messages, ==, 1);
  g_assert_cmpfloat (lk_session_get_fraction (session), ==, 1.0);
  g_assert_cmpstr (lk_session_get_message (session), ==, "Working");

  /* After it ran, the next report schedules the next one. */
  lk_session_report_progress (session, "Working", 0.5);
  lk_session_report_progress (session, "Working", 0.25);
  g_assert_cmpuint (dispatch_pending (), ==, 1);
  g_assert_cmpuint (fractions, ==, 2);
  g_assert_cmpfloat (lk_session_get_fraction (session), ==, 0.25);
}

/* A cancelled re-scan, and one superseded by the next, end with
 * G_IO_ERROR_CANCELLED and change nothing: the people on screen stay. */
static void
test_cancelled_and_superseded_loads (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autoptr (LkPersonItem) first = person_at (session, 0);
  guint n_people = lk_session_get_n_people (session);
  guint changed = 0;

  g_signal_connect (session, "changed", G_CALLBACK (count_notify), &changed);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  LoadOutcome cancelled = { 0 };
  lk_session_load_async (session, cancellable, on_loaded, &cancelled);
  g_cancellable_cancel (cancellable);
  wait_for (&cancelled.done);
  g_assert_false (cancelled.ok);
  g_assert_error (cancelled.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&cancelled.error);
  g_assert_false (lk_session_is_loading (session));
  g_assert_cmpuint (changed, ==, 0);
  g_assert_cmpuint (lk_session_get_n_people (session), ==, n_people);
  g_assert_true (lk_session_find_person (session, lk_person_item_get_id (first)) == first);

  LoadOutcome superseded = { 0 }, newest = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &superseded);
  lk_session_load_async (session, NULL, on_loaded, &newest);
  wait_for (&superseded.done);
  wait_for (&newest.done);
  g_assert_error (superseded.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&superseded.error);
  g_assert_no_error (newest.error);
  g_assert_true (newest.ok);
  g_assert_cmpuint (changed, ==, 1);
  /* The same library again: the person keeps its item. */
  g_assert_true (lk_session_find_person (session, lk_person_item_get_id (first)) == first);
  remove_library (folder);
}

/* A re-scan that lands while a decision is being saved waits for that save
 * (held). Another load started meanwhile supersedes it, as it would one still
 * running: it used to land anyway when the save ended, finishing TRUE and
 * clearing "loading" while the newest load still ran. The decision's save is
 * kept waiting by holding review.json's lock. */
static void
test_rescan_supersedes_a_held_load (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autoptr (LkPersonItem) first = person_at (session, 0);
  g_autofree char *lock_path = g_build_filename (folder, ".review.json.lock", NULL);
  g_autoptr (GError) error = NULL;
  int lock = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

  g_assert_cmpint (lock, >=, 0);
  g_assert_cmpint (flock (lock, LOCK_EX), ==, 0);
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (first), "Ada", &error));
  g_assert_no_error (error);
  LoadOutcome held = { 0 }, newest = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &held);
  while (!lk_session_holds_load (session))
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (lk_session_is_committing (session));

  lk_session_load_async (session, NULL, on_loaded, &newest);
  g_assert_cmpint (flock (lock, LOCK_UN), ==, 0);
  g_close (lock, NULL);
  wait_for (&held.done);
  g_assert_error (held.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&held.error);
  g_assert_false (held.ok);
  g_assert_true (newest.done || lk_session_is_loading (session));
  wait_for (&newest.done);
  g_assert_no_error (newest.error);
  g_assert_true (newest.ok);
  wait_idle (session);
  g_assert_cmpstr (lk_person_item_get_name (first), ==, "Ada");
  remove_library (folder);
}

static void
count_changed (LkSession *session, gpointer user_data)
{
  (*(guint *) user_data)++;
}

/* The caller cancels a load held for a committing decision: like a
 * cancelled load still running, it must change nothing. It used to land
 * when the commit ended (new people, a second "changed") while its caller
 * was told it was cancelled. */
static void
test_cancelled_held_load_changes_nothing (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autoptr (LkPersonItem) first = person_at (session, 0);
  g_autofree char *lock_path = g_build_filename (folder, ".review.json.lock", NULL);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  guint changed = 0;
  int lock = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

  g_assert_cmpint (lock, >=, 0);
  g_assert_cmpint (flock (lock, LOCK_EX), ==, 0);
  g_assert_true (lk_session_rename (session, lk_person_item_get_id (first), "Ada", &error));
  g_assert_no_error (error);
  LoadOutcome held = { 0 };
  lk_session_load_async (session, cancellable, on_loaded, &held);
  while (!lk_session_holds_load (session))
    g_main_context_iteration (NULL, TRUE);
  g_signal_connect (session, "changed", G_CALLBACK (count_changed), &changed);
  g_cancellable_cancel (cancellable);
  g_assert_cmpint (flock (lock, LOCK_UN), ==, 0);
  g_close (lock, NULL);
  wait_for (&held.done);
  g_assert_error (held.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&held.error);
  wait_idle (session);
  /* The rename's commit said "changed"; the cancelled load did not land. */
  g_assert_cmpuint (changed, ==, 1);
  g_assert_false (lk_session_is_loading (session));
  g_assert_cmpstr (lk_person_item_get_name (first), ==, "Ada");
  remove_library (folder);
}

/* Save Elsewhere while a re-scan runs. The re-scan's worker resolved where
 * decisions go before the user chose, and landing put that back: the next
 * decisions went to the library's own review.json while the user's
 * configuration named the new one, which the next run reads. The session
 * never says a place it does not keep. */
static void
test_save_elsewhere_during_rescan_holds (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autofree char *parent = g_path_get_dirname (folder);
  g_autofree char *elsewhere = g_build_filename (parent, "elsewhere", NULL);
  g_autofree char *there = g_build_filename (elsewhere, "review.json", NULL);
  g_autofree char *own = g_build_filename (folder, "review.json", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir (elsewhere, 0755), ==, 0);
  LoadOutcome rescan = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &rescan);
  /* What decides: the re-scan has not landed. It lands on this thread's
   * main context, which does not run here, so however far its worker has
   * got (where decisions go is the first thing it reads) the session is
   * still loading, and must refuse for the whole of it. */
  g_assert_true (lk_session_is_loading (session));
  g_assert_false (lk_session_save_elsewhere (session, elsewhere, &error));
  /* Refused, saying why; nothing moved. */
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_cmpstr (lk_session_get_review_path (session), ==, own);
  g_clear_error (&error);
  wait_for (&rescan.done);
  g_assert_no_error (rescan.error);
  g_assert_true (rescan.ok);
  /* Landed, the re-scan kept its own review path; now the move is taken. */
  g_assert_cmpstr (lk_session_get_review_path (session), ==, own);
  g_assert_true (lk_session_save_elsewhere (session, elsewhere, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (lk_session_get_review_path (session), ==, there);
  remove_library (folder);
}

/* The F5 case: a person is renamed while a re-scan runs. The decision waits
 * in the session's queue, is made against the people the re-scan produced,
 * and is saved: nothing reverts, and review.json holds every decision. */
static void
test_decision_during_rescan_is_kept (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autoptr (LkPersonItem) first = person_at (session, 0);
  g_autoptr (LkPersonItem) second = person_at (session, 1);
  g_autofree char *first_id = g_strdup (lk_person_item_get_id (first));
  g_autofree char *second_id = g_strdup (lk_person_item_get_id (second));
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_rename (session, first_id, "Grace Hopper", &error));
  g_assert_no_error (error);
  g_assert_true (lk_session_is_committing (session));

  /* The re-scan starts while that rename is still being saved. */
  LoadOutcome rescan = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &rescan);
  g_assert_true (lk_session_is_loading (session));
  g_assert_true (lk_session_rename (session, second_id, "Alan Turing", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lk_session_get_n_queued (session), ==, 1);
  g_assert_cmpstr (lk_person_item_get_name (second), ==, NULL); /* not yet: queued */

  wait_for (&rescan.done);
  g_assert_no_error (rescan.error);
  g_assert_true (rescan.ok);
  wait_idle (session);
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, first_id)), ==,
                   "Grace Hopper");
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (session, second_id)), ==,
                   "Alan Turing");
  g_assert_false (lk_session_has_unsaved (session));

  /* On disk, both: the next session (the CLI's path) reads them. */
  g_autofree char *first_saved = saved_name (folder, first_id);
  g_autofree char *second_saved = saved_name (folder, second_id);
  g_assert_cmpstr (first_saved, ==, "Grace Hopper");
  g_assert_cmpstr (second_saved, ==, "Alan Turing");

  /* An undo during a re-scan waits too, and undoes the last decision. */
  LoadOutcome again = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &again);
  g_assert_true (lk_session_undo (session, &error));
  g_assert_no_error (error);
  wait_for (&again.done);
  wait_idle (session);
  g_assert_null (lk_person_item_get_name (lk_session_find_person (session, second_id)));
  g_autofree char *undone = saved_name (folder, second_id);
  g_assert_null (undone);
  remove_library (folder);
}

/* A queued decision that no longer applies when the re-scan lands is
 * reported through "decision-failed", not dropped silently. */
static void
on_decision_failed (LkSession *session, const GError *error, gpointer user_data)
{
  GError **failed = user_data;

  g_assert_null (*failed);
  *failed = g_error_copy (error);
}

static void
test_queued_decision_that_fails_is_reported (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) session = load_async (folder);
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) failed = NULL;

  g_signal_connect (session, "decision-failed", G_CALLBACK (on_decision_failed), &failed);
  LoadOutcome rescan = { 0 };
  lk_session_load_async (session, NULL, on_loaded, &rescan);
  g_assert_true (lk_session_rename (session, "p-gone", "Nobody", &error));
  g_assert_no_error (error);
  wait_for (&rescan.done);
  wait_idle (session);
  g_assert_error (failed, LK_REVIEW_ERROR, LK_REVIEW_ERROR_NO_PERSON);
  remove_library (folder);
}

static void
on_refreshed (LkSession *session, guint n_changed, gpointer user_data)
{
  *(guint *) user_data += n_changed;
}

/* Two writers on one library: the window-like session (asynchronous, watching
 * review.json) and the CLI's (synchronous, one decision per run). The CLI's
 * decision reaches the window's people by itself; the window's next save
 * keeps it; the window's own saves are not taken for another writer's. */
static void
test_other_writers_decisions_are_taken_in (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (LkSession) window = load_async (folder);
  g_autoptr (LkPersonItem) first = person_at (window, 0);
  g_autoptr (LkPersonItem) second = person_at (window, 1);
  g_autofree char *first_id = g_strdup (lk_person_item_get_id (first));
  g_autofree char *second_id = g_strdup (lk_person_item_get_id (second));
  g_autoptr (GError) error = NULL;
  guint refreshed = 0;

  g_signal_connect (window, "decisions-refreshed", G_CALLBACK (on_refreshed), &refreshed);
  g_assert_true (lk_session_rename (window, first_id, "Grace Hopper", &error));
  g_assert_no_error (error);
  wait_idle (window);
  /* Its own save, seen by its own monitor, is nobody else's decision. A
   * check that nothing happens has no event to wait for: the wait is bounded,
   * well past the monitor's 150 ms gathering. */
  spin (600);
  g_assert_cmpuint (refreshed, ==, 0);

  {
    g_autoptr (LkSession) cli = lk_session_new (folder);
    g_assert_true (lk_session_load (cli, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (lk_session_rename (cli, second_id, "Alan Turing", &error));
    g_assert_no_error (error);
  }
  /* The monitor's event and the 150 ms gathering: seconds at most, even
   * under valgrind on a loaded machine. */
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (refreshed == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("waited 30 s for the CLI's decision to refresh the window's session: "
                 "it never did");
      spin (50);
    }
  wait_idle (window);
  g_assert_cmpuint (refreshed, ==, 1);
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (window, second_id)), ==,
                   "Alan Turing");
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (window, first_id)), ==,
                   "Grace Hopper");

  /* The window's next decision and its undo keep the CLI's. */
  g_assert_true (lk_session_set_hidden (window, first_id, TRUE, &error));
  wait_idle (window);
  g_assert_true (lk_session_undo (window, &error));
  g_assert_no_error (error);
  wait_idle (window);
  g_autofree char *first_saved = saved_name (folder, first_id);
  g_autofree char *second_saved = saved_name (folder, second_id);
  g_assert_cmpstr (first_saved, ==, "Grace Hopper");
  g_assert_cmpstr (second_saved, ==, "Alan Turing");
  /* Nothing more comes of the window's own saves (bounded, as above). */
  spin (600);
  g_assert_cmpuint (refreshed, ==, 1);
  remove_library (folder);
}

/* The same in a thread-default context of its own (a session made on a
 * worker thread, or under a pushed context): the monitor's gathering timeout
 * runs there, where everything else of the session lands, not in the
 * global default context nobody iterates. */
static void
test_other_writers_decisions_reach_a_pushed_context (void)
{
  GMainContext *context = g_main_context_new ();

  g_main_context_push_thread_default (context);
  test_other_writers_decisions_are_taken_in ();
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
}

typedef struct
{
  char *folder;
  LkSession *session;
  char *id;
} AppRun;

static void
on_rescan_started_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  lk_session_load_finish (LK_SESSION (source), result, NULL);
}

static void
on_app_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  AppRun *run = user_data;
  GApplication *app = g_application_get_default ();
  g_autoptr (GError) error = NULL;

  g_assert_true (lk_session_load_finish (run->session, result, &error));
  g_assert_no_error (error);
  g_autoptr (LkPersonItem) first = person_at (run->session, 0);
  run->id = g_strdup (lk_person_item_get_id (first));
  /* F5, a rename while it scans, and the window goes (the app's own hold):
   * only the queued decision keeps the process alive until it is saved. */
  lk_session_load_async (run->session, NULL, on_rescan_started_loaded, NULL);
  g_assert_true (lk_session_rename (run->session, run->id, "Mary Somerville", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lk_session_get_n_queued (run->session), ==, 1);
  g_application_release (app);
}

static void
on_app_activate (GApplication *app, gpointer user_data)
{
  AppRun *run = user_data;

  g_application_hold (app); /* the window */
  run->session = lk_session_new (run->folder);
  lk_session_load_async (run->session, NULL, on_app_loaded, run);
}

/* A decision queued during a re-scan holds the application as a commit does:
 * closing the last window then does not end the process before it is saved. */
static void
test_queued_decision_holds_the_application (void)
{
  g_autofree char *folder = make_library ();
  AppRun run = { .folder = folder };
  g_autoptr (GApplication) app = g_application_new (NULL, G_APPLICATION_NON_UNIQUE);

  g_signal_connect (app, "activate", G_CALLBACK (on_app_activate), &run);
  g_assert_cmpint (g_application_run (app, 0, NULL), ==, 0);
  g_assert_nonnull (run.id);
  g_autofree char *saved = saved_name (folder, run.id);
  g_assert_cmpstr (saved, ==, "Mary Somerville");
  g_clear_object (&run.session);
  g_free (run.id);
  remove_library (folder);
}

/* The index of `session` in lk_session_list_all (), or -1. */
static int
listed_at (LkSession *session)
{
  g_autoptr (GPtrArray) sessions = lk_session_list_all ();
  guint index;

  return g_ptr_array_find (sessions, session, &index) ? (int) index : -1;
}

static gpointer
make_and_drop_sessions (gpointer data)
{
  for (guint k = 0; k < 2000; k++)
    g_object_unref (lk_session_new ("/nowhere"));
  return NULL;
}

/* The diagnostics window asks the sessions, not the windows, whether a scan
 * runs: every live session is listed, the newest first, while it lives; one
 * finalized on another thread while the list is read is never revived. */
static void
test_list_all_names_the_live_sessions (void)
{
  g_autofree char *folder = make_library ();
  LkSession *older = lk_session_new (folder);
  g_autoptr (LkSession) newer = lk_session_new (folder);
  LoadOutcome outcome = { 0 };

  g_assert_cmpint (listed_at (newer), >=, 0);
  g_assert_cmpint (listed_at (newer), <, listed_at (older));

  g_assert_false (lk_session_is_loading (newer));
  lk_session_load_async (newer, NULL, on_loaded, &outcome);
  g_assert_true (lk_session_is_loading (newer));
  wait_for (&outcome.done);
  g_assert_true (outcome.ok);
  g_assert_false (lk_session_is_loading (newer));
  g_assert_cmpfloat (lk_session_get_scan_seconds (newer), >, 0.0);

  g_object_unref (older);
  g_assert_cmpint (listed_at (older), ==, -1);
  g_assert_cmpint (listed_at (newer), >=, 0);

  GThread *thread = g_thread_new ("sessions", make_and_drop_sessions, NULL);
  for (guint k = 0; k < 2000; k++)
    {
      g_autoptr (GPtrArray) sessions = lk_session_list_all ();
      for (guint j = 0; j < sessions->len; j++)
        g_assert_true (LK_IS_SESSION (g_ptr_array_index (sessions, j)));
    }
  g_thread_join (thread);
  remove_library (folder);
}

static LkSession *
load_sync (const char *folder)
{
  LkSession *session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

/* Issue 30's decisions through the session, the CLI's path: several people
 * merged at once (one undo step), a face dismissed as no face (out of its
 * person and the unassigned faces, kept by the next session, undone), and
 * "Is this Ada?" asking nothing about a dismissed face. */
static void
test_merge_many_and_dismiss_across_sessions (void)
{
  g_autofree char *folder = make_library ();
  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = load_sync (folder);
  const LkPeople *people = lk_session_peek_people (session);
  g_assert_cmpuint (people->n_people, >, 4);
  gsize n_before = people->n_people;
  g_autofree char *a = g_strdup (people->people[0].id);
  g_autofree char *b = g_strdup (people->people[1].id);
  g_autofree char *c = g_strdup (people->people[2].id);
  guint32 victim = people->people[3].faces[0];
  g_autofree char *victim_person = g_strdup (people->people[3].id);
  gsize victim_size = people->people[3].n_faces;

  g_assert_true (lk_session_rename (session, a, "Ada", &error));
  const char *others[] = { b, c };
  /* Two faces of one photo among them stop it: tried on a person and
   * itself first, which is refused and records nothing. */
  const char *itself[] = { b, a };
  g_assert_false (lk_session_merge_many (session, a, itself, 2, &error));
  g_assert_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID);
  g_clear_error (&error);
  if (!lk_session_merge_many (session, a, others, 2, &error))
    {
      /* The sample's people may share a photo: that is the refusal. */
      g_assert_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO);
      g_test_skip ("the sample's first three people share a photo");
      remove_library (folder);
      return;
    }
  people = lk_session_peek_people (session);
  g_assert_cmpuint (people->n_people, ==, n_before - 2);
  g_assert_null (lk_session_find_person (session, b));
  g_assert_null (lk_session_find_person (session, c));

  g_assert_true (lk_session_dismiss (session, &victim, 1, &error));
  g_assert_no_error (error);
  gsize n_dismissed = 0;
  const guint32 *dismissed = lk_session_dismissed_faces (session, &n_dismissed);
  g_assert_cmpuint (n_dismissed, ==, 1);
  g_assert_cmpuint (dismissed[0], ==, victim);
  people = lk_session_peek_people (session);
  g_assert_cmpint (people->person_of[victim], ==, -1);
  for (gsize k = 0; k < people->n_unassigned; k++)
    g_assert_cmpuint (people->unassigned[k], !=, victim);
  g_autoptr (GArray) questions = lk_session_questions (session, 0);
  for (guint k = 0; k < questions->len; k++)
    g_assert_cmpuint (g_array_index (questions, LkQuestion, k).face, !=, victim);

  /* The next session (as after a restart, or a re-import keeping the faces'
   * keys) finds both decisions. */
  g_autoptr (LkSession) next = load_sync (folder);
  n_dismissed = 0;
  dismissed = lk_session_dismissed_faces (next, &n_dismissed);
  g_assert_cmpuint (n_dismissed, ==, 1);
  g_assert_cmpuint (dismissed[0], ==, victim);
  g_assert_null (lk_session_find_person (next, b));
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (next, a)), ==, "Ada");

  /* Undo: the face comes back; undo again: the two people, in one step. */
  g_assert_true (lk_session_undo (next, &error));
  g_assert_no_error (error);
  lk_session_dismissed_faces (next, &n_dismissed);
  g_assert_cmpuint (n_dismissed, ==, 0);
  LkPersonItem *back = lk_session_find_person (next, victim_person);
  g_assert_nonnull (back);
  g_assert_cmpuint (lk_person_item_get_n_faces (back), ==, victim_size);
  g_assert_true (lk_session_undo (next, &error));
  g_assert_nonnull (lk_session_find_person (next, b));
  g_assert_nonnull (lk_session_find_person (next, c));
  g_assert_cmpstr (lk_person_item_get_name (lk_session_find_person (next, a)), ==, "Ada");
  g_assert_cmpuint (lk_session_peek_people (next)->n_people, ==, n_before);
  remove_library (folder);
}

/* ---- the questions' links kept for the next opening ---------------------- */

/* The sample's 300 faces named link nothing below the bar; 2,000 (seed 5)
 * do (README "Is this Ada?" on real faces: 7 questions). */
#define QUESTION_FACES 2000

/* Each of these tests names a 2,000-face library person by person (a
 * decision, a clustering and a questions' pass each): 3–4 s natively, and
 * with them the session test ran past its 600 s under valgrind memcheck
 * (.ci/check, 2026-12-06). The ASan build runs them. */
static gboolean
skipped_under_valgrind (void)
{
  if (!RUNNING_ON_VALGRIND)
    return FALSE;
  g_test_skip ("a 2,000-face library named person by person: minutes under memcheck; the ASan "
               "build runs this test");
  return TRUE;
}

/* Names every unnamed person of 2 faces or more but the largest, a decision
 * each, as a user naming what the clustering found; the largest's id. */
static char *
name_everyone_but_the_largest (LkSession *session)
{
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  gsize largest = 0;
  for (gsize p = 1; p < people->n_people; p++)
    if (people->people[p].n_faces > people->people[largest].n_faces)
      largest = p;
  char *largest_id = g_strdup (people->people[largest].id);
  for (gsize p = 0; p < people->n_people; p++)
    if (p != largest && people->people[p].n_faces >= 2 && people->people[p].name == NULL)
      g_ptr_array_add (ids, g_strdup (people->people[p].id));
  g_assert_cmpuint (ids->len, >, 2);
  for (guint k = 0; k < ids->len; k++)
    {
      g_autofree char *name = g_strdup_printf ("Person %u", k);
      g_assert_true (lk_session_rename (session, g_ptr_array_index (ids, k), name, &error));
      g_assert_no_error (error);
    }
  return largest_id;
}

static LkSession *
open_library (const char *folder)
{
  LkSession *session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  return session;
}

/* The pass in full (no `previous`) for the session's people, as an opening
 * without kept links makes it. */
static LkQuestionLinks *
full_pass (LkSession *session)
{
  LkFaces faces;
  g_autoptr (GError) error = NULL;
  lk_faces_from_library (&faces, lk_session_get_library (session));
  LkQuestionLinks *links = lk_people_question_links (
      lk_session_peek_people (session), &faces, lk_session_get_calibration (session, NULL),
      MIN (lk_session_get_probability_bar (session), LK_QUESTION_BAR), NULL, FALSE, NULL, &error);
  g_assert_no_error (error);
  return links;
}

static int
compare_links (const void *a, const void *b)
{
  const LkPair *x = a, *y = b;
  if (x->i != y->i)
    return x->i < y->i ? -1 : 1;
  return x->j < y->j ? -1 : x->j > y->j;
}

/* The same roles and the same links, probabilities to the bit (the links
 * are in no order: compared sorted). */
static void
assert_same_links (const LkQuestionLinks *a, const LkQuestionLinks *b)
{
  g_assert_cmpuint (a->n_faces, ==, b->n_faces);
  g_assert_cmpmem (a->role, a->n_faces, b->role, b->n_faces);
  g_assert_cmpuint (a->links->len, ==, b->links->len);
  g_autoptr (GArray) x = g_array_copy (a->links);
  g_autoptr (GArray) y = g_array_copy (b->links);
  if (x->len > 1)
    qsort (x->data, x->len, sizeof (LkPair), compare_links);
  if (y->len > 1)
    qsort (y->data, y->len, sizeof (LkPair), compare_links);
  for (guint k = 0; k < x->len; k++)
    {
      const LkPair *p = &g_array_index (x, LkPair, k), *q = &g_array_index (y, LkPair, k);
      g_assert_cmpuint (p->i, ==, q->i);
      g_assert_cmpuint (p->j, ==, q->j);
      g_assert_cmpmem (&p->probability, 4, &q->probability, 4);
    }
}

static void
assert_same_questions (LkSession *a, LkSession *b)
{
  g_autoptr (GArray) x = lk_session_questions (a, 0);
  g_autoptr (GArray) y = lk_session_questions (b, 0);
  g_assert_cmpuint (x->len, ==, y->len);
  for (guint k = 0; k < x->len; k++)
    {
      const LkQuestion *p = &g_array_index (x, LkQuestion, k);
      const LkQuestion *q = &g_array_index (y, LkQuestion, k);
      g_assert_cmpint (p->person, ==, q->person);
      g_assert_cmpint (p->candidate, ==, q->candidate);
      g_assert_cmpuint (p->face, ==, q->face);
      g_assert_cmpfloat (p->score, ==, q->score);
    }
}

/* A library named, then opened again: the opening's pass starts from the
 * links the last pass kept in the user's cache (never in the library
 * folder) and compares nothing; its links and questions are the first
 * session's and a full pass's. Opened with older links (kept before one more
 * person was named), it compares exactly the rectangle of the faces whose
 * roles changed since: new candidates × the named faces, and the kept
 * candidates × the newly named faces. */
static void
test_opening_starts_from_the_kept_links (void)
{
  if (skipped_under_valgrind ())
    return;
  g_autofree char *folder = make_library_of (QUESTION_FACES);
  g_autoptr (LkSession) first = open_library (folder);
  g_autofree char *largest = name_everyone_but_the_largest (first);
  g_autofree char *path = lk_question_links_path (lk_session_get_library (first)->folder);
  g_autofree char *user_cache = g_build_filename (g_get_user_cache_dir (), "likeness", NULL);
  g_assert_true (g_str_has_prefix (path, user_cache));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) dir = g_dir_open (folder, 0, &error);
  g_assert_no_error (error);
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    g_assert_false (g_str_has_suffix (name, ".links"));
  const LkQuestionLinks *named = lk_session_peek_question_links (first);
  g_assert_nonnull (named);
  g_assert_cmpuint (named->links->len, >, 0);
  g_autoptr (LkQuestionLinks) full = full_pass (first);
  assert_same_links (named, full);

  g_autoptr (LkSession) second = open_library (folder);
  const LkQuestionLinks *opened = lk_session_peek_question_links (second);
  g_assert_nonnull (opened);
  g_assert_cmpuint (opened->compared, ==, 0);
  assert_same_links (opened, named);
  assert_same_questions (second, first);

  /* The largest person named too, then the links kept before that put
   * back. */
  g_autofree char *before = NULL;
  gsize before_size = 0;
  g_assert_true (g_file_get_contents (path, &before, &before_size, NULL));
  g_assert_true (lk_session_rename (second, largest, "The largest", &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (path, before, (gssize) before_size, NULL));

  g_autoptr (LkSession) third = open_library (folder);
  const LkQuestionLinks *again = lk_session_peek_question_links (third);
  g_autoptr (LkQuestionLinks) full_again = full_pass (third);
  assert_same_links (again, full_again);
  assert_same_questions (third, second);
  guint64 new_rows = 0, kept_rows = 0, columns = 0, new_columns = 0;
  for (gsize f = 0; f < again->n_faces; f++)
    if (again->role[f] == full_again->role[f] && again->role[f] != named->role[f])
      {
        /* ROLE_CANDIDATE 1, ROLE_NAMED 2 (lk-questions.c) */
        new_rows += again->role[f] == 1;
        new_columns += again->role[f] == 2;
      }
  for (gsize f = 0; f < again->n_faces; f++)
    {
      kept_rows += again->role[f] == 1 && named->role[f] == 1;
      columns += again->role[f] == 2;
    }
  g_assert_cmpuint (new_columns, >, 0);
  g_assert_cmpuint (again->compared, ==, new_rows * columns + kept_rows * new_columns);
  g_assert_cmpuint (again->compared, <, full_again->compared / 4);
  remove_library (folder);
}

/* Kept links that are cut short, damaged or not a links file at all are a
 * full pass, never an error, with the same links. */
static void
test_damaged_kept_links_are_a_full_pass (void)
{
  if (skipped_under_valgrind ())
    return;
  g_autofree char *folder = make_library_of (QUESTION_FACES);
  g_autoptr (LkSession) first = open_library (folder);
  g_free (name_everyone_but_the_largest (first));
  g_autofree char *path = lk_question_links_path (lk_session_get_library (first)->folder);
  g_autofree char *bytes = NULL;
  gsize size = 0;
  g_assert_true (g_file_get_contents (path, &bytes, &size, NULL));
  g_assert_cmpuint (size, >, 100);
  g_autoptr (LkQuestionLinks) full = full_pass (first);
  /* The file's layout (lk-questions.c): a 72-byte header, a role a face
   * padded to 8 bytes, then 12 bytes a link, the probability last. */
  gsize last_probability = 72 + (full->n_faces + 7) / 8 * 8 + 12 * full->links->len - 4;
  g_assert_cmpuint (last_probability + 4 + 8, <=, size);

  for (int damage = 0; damage < 4; damage++)
    {
      g_autofree char *copy = g_memdup2 (bytes, size);
      gsize length = size;
      if (damage == 0)
        length = size / 2; /* cut short */
      else if (damage == 1)
        copy[last_probability] ^= 0x01; /* the last link's, by one ulp */
      else if (damage == 2)
        copy[8] ^= 0x01; /* another version */
      else
        length = 3; /* hardly a file */
      g_assert_true (g_file_set_contents (path, copy, (gssize) length, NULL));
      g_autoptr (LkSession) session = open_library (folder);
      const LkQuestionLinks *links = lk_session_peek_question_links (session);
      g_assert_nonnull (links);
      g_assert_cmpuint (links->compared, ==, full->compared);
      assert_same_links (links, full);
      assert_same_questions (session, first);
    }
  remove_library (folder);
}

/* One float of one face's row changed in embeddings.f32: the faces are not
 * the ones the links were kept for, and the opening makes a full pass. */
static void
test_changed_embedding_invalidates_the_kept_links (void)
{
  if (skipped_under_valgrind ())
    return;
  g_autofree char *folder = make_library_of (QUESTION_FACES);
  {
    g_autoptr (LkSession) first = open_library (folder);
    g_free (name_everyone_but_the_largest (first));
  }
  g_autofree char *f32 = g_build_filename (folder, "embeddings.f32", NULL);
  g_autofree char *rows = NULL;
  gsize size = 0;
  g_assert_true (g_file_get_contents (f32, &rows, &size, NULL));
  rows[0] ^= 0x01; /* the lowest bit of face 0's first float */
  g_assert_true (g_file_set_contents (f32, rows, (gssize) size, NULL));

  g_autoptr (LkSession) session = open_library (folder);
  const LkQuestionLinks *links = lk_session_peek_question_links (session);
  g_autoptr (LkQuestionLinks) full = full_pass (session);
  g_assert_nonnull (links);
  g_assert_cmpuint (full->compared, >, 0);
  g_assert_cmpuint (links->compared, ==, full->compared);
  assert_same_links (links, full);
  remove_library (folder);
}

int
main (int argc, char **argv)
{
  /* Save Elsewhere remembers the place in the user's configuration, and a
   * load keeps its scan in the user's cache: temporary ones, set before
   * anything reads them (not G_TEST_OPTION_ISOLATE_DIRS, whose
   * g_set_user_dirs leaks under ASan). Every test's library is a new
   * folder, so no test finds another's scan. */
  g_autofree char *home = g_dir_make_tmp ("lk-session-home-XXXXXX", NULL);
  g_assert_nonnull (home);
  g_autofree char *config = g_build_filename (home, "config", NULL);
  g_autofree char *cache = g_build_filename (home, "cache", NULL);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/session/sync-load-and-decide", test_sync_load_and_decide);
  g_test_add_func ("/session/released-embeddings-same-people",
                   test_released_embeddings_same_people);
  g_test_add_func ("/session/merge-many-and-dismiss-across-sessions",
                   test_merge_many_and_dismiss_across_sessions);
  g_test_add_func ("/session/open-only-undoes", test_open_only_undoes);
  g_test_add_func ("/session/load-keeps-its-scan-in-the-user-cache",
                   test_load_keeps_its_scan_in_the_user_cache);
  g_test_add_func ("/session/opening-starts-from-the-kept-question-links",
                   test_opening_starts_from_the_kept_links);
  g_test_add_func ("/session/damaged-kept-question-links-are-a-full-pass",
                   test_damaged_kept_links_are_a_full_pass);
  g_test_add_func ("/session/changed-embedding-invalidates-the-kept-question-links",
                   test_changed_embedding_invalidates_the_kept_links);
  g_test_add_func ("/session/async-load-reports-progress", test_async_load_reports_progress);
  g_test_add_func ("/session/list-all-names-the-live-sessions",
                   test_list_all_names_the_live_sessions);
  g_test_add_func ("/session/progress-is-coalesced", test_progress_is_coalesced);
  g_test_add_func ("/session/cancelled-and-superseded-loads", test_cancelled_and_superseded_loads);
  g_test_add_func ("/session/decision-during-rescan-is-kept", test_decision_during_rescan_is_kept);
  g_test_add_func ("/session/rescan-supersedes-a-held-load", test_rescan_supersedes_a_held_load);
  g_test_add_func ("/session/cancelled-held-load-changes-nothing",
                   test_cancelled_held_load_changes_nothing);
  g_test_add_func ("/session/save-elsewhere-during-rescan-holds",
                   test_save_elsewhere_during_rescan_holds);
  g_test_add_func ("/session/queued-decision-that-fails-is-reported",
                   test_queued_decision_that_fails_is_reported);
  g_test_add_func ("/session/other-writers-decisions-reach-a-pushed-context",
                   test_other_writers_decisions_reach_a_pushed_context);
  g_test_add_func ("/session/other-writers-decisions-are-taken-in",
                   test_other_writers_decisions_are_taken_in);
  g_test_add_func ("/session/queued-decision-holds-the-application",
                   test_queued_decision_holds_the_application);
  int status = g_test_run ();
  lk_test_remove_tree (home);
  return status;
}
