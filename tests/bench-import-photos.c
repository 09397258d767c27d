/* bench-import-photos — `likeness-cli import photos` against dlib's own
 * example pipeline, in one run (issue 31's speed point; issue 33's faces/s)
 *
 *   meson test -C _build --benchmark -v import-photos
 *   _build/tests/bench-import-photos [--copies 25] [--side 1400] [--reps 3]
 *       [--threads 2] [--before OLD_LIKENESS_CLI] [--workdir DIR]
 *
 * The photos: dlib's examples/faces (Debian's dlib source package, fetched by
 * .ci/dlib-source into $LK_TEST_DLIB: 11 photos of people, 67 faces, and one
 * of dogs), scaled to SIDE pixels on their longer side (1400: 1.5 MP for
 * 4:3, the 1–2 MP) and saved as JPEG (quality 90), each copied
 * COPIES times with a few bytes after its end-of-image marker so every copy
 * is a photo of its own to the importer (its journal knows photos by their
 * content). 25 copies: 300 photos, 1,675 faces.
 *
 * Then `likeness-cli race` (paired, interleaved, seeded order; each run from
 * nothing: the library and its journal removed before every run) of
 *   A: likeness-cli import photos OUT --photos PHOTOS --threads THREADS
 *   B: OPENBLAS_NUM_THREADS=1 bench-dlib-example MODELS PHOTOS (one thread:
 *      load, detect, shape, chip, embed; tests/bench-dlib-example.cpp)
 * as whole processes, the models' loading counted on both sides. The race
 * prints wall and CPU (user + system) of both; this prints photos/s and
 * faces/s and the ratios. With --before, a second race of the same command
 * against another build of likeness-cli (main's, say): faces/s before and
 * after.
 *
 * Environment (set by meson): LIKENESS_CLI, LK_TEST_DLIB, BENCH_DLIB_EXAMPLE.
 *
 *   bench-import-photos --tiny 100000 [--workdir DIR]
 *
 * instead imports a folder of N tiny files named .jpg (16 bytes of text
 * each, all in one folder) and one real photo, then a tenth of them, and
 * prints wall and CPU time and peak RSS of each: the walk and the refusals
 * must grow linearly (issue 31: "a folder of 100,000 tiny files").
 */
#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lk-test-util.h"

static int copies = 25;
static int side = 1400;
static int reps = 3;
static int threads = 2;
static char *before = NULL;
static char *workdir = NULL;
static int tiny = 0;

static const GOptionEntry entries[] = {
  { "copies", 0, 0, G_OPTION_ARG_INT, &copies, "Copies of each photo (25)", "N" },
  { "side", 0, 0, G_OPTION_ARG_INT, &side, "Longer side of the photos in pixels (1400)", "PX" },
  { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of each race (3)", "N" },
  { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "likeness-cli --threads (2)", "N" },
  { "before", 0, 0, G_OPTION_ARG_FILENAME, &before,
    "Also race against this likeness-cli (faces/s before and after)", "CLI" },
  { "tiny", 0, 0, G_OPTION_ARG_INT, &tiny,
    "Import N tiny non-photos and one photo instead (and N/10): linear?", "N" },
  { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &workdir,
    "Make the photos and libraries here and keep them", "DIR" },
  { NULL },
};

/* Writes the photo set into `dir`; returns the number of photos. */
static guint
make_photos (const char *dlib, const char *dir)
{
  g_autofree char *faces = g_build_filename (dlib, "photos", "faces", NULL);
  g_autoptr (GDir) d = g_dir_open (faces, 0, NULL);
  if (d == NULL)
    g_error ("%s is missing: run .ci/dlib-source", faces);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".jpg"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);

  guint n = 0;
  for (guint k = 0; k < names->len; k++)
    {
      g_autofree char *path = g_build_filename (faces, g_ptr_array_index (names, k), NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkPixbuf) photo = gdk_pixbuf_new_from_file (path, &error);
      g_assert_no_error (error);
      int w = gdk_pixbuf_get_width (photo), h = gdk_pixbuf_get_height (photo);
      double scale = (double) side / MAX (w, h);
      g_autoptr (GdkPixbuf) scaled = gdk_pixbuf_scale_simple (
          photo, (int) (w * scale + 0.5), (int) (h * scale + 0.5), GDK_INTERP_HYPER);
      g_autofree char *jpeg = NULL;
      gsize length = 0;
      g_assert_true (gdk_pixbuf_save_to_buffer (scaled, &jpeg, &length, "jpeg", &error, "quality",
                                                "90", NULL));
      for (int c = 0; c < copies; c++)
        {
          g_autofree char *sub = g_strdup_printf ("%s/copy%03d", dir, c);
          g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
          g_autofree char *to = g_build_filename (sub, g_ptr_array_index (names, k), NULL);
          GString *bytes = g_string_new_len (jpeg, (gssize) length);
          g_string_append_printf (bytes, "bench copy %d", c);
          g_assert_true (g_file_set_contents (to, bytes->str, (gssize) bytes->len, &error));
          g_string_free (bytes, TRUE);
          n++;
        }
    }
  return n;
}

/* Runs argv, returns its stdout (the test fails when it fails). */
static char *
run (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_newv (
      argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  char *out = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  if (!g_subprocess_get_if_exited (p) || g_subprocess_get_exit_status (p) != 0)
    g_error ("%s failed:\n%s", argv[0], out);
  return out;
}

static void
report (const char *what, const LkTestArm *arm, guint photos, guint faces)
{
  printf (
      "%-34s wall %7.2f s  cpu %7.2f s  %6.2f photos/s  %6.2f faces/s  (%.2f faces per CPU-s)\n",
      what, arm->wall, arm->cpu, photos / arm->wall, faces / arm->wall, faces / arm->cpu);
}

/* One run of `argv` (its output discarded): wall, CPU and peak RSS. */
static void
run_measured (const char *const *argv, double *wall, double *cpu, long *rss_kb, int *status)
{
  gint64 start = g_get_monotonic_time ();
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int null = open ("/dev/null", O_WRONLY);
      dup2 (null, 1);
      dup2 (null, 2);
      execv (argv[0], (char *const *) argv);
      _exit (127);
    }
  struct rusage ru;
  g_assert_cmpint (wait4 (pid, status, 0, &ru), ==, pid);
  *wall = (g_get_monotonic_time () - start) / 1e6;
  *cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec
         + ru.ru_stime.tv_usec / 1e6;
  *rss_kb = ru.ru_maxrss;
}

/* --tiny: N tiny files and one photo, then N / 10. */
static int
bench_tiny (const char *cli, const char *dlib, const char *root)
{
  g_autofree char *photo
      = g_build_filename (dlib, "photos", "johns", "John_Simm", "000310_00470511.jpg", NULL);
  g_autofree char *photo_bytes = NULL;
  gsize photo_length = 0;
  g_assert_true (g_file_get_contents (photo, &photo_bytes, &photo_length, NULL));
  int sizes[] = { tiny / 10, tiny };
  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      g_autofree char *folder = g_strdup_printf ("%s/tiny-%d", root, sizes[k]);
      g_autofree char *out = g_strdup_printf ("%s/library-%d", root, sizes[k]);
      g_autofree char *journal = g_strdup_printf ("%s/.library-%d.photos-journal", root, sizes[k]);
      g_autofree char *staging = g_strdup_printf ("%s/.library-%d.photos-thumbs", root, sizes[k]);
      lk_test_remove_tree (folder);
      lk_test_remove_tree (out);
      lk_test_remove_tree (staging);
      g_unlink (journal);
      g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
      for (int f = 0; f < sizes[k]; f++)
        {
          char name[64];
          g_snprintf (name, sizeof name, "%s/%07d.jpg", folder, f);
          g_assert_true (g_file_set_contents (name, "not a photo, 16b", 16, NULL));
        }
      g_autofree char *real = g_build_filename (folder, "real.jpg", NULL);
      g_assert_true (g_file_set_contents (real, photo_bytes, (gssize) photo_length, NULL));
      const char *argv[]
          = { cli, "import", "photos", out, "--photos", folder, "--threads", "2", NULL };
      double wall = 0, cpu = 0;
      long rss = 0;
      int status = 0;
      run_measured (argv, &wall, &cpu, &rss, &status);
      printf ("%7d tiny files + 1 photo: exit %d, wall %.2f s, cpu %.2f s (%.1f µs a file), "
              "peak RSS %.1f MB\n",
              sizes[k], WIFEXITED (status) ? WEXITSTATUS (status) : -1, wall, cpu,
              cpu / (sizes[k] + 1) * 1e6, rss / 1024.0);
      fflush (stdout);
      lk_test_remove_tree (folder);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context = g_option_context_new ("— likeness-cli import photos "
                                                             "against dlib's example pipeline");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  const char *cli = g_getenv ("LIKENESS_CLI");
  const char *dlib = g_getenv ("LK_TEST_DLIB");
  const char *example = g_getenv ("BENCH_DLIB_EXAMPLE");
  if (cli == NULL || dlib == NULL || example == NULL)
    {
      g_printerr ("LIKENESS_CLI, LK_TEST_DLIB and BENCH_DLIB_EXAMPLE must be set (meson test "
                  "--benchmark sets them)\n");
      return 2;
    }
  g_autofree char *models = g_build_filename (dlib, "models", NULL);
  g_setenv ("LIKENESS_MODELS_DIR", models, TRUE);

  g_autofree char *root
      = workdir != NULL ? g_strdup (workdir) : g_dir_make_tmp ("lk-bench-photos-XXXXXX", &error);
  g_assert_no_error (error);
  if (tiny > 0)
    {
      int status = bench_tiny (cli, dlib, root);
      if (workdir == NULL)
        lk_test_remove_tree (root);
      return status;
    }
  g_autofree char *photos = g_build_filename (root, "photos", NULL);
  g_autofree char *out = g_build_filename (root, "library", NULL);
  g_autofree char *journal = g_build_filename (root, ".library.photos-journal", NULL);
  g_autofree char *staging = g_build_filename (root, ".library.photos-thumbs", NULL);
  lk_test_remove_tree (photos);
  guint n_photos = make_photos (dlib, photos);
  g_autofree char *quoted_out = g_shell_quote (out);
  g_autofree char *quoted_journal = g_shell_quote (journal);
  g_autofree char *quoted_staging = g_shell_quote (staging);
  /* Every run from nothing: no library, journal or staged thumbnails. */
  g_autofree char *prepare
      = g_strdup_printf ("rm -rf %s %s %s", quoted_out, quoted_journal, quoted_staging);
  g_autofree char *threads_arg = g_strdup_printf ("%d", threads);

  g_autofree char *cpu = run ((const char *const[]){ cli, "cpu", NULL });
  g_auto (GStrv) cpu_lines = g_strsplit (cpu, "\n", 4);
  printf ("photos: %u (%d copies of dlib's examples/faces at %d px on the longer side)\n", n_photos,
          copies, side);
  for (guint k = 0; k < 3 && cpu_lines[k] != NULL; k++)
    printf ("%s\n", cpu_lines[k]);

  const char *likeness[]
      = { cli, "import", "photos", out, "--photos", photos, "--threads", threads_arg, NULL };
  const char *opponent[] = { "env", "OPENBLAS_NUM_THREADS=1", example, models, photos, NULL };

  /* One run of each, untimed (the page cache warm for both): the faces each found. */
  lk_test_remove_tree (out);
  lk_test_remove_tree (staging);
  g_unlink (journal);
  g_autofree char *likeness_out = run (likeness);
  g_autofree char *opponent_out = run (opponent);
  guint faces = lk_test_number_after (likeness_out, "Imported ");
  guint opponent_faces = lk_test_number_after (opponent_out, "faces=");
  printf ("faces found: likeness-cli %u, the dlib example %u%s\n", faces, opponent_faces,
          faces == opponent_faces ? "" : " (DIFFERENT)");

  g_autofree char *json = g_build_filename (root, "race-example.json", NULL);
  LkTestArm mine, theirs;
  lk_test_race (cli, reps, prepare, likeness, opponent, json, &mine, &theirs);
  printf ("\n");
  g_autofree char *what = g_strdup_printf ("likeness-cli, %d threads", threads);
  report (what, &mine, n_photos, faces);
  report ("dlib example, 1 thread", &theirs, n_photos, opponent_faces);
  printf ("likeness-cli against the dlib example: %.2fx its speed (wall), %.2fx its CPU time\n",
          theirs.wall / mine.wall, mine.cpu / theirs.cpu);

  if (before != NULL)
    {
      const char *old[]
          = { before, "import", "photos", out, "--photos", photos, "--threads", threads_arg, NULL };
      g_autofree char *json_before = g_build_filename (root, "race-before.json", NULL);
      LkTestArm now, then;
      lk_test_race (cli, reps, prepare, likeness, old, json_before, &now, &then);
      printf ("\n");
      report ("likeness-cli (this build)", &now, n_photos, faces);
      report ("likeness-cli (--before)", &then, n_photos, faces);
      printf ("faces/s: %.2f before, %.2f now: %.2fx; CPU time %.2fx of before's\n",
              faces / then.wall, faces / now.wall, then.wall / now.wall, now.cpu / then.cpu);
    }

  if (workdir == NULL)
    lk_test_remove_tree (root);
  return 0;
}
