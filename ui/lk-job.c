/* lk-job.c — one piece of background work whose result may go stale
 *
 * Why it is shaped this way: the scan reports progress from its own worker
 * threads up to ~30 times a second, and a library reload can be started while
 * another is still running. Pushing every report into the main loop (one idle
 * per report) lets a fast producer queue work faster than frames are drawn;
 * instead the worker writes the latest value under a mutex and a tick callback
 * on the bound widget picks it up once per frame, so the main loop does at
 * most one progress update per frame whatever the producer does. Staleness is
 * handled in one place: a cancelled job never calls its done callback, so the
 * owner only has to cancel the old job when it starts a new one.
 */
#include "config.h"

#include "lk-job.h"

struct _LkJob
{
  GObject parent_instance;

  GtkWidget *widget;           /* weak */
  guint tick_id;

  LkJobFunc func;
  gpointer task_data;
  GDestroyNotify task_data_free;
  GDestroyNotify result_free;
  GCancellable *cancellable;

  LkJobDoneFunc done;
  gpointer done_data;
  gboolean running;
  gboolean cancelled;

  /* Written by the worker, read by the tick callback, under `lock`. */
  GMutex lock;
  const char *phase;
  double fraction;
  gint64 phase_start;
  guint64 total;
  gboolean dirty;

  /* Main thread only. */
  const char *shown_phase;
  double shown_fraction;
  gint64 shown_phase_start;
  guint n_updates;
};

G_DEFINE_FINAL_TYPE (LkJob, lk_job, G_TYPE_OBJECT)

enum
{
  SIGNAL_PROGRESS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
stop_ticking (LkJob *self)
{
  if (self->tick_id != 0 && self->widget != NULL)
    gtk_widget_remove_tick_callback (self->widget, self->tick_id);
  self->tick_id = 0;
}

/* Copies the worker's latest progress; TRUE when it changed. */
static gboolean
pull_progress (LkJob *self)
{
  gboolean changed;

  g_mutex_lock (&self->lock);
  changed = self->dirty;
  if (changed)
    {
      self->shown_phase = self->phase;
      self->shown_fraction = self->fraction;
      self->shown_phase_start = self->phase_start;
      self->dirty = FALSE;
    }
  g_mutex_unlock (&self->lock);
  return changed;
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  LkJob *self = user_data;

  if (pull_progress (self))
    {
      self->n_updates++;
      g_signal_emit (self, signals[SIGNAL_PROGRESS], 0);
    }
  return G_SOURCE_CONTINUE;
}

static void
run_in_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LkJob *self = source;
  GError *error = NULL;
  gpointer result = self->func (self, self->task_data, cancellable, &error);

  if (result != NULL)
    g_task_return_pointer (task, result, self->result_free);
  else if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "The job returned nothing");
}

static void
on_task_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr (LkJob) self = g_object_ref (LK_JOB (source));
  g_autoptr (GError) error = NULL;
  gpointer result = g_task_propagate_pointer (G_TASK (res), &error);

  self->running = FALSE;
  stop_ticking (self);
  if (self->cancelled)
    {
      if (result != NULL && self->result_free != NULL)
        self->result_free (result);
      return;
    }
  if (pull_progress (self))
    {
      self->n_updates++;
      g_signal_emit (self, signals[SIGNAL_PROGRESS], 0);
    }
  self->done (self, result, error, self->done_data);
}

static void
lk_job_dispose (GObject *object)
{
  LkJob *self = LK_JOB (object);

  stop_ticking (self);
  if (self->widget != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->widget), (gpointer *) &self->widget);
  self->widget = NULL;
  G_OBJECT_CLASS (lk_job_parent_class)->dispose (object);
}

static void
lk_job_finalize (GObject *object)
{
  LkJob *self = LK_JOB (object);

  if (self->task_data_free != NULL && self->task_data != NULL)
    self->task_data_free (self->task_data);
  g_clear_object (&self->cancellable);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (lk_job_parent_class)->finalize (object);
}

static void
lk_job_class_init (LkJobClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = lk_job_dispose;
  object_class->finalize = lk_job_finalize;

  /* The progress changed; at most once per frame of the bound widget. */
  signals[SIGNAL_PROGRESS] = g_signal_new ("progress", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 0);
}

static void
lk_job_init (LkJob *self)
{
  g_mutex_init (&self->lock);
  self->cancellable = g_cancellable_new ();
  self->fraction = -1.0;
  self->shown_fraction = -1.0;
  self->phase = "";
  self->shown_phase = "";
  self->phase_start = g_get_monotonic_time ();
  self->shown_phase_start = self->phase_start;
}

LkJob *
lk_job_new (GtkWidget *widget, LkJobFunc func, gpointer task_data, GDestroyNotify task_data_free,
            GDestroyNotify result_free)
{
  g_return_val_if_fail (GTK_IS_WIDGET (widget), NULL);
  g_return_val_if_fail (func != NULL, NULL);

  LkJob *self = g_object_new (LK_TYPE_JOB, NULL);
  self->widget = widget;
  g_object_add_weak_pointer (G_OBJECT (widget), (gpointer *) &self->widget);
  self->func = func;
  self->task_data = task_data;
  self->task_data_free = task_data_free;
  self->result_free = result_free;
  return self;
}

void
lk_job_start (LkJob *self, LkJobDoneFunc done, gpointer user_data)
{
  g_return_if_fail (LK_IS_JOB (self));
  g_return_if_fail (!self->running && !self->cancelled);
  g_return_if_fail (done != NULL);

  self->done = done;
  self->done_data = user_data;
  self->running = TRUE;
  if (self->widget != NULL)
    self->tick_id = gtk_widget_add_tick_callback (self->widget, on_tick, self, NULL);

  g_autoptr (GTask) task = g_task_new (self, self->cancellable, on_task_done, NULL);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_name (task, "lk-job");
  g_task_run_in_thread (task, run_in_thread);
}

void
lk_job_cancel (LkJob *self)
{
  g_return_if_fail (LK_IS_JOB (self));

  self->cancelled = TRUE;
  stop_ticking (self);
  g_cancellable_cancel (self->cancellable);
}

gboolean
lk_job_is_cancelled (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), TRUE);
  return self->cancelled;
}

gboolean
lk_job_is_running (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), FALSE);
  return self->running;
}

void
lk_job_set_progress (LkJob *self, const char *what, double fraction)
{
  g_mutex_lock (&self->lock);
  if (g_strcmp0 (what, self->phase) != 0)
    {
      self->phase = what;
      self->phase_start = g_get_monotonic_time ();
    }
  self->fraction = fraction;
  self->dirty = TRUE;
  g_mutex_unlock (&self->lock);
}

void
lk_job_set_total (LkJob *self, guint64 total)
{
  g_mutex_lock (&self->lock);
  self->total = total;
  g_mutex_unlock (&self->lock);
}

guint64
lk_job_get_total (LkJob *self)
{
  guint64 total;

  g_return_val_if_fail (LK_IS_JOB (self), 0);
  g_mutex_lock (&self->lock);
  total = self->total;
  g_mutex_unlock (&self->lock);
  return total;
}

double
lk_job_get_fraction (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), -1.0);
  return self->shown_fraction;
}

const char *
lk_job_get_phase (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), "");
  return self->shown_phase;
}

double
lk_job_get_phase_seconds (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), 0.0);
  return (g_get_monotonic_time () - self->shown_phase_start) / (double) G_USEC_PER_SEC;
}

guint
lk_job_get_n_updates (LkJob *self)
{
  g_return_val_if_fail (LK_IS_JOB (self), 0);
  return self->n_updates;
}
