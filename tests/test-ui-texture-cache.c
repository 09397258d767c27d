/* test-ui-texture-cache — thumbnails become textures off the main thread, failures are states
 *
 * Needs no display: GdkMemoryTexture is plain data. The fixtures are written
 * with the engine's own encoder, so a decoded texture's size and first pixel
 * can be checked exactly.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "lk-texture-cache.h"
#include "library/lk-thumbnail.h"

typedef struct
{
  char *dir;
  LkTextureCache *cache;
  GPtrArray *loaded; /* paths, in the order "loaded" named them */
} Fixture;

static void
on_loaded (LkTextureCache *cache, const char *path, gpointer user_data)
{
  g_ptr_array_add (((Fixture *) user_data)->loaded, g_strdup (path));
}

static void
fixture_set_up (Fixture *f, gconstpointer capacity)
{
  f->dir = g_dir_make_tmp ("lk-texture-cache-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->cache = lk_texture_cache_new (GPOINTER_TO_UINT (capacity));
  f->loaded = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->cache, "loaded", G_CALLBACK (on_loaded), f);
}

static void
fixture_tear_down (Fixture *f, gconstpointer capacity)
{
  g_clear_object (&f->cache);
  g_ptr_array_unref (f->loaded);
  g_autoptr (GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
}

static char *
write_png (Fixture *f, const char *name, guint width, guint height, guint8 red)
{
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_new (width, height);
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (f->dir, name, NULL);

  for (gsize k = 0; k < thumbnail->stride * height; k += 4)
    {
      thumbnail->pixels[k] = red;
      thumbnail->pixels[k + 3] = 255;
    }
  g_assert_true (lk_thumbnail_save (thumbnail, path, &error));
  g_assert_no_error (error);
  return path;
}

static gboolean
was_loaded (Fixture *f, const char *path)
{
  for (guint k = 0; k < f->loaded->len; k++)
    if (g_str_equal (g_ptr_array_index (f->loaded, k), path))
      return TRUE;
  return FALSE;
}

static void
wait_loaded (Fixture *f, const char *path)
{
  while (!was_loaded (f, path))
    g_main_context_iteration (NULL, TRUE);
}

static void
test_decodes_to_texture (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_png (f, "a.png", 40, 30, 200);
  LkTextureState state;

  /* A miss answers at once, without a texture, and loads in the background. */
  g_assert_null (lk_texture_cache_lookup (f->cache, path, &state));
  g_assert_cmpint (state, ==, LK_TEXTURE_LOADING);
  wait_loaded (f, path);

  GdkTexture *texture = lk_texture_cache_lookup (f->cache, path, &state);
  g_assert_cmpint (state, ==, LK_TEXTURE_READY);
  g_assert_nonnull (texture);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, 40);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, 30);

  g_autofree guint8 *pixel = g_malloc (40 * 30 * 4);
  gdk_texture_download (texture, pixel, 40 * 4);
  /* GdkTexture downloads premultiplied B8G8R8A8 (Cairo's ARGB32, little-endian). */
  g_assert_cmpuint (pixel[2], ==, 200);
  g_assert_cmpuint (pixel[3], ==, 255);

  /* A hit is the same texture, with no second load. */
  g_assert_true (lk_texture_cache_lookup (f->cache, path, &state) == texture);
  g_assert_cmpuint (f->loaded->len, ==, 1);
}

static void
test_missing_and_broken (Fixture *f, gconstpointer data)
{
  g_autofree char *missing = g_build_filename (f->dir, "missing.png", NULL);
  g_autofree char *broken = g_build_filename (f->dir, "broken.png", NULL);
  LkTextureState state;

  g_assert_true (g_file_set_contents (broken, "\x89PNG\r\n\x1a\nnot really", 18, NULL));

  /* No thumbnail at all: missing at once, nothing to load. */
  g_assert_null (lk_texture_cache_lookup (f->cache, NULL, &state));
  g_assert_cmpint (state, ==, LK_TEXTURE_MISSING);

  lk_texture_cache_lookup (f->cache, missing, &state);
  lk_texture_cache_lookup (f->cache, broken, &state);
  wait_loaded (f, missing);
  wait_loaded (f, broken);

  g_assert_null (lk_texture_cache_lookup (f->cache, missing, &state));
  g_assert_cmpint (state, ==, LK_TEXTURE_MISSING);
  g_assert_null (lk_texture_cache_lookup (f->cache, broken, &state));
  g_assert_cmpint (state, ==, LK_TEXTURE_BROKEN);
  /* The reason names the file, for the tile's tooltip. */
  g_assert_nonnull (strstr (lk_texture_cache_get_error (f->cache, broken), "broken.png"));
  /* Failures are cached like textures: no second read. */
  g_assert_cmpuint (f->loaded->len, ==, 2);
}

static void
test_least_recently_used_evicted (Fixture *f, gconstpointer data)
{
  g_autofree char *a = write_png (f, "a.png", 8, 8, 1);
  g_autofree char *b = write_png (f, "b.png", 8, 8, 2);
  g_autofree char *c = write_png (f, "c.png", 8, 8, 3);
  LkTextureState state;

  lk_texture_cache_lookup (f->cache, a, &state);
  wait_loaded (f, a);
  lk_texture_cache_lookup (f->cache, b, &state);
  wait_loaded (f, b);
  /* a is used again, so b is now the least recently used. */
  lk_texture_cache_lookup (f->cache, a, &state);
  lk_texture_cache_lookup (f->cache, c, &state);
  wait_loaded (f, c);

  g_assert_cmpuint (lk_texture_cache_get_size (f->cache), ==, 2);
  g_assert_nonnull (lk_texture_cache_lookup (f->cache, a, &state));
  g_assert_nonnull (lk_texture_cache_lookup (f->cache, c, &state));
  g_assert_null (lk_texture_cache_lookup (f->cache, b, &state));
  g_assert_cmpint (state, ==, LK_TEXTURE_LOADING);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/ui-texture-cache/decodes-to-texture", Fixture, GUINT_TO_POINTER (0), fixture_set_up,
              test_decodes_to_texture, fixture_tear_down);
  g_test_add ("/ui-texture-cache/missing-and-broken", Fixture, GUINT_TO_POINTER (0), fixture_set_up,
              test_missing_and_broken, fixture_tear_down);
  g_test_add ("/ui-texture-cache/least-recently-used-evicted", Fixture, GUINT_TO_POINTER (2),
              fixture_set_up, test_least_recently_used_evicted, fixture_tear_down);
  return g_test_run ();
}
