/* lk-stall-probe.c — how responsive the main loop stays
 *
 * A stall is measured from inside the main loop: a G_PRIORITY_HIGH timeout
 * every PERIOD_MS records how late it runs. GLib re-arms a timeout from its
 * dispatch time, so lateness = interval since the last dispatch − period; any
 * handler that blocks the loop (a synchronous save, a big model update)
 * shows up as one late dispatch. The main thread's CPU time over the same gap
 * tells our own work apart from the scheduler handing the core to another
 * process (the development machine is shared and loaded): a 200 ms stall with
 * 5 ms of CPU is contention, not code. Frame intervals come from the frame clock's
 * frame times via a tick callback (which also keeps the clock ticking, so
 * every frame the compositor would show is counted).
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "lk-stall-probe.h"

/* Short enough to resolve a 50 ms stall well, long enough to cost nothing. */
#define PERIOD_MS 5

typedef struct
{
  char *what;
  gint64 start;
  gint64 end;
  double longest_stall_ms;
  double longest_busy_ms; /* main-thread CPU time within one gap */
  guint stalls_over_50ms;
  GArray *frames_ms; /* double */
} Span;

typedef struct
{
  GPtrArray *spans; /* of Span; the last is open */
  guint timeout_id;
  gint64 last_dispatch;
  gint64 last_cpu;
  gint64 last_frame;
  gboolean rescan; /* LIKENESS_STALL_PROBE=rescan, not yet done */
} Probe;

static void
span_free (gpointer data)
{
  Span *span = data;

  g_free (span->what);
  g_array_unref (span->frames_ms);
  g_free (span);
}

static void
span_open (Probe *probe, const char *what)
{
  Span *span = g_new0 (Span, 1);
  gint64 now = g_get_monotonic_time ();

  if (probe->spans->len > 0)
    ((Span *) g_ptr_array_index (probe->spans, probe->spans->len - 1))->end = now;
  span->what = g_strdup (what);
  span->start = now;
  span->frames_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (probe->spans, span);
}

static Span *
current (Probe *probe)
{
  return g_ptr_array_index (probe->spans, probe->spans->len - 1);
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

double
lk_stall_probe_percentile (GArray *sorted, double p)
{
  if (sorted->len == 0)
    return 0.0;
  guint index = (guint) (p * (sorted->len - 1) + 0.5);
  return g_array_index (sorted, double, index);
}

static void
report (Probe *probe)
{
  gint64 now = g_get_monotonic_time ();

  for (guint k = 0; k < probe->spans->len; k++)
    {
      Span *span = g_ptr_array_index (probe->spans, k);
      double seconds = ((span->end != 0 ? span->end : now) - span->start) / 1e6;

      g_array_sort (span->frames_ms, compare_doubles);
      g_printerr ("stall-probe: %-8s %7.2f s: longest main-loop stall %.1f ms (main thread busy "
                  "%.1f ms of it at most), %u over 50 ms; frame interval p50 %.1f ms, p90 %.1f ms, "
                  "p95 %.1f ms, p99 %.1f ms, max %.1f ms (%u frames)\n",
                  span->what, seconds, span->longest_stall_ms, span->longest_busy_ms,
                  span->stalls_over_50ms, lk_stall_probe_percentile (span->frames_ms, 0.50),
                  lk_stall_probe_percentile (span->frames_ms, 0.90),
                  lk_stall_probe_percentile (span->frames_ms, 0.95),
                  lk_stall_probe_percentile (span->frames_ms, 0.99),
                  lk_stall_probe_percentile (span->frames_ms, 1.0), span->frames_ms->len);
    }
}

static void
probe_free (gpointer data)
{
  Probe *probe = data;

  report (probe);
  g_clear_handle_id (&probe->timeout_id, g_source_remove);
  g_ptr_array_unref (probe->spans);
  g_free (probe);
}

/* CPU time of the calling thread, in microseconds. */
static gint64
thread_cpu_time (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static gboolean
on_timeout (gpointer user_data)
{
  Probe *probe = user_data;
  gint64 now = g_get_monotonic_time ();
  gint64 cpu = thread_cpu_time ();
  double late_ms = (now - probe->last_dispatch) / 1e3 - PERIOD_MS;
  double busy_ms = (cpu - probe->last_cpu) / 1e3;
  Span *span = current (probe);

  probe->last_dispatch = now;
  probe->last_cpu = cpu;
  if (late_ms > span->longest_stall_ms)
    span->longest_stall_ms = late_ms;
  if (busy_ms > span->longest_busy_ms)
    span->longest_busy_ms = busy_ms;
  if (late_ms > 50.0)
    span->stalls_over_50ms++;
  return G_SOURCE_CONTINUE;
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  Probe *probe = user_data;
  gint64 frame = gdk_frame_clock_get_frame_time (clock);

  if (probe->last_frame != 0)
    {
      double interval_ms = (frame - probe->last_frame) / 1e3;
      g_array_append_val (current (probe)->frames_ms, interval_ms);
    }
  probe->last_frame = frame;
  return G_SOURCE_CONTINUE;
}

static void
on_destroy (GtkWidget *window, gpointer user_data)
{
  g_object_set_data (G_OBJECT (window), "lk-stall-probe", NULL);
}

void
lk_stall_probe_install (GtkWidget *window)
{
  const char *env = g_getenv ("LIKENESS_STALL_PROBE");

  if (env == NULL || env[0] == '\0' || g_str_equal (env, "0"))
    return;

  Probe *probe = g_new0 (Probe, 1);
  probe->spans = g_ptr_array_new_with_free_func (span_free);
  probe->rescan = g_str_equal (env, "rescan");
  span_open (probe, "start");
  probe->last_dispatch = g_get_monotonic_time ();
  probe->last_cpu = thread_cpu_time ();
  probe->timeout_id = g_timeout_add_full (G_PRIORITY_HIGH, PERIOD_MS, on_timeout, probe, NULL);
  gtk_widget_add_tick_callback (window, on_tick, probe, NULL);
  g_object_set_data_full (G_OBJECT (window), "lk-stall-probe", probe, probe_free);
  g_signal_connect (window, "destroy", G_CALLBACK (on_destroy), NULL);
}

void
lk_stall_probe_mark (GtkWidget *window, const char *what)
{
  Probe *probe = g_object_get_data (G_OBJECT (window), "lk-stall-probe");

  if (probe != NULL)
    span_open (probe, what);
}

gboolean
lk_stall_probe_wants_rescan (GtkWidget *window)
{
  Probe *probe = g_object_get_data (G_OBJECT (window), "lk-stall-probe");

  if (probe == NULL || !probe->rescan)
    return FALSE;
  probe->rescan = FALSE;
  return TRUE;
}
