/* lk-scan.h — the exact all-pairs scan
 *
 * Every pair (i, j), i < j, of LIBRARY-FORMAT.md's pair model: different
 * photos, at least one gallery face, calibrated probability >= the bar. The
 * same pairs as the naive double loop, in (i, j) order, for every kernel and
 * thread count. Memory O(edges).
 */
#pragma once

#include <gio/gio.h>

#include "library/lk-library.h"
#include "lk-pair.h"

G_BEGIN_DECLS

/* What the scan reads about each face: bare arrays, so it is testable on
 * vectors that never came from a library. */
typedef struct
{
  const float *embeddings; /* n × dim, unit rows */
  gsize n;
  guint dim;
  const float *crop_px;  /* n */
  const guint64 *photo;  /* n */
  const guint8 *gallery; /* n; non-zero for gallery faces */
} LkFaces;

typedef enum
{
  LK_KERNEL_AUTO = 0,
  LK_KERNEL_PORTABLE,
  LK_KERNEL_AVX2,
  LK_KERNEL_AVX512,
  LK_KERNEL_NEON,
} LkKernelId;

/* The low-precision first pass (lk-prefilter.h): a pair whose bfloat16 (or
 * int16) cosine is below the bar by more than a proven error bound is
 * rejected without a float32 dot; every other pair is decided in float32 by
 * the kernel, so the answer is the same pairs, bit for bit. */
typedef enum
{
  LK_PREFILTER_AUTO = 0, /* with kernel AUTO: the measured choice (lk-tune.h); with a
                          * forced kernel: bf16 where the CPU has AVX-512 BF16, else off */
  LK_PREFILTER_OFF,
  LK_PREFILTER_BF16,           /* the native AVX-512 BF16 pass; an error where it cannot run */
  LK_PREFILTER_BF16_PORTABLE,  /* the same pass in portable C, bit for bit: slow, for tests */
  LK_PREFILTER_INT16,          /* rows quantised to int16, exact integer dots with AVX2 */
  LK_PREFILTER_INT16_PORTABLE, /* the same integers in portable C: for tests */
  LK_PREFILTER_INT8,           /* rows quantised to int8 with a scale per row, exact integer
                                * dots with vpdpbusd (AVX-512 VNNI) */
  LK_PREFILTER_INT8_PORTABLE,  /* the same integers and epilogue in portable C: for tests */
  LK_PREFILTER_INT8_AVXVNNI,   /* the int8 pass with AVX-VNNI's ymm vpdpbusd (no AVX-512) */
  LK_PREFILTER_INT7,           /* rows quantised to ±LK_PREFILTER_INT7_M, a scale per row, exact
                                * integer dots with AVX2's vpmaddubsw (int16 partial sums) */
  LK_PREFILTER_INT7_PORTABLE,  /* the same integers and epilogue in portable C: for tests */
  LK_PREFILTER_INT8_AMX,       /* the int8 pass on Intel AMX tiles (TDPBUSD): never run on
                                * silicon by this project, whose CPU has no AMX */
} LkPrefilterId;

/* Called with a monotone fraction of the work done in [0, 1], weighted by
 * pairs, never concurrently with itself and at most ~30 times a second; the
 * last call is exactly 1.0 on success. May be called from a worker thread. */
typedef void (*LkProgressFunc) (double fraction, gpointer user_data);

typedef struct
{
  /* AUTO with prefilter AUTO: the pair measured fastest here (lk-tune.h);
   * AUTO with a forced prefilter: the widest kernel this CPU runs. */
  LkKernelId kernel;
  guint threads; /* 0: one per core (one thread below LK_SCAN_THREADS_ABOVE faces) */
  LkProgressFunc progress;
  gpointer progress_data;
  /* Run the workers at a lower CPU priority (Linux: nice +10 per worker
   * thread), for a scan behind a window; see lk-scan.c. */
  gboolean background;
  /* Columns per tile; 0: the default (LK_SCAN_COLUMN_TILE). faces->n walks
   * whole rows, which is the untiled scan the timing gates race against. */
  gsize column_tile;
  /* Skip the cheap cosine rejection and check every pair exactly (same answer,
   * slower): for the timing gates and for tests of the rejection itself. */
  gboolean no_prefilter;
  /* The bfloat16 first pass above the kernel (not the cosine rejection
   * above: with no_prefilter there is no bar for it to work against). */
  LkPrefilterId prefilter;
  /* With row_range, only the pairs (i, j) with row_begin <= i < row_end
   * (and j > i, up to the last face): one shard of the scan. Shards that
   * cover [0, n) concatenate, in order, into exactly the full scan's pairs
   * — the same pairs, bit for bit, in the same order — because every
   * cosine is the canonical one wherever its pair sits, and every shard
   * decides with the bar of the whole library's crops. */
  gboolean row_range;
  gsize row_begin;
  gsize row_end;
  /* Only the pairs (i, j) with j >= column_begin (0: every pair): with the
   * faces a re-scan adds placed after the ones it keeps, exactly the pairs
   * that involve an added face (lk-scan-cache.h). Rows below it compare with
   * columns from it on, rows from it on with every column after them. */
  gsize column_begin;
  /* Stop with LK_SCAN_ERROR_TOO_MANY_PAIRS past this many pairs; 0: the
   * default budget, lk_scan_pair_budget (faces->n). */
  guint64 max_pairs;
  /* With a first pass: rows per block whose survivors are re-checked
   * together (at most LK_SCAN_DEFERRED_BLOCK), and survivors gathered before
   * a re-check; 0: the defaults (lk-scan.c, scan_block_deferred), which
   * gather only on scans large enough to gain from it. For the tests, which
   * cannot afford such a scan under valgrind; LK_SCAN_DEFERRED_NEVER re-checks
   * a tile at a time whatever the size, for bench-scan's comparison. */
  gsize deferred_rows;
  gsize deferred_hits;
} LkScanOptions;

/* The pair budget: a scan that finds more pairs than this stops with
 * LK_SCAN_ERROR_TOO_MANY_PAIRS naming the calibration, rather than fill the
 * memory (a calibration with a flipped sign made every pair a candidate,
 * 49 M pairs for 10,000 faces, 3.5 GB in `people`). Why these
 * numbers: lk-scan.c. */
#define LK_SCAN_PAIRS_PER_FACE 1000
#define LK_SCAN_PAIRS_FLOOR    ((guint64) 1 << 24)

/* max (LK_SCAN_PAIRS_PER_FACE × n, LK_SCAN_PAIRS_FLOOR). */
guint64 lk_scan_pair_budget (gsize n);

/* A pair whose cosine lies within this of its own bar's cosine is counted in
 * LkScanResult.near_boundary: float rounding (of the canonical order every
 * kernel shares, lk-dot-canonical.h) may put it on the other side of the
 * exact answer. */
#define LK_SCAN_NEAR_BOUNDARY  1e-5
/* Rows handed to a thread at a time, columns per tile, and the size below
 * which an automatic thread count is one: see lk-scan.c for what each trades. */
#define LK_SCAN_BLOCK          256
#define LK_SCAN_COLUMN_TILE    64
#define LK_SCAN_THREADS_ABOVE  2048
/* With a first pass, rows handed out at a time on a large scan, and the
 * survivors a thread gathers before it re-checks them (lk-scan.c,
 * scan_block_deferred). */
#define LK_SCAN_DEFERRED_BLOCK 512
#define LK_SCAN_DEFERRED_HITS  65536
#define LK_SCAN_DEFERRED_NEVER G_MAXSIZE

typedef struct
{
  GArray *pairs;         /* of LkPair, ordered by (i, j) */
  guint64 near_boundary; /* pairs the photo and gallery rules allow, returned or rejected,
                          * whose cos lies within LK_SCAN_NEAR_BOUNDARY of their bar */
  GArray *near_pairs;    /* those near_boundary pairs, of LkPair (probability: the pair's,
                          * above or below the bar), ordered by (i, j): few (443 of
                          * 16.8 million at 100,000 faces); a re-scan keeps them */
  const char *kernel;    /* name of the kernel that ran */
  const char *prefilter; /* the first pass that ran: "off", "bf16-avx512", "int16-avx2", … */
  guint threads;         /* threads that ran */
  const char *choice;    /* why this kernel and first pass (lk-tune.h); interned */
  double seconds;        /* wall time of the scan itself */
  gsize deferred_rows;   /* rows whose survivors were re-checked together (lk-scan.c,
                          * scan_block_deferred); 0: a tile at a time */
  gsize reused_faces;    /* faces whose pairs with each other came from the kept scan
                          * (lk-scan-cache.h); 0 for a scan that computed every pair */
} LkScanResult;

#define LK_SCAN_ERROR (lk_scan_error_quark ())
GQuark lk_scan_error_quark (void);

typedef enum
{
  LK_SCAN_ERROR_INVALID,
  LK_SCAN_ERROR_TOO_MANY_PAIRS, /* more pairs than LkScanOptions.max_pairs */
} LkScanError;

void lk_faces_from_library (LkFaces *faces, const LkLibrary *library);

/* The pair model: sigmoid (a·cos + b + w_size·log2 (min_crop)). The scan
 * decides every pair with exactly this function, so a reference loop that
 * calls it gets the same answer for the same cosine. */
double lk_scan_probability (const LkCalibration *calibration, double cos, double min_crop);

/* The lowest cosine at which any pair of these crop sizes could reach
 * min_probability, or -INFINITY (prune nothing) when there is no such bound:
 * a <= 0, min_probability outside (0, 1), a non-finite parameter or crop, or
 * no crops at all. */
double lk_scan_loosest_cosine (const float *crop_px, gsize n, const LkCalibration *calibration,
                               double min_probability);

/* Returns NULL with G_IO_ERROR_CANCELLED (and no partial list) when cancelled. */
LkScanResult *lk_scan (const LkFaces *faces, const LkCalibration *calibration,
                       double min_probability, const LkScanOptions *options,
                       GCancellable *cancellable, GError **error);
void lk_scan_result_free (LkScanResult *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkScanResult, lk_scan_result_free)

G_END_DECLS
