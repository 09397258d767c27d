/* lk-ratio-chart.h — one paired timing as it lands: ratios, median, resolution, interval, wins */
#pragma once

#include <gtk/gtk.h>

#include "library/lk-thumbnail.h"
#include "timing/lk-timing.h"

G_BEGIN_DECLS

#define LK_TYPE_RATIO_CHART (lk_ratio_chart_get_type ())
G_DECLARE_FINAL_TYPE (LkRatioChart, lk_ratio_chart, LK, RATIO_CHART, GtkWidget)

GtkWidget *lk_ratio_chart_new (void);
/* Empties the chart for a run of `reps` repetitions of A against B. */
void lk_ratio_chart_reset (LkRatioChart *self, const char *a_label, const char *b_label,
                           guint reps);
/* One repetition as it lands (ns per call of each arm). Repetitions beyond
 * the `reps` of the reset are a programming error. */
void lk_ratio_chart_append (LkRatioChart *self, double a_ns, double b_ns, gboolean a_went_first);
/* Shows a finished timing (copied). */
void lk_ratio_chart_set_timing (LkRatioChart *self, const LkPairedTiming *timing,
                                const char *a_label, const char *b_label);
/* What the empty chart says: what to do to fill it, in the user's words. */
void lk_ratio_chart_set_placeholder (LkRatioChart *self, const char *text);
const char *lk_ratio_chart_get_placeholder (LkRatioChart *self);
/* The "n-points" property: repetitions drawn. */
guint lk_ratio_chart_get_n_points (LkRatioChart *self);
/* The repetitions drawn, or NULL before the first reset. */
const LkPairedTiming *lk_ratio_chart_get_timing (LkRatioChart *self);
/* Pixels between the interval's label ("96.5% CI") and the right edge, as
 * last drawn (on screen or by lk_ratio_chart_render); -1 when none was. */
double lk_ratio_chart_get_interval_label_margin (LkRatioChart *self);
/* The chart drawn at `width` × `height` in the widget's current colours, on a
 * background that contrasts with them, as RGBA8 for lk_thumbnail_save; with
 * `caption` (or NULL) as a line of text above it. */
LkThumbnail *lk_ratio_chart_render (LkRatioChart *self, guint width, guint height,
                                    const char *caption, GError **error);

G_END_DECLS
