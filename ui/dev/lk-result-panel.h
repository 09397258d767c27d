/* lk-result-panel.h — a measured verdict: its badge, what it means, the summary line */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_RESULT_PANEL (lk_result_panel_get_type ())
G_DECLARE_FINAL_TYPE (LkResultPanel, lk_result_panel, LK, RESULT_PANEL, GtkBox)

/* The badge ("pass", "loss", …), filled by its owner as it fills its other
 * badges (the diagnostics window's catalogue has one per cell). */
GtkLabel *lk_result_panel_get_badge (LkResultPanel *self);
/* The verdict in words, beside the badge. */
void lk_result_panel_set_detail (LkResultPanel *self, const char *text);
const char *lk_result_panel_get_detail (LkResultPanel *self);
/* The CLI's summary line, selectable, with the copy button beside it; the
 * button activates the panel's "copy-action-name". */
void lk_result_panel_set_summary (LkResultPanel *self, const char *line);
const char *lk_result_panel_get_summary (LkResultPanel *self);

G_END_DECLS
