/* lk-scan.h — the exact all-pairs scan
 *
 * Every pair (i, j), i < j, of LIBRARY-FORMAT.md's pair model: different
 * photos, at least one gallery face, calibrated probability >= the bar. The
 * same pairs as the naive double loop, in (i, j) order, for every kernel and
 * thread count. Memory O(edges).
 */
#pragma once

#include <gio/gio.h>

#include "lk-library.h"

G_BEGIN_DECLS

/* One face pair that clears the bar. i < j always. */
typedef struct
{
  guint32 i;
  guint32 j;
  float probability;
} LkPair;

/* What the scan reads about each face: bare arrays, so it is testable on
 * vectors that never came from a library. */
typedef struct
{
  const float *embeddings;  /* n × dim, unit rows */
  gsize n;
  guint dim;
  const float *crop_px;     /* n */
  const guint64 *photo;     /* n */
  const guint8 *gallery;    /* n; non-zero for gallery faces */
} LkFaces;

typedef enum
{
  LK_KERNEL_AUTO = 0,
  LK_KERNEL_PORTABLE,
  LK_KERNEL_AVX2,
  LK_KERNEL_AVX512,
  LK_KERNEL_NEON,
} LkKernelId;

/* Called with a monotone fraction of the work done in [0, 1], weighted by
 * pairs, never concurrently with itself and at most ~30 times a second; the
 * last call is exactly 1.0 on success. May be called from a worker thread. */
typedef void (*LkProgressFunc) (double fraction, gpointer user_data);

typedef struct
{
  LkKernelId kernel;        /* AUTO: the widest this CPU runs */
  guint threads;            /* 0: one per core */
  LkProgressFunc progress;
  gpointer progress_data;
} LkScanOptions;

typedef struct
{
  GArray *pairs;            /* of LkPair, ordered by (i, j) */
  guint64 near_boundary;    /* pairs returned or rejected with cos within 1e-5 of their bar */
  const char *kernel;       /* name of the kernel that ran */
  guint threads;            /* threads that ran */
  double seconds;           /* wall time of the scan itself */
} LkScanResult;

#define LK_SCAN_ERROR (lk_scan_error_quark ())
GQuark lk_scan_error_quark (void);

typedef enum
{
  LK_SCAN_ERROR_UNSUPPORTED_KERNEL,
  LK_SCAN_ERROR_INVALID,
} LkScanError;

void          lk_faces_from_library  (LkFaces             *faces,
                                      const LkLibrary     *library);

/* Returns NULL with G_IO_ERROR_CANCELLED (and no partial list) when cancelled. */
LkScanResult *lk_scan                (const LkFaces       *faces,
                                      const LkCalibration *calibration,
                                      double               min_probability,
                                      const LkScanOptions *options,
                                      GCancellable        *cancellable,
                                      GError             **error);
void          lk_scan_result_free    (LkScanResult        *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkScanResult, lk_scan_result_free)

G_END_DECLS
