/* test-cli-info — `likeness-cli info`: its figures, and its exit statuses
 *
 * Runs the built likeness-cli ($LIKENESS_CLI) on a library written here with
 * one thumbnail of each kind: decodable, corrupt, missing, and none.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "library/lk-library.h"
#include "lk-test-util.h"
#include "library/lk-thumbnail.h"

static const char manifest[]
    = "{ \"format\": \"likeness-library\", \"version\": 1,\n"
      "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 2, \"count\": 4 },\n"
      "  \"calibration\": { \"a\": 28.5, \"b\": -9.25 },\n"
      "  \"min_probability\": 0.8,\n"
      "  \"photos\": [ { \"id\": 7, \"path\": \"a.jpg\" } ],\n"
      "  \"faces\": [\n"
      "    { \"photo\": 7, \"crop_px\": 100, \"thumbnail\": \"thumbs/good.png\", \"label\": \"x\" "
      "},\n"
      "    { \"photo\": 7, \"crop_px\": 100, \"thumbnail\": \"thumbs/bad.png\", \"label\": \"y\" "
      "},\n"
      "    { \"photo\": 9, \"crop_px\": 100, \"thumbnail\": \"thumbs/gone.png\" },\n"
      "    { \"photo\": 11, \"crop_px\": 100, \"quality\": 0.2 } ] }\n";

static const float rows[8] = { 1, 0, 0, 1, -1, 0, 0, -1 };

typedef struct
{
  char *dir;
} Fixture;

static void
write_file (const char *dir, const char *name, const void *data, gssize length)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_file_set_contents (path, data, length, &error);
  g_assert_no_error (error);
}

static void
fixture_set_up (Fixture *fixture, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  fixture->dir = g_dir_make_tmp ("test-cli-info-XXXXXX", &error);
  g_assert_no_error (error);

  g_autofree char *thumbs = g_build_filename (fixture->dir, "thumbs", NULL);
  g_autofree char *good = g_build_filename (thumbs, "good.png", NULL);
  g_assert_cmpint (g_mkdir (thumbs, 0700), ==, 0);
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_new (8, 8);
  g_assert_true (lk_thumbnail_save (thumbnail, good, &error));
  g_assert_no_error (error);
  write_file (thumbs, "bad.png", "\x89PNG\r\n\x1a\nnot really", 18);

  write_file (fixture->dir, "library.json", manifest, -1);
  write_file (fixture->dir, "embeddings.f32", rows, sizeof rows);
}

static void
fixture_tear_down (Fixture *fixture, gconstpointer data)
{
  const char *names[]
      = { "thumbs/good.png", "thumbs/bad.png", "thumbs", "library.json", "embeddings.f32" };
  for (gsize k = 0; k < G_N_ELEMENTS (names); k++)
    {
      g_autofree char *path = g_build_filename (fixture->dir, names[k], NULL);
      g_remove (path);
    }
  g_assert_cmpint (g_rmdir (fixture->dir), ==, 0);
  g_free (fixture->dir);
}

static void
assert_has_line (const char *text, const char *line)
{
  g_autofree char *needle = g_strdup_printf ("\n%s\n", line);
  g_autofree char *framed = g_strdup_printf ("\n%s", text);
  if (strstr (framed, needle) == NULL)
    g_error ("output has no line “%s”:\n%s", line, text);
}

static void
test_prints_figures (Fixture *fixture, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "info", fixture->dir, NULL), ==, 0);
  g_autoptr (LkLibrary) library = lk_library_load (fixture->dir, &error);
  g_assert_no_error (error);
  g_autofree char *library_line = g_strdup_printf ("library=%s", library->folder);
  g_autofree char *fingerprint_line = g_strdup_printf ("fingerprint=%s", library->fingerprint);

  const char *lines[] = { library_line,
                          "faces=4",
                          "dim=2",
                          "normalized_on_disk=true",
                          "photos=3",
                          "photos_listed=1",
                          "gallery_faces=3",
                          "probe_faces=1",
                          "labelled_faces=2",
                          "calibration_a=28.5",
                          "calibration_b=-9.25",
                          "calibration_w_size=0",
                          "calibration_positive_pairs=0",
                          "calibration_negative_pairs=0",
                          "min_probability=0.8",
                          "min_gallery_quality=0.5",
                          "thumbnails_present=1",
                          "thumbnails_missing=1",
                          "thumbnails_bad=1",
                          "thumbnails_none=1",
                          fingerprint_line };
  for (gsize k = 0; k < G_N_ELEMENTS (lines); k++)
    assert_has_line (out, lines[k]);
  /* The bad thumbnail is named on stderr. */
  g_assert_nonnull (strstr (err, "faces[1].thumbnail"));
  g_assert_nonnull (strstr (err, "bad.png"));
}

static void
test_bad_library_exits_1 (Fixture *fixture, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *newer = g_strdup (manifest);
  memcpy (strstr (newer, "\"version\": 1"), "\"version\": 3", strlen ("\"version\": 3"));
  write_file (fixture->dir, "library.json", newer, -1);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "info", fixture->dir, NULL), ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_true (g_str_has_prefix (err, "likeness-cli: "));
  g_assert_nonnull (strstr (err, "library.json"));
  g_assert_nonnull (strstr (err, "version 3"));
  g_assert_nonnull (strstr (err, "version 1"));
}

static void
test_bad_usage_exits_2 (Fixture *fixture, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *out2 = NULL, *err2 = NULL;
  g_autofree char *out3 = NULL, *err3 = NULL;
  g_autofree char *out4 = NULL, *err4 = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "info", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "LIBRARY"));
  g_assert_cmpint (lk_test_run_cli (&out2, &err2, "info", fixture->dir, fixture->dir, NULL), ==, 2);
  g_assert_cmpint (lk_test_run_cli (&out3, &err3, "info", "--frobnicate", fixture->dir, NULL), ==,
                   2);
  g_assert_nonnull (strstr (err3, "--frobnicate"));
  g_assert_cmpint (lk_test_run_cli (&out4, &err4, "info", "--help", NULL), ==, 0);
  g_assert_nonnull (strstr (out4, "LIBRARY"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/cli-info/prints-figures", Fixture, NULL, fixture_set_up, test_prints_figures,
              fixture_tear_down);
  g_test_add ("/cli-info/bad-library-exits-1", Fixture, NULL, fixture_set_up,
              test_bad_library_exits_1, fixture_tear_down);
  g_test_add ("/cli-info/bad-usage-exits-2", Fixture, NULL, fixture_set_up, test_bad_usage_exits_2,
              fixture_tear_down);
  return g_test_run ();
}
