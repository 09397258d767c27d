/* fuzz-thumbnail — lk_thumbnail_decode on arbitrary bytes
 *
 * Anything may be refused, nothing may crash or leak. What is accepted must be
 * a sane RGBA8 image within the size limit, and must survive an encode/decode
 * round trip unchanged, so the encoder is exercised with every shape the
 * decoder can produce.
 */
#include "config.h"

#include <string.h>

#include "library/lk-thumbnail.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  GError *error = NULL;
  LkThumbnail *thumbnail = lk_thumbnail_decode (data, size, "fuzz.png", &error);

  if (thumbnail == NULL)
    {
      g_assert_nonnull (error);
      g_assert_true (error->domain == LK_THUMBNAIL_ERROR);
      g_assert_true (g_str_has_prefix (error->message, "fuzz.png "));
      g_error_free (error);
      return 0;
    }

  g_assert_null (error);
  g_assert_cmpuint (thumbnail->width, >=, 1);
  g_assert_cmpuint (thumbnail->width, <=, LK_THUMBNAIL_MAX_SIDE);
  g_assert_cmpuint (thumbnail->height, >=, 1);
  g_assert_cmpuint (thumbnail->height, <=, LK_THUMBNAIL_MAX_SIDE);
  g_assert_cmpuint (thumbnail->stride, ==, (gsize) thumbnail->width * 4);

  GBytes *png = lk_thumbnail_encode (thumbnail, &error);
  g_assert_no_error (error);
  gsize length;
  const guint8 *bytes = g_bytes_get_data (png, &length);
  LkThumbnail *again = lk_thumbnail_decode (bytes, length, "fuzz.png", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (again->width, ==, thumbnail->width);
  g_assert_cmpuint (again->height, ==, thumbnail->height);
  g_assert_true (memcmp (again->pixels, thumbnail->pixels, thumbnail->stride * thumbnail->height)
                 == 0);

  lk_thumbnail_free (again);
  g_bytes_unref (png);
  lk_thumbnail_free (thumbnail);
  return 0;
}
