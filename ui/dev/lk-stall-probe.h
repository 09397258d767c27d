/* lk-stall-probe.h — how responsive the main loop stays (LIKENESS_STALL_PROBE=1)
 *
 * With the variable set, a window gets a G_PRIORITY_HIGH timeout that
 * measures its own lateness (a main-loop stall) and a tick callback that
 * records frame intervals; at exit the longest stall and the frame-interval
 * percentiles are printed to stderr, for the whole run and for each span
 * between marks ("scan" … "loaded"). Without the variable, nothing happens.
 * LIKENESS_STALL_PROBE=rescan also scans the library a second time once it is
 * on screen (see lk_stall_probe_wants_rescan), which measures a scan behind an
 * established window rather than one overlapping the window's first frames.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void lk_stall_probe_install (GtkWidget *window);
/* Starts a new span called `what`; the previous span ends here. */
void lk_stall_probe_mark (GtkWidget *window, const char *what);

/* The value below which a fraction `p` of the sorted doubles lie. */
double lk_stall_probe_percentile (GArray *sorted, double p);

/* TRUE once, after the first load, when LIKENESS_STALL_PROBE=rescan. */
gboolean lk_stall_probe_wants_rescan (GtkWidget *window);

G_END_DECLS
