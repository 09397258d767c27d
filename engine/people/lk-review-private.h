/* lk-review-private.h — what lk-review*.c share, and test-only hooks into the save
 *
 * A save is a sequence of steps; a test makes one of them fail (as a full
 * disk, a read-only folder or a power cut would) and checks that review.json
 * on disk is still the old file or already the new one. The write itself is
 * g_file_set_contents_full, whose system calls tests/lk-fail-shim.c fails
 * from outside (test-review-durability).
 */
#pragma once

#include "lk-review.h"

G_BEGIN_DECLS

typedef enum
{
  LK_REVIEW_STEP_NONE = 0,
  LK_REVIEW_STEP_LOCK,      /* creating the lock file beside review.json */
  LK_REVIEW_STEP_WRITE,     /* writing and renaming the new file (before it starts) */
  LK_REVIEW_STEP_DIR_OPEN,  /* opening the folder */
  LK_REVIEW_STEP_DIR_FSYNC, /* flushing the folder */
  LK_REVIEW_N_STEPS,
} LkReviewStep;

/* The next save fails at `step` (with errno `errno_value`); NONE: no failure. */
void lk_review_inject_failure (LkReviewStep step, int errno_value);

/* What lk-review.c (the log and its replay), lk-review-requests.c,
 * lk-review-load.c and lk-review-save.c share. */

#define REVIEW_FORMAT "likeness-review"

/* A decision's kind in the log is the request's action; a rejection is
 * recorded as a removal, and undo and redo are never recorded. */
typedef LkReviewAction Op;
#define N_OPS LK_REVIEW_REJECT

/* The actions' names: "op" in review.json (the first N_OPS) and the words of
 * likeness-cli review. */
G_GNUC_INTERNAL extern const char *const lk_review_op_names[LK_REVIEW_N_ACTIONS];

typedef struct
{
  char *id; /* unique: how writers that merge their logs tell decisions apart */
  Op op;
  char *person; /* the person acted on; NULL for a move of unassigned faces */
  /* Faces are slots (guint32): below n_faces a face of the library (its
   * index), from n_faces up a face that is no longer in it (review->gone). */
  GArray *faces;       /* the person's faces when the user acted */
  char *name;          /* NAME: the new name, NULL to forget it */
  GArray *selected;    /* REMOVE, MOVE: the faces acted on */
  char *other;         /* MERGE: the person merged in; MOVE: the target */
  GArray *other_faces; /* MERGE, MOVE: the other person's faces */
  gint64 face;         /* COVER, CONFIRM: a slot; else -1 */
  char *group;         /* decisions made as one (a merge of several people), or NULL */
} Decision;

/* The keys that name the library's faces in review.json (lk_library_face_keys,
 * or the faces' indices when no library was given), shared read-only by a
 * review and the copies of review.json a save reads to merge with. */
typedef struct
{
  gint ref;
  gsize n_faces;
  char **keys;       /* n_faces keys, then NULL */
  GHashTable *index; /* key → face + 1 */
} FaceKeys;

struct _LkReview
{
  gsize n_faces;
  FaceKeys *keys;
  /* Keys of faces the decisions name that are not in the library (removed
   * from it since): slot n_faces + k is gone->pdata[k]. Kept so that the
   * decisions naming them are saved back as they were. */
  GPtrArray *gone;
  GHashTable *gone_slot; /* key → slot */
  guint version;         /* of the review.json this was read from, 0 when none */
  char *fingerprint;
  guint64 *photo;          /* n_faces, or NULL */
  GHashTable *photo_paths; /* photo id (guint64 *) → its path, for messages; or NULL */
  GPtrArray *done;         /* of Decision *, oldest first */
  GPtrArray *undone;       /* of Decision *, the next redo last */
  GPtrArray *pins;         /* replay of `done`, NULL when out of date */
  GArray *dismissed;       /* replay of `done`: the faces no face, with pins */
  /* Decision id → SYNC_DONE or SYNC_UNDONE: where each decision stood when
   * this review last agreed with review.json (load, save, refresh). A
   * decision whose place differs now was moved by this writer; any other is
   * as the file says (merge_logs). */
  GHashTable *synced;
  /* Top-level members of review.json this version does not know (another
   * version's, or another tool's), written back as they are. */
  JsonObject *unknown;
  GPtrArray *base;          /* of LkPin *: the lowest layer (lk_review_set_base_pins), or NULL */
  JsonNode *calibration;    /* the top-level "calibration" object, kept whole, or NULL */
  gboolean calibration_set; /* set here since this review last agreed with the file */
};

/* Where a decision sits: what merge_logs compares. */
typedef enum
{
  SYNC_NONE = 0,
  SYNC_DONE,
  SYNC_UNDONE,
} Sync;

/* lk-review.c */
G_GNUC_INTERNAL FaceKeys *lk_review_face_keys_new (gsize n_faces, char **keys);
G_GNUC_INTERNAL void lk_review_face_keys_unref (FaceKeys *k);
G_GNUC_INTERNAL const char *lk_review_key_of (const LkReview *review, guint32 slot);
G_GNUC_INTERNAL guint32 lk_review_slot_of (LkReview *review, const char *key);
G_GNUC_INTERNAL GArray *lk_review_face_array (void);
G_GNUC_INTERNAL Decision *lk_review_decision_new (Op op, const char *person);
G_GNUC_INTERNAL void lk_review_decision_free (Decision *d);
G_GNUC_INTERNAL int lk_review_compare_faces (gconstpointer x, gconstpointer y);
G_GNUC_INTERNAL LkReview *lk_review_new_with_keys (FaceKeys *keys, const char *fingerprint,
                                                   const guint64 *photo);
G_GNUC_INTERNAL char *lk_review_new_decision_id (void);
G_GNUC_INTERNAL void lk_review_commit (LkReview *review, Decision *d);

/* lk-review-load.c */
G_GNUC_INTERNAL LkReview *lk_review_load_with_keys (const char *path, FaceKeys *keys,
                                                    const char *fingerprint, const guint64 *photo,
                                                    GError **error);

G_END_DECLS
