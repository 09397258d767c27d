/* lk-calibrate-private.h — what the calibration's files (lk-calibrate*.c) share
 *
 * The public face of the calibration is lk-calibrate.h; this header is for its
 * own files only: the core with the entry points (lk-calibrate.c), the fit
 * (lk-calibrate-fit.c), the pairs it is fitted on (lk-calibrate-samples.c) and
 * the estimate (lk-calibrate-estimate.c).
 */
#pragma once

#include "lk-calibrate.h"
#include "scan/lk-kernels.h"

G_BEGIN_DECLS

typedef struct
{
  const LkLibrary *library;
  LkDotFunc dot;
  GRand *rand;
  guint64 seed;
  double held_out;
  const guint8 *mask; /* faces that may be drawn, or NULL: all */
  double allowed;     /* pairs the scan could return among the masked faces */
  double level;       /* the estimate's: the median cosine of random pairs */
} Context;

/* Which pairs are two people (labels, decisions); NULL: any. */
typedef gboolean (*NegativeFunc) (gpointer data, gsize i, gsize j);

typedef struct
{
  guint32 i, j;
  double cos;
} Near;

/* lk-calibrate-fit.c */
G_GNUC_INTERNAL LkCalibrationFit *lk_calibrate_fit (const LkCalibrationSample *samples, gsize n,
                                                    gboolean allow_size, const LkCalibration *start,
                                                    double min_probability, double median_crop,
                                                    GError **error);

/* lk-calibrate-samples.c */
G_GNUC_INTERNAL gboolean lk_calibrate_allowed (const LkLibrary *l, gsize i, gsize j);
G_GNUC_INTERNAL double lk_calibrate_cos_of (const Context *c, gsize i, gsize j);
G_GNUC_INTERNAL double lk_calibrate_count_allowed (const LkLibrary *l, const guint8 *mask);
G_GNUC_INTERNAL gboolean lk_calibrate_draw_pair (Context *c, gsize *i, gsize *j);
G_GNUC_INTERNAL void lk_calibrate_add_sample (GArray *out, const Context *c, gsize i, gsize j,
                                              double cos, double y, double weight);
G_GNUC_INTERNAL int lk_calibrate_compare_desc (gconstpointer x, gconstpointer y);
G_GNUC_INTERNAL GArray *lk_calibrate_sample_cosines (Context *c, NegativeFunc is_negative,
                                                     gpointer data, GError **error);
G_GNUC_INTERNAL GArray *lk_calibrate_pairs_above (Context *c, double bar, GCancellable *cancellable,
                                                  GError **error);
G_GNUC_INTERNAL double lk_calibrate_median_crop (const LkLibrary *l);
G_GNUC_INTERNAL gboolean lk_calibrate_add_negatives_below (GArray *out, Context *c, double bar,
                                                           double negatives, gsize draws,
                                                           NegativeFunc is_negative, gpointer data,
                                                           GError **error);
G_GNUC_INTERNAL GArray *lk_calibrate_samples_from_groups (
    Context *c, const LkCalibrateOptions *o, guint32 *label_id, guint n_labels, guint32 *unsure,
    const guint32 *same, const guint8 *mask, const GArray *near, double near_bar, gsize max_near,
    GArray **near_out, double *bar_out, GCancellable *cancellable, GError **error);
G_GNUC_INTERNAL GArray *lk_calibrate_samples_from_labels (Context *c, const LkCalibrateOptions *o,
                                                          GArray **near, double *bar,
                                                          GCancellable *cancellable,
                                                          GError **error);
G_GNUC_INTERNAL GArray *lk_calibrate_samples_from_decisions (Context *c, const GPtrArray *pins,
                                                             const LkCalibrateOptions *o,
                                                             GCancellable *cancellable,
                                                             GError **error);

/* lk-calibrate-estimate.c */
G_GNUC_INTERNAL void lk_calibrate_read_shape (const double *cosines, gsize m, double *mu_out,
                                              double *sigma_out, double *shoulder_out,
                                              double *q75_out, double *q95_out);
G_GNUC_INTERNAL gboolean lk_calibrate_choose_bar (const LkLibrary *l, const GArray *near,
                                                  double near_bar, LkCalibrationFit *f,
                                                  GError **error);
G_GNUC_INTERNAL LkCalibrationFit *lk_calibrate_estimate (Context *c, const LkCalibrateOptions *o,
                                                         GCancellable *cancellable, GError **error);

G_END_DECLS
