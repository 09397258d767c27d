/* likeness — the GTK application */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>

#include "lk-application.h"

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* `meson devenv` points this at the catalogues built in the build folder,
   * so an uninstalled run is translated too. */
  const char *localedir = g_getenv ("LIKENESS_LOCALEDIR");
  bindtextdomain (GETTEXT_PACKAGE, localedir != NULL && *localedir ? localedir : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  /* Without its schema GSettings aborts; say what to do instead. */
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema
      = source != NULL ? g_settings_schema_source_lookup (source, APP_ID, TRUE) : NULL;
  if (schema == NULL)
    {
      fprintf (stderr,
               "likeness: the settings schema %s is not installed. Run Likeness from the build "
               "folder with “meson devenv -C _build likeness”, or install it with "
               "“meson install -C _build”.\n",
               APP_ID);
      return 1;
    }

  g_autoptr (LkApplication) app = lk_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
