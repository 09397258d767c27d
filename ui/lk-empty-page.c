/* lk-empty-page.c — the window with no library: open one, the sample, or a recent one
 *
 * Its buttons and rows are actions of the window (win.open, win.open-sample,
 * win.open-recent), so the page needs no window: it shows the model of recent
 * libraries it is given, one LkRecentRow per folder, through
 * gtk_list_box_bind_model, and hides the Recent Libraries heading and list
 * while the model is empty.
 */
#include "config.h"

#include <adwaita.h>

#include "lk-empty-page.h"
#include "lk-recent-row.h"

struct _LkEmptyPage
{
  GtkWidget parent_instance;

  GListModel *recent;

  GtkWidget *recent_title;
  GtkListBox *recent_list;
};

G_DEFINE_FINAL_TYPE (LkEmptyPage, lk_empty_page, GTK_TYPE_WIDGET)

static GtkWidget *
create_row (gpointer item, gpointer user_data)
{
  return lk_recent_row_new (gtk_string_object_get_string (GTK_STRING_OBJECT (item)));
}

static void
update_visible (LkEmptyPage *self)
{
  gboolean any = self->recent != NULL && g_list_model_get_n_items (self->recent) > 0;

  gtk_widget_set_visible (self->recent_title, any);
  gtk_widget_set_visible (GTK_WIDGET (self->recent_list), any);
}

static void
on_recent_items_changed (GListModel *model, guint position, guint removed, guint added,
                         LkEmptyPage *self)
{
  update_visible (self);
}

static void
on_recent_row_activated (GtkListBox *list, GtkListBoxRow *row, LkEmptyPage *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.open-recent", "s",
                              lk_recent_row_get_folder (LK_RECENT_ROW (row)));
}

static void
lk_empty_page_dispose (GObject *object)
{
  LkEmptyPage *self = LK_EMPTY_PAGE (object);

  if (self->recent != NULL)
    g_signal_handlers_disconnect_by_func (self->recent, on_recent_items_changed, self);
  g_clear_object (&self->recent);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_EMPTY_PAGE);
  /* The page's one child is not a bound template child, which the above
   * would unparent. */
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (lk_empty_page_parent_class)->dispose (object);
}

static void
lk_empty_page_class_init (LkEmptyPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_empty_page_dispose;

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-empty-page.ui");
  gtk_widget_class_bind_template_child (widget_class, LkEmptyPage, recent_title);
  gtk_widget_class_bind_template_child (widget_class, LkEmptyPage, recent_list);
  gtk_widget_class_bind_template_callback (widget_class, on_recent_row_activated);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
lk_empty_page_init (LkEmptyPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  update_visible (self);
}

void
lk_empty_page_set_recent (LkEmptyPage *self, GListModel *recent)
{
  g_return_if_fail (LK_IS_EMPTY_PAGE (self));
  g_return_if_fail (recent == NULL || G_IS_LIST_MODEL (recent));

  if (self->recent != NULL)
    g_signal_handlers_disconnect_by_func (self->recent, on_recent_items_changed, self);
  g_set_object (&self->recent, recent);
  if (recent != NULL)
    g_signal_connect (recent, "items-changed", G_CALLBACK (on_recent_items_changed), self);
  gtk_list_box_bind_model (self->recent_list, recent, create_row, NULL, NULL);
  update_visible (self);
}
