/* make-immich.c — an Immich-shaped database and media folder from a sample
 * library, for measuring the importer at scale (the 20,000-face figure in
 * the README) and for looking at an imported library in the window.
 *
 *   likeness-cli make-sample S --faces 20000 --seed 7
 *   node tests/pglite/server.mjs 0        # prints 127.0.0.1:PORT
 *   make-immich S 'postgresql://postgres:x@127.0.0.1:PORT/postgres?sslmode=disable' MEDIA
 *   likeness-cli import immich OUT --database URL --media MEDIA
 *
 * The schema is test-import-immich.c's (the 2025 singular names), scaled
 * up: every photo of the sample becomes an asset with a 1440-pixel preview
 * JPEG under MEDIA/thumbs/ (a grey backdrop with fine noise, so a decode
 * costs what a photo's does, and each face's sample thumbnail pasted on its
 * box), every face an asset_face with its box in the preview's pixels and
 * its sample embedding in face_search, and the twelve largest identities
 * named people with all their faces assigned, as a user of Immich would
 * have them. Rows go in batches of multi-row INSERTs in one transaction.
 */
#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library/lk-library.h"
#include "lk-test-preview.h"

#define UPLOAD       "/usr/src/app/upload"
#define PREVIEW_SIDE 1440
#define BATCH_ROWS   200
#define NAMED_PEOPLE LK_TEST_PREVIEW_NAMED

static void
exec_or_die (PGconn *conn, const char *sql)
{
  PGresult *res = PQexec (conn, sql);
  if (PQresultStatus (res) != PGRES_COMMAND_OK && PQresultStatus (res) != PGRES_TUPLES_OK)
    {
      fprintf (stderr, "make-immich: %.200s…: %s", sql, PQerrorMessage (conn));
      exit (1);
    }
  PQclear (res);
}

static char *
uuid (guint kind, guint64 n)
{
  return g_strdup_printf ("%08x-0000-4000-8000-%012" G_GINT64_MODIFIER "x", kind, n);
}

/* Sends `sql` (a multi-row INSERT being built) when it holds a batch. */
static void
flush (PGconn *conn, GString *sql, guint *rows, gboolean force)
{
  if (*rows == 0 || (!force && *rows < BATCH_ROWS))
    return;
  exec_or_die (conn, sql->str);
  g_string_truncate (sql, 0);
  *rows = 0;
}

static void
add_row (PGconn *conn, GString *sql, guint *rows, const char *head, const char *row)
{
  g_string_append (sql, *rows == 0 ? head : ",");
  g_string_append (sql, row);
  (*rows)++;
  flush (conn, sql, rows, FALSE);
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: make-immich SAMPLE-LIBRARY LIBPQ-URL MEDIA-FOLDER\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  LkLibrary *library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "make-immich: %s\n", error->message);
      return 1;
    }
  const char *media = argv[3];
  PGconn *conn = PQconnectdb (argv[2]);
  if (PQstatus (conn) != CONNECTION_OK)
    {
      fprintf (stderr, "make-immich: %s", PQerrorMessage (conn));
      return 1;
    }

  exec_or_die (conn, "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; "
                     "CREATE EXTENSION vector");
  exec_or_die (
      conn,
      "CREATE TABLE \"user\" (id uuid PRIMARY KEY, email text NOT NULL, name text);"
      "CREATE TABLE asset (id uuid PRIMARY KEY, \"ownerId\" uuid NOT NULL REFERENCES \"user\"(id),"
      " \"originalPath\" text NOT NULL, \"originalFileName\" text NOT NULL,"
      " \"fileCreatedAt\" timestamptz NOT NULL, \"localDateTime\" timestamptz NOT NULL,"
      " \"deletedAt\" timestamptz);"
      "CREATE TABLE asset_exif (\"assetId\" uuid PRIMARY KEY REFERENCES asset(id),"
      " \"exifImageWidth\" integer, \"exifImageHeight\" integer, orientation text);"
      "CREATE TABLE asset_file (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),"
      " \"assetId\" uuid NOT NULL REFERENCES asset(id), type text NOT NULL, path text NOT NULL);"
      "CREATE TABLE person (id uuid PRIMARY KEY, \"ownerId\" uuid NOT NULL, name text NOT NULL "
      "DEFAULT '', \"isHidden\" boolean NOT NULL DEFAULT false, \"birthDate\" date,"
      " \"faceAssetId\" uuid);"
      "CREATE TABLE asset_face (id uuid PRIMARY KEY, \"assetId\" uuid NOT NULL REFERENCES "
      "asset(id), \"personId\" uuid REFERENCES person(id), \"imageWidth\" integer NOT NULL,"
      " \"imageHeight\" integer NOT NULL, \"boundingBoxX1\" integer NOT NULL,"
      " \"boundingBoxY1\" integer NOT NULL, \"boundingBoxX2\" integer NOT NULL,"
      " \"boundingBoxY2\" integer NOT NULL, \"sourceType\" text NOT NULL DEFAULT "
      "'machine-learning', \"deletedAt\" timestamptz);"
      "CREATE TABLE face_search (\"faceId\" uuid PRIMARY KEY REFERENCES asset_face(id) ON DELETE "
      "CASCADE, embedding vector(512) NOT NULL);"
      /* Immich's own indexes on the columns the importer joins by (its
       * schema's names): without the first, PGlite scanned asset_file once
       * for every face to find its preview. */
      "CREATE INDEX \"asset_file_assetId_idx\" ON asset_file (\"assetId\");"
      "CREATE INDEX \"asset_face_assetId_personId_idx\" ON asset_face (\"assetId\", "
      "\"personId\");"
      "INSERT INTO \"user\" VALUES ('00000000-0000-4000-8000-0000000000a1', "
      "'admin@example.org', 'Admin');");
  exec_or_die (conn, "BEGIN");

  /* The largest identities are the named people. */
  g_autoptr (GPtrArray) labels = lk_test_preview_largest_labels (library, NAMED_PEOPLE);
  g_autoptr (GHashTable) person_of = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GString) sql = g_string_new (NULL);
  guint rows = 0;
  for (guint k = 0; k < MIN (labels->len, NAMED_PEOPLE); k++)
    {
      g_autofree char *id = uuid (0x30000000, k + 1);
      g_autofree char *row = g_strdup_printf (
          "('%s', '00000000-0000-4000-8000-0000000000a1', '%s')", id, lk_test_preview_names[k]);
      add_row (conn, sql, &rows, "INSERT INTO person (id, \"ownerId\", name) VALUES ", row);
      g_hash_table_insert (person_of, g_ptr_array_index (labels, k), g_steal_pointer (&id));
    }
  flush (conn, sql, &rows, TRUE);

  g_autoptr (GHashTable) faces_of = lk_test_preview_faces_by_photo (library);

  gsize previews = 0, n_faces = 0;
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      GArray *list = g_hash_table_lookup (faces_of, GSIZE_TO_POINTER (photo->id + 1));
      if (list == NULL || photo->width <= 0 || photo->height <= 0)
        continue;
      g_autofree char *asset = uuid (0x10000000, photo->id);
      g_autofree char *base = g_path_get_basename (photo->path);
      g_autofree char *row = g_strdup_printf (
          "('%s', '00000000-0000-4000-8000-0000000000a1', '" UPLOAD "/library/admin/%s', '%s', "
          "'%s', '%s', NULL)",
          asset, photo->path, base, photo->taken ? photo->taken : "2020-01-01T00:00:00Z",
          photo->taken ? photo->taken : "2020-01-01T00:00:00Z");
      add_row (conn, sql, &rows, "INSERT INTO asset VALUES ", row);
      previews++;
    }
  flush (conn, sql, &rows, TRUE);

  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      GArray *list = g_hash_table_lookup (faces_of, GSIZE_TO_POINTER (photo->id + 1));
      if (list == NULL || photo->width <= 0 || photo->height <= 0)
        continue;
      g_autofree char *asset = uuid (0x10000000, photo->id);
      g_autofree char *exif
          = g_strdup_printf ("('%s', %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", '1')", asset,
                             photo->width, photo->height);
      add_row (conn, sql, &rows, "INSERT INTO asset_exif VALUES ", exif);
    }
  flush (conn, sql, &rows, TRUE);

  /* The previews, and the asset_file rows naming them. */
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      GArray *list = g_hash_table_lookup (faces_of, GSIZE_TO_POINTER (photo->id + 1));
      if (list == NULL || photo->width <= 0 || photo->height <= 0)
        continue;
      g_autofree char *asset = uuid (0x10000000, photo->id);
      int pw, ph;
      lk_test_preview_size (photo, PREVIEW_SIDE, &pw, &ph);
      g_autofree int (*boxes)[4] = g_malloc_n (list->len, sizeof *boxes);
      g_autoptr (GdkPixbuf) image = lk_test_preview_paint (library, photo, list, pw, ph, boxes);
      for (guint k = 0; k < list->len; k++)
        {
          gsize f = g_array_index (list, gsize, k);
          int x = boxes[k][0], y = boxes[k][1], w = boxes[k][2], h = boxes[k][3];
          g_autofree char *face_id = uuid (0x20000000, f + 1);
          const char *person = library->label[f] != NULL
                                   ? g_hash_table_lookup (person_of, library->label[f])
                                   : NULL;
          g_autofree char *person_sql
              = person != NULL ? g_strdup_printf ("'%s'", person) : g_strdup ("NULL");
          g_autofree char *row
              = g_strdup_printf ("('%s', '%s', %s, %d, %d, %d, %d, %d, %d)", face_id, asset,
                                 person_sql, pw, ph, x, y, x + w, y + h);
          add_row (conn, sql, &rows,
                   "INSERT INTO asset_face (id, \"assetId\", \"personId\", \"imageWidth\", "
                   "\"imageHeight\", \"boundingBoxX1\", \"boundingBoxY1\", \"boundingBoxX2\", "
                   "\"boundingBoxY2\") VALUES ",
                   row);
          n_faces++;
        }
      g_autofree char *dir
          = g_strdup_printf ("%s/thumbs/%s/%.2s/%.2s", media,
                             "00000000-0000-4000-8000-0000000000a1", asset + 6, asset + 8);
      g_mkdir_with_parents (dir, 0755);
      g_autofree char *file = g_strdup_printf ("%s/%s-preview.jpeg", dir, asset);
      if (!gdk_pixbuf_save (image, file, "jpeg", &error, "quality", "80", NULL))
        {
          fprintf (stderr, "make-immich: %s\n", error->message);
          return 1;
        }
      if (p % 500 == 0)
        fprintf (stderr, "\r%zu of %zu photos  ", p, library->n_photos);
    }
  flush (conn, sql, &rows, TRUE);
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      if (g_hash_table_lookup (faces_of, GSIZE_TO_POINTER (photo->id + 1)) == NULL)
        continue;
      g_autofree char *asset = uuid (0x10000000, photo->id);
      g_autofree char *row = g_strdup_printf (
          "('%s', 'preview', '" UPLOAD "/thumbs/00000000-0000-4000-8000-0000000000a1/%.2s/%.2s/"
          "%s-preview.jpeg')",
          asset, asset + 6, asset + 8, asset);
      add_row (conn, sql, &rows, "INSERT INTO asset_file (\"assetId\", type, path) VALUES ", row);
    }
  flush (conn, sql, &rows, TRUE);

  /* The embeddings, as pgvector's text form. */
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (gsize f = 0; f < library->count; f++)
    {
      g_autofree char *face_id = uuid (0x20000000, f + 1);
      g_autoptr (GString) row = g_string_new (NULL);
      g_string_printf (row, "('%s', '[", face_id);
      const float *v = lk_library_row (library, f);
      for (guint d = 0; d < library->dim; d++)
        {
          if (d > 0)
            g_string_append_c (row, ',');
          g_string_append (row, g_ascii_formatd (buf, sizeof buf, "%.9g", v[d]));
        }
      g_string_append (row, "]')");
      add_row (conn, sql, &rows, "INSERT INTO face_search VALUES ", row->str);
      if (f % 2000 == 0)
        fprintf (stderr, "\r%zu of %zu embeddings  ", f, library->count);
    }
  flush (conn, sql, &rows, TRUE);
  exec_or_die (conn, "COMMIT");
  fprintf (stderr, "\r%zu faces on %zu previews, %u named people\n", n_faces, previews,
           MIN (labels->len, NAMED_PEOPLE));
  PQfinish (conn);
  lk_library_free (library);
  return 0;
}
