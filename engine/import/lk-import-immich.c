/* lk-import-immich.c — see lk-import-immich.h
 *
 * One query reads every live face with its embedding (`embedding::text`, the
 * pgvector text form "[x,y,…]", which PostgreSQL prints with shortest
 * round-trip float formatting, so nothing is lost against the binary form and
 * no pgvector wire format has to be decoded here). Faces are ordered by
 * (asset, face) so one database gives one library, byte for byte.
 */
#include "config.h"

#include "lk-import-immich.h"

#include <errno.h>
#include <poll.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk-import-private.h"
#include "library/lk-library.h"

char *
lk_import_immich_map_media (const char *media, const char *path)
{
  static const char *const top[]
      = { "library", "upload", "thumbs", "encoded-video", "profile", "backups" };

  if (media == NULL || path == NULL)
    return NULL;
  if (!g_path_is_absolute (path))
    return g_build_filename (media, path, NULL);
  /* The media folder holds an upload/ folder of its own, and a user's
   * folders may be called thumbs/: the first cut whose file exists wins,
   * else the first cut. */
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  char *first = NULL;
  for (guint k = 0; parts[k] != NULL; k++)
    for (gsize t = 0; t < G_N_ELEMENTS (top); t++)
      if (strcmp (parts[k], top[t]) == 0)
        {
          g_autofree char *rest = g_strjoinv ("/", parts + k);
          char *mapped = g_build_filename (media, rest, NULL);
          if (g_file_test (mapped, G_FILE_TEST_EXISTS))
            {
              g_free (first);
              return mapped;
            }
          if (first == NULL)
            first = mapped;
          else
            g_free (mapped);
        }
  if (first != NULL)
    return first;
  /* Outside the media folder (an external library): the path itself, which
   * exists when the server's folders are mounted at the same place here. */
  return g_strdup (path);
}

gboolean
lk_import_immich_available (void)
{
#ifdef LK_HAVE_LIBPQ
  return TRUE;
#else
  return FALSE;
#endif
}

#ifdef LK_HAVE_LIBPQ

#include <libpq-fe.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PGconn, PQfinish)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PGresult, PQclear)

/* Faces are read in batches through a cursor so a 100,000-face library
 * (200 MB of embedding text) never sits in memory at once, and progress can be
 * reported between batches. */
#define BATCH_FACES       2000
/* The first batches are smaller (doubling up to BATCH_FACES): the thumbnail
 * workers take a photo once its last face is read, so they start while the
 * server still sends the rest instead of after a whole batch. */
#define FIRST_BATCH_FACES 64

typedef struct
{
  const char *asset_face;
  const char *asset;
  const char *exif;
  const char *user;
  const char *asset_file; /* NULL: no previews recorded (thumbnails from originals) */
  gboolean person;        /* the person table exists */
  gboolean face_deleted_at;
  /* pgvector's send function for face_search.embedding's type, as SQL can
   * name it (regproc), or NULL: the embeddings are then read as text. */
  char *vector_send;
} Schema;

static void
schema_clear (Schema *schema)
{
  g_clear_pointer (&schema->vector_send, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Schema, schema_clear)

static char *
table_present (PGconn *conn, const char *name)
{
  const char *params[1] = { name };
  g_autoptr (PGresult) res = PQexecParams (conn, "SELECT to_regclass(quote_ident($1)) IS NOT NULL",
                                           1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus (res) != PGRES_TUPLES_OK)
    return NULL;
  return g_strdup (PQgetvalue (res, 0, 0));
}

static gboolean
has_table (PGconn *conn, const char *name)
{
  g_autofree char *v = table_present (conn, name);
  return g_strcmp0 (v, "t") == 0;
}

static gboolean
has_column (PGconn *conn, const char *table, const char *column)
{
  const char *params[2] = { table, column };
  g_autoptr (PGresult) res = PQexecParams (
      conn, "SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2",
      2, NULL, params, NULL, NULL, 0);
  return PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) > 0;
}

/* The embeddings come as pgvector's binary form (vector_send (), as bytea)
 * when the column's type has it: `embedding::text` makes the server format
 * every float as a shortest decimal and the client parse it back (strtod),
 * and the binary form is about a third smaller on the wire and cheaper on
 * both sides (bench-import-immich; docs/benchmarks.md). Immich's pgvecto.rs
 * databases (before VectorChord) have no vector_send for their type: text
 * for them. */
static char *
find_vector_send (PGconn *conn)
{
  g_autoptr (PGresult) res
      = PQexec (conn, "SELECT p.oid::regproc::text FROM pg_attribute a "
                      "JOIN pg_proc p ON p.proname = 'vector_send' AND p.pronargs = 1 "
                      "AND p.proargtypes[0] = a.atttypid AND p.prorettype = 'bytea'::regtype "
                      "WHERE a.attrelid = to_regclass('face_search') AND a.attname = 'embedding' "
                      "AND NOT a.attisdropped LIMIT 1");
  if (PQresultStatus (res) != PGRES_TUPLES_OK || PQntuples (res) != 1)
    return NULL;
  return g_strdup (PQgetvalue (res, 0, 0));
}

static gboolean
detect_schema (PGconn *conn, const char *where, Schema *schema, GError **error)
{
  if (has_table (conn, "asset_face"))
    *schema = (Schema){ "asset_face", "asset", "asset_exif", "user", "asset_file", FALSE, FALSE };
  else if (has_table (conn, "asset_faces"))
    *schema = (Schema){ "asset_faces", "assets", "exif", "users", "asset_files", FALSE, FALSE };
  else
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                   "%s is not an Immich database: it has neither an “asset_face” table "
                   "(Immich 1.133 and later) nor an “asset_faces” table (earlier)",
                   where);
      return FALSE;
    }
  const char *needed[] = { schema->asset, "face_search" };
  for (gsize k = 0; k < G_N_ELEMENTS (needed); k++)
    if (!has_table (conn, needed[k]))
      {
        g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                     "%s is not an Immich database: table “%s” is missing (it has “%s”)", where,
                     needed[k], schema->asset_face);
        return FALSE;
      }
  if (!has_table (conn, schema->exif))
    schema->exif = NULL;
  if (!has_table (conn, schema->user))
    schema->user = NULL;
  if (!has_table (conn, schema->asset_file))
    schema->asset_file = NULL;
  schema->person = has_table (conn, "person");
  schema->face_deleted_at = has_column (conn, schema->asset_face, "deletedAt");
  schema->vector_send = find_vector_send (conn);
  return TRUE;
}

static gboolean
parse_vector (const char *text, GArray *floats, guint *dim, const char *face, GError **error)
{
  const char *s = text;
  guint n = 0;

  if (*s != '[' && *s != '{')
    goto bad;
  s++;
  while (*s != ']' && *s != '}')
    {
      char *end = NULL;
      errno = 0;
      double v = g_ascii_strtod (s, &end);
      if (end == s || errno != 0 || !isfinite (v))
        goto bad;
      float f = (float) v;
      g_array_append_val (floats, f);
      n++;
      s = end;
      while (*s == ' ')
        s++;
      if (*s == ',')
        s++;
      else if (*s != ']' && *s != '}')
        goto bad;
    }
  return lk_import_check_dim ("Face", face, n, dim, error);

bad:
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
               "Face %s's embedding is not a vector of finite numbers", face);
  return FALSE;
}

/* pgvector's binary form (vector_send ()), as the bytea text libpq gives:
 * the dimension and a zero (16 bits each), then the floats, all
 * big-endian. */
static gboolean
parse_vector_binary (const char *text, GArray *floats, guint *dim, const char *face, GError **error)
{
  size_t length = 0;
  guint8 *bytes = PQunescapeBytea ((const unsigned char *) text, &length);
  if (bytes == NULL)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot read face %s's embedding: out of memory", face);
      return FALSE;
    }
  guint n = length >= 4 ? (guint) bytes[0] << 8 | bytes[1] : 0;
  gboolean ok = length >= 4 && bytes[2] == 0 && bytes[3] == 0 && length == 4 + 4 * (size_t) n;
  guint start = floats->len;
  for (guint k = 0; ok && k < n; k++)
    {
      const guint8 *b = bytes + 4 + 4 * k;
      guint32 bits = (guint32) b[0] << 24 | (guint32) b[1] << 16 | (guint32) b[2] << 8 | b[3];
      float f;
      memcpy (&f, &bits, sizeof f);
      ok = isfinite (f);
      g_array_append_val (floats, f);
    }
  PQfreemem (bytes);
  if (!ok)
    {
      g_array_set_size (floats, start);
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "Face %s's embedding is not a vector of finite numbers (pgvector's binary "
                   "form, %zu bytes)",
                   face, length);
      return FALSE;
    }
  return lk_import_check_dim ("Face", face, n, dim, error);
}

static gboolean
query_ok (PGresult *res, PGconn *conn, const char *what, GError **error)
{
  ExecStatusType status = PQresultStatus (res);
  if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
    return TRUE;
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA, "Reading %s failed: %s", what,
               PQerrorMessage (conn));
  return FALSE;
}

/* PQexec (), but waiting on the socket and the cancellable together: a
 * batch of faces from a busy or slow server took 7.6 s to arrive after the
 * window's Stop (2,000 rows at 220/s, PGlite under load). Cancelled, it
 * returns NULL with the error set and leaves the query running: the caller
 * fails and PQfinish () drops the connection without waiting for it. */
static PGresult *
exec_cancellable (PGconn *conn, const char *sql, GCancellable *cancellable, GError **error)
{
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (!PQsendQuery (conn, sql))
    return PQmakeEmptyPGresult (conn, PGRES_FATAL_ERROR); /* PQerrorMessage () says why */
  GPollFD cancel_fd = { -1, 0, 0 };
  gboolean can_cancel = g_cancellable_make_pollfd (cancellable, &cancel_fd);
  gboolean cancelled = FALSE;
  while (PQisBusy (conn))
    {
      struct pollfd fds[2] = { { PQsocket (conn), POLLIN, 0 }, { cancel_fd.fd, POLLIN, 0 } };
      int ready = poll (fds, can_cancel ? 2 : 1, -1);
      if ((cancelled = g_cancellable_set_error_if_cancelled (cancellable, error)))
        break;
      if (ready < 0 && errno == EINTR)
        continue;
      if (!PQconsumeInput (conn))
        break; /* the connection broke: PQgetResult () says how */
    }
  if (can_cancel)
    g_cancellable_release_fd (cancellable);
  if (cancelled)
    return NULL;
  PGresult *last = NULL, *next;
  while ((next = PQgetResult (conn)) != NULL)
    {
      PQclear (last);
      last = next;
    }
  return last != NULL ? last : PQmakeEmptyPGresult (conn, PGRES_FATAL_ERROR);
}

/* Which faces are read: those of assets not deleted (and faces not deleted,
 * where the schema has the column), of the owner given as $1 if any. */
static GString *
faces_filter (const Schema *s, const char *owner)
{
  GString *where = g_string_new ("a.\"deletedAt\" IS NULL");
  if (s->face_deleted_at)
    g_string_append (where, " AND f.\"deletedAt\" IS NULL");
  if (owner != NULL)
    {
      g_string_append (where, " AND (a.\"ownerId\"::text = $1");
      if (s->user != NULL)
        g_string_append_printf (
            where, " OR a.\"ownerId\" IN (SELECT id FROM \"%s\" WHERE email = $1)", s->user);
      g_string_append (where, ")");
    }
  return where;
}

/* The cursor lk_faces over the faces WHERE selects, ordered by asset, with
 * each face's photo, box, embedding, person and preview. */
static gboolean
declare_faces (PGconn *conn, const Schema *s, const char *where, const char *const *params,
               int n_params, GError **error)
{
  g_autofree char *exif_join
      = s->exif != NULL ? g_strdup_printf ("LEFT JOIN \"%s\" e ON e.\"assetId\" = a.id", s->exif)
                        : g_strdup ("");
  g_autofree char *preview
      = s->asset_file != NULL
            ? g_strdup_printf ("(SELECT p.path FROM \"%s\" p WHERE p.\"assetId\" = a.id "
                               "AND p.type = 'preview' ORDER BY p.path LIMIT 1)",
                               s->asset_file)
            : g_strdup ("NULL");
  g_autofree char *embedding = s->vector_send != NULL
                                   ? g_strdup_printf ("%s(fs.embedding)", s->vector_send)
                                   : g_strdup ("fs.embedding::text");
  g_autofree char *sql = g_strdup_printf (
      "DECLARE lk_faces NO SCROLL CURSOR FOR "
      "SELECT f.id::text, a.id::text, a.\"originalPath\", "
      "to_char(a.\"fileCreatedAt\" AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
      "f.\"imageWidth\", f.\"imageHeight\", f.\"boundingBoxX1\", f.\"boundingBoxY1\", "
      "f.\"boundingBoxX2\", f.\"boundingBoxY2\", %s, %s, %s, "
      "f.\"personId\"::text, %s, %s "
      "FROM \"%s\" f JOIN \"%s\" a ON a.id = f.\"assetId\" "
      "LEFT JOIN face_search fs ON fs.\"faceId\" = f.id %s "
      "WHERE %s ORDER BY a.id, f.id",
      s->exif != NULL ? "e.\"exifImageWidth\"" : "NULL",
      s->exif != NULL ? "e.\"exifImageHeight\"" : "NULL", embedding,
      s->exif != NULL ? "e.orientation::text" : "NULL", preview, s->asset_face, s->asset, exif_join,
      where);
  g_autoptr (PGresult) declare = PQexecParams (conn, sql, n_params, NULL, params, NULL, NULL, 0);
  return query_ok (declare, conn, "the faces", error);
}

/* Row R's asset as a new photo of SOURCE; returns its id. */
static const char *
add_photo_row (LkImportSource *source, const LkImportImmichOptions *options, PGresult *res, int r)
{
  LkImportPhoto *p = lk_import_source_add_photo (source);
  p->source_id = g_strdup (PQgetvalue (res, r, 1));
  p->source_path = g_strdup (PQgetvalue (res, r, 2));
  p->taken = PQgetisnull (res, r, 3) ? NULL : g_strdup (PQgetvalue (res, r, 3));
  gint64 w = PQgetisnull (res, r, 10) ? 0 : g_ascii_strtoll (PQgetvalue (res, r, 10), NULL, 10);
  gint64 h = PQgetisnull (res, r, 11) ? 0 : g_ascii_strtoll (PQgetvalue (res, r, 11), NULL, 10);
  /* exifImageWidth/Height are the sensor's; EXIF orientations 5–8 turn the
   * photo a quarter, and the preview (and the boxes) with it. */
  gint64 orientation
      = PQgetisnull (res, r, 14) ? 1 : g_ascii_strtoll (PQgetvalue (res, r, 14), NULL, 10);
  gboolean turned = orientation >= 5 && orientation <= 8;
  p->width = turned ? h : w;
  p->height = turned ? w : h;
  p->image = PQgetisnull (res, r, 15)
                 ? NULL
                 : lk_import_immich_map_media (options->media, PQgetvalue (res, r, 15));
  p->fallback = lk_import_immich_map_media (options->media, p->source_path);
  return p->source_id;
}

/* Row R of a fetch: its face into SOURCE (after its photo when the asset is
 * new: rows come ordered by asset, *LAST_ASSET the one before), its
 * embedding, and its person's list of faces. */
static gboolean
read_face_row (PGresult *res, int r, const Schema *s, const LkImportImmichOptions *options,
               LkImportSource *source, GHashTable *people, const char **last_asset, GError **error)
{
  const char *face_id = PQgetvalue (res, r, 0);
  const char *asset_id = PQgetvalue (res, r, 1);
  if (PQgetisnull (res, r, 12))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "Face %s (asset %s) has no embedding in face_search; run Immich's "
                   "face recognition job, then import again",
                   face_id, asset_id);
      return FALSE;
    }
  if (*last_asset == NULL || strcmp (*last_asset, asset_id) != 0)
    *last_asset = add_photo_row (source, options, res, r);
  double iw = g_ascii_strtod (PQgetvalue (res, r, 4), NULL);
  double ih = g_ascii_strtod (PQgetvalue (res, r, 5), NULL);
  double x1 = g_ascii_strtod (PQgetvalue (res, r, 6), NULL);
  double y1 = g_ascii_strtod (PQgetvalue (res, r, 7), NULL);
  double x2 = g_ascii_strtod (PQgetvalue (res, r, 8), NULL);
  double y2 = g_ascii_strtod (PQgetvalue (res, r, 9), NULL);
  if (!(iw > 0 && ih > 0 && x2 > x1 && y2 > y1))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "Face %s (asset %s) has an empty box (%g,%g)–(%g,%g) in a %g × %g "
                   "image",
                   face_id, asset_id, x1, y1, x2, y2, iw, ih);
      return FALSE;
    }
  /* The box is in the pixels of the preview the model ran on
   * (imageWidth × imageHeight): as fractions, it applies to the original
   * and to any preview of the same photo. */
  LkImportFace f = { g_strdup (face_id),
                     source->photos->len - 1,
                     { x1 / iw, y1 / ih, (x2 - x1) / iw, (y2 - y1) / ih },
                     -1 };
  g_array_append_val (source->faces, f);
  if (!(s->vector_send != NULL ? parse_vector_binary : parse_vector) (
          PQgetvalue (res, r, 12), source->floats, &source->dim, face_id, error))
    return FALSE;
  if (!PQgetisnull (res, r, 13))
    {
      LkImportPerson *person = g_hash_table_lookup (people, PQgetvalue (res, r, 13));
      if (person != NULL)
        g_ptr_array_add (person->faces, g_strdup (face_id));
    }
  return TRUE;
}

/* The faces: filtered, counted, a cursor declared over them and fetched in
 * growing batches, each row read into SOURCE, the cursor closed. */
static gboolean
read_faces (PGconn *conn, const Schema *s, const LkImportImmichOptions *options,
            LkImportSource *source, GHashTable *people, GCancellable *cancellable, GError **error)
{
  const char *owner = options->owner;
  g_autoptr (GString) where = faces_filter (s, owner);
  const char *params[1] = { owner };
  int n_params = owner != NULL ? 1 : 0;
  g_autofree char *count_sql = g_strdup_printf (
      "SELECT count(*) FROM \"%s\" f JOIN \"%s\" a ON a.id = f.\"assetId\" WHERE %s", s->asset_face,
      s->asset, where->str);
  g_autoptr (PGresult) count
      = PQexecParams (conn, count_sql, n_params, NULL, params, NULL, NULL, 0);
  if (!query_ok (count, conn, "the face count", error))
    return FALSE;
  gsize total = g_ascii_strtoull (PQgetvalue (count, 0, 0), NULL, 10);
  if (!declare_faces (conn, s, where->str, params, n_params, error))
    return FALSE;

  const char *last_asset = NULL;
  for (int batch = FIRST_BATCH_FACES;; batch = MIN (batch * 2, BATCH_FACES))
    {
      g_autofree char *fetch = g_strdup_printf ("FETCH %d FROM lk_faces", batch);
      g_autoptr (PGresult) res = exec_cancellable (conn, fetch, cancellable, error);
      if (res == NULL)
        return FALSE; /* cancelled */
      if (!query_ok (res, conn, "the faces", error))
        return FALSE;
      int rows = PQntuples (res);
      if (rows == 0)
        break;
      for (int r = 0; r < rows; r++)
        if (!read_face_row (res, r, s, options, source, people, &last_asset, error))
          return FALSE;
      if (options->progress != NULL)
        options->progress (LK_IMPORT_PHASE_READ, source->faces->len, total, options->progress_data);
    }
  g_autoptr (PGresult) close = PQexec (conn, "CLOSE lk_faces");
  return query_ok (close, conn, "the faces (CLOSE)", error);
}

/* The people the user named or hid in Immich: the ones Likeness takes as
 * the lowest layer of decisions. Unnamed, shown people are only Immich's
 * clustering, which Likeness redoes. */
static gboolean
read_people (PGconn *conn, const Schema *s, const char *owner, LkImportSource *source,
             GHashTable *people, GError **error)
{
  if (!s->person)
    return TRUE;
  g_autoptr (GString) sql = g_string_new ("SELECT p.id::text, p.name, p.\"isHidden\" FROM person p "
                                          "WHERE (p.name <> '' OR p.\"isHidden\")");
  if (owner != NULL)
    {
      g_string_append (sql, " AND (p.\"ownerId\"::text = $1");
      if (s->user != NULL)
        g_string_append_printf (
            sql, " OR p.\"ownerId\" IN (SELECT id FROM \"%s\" WHERE email = $1)", s->user);
      g_string_append (sql, ")");
    }
  g_string_append (sql, " ORDER BY p.id");
  const char *params[1] = { owner };
  g_autoptr (PGresult) res
      = PQexecParams (conn, sql->str, owner != NULL ? 1 : 0, NULL, params, NULL, NULL, 0);
  if (!query_ok (res, conn, "the people", error))
    return FALSE;
  for (int r = 0; r < PQntuples (res); r++)
    {
      LkImportPerson *person = lk_import_source_add_person (source, PQgetvalue (res, r, 0));
      g_free (person->name);
      person->name = g_strdup (PQgetvalue (res, r, 1));
      person->hidden = strcmp (PQgetvalue (res, r, 2), "t") == 0;
      g_hash_table_insert (people, person->source_id, person);
    }
  return TRUE;
}

/* The connect_timeout the connection string gives (seconds), or 0. */
static int
connect_timeout (PGconn *conn)
{
  PQconninfoOption *options = PQconninfo (conn);
  int seconds = 0;
  for (PQconninfoOption *o = options; o != NULL && o->keyword != NULL; o++)
    if (strcmp (o->keyword, "connect_timeout") == 0 && o->val != NULL)
      seconds = atoi (o->val);
  PQconninfoFree (options);
  return MAX (seconds, 0);
}

/* PQconnectdb () cannot be interrupted: a server that accepts the TCP
 * connection and never answers, or a host whose packets are dropped, held
 * the import (and the window's Cancel) for minutes — libpq's connect_timeout
 * defaults to none. The connection is made with PQconnectStart () and
 * PQconnectPoll () instead, waiting on the socket and the cancellable's fd
 * together; connect_timeout, which libpq leaves to PQconnectPoll's caller,
 * is kept here. NULL with `error` set: cancelled or timed out; NULL without:
 * out of memory; otherwise a connection whose PQstatus () says whether it is
 * made. */
static PGconn *
connect_cancellable (const char *conninfo, const char *where, GCancellable *cancellable,
                     GError **error)
{
  PGconn *conn = PQconnectStart (conninfo);
  GPollFD cancel_fd = { -1, 0, 0 };
  gboolean can_cancel = g_cancellable_make_pollfd (cancellable, &cancel_fd);
  PostgresPollingStatusType status = PGRES_POLLING_WRITING;
  int timeout = conn != NULL ? connect_timeout (conn) : 0;
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout * G_USEC_PER_SEC;

  while (conn != NULL && PQstatus (conn) != CONNECTION_BAD && status != PGRES_POLLING_OK
         && status != PGRES_POLLING_FAILED)
    {
      /* The socket may change between calls (another address of the host). */
      struct pollfd fds[2] = {
        { PQsocket (conn), status == PGRES_POLLING_READING ? POLLIN : POLLOUT, 0 },
        { cancel_fd.fd, POLLIN, 0 },
      };
      int wait_ms = -1;
      if (timeout > 0)
        wait_ms = (int) MAX ((deadline - g_get_monotonic_time ()) / 1000, 0);
      int ready = poll (fds, can_cancel ? 2 : 1, wait_ms);
      if (ready < 0 && errno != EINTR)
        {
          status = PQconnectPoll (conn); /* it says what is wrong with the socket */
          continue;
        }
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          g_clear_pointer (&conn, PQfinish);
          break;
        }
      if (ready == 0 && timeout > 0 && g_get_monotonic_time () >= deadline)
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                       "Cannot connect to the Immich database %s: no answer within %d s "
                       "(connect_timeout)",
                       where, timeout);
          g_clear_pointer (&conn, PQfinish);
          break;
        }
      if (ready > 0)
        status = PQconnectPoll (conn);
    }
  if (can_cancel)
    g_cancellable_release_fd (cancellable);
  return conn;
}

gboolean
lk_import_immich (const char *outdir, const LkImportImmichOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_autofree char *where = lk_import_redact_uri (options->database);

  if (!lk_import_check_outdir (outdir, "immich", error))
    return FALSE;

  g_autoptr (GError) local = NULL;
  g_autoptr (PGconn) conn = connect_cancellable (options->database, where, cancellable, &local);
  if (conn == NULL && local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (conn == NULL)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                   "Cannot connect to the Immich database %s: out of memory", where);
      return FALSE;
    }
  if (PQstatus (conn) != CONNECTION_OK)
    {
      g_autofree char *why = g_strstrip (g_strdup (PQerrorMessage (conn)));
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                   "Cannot connect to the Immich database %s: %s", where, why);
      return FALSE;
    }

  g_auto (Schema) schema = { 0 };
  if (!detect_schema (conn, where, &schema, error))
    return FALSE;

  LkImportSource source;
  lk_import_source_init (&source, "immich");
  /* The server's choice lives in its system config (the admin settings),
   * not in the tables read here: the caller says it, else Immich's default. */
  source.model = g_strdup (options->model != NULL ? options->model : "buffalo_l");
  g_autoptr (GHashTable) people = g_hash_table_new (g_str_hash, g_str_equal);
  LkImportSink sink = { options->progress, options->progress_data, options->summary };
  /* Thumbnails are cut on every core while the faces are read: each batch
   * of rows waits on the server, which the workers need not. */
  if (!lk_import_source_write_early (&source, outdir, &sink, cancellable, error))
    return lk_import_finish (outdir, &source, FALSE, &sink, cancellable, error, "%s", "");
  /* One read-only transaction: people and faces seen at the same moment. */
  g_autoptr (PGresult) begin = PQexec (conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  gboolean ok = query_ok (begin, conn, "the database (BEGIN)", error)
                && read_people (conn, &schema, options->owner, &source, people, error)
                && read_faces (conn, &schema, options, &source, people, cancellable, error);
  if (ok)
    {
      g_autoptr (PGresult) end = PQexec (conn, "COMMIT");
      ok = query_ok (end, conn, "the database (COMMIT)", error);
    }
  g_clear_pointer (&conn, PQfinish);

  return lk_import_finish (outdir, &source, ok, &sink, cancellable, error,
                           "The Immich database %s holds no faces%s", where,
                           options->owner != NULL ? " of that owner" : "");
}

#else /* !LK_HAVE_LIBPQ */

gboolean
lk_import_immich (const char *outdir, const LkImportImmichOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED,
               "This Likeness was built without the Immich importer (-Dimmich=disabled: libpq "
               "or gdk-pixbuf was not found)");
  return FALSE;
}

#endif
