/* lk-test-photoprism.c — a PhotoPrism index the tests write from the
 * schema facts (markers, files, subjects, photos), with originals and cached
 * thumbnails on disk as JPEGs written with gdk-pixbuf: read by
 * test-import-photoprism.c and imported through the window by
 * test-ui-import.c. */
#include "config.h"

#include "lk-test-photoprism.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <math.h>

#include "lk-test-util.h"

#define DIM LK_TEST_PHOTOPRISM_DIM

void
lk_test_photoprism_embedding (guint k, float *v)
{
  double norm = 0;
  for (guint d = 0; d < DIM; d++)
    {
      v[d] = (float) cos (0.29 * (k + 2) * (d + 1) + k);
      norm += (double) v[d] * v[d];
    }
  for (guint d = 0; d < DIM; d++)
    v[d] = (float) (v[d] / sqrt (norm));
}

char *
lk_test_photoprism_json_of (const float *v, guint dim)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  GString *s = g_string_new ("[[");
  for (guint d = 0; d < dim; d++)
    {
      if (d > 0)
        g_string_append_c (s, ',');
      g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.9g", v[d]));
    }
  g_string_append (s, "]]");
  return g_string_free (s, FALSE);
}

char *
lk_test_photoprism_embeddings_json (guint k)
{
  float v[DIM];
  lk_test_photoprism_embedding (k, v);
  return lk_test_photoprism_json_of (v, DIM);
}

void
lk_test_photoprism_exec (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

void
lk_test_photoprism_create_schema (sqlite3 *db)
{
  lk_test_photoprism_exec (
      db, "CREATE TABLE photos (id INTEGER PRIMARY KEY, photo_uid TEXT, taken_at DATETIME);"
          "CREATE TABLE files (id INTEGER PRIMARY KEY, photo_id INTEGER, file_uid TEXT,"
          " file_name TEXT, file_root TEXT, file_hash TEXT, file_width INTEGER,"
          " file_height INTEGER, file_orientation INTEGER, file_missing INTEGER);"
          "CREATE TABLE subjects (subj_uid TEXT PRIMARY KEY, subj_type TEXT, subj_name TEXT,"
          " subj_hidden INTEGER);"
          "CREATE TABLE markers (marker_uid TEXT PRIMARY KEY, file_uid TEXT, marker_type TEXT,"
          " subj_uid TEXT, face_id TEXT, embeddings_json TEXT, x REAL, y REAL, w REAL, h REAL,"
          " q INTEGER, size INTEGER, score INTEGER, marker_invalid INTEGER,"
          " marker_review INTEGER);");
}

/* A blue image with a red rectangle on every box (fractions of the image). */
static void
write_jpeg (const char *path, int width, int height, const double (*boxes)[4], guint n_boxes)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  gdk_pixbuf_fill (image, 0x0000ffff);
  for (guint k = 0; k < n_boxes; k++)
    {
      g_autoptr (GdkPixbuf) box = gdk_pixbuf_new_subpixbuf (
          image, (int) (boxes[k][0] * width), (int) (boxes[k][1] * height),
          (int) (boxes[k][2] * width), (int) (boxes[k][3] * height));
      gdk_pixbuf_fill (box, 0xff0000ff);
    }
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_pixbuf_save (image, path, "jpeg", &error, "quality", "95", NULL));
  g_assert_no_error (error);
}

/* Three files: fa1 (its original on disk, 1600 × 1200), fb2 (no original,
 * two cached fit thumbnails — only the smaller, which still gives m5 its
 * 128 pixels, holds the face — and a crop), fc3
 * (nothing on disk). Markers: m1 and m2 on fa1, both Ada's (one photo: one
 * is refused); m3 a label and m4 invalid (both skipped); m5 on fb2, Bob's
 * (hidden); m6 on fc3, nobody's. */
void
lk_test_photoprism_init (LkTestPhotoprism *fx, gboolean without_embedding)
{
  fx->root = g_dir_make_tmp ("likeness-photoprism-XXXXXX", NULL);
  fx->storage = g_build_filename (fx->root, "storage", NULL);
  fx->originals = g_build_filename (fx->root, "originals", NULL);
  fx->database = g_build_filename (fx->storage, "index.db", NULL);
  fx->outdir = g_build_filename (fx->root, "library", NULL);
  g_assert_cmpint (g_mkdir_with_parents (fx->storage, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (fx->originals, 0755), ==, 0);

  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (fx->database, &db), ==, SQLITE_OK);
  lk_test_photoprism_create_schema (db);
  lk_test_photoprism_exec (
      db, "INSERT INTO photos VALUES (1, 'pa1', '2019-06-01 10:00:00'), (2, 'pb2', NULL);"
          "INSERT INTO files VALUES"
          " (1, 1, 'fa1', '2019/a.jpg', '/', 'aaa111', 1600, 1200, 1, 0),"
          " (2, 2, 'fb2', '2020/b.jpg', '/', 'bbb222', 4000, 3000, 1, 1),"
          " (3, 2, 'fc3', '2020/c.jpg', '/', 'ccc333', 800, 600, 6, 1);"
          "INSERT INTO subjects VALUES ('sa', 'person', 'Ada', 0), ('sb', 'person', 'Bob', 1),"
          " ('sl', 'label', 'Beach', 0);");
  static const struct
  {
    const char *uid, *file, *type, *subject;
    double box[4];
    int invalid;
  } markers[] = {
    { "m1", "fa1", "face", "sa", { 0.10, 0.10, 0.10, 0.15 }, 0 },
    { "m2", "fa1", "face", "sa", { 0.50, 0.50, 0.10, 0.10 }, 0 },
    { "m3", "fa1", "label", "sl", { 0.0, 0.0, 1.0, 1.0 }, 0 },
    { "m4", "fa1", "face", NULL, { 0.7, 0.1, 0.1, 0.1 }, 1 },
    { "m5", "fb2", "face", "sb", { 0.20, 0.30, 0.20, 0.20 }, 0 },
    { "m6", "fc3", "face", NULL, { 0.40, 0.40, 0.10, 0.10 }, 0 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (markers); k++)
    {
      g_autofree char *json
          = without_embedding && k == 4 ? g_strdup ("[]") : lk_test_photoprism_embeddings_json (k);
      g_autofree char *subject
          = markers[k].subject ? g_strdup_printf ("'%s'", markers[k].subject) : g_strdup ("NULL");
      char x[32], y[32], w[32], h[32];
      g_autofree char *sql = g_strdup_printf (
          "INSERT INTO markers VALUES ('%s', '%s', '%s', %s, NULL, '%s', %s, %s, %s, %s, 50, 200,"
          " 40, %d, 0)",
          markers[k].uid, markers[k].file, markers[k].type, subject, json,
          g_ascii_dtostr (x, sizeof x, markers[k].box[0]),
          g_ascii_dtostr (y, sizeof y, markers[k].box[1]),
          g_ascii_dtostr (w, sizeof w, markers[k].box[2]),
          g_ascii_dtostr (h, sizeof h, markers[k].box[3]), markers[k].invalid);
      lk_test_photoprism_exec (db, sql);
    }
  sqlite3_close (db);

  const double fa1[2][4] = { { 0.10, 0.10, 0.10, 0.15 }, { 0.50, 0.50, 0.10, 0.10 } };
  g_autofree char *a = g_build_filename (fx->originals, "2019", "a.jpg", NULL);
  write_jpeg (a, 1600, 1200, fa1, 2);
  const double fb2[1][4] = { { 0.20, 0.30, 0.20, 0.20 } };
  g_autofree char *cache
      = g_build_filename (fx->storage, "cache", "thumbnails", "b", "b", "b", NULL);
  g_autofree char *big = g_build_filename (cache, "bbb222_1280x1024_fit.jpg", NULL);
  write_jpeg (big, 1280, 960, NULL, 0);
  g_autofree char *small = g_build_filename (cache, "bbb222_720x720_fit.jpg", NULL);
  write_jpeg (small, 720, 540, fb2, 1);
  g_autofree char *crop = g_build_filename (cache, "bbb222_3000x3000_center.jpg", NULL);
  write_jpeg (crop, 64, 64, NULL, 0);
}

void
lk_test_photoprism_clear (LkTestPhotoprism *fx)
{
  lk_test_remove_tree (fx->root);
  g_free (fx->root);
  g_free (fx->database);
  g_free (fx->storage);
  g_free (fx->originals);
  g_free (fx->outdir);
}
