/* lk-application.c — the GtkApplication: one window per library */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-application.h"
#include "lk-window.h"

struct _LkApplication
{
  GtkApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (LkApplication, lk_application, GTK_TYPE_APPLICATION)

static void
lk_application_activate (GApplication *app)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window == NULL)
    window = GTK_WINDOW (lk_window_new (GTK_APPLICATION (app)));
  gtk_window_present (window);
}

static void
lk_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int k = 0; k < n_files; k++)
    {
      LkWindow *window = lk_window_new (GTK_APPLICATION (app));
      lk_window_open (window, files[k]);
      gtk_window_present (GTK_WINDOW (window));
    }
}

static void
lk_application_class_init (LkApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

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
  return g_object_new (LK_TYPE_APPLICATION,
                       "application-id", APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", RESOURCE_PREFIX,
                       NULL);
}
