/* lk-loading-page.c — a library being read and scanned, with its progress
 *
 * Shown while no library is on screen yet; once one is, a new load or
 * re-scan shows its progress in the window's bar above the people instead
 * (lk-window.c). Cancel is win.cancel.
 */
#include "config.h"

#include <adwaita.h>

#include <glib/gi18n.h>

#include "lk-loading-page.h"

struct _LkLoadingPage
{
  GtkWidget parent_instance;

  AdwStatusPage *status_page;
  GtkLabel *phase_label;
  GtkProgressBar *bar;
  GtkLabel *detail_label;
};

G_DEFINE_FINAL_TYPE (LkLoadingPage, lk_loading_page, GTK_TYPE_WIDGET)

static void
lk_loading_page_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_LOADING_PAGE);
  G_OBJECT_CLASS (lk_loading_page_parent_class)->dispose (object);
}

static void
lk_loading_page_class_init (LkLoadingPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_loading_page_dispose;

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  g_type_ensure (ADW_TYPE_CLAMP);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-loading-page.ui");
  gtk_widget_class_bind_template_child (widget_class, LkLoadingPage, status_page);
  gtk_widget_class_bind_template_child (widget_class, LkLoadingPage, phase_label);
  gtk_widget_class_bind_template_child (widget_class, LkLoadingPage, bar);
  gtk_widget_class_bind_template_child (widget_class, LkLoadingPage, detail_label);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
lk_loading_page_init (LkLoadingPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

void
lk_loading_page_start (LkLoadingPage *self, const char *name)
{
  g_return_if_fail (LK_IS_LOADING_PAGE (self));

  g_autofree char *title = g_strdup_printf (_ ("Opening “%s”"), name);
  adw_status_page_set_title (self->status_page, title);
  gtk_progress_bar_set_fraction (self->bar, 0.0);
  gtk_label_set_label (self->phase_label, _ ("Reading the library"));
  gtk_label_set_label (self->detail_label, " ");
}

void
lk_loading_page_set_progress (LkLoadingPage *self, double fraction, const char *phase,
                              const char *detail)
{
  g_return_if_fail (LK_IS_LOADING_PAGE (self));

  if (fraction >= 0.0)
    gtk_progress_bar_set_fraction (self->bar, fraction);
  else
    gtk_progress_bar_pulse (self->bar);
  gtk_label_set_label (self->phase_label, phase);
  /* A space, not nothing: the line keeps its height, so the page does not
   * jump when the rate appears. */
  gtk_label_set_label (self->detail_label, detail != NULL ? detail : " ");
}
