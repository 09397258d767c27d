/* bench-import-immich — `likeness-cli import immich` of this build raced
 * against another build's (the code before issue 33's import work) on one
 * generated Immich instance: faces/s before and after (issue 33, "Imports
 * that use every core")
 *
 *   npm ci --prefix tests/pglite          # once: PGlite, PostgreSQL + pgvector
 *   (cd OLD && git archive OLD_COMMIT | tar -x && meson setup _build -Dgui=disabled \
 *        && meson compile -C _build app/likeness-cli)
 *   meson test -C _build --benchmark -v import-immich     # needs
 * BENCH_BEFORE=OLD/_build/app/likeness-cli
 *   _build/tests/bench-import-immich --before OLD/_build/app/likeness-cli \
 *       [--also MAIN/_build/app/likeness-cli] [--faces 4000] [--reps 3] [--workdir DIR]
 *
 * The instance: `likeness-cli make-sample S --faces FACES --seed 7`, served by
 * PGlite (tests/pglite/server.mjs, a real PostgreSQL 17 with pgvector in
 * WebAssembly) on 127.0.0.1 and filled by tests/make-immich (every photo an
 * asset with a 1440-pixel JPEG preview of a grey backdrop with fine noise and
 * its faces pasted at their boxes, every face an asset_face with its
 * embedding), as the README's 20,000-face figure was made.
 *
 * Then `likeness-cli race` (paired, interleaved, seeded order; the library
 * moved aside before every run: lk-bench-import.c says why) of
 *   A: THIS_CLI   import immich OUT --database URL --media MEDIA
 *   B: BEFORE_CLI import immich OUT --database URL --media MEDIA
 * as whole processes (and, with --also, a second race of A against C, a
 * third build such as today's main, on the same instance). Both read the
 * same server, which runs beside them (its CPU is in neither arm's CPU
 * figure; it competes for the cores in both). Before the race, one run of
 * each, untimed, compares their faces and thumbnails (lk-bench-import.c).
 *
 * Environment (set by meson): LIKENESS_CLI, MAKE_IMMICH, G_TEST_SRCDIR (for
 * tests/pglite); BENCH_BEFORE stands for --before.
 */
#include "config.h"

#include <gio/gio.h>
#include <signal.h>
#include <stdio.h>

#include "lk-bench-import.h"
#include "lk-test-util.h"

static int faces = 4000;
static int reps = 3;
static char *before = NULL;
static char *also = NULL;
static char *workdir = NULL;

static const GOptionEntry entries[] = {
  { "faces", 0, 0, G_OPTION_ARG_INT, &faces, "Faces of the generated instance (4000)", "N" },
  { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of the race (3)", "N" },
  { "before", 0, 0, G_OPTION_ARG_FILENAME, &before,
    "The likeness-cli to race against (else $BENCH_BEFORE)", "CLI" },
  { "also", 0, 0, G_OPTION_ARG_FILENAME, &also,
    "A third likeness-cli (today's main) raced against this build too, on the same instance",
    "CLI" },
  { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &workdir,
    "Make the sample, media and libraries here and keep them", "DIR" },
  { NULL },
};

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context
      = g_option_context_new ("— likeness-cli import immich, this build against another");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  const char *cli = g_getenv ("LIKENESS_CLI");
  const char *make_immich = g_getenv ("MAKE_IMMICH");
  const char *srcdir = g_getenv ("G_TEST_SRCDIR");
  if (before == NULL)
    before = g_strdup (g_getenv ("BENCH_BEFORE"));
  if (cli == NULL || make_immich == NULL || srcdir == NULL || before == NULL)
    {
      g_printerr ("LIKENESS_CLI, MAKE_IMMICH and G_TEST_SRCDIR must be set (meson test "
                  "--benchmark sets them), and --before or BENCH_BEFORE name the old "
                  "likeness-cli\n");
      return 77; /* skipped: nothing to race against */
    }
  g_autofree char *script = g_build_filename (srcdir, "pglite", "server.mjs", NULL);
  g_autofree char *modules = g_build_filename (srcdir, "pglite", "node_modules", NULL);
  g_autofree char *node = g_find_program_in_path ("node");
  if (node == NULL || !g_file_test (modules, G_FILE_TEST_IS_DIR))
    {
      g_printerr ("needs node and `npm ci --prefix tests/pglite`\n");
      return 77;
    }

  g_autofree char *root
      = workdir != NULL ? g_strdup (workdir) : g_dir_make_tmp ("lk-bench-immich-XXXXXX", &error);
  g_assert_no_error (error);
  g_mkdir_with_parents (root, 0755);
  g_autofree char *sample = g_build_filename (root, "sample", NULL);
  g_autofree char *media = g_build_filename (root, "media", NULL);
  lk_test_remove_tree (sample);
  lk_test_remove_tree (media);

  g_autofree char *faces_arg = g_strdup_printf ("%d", faces);
  g_free (lk_bench_run ((const char *const[]){ cli, "make-sample", sample, "--faces", faces_arg,
                                               "--seed", "7", "--no-photos", NULL }));

  g_autoptr (GSubprocess) server
      = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          node, script, "0", NULL);
  g_assert_no_error (error);
  g_autoptr (GDataInputStream) server_out
      = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server));
  g_autofree char *line = g_data_input_stream_read_line (server_out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);
  g_autofree char *url
      = g_strdup_printf ("postgresql://postgres:secret@%s/postgres?sslmode=disable", line);
  g_free (lk_bench_run ((const char *const[]){ make_immich, sample, url, media, NULL }));

  const char *head[] = { "import", "immich", NULL };
  const char *tail[] = { "--database", url, "--media", media, NULL };
  lk_bench_import_race (cli, before, also, reps, root, head, tail);

  g_subprocess_send_signal (server, SIGTERM);
  g_subprocess_wait (server, NULL, NULL);
  if (workdir == NULL)
    lk_test_remove_tree (root);
  return 0;
}
