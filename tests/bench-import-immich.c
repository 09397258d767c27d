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
 * moved aside before every run, see `prepare` below) of
 *   A: THIS_CLI   import immich OUT --database URL --media MEDIA
 *   B: BEFORE_CLI import immich OUT --database URL --media MEDIA
 * as whole processes (and, with --also, a second race of A against C, a
 * third build such as today's main, on the same instance). Both read the
 * same server, which runs beside them (its CPU is in neither arm's CPU
 * figure; it competes for the cores in both). Before the race, one run of
 * each, untimed: both must import the same number of faces, and every
 * thumbnail of A's library is compared with B's (mean and largest channel
 * difference), so a faster import that cut other crops is seen here.
 *
 * Environment (set by meson): LIKENESS_CLI, MAKE_IMMICH, G_TEST_SRCDIR (for
 * tests/pglite); BENCH_BEFORE stands for --before.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library/lk-library.h"
#include "library/lk-thumbnail.h"
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

static char *
run (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_newv (
      argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, &error);
  g_assert_no_error (error);
  char *out = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  if (!g_subprocess_get_if_exited (p) || g_subprocess_get_exit_status (p) != 0)
    g_error ("%s %s failed:\n%s", argv[0], argv[1], out);
  return out;
}

/* Every thumbnail of `a` against `b`'s, face by face (both libraries hold
 * the same faces in the same order): how far apart the crops are. */
static void
compare_thumbnails (const char *a, const char *b)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) la = lk_library_load (a, &error);
  g_assert_no_error (error);
  g_autoptr (LkLibrary) lb = lk_library_load (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (la->count, ==, lb->count);
  double sum = 0;
  guint64 values = 0;
  int largest = 0;
  guint compared = 0, missing = 0;
  for (gsize k = 0; k < la->count; k++)
    {
      g_autofree char *pa = lk_library_thumbnail_path (la, k);
      g_autofree char *pb = lk_library_thumbnail_path (lb, k);
      if (pa == NULL || pb == NULL)
        {
          missing += (pa == NULL) != (pb == NULL);
          continue;
        }
      g_autoptr (LkThumbnail) ta = lk_thumbnail_load (pa, &error);
      g_assert_no_error (error);
      g_autoptr (LkThumbnail) tb = lk_thumbnail_load (pb, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (ta->width, ==, tb->width);
      g_assert_cmpuint (ta->height, ==, tb->height);
      for (guint y = 0; y < ta->height; y++)
        for (guint x = 0; x < ta->width * 4; x++)
          {
            int d = abs ((int) ta->pixels[y * ta->stride + x] - tb->pixels[y * tb->stride + x]);
            sum += d;
            values++;
            largest = MAX (largest, d);
          }
      compared++;
    }
  printf ("thumbnails: %u compared, %u in only one library; channel difference mean %.3f, "
          "largest %d (of 255)\n",
          compared, missing, values > 0 ? sum / values : 0.0, largest);
}

static gint64
tree_bytes (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  gint64 total = 0;
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      GStatBuf st;
      if (g_stat (path, &st) == 0)
        total += S_ISDIR (st.st_mode) ? tree_bytes (path) : st.st_size;
    }
  return total;
}

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
  g_autofree char *out = g_build_filename (root, "library", NULL);
  g_autofree char *out_before = g_build_filename (root, "library-before", NULL);
  lk_test_remove_tree (sample);
  lk_test_remove_tree (media);
  lk_test_remove_tree (out);
  lk_test_remove_tree (out_before);

  g_autofree char *faces_arg = g_strdup_printf ("%d", faces);
  g_free (run ((const char *const[]){ cli, "make-sample", sample, "--faces", faces_arg, "--seed",
                                      "7", "--no-photos", NULL }));

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
  g_free (run ((const char *const[]){ make_immich, sample, url, media, NULL }));

  g_autofree char *cpu = run ((const char *const[]){ cli, "cpu", NULL });
  g_auto (GStrv) cpu_lines = g_strsplit (cpu, "\n", 4);
  for (guint k = 0; k < 3 && cpu_lines[k] != NULL; k++)
    printf ("%s\n", cpu_lines[k]);

  const char *now[] = { cli, "import", "immich", out, "--database", url, "--media", media, NULL };
  const char *then[]
      = { before, "import", "immich", out, "--database", url, "--media", media, NULL };
  const char *then_kept[]
      = { before, "import", "immich", out_before, "--database", url, "--media", media, NULL };

  /* One run of each, untimed: the same faces, the same crops. */
  g_autofree char *now_out = run (now);
  g_autofree char *then_out = run (then_kept);
  guint n_now = lk_test_number_after (now_out, "Imported "),
        n_then = lk_test_number_after (then_out, "Imported ");
  printf ("faces imported: this build %u, --before %u%s\n", n_now, n_then,
          n_now == n_then ? "" : " (DIFFERENT)");
  g_autofree char *thumbs = g_build_filename (out, "thumbs", NULL);
  g_autofree char *thumbs_before = g_build_filename (out_before, "thumbs", NULL);
  printf ("thumbnails on disk: this build %.2f MB, --before %.2f MB\n", tree_bytes (thumbs) / 1e6,
          tree_bytes (thumbs_before) / 1e6);
  compare_thumbnails (out, out_before);

  /* Before every run the last run's library is moved aside, not removed:
   * removed, its 2,000 thumbnails' inodes would be freed a second before the
   * run, and ext4 without a journal (as on the machines this was measured
   * on: "mounted filesystem without journal") skips every inode freed in
   * the last 30 s when it allocates one (recently_deleted() in
   * find_inode_bit), so each new file scans past all of them: 0.5–0.9 s of
   * kernel time per run (23 % of the import's CPU, `perf record`) that a
   * user's import into a new folder never pays, the same in both arms. The
   * graveyard is removed at the end. */
  g_autofree char *graveyard = g_build_filename (root, "graveyard", NULL);
  g_assert_cmpint (g_mkdir_with_parents (graveyard, 0755), ==, 0);
  g_autofree char *quoted_out = g_shell_quote (out);
  g_autofree char *quoted_graveyard = g_shell_quote (graveyard);
  g_autofree char *prepare
      = g_strdup_printf ("[ ! -e %s ] || mv %s \"$(mktemp -d %s/run.XXXXXX)\"/library", quoted_out,
                         quoted_out, quoted_graveyard);
  g_autofree char *json = g_build_filename (root, "race.json", NULL);
  LkTestArm a, b;
  lk_test_race (cli, reps, prepare, now, then, json, &a, &b);
  printf ("\n");
  printf ("this build  wall %7.2f s  cpu %7.2f s  %7.1f faces/s  (%.1f faces per CPU-s)\n", a.wall,
          a.cpu, n_now / a.wall, n_now / a.cpu);
  printf ("--before    wall %7.2f s  cpu %7.2f s  %7.1f faces/s  (%.1f faces per CPU-s)\n", b.wall,
          b.cpu, n_then / b.wall, n_then / b.cpu);
  printf ("faces/s: %.2fx before's (medians of %d paired runs); CPU-s %.2fx before's\n",
          (n_now / a.wall) / (n_then / b.wall), reps, a.cpu / b.cpu);

  if (also != NULL)
    {
      const char *other[]
          = { also, "import", "immich", out, "--database", url, "--media", media, NULL };
      g_autofree char *other_out = run (other);
      guint n_other = lk_test_number_after (other_out, "Imported ");
      printf ("faces imported: --also %u%s\n", n_other, n_other == n_now ? "" : " (DIFFERENT)");
      g_autofree char *json_also = g_build_filename (root, "race-also.json", NULL);
      LkTestArm a2, c;
      lk_test_race (cli, reps, prepare, now, other, json_also, &a2, &c);
      printf ("\n");
      printf ("this build  wall %7.2f s  cpu %7.2f s  %7.1f faces/s  (%.1f faces per CPU-s)\n",
              a2.wall, a2.cpu, n_now / a2.wall, n_now / a2.cpu);
      printf ("--also      wall %7.2f s  cpu %7.2f s  %7.1f faces/s  (%.1f faces per CPU-s)\n",
              c.wall, c.cpu, n_other / c.wall, n_other / c.cpu);
      printf ("faces/s: %.2fx --also's (medians of %d paired runs); CPU-s %.2fx --also's\n",
              (n_now / a2.wall) / (n_other / c.wall), reps, a2.cpu / c.cpu);
    }

  lk_test_remove_tree (graveyard);
  g_subprocess_send_signal (server, SIGTERM);
  g_subprocess_wait (server, NULL, NULL);
  if (workdir == NULL)
    lk_test_remove_tree (root);
  return 0;
}
