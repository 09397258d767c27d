/* lk-thumbnail.c — PNG face thumbnails through libpng
 *
 * Why it is shaped this way:
 *
 * - Decoding works on a byte buffer (png_set_read_fn over memory), never on a
 *   FILE*: the same code path is what the fuzzer drives, and lk_thumbnail_load
 *   is only "check the size, read the file, decode". Files over
 *   LK_THUMBNAIL_MAX_FILE_SIZE are refused before they are read.
 * - The size limit is enforced by libpng itself (png_set_user_limits), so an
 *   IHDR claiming 100000 × 100000 pixels fails inside png_read_info, before
 *   this file allocates a single row. Only when libpng has accepted the header
 *   are the pixels allocated, once, as RGBA8 with libpng's transformations doing
 *   every conversion (palette, low bit depths, tRNS, gray, 16 bits, Adam7).
 *   16-bit samples go through png_set_scale_16 (rounds to nearest) rather than
 *   png_set_strip_16 (truncates): the tests check exact values.
 * - libpng reports errors by longjmp. The error handler records the message
 *   and jumps back into the one function that called setjmp; what that
 *   function allocates after setjmp lives in `volatile` locals, what the
 *   callbacks change lives on the heap, and both are freed on both paths.
 *   libpng's own memory belongs to its structs and goes with
 *   png_destroy_*_struct. The reader reports running off the end of the buffer
 *   as truncation, so "truncated" and "corrupt" get different messages.
 * - Every ancillary chunk but tRNS is skipped unread (no colour management
 *   here). Fuzzing found why that matters: libpng allocates the length a zTXt
 *   claims (2 GB for a 300-byte file) before reading it, because its "chunk
 *   data is too large" check only warns on read.
 * - Decompression bombs: the pixels bound what inflating them yields, but
 *   png_read_end inflates the rest of the zlib stream to its end, so the
 *   compressed bytes read after the last row are counted and bounded
 *   (LK_THUMBNAIL_MAX_TRAILING_BYTES).
 * - CRC, zlib and Adler-32 checks are libpng's: a critical chunk with a bad
 *   CRC is an error, an ancillary one is dropped with a warning (libpng's
 *   default). Warnings go to g_debug, never to stderr.
 * - Face crops, which the importers write by the thousand, have their rows
 *   filtered and compressed by libdeflate when the build has it
 *   (FACE_DEFLATE_LEVEL says why); libpng still writes the file around that
 *   data, and everything else goes through libpng and zlib.
 */
#include "config.h"

#include "lk-thumbnail.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <string.h>
#include <zlib.h>
#ifdef LK_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <glib/gstdio.h>

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-thumbnail-error-quark, lk_thumbnail_error)
/* clang-format on */

#define PNG_SIGNATURE_BYTES 8

/* lk_thumbnail_encode_opaque's filter, zlib level and strategy, for the
 * sample's photos (plain rows and pasted faces): Z_RLE costs 6 % more disk
 * than the default strategy for about a third less CPU (make-sample; figures
 * in docs/benchmarks.md); Sub, Up or level 1 are a third larger or worse. */
#define PHOTO_FILTER       PNG_FILTER_PAETH
#define PHOTO_LEVEL        6
#define PHOTO_STRATEGY     Z_RLE
/* lk_thumbnail_encode_face's filter (its level and strategy are the
 * photos'): Up, not Paeth. Libpng's Paeth filter is scalar on write: on
 * 128 px face crops Up saves 17 % of the encoding for 11 % more disk
 * (bench-import-immich; docs/benchmarks.md). */
#define FACE_FILTER        PNG_FILTER_UP
/* With libdeflate (LK_HAVE_LIBDEFLATE), a face crop's rows are filtered
 * here (Up, as above) and compressed by libdeflate at this level as one
 * zlib stream, which libpng writes as the PNG's one IDAT chunk. Level 1 is
 * both faster (about a third of zlib's time) and smaller than zlib's level
 * 6; level 2's 5 % of disk would cost 70 % more time, and Up stays the
 * filter under it too (Paeth: 5 % smaller for 1.5× the time). Figures:
 * docs/benchmarks.md, bench-import-immich. */
#define FACE_DEFLATE_LEVEL 1

/* What the libpng callbacks share with the function that called setjmp. */
typedef struct
{
  const char *name;
  const guint8 *data;
  gsize length;
  gsize offset;
  /* Set when libpng asked for bytes past the end of the buffer. */
  gboolean truncated;
  gsize wanted;
  /* After the last row: where the image's compressed data (its IDAT chunks)
   * ends, how much of it libpng has read since, and whether that went past
   * LK_THUMBNAIL_MAX_TRAILING_BYTES. */
  gboolean reading_rows;
  gboolean interlaced;
  guint32 height;
  gboolean rows_done;
  gsize idat_end;
  gsize trailing;
  gboolean bomb;
  char message[256];
} DecodeState;

/* Compressed bytes libpng may read after the last row. png_read_end inflates
 * whatever the zlib stream still holds, to its end: a 4 MB thumbnail
 * whose rows were followed, in the same stream, by gigabytes of zeros cost 9 s
 * of CPU (≈140 s at the 64 MiB file limit) and was then shown. A real encoder
 * ends its stream a few bytes after the last row (the end of the last block
 * and the Adler-32), so 4 KiB is generous; with libpng's own read-ahead of at
 * most 8 KiB (PNG_IDAT_READ_SIZE) and deflate's 1032:1 ceiling, at most
 * 12.4 MB are inflated after the last row, a few milliseconds. */
#define LK_THUMBNAIL_MAX_TRAILING_BYTES 4096

static void
on_png_error (png_structp png, png_const_charp message)
{
  DecodeState *state = png_get_error_ptr (png);

  g_strlcpy (state->message, message, sizeof state->message);
  png_longjmp (png, 1);
}

static void
on_png_warning (png_structp png, png_const_charp message)
{
  DecodeState *state = png_get_error_ptr (png);

  g_debug ("%s: libpng warning: %s", state->name, message);
}

/* Where the last IDAT chunk ends (its CRC included), walking the chunks from
 * the signature; the buffer's length when the chunks do not add up (libpng
 * refuses such a file anyway). */
static gsize
find_idat_end (const DecodeState *state)
{
  gsize end = state->length;
  gsize pos = PNG_SIGNATURE_BYTES;

  while (state->length - pos >= 12)
    {
      guint32 length = png_get_uint_32 (state->data + pos);
      if (length > state->length - pos - 12)
        return state->length;
      gsize next = pos + 12 + length;
      if (memcmp (state->data + pos + 4, "IDAT", 4) == 0)
        end = next;
      if (memcmp (state->data + pos + 4, "IEND", 4) == 0)
        break;
      pos = next;
    }
  return end;
}

static void
on_png_read (png_structp png, png_bytep out, size_t count)
{
  DecodeState *state = png_get_io_ptr (png);

  if (count > state->length - state->offset)
    {
      state->truncated = TRUE;
      state->wanted = count;
      png_error (png, "unexpected end of data");
    }
  /* libpng inflates the rest of the stream inside png_read_image, as soon as
   * the last row is in (png_read_finish_row calls png_read_finish_IDAT), so
   * the end of the rows is recognised here, from libpng's own counters. */
  if (state->reading_rows && !state->rows_done
      && (png_get_current_pass_number (png) >= 7
          || (!state->interlaced && png_get_current_row_number (png) >= state->height)))
    {
      state->rows_done = TRUE;
      state->idat_end = find_idat_end (state);
    }
  if (state->rows_done && state->offset < state->idat_end)
    {
      state->trailing += MIN (count, state->idat_end - state->offset);
      if (state->trailing > LK_THUMBNAIL_MAX_TRAILING_BYTES)
        {
          state->bomb = TRUE;
          png_error (png, "compressed data goes on after the last row");
        }
    }
  memcpy (out, state->data + state->offset, count);
  state->offset += count;
}

/* Called after libpng refused the file: a header over the size limit gets a
 * message with its dimensions. libpng only reads IHDR as the first chunk, so
 * when it refused an IHDR that is where the numbers are. */
static gboolean
header_too_large (const DecodeState *state, guint32 *width, guint32 *height)
{
  const guint8 *ihdr = state->data + PNG_SIGNATURE_BYTES;

  if (state->length < PNG_SIGNATURE_BYTES + 16 || memcmp (ihdr + 4, "IHDR", 4) != 0)
    return FALSE;
  *width = png_get_uint_32 (ihdr + 8);
  *height = png_get_uint_32 (ihdr + 12);
  return *width > LK_THUMBNAIL_MAX_SIDE || *height > LK_THUMBNAIL_MAX_SIDE;
}

static void
set_decode_error (const DecodeState *state, GError **error)
{
  guint32 width, height;

  if (state->bomb)
    g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_CORRUPT,
                 "%s is a corrupt PNG: its compressed pixels go on for more than %d bytes after "
                 "the last row (a decompression bomb?)",
                 state->name, LK_THUMBNAIL_MAX_TRAILING_BYTES);
  else if (header_too_large (state, &width, &height))
    g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_TOO_LARGE,
                 "%s is %" G_GUINT32_FORMAT " × %" G_GUINT32_FORMAT
                 " pixels; a thumbnail may be at most %d × %d",
                 state->name, width, height, LK_THUMBNAIL_MAX_SIDE, LK_THUMBNAIL_MAX_SIDE);
  else if (state->truncated)
    g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_CORRUPT,
                 "%s is truncated: it ends after %" G_GSIZE_FORMAT
                 " bytes but the PNG data needs %" G_GSIZE_FORMAT " more",
                 state->name, state->length, state->offset + state->wanted - state->length);
  else
    g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_CORRUPT,
                 "%s is a corrupt PNG: %s (at byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ")",
                 state->name, state->message, state->offset, state->length);
}

static gboolean
check_signature (const guint8 *data, gsize length, const char *name, GError **error)
{
  if (length == 0)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_NOT_PNG,
                   "%s is empty, not a PNG image", name);
      return FALSE;
    }
  if (png_sig_cmp (data, 0, MIN (length, PNG_SIGNATURE_BYTES)) != 0)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_NOT_PNG,
                   "%s is not a PNG image (it does not start with the PNG signature)", name);
      return FALSE;
    }
  if (length < PNG_SIGNATURE_BYTES)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_CORRUPT,
                   "%s is truncated: it ends after %" G_GSIZE_FORMAT
                   " bytes, inside the PNG signature",
                   name, length);
      return FALSE;
    }
  return TRUE;
}

/* Asks libpng for RGBA8 whatever the file holds. */
static void
request_rgba8 (png_structp png, png_infop info)
{
  png_byte color_type = png_get_color_type (png, info);

  png_set_expand (png);
  png_set_scale_16 (png);
  if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb (png);
  if (!(color_type & PNG_COLOR_MASK_ALPHA) && !png_get_valid (png, info, PNG_INFO_tRNS))
    png_set_add_alpha (png, 0xff, PNG_FILLER_AFTER);
  png_set_interlace_handling (png);
  png_read_update_info (png, info);
}

LkThumbnail *
lk_thumbnail_new (guint width, guint height)
{
  g_return_val_if_fail (width >= 1 && width <= LK_THUMBNAIL_MAX_SIDE, NULL);
  g_return_val_if_fail (height >= 1 && height <= LK_THUMBNAIL_MAX_SIDE, NULL);

  LkThumbnail *thumbnail = g_new0 (LkThumbnail, 1);
  thumbnail->width = width;
  thumbnail->height = height;
  thumbnail->stride = (gsize) width * 4;
  thumbnail->pixels = g_malloc0 (thumbnail->stride * height);
  return thumbnail;
}

void
lk_thumbnail_free (LkThumbnail *thumbnail)
{
  if (thumbnail == NULL)
    return;
  g_free (thumbnail->pixels);
  g_free (thumbnail);
}

LkThumbnail *
lk_thumbnail_decode (const guint8 *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_signature (data, length, name, error))
    return NULL;

  /* On the heap, like everything the longjmp path reads: the callbacks change
   * it between setjmp and longjmp, which a non-volatile local must not be. */
  DecodeState *state = g_new0 (DecodeState, 1);
  state->name = name;
  state->data = data;
  state->length = length;
  state->offset = PNG_SIGNATURE_BYTES;
  png_structp png
      = png_create_read_struct (PNG_LIBPNG_VER_STRING, state, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  if (info == NULL)
    {
      png_destroy_read_struct (&png, NULL, NULL);
      g_free (state);
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO,
                   "%s: out of memory starting libpng", name);
      return NULL;
    }

  /* Assigned after setjmp and needed after a longjmp: volatile. */
  LkThumbnail *volatile thumbnail = NULL;
  png_bytep *volatile rows = NULL;

  if (setjmp (png_jmpbuf (png)))
    {
      set_decode_error (state, error);
      g_free (rows);
      lk_thumbnail_free (thumbnail);
      png_destroy_read_struct (&png, &info, NULL);
      g_free (state);
      return NULL;
    }

  png_set_read_fn (png, state, on_png_read);
  png_set_sig_bytes (png, PNG_SIGNATURE_BYTES);
  png_set_user_limits (png, LK_THUMBNAIL_MAX_SIDE, LK_THUMBNAIL_MAX_SIDE);
  /* Skip every ancillary chunk but tRNS unread: nothing else changes the
   * pixels we produce, and libpng would otherwise allocate whatever length a
   * text or profile chunk claims (its "chunk data is too large" check is only
   * a warning when reading) and inflate compressed text. */
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
  png_read_info (png, info);
  request_rgba8 (png, info);

  png_uint_32 width = png_get_image_width (png, info);
  png_uint_32 height = png_get_image_height (png, info);
  if (png_get_bit_depth (png, info) != 8 || png_get_channels (png, info) != 4)
    png_error (png, "libpng could not convert the pixels to RGBA8");

  thumbnail = lk_thumbnail_new (width, height);
  rows = g_new (png_bytep, height);
  for (png_uint_32 y = 0; y < height; y++)
    rows[y] = thumbnail->pixels + y * thumbnail->stride;
  /* What inflating after the last row may cost is bounded: on_png_read. */
  state->interlaced = png_get_interlace_type (png, info) != PNG_INTERLACE_NONE;
  state->height = height;
  state->reading_rows = TRUE;
  png_read_image (png, rows);
  /* Reads through IEND, so a file cut anywhere after the pixels is refused
   * too. */
  png_read_end (png, NULL);

  LkThumbnail *result = thumbnail;
  g_free (rows);
  png_destroy_read_struct (&png, &info, NULL);
  g_free (state);
  return result;
}

LkThumbnail *
lk_thumbnail_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  GStatBuf st;
  if (g_stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_THUMBNAIL_ERROR,
                   saved == ENOENT ? LK_THUMBNAIL_ERROR_MISSING : LK_THUMBNAIL_ERROR_IO,
                   "Cannot read thumbnail %s: %s", path, g_strerror (saved));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO,
                   "Cannot read thumbnail %s: not a regular file", path);
      return NULL;
    }
  if ((guint64) st.st_size > LK_THUMBNAIL_MAX_FILE_SIZE)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_TOO_LARGE,
                   "%s is %" G_GUINT64_FORMAT
                   " bytes; a thumbnail file may be at most %" G_GSIZE_FORMAT " bytes",
                   path, (guint64) st.st_size, LK_THUMBNAIL_MAX_FILE_SIZE);
      return NULL;
    }

  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr (GError) local_error = NULL;
  if (!g_file_get_contents (path, &contents, &length, &local_error))
    {
      g_set_error (error, LK_THUMBNAIL_ERROR,
                   g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
                       ? LK_THUMBNAIL_ERROR_MISSING
                       : LK_THUMBNAIL_ERROR_IO,
                   "Cannot read thumbnail %s: %s", path, local_error->message);
      return NULL;
    }
  /* The file may have grown between the stat and the read. */
  if (length > LK_THUMBNAIL_MAX_FILE_SIZE)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_TOO_LARGE,
                   "%s is %" G_GSIZE_FORMAT
                   " bytes; a thumbnail file may be at most %" G_GSIZE_FORMAT " bytes",
                   path, length, LK_THUMBNAIL_MAX_FILE_SIZE);
      return NULL;
    }
  return lk_thumbnail_decode ((const guint8 *) contents, length, path, error);
}

typedef struct
{
  GByteArray *bytes;
  char message[256];
  /* The image data compressed before libpng starts (encode_face_deflated),
   * or NULL when libpng compresses the rows itself. */
  guint8 *idat;
  gsize idat_length;
} EncodeState;

static void
encode_state_free (EncodeState *state)
{
  g_byte_array_unref (state->bytes);
  g_free (state->idat);
  g_free (state);
}

#ifdef LK_HAVE_LIBDEFLATE
/* A face crop's PNG image data: every row RGB (the fourth byte of RGBA
 * rows dropped) behind its filter byte, Up for every row but the first
 * (nothing above it: None, the same bytes), compressed by libdeflate into
 * one zlib stream. Returns it, or NULL when libdeflate cannot get memory. */
static guint8 *
encode_face_deflated (const guint8 *pixels, gsize stride, guint width, guint height, guint channels,
                      gsize *length, GError **error)
{
  gsize row = (gsize) width * 3;
  gsize filtered_length = (row + 1) * height;
  g_autofree guint8 *filtered = g_malloc (filtered_length);
  guint8 *out = filtered;
  for (guint y = 0; y < height; y++)
    {
      const guint8 *line = pixels + y * stride;
      *out++ = y == 0 ? 0 : 2;
      if (y == 0)
        for (guint x = 0; x < width; x++)
          memcpy (out + x * 3, line + x * channels, 3);
      else
        {
          const guint8 *above = line - stride;
          if (channels == 3)
            for (gsize k = 0; k < row; k++)
              out[k] = (guint8) (line[k] - above[k]);
          else
            for (guint x = 0; x < width; x++)
              for (guint c = 0; c < 3; c++)
                out[x * 3 + c] = (guint8) (line[x * 4 + c] - above[x * 4 + c]);
        }
      out += row;
    }

  struct libdeflate_compressor *compressor = libdeflate_alloc_compressor (FACE_DEFLATE_LEVEL);
  if (compressor == NULL)
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO,
                   "Cannot encode a %u × %u thumbnail: out of memory starting libdeflate", width,
                   height);
      return NULL;
    }
  gsize bound = libdeflate_zlib_compress_bound (compressor, filtered_length);
  guint8 *compressed = g_malloc (bound);
  *length = libdeflate_zlib_compress (compressor, filtered, filtered_length, compressed, bound);
  libdeflate_free_compressor (compressor);
  /* Zero only when the output does not fit, which the bound rules out. */
  g_assert (*length > 0);
  return compressed;
}
#endif

static void
on_png_write_error (png_structp png, png_const_charp message)
{
  EncodeState *state = png_get_error_ptr (png);

  g_strlcpy (state->message, message, sizeof state->message);
  png_longjmp (png, 1);
}

static void
on_png_write_warning (png_structp png, png_const_charp message)
{
  g_debug ("encoding a thumbnail: libpng warning: %s", message);
}

static void
on_png_write (png_structp png, png_bytep data, size_t count)
{
  EncodeState *state = png_get_io_ptr (png);

  g_byte_array_append (state->bytes, data, count);
}

static void
on_png_flush (png_structp png)
{
}

/* `filter`: 0 for RGBA with libpng's default filters and strategy, else an
 * RGB PNG with that filter, PHOTO_LEVEL and PHOTO_STRATEGY; FACE_FILTER
 * with libdeflate has its data compressed by encode_face_deflated instead.
 * The rows are RGBA (`channels` 4; the fourth byte dropped when opaque) or
 * RGB (3, for an opaque PNG only). */
static GBytes *
encode (const guint8 *pixels, gsize stride, guint width, guint height, guint channels, int filter,
        GError **error)
{
  gboolean opaque = filter != 0;
  g_return_val_if_fail (pixels != NULL, NULL);
  g_return_val_if_fail (channels == 4 || (channels == 3 && opaque), NULL);
  g_return_val_if_fail (stride >= (gsize) width * channels, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* On the heap and complete before setjmp: the error callback writes into it.
   * Sized for a face crop's PNG at once (128 px RGB: 21 KB on average on
   * bench-import-immich, 49 KB of rows), not grown by reallocations. */
  EncodeState *state = g_new0 (EncodeState, 1);
  state->bytes = g_byte_array_sized_new (MIN ((gsize) width * height * 3 / 2, 1u << 20));
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, state, on_png_write_error,
                                             on_png_write_warning);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  if (info == NULL)
    {
      png_destroy_write_struct (&png, NULL);
      encode_state_free (state);
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO,
                   "Cannot encode a thumbnail: out of memory starting libpng");
      return NULL;
    }

#ifdef LK_HAVE_LIBDEFLATE
  if (filter == FACE_FILTER)
    {
      state->idat = encode_face_deflated (pixels, stride, width, height, channels,
                                          &state->idat_length, error);
      if (state->idat == NULL)
        {
          png_destroy_write_struct (&png, &info);
          encode_state_free (state);
          return NULL;
        }
    }
#endif

  /* Assigned after setjmp and needed after a longjmp: volatile. */
  png_bytep *volatile rows = NULL;

  if (setjmp (png_jmpbuf (png)))
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO,
                   "Cannot encode a %u × %u thumbnail: %s", width, height, state->message);
      g_free (rows);
      png_destroy_write_struct (&png, &info);
      encode_state_free (state);
      return NULL;
    }

  png_set_write_fn (png, state, on_png_write, on_png_flush);
  png_set_IHDR (png, info, width, height, 8, opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA,
                PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (opaque)
    {
      /* PHOTO_FILTER, FACE_FILTER and PHOTO_LEVEL: see above. */
      png_set_filter (png, PNG_FILTER_TYPE_BASE, filter);
      png_set_compression_level (png, PHOTO_LEVEL);
      png_set_compression_strategy (png, PHOTO_STRATEGY);
    }
  png_write_info (png, info);
  if (state->idat != NULL)
    {
      /* The image data as one chunk and the end, written by libpng (with
       * their CRCs) as it writes any chunk it is handed. */
      png_write_chunk (png, (png_const_bytep) "IDAT", state->idat, state->idat_length);
      png_write_chunk (png, (png_const_bytep) "IEND", NULL, 0);
    }
  else
    {
      if (opaque && channels == 4)
        png_set_filler (png, 0, PNG_FILLER_AFTER); /* on write: drops the fourth byte */
      rows = g_new (png_bytep, height);
      for (guint y = 0; y < height; y++)
        rows[y] = (png_bytep) pixels + y * stride;
      png_write_image (png, rows);
      png_write_end (png, NULL);
    }

  g_free (rows);
  png_destroy_write_struct (&png, &info);
  GBytes *bytes = g_byte_array_free_to_bytes (state->bytes);
  g_free (state->idat);
  g_free (state);
  return bytes;
}

static GBytes *
encode_thumbnail (const LkThumbnail *thumbnail, int filter, GError **error)
{
  g_return_val_if_fail (thumbnail != NULL, NULL);
  g_return_val_if_fail (thumbnail->stride == (gsize) thumbnail->width * 4, NULL);
  return encode (thumbnail->pixels, thumbnail->stride, thumbnail->width, thumbnail->height, 4,
                 filter, error);
}

GBytes *
lk_thumbnail_encode (const LkThumbnail *thumbnail, GError **error)
{
  return encode_thumbnail (thumbnail, 0, error);
}

GBytes *
lk_thumbnail_encode_opaque (const LkThumbnail *thumbnail, GError **error)
{
  return encode_thumbnail (thumbnail, PHOTO_FILTER, error);
}

GBytes *
lk_thumbnail_encode_face (const LkThumbnail *thumbnail, GError **error)
{
  return encode_thumbnail (thumbnail, FACE_FILTER, error);
}

GBytes *
lk_thumbnail_encode_face_rgb (const guint8 *rgb, gsize stride, guint width, guint height,
                              GError **error)
{
  g_return_val_if_fail (width >= 1 && width <= LK_THUMBNAIL_MAX_SIDE, NULL);
  g_return_val_if_fail (height >= 1 && height <= LK_THUMBNAIL_MAX_SIDE, NULL);
  return encode (rgb, stride, width, height, 3, FACE_FILTER, error);
}

gboolean
lk_thumbnail_save (const LkThumbnail *thumbnail, const char *path, GError **error)
{
  g_return_val_if_fail (thumbnail != NULL, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_autoptr (GBytes) bytes = lk_thumbnail_encode (thumbnail, error);
  if (bytes == NULL)
    return FALSE;

  gsize length;
  const guint8 *data = g_bytes_get_data (bytes, &length);
  g_autoptr (GError) local_error = NULL;
  if (!g_file_set_contents_full (path, (const char *) data, length, G_FILE_SET_CONTENTS_CONSISTENT,
                                 0644, &local_error))
    {
      g_set_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO, "Cannot save thumbnail %s: %s",
                   path, local_error->message);
      return FALSE;
    }
  return TRUE;
}
