/* fuzz-library — lk_library_load on an arbitrary library.json and embeddings file
 *
 * The loader reads a folder (it maps files and resolves paths against it), so
 * each input is written into one scratch folder, on tmpfs when there is one:
 * the bytes before the first NUL become library.json, the bytes after it
 * embeddings.f32 (no NUL: no embeddings file). Anything may be refused with a
 * LK_LIBRARY_ERROR naming what is wrong; what is accepted must hold every rule
 * of LIBRARY-FORMAT.md that a caller relies on.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "library/lk-library.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static char *folder;
static char *manifest_path;
static char *embeddings_path;

static void
remove_folder (void)
{
  g_remove (manifest_path);
  g_remove (embeddings_path);
  g_rmdir (folder);
}

static void
make_folder (void)
{
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  g_autofree char *template = g_build_filename (base, "likeness-fuzz-library-XXXXXX", NULL);

  folder = g_mkdtemp (g_steal_pointer (&template));
  g_assert_nonnull (folder);
  manifest_path = g_build_filename (folder, "library.json", NULL);
  embeddings_path = g_build_filename (folder, "embeddings.f32", NULL);
  atexit (remove_folder);
}

/* Removes the old file first: GLib 2.74's G_FILE_SET_CONTENTS_NONE writes in
 * place without truncating, so a shorter input would keep the tail of the
 * previous one (this made most early fuzz-library inputs garbage). */
static void
write_file (const char *path, const guint8 *data, gsize length)
{
  g_autoptr (GError) error = NULL;

  g_remove (path);
  g_file_set_contents_full (path, (const char *) data, length, G_FILE_SET_CONTENTS_NONE, 0644,
                            &error);
  g_assert_no_error (error);
}

static void
check_library (const LkLibrary *library)
{
  g_assert_cmpuint (library->dim, >=, 1);
  g_assert_cmpuint (library->dim, <=, LK_LIBRARY_MAX_DIM);
  g_assert_cmpuint (strlen (library->fingerprint), ==, 64);
  g_assert_true (library->min_probability > 0 && library->min_probability < 1);

  for (gsize i = 0; i < library->count; i++)
    {
      const float *row = lk_library_row (library, i);
      double norm = 0;
      for (guint k = 0; k < library->dim; k++)
        {
          g_assert_true (isfinite (row[k]));
          norm += (double) row[k] * row[k];
        }
      g_assert_cmpfloat (fabs (sqrt (norm) - 1), <=, 1e-3);
      g_assert_true (isfinite (library->crop_px[i]) && library->crop_px[i] > 0);
      g_assert_true (library->quality[i] >= 0 && library->quality[i] <= 1);
      g_assert_cmpuint (library->gallery[i], <=, 1);
      g_assert_cmpuint (library->photo[i], <, G_GUINT64_CONSTANT (1) << 53);

      g_autofree char *thumbnail = lk_library_thumbnail_path (library, i);
      g_assert_true ((thumbnail == NULL) == (library->thumbnail[i] == NULL));
      if (thumbnail != NULL)
        g_assert_true (g_str_has_prefix (thumbnail, library->folder));

      const LkPhoto *photo = lk_library_find_photo (library, library->photo[i]);
      if (photo != NULL)
        g_assert_cmpuint (photo->id, ==, library->photo[i]);
    }
  for (gsize p = 0; p < library->n_photos; p++)
    g_assert_true (lk_library_find_photo (library, library->photos[p].id) != NULL);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  if (folder == NULL)
    make_folder ();

  const guint8 *nul = size > 0 ? memchr (data, 0, size) : NULL;
  gsize manifest_length = nul ? (gsize) (nul - data) : size;
  write_file (manifest_path, data, manifest_length);
  if (nul != NULL)
    write_file (embeddings_path, nul + 1, size - manifest_length - 1);
  else
    g_remove (embeddings_path);

  GError *error = NULL;
  LkLibrary *library = lk_library_load (folder, &error);
  if (library == NULL)
    {
      g_assert_nonnull (error);
      g_assert_true (error->domain == LK_LIBRARY_ERROR);
      g_assert_cmpstr (error->message, !=, "");
      g_error_free (error);
      return 0;
    }
  g_assert_null (error);
  check_library (library);
  lk_library_free (library);
  return 0;
}
