/* lk-review-save.c — review.json written: merged with other writers, locked, durable; refresh
 *
 * review.json has many writers (the window, likeness-cli, a second window),
 * so a save never just writes what this process holds: under a flock on a
 * lock file beside review.json it reads the file again and merges by decision
 * id (merge_logs), then writes with g_file_set_contents_full (CONSISTENT |
 * DURABLE: temporary file, fsync, rename) and fsyncs the folder, which is what
 * makes the rename itself survive a power cut. GLib's writer's system calls
 * are failed from outside by tests/lk-fail-shim.c, and Likeness's own steps
 * from inside (lk-review-private.h). Without the lock and the merge, two
 * likeness-cli review started together lost a decision in 86 rounds of 100.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "lk-review-private.h"

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
    json_builder_add_string_value (b, lk_review_key_of (owner, g_array_index (faces, guint32, k)));
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
      json_builder_add_string_value (b, lk_review_op_names[d->op]);
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
          json_builder_add_string_value (b, lk_review_key_of (owner, (guint32) d->face));
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

static LkReviewStep fail_step;
static int fail_errno;

void
lk_review_inject_failure (LkReviewStep step, int errno_value)
{
  fail_step = step;
  fail_errno = errno_value;
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
  *theirs = lk_review_load_with_keys (target, review->keys, review->fingerprint, NULL, &check);
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
  Decision *c = lk_review_decision_new (d->op, d->person);
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
          guint32 slot
              = lk_review_slot_of (to, lk_review_key_of (from, g_array_index (src[a], guint32, k)));
          g_array_append_val (dst[a], slot);
        }
      g_array_sort (dst[a], lk_review_compare_faces);
    }
  c->face = d->face >= 0
                ? (gint64) lk_review_slot_of (to, lk_review_key_of (from, (guint32) d->face))
                : -1;
  return c;
}

static GPtrArray *
copy_log (const GArray *log, LkReview *to)
{
  GPtrArray *copy = g_ptr_array_new_full (log->len, (GDestroyNotify) lk_review_decision_free);
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
