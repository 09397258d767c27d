/* lk-cli-make-sample.c — `likeness-cli make-sample OUTDIR --faces N`
 *
 * A thin front to lk_sample_write: usage errors (a missing or out-of-range
 * option) exit 2 before anything is touched; what the engine refuses (a
 * folder that is not a library, a dimension out of range, a write that fails)
 * exits 1 with the engine's message.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "library/lk-sample.h"

/* Like the importers' progress: one line on stderr, rewritten in place. */
static void
on_progress (gsize done, gsize total, gpointer data)
{
  gint64 *start = data;
  double seconds = (double) (g_get_monotonic_time () - *start) / G_USEC_PER_SEC;
  double rate = seconds > 0 ? (double) done / seconds : 0;

  fputc ('\r', stderr);
  if (done < total && rate > 0)
    fprintf (stderr,
             ngettext ("%zu of %zu photo drawn, %.0f/s, %.0f s left  ",
                       "%zu of %zu photos drawn, %.0f/s, %.0f s left  ", total),
             done, total, rate, (double) (total - done) / rate);
  else
    fprintf (stderr, ngettext ("%zu of %zu photo drawn  ", "%zu of %zu photos drawn  ", total),
             done, total);
  if (done >= total)
    fputc ('\n', stderr);
}

int
lk_cli_make_sample (int argc, char **argv)
{
  gint64 faces = -1;
  gint64 seed = 1;
  int dim = LK_SAMPLE_DEFAULT_DIM;
  gboolean no_thumbnails = FALSE;
  gboolean no_photos = FALSE;
  g_autofree char *model = NULL;
  g_autofree char *family = NULL;
  const GOptionEntry entries[] = {
    { "model", 0, 0, G_OPTION_ARG_STRING, &model,
      N_ ("Statistics of the embeddings: arcface (default), facenet (one person ≈ 0.84) or dlib "
          "(strangers ≈ 0.83, one person ≈ 0.975: dlib's ResNet on real photographs)"),
      "MODEL" },
    { "family", 0, 0, G_OPTION_ARG_STRING, &family,
      N_ ("How hard the people are: personal (default), lookalikes, bridges (blurred faces between "
          "two people) or groups (mostly group photos)"),
      "FAMILY" },
    { "faces", 'n', 0, G_OPTION_ARG_INT64, &faces, N_ ("Number of faces (required)"), "N" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, N_ ("Random seed; one seed, one library (1)"),
      "S" },
    { "dim", 'd', 0, G_OPTION_ARG_INT, &dim, N_ ("Floats per embedding (512)"), "D" },
    { "no-thumbnails", 0, 0, G_OPTION_ARG_NONE, &no_thumbnails,
      N_ ("Do not draw thumbnails (nor photos, which are made of them)"), NULL },
    { "no-photos", 0, 0, G_OPTION_ARG_NONE, &no_photos,
      N_ ("Do not write the photos that photos[].path names"), NULL },
    { NULL },
  };

  if (!lk_cli_parse (
          "make-sample", "OUTDIR",
          N_ ("Write a synthetic library with ground-truth labels into OUTDIR: people of\n"
              "very unequal sizes, group photos, look-alikes and blurred faces, with\n"
              "embeddings that behave like ArcFace's, drawn face thumbnails, and a\n"
              "photo per photos[].path with its faces at their boxes.\n"
              "OUTDIR must be new, empty, or a Likeness library (which is replaced)."),
          entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  if (faces < 0 || faces > LK_SAMPLE_MAX_FACES)
    {
      fprintf (stderr, _ ("likeness-cli make-sample: --faces N is required, N from 0 to %d\n"),
               LK_SAMPLE_MAX_FACES);
      return LK_CLI_USAGE;
    }
  if (seed < 0 || dim <= 0)
    {
      fprintf (stderr, _ ("likeness-cli make-sample: --seed must be ≥ 0 and --dim > 0\n"));
      return LK_CLI_USAGE;
    }

  LkSampleOptions options = LK_SAMPLE_OPTIONS_DEFAULT;
  g_autoptr (GError) error = NULL;

  options.faces = (gsize) faces;
  options.seed = (guint64) seed;
  options.dim = (guint) dim;
  options.thumbnails = !no_thumbnails;
  options.photos = !no_thumbnails && !no_photos;
  if (model == NULL || strcmp (model, "arcface") == 0)
    options.model = LK_SAMPLE_MODEL_ARCFACE;
  else if (strcmp (model, "facenet") == 0)
    options.model = LK_SAMPLE_MODEL_FACENET;
  else if (strcmp (model, "dlib") == 0)
    options.model = LK_SAMPLE_MODEL_DLIB;
  else
    {
      fprintf (stderr, _ ("likeness-cli make-sample: --model %s is not arcface, facenet or dlib\n"),
               model);
      return LK_CLI_USAGE;
    }
  static const char *const families[] = { "personal", "lookalikes", "bridges", "groups" };
  options.family = LK_SAMPLE_FAMILY_PERSONAL;
  for (guint k = 0; family != NULL && k < G_N_ELEMENTS (families); k++)
    if (strcmp (family, families[k]) == 0)
      options.family = (LkSampleFamily) k;
  if (family != NULL && strcmp (family, families[options.family]) != 0)
    {
      fprintf (stderr,
               _ ("likeness-cli make-sample: --family %s is not personal, lookalikes, bridges or "
                  "groups\n"),
               family);
      return LK_CLI_USAGE;
    }
  gint64 start = g_get_monotonic_time ();
  options.progress = on_progress;
  options.progress_data = &start;
  if (!lk_sample_write (argv[1], &options, &error))
    return lk_cli_fail (error);
  return LK_CLI_OK;
}
