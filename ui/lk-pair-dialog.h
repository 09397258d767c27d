/* lk-pair-dialog.h — "Help Likeness tell people apart": same or different person, a pair at a time
 */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_PAIR_DIALOG (lk_pair_dialog_get_type ())
G_DECLARE_FINAL_TYPE (LkPairDialog, lk_pair_dialog, LK, PAIR_DIALOG, GtkWindow)

/* A dialog over `parent` asking about the pairs of lk_session_pair_questions
 * (LK_PAIR_QUESTIONS of them), chosen on a worker once it shows. After the last one it activates
 * "win.fit-decisions" on `parent` when the decisions suffice to fit from. */
LkPairDialog *lk_pair_dialog_new (GtkWindow *parent, LkSession *session, LkTextureCache *cache);
/* The pair shown (FALSE when every pair is behind), its place and the count:
 * "3 of 20" is *position 2, *total 20. Any pointer may be NULL. */
gboolean lk_pair_dialog_get_pair (LkPairDialog *self, guint32 *a, guint32 *b, guint *position,
                                  guint *total);
/* What the buttons do: Same Person (same TRUE), Different People, Skip, Undo
 * (FALSE when it could not). */
gboolean lk_pair_dialog_answer (LkPairDialog *self, gboolean same);
void lk_pair_dialog_skip (LkPairDialog *self);
gboolean lk_pair_dialog_undo (LkPairDialog *self);
/* The pairs are still being chosen (a spinner shows; the buttons do nothing). */
gboolean lk_pair_dialog_is_choosing (LkPairDialog *self);
/* The answers given and not undone. */
guint lk_pair_dialog_get_n_answers (LkPairDialog *self);

G_END_DECLS
