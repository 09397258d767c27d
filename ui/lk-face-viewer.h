/* lk-face-viewer.h — the photo a face comes from, its faces boxed and named */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"

G_BEGIN_DECLS

#define LK_TYPE_FACE_VIEWER (lk_face_viewer_get_type ())
G_DECLARE_FINAL_TYPE (LkFaceViewer, lk_face_viewer, LK, FACE_VIEWER, GtkWidget)

/* A window over `parent` showing the photo of faces[index]; ←/→ step through
 * `faces` (one person's), Escape closes; its header bar has the step and
 * zoom buttons and the close button. Returns the viewer inside it. */
LkFaceViewer *lk_face_viewer_present (GtkWindow *parent, LkSession *session, const guint32 *faces,
                                      guint n_faces, guint index);
/* Shows faces[index] (clamped). */
void lk_face_viewer_set_index (LkFaceViewer *self, guint index);
guint lk_face_viewer_get_index (LkFaceViewer *self);
/* The decoded photo, or NULL while it loads or when it could not be read. */
GdkTexture *lk_face_viewer_get_texture (LkFaceViewer *self);
/* TRUE while the photo is being decoded: the message then says so, in
 * whatever language; a test or probe waits for this to end rather than
 * reading the message. */
gboolean lk_face_viewer_is_loading (LkFaceViewer *self);
/* What the viewer says instead of a photo ("" when it shows one). */
const char *lk_face_viewer_get_message (LkFaceViewer *self);
/* The faces boxed on the photo (box 0 is the face on screen), and the label
 * of box k: the person's name, "Unnamed person", or NULL for a face in no
 * person. */
guint lk_face_viewer_get_n_boxes (LkFaceViewer *self);
const char *lk_face_viewer_get_box_label (LkFaceViewer *self, guint k);
/* The face (index into the library) box k draws. */
guint32 lk_face_viewer_get_box_face (LkFaceViewer *self, guint k);
/* Zoom over the fitted size: 1 fits the photo to the window. */
double lk_face_viewer_get_zoom (LkFaceViewer *self);
void lk_face_viewer_set_zoom (LkFaceViewer *self, double zoom);
/* Screen pixels per photo pixel (0 without a photo): at most 1 when fitted. */
double lk_face_viewer_get_scale (LkFaceViewer *self);
/* Box k in the viewer's pixels; FALSE without a photo or such a box. */
gboolean lk_face_viewer_get_box_rect (LkFaceViewer *self, guint k, graphene_rect_t *rect);

G_END_DECLS
