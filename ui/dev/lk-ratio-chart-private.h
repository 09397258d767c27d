/* lk-ratio-chart-private.h — where the chart's last drawing put its parts, for the tests
 *
 * A chart's layout is computed while it draws (its ticks depend on the data
 * and the panel's height, its titles on the fonts): the drawing records it
 * here, so a test asserts the geometry itself, as GTK's own tests ask a
 * widget for its allocation, rather than reading pixels.
 */
#pragma once

#include "lk-ratio-chart.h"

G_BEGIN_DECLS

/* The most ticks the ratio axis takes, and labels the repetitions'. */
#define LK_RATIO_CHART_MAX_TICKS      7
#define LK_RATIO_CHART_MAX_REP_LABELS 10

typedef struct
{
  /* The two plots' frames, and the turned axis titles' boxes as drawn
   * (their logical extents), with whether each had to be cut short. */
  graphene_rect_t ratio_panel;
  graphene_rect_t wins_panel;
  graphene_rect_t ratio_title;
  graphene_rect_t wins_title;
  gboolean ratio_title_ellipsized;
  gboolean wins_title_ellipsized;
  /* The ratio axis's ticks, bottom to top, and the ratios at the panel's
   * bottom and top edges. */
  guint n_ticks;
  double ticks[LK_RATIO_CHART_MAX_TICKS];
  double axis_low;
  double axis_high;
  /* The boxes of the tick labels drawn (a tick too close to another one's
   * label goes without), then of the wins panel's 0.0, 0.5 and 1.0. */
  guint n_tick_labels;
  graphene_rect_t tick_labels[LK_RATIO_CHART_MAX_TICKS];
  graphene_rect_t wins_labels[3];
  /* The box of every repetition's dot (its centre), drawn or clipped. */
  guint n_points;
  graphene_rect_t points;
  /* The repetitions' labels under the wins panel, and the legend's
   * entries (each its mark and its text) above the ratio panel. */
  guint n_rep_labels;
  graphene_rect_t rep_labels[LK_RATIO_CHART_MAX_REP_LABELS];
  guint n_legend;
  graphene_rect_t legend[4];
} LkRatioChartLayout;

/* The layout of the last drawing with repetitions (on screen, or by
 * lk_ratio_chart_render in the chart's coordinates below its caption);
 * NULL when the last drawing had none. */
const LkRatioChartLayout *lk_ratio_chart_get_layout (LkRatioChart *self);

G_END_DECLS
