/* lk-result-panel.c — a measured verdict (see the header)
 *
 * One panel for the diagnostics window's speed gates and its race page: the
 * badge and the verdict in words on one row, the summary line and its copy
 * button on the next. What copying does (and says) is the owner's, through
 * the action the panel's "copy-action-name" names. An owner's .ui may add
 * rows of its own under these (a GtkBox takes them as children).
 */
#include "config.h"

#include "lk-result-panel.h"

struct _LkResultPanel
{
  GtkBox parent_instance;

  GtkLabel *badge;
  GtkLabel *detail;
  GtkLabel *summary;
  GtkButton *copy_button;
};

G_DEFINE_FINAL_TYPE (LkResultPanel, lk_result_panel, GTK_TYPE_BOX)

enum
{
  PROP_0,
  PROP_COPY_ACTION_NAME,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

GtkLabel *
lk_result_panel_get_badge (LkResultPanel *self)
{
  g_return_val_if_fail (LK_IS_RESULT_PANEL (self), NULL);
  return self->badge;
}

void
lk_result_panel_set_detail (LkResultPanel *self, const char *text)
{
  g_return_if_fail (LK_IS_RESULT_PANEL (self));
  gtk_label_set_text (self->detail, text);
}

const char *
lk_result_panel_get_detail (LkResultPanel *self)
{
  g_return_val_if_fail (LK_IS_RESULT_PANEL (self), NULL);
  return gtk_label_get_text (self->detail);
}

void
lk_result_panel_set_summary (LkResultPanel *self, const char *line)
{
  g_return_if_fail (LK_IS_RESULT_PANEL (self));
  gtk_label_set_text (self->summary, line);
}

const char *
lk_result_panel_get_summary (LkResultPanel *self)
{
  g_return_val_if_fail (LK_IS_RESULT_PANEL (self), NULL);
  return gtk_label_get_text (self->summary);
}

static void
lk_result_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkResultPanel *self = LK_RESULT_PANEL (object);

  switch (prop_id)
    {
      case PROP_COPY_ACTION_NAME:
        g_value_set_string (value,
                            gtk_actionable_get_action_name (GTK_ACTIONABLE (self->copy_button)));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_result_panel_set_property (GObject *object, guint prop_id, const GValue *value,
                              GParamSpec *pspec)
{
  LkResultPanel *self = LK_RESULT_PANEL (object);

  switch (prop_id)
    {
      case PROP_COPY_ACTION_NAME:
        gtk_actionable_set_action_name (GTK_ACTIONABLE (self->copy_button),
                                        g_value_get_string (value));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_result_panel_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_RESULT_PANEL);
  G_OBJECT_CLASS (lk_result_panel_parent_class)->dispose (object);
}

static void
lk_result_panel_class_init (LkResultPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_result_panel_get_property;
  object_class->set_property = lk_result_panel_set_property;
  object_class->dispose = lk_result_panel_dispose;

  /* The action the copy button activates: the owner's, which copies the
   * summary and says so where it says things. */
  props[PROP_COPY_ACTION_NAME] = g_param_spec_string ("copy-action-name", NULL, NULL, NULL,
                                                      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-result-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, LkResultPanel, badge);
  gtk_widget_class_bind_template_child (widget_class, LkResultPanel, detail);
  gtk_widget_class_bind_template_child (widget_class, LkResultPanel, summary);
  gtk_widget_class_bind_template_child (widget_class, LkResultPanel, copy_button);
}

static void
lk_result_panel_init (LkResultPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
