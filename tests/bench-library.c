/* bench-library — lk_library_load next to json-glib's parse of the same manifest
 *
 *   bench-library [--faces N] [--dim D] [--rounds R] [--thumbnails] [--keep DIR [--reuse]]
 *   bench-library --load DIR          (one load, for `/usr/bin/time -v`)
 *
 * Writes two libraries of N faces (default 100 000 × 512) into a temporary
 * folder, one `normalized: true` (read in one copy) and one `normalized: false`
 * (read and normalised), then for R rounds times, in this order, on warm
 * caches: reading library.json and parsing it with json-glib, freeing that
 * tree, and the whole lk_library_load of each, on three clocks (below). It
 * prints the medians and the ratio the loader is held to, at most 1: the time
 * load spends beyond json-glib's parse, over the parse, counted both with and
 * without the time json-glib takes to free its tree. With --thumbnails every
 * face's thumbnail file exists (empty), as in a real library.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "library/lk-library.h"
#include "lk-test-util.h"

static int faces = 100000;
static int dim = 512;
static int rounds = 5;
static gboolean thumbnails = FALSE;
static char *keep = NULL;
static char *load_only = NULL;
static gboolean reuse = FALSE;

static const GOptionEntry entries[] = {
  { "faces", 0, 0, G_OPTION_ARG_INT, &faces, "Faces in each library (100000)", "N" },
  { "dim", 0, 0, G_OPTION_ARG_INT, &dim, "Floats per face (512)", "D" },
  { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Timed rounds (5)", "R" },
  { "thumbnails", 0, 0, G_OPTION_ARG_NONE, &thumbnails, "Create every thumbnail file", NULL },
  { "keep", 0, 0, G_OPTION_ARG_FILENAME, &keep, "Write the libraries here and keep them", "DIR" },
  { "reuse", 0, 0, G_OPTION_ARG_NONE, &reuse, "With --keep: use the libraries already there",
    NULL },
  { "load", 0, 0, G_OPTION_ARG_FILENAME, &load_only, "Only load this library once", "DIR" },
  { NULL },
};

static void
write_library (const char *dir, gboolean normalized)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) json = g_string_sized_new ((gsize) faces * 160);
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  g_autofree float *rows = g_new (float, (gsize) faces *dim);
  g_autofree char *thumbs = g_build_filename (dir, "thumbs", NULL);

  g_assert_cmpint (g_mkdir_with_parents (thumbs, 0700), ==, 0);
  for (gsize i = 0; i < (gsize) faces; i++)
    {
      float *row = rows + i * dim;
      double sum = 0;
      for (int j = 0; j < dim; j++)
        {
          row[j] = (float) g_rand_double_range (rand, -1, 1);
          sum += (double) row[j] * row[j];
        }
      double scale = normalized ? 1 / sqrt (sum) : g_rand_double_range (rand, 0.5, 20);
      for (int j = 0; j < dim; j++)
        row[j] = (float) (row[j] * scale);
    }
  g_autofree char *rows_path = g_build_filename (dir, "embeddings.f32", NULL);
  g_file_set_contents (rows_path, (const char *) rows, (gssize) ((gsize) faces * dim * 4), &error);
  g_assert_no_error (error);

  /* Compact, as json-glib's generator writes it; photos of 1–4 faces. */
  g_string_append_printf (json,
                          "{\"format\":\"likeness-library\",\"version\":1,\"embeddings\":"
                          "{\"file\":\"embeddings.f32\",\"dim\":%d,\"count\":%d,\"normalized\":%s},"
                          "\"calibration\":{\"a\":30.0,\"b\":-10.5,\"w_size\":0.0},"
                          "\"min_probability\":0.9,\"min_gallery_quality\":0.5,\"photos\":[",
                          dim, faces, normalized ? "true" : "false");
  for (int p = 0; p < faces / 2; p++)
    g_string_append_printf (json,
                            "%s{\"id\":%d,\"path\":\"2019/IMG_%05d.jpg\",\"width\":4032,"
                            "\"height\":3024,\"taken\":\"2019-06-01T10:00:00Z\"}",
                            p ? "," : "", p, p);
  g_string_append (json, "],\"faces\":[");
  for (int i = 0; i < faces; i++)
    {
      g_string_append_printf (json,
                              "%s{\"photo\":%d,\"crop_px\":%.1f,\"quality\":%.3f,"
                              "\"thumbnail\":\"thumbs/%06d.png\",\"box\":[%d,%d,240,240],"
                              "\"label\":\"p%05d\"}",
                              i ? "," : "", i / 2, g_rand_double_range (rand, 40, 400),
                              g_rand_double (rand), i, g_rand_int_range (rand, 0, 4000),
                              g_rand_int_range (rand, 0, 3000), i % 5000);
      if (thumbnails)
        {
          g_autofree char *name = g_strdup_printf ("%s/%06d.png", thumbs, i);
          g_file_set_contents (name, "", 0, &error);
          g_assert_no_error (error);
        }
    }
  g_string_append (json, "]}");
  g_autofree char *manifest = g_build_filename (dir, "library.json", NULL);
  g_file_set_contents (manifest, json->str, (gssize) json->len, &error);
  g_assert_no_error (error);
}

static double
seconds_since (gint64 start)
{
  return (g_get_monotonic_time () - start) / 1e6;
}

/* Three clocks: wall; CPU time of all threads, the work done, which on a
 * machine shared with builds swings far less than wall time; and CPU time of
 * the calling thread, the loader's critical path when its helper threads
 * find a free core (what its wall time is on an idle machine). */
enum
{
  WALL,
  CPU_ALL,
  CPU_MAIN,
  N_CLOCKS
};

static const char *const clock_names[N_CLOCKS]
    = { "wall", "cpu (all threads)", "cpu (main thread)" };

static void
read_clocks (double now[N_CLOCKS])
{
  struct timespec t;
  now[WALL] = g_get_monotonic_time () / 1e6;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  now[CPU_ALL] = t.tv_sec + t.tv_nsec / 1e9;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  now[CPU_MAIN] = t.tv_sec + t.tv_nsec / 1e9;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, (gsize) n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static int
load_once (const char *dir)
{
  g_autoptr (GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  g_autoptr (LkLibrary) library = lk_library_load (dir, &error);
  if (library == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  printf ("loaded %" G_GSIZE_FORMAT " faces × %u in %.3f s\n", library->count, library->dim,
          seconds_since (start));
  return 0;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context = g_option_context_new ("");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || faces < 1 || dim < 1 || rounds < 1)
    {
      fprintf (stderr, "bench-library: %s\n", error ? error->message : "bad numbers");
      return 2;
    }
  if (load_only != NULL)
    return load_once (load_only);

  g_autofree char *root
      = keep != NULL ? g_strdup (keep) : g_dir_make_tmp ("bench-library-XXXXXX", &error);
  g_assert_no_error (error);
  const char *modes[] = { "true", "false" };
  char *dirs[2];
  for (int m = 0; m < 2; m++)
    {
      dirs[m] = g_build_filename (root, m == 0 ? "normalized" : "unnormalized", NULL);
      if (!(reuse && keep != NULL))
        write_library (dirs[m], m == 0);
    }
  g_autofree char *manifest = g_build_filename (dirs[0], "library.json", NULL);
  g_autoptr (GMappedFile) bytes = g_mapped_file_new (manifest, FALSE, &error);
  g_assert_no_error (error);
  printf ("%d faces × %d, library.json %.1f MB, embeddings %.1f MB, %d rounds, thumbnails %s\n",
          faces, dim, g_mapped_file_get_length (bytes) / 1e6, (double) faces * dim * 4 / 1e6,
          rounds, thumbnails ? "present" : "absent");
  g_clear_pointer (&bytes, g_mapped_file_unref);

  /* times[c][k][r]: clock c, step k (parse, free, load true, load false),
   * round r. */
  const char *names[4]
      = { "json-glib parse", "json-glib free", "load normalized:true", "load normalized:false" };
  double *times[N_CLOCKS][4];
  for (int c = 0; c < N_CLOCKS; c++)
    for (int k = 0; k < 4; k++)
      times[c][k] = g_new (double, rounds);

  for (int r = 0; r < rounds; r++)
    {
      double before[N_CLOCKS], after[N_CLOCKS];
      char *data;
      gsize length;

      read_clocks (before);
      g_file_get_contents (manifest, &data, &length, &error);
      g_assert_no_error (error);
      JsonParser *parser = json_parser_new ();
      json_parser_load_from_data (parser, data, (gssize) length, &error);
      g_assert_no_error (error);
      read_clocks (after);
      for (int c = 0; c < N_CLOCKS; c++)
        times[c][0][r] = after[c] - before[c];

      read_clocks (before);
      g_object_unref (parser);
      g_free (data);
      read_clocks (after);
      for (int c = 0; c < N_CLOCKS; c++)
        times[c][1][r] = after[c] - before[c];

      for (int m = 0; m < 2; m++)
        {
          read_clocks (before);
          LkLibrary *library = lk_library_load (dirs[m], &error);
          g_assert_no_error (error);
          read_clocks (after);
          for (int c = 0; c < N_CLOCKS; c++)
            times[c][2 + m][r] = after[c] - before[c];
          lk_library_free (library);
        }
      printf ("round %d, wall s:", r + 1);
      for (int k = 0; k < 4; k++)
        printf ("  %s %.3f", names[k], times[WALL][k][r]);
      printf ("\n");
    }

  for (int c = 0; c < N_CLOCKS; c++)
    {
      double m[4];
      for (int k = 0; k < 4; k++)
        m[k] = median (times[c][k], rounds);
      printf ("%s, medians: parse %.3f s, free %.3f s, load normalized:true %.3f s, "
              "normalized:false %.3f s\n",
              clock_names[c], m[0], m[1], m[2], m[3]);
      for (int n = 0; n < 2; n++)
        printf ("  normalized:%s: (load − parse) / parse = %.2f; (load − parse − free) / parse "
                "= %.2f\n",
                modes[n], (m[2 + n] - m[0]) / m[0], (m[2 + n] - m[0] - m[1]) / m[0]);
      for (int k = 0; k < 4; k++)
        g_free (times[c][k]);
    }
  if (keep == NULL)
    lk_test_remove_tree (root);
  for (int m = 0; m < 2; m++)
    g_free (dirs[m]);
  return 0;
}
