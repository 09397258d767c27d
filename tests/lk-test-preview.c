/* lk-test-preview.c — see lk-test-preview.h */
#include "config.h"

#include "lk-test-preview.h"

#include <string.h>

const char *const lk_test_preview_names[LK_TEST_PREVIEW_NAMED] = {
  "Ada Lovelace",      "Grace Hopper",     "Alan Turing",   "Emmy Noether",
  "Katherine Johnson", "John von Neumann", "Hedy Lamarr",   "Claude Shannon",
  "Barbara Liskov",    "Edsger Dijkstra",  "Frances Allen", "Donald Knuth",
};

GHashTable *
lk_test_preview_faces_by_photo (const LkLibrary *library)
{
  GHashTable *faces_of = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  for (gsize f = 0; f < library->count; f++)
    {
      gpointer photo_key = GSIZE_TO_POINTER (library->photo[f] + 1);
      GArray *list = g_hash_table_lookup (faces_of, photo_key);
      if (list == NULL)
        g_hash_table_insert (faces_of, photo_key,
                             list = g_array_new (FALSE, FALSE, sizeof (gsize)));
      g_array_append_val (list, f);
    }
  return faces_of;
}

static GHashTable *label_sizes;

static int
by_size (gconstpointer a, gconstpointer b)
{
  const char *la = *(const char *const *) a, *lb = *(const char *const *) b;
  guint sa = GPOINTER_TO_UINT (g_hash_table_lookup (label_sizes, la));
  guint sb = GPOINTER_TO_UINT (g_hash_table_lookup (label_sizes, lb));
  return sa != sb ? (sa > sb ? -1 : 1) : strcmp (la, lb);
}

GPtrArray *
lk_test_preview_largest_labels (const LkLibrary *library, guint n)
{
  g_autoptr (GHashTable) sizes = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize f = 0; f < library->count; f++)
    if (library->label[f] != NULL)
      g_hash_table_insert (
          sizes, library->label[f],
          GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (sizes, library->label[f])) + 1));
  GPtrArray *labels = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, sizes);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (labels, key);
  label_sizes = sizes;
  g_ptr_array_sort (labels, by_size);
  label_sizes = NULL;
  if (labels->len > n)
    g_ptr_array_set_size (labels, n);
  return labels;
}

void
lk_test_preview_size (const LkPhoto *photo, int side, int *width, int *height)
{
  gboolean wide = photo->width >= photo->height;
  *width = wide ? side : (int) (side * photo->width / photo->height);
  *height = wide ? (int) (side * photo->height / photo->width) : side;
}

/* A grey backdrop with fine noise: a flat image decodes far faster than a
 * photo, which would flatter the importer. */
static GdkPixbuf *
backdrop (int width, int height, guint32 seed)
{
  GdkPixbuf *image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  int stride = gdk_pixbuf_get_rowstride (image);
  guint8 *pixels = gdk_pixbuf_get_pixels (image);
  guint32 state = seed * 2654435761u + 1;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        state = state * 1664525u + 1013904223u;
        guint8 base = (guint8) (90 + (x + y) * 80 / (width + height));
        guint8 v = (guint8) (base + (state >> 28));
        guint8 *p = pixels + (gsize) y * stride + x * 3;
        p[0] = v;
        p[1] = v;
        p[2] = (guint8) (v + 10);
      }
  return image;
}

GdkPixbuf *
lk_test_preview_paint (const LkLibrary *library, const LkPhoto *photo, const GArray *faces,
                       int width, int height, int (*boxes)[4])
{
  double scale = (double) width / photo->width;
  GdkPixbuf *image = backdrop (width, height, (guint32) photo->id);
  for (guint k = 0; k < faces->len; k++)
    {
      gsize f = g_array_index (faces, gsize, k);
      int x = (int) (library->box[f][0] * scale), y = (int) (library->box[f][1] * scale);
      int w = MAX ((int) (library->box[f][2] * scale), 1);
      int h = MAX ((int) (library->box[f][3] * scale), 1);
      w = MIN (w, width - x);
      h = MIN (h, height - y);
      g_autofree char *thumb = lk_library_thumbnail_path (library, f);
      g_autoptr (GdkPixbuf) face
          = thumb != NULL ? gdk_pixbuf_new_from_file_at_scale (thumb, w, h, FALSE, NULL) : NULL;
      if (face != NULL && x >= 0 && y >= 0 && w > 0 && h > 0)
        gdk_pixbuf_composite (face, image, x, y, w, h, x, y, 1, 1, GDK_INTERP_BILINEAR, 255);
      boxes[k][0] = x;
      boxes[k][1] = y;
      boxes[k][2] = w;
      boxes[k][3] = h;
    }
  return image;
}
