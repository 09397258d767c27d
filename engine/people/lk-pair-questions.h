/* lk-pair-questions.h — "Same or different person?": pairs to ask the user
 *
 * When the label-free estimate refuses, or is unsure, the user's answers are
 * the evidence: Google Photos asks about two faces at a time. The pairs
 * asked about are where the pair model is least sure (p near 0.5, on both
 * sides), so each answer moves the bar; without a calibration to trust (the estimate
 * refused) they are spread over the cosines of the faces' nearest
 * neighbours, which is where one person ends and the strangers begin in
 * every model seen so far.
 *
 * Each answer is a decision review.json already knows (lk_pair_answer_request):
 * "same" keeps the two faces together (a merge, a move or a confirmation),
 * "different" keeps one out of the other's person (a removal or a rejection).
 * So the answers undo like any decision and the calibration is fitted from
 * them as from any decisions (LK_CALIBRATION_FROM_DECISIONS).
 */
#pragma once

#include <glib.h>

#include "library/lk-library.h"
#include "lk-people.h"
#include "lk-review.h"

G_BEGIN_DECLS

/* Questions the window asks in one round: enough for a fit from decisions
 * (test-pair-questions: an oracle's 20 answers on make-sample fit within
 * 0.02 F1 of the labels' fit), few enough to answer in a minute. */
#define LK_PAIR_QUESTIONS        20
/* Faces whose neighbours are looked at: each costs a pass over every face
 * (n · dim flops). 400 keeps a 6,000-face, 1,024-d library under a second
 * and gives every question twenty anchors to choose from. */
#define LK_PAIR_QUESTION_ANCHORS 400

typedef struct
{
  guint32 a; /* in a person (unassigned only when every face is) */
  guint32 b; /* another photo's face, in another person, the same one, or unassigned */
  double cos;
  double p; /* the pair model's probability; NAN without a calibration */
} LkPairQuestion;

/* Up to `limit` pairs: with `calibration`, the first nearest p = 0.5, the
 * next on a ladder of log-odds either side of it (±1, ±2, ±3, ±4.5, then
 * again), so the answers hold both "same" and "different"; without (NULL),
 * spread over the quantiles of the anchors' nearest neighbours' cosines. The anchors are faces of
 * people, or any faces when every face is alone. Never two faces of one photo, never a face twice,
 * never one pair of people twice and no person in more than two; never a pair the pins already
 * decide or a dismissed face. Deterministic for a seed. Array of LkPairQuestion. */
GArray *lk_pair_questions (const LkLibrary *library, const LkPeople *people, const GPtrArray *pins,
                           const LkCalibration *calibration, gsize limit, guint64 seed);

/* The decision that records an answer about faces a and b on `people` (the
 * people the user saw): same — MERGE their people, MOVE an unassigned b into
 * a's (both unassigned: into a new person), or CONFIRM b in a shared person;
 * different — REMOVE b from a shared person or REJECT it from a's (both
 * unassigned: a becomes a person b never joins, lk_review_apart). NULL with
 * LK_REVIEW_ERROR_BAD_FACE when a face does not exist. */
LkReviewRequest *lk_pair_answer_request (const LkPeople *people, guint32 a, guint32 b,
                                         gboolean same, GError **error);

G_END_DECLS
