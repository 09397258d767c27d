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
 * How review.json is written beside its other writers: lk-review-save.c.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include "lk-review-private.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-review-error-quark, lk_review_error)
/* clang-format on */

const char *const lk_review_op_names[LK_REVIEW_N_ACTIONS] = {
  "name",    "merge",   "remove",    "move",   "cover", "hide", "unhide",
  "confirm", "dismiss", "undismiss", "reject", "undo",  "redo",
};

FaceKeys *
lk_review_face_keys_new (gsize n_faces, char **keys)
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

void
lk_review_face_keys_unref (FaceKeys *k)
{
  if (!g_atomic_int_dec_and_test (&k->ref))
    return;
  g_hash_table_unref (k->index);
  g_strfreev (k->keys);
  g_free (k);
}

/* --- face keys ------------------------------------------------------------------------------- */

/* The key review.json names `slot` by. */
const char *
lk_review_key_of (const LkReview *review, guint32 slot)
{
  if (slot < review->n_faces)
    return review->keys->keys[slot];
  return g_ptr_array_index (review->gone, slot - review->n_faces);
}

/* The slot of `key`: its face, or a slot past the library's faces. */
guint32
lk_review_slot_of (LkReview *review, const char *key)
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

GArray *
lk_review_face_array (void)
{
  return g_array_new (FALSE, FALSE, sizeof (guint32));
}

Decision *
lk_review_decision_new (Op op, const char *person)
{
  Decision *d = g_new0 (Decision, 1);
  d->op = op;
  d->person = g_strdup (person);
  d->faces = lk_review_face_array ();
  d->selected = lk_review_face_array ();
  d->other_faces = lk_review_face_array ();
  d->face = -1;
  return d;
}

void
lk_review_decision_free (Decision *d)
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
  return g_strdup_printf ("face “%s” (no longer in the library)",
                          lk_review_key_of (review, (guint32) face));
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

int
lk_review_compare_faces (gconstpointer x, gconstpointer y)
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
           * (else it would do nothing, and say "merged"). */
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
          g_array_sort (pin->excluded, lk_review_compare_faces);
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

LkReview *
lk_review_new_with_keys (FaceKeys *keys, const char *fingerprint, const guint64 *photo)
{
  LkReview *review = g_new0 (LkReview, 1);
  gsize n_faces = keys->n_faces;
  review->n_faces = n_faces;
  review->keys = face_keys_ref (keys);
  review->gone = g_ptr_array_new_with_free_func (g_free);
  review->gone_slot = g_hash_table_new (g_str_hash, g_str_equal);
  review->fingerprint = g_strdup (fingerprint);
  review->photo = photo ? g_memdup2 (photo, n_faces * sizeof (guint64)) : NULL;
  review->done = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_review_decision_free);
  review->undone = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_review_decision_free);
  review->synced = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return review;
}

LkReview *
lk_review_new (gsize n_faces, const char *fingerprint, const guint64 *photo)
{
  g_return_val_if_fail (fingerprint != NULL, NULL);
  FaceKeys *keys = lk_review_face_keys_new (n_faces, NULL);
  LkReview *review = lk_review_new_with_keys (keys, fingerprint, photo);
  lk_review_face_keys_unref (keys);
  return review;
}

LkReview *
lk_review_new_for_library (const LkLibrary *library)
{
  g_return_val_if_fail (library != NULL, NULL);
  FaceKeys *keys = lk_review_face_keys_new (library->count, lk_library_face_keys (library));
  LkReview *review = lk_review_new_with_keys (keys, library->fingerprint, library->photo);
  lk_review_face_keys_unref (keys);
  return review;
}

void
lk_review_free (LkReview *review)
{
  if (review == NULL)
    return;
  g_free (review->fingerprint);
  g_free (review->photo);
  lk_review_face_keys_unref (review->keys);
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
char *
lk_review_new_decision_id (void)
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

void
lk_review_commit (LkReview *review, Decision *d)
{
  if (d->id == NULL)
    d->id = lk_review_new_decision_id ();
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
