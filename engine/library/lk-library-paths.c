/* lk-library-paths.c — paths in the library checked and resolved, thumbnails, photos outside
 *
 * Each thumbnail directory is resolved once (realpath) and read once (readdir
 * gives each entry's type): only a face whose file is a symbolic link costs a
 * realpath. One lstat per face instead cost as much as half the parse for
 * 100 000 faces; fstatat relative to the directory saved only a quarter of
 * it. */
#include "config.h"

#include "lk-library-private.h"
#include "lk-sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ── Paths ───────────────────────────────────────────────────────────────── */

/* TRUE when `path` (absolute, without symlinks) is `root` or below it. */
static gboolean
is_within (const char *root, const char *path)
{
  gsize n = strlen (root);
  if (n == 1)
    return TRUE; /* the root is "/" */
  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* realpath(3) into GLib memory. */
char *
lk_library_real_path (const char *path)
{
  char *real = realpath (path, NULL);
  if (real == NULL)
    return NULL;
  char *copy = g_strdup (real);
  free (real);
  return copy;
}

gboolean
lk_library_too_long (const char *manifest, gsize length, const char *field, GError **error)
{
  g_autofree char *length_text = lk_library_group_digits (length);
  return lk_library_fail (
      error, LK_LIBRARY_ERROR_PATH, manifest,
      "%s is a path of %s bytes; a path inside the library may be at most %d bytes", field,
      length_text, PATH_LENGTH_LIMIT);
}

/* TRUE when `path` has a ".." component. */
gboolean
lk_library_goes_up (const char *path)
{
  for (const char *part = path; part != NULL;)
    {
      const char *slash = strchr (part, '/');
      gsize length = slash != NULL ? (gsize) (slash - part) : strlen (part);
      if (length == 2 && part[0] == '.' && part[1] == '.')
        return TRUE;
      part = slash != NULL ? slash + 1 : NULL;
    }
  return FALSE;
}

/* The checks that need no file system: not too long, not empty, not
 * absolute, no "..". `inside` names the folder the path is relative to. */
gboolean
lk_library_check_relative (const char *manifest, const char *relative, const char *field,
                           const char *inside, GError **error)
{
  if (strnlen (relative, PATH_LENGTH_LIMIT + 1) > PATH_LENGTH_LIMIT)
    return lk_library_too_long (manifest, strlen (relative), field, error);
  if (*relative == '\0')
    return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                            "%s is empty; it must name a file", field);
  if (g_path_is_absolute (relative))
    return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                            "%s is the absolute path “%s”; paths must be relative to %s", field,
                            relative, inside);
  if (lk_library_goes_up (relative))
    return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                            "%s (“%s”) goes up with “..”; paths must stay inside %s", field,
                            relative, inside);
  return TRUE;
}

gboolean
lk_library_relative_path_ok (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);
  return lk_library_check_relative ("", path, "", "", NULL);
}

gboolean
lk_library_check_lexically (const char *manifest, const char *relative, const char *field,
                            GError **error)
{
  return lk_library_check_relative (manifest, relative, field, "the library folder", error);
}

static gboolean
leads_outside (const char *manifest, const char *field, const char *relative, const char *where,
               GError **error)
{
  return lk_library_fail (
      error, LK_LIBRARY_ERROR_PATH, manifest,
      "%s (“%s”) leads outside the library folder, to “%s”, through a symbolic link", field,
      relative, where);
}

/* `joined` is root/relative and passed the lexical checks. Follows symlinks:
 * an existing path must end inside `root`; for a missing one, its deepest
 * existing ancestor must, and a dangling symlink must point inside. A path
 * that cannot be resolved at all (a folder that cannot be searched, a loop of
 * symbolic links) is an error, unless `unresolvable` is given: then it gets
 * the errno and the path passes, for the caller never to open it. */
gboolean
lk_library_check_symlinks (const char *manifest, const char *root, const char *joined,
                           const char *relative, const char *field, int *unresolvable,
                           GError **error)
{
  g_autofree char *real = lk_library_real_path (joined);
  if (real != NULL)
    return is_within (root, real) || leads_outside (manifest, field, relative, real, error);
  if (errno != ENOENT && errno != ENOTDIR && unresolvable != NULL)
    {
      *unresolvable = errno;
      return TRUE;
    }
  if (errno != ENOENT && errno != ENOTDIR)
    return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                            "%s (“%s”) cannot be resolved: %s", field, relative,
                            g_strerror (errno));

  g_autofree char *child = g_strdup (joined);
  for (;;)
    {
      g_autofree char *parent = g_path_get_dirname (child);
      g_autofree char *real_parent = lk_library_real_path (parent);
      if (real_parent == NULL)
        {
          if (errno != ENOENT && errno != ENOTDIR && unresolvable != NULL)
            {
              *unresolvable = errno;
              return TRUE;
            }
          if (errno != ENOENT && errno != ENOTDIR)
            return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                                    "%s (“%s”) cannot be resolved: %s", field, relative,
                                    g_strerror (errno));
          g_free (child);
          child = g_steal_pointer (&parent);
          continue;
        }
      if (!is_within (root, real_parent))
        return leads_outside (manifest, field, relative, real_parent, error);
      g_autofree char *target = g_file_read_link (child, NULL);
      if (target != NULL)
        {
          g_autofree char *points_to = g_canonicalize_filename (target, real_parent);
          if (!is_within (root, points_to))
            return leads_outside (manifest, field, relative, points_to, error);
        }
      return TRUE;
    }
}

char *
lk_library_resolve_path (const char *folder, const char *relative, const char *field,
                         GError **error)
{
  g_return_val_if_fail (folder != NULL && relative != NULL && field != NULL, NULL);

  g_autofree char *root = lk_library_real_path (folder);
  if (root == NULL)
    {
      int saved = errno;
      g_autofree char *hint = saved == ENOENT ? lk_sandbox_hint (folder) : NULL;
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot open the library folder “%s”: %s.%s", folder, g_strerror (saved),
                   hint != NULL ? hint : "");
      return NULL;
    }
  g_autofree char *manifest = g_build_filename (root, MANIFEST_NAME, NULL);
  if (!lk_library_check_lexically (manifest, relative, field, error))
    return NULL;
  g_autofree char *joined = g_build_filename (root, relative, NULL);
  if (!lk_library_check_symlinks (manifest, root, joined, relative, field, NULL, error))
    return NULL;
  return g_steal_pointer (&joined);
}

void
lk_library_thumb_dir_free (gpointer data)
{
  ThumbDir *dir = data;
  g_clear_pointer (&dir->links, g_hash_table_unref);
  g_free (dir);
}

/* One readdir instead of one lstat per face: the type is in the entry. */
static void
list_symlinks (const char *path, ThumbDir *dir)
{
  DIR *stream = opendir (path);
  struct dirent *entry;

  if (stream == NULL)
    {
      /* A missing directory holds no links; an unreadable one is checked
       * file by file. */
      dir->listed = errno == ENOENT || errno == ENOTDIR;
      return;
    }
  dir->listed = TRUE;
  while ((entry = readdir (stream)) != NULL)
    {
      struct stat st;
      gboolean is_link = entry->d_type == DT_LNK;
      if (entry->d_type == DT_UNKNOWN)
        is_link = fstatat (dirfd (stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                  && S_ISLNK (st.st_mode);
      if (!is_link)
        continue;
      if (dir->links == NULL)
        dir->links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_add (dir->links, g_strdup (entry->d_name));
    }
  closedir (stream);
}

static ThumbDir *
find_thumb_dir (Loader *loader, const char *relative, gsize dir_length, gsize face, GError **error)
{
  const char *root = loader->library->folder;
  char *key;
  ThumbDir *dir;

  if (loader->last_key != NULL && strncmp (loader->last_key, relative, dir_length) == 0
      && loader->last_key[dir_length] == '\0')
    return loader->last_dir;

  g_string_truncate (loader->path, 0);
  g_string_append_len (loader->path, relative, (gssize) dir_length);
  if (!g_hash_table_lookup_extended (loader->dirs, loader->path->str, (gpointer *) &key,
                                     (gpointer *) &dir))
    {
      g_autofree char *absolute
          = dir_length > 0 ? g_strconcat (root, "/", loader->path->str, NULL) : g_strdup (root);
      if (dir_length > 0)
        {
          g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
          int unreadable = 0;
          if (!lk_library_check_symlinks (loader->manifest, root, absolute, relative, field,
                                          &unreadable, error))
            return NULL;
          dir = g_new0 (ThumbDir, 1);
          dir->unreadable = unreadable;
        }
      else
        dir = g_new0 (ThumbDir, 1);
      if (dir->unreadable == 0)
        list_symlinks (absolute, dir);
      key = g_strdup (loader->path->str);
      g_hash_table_insert (loader->dirs, key, dir);
    }
  loader->last_key = key;
  loader->last_dir = dir;
  return dir;
}

/* Face i's thumbnail cannot be resolved (say, its folder is unreadable): not
 * a reason to refuse the whole library; it is shown with a placeholder, and the
 * library carries one warning for all such faces. */
static void
thumbnail_unreadable (Loader *loader, const char *relative, int saved)
{
  if (loader->unreadable_thumbnails++ == 0)
    {
      loader->unreadable_path = g_string_chunk_insert (loader->library->strings, relative);
      loader->unreadable_errno = saved;
    }
}

void
lk_library_set_thumbnail_warning (Loader *loader)
{
  gsize n = loader->unreadable_thumbnails;
  if (n == 0)
    return;
  g_autofree char *count = lk_library_group_digits (n);
  loader->library->thumbnail_warning = g_strdup_printf (
      "%s face%s shown without %s thumbnail%s: “%s”%s cannot be read (%s)", count,
      n == 1 ? " is" : "s are", n == 1 ? "its" : "their", n == 1 ? "" : "s",
      loader->unreadable_path, n == 1 ? "" : ", the first of them,",
      g_strerror (loader->unreadable_errno));
}

/* lk_library_resolve_path for face i's thumbnail, without a system call or an
 * allocation in the common case: a directory seen before, and a file in it
 * that is not a symbolic link. *usable is FALSE when the path cannot be
 * resolved at all (thumbnail_unreadable). */
gboolean
lk_library_check_thumbnail (Loader *loader, const char *relative, gsize face, gboolean *usable,
                            GError **error)
{
  *usable = TRUE;
  const char *slash = strrchr (relative, '/');
  gsize dir_length = slash != NULL ? (gsize) (slash - relative) : 0;
  const char *name = slash != NULL ? slash + 1 : relative;

  if (G_UNLIKELY (*relative == '\0' || relative[0] == '/' || strstr (relative, "..") != NULL
                  || dir_length >= PATH_LENGTH_LIMIT || strlen (name) > PATH_LENGTH_LIMIT))
    {
      g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
      if (!lk_library_check_lexically (loader->manifest, relative, field, error))
        return FALSE;
    }

  ThumbDir *dir = find_thumb_dir (loader, relative, dir_length, face, error);
  if (dir == NULL)
    return FALSE;
  if (G_LIKELY (dir->listed && (dir->links == NULL || !g_hash_table_contains (dir->links, name))))
    return TRUE;
  int unreadable = dir->unreadable;
  if (unreadable == 0)
    {
      /* A folder that cannot be listed may still open its files by name. */
      g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
      g_autofree char *path = g_build_filename (loader->library->folder, relative, NULL);
      if (!lk_library_check_symlinks (loader->manifest, loader->library->folder, path, relative,
                                      field, &unreadable, error))
        return FALSE;
    }
  if (unreadable != 0)
    {
      thumbnail_unreadable (loader, relative, unreadable);
      *usable = FALSE;
    }
  return TRUE;
}

/* ── Photos outside the library ──────────────────────────────────────────── */

gboolean
lk_path_map_parse (const char *text, LkPathMap *map, GError **error)
{
  const char *equals = strrchr (text, '=');
  if (equals == NULL || equals == text || equals[1] == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "“%s” is not a mapping: write PREFIX=DIR, the folder as the library names it "
                   "(the server's, say /usr/src/app/upload), then where it is here",
                   text);
      return FALSE;
    }
  g_autofree char *from = g_strndup (text, (gsize) (equals - text));
  if (!g_path_is_absolute (from) || lk_library_goes_up (from))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "In the mapping “%s”, the prefix “%s” must be an absolute path without “..”",
                   text, from);
      return FALSE;
    }
  gsize length = strlen (from);
  while (length > 1 && from[length - 1] == '/')
    from[--length] = '\0';
  map->from = g_steal_pointer (&from);
  map->to = g_canonicalize_filename (equals + 1, NULL);
  return TRUE;
}

void
lk_path_map_clear (LkPathMap *map)
{
  g_clear_pointer (&map->from, g_free);
  g_clear_pointer (&map->to, g_free);
}

/* `path` through the first map whose prefix it starts with (whole
 * components), or NULL when none does. */
static char *
map_path (const char *path, const LkPathMap *maps, gsize n_maps)
{
  for (gsize k = 0; k < n_maps; k++)
    {
      const char *from = maps[k].from;
      gsize length = strlen (from);
      if (strcmp (from, "/") == 0)
        return g_build_filename (maps[k].to, path, NULL);
      if (strncmp (path, from, length) == 0 && (path[length] == '\0' || path[length] == '/'))
        return g_build_filename (maps[k].to, path + length, NULL);
    }
  return NULL;
}

char *
lk_library_photo_file (const LkLibrary *library, const LkPhoto *photo, const LkPathMap *maps,
                       gsize n_maps, GError **error)
{
  g_return_val_if_fail (library != NULL && photo != NULL, NULL);
  if (photo->path != NULL)
    return lk_library_resolve_path (library->folder, photo->path, "photos[].path", error);
  char *mapped = NULL;
  if (photo->original != NULL && photo->folder < library->n_photo_folders)
    {
      g_autofree char *named
          = g_build_filename (library->photo_folders[photo->folder], photo->original, NULL);
      mapped = map_path (named, maps, n_maps);
      if (mapped == NULL)
        return g_steal_pointer (&named);
    }
  else if (photo->source_path != NULL)
    {
      mapped = g_path_is_absolute (photo->source_path) ? map_path (photo->source_path, maps, n_maps)
                                                       : NULL;
      if (mapped == NULL)
        {
          g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_UNMAPPED,
                       "The photo is %s on the server the library was imported from; no folder "
                       "mapping covers it (map the server's folder to this computer's: "
                       "--map PREFIX=DIR)",
                       photo->source_path);
          return NULL;
        }
    }
  else
    return NULL;
  /* A mapped path is written beside (a sidecar): one that climbs out of the
   * folder it was mapped to is refused, whatever the manifest says. */
  if (lk_library_goes_up (mapped))
    {
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_PATH,
                   "The photo's path %s goes up with “..”; it is not opened", mapped);
      g_free (mapped);
      return NULL;
    }
  return mapped;
}
