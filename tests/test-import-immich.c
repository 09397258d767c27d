/* test-import-immich.c — lk_import_immich against a real PostgreSQL with
 * pgvector: PGlite (tests/pglite/server.mjs), served on 127.0.0.1 for this
 * process only and stopped when it exits (its stdin closes). The test writes
 * an Immich-shaped schema, in both namings, fills it, imports and reads the
 * library back through lk_library_load.
 *
 * The server needs node and `npm ci --prefix tests/pglite` (.ci/check runs
 * it); without them the tests skip and say so.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <libpq-fe.h>
#include <math.h>
#include <string.h>

#include "export/lk-export-xmp.h"
#include <json-glib/json-glib.h>
#include "people/lk-calibrate.h"
#include "import/lk-import-immich.h"
#include "library/lk-library.h"
#include "library/lk-thumbnail.h"
#include "lk-test-util.h"

#define DIM 512

static char *server_url; /* NULL: no server, tests skip */
static char *skip_reason;

static GSubprocess *
start_server (void)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "pglite", "server.mjs", NULL);
  g_autofree char *modules = g_test_build_filename (G_TEST_DIST, "pglite", "node_modules",
                                                    "@electric-sql", "pglite-socket", NULL);
  g_autofree char *node = g_find_program_in_path ("node");

  if (node == NULL || !g_file_test (modules, G_FILE_TEST_IS_DIR))
    {
      skip_reason = g_strdup ("no PostgreSQL to test against: needs node and "
                              "`npm ci --prefix tests/pglite`");
      return NULL;
    }
  g_autoptr (GError) error = NULL;
  GSubprocess *server
      = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          node, script, "0", NULL);
  g_assert_no_error (error);
  /* Port 0: the system picks a free one, so tests run in parallel (by other
   * builds on the same machine) never race for a port. The server prints
   * host:port once it listens (a few seconds: PostgreSQL starts inside
   * WebAssembly). */
  g_autoptr (GDataInputStream) out
      = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server));
  g_autofree char *line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);
  server_url = g_strdup_printf ("postgresql://postgres:secret@%s/postgres?sslmode=disable", line);
  return server;
}

static PGconn *
connect_or_die (void)
{
  PGconn *conn = PQconnectdb (server_url);
  g_assert_cmpint (PQstatus (conn), ==, CONNECTION_OK);
  return conn;
}

static void
exec_or_die (PGconn *conn, const char *sql)
{
  PGresult *res = PQexec (conn, sql);
  if (PQresultStatus (res) != PGRES_COMMAND_OK && PQresultStatus (res) != PGRES_TUPLES_OK)
    g_error ("%s: %s", sql, PQerrorMessage (conn));
  PQclear (res);
}

/* Face k's embedding: a deterministic unit vector. */
static void
embedding (guint k, float *v)
{
  double norm = 0;
  for (guint d = 0; d < DIM; d++)
    {
      v[d] = (float) sin (0.37 * (k + 1) * (d + 1) + k);
      norm += (double) v[d] * v[d];
    }
  for (guint d = 0; d < DIM; d++)
    v[d] = (float) (v[d] / sqrt (norm));
}

static char *
vector_text (guint k)
{
  float v[DIM];
  GString *s = g_string_new ("[");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  embedding (k, v);
  for (guint d = 0; d < DIM; d++)
    {
      if (d > 0)
        g_string_append_c (s, ',');
      g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.9g", v[d]));
    }
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* What a test's setup makes: the user data of its g_test_add. */
typedef struct
{
  gboolean server;   /* the test needs PGlite: it skips without */
  gboolean database; /* the Immich tables, filled (write_immich) */
  gboolean plural;   /* the pre-2025 names */
  gboolean face_without_embedding;
  /* pgvector's vector_send () renamed: the importer then reads the
   * embeddings as text (as from Immich's pgvecto.rs databases), not in
   * pgvector's binary form. */
  gboolean text_embeddings;
  gboolean media; /* a folder with the previews and originals */
} Setup;

/* Every test's own: an OUTDIR (not made) in a temporary folder, and the
 * media folder when its Setup asks for one; nothing when it skipped. */
typedef struct
{
  gboolean skipped; /* no server: the setup skipped the test */
  char *outdir;
  char *media;
} Immich;

#define UPLOAD "/usr/src/app/upload"

/* A blue image with a red rectangle on every box. */
static void
write_jpeg (const char *media, const char *relative, int width, int height, const int (*boxes)[4],
            guint n_boxes)
{
  g_autofree char *path = g_build_filename (media, relative, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  gdk_pixbuf_fill (image, 0x0000ffff);
  for (guint k = 0; k < n_boxes; k++)
    {
      g_autoptr (GdkPixbuf) box = gdk_pixbuf_new_subpixbuf (
          image, boxes[k][0], boxes[k][1], boxes[k][2] - boxes[k][0], boxes[k][3] - boxes[k][1]);
      gdk_pixbuf_fill (box, 0xff0000ff);
    }
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_pixbuf_save (image, path, "jpeg", &error, "quality", "95", NULL));
  g_assert_no_error (error);
}

/* Four live assets and one deleted one; six live faces plus one deleted.
 * Asset 1: a 4000 × 3000 original whose faces were found on its
 * 1440 × 1080 preview (on disk). Asset 2: no preview recorded, its
 * original on disk at half the size the model saw, EXIF orientation 6 (a
 * quarter turn: the photo is 1080 wide). Asset 3: its preview is not a JPEG.
 * Asset 5: its preview and original are both missing. People: Ada (faces
 * 3 and 8), Eve (faces 1 and 2, one photo: one is refused), an unnamed
 * hidden person (face 4), an unnamed shown one (face 5: Immich's own
 * clustering, not imported) and Gone (only the deleted face 7). */
static void
write_immich (const Setup *fx, const char *media)
{
  PGconn *conn = connect_or_die ();
  const char *asset = fx->plural ? "assets" : "asset";
  const char *face = fx->plural ? "asset_faces" : "asset_face";
  const char *exif = fx->plural ? "exif" : "asset_exif";
  const char *user = fx->plural ? "users" : "user";
  const char *file = fx->plural ? "asset_files" : "asset_file";

  exec_or_die (conn, "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; "
                     "CREATE EXTENSION vector");
  g_autofree char *ddl = g_strdup_printf (
      "CREATE TABLE \"%s\" (id uuid PRIMARY KEY, email text NOT NULL, name text);"
      "CREATE TABLE \"%s\" (id uuid PRIMARY KEY, \"ownerId\" uuid NOT NULL REFERENCES \"%s\"(id),"
      " \"originalPath\" text NOT NULL, \"originalFileName\" text NOT NULL,"
      " \"fileCreatedAt\" timestamptz NOT NULL, \"localDateTime\" timestamptz NOT NULL,"
      " \"deletedAt\" timestamptz);"
      "CREATE TABLE \"%s\" (\"assetId\" uuid PRIMARY KEY REFERENCES \"%s\"(id),"
      " \"exifImageWidth\" integer, \"exifImageHeight\" integer, orientation text);"
      "CREATE TABLE \"%s\" (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),"
      " \"assetId\" uuid NOT NULL REFERENCES \"%s\"(id), type text NOT NULL, path text NOT NULL);"
      "CREATE TABLE person (id uuid PRIMARY KEY, \"ownerId\" uuid NOT NULL, name text NOT NULL "
      "DEFAULT '',"
      " \"isHidden\" boolean NOT NULL DEFAULT false, \"birthDate\" date, \"faceAssetId\" uuid);"
      "CREATE TABLE \"%s\" (id uuid PRIMARY KEY, \"assetId\" uuid NOT NULL REFERENCES \"%s\"(id),"
      " \"personId\" uuid REFERENCES person(id), \"imageWidth\" integer NOT NULL DEFAULT 0,"
      " \"imageHeight\" integer NOT NULL DEFAULT 0, \"boundingBoxX1\" integer NOT NULL DEFAULT 0,"
      " \"boundingBoxY1\" integer NOT NULL DEFAULT 0, \"boundingBoxX2\" integer NOT NULL DEFAULT 0,"
      " \"boundingBoxY2\" integer NOT NULL DEFAULT 0, \"sourceType\" text NOT NULL DEFAULT "
      "'machine-learning'%s);"
      "CREATE TABLE face_search (\"faceId\" uuid PRIMARY KEY REFERENCES \"%s\"(id) ON DELETE "
      "CASCADE,"
      " embedding vector(512) NOT NULL);",
      user, asset, user, exif, asset, file, asset, face, asset,
      fx->plural ? "" : ", \"deletedAt\" timestamptz", face);
  exec_or_die (conn, ddl);
  g_autofree char *rows = g_strdup_printf (
      "INSERT INTO \"%s\" VALUES ('00000000-0000-0000-0000-0000000000a1', 'ada@example.org', "
      "'Ada'),"
      " ('00000000-0000-0000-0000-0000000000a2', 'bob@example.org', 'Bob');"
      "INSERT INTO \"%s\" VALUES"
      " ('10000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-0000000000a1',"
      "  '" UPLOAD
      "/library/a/1.jpg', '1.jpg', '2019-06-01 10:00:00+00', '2019-06-01 12:00:00+00', NULL),"
      " ('10000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-0000000000a1',"
      "  '" UPLOAD
      "/library/a/2.jpg', '2.jpg', '2020-01-02 03:04:05+00', '2020-01-02 03:04:05+00', NULL),"
      " ('10000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-0000000000a2',"
      "  '" UPLOAD
      "/library/b/3.jpg', '3.jpg', '2021-01-01 00:00:00+00', '2021-01-01 00:00:00+00', NULL),"
      " ('10000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-0000000000a1',"
      "  '" UPLOAD
      "/library/a/4.jpg', '4.jpg', '2021-01-01 00:00:00+00', '2021-01-01 00:00:00+00', now()),"
      " ('10000000-0000-0000-0000-000000000005', '00000000-0000-0000-0000-0000000000a1',"
      "  '" UPLOAD
      "/library/a/5.jpg', '5.jpg', '2022-01-01 00:00:00+00', '2022-01-01 00:00:00+00', NULL);"
      "INSERT INTO \"%s\" VALUES ('10000000-0000-0000-0000-000000000001', 4000, 3000, '1'),"
      " ('10000000-0000-0000-0000-000000000002', 1440, 1080, '6');"
      "INSERT INTO \"%s\" (\"assetId\", type, path) VALUES"
      " ('10000000-0000-0000-0000-000000000001', 'thumbnail', '" UPLOAD
      "/thumbs/a1/10/00/1-thumbnail.webp'),"
      " ('10000000-0000-0000-0000-000000000001', 'preview', '" UPLOAD
      "/thumbs/a1/10/00/1-preview.jpeg'),"
      " ('10000000-0000-0000-0000-000000000003', 'preview', '" UPLOAD
      "/thumbs/a2/10/00/3-preview.jpeg'),"
      " ('10000000-0000-0000-0000-000000000005', 'preview', '" UPLOAD
      "/thumbs/a1/10/00/5-preview.jpeg');"
      "INSERT INTO person (id, \"ownerId\", name, \"isHidden\") VALUES"
      " ('30000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-0000000000a1', 'Ada', "
      "false),"
      " ('30000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-0000000000a1', 'Eve', "
      "false),"
      " ('30000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-0000000000a2', '', true),"
      " ('30000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-0000000000a2', '', "
      "false),"
      " ('30000000-0000-0000-0000-000000000005', '00000000-0000-0000-0000-0000000000a1', 'Gone', "
      "false);",
      user, asset, exif, file);
  exec_or_die (conn, rows);

  static const struct
  {
    const char *id;
    int asset;
    int box[4];
    gboolean deleted;
    int person; /* 0: none */
  } faces[] = {
    { "20000000-0000-0000-0000-000000000001", 1, { 144, 108, 288, 252 }, FALSE, 2 },
    { "20000000-0000-0000-0000-000000000002", 1, { 720, 540, 864, 756 }, FALSE, 2 },
    { "20000000-0000-0000-0000-000000000003", 2, { 10, 20, 110, 140 }, FALSE, 1 },
    { "20000000-0000-0000-0000-000000000004", 3, { 0, 0, 100, 100 }, FALSE, 3 },
    { "20000000-0000-0000-0000-000000000005", 3, { 200, 200, 300, 300 }, FALSE, 4 },
    { "20000000-0000-0000-0000-000000000006", 4, { 0, 0, 50, 50 }, FALSE, 0 },
    { "20000000-0000-0000-0000-000000000007", 2, { 0, 0, 50, 50 }, TRUE, 5 },
    { "20000000-0000-0000-0000-000000000008", 5, { 400, 300, 500, 420 }, FALSE, 1 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (faces); k++)
    {
      if (faces[k].deleted && fx->plural)
        continue;
      g_autofree char *person
          = faces[k].person > 0
                ? g_strdup_printf ("'30000000-0000-0000-0000-00000000000%d'", faces[k].person)
                : g_strdup ("NULL");
      g_autofree char *sql = g_strdup_printf (
          "INSERT INTO \"%s\" (id, \"assetId\", \"personId\", \"imageWidth\", \"imageHeight\","
          " \"boundingBoxX1\", \"boundingBoxY1\", \"boundingBoxX2\", \"boundingBoxY2\"%s)"
          " VALUES ('%s', '10000000-0000-0000-0000-00000000000%d', %s, 1440, 1080, %d, %d, %d, "
          "%d%s)",
          face, fx->plural ? "" : ", \"deletedAt\"", faces[k].id, faces[k].asset, person,
          faces[k].box[0], faces[k].box[1], faces[k].box[2], faces[k].box[3],
          fx->plural         ? ""
          : faces[k].deleted ? ", now()"
                             : ", NULL");
      exec_or_die (conn, sql);
      if (fx->face_without_embedding && k == 2)
        continue;
      g_autofree char *vec = vector_text (k);
      g_autofree char *emb
          = g_strdup_printf ("INSERT INTO face_search VALUES ('%s', '%s')", faces[k].id, vec);
      exec_or_die (conn, emb);
    }
  PQfinish (conn);

  if (media != NULL)
    {
      const int asset1[2][4] = { { 144, 108, 288, 252 }, { 720, 540, 864, 756 } };
      write_jpeg (media, "thumbs/a1/10/00/1-preview.jpeg", 1440, 1080, asset1, 2);
      /* Half the size the model saw: the box, as fractions, halves too. */
      const int asset2[1][4] = { { 5, 10, 55, 70 } };
      write_jpeg (media, "library/a/2.jpg", 720, 540, asset2, 1);
      g_autofree char *bad = g_build_filename (media, "thumbs/a2/10/00/3-preview.jpeg", NULL);
      g_autofree char *bad_dir = g_path_get_dirname (bad);
      g_assert_cmpint (g_mkdir_with_parents (bad_dir, 0755), ==, 0);
      g_assert_true (g_file_set_contents (bad, "RIFF\0\0\0\0WEBPVP8 not really", 26, NULL));
    }
}

static char *
new_outdir (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("likeness-import-XXXXXX", NULL);
  g_assert_nonnull (tmp);
  return g_build_filename (tmp, "library", NULL);
}

static void
remove_outdir (const char *outdir)
{
  g_autofree char *parent = g_path_get_dirname (outdir);
  lk_test_remove_tree (parent);
}

static gsize progress_calls;
static gsize progress_last;
static gsize thumbnail_progress_last;

static void
on_progress (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  g_assert_cmpuint (done, <=, total);
  if (phase == LK_IMPORT_PHASE_READ)
    {
      progress_calls++;
      progress_last = done;
    }
  else
    thumbnail_progress_last = done;
}

static void
immich_setup (Immich *fx, gconstpointer data)
{
  const Setup *setup = data;

  if (setup->server && server_url == NULL)
    {
      fx->skipped = TRUE;
      lk_test_skip_unless_required ("LK_TEST_REQUIRE_PGLITE", skip_reason);
      return;
    }
  fx->outdir = new_outdir ();
  if (setup->media)
    fx->media = g_dir_make_tmp ("likeness-media-XXXXXX", NULL);
  if (setup->database)
    write_immich (setup, fx->media);
  if (setup->text_embeddings)
    {
      PGconn *conn = connect_or_die ();
      exec_or_die (conn, "ALTER FUNCTION vector_send(vector) RENAME TO lk_test_hidden_send");
      PQfinish (conn);
    }
}

static void
immich_teardown (Immich *fx, gconstpointer data)
{
  if (fx->outdir != NULL)
    remove_outdir (fx->outdir);
  g_free (fx->outdir);
  if (fx->media != NULL)
    lk_test_remove_tree (fx->media);
  g_free (fx->media);
}

/* No server, no folder beside OUTDIR's. */
static const Setup bare = { 0 };
/* The server, with nothing written. */
static const Setup server_only = { .server = TRUE };
/* The Immich tables, filled; with media: the files on disk too. */
static const Setup immich = { .server = TRUE, .database = TRUE };
static const Setup immich_media = { .server = TRUE, .database = TRUE, .media = TRUE };
static const Setup immich_text
    = { .server = TRUE, .database = TRUE, .text_embeddings = TRUE, .media = TRUE };
static const Setup immich_plural
    = { .server = TRUE, .database = TRUE, .plural = TRUE, .media = TRUE };
static const Setup immich_no_embedding
    = { .server = TRUE, .database = TRUE, .face_without_embedding = TRUE };

/* Run as the immich_media, immich_text and immich_plural setups. */
static void
test_imports (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *outdir = fx->outdir, *media = fx->media;
  LkImportSummary summary = { 0 };
  LkImportImmichOptions options = { server_url, NULL, media, NULL, on_progress, NULL, &summary };
  g_autoptr (GError) error = NULL;

  progress_calls = 0;
  gboolean ok = lk_import_immich (outdir, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (progress_calls, >, 0);
  g_assert_cmpuint (progress_last, ==, 6);
  g_assert_cmpuint (thumbnail_progress_last, ==, 6);

  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  /* The deleted asset's face and the deleted face are gone. */
  g_assert_cmpuint (library->count, ==, 6);
  g_assert_cmpuint (library->dim, ==, DIM);
  g_assert_cmpuint (library->n_photos, ==, 4);

  /* Faces in (asset, face) order; photos numbered in asset order. */
  guint64 expected_photo[] = { 0, 0, 1, 2, 2, 3 };
  for (guint k = 0; k < 6; k++)
    g_assert_cmpuint (library->photo[k], ==, expected_photo[k]);

  /* Asset 1's original is 4000 × 3000, the model saw 1440 × 1080: the box
   * scales by 25/9; asset 3 has no exif and keeps fractions of 1000. */
  g_assert_true (library->has_box[0]);
  g_assert_cmpfloat_with_epsilon (library->box[0][0], 144 * 4000.0 / 1440, 1e-9);
  g_assert_cmpfloat_with_epsilon (library->box[0][1], 108 * 3000.0 / 1080, 1e-9);
  g_assert_cmpfloat_with_epsilon (library->box[0][2], 144 * 4000.0 / 1440, 1e-9);
  g_assert_cmpfloat_with_epsilon (library->box[0][3], 144 * 3000.0 / 1080, 1e-9);
  g_assert_cmpfloat_with_epsilon (library->crop_px[0], 400.0, 1e-3);
  g_assert_cmpfloat_with_epsilon (library->box[3][2], 100 * 1000.0 / 1440, 1e-9);
  /* Asset 2 is turned a quarter (orientation 6): 1440 × 1080 on the
   * sensor, 1080 × 1440 as shown, which the boxes are in. */
  const LkPhoto *p1 = lk_library_find_photo (library, 1);
  g_assert_cmpint (p1->width, ==, 1080);
  g_assert_cmpint (p1->height, ==, 1440);
  g_assert_cmpfloat_with_epsilon (library->box[2][0], 10 * 1080.0 / 1440, 1e-9);
  g_assert_cmpfloat_with_epsilon (library->crop_px[2], 120 * 1440.0 / 1080, 1e-3);

  const LkPhoto *p0 = lk_library_find_photo (library, 0);
  g_assert_nonnull (p0);
  g_assert_cmpint (p0->width, ==, 4000);
  g_assert_cmpstr (p0->taken, ==, "2019-06-01T10:00:00Z");

  /* Every embedding arrives as stored, face by face, to the bit (both
   * ways: the text is the shortest decimal that reads back as the float). */
  guint source_face[] = { 0, 1, 2, 3, 4, 7 };
  for (guint k = 0; k < 6; k++)
    {
      float v[DIM];
      embedding (source_face[k], v);
      const float *row = lk_library_row (library, k);
      for (guint d = 0; d < DIM; d++)
        g_assert_cmpfloat (row[d], ==, v[d]);
    }

  /* Thumbnails: cut from asset 1's preview and from asset 2's original
   * (no preview, and half the size the model saw), each centred on its
   * box. Asset 3's preview is no JPEG, asset 5 has no file at all: those
   * faces have no thumbnail (the window's placeholder), and are counted. */
  lk_test_assert_red_face_on_blue (library, 0);
  lk_test_assert_red_face_on_blue (library, 1);
  lk_test_assert_red_face_on_blue (library, 2);
  for (gsize k = 3; k < 6; k++)
    g_assert_null (library->thumbnail[k]);
  g_assert_cmpuint (summary.faces, ==, 6);
  g_assert_cmpuint (summary.photos, ==, 4);
  g_assert_cmpuint (summary.thumbnails, ==, 3);
  g_assert_cmpuint (summary.undecodable_previews, ==, 2);
  g_assert_cmpuint (summary.missing_previews, ==, 1);
  g_assert_cmpstr (summary.model, ==, "buffalo_l");
  /* buffalo_l's calibration prior, with the model, in the manifest. */
  g_assert_true (summary.model_known);
  const LkCalibration *prior = lk_calibration_prior_for_model ("buffalo_l");
  g_assert_cmpfloat (library->calibration.a, ==, prior->a);
  g_assert_cmpfloat (library->calibration.b, ==, prior->b);
  g_assert_nonnull (strstr (summary.first_problem, "3-preview.jpeg"));

  /* The source ids are in the manifest beside the integers; so are the
   * named and hidden people (not the unnamed shown one, not the one whose
   * only face was deleted). */
  g_autofree char *manifest_path = g_build_filename (outdir, "library.json", NULL);
  g_autofree char *manifest = NULL;
  g_assert_true (g_file_get_contents (manifest_path, &manifest, NULL, NULL));
  g_assert_nonnull (strstr (manifest, "\"id\" : \"20000000-0000-0000-0000-000000000005\""));
  g_assert_null (strstr (manifest, "20000000-0000-0000-0000-000000000006"));
  g_assert_nonnull (strstr (manifest, "\"source_id\" : \"10000000-0000-0000-0000-000000000003\""));
  g_assert_nonnull (strstr (manifest, "\"name\" : \"Ada\""));
  g_assert_nonnull (strstr (manifest, "30000000-0000-0000-0000-000000000003"));
  g_assert_null (strstr (manifest, "30000000-0000-0000-0000-000000000004"));
  g_assert_null (strstr (manifest, "Gone"));
  g_assert_cmpuint (summary.people, ==, 3);
  /* Eve's two faces are in one photo: one is refused, and so reported. */
  g_assert_cmpuint (summary.refused_assignments, ==, 1);
  lk_import_summary_clear (&summary);
}

static void
test_owner_keeps_only_that_users_assets (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *outdir = fx->outdir;
  /* A model Likeness has no prior for: said, and the default applies. */
  LkImportSummary summary = { 0 };
  LkImportImmichOptions options
      = { server_url, "bob@example.org", NULL, "mystery_face_v9", NULL, NULL, &summary };
  g_autoptr (GError) error = NULL;

  gboolean ok = lk_import_immich (outdir, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 2);
  g_assert_false (summary.model_known);
  g_assert_cmpfloat (library->calibration.a, ==, LK_CALIBRATION_DEFAULT.a);
  g_autofree char *manifest_path = g_build_filename (outdir, "library.json", NULL);
  g_autofree char *manifest = NULL;
  g_assert_true (g_file_get_contents (manifest_path, &manifest, NULL, NULL));
  g_assert_nonnull (strstr (manifest, "\"model\" : \"mystery_face_v9\""));
  g_assert_nonnull (strstr (manifest, "unknown model"));
  lk_import_summary_clear (&summary);
}

static void
test_unreachable_database_names_url_without_password (Immich *fx, gconstpointer data)
{
  const char *outdir = fx->outdir;
  g_autofree char *url = g_strdup_printf (
      "postgresql://immich:hunter2@127.0.0.1:%u/immich?sslmode=disable&connect_timeout=5",
      lk_test_free_port ());
  LkImportImmichOptions options = { url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "postgresql://immich:***@127.0.0.1"));
  g_assert_null (strstr (error->message, "hunter2"));
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));
}

static gpointer
cancel_soon (gpointer cancellable)
{
  g_usleep (G_USEC_PER_SEC / 5);
  g_cancellable_cancel (cancellable);
  return NULL;
}

/* The window's Cancel while libpq waits for a server: PQconnectdb () would
 * wait for ever (no connect_timeout by default); the import stops, and
 * leaves nothing. Without the cancellable connect this test hangs until
 * meson's timeout. */
static void
test_cancel_while_connecting (Immich *fx, gconstpointer data)
{
  guint16 port = 0;
  g_autoptr (GSocket) server = lk_test_silent_server (&port);
  g_assert_true (G_IS_SOCKET (server)); /* held open until the end: it listens */
  const char *outdir = fx->outdir;
  g_autofree char *url
      = g_strdup_printf ("postgresql://immich:hunter2@127.0.0.1:%u/immich?sslmode=disable", port);
  LkImportImmichOptions options = { url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  GThread *canceller = g_thread_new ("cancel", cancel_soon, cancellable);
  g_assert_false (lk_import_immich (outdir, &options, cancellable, &error));
  g_thread_join (canceller);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));
}

/* connect_timeout in the URL still holds with the polled connect (libpq
 * leaves it to the caller of PQconnectPoll). */
static void
test_connect_timeout_is_kept (Immich *fx, gconstpointer data)
{
  guint16 port = 0;
  g_autoptr (GSocket) server = lk_test_silent_server (&port);
  g_assert_true (G_IS_SOCKET (server)); /* held open until the end: it listens */
  const char *outdir = fx->outdir;
  g_autofree char *url = g_strdup_printf (
      "postgresql://immich:hunter2@127.0.0.1:%u/immich?sslmode=disable&connect_timeout=1", port);
  LkImportImmichOptions options = { url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "no answer within 1 s"));
  g_assert_null (strstr (error->message, "hunter2"));
}

/* Stop while the server is still answering a batch of faces: the face
 * rows come through a view that sleeps an hour first. Without the
 * interruptible FETCH the import would wait for the answer (meson's timeout
 * ends it); with it the import stops and leaves nothing. The server stays
 * busy with the sleep: this test runs last and main () kills the server. */
static void
test_cancel_while_reading (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  PGconn *conn = connect_or_die ();
  exec_or_die (conn, "ALTER TABLE face_search RENAME TO face_search_rows;"
                     "CREATE VIEW face_search AS SELECT \"faceId\", embedding FROM "
                     "face_search_rows WHERE (SELECT true FROM pg_sleep(3600))");
  PQfinish (conn);
  const char *outdir = fx->outdir;
  LkImportImmichOptions options = { server_url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  GThread *canceller = g_thread_new ("cancel", cancel_soon, cancellable);
  g_assert_false (lk_import_immich (outdir, &options, cancellable, &error));
  g_thread_join (canceller);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autoptr (GDir) dir = g_dir_open (parent, 0, NULL);
  g_assert_null (g_dir_read_name (dir));
}

static void
test_not_immich_names_missing_table (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  PGconn *conn = connect_or_die ();
  exec_or_die (conn, "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; "
                     "CREATE TABLE asset_face (id uuid)");
  PQfinish (conn);
  const char *outdir = fx->outdir;
  LkImportImmichOptions options = { server_url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA);
  g_assert_nonnull (strstr (error->message, "“asset” is missing"));
  g_assert_null (strstr (error->message, "secret"));

  conn = connect_or_die ();
  exec_or_die (conn, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
  PQfinish (conn);
  g_clear_error (&error);
  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_SCHEMA);
  g_assert_nonnull (strstr (error->message, "“asset_face”"));
  g_assert_false (g_file_test (outdir, G_FILE_TEST_EXISTS));
}

static void
test_face_without_embedding_is_named (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *outdir = fx->outdir;
  LkImportImmichOptions options = { server_url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA);
  g_assert_nonnull (strstr (error->message, "20000000-0000-0000-0000-000000000003"));
  /* Nothing was left behind, beside OUTDIR or in it. */
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autoptr (GDir) dir = g_dir_open (parent, 0, NULL);
  g_assert_null (g_dir_read_name (dir));
}

static void
test_cancelled_import_leaves_nothing (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *outdir = fx->outdir;
  LkImportImmichOptions options = { server_url, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (lk_import_immich (outdir, &options, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autoptr (GDir) dir = g_dir_open (parent, 0, NULL);
  g_assert_null (g_dir_read_name (dir));
}

static void
test_reimport_keeps_decisions (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *outdir = fx->outdir, *media = fx->media;
  LkImportImmichOptions options = { server_url, NULL, media, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "review", outdir, "name",
                                    "30000000-0000-0000-0000-000000000001", "Ada Lovelace", NULL),
                   ==, 0);

  /* In Immich meanwhile: face 5 deleted, face 9 found on asset 1. */
  PGconn *conn = connect_or_die ();
  g_autofree char *vec = vector_text (9);
  g_autofree char *sql = g_strdup_printf (
      "UPDATE asset_face SET \"deletedAt\" = now() WHERE id = "
      "'20000000-0000-0000-0000-000000000005';"
      "INSERT INTO asset_face (id, \"assetId\", \"imageWidth\", \"imageHeight\", \"boundingBoxX1\","
      " \"boundingBoxY1\", \"boundingBoxX2\", \"boundingBoxY2\") VALUES"
      " ('20000000-0000-0000-0000-000000000009', '10000000-0000-0000-0000-000000000001', 1440, "
      "1080,"
      " 1000, 100, 1100, 200);"
      "INSERT INTO face_search VALUES ('20000000-0000-0000-0000-000000000009', '%s')",
      vec);
  exec_or_die (conn, sql);
  PQfinish (conn);

  g_assert_true (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (library->count, ==, 6);
  gboolean found_new = FALSE;
  for (gsize k = 0; k < library->count; k++)
    {
      g_assert_cmpstr (library->face_id[k], !=, "20000000-0000-0000-0000-000000000005");
      found_new |= g_strcmp0 (library->face_id[k], "20000000-0000-0000-0000-000000000009") == 0;
    }
  g_assert_true (found_new);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", outdir, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "30000000-0000-0000-0000-000000000001\tAda Lovelace\t"));
}

static void
test_refuses_non_empty_outdir (Immich *fx, gconstpointer data)
{
  const char *outdir = fx->outdir;
  g_autofree char *file = g_build_filename (outdir, "notes.txt", NULL);
  g_assert_cmpint (g_mkdir (outdir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (file, "mine", -1, NULL));
  LkImportImmichOptions options
      = { "postgresql://127.0.0.1:1/x", NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;

  g_assert_false (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT);
  g_assert_true (g_file_test (file, G_FILE_TEST_EXISTS));
}

/* likeness-cli export --xmp on an imported Immich library (issue 32): the
 * photos are the server's (photos[].source_path under /usr/src/app/upload),
 * so without a --map nothing is written, exit 1, with the count and the
 * first path; a --map covering nothing says "still"; with --map
 * UPLOAD=LOCAL each named photo found there gets its sidecar (ExifTool reads
 * the name and the box back) and the one that is not there is counted and
 * named. */
static void
test_xmp_sidecars_through_a_map (Immich *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  g_autofree char *exiftool = g_find_program_in_path ("exiftool");
  if (!lk_export_xmp_supported () || exiftool == NULL)
    {
      lk_test_skip_unless_required ("LK_TEST_REQUIRE_EXIFTOOL",
                                    !lk_export_xmp_supported ()
                                        ? "built without gexiv2 (-Dxmp)"
                                        : "no exiftool (libimage-exiftool-perl)");
      return;
    }
  const char *outdir = fx->outdir, *media = fx->media;
  LkImportImmichOptions options = { server_url, NULL, media, NULL, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_import_immich (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  /* Asset 1's original here, at a quarter of the server's 4000 × 3000 (the
   * boxes scale: AppliedToDimensions is the file's). Asset 2's is in the
   * media folder already; asset 5's is nowhere. */
  const int asset1[2][4] = { { 100, 75, 200, 175 }, { 500, 375, 600, 525 } };
  write_jpeg (media, "library/a/1.jpg", 1000, 750, asset1, 2);

  /* Named people: Eve (asset 1), Ada (assets 2 and 5). */
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", outdir, "--xmp", NULL), ==, 1);
  g_test_message ("%s%s", out, err);
  g_assert_nonnull (strstr (err, "3 photos with named faces are only on the source's server"));
  g_assert_nonnull (strstr (err, UPLOAD "/library/a/"));
  g_assert_nonnull (strstr (err, "--map"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "export", outdir, "--xmp", "--map", "/srv/other=/tmp", NULL), ==,
      1);
  g_assert_nonnull (strstr (err, "3 photos with named faces are still on the source's server"));
  g_autofree char *sidecar1 = g_build_filename (media, "library/a/1.jpg.xmp", NULL);
  g_assert_false (g_file_test (sidecar1, G_FILE_TEST_EXISTS));

  g_autofree char *map = g_strdup_printf (UPLOAD "=%s", media);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", outdir, "--xmp", "--map", map, NULL), ==,
                   0);
  g_test_message ("%s%s", out, err);
  g_assert_nonnull (strstr (out, "2 created, 0 updated, 0 unchanged, 1 refused, 0 failed"));
  g_autofree char *missing = g_build_filename (media, "library/a/5.jpg", NULL);
  g_assert_nonnull (strstr (err, missing));
  g_assert_nonnull (strstr (err, "1 photo with named faces not found where the library and the "
                                 "--map folders say"));

  const char *argv[] = { exiftool, "-j", "-struct", "-n", "-RegionInfo", sidecar1, NULL };
  g_autofree char *json = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &json, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, json, -1, NULL));
  JsonObject *info = json_object_get_object_member (
      json_array_get_object_element (json_node_get_array (json_parser_get_root (parser)), 0),
      "RegionInfo");
  JsonObject *dims = json_object_get_object_member (info, "AppliedToDimensions");
  g_assert_cmpint (json_object_get_int_member (dims, "W"), ==, 1000);
  g_assert_cmpint (json_object_get_int_member (dims, "H"), ==, 750);
  JsonArray *list = json_object_get_array_member (info, "RegionList");
  g_assert_cmpuint (json_array_get_length (list), ==, 1);
  JsonObject *region = json_array_get_object_element (list, 0);
  g_assert_cmpstr (json_object_get_string_member (region, "Name"), ==, "Eve");
  /* Eve's face kept is face 1 or 2 (one photo: the other is refused), at
   * 144,108–288,252 or 720,540–864,756 of the 1440 × 1080 the model saw:
   * the centre as a fraction is the same on any copy of the photo. */
  JsonObject *area = json_object_get_object_member (region, "Area");
  double x = json_object_get_double_member (area, "X"),
         y = json_object_get_double_member (area, "Y");
  gboolean first = fabs (x - 216.0 / 1440) < 1e-3 && fabs (y - 180.0 / 1080) < 1e-3;
  gboolean second = fabs (x - 792.0 / 1440) < 1e-3 && fabs (y - 648.0 / 1080) < 1e-3;
  g_assert_true (first || second);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (area, "W"), 0.1, 1e-3);
  g_autofree char *sidecar2 = g_build_filename (media, "library/a/2.jpg.xmp", NULL);
  g_assert_true (g_file_test (sidecar2, G_FILE_TEST_IS_REGULAR));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GSubprocess) server = start_server ();

  g_test_add ("/import-immich/imports-faces-boxes-and-photos", Immich, &immich_media, immich_setup,
              test_imports, immich_teardown);
  g_test_add ("/import-immich/imports-embeddings-as-text-without-vector-send", Immich, &immich_text,
              immich_setup, test_imports, immich_teardown);
  g_test_add ("/import-immich/imports-pre-2025-plural-tables", Immich, &immich_plural, immich_setup,
              test_imports, immich_teardown);
  g_test_add ("/import-immich/owner-keeps-only-that-users-assets", Immich, &immich, immich_setup,
              test_owner_keeps_only_that_users_assets, immich_teardown);
  g_test_add ("/import-immich/unreachable-database-names-url-without-password", Immich, &bare,
              immich_setup, test_unreachable_database_names_url_without_password, immich_teardown);
  g_test_add ("/import-immich/cancel-while-connecting", Immich, &bare, immich_setup,
              test_cancel_while_connecting, immich_teardown);
  g_test_add ("/import-immich/connect-timeout-is-kept", Immich, &bare, immich_setup,
              test_connect_timeout_is_kept, immich_teardown);
  g_test_add ("/import-immich/not-immich-names-missing-table", Immich, &server_only, immich_setup,
              test_not_immich_names_missing_table, immich_teardown);
  g_test_add ("/import-immich/face-without-embedding-is-named", Immich, &immich_no_embedding,
              immich_setup, test_face_without_embedding_is_named, immich_teardown);
  g_test_add ("/import-immich/cancelled-import-leaves-nothing", Immich, &immich, immich_setup,
              test_cancelled_import_leaves_nothing, immich_teardown);
  g_test_add ("/import-immich/refuses-non-empty-outdir", Immich, &bare, immich_setup,
              test_refuses_non_empty_outdir, immich_teardown);
  g_test_add ("/import-immich/reimport-keeps-decisions", Immich, &immich_media, immich_setup,
              test_reimport_keeps_decisions, immich_teardown);
  g_test_add ("/import-immich/xmp-sidecars-through-a-map", Immich, &immich_media, immich_setup,
              test_xmp_sidecars_through_a_map, immich_teardown);
  /* Last: it leaves the server sleeping. */
  g_test_add ("/import-immich/cancel-while-reading", Immich, &immich, immich_setup,
              test_cancel_while_reading, immich_teardown);
  int status = g_test_run ();

  /* Killed, not stopped: the last test left it in an hour's sleep, and its
   * database lives in its memory only. */
  if (server != NULL)
    {
      g_subprocess_force_exit (server);
      g_subprocess_wait (server, NULL, NULL);
    }
  g_free (server_url);
  g_free (skip_reason);
  return status;
}
