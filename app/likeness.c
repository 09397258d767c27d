/* likeness — the GTK application */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "lk-application.h"

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  g_autoptr (LkApplication) app = lk_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
