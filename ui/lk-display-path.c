/* lk-display-path.c — a folder or file as a person reads it
 *
 * The window's title, its banner, its menu of recent libraries and the empty
 * page's list all name folders; they name them the same way.
 */
#include "config.h"

#include <string.h>

#include "lk-display-path.h"

char *
lk_display_name (const char *folder)
{
  g_autofree char *base = g_path_get_basename (folder);

  return g_filename_display_name (base);
}

char *
lk_display_path (const char *path)
{
  const char *home = g_get_home_dir ();
  gsize n = strlen (home);

  if (n > 1 && strncmp (path, home, n) == 0 && path[n] == G_DIR_SEPARATOR)
    {
      g_autofree char *rest = g_filename_display_name (path + n);
      return g_strconcat ("~", rest, NULL);
    }
  return g_filename_display_name (path);
}
