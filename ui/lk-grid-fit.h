/* lk-grid-fit.h — keeps a GtkGridView's max-columns near the columns that fit
 *
 * GTK 4.8's GtkGridView keeps about 32 rows × max-columns items bound,
 * whatever the number of columns shown: a person page with max-columns 16
 * built 512 tiles on its first showing where a 1,000-pixel window shows 7
 * columns. lk_grid_fit_columns() sets max-columns to the columns that could
 * fit (never fewer: the width divided by the narrowest a column can be,
 * rounded up, at most the max-columns it had) from the window's width before
 * the grid is first shown and from the grid's own width after each
 * allocation, so the grid builds about 32 rows of the columns it shows.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* `column_width`: the narrowest a column can be; the grid's max-columns
 * now is the most it will ever be set to. */
void lk_grid_fit_columns (GtkGridView *grid, int column_width);
/* Fits now, from the window's width when the grid has none yet: before a
 * model fills a grid that is not on screen. */
void lk_grid_fit_columns_now (GtkGridView *grid);

G_END_DECLS
