/* test-scan-cache — a re-scan that reuses the kept scan gives the full scan's
 * answer, bit for bit, and anything it cannot trust is a full scan
 *
 * Libraries are written from a pool of faces numbered g: identity g % 23, a
 * row at a cosine from 0.55 to 0.95 of its identity's base (so pairs of one
 * identity straddle the bar), crops that the calibration's w_size reads, two
 * faces a photo, every seventh face a probe. A library is a list of those
 * numbers, in its order.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "scan/lk-scan-cache.h"
#include "lk-test-faces.h"
#include "lk-test-util.h"

#define DIM        48
#define IDENTITIES 23

typedef struct
{
  char *root;  /* a temporary folder */
  char *cache; /* the kept scan's path */
} Fixture;

static void
face_row (guint g, guint changed, float *out)
{
  float base[DIM], off[DIM];
  test_vector (g % IDENTITIES + 1, DIM, base);
  test_vector (100000 + g * 7 + changed, DIM, off);
  test_near (base, off, 0.55f + 0.40f * (float) ((g * 37) % 100) / 100.0f, DIM, out);
}

/* Writes the library of faces `faces` (n numbers) into root/name; face
 * `changed_face` (or none: G_MAXUINT) gets another row. With `ids`, faces
 * carry faces[].id "f<g>", else their keys are content keys. */
static char *
write_library (Fixture *fx, const char *name, const guint *faces, gsize n, gboolean ids,
               guint changed_face, double bar)
{
  g_autofree char *folder = g_build_filename (fx->root, name, NULL);
  g_autoptr (GString) json = g_string_new (NULL);
  g_autofree float *rows = g_new (float, MAX (n, 1) * DIM);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_string_append_printf (
      json,
      "{\"format\":\"likeness-library\",\"version\":1,"
      "\"embeddings\":{\"file\":\"embeddings.f32\",\"dim\":%d,\"count\":%" G_GSIZE_FORMAT
      ",\"normalized\":true},"
      "\"calibration\":{\"a\":30.0,\"b\":-12.0,\"w_size\":0.3},"
      "\"min_probability\":%.17g,\"faces\":[",
      DIM, n, bar);
  for (gsize k = 0; k < n; k++)
    {
      guint g = faces[k];
      face_row (g, g == changed_face, rows + k * DIM);
      g_string_append_printf (json,
                              "%s{\"photo\":%u,\"crop_px\":%u,\"quality\":%s,"
                              "\"box\":[%u,0,10,10]",
                              k > 0 ? "," : "", g / 2, 64 + (g * 13) % 200,
                              g % 7 == 0 ? "0.3" : "0.8", g);
      if (ids)
        g_string_append_printf (json, ",\"id\":\"f%u\"", g);
      g_string_append_c (json, '}');
    }
  g_string_append (json, "]}");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *embeddings = g_build_filename (folder, "embeddings.f32", NULL);
  g_file_set_contents (manifest, json->str, (gssize) json->len, &error);
  g_assert_no_error (error);
  g_file_set_contents (embeddings, (const char *) rows, (gssize) (n * DIM * sizeof (float)),
                       &error);
  g_assert_no_error (error);
  return g_steal_pointer (&folder);
}

static LkLibrary *
load (const char *folder)
{
  g_autoptr (GError) error = NULL;
  LkLibrary *library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  return library;
}

static void
assert_same_pairs (const GArray *a, const GArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  if (a->len > 0)
    g_assert_cmpmem (a->data, a->len * sizeof (LkPair), b->data, b->len * sizeof (LkPair));
}

/* Scans `folder` through the cache and fully, asserts the two agree, and
 * returns what the cached one did. */
static LkScanReuse
scan_both (Fixture *fx, const char *folder)
{
  g_autoptr (LkLibrary) library = load (folder);
  g_autoptr (GError) error = NULL;
  LkScanReuse reuse = { 0 };
  LkFaces faces;

  g_autoptr (LkScanResult) cached
      = lk_scan_cached (library, &library->calibration, library->min_probability, NULL, fx->cache,
                        &reuse, NULL, &error);
  g_assert_no_error (error);
  lk_faces_from_library (&faces, library);
  g_autoptr (LkScanResult) full
      = lk_scan (&faces, &library->calibration, library->min_probability, NULL, NULL, &error);
  g_assert_no_error (error);
  assert_same_pairs (cached->pairs, full->pairs);
  assert_same_pairs (cached->near_pairs, full->near_pairs);
  g_assert_cmpuint (cached->near_boundary, ==, full->near_boundary);
  g_assert_true (reuse.saved);
  g_assert_cmpuint (cached->reused_faces, ==, reuse.reused ? reuse.kept : 0);
  return reuse;
}

static void
fixture_set_up (Fixture *fx, gconstpointer data)
{
  fx->root = g_dir_make_tmp ("lk-scan-cache-XXXXXX", NULL);
  g_assert_nonnull (fx->root);
  fx->cache = g_build_filename (fx->root, "cache", "likeness", "scans", "x.scan", NULL);
}

static void
fixture_tear_down (Fixture *fx, gconstpointer data)
{
  lk_test_remove_tree (fx->root);
  g_free (fx->root);
  g_free (fx->cache);
}

static guint *
range (guint from, guint to)
{
  guint *faces = g_new (guint, to - from);
  for (guint g = from; g < to; g++)
    faces[g - from] = g;
  return faces;
}

/* The first scan is a full one and is kept; the second finds it. */
static void
test_grow_appended (Fixture *fx, gconstpointer data)
{
  g_autofree guint *faces = range (0, 420);
  g_autofree char *a = write_library (fx, "a", faces, 300, FALSE, G_MAXUINT, 0.9);
  g_autofree char *b = write_library (fx, "b", faces, 420, FALSE, G_MAXUINT, 0.9);

  LkScanReuse first = scan_both (fx, a);
  g_assert_false (first.reused);
  g_assert_nonnull (first.why_full);
  g_assert_true (g_file_test (fx->cache, G_FILE_TEST_IS_REGULAR));
  lk_scan_reuse_clear (&first);

  LkScanReuse second = scan_both (fx, b);
  g_assert_true (second.reused);
  g_assert_cmpuint (second.kept, ==, 300);
  g_assert_cmpuint (second.added, ==, 120);
  g_assert_cmpuint (second.removed, ==, 0);
  lk_scan_reuse_clear (&second);

  /* And the grown scan was kept in turn: nothing left to compute. */
  LkScanReuse third = scan_both (fx, b);
  g_assert_true (third.reused);
  g_assert_cmpuint (third.added, ==, 0);
  g_assert_cmpuint (third.kept, ==, 420);
  lk_scan_reuse_clear (&third);
}

/* Added faces among the kept ones, faces removed, the rest reordered: the
 * pairs are still the full scan's, numbered as the new library numbers its
 * faces. With ids and with content keys. */
static void
test_grow_shrink_reorder (Fixture *fx, gconstpointer data)
{
  for (int ids = 0; ids < 2; ids++)
    {
      g_autofree guint *faces = range (0, 360);
      g_autofree char *a = write_library (fx, "a", faces, 360, ids, G_MAXUINT, 0.9);
      LkScanReuse first = scan_both (fx, a);
      lk_scan_reuse_clear (&first);

      /* Shrink: every fifth face gone. */
      g_autoptr (GArray) some = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint g = 0; g < 360; g++)
        if (g % 5 != 3)
          g_array_append_val (some, g);
      g_autofree char *b
          = write_library (fx, "b", (guint *) some->data, some->len, ids, G_MAXUINT, 0.9);
      LkScanReuse shrunk = scan_both (fx, b);
      g_assert_true (shrunk.reused);
      g_assert_cmpuint (shrunk.removed, ==, 72);
      g_assert_cmpuint (shrunk.added, ==, 0);
      lk_scan_reuse_clear (&shrunk);

      /* Reorder: reversed. */
      g_autoptr (GArray) reversed = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint k = some->len; k-- > 0;)
        g_array_append_val (reversed, g_array_index (some, guint, k));
      g_autofree char *c
          = write_library (fx, "c", (guint *) reversed->data, reversed->len, ids, G_MAXUINT, 0.9);
      LkScanReuse turned = scan_both (fx, c);
      g_assert_true (turned.reused);
      g_assert_cmpuint (turned.kept, ==, 288);
      g_assert_cmpuint (turned.added, ==, 0);
      lk_scan_reuse_clear (&turned);

      /* Grow among them: new faces 400… interleaved, the removed ones back,
       * a third of the rest gone. */
      g_autoptr (GArray) mixed = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint g = 0; g < 360; g++)
        {
          if (g % 3 == 1)
            continue;
          g_array_append_val (mixed, g);
          if (g % 4 == 0)
            {
              guint added = 400 + g;
              g_array_append_val (mixed, added);
            }
        }
      g_autofree char *d
          = write_library (fx, "d", (guint *) mixed->data, mixed->len, ids, G_MAXUINT, 0.9);
      LkScanReuse grown = scan_both (fx, d);
      g_assert_true (grown.reused);
      g_assert_cmpuint (grown.added, >, 90);
      g_assert_cmpuint (grown.removed, >, 90);
      lk_scan_reuse_clear (&grown);
      g_unlink (fx->cache);
    }
}

/* A kept face whose row changed (same id), another bar: full scans. */
static void
test_changes_mean_a_full_scan (Fixture *fx, gconstpointer data)
{
  g_autofree guint *faces = range (0, 300);
  g_autofree char *a = write_library (fx, "a", faces, 300, TRUE, G_MAXUINT, 0.9);
  g_autofree char *b = write_library (fx, "b", faces, 300, TRUE, 17, 0.9);
  g_autofree char *c = write_library (fx, "c", faces, 300, TRUE, 17, 0.8);

  LkScanReuse first = scan_both (fx, a);
  lk_scan_reuse_clear (&first);
  LkScanReuse changed = scan_both (fx, b);
  g_assert_false (changed.reused);
  g_assert_nonnull (strstr (changed.why_full, "face 17 (id:f17) changed"));
  lk_scan_reuse_clear (&changed);
  LkScanReuse bar = scan_both (fx, c);
  g_assert_false (bar.reused);
  g_assert_nonnull (strstr (bar.why_full, "another calibration"));
  lk_scan_reuse_clear (&bar);
  LkScanReuse again = scan_both (fx, c);
  g_assert_true (again.reused);
  lk_scan_reuse_clear (&again);
}

/* Every truncation of a kept scan, and every one of a spread of single
 * flipped bytes, is a full scan with the full scan's answer: never a crash,
 * never pairs from a damaged file. */
static void
test_damaged_cache_means_a_full_scan (Fixture *fx, gconstpointer data)
{
  g_autofree guint *faces = range (0, 300);
  g_autofree char *a = write_library (fx, "a", faces, 260, FALSE, G_MAXUINT, 0.9);
  g_autofree char *b = write_library (fx, "b", faces, 300, FALSE, G_MAXUINT, 0.9);
  g_autoptr (GError) error = NULL;
  g_autofree char *good = NULL;
  gsize length;

  LkScanReuse first = scan_both (fx, a);
  lk_scan_reuse_clear (&first);
  g_file_get_contents (fx->cache, &good, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (length, >, 1000);

  for (gsize cut = 0; cut < length; cut += cut < 100 ? 7 : length / 13)
    {
      g_file_set_contents (fx->cache, good, (gssize) cut, &error);
      g_assert_no_error (error);
      LkScanReuse r = scan_both (fx, b);
      g_assert_false (r.reused);
      lk_scan_reuse_clear (&r);
    }
  for (gsize at = 0; at < length; at += at < 100 ? 3 : length / 17 + 1)
    {
      g_autofree char *bad = g_memdup2 (good, length);
      bad[at] ^= 0x10;
      g_file_set_contents (fx->cache, bad, (gssize) length, &error);
      g_assert_no_error (error);
      LkScanReuse r = scan_both (fx, b);
      g_assert_false (r.reused);
      g_assert_nonnull (r.why_full);
      lk_scan_reuse_clear (&r);
    }
  /* A folder where the file should be: a full scan, and nothing kept. */
  g_unlink (fx->cache);
  g_assert_cmpint (g_mkdir (fx->cache, 0700), ==, 0);
  g_autoptr (LkLibrary) library = load (b);
  LkScanReuse r = { 0 };
  g_autoptr (LkScanResult) result = lk_scan_cached (
      library, &library->calibration, library->min_probability, NULL, fx->cache, &r, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_false (r.reused);
  g_assert_false (r.saved);
  lk_scan_reuse_clear (&r);
}

/* The kept scan lives in the user's cache, named by the folder. */
static void
test_path_is_in_the_user_cache (void)
{
  g_autofree char *a = lk_scan_cache_path ("/photos/library");
  g_autofree char *b = lk_scan_cache_path ("/photos/library2");
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "likeness", "scans", NULL);

  g_assert_true (g_str_has_prefix (a, dir));
  g_assert_true (g_str_has_suffix (a, ".scan"));
  g_assert_cmpstr (a, !=, b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/scan-cache/grow-appended-reuses-and-equals-full-scan", test_grow_appended);
  ADD ("/scan-cache/grow-shrink-reorder-equal-full-scan", test_grow_shrink_reorder);
  ADD ("/scan-cache/changed-face-or-bar-means-full-scan", test_changes_mean_a_full_scan);
  ADD ("/scan-cache/damaged-or-truncated-cache-means-full-scan",
       test_damaged_cache_means_a_full_scan);
#undef ADD
  g_test_add_func ("/scan-cache/path-is-in-the-user-cache", test_path_is_in_the_user_cache);
  return g_test_run ();
}
