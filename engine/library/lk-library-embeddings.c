/* lk-library-embeddings.c — embeddings.f32 read, its rows checked and normalised
 *
 * The rows are read (pread, never mapped: a mapped file truncated by another
 * process kills a scan with SIGBUS) into one 64-byte aligned buffer, after
 * the size is checked; then every row's norm is checked (one pass, sums of
 * squares in double so that no float32 value can overflow them, and a row's
 * sum is finite exactly when all its values are) and, under `normalized:
 * false`, the buffer is normalised in place: one copy of the rows, whatever
 * the manifest says. Reading into fresh memory is mostly page faults inside
 * read(2); MADV_HUGEPAGE made it slower (the kernel compacting memory) and
 * MADV_POPULATE_WRITE saved nothing, so neither is used. Reading peaks no
 * higher than mapping (a mapping's touched pages are resident too); a
 * streamed load peaks about 1.1× the rows (docs/benchmarks.md, bench-library
 * --load). */
#include "config.h"

#include "lk-library-private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <unistd.h>

/* How far a row's L2 norm may be from 1 under `normalized: true`: loose enough
 * for float32 rows written by any tool (their error is ~1e-7), tight enough
 * that a dot product is a cosine to three digits. */
#define NORM_TOLERANCE 1e-3
/* A streamed load's rows are read PACE_PIECE at a time and may exceed the
 * manifest text given back by PACE_SLACK (lk-library-manifest.c, "Streaming"). */
#define PACE_PIECE     ((gsize) 4 << 20)
#define PACE_SLACK     ((gsize) 1 << 20)

/* ── Embeddings ──────────────────────────────────────────────────────────── */

static double
sum_of_squares (const float *row, guint dim)
{
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  guint j = 0;

  for (; j + 4 <= dim; j += 4)
    {
      s0 += (double) row[j] * row[j];
      s1 += (double) row[j + 1] * row[j + 1];
      s2 += (double) row[j + 2] * row[j + 2];
      s3 += (double) row[j + 3] * row[j + 3];
    }
  for (; j < dim; j++)
    s0 += (double) row[j] * row[j];
  return (s0 + s1) + (s2 + s3);
}

/* Checks every row; normalises them when `writable` (the rows' own memory). */
static gboolean
check_rows (Loader *loader, const float *rows, float *writable, GError **error)
{
  LkLibrary *library = loader->library;
  const double low = (1 - NORM_TOLERANCE) * (1 - NORM_TOLERANCE);
  const double high = (1 + NORM_TOLERANCE) * (1 + NORM_TOLERANCE);
  guint dim = library->dim;

  for (gsize i = 0; i < library->count; i++)
    {
      const float *row = rows + i * dim;
      double sum = sum_of_squares (row, dim);

      if (G_LIKELY (writable == NULL && sum >= low && sum <= high))
        continue;
      if (G_UNLIKELY (!isfinite (sum)))
        for (guint j = 0; j < dim; j++)
          if (!isfinite (row[j]))
            return lk_library_fail (error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
                                    "face %" G_GSIZE_FORMAT
                                    " has %s at value %u of %u (row %" G_GSIZE_FORMAT
                                    ", byte offset %" G_GSIZE_FORMAT ")",
                                    i, isnan (row[j]) ? "NaN" : "an infinity", j, dim, i,
                                    (i * dim + j) * sizeof (float));
      if (G_UNLIKELY (sum == 0))
        return lk_library_fail (
            error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
            "face %" G_GSIZE_FORMAT " is a row of %u zeros, which has no direction", i, dim);
      if (writable == NULL)
        {
          g_autofree char *norm = g_strdup_printf ("%.6g", sqrt (sum));
          return lk_library_fail (error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
                                  "face %" G_GSIZE_FORMAT " has norm %s, but library.json says "
                                  "“normalized”: true, which needs every row within %g of 1",
                                  i, norm, NORM_TOLERANCE);
        }
      double scale = 1 / sqrt (sum);
      float *out = writable + i * dim;
      for (guint j = 0; j < dim; j++)
        out[j] = (float) (row[j] * scale);
    }
  return TRUE;
}

static gboolean
size_mismatch (LkLibrary *library, guint64 have, gsize need, GError **error)
{
  g_autofree char *have_text = lk_library_group_digits (have);
  g_autofree char *need_text = lk_library_group_digits (need);
  g_autofree char *count_text = lk_library_group_digits (library->count);
  g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_EMBEDDINGS,
               "%s holds %s bytes; %s faces of %u floats need %s", library->embeddings_path,
               have_text, count_text, library->dim, need_text);
  return FALSE;
}

/* What a file of mode `mode` is, when it is not a regular file. */
static const char *
kind_of (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a folder";
  if (S_ISFIFO (mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "a device";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

/* Opens `path` for reading only if it is a regular file, with its size in
 * `*size`; else -1 and a G_FILE_ERROR naming what it is. open(2) of a FIFO
 * waits for a writer forever (a FIFO as library.json would hang the load),
 * and mmap of a folder or a device failed with "Invalid argument": so the path
 * is checked before it is opened (a device is never opened), and the open
 * file again (O_NONBLOCK, so that a FIFO swapped in between cannot block). */
static gboolean
errno_error (GError **error, const char *path, int saved)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "“%s”: %s", path,
               g_strerror (saved));
  return FALSE;
}

int
lk_library_open_regular (const char *path, goffset *size, GError **error)
{
  GStatBuf st;
  int fd = -1;

  if (g_stat (path, &st) != 0)
    return errno_error (error, path, errno), -1;
  if (S_ISREG (st.st_mode))
    {
      /* O_NONBLOCK changes nothing for a regular file's reads. */
      fd = g_open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
      if (fd < 0)
        return errno_error (error, path, errno), -1;
      if (fstat (fd, &st) != 0)
        {
          int saved = errno;
          close (fd);
          return errno_error (error, path, saved), -1;
        }
    }
  if (!S_ISREG (st.st_mode))
    {
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "“%s” is %s, not a file", path,
                   kind_of (st.st_mode));
      return -1;
    }
  *size = st.st_size;
  return fd;
}

/* Reads bytes [0, need) of `fd` into `buffer` with pread(2), and checks that
 * nothing follows them. Never a mapping: a mapped file truncated by another
 * process raises SIGBUS at the next touch of a page past its new end, which
 * would kill a scan running on mapped rows, and a signal handler cannot
 * tell whose mapping faulted. Chunks of 1 GiB: Linux returns at most 2 GiB - 4
 * KiB per call. */
ReadResult
lk_library_read_whole (int fd, void *buffer, gsize need, gsize *got, Pacer *pacer)
{
  *got = 0;
  while (*got < need)
    {
      gsize piece = MIN (need - *got, pacer != NULL ? PACE_PIECE : (gsize) 1 << 30);
      if (pacer != NULL)
        {
          /* Rows read and manifest text left: at most the rows and the slack. */
          g_mutex_lock (&pacer->lock);
          while (pacer->manifest_left > 0
                 && *got + piece + pacer->manifest_left > need + PACE_SLACK)
            g_cond_wait (&pacer->cond, &pacer->lock);
          g_mutex_unlock (&pacer->lock);
        }
      gssize n = pread (fd, (char *) buffer + *got, piece, (off_t) *got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return READ_FAILED;
      if (n == 0)
        return READ_SHRANK;
      *got += (gsize) n;
    }
  char extra;
  gssize n;
  do
    n = pread (fd, &extra, 1, (off_t) need);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return READ_FAILED;
  return n > 0 ? READ_GREW : READ_OK;
}

/* The rows, read into one buffer of their own (64-byte aligned, a cache line
 * and an AVX-512 register), then checked, and normalised in place when the
 * manifest says `normalized: false`. Not mapped in place even when normalised
 * on disk: a mapping dies of SIGBUS when the file is truncated under it (see
 * lk_library_read_whole), and the copy costs what the mapping cost in memory
 * — one copy of the rows, the page cache's pages not counted — plus the read
 * itself: 0.09 s of CPU at 50,000 × 512, on the rows' own thread while the
 * main thread walks the faces. */
gboolean
lk_library_read_embeddings (Loader *loader, gsize need, GError **error)
{
  LkLibrary *library = loader->library;
  g_autoptr (GError) local = NULL;
  goffset size;
  gsize got = 0;

  /* The size first, so that a wrong file is not read whole. */
  int fd = lk_library_open_regular (library->embeddings_path, &size, &local);
  if (fd < 0)
    return lk_library_fail (error, LK_LIBRARY_ERROR_IO, loader->manifest, "embeddings.file: %s",
                            local->message);
  if (size < 0 || (guint64) size != need)
    {
      close (fd);
      return size_mismatch (library, (guint64) size, need, error);
    }
  library->owned = g_aligned_alloc (1, MAX (need, 1), 64);
  ReadResult result = lk_library_read_whole (fd, library->owned, need, &got, loader->pacer);
  int saved = errno;
  close (fd);
  switch (result)
    {
      case READ_OK:
        break;
      case READ_FAILED:
        return lk_library_fail (error, LK_LIBRARY_ERROR_IO, loader->manifest,
                                "embeddings.file: “%s”: %s", library->embeddings_path,
                                g_strerror (saved));
      case READ_SHRANK:
      case READ_GREW:
        {
          g_autofree char *got_text = lk_library_group_digits (got);
          g_autofree char *need_text = lk_library_group_digits (need);
          g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_EMBEDDINGS,
                       "%s changed while it was read: %s (after %s bytes of the %s it held when "
                       "opened); load the library again once whatever writes it has finished",
                       library->embeddings_path,
                       result == READ_SHRANK ? "it ended early" : "it grew", got_text, need_text);
          return FALSE;
        }
    }
#if G_BYTE_ORDER == G_BIG_ENDIAN
  guint32 *words = (guint32 *) library->owned;
  for (gsize k = 0; k < need / sizeof (float); k++)
    words[k] = GUINT32_FROM_LE (words[k]);
#endif
  library->embeddings = library->owned;
  return check_rows (loader, library->owned, library->normalized_on_disk ? NULL : library->owned,
                     error);
}
