/* lk-scroll-probe.c — scrolls a grid of tiles to the bottom, a page per frame, checking each tile
 *
 * Why it is shaped this way:
 *
 * - It steps from a tick callback, after it has judged the frame that was
 *   just laid out: a tile is judged as it was drawn, and the step lands in
 *   the next frame's layout, so each frame costs the grid one page of
 *   rebinding, the worst a user can ask with a scrollbar drag.
 * - It steps only once the grid has put tiles on screen (a page just shown
 *   has not been laid out at its first tick), so the first page is judged.
 * - Only tiles whose allocation meets the viewport count: GtkGridView keeps
 *   some thirty rows of bound tiles around the visible ones.
 */
#include "config.h"

#include <time.h>

#include "lk-scroll-probe.h"
#include "lk-stall-probe.h"
#include "lk-tile.h"

/* Frames to wait for a first layout before stepping anyway. */
#define MAX_WAIT_FRAMES 30
/* Enough for any grid of 100,000 faces, a page per frame. */
#define MAX_FRAMES      200000

typedef struct
{
  GtkScrolledWindow *scrolled;
  double stop;
  guint settle_ms;
  LkScrollProbeDone done;
  gpointer user_data;

  LkScrollProbeResult result;
  GArray *frames_ms; /* double */
  GArray *cpu_ms;    /* double: main-thread CPU time between two frames */
  gint64 last_cpu;
  GHashTable *faces; /* paths seen */
  gint64 last_frame;
  gint64 start;
  gint64 end;
  guint waited;
  gboolean settling;
} Run;

static void
run_free (gpointer data)
{
  Run *run = data;

  g_object_unref (run->scrolled);
  g_array_unref (run->frames_ms);
  g_array_unref (run->cpu_ms);
  g_hash_table_unref (run->faces);
  g_free (run);
}

/* Judges every tile on screen; counts into the result while scrolling, into
 * the final figures when settling. Returns the tiles still waiting. */
static guint
inspect (Run *run, GtkWidget *widget, const graphene_rect_t *viewport, guint depth)
{
  guint waiting = 0;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      graphene_rect_t bounds;

      if (!gtk_widget_get_mapped (child)
          || !gtk_widget_compute_bounds (child, GTK_WIDGET (run->scrolled), &bounds)
          || !graphene_rect_intersection (&bounds, viewport, NULL))
        continue;
      if (!LK_IS_TILE (child))
        {
          if (depth < 3)
            waiting += inspect (run, child, viewport, depth + 1);
          continue;
        }

      LkTileCheck check = lk_tile_check (LK_TILE (child));
      LkScrollProbeResult *r = &run->result;

      if (check == LK_TILE_LOADING || check == LK_TILE_OUT_OF_DATE)
        waiting++;
      if (run->settling)
        {
          r->final_tiles++;
          r->final_thumbnails += check == LK_TILE_THUMBNAIL;
          r->final_placeholders += check == LK_TILE_NO_THUMBNAIL;
          continue;
        }
      r->seen++;
      switch (check)
        {
          case LK_TILE_UNBOUND:
            r->unbound++;
            break;
          case LK_TILE_THUMBNAIL:
            r->thumbnails++;
            break;
          case LK_TILE_LOADING:
            r->loading++;
            break;
          case LK_TILE_NO_THUMBNAIL:
            r->no_thumbnail++;
            break;
          case LK_TILE_STALE:
            r->stale++;
            break;
          case LK_TILE_OUT_OF_DATE:
            r->out_of_date++;
            break;
        }
      const char *path = lk_tile_get_path (LK_TILE (child));
      if (path != NULL && check != LK_TILE_UNBOUND && !g_hash_table_contains (run->faces, path))
        g_hash_table_add (run->faces, g_strdup (path));
    }
  return waiting;
}

static guint
inspect_viewport (Run *run)
{
  graphene_rect_t viewport;
  GtkWidget *grid = gtk_scrolled_window_get_child (run->scrolled);

  graphene_rect_init (&viewport, 0, 0, gtk_widget_get_width (GTK_WIDGET (run->scrolled)),
                      gtk_widget_get_height (GTK_WIDGET (run->scrolled)));
  return grid != NULL ? inspect (run, grid, &viewport, 0) : 0;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

/* CPU time of the calling thread, in microseconds. */
static gint64
thread_cpu_time (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static void
finish (Run *run)
{
  LkScrollProbeResult *r = &run->result;

  g_array_sort (run->frames_ms, compare_doubles);
  r->frame_p50_ms = lk_stall_probe_percentile (run->frames_ms, 0.50);
  r->frame_p95_ms = lk_stall_probe_percentile (run->frames_ms, 0.95);
  r->frame_p99_ms = lk_stall_probe_percentile (run->frames_ms, 0.99);
  r->frame_max_ms = lk_stall_probe_percentile (run->frames_ms, 1.0);
  g_array_sort (run->cpu_ms, compare_doubles);
  r->cpu_p50_ms = lk_stall_probe_percentile (run->cpu_ms, 0.50);
  r->cpu_p95_ms = lk_stall_probe_percentile (run->cpu_ms, 0.95);
  r->cpu_max_ms = lk_stall_probe_percentile (run->cpu_ms, 1.0);
  r->distinct_faces = g_hash_table_size (run->faces);
  /* start is set by the first step: none, no time. */
  r->seconds = r->frames > 0 ? (run->end - run->start) / 1e6 : 0.0;
  r->settle_ms = (g_get_monotonic_time () - run->end) / 1e3;
  run->done (run->scrolled, r, run->user_data);
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  Run *run = user_data;
  LkScrollProbeResult *r = &run->result;
  gint64 frame = gdk_frame_clock_get_frame_time (clock);

  if (run->settling)
    {
      guint waiting;

      r->final_tiles = r->final_thumbnails = r->final_placeholders = 0;
      waiting = inspect_viewport (run);
      r->settled = waiting == 0;
      if (r->settled || g_get_monotonic_time () - run->end > (gint64) run->settle_ms * 1000)
        {
          finish (run);
          return G_SOURCE_REMOVE;
        }
      return G_SOURCE_CONTINUE;
    }

  gint64 cpu = thread_cpu_time ();
  if (run->last_frame != 0 && r->frames > 0)
    {
      double interval_ms = (frame - run->last_frame) / 1e3;
      double cpu_ms = (cpu - run->last_cpu) / 1e3;
      g_array_append_val (run->frames_ms, interval_ms);
      g_array_append_val (run->cpu_ms, cpu_ms);
    }
  run->last_frame = frame;
  run->last_cpu = cpu;

  guint seen = r->seen;
  inspect_viewport (run);
  if (r->seen == seen && r->frames == 0 && r->items > 0 && run->waited++ < MAX_WAIT_FRAMES)
    return G_SOURCE_CONTINUE;

  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (run->scrolled);
  double value = gtk_adjustment_get_value (adjustment);
  double page = gtk_adjustment_get_page_size (adjustment);
  double target = run->stop * (gtk_adjustment_get_upper (adjustment) - page);

  if (value >= target - 0.5 || r->frames >= MAX_FRAMES)
    {
      r->reached_end = value >= target - 0.5;
      run->end = g_get_monotonic_time ();
      run->settling = TRUE;
      return G_SOURCE_CONTINUE;
    }
  if (r->frames == 0)
    run->start = g_get_monotonic_time ();
  gtk_adjustment_set_value (adjustment, MIN (value + page, target));
  r->frames++;
  return G_SOURCE_CONTINUE;
}

void
lk_scroll_probe_run (GtkScrolledWindow *scrolled, double stop, guint settle_ms,
                     LkScrollProbeDone done, gpointer user_data)
{
  g_return_if_fail (GTK_IS_SCROLLED_WINDOW (scrolled));
  g_return_if_fail (done != NULL);

  Run *run = g_new0 (Run, 1);
  GtkWidget *grid = gtk_scrolled_window_get_child (scrolled);

  run->scrolled = g_object_ref (scrolled);
  run->stop = CLAMP (stop, 0.0, 1.0);
  run->settle_ms = settle_ms;
  run->done = done;
  run->user_data = user_data;
  run->frames_ms = g_array_new (FALSE, FALSE, sizeof (double));
  run->cpu_ms = g_array_new (FALSE, FALSE, sizeof (double));
  run->faces = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (GTK_IS_GRID_VIEW (grid))
    {
      GListModel *model = G_LIST_MODEL (gtk_grid_view_get_model (GTK_GRID_VIEW (grid)));
      run->result.items = model != NULL ? g_list_model_get_n_items (model) : 0;
    }
  gtk_widget_add_tick_callback (GTK_WIDGET (scrolled), on_tick, run, run_free);
}

char *
lk_scroll_probe_describe (const LkScrollProbeResult *r)
{
  double seen = MAX (r->seen, 1);

  /* A page that fits on one screen is never stepped: no frame, no duration
   * (its duration would be the time since boot: "0 frames … in 29632 s"). */
  if (r->frames == 0)
    return g_strdup_printf (
        "%u items, did not scroll (%s); %u tiles on screen; %s in %.0f ms: %u of %u tiles show "
        "their thumbnail, %u a missing one's placeholder",
        r->items, r->reached_end ? "they fit on one screen" : "the end was NOT reached", r->seen,
        r->settled ? "settled" : "NOT settled", r->settle_ms, r->final_thumbnails, r->final_tiles,
        r->final_placeholders);
  return g_strdup_printf (
      "%u items, %u frames to the %s in %.2f s (%s); frame interval p50 %.1f ms, p95 %.1f ms, "
      "p99 %.1f ms, max %.1f ms; main-thread CPU per frame p50 %.1f ms, p95 %.1f ms, max %.1f "
      "ms; tiles on screen per frame: %u in all, %.1f %% thumbnail, "
      "%.1f %% loading, %u no thumbnail, %u stale, %u out of date, %u unbound; %u different "
      "faces; %s in %.0f ms: %u of %u tiles show their thumbnail, %u a missing one's placeholder",
      r->items, r->frames, r->reached_end ? "end" : "stop", r->seconds,
      r->reached_end ? "reached" : "NOT reached", r->frame_p50_ms, r->frame_p95_ms, r->frame_p99_ms,
      r->frame_max_ms, r->cpu_p50_ms, r->cpu_p95_ms, r->cpu_max_ms, r->seen,
      100.0 * r->thumbnails / seen, 100.0 * r->loading / seen, r->no_thumbnail, r->stale,
      r->out_of_date, r->unbound, r->distinct_faces, r->settled ? "settled" : "NOT settled",
      r->settle_ms, r->final_thumbnails, r->final_tiles, r->final_placeholders);
}
