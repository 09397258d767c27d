/* lk-photos-journal.c — see lk-photos-journal.h */
#include "config.h"

#include "lk-photos-journal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#define MAGIC           "LKPJ"
#define VERSION         1u
#define BYTE_ORDER_MARK 0x01020304u
#define MODEL_BYTES     64
/* A record's photo has at most this many faces (a crowd of 10,000 faces in
 * one photo is no photo a person takes): a corrupt count stops the reading. */
#define MAX_FACES       4096

typedef struct
{
  char magic[4];
  guint32 version;
  guint32 bom;
  guint32 dim;
  char model[MODEL_BYTES];
} Header;

/* Per face in a record: box, score, landmarks as doubles, then dim floats. */
#define FACE_DOUBLES 15

struct _LkPhotosJournal
{
  char *path;
  char *model;
  guint dim;
  GHashTable *entries; /* digest → LkJournalEntry * */
  int fd;              /* for appending, -1 until the first append */
  gboolean rewrite;    /* the file is not ours (another model, corrupt): start it over */
  gsize valid_length;  /* bytes of whole records read: an append goes after them */
  GMutex lock;
};

static void
entry_free (gpointer data)
{
  LkJournalEntry *e = data;
  g_free (e->faces);
  g_free (e->floats);
  g_free (e);
}

static guint32
fnv1a (const guint8 *p, gsize n)
{
  guint32 h = 2166136261u;
  for (gsize k = 0; k < n; k++)
    h = (h ^ p[k]) * 16777619u;
  return h;
}

static void
header_init (Header *h, const char *model, guint dim)
{
  memset (h, 0, sizeof *h);
  memcpy (h->magic, MAGIC, 4);
  h->version = VERSION;
  h->bom = BYTE_ORDER_MARK;
  h->dim = dim;
  g_strlcpy (h->model, model, MODEL_BYTES);
}

/* The payload of one record: digest, width, height, count, faces. */
static GByteArray *
record_payload (guint dim, const char *digest, gint64 width, gint64 height,
                const LkDetectedFace *faces, guint n, const float *floats)
{
  GByteArray *b = g_byte_array_new ();
  char d[LK_PHOTOS_DIGEST_CHARS] = { 0 };
  memcpy (d, digest, MIN (strlen (digest), (gsize) LK_PHOTOS_DIGEST_CHARS));
  g_byte_array_append (b, (const guint8 *) d, LK_PHOTOS_DIGEST_CHARS);
  g_byte_array_append (b, (const guint8 *) &width, 8);
  g_byte_array_append (b, (const guint8 *) &height, 8);
  guint32 count = n;
  g_byte_array_append (b, (const guint8 *) &count, 4);
  for (guint f = 0; f < n; f++)
    {
      double v[FACE_DOUBLES];
      memcpy (v, faces[f].box, 4 * sizeof (double));
      v[4] = faces[f].score;
      memcpy (v + 5, faces[f].landmarks, 10 * sizeof (double));
      g_byte_array_append (b, (const guint8 *) v, sizeof v);
      g_byte_array_append (b, (const guint8 *) (floats + (gsize) f * dim), dim * sizeof (float));
    }
  return b;
}

/* Length, payload, hash. */
static GByteArray *
record_bytes (GByteArray *payload)
{
  GByteArray *r = g_byte_array_sized_new (payload->len + 8);
  guint32 length = payload->len, hash = fnv1a (payload->data, payload->len);
  g_byte_array_append (r, (const guint8 *) &length, 4);
  g_byte_array_append (r, payload->data, payload->len);
  g_byte_array_append (r, (const guint8 *) &hash, 4);
  return r;
}

/* Takes `digest` and `e`. The first entry of a digest stays: a lookup's
 * pointer to it must stay good, and the same bytes give the same faces. */
static void
insert_entry (LkPhotosJournal *j, char *digest, LkJournalEntry *e)
{
  if (g_hash_table_contains (j->entries, digest))
    {
      g_free (digest);
      entry_free (e);
      return;
    }
  g_hash_table_insert (j->entries, digest, e);
}

static gboolean
parse_record (LkPhotosJournal *j, const guint8 *p, gsize length)
{
  gsize face_bytes = FACE_DOUBLES * sizeof (double) + j->dim * sizeof (float);
  if (length < LK_PHOTOS_DIGEST_CHARS + 20)
    return FALSE;
  LkJournalEntry *e = g_new0 (LkJournalEntry, 1);
  char *digest = g_strndup ((const char *) p, LK_PHOTOS_DIGEST_CHARS);
  guint32 count;
  memcpy (&e->width, p + LK_PHOTOS_DIGEST_CHARS, 8);
  memcpy (&e->height, p + LK_PHOTOS_DIGEST_CHARS + 8, 8);
  memcpy (&count, p + LK_PHOTOS_DIGEST_CHARS + 16, 4);
  if (count > MAX_FACES || length != LK_PHOTOS_DIGEST_CHARS + 20 + count * face_bytes
      || e->width <= 0 || e->height <= 0)
    {
      g_free (digest);
      entry_free (e);
      return FALSE;
    }
  e->n_faces = count;
  e->faces = g_new0 (LkDetectedFace, MAX (count, 1));
  e->floats = g_new (float, MAX ((gsize) count * j->dim, 1));
  const guint8 *q = p + LK_PHOTOS_DIGEST_CHARS + 20;
  for (guint f = 0; f < count; f++)
    {
      double v[FACE_DOUBLES];
      memcpy (v, q, sizeof v);
      memcpy (e->faces[f].box, v, 4 * sizeof (double));
      e->faces[f].score = v[4];
      memcpy (e->faces[f].landmarks, v + 5, 10 * sizeof (double));
      memcpy (e->floats + (gsize) f * j->dim, q + sizeof v, j->dim * sizeof (float));
      q += face_bytes;
    }
  insert_entry (j, digest, e);
  return TRUE;
}

LkPhotosJournal *
lk_photos_journal_open (const char *path, const char *model, guint dim, GError **error)
{
  LkPhotosJournal *j = g_new0 (LkPhotosJournal, 1);
  j->path = g_strdup (path);
  j->model = g_strdup (model);
  j->dim = dim;
  j->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
  j->fd = -1;
  j->rewrite = TRUE;
  g_mutex_init (&j->lock);

  g_autofree char *data = NULL;
  gsize length = 0;
  GError *local = NULL;
  if (!g_file_get_contents (path, &data, &length, &local))
    {
      if (!g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          g_propagate_prefixed_error (error, local, "Cannot read the import's journal %s: ", path);
          lk_photos_journal_free (j);
          return NULL;
        }
      g_error_free (local);
      return j;
    }
  Header want, have;
  header_init (&want, model, dim);
  if (length < sizeof have)
    return j;
  memcpy (&have, data, sizeof have);
  if (memcmp (&have, &want, sizeof have) != 0)
    return j; /* another model, version or byte order: start over */
  gsize at = sizeof have;
  while (at + 8 <= length)
    {
      guint32 size, hash;
      memcpy (&size, data + at, 4);
      if (size > length - at - 8)
        break;
      memcpy (&hash, data + at + 4 + size, 4);
      if (fnv1a ((const guint8 *) data + at + 4, size) != hash
          || !parse_record (j, (const guint8 *) data + at + 4, size))
        break;
      at += 8 + size;
    }
  j->rewrite = FALSE;
  j->valid_length = at;
  return j;
}

void
lk_photos_journal_free (LkPhotosJournal *journal)
{
  if (journal == NULL)
    return;
  if (journal->fd >= 0)
    close (journal->fd);
  g_hash_table_unref (journal->entries);
  g_mutex_clear (&journal->lock);
  g_free (journal->path);
  g_free (journal->model);
  g_free (journal);
}

guint
lk_photos_journal_size (LkPhotosJournal *journal)
{
  g_mutex_lock (&journal->lock);
  guint n = g_hash_table_size (journal->entries);
  g_mutex_unlock (&journal->lock);
  return n;
}

const LkJournalEntry *
lk_photos_journal_lookup (LkPhotosJournal *journal, const char *digest)
{
  g_mutex_lock (&journal->lock);
  const LkJournalEntry *e = g_hash_table_lookup (journal->entries, digest);
  g_mutex_unlock (&journal->lock);
  return e;
}

static gboolean
write_all (int fd, const guint8 *p, gsize n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return FALSE;
      p += w;
      n -= (gsize) w;
    }
  return TRUE;
}

static gboolean
fail_io (LkPhotosJournal *j, GError **error)
{
  int saved = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
               "Cannot write the import's journal %s: %s", j->path, g_strerror (saved));
  return FALSE;
}

gboolean
lk_photos_journal_append (LkPhotosJournal *journal, const char *digest, gint64 width, gint64 height,
                          const LkDetectedFace *faces, guint n_faces, const float *floats,
                          GError **error)
{
  g_autoptr (GByteArray) payload
      = record_payload (journal->dim, digest, width, height, faces, n_faces, floats);
  g_autoptr (GByteArray) record = record_bytes (payload);
  gboolean ok = TRUE;

  g_mutex_lock (&journal->lock);
  if (journal->fd < 0)
    {
      if (journal->rewrite)
        {
          journal->fd = open (journal->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
          Header h;
          header_init (&h, journal->model, journal->dim);
          if (journal->fd < 0 || !write_all (journal->fd, (const guint8 *) &h, sizeof h))
            ok = fail_io (journal, error);
        }
      else
        {
          /* After the last whole record: a record cut by a kill is
           * overwritten. */
          journal->fd = open (journal->path, O_WRONLY | O_CLOEXEC);
          if (journal->fd < 0 || ftruncate (journal->fd, (off_t) journal->valid_length) != 0
              || lseek (journal->fd, 0, SEEK_END) < 0)
            ok = fail_io (journal, error);
        }
    }
  if (ok && !write_all (journal->fd, record->data, record->len))
    ok = fail_io (journal, error);
  if (ok)
    {
      /* Straight from the caller's arrays, not re-read from the record. */
      LkJournalEntry *e = g_new0 (LkJournalEntry, 1);
      e->width = width;
      e->height = height;
      e->n_faces = n_faces;
      e->faces = n_faces > 0 ? g_memdup2 (faces, n_faces * sizeof (LkDetectedFace)) : NULL;
      e->floats = n_faces > 0 ? g_memdup2 (floats, (gsize) n_faces * journal->dim * sizeof (float))
                              : NULL;
      insert_entry (journal, g_strndup (digest, LK_PHOTOS_DIGEST_CHARS), e);
    }
  g_mutex_unlock (&journal->lock);
  return ok;
}

gboolean
lk_photos_journal_compact (LkPhotosJournal *journal, const char *const *digests, guint n,
                           GError **error)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  Header h;
  header_init (&h, journal->model, journal->dim);
  g_byte_array_append (out, (const guint8 *) &h, sizeof h);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < n; k++)
    {
      const LkJournalEntry *e = g_hash_table_lookup (journal->entries, digests[k]);
      if (e == NULL || !g_hash_table_add (seen, (gpointer) digests[k]))
        continue;
      g_autoptr (GByteArray) payload = record_payload (journal->dim, digests[k], e->width,
                                                       e->height, e->faces, e->n_faces, e->floats);
      g_autoptr (GByteArray) record = record_bytes (payload);
      g_byte_array_append (out, record->data, record->len);
    }
  g_mutex_lock (&journal->lock);
  if (journal->fd >= 0)
    {
      close (journal->fd);
      journal->fd = -1;
    }
  g_mutex_unlock (&journal->lock);
  GError *local = NULL;
  if (!g_file_set_contents_full (journal->path, (const char *) out->data, out->len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local))
    {
      g_propagate_prefixed_error (error, local,
                                  "Cannot write the import's journal %s: ", journal->path);
      return FALSE;
    }
  journal->rewrite = FALSE;
  journal->valid_length = out->len;
  return TRUE;
}
