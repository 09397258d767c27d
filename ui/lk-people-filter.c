/* lk-people-filter.c — the people grid's header: how many are named, and which to show
 *
 * Reviewing thousands of people is naming them, so the header says how far
 * that has come ("412 of 1,569 people named") and lets the grid show only
 * the ones still to name. A linked row of toggle buttons rather than a
 * dropdown: four choices, each one click, and the current one visible. The
 * choice is a string property the window binds to its setting.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-people-filter.h"

struct _LkPeopleFilter
{
  GtkWidget parent_instance;

  char *filter;
  gboolean updating; /* the buttons follow the property: no echo */

  GtkLabel *summary_label;
  guint n_people, n_hidden; /* what the last count found */
  GtkToggleButton *all_button;
  GtkToggleButton *named_button;
  GtkToggleButton *unnamed_button;
  GtkToggleButton *hidden_button;
  GtkDropDown *filter_drop; /* the same choice, in a narrow window */
};

G_DEFINE_FINAL_TYPE (LkPeopleFilter, lk_people_filter, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_FILTER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const char *const filters[] = { "all", "named", "unnamed", "hidden" };

static GtkToggleButton *
button_of (LkPeopleFilter *self, const char *filter)
{
  GtkToggleButton *buttons[]
      = { self->all_button, self->named_button, self->unnamed_button, self->hidden_button };

  for (guint k = 0; k < G_N_ELEMENTS (filters); k++)
    if (g_strcmp0 (filter, filters[k]) == 0)
      return buttons[k];
  return NULL;
}

static void
on_toggled (GtkToggleButton *button, LkPeopleFilter *self)
{
  if (self->updating || !gtk_toggle_button_get_active (button))
    return;
  for (guint k = 0; k < G_N_ELEMENTS (filters); k++)
    if (button_of (self, filters[k]) == button)
      lk_people_filter_set_filter (self, filters[k]);
}

static void
on_drop_selected (GtkDropDown *drop, GParamSpec *pspec, LkPeopleFilter *self)
{
  guint selected = gtk_drop_down_get_selected (drop);

  if (self->updating || selected >= G_N_ELEMENTS (filters))
    return;
  lk_people_filter_set_filter (self, filters[selected]);
}

static void
lk_people_filter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkPeopleFilter *self = LK_PEOPLE_FILTER (object);

  switch (prop_id)
    {
      case PROP_FILTER:
        g_value_set_string (value, self->filter);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_people_filter_set_property (GObject *object, guint prop_id, const GValue *value,
                               GParamSpec *pspec)
{
  LkPeopleFilter *self = LK_PEOPLE_FILTER (object);

  switch (prop_id)
    {
      case PROP_FILTER:
        lk_people_filter_set_filter (self, g_value_get_string (value));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_people_filter_dispose (GObject *object)
{
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_PEOPLE_FILTER);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (object))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (lk_people_filter_parent_class)->dispose (object);
}

static void
lk_people_filter_finalize (GObject *object)
{
  g_free (LK_PEOPLE_FILTER (object)->filter);
  G_OBJECT_CLASS (lk_people_filter_parent_class)->finalize (object);
}

static void
lk_people_filter_class_init (LkPeopleFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_people_filter_get_property;
  object_class->set_property = lk_people_filter_set_property;
  object_class->dispose = lk_people_filter_dispose;
  object_class->finalize = lk_people_filter_finalize;

  properties[PROP_FILTER]
      = g_param_spec_string ("filter", NULL, NULL, "all",
                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (ADW_TYPE_SQUEEZER);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-people-filter.ui");
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, summary_label);
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, all_button);
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, named_button);
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, unnamed_button);
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, hidden_button);
  gtk_widget_class_bind_template_child (widget_class, LkPeopleFilter, filter_drop);
  gtk_widget_class_bind_template_callback (widget_class, on_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_drop_selected);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "lk-people-filter");
}

static void
lk_people_filter_init (LkPeopleFilter *self)
{
  self->filter = g_strdup ("all");
  gtk_widget_init_template (GTK_WIDGET (self));
  /* GTK 4.8's drop-down takes the focus on an unnamed inner button, which a
   * screen reader read as "GtkToggleButton": it takes the drop-down's name. */
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->filter_drop));
       child != NULL; child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_TOGGLE_BUTTON (child))
      gtk_accessible_update_property (GTK_ACCESSIBLE (child), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      _ ("Show"), -1);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (gtk_widget_get_layout_manager (GTK_WIDGET (self))),
                              12);
}

const char *
lk_people_filter_get_filter (LkPeopleFilter *self)
{
  g_return_val_if_fail (LK_IS_PEOPLE_FILTER (self), NULL);
  return self->filter;
}

void
lk_people_filter_set_filter (LkPeopleFilter *self, const char *filter)
{
  g_return_if_fail (LK_IS_PEOPLE_FILTER (self));

  GtkToggleButton *button = button_of (self, filter);
  if (button == NULL)
    {
      g_warning ("Unknown people filter “%s”: all, named, unnamed or hidden", filter);
      return;
    }
  if (g_strcmp0 (self->filter, filter) == 0)
    return;
  g_free (self->filter);
  self->filter = g_strdup (filter);
  self->updating = TRUE;
  gtk_toggle_button_set_active (button, TRUE);
  for (guint k = 0; k < G_N_ELEMENTS (filters); k++)
    if (g_strcmp0 (filters[k], filter) == 0)
      gtk_drop_down_set_selected (self->filter_drop, k);
  self->updating = FALSE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FILTER]);
}

gboolean
lk_people_filter_match (LkPeopleFilter *self, LkPersonItem *item, gboolean show_hidden)
{
  g_return_val_if_fail (LK_IS_PEOPLE_FILTER (self), FALSE);

  gboolean hidden = lk_person_item_get_hidden (item);
  gboolean person = !lk_person_item_is_unassigned (item);
  gboolean named = lk_person_item_get_name (item) != NULL;

  switch (self->filter[0])
    {
      case 'n':
        return person && named && !hidden;
      case 'u':
        return person && !named && !hidden;
      case 'h':
        return person && hidden;
      default:
        return show_hidden || !hidden;
    }
}

void
lk_people_filter_count (LkPeopleFilter *self, GListModel *people)
{
  g_return_if_fail (LK_IS_PEOPLE_FILTER (self));

  guint total = 0, named = 0, hidden = 0;
  guint n = people != NULL ? g_list_model_get_n_items (people) : 0;
  for (guint k = 0; k < n; k++)
    {
      g_autoptr (LkPersonItem) item = g_list_model_get_item (people, k);
      if (lk_person_item_is_unassigned (item) || lk_person_item_get_n_faces (item) == 0)
        continue;
      if (lk_person_item_get_hidden (item))
        {
          hidden++;
          continue;
        }
      total++;
      named += lk_person_item_get_name (item) != NULL;
    }
  /* Translators: the people grid's progress, "412 of 1,569 people named" */
  g_autofree char *text = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "%'u of %'u person named", "%'u of %'u people named", total),
      named, total);
  gtk_label_set_label (self->summary_label, text);
  self->n_people = total;
  self->n_hidden = hidden;
}

guint
lk_people_filter_get_n_people (LkPeopleFilter *self)
{
  g_return_val_if_fail (LK_IS_PEOPLE_FILTER (self), 0);
  return self->n_people;
}

guint
lk_people_filter_get_n_hidden (LkPeopleFilter *self)
{
  g_return_val_if_fail (LK_IS_PEOPLE_FILTER (self), 0);
  return self->n_hidden;
}

const char *
lk_people_filter_get_summary (LkPeopleFilter *self)
{
  g_return_val_if_fail (LK_IS_PEOPLE_FILTER (self), NULL);
  return gtk_label_get_label (self->summary_label);
}
