/* lk-wrap-box.h — a row of widgets that wraps onto more rows when narrow
 *
 * libadwaita 1.2 has no AdwWrapBox (1.7) and GTK 4.8's GtkFlowBox makes
 * each child a focusable, selectable box of its own: a row of buttons in it
 * takes two Tab presses a button. This keeps the buttons themselves as
 * children, in their order, packed left to right and wrapped where the
 * width ends; each row centred when `center` is set.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_WRAP_BOX (lk_wrap_box_get_type ())
G_DECLARE_FINAL_TYPE (LkWrapBox, lk_wrap_box, LK, WRAP_BOX, GtkWidget)

G_END_DECLS
