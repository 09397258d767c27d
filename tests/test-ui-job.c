/* test-ui-job — background jobs: results arrive once, stale ones never, progress per frame
 *
 * The worker functions here are controlled by the test through a mutex and a
 * condition, so "cancelled while the worker still runs" is a state the test
 * creates on purpose rather than a race it hopes to win.
 */
#include "config.h"

#include "lk-job.h"
#include "lk-test-display.h"

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean release;            /* the worker may finish */
  gboolean started;
  guint n_progress;            /* reports the worker makes */
  gboolean fail;
} Control;

typedef struct
{
  guint done_calls;
  gpointer result;
  GError *error;
  guint results_freed;
} Outcome;

static Outcome *current_outcome;

static void
result_free (gpointer data)
{
  current_outcome->results_freed++;
  g_free (data);
}

static gpointer
worker (LkJob *job, gpointer task_data, GCancellable *cancellable, GError **error)
{
  Control *control = task_data;

  g_mutex_lock (&control->lock);
  control->started = TRUE;
  g_cond_broadcast (&control->cond);
  while (!control->release)
    g_cond_wait (&control->cond, &control->lock);
  g_mutex_unlock (&control->lock);

  for (guint k = 1; k <= control->n_progress; k++)
    lk_job_set_progress (job, "Working", (double) k / control->n_progress);

  if (control->fail)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "It went wrong");
      return NULL;
    }
  /* Even a cancelled job returns a result here: the wrapper must drop it. */
  return g_strdup ("the result");
}

static void
on_done (LkJob *job, gpointer result, const GError *error, gpointer user_data)
{
  Outcome *outcome = user_data;

  outcome->done_calls++;
  outcome->result = result;
  outcome->error = error != NULL ? g_error_copy (error) : NULL;
}

static void
release (Control *control)
{
  g_mutex_lock (&control->lock);
  control->release = TRUE;
  g_cond_broadcast (&control->cond);
  g_mutex_unlock (&control->lock);
}

static void
wait_started (Control *control)
{
  g_mutex_lock (&control->lock);
  while (!control->started)
    g_cond_wait (&control->cond, &control->lock);
  g_mutex_unlock (&control->lock);
}

static gboolean
outcome_done (gpointer data)
{
  return ((Outcome *) data)->done_calls > 0;
}

static gboolean
result_freed (gpointer data)
{
  return ((Outcome *) data)->results_freed > 0;
}

static void
test_delivers_result (void)
{
  GtkWidget *window = gtk_window_new ();
  Control control = { .n_progress = 3 };
  Outcome outcome = { 0 };
  current_outcome = &outcome;
  g_autoptr (LkJob) job = lk_job_new (window, worker, &control, NULL, result_free);

  lk_job_start (job, on_done, &outcome);
  g_assert_true (lk_job_is_running (job));
  release (&control);
  lk_test_wait (outcome_done, &outcome);

  g_assert_cmpuint (outcome.done_calls, ==, 1);
  g_assert_no_error (outcome.error);
  g_assert_cmpstr (outcome.result, ==, "the result");
  g_assert_false (lk_job_is_running (job));
  /* The last report is delivered even without a frame. */
  g_assert_cmpfloat (lk_job_get_fraction (job), ==, 1.0);
  g_assert_cmpstr (lk_job_get_phase (job), ==, "Working");
  g_free (outcome.result);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_delivers_error (void)
{
  GtkWidget *window = gtk_window_new ();
  Control control = { .fail = TRUE };
  Outcome outcome = { 0 };
  current_outcome = &outcome;
  g_autoptr (LkJob) job = lk_job_new (window, worker, &control, NULL, result_free);

  lk_job_start (job, on_done, &outcome);
  release (&control);
  lk_test_wait (outcome_done, &outcome);

  g_assert_null (outcome.result);
  g_assert_error (outcome.error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&outcome.error);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_cancelled_result_never_delivered (void)
{
  GtkWidget *window = gtk_window_new ();
  Control control = { 0 };
  Outcome outcome = { 0 };
  current_outcome = &outcome;
  g_autoptr (LkJob) job = lk_job_new (window, worker, &control, NULL, result_free);

  lk_job_start (job, on_done, &outcome);
  wait_started (&control);
  /* The worker is mid-way; the owner gives up on it, then it finishes. */
  lk_job_cancel (job);
  release (&control);
  lk_test_wait (result_freed, &outcome);

  g_assert_true (lk_job_is_cancelled (job));
  g_assert_cmpuint (outcome.done_calls, ==, 0);
  g_assert_cmpuint (outcome.results_freed, ==, 1);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_superseded_job_dropped (void)
{
  GtkWidget *window = gtk_window_new ();
  Control old_control = { 0 };
  Control new_control = { 0 };
  Outcome old_outcome = { 0 };
  Outcome new_outcome = { 0 };
  current_outcome = &old_outcome;
  g_autoptr (LkJob) old_job = lk_job_new (window, worker, &old_control, NULL, result_free);
  g_autoptr (LkJob) new_job = lk_job_new (window, worker, &new_control, NULL, result_free);

  lk_job_start (old_job, on_done, &old_outcome);
  wait_started (&old_control);
  /* What the window does on a new load: cancel the old job, start the new. */
  lk_job_cancel (old_job);
  lk_job_start (new_job, on_done, &new_outcome);
  /* The new job finishes first, then the old one. */
  release (&new_control);
  lk_test_wait (outcome_done, &new_outcome);
  release (&old_control);
  lk_test_wait (result_freed, &old_outcome);

  g_assert_cmpuint (new_outcome.done_calls, ==, 1);
  g_assert_cmpuint (old_outcome.done_calls, ==, 0);
  g_free (new_outcome.result);
  gtk_window_destroy (GTK_WINDOW (window));
}

typedef struct
{
  guint ticks;
} TickCount;

static gboolean
count_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  ((TickCount *) user_data)->ticks++;
  return G_SOURCE_CONTINUE;
}

static void
test_progress_at_most_once_per_frame (void)
{
  GtkWidget *window = gtk_window_new ();
  /* Far more reports than frames while the job runs. */
  Control control = { .n_progress = 2000000 };
  Outcome outcome = { 0 };
  TickCount ticks = { 0 };
  current_outcome = &outcome;

  gtk_window_present (GTK_WINDOW (window));
  g_autoptr (LkJob) job = lk_job_new (window, worker, &control, NULL, result_free);
  guint tick_id = gtk_widget_add_tick_callback (window, count_tick, &ticks, NULL);

  lk_job_start (job, on_done, &outcome);
  release (&control);
  lk_test_wait (outcome_done, &outcome);

  /* One update per frame at most, plus the final flush when the job ends. */
  g_assert_cmpuint (lk_job_get_n_updates (job), >=, 1);
  g_assert_cmpuint (lk_job_get_n_updates (job), <=, ticks.ticks + 1);
  g_assert_cmpuint (lk_job_get_n_updates (job), <, control.n_progress / 100);
  g_assert_cmpfloat (lk_job_get_fraction (job), ==, 1.0);
  gtk_widget_remove_tick_callback (window, tick_id);
  g_free (outcome.result);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  lk_test_display_init (&argc, &argv);

  g_test_add_func ("/ui-job/delivers-result", test_delivers_result);
  g_test_add_func ("/ui-job/delivers-error", test_delivers_error);
  g_test_add_func ("/ui-job/cancelled-result-never-delivered",
                   test_cancelled_result_never_delivered);
  g_test_add_func ("/ui-job/superseded-job-dropped", test_superseded_job_dropped);
  g_test_add_func ("/ui-job/progress-at-most-once-per-frame",
                   test_progress_at_most_once_per_frame);
  return g_test_run ();
}
