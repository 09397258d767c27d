/* lk-review-bar.c — over the people grid: how many "Is this Ada?" questions are left
 *
 * The count of what is left to review belongs on the grid, not behind a
 * menu, where nobody sees that there is any. The bar reads how many
 * questions the session found with the people (lk_session_get_n_questions:
 * found on the worker that grouped them, so counting them costs nothing
 * here) each time the people land, says how many there are, and opens the
 * dialog that asks them. With none it is hidden.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-question-dialog.h"
#include "lk-review-bar.h"

struct _LkReviewBar
{
  GtkWidget parent_instance;

  LkSession *session;
  LkTextureCache *cache;
  gulong changed_id;
  guint count;
  GtkWidget *box;
  GtkLabel *label;
  GtkWidget *button;
};

G_DEFINE_FINAL_TYPE (LkReviewBar, lk_review_bar, GTK_TYPE_WIDGET)

static void
update (LkReviewBar *self)
{
  self->count = lk_question_dialog_count (self->session);
  gtk_widget_set_visible (GTK_WIDGET (self), self->count > 0);
  if (self->count == 0)
    return;
  /* Translators: over the people grid; the button beside it asks them. */
  g_autofree char *text = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "%'u face or small person may be someone you named",
                   "%'u faces or small people may be someone you named", self->count),
      self->count);
  gtk_label_set_label (self->label, text);
}

static void
on_changed (LkSession *session, gpointer user_data)
{
  update (LK_REVIEW_BAR (user_data));
}

void
lk_review_bar_open (LkReviewBar *self)
{
  g_return_if_fail (LK_IS_REVIEW_BAR (self));
  if (self->session == NULL || self->count == 0)
    return;
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  LkQuestionDialog *dialog = lk_question_dialog_new (
      GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, self->session, self->cache);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
on_clicked (GtkButton *button, gpointer user_data)
{
  lk_review_bar_open (LK_REVIEW_BAR (user_data));
}

void
lk_review_bar_set_session (LkReviewBar *self, LkSession *session, LkTextureCache *cache)
{
  g_return_if_fail (LK_IS_REVIEW_BAR (self));
  if (self->session != NULL)
    g_clear_signal_handler (&self->changed_id, self->session);
  g_set_object (&self->session, session);
  g_set_object (&self->cache, cache);
  if (session != NULL)
    self->changed_id = g_signal_connect (session, "changed", G_CALLBACK (on_changed), self);
  update (self);
}

guint
lk_review_bar_get_count (LkReviewBar *self)
{
  g_return_val_if_fail (LK_IS_REVIEW_BAR (self), 0);
  return self->count;
}

static void
lk_review_bar_dispose (GObject *object)
{
  LkReviewBar *self = LK_REVIEW_BAR (object);

  if (self->session != NULL)
    g_clear_signal_handler (&self->changed_id, self->session);
  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_REVIEW_BAR);
  G_OBJECT_CLASS (lk_review_bar_parent_class)->dispose (object);
}

static void
lk_review_bar_class_init (LkReviewBarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_review_bar_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "reviewbar");
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-review-bar.ui");
  gtk_widget_class_bind_template_child (widget_class, LkReviewBar, box);
  gtk_widget_class_bind_template_child (widget_class, LkReviewBar, label);
  gtk_widget_class_bind_template_child (widget_class, LkReviewBar, button);
  gtk_widget_class_bind_template_callback (widget_class, on_clicked);
}

static void
lk_review_bar_init (LkReviewBar *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
