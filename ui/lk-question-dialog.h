/* lk-question-dialog.h — "Is this Ada?", one face or small person at a time */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"
#include "lk-texture-cache.h"

G_BEGIN_DECLS

#define LK_TYPE_QUESTION_DIALOG (lk_question_dialog_get_type ())
G_DECLARE_FINAL_TYPE (LkQuestionDialog, lk_question_dialog, LK, QUESTION_DIALOG, GtkWindow)

/* A dialog over `parent` asking the questions of `session`
 * (lk_session_questions), best first. */
LkQuestionDialog *lk_question_dialog_new (GtkWindow *parent, LkSession *session,
                                          LkTextureCache *cache);
/* How many questions are left (the ones skipped in this sitting included). */
guint lk_question_dialog_get_n_left (LkQuestionDialog *self);
/* The question shown: the face asked about and the named person's id (NULL
 * when none is left). */
const char *lk_question_dialog_get_person (LkQuestionDialog *self, guint32 *face);
/* What the buttons do: Yes, No, Skip, Undo (FALSE when it could not). */
gboolean lk_question_dialog_answer (LkQuestionDialog *self, gboolean yes);
void lk_question_dialog_skip (LkQuestionDialog *self);
gboolean lk_question_dialog_undo (LkQuestionDialog *self);

/* How many questions `session` has (for the count on the grid). */
guint lk_question_dialog_count (LkSession *session);

G_END_DECLS
