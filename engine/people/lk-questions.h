/* lk-questions.h — "Is this Ada?": faces and small people to offer a named person
 *
 * Google Photos asks, one face at a time, whether a face it is unsure of is
 * someone the user named. Here the questions are the unassigned faces and
 * the small unnamed people that pairs link to a named person: "Yes" is the
 * move (a face) or merge (a person) the user could make by hand; "No" a
 * rejection (lk_review_reject_faces), after which the same question is never
 * asked again.
 *
 * The scan's pairs are all at or above the clustering's bar (0.9 by
 * default), and a face with such pairs to a named person is nearly always in
 * that person already: on Debian's 123 real dlib faces they asked nothing
 * (README '"Is this Ada?" on real faces'). So the questions are scored from
 * pairs of their own, down to LK_QUESTION_BAR: an exact rectangular pass of
 * the candidates' embeddings against the named people's faces with the
 * scan's own pair model and kernels (lk_people_question_links).
 */
#pragma once

#include <gio/gio.h>

#include "lk-cluster.h"
#include "scan/lk-scan.h"

G_BEGIN_DECLS

/* Unnamed people of at most this many faces are asked about; a larger one
 * is a person of its own that the user can name or merge (Merge…). */
#define LK_QUESTION_SMALL_PERSON 3
/* A candidate is asked about when this share of it, on average, is linked:
 * the mean over its faces of the best pair probability to the named person
 * (no pair: 0). With links down to LK_QUESTION_BAR, 0.5 asks about a single
 * face with any link, and about a small person when its links are worth half
 * of its faces, not about a person linked by one face only. */
#define LK_QUESTION_MIN_SCORE    0.5
/* The pair probability down to which the questions look for links, below
 * the clustering's bar. On the 123 real faces with the collage cut into
 * photos (README '"Is this Ada?" on real faces', tests/bench-questions), the
 * three faces the clustering leaves out of their person link to it at
 * 0.62–0.85, and the best wrong candidate reaches 0.04: 0.5 asks exactly the
 * three, 0.01 would add the first wrong one. */
#define LK_QUESTION_BAR          0.5

typedef struct
{
  gint32 person;    /* the named person asked about: index into people */
  gint32 candidate; /* an unnamed small person (index into people), or -1: `face` is unassigned */
  guint32 face;     /* the unassigned face, or the candidate's cover */
  double score;     /* mean over the candidate's faces of its best pair probability to person */
} LkQuestion;

/* The questions, highest score first (ties: lower face first), at most
 * `limit` (0: all); one per candidate, for the named person it links best.
 * Left out: hidden people (as candidates and as named people), a candidate
 * with a face the named person's pin excludes (a "No" or "not this person"
 * before), and one with a face of a photo the named person already has a
 * face in (two faces of one photo are never one person: "Yes" could not be
 * done). Dismissed faces have no pairs in the people (lk_cluster) and are
 * never unassigned. O(pairs + questions · faces). Array of LkQuestion. */
GArray *lk_people_questions (const LkPeople *people, const LkClusterInput *input,
                             const GPtrArray *pins, gsize limit);

/* The links the questions are scored from: every pair (a candidate's face, a
 * face of a named person who is not hidden) whose probability by the pair
 * model of lk-scan.h (the calibration, the photo and gallery rules) is at
 * least `bar`, with each face's role (ROLE_* in lk-questions.c) they were
 * found for. */
typedef struct
{
  gsize n_faces;
  double bar;
  LkCalibration calibration;
  guint8 *role;     /* n_faces: not asked about, a candidate's, a named person's */
  GArray *links;    /* of LkPair: i < j, the library's face indices, in no order */
  guint64 compared; /* pairs the call that made them compared */
} LkQuestionLinks;

/* The links for `people`, exactly the pairs the naive loop would find,
 * computed by lk_scan over those rows alone (row_range × column_begin:
 * candidates × named faces, never a triangle). `faces` are the library's
 * (lk_faces_from_library), of people->n_faces faces. With `previous` (may be
 * NULL: the links of other people of the same faces, calibration and bar;
 * anything else is ignored), only the pairs whose roles changed are compared
 * (a decision names, moves or merges a few faces: its pass is its new
 * faces' rows or columns). `background`: LkScanOptions.background. NULL with
 * `error` (G_IO_ERROR_CANCELLED when cancelled). Copies the rows it
 * compares. */
LkQuestionLinks *lk_people_question_links (const LkPeople *people, const LkFaces *faces,
                                           const LkCalibration *calibration, double bar,
                                           const LkQuestionLinks *previous, gboolean background,
                                           GCancellable *cancellable, GError **error);
void lk_question_links_free (LkQuestionLinks *links);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkQuestionLinks, lk_question_links_free)

/* Where the links of the library in `folder` are kept for its next opening:
 * beside its kept scan (lk_scan_cache_path), in the user's cache, never in
 * the library's folder. */
char *lk_question_links_path (const char *folder);

/* Keeps `links` at `path` for the next opening, under `faces` (the
 * LkScanReuse.faces of the scan they were found on): written to a temporary
 * file and renamed. FALSE when it could not be written, which is not an
 * error: the next opening makes a full pass. */
gboolean lk_question_links_keep (const LkQuestionLinks *links, guint64 faces, const char *path);

/* The links kept at `path`, to pass as lk_people_question_links' `previous`,
 * when they are of these faces (`faces`: LkScanReuse.faces; `n_faces`), this
 * calibration and this bar; their `compared` is 0. Anything else — no file,
 * a short or damaged one, one of another version, other faces (another
 * library, a changed row, crop, photo or gallery flag, faces added, removed
 * or reordered), another calibration or bar — is NULL, with why in *why
 * (may be NULL): a full pass, never an error. */
LkQuestionLinks *lk_question_links_kept (const char *path, guint64 faces, gsize n_faces,
                                         const LkCalibration *calibration, double bar, char **why);

/* lk_people_questions scored from `links` (`input` for the photos; its pairs
 * are not read). */
GArray *lk_people_questions_from_links (const LkPeople *people, const LkClusterInput *input,
                                        const LkQuestionLinks *links, const GPtrArray *pins,
                                        gsize limit);

G_END_DECLS
