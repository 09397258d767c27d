/* lk-session-private.h — test-only hooks into lk-session.c */
#pragma once

#include "lk-session.h"
#include "people/lk-questions.h"

G_BEGIN_DECLS

/* From any thread: reports progress exactly as a load's worker does (the
 * latest value stored, one low-priority idle carrying it to the session's
 * main context unless one is pending). `message` is a static string. */
void lk_session_report_progress (LkSession *self, const char *message, double fraction);
/* A load has ended on its worker and waits for the decision committing. */
gboolean lk_session_holds_load (LkSession *self);
/* The links the questions were last scored from (find_questions), or NULL. */
const LkQuestionLinks *lk_session_peek_question_links (LkSession *self);
/* LkScanReuse.faces of the scan the session loaded: what its links are kept under. */
guint64 lk_session_peek_faces (LkSession *self);

G_END_DECLS
