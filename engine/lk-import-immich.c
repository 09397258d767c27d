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
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "lk-library.h"

G_DEFINE_QUARK (lk-import-error-quark, lk_import_error)

char *
lk_import_redact_uri (const char *uri)
{
  g_autoptr (GRegex) url = g_regex_new ("(://[^:/@]*:)[^@]*@", 0, 0, NULL);
  g_autoptr (GRegex) kv = g_regex_new ("(password\\s*=\\s*)('[^']*'|\\S+)", G_REGEX_CASELESS, 0, NULL);
  g_autofree char *a = g_regex_replace (url, uri, -1, 0, "\\1***@", 0, NULL);
  g_autofree char *b = g_regex_replace (kv, a, -1, 0, "\\1***", 0, NULL);
  g_autoptr (GRegex) query = g_regex_new ("([?&]password=)[^&]*", G_REGEX_CASELESS, 0, NULL);
  return g_regex_replace (query, b, -1, 0, "\\1***", 0, NULL);
}

#ifdef LK_HAVE_LIBPQ

#include <libpq-fe.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PGconn, PQfinish)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PGresult, PQclear)

/* Faces are read in batches through a cursor so a 100,000-face library
 * (200 MB of embedding text) never sits in memory at once, and progress can be
 * reported between batches. */
#define BATCH_FACES 2000

typedef struct
{
  const char *asset_face;
  const char *asset;
  const char *exif;
  const char *user;
  gboolean face_deleted_at;
} Schema;

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

static gboolean
detect_schema (PGconn *conn, const char *where, Schema *schema, GError **error)
{
  if (has_table (conn, "asset_face"))
    *schema = (Schema) { "asset_face", "asset", "asset_exif", "user", FALSE };
  else if (has_table (conn, "asset_faces"))
    *schema = (Schema) { "asset_faces", "assets", "exif", "users", FALSE };
  else
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                   "%s is not an Immich database: it has neither an “asset_face” table "
                   "(Immich 1.133 and later) nor an “asset_faces” table (earlier)", where);
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
  schema->face_deleted_at = has_column (conn, schema->asset_face, "deletedAt");
  return TRUE;
}

typedef struct
{
  char *id;         /* the asset's uuid */
  char *path;       /* originalPath, as the server sees it */
  char *taken;
  gint64 width, height;
} Photo;

static void
photo_clear (gpointer p)
{
  Photo *photo = p;
  g_free (photo->id);
  g_free (photo->path);
  g_free (photo->taken);
}

typedef struct
{
  char *id;
  guint photo;
  double box[4];
  double crop_px;
} Face;

static void
face_clear (gpointer p)
{
  g_free (((Face *)p)->id);
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
      float f = (float)v;
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
  if (n == 0 || n > LK_LIBRARY_MAX_DIM || (*dim != 0 && n != *dim))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "Face %s has a %u-float embedding where %u were expected", face, n,
                   *dim != 0 ? *dim : 512);
      return FALSE;
    }
  *dim = n;
  return TRUE;

bad:
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
               "Face %s's embedding is not a vector of finite numbers", face);
  return FALSE;
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

static gboolean
check_outdir (const char *outdir, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) dir = g_dir_open (outdir, 0, &local);

  if (dir == NULL)
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot import into %s: %s",
                   outdir, local->message);
      return FALSE;
    }
  if (g_dir_read_name (dir) == NULL)
    return TRUE;
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
               "%s is not empty; import into a new or empty folder", outdir);
  return FALSE;
}

static gboolean
write_library (const char *folder, GPtrArray *photos, GArray *faces, GArray *floats, guint dim,
               GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "likeness-library");
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, LK_LIBRARY_VERSION);
  json_builder_set_member_name (b, "source");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "kind");
  json_builder_add_string_value (b, "immich");
  /* Immich's default recognition model; the server's choice lives in its
   * config file, not in the database, so it cannot be read from here. */
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, "buffalo_l");
  json_builder_end_object (b);
  json_builder_set_member_name (b, "embeddings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, "embeddings.f32");
  json_builder_set_member_name (b, "dim");
  json_builder_add_int_value (b, dim);
  json_builder_set_member_name (b, "count");
  json_builder_add_int_value (b, faces->len);
  /* Immich stores ArcFace's unit vectors, but the text round trip through
   * float32 may leave a norm a hair off: the loader normalises. */
  json_builder_set_member_name (b, "normalized");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "photos");
  json_builder_begin_array (b);
  for (guint k = 0; k < photos->len; k++)
    {
      const Photo *p = g_ptr_array_index (photos, k);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_int_value (b, k);
      json_builder_set_member_name (b, "source_id");
      json_builder_add_string_value (b, p->id);
      json_builder_set_member_name (b, "source_path");
      json_builder_add_string_value (b, p->path);
      if (p->width > 0 && p->height > 0)
        {
          json_builder_set_member_name (b, "width");
          json_builder_add_int_value (b, p->width);
          json_builder_set_member_name (b, "height");
          json_builder_add_int_value (b, p->height);
        }
      if (p->taken != NULL)
        {
          json_builder_set_member_name (b, "taken");
          json_builder_add_string_value (b, p->taken);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "faces");
  json_builder_begin_array (b);
  for (guint k = 0; k < faces->len; k++)
    {
      const Face *f = &g_array_index (faces, Face, k);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, f->id);
      json_builder_set_member_name (b, "photo");
      json_builder_add_int_value (b, f->photo);
      json_builder_set_member_name (b, "crop_px");
      json_builder_add_double_value (b, f->crop_px);
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      for (int c = 0; c < 4; c++)
        json_builder_add_double_value (b, f->box[c]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  gsize length = 0;
  g_autofree char *text = json_generator_to_data (gen, &length);

  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (GError) local = NULL;
  gsize bytes = (gsize)floats->len * sizeof (float);
#if G_BYTE_ORDER == G_BIG_ENDIAN
  for (guint k = 0; k < floats->len; k++)
    {
      guint32 *u = (guint32 *)&g_array_index (floats, float, k);
      *u = GUINT32_TO_LE (*u);
    }
#endif
  if (!g_file_set_contents_full (emb, floats->data, (gssize)bytes, G_FILE_SET_CONTENTS_CONSISTENT,
                                 0644, &local)
      || !g_file_set_contents_full (manifest, text, (gssize)length,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot write the library: %s",
                   local->message);
      return FALSE;
    }
  return TRUE;
}

static void
remove_folder (const char *folder)
{
  const char *names[] = { "library.json", "embeddings.f32" };
  for (gsize k = 0; k < G_N_ELEMENTS (names); k++)
    {
      g_autofree char *path = g_build_filename (folder, names[k], NULL);
      g_remove (path);
    }
  g_rmdir (folder);
}

static gboolean
read_faces (PGconn *conn, const Schema *s, const char *owner, GPtrArray *photos, GArray *faces,
            GArray *floats, guint *dim, const LkImportImmichOptions *options,
            GCancellable *cancellable, GError **error)
{
  g_autoptr (GString) sql = g_string_new (NULL);
  g_autoptr (GString) where = g_string_new ("a.\"deletedAt\" IS NULL");

  if (s->face_deleted_at)
    g_string_append (where, " AND f.\"deletedAt\" IS NULL");
  if (owner != NULL)
    {
      g_string_append (where, " AND (a.\"ownerId\"::text = $1");
      if (s->user != NULL)
        g_string_append_printf (where, " OR a.\"ownerId\" IN (SELECT id FROM \"%s\" WHERE email = $1)",
                                s->user);
      g_string_append (where, ")");
    }

  const char *params[1] = { owner };
  int n_params = owner != NULL ? 1 : 0;
  g_autofree char *count_sql = g_strdup_printf (
      "SELECT count(*) FROM \"%s\" f JOIN \"%s\" a ON a.id = f.\"assetId\" WHERE %s",
      s->asset_face, s->asset, where->str);
  g_autoptr (PGresult) count = PQexecParams (conn, count_sql, n_params, NULL, params, NULL, NULL, 0);
  if (!query_ok (count, conn, "the face count", error))
    return FALSE;
  gsize total = g_ascii_strtoull (PQgetvalue (count, 0, 0), NULL, 10);

  g_autofree char *exif_join = s->exif != NULL
      ? g_strdup_printf ("LEFT JOIN \"%s\" e ON e.\"assetId\" = a.id", s->exif)
      : g_strdup ("");
  g_string_printf (sql,
                   "DECLARE lk_faces NO SCROLL CURSOR FOR "
                   "SELECT f.id::text, a.id::text, a.\"originalPath\", "
                   "to_char(a.\"fileCreatedAt\" AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
                   "f.\"imageWidth\", f.\"imageHeight\", f.\"boundingBoxX1\", f.\"boundingBoxY1\", "
                   "f.\"boundingBoxX2\", f.\"boundingBoxY2\", %s, %s, fs.embedding::text "
                   "FROM \"%s\" f JOIN \"%s\" a ON a.id = f.\"assetId\" "
                   "LEFT JOIN face_search fs ON fs.\"faceId\" = f.id %s "
                   "WHERE %s ORDER BY a.id, f.id",
                   s->exif != NULL ? "e.\"exifImageWidth\"" : "NULL",
                   s->exif != NULL ? "e.\"exifImageHeight\"" : "NULL", s->asset_face, s->asset,
                   exif_join, where->str);

  g_autoptr (PGresult) begin = PQexec (conn, "BEGIN READ ONLY");
  if (!query_ok (begin, conn, "the database (BEGIN)", error))
    return FALSE;
  g_autoptr (PGresult) declare = PQexecParams (conn, sql->str, n_params, NULL, params, NULL, NULL, 0);
  if (!query_ok (declare, conn, "the faces", error))
    return FALSE;

  g_autoptr (GHashTable) photo_index = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *fetch = g_strdup_printf ("FETCH %d FROM lk_faces", BATCH_FACES);
  for (;;)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      g_autoptr (PGresult) res = PQexec (conn, fetch);
      if (!query_ok (res, conn, "the faces", error))
        return FALSE;
      int rows = PQntuples (res);
      if (rows == 0)
        break;
      for (int r = 0; r < rows; r++)
        {
          const char *face_id = PQgetvalue (res, r, 0);
          const char *asset_id = PQgetvalue (res, r, 1);
          if (PQgetisnull (res, r, 12))
            {
              g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                           "Face %s (asset %s) has no embedding in face_search; run Immich's "
                           "face recognition job, then import again", face_id, asset_id);
              return FALSE;
            }
          gpointer found;
          guint photo;
          if (g_hash_table_lookup_extended (photo_index, asset_id, NULL, &found))
            photo = GPOINTER_TO_UINT (found);
          else
            {
              Photo *p = g_new0 (Photo, 1);
              p->id = g_strdup (asset_id);
              p->path = g_strdup (PQgetvalue (res, r, 2));
              p->taken = PQgetisnull (res, r, 3) ? NULL : g_strdup (PQgetvalue (res, r, 3));
              p->width = PQgetisnull (res, r, 10) ? 0 : g_ascii_strtoll (PQgetvalue (res, r, 10), NULL, 10);
              p->height = PQgetisnull (res, r, 11) ? 0 : g_ascii_strtoll (PQgetvalue (res, r, 11), NULL, 10);
              photo = photos->len;
              g_ptr_array_add (photos, p);
              g_hash_table_insert (photo_index, p->id, GUINT_TO_POINTER (photo));
            }
          const Photo *p = g_ptr_array_index (photos, photo);
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
                           "image", face_id, asset_id, x1, y1, x2, y2, iw, ih);
              return FALSE;
            }
          /* The box is in the pixels of the preview the model ran on
           * (imageWidth × imageHeight); the library wants the original's. */
          double sx = p->width > 0 ? (double)p->width / iw : 1.0;
          double sy = p->height > 0 ? (double)p->height / ih : 1.0;
          Face f = { g_strdup (face_id), photo,
                     { x1 * sx, y1 * sy, (x2 - x1) * sx, (y2 - y1) * sy }, 0 };
          f.crop_px = MAX (f.box[2], f.box[3]);
          g_array_append_val (faces, f);
          if (!parse_vector (PQgetvalue (res, r, 12), floats, dim, face_id, error))
            return FALSE;
        }
      if (options->progress != NULL)
        options->progress (faces->len, total, options->progress_data);
    }
  g_autoptr (PGresult) end = PQexec (conn, "COMMIT");
  return query_ok (end, conn, "the database (COMMIT)", error);
}

gboolean
lk_import_immich (const char *outdir, const LkImportImmichOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_autofree char *where = lk_import_redact_uri (options->database);

  if (!check_outdir (outdir, error))
    return FALSE;

  g_autoptr (PGconn) conn = PQconnectdb (options->database);
  if (PQstatus (conn) != CONNECTION_OK)
    {
      g_autofree char *why = g_strstrip (g_strdup (PQerrorMessage (conn)));
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                   "Cannot connect to the Immich database %s: %s", where, why);
      return FALSE;
    }

  Schema schema;
  if (!detect_schema (conn, where, &schema, error))
    return FALSE;

  g_autoptr (GPtrArray) photos = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) faces = g_array_new (FALSE, FALSE, sizeof (Face));
  g_autoptr (GArray) floats = g_array_new (FALSE, FALSE, sizeof (float));
  guint dim = 0;
  gboolean ok = read_faces (conn, &schema, options->owner, photos, faces, floats, &dim, options,
                            cancellable, error);

  if (ok && faces->len == 0)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "The Immich database %s holds no faces%s", where,
                   options->owner != NULL ? " of that owner" : "");
      ok = FALSE;
    }

  /* Written beside, renamed at the end: an interrupted import leaves the
   * temporary folder (removed here on every error) and never a library
   * that names files it does not have. */
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autofree char *base = g_path_get_basename (outdir);
  g_autofree char *template = g_strdup_printf ("%s/.%s.importing-XXXXXX", parent, base);
  if (ok)
    {
      if (g_mkdtemp (template) == NULL)
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot create a folder in %s: %s",
                       parent, g_strerror (saved));
          ok = FALSE;
        }
      else
        {
          ok = write_library (template, photos, faces, floats, dim, error)
               && !g_cancellable_set_error_if_cancelled (cancellable, error);
          if (ok)
            {
              g_rmdir (outdir);   /* an empty OUTDIR: rename() needs it gone */
              if (g_rename (template, outdir) != 0)
                {
                  int saved = errno;
                  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                               "Cannot move the imported library to %s: %s", outdir,
                               g_strerror (saved));
                  ok = FALSE;
                }
            }
          if (!ok)
            remove_folder (template);
        }
    }

  for (guint k = 0; k < photos->len; k++)
    photo_clear (g_ptr_array_index (photos, k));
  for (guint k = 0; k < faces->len; k++)
    face_clear (&g_array_index (faces, Face, k));
  return ok;
}

#else /* !LK_HAVE_LIBPQ */

gboolean
lk_import_immich (const char *outdir, const LkImportImmichOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED,
               "This Likeness was built without the Immich importer (-Dimmich=disabled: libpq "
               "was not found)");
  return FALSE;
}

#endif
