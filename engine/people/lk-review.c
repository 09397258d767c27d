/* lk-review.c — the decision log, its replay into pins, and review.json
 *
 * Why a log and not a table of people: the clustering changes under the user
 * (a re-scan with another calibration, a new threshold), so a decision can
 * only be kept in terms that do not change — faces. Each decision stores the
 * id and the faces of the person as the user saw it; replaying the log from
 * the start turns it into LkPins (faces held together, faces excluded, name,
 * cover, hidden). Undo is "replay one decision fewer", so it is exact and
 * unlimited, and the undone decisions are saved as the redo stack, so both
 * survive a restart. Replay is O(faces named by the log), microseconds for
 * the hundreds of decisions a review session makes.
 *
 * Any decision about a person holds all of the person's current faces:
 * acting on a person is reviewing it, and a re-cluster must not take its
 * faces away. A later decision wins over an earlier one about the same face.
 *
 * review.json has many writers (the window, likeness-cli, a second window),
 * so a save never just writes what this process holds: under a flock on a
 * lock file beside review.json it reads the file again and merges by decision
 * id (merge_logs), then writes with g_file_set_contents_full (CONSISTENT |
 * DURABLE: temporary file, fsync, rename) and fsyncs the folder, which is what
 * makes the rename itself survive a power cut. GLib's writer replaced the
 * hand-written one (same steps); its system calls are failed from outside by
 * tests/lk-fail-shim.c, and Likeness's own steps from inside
 * (lk-review-private.h). Without the lock and the merge, two likeness-cli
 * review started together lost a decision in 86 rounds of 100 (issue 13).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "library/lk-json.h"
#include "lk-review-private.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-review-error-quark, lk_review_error)
/* clang-format on */

#define REVIEW_FORMAT "likeness-review"

/* A decision's kind in the log is the request's action; a rejection is
 * recorded as a removal, and undo and redo are never recorded. */
typedef LkReviewAction Op;
#define N_OPS LK_REVIEW_REJECT

/* The actions' names: "op" in review.json (the first N_OPS) and the words of
 * likeness-cli review. */
static const char *const op_names[LK_REVIEW_N_ACTIONS] = {
  "name",    "merge",   "remove",    "move",   "cover", "hide", "unhide",
  "confirm", "dismiss", "undismiss", "reject", "undo",  "redo",
};

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

static FaceKeys *
face_keys_new (gsize n_faces, char **keys)
{
  FaceKeys *k = g_new0 (FaceKeys, 1);
  k->ref = 1;
  k->n_faces = n_faces;
  if (keys == NULL)
    {
      keys = g_new0 (char *, n_faces + 1);
      for (gsize f = 0; f < n_faces; f++)
        keys[f] = g_strdup_printf ("%" G_GSIZE_FORMAT, f);
    }
  k->keys = keys;
  k->index = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize f = 0; f < n_faces; f++)
    g_hash_table_insert (k->index, keys[f], GSIZE_TO_POINTER (f + 1));
  return k;
}

static FaceKeys *
face_keys_ref (FaceKeys *k)
{
  g_atomic_int_inc (&k->ref);
  return k;
}

static void
face_keys_unref (FaceKeys *k)
{
  if (!g_atomic_int_dec_and_test (&k->ref))
    return;
  g_hash_table_unref (k->index);
  g_strfreev (k->keys);
  g_free (k);
}

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

static LkReviewStep fail_step;
static int fail_errno;

void
lk_review_inject_failure (LkReviewStep step, int errno_value)
{
  fail_step = step;
  fail_errno = errno_value;
}

/* --- face keys ------------------------------------------------------------------------------- */

/* The key review.json names `slot` by. */
static const char *
key_of (const LkReview *review, guint32 slot)
{
  if (slot < review->n_faces)
    return review->keys->keys[slot];
  return g_ptr_array_index (review->gone, slot - review->n_faces);
}

/* The slot of `key`: its face, or a slot past the library's faces. */
static guint32
slot_of (LkReview *review, const char *key)
{
  gpointer face = g_hash_table_lookup (review->keys->index, key);
  if (face != NULL)
    return (guint32) (GPOINTER_TO_SIZE (face) - 1);
  gpointer slot;
  if (g_hash_table_lookup_extended (review->gone_slot, key, NULL, &slot))
    return GPOINTER_TO_UINT (slot);
  guint32 k = (guint32) (review->n_faces + review->gone->len);
  char *copy = g_strdup (key);
  g_ptr_array_add (review->gone, copy);
  g_hash_table_insert (review->gone_slot, copy, GUINT_TO_POINTER (k));
  return k;
}

/* --- decisions ------------------------------------------------------------------------------- */

static GArray *
face_array (void)
{
  return g_array_new (FALSE, FALSE, sizeof (guint32));
}

static Decision *
decision_new (Op op, const char *person)
{
  Decision *d = g_new0 (Decision, 1);
  d->op = op;
  d->person = g_strdup (person);
  d->faces = face_array ();
  d->selected = face_array ();
  d->other_faces = face_array ();
  d->face = -1;
  return d;
}

static void
decision_free (Decision *d)
{
  g_free (d->id);
  g_free (d->person);
  g_free (d->name);
  g_free (d->other);
  g_free (d->group);
  g_array_unref (d->faces);
  g_array_unref (d->selected);
  g_array_unref (d->other_faces);
  g_free (d);
}

static char *
describe_face (const LkReview *review, gint64 face)
{
  if ((guint64) face < review->n_faces)
    return g_strdup_printf ("face %" G_GINT64_FORMAT, face);
  return g_strdup_printf ("face “%s” (no longer in the library)", key_of (review, (guint32) face));
}

static char *
decision_describe (const LkReview *review, const Decision *d)
{
  g_autofree char *face = d->face >= 0 ? describe_face (review, d->face) : NULL;

  switch (d->op)
    {
      case LK_REVIEW_NAME:
        return d->name ? g_strdup_printf ("name %s “%s”", d->person, d->name)
                       : g_strdup_printf ("forget the name of %s", d->person);
      case LK_REVIEW_MERGE:
        return g_strdup_printf ("merge %s into %s", d->other, d->person);
      case LK_REVIEW_REMOVE:
        return g_strdup_printf ("remove %u face%s from %s", d->selected->len,
                                d->selected->len == 1 ? "" : "s", d->person);
      case LK_REVIEW_MOVE:
        return g_strdup_printf ("move %u face%s from %s to %s", d->selected->len,
                                d->selected->len == 1 ? "" : "s",
                                d->person ? d->person : "unassigned", d->other);
      case LK_REVIEW_COVER:
        return g_strdup_printf ("make %s the cover of %s", face, d->person);
      case LK_REVIEW_HIDE:
        return g_strdup_printf ("hide %s", d->person);
      case LK_REVIEW_UNHIDE:
        return g_strdup_printf ("show %s", d->person);
      case LK_REVIEW_CONFIRM:
        return g_strdup_printf ("confirm %s is %s", face, d->person);
      case LK_REVIEW_DISMISS:
        return g_strdup_printf ("dismiss %u face%s as no face", d->selected->len,
                                d->selected->len == 1 ? "" : "s");
      case LK_REVIEW_UNDISMISS:
        return g_strdup_printf ("bring back %u dismissed face%s", d->selected->len,
                                d->selected->len == 1 ? "" : "s");
      case N_OPS:
      default:
        break;
    }
  g_return_val_if_reached (NULL);
}

static int
compare_faces (gconstpointer x, gconstpointer y)
{
  guint32 a = *(const guint32 *) x, b = *(const guint32 *) y;
  return a < b ? -1 : a > b;
}

/* --- replay ---------------------------------------------------------------------------------- */

typedef struct
{
  GPtrArray *pins;       /* of LkPin *, NULL where a merge removed one */
  GHashTable *by_id;     /* id -> index into pins (+1) */
  GHashTable **excluded; /* per pin: set of faces */
  gint32 *owner;         /* per face: pin index or -1 */
  guint8 *dismissed;     /* per face: 1 when no face */
  gsize n_faces;
} Replay;

static gint32
replay_pin (Replay *r, const char *id)
{
  gpointer v = g_hash_table_lookup (r->by_id, id);
  if (v)
    return GPOINTER_TO_INT (v) - 1;
  gint32 k = (gint32) r->pins->len;
  LkPin *pin = lk_pin_new (id);
  g_ptr_array_add (r->pins, pin);
  r->excluded = g_renew (GHashTable *, r->excluded, r->pins->len);
  r->excluded[k] = g_hash_table_new (NULL, NULL);
  g_hash_table_insert (r->by_id, pin->id, GINT_TO_POINTER (k + 1));
  return k;
}

static void
replay_hold (Replay *r, gint32 k, const GArray *faces)
{
  for (guint m = 0; m < faces->len; m++)
    {
      guint32 f = g_array_index (faces, guint32, m);
      if (f >= r->n_faces)
        continue; /* no longer in the library */
      r->owner[f] = k;
      /* A later decision that holds the face says it is one. */
      r->dismissed[f] = 0;
      g_hash_table_remove (r->excluded[k], GUINT_TO_POINTER (f));
    }
}

static void
replay_exclude (Replay *r, gint32 k, const GArray *faces)
{
  for (guint m = 0; m < faces->len; m++)
    {
      guint32 f = g_array_index (faces, guint32, m);
      if (f >= r->n_faces)
        continue;
      if (r->owner[f] == k)
        r->owner[f] = -1;
      g_hash_table_add (r->excluded[k], GUINT_TO_POINTER (f));
    }
}

static void
replay_one (Replay *r, const Decision *d)
{
  gint32 k = d->person ? replay_pin (r, d->person) : -1;
  if (k >= 0)
    replay_hold (r, k, d->faces);
  LkPin *pin = k >= 0 ? g_ptr_array_index (r->pins, k) : NULL;

  switch (d->op)
    {
      case LK_REVIEW_NAME:
        g_free (pin->name);
        pin->name = g_strdup (d->name);
        break;
      case LK_REVIEW_MERGE:
        {
          gint32 q = replay_pin (r, d->other);
          LkPin *other = g_ptr_array_index (r->pins, q);
          replay_hold (r, q, d->other_faces);
          /* The merged faces are the person's now, whatever an earlier "not
           * this person" said: merging back faces taken out brings them back
           * (it did nothing, and said "merged", in issue 14). */
          for (gsize f = 0; f < r->n_faces; f++)
            if (r->owner[f] == q)
              {
                r->owner[f] = k;
                g_hash_table_remove (r->excluded[k], GUINT_TO_POINTER (f));
              }
          GHashTableIter it;
          gpointer key;
          g_hash_table_iter_init (&it, r->excluded[q]);
          while (g_hash_table_iter_next (&it, &key, NULL))
            if (r->owner[GPOINTER_TO_UINT (key)] != k)
              g_hash_table_add (r->excluded[k], key);
          if (pin->name == NULL)
            pin->name = g_strdup (other->name);
          if (pin->cover < 0)
            pin->cover = other->cover;
          g_hash_table_remove (r->by_id, other->id);
          g_hash_table_remove_all (r->excluded[q]);
          lk_pin_free (other);
          r->pins->pdata[q] = NULL;
        }
        break;
      case LK_REVIEW_REMOVE:
      case LK_REVIEW_MOVE:
        /* The person keeps its other faces and never gets these back. */
        if (k >= 0)
          replay_exclude (r, k, d->selected);
        if (d->op == LK_REVIEW_MOVE)
          {
            gint32 t = replay_pin (r, d->other);
            replay_hold (r, t, d->other_faces);
            replay_hold (r, t, d->selected);
          }
        break;
      case LK_REVIEW_COVER:
        if ((guint64) d->face < r->n_faces)
          pin->cover = d->face;
        break;
      case LK_REVIEW_HIDE:
      case LK_REVIEW_UNHIDE:
        pin->hidden = d->op == LK_REVIEW_HIDE;
        break;
      case LK_REVIEW_DISMISS:
      case LK_REVIEW_UNDISMISS:
        /* A dismissed face leaves whatever person held it; brought back, it
         * clusters like a face nobody decided about. */
        for (guint m = 0; m < d->selected->len; m++)
          {
            guint32 f = g_array_index (d->selected, guint32, m);
            if (f >= r->n_faces)
              continue;
            if (d->op == LK_REVIEW_DISMISS)
              r->owner[f] = -1;
            r->dismissed[f] = d->op == LK_REVIEW_DISMISS;
          }
        break;
      case LK_REVIEW_CONFIRM:
      case N_OPS:
      default:
        break;
    }
}

static GPtrArray *
replay (const LkReview *review, GArray **dismissed)
{
  Replay r = { 0 };
  r.pins = g_ptr_array_new ();
  r.by_id = g_hash_table_new (g_str_hash, g_str_equal);
  r.owner = g_new (gint32, MAX (review->n_faces, 1));
  r.dismissed = g_new0 (guint8, MAX (review->n_faces, 1));
  r.n_faces = review->n_faces;
  for (gsize f = 0; f < review->n_faces; f++)
    r.owner[f] = -1;
  /* The base layer first, as if decided before anything the user did. */
  for (guint k = 0; review->base != NULL && k < review->base->len; k++)
    {
      const LkPin *b = g_ptr_array_index (review->base, k);
      gint32 q = replay_pin (&r, b->id);
      LkPin *pin = g_ptr_array_index (r.pins, q);
      replay_hold (&r, q, b->faces);
      replay_exclude (&r, q, b->excluded);
      g_free (pin->name);
      pin->name = g_strdup (b->name);
      pin->hidden = b->hidden;
      pin->cover = b->cover;
    }
  for (guint k = 0; k < review->done->len; k++)
    replay_one (&r, g_ptr_array_index (review->done, k));

  *dismissed = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (gsize f = 0; f < review->n_faces; f++)
    if (r.dismissed[f])
      {
        guint32 face = (guint32) f;
        g_array_append_val (*dismissed, face);
      }
  for (gsize f = 0; f < review->n_faces; f++)
    if (r.owner[f] >= 0)
      {
        guint32 face = (guint32) f;
        g_array_append_val (((LkPin *) g_ptr_array_index (r.pins, r.owner[f]))->faces, face);
      }
  GPtrArray *pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (guint k = 0; k < r.pins->len; k++)
    {
      LkPin *pin = g_ptr_array_index (r.pins, k);
      GHashTable *excluded = r.excluded[k];
      if (pin != NULL)
        {
          GHashTableIter it;
          gpointer key;
          g_hash_table_iter_init (&it, excluded);
          while (g_hash_table_iter_next (&it, &key, NULL))
            {
              guint32 f = GPOINTER_TO_UINT (key);
              g_array_append_val (pin->excluded, f);
            }
          g_array_sort (pin->excluded, compare_faces);
          g_ptr_array_add (pins, pin);
        }
      g_hash_table_unref (excluded);
    }
  g_free (r.excluded);
  g_free (r.owner);
  g_free (r.dismissed);
  g_hash_table_unref (r.by_id);
  g_ptr_array_unref (r.pins);
  return pins;
}

/* --- review ---------------------------------------------------------------------------------- */

static LkReview *
review_new (FaceKeys *keys, const char *fingerprint, const guint64 *photo)
{
  LkReview *review = g_new0 (LkReview, 1);
  gsize n_faces = keys->n_faces;
  review->n_faces = n_faces;
  review->keys = face_keys_ref (keys);
  review->gone = g_ptr_array_new_with_free_func (g_free);
  review->gone_slot = g_hash_table_new (g_str_hash, g_str_equal);
  review->fingerprint = g_strdup (fingerprint);
  review->photo = photo ? g_memdup2 (photo, n_faces * sizeof (guint64)) : NULL;
  review->done = g_ptr_array_new_with_free_func ((GDestroyNotify) decision_free);
  review->undone = g_ptr_array_new_with_free_func ((GDestroyNotify) decision_free);
  review->synced = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return review;
}

LkReview *
lk_review_new (gsize n_faces, const char *fingerprint, const guint64 *photo)
{
  g_return_val_if_fail (fingerprint != NULL, NULL);
  FaceKeys *keys = face_keys_new (n_faces, NULL);
  LkReview *review = review_new (keys, fingerprint, photo);
  face_keys_unref (keys);
  return review;
}

LkReview *
lk_review_new_for_library (const LkLibrary *library)
{
  g_return_val_if_fail (library != NULL, NULL);
  FaceKeys *keys = face_keys_new (library->count, lk_library_face_keys (library));
  LkReview *review = review_new (keys, library->fingerprint, library->photo);
  face_keys_unref (keys);
  return review;
}

void
lk_review_free (LkReview *review)
{
  if (review == NULL)
    return;
  g_free (review->fingerprint);
  g_free (review->photo);
  face_keys_unref (review->keys);
  g_ptr_array_unref (review->gone);
  g_hash_table_unref (review->gone_slot);
  g_ptr_array_unref (review->done);
  g_ptr_array_unref (review->undone);
  g_hash_table_unref (review->synced);
  g_clear_pointer (&review->unknown, json_object_unref);
  if (review->pins)
    g_ptr_array_unref (review->pins);
  g_clear_pointer (&review->dismissed, g_array_unref);
  if (review->base)
    g_ptr_array_unref (review->base);
  g_clear_pointer (&review->calibration, json_node_unref);
  g_clear_pointer (&review->photo_paths, g_hash_table_unref);
  g_free (review);
}

void
lk_review_set_base_pins (LkReview *review, const GPtrArray *pins)
{
  for (guint k = 0; pins != NULL && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 0; m < pin->faces->len; m++)
        g_return_if_fail (g_array_index (pin->faces, guint32, m) < review->n_faces);
      for (guint m = 0; m < pin->excluded->len; m++)
        g_return_if_fail (g_array_index (pin->excluded, guint32, m) < review->n_faces);
    }
  g_clear_pointer (&review->base, g_ptr_array_unref);
  if (pins != NULL && pins->len > 0)
    {
      review->base = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
      for (guint k = 0; k < pins->len; k++)
        g_ptr_array_add (review->base, lk_pin_copy (g_ptr_array_index (pins, k)));
    }
  g_clear_pointer (&review->pins, g_ptr_array_unref);
}

const GPtrArray *
lk_review_pins (LkReview *review)
{
  if (review->pins == NULL)
    {
      g_clear_pointer (&review->dismissed, g_array_unref);
      review->pins = replay (review, &review->dismissed);
    }
  return review->pins;
}

const GArray *
lk_review_dismissed (LkReview *review)
{
  lk_review_pins (review);
  return review->dismissed;
}

const char *
lk_review_fingerprint (const LkReview *review)
{
  return review->fingerprint;
}

guint
lk_review_n_decisions (const LkReview *review)
{
  return review->done->len;
}

static gboolean
names_gone_face (const LkReview *review, const Decision *d)
{
  const GArray *arrays[3] = { d->faces, d->selected, d->other_faces };
  if (d->face >= 0 && (guint64) d->face >= review->n_faces)
    return TRUE;
  for (int a = 0; a < 3; a++)
    /* Sorted: a slot past the library's faces is last. */
    if (arrays[a]->len > 0
        && g_array_index (arrays[a], guint32, arrays[a]->len - 1) >= review->n_faces)
      return TRUE;
  return FALSE;
}

guint
lk_review_n_gone (const LkReview *review)
{
  guint n = 0;
  for (guint k = 0; k < review->done->len; k++)
    n += names_gone_face (review, g_ptr_array_index (review->done, k));
  return n;
}

gboolean
lk_review_can_undo (const LkReview *review)
{
  return review->done->len > 0;
}

gboolean
lk_review_can_redo (const LkReview *review)
{
  return review->undone->len > 0;
}

const char *
lk_review_last_decision_id (const LkReview *review)
{
  if (review->done->len == 0)
    return NULL;
  return ((const Decision *) g_ptr_array_index (review->done, review->done->len - 1))->id;
}

guint
lk_review_n_identity_decisions (const LkReview *review)
{
  guint n = 0;
  for (guint k = 0; k < review->done->len; k++)
    {
      const Decision *d = g_ptr_array_index (review->done, k);
      n += d->op == LK_REVIEW_MERGE || d->op == LK_REVIEW_REMOVE || d->op == LK_REVIEW_MOVE
           || d->op == LK_REVIEW_CONFIRM;
    }
  return n;
}

/* How many decisions at the end of `log` make one step: the last and those
 * before it of its group. */
static guint
step_length (const GPtrArray *log)
{
  if (log->len == 0)
    return 0;
  const Decision *last = g_ptr_array_index (log, log->len - 1);
  guint n = 1;
  while (last->group != NULL && n < log->len
         && g_strcmp0 (((const Decision *) g_ptr_array_index (log, log->len - 1 - n))->group,
                       last->group)
                == 0)
    n++;
  return n;
}

static char *
describe_step (const LkReview *review, const GPtrArray *log)
{
  guint n = step_length (log);
  if (n == 0)
    return NULL;
  const Decision *last = g_ptr_array_index (log, log->len - 1);
  if (n > 1 && last->op == LK_REVIEW_MERGE)
    return g_strdup_printf ("merge %u people into %s", n, last->person);
  return decision_describe (review, last);
}

char *
lk_review_describe_undo (const LkReview *review)
{
  return describe_step (review, review->done);
}

char *
lk_review_describe_redo (const LkReview *review)
{
  return describe_step (review, review->undone);
}

/* 128 bits from the kernel, in hex: two writers never mint the same id. Not
 * g_uuid_string_random: it draws from GLib's global generator, which
 * g_test_init seeds to one value and fork copies — forked writers in a test
 * minted identical ids, and the merge took two decisions for one. */
static char *
new_decision_id (void)
{
  static gint counter;
  guint8 bytes[16];
  if (getentropy (bytes, sizeof bytes) != 0)
    {
      /* No entropy source: time, process and a counter still differ. */
      guint64 parts[2] = { (guint64) g_get_real_time (),
                           ((guint64) getpid () << 32) | (guint32) g_atomic_int_add (&counter, 1) };
      memcpy (bytes, parts, sizeof bytes);
    }
  char *id = g_malloc (2 * sizeof bytes + 1);
  for (gsize k = 0; k < sizeof bytes; k++)
    g_snprintf (id + 2 * k, 3, "%02x", bytes[k]);
  return id;
}

static void
commit (LkReview *review, Decision *d)
{
  if (d->id == NULL)
    d->id = new_decision_id ();
  g_ptr_array_add (review->done, d);
  g_ptr_array_set_size (review->undone, 0);
  g_clear_pointer (&review->pins, g_ptr_array_unref);
}

/* Moves the last step (a decision, or the decisions of one group) from one
 * list to the other, keeping their order as a stack does: a group undone is
 * redone in the order it was made. */
static void
move_last (GPtrArray *from, GPtrArray *to)
{
  for (guint n = step_length (from); n > 0; n--)
    {
      gpointer d = g_ptr_array_steal_index (from, from->len - 1);
      g_ptr_array_add (to, d);
    }
}

gboolean
lk_review_undo (LkReview *review)
{
  if (review->done->len == 0)
    return FALSE;
  move_last (review->done, review->undone);
  g_clear_pointer (&review->pins, g_ptr_array_unref);
  return TRUE;
}

gboolean
lk_review_redo (LkReview *review)
{
  if (review->undone->len == 0)
    return FALSE;
  move_last (review->undone, review->done);
  g_clear_pointer (&review->pins, g_ptr_array_unref);
  return TRUE;
}

/* --- checks of a request against the people the user saw ------------------------------------- */

static const LkPerson *
find_person (const LkPeople *people, const char *id, GError **error)
{
  const LkPerson *p = id ? lk_people_find (people, id) : NULL;
  if (p == NULL)
    g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_NO_PERSON,
                 "there is no person “%s”; run “likeness-cli people” for the ids",
                 id ? id : "(none)");
  return p;
}

static gboolean
person_has (const LkPerson *p, guint32 face)
{
  gsize lo = 0, hi = p->n_faces;
  while (lo < hi)
    {
      gsize mid = (lo + hi) / 2;
      if (p->faces[mid] == face)
        return TRUE;
      if (p->faces[mid] < face)
        lo = mid + 1;
      else
        hi = mid;
    }
  return FALSE;
}

static gboolean
check_faces_in (const LkPeople *people, const LkPerson *p, const guint32 *faces, gsize n,
                GError **error)
{
  if (n == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "no faces were given");
      return FALSE;
    }
  g_autofree guint8 *given = g_new0 (guint8, people->n_faces / 8 + 1);
  for (gsize k = 0; k < n; k++)
    {
      if (faces[k] >= people->n_faces)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u does not exist; the library has %zu faces", faces[k],
                       people->n_faces);
          return FALSE;
        }
      gboolean in = p ? person_has (p, faces[k]) : people->person_of[faces[k]] < 0;
      if (!in)
        {
          if (p)
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                         "face %u is not in person %s", faces[k], p->id);
          else
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                         "face %u is not unassigned; it is in person %s", faces[k],
                         people->people[people->person_of[faces[k]]].id);
          return FALSE;
        }
      /* One bit per face of the library (12.5 KB at 100,000): a
       * selection of thousands is checked in linear time, where comparing
       * each face with those before it was quadratic. */
      guint8 bit = (guint8) (1u << (faces[k] & 7));
      if (given[faces[k] >> 3] & bit)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "face %u is given twice",
                       faces[k]);
          return FALSE;
        }
      given[faces[k] >> 3] |= bit;
    }
  return TRUE;
}

static gboolean
check_people_match (const LkReview *review, const LkPeople *people, GError **error)
{
  if (people->n_faces != review->n_faces)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "the people were clustered from %zu faces but the review is for %zu",
                   people->n_faces, review->n_faces);
      return FALSE;
    }
  return TRUE;
}

/* Refuses faces `a` ∪ `b` when two of them come from one photo. */
static gboolean
check_photos (const LkReview *review, const guint32 *a, gsize na, const guint32 *b, gsize nb,
              GError **error)
{
  if (review->photo == NULL)
    return TRUE;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (gsize k = 0; k < na + nb; k++)
    {
      guint32 f = k < na ? a[k] : b[k - na];
      guint32 *prev = g_hash_table_lookup (seen, &review->photo[f]);
      if (prev && *prev != f)
        {
          const char *path = review->photo_paths
                                 ? g_hash_table_lookup (review->photo_paths, &review->photo[f])
                                 : NULL;
          if (path != NULL)
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO,
                         "%s holds two of these faces (%u and %u); two faces of one photo are "
                         "never one person",
                         path, *prev, f);
          else
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO,
                         "faces %u and %u are both in photo %" G_GUINT64_FORMAT
                         "; two faces of one photo are never one person",
                         *prev, f, review->photo[f]);
          return FALSE;
        }
      g_hash_table_insert (seen, &review->photo[f],
                           k < na ? (gpointer) &a[k] : (gpointer) &b[k - na]);
    }
  return TRUE;
}

static void
set_faces (GArray *array, const guint32 *faces, gsize n)
{
  g_array_set_size (array, 0);
  g_array_append_vals (array, faces, (guint) n);
  g_array_sort (array, compare_faces);
}

static Decision *
person_decision (Op op, const LkPerson *p)
{
  Decision *d = decision_new (op, p->id);
  set_faces (d->faces, p->faces, p->n_faces);
  return d;
}

/* An id for a new person made of `faces`, unused by people and pins. */
static char *
new_person_id (LkReview *review, const LkPeople *people, guint32 first)
{
  const GPtrArray *pins = lk_review_pins (review);
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize k = 0; k < people->n_people; k++)
    g_hash_table_add (used, people->people[k].id);
  for (guint k = 0; k < pins->len; k++)
    g_hash_table_add (used, ((LkPin *) g_ptr_array_index (pins, k))->id);
  for (guint k = 0; k < review->done->len; k++)
    {
      const Decision *d = g_ptr_array_index (review->done, k);
      if (d->person)
        g_hash_table_add (used, d->person);
      if (d->other)
        g_hash_table_add (used, d->other);
    }
  char *id = g_strdup_printf ("p%u", first);
  for (guint s = 1; g_hash_table_contains (used, id); s++)
    {
      g_free (id);
      id = g_strdup_printf ("p%u.%u", first, s);
    }
  return id;
}

gboolean
lk_review_name (LkReview *review, const LkPeople *people, const char *person_id, const char *name,
                GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  g_autofree char *clean = name ? g_strstrip (g_strdup (name)) : NULL;
  if (clean && !g_utf8_validate (clean, -1, NULL))
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "the name is not valid UTF-8");
      return FALSE;
    }
  Decision *d = person_decision (LK_REVIEW_NAME, p);
  d->name = clean && *clean ? g_steal_pointer (&clean) : NULL;
  commit (review, d);
  return TRUE;
}

/* One merge is a merge of one: the same checks, the same decision. */
gboolean
lk_review_merge (LkReview *review, const LkPeople *people, const char *person_id,
                 const char *other_id, GError **error)
{
  return lk_review_merge_many (review, people, person_id, &other_id, 1, error);
}

gboolean
lk_review_remove (LkReview *review, const LkPeople *people, const char *person_id,
                  const guint32 *faces, gsize n_faces, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_in (people, p, faces, n_faces, error))
    return FALSE;
  Decision *d = person_decision (LK_REVIEW_REMOVE, p);
  set_faces (d->selected, faces, n_faces);
  commit (review, d);
  return TRUE;
}

/* Faces that exist, each given once; `outside` (may be NULL) must hold none. */
static gboolean
check_faces_exist (const LkPeople *people, const LkPerson *outside, const guint32 *faces, gsize n,
                   GError **error)
{
  if (n == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "no faces were given");
      return FALSE;
    }
  g_autoptr (GHashTable) given = g_hash_table_new (NULL, NULL);
  for (gsize k = 0; k < n; k++)
    {
      if (faces[k] >= people->n_faces)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u does not exist; the library has %zu faces", faces[k],
                       people->n_faces);
          return FALSE;
        }
      if (outside != NULL && person_has (outside, faces[k]))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "face %u is in person %s; take it out with “remove” instead", faces[k],
                       outside->id);
          return FALSE;
        }
      if (!g_hash_table_add (given, GUINT_TO_POINTER (faces[k])))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "face %u is given twice",
                       faces[k]);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
lk_review_reject_faces (LkReview *review, const LkPeople *people, const char *person_id,
                        const guint32 *faces, gsize n_faces, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_exist (people, p, faces, n_faces, error))
    return FALSE;
  /* A removal of faces the person does not hold: replayed the same way —
   * the person keeps its faces and never takes these. */
  Decision *d = person_decision (LK_REVIEW_REMOVE, p);
  set_faces (d->selected, faces, n_faces);
  commit (review, d);
  return TRUE;
}

gboolean
lk_review_reject (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                  GError **error)
{
  return lk_review_reject_faces (review, people, person_id, &face, 1, error);
}

gboolean
lk_review_merge_many (LkReview *review, const LkPeople *people, const char *person_id,
                      const char *const *other_ids, gsize n_others, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  if (n_others == 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "no people were given to merge into %s", p->id);
      return FALSE;
    }
  g_autofree const LkPerson **others = g_new (const LkPerson *, n_others);
  g_autoptr (GArray) all = face_array ();
  g_array_append_vals (all, p->faces, (guint) p->n_faces);
  for (gsize k = 0; k < n_others; k++)
    {
      if ((others[k] = find_person (people, other_ids[k], error)) == NULL)
        return FALSE;
      if (others[k] == p)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                       "cannot merge person %s with itself", p->id);
          return FALSE;
        }
      for (gsize m = 0; m < k; m++)
        if (others[m] == others[k])
          {
            g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                         "person %s is given twice", others[k]->id);
            return FALSE;
          }
      g_array_append_vals (all, others[k]->faces, (guint) others[k]->n_faces);
    }
  if (!check_photos (review, (const guint32 *) all->data, all->len, NULL, 0, error))
    return FALSE;
  /* Each merge records the person as it stands after the ones before it
   * (what replaying them one by one produces), so each is the decision a
   * single merge would have made. */
  g_autofree char *group = n_others > 1 ? new_decision_id () : NULL;
  g_autoptr (GArray) held = face_array ();
  g_array_append_vals (held, p->faces, (guint) p->n_faces);
  for (gsize k = 0; k < n_others; k++)
    {
      Decision *d = decision_new (LK_REVIEW_MERGE, p->id);
      set_faces (d->faces, (const guint32 *) held->data, held->len);
      d->other = g_strdup (others[k]->id);
      set_faces (d->other_faces, others[k]->faces, others[k]->n_faces);
      d->group = g_strdup (group);
      g_array_append_vals (held, others[k]->faces, (guint) others[k]->n_faces);
      if (k == 0)
        commit (review, d);
      else
        {
          /* commit () empties the redo list; once is enough. */
          d->id = new_decision_id ();
          g_ptr_array_add (review->done, d);
        }
    }
  g_clear_pointer (&review->pins, g_ptr_array_unref);
  return TRUE;
}

static gboolean
dismissal (LkReview *review, const LkPeople *people, Op op, const guint32 *faces, gsize n_faces,
           GError **error)
{
  if (!check_people_match (review, people, error)
      || !check_faces_exist (people, NULL, faces, n_faces, error))
    return FALSE;
  /* Ascending: a binary search per face (a scan of the whole list per
   * face was quadratic in a dismissal of many faces). */
  const GArray *dismissed = lk_review_dismissed (review);
  for (gsize k = 0; k < n_faces; k++)
    {
      gboolean is
          = dismissed->len > 0
            && bsearch (&faces[k], dismissed->data, dismissed->len, sizeof (guint32), compare_faces)
                   != NULL;
      if (is != (op == LK_REVIEW_UNDISMISS))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       is ? "face %u is already dismissed as no face"
                          : "face %u is not dismissed; there is nothing to bring back",
                       faces[k]);
          return FALSE;
        }
    }
  Decision *d = decision_new (op, NULL);
  set_faces (d->selected, faces, n_faces);
  commit (review, d);
  return TRUE;
}

gboolean
lk_review_dismiss (LkReview *review, const LkPeople *people, const guint32 *faces, gsize n_faces,
                   GError **error)
{
  return dismissal (review, people, LK_REVIEW_DISMISS, faces, n_faces, error);
}

gboolean
lk_review_undismiss (LkReview *review, const LkPeople *people, const guint32 *faces, gsize n_faces,
                     GError **error)
{
  return dismissal (review, people, LK_REVIEW_UNDISMISS, faces, n_faces, error);
}

gboolean
lk_review_move (LkReview *review, const LkPeople *people, const char *person_id,
                const guint32 *faces, gsize n_faces, const char *target_id, char **new_id,
                GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = NULL, *t = NULL;
  if (person_id && (p = find_person (people, person_id, error)) == NULL)
    return FALSE;
  if (!check_faces_in (people, p, faces, n_faces, error))
    return FALSE;
  if (target_id && (t = find_person (people, target_id, error)) == NULL)
    return FALSE;
  if (t && t == p)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "the faces are already in person %s", t->id);
      return FALSE;
    }
  if (!check_photos (review, faces, n_faces, t ? t->faces : NULL, t ? t->n_faces : 0, error))
    return FALSE;

  Decision *d = p ? person_decision (LK_REVIEW_MOVE, p) : decision_new (LK_REVIEW_MOVE, NULL);
  set_faces (d->selected, faces, n_faces);
  if (t)
    {
      d->other = g_strdup (t->id);
      set_faces (d->other_faces, t->faces, t->n_faces);
    }
  else
    d->other = new_person_id (review, people, g_array_index (d->selected, guint32, 0));
  if (new_id)
    *new_id = g_strdup (d->other);
  commit (review, d);
  return TRUE;
}

static gboolean
face_decision (LkReview *review, const LkPeople *people, Op op, const char *person_id, guint32 face,
               GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL || !check_faces_in (people, p, &face, 1, error))
    return FALSE;
  Decision *d = person_decision (op, p);
  d->face = face;
  commit (review, d);
  return TRUE;
}

gboolean
lk_review_set_cover (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                     GError **error)
{
  return face_decision (review, people, LK_REVIEW_COVER, person_id, face, error);
}

gboolean
lk_review_confirm (LkReview *review, const LkPeople *people, const char *person_id, guint32 face,
                   GError **error)
{
  return face_decision (review, people, LK_REVIEW_CONFIRM, person_id, face, error);
}

gboolean
lk_review_set_hidden (LkReview *review, const LkPeople *people, const char *person_id,
                      gboolean hidden, GError **error)
{
  if (!check_people_match (review, people, error))
    return FALSE;
  const LkPerson *p = find_person (people, person_id, error);
  if (p == NULL)
    return FALSE;
  commit (review, person_decision (hidden ? LK_REVIEW_HIDE : LK_REVIEW_UNHIDE, p));
  return TRUE;
}

/* --- review.json: reading -------------------------------------------------------------------- */

static gboolean corrupt (GError **error, const char *path, const char *format, ...)
    G_GNUC_PRINTF (3, 4);

static gboolean
corrupt (GError **error, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_CORRUPT,
               "%s is not a review file Likeness can read: %s", path, what);
  return FALSE;
}

/* Where a decision sits: what merge_logs compares. */
typedef enum
{
  SYNC_NONE = 0,
  SYNC_DONE,
  SYNC_UNDONE,
} Sync;

/* One face of a decision: in version 1 the face's index in the library the
 * file was made for (the fingerprint matched, so the index is this
 * library's); from version 2 its key (lk_library_face_keys), which may name a
 * face that is no longer in the library. */
static gboolean
read_face (LkReview *review, JsonNode *e, guint version, guint32 *slot)
{
  if (!JSON_NODE_HOLDS_VALUE (e))
    return FALSE;
  if (version == 1)
    {
      if (json_node_get_value_type (e) != G_TYPE_INT64 || json_node_get_int (e) < 0
          || (guint64) json_node_get_int (e) >= review->n_faces)
        return FALSE;
      *slot = (guint32) json_node_get_int (e);
      return TRUE;
    }
  if (json_node_get_value_type (e) != G_TYPE_STRING)
    return FALSE;
  const char *key = json_node_get_string (e);
  if (*key == '\0' || !g_utf8_validate (key, -1, NULL))
    return FALSE;
  *slot = slot_of (review, key);
  return TRUE;
}

static char *
face_kind (const LkReview *review, guint version)
{
  if (version != 1)
    return g_strdup ("face key (a non-empty string)");
  return g_strdup_printf ("face index below %" G_GSIZE_FORMAT, review->n_faces);
}

static gboolean
read_faces (LkReview *review, JsonObject *o, const char *member, GArray *out, guint version,
            const char *path, const char *where, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return corrupt (error, path, "%s: “%s” is not a list of faces", where, member);
  JsonArray *a = json_node_get_array (node);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      guint32 slot;
      if (!read_face (review, json_array_get_element (a, k), version, &slot))
        {
          g_autofree char *expected = face_kind (review, version);
          return corrupt (error, path, "%s: “%s”[%u] is not a %s", where, member, k, expected);
        }
      g_array_append_val (out, slot);
    }
  g_array_sort (out, compare_faces);
  return TRUE;
}

/* The string `member` of `o` in *out (NULL when absent). FALSE when it is
 * there but is no string: a value of the wrong type is refused, never read
 * as if it were absent (a "name": 5 would silently forget the name). */
static gboolean
member_string (JsonObject *o, const char *member, const char **out)
{
  JsonNode *node = json_object_get_member (o, member);
  *out = NULL;
  if (node == NULL)
    return TRUE;
  /* json-glib hands back escapes it decoded into invalid UTF-8 (the fuzzer's
   * "p3\u0010\601…"), which the next save could not write as JSON: such a
   * string is no string. */
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
      && g_utf8_validate (json_node_get_string (node), -1, NULL))
    {
      *out = json_node_get_string (node);
      return TRUE;
    }
  return FALSE;
}

static Decision *
read_decision (LkReview *review, JsonNode *node, guint version, const char *path, const char *log,
               guint index, GError **error)
{
  g_autofree char *where = g_strdup_printf ("“%s”[%u]", log, index);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      corrupt (error, path, "%s is not an object", where);
      return NULL;
    }
  JsonObject *o = json_node_get_object (node);
  static const char *const strings[] = { "id", "op", "person", "name", "other", "group" };
  const char *value[G_N_ELEMENTS (strings)];
  for (gsize k = 0; k < G_N_ELEMENTS (strings); k++)
    if (!member_string (o, strings[k], &value[k]))
      {
        corrupt (error, path, "%s: “%s” is not a string", where, strings[k]);
        return NULL;
      }
  const char *id = value[0], *op = value[1], *person = value[2];
  Op kind = N_OPS;
  for (int k = 0; op && k < N_OPS; k++)
    if (strcmp (op, op_names[k]) == 0)
      kind = k;
  if (kind == N_OPS)
    {
      corrupt (error, path, "%s has no known “op”", where);
      return NULL;
    }
  gboolean personless
      = kind == LK_REVIEW_MOVE || kind == LK_REVIEW_DISMISS || kind == LK_REVIEW_UNDISMISS;
  if (person == NULL && !personless)
    {
      corrupt (error, path, "%s (%s) has no “person”", where, op);
      return NULL;
    }
  if (id != NULL && *id == '\0')
    {
      corrupt (error, path, "%s has an empty “id”", where);
      return NULL;
    }
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) decision_free);
  Decision *d = decision_new (kind, person);
  g_ptr_array_add (keep, d);
  /* A file written before decisions had ids: the same id for the same
   * place in the same file, so every writer that reads it agrees. */
  d->id = id ? g_strdup (id) : g_strdup_printf ("legacy-%s-%u", log, index);
  d->name = g_strdup (value[3]);
  d->other = g_strdup (value[4]);
  d->group = g_strdup (value[5]);
  if (!read_faces (review, o, "faces", d->faces, version, path, where, error)
      || !read_faces (review, o, "selected", d->selected, version, path, where, error)
      || !read_faces (review, o, "other_faces", d->other_faces, version, path, where, error))
    return NULL;
  if ((kind == LK_REVIEW_MERGE || kind == LK_REVIEW_MOVE) && d->other == NULL)
    {
      corrupt (error, path, "%s (%s) has no “other”", where, op);
      return NULL;
    }
  if (kind == LK_REVIEW_MERGE && strcmp (d->other, person) == 0)
    {
      corrupt (error, path, "%s (merge) merges “%s” with itself", where, person);
      return NULL;
    }
  if ((kind == LK_REVIEW_REMOVE || kind == LK_REVIEW_MOVE || kind == LK_REVIEW_DISMISS
       || kind == LK_REVIEW_UNDISMISS)
      && d->selected->len == 0)
    {
      corrupt (error, path, "%s (%s) has no “selected” faces", where, op);
      return NULL;
    }
  if (kind == LK_REVIEW_COVER || kind == LK_REVIEW_CONFIRM)
    {
      JsonNode *f = json_object_get_member (o, "face");
      guint32 slot;
      if (f == NULL || !read_face (review, f, version, &slot))
        {
          g_autofree char *expected = face_kind (review, version);
          corrupt (error, path, "%s (%s): “face” is not a %s", where, op, expected);
          return NULL;
        }
      d->face = slot;
    }
  return g_ptr_array_steal_index (keep, 0);
}

/* Whether every string under `node` (values and member names) is UTF-8.
 * json-glib 1.6 reads some escapes (an octal "\200") into bytes that are not
 * UTF-8 and would write them back as text no JSON reader takes: a member this
 * version does not know is kept and saved as it is, so it must be text the
 * next load can read (the 10-minute fuzz-review run saved such a file). */
/* What a member this version does not know (or the calibration, kept
 * whole) must hold to be written back as it was read: text that is UTF-8
 * and numbers that are finite. json-glib reads a number beyond a double's
 * range (1e999) as infinity, and would write it back as "inf", which is not
 * JSON (found by fuzz-review). */
typedef enum
{
  NODE_WRITABLE,
  NODE_NOT_UTF8,
  NODE_NOT_FINITE,
} NodeCheck;

static NodeCheck
node_check (JsonNode *node)
{
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);
      if (type == G_TYPE_STRING && !g_utf8_validate (json_node_get_string (node), -1, NULL))
        return NODE_NOT_UTF8;
      if (type == G_TYPE_DOUBLE && !isfinite (json_node_get_double (node)))
        return NODE_NOT_FINITE;
      return NODE_WRITABLE;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *a = json_node_get_array (node);
      for (guint k = 0; k < json_array_get_length (a); k++)
        {
          NodeCheck c = node_check (json_array_get_element (a, k));
          if (c != NODE_WRITABLE)
            return c;
        }
      return NODE_WRITABLE;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *o = json_node_get_object (node);
      GList *members = json_object_get_members (o);
      NodeCheck c = NODE_WRITABLE;
      for (GList *l = members; c == NODE_WRITABLE && l != NULL; l = l->next)
        c = g_utf8_validate (l->data, -1, NULL) ? node_check (json_object_get_member (o, l->data))
                                                : NODE_NOT_UTF8;
      g_list_free (members);
      return c;
    }
  return NODE_WRITABLE;
}

static gboolean
read_log (JsonObject *root, const char *member, LkReview *review, Sync sync, guint version,
          const char *path, GError **error)
{
  GPtrArray *out = sync == SYNC_DONE ? review->done : review->undone;
  JsonNode *node = json_object_get_member (root, member);
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return corrupt (error, path, "“%s” is not a list", member);
  JsonArray *a = json_node_get_array (node);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      Decision *d
          = read_decision (review, json_array_get_element (a, k), version, path, member, k, error);
      if (d == NULL)
        return FALSE;
      g_ptr_array_add (out, d);
      if (!g_hash_table_insert (review->synced, g_strdup (d->id), GINT_TO_POINTER (sync)))
        return corrupt (error, path, "“%s”[%u] has the id “%s” of another decision", member, k,
                        d->id);
    }
  return TRUE;
}

/* json-glib keeps the last of two members with one name and drops the other
 * without a word: a review.json with two "decisions" lists would lose one.
 * The parser's "object-member" signal comes after each member is stored; an
 * object that holds fewer members than were stored in it had one replaced. */
typedef struct
{
  GHashTable *stored; /* JsonObject * → members stored so far */
  char *name;         /* the first duplicate, or NULL */
  guint line;
} Duplicates;

static void
on_object_member (JsonParser *parser, JsonObject *object, const char *name, gpointer user_data)
{
  Duplicates *dup = user_data;
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (dup->stored, object)) + 1;

  g_hash_table_insert (dup->stored, object, GUINT_TO_POINTER (n));
  if (dup->name == NULL && n > json_object_get_size (object))
    {
      dup->name = g_strdup (name);
      dup->line = json_parser_get_current_line (parser);
    }
}

/* The members of review.json this version reads itself; any other is kept. */
static const char *const known_members[]
    = { "format", "version", "fingerprint", "faces", "decisions", "redo" };

/* --- review.json: the calibration ----------------------------------------------------------- */

/* The user's calibration (lk-calibrate.h) is a top-level object of its own,
 * kept here whole and read and written by lk-calibrate, so the decision log
 * and the calibration never reach into each other. */
static void
read_calibration (LkReview *review, JsonObject *root)
{
  JsonNode *node = json_object_get_member (root, "calibration");
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    review->calibration = json_node_copy (node);
}

void
lk_review_set_photo_path (LkReview *review, guint64 photo, const char *path)
{
  if (review->photo_paths == NULL)
    review->photo_paths = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_hash_table_replace (review->photo_paths, g_memdup2 (&photo, sizeof photo), g_strdup (path));
}

JsonNode *
lk_review_get_calibration (const LkReview *review)
{
  return review->calibration;
}

void
lk_review_set_calibration (LkReview *review, JsonNode *calibration)
{
  g_clear_pointer (&review->calibration, json_node_unref);
  if (calibration != NULL)
    review->calibration = json_node_copy (calibration);
  review->calibration_set = TRUE;
}

/* Parses `data`; checks format, version and (for version 1) fingerprint. */
static LkReview *
parse (const char *data, gsize length, const char *path, FaceKeys *keys, const char *fingerprint,
       const guint64 *photo, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) json_error = NULL;
  /* Inputs on which json-glib 1.6 leaks are refused before it sees them
   * (lk-json.h). */
  gssize bad = lk_json_find_unpaired_surrogate (data, length);
  if (bad >= 0)
    {
      corrupt (error, path,
               "line %u has a \\u escape that is not four hex digits or is half of a UTF-16 "
               "surrogate pair",
               lk_json_line_of (data, (gsize) bad));
      return NULL;
    }
  /* json-glib recurses once per level: 80,000 "[" overflowed its stack. */
  bad = lk_json_find_too_deep (data, length, LK_JSON_MAX_DEPTH);
  if (bad >= 0)
    {
      corrupt (error, path, "line %u is nested deeper than %d arrays and objects",
               lk_json_line_of (data, (gsize) bad), LK_JSON_MAX_DEPTH);
      return NULL;
    }
  /* A "\u0000" would cut a C string short, silently. */
  bad = lk_json_find_nul_escape (data, length);
  if (bad >= 0)
    {
      g_autofree char *field = lk_json_path_at (data, length, (gsize) bad);
      corrupt (error, path,
               "%s (line %u) has a \\u0000 (a NUL character) in a string; names cannot hold one",
               field, lk_json_line_of (data, (gsize) bad));
      return NULL;
    }
  /* json-glib wraps an integer beyond 64 bits: "-18446744073709551613" is 3. */
  bad = lk_json_find_integer_out_of_range (data, length);
  if (bad >= 0)
    {
      gsize end = (gsize) bad + 1;
      while (end < length && g_ascii_isdigit (data[end]))
        end++;
      corrupt (error, path, "line %u holds the integer %.*s, which is out of range",
               lk_json_line_of (data, (gsize) bad), (int) MIN (end - (gsize) bad, 40), data + bad);
      return NULL;
    }
  bad = lk_json_find_unopened_close (data, length);
  if (bad >= 0)
    {
      corrupt (error, path, "line %u closes a “%c” that was never opened",
               lk_json_line_of (data, (gsize) bad), data[bad] == ']' ? '[' : '{');
      return NULL;
    }
  /* Parsed as the one element of an array: json-glib 1.6 would otherwise
   * accept several top-level values, keep one and leak the others (found by
   * fuzz-review); inside [ ] a second value is a syntax error, and the check
   * above makes sure the file cannot close that [ itself. The "[" shares the
   * file's first line, so json-glib's line numbers are the file's. */
  g_autoptr (GString) wrapped = g_string_sized_new (length + 3);
  g_string_append_c (wrapped, '[');
  g_string_append_len (wrapped, data, (gssize) length);
  g_string_append (wrapped, "\n]");
  Duplicates dup = { g_hash_table_new (NULL, NULL), NULL, 0 };
  g_signal_connect (parser, "object-member", G_CALLBACK (on_object_member), &dup);
  gboolean parsed
      = json_parser_load_from_data (parser, wrapped->str, (gssize) wrapped->len, &json_error);
  g_hash_table_unref (dup.stored);
  g_autofree char *duplicate = dup.name;
  if (!parsed)
    {
      /* An error on the line of the closing "]" means the file ended early. */
      guint line = 0;
      guint lines = 1;
      for (gsize k = 0; k < length; k++)
        lines += data[k] == '\n';
      if (sscanf (json_error->message, "<data>:%u:", &line) == 1 && line > lines)
        corrupt (error, path, "it ends before its JSON is complete");
      else
        corrupt (error, path, "%s", json_error->message);
      return NULL;
    }
  if (duplicate != NULL)
    {
      corrupt (error, path,
               "line %u names “%s” a second time in one object; which one is meant is "
               "ambiguous, so neither is read",
               dup.line, duplicate);
      return NULL;
    }
  JsonArray *values = json_node_get_array (json_parser_get_root (parser));
  JsonNode *root_node
      = json_array_get_length (values) == 1 ? json_array_get_element (values, 0) : NULL;
  if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT (root_node))
    {
      corrupt (error, path, "it is not a JSON object");
      return NULL;
    }
  JsonObject *root = json_node_get_object (root_node);
  const char *format = NULL;
  if (!member_string (root, "format", &format) || g_strcmp0 (format, REVIEW_FORMAT) != 0)
    {
      corrupt (error, path, "“format” is not “%s”", REVIEW_FORMAT);
      return NULL;
    }
  JsonNode *version = json_object_get_member (root, "version");
  if (version == NULL || !JSON_NODE_HOLDS_VALUE (version)
      || json_node_get_value_type (version) != G_TYPE_INT64 || json_node_get_int (version) < 1)
    {
      corrupt (error, path, "“version” is missing or not a positive integer");
      return NULL;
    }
  if (json_node_get_int (version) > LK_REVIEW_VERSION)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_VERSION,
                   "%s is review format version %" G_GINT64_FORMAT
                   "; this Likeness reads version %d. Update Likeness to open it",
                   path, json_node_get_int (version), LK_REVIEW_VERSION);
      return NULL;
    }
  guint file_version = (guint) json_node_get_int (version);
  const char *theirs = NULL;
  if (!member_string (root, "fingerprint", &theirs) || (theirs == NULL && file_version == 1))
    {
      corrupt (error, path, "it has no “fingerprint”");
      return NULL;
    }
  /* Version 1 named faces by index, which only mean something in the
   * library the file was made for: migrated when the fingerprint says it is
   * this one. From version 2 faces are named by key and the fingerprint is
   * only informational: a re-exported library is the same library. */
  if (file_version == 1 && strcmp (theirs, fingerprint) != 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_FOREIGN,
                   "%s belongs to another library (fingerprint %.12s…, this library is %.12s…) "
                   "and names faces by their place in it (review format version 1), so it "
                   "cannot be applied; it will not be overwritten unless you start over",
                   path, theirs, fingerprint);
      return NULL;
    }
  g_autoptr (LkReview) review = review_new (keys, fingerprint, photo);
  review->version = file_version;
  if (!read_log (root, "decisions", review, SYNC_DONE, file_version, path, error)
      || !read_log (root, "redo", review, SYNC_UNDONE, file_version, path, error))
    return NULL;
  read_calibration (review, root);
  review->unknown = json_object_new ();
  GList *members = json_object_get_members (root);
  for (GList *l = members; l != NULL; l = l->next)
    {
      gboolean known = FALSE;
      for (gsize k = 0; k < G_N_ELEMENTS (known_members); k++)
        known = known || strcmp (l->data, known_members[k]) == 0;
      if (known)
        continue;
      JsonNode *member = json_object_get_member (root, l->data);
      NodeCheck c = g_utf8_validate (l->data, -1, NULL) ? node_check (member) : NODE_NOT_UTF8;
      if (c == NODE_NOT_UTF8)
        {
          g_list_free (members);
          corrupt (error, path, "a member Likeness keeps as it is holds text that is not UTF-8");
          return NULL;
        }
      if (c == NODE_NOT_FINITE)
        {
          corrupt (error, path,
                   "“%s” holds a number beyond the range of a double, which Likeness could "
                   "not write back as it was",
                   (const char *) l->data);
          g_list_free (members);
          return NULL;
        }
      /* The calibration, kept whole and written back like the members this
       * version does not know, was checked with them. One that is not an
       * object is not the one lk-calibrate reads: kept as it is, like any
       * other member. */
      if (strcmp (l->data, "calibration") == 0 && review->calibration != NULL)
        continue;
      json_object_set_member (review->unknown, l->data, json_node_copy (member));
    }
  g_list_free (members);
  return g_steal_pointer (&review);
}

static LkReview *
load (const char *path, FaceKeys *keys, const char *fingerprint, const guint64 *photo,
      GError **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  g_autoptr (GError) io_error = NULL;
  if (!g_file_get_contents (path, &data, &length, &io_error))
    {
      if (g_error_matches (io_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return review_new (keys, fingerprint, photo);
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO, "%s", io_error->message);
      return NULL;
    }
  return parse (data, length, path, keys, fingerprint, photo, error);
}

LkReview *
lk_review_load (const char *path, gsize n_faces, const char *fingerprint, const guint64 *photo,
                GError **error)
{
  g_return_val_if_fail (path != NULL && fingerprint != NULL, NULL);
  FaceKeys *keys = face_keys_new (n_faces, NULL);
  LkReview *review = load (path, keys, fingerprint, photo, error);
  face_keys_unref (keys);
  return review;
}

LkReview *
lk_review_load_for_library (const char *path, const LkLibrary *library, GError **error)
{
  g_return_val_if_fail (path != NULL && library != NULL, NULL);
  FaceKeys *keys = face_keys_new (library->count, lk_library_face_keys (library));
  LkReview *review = load (path, keys, library->fingerprint, library->photo, error);
  face_keys_unref (keys);
  /* Migrated once: written again at once in version 2, by key, so the
   * decisions survive the next re-export of the library, which would make a
   * version-1 file unreadable (its indices name this library's order only).
   * Best effort — a read-only folder keeps the old file, and the next save
   * that works converts it. */
  if (review != NULL && review->version == 1)
    {
      g_autoptr (GError) local = NULL;
      if (!lk_review_save (review, path, LK_REVIEW_SAVE_DEFAULT, &local))
        g_debug ("review.json stays in version 1 for now: %s", local->message);
    }
  return review;
}

/* --- merging with what other writers saved --------------------------------------------------- */

/* Decision id → Sync, for every decision of `review` (ids borrowed). */
static GHashTable *
states_of (const LkReview *review)
{
  GHashTable *states = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < review->done->len; k++)
    g_hash_table_insert (states, ((Decision *) g_ptr_array_index (review->done, k))->id,
                         GINT_TO_POINTER (SYNC_DONE));
  for (guint k = 0; k < review->undone->len; k++)
    g_hash_table_insert (states, ((Decision *) g_ptr_array_index (review->undone, k))->id,
                         GINT_TO_POINTER (SYNC_UNDONE));
  return states;
}

/* review.json holds what `file` holds (the review itself after a save; the
 * file as read, by a refresh). */
static void
agree_with (LkReview *review, const LkReview *file)
{
  g_hash_table_remove_all (review->synced);
  for (guint k = 0; k < file->done->len; k++)
    g_hash_table_insert (review->synced,
                         g_strdup (((Decision *) g_ptr_array_index (file->done, k))->id),
                         GINT_TO_POINTER (SYNC_DONE));
  for (guint k = 0; k < file->undone->len; k++)
    g_hash_table_insert (review->synced,
                         g_strdup (((Decision *) g_ptr_array_index (file->undone, k))->id),
                         GINT_TO_POINTER (SYNC_UNDONE));
}

/* The review, as it now stands, is what review.json holds. */
static void
agree (LkReview *review)
{
  agree_with (review, review);
}

/* A three-way merge of decision logs, by decision id. A decision this writer
 * moved since it last agreed with the file (made, undone, redone, or dropped
 * from the redo list by a new decision) goes where this writer put it;
 * every other goes where the file has it — so what other writers did in the
 * meantime is kept, and what this writer did is added. Order: the file's
 * decisions in the file's order, then this writer's new ones in its order
 * (so this writer's next redo is its own last undo). `done` and `undone`
 * receive Entries (borrowed decisions, from `mine` or `theirs`). */
typedef struct
{
  const Decision *decision;
  const LkReview *owner; /* whose slots its faces are */
} Entry;

static void
merge_logs (const LkReview *mine, const LkReview *theirs, GArray *done, GArray *undone)
{
  g_autoptr (GHashTable) m = states_of (mine);
  g_autoptr (GHashTable) t = states_of (theirs);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  const GPtrArray *sources[2][2]
      = { { theirs->done, mine->done }, { theirs->undone, mine->undone } };
  const LkReview *owners[2] = { theirs, mine };
  GArray *outs[2] = { done, undone };
  Sync wanted[2] = { SYNC_DONE, SYNC_UNDONE };

  for (int l = 0; l < 2; l++)
    for (int s = 0; s < 2; s++)
      for (guint k = 0; k < sources[l][s]->len; k++)
        {
          Decision *d = g_ptr_array_index (sources[l][s], k);
          Sync here = GPOINTER_TO_INT (g_hash_table_lookup (m, d->id));
          Sync before = GPOINTER_TO_INT (g_hash_table_lookup (mine->synced, d->id));
          Sync where
              = here != before ? here : (Sync) GPOINTER_TO_INT (g_hash_table_lookup (t, d->id));
          if (where == wanted[l] && g_hash_table_add (seen, d->id))
            g_array_append_val (outs[l], ((Entry){ d, owners[s] }));
        }
}

/* --- review.json: writing -------------------------------------------------------------------- */

static void
add_faces (JsonBuilder *b, const char *member, const LkReview *owner, const GArray *faces)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint k = 0; k < faces->len; k++)
    json_builder_add_string_value (b, key_of (owner, g_array_index (faces, guint32, k)));
  json_builder_end_array (b);
}

static void
add_log (JsonBuilder *b, const char *member, const GArray *log)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint k = 0; k < log->len; k++)
    {
      const Decision *d = g_array_index (log, Entry, k).decision;
      const LkReview *owner = g_array_index (log, Entry, k).owner;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, d->id);
      json_builder_set_member_name (b, "op");
      json_builder_add_string_value (b, op_names[d->op]);
      if (d->person)
        {
          json_builder_set_member_name (b, "person");
          json_builder_add_string_value (b, d->person);
        }
      add_faces (b, "faces", owner, d->faces);
      if (d->name)
        {
          json_builder_set_member_name (b, "name");
          json_builder_add_string_value (b, d->name);
        }
      if (d->selected->len)
        add_faces (b, "selected", owner, d->selected);
      if (d->other)
        {
          json_builder_set_member_name (b, "other");
          json_builder_add_string_value (b, d->other);
          add_faces (b, "other_faces", owner, d->other_faces);
        }
      if (d->face >= 0)
        {
          json_builder_set_member_name (b, "face");
          json_builder_add_string_value (b, key_of (owner, (guint32) d->face));
        }
      if (d->group)
        {
          json_builder_set_member_name (b, "group");
          json_builder_add_string_value (b, d->group);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static char *
serialize (const LkReview *review, const GArray *done, const GArray *undone, JsonNode *calibration,
           JsonObject *unknown, gsize *length)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, REVIEW_FORMAT);
  /* Version 3 only when a reader of version 2 would stop at an op it does
   * not know ("dismiss", "undismiss"): then it says "update Likeness"
   * instead of calling the file corrupt. Every other file stays readable by
   * a Likeness that reads version 2. */
  gboolean dismissals = FALSE;
  const GArray *logs[2] = { done, undone };
  for (int l = 0; l < 2; l++)
    for (guint k = 0; k < logs[l]->len && !dismissals; k++)
      {
        Op op = g_array_index (logs[l], Entry, k).decision->op;
        dismissals = op == LK_REVIEW_DISMISS || op == LK_REVIEW_UNDISMISS;
      }
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, dismissals ? LK_REVIEW_VERSION : 2);
  json_builder_set_member_name (b, "fingerprint");
  json_builder_add_string_value (b, review->fingerprint);
  json_builder_set_member_name (b, "faces");
  json_builder_add_int_value (b, (gint64) review->n_faces);
  add_log (b, "decisions", done);
  add_log (b, "redo", undone);
  if (calibration != NULL)
    {
      json_builder_set_member_name (b, "calibration");
      json_builder_add_value (b, json_node_copy (calibration));
    }
  GList *members = unknown ? json_object_get_members (unknown) : NULL;
  for (GList *l = members; l != NULL; l = l->next)
    {
      json_builder_set_member_name (b, l->data);
      json_builder_add_value (b, json_node_copy (json_object_get_member (unknown, l->data)));
    }
  g_list_free (members);
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  char *data = json_generator_to_data (gen, length);
  char *with_newline = g_strconcat (data, "\n", NULL);
  g_free (data);
  *length += 1;
  return with_newline;
}

/* The step fails for real, or because a test asked it to. */
static gboolean
injected (LkReviewStep step)
{
  if (fail_step != step)
    return FALSE;
  fail_step = LK_REVIEW_STEP_NONE;
  errno = fail_errno;
  return TRUE;
}

static gboolean
read_only_errno (int err)
{
  return err == EROFS || err == EACCES || err == EPERM;
}

static gboolean
save_failed (GError **error, const char *path, const char *step, const char *file, int err)
{
  g_set_error (error, LK_REVIEW_ERROR,
               read_only_errno (err) ? LK_REVIEW_ERROR_READ_ONLY : LK_REVIEW_ERROR_IO,
               "could not save the review to %s: %s %s failed: %s. The previous file is intact",
               path, step, file, g_strerror (err));
  return FALSE;
}

/* Seconds after which a leftover temporary file is surely not a save still in
 * progress: a save takes milliseconds (3 ms on 18,143 faces), so a minute is
 * far beyond any live one — another process saving the same review right now
 * is never disturbed — and short enough that leftovers do not pile up. */
#define STALE_TEMPORARY_SECONDS 60

/* `name` is `prefix` followed by the six letters or digits g_mkstemp adds. */
static gboolean
is_temporary_name (const char *name, const char *prefix)
{
  gsize prefix_len = strlen (prefix);
  if (!g_str_has_prefix (name, prefix) || strlen (name) != prefix_len + 6)
    return FALSE;
  for (gsize k = prefix_len; k < prefix_len + 6; k++)
    if (!g_ascii_isalnum (name[k]))
      return FALSE;
  return TRUE;
}

/* A save killed between creating its temporary file and renaming it (SIGKILL,
 * a power cut) leaves "<base>.XXXXXX" (g_file_set_contents_full's name)
 * behind, or ".<base>.XXXXXX" (the name of Likeness's own writer before it).
 * Removes those: regular files only (lstat: never a symbolic link, a folder
 * or anything else), older than STALE_TEMPORARY_SECONDS. Best effort: a
 * failure here costs nothing. */
static void
remove_stale_temporaries (const char *dir, const char *base)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree char *glib_prefix = g_strdup_printf ("%s.", base);
  g_autofree char *old_prefix = g_strdup_printf (".%s.", base);
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (!is_temporary_name (name, glib_prefix) && !is_temporary_name (name, old_prefix))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      GStatBuf st;
      if (g_lstat (path, &st) != 0 || !S_ISREG (st.st_mode)
          || now - (gint64) st.st_mtime < STALE_TEMPORARY_SECONDS)
        continue;
      g_unlink (path);
    }
}

/* The file `path` names once symbolic links are followed (it may not exist):
 * a review.json linked elsewhere is saved into the link's target, and the
 * link stays a link. A loop, or links beyond 40 deep, is left for the write
 * to fail on. */
static char *
resolve_links (const char *path)
{
  char *current = g_strdup (path);
  for (int hops = 0; hops < 40; hops++)
    {
      g_autofree char *target = g_file_read_link (current, NULL);
      if (target == NULL)
        break;
      if (!g_path_is_absolute (target))
        {
          g_autofree char *dir = g_path_get_dirname (current);
          g_autofree char *joined = g_build_filename (dir, target, NULL);
          g_free (current);
          current = g_canonicalize_filename (joined, NULL);
        }
      else
        {
          g_free (current);
          current = g_steal_pointer (&target);
        }
    }
  return current;
}

/* Takes the advisory lock that serialises every writer of `target`: flock
 * on "<dir>/.<base>.lock" (flock rather than fcntl locks, which a process
 * loses when it closes any descriptor of the file — GLib reading it would
 * drop the lock). *fd receives the descriptor to close, -1 when the file
 * system has no locks (then the save goes on unlocked, and says so once). */
static gboolean
take_lock (const char *path, const char *target, int *fd, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (target);
  g_autofree char *base = g_path_get_basename (target);
  g_autofree char *name = g_strdup_printf (".%s.lock", base);
  g_autofree char *lock = g_build_filename (dir, name, NULL);

  *fd = injected (LK_REVIEW_STEP_LOCK)
            ? -1
            : g_open (lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  /* Another user's lock file, or one made read-only: a shared lock works
   * with a read-only descriptor. */
  if (*fd < 0 && errno == EACCES)
    *fd = g_open (lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
  if (*fd < 0)
    return save_failed (error, path, "creating the lock file", lock, errno);
  while (flock (*fd, LOCK_EX) != 0)
    {
      int err = errno;
      if (err == EINTR)
        continue;
      g_close (*fd, NULL);
      *fd = -1;
      if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL)
        {
          static gsize warned;
          if (g_once_init_enter (&warned))
            {
              g_message ("%s is on a file system without file locks (%s): saved without a "
                         "lock, so a decision another program saves at the same instant "
                         "could be lost",
                         target, g_strerror (err));
              g_once_init_leave (&warned, 1);
            }
          return TRUE;
        }
      return save_failed (error, path, "locking", lock, err);
    }
  return TRUE;
}

/* Writes the file and makes the rename itself durable (g_file_set_contents_full
 * flushes the file before renaming it, but not the folder after). */
static gboolean
write_durably (const char *path, const char *target, const char *data, gsize length, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (target);
  g_autofree char *base = g_path_get_basename (target);
  GStatBuf st;
  /* A file the user gave another mode (0600 for privacy, 0664 for a group)
   * keeps it. */
  int mode = g_stat (target, &st) == 0 ? (int) (st.st_mode & 0777) : 0644;
  g_autoptr (GError) local = NULL;

  if (injected (LK_REVIEW_STEP_WRITE))
    return save_failed (error, path, "writing", target, errno);
  if (!g_file_set_contents_full (target, data, (gssize) length,
                                 G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE, mode,
                                 &local))
    {
      gboolean read_only = g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_ROFS)
                           || g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_ACCES)
                           || g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_PERM);
      g_set_error (
          error, LK_REVIEW_ERROR, read_only ? LK_REVIEW_ERROR_READ_ONLY : LK_REVIEW_ERROR_IO,
          "could not save the review to %s: %s. The previous file is intact", path, local->message);
      return FALSE;
    }
  /* The umask may have narrowed the mode the new file was created with. */
  if (g_stat (target, &st) == 0 && (int) (st.st_mode & 0777) != mode)
    g_chmod (target, mode);
  remove_stale_temporaries (dir, base);
  /* From here the new file is in place; only its durability is in doubt. */
  int dfd = injected (LK_REVIEW_STEP_DIR_OPEN)
                ? -1
                : g_open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dfd < 0)
    {
      int err = errno;
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO,
                   "saved the review to %s, but opening the folder %s to flush it failed: %s. "
                   "Save again to be sure it survives a power cut",
                   path, dir, g_strerror (err));
      return FALSE;
    }
  if (injected (LK_REVIEW_STEP_DIR_FSYNC) || fsync (dfd) != 0)
    {
      int err = errno;
      g_close (dfd, NULL);
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO,
                   "saved the review to %s, but flushing the folder %s failed: %s. "
                   "Save again to be sure it survives a power cut",
                   path, dir, g_strerror (err));
      return FALSE;
    }
  g_close (dfd, NULL);
  return TRUE;
}

/* review.json as it is now, for merging: NULL in *theirs when there is
 * nothing to merge with (no file, or a file the caller replaces). */
static gboolean
read_theirs (LkReview *review, const char *path, const char *target, LkReviewSaveFlags flags,
             LkReview **theirs, GError **error)
{
  g_autoptr (GError) check = NULL;
  *theirs = NULL;
  if (!g_file_test (target, G_FILE_TEST_EXISTS))
    return TRUE;
  *theirs = load (target, review->keys, review->fingerprint, NULL, &check);
  if (*theirs != NULL)
    return TRUE;
  if (g_error_matches (check, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO))
    {
      /* Writing without reading would lose what other writers saved. */
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO,
                   "could not save the review to %s: reading it to merge with failed: %s", path,
                   check->message);
      return FALSE;
    }
  /* Never replace a file that is not this library's review without being told to. */
  if (flags & LK_REVIEW_SAVE_REPLACE)
    return TRUE;
  if (check->code == LK_REVIEW_ERROR_FOREIGN)
    g_propagate_error (error, g_steal_pointer (&check));
  else
    g_set_error (error, LK_REVIEW_ERROR, check->code,
                 "%s; it was not overwritten (start over to replace it)", check->message);
  return FALSE;
}

gboolean
lk_review_save (LkReview *review, const char *path, LkReviewSaveFlags flags, GError **error)
{
  g_return_val_if_fail (review != NULL && path != NULL, FALSE);

  g_autofree char *target = resolve_links (path);
  int lock = -1;
  if (!take_lock (path, target, &lock, error))
    return FALSE;

  g_autoptr (LkReview) theirs = NULL;
  gboolean ok = read_theirs (review, path, target, flags, &theirs, error);
  if (ok)
    {
      g_autoptr (GArray) done = g_array_new (FALSE, FALSE, sizeof (Entry));
      g_autoptr (GArray) undone = g_array_new (FALSE, FALSE, sizeof (Entry));
      if (theirs != NULL)
        merge_logs (review, theirs, done, undone);
      else
        {
          for (guint k = 0; k < review->done->len; k++)
            g_array_append_val (done, ((Entry){ g_ptr_array_index (review->done, k), review }));
          for (guint k = 0; k < review->undone->len; k++)
            g_array_append_val (undone, ((Entry){ g_ptr_array_index (review->undone, k), review }));
        }
      gsize length = 0;
      /* The calibration this writer set wins; else the file's stays. */
      JsonNode *calibration
          = theirs != NULL && !review->calibration_set ? theirs->calibration : review->calibration;
      g_autofree char *data = serialize (review, done, undone, calibration,
                                         theirs ? theirs->unknown : review->unknown, &length);
      ok = write_durably (path, target, data, length, error);
      if (ok)
        {
          agree (review);
          review->calibration_set = FALSE;
        }
    }
  if (lock >= 0)
    g_close (lock, NULL);
  return ok;
}

/* A copy of `d` (whose slots are `from`'s) in `to`'s slots. */
static Decision *
decision_copy (const Decision *d, const LkReview *from, LkReview *to)
{
  Decision *c = decision_new (d->op, d->person);
  const GArray *src[3] = { d->faces, d->selected, d->other_faces };
  GArray *dst[3] = { c->faces, c->selected, c->other_faces };
  c->id = g_strdup (d->id);
  c->name = g_strdup (d->name);
  c->other = g_strdup (d->other);
  c->group = g_strdup (d->group);
  for (int a = 0; a < 3; a++)
    {
      for (guint k = 0; k < src[a]->len; k++)
        {
          guint32 slot = slot_of (to, key_of (from, g_array_index (src[a], guint32, k)));
          g_array_append_val (dst[a], slot);
        }
      g_array_sort (dst[a], compare_faces);
    }
  c->face = d->face >= 0 ? (gint64) slot_of (to, key_of (from, (guint32) d->face)) : -1;
  return c;
}

static GPtrArray *
copy_log (const GArray *log, LkReview *to)
{
  GPtrArray *copy = g_ptr_array_new_full (log->len, (GDestroyNotify) decision_free);
  for (guint k = 0; k < log->len; k++)
    {
      const Entry *e = &g_array_index (log, Entry, k);
      g_ptr_array_add (copy, decision_copy (e->decision, e->owner, to));
    }
  return copy;
}

gboolean
lk_review_refresh (LkReview *review, const char *path, guint *n_changed, GError **error)
{
  g_return_val_if_fail (review != NULL && path != NULL, FALSE);

  if (n_changed)
    *n_changed = 0;
  g_autofree char *target = resolve_links (path);
  g_autoptr (LkReview) theirs = NULL;
  if (!read_theirs (review, path, target, LK_REVIEW_SAVE_DEFAULT, &theirs, error))
    return FALSE;
  if (theirs == NULL)
    return TRUE;

  g_autoptr (GArray) done = g_array_new (FALSE, FALSE, sizeof (Entry));
  g_autoptr (GArray) undone = g_array_new (FALSE, FALSE, sizeof (Entry));
  merge_logs (review, theirs, done, undone);
  /* Decisions now in effect that were not, and the other way round. */
  g_autoptr (GHashTable) before = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) after = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < review->done->len; k++)
    g_hash_table_add (before, ((Decision *) g_ptr_array_index (review->done, k))->id);
  for (guint k = 0; k < done->len; k++)
    g_hash_table_add (after, g_array_index (done, Entry, k).decision->id);
  guint changed = 0;
  for (guint k = 0; k < done->len; k++)
    changed += !g_hash_table_contains (before, g_array_index (done, Entry, k).decision->id);
  for (guint k = 0; k < review->done->len; k++)
    changed
        += !g_hash_table_contains (after, ((Decision *) g_ptr_array_index (review->done, k))->id);

  GPtrArray *new_done = copy_log (done, review);
  GPtrArray *new_undone = copy_log (undone, review);
  g_clear_pointer (&before, g_hash_table_unref);
  g_clear_pointer (&after, g_hash_table_unref);
  g_ptr_array_unref (review->done);
  g_ptr_array_unref (review->undone);
  review->done = new_done;
  review->undone = new_undone;
  g_clear_pointer (&review->unknown, json_object_unref);
  review->unknown = g_steal_pointer (&theirs->unknown);
  if (!review->calibration_set)
    {
      g_clear_pointer (&review->calibration, json_node_unref);
      review->calibration = g_steal_pointer (&theirs->calibration);
    }
  g_clear_pointer (&review->pins, g_ptr_array_unref);
  /* What the file holds, not the merge: a decision of this review's that a
   * save has not written yet (it failed) still differs from the file, so the
   * next save writes it instead of taking the file's word and dropping it. */
  agree_with (review, theirs);
  if (n_changed)
    *n_changed = changed;
  return TRUE;
}

/* --- requests -------------------------------------------------------------------------------- */

LkReviewRequest *
lk_review_request_new (LkReviewAction action, const char *person)
{
  g_return_val_if_fail (action < LK_REVIEW_N_ACTIONS, NULL);
  LkReviewRequest *request = g_new0 (LkReviewRequest, 1);
  request->action = action;
  request->person = g_strdup (person);
  request->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  return request;
}

LkReviewRequest *
lk_review_request_copy (const LkReviewRequest *request)
{
  LkReviewRequest *copy = lk_review_request_new (request->action, request->person);
  copy->other = g_strdup (request->other);
  copy->name = g_strdup (request->name);
  copy->others = g_strdupv (request->others);
  g_array_append_vals (copy->faces, request->faces->data, request->faces->len);
  return copy;
}

void
lk_review_request_free (LkReviewRequest *request)
{
  if (request == NULL)
    return;
  g_free (request->person);
  g_free (request->other);
  g_free (request->name);
  g_strfreev (request->others);
  g_array_unref (request->faces);
  g_free (request);
}

const char *
lk_review_action_name (LkReviewAction action)
{
  g_return_val_if_fail (action < LK_REVIEW_N_ACTIONS, NULL);
  return op_names[action];
}

/* What each action takes after its name on a command line. */
static const struct
{
  int min_words, max_words; /* -1: any number */
  const char *usage;
} shapes[LK_REVIEW_N_ACTIONS] = {
  [LK_REVIEW_NAME] = { 2, 2, "name PERSON NAME" },
  [LK_REVIEW_MERGE] = { 2, -1, "merge PERSON OTHER…" },
  [LK_REVIEW_REMOVE] = { 2, -1, "remove PERSON FACE…" },
  [LK_REVIEW_MOVE] = { 3, -1, "move PERSON TARGET FACE…" },
  [LK_REVIEW_COVER] = { 2, 2, "cover PERSON FACE" },
  [LK_REVIEW_HIDE] = { 1, 1, "hide PERSON" },
  [LK_REVIEW_UNHIDE] = { 1, 1, "unhide PERSON" },
  [LK_REVIEW_CONFIRM] = { 2, 2, "confirm PERSON FACE" },
  [LK_REVIEW_DISMISS] = { 1, -1, "dismiss FACE…" },
  [LK_REVIEW_UNDISMISS] = { 1, -1, "undismiss FACE…" },
  [LK_REVIEW_REJECT] = { 2, -1, "reject PERSON FACE…" },
  [LK_REVIEW_UNDO] = { 0, 0, "undo" },
  [LK_REVIEW_REDO] = { 0, 0, "redo" },
};

LkReviewRequest *
lk_review_request_parse (const char *const *words, int n_words, GError **error)
{
  g_return_val_if_fail (words != NULL && n_words >= 1, NULL);
  LkReviewAction action = LK_REVIEW_N_ACTIONS;
  for (int k = 0; k < LK_REVIEW_N_ACTIONS; k++)
    if (strcmp (words[0], op_names[k]) == 0)
      action = k;
  if (action == LK_REVIEW_N_ACTIONS)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "“%s” is not an action",
                   words[0]);
      return NULL;
    }
  int n = n_words - 1;
  if (n < shapes[action].min_words
      || (shapes[action].max_words >= 0 && n > shapes[action].max_words))
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                   "“%s” with %d argument%s is not an action; it takes %s", words[0], n,
                   n == 1 ? "" : "s", shapes[action].usage);
      return NULL;
    }
  const char *person = n > 0 ? words[1] : NULL;
  if (action == LK_REVIEW_MOVE && strcmp (person, "unassigned") == 0)
    person = NULL;
  if (action == LK_REVIEW_DISMISS || action == LK_REVIEW_UNDISMISS)
    person = NULL;
  g_autoptr (LkReviewRequest) request = lk_review_request_new (action, person);
  int first_face = n + 1;
  switch (action)
    {
      case LK_REVIEW_NAME:
        request->name = g_strdup (words[2]);
        break;
      case LK_REVIEW_MERGE:
        request->other = g_strdup (words[2]);
        if (n_words > 3)
          {
            request->others = g_new0 (char *, n_words - 2);
            for (int k = 3; k < n_words; k++)
              request->others[k - 3] = g_strdup (words[k]);
          }
        break;
      case LK_REVIEW_DISMISS:
      case LK_REVIEW_UNDISMISS:
        first_face = 1;
        break;
      case LK_REVIEW_MOVE:
        request->other = strcmp (words[2], "new") == 0 ? NULL : g_strdup (words[2]);
        first_face = 3;
        break;
      case LK_REVIEW_REMOVE:
      case LK_REVIEW_COVER:
      case LK_REVIEW_CONFIRM:
      case LK_REVIEW_REJECT:
        first_face = 2;
        break;
      case LK_REVIEW_HIDE:
      case LK_REVIEW_UNHIDE:
      case LK_REVIEW_UNDO:
      case LK_REVIEW_REDO:
      case LK_REVIEW_N_ACTIONS:
      default:
        break;
    }
  for (int k = first_face; k < n_words; k++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (words[k], 10, 0, G_MAXUINT32, &v, NULL))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE, "“%s” is not a face index",
                       words[k]);
          return NULL;
        }
      guint32 f = (guint32) v;
      g_array_append_val (request->faces, f);
    }
  return g_steal_pointer (&request);
}

gboolean
lk_review_apply (LkReview *review, const LkPeople *people, const LkReviewRequest *request,
                 char **new_id, GError **error)
{
  g_return_val_if_fail (review != NULL && request != NULL, FALSE);
  const guint32 *faces = (const guint32 *) request->faces->data;
  gsize n = request->faces->len;
  LkReviewAction a = request->action;

  if (a == LK_REVIEW_UNDO || a == LK_REVIEW_REDO)
    {
      if (a == LK_REVIEW_UNDO ? lk_review_undo (review) : lk_review_redo (review))
        return TRUE;
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "there is nothing to %s",
                   op_names[a]);
      return FALSE;
    }
  g_return_val_if_fail (people != NULL, FALSE);
  if ((a == LK_REVIEW_COVER || a == LK_REVIEW_CONFIRM) && n != 1)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "%s takes one face, not %zu",
                   op_names[a], n);
      return FALSE;
    }
  switch (a)
    {
      case LK_REVIEW_NAME:
        return lk_review_name (review, people, request->person, request->name, error);
      case LK_REVIEW_MERGE:
        {
          g_autoptr (GPtrArray) ids = g_ptr_array_new ();
          g_ptr_array_add (ids, request->other);
          for (char **o = request->others; o != NULL && *o != NULL; o++)
            g_ptr_array_add (ids, *o);
          return lk_review_merge_many (review, people, request->person,
                                       (const char *const *) ids->pdata, ids->len, error);
        }
      case LK_REVIEW_DISMISS:
        return lk_review_dismiss (review, people, faces, n, error);
      case LK_REVIEW_UNDISMISS:
        return lk_review_undismiss (review, people, faces, n, error);
      case LK_REVIEW_REMOVE:
        return lk_review_remove (review, people, request->person, faces, n, error);
      case LK_REVIEW_MOVE:
        return lk_review_move (review, people, request->person, faces, n, request->other, new_id,
                               error);
      case LK_REVIEW_COVER:
        return lk_review_set_cover (review, people, request->person, faces[0], error);
      case LK_REVIEW_HIDE:
      case LK_REVIEW_UNHIDE:
        return lk_review_set_hidden (review, people, request->person, a == LK_REVIEW_HIDE, error);
      case LK_REVIEW_CONFIRM:
        return lk_review_confirm (review, people, request->person, faces[0], error);
      case LK_REVIEW_REJECT:
        return lk_review_reject_faces (review, people, request->person, faces, n, error);
      case LK_REVIEW_UNDO:
      case LK_REVIEW_REDO:
      case LK_REVIEW_N_ACTIONS:
      default:
        break;
    }
  g_return_val_if_reached (FALSE);
}
