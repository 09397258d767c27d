/* lk-scroll-probe.h — scrolls a grid of tiles to the bottom, a page per frame, checking each tile
 *
 * lk_scroll_probe_run() steps the vertical adjustment of a GtkScrolledWindow
 * holding a GtkGridView of LkTiles by one page per frame (a fling no finger
 * can match: every row is on screen for exactly one frame), and judges every
 * tile on screen in every frame with lk_tile_check(). At the bottom it keeps
 * looking until every tile on screen shows its thumbnail or its final
 * placeholder, or until a timeout. The frame intervals it saw are reported
 * with it; how long the main loop stalled meanwhile is the stall probe's job.
 *
 * LIKENESS_STALL_PROBE=scroll runs it in the window once a library is shown
 * (lk-window-probes.c).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef struct
{
  guint items;          /* in the grid's model */
  guint frames;         /* frames stepped */
  gboolean reached_end; /* the last frame showed the bottom (or the stop) */
  double seconds;       /* from the first step to the end */
  double frame_p50_ms;  /* frame intervals while stepping */
  double frame_p95_ms;
  double frame_p99_ms;
  double frame_max_ms;
  double cpu_p50_ms; /* main-thread CPU time per frame while stepping: */
  double cpu_p95_ms; /* what the app costs, whatever else the machine runs */
  double cpu_max_ms;
  /* Tiles on screen, counted once per frame, by what lk_tile_check() said. */
  guint seen;
  guint thumbnails;
  guint loading;
  guint no_thumbnail;
  guint stale;
  guint out_of_date;
  guint unbound;
  guint distinct_faces; /* different thumbnails bound to a tile on screen */
  /* After the end: every tile on screen showed its thumbnail or the
   * placeholder of a missing or broken one within the timeout. */
  gboolean settled;
  double settle_ms;
  guint final_tiles;
  guint final_thumbnails;
  guint final_placeholders;
} LkScrollProbeResult;

typedef void (*LkScrollProbeDone) (GtkScrolledWindow *scrolled, const LkScrollProbeResult *result,
                                   gpointer user_data);

/* Scrolls from where `scrolled` is down to `stop` (0..1 of the way; 1 is the
 * bottom), then waits up to `settle_ms` for the thumbnails, then calls
 * `done`. */
void lk_scroll_probe_run (GtkScrolledWindow *scrolled, double stop, guint settle_ms,
                          LkScrollProbeDone done, gpointer user_data);
/* One line for a person: what was scrolled and what it showed. */
char *lk_scroll_probe_describe (const LkScrollProbeResult *result);

G_END_DECLS
