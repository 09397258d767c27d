/* lk-bench-import.c — see lk-bench-import.h
 *
 * Before a race, one run of each build, untimed: both must import the same
 * number of faces, and every thumbnail of this build's library is compared
 * with the other's (mean and largest channel difference), so a faster
 * import that cut other crops is seen here.
 *
 * Between runs the library is moved aside into a graveyard, not removed:
 * on ext4 without a journal the kernel passes over every inode freed in the
 * last 30 s when it allocates one (recently_deleted in find_inode_bit), so
 * removing thousands of thumbnails right before a run costs that run
 * O(n²) kernel time that a user's import never pays: 0.5–0.9 s of kernel
 * time per run of bench-import-immich's 2,000 faces (`recently_deleted`,
 * `find_get_block_common`: 23 % of the import's CPU under perf; 2-core AMD
 * EPYC Zen 1, whose ext4 says "mounted filesystem without journal"), the
 * same in both arms. The graveyard goes at the end.
 */
#include "config.h"

#include "lk-bench-import.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "library/lk-library.h"
#include "library/lk-thumbnail.h"
#include "lk-test-util.h"

char *
lk_bench_run (const char *const *argv)
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

/* cli head… out tail…, NULL-terminated; the strings are the callers'. */
static const char **
import_argv (const char *cli, const char *const *head, const char *out, const char *const *tail)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) cli);
  for (const char *const *w = head; *w != NULL; w++)
    g_ptr_array_add (argv, (gpointer) *w);
  g_ptr_array_add (argv, (gpointer) out);
  for (const char *const *w = tail; *w != NULL; w++)
    g_ptr_array_add (argv, (gpointer) *w);
  g_ptr_array_add (argv, NULL);
  return (const char **) g_ptr_array_free (argv, FALSE);
}

static void
report (const char *name, const LkTestArm *arm, guint faces)
{
  printf ("%-11s wall %7.2f s  cpu %7.2f s  %7.1f faces/s  (%.1f faces per CPU-s)\n", name,
          arm->wall, arm->cpu, faces / arm->wall, faces / arm->cpu);
}

void
lk_bench_import_race (const char *cli, const char *before, const char *also, int reps,
                      const char *root, const char *const *head, const char *const *tail)
{
  g_autofree char *out = g_build_filename (root, "library", NULL);
  g_autofree char *out_before = g_build_filename (root, "library-before", NULL);
  g_autofree char *graveyard = g_build_filename (root, "graveyard", NULL);
  lk_test_remove_tree (out);
  lk_test_remove_tree (out_before);
  lk_test_remove_tree (graveyard);
  g_assert_cmpint (g_mkdir_with_parents (graveyard, 0755), ==, 0);

  g_autofree char *cpu = lk_bench_run ((const char *const[]){ cli, "cpu", NULL });
  g_auto (GStrv) cpu_lines = g_strsplit (cpu, "\n", 4);
  for (guint k = 0; k < 3 && cpu_lines[k] != NULL; k++)
    printf ("%s\n", cpu_lines[k]);

  g_autofree const char **now = import_argv (cli, head, out, tail);
  g_autofree const char **then = import_argv (before, head, out, tail);
  g_autofree const char **then_kept = import_argv (before, head, out_before, tail);

  /* One run of each, untimed: the same faces, the same crops. */
  g_autofree char *now_out = lk_bench_run (now);
  g_autofree char *then_out = lk_bench_run (then_kept);
  guint n_now = lk_test_number_after (now_out, "Imported "),
        n_then = lk_test_number_after (then_out, "Imported ");
  printf ("faces imported: this build %u, --before %u%s\n", n_now, n_then,
          n_now == n_then ? "" : " (DIFFERENT)");
  g_autofree char *thumbs = g_build_filename (out, "thumbs", NULL);
  g_autofree char *thumbs_before = g_build_filename (out_before, "thumbs", NULL);
  printf ("thumbnails on disk: this build %.2f MB, --before %.2f MB\n", tree_bytes (thumbs) / 1e6,
          tree_bytes (thumbs_before) / 1e6);
  compare_thumbnails (out, out_before);

  /* The library of the last run is moved into a folder of its own. */
  g_autofree char *quoted_out = g_shell_quote (out);
  g_autofree char *quoted_template = g_shell_quote (graveyard);
  g_autofree char *prepare = g_strdup_printf ("[ ! -e %s ] || mv %s \"$(mktemp -d %s/run.XXXXXX)\"",
                                              quoted_out, quoted_out, quoted_template);
  g_autofree char *json = g_build_filename (root, "race.json", NULL);
  LkTestArm a, b;
  lk_test_race (cli, reps, prepare, now, then, json, &a, &b);
  printf ("\n");
  report ("this build", &a, n_now);
  report ("--before", &b, n_then);
  printf ("faces/s: %.2fx before's (medians of %d paired runs); CPU-s %.2fx before's\n",
          (n_now / a.wall) / (n_then / b.wall), reps, a.cpu / b.cpu);

  if (also != NULL)
    {
      g_autofree const char **other = import_argv (also, head, out, tail);
      g_free (lk_bench_run ((const char *const[]){ "/bin/sh", "-c", prepare, NULL }));
      g_autofree char *other_out = lk_bench_run (other);
      guint n_other = lk_test_number_after (other_out, "Imported ");
      printf ("faces imported: --also %u%s\n", n_other, n_other == n_now ? "" : " (DIFFERENT)");
      g_autofree char *json_also = g_build_filename (root, "race-also.json", NULL);
      LkTestArm a2, c;
      lk_test_race (cli, reps, prepare, now, other, json_also, &a2, &c);
      printf ("\n");
      report ("this build", &a2, n_now);
      report ("--also", &c, n_other);
      printf ("faces/s: %.2fx --also's (medians of %d paired runs); CPU-s %.2fx --also's\n",
              (n_now / a2.wall) / (n_other / c.wall), reps, a2.cpu / c.cpu);
    }
  lk_test_remove_tree (graveyard);
}
