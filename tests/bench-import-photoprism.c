/* bench-import-photoprism — `likeness-cli import photoprism` of this build
 * raced against another build's (the code before issue 33's import work)
 * on one generated PhotoPrism instance: faces/s before and after (issue 33,
 * "Imports that use every core")
 *
 *   (cd OLD && git archive OLD_COMMIT | tar -x && meson setup _build -Dgui=disabled \
 *        && meson compile -C _build app/likeness-cli)
 *   BENCH_BEFORE=OLD/_build/app/likeness-cli meson test -C _build --benchmark -v \
 *       import-photoprism
 *   _build/tests/bench-import-photoprism --before OLD/_build/app/likeness-cli \
 *       [--also MAIN/_build/app/likeness-cli] [--faces 2000] [--reps 3] [--fit 2048] \
 *       [--workdir DIR]
 *
 * The instance: `likeness-cli make-sample S --faces FACES --seed 7
 * --no-photos`, written by tests/make-photoprism as PhotoPrism's SQLite
 * index (storage/index.db: every photo a file with its hash, every face a
 * marker with its box and its embedding as embeddings_json text) and its
 * cached fit thumbnails (PhotoPrism's default sizes: 720x720, 1280x1024,
 * 1920x1200 below the largest, FIT pixels on its long side; all as
 * make-immich's previews: a grey backdrop with fine noise and the faces
 * pasted at their boxes). No originals: the importer cuts from the cache
 * (this build from the smallest that serves each photo's faces, 6eb4255
 * from the largest).
 *
 * Then `likeness-cli race` (paired, interleaved, seeded order; the library
 * moved aside before every run: lk-bench-import.c says why) of
 *   A: THIS_CLI   import photoprism OUT --database INDEX --storage STORAGE
 *   B: BEFORE_CLI import photoprism OUT --database INDEX --storage STORAGE
 * as whole processes (and, with --also, a second race of A against C, a
 * third build such as today's main, on the same instance). Before the race,
 * one run of each, untimed, compares their faces and thumbnails.
 *
 * Environment (set by meson): LIKENESS_CLI, MAKE_PHOTOPRISM; BENCH_BEFORE
 * stands for --before.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "lk-bench-import.h"
#include "lk-test-util.h"

static int faces = 2000;
static int reps = 3;
static int fit = 2048;
static char *before = NULL;
static char *also = NULL;
static char *workdir = NULL;

static const GOptionEntry entries[] = {
  { "faces", 0, 0, G_OPTION_ARG_INT, &faces, "Faces of the generated instance (2000)", "N" },
  { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of the race (3)", "N" },
  { "fit", 0, 0, G_OPTION_ARG_INT, &fit,
    "Long side of the largest cached fit thumbnail (2048, PhotoPrism's default)", "PIXELS" },
  { "before", 0, 0, G_OPTION_ARG_FILENAME, &before,
    "The likeness-cli to race against (else $BENCH_BEFORE)", "CLI" },
  { "also", 0, 0, G_OPTION_ARG_FILENAME, &also,
    "A third likeness-cli (today's main) raced against this build too, on the same instance",
    "CLI" },
  { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &workdir,
    "Make the sample, instance and libraries here and keep them (an instance made there with "
    "the same --faces and --fit is used again)",
    "DIR" },
  { NULL },
};

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context
      = g_option_context_new ("— likeness-cli import photoprism, this build against another");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  const char *cli = g_getenv ("LIKENESS_CLI");
  const char *make_photoprism = g_getenv ("MAKE_PHOTOPRISM");
  if (before == NULL)
    before = g_strdup (g_getenv ("BENCH_BEFORE"));
  if (cli == NULL || make_photoprism == NULL || before == NULL)
    {
      g_printerr ("LIKENESS_CLI and MAKE_PHOTOPRISM must be set (meson test --benchmark sets "
                  "them), and --before or BENCH_BEFORE name the old likeness-cli\n");
      return 77; /* skipped: nothing to race against */
    }

  g_autofree char *root = workdir != NULL ? g_strdup (workdir)
                                          : g_dir_make_tmp ("lk-bench-photoprism-XXXXXX", &error);
  g_assert_no_error (error);
  g_mkdir_with_parents (root, 0755);
  g_autofree char *sample = g_build_filename (root, "sample", NULL);
  g_autofree char *instance = g_build_filename (root, "photoprism", NULL);
  g_autofree char *storage = g_build_filename (instance, "storage", NULL);
  g_autofree char *index = g_build_filename (storage, "index.db", NULL);
  g_autofree char *stamp = g_build_filename (root, "instance.txt", NULL);
  g_autofree char *made
      = g_strdup_printf ("make-sample --faces %d --seed 7; make-photoprism %d (fits 720, 1280, "
                         "1920 below it)\n",
                         faces, fit);
  g_autofree char *was = NULL;
  /* A --workdir's instance made with the same arguments is used again, so
   * the race can start when the machine is quiet rather than after the
   * minute that making it takes. */
  if (!g_file_get_contents (stamp, &was, NULL, NULL) || g_strcmp0 (was, made) != 0)
    {
      g_unlink (stamp);
      lk_test_remove_tree (sample);
      lk_test_remove_tree (instance);
      g_autofree char *faces_arg = g_strdup_printf ("%d", faces);
      g_autofree char *fit_arg = g_strdup_printf ("%d", fit);
      g_free (lk_bench_run ((const char *const[]){ cli, "make-sample", sample, "--faces", faces_arg,
                                                   "--seed", "7", "--no-photos", NULL }));
      g_free (
          lk_bench_run ((const char *const[]){ make_photoprism, sample, instance, fit_arg, NULL }));
      g_assert_true (g_file_set_contents (stamp, made, -1, &error));
      g_assert_no_error (error);
    }
  else
    printf ("the instance in %s again (%s)\n", root, made);

  const char *head[] = { "import", "photoprism", NULL };
  const char *tail[] = { "--database", index, "--storage", storage, NULL };
  lk_bench_import_race (cli, before, also, reps, root, head, tail);

  if (workdir == NULL)
    lk_test_remove_tree (root);
  return 0;
}
