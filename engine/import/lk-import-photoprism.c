/* lk-import-photoprism.c — see lk-import-photoprism.h
 *
 * One query reads every live face marker with its file, ordered by (file,
 * marker) so one index gives one library, byte for byte. The index is
 * opened read-only (SQLITE_OPEN_READONLY): a running PhotoPrism may keep
 * writing it, and the importer never changes it.
 */
#include "config.h"

#include "lk-import-photoprism.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lk-import-private.h"
#include "library/lk-library.h"

gboolean
lk_import_photoprism_available (void)
{
#ifdef LK_HAVE_SQLITE
  return TRUE;
#else
  return FALSE;
#endif
}

#ifdef LK_HAVE_SQLITE

#include <sqlite3.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* Progress is reported every this many faces. */
#define BATCH_FACES 2000

static gboolean
has_table (sqlite3 *db, const char *name)
{
  g_autoptr (sqlite3_stmt) st = NULL;
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1,
                          &st, NULL)
      != SQLITE_OK)
    return FALSE;
  sqlite3_bind_text (st, 1, name, -1, SQLITE_STATIC);
  return sqlite3_step (st) == SQLITE_ROW;
}

static gboolean
has_column (sqlite3 *db, const char *table, const char *column)
{
  g_autofree char *sql
      = g_strdup_printf ("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
  g_autoptr (sqlite3_stmt) st = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return FALSE;
  sqlite3_bind_text (st, 1, column, -1, SQLITE_STATIC);
  return sqlite3_step (st) == SQLITE_ROW;
}

static gboolean
prepare (sqlite3 *db, const char *sql, sqlite3_stmt **st, const char *what, GError **error)
{
  if (sqlite3_prepare_v2 (db, sql, -1, st, NULL) == SQLITE_OK)
    return TRUE;
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA, "Reading %s failed: %s", what,
               sqlite3_errmsg (db));
  return FALSE;
}

static const char *
text (sqlite3_stmt *st, int column)
{
  return (const char *) sqlite3_column_text (st, column);
}

/* The first vector of embeddings_json ("[[x,y,…],…]"), appended to floats. */
static gboolean
parse_embedding (const char *json, GArray *floats, guint *dim, const char *marker, GError **error)
{
  const char *s = json;
  guint n = 0;

  if (s == NULL)
    goto none;
  while (g_ascii_isspace (*s))
    s++;
  if (*s++ != '[')
    goto bad;
  while (g_ascii_isspace (*s))
    s++;
  if (*s == ']')
    goto none;
  if (*s++ != '[')
    goto bad;
  for (;;)
    {
      while (g_ascii_isspace (*s))
        s++;
      if (*s == ']' && n == 0)
        goto none;
      char *end = NULL;
      errno = 0;
      double v = g_ascii_strtod (s, &end);
      if (end == s || errno != 0 || !isfinite (v))
        goto bad;
      float f = (float) v;
      g_array_append_val (floats, f);
      n++;
      s = end;
      while (g_ascii_isspace (*s))
        s++;
      if (*s == ']')
        break;
      if (*s++ != ',')
        goto bad;
    }
  return lk_import_check_dim ("Marker", marker, n, dim, error);

none:
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
               "Face marker %s has no embedding (embeddings_json is empty); let PhotoPrism "
               "index its faces (photoprism faces index), then import again",
               marker);
  return FALSE;
bad:
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
               "Face marker %s's embeddings_json is not an array of arrays of finite numbers",
               marker);
  return FALSE;
}

typedef struct
{
  char *path;
  guint width; /* the box the name gives: the image fits inside it */
  guint height;
} Fit;

static void
fit_free (Fit *fit)
{
  g_free (fit->path);
  g_free (fit);
}

static int
by_area (gconstpointer a, gconstpointer b)
{
  const Fit *x = *(Fit *const *) a, *y = *(Fit *const *) b;
  guint64 ax = (guint64) x->width * x->height, ay = (guint64) y->width * y->height;
  return ax < ay ? -1 : ax > ay ? 1 : g_strcmp0 (x->path, y->path);
}

/* The cached "fit" thumbnails of the file with this hash, smallest first:
 * <storage>/cache/thumbnails/<h0>/<h1>/<h2>/<hash>_<w>x<h>_fit….jpg (w × h
 * the box PhotoPrism fitted the image into: 720x720, 1280x1024, 1920x1200,
 * 2048x2048, … up to its PHOTOPRISM_THUMB_SIZE). Fit thumbnails are the
 * whole image, turned upright, so the markers' relative boxes apply. */
static GPtrArray *
cached_fits (const char *storage, const char *hash)
{
  GPtrArray *fits = g_ptr_array_new_with_free_func ((GDestroyNotify) fit_free);
  if (storage == NULL || hash == NULL || strlen (hash) < 3 || strchr (hash, '/') != NULL)
    return fits;
  char h0[2] = { hash[0], 0 }, h1[2] = { hash[1], 0 }, h2[2] = { hash[2], 0 };
  g_autofree char *dir_path = g_build_filename (storage, "cache", "thumbnails", h0, h1, h2, NULL);
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  if (dir == NULL)
    return fits;
  g_autofree char *prefix = g_strconcat (hash, "_", NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (!g_str_has_prefix (name, prefix) || strstr (name, "_fit") == NULL)
        continue;
      unsigned w = 0, h = 0;
      if (sscanf (name + strlen (prefix), "%ux%u", &w, &h) != 2 || w == 0 || h == 0)
        continue;
      Fit *fit = g_new (Fit, 1);
      *fit = (Fit){ g_build_filename (dir_path, name, NULL), w, h };
      g_ptr_array_add (fits, fit);
    }
  g_ptr_array_sort (fits, by_area);
  return fits;
}

/* The file to cut photo `photo`'s faces (from `first_face` on: all read)
 * from when its original is not at hand: the smallest fit thumbnail that
 * still gives every face its 128 pixels, else the largest. On
 * bench-import-photoprism's instance with PhotoPrism's default sizes, the
 * largest (2048 px) took ~40 % more CPU to decode than make-immich's
 * 1440-px previews (perf); the thumbnails come out the same size from
 * either. The image's size in a box comes from the photo's own (PhotoPrism
 * never enlarges); unknown, the largest. */
static void
choose_fallback (LkImportSource *source, guint photo, guint first_face, GPtrArray *fits)
{
  LkImportPhoto *p = g_ptr_array_index (source->photos, photo);
  if (fits->len == 0)
    return;
  const Fit *chosen = g_ptr_array_index (fits, fits->len - 1);
#ifdef LK_HAVE_IMPORT_THUMBNAILS
  guint n = source->faces->len - first_face;
  if (p->width > 0 && p->height > 0 && n > 0)
    {
      g_autofree double (*rel)[4] = g_malloc_n (n, sizeof (double[4]));
      for (guint k = 0; k < n; k++)
        memcpy (rel[k], g_array_index (source->faces, LkImportFace, first_face + k).rel,
                sizeof rel[k]);
      for (guint f = 0; f + 1 < fits->len; f++)
        {
          const Fit *fit = g_ptr_array_index (fits, f);
          double s
              = MIN (1.0, MIN ((double) fit->width / p->width, (double) fit->height / p->height));
          int w = (int) floor (p->width * s), h = (int) floor (p->height * s);
          if (lk_import_size_serves_faces (w, h, (const double (*)[4]) rel, n))
            {
              chosen = fit;
              break;
            }
        }
    }
#endif
  g_free (p->fallback);
  p->fallback = g_strdup (chosen->path);
}

static gboolean
read_people (sqlite3 *db, LkImportSource *source, GHashTable *people, GError **error)
{
  g_autoptr (sqlite3_stmt) st = NULL;
  if (!has_table (db, "subjects"))
    return TRUE;
  gboolean deleted = has_column (db, "subjects", "deleted_at");
  g_autofree char *sql = g_strdup_printf (
      "SELECT subj_uid, subj_name, subj_hidden FROM subjects WHERE subj_type = 'person'%s "
      "ORDER BY subj_uid",
      deleted ? " AND deleted_at IS NULL" : "");
  if (!prepare (db, sql, &st, "the subjects", error))
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (text (st, 0) == NULL)
        continue;
      LkImportPerson *person = lk_import_source_add_person (source, text (st, 0));
      g_free (person->name);
      person->name = g_strdup (text (st, 1) != NULL ? text (st, 1) : "");
      person->hidden = sqlite3_column_int (st, 2) != 0;
      g_hash_table_insert (people, person->source_id, person);
    }
  /* Stopping early would import without the people the user named. */
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                   "Reading the subjects failed: %s", sqlite3_errmsg (db));
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_faces (sqlite3 *db, const LkImportPhotoprismOptions *options, LkImportSource *source,
            GHashTable *people, GCancellable *cancellable, GError **error)
{
  const char *where = "m.marker_type = 'face' AND COALESCE(m.marker_invalid, 0) = 0";
  g_autofree char *count_sql = g_strdup_printf (
      "SELECT count(*) FROM markers m JOIN files f ON f.file_uid = m.file_uid WHERE %s", where);
  g_autoptr (sqlite3_stmt) count = NULL;
  if (!prepare (db, count_sql, &count, "the face count", error))
    return FALSE;
  gsize total = sqlite3_step (count) == SQLITE_ROW ? (gsize) sqlite3_column_int64 (count, 0) : 0;

  /* The date a photo was taken, when the index has PhotoPrism's photos
   * table: files.photo_id names its row. */
  gboolean dates = has_table (db, "photos") && has_column (db, "photos", "taken_at");
  g_autofree char *sql = g_strdup_printf (
      "SELECT m.marker_uid, f.file_uid, f.file_name, f.file_root, f.file_hash, f.file_width, "
      "f.file_height, f.file_orientation, m.x, m.y, m.w, m.h, m.embeddings_json, m.subj_uid, %s "
      "FROM markers m JOIN files f ON f.file_uid = m.file_uid %s WHERE %s "
      "ORDER BY f.file_uid, m.marker_uid",
      dates ? "strftime('%Y-%m-%dT%H:%M:%SZ', p.taken_at)" : "NULL",
      dates ? "LEFT JOIN photos p ON p.id = f.photo_id" : "", where);
  g_autoptr (sqlite3_stmt) st = NULL;
  if (!prepare (db, sql, &st, "the face markers", error))
    return FALSE;

  g_autofree char *last_file = NULL;
  g_autoptr (GPtrArray) fits = NULL; /* the last photo's cached fit thumbnails */
  guint first_face = 0;              /* the last photo's first face */
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const char *marker = text (st, 0) != NULL ? text (st, 0) : "(no uid)";
      const char *file = text (st, 1);
      if (g_strcmp0 (last_file, file) != 0)
        {
          /* The last photo's faces are all read: its file is chosen before
           * lk_import_source_add_photo hands them to the workers. */
          if (fits != NULL)
            choose_fallback (source, source->photos->len - 1, first_face, fits);
          LkImportPhoto *p = lk_import_source_add_photo (source);
          p->source_id = g_strdup (file);
          p->source_path = g_strdup (text (st, 2));
          p->taken = g_strdup (text (st, 14));
          gint64 w = sqlite3_column_int64 (st, 5), h = sqlite3_column_int64 (st, 6);
          gint64 orientation = sqlite3_column_int64 (st, 7);
          /* As for Immich: orientations 5–8 turn the photo a quarter, and
           * the relative boxes are in the turned image. */
          gboolean turned = orientation >= 5 && orientation <= 8;
          p->width = MAX (turned ? h : w, 0);
          p->height = MAX (turned ? w : h, 0);
          /* Originals live under file_root '/'; sidecar files elsewhere. */
          if (options->originals != NULL && p->source_path != NULL
              && g_strcmp0 (text (st, 3), "sidecar") != 0)
            {
              p->image = g_build_filename (options->originals, p->source_path, NULL);
              /* The originals folder is this computer's: the library
               * names it (photo_folders) and each original in it, so the
               * face viewer shows them and export --xmp writes beside
               * them, where PhotoPrism reads sidecars. A path that is not
               * plainly inside it is left to source_path alone. */
              if (lk_library_relative_path_ok (p->source_path))
                {
                  if (source->photo_folders->len == 0)
                    g_ptr_array_add (source->photo_folders,
                                     g_canonicalize_filename (options->originals, NULL));
                  p->original = g_strdup (p->source_path);
                }
            }
          g_clear_pointer (&fits, g_ptr_array_unref);
          fits = cached_fits (options->storage, text (st, 4));
          first_face = source->faces->len;
          g_free (last_file);
          last_file = g_strdup (file);
        }
      double x = sqlite3_column_double (st, 8), y = sqlite3_column_double (st, 9);
      double w = sqlite3_column_double (st, 10), h = sqlite3_column_double (st, 11);
      if (!(w > 0 && h > 0 && x > -1 && y > -1 && x < 2 && y < 2 && w <= 2 && h <= 2))
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                       "Face marker %s (file %s) has the box x=%g y=%g w=%g h=%g; PhotoPrism's "
                       "boxes are fractions of the image",
                       marker, file, x, y, w, h);
          return FALSE;
        }
      /* PhotoPrism keeps no quality in [0, 1]: its q and score are
       * detector-specific scales, so every face is a gallery face. */
      LkImportFace f = { g_strdup (marker), source->photos->len - 1, { x, y, w, h }, -1 };
      g_array_append_val (source->faces, f);
      if (!parse_embedding (text (st, 12), source->floats, &source->dim, marker, error))
        return FALSE;
      LkImportPerson *person
          = text (st, 13) != NULL ? g_hash_table_lookup (people, text (st, 13)) : NULL;
      if (person != NULL)
        g_ptr_array_add (person->faces, g_strdup (marker));

      if (source->faces->len % BATCH_FACES == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return FALSE;
          if (options->progress != NULL)
            options->progress (LK_IMPORT_PHASE_READ, source->faces->len, total,
                               options->progress_data);
        }
    }
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                   "Reading the face markers failed: %s", sqlite3_errmsg (db));
      return FALSE;
    }
  if (fits != NULL)
    choose_fallback (source, source->photos->len - 1, first_face, fits);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (options->progress != NULL)
    options->progress (LK_IMPORT_PHASE_READ, source->faces->len, MAX (total, source->faces->len),
                       options->progress_data);
  return TRUE;
}

gboolean
lk_import_photoprism (const char *outdir, const LkImportPhotoprismOptions *options,
                      GCancellable *cancellable, GError **error)
{
  const char *path = options->database;

  if (strstr (path, "://") != NULL || g_str_has_prefix (path, "mysql:")
      || g_str_has_prefix (path, "mariadb:"))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED,
                   "Likeness reads PhotoPrism's SQLite index (storage/index.db) only; a MariaDB "
                   "database (%s) is not supported yet",
                   path);
      return FALSE;
    }
  if (!lk_import_check_outdir (outdir, "photoprism", error))
    return FALSE;

  sqlite3 *db = NULL;
  int rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                   "Cannot open the PhotoPrism index %s: %s", path,
                   db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
      sqlite3_close (db);
      return FALSE;
    }
  /* A database PhotoPrism is writing is busy now and then: wait a little
   * rather than fail. */
  sqlite3_busy_timeout (db, 5000);

  gboolean ok = TRUE;
  const char *needed[] = { "markers", "files" };
  for (gsize k = 0; ok && k < G_N_ELEMENTS (needed); k++)
    if (!has_table (db, needed[k]))
      {
        /* sqlite3 opens any file lazily: a file that is no database at all
         * fails its first query, which is this one. */
        g_autoptr (sqlite3_stmt) probe = NULL;
        int probe_rc = sqlite3_prepare_v2 (db, "SELECT 1 FROM sqlite_master", -1, &probe, NULL);
        if (probe_rc != SQLITE_OK)
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                       "Cannot read the PhotoPrism index %s: %s", path, sqlite3_errmsg (db));
        else
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA,
                       "%s is not a PhotoPrism index: table “%s” is missing", path, needed[k]);
        ok = FALSE;
      }

  LkImportSource source;
  lk_import_source_init (&source, "photoprism");
  /* PhotoPrism embeds faces with FaceNet (512-d); it has no other model. */
  source.model = g_strdup ("facenet");
  g_autoptr (GHashTable) people = g_hash_table_new (g_str_hash, g_str_equal);
  LkImportSink sink = { options->progress, options->progress_data, options->summary };
  /* Thumbnails are cut on every core while the markers are read. */
  ok = ok && lk_import_source_write_early (&source, outdir, &sink, cancellable, error);
  if (ok)
    {
      /* One read transaction: people and markers seen at the same moment. */
      sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
      ok = read_people (db, &source, people, error)
           && read_faces (db, options, &source, people, cancellable, error);
      sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
    }
  sqlite3_close (db);

  return lk_import_finish (outdir, &source, ok, &sink, cancellable, error,
                           "The PhotoPrism index %s holds no face markers", path);
}

#else /* !LK_HAVE_SQLITE */

gboolean
lk_import_photoprism (const char *outdir, const LkImportPhotoprismOptions *options,
                      GCancellable *cancellable, GError **error)
{
  g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED,
               "This Likeness was built without the PhotoPrism importer (-Dphotoprism=disabled: "
               "sqlite3 or gdk-pixbuf was not found)");
  return FALSE;
}

#endif
