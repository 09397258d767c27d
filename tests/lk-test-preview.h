/* lk-test-preview.h — a sample library's photos re-made as JPEG-sized
 * images for the importers' generated instances (make-immich's previews,
 * make-photoprism's cached thumbnails): lk-test-preview.c says why they
 * look as they do. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>

#include "library/lk-library.h"

G_BEGIN_DECLS

#define LK_TEST_PREVIEW_NAMED 12

/* The names given to the largest identities, as a user would have. */
extern const char *const lk_test_preview_names[LK_TEST_PREVIEW_NAMED];

/* The faces of `library` by photo: photo id + 1 → a GArray of gsize face
 * indices, in face order. */
GHashTable *lk_test_preview_faces_by_photo (const LkLibrary *library);

/* The labels of the `n` largest identities (more faces first; equal sizes
 * by label, so runs agree); the strings are the library's. */
GPtrArray *lk_test_preview_largest_labels (const LkLibrary *library, guint n);

/* The size of `photo` with its long side `side` (aspect kept). */
void lk_test_preview_size (const LkPhoto *photo, int side, int *width, int *height);

/* `photo` re-made at width × height: a grey backdrop with fine noise and
 * the sample thumbnail of each of `faces` (face indices) pasted on its box
 * scaled to the image; each box in the image's pixels into boxes[k] (x, y,
 * w, h, inside the image). */
GdkPixbuf *lk_test_preview_paint (const LkLibrary *library, const LkPhoto *photo,
                                  const GArray *faces, int width, int height, int (*boxes)[4]);

G_END_DECLS
