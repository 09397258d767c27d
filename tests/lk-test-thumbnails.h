/* lk-test-thumbnails.h — how far apart two 128-pixel face thumbnails are
 *
 * Two decoders of one JPEG (gdk-pixbuf's whole decode, the importer's own
 * libjpeg region decode, at 1/1 or 1/2) give the same square resampled by
 * different paths: apart at sharp edges only. These tell that from another
 * square (shifted or scaled), which differs all over.
 */
#pragma once

#include <stdlib.h>

#include <glib.h>

#include "library/lk-thumbnail.h"

/* The mean and the largest difference of a channel between two thumbnails,
 * `b` read `dx`, `dy` pixels off (the pixels both have). */
static inline double
difference_at (const LkThumbnail *a, const LkThumbnail *b, int dx, int dy, int *largest)
{
  double sum = 0;
  guint n = 0;
  *largest = 0;
  for (int y = MAX (0, -dy); y < 128 - MAX (0, dy); y++)
    for (int x = MAX (0, -dx); x < 128 - MAX (0, dx); x++)
      for (int c = 0; c < 3; c++)
        {
          int diff = abs ((int) a->pixels[y * a->stride + x * 4 + c]
                          - b->pixels[(y + dy) * b->stride + (x + dx) * 4 + c]);
          sum += diff;
          *largest = MAX (*largest, diff);
          n++;
        }
  return sum / n;
}

static inline double
difference (const LkThumbnail *a, const LkThumbnail *b, int *largest)
{
  return difference_at (a, b, 0, 0, largest);
}

/* The mean difference of the two thumbnails' 4 × 4-pixel averages: what
 * two resamplings of the same square leave apart is at its sharpest edges,
 * which the averages smooth out; another square (shifted, scaled) differs
 * all over. */
static inline double
block_difference (const LkThumbnail *a, const LkThumbnail *b)
{
  double sum = 0;
  for (guint by = 0; by < 32; by++)
    for (guint bx = 0; bx < 32; bx++)
      for (int c = 0; c < 3; c++)
        {
          int sa = 0, sb = 0;
          for (guint y = by * 4; y < by * 4 + 4; y++)
            for (guint x = bx * 4; x < bx * 4 + 4; x++)
              {
                sa += a->pixels[y * a->stride + x * 4 + c];
                sb += b->pixels[y * b->stride + x * 4 + c];
              }
          sum += abs (sa - sb) / 16.0;
        }
  return sum / (32 * 32 * 3);
}

/* TRUE when `b` matches `a` best as it is, not moved by a pixel or more in
 * any direction: the same square, however differently resampled. */
static inline gboolean
best_unmoved (const LkThumbnail *a, const LkThumbnail *b)
{
  int largest = 0;
  double here = difference_at (a, b, 0, 0, &largest);
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++)
      if ((dx != 0 || dy != 0) && difference_at (a, b, dx, dy, &largest) < here)
        return FALSE;
  return TRUE;
}
