/* lk-clash-popover.h — two faces of one photo, shown when a merge or move is refused
 *
 * The engine's refusal names the faces by number (for the CLI); this
 * popover shows them by thumbnail, says the caller's sentence (which
 * names the photo and, where it knows them, the people), and offers the
 * photo itself.
 */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_CLASH_POPOVER (lk_clash_popover_get_type ())
G_DECLARE_FINAL_TYPE (LkClashPopover, lk_clash_popover, LK, CLASH_POPOVER, GtkPopover)

GtkWidget *lk_clash_popover_new (LkTextureCache *cache);
/* Shows faces `a` and `b` of `session` above `text`, pointing at `anchor`
 * (in the popover's parent's coordinates: NULL points at the parent). */
void lk_clash_popover_show (LkClashPopover *self, LkSession *session, guint32 a, guint32 b,
                            const char *text, const GdkRectangle *anchor);
/* The two faces shown (FALSE when it is not up). */
gboolean lk_clash_popover_get_faces (LkClashPopover *self, guint32 *a, guint32 *b);
/* The sentence under the faces. */
const char *lk_clash_popover_get_text (LkClashPopover *self);
/* What its Show Photo button does: the photo of the two faces, in the viewer. */
void lk_clash_popover_view_photo (LkClashPopover *self);
/* The photo's path as the text says it: “2019/IMG_0042.jpg”, or “photo 42”. */
char *lk_clash_popover_describe_photo (LkSession *session, guint32 face);

G_END_DECLS
