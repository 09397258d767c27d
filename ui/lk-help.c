/* lk-help.c — the user's help (the pages in help/C), opened in the help viewer
 *
 * The help is installed by meson's gnome.yelp under the project's name, so
 * "help:likeness" is its index and "help:likeness/PAGE" one page; the desktop
 * hands a help: URI to Yelp (or whatever handles it). F1 and the main menu's
 * Help open the index (app.help); a banner or error page opens the page that
 * explains it (app.help-page, with the page's id).
 *
 * LIKENESS_HELP_URI_LOG=FILE appends each URI to FILE instead of launching
 * it: the display tests check what would be opened without a help viewer.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lk-help.h"

#define HELP_ID "likeness"

/* "help:likeness", or "help:likeness/PAGE" for a page's id. */
char *
lk_help_uri (const char *page)
{
  if (page == NULL || page[0] == '\0' || strcmp (page, "index") == 0)
    return g_strdup ("help:" HELP_ID);
  return g_strdup_printf ("help:" HELP_ID "/%s", page);
}

static gboolean
log_uri (const char *path, const char *uri)
{
  FILE *log = fopen (path, "a");

  if (log == NULL)
    {
      g_warning ("Cannot open LIKENESS_HELP_URI_LOG %s: %s", path, g_strerror (errno));
      return FALSE;
    }
  fprintf (log, "%s\n", uri);
  return fclose (log) == 0;
}

#if GTK_CHECK_VERSION(4, 10, 0)
static void
on_launched (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *uri = user_data;

  if (!gtk_uri_launcher_launch_finish (GTK_URI_LAUNCHER (source), result, &error)
      && !g_error_matches (error, GTK_DIALOG_ERROR, GTK_DIALOG_ERROR_DISMISSED))
    g_warning ("Cannot open the help (%s): %s", uri, error->message);
}
#endif

void
lk_help_show (GtkWindow *parent, const char *page)
{
  g_autofree char *uri = lk_help_uri (page);
  const char *log = g_getenv ("LIKENESS_HELP_URI_LOG");

  if (log != NULL && log[0] != '\0')
    {
      log_uri (log, uri);
      return;
    }
#if GTK_CHECK_VERSION(4, 10, 0)
  /* gtk_show_uri is deprecated from 4.10 on, which the Flatpak's GTK is. */
  g_autoptr (GtkUriLauncher) launcher = gtk_uri_launcher_new (uri);
  gtk_uri_launcher_launch (launcher, parent, NULL, on_launched, g_strdup (uri));
#else
  gtk_show_uri (parent, uri, GDK_CURRENT_TIME);
#endif
}
