/* lk-bench-scale.c — child processes, their RSS and output, pair agreement
 *
 * See lk-bench-scale.h. */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include "lk-bench-scale.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lk-test-faces.h"

gboolean
lk_bench_run_child (char *const *argv, gboolean unset_openblas, LkBenchChild *child, GError **error)
{
  memset (child, 0, sizeof *child);

  /* Everything the child needs is built before fork: between fork and exec
   * only async-signal-safe calls (the caller may have threads). */
  g_auto (GStrv) env = g_get_environ ();
  if (unset_openblas)
    {
      env = g_environ_unsetenv (env, "OPENBLAS_CORETYPE");
      env = g_environ_unsetenv (env, "OPENBLAS_L2_SIZE");
    }
  static const char exec_failed[] = "bench-scale: the child could not exec\n";

  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "pipe for %s: %s", argv[0],
                   g_strerror (saved));
      return FALSE;
    }
  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid < 0)
    {
      int saved = errno;
      close (fds[0]);
      close (fds[1]);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "fork for %s: %s", argv[0],
                   g_strerror (saved));
      return FALSE;
    }
  if (pid == 0)
    {
      /* dup2 clears close-on-exec on the copy. */
      if (dup2 (fds[1], STDOUT_FILENO) >= 0)
        execve (argv[0], argv, env);
      if (write (STDERR_FILENO, exec_failed, sizeof exec_failed - 1) < 0)
        _exit (126);
      _exit (127);
    }

  close (fds[1]);
  GString *out = g_string_new (NULL);
  char buffer[8192];
  for (;;)
    {
      ssize_t got = read (fds[0], buffer, sizeof buffer);
      if (got == 0)
        break;
      if (got < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      g_string_append_len (out, buffer, got);
    }
  close (fds[0]);

  struct rusage usage;
  int status;
  while (wait4 (pid, &status, 0, &usage) < 0)
    if (errno != EINTR)
      {
        int saved = errno;
        g_string_free (out, TRUE);
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "wait4 for %s: %s",
                     argv[0], g_strerror (saved));
        return FALSE;
      }
  child->wait_status = status;
  /* Linux gives ru_maxrss in KiB. */
  child->maxrss_kb = (guint64) usage.ru_maxrss;
  child->cpu_seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
                       + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  child->output = g_string_free (out, FALSE);
  return TRUE;
}

void
lk_bench_child_clear (LkBenchChild *child)
{
  g_clear_pointer (&child->output, g_free);
}

gboolean
lk_bench_status_kb (const char *status, const char *field, guint64 *kb)
{
  gsize len = strlen (field);

  for (const char *line = status; line != NULL && *line != '\0';)
    {
      if (strncmp (line, field, len) == 0 && line[len] == ':')
        {
          const char *p = line + len + 1;
          while (*p == ' ' || *p == '\t')
            p++;
          if (!g_ascii_isdigit (*p))
            return FALSE;
          char *end;
          errno = 0;
          guint64 value = g_ascii_strtoull (p, &end, 10);
          if (errno != 0)
            return FALSE;
          while (*end == ' ')
            end++;
          if (strncmp (end, "kB", 2) != 0 || (end[2] != '\n' && end[2] != '\0'))
            return FALSE;
          *kb = value;
          return TRUE;
        }
      line = strchr (line, '\n');
      if (line != NULL)
        line++;
    }
  return FALSE;
}

guint64
lk_bench_self_kb (const char *field)
{
  g_autofree char *status = NULL;
  guint64 kb = 0;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL)
      || !lk_bench_status_kb (status, field, &kb))
    return 0;
  return kb;
}

gboolean
lk_bench_reset_peak (void)
{
  /* proc(5): writing 5 to clear_refs resets the peak RSS to the current. */
  int fd = open ("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  gboolean ok = write (fd, "5", 1) == 1;
  close (fd);
  return ok;
}

char *
lk_bench_field (const char *output, const char *key)
{
  if (output == NULL)
    return NULL;
  g_auto (GStrv) lines = g_strsplit (output, "\n", -1);
  gsize key_len = strlen (key);

  for (char **line = lines; *line != NULL; line++)
    {
      if (!g_str_has_prefix (*line, "result "))
        continue;
      g_auto (GStrv) words = g_strsplit (*line + strlen ("result "), " ", -1);
      for (char **word = words; *word != NULL; word++)
        if (strncmp (*word, key, key_len) == 0 && (*word)[key_len] == '=')
          return g_strdup (*word + key_len + 1);
    }
  return NULL;
}

gboolean
lk_bench_field_uint (const char *output, const char *key, guint64 *value)
{
  g_autofree char *text = lk_bench_field (output, key);
  return text != NULL && g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, value, NULL);
}

gboolean
lk_bench_field_double (const char *output, const char *key, double *value)
{
  g_autofree char *text = lk_bench_field (output, key);
  if (text == NULL || *text == '\0')
    return FALSE;
  char *end;
  *value = g_ascii_strtod (text, &end);
  return *end == '\0';
}

void
lk_bench_compare_pairs (const LkPair *a, gsize n_a, const LkPair *b, gsize n_b,
                        const LkFaces *faces, const LkCalibration *calibration,
                        double min_probability, LkBenchAgreement *agreement)
{
  gsize x = 0, y = 0;

  memset (agreement, 0, sizeof *agreement);
  agreement->a_pairs = n_a;
  agreement->b_pairs = n_b;
  while (x < n_a || y < n_b)
    {
      int c = x == n_a ? 1 : y == n_b ? -1 : test_pair_cmp (&a[x], &b[y]);
      if (c == 0)
        {
          x++, y++;
          continue;
        }
      const LkPair *odd = c < 0 ? &a[x++] : &b[y++];
      if (c < 0)
        agreement->only_a++;
      else
        agreement->only_b++;
      gboolean valid = odd->i < odd->j && odd->j < faces->n;
      if (!valid
          || !(test_distance_to_bar (faces, calibration, min_probability, odd->i, odd->j)
               <= LK_SCAN_NEAR_BOUNDARY))
        {
          if (agreement->beyond++ == 0)
            {
              agreement->first_i = odd->i;
              agreement->first_j = odd->j;
            }
        }
    }
}

guint64
lk_bench_edges_bytes (gsize n, guint dim, guint64 pairs, guint threads)
{
  return (guint64) n * dim * sizeof (float) + pairs * sizeof (LkPair)
         + (guint64) threads * LK_BENCH_SCRATCH_PER_THREAD;
}

GArray *
lk_bench_parse_sizes (const char *list, gsize max, GError **error)
{
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_auto (GStrv) words = g_strsplit (list, ",", -1);

  for (char **word = words; *word != NULL; word++)
    {
      guint64 value;
      g_autoptr (GError) local = NULL;
      if (!g_ascii_string_to_unsigned (g_strstrip (*word), 10, 2, max, &value, &local))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--faces: “%s” is not a face count from 2 to %" G_GSIZE_FORMAT, *word, max);
          return NULL;
        }
      gsize n = value;
      g_array_append_val (sizes, n);
    }
  if (sizes->len == 0)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--faces: expected a comma-separated list of face counts");
      return NULL;
    }
  return g_steal_pointer (&sizes);
}
