/* lk-review-location.c — the remembered review.json of read-only libraries
 *
 * A plain key file in the user's configuration folder rather than GSettings:
 * the engine (and so likeness-cli, which has no GSettings schema when run
 * uninstalled) must find the same association as the window, and GLib's key
 * file needs nothing but GLib. The file is tiny (one group per read-only
 * library the user ever saved elsewhere) and rewritten whole, atomically
 * (g_key_file_save_to_file → g_file_set_contents).
 */
#include "config.h"

#include <errno.h>

#include <glib/gstdio.h>

#include "lk-review-location.h"

#define REVIEW_FILE "review.json"

static char *
store_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "likeness", "review-locations.ini", NULL);
}

static char *
group_for (const char *folder)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, folder, -1);

  return g_strconcat ("library ", digest, NULL);
}

char *
lk_review_location_lookup (const char *folder)
{
  g_return_val_if_fail (folder != NULL, NULL);

  g_autofree char *path = store_path ();
  g_autoptr (GKeyFile) keys = g_key_file_new ();
  if (!g_key_file_load_from_file (keys, path, G_KEY_FILE_NONE, NULL))
    return NULL;
  g_autofree char *group = group_for (folder);
  g_autofree char *stored_folder = g_key_file_get_string (keys, group, "folder", NULL);
  char *review = g_key_file_get_string (keys, group, "review", NULL);
  /* A digest collision, or a hand-edited file: only an exact folder counts. */
  if (g_strcmp0 (stored_folder, folder) != 0 || review == NULL || !g_path_is_absolute (review))
    {
      g_free (review);
      return NULL;
    }
  return review;
}

gboolean
lk_review_location_remember (const char *folder, const char *review_path, GError **error)
{
  g_return_val_if_fail (folder != NULL, FALSE);
  g_return_val_if_fail (review_path == NULL || g_path_is_absolute (review_path), FALSE);

  g_autofree char *path = store_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr (GKeyFile) keys = g_key_file_new ();
  g_autoptr (GError) load_error = NULL;
  if (!g_key_file_load_from_file (keys, path, G_KEY_FILE_KEEP_COMMENTS, &load_error)
      && !g_error_matches (load_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "could not read %s to remember where the decisions are saved: %s", path,
                   load_error->message);
      return FALSE;
    }

  g_autofree char *group = group_for (folder);
  if (review_path == NULL)
    {
      if (!g_key_file_has_group (keys, group))
        return TRUE;
      g_key_file_remove_group (keys, group, NULL);
    }
  else
    {
      g_key_file_set_string (keys, group, "folder", folder);
      g_key_file_set_string (keys, group, "review", review_path);
    }

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "could not create %s to remember where the decisions are saved: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }
  g_autoptr (GError) save_error = NULL;
  if (!g_key_file_save_to_file (keys, path, &save_error))
    {
      g_set_error (error, G_FILE_ERROR, save_error->code,
                   "could not remember where the decisions are saved: %s", save_error->message);
      return FALSE;
    }
  return TRUE;
}

char *
lk_review_location_resolve (const char *folder, char **start)
{
  g_return_val_if_fail (folder != NULL, NULL);

  g_autofree char *own = g_build_filename (folder, REVIEW_FILE, NULL);
  g_autofree char *remembered = lk_review_location_lookup (folder);
  if (start != NULL)
    *start = g_strdup (
        remembered != NULL && g_file_test (remembered, G_FILE_TEST_EXISTS) ? remembered : own);
  return remembered != NULL ? g_steal_pointer (&remembered) : g_steal_pointer (&own);
}
