/* lk-window.c — one library's window */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-window.h"

struct _LkWindow
{
  GtkApplicationWindow parent_instance;

  GtkLabel *status_label;
  GFile *folder;
};

G_DEFINE_FINAL_TYPE (LkWindow, lk_window, GTK_TYPE_APPLICATION_WINDOW)

static void
lk_window_dispose (GObject *object)
{
  LkWindow *self = LK_WINDOW (object);

  g_clear_object (&self->folder);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_WINDOW);
  G_OBJECT_CLASS (lk_window_parent_class)->dispose (object);
}

static void
lk_window_class_init (LkWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_window_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-window.ui");
  gtk_widget_class_bind_template_child (widget_class, LkWindow, status_label);
}

static void
lk_window_init (LkWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

LkWindow *
lk_window_new (GtkApplication *application)
{
  return g_object_new (LK_TYPE_WINDOW, "application", application, NULL);
}

void
lk_window_open (LkWindow *self, GFile *folder)
{
  g_return_if_fail (LK_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (folder));

  g_set_object (&self->folder, folder);
  g_autofree char *name = g_file_get_basename (folder);
  gtk_label_set_label (self->status_label, name);
}
