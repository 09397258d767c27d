/* lk-recent-row.c — one library in the empty page's Recent Libraries
 *
 * The library's folder name, and under it the folder it is in: two
 * libraries of one name ("sample") are told apart by where they are. The
 * path ellipsizes at its start, so its last, telling parts stay visible.
 */
#include "config.h"

#include "lk-display-path.h"
#include "lk-recent-row.h"

struct _LkRecentRow
{
  GtkListBoxRow parent_instance;

  char *folder;

  GtkLabel *title_label;
  GtkLabel *path_label;
};

G_DEFINE_FINAL_TYPE (LkRecentRow, lk_recent_row, GTK_TYPE_LIST_BOX_ROW)

enum
{
  PROP_0,
  PROP_FOLDER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
lk_recent_row_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkRecentRow *self = LK_RECENT_ROW (object);

  switch (prop_id)
    {
      case PROP_FOLDER:
        g_value_set_string (value, self->folder);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_recent_row_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  LkRecentRow *self = LK_RECENT_ROW (object);

  switch (prop_id)
    {
      case PROP_FOLDER:
        self->folder = g_value_dup_string (value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_recent_row_constructed (GObject *object)
{
  LkRecentRow *self = LK_RECENT_ROW (object);

  G_OBJECT_CLASS (lk_recent_row_parent_class)->constructed (object);

  g_return_if_fail (self->folder != NULL);
  g_autofree char *name = lk_display_name (self->folder);
  g_autofree char *parent = g_path_get_dirname (self->folder);
  g_autofree char *parent_text = lk_display_path (parent);
  gtk_label_set_label (self->title_label, name);
  gtk_label_set_label (self->path_label, parent_text);
}

static void
lk_recent_row_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_RECENT_ROW);
  G_OBJECT_CLASS (lk_recent_row_parent_class)->dispose (object);
}

static void
lk_recent_row_finalize (GObject *object)
{
  g_free (LK_RECENT_ROW (object)->folder);
  G_OBJECT_CLASS (lk_recent_row_parent_class)->finalize (object);
}

static void
lk_recent_row_class_init (LkRecentRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_recent_row_get_property;
  object_class->set_property = lk_recent_row_set_property;
  object_class->constructed = lk_recent_row_constructed;
  object_class->dispose = lk_recent_row_dispose;
  object_class->finalize = lk_recent_row_finalize;

  properties[PROP_FOLDER]
      = g_param_spec_string ("folder", NULL, NULL, NULL,
                             G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-recent-row.ui");
  gtk_widget_class_bind_template_child (widget_class, LkRecentRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, LkRecentRow, path_label);
}

static void
lk_recent_row_init (LkRecentRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
lk_recent_row_new (const char *folder)
{
  g_return_val_if_fail (folder != NULL, NULL);
  return g_object_new (LK_TYPE_RECENT_ROW, "folder", folder, NULL);
}

const char *
lk_recent_row_get_folder (LkRecentRow *self)
{
  g_return_val_if_fail (LK_IS_RECENT_ROW (self), NULL);
  return self->folder;
}
