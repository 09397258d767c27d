/* lk-application.c — the AdwApplication: one window per library
 *
 * Launched without arguments it opens the bundled sample library (or the
 * empty "Open a library" page when none is installed); `likeness PATH…` opens
 * one window per folder. Shortcuts are application accelerators so the
 * shortcuts window (Ctrl+?, gtk/help-overlay.ui) and the menus show them.
 * An AdwApplication: libadwaita's stylesheet (GNOME's look, light and dark)
 * and its own style.css from the resource base path, loaded by
 * AdwApplication itself.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-application.h"
#include "lk-diagnostics-window.h"
#include "lk-help.h"
#include "lk-window-probes.h"
#include "lk-window.h"

struct _LkApplication
{
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (LkApplication, lk_application, ADW_TYPE_APPLICATION)

static const struct
{
  const char *action;
  const char *accels[3];
} accels[] = {
  { "win.open", { "<Control>o", NULL } },
  { "win.rescan", { "F5", "<Control>r", NULL } },
  { "win.back", { "<Alt>Left", NULL } },
  { "win.search", { "<Control>f", NULL } },
  { "win.show-hidden", { "<Control><Shift>h", NULL } },
  { "win.suggestions", { "<Control>e", NULL } },
  { "win.undo", { "<Control>z", NULL } },
  { "win.redo", { "<Control><Shift>z", NULL } },
  { "win.save-elsewhere", { "<Control><Shift>s", NULL } },
  { "window.close", { "<Control>w", NULL } },
  { "app.quit", { "<Control>q", NULL } },
  { "app.diagnostics", { "<Control><Shift>d", NULL } },
  { "app.help", { "F1", NULL } },
};

static void
on_about (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplication *app = user_data;
  static const char *const developers[] = { "The Likeness developers", NULL };
  /* AdwAboutWindow (libadwaita 1.2): GNOME's about window. */
  GtkWidget *about = adw_about_window_new ();

  g_object_set (about, "transient-for", gtk_application_get_active_window (app), "modal", TRUE,
                "application-name", _ ("Likeness"), "application-icon", APP_ID, "version",
                PACKAGE_VERSION, "developer-name", _ ("The Likeness developers"), "comments",
                _ ("Review the people in a photo library"), "license-type", GTK_LICENSE_GPL_3_0,
                "developers", developers, "translator-credits", _ ("translator-credits"), NULL);
  gtk_window_present (GTK_WINDOW (about));
}

/* Ctrl+Q closes every window as its close button does: a window with
 * decisions that could not be saved asks first ("Save Your Decisions Before
 * Closing?") and stays if told to, and each saves its size. Destroying them
 * would skip close-request, and with it both. The
 * application quits when its last window has gone. */
static void
on_quit (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplication *app = user_data;
  g_autoptr (GPtrArray) windows = g_ptr_array_new_with_free_func (g_object_unref);

  /* Closing one changes the list (and may open a dialog): a copy. */
  for (GList *l = gtk_application_get_windows (app); l != NULL; l = l->next)
    g_ptr_array_add (windows, g_object_ref (l->data));
  for (guint k = 0; k < windows->len; k++)
    gtk_window_close (g_ptr_array_index (windows, k));
}

/* The diagnostics window: one per application, raised when open again. */
static void
on_diagnostics (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplication *app = user_data;

  for (GList *l = gtk_application_get_windows (app); l != NULL; l = l->next)
    if (LK_IS_DIAGNOSTICS_WINDOW (l->data))
      {
        gtk_window_present (l->data);
        return;
      }
  gtk_window_present (GTK_WINDOW (lk_diagnostics_window_new (app)));
}

/* F1 and the main menu's Help: the help's index. */
static void
on_help (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  lk_help_show (gtk_application_get_active_window (user_data), NULL);
}

/* A page of the help by its id ("calibration"): what a banner's or an error
 * page's Learn More opens. */
static void
on_help_page (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  lk_help_show (gtk_application_get_active_window (user_data),
                g_variant_get_string (parameter, NULL));
}

static const GActionEntry app_actions[] = {
  { "about", on_about, NULL, NULL, NULL, { 0 } },
  { "quit", on_quit, NULL, NULL, NULL, { 0 } },
  { "diagnostics", on_diagnostics, NULL, NULL, NULL, { 0 } },
  { "help", on_help, NULL, NULL, NULL, { 0 } },
  { "help-page", on_help_page, "s", NULL, NULL, { 0 } },
};

static void
lk_application_startup (GApplication *app)
{
  /* AdwApplication's startup: adw_init () and RESOURCE_PREFIX/style.css. */
  G_APPLICATION_CLASS (lk_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  for (gsize k = 0; k < G_N_ELEMENTS (accels); k++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[k].action,
                                           accels[k].accels);
}

static void
lk_application_activate (GApplication *app)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window == NULL)
    {
      LkWindow *lk_window = lk_window_new (GTK_APPLICATION (app));
      lk_window_probes_attach (lk_window);
      lk_window_open_sample (lk_window);
      window = GTK_WINDOW (lk_window);
    }
  gtk_window_present (window);
}

static void
lk_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int k = 0; k < n_files; k++)
    {
      LkWindow *window = lk_window_new (GTK_APPLICATION (app));
      lk_window_probes_attach (window);
      lk_window_open (window, files[k]);
      gtk_window_present (GTK_WINDOW (window));
    }
}

static void
lk_application_class_init (LkApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->startup = lk_application_startup;
  app_class->activate = lk_application_activate;
  app_class->open = lk_application_open;
}

static void
lk_application_init (LkApplication *self)
{
}

LkApplication *
lk_application_new (void)
{
  return g_object_new (LK_TYPE_APPLICATION, "application-id", APP_ID, "flags",
                       G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE, "resource-base-path",
                       RESOURCE_PREFIX, NULL);
}
