/* lk-ratio-chart.c — one paired timing as it lands
 *
 * Draws what lk-timing.h judges, in the harness's own terms, so the picture
 * and the verdict cannot disagree: every statistic (running median,
 * resolution, sign-test interval, wins) is the engine's, computed on the
 * prefix of repetitions that had landed at each point. The ratio axis is
 * logarithmic because a ratio of 2 and one of 0.5 are the same distance from
 * a tie. Colours come from the widget's foreground (so light and dark styles
 * both read), plus two fixed hues for which arm went first, chosen to stay
 * apart for the common colour-vision deficiencies. Drawn with cairo through
 * gtk_snapshot_append_cairo (GskPath only exists from GTK 4.14); the same
 * drawing renders offscreen for the PNG export.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "lk-ratio-chart-private.h"
#include "lk-ratio-ticks.h"

struct _LkRatioChart
{
  GtkWidget parent_instance;

  LkPairedTiming *timing;
  char *a_label;
  char *b_label;
  char *placeholder; /* said on the empty chart: what to do to fill it */
  /* Pixels between the interval label's right end and the chart's, as last
   * drawn; -1 when no label was drawn. */
  double interval_label_margin;
  double drawn_width; /* the width of the last drawing */
  /* Where the last drawing put its parts; valid when has_layout. */
  LkRatioChartLayout layout;
  gboolean has_layout;
};

G_DEFINE_FINAL_TYPE (LkRatioChart, lk_ratio_chart, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_N_POINTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Room for the tick labels and the rotated axis title on the left, for the
 * interval's bracket and its label on the right. */
#define PAD_LEFT          78.0
/* The axis titles: their left edge, and their size beside the text's. */
#define AXIS_TITLE_LEFT   4.0
#define AXIS_TITLE_SCALE  0.8
/* At least this much, more when the interval's label needs it: at a fixed
 * 72, "96.5% CI" (its bracket 12 px from the plot, the text 8 px from the
 * bracket) touches the window's edge, and a fixed pad can never be right
 * for every font and translation, so the label is measured. */
#define PAD_RIGHT         72.0
/* The interval's bracket: its distance from the plot, then the label's. */
#define CI_BRACKET_GAP    12.0
#define CI_LABEL_GAP      8.0
/* Kept clear right of the interval's label: GNOME's 12-px spacing. */
#define CI_LABEL_MARGIN   12.0
#define CI_LABEL_SCALE    0.75
#define PAD_TOP           30.0
#define PAD_BOTTOM        40.0
#define PANEL_GAP         22.0
/* The exported PNG's caption band: one line of text at 1.15×. */
#define CAPTION_BAND      36.0
/* The ratio panel's share of the height; the wins panel has the rest. */
#define RATIO_SHARE       0.74
#define MAX_TICKS         LK_RATIO_CHART_MAX_TICKS
/* Pixels of panel height per ratio tick: 7 ticks on a tall chart, fewer on
 * a short one. Not 28: a phone's 110-pixel panel then took 3, and 3 ticks
 * over ratios of 0.9 to 41 are 0.1, 10 and 1000, the data squeezed into a
 * third of the panel; 22 keeps labels MIN_TICK_GAP apart. */
#define TICK_PITCH        22.0
/* Pixels between two ratio labels, so that they never overlap. */
#define MIN_TICK_GAP      18.0
/* Pixels between two repetitions' labels: a space's width, about. */
#define MIN_REP_LABEL_GAP 6.0
/* A legend row's height, and the room kept between its entries. */
#define LEGEND_ROW        16.0
#define LEGEND_GAP        18.0

typedef struct
{
  GdkRGBA fg;
  GdkRGBA a_first;
  GdkRGBA b_first;
} Palette;

typedef struct
{
  double left, top, width, height;
} Panel;

static void
palette_init (Palette *palette, const GdkRGBA *fg)
{
  gboolean dark = 0.2126 * fg->red + 0.7152 * fg->green + 0.0722 * fg->blue > 0.5;

  palette->fg = *fg;
  /* GNOME palette blue and orange: lighter shades on a dark background. */
  gdk_rgba_parse (&palette->a_first, dark ? "#62a0ea" : "#1c71d8");
  gdk_rgba_parse (&palette->b_first, dark ? "#ffa348" : "#e66100");
}

static void
set_color (cairo_t *cr, const GdkRGBA *color, double alpha)
{
  cairo_set_source_rgba (cr, color->red, color->green, color->blue, color->alpha * alpha);
}

/* Text anchored at (x, y): ax, ay in [0, 1] pick the point of the text's box
 * that lands there; the box drawn in `box` when not NULL. */
static double
draw_text (LkRatioChart *self, cairo_t *cr, const char *text, double x, double y, double ax,
           double ay, double scale, graphene_rect_t *box)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoAttrList *attrs = pango_attr_list_new ();
  int width, height;

  pango_attr_list_insert (attrs, pango_attr_scale_new (scale));
  pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum=1"));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  pango_cairo_update_layout (cr, layout);
  pango_layout_get_pixel_size (layout, &width, &height);
  cairo_move_to (cr, x - ax * width, y - ay * height);
  pango_cairo_show_layout (cr, layout);
  if (box != NULL)
    graphene_rect_init (box, x - ax * width, y - ay * height, width, height);
  return width;
}

/* The width of `text` as draw_text draws it at `scale`. */
static int
text_width (LkRatioChart *self, const char *text, double scale)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoAttrList *attrs = pango_attr_list_new ();
  int width;

  pango_attr_list_insert (attrs, pango_attr_scale_new (scale));
  pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum=1"));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  pango_layout_get_pixel_size (layout, &width, NULL);
  return width;
}

/* The interval's label ("96.5% CI"), or NULL when the timing has none. */
static char *
interval_label (const LkPairedTiming *timing)
{
  double low, high, confidence;

  if (timing == NULL || !lk_paired_timing_median_interval (timing, &low, &high, &confidence))
    return NULL;
  return g_strdup_printf (_ ("%.1f%% CI"), 100 * confidence);
}

/* The room right of the plot: the bracket, its label and a margin. */
static double
pad_right (LkRatioChart *self)
{
  g_autofree char *label = interval_label (self->timing);
  if (label == NULL)
    return PAD_RIGHT;
  int width = text_width (self, label, CI_LABEL_SCALE);
  return MAX (PAD_RIGHT, CI_BRACKET_GAP + CI_LABEL_GAP + width + CI_LABEL_MARGIN);
}

static double
ratio_y (const Panel *panel, double log_lo, double log_hi, double ratio)
{
  double t = (log (ratio) - log_lo) / (log_hi - log_lo);

  /* Far outside the panel is as good as infinitely far, and keeps cairo's
   * fixed-point coordinates in range. */
  return panel->top + panel->height * (1.0 - CLAMP (t, -10.0, 11.0));
}

static double
rep_x (const Panel *panel, guint slots, double index)
{
  return panel->left + panel->width * (index + 0.5) / slots;
}

/* The prefix of the first n repetitions, as a timing the engine's statistics
 * read (it shares the arrays). */
static LkPairedTiming
prefix (const LkPairedTiming *timing, guint n)
{
  LkPairedTiming view = *timing;

  view.reps = n;
  return view;
}

/* The panel's ticks (round values that hold every ratio and the interval:
 * the axis ends on the first and last) and its range in log ratio
 * (*LOG_LO, *LOG_HI); the running median and its resolution per
 * repetition. */
static guint
ratio_range (const LkPairedTiming *timing, const Panel *panel, double *medians, double *resolutions,
             gboolean has_ci, double ci_low, double ci_high, double *ticks, double *log_lo,
             double *log_hi)
{
  double lo = 1.0, hi = 1.0;
  for (guint i = 0; i < timing->reps; i++)
    {
      LkPairedTiming view = prefix (timing, i + 1);
      medians[i] = lk_paired_timing_median_ratio (&view);
      resolutions[i] = lk_paired_timing_ratio_resolution (&view);
      /* The band does not set the range: on a noisy machine it reaches
       * towards 0 and would squash the points; it is clipped instead. */
      if (isfinite (timing->ratios[i]) && timing->ratios[i] > 0)
        {
          lo = MIN (lo, timing->ratios[i]);
          hi = MAX (hi, timing->ratios[i]);
        }
    }
  if (has_ci && ci_low > 0 && isfinite (ci_high))
    {
      lo = MIN (lo, ci_low);
      hi = MAX (hi, ci_high);
    }
  /* At least ±5% around the data, so a tight run does not magnify noise. */
  lo = MIN (lo, 1 / 1.05);
  hi = MAX (hi, 1.05);
  guint max_ticks = CLAMP ((guint) (panel->height / TICK_PITCH), 2, MAX_TICKS);
  guint n = lk_ratio_ticks (lo, hi, max_ticks, ticks);
  /* A few pixels past the end ticks, so a point on one is not on the frame. */
  double span = log (ticks[n - 1]) - log (ticks[0]);
  *log_lo = log (ticks[0]) - span * 0.03;
  *log_hi = log (ticks[n - 1]) + span * 0.03;
  return n;
}

/* Grid and tick labels: 1 first, then the others that keep clear of every
 * label drawn. */
static void
draw_ratio_grid (LkRatioChart *self, cairo_t *cr, const Panel *panel, const Palette *palette,
                 const double *ticks, guint n_ticks, double log_lo, double log_hi)
{
  double labelled[MAX_TICKS];
  guint n_labelled = 0;
  cairo_set_line_width (cr, 1.0);
  for (guint pass = 0; pass < 2; pass++)
    for (guint k = 0; k < n_ticks; k++)
      {
        if ((fabs (ticks[k] - 1.0) < 1e-9) != (pass == 0))
          continue;
        double y = round (ratio_y (panel, log_lo, log_hi, ticks[k])) + 0.5;
        gboolean crowded = FALSE;
        for (guint j = 0; j < n_labelled; j++)
          crowded = crowded || fabs (labelled[j] - y) < MIN_TICK_GAP;
        if (crowded)
          continue;
        labelled[n_labelled++] = y;
        g_autofree char *label = g_strdup_printf ("%.6g", ticks[k]);
        set_color (cr, &palette->fg, 0.08);
        cairo_move_to (cr, panel->left, y);
        cairo_line_to (cr, panel->left + panel->width, y);
        cairo_stroke (cr);
        set_color (cr, &palette->fg, 0.7);
        draw_text (self, cr, label, panel->left - 6, y, 1.0, 0.5, 0.8,
                   &self->layout.tick_labels[self->layout.n_tick_labels++]);
      }
}

/* An axis's title, turned up along the panel's left side: wrapped to the
 * panel's height, two lines at most and then "…", so it never runs past
 * its panel into the next one's title (they overlapped at the end of a run
 * when the wins panel was short). */
static void
draw_axis_title (LkRatioChart *self, cairo_t *cr, const Panel *panel, const char *text,
                 graphene_rect_t *box, gboolean *ellipsized)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoAttrList *attrs = pango_attr_list_new ();
  PangoRectangle extents;
  int height;

  pango_attr_list_insert (attrs, pango_attr_scale_new (AXIS_TITLE_SCALE));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  pango_layout_set_width (layout, (int) (panel->height * PANGO_SCALE));
  pango_layout_set_height (layout, -2);
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  pango_cairo_update_layout (cr, layout);
  pango_layout_get_pixel_size (layout, NULL, &height);
  cairo_save (cr);
  cairo_translate (cr, AXIS_TITLE_LEFT + height / 2.0, panel->top + panel->height / 2);
  cairo_rotate (cr, -G_PI / 2);
  cairo_move_to (cr, -panel->height / 2, -height / 2.0);
  pango_cairo_show_layout (cr, layout);
  cairo_restore (cr);
  /* Turned a quarter left: the text's run goes up from the panel's bottom
   * edge, its lines rightwards from AXIS_TITLE_LEFT. */
  pango_layout_get_pixel_extents (layout, NULL, &extents);
  graphene_rect_init (box, AXIS_TITLE_LEFT + extents.y,
                      panel->top + panel->height - extents.x - extents.width, extents.height,
                      extents.width);
  *ellipsized = pango_layout_is_ellipsized (layout);
}

/* The resolution band around the running median. */
static void
draw_ratio_band (cairo_t *cr, const Panel *panel, const Palette *palette, guint slots, guint n,
                 const double *medians, const double *resolutions, double log_lo, double log_hi)
{
  gboolean started = FALSE;
  for (guint i = 0; i < n; i++)
    if (isfinite (resolutions[i]))
      {
        double y = ratio_y (panel, log_lo, log_hi, medians[i] * (1.0 + resolutions[i]));
        if (!started)
          cairo_move_to (cr, rep_x (panel, slots, i), y);
        else
          cairo_line_to (cr, rep_x (panel, slots, i), y);
        started = TRUE;
      }
  if (!started)
    return;
  for (guint i = n; i-- > 0;)
    if (isfinite (resolutions[i]))
      {
        /* A band reaching 0 leaves the panel at its bottom. */
        double low = MAX (medians[i] * (1.0 - resolutions[i]), exp (log_lo) / 2);
        cairo_line_to (cr, rep_x (panel, slots, i), ratio_y (panel, log_lo, log_hi, low));
      }
  cairo_close_path (cr);
  set_color (cr, &palette->fg, 0.10);
  cairo_fill (cr);
}

/* The tie (ratio = 1), the running median, and each repetition's ratio,
 * coloured by the arm that went first. */
static void
draw_ratio_points (cairo_t *cr, const Panel *panel, const Palette *palette, guint slots,
                   const LkPairedTiming *timing, const double *medians, double log_lo,
                   double log_hi)
{
  guint n = timing->reps;
  double one = round (ratio_y (panel, log_lo, log_hi, 1.0)) + 0.5;
  double dashes[] = { 6.0, 4.0 };
  cairo_set_dash (cr, dashes, 2, 0);
  set_color (cr, &palette->fg, 0.55);
  cairo_set_line_width (cr, 1.0);
  cairo_move_to (cr, panel->left, one);
  cairo_line_to (cr, panel->left + panel->width, one);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);

  cairo_set_line_width (cr, 2.0);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  set_color (cr, &palette->fg, 0.85);
  for (guint i = 0; i < n; i++)
    {
      double x = rep_x (panel, slots, i), y = ratio_y (panel, log_lo, log_hi, medians[i]);
      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);

  double radius = slots > 120 ? 2.5 : 4.0;
  for (guint i = 0; i < n; i++)
    {
      cairo_arc (cr, rep_x (panel, slots, i), ratio_y (panel, log_lo, log_hi, timing->ratios[i]),
                 radius, 0, 2 * G_PI);
      set_color (cr, timing->a_went_first[i] ? &palette->a_first : &palette->b_first, 1.0);
      cairo_fill (cr);
    }
}

/* The sign-test interval of the median, as a bracket right of the plot. */
static void
draw_ratio_interval (LkRatioChart *self, cairo_t *cr, const Panel *panel, const Palette *palette,
                     double ci_low, double ci_high, double log_lo, double log_hi)
{
  double x = panel->left + panel->width + CI_BRACKET_GAP;
  double y_low = ratio_y (panel, log_lo, log_hi, ci_low);
  double y_high = ratio_y (panel, log_lo, log_hi, ci_high);
  g_autofree char *label = interval_label (self->timing);
  set_color (cr, &palette->fg, 0.85);
  cairo_set_line_width (cr, 2.0);
  cairo_move_to (cr, x + 5, y_high);
  cairo_line_to (cr, x, y_high);
  cairo_line_to (cr, x, y_low);
  cairo_line_to (cr, x + 5, y_low);
  cairo_stroke (cr);
  double drawn = draw_text (self, cr, label, x + CI_LABEL_GAP, (y_low + y_high) / 2, 0.0, 0.5,
                            CI_LABEL_SCALE, NULL);
  self->interval_label_margin = self->drawn_width - (x + CI_LABEL_GAP + drawn);
}

/* The ratio panel: its range, the grid, the data clipped to the panel, the
 * interval's bracket and the axis's title. */
static void
draw_ratio_panel (LkRatioChart *self, cairo_t *cr, const Panel *panel, const Palette *palette,
                  guint slots)
{
  const LkPairedTiming *timing = self->timing;
  guint n = timing->reps;
  double ci_low = NAN, ci_high = NAN, confidence = NAN;
  g_autofree double *medians = g_new (double, n + 1);
  g_autofree double *resolutions = g_new (double, n + 1);
  gboolean has_ci = lk_paired_timing_median_interval (timing, &ci_low, &ci_high, &confidence);
  double log_lo, log_hi, ticks[MAX_TICKS];
  guint n_ticks = ratio_range (timing, panel, medians, resolutions, has_ci, ci_low, ci_high, ticks,
                               &log_lo, &log_hi);

  draw_ratio_grid (self, cr, panel, palette, ticks, n_ticks, log_lo, log_hi);
  self->layout.n_ticks = n_ticks;
  memcpy (self->layout.ticks, ticks, n_ticks * sizeof *ticks);
  self->layout.axis_low = exp (log_lo);
  self->layout.axis_high = exp (log_hi);
  for (guint i = 0; i < n; i++)
    if (isfinite (timing->ratios[i]) && timing->ratios[i] > 0)
      {
        graphene_rect_t point;
        graphene_rect_init (&point, rep_x (panel, slots, i),
                            ratio_y (panel, log_lo, log_hi, timing->ratios[i]), 0, 0);
        if (self->layout.n_points++ == 0)
          self->layout.points = point;
        else
          graphene_rect_union (&self->layout.points, &point, &self->layout.points);
      }

  /* The data stays inside the panel; the interval's bracket is drawn after. */
  cairo_save (cr);
  cairo_rectangle (cr, panel->left, panel->top, panel->width, panel->height);
  cairo_clip (cr);
  draw_ratio_band (cr, panel, palette, slots, n, medians, resolutions, log_lo, log_hi);
  draw_ratio_points (cr, panel, palette, slots, timing, medians, log_lo, log_hi);
  cairo_restore (cr);

  if (has_ci)
    draw_ratio_interval (self, cr, panel, palette, ci_low, ci_high, log_lo, log_hi);

  set_color (cr, &palette->fg, 0.7);
  draw_axis_title (self, cr, panel, _ ("B ÷ A time (log) · above 1: A is faster"),
                   &self->layout.ratio_title, &self->layout.ratio_title_ellipsized);
}

static void
draw_wins_panel (LkRatioChart *self, cairo_t *cr, const Panel *panel, const Palette *palette,
                 guint slots)
{
  const LkPairedTiming *timing = self->timing;
  static const double fractions[] = { 0.0, 0.5, 1.0 };

  cairo_set_line_width (cr, 1.0);
  for (gsize k = 0; k < G_N_ELEMENTS (fractions); k++)
    {
      double y = round (panel->top + panel->height * (1.0 - fractions[k])) + 0.5;
      g_autofree char *label = g_strdup_printf ("%.1f", fractions[k]);
      set_color (cr, &palette->fg, k == 1 ? 0.45 : 0.08);
      if (k == 1)
        cairo_set_dash (cr, (double[]){ 6.0, 4.0 }, 2, 0);
      cairo_move_to (cr, panel->left, y);
      cairo_line_to (cr, panel->left + panel->width, y);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      set_color (cr, &palette->fg, 0.7);
      draw_text (self, cr, label, panel->left - 6, y, 1.0, 0.5, 0.8, &self->layout.wins_labels[k]);
    }

  set_color (cr, &palette->a_first, 1.0);
  cairo_set_line_width (cr, 2.0);
  for (guint i = 0; i < timing->reps; i++)
    {
      LkPairedTiming view = prefix (timing, i + 1);
      double y = panel->top + panel->height * (1.0 - lk_paired_timing_wins_fraction (&view));
      if (i == 0)
        cairo_move_to (cr, rep_x (panel, slots, i), y);
      else
        cairo_line_to (cr, rep_x (panel, slots, i), y);
    }
  cairo_stroke (cr);

  set_color (cr, &palette->fg, 0.7);
  draw_axis_title (self, cr, panel, _ ("A wins"), &self->layout.wins_title,
                   &self->layout.wins_title_ellipsized);
  if (timing->reps > 0)
    {
      g_autofree char *wins = g_strdup_printf ("%.2f", lk_paired_timing_wins_fraction (timing));
      draw_text (self, cr, wins, panel->left + panel->width + 12,
                 panel->top + panel->height * (1.0 - lk_paired_timing_wins_fraction (timing)), 0.0,
                 0.5, 0.75, NULL);
    }
}

/* The repetitions' labels: ten at most, and as many fewer as keep
 * MIN_REP_LABEL_GAP between them at the panel's width ("2 4 6 8 10 12"
 * ran together as "8101214" on a phone's window). */
static void
draw_x_axis (LkRatioChart *self, cairo_t *cr, const Panel *panel, const Palette *palette,
             guint slots)
{
  static const guint steps[] = { 1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000 };
  guint step = steps[G_N_ELEMENTS (steps) - 1];
  g_autofree char *widest = g_strdup_printf ("%u", slots);
  double label_width = text_width (self, widest, 0.8);

  for (gsize k = 0; k < G_N_ELEMENTS (steps); k++)
    if (slots / steps[k] <= 10
        && panel->width * steps[k] / slots >= label_width + MIN_REP_LABEL_GAP)
      {
        step = steps[k];
        break;
      }
  set_color (cr, &palette->fg, 0.7);
  for (guint rep = step; rep <= slots; rep += step)
    {
      g_autofree char *label = g_strdup_printf ("%u", rep);
      graphene_rect_t box;
      draw_text (self, cr, label, rep_x (panel, slots, rep - 1), panel->top + panel->height + 4,
                 0.5, 0.0, 0.8, &box);
      if (self->layout.n_rep_labels < LK_RATIO_CHART_MAX_REP_LABELS)
        self->layout.rep_labels[self->layout.n_rep_labels++] = box;
    }
  draw_text (self, cr, _ ("repetition"), panel->left + panel->width / 2,
             panel->top + panel->height + 20, 0.5, 0.0, 0.8, NULL);
}

/* The legend's entries left to right from (left, y), each whole: one that
 * would run past `right` starts a row of its own LEGEND_ROW lower (on a
 * phone's window all but the first were left out). Draws when `cr` is not
 * NULL; returns the rows it takes. */
static guint
draw_legend (LkRatioChart *self, cairo_t *cr, double left, double y, double right,
             const Palette *palette)
{
  g_autofree char *a_first = g_strdup_printf (_ ("%s went first"), self->a_label);
  g_autofree char *b_first = g_strdup_printf (_ ("%s went first"), self->b_label);
  const struct
  {
    const GdkRGBA *color;
    const char *text;
    int mark; /* 0 dot, 1 line, 2 band */
  } entries[] = {
    { &palette->a_first, a_first, 0 },
    { &palette->b_first, b_first, 0 },
    { &palette->fg, _ ("running median"), 1 },
    { &palette->fg, _ ("resolution"), 2 },
  };
  double x = left;
  guint rows = 1;

  for (gsize k = 0; k < G_N_ELEMENTS (entries); k++)
    {
      int width = text_width (self, entries[k].text, 0.8);

      if (x > left && x + 16 + width > right)
        {
          x = left;
          y += LEGEND_ROW;
          rows++;
        }
      if (cr != NULL)
        {
          if (entries[k].mark == 0)
            {
              set_color (cr, entries[k].color, 1.0);
              cairo_arc (cr, x + 5, y, 4.0, 0, 2 * G_PI);
              cairo_fill (cr);
            }
          else if (entries[k].mark == 1)
            {
              set_color (cr, entries[k].color, 0.85);
              cairo_set_line_width (cr, 2.0);
              cairo_move_to (cr, x - 2, y);
              cairo_line_to (cr, x + 12, y);
              cairo_stroke (cr);
            }
          else
            {
              set_color (cr, entries[k].color, 0.15);
              cairo_rectangle (cr, x - 2, y - 5, 14, 10);
              cairo_fill (cr);
            }
          set_color (cr, &palette->fg, 0.8);
          graphene_rect_t text;
          draw_text (self, cr, entries[k].text, x + 16, y, 0.0, 0.5, 0.8, &text);
          graphene_rect_init (&self->layout.legend[self->layout.n_legend++], x - 2, text.origin.y,
                              18 + text.size.width, text.size.height);
        }
      x += 16 + width + LEGEND_GAP;
    }
  return rows;
}

/* Where the legend starts: over the plot when it fits there on one row,
 * else at the chart's left edge, so a narrow chart's legend takes fewer
 * rows from its panels. */
static double
legend_start (LkRatioChart *self, double width)
{
  Palette palette;

  palette_init (&palette, &(GdkRGBA){ 0, 0, 0, 1 });
  if (draw_legend (self, NULL, PAD_LEFT, 0, width - 4, &palette) == 1)
    return PAD_LEFT;
  return AXIS_TITLE_LEFT;
}

/* The legend's rows at `width` beyond its first one. */
static guint
extra_legend_rows (LkRatioChart *self, double width)
{
  Palette palette;

  if (self->timing == NULL)
    return 0;
  palette_init (&palette, &(GdkRGBA){ 0, 0, 0, 1 });
  return draw_legend (self, NULL, legend_start (self, width), 0, width - 4, &palette) - 1;
}

/* What to do to fill the empty chart, wrapped inside the ratio panel. */
static void
draw_placeholder (LkRatioChart *self, cairo_t *cr, const Panel *panel)
{
  g_autoptr (PangoLayout) layout
      = gtk_widget_create_pango_layout (GTK_WIDGET (self), self->placeholder);
  int height;

  pango_layout_set_width (layout, (int) ((panel->width - 24) * PANGO_SCALE));
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  pango_cairo_update_layout (cr, layout);
  pango_layout_get_pixel_size (layout, NULL, &height);
  cairo_move_to (cr, panel->left + 12, panel->top + (panel->height - height) / 2);
  pango_cairo_show_layout (cr, layout);
}

static void
draw_chart (LkRatioChart *self, cairo_t *cr, double width, double height, const GdkRGBA *fg)
{
  Palette palette;

  palette_init (&palette, fg);
  /* The legend's rows beyond the first push the panels down. */
  double legend_left = legend_start (self, width);
  double top = PAD_TOP + extra_legend_rows (self, width) * LEGEND_ROW;
  double plot_height = height - top - PAD_BOTTOM - PANEL_GAP;
  Panel ratio = { PAD_LEFT, top, width - PAD_LEFT - pad_right (self), plot_height * RATIO_SHARE };
  Panel wins = { PAD_LEFT, top + ratio.height + PANEL_GAP, ratio.width,
                 plot_height * (1.0 - RATIO_SHARE) };

  self->drawn_width = width;
  self->interval_label_margin = -1;
  self->has_layout = FALSE;
  memset (&self->layout, 0, sizeof self->layout);
  if (ratio.width < 40 || wins.height < 20)
    return;
  graphene_rect_init (&self->layout.ratio_panel, ratio.left, ratio.top, ratio.width, ratio.height);
  graphene_rect_init (&self->layout.wins_panel, wins.left, wins.top, wins.width, wins.height);

  for (int k = 0; k < 2; k++)
    {
      const Panel *panel = k == 0 ? &ratio : &wins;
      set_color (cr, &palette.fg, 0.25);
      cairo_set_line_width (cr, 1.0);
      cairo_rectangle (cr, round (panel->left) + 0.5, round (panel->top) + 0.5,
                       round (panel->width), round (panel->height));
      cairo_stroke (cr);
    }

  if (self->timing == NULL)
    {
      set_color (cr, &palette.fg, 0.55);
      draw_placeholder (self, cr, &ratio);
      return;
    }

  guint slots = MAX (MAX (self->timing->capacity, self->timing->reps), 2);
  self->has_layout = TRUE;
  draw_legend (self, cr, legend_left, PAD_TOP / 2 - 2, width - 4, &palette);
  cairo_save (cr);
  draw_ratio_panel (self, cr, &ratio, &palette, slots);
  cairo_restore (cr);
  cairo_save (cr);
  draw_wins_panel (self, cr, &wins, &palette, slots);
  cairo_restore (cr);
  draw_x_axis (self, cr, &wins, &palette, slots);
}

static void
widget_color (GtkWidget *widget, GdkRGBA *color)
{
#if GTK_CHECK_VERSION(4, 10, 0)
  gtk_widget_get_color (widget, color);
#else
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), color);
  G_GNUC_END_IGNORE_DEPRECATIONS
#endif
}

static void
lk_ratio_chart_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  LkRatioChart *self = LK_RATIO_CHART (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  GdkRGBA fg;

  widget_color (widget, &fg);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  draw_chart (self, cr, width, height, &fg);
  cairo_destroy (cr);
}

static void
lk_ratio_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                        int *natural, int *minimum_baseline, int *natural_baseline)
{
  /* 240 high at least, not 300: with the race page's fields and buttons,
   * 300 makes the diagnostics window taller than the 640 pixels of half a
   * 1280 × 720 screen. 260 wide at least, so that it fits a 360-pixel
   * phone's window with the page's margins, and the plot between the
   * axis's labels and the interval's keeps a hundred pixels
   * (tests/test-ui-adaptive). */
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 260 : 240;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 720 : 440;
  /* A legend wrapped onto more rows takes them from above the panels, not
   * from the panels. */
  if (orientation == GTK_ORIENTATION_VERTICAL && for_size > 0)
    {
      double extra = extra_legend_rows (LK_RATIO_CHART (widget), for_size) * LEGEND_ROW;
      *minimum += extra;
      *natural += extra;
    }
}

/* Its height follows its width: the legend wraps. */
static GtkSizeRequestMode
lk_ratio_chart_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

/* What the chart shows, for a screen reader: its name says what is drawn,
 * its description the figures a sighted user reads off it. */
static void
describe (LkRatioChart *self)
{
  guint reps = lk_ratio_chart_get_n_points (self);
  /* Translators: the timing chart's accessible name, "B ÷ A time per
   * repetition" with the two arms' names */
  g_autofree char *label
      = g_strdup_printf (_ ("%s ÷ %s time per repetition"), self->b_label, self->a_label);
  g_autofree char *description = NULL;

  if (reps == 0)
    description = g_strdup (_ ("No repetitions yet"));
  else
    {
      double low, high, confidence;
      g_autofree char *interval
          = lk_paired_timing_median_interval (self->timing, &low, &high, &confidence)
                /* Translators: "; 96.5 % interval 0.98 to 1.07" */
                ? g_strdup_printf (_ ("; %.1f %% interval %.2f to %.2f"), 100.0 * confidence, low,
                                   high)
                : g_strdup ("");
      /* Translators: "12 repetitions; median ratio 1.04; A faster in 58 % of
       * them; 96.5 % interval 0.98 to 1.07" */
      description = g_strdup_printf (
          g_dngettext (GETTEXT_PACKAGE,
                       "%u repetition; median ratio %.2f; %s faster in %.0f %% of them%s",
                       "%u repetitions; median ratio %.2f; %s faster in %.0f %% of them%s", reps),
          reps, lk_paired_timing_median_ratio (self->timing), self->a_label,
          100.0 * lk_paired_timing_wins_fraction (self->timing), interval);
    }
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
}

static void
lk_ratio_chart_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkRatioChart *self = LK_RATIO_CHART (object);

  switch (prop_id)
    {
      case PROP_N_POINTS:
        g_value_set_uint (value, lk_ratio_chart_get_n_points (self));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_ratio_chart_finalize (GObject *object)
{
  LkRatioChart *self = LK_RATIO_CHART (object);

  g_clear_pointer (&self->timing, lk_paired_timing_free);
  g_free (self->a_label);
  g_free (self->b_label);
  g_free (self->placeholder);
  G_OBJECT_CLASS (lk_ratio_chart_parent_class)->finalize (object);
}

static void
lk_ratio_chart_class_init (LkRatioChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_ratio_chart_get_property;
  object_class->finalize = lk_ratio_chart_finalize;
  widget_class->snapshot = lk_ratio_chart_snapshot;
  widget_class->measure = lk_ratio_chart_measure;
  widget_class->get_request_mode = lk_ratio_chart_get_request_mode;

  properties[PROP_N_POINTS]
      = g_param_spec_uint ("n-points", NULL, NULL, 0, G_MAXUINT, 0,
                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_css_name (widget_class, "lk-ratio-chart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
lk_ratio_chart_init (LkRatioChart *self)
{
  self->a_label = g_strdup ("A");
  self->b_label = g_strdup ("B");
  self->placeholder = g_strdup (_ ("Press ▶ beside a cell, or Run All: each repetition lands here "
                                   "as a dot, B's time over A's"));
  self->interval_label_margin = -1;
  describe (self);
}

GtkWidget *
lk_ratio_chart_new (void)
{
  return g_object_new (LK_TYPE_RATIO_CHART, NULL);
}

static void
set_labels (LkRatioChart *self, const char *a_label, const char *b_label)
{
  g_free (self->a_label);
  g_free (self->b_label);
  self->a_label = g_strdup (a_label);
  self->b_label = g_strdup (b_label);
}

void
lk_ratio_chart_reset (LkRatioChart *self, const char *a_label, const char *b_label, guint reps)
{
  g_return_if_fail (LK_IS_RATIO_CHART (self));
  g_return_if_fail (reps > 0);

  gboolean had_points = lk_ratio_chart_get_n_points (self) > 0;
  g_clear_pointer (&self->timing, lk_paired_timing_free);
  self->timing = lk_paired_timing_new (reps, 1, 0, LK_CLOCK_CPU);
  set_labels (self, a_label, b_label);
  describe (self);
  /* Its labels may change how many rows the legend takes. */
  gtk_widget_queue_resize (GTK_WIDGET (self));
  if (had_points)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_POINTS]);
}

void
lk_ratio_chart_append (LkRatioChart *self, double a_ns, double b_ns, gboolean a_went_first)
{
  g_return_if_fail (LK_IS_RATIO_CHART (self));
  g_return_if_fail (self->timing != NULL);

  lk_paired_timing_append (self->timing, a_ns, b_ns, a_went_first);
  describe (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_POINTS]);
}

void
lk_ratio_chart_set_timing (LkRatioChart *self, const LkPairedTiming *timing, const char *a_label,
                           const char *b_label)
{
  g_return_if_fail (LK_IS_RATIO_CHART (self));
  g_return_if_fail (timing != NULL);

  g_clear_pointer (&self->timing, lk_paired_timing_free);
  self->timing = lk_paired_timing_copy (timing);
  set_labels (self, a_label, b_label);
  describe (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_POINTS]);
}

void
lk_ratio_chart_set_placeholder (LkRatioChart *self, const char *text)
{
  g_return_if_fail (LK_IS_RATIO_CHART (self));
  g_return_if_fail (text != NULL);

  if (g_strcmp0 (self->placeholder, text) == 0)
    return;
  g_free (self->placeholder);
  self->placeholder = g_strdup (text);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const char *
lk_ratio_chart_get_placeholder (LkRatioChart *self)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), NULL);

  return self->placeholder;
}

guint
lk_ratio_chart_get_n_points (LkRatioChart *self)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), 0);

  return self->timing != NULL ? self->timing->reps : 0;
}

const LkPairedTiming *
lk_ratio_chart_get_timing (LkRatioChart *self)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), NULL);

  return self->timing;
}

double
lk_ratio_chart_get_interval_label_margin (LkRatioChart *self)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), -1);

  return self->interval_label_margin;
}

LkThumbnail *
lk_ratio_chart_render (LkRatioChart *self, guint width, guint height, const char *caption,
                       GError **error)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), NULL);
  g_return_val_if_fail (width >= 1 && width <= LK_THUMBNAIL_MAX_SIDE, NULL);
  g_return_val_if_fail (height >= 1 && height <= LK_THUMBNAIL_MAX_SIDE, NULL);

  GdkRGBA fg;
  widget_color (GTK_WIDGET (self), &fg);
  gboolean dark = 0.2126 * fg.red + 0.7152 * fg.green + 0.0722 * fg.blue > 0.5;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);

  /* Adwaita's window background in each style. */
  if (dark)
    cairo_set_source_rgb (cr, 0x24 / 255.0, 0x24 / 255.0, 0x24 / 255.0);
  else
    cairo_set_source_rgb (cr, 0xfa / 255.0, 0xfa / 255.0, 0xfa / 255.0);
  cairo_paint (cr);
  /* A PNG travels without the window around it: the caption (gate, cell,
   * verdict, date) goes in a band above the chart. */
  double band = 0.0;
  if (caption != NULL && caption[0] != '\0')
    {
      band = CAPTION_BAND;
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, fg.alpha);
      draw_text (self, cr, caption, PAD_LEFT, band / 2 + 4, 0.0, 0.5, 1.15, NULL);
      cairo_translate (cr, 0, band);
    }
  draw_chart (self, cr, width, height - band, &fg);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _ ("Could not draw the chart at %u × %u: %s"), width, height,
                   cairo_status_to_string (cairo_surface_status (surface)));
      cairo_surface_destroy (surface);
      return NULL;
    }

  /* ARGB32 is premultiplied, native-endian 32-bit words; the PNG wants
   * straight RGBA bytes. */
  LkThumbnail *image = lk_thumbnail_new (width, height);
  const guint8 *data = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  for (guint y = 0; y < height; y++)
    {
      const guint32 *row = (const guint32 *) (data + (gsize) y * stride);
      guint8 *out = image->pixels + y * image->stride;
      for (guint x = 0; x < width; x++)
        {
          guint32 p = row[x];
          guint a = p >> 24;
          guint rgb[3] = { (p >> 16) & 0xff, (p >> 8) & 0xff, p & 0xff };
          for (int c = 0; c < 3; c++)
            out[4 * x + c] = a == 0 ? 0 : (guint8) MIN (255u, (rgb[c] * 255 + a / 2) / a);
          out[4 * x + 3] = (guint8) a;
        }
    }
  cairo_surface_destroy (surface);
  return image;
}

const LkRatioChartLayout *
lk_ratio_chart_get_layout (LkRatioChart *self)
{
  g_return_val_if_fail (LK_IS_RATIO_CHART (self), NULL);

  return self->has_layout ? &self->layout : NULL;
}
