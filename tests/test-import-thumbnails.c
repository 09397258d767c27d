/* test-import-thumbnails.c — the importers' thumbnails (lk-import.c):
 * previews decoded at the scale the 128-pixel crops need still give the same
 * crops, and the thumbnails cut while the importer still reads its database
 * are every face's, under its own number, or none at all when the import
 * stops. The importers themselves: test-import-immich.c and
 * test-import-photoprism.c. */
#include "config.h"

/* Built only with an importer that cuts thumbnails (tests/meson.build). */
#define LK_HAVE_IMPORT_THUMBNAILS 1

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#ifdef LK_TEST_HAVE_LIBJPEG
#include <stdio.h>
/* jpeglib.h needs FILE declared before it. */
#include <jpeglib.h>
#endif

#include "import/lk-import-private.h"
#include "library/lk-library.h"
#include "library/lk-thumbnail.h"
#include "lk-test-thumbnails.h"
#include "lk-test-util.h"

/* An image with what makes a photo hard to scale: a smooth gradient, sharp
 * edges of shaded discs (faces) of several sizes, and fine deterministic
 * noise, so the scaled and the full decode differ wherever they can. */
static GdkPixbuf *
photo_like (int width, int height)
{
  GdkPixbuf *image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  int stride = gdk_pixbuf_get_rowstride (image);
  guint8 *pixels = gdk_pixbuf_get_pixels (image);
  guint32 seed = 12345;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        seed = seed * 1664525u + 1013904223u;
        int noise = (int) (seed >> 28) - 8;
        double r = 60 + 120.0 * x / width, g = 80 + 100.0 * y / height, b = 140;
        /* Discs of radius 40 to 200 on a grid, shaded like a lit face. */
        int cx = (x / 400) * 400 + 200, cy = (y / 400) * 400 + 200;
        double radius = 40 + 40 * ((x / 400 + y / 400) % 5);
        double dx = x - cx, dy = y - cy, d = sqrt (dx * dx + dy * dy);
        if (d < radius)
          {
            double light = 0.6 + 0.4 * (1 - d / radius);
            r = 230 * light;
            g = 180 * light;
            b = 150 * light;
            /* Eyes: small dark dots, the detail a downscale blurs first. */
            if (fabs (fabs (dx) - radius / 3) < radius / 10 && fabs (dy + radius / 4) < radius / 10)
              r = g = b = 30;
          }
        guint8 *p = pixels + (gsize) y * stride + (gsize) x * 3;
        p[0] = (guint8) CLAMP (r + noise, 0, 255);
        p[1] = (guint8) CLAMP (g + noise, 0, 255);
        p[2] = (guint8) CLAMP (b + noise, 0, 255);
      }
  return image;
}

static char *
save_jpeg (const char *dir, const char *name, GdkPixbuf *image)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_pixbuf_save (image, path, "jpeg", &error, "quality", "85", NULL));
  g_assert_no_error (error);
  return path;
}

static LkThumbnail *
cut (GdkPixbuf *image, const double rel[4])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) png = lk_import_cut_thumbnail (image, rel, &error);
  g_assert_no_error (error);
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (png, &length);
  LkThumbnail *t = lk_thumbnail_decode (data, length, "thumbnail", &error);
  g_assert_no_error (error);
  return t;
}

/* A test's own temporary folder, removed after it. */
typedef struct
{
  char *dir;
} Folder;

static void
folder_setup (Folder *fx, gconstpointer data)
{
  fx->dir = g_dir_make_tmp ("lk-import-thumbs-XXXXXX", NULL);
  g_assert_nonnull (fx->dir);
}

static void
folder_teardown (Folder *fx, gconstpointer data)
{
  lk_test_remove_tree (fx->dir);
  g_free (fx->dir);
}

static void
test_denominator_keeps_128_pixels (void)
{
  /* A 1440 × 1080 preview. A box 288 px wide: a 432-px crop, 216 px at
   * half size (≥ 128), 108 at a quarter (< 128). */
  const double half[1][4] = { { 0.4, 0.4, 288.0 / 1440, 288.0 / 1080 } };
  g_assert_cmpuint (lk_import_decode_denominator (1440, 1080, half, 1), ==, 2);
  /* A box of 60 px: a 90-px crop, needs every pixel there is. */
  const double small[1][4] = { { 0.1, 0.1, 60.0 / 1440, 60.0 / 1080 } };
  g_assert_cmpuint (lk_import_decode_denominator (1440, 1080, small, 1), ==, 1);
  /* A face filling the photo: the crop is the whole shorter side, 1080,
   * 135 px at an eighth. */
  const double whole[1][4] = { { 0, 0, 1, 1 } };
  g_assert_cmpuint (lk_import_decode_denominator (1440, 1080, whole, 1), ==, 8);
  /* The photo's scale serves its smallest face. */
  const double both[2][4] = { { 0, 0, 1, 1 }, { 0.4, 0.4, 288.0 / 1440, 288.0 / 1080 } };
  g_assert_cmpuint (lk_import_decode_denominator (1440, 1080, both, 2), ==, 2);
  /* A box of 0.2 × 0.05 of a 4000 × 1000 panorama as stored: 800 px wide
   * as read, but the photo may be shown turned a quarter, where the same
   * fractions are 200 × 200 (a 300-px crop): the smaller reading wins. */
  const double turned[1][4] = { { 0.1, 0.1, 0.2, 0.05 } };
  g_assert_cmpuint (lk_import_decode_denominator (4000, 1000, turned, 1), ==, 2);
}

/* The crops of the full and the scaled decode, over faces from 80 px
 * (decoded whole) to 400 px (a quarter): the same square, resampled by
 * another path (libjpeg's DCT scaling, then gdk-pixbuf's box filter over
 * fewer pixels), so they differ at sharp edges only. Measured here: 4 × 4
 * block averages within 0.63 of 255 (channel mean 0.6–1.3), and no shift of
 * a pixel matches better; the same square 2.6 thumbnail pixels off is 2.0
 * or more apart and matches better moved. The bars, 1.0 and 1.5, sit
 * between. */
static void
test_scaled_decode_cuts_the_same_crop (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autoptr (GdkPixbuf) source = photo_like (1440, 1080);
  g_autofree char *path = save_jpeg (dir, "preview.jpeg", source);

  /* Boxes centred on the discs, from 60 to 400 px. */
  const double boxes[][4] = {
    { 160.0 / 1440, 160.0 / 1080, 80.0 / 1440, 80.0 / 1080 },
    { 520.0 / 1440, 120.0 / 1080, 160.0 / 1440, 160.0 / 1080 },
    { 880.0 / 1440, 80.0 / 1080, 240.0 / 1440, 240.0 / 1080 },
    { 180.0 / 1440, 580.0 / 1080, 240.0 / 1440, 240.0 / 1080 },
    { 400.0 / 1440, 400.0 / 1080, 400.0 / 1440, 400.0 / 1080 },
    { 600.0 / 1440, 450.0 / 1080, 300.0 / 1440, 300.0 / 1080 },
  };
  for (gsize b = 0; b < G_N_ELEMENTS (boxes); b++)
    {
      g_autoptr (GError) error = NULL;
      guint d_scaled = 0;
      /* The reference: the whole image, decoded by gdk-pixbuf at full size. */
      g_autoptr (GdkPixbuf) full = gdk_pixbuf_new_from_file (path, &error);
      g_assert_no_error (error);
      g_assert_cmpint (gdk_pixbuf_get_width (full), ==, 1440);
      g_autoptr (GdkPixbuf) scaled = lk_import_decode_for_faces (
          path, &boxes[b], 1, LK_IMPORT_MAX_DENOMINATOR, &d_scaled, &error);
      g_assert_no_error (error);
      /* At most the image at that scale (only the square's rows and
       * columns, where libjpeg decodes the JPEG itself). */
      g_assert_cmpint (gdk_pixbuf_get_width (scaled), <=, (1440 + d_scaled - 1) / d_scaled);
      g_assert_cmpint (gdk_pixbuf_get_height (scaled), <=, (1080 + d_scaled - 1) / d_scaled);
      if (b == 0)
        g_assert_cmpuint (d_scaled, ==, 1); /* a 120-px crop: nothing to spare */
      if (b == 4)
        g_assert_cmpuint (d_scaled, ==, 2); /* a 600-px crop: 150 at a quarter, the cap is 1/2 */

      g_autoptr (LkThumbnail) a = cut (full, boxes[b]);
      g_autoptr (LkThumbnail) c = cut (scaled, boxes[b]);
      int largest = 0;
      double mean = difference (a, c, &largest);
      double blocks = block_difference (a, c);
      g_test_message ("box %zu: 1/%u, mean %.3f, largest %d, 4x4 blocks %.3f", b, d_scaled, mean,
                      largest, blocks);
      g_assert_cmpfloat (blocks, <, 1.0);
      g_assert_true (best_unmoved (a, c));

      /* The same comparison can fail: the square 2 % of its side (2.6
       * pixels of the thumbnail) off. */
      double shifted_box[4] = { boxes[b][0] + 0.02 * 1.5 * MAX (boxes[b][2], boxes[b][3] * 0.75),
                                boxes[b][1], boxes[b][2], boxes[b][3] };
      g_autoptr (LkThumbnail) s = cut (full, shifted_box);
      g_test_message ("box %zu shifted: 4x4 blocks %.3f", b, block_difference (a, s));
      g_assert_cmpfloat (block_difference (a, s), >, 1.5);
      g_assert_false (best_unmoved (a, s));
    }
}

/* One photo, several faces, decoded once for all of them: where libjpeg
 * decodes the JPEG itself it gives only the rows and columns their squares
 * need (starting at an offset cut_face must add back), at every scale the
 * smallest face allows. Each face's crop is compared with the one cut from
 * the whole image decoded by gdk-pixbuf at full size: squares at the
 * corners and the edges (where the region meets the image's border), and
 * faces far apart (a region with room between them). A crop taken at the
 * wrong offset is the shifted case: at 2 % of the square it fails both bars
 * here, and an offset that was forgotten moves the square by whole blocks. */
static void
test_region_decode_cuts_the_same_crops (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autoptr (GdkPixbuf) source = photo_like (1440, 1080);
  g_autofree char *path = save_jpeg (dir, "preview.jpeg", source);
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) whole = gdk_pixbuf_new_from_file (path, &error);
  g_assert_no_error (error);

  /* Sets of faces decoded together; a scale is chosen per set. */
  static const double top_left[][4] = { { 0, 0, 300.0 / 1440, 300.0 / 1080 } };
  static const double bottom_right[][4] = {
    { 1200.0 / 1440, 880.0 / 1080, 240.0 / 1440, 200.0 / 1080 },
  };
  static const double right_edge[][4]
      = { { 1300.0 / 1440, 420.0 / 1080, 140.0 / 1440, 90.0 / 1080 } };
  static const double apart[][4] = {
    { 100.0 / 1440, 130.0 / 1080, 200.0 / 1440, 200.0 / 1080 },
    { 1000.0 / 1440, 300.0 / 1080, 240.0 / 1440, 260.0 / 1080 },
    { 560.0 / 1440, 500.0 / 1080, 300.0 / 1440, 300.0 / 1080 },
  };
  static const double small_and_large[][4] = {
    { 700.0 / 1440, 40.0 / 1080, 70.0 / 1440, 70.0 / 1080 },
    { 200.0 / 1440, 200.0 / 1080, 500.0 / 1440, 500.0 / 1080 },
  };
  const struct
  {
    const double (*rel)[4];
    guint n;
  } sets[] = {
    { top_left, 1 }, { bottom_right, 1 }, { right_edge, 1 }, { apart, 3 }, { small_and_large, 2 },
  };
  const guint caps[] = { 1, LK_IMPORT_MAX_DENOMINATOR };
  for (gsize k = 0; k < G_N_ELEMENTS (sets); k++)
    for (gsize c = 0; c < G_N_ELEMENTS (caps); c++)
      {
        guint d = 0;
        g_autoptr (GdkPixbuf) image
            = lk_import_decode_for_faces (path, sets[k].rel, sets[k].n, caps[c], &d, &error);
        g_assert_no_error (error);
        g_assert_cmpuint (d, >=, 1);
        g_assert_cmpuint (d, <=, caps[c]);
        int iw = gdk_pixbuf_get_width (image), ih = gdk_pixbuf_get_height (image);
        g_test_message ("set %zu, at most 1/%u: 1/%u, %d x %d decoded of %d x %d", k, caps[c], d,
                        iw, ih, (1440 + d - 1) / d, (1080 + d - 1) / d);
        for (guint f = 0; f < sets[k].n; f++)
          {
            g_autoptr (LkThumbnail) a = cut (whole, sets[k].rel[f]);
            g_autoptr (LkThumbnail) b = cut (image, sets[k].rel[f]);
            int largest = 0;
            double mean = difference (a, b, &largest);
            double blocks = block_difference (a, b);
            g_test_message ("  face %u: mean %.3f, largest %d, 4x4 blocks %.3f", f, mean, largest,
                            blocks);
            g_assert_cmpfloat (blocks, <, 1.0);
            g_assert_true (best_unmoved (a, b));

            /* The bars catch a square 2 % of its side off (moved inwards
             * from where it is, once shifted to stay inside the image). */
            const double *r = sets[k].rel[f];
            double side = MIN (1.5 * MAX (r[2] * 1440, r[3] * 1080), 1080);
            double x0 = r[0] * 1440 + r[2] * 1440 / 2 - side / 2;
            double placed = CLAMP (x0, 0, 1440 - side);
            double moved = placed + (placed + side / 2 > 1440 / 2 ? -0.02 : 0.02) * side;
            double shifted[4] = { r[0] + (moved - x0) / 1440, r[1], r[2], r[3] };
            g_autoptr (LkThumbnail) s = cut (image, shifted);
            g_assert_cmpfloat (block_difference (a, s), >, 1.0);
            g_assert_false (best_unmoved (a, s));
          }
      }
      /* Where libjpeg decodes the file itself, a face in the top rows leaves
       * the rows below undecoded (the point of the region). */
#ifdef LK_TEST_HAVE_LIBJPEG
  guint d = 0;
  g_autoptr (GdkPixbuf) top = lk_import_decode_for_faces (path, top_left, 1, 1, &d, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_pixbuf_get_height (top), <, 1080 / 2);
  g_assert_cmpint (gdk_pixbuf_get_width (top), <, 1440 / 2);
#endif
}

#ifdef LK_TEST_HAVE_LIBJPEG
/* `image` as a progressive or a greyscale JPEG, written by libjpeg (gdk-pixbuf
 * writes neither). */
static char *
save_jpeg_as (const char *dir, const char *name, GdkPixbuf *image, gboolean progressive,
              gboolean grey)
{
  char *path = g_build_filename (dir, name, NULL);
  FILE *f = fopen (path, "wb");
  g_assert_nonnull (f);
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error (&err);
  jpeg_create_compress (&c);
  jpeg_stdio_dest (&c, f);
  c.image_width = gdk_pixbuf_get_width (image);
  c.image_height = gdk_pixbuf_get_height (image);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults (&c);
  jpeg_set_quality (&c, 85, TRUE);
  if (grey)
    jpeg_set_colorspace (&c, JCS_GRAYSCALE);
  if (progressive)
    jpeg_simple_progression (&c);
  jpeg_start_compress (&c, TRUE);
  const guint8 *pixels = gdk_pixbuf_read_pixels (image);
  int stride = gdk_pixbuf_get_rowstride (image);
  while (c.next_scanline < c.image_height)
    {
      JSAMPROW row = (JSAMPROW) (pixels + (gsize) c.next_scanline * stride);
      jpeg_write_scanlines (&c, &row, 1);
    }
  jpeg_finish_compress (&c);
  jpeg_destroy_compress (&c);
  g_assert_cmpint (fclose (f), ==, 0);
  return path;
}

/* The region decode of a progressive JPEG (every scan read before the first
 * row comes out) and of a greyscale one (turned to RGB by libjpeg): the same
 * crops as gdk-pixbuf's whole decode, at full size and at 1/2. */
static void
test_region_decode_of_progressive_and_grey (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autoptr (GdkPixbuf) source = photo_like (1440, 1080);
  static const double faces[][4] = {
    { 100.0 / 1440, 600.0 / 1080, 120.0 / 1440, 120.0 / 1080 },
    { 1000.0 / 1440, 300.0 / 1080, 300.0 / 1440, 300.0 / 1080 },
  };
  for (int kind = 0; kind < 3; kind++)
    {
      g_autofree char *path = save_jpeg_as (dir, "preview.jpeg", source, kind != 1, kind >= 1);
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkPixbuf) whole = gdk_pixbuf_new_from_file (path, &error);
      g_assert_no_error (error);
      for (guint n = 1; n <= 2; n++)
        {
          /* Both faces: decoded whole (the small one needs it); the large
           * one alone: at 1/2. */
          const double (*rel)[4] = n == 2 ? faces : faces + 1;
          guint d = 0;
          g_autoptr (GdkPixbuf) image
              = lk_import_decode_for_faces (path, rel, n, LK_IMPORT_MAX_DENOMINATOR, &d, &error);
          g_assert_no_error (error);
          g_assert_cmpuint (d, ==, n == 2 ? 1 : 2);
          g_assert_cmpint (gdk_pixbuf_get_height (image), <, (1080 + d - 1) / d);
          for (guint f = 0; f < n; f++)
            {
              g_autoptr (LkThumbnail) a = cut (whole, rel[f]);
              g_autoptr (LkThumbnail) b = cut (image, rel[f]);
              int largest = 0;
              double mean = difference (a, b, &largest);
              g_test_message ("%s%s, 1/%u, face %u: mean %.3f, largest %d, 4x4 blocks %.3f",
                              kind != 1 ? "progressive" : "baseline", kind >= 1 ? " grey" : "", d,
                              f, mean, largest, block_difference (a, b));
              g_assert_cmpfloat (block_difference (a, b), <, 1.0);
              g_assert_true (best_unmoved (a, b));
            }
        }
    }
}
#endif

/* The same on real photographs (dlib's examples/faces, fetched by
 * .ci/dlib-source; skipped without): squares of 30 %, 50 % and 90 % of
 * each photo's shorter side at its centre and near two corners, every one
 * the scaled decode serves. Measured: 51 crops, 4 × 4 blocks 1.75 apart on
 * average, 5.5 at worst (the collage bald_guys.jpg at 1/8, whose tiles'
 * hard edges the two resamplings place differently within a pixel); a
 * channel's mean difference 3.7. Bars: 3 on average, 7 for any crop. */
static void
test_scaled_decode_on_real_photos (void)
{
  const char *dlib = g_getenv ("LK_TEST_DLIB");
  g_autofree char *faces = dlib != NULL ? g_build_filename (dlib, "photos", "faces", NULL) : NULL;
  g_autoptr (GDir) dir = faces != NULL ? g_dir_open (faces, 0, NULL) : NULL;
  if (dir == NULL)
    {
      g_test_skip ("no real photos: .ci/dlib-source fetches them into $LK_TEST_DLIB");
      return;
    }
  const char *name;
  guint compared = 0;
  double sum = 0, worst_mean = 0, sum_blocks = 0, worst_blocks = 0;
  int worst = 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (!g_str_has_suffix (name, ".jpg"))
        continue;
      g_autofree char *path = g_build_filename (faces, name, NULL);
      int width = 0, height = 0;
      g_assert_nonnull (gdk_pixbuf_get_file_info (path, &width, &height));
      const double sizes[] = { 0.3, 0.5, 0.9 };
      const double places[][2] = { { 0.5, 0.5 }, { 0.2, 0.2 }, { 0.8, 0.8 } };
      for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
        for (gsize j = 0; j < G_N_ELEMENTS (places); j++)
          {
            /* A box whose crop (1.5 × its side) is sizes[k] of the shorter side. */
            double side = sizes[k] * MIN (width, height) / 1.5;
            double box[1][4]
                = { { places[j][0] - side / 2 / width, places[j][1] - side / 2 / height,
                      side / width, side / height } };
            g_autoptr (GError) error = NULL;
            guint d = 0;
            g_autoptr (GdkPixbuf) stored = gdk_pixbuf_new_from_file (path, &error);
            g_assert_no_error (error);
            g_autoptr (GdkPixbuf) full = gdk_pixbuf_apply_embedded_orientation (stored);
            g_autoptr (GdkPixbuf) scaled = lk_import_decode_for_faces (
                path, (const double (*)[4]) box, 1, LK_IMPORT_MAX_DENOMINATOR, &d, &error);
            g_assert_no_error (error);
            g_autoptr (LkThumbnail) a = cut (full, box[0]);
            g_autoptr (LkThumbnail) b = cut (scaled, box[0]);
            int largest = 0;
            double mean = difference (a, b, &largest);
            double blocks = block_difference (a, b);
            sum += mean;
            worst_mean = MAX (worst_mean, mean);
            worst = MAX (worst, largest);
            compared++;
            g_test_message ("%s (%d × %d), a square of %.0f %% at %zu: 1/%u, mean %.3f, "
                            "largest %d, 4x4 blocks %.3f",
                            name, width, height, 100 * sizes[k], j, d, mean, largest, blocks);
            sum_blocks += blocks;
            worst_blocks = MAX (worst_blocks, blocks);
            g_assert_cmpfloat (blocks, <, 7);
          }
    }
  g_test_message ("%u crops of real photos decoded scaled: channel difference mean %.3f (worst "
                  "crop %.3f), largest %d; 4x4 blocks mean %.3f (worst crop %.3f)",
                  compared, sum / MAX (compared, 1), worst_mean, worst,
                  sum_blocks / MAX (compared, 1), worst_blocks);
  g_assert_cmpuint (compared, >, 0);
  g_assert_cmpfloat (sum_blocks / compared, <, 3);
}

static void
test_png_is_decoded_whole (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autoptr (GdkPixbuf) source = photo_like (800, 600);
  g_autofree char *path = g_build_filename (dir, "preview.png", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_pixbuf_save (source, path, "png", &error, NULL));
  const double whole[1][4] = { { 0, 0, 1, 1 } };
  guint d = 0;
  g_autoptr (GdkPixbuf) image = lk_import_decode_for_faces (path, whole, 1, 8, &d, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d, ==, 1);
  g_assert_cmpint (gdk_pixbuf_get_width (image), ==, 800);
}

static void
test_not_an_image_is_named (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autofree char *path = g_build_filename (dir, "preview.jpeg", NULL);
  g_assert_true (g_file_set_contents (path, "A text file named .jpeg\n", -1, NULL));
  const double whole[1][4] = { { 0, 0, 1, 1 } };
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) image = lk_import_decode_for_faces (path, whole, 1, 8, NULL, &error);
  g_assert_null (image);
  g_assert_error (error, GDK_PIXBUF_ERROR, GDK_PIXBUF_ERROR_UNKNOWN_TYPE);
  g_assert_nonnull (strstr (error->message, "not in a format"));
}

/* A JPEG of one colour with a disc of another at its centre. */
static char *
photo_of_colour (const char *dir, guint n, guint32 backdrop, guint32 face)
{
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 960, 720);
  gdk_pixbuf_fill (image, backdrop);
  g_autoptr (GdkPixbuf) disc = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 200, 200);
  gdk_pixbuf_fill (disc, face);
  gdk_pixbuf_copy_area (disc, 0, 0, 200, 200, image, 380, 260);
  g_autofree char *name = g_strdup_printf ("%u.jpeg", n);
  return save_jpeg (dir, name, image);
}

static const guint32 colours[3] = { 0xff000000, 0x00ff0000, 0x0000ff00 };

/* Builds a source of three photos (each a face of its own colour in the
 * middle) whose faces arrive as photo 0, 1, 0, 2: photo 0's faces are not
 * together, as an importer that does not group them would add them. */
static void
fill_source (LkImportSource *source, const char *dir)
{
  source->model = g_strdup ("buffalo_l");
  source->dim = 4;
  const guint order[] = { 0, 1, 0, 2 };
  for (guint k = 0; k < G_N_ELEMENTS (order); k++)
    {
      guint p = order[k];
      if (p >= source->photos->len)
        {
          LkImportPhoto *photo = lk_import_source_add_photo (source);
          photo->source_id = g_strdup_printf ("photo-%u", p);
          photo->width = 960;
          photo->height = 720;
          photo->image = photo_of_colour (dir, p, 0x80808000, colours[p]);
        }
      LkImportFace face = { g_strdup_printf ("face-%u", k), p, { 0.42, 0.39, 0.17, 0.22 }, -1 };
      g_array_append_val (source->faces, face);
      for (guint d = 0; d < 4; d++)
        {
          float v = d == k % 4 ? 1.0f : 0.0f;
          g_array_append_val (source->floats, v);
        }
    }
}

static void
test_early_writer_cuts_every_face (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autofree char *outdir = g_build_filename (dir, "library", NULL);
  LkImportSummary summary = { 0 };
  LkImportSink sink = { NULL, NULL, &summary };
  LkImportSource source;
  lk_import_source_init (&source, "immich");
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_import_source_write_early (&source, outdir, &sink, NULL, &error));
  g_assert_no_error (error);
  fill_source (&source, dir);
  g_assert_true (lk_import_finish (outdir, &source, TRUE, &sink, NULL, &error, "empty"));
  g_assert_no_error (error);
  g_assert_cmpuint (summary.thumbnails, ==, 4);

  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 4);
  const guint photo_of[] = { 0, 1, 0, 2 };
  for (guint k = 0; k < 4; k++)
    {
      g_autofree char *id = g_strdup_printf ("face-%u", k);
      g_assert_cmpstr (library->face_id[k], ==, id);
      g_autofree char *path = lk_library_thumbnail_path (library, k);
      g_assert_nonnull (path);
      g_autoptr (LkThumbnail) t = lk_thumbnail_load (path, &error);
      g_assert_no_error (error);
      /* Face k's thumbnail shows its own photo's colour at its centre. */
      const guint8 *centre = t->pixels + 64 * t->stride + 64 * 4;
      guint32 want = colours[photo_of[k]];
      for (int c = 0; c < 3; c++)
        {
          int expected = (int) ((want >> (24 - 8 * c)) & 0xff);
          g_assert_cmpint (abs ((int) centre[c] - expected), <, 24);
        }
    }
  lk_import_summary_clear (&summary);
}

static void
test_stopped_early_writer_leaves_nothing (Folder *fx, gconstpointer data)
{
  const char *dir = fx->dir;
  g_autofree char *outdir = g_build_filename (dir, "library", NULL);
  LkImportSink sink = { NULL, NULL, NULL };
  LkImportSource source;
  lk_import_source_init (&source, "immich");
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_import_source_write_early (&source, outdir, &sink, NULL, &error));
  fill_source (&source, dir);
  /* A fifth photo: the four faces before it are handed to the workers. */
  lk_import_source_add_photo (&source)->source_id = g_strdup ("photo-3");
  /* The read failed: lk_import_finish is told so and removes everything. */
  g_assert_false (lk_import_finish (outdir, &source, FALSE, &sink, NULL, &error, "empty"));
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    g_assert_true (g_str_has_suffix (name, ".jpeg")); /* the photos only */
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import-thumbnails/denominator-keeps-128-pixels",
                   test_denominator_keeps_128_pixels);
  g_test_add ("/import-thumbnails/scaled-decode-cuts-the-same-crop", Folder, NULL, folder_setup,
              test_scaled_decode_cuts_the_same_crop, folder_teardown);
  g_test_add ("/import-thumbnails/region-decode-cuts-the-same-crops", Folder, NULL, folder_setup,
              test_region_decode_cuts_the_same_crops, folder_teardown);
#ifdef LK_TEST_HAVE_LIBJPEG
  g_test_add ("/import-thumbnails/region-decode-of-progressive-and-grey", Folder, NULL,
              folder_setup, test_region_decode_of_progressive_and_grey, folder_teardown);
#endif
  g_test_add_func ("/import-thumbnails/scaled-decode-on-real-photos",
                   test_scaled_decode_on_real_photos);
  g_test_add ("/import-thumbnails/png-is-decoded-whole", Folder, NULL, folder_setup,
              test_png_is_decoded_whole, folder_teardown);
  g_test_add ("/import-thumbnails/not-an-image-is-named", Folder, NULL, folder_setup,
              test_not_an_image_is_named, folder_teardown);
  g_test_add ("/import-thumbnails/early-writer-cuts-every-face", Folder, NULL, folder_setup,
              test_early_writer_cuts_every_face, folder_teardown);
  g_test_add ("/import-thumbnails/stopped-early-writer-leaves-nothing", Folder, NULL, folder_setup,
              test_stopped_early_writer_leaves_nothing, folder_teardown);
  return g_test_run ();
}
