/* lk-wrap-box.c — a row of widgets that wraps onto more rows when narrow
 *
 * Why it is shaped this way:
 *
 * - Height for width: its least width is its widest child's, so a window
 *   can be as narrow as one button; at any width the rows are packed
 *   greedily in the children's order, each child at its natural width (at
 *   most the whole width), and the rows' heights are asked at the widths
 *   the children get.
 * - A row's spare width goes to its children that expand (hexpand), else
 *   to the row's two sides when centred: a row never stretches a button
 *   that did not ask to grow.
 */
#include "config.h"

#include "lk-wrap-box.h"

struct _LkWrapBox
{
  GtkWidget parent_instance;

  int spacing;
  int row_spacing;
  gboolean center;
};

G_DEFINE_FINAL_TYPE (LkWrapBox, lk_wrap_box, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_SPACING,
  PROP_ROW_SPACING,
  PROP_CENTER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* One child placed: its row, its x and width. */
typedef struct
{
  GtkWidget *child;
  guint row;
  int x, width;
} Place;

/* Packs the laid-out children into rows of `width`; fills `places` (one per
 * child that takes part) and each row's height; returns the rows' total
 * height with their spacing. */
static int
pack (LkWrapBox *self, int width, GArray *places, GArray *row_heights)
{
  int x = 0;
  guint row = 0, n_in_row = 0;

  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      int min, nat;

      if (!gtk_widget_should_layout (child))
        continue;
      gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
      int w = MAX (min, MIN (nat, width));
      if (n_in_row > 0 && x + self->spacing + w > width)
        {
          row++;
          n_in_row = 0;
          x = 0;
        }
      if (n_in_row > 0)
        x += self->spacing;
      Place place = { child, row, x, w };
      g_array_append_val (places, place);
      x += w;
      n_in_row++;
    }

  /* Each row's spare width: to its expanding children, else its sides. */
  for (guint first = 0; first < places->len;)
    {
      Place *row_places = &g_array_index (places, Place, first);
      guint n = 0, n_expand = 0;
      while (first + n < places->len && row_places[n].row == row_places[0].row)
        {
          n_expand += gtk_widget_compute_expand (row_places[n].child, GTK_ORIENTATION_HORIZONTAL);
          n++;
        }
      int used = row_places[n - 1].x + row_places[n - 1].width;
      int spare = MAX (width - used, 0);
      int shift = 0, height = 0;
      for (guint k = 0; k < n; k++)
        {
          Place *place = &row_places[k];
          place->x += shift;
          if (n_expand > 0 && gtk_widget_compute_expand (place->child, GTK_ORIENTATION_HORIZONTAL))
            {
              int more = spare / (int) n_expand;
              place->width += more;
              shift += more;
            }
          else if (n_expand == 0 && self->center)
            place->x += spare / 2;
          int child_height;
          gtk_widget_measure (place->child, GTK_ORIENTATION_VERTICAL, place->width, NULL,
                              &child_height, NULL, NULL);
          height = MAX (height, child_height);
        }
      g_array_append_val (row_heights, height);
      first += n;
    }

  int total = 0;
  for (guint r = 0; r < row_heights->len; r++)
    total += g_array_index (row_heights, int, r) + (r > 0 ? self->row_spacing : 0);
  return total;
}

static GtkSizeRequestMode
lk_wrap_box_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
lk_wrap_box_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                     int *natural, int *minimum_baseline, int *natural_baseline)
{
  LkWrapBox *self = LK_WRAP_BOX (widget);
  int widest = 0, all = 0, n = 0;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      int min, nat;

      if (!gtk_widget_should_layout (child))
        continue;
      gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
      widest = MAX (widest, min);
      all += nat + (n++ > 0 ? self->spacing : 0);
    }
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = widest;
      *natural = MAX (all, widest);
      return;
    }
  /* Unknown width: the height at the least width, the most it can be. */
  int width = for_size >= 0 ? for_size : widest;
  g_autoptr (GArray) places = g_array_new (FALSE, FALSE, sizeof (Place));
  g_autoptr (GArray) row_heights = g_array_new (FALSE, FALSE, sizeof (int));
  *minimum = *natural = pack (self, width, places, row_heights);
}

static void
lk_wrap_box_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  LkWrapBox *self = LK_WRAP_BOX (widget);
  g_autoptr (GArray) places = g_array_new (FALSE, FALSE, sizeof (Place));
  g_autoptr (GArray) row_heights = g_array_new (FALSE, FALSE, sizeof (int));
  int y = 0;
  guint row = 0;

  pack (self, width, places, row_heights);
  for (guint k = 0; k < places->len; k++)
    {
      Place *place = &g_array_index (places, Place, k);
      for (; row < place->row; row++)
        y += g_array_index (row_heights, int, row) + self->row_spacing;
      GtkAllocation allocation
          = { place->x, y, place->width, g_array_index (row_heights, int, place->row) };
      gtk_widget_size_allocate (place->child, &allocation, -1);
    }
}

static void
lk_wrap_box_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkWrapBox *self = LK_WRAP_BOX (object);

  switch (prop_id)
    {
      case PROP_SPACING:
        g_value_set_int (value, self->spacing);
        break;
      case PROP_ROW_SPACING:
        g_value_set_int (value, self->row_spacing);
        break;
      case PROP_CENTER:
        g_value_set_boolean (value, self->center);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_int (LkWrapBox *self, int *field, int value, guint prop)
{
  if (*field == value)
    return;
  *field = value;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static void
lk_wrap_box_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  LkWrapBox *self = LK_WRAP_BOX (object);

  switch (prop_id)
    {
      case PROP_SPACING:
        set_int (self, &self->spacing, g_value_get_int (value), PROP_SPACING);
        break;
      case PROP_ROW_SPACING:
        set_int (self, &self->row_spacing, g_value_get_int (value), PROP_ROW_SPACING);
        break;
      case PROP_CENTER:
        set_int (self, &self->center, g_value_get_boolean (value) != FALSE, PROP_CENTER);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_wrap_box_dispose (GObject *object)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (object))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (lk_wrap_box_parent_class)->dispose (object);
}

static void
lk_wrap_box_class_init (LkWrapBoxClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_wrap_box_get_property;
  object_class->set_property = lk_wrap_box_set_property;
  object_class->dispose = lk_wrap_box_dispose;
  widget_class->get_request_mode = lk_wrap_box_get_request_mode;
  widget_class->measure = lk_wrap_box_measure;
  widget_class->size_allocate = lk_wrap_box_size_allocate;

  properties[PROP_SPACING]
      = g_param_spec_int ("spacing", NULL, NULL, 0, G_MAXINT, 0,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ROW_SPACING]
      = g_param_spec_int ("row-spacing", NULL, NULL, 0, G_MAXINT, 0,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CENTER]
      = g_param_spec_boolean ("center", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_css_name (widget_class, "lk-wrap-box");
}

static void
lk_wrap_box_init (LkWrapBox *self)
{
}
