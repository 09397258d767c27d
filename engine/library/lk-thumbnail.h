/* lk-thumbnail.h — PNG face thumbnails through libpng
 *
 * Decoding turns any PNG colour type and bit depth into RGBA8 and refuses
 * anything larger than LK_THUMBNAIL_MAX_SIDE on a side, truncated or corrupt,
 * with a message naming the file. Encoding writes RGBA8. libpng's longjmp error
 * path is contained in lk-thumbnail.c; nothing leaks on any error.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LK_THUMBNAIL_ERROR (lk_thumbnail_error_quark ())
GQuark lk_thumbnail_error_quark (void);

typedef enum
{
  LK_THUMBNAIL_ERROR_IO,
  LK_THUMBNAIL_ERROR_NOT_PNG,
  LK_THUMBNAIL_ERROR_CORRUPT,
  LK_THUMBNAIL_ERROR_TOO_LARGE,
  /* The file does not exist: not an error for a library (placeholder shown). */
  LK_THUMBNAIL_ERROR_MISSING,
} LkThumbnailError;

#define LK_THUMBNAIL_MAX_SIDE      1024
/* Files larger than this are refused before being read. A 1024 × 1024 RGBA
 * 16-bit PNG stored without compression is about 8.4 MiB, so this leaves room
 * for any real thumbnail plus metadata while bounding what one bad file costs. */
#define LK_THUMBNAIL_MAX_FILE_SIZE ((gsize) 64 << 20)

/* An RGBA8 image, rows `stride` bytes apart (stride == width * 4). */
typedef struct
{
  guint width;
  guint height;
  gsize stride;
  guint8 *pixels;
} LkThumbnail;

/* Zero-filled; width and height must be 1 … LK_THUMBNAIL_MAX_SIDE. */
LkThumbnail *lk_thumbnail_new (guint width, guint height);
void lk_thumbnail_free (LkThumbnail *thumbnail);

/* `name` is used in error messages only (a path, or "<memory>"). */
LkThumbnail *lk_thumbnail_decode (const guint8 *data, gsize length, const char *name,
                                  GError **error);
LkThumbnail *lk_thumbnail_load (const char *path, GError **error);
GBytes *lk_thumbnail_encode (const LkThumbnail *thumbnail, GError **error);
/* An image whose alpha is 255 everywhere, as an RGB PNG (the sample's photos). */
GBytes *lk_thumbnail_encode_opaque (const LkThumbnail *thumbnail, GError **error);
/* The same for a face cropped from a photo (an importer's thumbnail): a
 * faster filter for these, at a little more disk (lk-thumbnail.c). */
GBytes *lk_thumbnail_encode_face (const LkThumbnail *thumbnail, GError **error);
/* The same PNG from RGB rows (a GdkPixbuf's without alpha: `stride` bytes
 * apart), without the copy into an LkThumbnail: the importers' crops. */
GBytes *lk_thumbnail_encode_face_rgb (const guint8 *rgb, gsize stride, guint width, guint height,
                                      GError **error);
/* Writes atomically (temporary file, then rename). */
gboolean lk_thumbnail_save (const LkThumbnail *thumbnail, const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkThumbnail, lk_thumbnail_free)

G_END_DECLS
