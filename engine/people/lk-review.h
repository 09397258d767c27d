/* lk-review.h — the user's review decisions, and review.json
 *
 * A decision is recorded against faces, never against a clustering: it keeps
 * the id and the faces the person had when the user acted. Replaying the log
 * yields LkPins (lk-cluster.h) — faces that stay together, faces that never
 * return, names, covers, hidden flags — which the clustering honours, so every
 * decision survives a re-scan and a re-cluster with different probabilities.
 *
 * Undo and redo are unlimited and are saved with the log, so they persist
 * across runs. review.json is saved under a lock, merged with what other
 * writers saved, and written atomically (lk_review_save). It names faces by
 * key (lk_library_face_keys), so it survives a re-export of the library:
 * decisions about faces that are gone are kept and saved back as they were
 * (lk_review_n_gone). A corrupt or ambiguous (a member named twice) file is
 * refused and only replaced when the caller says so (LK_REVIEW_SAVE_REPLACE).
 *
 * review.json, version 2 (unknown members of a decision are ignored; unknown
 * top-level members are kept as they are when the file is saved again):
 *
 *   { "format": "likeness-review", "version": 2,
 *     "fingerprint": "<LkLibrary->fingerprint>" (informational), "faces": <face count>,
 *     "decisions": [ <decision>, … ],   oldest first: what is in effect
 *     "redo": [ <decision>, … ] }       undone, the next redo last
 *
 *   <decision>: { "id": "<unique, e.g. a random UUID>" (absent in files written before
 *                       ids: then "legacy-<list>-<index>"),
 *                 "op": "name" | "merge" | "remove" | "move" | "cover" |
 *                       "hide" | "unhide" | "confirm" | "dismiss" | "undismiss",
 *                 "person": "<id acted on>" (absent for a move of unassigned faces,
 *                     a dismissal and its reversal),
 *                 "faces": [the person's faces when the user acted, by key],
 *                 "name": "…" (name; absent: the name was forgotten),
 *                 "selected": [faces removed or moved] (remove, move),
 *                 "other": "<id>", "other_faces": […] (merge: the person merged
 *                     in; move: the target, a new id when it was a new person),
 *                 "face": "<face key>" (cover, confirm),
 *                 "group": "<id>" (optional: decisions made as one, undone and redone
 *                     together — several people merged at once) }
 *
 *   "dismiss": the "selected" faces are no face at all (a logo, a pattern the
 *   detector took for one): they leave every person, join none, and are never
 *   suggested, until an "undismiss" of them or a later decision that holds
 *   them. A file that holds either op is written as version 3, so a Likeness
 *   that reads version 2 refuses it ("update Likeness") instead of stopping at
 *   an op it does not know; any other file is still written as version 2.
 *   "group" is ignored by a version-2 reader, which then undoes the merges
 *   one at a time: nothing is lost.
 *
 * Version 1 was the same with faces as indices into the library, bound to its
 * fingerprint; it is read (and migrated) only when the fingerprint matches,
 * else refused as LK_REVIEW_ERROR_FOREIGN.
 *
 * Every decision function takes the people the user was looking at (the
 * current clustering), checks the request against them and returns FALSE with
 * a GError, changing nothing, when it cannot be done.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "library/lk-library.h"
#include "lk-people.h"
#include "lk-pin.h"

G_BEGIN_DECLS

#define LK_REVIEW_ERROR (lk_review_error_quark ())
GQuark lk_review_error_quark (void);

typedef enum
{
  LK_REVIEW_ERROR_IO,         /* review.json could not be read or written */
  LK_REVIEW_ERROR_CORRUPT,    /* review.json is not a review file this program can read */
  LK_REVIEW_ERROR_VERSION,    /* review.json is newer than this program */
  LK_REVIEW_ERROR_FOREIGN,    /* review.json belongs to another library (fingerprint) */
  LK_REVIEW_ERROR_NO_PERSON,  /* no person has this id */
  LK_REVIEW_ERROR_BAD_FACE,   /* the face does not exist or is not where the request says */
  LK_REVIEW_ERROR_SAME_PHOTO, /* the request would put two faces of one photo in one person */
  LK_REVIEW_ERROR_INVALID,    /* anything else the request gets wrong (empty name, …) */
  LK_REVIEW_ERROR_READ_ONLY,  /* review.json's folder cannot be written (EROFS, EACCES, EPERM):
                               * a read-only medium or no permission; save elsewhere */
} LkReviewError;

/* The newest version this Likeness reads. It writes LK_REVIEW_VERSION only
 * when the file holds a dismissal (above), else version 2. */
#define LK_REVIEW_VERSION 3

typedef struct _LkReview LkReview;

/* An empty review of `library`'s faces, named in review.json by their keys
 * (lk_library_face_keys). */
LkReview *lk_review_new_for_library (const LkLibrary *library);
/* Reads `path` for `library`. A missing file gives an empty review; a corrupt
 * file (LK_REVIEW_ERROR_CORRUPT), a newer version (_VERSION) or a version-1
 * file of another library (_FOREIGN: its faces are indices into that
 * library) is an error that names the file and what is wrong. Decisions that
 * name faces no longer in the library are kept (lk_review_n_gone) and saved
 * back as they were. A version-1 file of this library (same fingerprint) is
 * migrated: read by index and written again, by key, at once (when the folder
 * can be written; else by the next save). */
LkReview *lk_review_load_for_library (const char *path, const LkLibrary *library, GError **error);

/* The same without a library, for tests and tools: faces are keyed by their
 * index ("0", "1", …), so the review does not survive a reordering.
 * `photo` (n_faces, may be NULL) lets decisions refuse two faces of one
 * photo. */
LkReview *lk_review_new (gsize n_faces, const char *fingerprint, const guint64 *photo);
LkReview *lk_review_load (const char *path, gsize n_faces, const char *fingerprint,
                          const guint64 *photo, GError **error);
void lk_review_free (LkReview *review);

typedef enum
{
  LK_REVIEW_SAVE_DEFAULT = 0,
  /* Replace a corrupt or foreign review.json ("start over"). Without this flag
   * such a file is never overwritten. */
  LK_REVIEW_SAVE_REPLACE = 1 << 0,
} LkReviewSaveFlags;

/* Saves the review to `path`, without losing what any other writer saved
 * there: under an advisory lock (flock on ".review.json.lock" beside the
 * file, so every Likeness process saving this file takes turns), review.json
 * is read again and merged with this review — decisions made, undone or
 * redone here since this review last agreed with the file (its load, save or
 * refresh) go where this review has them, every other decision stays where
 * the file has it, new ones after the file's — and the result is written
 * with g_file_set_contents_full (a temporary file, flushed, renamed over;
 * then the folder is flushed). A symbolic link is written through to its
 * target, whose mode is kept. On a file system without locks the save goes
 * on unlocked and says so once (g_message).
 *
 * The merged file may hold decisions this review has not taken in:
 * lk_review_refresh takes them in. The review's own decisions are not changed
 * by a save, so the people on screen stay valid.
 *
 * On failure the previous file is intact and the decisions stay in memory;
 * the error names the file and the step that failed (LK_REVIEW_ERROR_READ_ONLY
 * when the folder cannot be written, else _IO; _CORRUPT, _VERSION or _FOREIGN
 * when review.json is not a file to merge with, unless
 * LK_REVIEW_SAVE_REPLACE). After a successful save, temporary files that a
 * save killed mid-way left in the folder (regular files only, older than a
 * minute) are removed.
 *
 * Not thread-safe against other calls on the same review: a caller that
 * saves on a worker thread must make no decision, undo, redo or refresh
 * until the save returns (reading pins and descriptions is fine). */
gboolean lk_review_save (LkReview *review, const char *path, LkReviewSaveFlags flags,
                         GError **error);

/* Reads `path` again and takes in what other writers saved since this review
 * last agreed with it (the merge of lk_review_save, without writing): their
 * new decisions, undos and redos. *n_changed (may be NULL) receives how many
 * decisions came into effect or left it; when it is not 0, the pins changed
 * and the people should be clustered again. A missing file changes nothing.
 * Errors as lk_review_load. */
gboolean lk_review_refresh (LkReview *review, const char *path, guint *n_changed, GError **error);

/* The constraints the decisions amount to (of LkPin *), for lk_cluster().
 * Owned by the review; valid until the next decision, undo or redo. */
const GPtrArray *lk_review_pins (LkReview *review);

/* The lowest layer of decisions, replayed before the user's (copied): the
 * people of the source the library was imported from (lk-source-people.h).
 * They show as pinned people until a decision says otherwise; they are not
 * decisions themselves (nothing to undo, never saved in review.json). */
void lk_review_set_base_pins (LkReview *review, const GPtrArray *pins);

const char *lk_review_fingerprint (const LkReview *review);
guint lk_review_n_decisions (const LkReview *review);
/* How many decisions in effect name at least one face that is no longer in
 * the library (removed by a re-export): they are kept in review.json and
 * apply to the faces that remain. */
guint lk_review_n_gone (const LkReview *review);
gboolean lk_review_can_undo (const LkReview *review);
gboolean lk_review_can_redo (const LkReview *review);
/* The id of the newest decision in effect (the one undo would act on), or
 * NULL: a calibration change (lk-calibrate.h) records it, so undo takes the
 * two kinds of change back in the order they were made. */
const char *lk_review_last_decision_id (const LkReview *review);
/* Decisions in effect that say whether faces are one person: merges,
 * "not this person" (removals, rejections, moves) and confirmations — the
 * evidence a calibration can be fitted from (LK_CALIBRATION_FROM_DECISIONS). */
guint lk_review_n_identity_decisions (const LkReview *review);
/* A one-line description of the decision undo or redo would act on
 * ("name p3 “Ada”"), or NULL when there is none. */
char *lk_review_describe_undo (const LkReview *review);
char *lk_review_describe_redo (const LkReview *review);

/* Decisions. `people` is the clustering the user acted on. */
gboolean lk_review_name (LkReview *review, const LkPeople *people, const char *person_id,
                         const char *name, /* NULL or "": forget the name */
                         GError **error);
/* `other_id` joins `person_id`, which keeps its id (and its name, else the other's). */
gboolean lk_review_merge (LkReview *review, const LkPeople *people, const char *person_id,
                          const char *other_id, GError **error);
/* "Not this person": the faces leave the person and never return to it. */
gboolean lk_review_remove (LkReview *review, const LkPeople *people, const char *person_id,
                           const guint32 *faces, gsize n_faces, GError **error);
/* The faces leave `person_id` (never to return) and join `target_id`; a NULL
 * target makes them a new person. `new_id` (may be NULL) receives the
 * target's id. A face may also be unassigned: person_id NULL. */
gboolean lk_review_move (LkReview *review, const LkPeople *people, const char *person_id,
                         const guint32 *faces, gsize n_faces, const char *target_id, char **new_id,
                         GError **error);
gboolean lk_review_set_cover (LkReview *review, const LkPeople *people, const char *person_id,
                              guint32 face, GError **error);
gboolean lk_review_set_hidden (LkReview *review, const LkPeople *people, const char *person_id,
                               gboolean hidden, GError **error);
/* "No, not this person" for a face outside the person (an unassigned face
 * suggested as a match): the face never joins it. Recorded like a removal,
 * so it survives re-scans and undoes like any decision. */
gboolean lk_review_reject (LkReview *review, const LkPeople *people, const char *person_id,
                           guint32 face, GError **error);
/* The same for several faces at once (a small unnamed person that is not
 * `person_id`, answered "No" to "Is this Ada?"): one decision. */
gboolean lk_review_reject_faces (LkReview *review, const LkPeople *people, const char *person_id,
                                 const guint32 *faces, gsize n_faces, GError **error);
/* "Different people" about faces no person holds: `face` becomes a person of
 * its own that `others` never join (recorded as a removal from that new
 * person). `new_id` (may be NULL) receives its id. */
gboolean lk_review_apart (LkReview *review, const LkPeople *people, guint32 face,
                          const guint32 *others, gsize n_others, char **new_id, GError **error);
/* "Yes, this is them": the face stays with the person from now on. */
gboolean lk_review_confirm (LkReview *review, const LkPeople *people, const char *person_id,
                            guint32 face, GError **error);

/* Several people join `person_id` at once: one merge decision per other
 * person (in the order given), sharing one group, so one undo takes them all
 * back and one redo makes them again. Checked as a whole first: nothing is
 * recorded when any of them cannot be merged (a person named twice, itself,
 * two faces of one photo among them all). */
gboolean lk_review_merge_many (LkReview *review, const LkPeople *people, const char *person_id,
                               const char *const *other_ids, gsize n_others, GError **error);

/* "Not a face": the faces (anywhere: in a person or unassigned) are
 * dismissed for good — out of every person and every suggestion, kept
 * across re-scans and re-imports (they are named by key), undoable. Refused
 * for a face already dismissed. */
gboolean lk_review_dismiss (LkReview *review, const LkPeople *people, const guint32 *faces,
                            gsize n_faces, GError **error);
/* Brings dismissed faces back (a decision too, undoable): they are faces
 * again and cluster like any other. Refused for a face that is not dismissed. */
gboolean lk_review_undismiss (LkReview *review, const LkPeople *people, const guint32 *faces,
                              gsize n_faces, GError **error);
/* The faces the decisions in effect dismiss (guint32, ascending), for
 * lk_cluster (LkClusterOptions.dismissed). Owned by the review; valid until
 * the next decision, undo, redo or refresh. */
const GArray *lk_review_dismissed (LkReview *review);

/* A photo's path, for messages: a decision refused because two faces share
 * a photo names the photo by it ("faces 147 and 149 are both in photo 61"
 * tells the user nothing). Not saved. */
void lk_review_set_photo_path (LkReview *review, guint64 photo, const char *path);

/* review.json's top-level "calibration" object (lk-calibrate.h gives it its
 * meaning), or NULL; saved with the decisions. set copies (NULL removes it). */
JsonNode *lk_review_get_calibration (const LkReview *review);
void lk_review_set_calibration (LkReview *review, JsonNode *calibration);

/* FALSE when there is nothing to undo / redo. */
gboolean lk_review_undo (LkReview *review);
gboolean lk_review_redo (LkReview *review);

/* --- one decision as a value ---------------------------------------------------------------- */

/* What the user asked for, whoever asked (the window's actions, a
 * likeness-cli review command line, a queue of decisions waiting for a scan
 * to land): one value, applied by lk_review_apply. */
typedef enum
{
  LK_REVIEW_NAME,      /* person, name (NULL or "": forget the name) */
  LK_REVIEW_MERGE,     /* other joins person */
  LK_REVIEW_REMOVE,    /* faces leave person, never to return */
  LK_REVIEW_MOVE,      /* faces leave person (NULL: unassigned) for other (NULL: a new person) */
  LK_REVIEW_COVER,     /* faces[0] is person's cover */
  LK_REVIEW_HIDE,      /* person */
  LK_REVIEW_UNHIDE,    /* person */
  LK_REVIEW_CONFIRM,   /* faces[0] stays with person */
  LK_REVIEW_DISMISS,   /* faces are no face (person unused) */
  LK_REVIEW_UNDISMISS, /* faces are faces again (person unused) */
  LK_REVIEW_REJECT,    /* faces, outside person, never join it (person NULL: faces[0], unassigned,
                        * becomes a person of its own the others never join) */
  LK_REVIEW_UNDO,
  LK_REVIEW_REDO,
  LK_REVIEW_N_ACTIONS,
} LkReviewAction;

typedef struct
{
  LkReviewAction action;
  char *person;  /* the person acted on */
  char *other;   /* MERGE: the person merged in; MOVE: the target */
  char **others; /* MERGE: more people merged in with `other`, in one undo step; or NULL */
  char *name;    /* NAME */
  GArray *faces; /* guint32: REMOVE, MOVE, DISMISS, UNDISMISS, REJECT: the faces;
                  * COVER, CONFIRM: one */
} LkReviewRequest;

LkReviewRequest *lk_review_request_new (LkReviewAction action, const char *person);
LkReviewRequest *lk_review_request_copy (const LkReviewRequest *request);
void lk_review_request_free (LkReviewRequest *request);
/* The action's name, as likeness-cli review spells it ("name", "undo"). */
const char *lk_review_action_name (LkReviewAction action);

/* A request from the words of a command line, as likeness-cli review takes
 * them (`words[0]` the action):
 *   name PERSON NAME · merge PERSON OTHER… · remove PERSON FACE… ·
 *   move PERSON|unassigned TARGET|new FACE… · cover PERSON FACE ·
 *   hide PERSON · unhide PERSON · confirm PERSON FACE · reject PERSON FACE… ·
 *   dismiss FACE… · undismiss FACE… · undo · redo
 * NULL with LK_REVIEW_ERROR_INVALID naming the action and what it takes, or
 * _BAD_FACE for a face that is not a number. */
LkReviewRequest *lk_review_request_parse (const char *const *words, int n_words, GError **error);

/* Applies `request` to the review, checked against `people` (the clustering
 * the user acted on; unused by undo and redo, may then be NULL), as the
 * lk_review_name () … lk_review_redo () above do. `new_id` (may be NULL)
 * receives a move's target id. FALSE with a GError, changing nothing, when
 * it cannot be done (LK_REVIEW_ERROR_INVALID: nothing to undo or redo). */
gboolean lk_review_apply (LkReview *review, const LkPeople *people, const LkReviewRequest *request,
                          char **new_id, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkReviewRequest, lk_review_request_free)

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkReview, lk_review_free)

G_END_DECLS
