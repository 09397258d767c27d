/* test-import-formats — the photo importer reads PNG, TIFF, WebP, HEIF and
 * AVIF as it reads JPEG, and names the files it cannot read (issue 31)
 *
 * Real photographs (dlib's example photos, from Debian's dlib source package:
 * .ci/dlib-source) are written in each format by Debian's own tools: PNG and
 * TIFF losslessly by gdk-pixbuf (the JPEG's decoded pixels), WebP by `cwebp`
 * (package webp), HEIF and AVIF by `heif-enc` (libheif-examples), lossy at
 * quality 90, as a camera or a phone writes them. Imported together with the
 * JPEG they came from, each must give the JPEG's faces: the same number,
 * each box over the JPEG's (the tolerance is where the test says why), and
 * the same person by the ResNet's embedding. With a gdk-pixbuf that has no
 * loader for a format (GDK_PIXBUF_MODULE_FILE naming an empty cache: only
 * the built-in JPEG and PNG are left), the import goes on and its summary
 * names each skipped file and why.
 *
 * Without the photos, the models or the tools the tests are skipped, unless
 * LK_TEST_REQUIRE_DLIB is set (as .ci/check sets it, after .ci/deps installed
 * the tools and the loaders): then they fail.
 */
#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "detect/lk-detect-dlib.h"
#include "import/lk-import-photos.h"
#include "library/lk-library.h"
#include "lk-test-util.h"

/* Three people of a PASCAL VOC photo (500 × 375), one of dlib's johns
 * (150 × 150) and six of another VOC photo (500 × 332): big and small
 * faces, ten in all (the suite runs under ASan too, and dlib's ResNet costs
 * ~50 ms a face natively). */
static const char *const sources[] = {
  "faces/2008_001322.jpg",
  "johns/John_Salley/000200_02159354.jpg",
  "faces/2008_002470.jpg",
};

/* The lossy formats and how Debian's tools write them. */
typedef struct
{
  const char *extension;
  const char *tool;
  const char *format; /* gdk-pixbuf's name for it */
} Lossy;

static const Lossy lossy[] = {
  { "webp", "cwebp", "webp" },
  { "heic", "heif-enc", "heif" },
  { "avif", "heif-enc", "avif" },
};

static char *dlib_dir;

static gboolean
skip_or_fail (const char *why)
{
  if (g_getenv ("LK_TEST_REQUIRE_DLIB") != NULL)
    g_error ("%s", why);
  g_test_skip (why);
  return FALSE;
}

static gboolean
have_everything (void)
{
  for (gsize k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      g_autofree char *probe = g_build_filename (dlib_dir, "photos", sources[k], NULL);
      if (!lk_test_have_dlib (probe))
        return FALSE;
    }
  for (gsize k = 0; k < G_N_ELEMENTS (lossy); k++)
    {
      g_autofree char *tool = g_find_program_in_path (lossy[k].tool);
      if (tool == NULL)
        {
          g_autofree char *why = g_strdup_printf (
              "no %s (.ci/deps installs it: webp, libheif-examples)", lossy[k].tool);
          return skip_or_fail (why);
        }
    }
  return TRUE;
}

static void
run (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s%s", argv[0], out, err);
}

/* sources[k] as photos/k.EXT for every format (the JPEG copied as it is);
 * `formats` NULL-terminated, "jpg" first. */
static void
write_formats (const char *photos, const char *const *formats)
{
  for (gsize k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      g_autofree char *from = g_build_filename (dlib_dir, "photos", sources[k], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkPixbuf) pixels = gdk_pixbuf_new_from_file (from, &error);
      g_assert_no_error (error);
      for (const char *const *f = formats; *f != NULL; f++)
        {
          g_autofree char *name = g_strdup_printf ("%zu.%s", k, *f);
          g_autofree char *to = g_build_filename (photos, name, NULL);
          if (strcmp (*f, "jpg") == 0)
            {
              g_autofree char *data = NULL;
              gsize length = 0;
              g_assert_true (g_file_get_contents (from, &data, &length, NULL));
              g_assert_true (g_file_set_contents (to, data, (gssize) length, NULL));
            }
          else if (strcmp (*f, "png") == 0 || strcmp (*f, "tiff") == 0)
            {
              g_assert_true (gdk_pixbuf_save (pixels, to, *f, &error, NULL));
              g_assert_no_error (error);
            }
          else if (strcmp (*f, "webp") == 0)
            run ((const char *const[]){ "cwebp", "-quiet", "-q", "90", from, "-o", to, NULL });
          else if (strcmp (*f, "heic") == 0)
            run ((const char *const[]){ "heif-enc", "-q", "90", "-o", to, from, NULL });
          else if (strcmp (*f, "avif") == 0)
            run ((const char *const[]){ "heif-enc", "-A", "-q", "90", "-o", to, from, NULL });
          else
            g_assert_not_reached ();
        }
    }
}

/* Every format the tests write, "jpg" first. */
static const char *const formats[] = { "jpg", "png", "tiff", "webp", "heic", "avif", NULL };

/* Each test's own temporary root: `photos` holding every source in every
 * format (write_formats), and the place of its library (`library`, not
 * made). Without the photos, the models or the tools the setup skips the
 * test (have_everything) and makes nothing. */
typedef struct
{
  gboolean skipped;
  char *root, *photos, *outdir;
} Formats;

static void
formats_setup (Formats *fx, gconstpointer data)
{
  if (!have_everything ())
    {
      fx->skipped = TRUE;
      return;
    }
  fx->photos = lk_test_make_dir ("photos");
  fx->root = g_path_get_dirname (fx->photos);
  fx->outdir = g_build_filename (fx->root, "library", NULL);
  write_formats (fx->photos, formats);
}

static void
formats_teardown (Formats *fx, gconstpointer data)
{
  if (fx->root != NULL)
    lk_test_remove_tree (fx->root);
  g_free (fx->root);
  g_free (fx->photos);
  g_free (fx->outdir);
}

static double
iou (const double *a, const double *b)
{
  double x0 = MAX (a[0], b[0]), y0 = MAX (a[1], b[1]);
  double x1 = MIN (a[0] + a[2], b[0] + b[2]), y1 = MIN (a[1] + a[3], b[1] + b[3]);
  double inter = MAX (0, x1 - x0) * MAX (0, y1 - y0);
  return inter / (a[2] * a[3] + b[2] * b[3] - inter);
}

/* The faces of the photo whose source_id is `id`, in library order. */
static GArray *
faces_of (const LkLibrary *library, char **ids, const char *id)
{
  GArray *faces = g_array_new (FALSE, FALSE, sizeof (gsize));
  for (gsize f = 0; f < library->count; f++)
    if (strcmp (ids[library->photo[f]], id) == 0)
      g_array_append_val (faces, f);
  return faces;
}

static void
test_formats_find_the_jpegs_faces (Formats *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  for (const char *const *f = formats + 1; *f != NULL; f++)
    {
      g_autofree char *formats_read = lk_import_photos_formats ();
      const char *name = strcmp (*f, "heic") == 0 ? "heif" : *f;
      if (strstr (formats_read, name) == NULL)
        {
          g_autofree char *why = g_strdup_printf (
              "this gdk-pixbuf reads %s, not %s (.ci/deps installs webp-pixbuf-loader and "
              "heif-gdk-pixbuf)",
              formats_read, name);
          skip_or_fail (why);
          return;
        }
    }
  const char *photos = fx->photos, *outdir = fx->outdir;
  const char *folders[] = { photos, NULL };
  LkImportSummary summary = { 0 };
  LkImportPhotosOptions options = { folders, LK_DETECTOR_HOG, 2, NULL, NULL, &summary };
  g_autoptr (GError) error = NULL;
  g_assert_true (lk_import_photos (outdir, &options, NULL, &error));
  g_assert_no_error (error);
  for (guint k = 0; summary.problems != NULL && k < summary.problems->len; k++)
    g_test_message ("problem: %s", (const char *) g_ptr_array_index (summary.problems, k));
  g_assert_null (summary.problems);
  g_assert_cmpuint (summary.photos_searched, ==, G_N_ELEMENTS (sources) * 6);

  g_autoptr (LkLibrary) library = lk_library_load (outdir, &error);
  g_assert_no_error (error);
  g_auto (GStrv) ids = lk_test_source_ids (outdir);
  for (gsize k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      g_autofree char *jpeg_id = g_strdup_printf ("%zu.jpg", k);
      g_autoptr (GArray) jpeg = faces_of (library, ids, jpeg_id);
      g_assert_cmpuint (jpeg->len, >=, 1);
      for (const char *const *f = formats + 1; *f != NULL; f++)
        {
          g_autofree char *id = g_strdup_printf ("%zu.%s", k, *f);
          g_autoptr (GArray) other = faces_of (library, ids, id);
          g_assert_cmpuint (other->len, ==, jpeg->len);
          gboolean lossless = strcmp (*f, "png") == 0 || strcmp (*f, "tiff") == 0;
          for (guint o = 0; o < other->len; o++)
            {
              gsize face = g_array_index (other, gsize, o);
              const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
              g_assert_true (library->has_box[face]);
              /* The JPEG's face this one overlaps most. */
              gsize best = 0;
              double best_iou = -1;
              for (guint j = 0; j < jpeg->len; j++)
                {
                  gsize jf = g_array_index (jpeg, gsize, j);
                  double v = iou (library->box[face], library->box[jf]);
                  if (v > best_iou)
                    {
                      best_iou = v;
                      best = jf;
                    }
                }
              double cos = lk_test_cosine (library, face, best);
              g_test_message ("%s face %u: %.0f,%.0f %.0f×%.0f, IoU %.3f with the JPEG's, "
                              "cosine %.4f",
                              id, o, library->box[face][0], library->box[face][1],
                              library->box[face][2], library->box[face][3], best_iou, cos);
              g_assert_cmpint (photo->width, ==,
                               lk_library_find_photo (library, library->photo[best])->width);
              if (lossless)
                {
                  /* The JPEG's decoded pixels, kept exactly: the same box
                   * and embedding, bit for bit. */
                  g_assert_cmpmem (library->box[face], sizeof library->box[face],
                                   library->box[best], sizeof library->box[best]);
                  g_assert_cmpmem (lk_library_row (library, face), library->dim * sizeof (float),
                                   lk_library_row (library, best), library->dim * sizeof (float));
                }
              else
                {
                  /* Re-encoded at quality 90, the pixels move by a few
                   * levels. dlib's HOG detector scans a pyramid whose
                   * levels are 5/6 of each other, in 8-pixel cells, so a
                   * face can be found one level up or down: a box 6/5 the
                   * size, IoU (5/6)^2 = 0.694. Measured (2026-12-05, these
                   * three photos and dlib's bald_guys.jpg, 34 faces, in all
                   * three formats): every face found again; IoU 1.000 here,
                   * 0.694 for one face of bald_guys (that pyramid step),
                   * 0.987 on average there; no box overlaps a second face
                   * of its photo at all (IoU 0); cosine with the JPEG's
                   * embedding >= 0.9940. So 0.65 admits one pyramid step
                   * and nothing near another face; 0.98 is far above two
                   * different people (0.72-0.94 on tests/photos' 123 faces,
                   * the same person 0.93-0.99). */
                  g_assert_cmpfloat (best_iou, >=, 0.65);
                  g_assert_cmpfloat (cos, >=, 0.98);
                }
            }
        }
    }
  lk_import_summary_clear (&summary);
}

/* A gdk-pixbuf without the WebP, HEIF, AVIF and TIFF loaders (an empty
 * loader cache): the JPEG and PNG are imported, each of the others is
 * counted and named with its format, that no loader reads it, and the
 * package that adds one; the formats read say so too. */
static void
test_missing_loader_names_skipped_files (Formats *fx, gconstpointer data)
{
  if (fx->skipped)
    return;
  const char *photos = fx->photos, *outdir = fx->outdir;
  g_autofree char *cache = g_build_filename (fx->root, "loaders.cache", NULL);
  /* One source photo is enough here. */
  for (gsize k = 1; k < G_N_ELEMENTS (sources); k++)
    for (const char *const *f = formats; *f != NULL; f++)
      {
        g_autofree char *name = g_strdup_printf ("%zu.%s", k, *f);
        g_autofree char *path = g_build_filename (photos, name, NULL);
        g_assert_cmpint (g_unlink (path), ==, 0);
      }
  g_assert_true (g_file_set_contents (cache, "", 0, NULL));

  /* In the child's environment only (setenv is not thread-safe, and this
   * process has dlib's threads). */
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "GDK_PIXBUF_MODULE_FILE", cache, TRUE);
  const char *argv[] = { g_getenv ("LIKENESS_CLI"),
                         "import",
                         "photos",
                         outdir,
                         "--photos",
                         photos,
                         "--threads",
                         "1",
                         NULL };
  g_assert_nonnull (argv[0]);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error));
  g_assert_no_error (error);
  g_test_message ("stdout:\n%s\nstderr:\n%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "photos_searched=2 "));
  g_assert_nonnull (strstr (out, "no_loader=4 "));
  g_assert_nonnull (strstr (out, "not_image=0 "));
  g_assert_nonnull (strstr (out, "formats read: jpeg, png\n"));
  static const struct
  {
    const char *file, *format, *package;
  } skipped[] = {
    { "0.tiff", "TIFF", "libgdk-pixbuf-2.0-0" },
    { "0.webp", "WebP", "webp-pixbuf-loader" },
    { "0.heic", "HEIF", "heif-gdk-pixbuf" },
    { "0.avif", "AVIF", "heif-gdk-pixbuf" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (skipped); k++)
    {
      g_autofree char *path = g_build_filename (photos, skipped[k].file, NULL);
      g_autofree char *line = g_strdup_printf (
          "  %s: a photo in %s, a format this build has no gdk-pixbuf loader for: skipped (on "
          "Debian and Ubuntu the package %s adds one)\n",
          path, skipped[k].format, skipped[k].package);
      g_assert_nonnull (strstr (out, line));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *env = g_getenv ("LK_TEST_DLIB");
  dlib_dir = g_strdup (env != NULL ? env : "_build-dlib");
  g_autofree char *models = g_build_filename (dlib_dir, "models", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);
  g_setenv ("XDG_DATA_HOME", "/nonexistent/likeness-test", TRUE);

  g_test_add ("/import-formats/formats-find-the-jpegs-faces", Formats, NULL, formats_setup,
              test_formats_find_the_jpegs_faces, formats_teardown);
  g_test_add ("/import-formats/missing-loader-names-skipped-files", Formats, NULL, formats_setup,
              test_missing_loader_names_skipped_files, formats_teardown);
  int status = g_test_run ();
  g_free (dlib_dir);
  return status;
}
