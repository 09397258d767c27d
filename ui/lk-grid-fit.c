/* lk-grid-fit.c — keeps a GtkGridView's max-columns near the columns that fit
 *
 * Why it is shaped this way:
 *
 * - The grid's width is known from its horizontal adjustment, whose page
 *   size GtkGridView sets to its width in every allocation. max-columns
 *   cannot change inside that allocation (it moves the grid's anchor, which
 *   builds and drops tiles), so a change waits for an idle of higher
 *   priority than the next frame's layout.
 * - Rounding up errs on the side of too many columns allowed, which costs
 *   a few tiles; too few would show fewer columns than fit.
 */
#include "config.h"

#include <math.h>

#include "lk-grid-fit.h"

typedef struct
{
  GtkGridView *grid; /* not a reference: the data lives on it */
  GtkAdjustment *adjustment;
  gulong changed_id;
  int column_width;
  guint most;
  guint idle_id;
} Fit;

static GQuark
fit_quark (void)
{
  return g_quark_from_static_string ("lk-grid-fit");
}

static void
fit (Fit *f, int width)
{
  if (width <= 0)
    return;

  guint columns = CLAMP ((guint) ceil ((double) width / f->column_width), 1, f->most);
  if (columns != gtk_grid_view_get_max_columns (f->grid))
    gtk_grid_view_set_max_columns (f->grid, columns);
}

static gboolean
on_idle (gpointer user_data)
{
  Fit *f = user_data;

  f->idle_id = 0;
  if (f->adjustment != NULL)
    fit (f, (int) gtk_adjustment_get_page_size (f->adjustment));
  return G_SOURCE_REMOVE;
}

static void
on_adjustment_changed (GtkAdjustment *adjustment, gpointer user_data)
{
  Fit *f = user_data;

  if (f->idle_id == 0)
    f->idle_id = g_idle_add_full (GDK_PRIORITY_REDRAW - 1, on_idle, f, NULL);
}

static void
watch (Fit *f)
{
  GtkAdjustment *adjustment = gtk_scrollable_get_hadjustment (GTK_SCROLLABLE (f->grid));

  if (adjustment == f->adjustment)
    return;
  if (f->adjustment != NULL)
    {
      g_clear_signal_handler (&f->changed_id, f->adjustment);
      g_clear_object (&f->adjustment);
    }
  if (adjustment != NULL)
    {
      f->adjustment = g_object_ref (adjustment);
      f->changed_id
          = g_signal_connect (adjustment, "changed", G_CALLBACK (on_adjustment_changed), f);
    }
}

static void
on_hadjustment (GObject *grid, GParamSpec *pspec, gpointer user_data)
{
  watch (user_data);
}

static void
fit_free (gpointer data)
{
  Fit *f = data;

  g_clear_handle_id (&f->idle_id, g_source_remove);
  if (f->adjustment != NULL)
    g_clear_signal_handler (&f->changed_id, f->adjustment);
  g_clear_object (&f->adjustment);
  g_free (f);
}

void
lk_grid_fit_columns (GtkGridView *grid, int column_width)
{
  g_return_if_fail (GTK_IS_GRID_VIEW (grid));
  g_return_if_fail (column_width > 0);

  Fit *f = g_new0 (Fit, 1);

  f->grid = grid;
  f->column_width = column_width;
  f->most = MAX (gtk_grid_view_get_max_columns (grid), 1);
  g_object_set_qdata_full (G_OBJECT (grid), fit_quark (), f, fit_free);
  g_signal_connect (grid, "notify::hadjustment", G_CALLBACK (on_hadjustment), f);
  watch (f);
}

void
lk_grid_fit_columns_now (GtkGridView *grid)
{
  g_return_if_fail (GTK_IS_GRID_VIEW (grid));

  Fit *f = g_object_get_qdata (G_OBJECT (grid), fit_quark ());
  int width = gtk_widget_get_width (GTK_WIDGET (grid));
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (grid));

  if (f == NULL)
    return;
  if (width <= 0 && root != NULL)
    width = gtk_widget_get_width (GTK_WIDGET (root));
  fit (f, width);
}
