/* replay — runs a fuzz target's LLVMFuzzerTestOneInput over files, as a test
 *
 * Linked with one fuzz-*.c in place of libFuzzer, so every input that once
 * crashed a target (tests/fuzz/regressions/<target>/) and the seed corpus
 * (tests/fuzz/corpus/<target>/) run in the ordinary test suite, with gcc or
 * clang and under the sanitizer build. Usage: replay DIR… where each DIR is
 * …/<kind>/<target>; each file in it is one test case, named
 * /fuzz/<target>/<kind>/<file>.
 */
#include "config.h"

#include <glib.h>

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);
const char *__asan_default_options (void);

/* Read by AddressSanitizer at start-up (ASAN_OPTIONS still overrides it): one
 * allocation above 256 MiB is an error here, as -malloc_limit_mb=256 makes it
 * one for the libFuzzer builds (run-fuzzers.sh), so an input that made a
 * decoder ask for gigabytes fails its replay under the sanitizer build too. */
const char *
__asan_default_options (void)
{
  return "max_allocation_size_mb=256";
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

static void
replay_file (gconstpointer user_data)
{
  const char *path = user_data;
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &contents, &length, &error));
  g_assert_no_error (error);
  /* An exact-size heap copy: an over-read is an ASan error, not a read of
   * g_file_get_contents's trailing NUL. */
  g_autofree guint8 *copy = g_memdup2 (contents, length);
  g_assert_cmpint (LLVMFuzzerTestOneInput (copy, length), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  for (int i = 1; i < argc; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GDir) dir = g_dir_open (argv[i], 0, &error);
      g_assert_no_error (error);
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
        g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_sort (names, compare_names);
      g_autofree char *base = g_path_get_basename (argv[i]);
      g_autofree char *parent = g_path_get_dirname (argv[i]);
      g_autofree char *kind = g_path_get_basename (parent);
      for (guint j = 0; j < names->len; j++)
        {
          char *path = g_build_filename (argv[i], names->pdata[j], NULL);
          g_autofree char *test
              = g_strdup_printf ("/fuzz/%s/%s/%s", base, kind, (char *) names->pdata[j]);
          g_ptr_array_add (paths, path);
          g_test_add_data_func (test, path, replay_file);
        }
    }

  int status = g_test_run ();
  g_ptr_array_unref (paths);
  return status;
}
