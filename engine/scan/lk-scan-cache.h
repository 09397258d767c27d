/* lk-scan-cache.h — the last scan kept in the user's cache, and the re-scan
 * that reuses it
 *
 * A re-import grows a library of n faces to n + m: the pairs among the n it
 * keeps are the ones the last scan found, so only the (n + m)·m pairs that
 * involve an added face need computing. The last scan's pairs are kept under
 * g_get_user_cache_dir ()/likeness/scans/ (never in the library folder), with
 * everything they were computed from: each face's stable key
 * (lk_library_face_keys) and a hash of all a pair's answer reads about the
 * face (its embedding row's bits, its crop, photo and gallery flag), the
 * dimension, the calibration and the bar. A re-scan reuses them only when
 * all of that matches for every face it keeps; faces that are gone drop their
 * pairs. Anything else — another calibration or bar, a kept face whose row,
 * crop, photo or gallery flag changed, a file that is short, corrupt or of
 * another version — is a full scan, never an error. The answer is the full
 * scan's, pair for pair and bit for bit, near-boundary pairs included: every
 * pair's cosine is the canonical one wherever the pair sits (lk-scan.h).
 */
#pragma once

#include "library/lk-library.h"
#include "lk-scan.h"

G_BEGIN_DECLS

/* What a lk_scan_cached() did. */
typedef struct
{
  gboolean reused; /* the kept faces' pairs came from the cache */
  gsize kept;      /* faces whose pairs were reused */
  gsize added;     /* faces scanned against every face */
  gsize removed;   /* faces of the cached scan the library no longer has */
  char *why_full;  /* when !reused: why the scan was a full one */
  gboolean saved;  /* the result was written to the cache */
  /* The faces the result is of, as the kept scan knows them: a hash of the
   * dimension and of every face's key and content hash, in library order.
   * What else is kept for these faces (the questions' links) is kept under
   * it: equal, it is the same faces, rows and all, in the same order. */
  guint64 faces;
} LkScanReuse;

void lk_scan_reuse_clear (LkScanReuse *reuse);

/* Where the scan of the library in `folder` (an absolute path) is kept:
 * g_get_user_cache_dir ()/likeness/scans/ and a hash of the folder's path. */
char *lk_scan_cache_path (const char *folder);

/* The kept scan's checksum of `bytes` bytes (zeros pad the last word): for a
 * file kept beside it, which is damaged when it does not match. */
guint64 lk_scan_cache_checksum (const void *data, gsize bytes);

/* The scan of `library` (lk_scan, with `options`' kernel, threads, progress
 * and background; no row range or column_begin), reusing the scan kept at
 * `cache_path` where it can, and keeping the result there for the next one
 * (written to a temporary file and renamed; a failure to write is not an
 * error, only `reuse->saved` FALSE). `reuse` may be NULL. */
LkScanResult *lk_scan_cached (const LkLibrary *library, const LkCalibration *calibration,
                              double min_probability, const LkScanOptions *options,
                              const char *cache_path, LkScanReuse *reuse, GCancellable *cancellable,
                              GError **error);

G_END_DECLS
