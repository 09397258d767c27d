#include "config.h"

#include "lk-test-util.h"

#include "import/lk-import-photos.h"
#include "library/lk-thumbnail.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>

int
lk_test_run_cli_argv (const char *const *args, char **out, char **err)
{
  const char *cli = g_getenv ("LIKENESS_CLI");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *own_out = NULL;
  g_autofree char *own_err = NULL;
  int status = 0;

  g_assert_nonnull (cli);
  g_ptr_array_add (argv, (char *) cli);
  for (guint k = 0; args[k] != NULL; k++)
    g_ptr_array_add (argv, (char *) args[k]);
  g_ptr_array_add (argv, NULL);

  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                out != NULL ? out : &own_out, err != NULL ? err : &own_err, &status, &error);
  g_assert_no_error (error);
  g_test_message ("stdout:\n%s\nstderr:\n%s", out != NULL ? *out : own_out,
                  err != NULL ? *err : own_err);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

int
lk_test_run_cli (char **out, char **err, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  va_list ap;
  const char *arg;

  va_start (ap, err);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (char *) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  return lk_test_run_cli_argv ((const char *const *) args->pdata, out, err);
}

void
lk_test_remove_tree (const char *path)
{
  GStatBuf st;

  if (g_lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          lk_test_remove_tree (child);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

guint16
lk_test_free_port (void)
{
  g_autoptr (GSocket) s
      = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_assert_true (g_socket_bind (s, any, FALSE, NULL));
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (s, NULL);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

GSocket *
lk_test_silent_server (guint16 *port)
{
  GSocket *s
      = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_assert_true (g_socket_bind (s, any, FALSE, NULL));
  g_assert_true (g_socket_listen (s, NULL));
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (s, NULL);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  return s;
}

double
lk_test_thread_seconds (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

double
lk_test_process_seconds (void)
{
  struct timespec t;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

double
lk_test_status_mb (const char *field)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL))
    return -1.0;
  const char *at = strstr (text, field);
  if (at == NULL)
    return -1.0;
  return g_ascii_strtod (at + strlen (field), NULL) / 1024.0;
}

void
lk_test_step_header (void)
{
  printf ("%-14s %9s %9s %9s %9s\n", "step", "wall-s", "cpu-s", "rss-MB", "peak-MB");
}

void
lk_test_step_start (LkTestStep *step)
{
  step->wall0 = g_get_monotonic_time ();
  step->cpu0 = lk_test_process_seconds ();
}

double
lk_test_step_report (const LkTestStep *step, const char *name, double *wall)
{
  double seconds = (double) (g_get_monotonic_time () - step->wall0) / 1e6;
  double cpu = lk_test_process_seconds () - step->cpu0;
  printf ("%-14s %9.3f %9.3f %9.0f %9.0f\n", name, seconds, cpu, lk_test_status_mb ("VmRSS:"),
          lk_test_status_mb ("VmHWM:"));
  fflush (stdout);
  if (wall != NULL)
    *wall = seconds;
  return cpu;
}

gboolean
lk_test_have_dlib (const char *probe)
{
  if (!lk_import_photos_available ())
    {
      g_test_skip ("built without -Ddetect");
      return FALSE;
    }
  if (g_file_test (probe, G_FILE_TEST_EXISTS))
    return TRUE;
  if (g_getenv ("LK_TEST_REQUIRE_DLIB") != NULL)
    g_error ("%s is missing: run .ci/dlib-source", probe);
  g_test_skip ("no dlib models and photos: run .ci/dlib-source");
  return FALSE;
}

void
lk_test_skip_unless_required (const char *require, const char *reason)
{
  if (g_getenv (require) != NULL)
    g_error ("%s (%s is set: this run must not skip it)", reason, require);
  g_test_skip (reason);
}

char *
lk_test_make_dir (const char *name)
{
  /* g_test_init names the program by its whole path. */
  g_autofree char *program = g_path_get_basename (g_get_prgname ());
  g_autofree char *base = g_strdup_printf ("%s-XXXXXX", program);
  g_autofree char *root = g_build_filename (g_get_tmp_dir (), base, NULL);
  g_assert_nonnull (g_mkdtemp (root));
  char *dir = g_build_filename (root, name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  return dir;
}

char **
lk_test_source_ids (const char *folder)
{
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, manifest, NULL));
  JsonArray *photos = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "photos");
  guint n = json_array_get_length (photos);
  char **ids = g_new0 (char *, n + 1);
  for (guint k = 0; k < n; k++)
    {
      JsonObject *p = json_array_get_object_element (photos, k);
      guint64 id = (guint64) json_object_get_int_member (p, "id");
      g_assert_cmpuint (id, <, n);
      ids[id] = g_strdup (json_object_get_string_member (p, "source_id"));
    }
  return ids;
}

double
lk_test_cosine (const LkLibrary *library, gsize i, gsize j)
{
  const float *a = lk_library_row (library, i), *b = lk_library_row (library, j);
  double dot = 0;
  for (guint d = 0; d < library->dim; d++)
    dot += (double) a[d] * b[d];
  return dot;
}

void
lk_test_assert_red_face_on_blue (const LkLibrary *library, gsize k)
{
  g_autofree char *path = lk_library_thumbnail_path (library, k);
  g_assert_nonnull (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) t = lk_thumbnail_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->width, ==, 128);
  g_assert_cmpuint (t->height, ==, 128);
  const guint8 *centre = t->pixels + 64 * t->stride + 64 * 4;
  g_assert_cmpuint (centre[0], >, 200);
  g_assert_cmpuint (centre[2], <, 60);
  const guint8 *corner = t->pixels + 3 * t->stride + 3 * 4;
  g_assert_cmpuint (corner[0], <, 60);
  g_assert_cmpuint (corner[2], >, 200);
}

static double
median_of (JsonArray *values)
{
  g_autoptr (GArray) a = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint k = 0; k < json_array_get_length (values); k++)
    {
      double v = json_array_get_double_element (values, k);
      g_array_append_val (a, v);
    }
  return lk_test_median (a);
}

void
lk_test_race (const char *cli, int reps, const char *prepare, const char *const *a,
              const char *const *b, const char *json, LkTestArm *arm_a, LkTestArm *arm_b)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *reps_arg = g_strdup_printf ("--reps=%d", reps);
  g_autofree char *json_arg = g_strdup_printf ("--json=%s", json);
  g_autofree char *prepare_arg = g_strdup_printf ("--prepare=%s", prepare);
  const char *head[] = { cli, "race", reps_arg, "--warmup=0", json_arg, prepare_arg, "--" };
  for (gsize k = 0; k < G_N_ELEMENTS (head); k++)
    g_ptr_array_add (argv, (gpointer) head[k]);
  for (const char *const *w = a; *w != NULL; w++)
    g_ptr_array_add (argv, (gpointer) *w);
  g_ptr_array_add (argv, "--");
  for (const char *const *w = b; *w != NULL; w++)
    g_ptr_array_add (argv, (gpointer) *w);
  g_ptr_array_add (argv, NULL);
  fflush (stdout);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p
      = g_subprocess_newv ((const char *const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (p, NULL, &error));
  g_assert_no_error (error);

  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  JsonArray *results = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "results");
  LkTestArm *arms[] = { arm_a, arm_b };
  for (guint k = 0; k < 2; k++)
    {
      JsonObject *r = json_array_get_object_element (results, k);
      arms[k]->wall = median_of (json_object_get_array_member (r, "times"));
      arms[k]->cpu = median_of (json_object_get_array_member (r, "likeness_cpu_times"));
    }
}

guint
lk_test_number_after (const char *out, const char *key)
{
  const char *at = strstr (out, key);
  if (at == NULL)
    g_error ("no \"%s\" in:\n%s", key, out);
  return (guint) strtoul (at + strlen (key), NULL, 10);
}

static int
compare_double (gconstpointer x, gconstpointer y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? -1 : a > b;
}

double
lk_test_median (GArray *doubles)
{
  if (doubles->len == 0)
    return NAN;
  g_array_sort (doubles, compare_double);
  return g_array_index (doubles, double, doubles->len / 2);
}

/* A library of `n` faces of `dim` floats, each in a photo of its own: row
 * k is strangers' noise, except that face 2m + 1 (m < dups) is a
 * near-duplicate of face 2m (the same photograph twice). */
void
lk_test_write_strangers (const char *folder, gsize n, guint dim, gsize dups)
{
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autofree float *rows = g_new (float, n *dim);
  g_autoptr (GString) json = g_string_new (NULL);
  g_string_append_printf (json,
                          "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                          "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": %u, "
                          "\"count\": %zu, \"normalized\": false },\n  \"faces\": [\n",
                          dim, n);
  for (gsize f = 0; f < n; f++)
    {
      gboolean dup = f % 2 == 1 && f / 2 < dups;
      for (guint d = 0; d < dim; d++)
        rows[f * dim + d]
            = dup ? rows[(f - 1) * dim + d] + (float) g_rand_double_range (rand, -0.03, 0.03)
                  : (float) g_rand_double_range (rand, -1, 1);
      g_string_append_printf (json,
                              "    { \"photo\": %zu, \"crop_px\": 200, \"quality\": 0.9, "
                              "\"label\": \"p%zu\" }%s\n",
                              f + 1, dup ? f - 1 : f, f + 1 < n ? "," : "");
    }
  g_string_append (json, "  ] }\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *f32 = g_build_filename (folder, "embeddings.f32", NULL);
  g_assert_true (g_file_set_contents (manifest, json->str, -1, NULL));
  g_assert_true (
      g_file_set_contents (f32, (const char *) rows, (gssize) (n * dim * sizeof (float)), NULL));
}

void
lk_test_write_people (const char *folder, guint people, guint faces_each, gsize strangers,
                      guint dim)
{
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  gsize n = (gsize) people * faces_each + strangers;
  g_autofree float *rows = g_new (float, n *dim);
  g_autofree double *centre = g_new (double, dim);
  g_autoptr (GString) json = g_string_new (NULL);
  g_string_append_printf (json,
                          "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                          "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": %u, "
                          "\"count\": %zu, \"normalized\": false },\n  \"faces\": [\n",
                          dim, n);
  for (gsize f = 0; f < n; f++)
    {
      gsize person = f < (gsize) people * faces_each ? f / faces_each : people + f;
      gboolean first = f >= (gsize) people * faces_each || f % faces_each == 0;
      if (first)
        for (guint d = 0; d < dim; d++)
          {
            double u = 1 - g_rand_double (rand), v = g_rand_double (rand);
            centre[d] = sqrt (-2 * log (u)) * cos (2 * G_PI * v);
          }
      /* A face: its person's centre and half as much noise of its own
       * (cosine ≈ 0.8 between two faces of one person, ≈ 0 between two). */
      for (guint d = 0; d < dim; d++)
        {
          double u = 1 - g_rand_double (rand), v = g_rand_double (rand);
          double z = sqrt (-2 * log (u)) * cos (2 * G_PI * v);
          rows[f * dim + d] = (float) (centre[d] + (f < (gsize) people * faces_each ? 0.5 * z : 0));
        }
      g_string_append_printf (json,
                              "    { \"photo\": %zu, \"crop_px\": 200, \"quality\": 0.9, "
                              "\"label\": \"p%zu\" }%s\n",
                              f + 1, person, f + 1 < n ? "," : "");
    }
  g_string_append (json, "  ] }\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *f32 = g_build_filename (folder, "embeddings.f32", NULL);
  g_assert_true (g_file_set_contents (manifest, json->str, -1, NULL));
  g_assert_true (
      g_file_set_contents (f32, (const char *) rows, (gssize) (n * dim * sizeof (float)), NULL));
}
