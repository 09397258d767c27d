/* lk-test-photoprism.h — a PhotoPrism SQLite index with images on disk, for
 * the importer's tests and the window's (lk-test-photoprism.c says what it
 * holds). */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

#define LK_TEST_PHOTOPRISM_DIM 512

typedef struct
{
  char *root; /* everything below is in here */
  char *database;
  char *storage;
  char *originals;
  char *outdir; /* root/library, not made */
} LkTestPhotoprism;

/* Writes the index and the images under a new temporary root; with
 * `without_embedding`, marker m5 has an empty embeddings_json. */
void lk_test_photoprism_init (LkTestPhotoprism *fx, gboolean without_embedding);
/* Removes the root and everything below. */
void lk_test_photoprism_clear (LkTestPhotoprism *fx);
/* Marker k's embedding: a deterministic unit vector. */
void lk_test_photoprism_embedding (guint k, float *v);
/* It as PhotoPrism's embeddings_json: an array of one array. */
char *lk_test_photoprism_embeddings_json (guint k);
/* `v` (dim floats) as PhotoPrism's embeddings_json text. */
char *lk_test_photoprism_json_of (const float *v, guint dim);
/* Creates the tables the importer reads (photos, files, subjects, markers)
 * in an empty index: PhotoPrism's names for them and for the columns read. */
void lk_test_photoprism_create_schema (sqlite3 *db);
/* Runs `sql`, failing the test on an error. */
void lk_test_photoprism_exec (sqlite3 *db, const char *sql);

G_END_DECLS
