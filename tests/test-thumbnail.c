/* test-thumbnail — every PNG layout decodes to exact RGBA8; bad files are refused
 *
 * The fixtures are written here with libpng's own writer (any colour type,
 * bit depth, tRNS, Adam7), so each test states its input samples and the exact
 * RGBA8 pixels they must become. Bad input is refused with an error naming the
 * file, never a crash: the truncation test cuts a PNG at every length, each
 * time into a buffer of exactly that size, so an over-read is caught by ASan.
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <png.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <glib/gstdio.h>

#include "library/lk-thumbnail.h"

#define NAME "thumbs/000012.png"

/* A PNG to write: samples[y * width * channels + x * channels + c], each at
 * most (1 << bit_depth) - 1; palette indices for PNG_COLOR_TYPE_PALETTE. */
typedef struct
{
  guint width;
  guint height;
  int color_type;
  int bit_depth;
  int interlace;
  const guint16 *samples;
  const png_color *palette;
  int n_palette;
  const png_byte *trans_alpha;
  int n_trans;
  const png_color_16 *trans_color;
  /* Only the signature and IHDR: for headers no decoder may act on. */
  gboolean header_only;
  /* Text and gamma chunks, which must not change the pixels. */
  gboolean ancillary;
} Fixture;

static void
on_fixture_write (png_structp png, png_bytep data, size_t count)
{
  g_byte_array_append (png_get_io_ptr (png), data, count);
}

static void
on_fixture_flush (png_structp png)
{
}

static int
channels_of (int color_type)
{
  switch (color_type)
    {
      case PNG_COLOR_TYPE_GRAY:
      case PNG_COLOR_TYPE_PALETTE:
        return 1;
      case PNG_COLOR_TYPE_GRAY_ALPHA:
        return 2;
      case PNG_COLOR_TYPE_RGB:
        return 3;
      default:
        return 4;
    }
}

/* Packs samples into PNG row bytes: big-endian, most significant bits first. */
static guint8 *
pack_rows (const Fixture *f, gsize *row_bytes)
{
  int channels = channels_of (f->color_type);
  gsize bits_per_row = (gsize) f->width * channels * f->bit_depth;
  *row_bytes = (bits_per_row + 7) / 8;
  guint8 *packed = g_malloc0 (*row_bytes * f->height);

  for (guint y = 0; y < f->height; y++)
    {
      guint8 *row = packed + y * *row_bytes;
      for (gsize i = 0; i < (gsize) f->width * channels; i++)
        {
          guint16 v = f->samples[y * f->width * channels + i];
          g_assert_cmpuint (v, <, 1u << f->bit_depth);
          if (f->bit_depth == 16)
            {
              row[2 * i] = v >> 8;
              row[2 * i + 1] = v & 0xff;
            }
          else if (f->bit_depth == 8)
            row[i] = v;
          else
            {
              gsize bit = i * f->bit_depth;
              row[bit / 8] |= v << (8 - f->bit_depth - bit % 8);
            }
        }
    }
  return packed;
}

static GBytes *
write_fixture (const Fixture *f)
{
  GByteArray *out = g_byte_array_new ();
  gsize row_bytes = 0;
  guint8 *volatile packed = f->header_only ? NULL : pack_rows (f, &row_bytes);
  png_bytep *rows = g_new0 (png_bytep, f->header_only ? 1 : f->height);
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);

  if (setjmp (png_jmpbuf (png)))
    g_error ("libpng could not write a test fixture");

  png_set_user_limits (png, 0x7fffffff, 0x7fffffff);
  png_set_write_fn (png, out, on_fixture_write, on_fixture_flush);
  png_set_IHDR (png, info, f->width, f->height, f->bit_depth, f->color_type, f->interlace,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (f->palette != NULL)
    png_set_PLTE (png, info, f->palette, f->n_palette);
  if (f->trans_alpha != NULL || f->trans_color != NULL)
    png_set_tRNS (png, info, f->trans_alpha, f->n_trans, f->trans_color);
  if (f->ancillary)
    {
      png_text text[] = {
        { .compression = PNG_TEXT_COMPRESSION_NONE, .key = "Comment", .text = "a face" },
        { .compression = PNG_TEXT_COMPRESSION_zTXt, .key = "Title", .text = "p0007" },
      };
      png_set_text (png, info, text, G_N_ELEMENTS (text));
      png_set_gAMA (png, info, 1.0);
    }
  png_write_info (png, info);
  if (!f->header_only)
    {
      for (guint y = 0; y < f->height; y++)
        rows[y] = packed + y * row_bytes;
      png_write_image (png, rows);
      png_write_end (png, NULL);
    }
  png_destroy_write_struct (&png, &info);
  g_free (rows);
  g_free (packed);
  return g_byte_array_free_to_bytes (out);
}

static LkThumbnail *
decode_bytes (GBytes *bytes, GError **error)
{
  gsize length;
  const guint8 *data = g_bytes_get_data (bytes, &length);
  return lk_thumbnail_decode (data, length, NAME, error);
}

static void
assert_decodes_to (const Fixture *f, const guint8 *expected_rgba)
{
  g_autoptr (GBytes) png = write_fixture (f);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) t = decode_bytes (png, &error);

  g_assert_no_error (error);
  g_assert_nonnull (t);
  g_assert_cmpuint (t->width, ==, f->width);
  g_assert_cmpuint (t->height, ==, f->height);
  g_assert_cmpuint (t->stride, ==, (gsize) f->width * 4);
  g_assert_cmpmem (t->pixels, t->stride * t->height, expected_rgba,
                   (gsize) f->width * f->height * 4);
}

/* The exact 16 → 8 bit conversion: round to nearest. */
static guint8
scale16 (guint16 v)
{
  return (guint8) (((guint32) v * 255 + 32767) / 65535);
}

static void
assert_refused (GBytes *bytes, int code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) t = decode_bytes (bytes, &error);

  g_assert_null (t);
  g_assert_error (error, LK_THUMBNAIL_ERROR, code);
  g_assert_true (g_str_has_prefix (error->message, NAME));
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not mention “%s”", error->message, needle);
}

static LkThumbnail *
pattern_thumbnail (guint width, guint height)
{
  LkThumbnail *t = lk_thumbnail_new (width, height);
  for (guint y = 0; y < height; y++)
    for (guint x = 0; x < width * 4; x++)
      t->pixels[y * t->stride + x] = (guint8) (x * 7 + y * 13 + (x % 4) * 61);
  return t;
}

static void
test_round_trip_is_exact (void)
{
  g_autoptr (LkThumbnail) t = pattern_thumbnail (37, 23);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) png = lk_thumbnail_encode (t, &error);
  g_assert_no_error (error);

  g_autoptr (LkThumbnail) back = decode_bytes (png, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->width, ==, 37);
  g_assert_cmpuint (back->height, ==, 23);
  g_assert_cmpmem (back->pixels, back->stride * back->height, t->pixels, t->stride * t->height);
}

/* Photos and face crops are written as RGB PNGs with their own filters:
 * both give back the pixels, alpha 255, and a file without an alpha channel
 * (colour type 2 in the IHDR). */
static void
test_opaque_and_face_round_trip_as_rgb (void)
{
  g_autoptr (LkThumbnail) t = pattern_thumbnail (37, 23);
  for (gsize k = 0; k < t->stride * t->height; k += 4)
    t->pixels[k + 3] = 255;
  GBytes *(*encoders[]) (const LkThumbnail *, GError **)
      = { lk_thumbnail_encode_opaque, lk_thumbnail_encode_face };
  for (gsize e = 0; e < G_N_ELEMENTS (encoders); e++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GBytes) png = encoders[e](t, &error);
      g_assert_no_error (error);
      gsize length = 0;
      const guint8 *data = g_bytes_get_data (png, &length);
      g_assert_cmpuint (length, >, 8 + 8 + 13);
      g_assert_cmpmem (data + 12, 4, "IHDR", 4);
      g_assert_cmpuint (data[8 + 8 + 9], ==, 2); /* RGB */
      g_autoptr (LkThumbnail) back = decode_bytes (png, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (back->width, ==, 37);
      g_assert_cmpmem (back->pixels, back->stride * back->height, t->pixels, t->stride * t->height);
    }
}

/* A face crop from RGB rows (a GdkPixbuf's, rows padded past the pixels)
 * is the very PNG lk_thumbnail_encode_face writes from the same pixels as
 * RGBA: the importers encode their crops this way. */
static void
test_face_from_rgb_rows_is_the_same_png (void)
{
  g_autoptr (LkThumbnail) t = pattern_thumbnail (37, 23);
  for (gsize k = 0; k < t->stride * t->height; k += 4)
    t->pixels[k + 3] = 255;
  gsize stride = 37 * 3 + 5;
  g_autofree guint8 *rgb = g_malloc0 (stride * 23);
  for (guint y = 0; y < 23; y++)
    for (guint x = 0; x < 37; x++)
      memcpy (rgb + y * stride + x * 3, t->pixels + y * t->stride + x * 4, 3);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) from_rgba = lk_thumbnail_encode_face (t, &error);
  g_assert_no_error (error);
  g_autoptr (GBytes) from_rgb = lk_thumbnail_encode_face_rgb (rgb, stride, 37, 23, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (from_rgb, from_rgba));
  g_autoptr (LkThumbnail) back = decode_bytes (from_rgb, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (back->pixels, back->stride * back->height, t->pixels, t->stride * t->height);
}

/* Face crops of every shape, random pixels (nothing for a filter to
 * predict), from RGBA and from padded RGB rows: the PNG gives back every
 * pixel and ends with PNG's IEND chunk. With libdeflate the rows are
 * filtered and compressed outside libpng (lk-thumbnail.c,
 * encode_face_deflated): a wrong filter byte, a row off by one or a
 * missing end fails here. */
static void
test_face_png_round_trips_every_shape (void)
{
  static const guint shapes[][2] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 3, 200 }, { 128, 128 } };
  static const guint8 iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    {
      guint width = shapes[s][0], height = shapes[s][1];
      g_autoptr (LkThumbnail) t = lk_thumbnail_new (width, height);
      gsize stride = width * 3 + 7;
      g_autofree guint8 *rgb = g_malloc0 (stride * height);
      for (guint y = 0; y < height; y++)
        for (guint x = 0; x < width; x++)
          for (guint c = 0; c < 4; c++)
            {
              guint8 v = c == 3 ? 255 : (guint8) g_test_rand_int_range (0, 256);
              t->pixels[y * t->stride + x * 4 + c] = v;
              if (c < 3)
                rgb[y * stride + x * 3 + c] = v;
            }
      g_autoptr (GError) error = NULL;
      g_autoptr (GBytes) from_rgba = lk_thumbnail_encode_face (t, &error);
      g_assert_no_error (error);
      g_autoptr (GBytes) from_rgb
          = lk_thumbnail_encode_face_rgb (rgb, stride, width, height, &error);
      g_assert_no_error (error);
      GBytes *pngs[] = { from_rgba, from_rgb };
      for (gsize k = 0; k < G_N_ELEMENTS (pngs); k++)
        {
          gsize length = 0;
          const guint8 *data = g_bytes_get_data (pngs[k], &length);
          g_assert_cmpuint (length, >, sizeof iend);
          g_assert_cmpmem (data + length - sizeof iend, sizeof iend, iend, sizeof iend);
          g_autoptr (LkThumbnail) back = decode_bytes (pngs[k], &error);
          g_assert_no_error (error);
          g_assert_cmpuint (back->width, ==, width);
          g_assert_cmpuint (back->height, ==, height);
          g_assert_cmpmem (back->pixels, back->stride * back->height, t->pixels,
                           t->stride * t->height);
        }
    }
}

static void
test_save_is_atomic_and_loads_back (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-thumbnail-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "face.png", NULL);
  g_autoptr (LkThumbnail) first = pattern_thumbnail (16, 9);
  g_autoptr (LkThumbnail) second = pattern_thumbnail (96, 96);

  g_assert_true (lk_thumbnail_save (first, path, &error));
  g_assert_no_error (error);
  g_assert_true (lk_thumbnail_save (second, path, &error));
  g_assert_no_error (error);

  g_autoptr (LkThumbnail) back = lk_thumbnail_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->width, ==, 96);
  g_assert_cmpmem (back->pixels, back->stride * back->height, second->pixels,
                   second->stride * second->height);

  /* Only the file itself: no temporary left behind. */
  g_autoptr (GDir) listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (g_dir_read_name (listing), ==, "face.png");
  g_assert_null (g_dir_read_name (listing));

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_save_into_missing_folder_fails (void)
{
  g_autoptr (LkThumbnail) t = pattern_thumbnail (4, 4);
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_thumbnail_save (t, "/nonexistent-likeness-dir/face.png", &error));
  g_assert_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent-likeness-dir/face.png"));
}

static void
test_palette_with_trns (void)
{
  static const png_color palette[] = {
    { 255, 0, 0 },
    { 0, 255, 0 },
    { 0, 0, 255 },
    { 12, 34, 56 },
  };
  static const png_byte trans[] = { 0, 128 };
  static const guint16 samples[] = { 0, 1, 2, 3, 3, 2, 1, 0 };
  static const guint8 expected[] = {
    255, 0,  0,  0,   0, 255, 0,   128, 0, 0,   255, 255, 12,  34, 56, 255,
    12,  34, 56, 255, 0, 0,   255, 255, 0, 255, 0,   128, 255, 0,  0,  0,
  };
  Fixture f = { .width = 4,
                .height = 2,
                .color_type = PNG_COLOR_TYPE_PALETTE,
                .bit_depth = 8,
                .samples = samples,
                .palette = palette,
                .n_palette = 4,
                .trans_alpha = trans,
                .n_trans = 2 };
  assert_decodes_to (&f, expected);
}

static void
test_palette_low_bit_depths (void)
{
  static const png_color palette[] = {
    { 1, 2, 3 },
    { 40, 50, 60 },
    { 200, 100, 0 },
    { 7, 8, 9 },
  };
  for (int depth = 1; depth <= 4; depth *= 2)
    {
      guint width = 11; /* not a whole number of bytes at any depth */
      g_autofree guint16 *samples = g_new (guint16, width);
      g_autofree guint8 *expected = g_new (guint8, width * 4);
      for (guint x = 0; x < width; x++)
        {
          samples[x] = (x * 3) % (depth == 1 ? 2 : 4);
          const png_color *c = &palette[samples[x]];
          guint8 px[4] = { c->red, c->green, c->blue, 255 };
          memcpy (expected + x * 4, px, 4);
        }
      Fixture f = { .width = width,
                    .height = 1,
                    .color_type = PNG_COLOR_TYPE_PALETTE,
                    .bit_depth = depth,
                    .samples = samples,
                    .palette = palette,
                    .n_palette = depth == 1 ? 2 : 4 };
      assert_decodes_to (&f, expected);
    }
}

static void
test_gray_every_bit_depth (void)
{
  for (int depth = 1; depth <= 8; depth *= 2)
    {
      guint width = 1u << depth; /* every value once */
      guint max = width - 1;
      g_autofree guint16 *samples = g_new (guint16, width);
      g_autofree guint8 *expected = g_new (guint8, width * 4);
      for (guint x = 0; x < width; x++)
        {
          samples[x] = x;
          guint8 v = (guint8) (x * 255 / max);
          guint8 px[4] = { v, v, v, 255 };
          memcpy (expected + x * 4, px, 4);
        }
      Fixture f = { .width = width,
                    .height = 1,
                    .color_type = PNG_COLOR_TYPE_GRAY,
                    .bit_depth = depth,
                    .samples = samples };
      assert_decodes_to (&f, expected);
    }
}

static void
test_gray_16_rounds_every_value (void)
{
  g_autofree guint16 *samples = g_new (guint16, 256 * 256);
  g_autofree guint8 *expected = g_new (guint8, 256 * 256 * 4);
  for (guint v = 0; v < 65536; v++)
    {
      samples[v] = v;
      guint8 px[4] = { scale16 (v), scale16 (v), scale16 (v), 255 };
      memcpy (expected + v * 4, px, 4);
    }
  Fixture f = { .width = 256,
                .height = 256,
                .color_type = PNG_COLOR_TYPE_GRAY,
                .bit_depth = 16,
                .samples = samples };
  assert_decodes_to (&f, expected);
}

static void
test_gray_alpha_8_and_16 (void)
{
  static const guint16 samples8[] = { 0, 255, 10, 20, 255, 0, 128, 77 };
  static const guint8 expected8[] = {
    0, 0, 0, 255, 10, 10, 10, 20, 255, 255, 255, 0, 128, 128, 128, 77,
  };
  Fixture f8 = { .width = 2,
                 .height = 2,
                 .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                 .bit_depth = 8,
                 .samples = samples8 };
  assert_decodes_to (&f8, expected8);

  static const guint16 samples16[] = { 0x12ff, 0xffff, 0x8000, 0x0080 };
  guint8 expected16[] = {
    scale16 (0x12ff), scale16 (0x12ff), scale16 (0x12ff), 255,
    scale16 (0x8000), scale16 (0x8000), scale16 (0x8000), scale16 (0x0080),
  };
  Fixture f16 = { .width = 2,
                  .height = 1,
                  .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                  .bit_depth = 16,
                  .samples = samples16 };
  assert_decodes_to (&f16, expected16);
}

static void
test_gray_with_trns (void)
{
  static const guint16 samples[] = { 7, 8, 7, 200 };
  static const png_color_16 key = { .gray = 7 };
  static const guint8 expected[] = {
    7, 7, 7, 0, 8, 8, 8, 255, 7, 7, 7, 0, 200, 200, 200, 255,
  };
  Fixture f = { .width = 4,
                .height = 1,
                .color_type = PNG_COLOR_TYPE_GRAY,
                .bit_depth = 8,
                .samples = samples,
                .trans_color = &key };
  assert_decodes_to (&f, expected);
}

static void
test_rgb_8_and_with_trns (void)
{
  static const guint16 samples[] = { 1, 2, 3, 250, 251, 252, 1, 2, 4 };
  static const guint8 opaque[] = { 1, 2, 3, 255, 250, 251, 252, 255, 1, 2, 4, 255 };
  Fixture f = {
    .width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 8, .samples = samples
  };
  assert_decodes_to (&f, opaque);

  static const png_color_16 key = { .red = 1, .green = 2, .blue = 3 };
  static const guint8 keyed[] = { 1, 2, 3, 0, 250, 251, 252, 255, 1, 2, 4, 255 };
  f.trans_color = &key;
  assert_decodes_to (&f, keyed);
}

static void
test_rgb_and_rgba_16 (void)
{
  static const guint16 rgb[] = { 0xffff, 0x0000, 0x12ff, 0x8080, 0x7f7f, 0x00ff };
  guint8 expected_rgb[8];
  for (int i = 0; i < 2; i++)
    {
      for (int c = 0; c < 3; c++)
        expected_rgb[i * 4 + c] = scale16 (rgb[i * 3 + c]);
      expected_rgb[i * 4 + 3] = 255;
    }
  Fixture f = {
    .width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 16, .samples = rgb
  };
  assert_decodes_to (&f, expected_rgb);

  static const guint16 rgba[] = { 0xffff, 0x0000, 0x12ff, 0x0101, 0x8080, 0x7f7f, 0x00ff, 0xfeff };
  guint8 expected_rgba[8];
  for (int i = 0; i < 8; i++)
    expected_rgba[i] = scale16 (rgba[i]);
  Fixture g = { .width = 2,
                .height = 1,
                .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                .bit_depth = 16,
                .samples = rgba };
  assert_decodes_to (&g, expected_rgba);
}

static void
test_interlaced_adam7 (void)
{
  /* Odd sizes, so several Adam7 passes are partial or empty. */
  guint width = 13, height = 11;
  g_autofree guint16 *rgba = g_new (guint16, width * height * 4);
  g_autofree guint8 *expected = g_new (guint8, width * height * 4);
  for (guint i = 0; i < width * height * 4; i++)
    expected[i] = rgba[i] = (i * 37 + 11) & 0xff;
  Fixture f = { .width = width,
                .height = height,
                .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                .bit_depth = 8,
                .interlace = PNG_INTERLACE_ADAM7,
                .samples = rgba };
  assert_decodes_to (&f, expected);

  g_autofree guint16 *gray = g_new (guint16, width * height);
  for (guint i = 0; i < width * height; i++)
    {
      gray[i] = (i * 5) % 4;
      guint8 v = gray[i] * 85;
      guint8 px[4] = { v, v, v, 255 };
      memcpy (expected + i * 4, px, 4);
    }
  Fixture g = { .width = width,
                .height = height,
                .color_type = PNG_COLOR_TYPE_GRAY,
                .bit_depth = 2,
                .interlace = PNG_INTERLACE_ADAM7,
                .samples = gray };
  assert_decodes_to (&g, expected);
}

static void
test_ancillary_chunks_do_not_change_pixels (void)
{
  static const guint16 samples[] = { 1, 2, 3, 250, 251, 252 };
  static const guint8 expected[] = { 1, 2, 3, 255, 250, 251, 252, 255 };
  Fixture f = { .width = 2,
                .height = 1,
                .color_type = PNG_COLOR_TYPE_RGB,
                .bit_depth = 8,
                .samples = samples,
                .ancillary = TRUE };
  assert_decodes_to (&f, expected);
}

static GBytes *
small_rgb_png (void)
{
  static guint16 samples[8 * 8 * 3];
  for (guint i = 0; i < G_N_ELEMENTS (samples); i++)
    samples[i] = (i * 29) & 0xff;
  Fixture f = {
    .width = 8, .height = 8, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 8, .samples = samples
  };
  return write_fixture (&f);
}

static void
test_truncated_at_every_length_refused (void)
{
  g_autoptr (GBytes) png = small_rgb_png ();
  gsize length;
  const guint8 *data = g_bytes_get_data (png, &length);

  for (gsize cut = 1; cut < length; cut++)
    {
      /* Exactly `cut` bytes on the heap, so reading past them is an ASan error. */
      g_autoptr (GBytes) prefix = g_bytes_new (data, cut);
      assert_refused (prefix, LK_THUMBNAIL_ERROR_CORRUPT, " is truncated: ");
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) whole = decode_bytes (png, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (whole->width, ==, 8);
}

/* Offset of the data of the first chunk of `type`, walking the chunk list. */
static gsize
chunk_data_offset (const guint8 *data, gsize length, const char *type)
{
  for (gsize at = 8; at + 8 <= length;)
    {
      guint32 size = png_get_uint_32 (data + at);
      if (memcmp (data + at + 4, type, 4) == 0)
        return at + 8;
      at += 12 + (gsize) size;
    }
  g_assert_not_reached ();
}

static void
test_corrupt_crc_refused (void)
{
  g_autoptr (GBytes) png = small_rgb_png ();
  gsize length;
  const guint8 *data = g_bytes_get_data (png, &length);
  const char *chunks[] = { "IHDR", "IDAT", "IEND" };

  for (guint i = 0; i < G_N_ELEMENTS (chunks); i++)
    {
      g_autofree guint8 *copy = g_memdup2 (data, length);
      gsize at = chunk_data_offset (copy, length, chunks[i]);
      guint32 size = png_get_uint_32 (copy + at - 8);
      copy[at + size] ^= 0x01; /* first CRC byte */
      g_autoptr (GBytes) bad = g_bytes_new (copy, length);
      assert_refused (bad, LK_THUMBNAIL_ERROR_CORRUPT, "CRC error");
    }
}

/* `header` (signature + IHDR) followed by the IDAT and IEND of a 1 × 1 PNG:
 * a file whose only fault is its size, so nothing but the size check can stop
 * a decoder from going on to allocate the pixels. */
static GBytes *
with_tail_of_tiny_png (GBytes *header)
{
  static const guint16 pixel[4] = { 0 };
  Fixture tiny = { .width = 1,
                   .height = 1,
                   .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                   .bit_depth = 16,
                   .samples = pixel };
  g_autoptr (GBytes) png = write_fixture (&tiny);
  gsize header_length, length;
  const guint8 *head = g_bytes_get_data (header, &header_length);
  const guint8 *data = g_bytes_get_data (png, &length);
  gsize idat = chunk_data_offset (data, length, "IDAT") - 8;

  GByteArray *out = g_byte_array_new ();
  g_byte_array_append (out, head, header_length);
  g_byte_array_append (out, data + idat, length - idat);
  return g_byte_array_free_to_bytes (out);
}

/* Every byte zlib inflates in this process, libpng's included: libpng calls
 * inflate() through the dynamic linker, which finds this definition first;
 * it counts what the real one (the next in search order) produced. */
static guint64 inflated_bytes;

int
inflate (z_streamp stream, int flush)
{
  static int (*real_inflate) (z_streamp, int);
  if (real_inflate == NULL)
    real_inflate = (int (*) (z_streamp, int)) dlsym (RTLD_NEXT, "inflate");
  g_assert_nonnull (real_inflate);
  uLong before = stream->total_out;
  int result = real_inflate (stream, flush);
  inflated_bytes += stream->total_out - before;
  return result;
}

static void
append_chunk (GByteArray *png, const char *type, const guint8 *data, gsize length)
{
  guint8 word[4];
  png_save_uint_32 (word, (png_uint_32) length);
  g_byte_array_append (png, word, 4);
  g_byte_array_append (png, (const guint8 *) type, 4);
  g_byte_array_append (png, data, (guint) length);
  /* crc32 (crc, NULL, 0) is not crc: it returns zlib's initial value. */
  uLong crc = crc32 (0, (const Bytef *) type, 4);
  if (length > 0)
    crc = crc32 (crc, data, (uInt) length);
  png_save_uint_32 (word, (png_uint_32) crc);
  g_byte_array_append (png, word, 4);
}

/* deflate() of `length` bytes with Z_FULL_FLUSH: byte-aligned output that
 * depends on nothing before it, so it can be repeated. */
static GByteArray *
deflate_flushed (z_stream *z, const guint8 *data, gsize length)
{
  GByteArray *out = g_byte_array_new ();
  guint8 buffer[64 * 1024];
  z->next_in = (Bytef *) data;
  z->avail_in = (uInt) length;
  do
    {
      z->next_out = buffer;
      z->avail_out = sizeof buffer;
      g_assert_cmpint (deflate (z, Z_FULL_FLUSH), ==, Z_OK);
      g_byte_array_append (out, buffer, (guint) (sizeof buffer - z->avail_out));
    }
  while (z->avail_out == 0);
  return out;
}

/* A 16 × 16 gray PNG whose zlib stream holds its rows, then `zero_mib` MiB of
 * zeros, then a valid end (an empty final block, the right Adler-32), in
 * IDAT chunks of 64 KiB: what issue 19's bomb was, built without ever
 * holding the zeros' compressed form more than once (about 1 KB per MiB). */
static GBytes *
zlib_bomb_png (gsize zero_mib)
{
  enum
  {
    SIDE = 16,
    MIB = 1024 * 1024
  };
  guint8 raw[SIDE * (SIDE + 1)];
  for (gsize y = 0; y < SIDE; y++)
    {
      raw[y * (SIDE + 1)] = 0; /* filter: none */
      for (gsize x = 0; x < SIDE; x++)
        raw[y * (SIDE + 1) + 1 + x] = (guint8) (x * 16 + y);
    }
  g_autofree guint8 *zeros = g_malloc0 (MIB);
  z_stream z = { 0 };
  g_assert_cmpint (deflateInit (&z, 9), ==, Z_OK);
  g_autoptr (GByteArray) stream = deflate_flushed (&z, raw, sizeof raw);
  g_autoptr (GByteArray) segment = deflate_flushed (&z, zeros, MIB);
  g_autoptr (GByteArray) again = deflate_flushed (&z, zeros, MIB);
  g_assert_cmpmem (segment->data, segment->len, again->data, again->len);
  deflateEnd (&z);
  for (gsize k = 0; k < zero_mib; k++)
    g_byte_array_append (stream, segment->data, segment->len);
  static const guint8 final_block[] = { 0x03, 0x00 };
  g_byte_array_append (stream, final_block, sizeof final_block);
  /* Adler-32 of the rows, then of the zeros: s1 stays 1, s2 grows by 1 a byte. */
  gsize n_zeros = zero_mib * MIB;
  uLong zeros_adler = ((uLong) (n_zeros % 65521) << 16) | 1;
  uLong adler = adler32_combine (adler32 (1, raw, sizeof raw), zeros_adler, (z_off_t) n_zeros);
  guint8 word[4];
  png_save_uint_32 (word, (png_uint_32) adler);
  g_byte_array_append (stream, word, 4);

  GByteArray *png = g_byte_array_new ();
  static const guint8 signature[] = { 137, 'P', 'N', 'G', '\r', '\n', 26, '\n' };
  g_byte_array_append (png, signature, sizeof signature);
  guint8 ihdr[13] = { 0 };
  png_save_uint_32 (ihdr, SIDE);
  png_save_uint_32 (ihdr + 4, SIDE);
  ihdr[8] = 8; /* bit depth; colour type 0: gray */
  append_chunk (png, "IHDR", ihdr, sizeof ihdr);
  for (gsize at = 0; at < stream->len; at += 64 * 1024)
    append_chunk (png, "IDAT", stream->data + at, MIN (64 * 1024, stream->len - at));
  append_chunk (png, "IEND", NULL, 0);
  return g_byte_array_free_to_bytes (png);
}

/* Issue 19: a thumbnail whose rows were followed, in the same zlib stream, by
 * gigabytes of zeros cost 9 s of CPU (libpng's png_read_end inflates the
 * stream to its end) and was then shown. Now decoding stops a few KiB of
 * compressed data after the last row: the 4 GiB of zeros here (a 4 MB file)
 * are refused as corrupt having inflated at most 64 MiB — counted, not timed.
 * The same stream with 1 MiB of zeros (about 1 KB compressed, more than any
 * encoder leaves after its last row) still decodes, to the right pixels. */
static void
test_zlib_bomb_stops_after_the_last_row (void)
{
  g_autoptr (GBytes) small = zlib_bomb_png (1);
  g_autoptr (GError) error = NULL;
  inflated_bytes = 0;
  g_autoptr (LkThumbnail) t = decode_bytes (small, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->width, ==, 16);
  g_assert_cmpuint (t->pixels[(5 * 16 + 3) * 4], ==, 3 * 16 + 5);
  g_assert_cmpuint (t->pixels[(5 * 16 + 3) * 4 + 3], ==, 255);
  /* The counter sees libpng's inflate: the rows and the MiB of zeros. */
  g_assert_cmpuint (inflated_bytes, >=, 16 * 17 + 1024 * 1024);

  g_autoptr (GBytes) bomb = zlib_bomb_png (4096);
  g_test_message ("the bomb: %" G_GSIZE_FORMAT " bytes holding 4 GiB of zeros",
                  g_bytes_get_size (bomb));
  g_assert_cmpuint (g_bytes_get_size (bomb), <, LK_THUMBNAIL_MAX_FILE_SIZE);
  inflated_bytes = 0;
  assert_refused (bomb, LK_THUMBNAIL_ERROR_CORRUPT, "after the last row");
  g_test_message ("inflated %" G_GUINT64_FORMAT " bytes before refusing it", inflated_bytes);
  g_assert_cmpuint (inflated_bytes, <=, 64 * 1024 * 1024);
}

static void
test_dimension_bomb_refused_before_allocating (void)
{
  struct
  {
    guint32 width, height;
    const char *numbers;
  } bombs[] = {
    { 100000, 100000, "100000 × 100000" },
    { 0x7fffffff, 0x7fffffff, "2147483647 × 2147483647" },
    { 1025, 1, "1025 × 1" },
    { 1, 1025, "1 × 1025" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bombs); i++)
    {
      /* RGBA 16-bit: decoding 2³¹ × 2³¹ of it would need 2⁶⁵ bytes; any
       * attempt to allocate for it aborts the test. */
      Fixture f = { .width = bombs[i].width,
                    .height = bombs[i].height,
                    .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                    .bit_depth = 16,
                    .header_only = TRUE };
      g_autoptr (GBytes) header = write_fixture (&f);
      g_autoptr (GBytes) png = with_tail_of_tiny_png (header);
      assert_refused (png, LK_THUMBNAIL_ERROR_TOO_LARGE, bombs[i].numbers);
      assert_refused (png, LK_THUMBNAIL_ERROR_TOO_LARGE, "at most 1024 × 1024");
    }

  /* The limit itself is accepted, both ways. */
  g_autofree guint16 *samples = g_new0 (guint16, 1024);
  Fixture wide = { .width = 1024,
                   .height = 1,
                   .color_type = PNG_COLOR_TYPE_GRAY,
                   .bit_depth = 8,
                   .samples = samples };
  Fixture tall = wide;
  tall.width = 1;
  tall.height = 1024;
  g_autofree guint8 *black = g_new0 (guint8, 1024 * 4);
  for (guint i = 0; i < 1024; i++)
    black[i * 4 + 3] = 255;
  assert_decodes_to (&wide, black);
  assert_decodes_to (&tall, black);
}

static void
test_not_png_refused (void)
{
  static const char *const inputs[] = {
    "GIF89a\x01\x00\x01\x00",
    "\xff\xd8\xff\xe0\x00\x10JFIF",
    "{\"format\": \"likeness-library\"}",
    "\x89PNG\r\n\x1a\x0b and then some",
    "\x89PNF",
  };
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr (GBytes) bytes = g_bytes_new_static (inputs[i], strlen (inputs[i]));
      assert_refused (bytes, LK_THUMBNAIL_ERROR_NOT_PNG, "is not a PNG image");
    }
  g_autoptr (GBytes) empty = g_bytes_new_static ("", 0);
  assert_refused (empty, LK_THUMBNAIL_ERROR_NOT_PNG, "is empty");
}

static char *
make_tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("test-thumbnail-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
test_load_empty_missing_and_odd_files (void)
{
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *empty = g_build_filename (dir, "empty.png", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.png", NULL);
  g_autofree char *huge = g_build_filename (dir, "huge.png", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (empty, "", 0, &error));
  g_assert_null (lk_thumbnail_load (empty, &error));
  g_assert_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_NOT_PNG);
  g_assert_true (g_str_has_prefix (error->message, empty));
  g_assert_nonnull (strstr (error->message, "is empty"));
  g_clear_error (&error);

  g_assert_null (lk_thumbnail_load (missing, &error));
  g_assert_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_MISSING);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);

  g_assert_null (lk_thumbnail_load (dir, &error));
  g_assert_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_IO);
  g_assert_nonnull (strstr (error->message, dir));
  g_clear_error (&error);

  /* Sparse, so it costs no disk; refused before a byte of it is read. */
  int fd = g_open (huge, O_CREAT | O_WRONLY, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, LK_THUMBNAIL_MAX_FILE_SIZE + 1), ==, 0);
  g_assert_cmpint (close (fd), ==, 0);
  g_assert_null (lk_thumbnail_load (huge, &error));
  g_assert_error (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_TOO_LARGE);
  g_assert_nonnull (strstr (error->message, "67108865 bytes"));
  g_clear_error (&error);

  g_assert_cmpint (g_remove (empty), ==, 0);
  g_assert_cmpint (g_remove (huge), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/thumbnail/round-trip-is-exact", test_round_trip_is_exact);
  g_test_add_func ("/thumbnail/opaque-and-face-round-trip-as-rgb",
                   test_opaque_and_face_round_trip_as_rgb);
  g_test_add_func ("/thumbnail/face-from-rgb-rows-is-the-same-png",
                   test_face_from_rgb_rows_is_the_same_png);
  g_test_add_func ("/thumbnail/face-png-round-trips-every-shape",
                   test_face_png_round_trips_every_shape);
  g_test_add_func ("/thumbnail/save-is-atomic-and-loads-back", test_save_is_atomic_and_loads_back);
  g_test_add_func ("/thumbnail/save-into-missing-folder-fails",
                   test_save_into_missing_folder_fails);
  g_test_add_func ("/thumbnail/palette-with-trns", test_palette_with_trns);
  g_test_add_func ("/thumbnail/palette-low-bit-depths", test_palette_low_bit_depths);
  g_test_add_func ("/thumbnail/gray-every-bit-depth", test_gray_every_bit_depth);
  g_test_add_func ("/thumbnail/gray-16-rounds-every-value", test_gray_16_rounds_every_value);
  g_test_add_func ("/thumbnail/gray-alpha-8-and-16", test_gray_alpha_8_and_16);
  g_test_add_func ("/thumbnail/gray-with-trns", test_gray_with_trns);
  g_test_add_func ("/thumbnail/rgb-8-and-with-trns", test_rgb_8_and_with_trns);
  g_test_add_func ("/thumbnail/rgb-and-rgba-16", test_rgb_and_rgba_16);
  g_test_add_func ("/thumbnail/interlaced-adam7", test_interlaced_adam7);
  g_test_add_func ("/thumbnail/ancillary-chunks-do-not-change-pixels",
                   test_ancillary_chunks_do_not_change_pixels);
  g_test_add_func ("/thumbnail/truncated-at-every-length-refused",
                   test_truncated_at_every_length_refused);
  g_test_add_func ("/thumbnail/corrupt-crc-refused", test_corrupt_crc_refused);
  g_test_add_func ("/thumbnail/zlib-bomb-stops-after-the-last-row",
                   test_zlib_bomb_stops_after_the_last_row);
  g_test_add_func ("/thumbnail/dimension-bomb-refused-before-allocating",
                   test_dimension_bomb_refused_before_allocating);
  g_test_add_func ("/thumbnail/not-png-refused", test_not_png_refused);
  g_test_add_func ("/thumbnail/load-empty-missing-and-odd-files",
                   test_load_empty_missing_and_odd_files);

  return g_test_run ();
}
