/* make-photoprism.c — a PhotoPrism instance (its SQLite index and cached
 * thumbnails) from a sample library, for measuring the importer at scale
 * (bench-import-photoprism.c) and for looking at an imported library.
 *
 *   likeness-cli make-sample S --faces 2000 --seed 7 --no-photos
 *   make-photoprism S ROOT [FIT_SIDE]
 *   likeness-cli import photoprism OUT --database ROOT/storage/index.db --storage ROOT/storage
 *
 * The schema is lk-test-photoprism.c's, scaled up: every photo of the sample
 * becomes a photos row and a files row (its file_hash a SHA-1, as
 * PhotoPrism's are) with its cached fit thumbnails under
 * storage/cache/thumbnails/h0/h1/h2/: HASH_720x720_fit.jpg,
 * HASH_1280x1024_fit.jpg and HASH_1920x1200_fit.jpg (those below FIT_SIDE)
 * and the largest, HASH_SxS_fit.jpg with S = FIT_SIDE (2048, PhotoPrism's
 * default PHOTOPRISM_THUMB_SIZE, the largest it renders ahead); the importer
 * cuts from the smallest that gives every face of the photo its 128 pixels.
 * All are make-immich's previews (lk-test-preview.c: a grey
 * backdrop with fine noise and the sample's face thumbnails pasted on their
 * boxes). Every face is a marker with its box as fractions of the image and
 * its sample embedding as embeddings_json text; the twelve largest
 * identities are named subjects with all their markers, as a user of
 * PhotoPrism would have them. One transaction, prepared statements.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

#include "library/lk-library.h"
#include "lk-test-photoprism.h"
#include "lk-test-preview.h"

#define SMALL_SIDE 720

static sqlite3_stmt *
prepare (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    {
      fprintf (stderr, "make-photoprism: %s: %s\n", sql, sqlite3_errmsg (db));
      exit (1);
    }
  return st;
}

static void
step (sqlite3 *db, sqlite3_stmt *st)
{
  if (sqlite3_step (st) != SQLITE_DONE)
    {
      fprintf (stderr, "make-photoprism: %s: %s\n", sqlite3_sql (st), sqlite3_errmsg (db));
      exit (1);
    }
  sqlite3_reset (st);
}

/* PhotoPrism's fit sizes below the largest (fit_720, fit_1280, fit_1920:
 * the boxes its thumbnail names carry), rendered ahead up to its
 * PHOTOPRISM_THUMB_SIZE. */
static const int fit_boxes[][2] = { { 720, 720 }, { 1280, 1024 }, { 1920, 1200 } };

static void
save (GdkPixbuf *image, const char *dir, const char *hash, int box_width, int box_height)
{
  g_autofree char *file = g_strdup_printf ("%s/%s_%dx%d_fit.jpg", dir, hash, box_width, box_height);
  g_autoptr (GError) error = NULL;
  if (!gdk_pixbuf_save (image, file, "jpeg", &error, "quality", "80", NULL))
    {
      fprintf (stderr, "make-photoprism: %s\n", error->message);
      exit (1);
    }
}

int
main (int argc, char **argv)
{
  if (argc != 3 && argc != 4)
    {
      fprintf (stderr, "usage: make-photoprism SAMPLE-LIBRARY ROOT [FIT_SIDE]\n");
      return 2;
    }
  int side = argc == 4 ? atoi (argv[3]) : 2048;
  if (side < SMALL_SIDE)
    {
      fprintf (stderr, "make-photoprism: FIT_SIDE %s is below %d\n", argv[3], SMALL_SIDE);
      return 2;
    }
  g_autoptr (GError) error = NULL;
  LkLibrary *library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "make-photoprism: %s\n", error->message);
      return 1;
    }
  g_autofree char *storage = g_build_filename (argv[2], "storage", NULL);
  g_autofree char *database = g_build_filename (storage, "index.db", NULL);
  if (g_mkdir_with_parents (storage, 0755) != 0)
    {
      fprintf (stderr, "make-photoprism: cannot make %s\n", storage);
      return 1;
    }
  g_unlink (database);
  sqlite3 *db = NULL;
  if (sqlite3_open (database, &db) != SQLITE_OK)
    {
      fprintf (stderr, "make-photoprism: %s: %s\n", database, sqlite3_errmsg (db));
      return 1;
    }
  lk_test_photoprism_create_schema (db);
  lk_test_photoprism_exec (db, "BEGIN");

  /* The largest identities are the named subjects. */
  g_autoptr (GPtrArray) labels = lk_test_preview_largest_labels (library, LK_TEST_PREVIEW_NAMED);
  g_autoptr (GHashTable) subject_of = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  sqlite3_stmt *subject = prepare (db, "INSERT INTO subjects VALUES (?1, 'person', ?2, 0)");
  for (guint k = 0; k < labels->len; k++)
    {
      char *uid = g_strdup_printf ("js%014u", k + 1);
      sqlite3_bind_text (subject, 1, uid, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text (subject, 2, lk_test_preview_names[k], -1, SQLITE_STATIC);
      step (db, subject);
      g_hash_table_insert (subject_of, g_ptr_array_index (labels, k), uid);
    }
  sqlite3_finalize (subject);

  g_autoptr (GHashTable) faces_of = lk_test_preview_faces_by_photo (library);
  sqlite3_stmt *photo_row = prepare (db, "INSERT INTO photos VALUES (?1, ?2, ?3)");
  sqlite3_stmt *file_row
      = prepare (db, "INSERT INTO files VALUES (?1, ?1, ?2, ?3, '/', ?4, ?5, ?6, 1, 0)");
  sqlite3_stmt *marker_row = prepare (
      db, "INSERT INTO markers VALUES (?1, ?2, 'face', ?3, NULL, ?4, ?5, ?6, ?7, ?8, 50, ?9, 40,"
          " 0, 0)");
  gsize photos = 0, n_faces = 0;
  for (gsize p = 0; p < library->n_photos; p++)
    {
      const LkPhoto *photo = &library->photos[p];
      GArray *list = g_hash_table_lookup (faces_of, GSIZE_TO_POINTER (photo->id + 1));
      if (list == NULL || photo->width <= 0 || photo->height <= 0)
        continue;
      g_autofree char *photo_uid = g_strdup_printf ("pp%014" G_GINT64_MODIFIER "x", photo->id);
      g_autofree char *file_uid = g_strdup_printf ("fp%014" G_GINT64_MODIFIER "x", photo->id);
      g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA1, file_uid, -1);
      sqlite3_bind_int64 (photo_row, 1, photo->id + 1);
      sqlite3_bind_text (photo_row, 2, photo_uid, -1, SQLITE_STATIC);
      sqlite3_bind_text (photo_row, 3, photo->taken ? photo->taken : "2020-01-01 00:00:00", -1,
                         SQLITE_STATIC);
      step (db, photo_row);
      sqlite3_bind_int64 (file_row, 1, photo->id + 1);
      sqlite3_bind_text (file_row, 2, file_uid, -1, SQLITE_STATIC);
      sqlite3_bind_text (file_row, 3, photo->path, -1, SQLITE_STATIC);
      sqlite3_bind_text (file_row, 4, hash, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (file_row, 5, photo->width);
      sqlite3_bind_int64 (file_row, 6, photo->height);
      step (db, file_row);

      int fw, fh;
      lk_test_preview_size (photo, side, &fw, &fh);
      g_autofree int (*boxes)[4] = g_malloc_n (list->len, sizeof *boxes);
      g_autoptr (GdkPixbuf) image = lk_test_preview_paint (library, photo, list, fw, fh, boxes);
      for (guint k = 0; k < list->len; k++)
        {
          gsize f = g_array_index (list, gsize, k);
          g_autofree char *marker_uid = g_strdup_printf ("mp%014" G_GSIZE_MODIFIER "x", f);
          const char *subj = library->label[f] != NULL
                                 ? g_hash_table_lookup (subject_of, library->label[f])
                                 : NULL;
          g_autofree char *json
              = lk_test_photoprism_json_of (lk_library_row (library, f), library->dim);
          sqlite3_bind_text (marker_row, 1, marker_uid, -1, SQLITE_STATIC);
          sqlite3_bind_text (marker_row, 2, file_uid, -1, SQLITE_STATIC);
          if (subj != NULL)
            sqlite3_bind_text (marker_row, 3, subj, -1, SQLITE_STATIC);
          else
            sqlite3_bind_null (marker_row, 3);
          sqlite3_bind_text (marker_row, 4, json, -1, SQLITE_STATIC);
          sqlite3_bind_double (marker_row, 5, (double) boxes[k][0] / fw);
          sqlite3_bind_double (marker_row, 6, (double) boxes[k][1] / fh);
          sqlite3_bind_double (marker_row, 7, (double) boxes[k][2] / fw);
          sqlite3_bind_double (marker_row, 8, (double) boxes[k][3] / fh);
          sqlite3_bind_int (marker_row, 9, MAX (boxes[k][2], boxes[k][3]));
          step (db, marker_row);
          n_faces++;
        }
      char h0[2] = { hash[0], 0 }, h1[2] = { hash[1], 0 }, h2[2] = { hash[2], 0 };
      g_autofree char *dir = g_build_filename (storage, "cache", "thumbnails", h0, h1, h2, NULL);
      g_mkdir_with_parents (dir, 0755);
      save (image, dir, hash, side, side);
      int iw = gdk_pixbuf_get_width (image), ih = gdk_pixbuf_get_height (image);
      for (gsize b = 0; b < G_N_ELEMENTS (fit_boxes) && fit_boxes[b][0] < side; b++)
        {
          double s = MIN (1.0, MIN ((double) fit_boxes[b][0] / iw, (double) fit_boxes[b][1] / ih));
          int sw = MAX (1, (int) lround (iw * s)), sh = MAX (1, (int) lround (ih * s));
          g_autoptr (GdkPixbuf) small
              = gdk_pixbuf_scale_simple (image, sw, sh, GDK_INTERP_BILINEAR);
          save (small, dir, hash, fit_boxes[b][0], fit_boxes[b][1]);
        }
      photos++;
      if (p % 500 == 0)
        fprintf (stderr, "\r%zu of %zu photos  ", p, library->n_photos);
    }
  sqlite3_finalize (photo_row);
  sqlite3_finalize (file_row);
  sqlite3_finalize (marker_row);
  lk_test_photoprism_exec (db, "COMMIT");
  if (sqlite3_close (db) != SQLITE_OK)
    {
      fprintf (stderr, "make-photoprism: %s: %s\n", database, sqlite3_errmsg (db));
      return 1;
    }
  fprintf (stderr, "\r%zu faces on %zu photos, %u named subjects\n", n_faces, photos, labels->len);
  lk_library_free (library);
  return 0;
}
