/* lk-ratio-ticks.h — round ticks for the ratio chart's logarithmic axis
 *
 * A pure function, so the chart's axis is tested without a display.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The ticks of a logarithmic axis over the ratios lo..hi (0 < lo <= hi):
 * at most max_ticks (at least 2) values written to `ticks`, ascending, the
 * first <= lo and the last >= hi, so the axis drawn from the first to the
 * last holds every point. Steps a reader knows: 1, 2 or 5 times a power of
 * ten apart on a short range (0.95, 1, 1.05), 1-2-5 times a power of ten
 * on a longer one (0.5, 1, 2, 5), powers of ten n decades apart on the
 * longest.
 * Returns how many. */
guint lk_ratio_ticks (double lo, double hi, guint max_ticks, double *ticks);

G_END_DECLS
