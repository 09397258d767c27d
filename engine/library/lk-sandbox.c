/* lk-sandbox.c — "not there, or outside what this Flatpak may see" */
#include "config.h"

#include "lk-sandbox.h"

#include <string.h>

/* The folder to grant: the path's parent when it names a file (a photo or
 * library.json), the path itself when it looks like a folder (no dot in its
 * last part: library folders and photo folders rarely have one). */
static char *
folder_to_grant (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  if (strchr (base, '.') == NULL)
    return g_strdup (path);
  return g_path_get_dirname (path);
}

char *
lk_sandbox_hint_from (const char *info, const char *path)
{
  g_return_val_if_fail (info != NULL && path != NULL, NULL);

  if (!g_file_test (info, G_FILE_TEST_EXISTS))
    return NULL;
  g_autoptr (GKeyFile) keys = g_key_file_new ();
  g_autofree char *app = NULL;
  g_autofree char *filesystems = NULL;
  if (g_key_file_load_from_file (keys, info, G_KEY_FILE_NONE, NULL))
    {
      app = g_key_file_get_string (keys, "Application", "name", NULL);
      filesystems = g_key_file_get_string (keys, "Context", "filesystems", NULL);
    }
  if (app == NULL)
    app = g_strdup (APP_ID);
  /* "xdg-pictures:ro;" → "xdg-pictures:ro" */
  g_autoptr (GString) granted = g_string_new (NULL);
  if (filesystems != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (filesystems, ";", -1);
      for (char **p = parts; *p != NULL; p++)
        if (**p != '\0')
          g_string_append_printf (granted, "%s%s", granted->len > 0 ? ", " : "", *p);
    }
  g_autofree char *folder = folder_to_grant (path);
  return g_strdup_printf (" Likeness runs as a Flatpak, which sees only the folders it was "
                          "granted (%s) and those opened through the file chooser: if %s "
                          "exists on this computer, it is outside them. To let Likeness see it: "
                          "flatpak override --user --filesystem=%s:ro %s (without “:ro” where "
                          "Likeness should write: a library whose review.json is saved in "
                          "place, photos that get XMP sidecars).",
                          granted->len > 0 ? granted->str : "none", path, folder, app);
}

char *
lk_sandbox_hint (const char *path)
{
  return lk_sandbox_hint_from ("/.flatpak-info", path);
}
