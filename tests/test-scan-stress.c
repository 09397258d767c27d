/* test-scan-stress — cancelling scans at random points, many at once, changes nothing
 *
 * 240 scans of one face set, each on its own thread with its own
 * GCancellable, up to IN_FLIGHT of them at once. A quarter run to the end;
 * five eighths are cancelled from inside their own first progress report
 * (after their first block and before their last: 120 of them scanning on
 * their calling thread alone, which reports after its first block whatever
 * the load, 30 with one or two workers, in the background or not); the last
 * eighth by the main thread after a random delay (0 … 1.5× one scan's
 * length, so before the first block, mid-way, in the last block or not at
 * all). Every call must end in one of exactly two
 * ways: NULL with G_IO_ERROR_CANCELLED, or the very pairs an undisturbed scan
 * returns.
 *
 * A cancel is counted as landing mid-scan when the scan had reported a
 * fraction of its work in (0, 1) and then returned cancelled: issue 19 found
 * the old test (random delays only) landing 25–68 of 150 cancels there, one
 * in the worst run; now at least MIN_MID_SCAN must, or the test fails. Leaks
 * are the ASan build's leak check's to find (.ci/check runs the engine suite
 * with detect_leaks=1 and G_SLICE=always-malloc).
 *
 * The random choices come from g_test_rand_*, so a failing run is repeated
 * with the seed it printed (--seed). 2,000 faces of dimension 64 keep one
 * scan in the tens of milliseconds, the whole test a few seconds.
 */
#include "config.h"

#include "lk-test-faces.h"

#define DIM          64
#define ROUNDS       240
#define IN_FLIGHT    3
#define BAR          0.9
#define MIN_MID_SCAN 100

typedef enum
{
  RUN_TO_THE_END,
  CANCEL_ON_PROGRESS,
  CANCEL_AFTER_DELAY,
} Plan;

typedef struct
{
  const LkFaces *faces;
  const LkCalibration *cal;
  const LkScanResult *want;
  GCancellable *cancellable;
  LkScanOptions options;
  Plan plan;
  double last_fraction; /* the last progress report, -1 before the first */
  gint *cancelled;
  gint *completed;
  gint *mid_scan;
} Job;

/* On the scan's calling thread: lk_scan's progress callback. */
static void
on_progress (double fraction, gpointer data)
{
  Job *job = data;
  g_assert_cmpfloat (fraction, >=, MAX (job->last_fraction, 0));
  job->last_fraction = fraction;
  if (job->plan == CANCEL_ON_PROGRESS && fraction < 1)
    g_cancellable_cancel (job->cancellable);
}

static void
job_free (Job *job)
{
  g_object_unref (job->cancellable);
  g_free (job);
}

static gpointer
job_main (gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) got
      = lk_scan (job->faces, job->cal, BAR, &job->options, job->cancellable, &error);

  if (got == NULL)
    {
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_assert_true (g_cancellable_is_cancelled (job->cancellable));
      g_assert_cmpint (job->plan, !=, RUN_TO_THE_END);
      g_atomic_int_inc (job->cancelled);
      if (job->last_fraction > 0 && job->last_fraction < 1)
        g_atomic_int_inc (job->mid_scan);
    }
  else
    {
      g_assert_no_error (error);
      g_assert_cmpuint (got->pairs->len, ==, job->want->pairs->len);
      g_assert_cmpmem (got->pairs->data, got->pairs->len * sizeof (LkPair), job->want->pairs->data,
                       job->want->pairs->len * sizeof (LkPair));
      g_assert_cmpuint (got->near_boundary, ==, job->want->near_boundary);
      g_assert_cmpfloat (job->last_fraction, ==, 1.0);
      g_atomic_int_inc (job->completed);
    }
  job_free (job);
  return NULL;
}

static void
test_cancels_mid_scan_change_nothing (void)
{
  LkCalibration cal = test_calibration ();
  g_autoptr (TestSet) set = test_population (250, 8, 0.97f, DIM);
  LkFaces faces = test_set_faces (set);
  g_autoptr (GError) error = NULL;

  /* The undisturbed answer, itself checked against the naive loop. */
  gint64 start = g_get_monotonic_time ();
  g_autoptr (LkScanResult) want = lk_scan (&faces, &cal, BAR, NULL, NULL, &error);
  gint64 length = MAX (g_get_monotonic_time () - start, 1000);
  g_assert_no_error (error);
  g_autoptr (GArray) reference = test_reference (&faces, &cal, BAR);
  g_assert_cmpuint (reference->len, >, 0);
  test_assert_same_pairs (want, reference, &faces, &cal, BAR);

  GQueue running = G_QUEUE_INIT;
  gint cancelled = 0, completed = 0, mid_scan = 0;

  for (guint round = 0; round < ROUNDS; round++)
    {
      Plan plan = round % 8 < 2   ? RUN_TO_THE_END
                  : round % 8 < 7 ? CANCEL_ON_PROGRESS
                                  : CANCEL_AFTER_DELAY;
      /* Four of the five cancels on progress run on the calling thread
       * alone, which reports after its first block: they land mid-scan
       * whatever the machine's load. The fifth has workers (one or two, in
       * the background or not), whose first report may come too late. */
      gboolean inline_scan = round % 8 >= 2 && round % 8 < 6;
      Job *job = g_new0 (Job, 1);
      *job = (Job){
        .faces = &faces,
        .cal = &cal,
        .want = want,
        .cancellable = g_cancellable_new (),
        .options = { .threads = inline_scan ? 1 : (guint) g_test_rand_int_range (1, 3),
                     .background = inline_scan ? FALSE : g_test_rand_bit () },
        .plan = plan,
        .last_fraction = -1,
        .cancelled = &cancelled,
        .completed = &completed,
        .mid_scan = &mid_scan,
      };
      job->options.progress = on_progress;
      job->options.progress_data = job;
      GCancellable *cancellable = g_object_ref (job->cancellable);
      g_queue_push_tail (&running, g_thread_new ("scan", job_main, job));

      if (plan == CANCEL_AFTER_DELAY)
        {
          g_usleep ((gulong) g_test_rand_int_range (0, (gint32) (length * 3 / 2) + 1));
          g_cancellable_cancel (cancellable);
        }
      g_object_unref (cancellable);

      while (g_queue_get_length (&running) > IN_FLIGHT)
        g_thread_join (g_queue_pop_head (&running));
    }
  while (!g_queue_is_empty (&running))
    g_thread_join (g_queue_pop_head (&running));

  g_test_message (
      "%d cancelled (%d of them mid-scan), %d completed; one scan took %" G_GINT64_FORMAT " us",
      cancelled, mid_scan, completed, length);
  g_assert_cmpint (cancelled + completed, ==, ROUNDS);
  g_assert_cmpint (completed, >=, ROUNDS / 4);
  g_assert_cmpint (mid_scan, >=, MIN_MID_SCAN);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/scan-stress/100-cancels-mid-scan-change-nothing",
                   test_cancels_mid_scan_change_nothing);
  return g_test_run ();
}
