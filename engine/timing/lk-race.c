/* lk-race.c — two commands raced as processes, paired and interleaved
 *
 * Why processes get the same treatment as kernels (lk-timing.c has the
 * long form): a tool that runs all of A and then all of B puts the two arms
 * in different windows of time, and whatever drifts between the windows —
 * another job on a shared machine, a frequency ramp, the page cache warmed
 * by the arm that ran first — lands whole in the comparison. hyperfine 1.15
 * on this machine, `true` against `sleep 0.001` three runs each, declared
 * `sleep 0.001` "7.68 ± 1.19 times faster" than `true`: its first arm paid
 * for the cold start. Here each repetition runs both arms back to back in an
 * order drawn from the harness's coin, and the claim is read from the paired
 * ratios with lk-timing's statistics and lk-timing's verdict rules.
 *
 * How a run is timed. The wall clock (CLOCK_MONOTONIC) is read before
 * posix_spawn and after the child is reaped, so it includes the exec and
 * the dynamic loader, as a user's shell would see. The CPU clock is the
 * child's own user + system time from wait4's rusage (microseconds, the
 * kernel's accounting of the child and of every descendant it waited for):
 * it leaves out time spent waiting for a core, the confound that made the
 * harness default to CPU time for kernels on this shared machine.
 *
 * The parent does nothing while a child runs: stdout goes to /dev/null (or
 * to an unlinked temporary file when outputs are compared), stderr to
 * another, both read only after the repetition, and the wait is one poll on
 * a pidfd (with a cancellable's fd beside it, and the timeout as the poll's),
 * so no reader thread or wake-up competes with the arm being timed. Each
 * child leads a process group of its own, so a timeout or a Stop kills what
 * it started too (a `sh -c` arm's children) and reaps it before returning.
 */
#include "config.h"

#include "lk-race.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lk-cpu.h"

extern char **environ;

/* clang-format off */
G_DEFINE_QUARK (lk-race-error-quark, lk_race_error)
/* clang-format on */

#define SCHEMA_NAME    "likeness-race"
#define SCHEMA_VERSION 1

/* How much of a failed command's stderr is shown: its last lines, from at
 * most the last few KiB of what it wrote. */
#define TAIL_LINES 6
#define TAIL_BYTES 4096

/* The process group of the command running now, for lk_race_signal_running
 * (a signal handler reads it; 0 when nothing runs). */
static volatile sig_atomic_t running_pgid;

/* ---- LkRace ------------------------------------------------------------ */

static LkRace *
race_new (const LkRaceOptions *o)
{
  LkRace *race = g_new0 (LkRace, 1);

  race->seed = o->seed;
  race->clock = o->clock;
  race->argv[0] = g_strdupv (o->argv_a);
  race->argv[1] = g_strdupv (o->argv_b);
  race->command[0] = lk_race_quote_argv (o->argv_a);
  race->command[1] = lk_race_quote_argv (o->argv_b);
  race->wall = lk_paired_timing_new (o->reps, 1, o->seed, LK_CLOCK_WALL);
  race->cpu = lk_paired_timing_new (o->reps, 1, o->seed, LK_CLOCK_CPU);
  for (int arm = 0; arm < 2; arm++)
    {
      race->user_s[arm] = g_new0 (double, MAX (o->reps, 1));
      race->system_s[arm] = g_new0 (double, MAX (o->reps, 1));
      race->exit_codes[arm] = g_new0 (int, MAX (o->reps, 1));
    }
  return race;
}

void
lk_race_free (LkRace *race)
{
  if (race == NULL)
    return;
  for (int arm = 0; arm < 2; arm++)
    {
      g_strfreev (race->argv[arm]);
      g_free (race->command[arm]);
      g_free (race->user_s[arm]);
      g_free (race->system_s[arm]);
      g_free (race->exit_codes[arm]);
    }
  lk_paired_timing_free (race->wall);
  lk_paired_timing_free (race->cpu);
  g_free (race);
}

const LkPairedTiming *
lk_race_timing (const LkRace *race)
{
  return race->clock == LK_CLOCK_CPU ? race->cpu : race->wall;
}

char *
lk_race_quote_argv (char *const *argv)
{
  GString *line = g_string_new (NULL);

  for (guint k = 0; argv != NULL && argv[k] != NULL; k++)
    {
      const char *w = argv[k];
      gboolean plain = *w != '\0';
      for (const char *p = w; *p && plain; p++)
        plain = g_ascii_isalnum (*p) || strchr ("-_./=:,+@%^", *p) != NULL;
      if (k > 0)
        g_string_append_c (line, ' ');
      if (plain)
        g_string_append (line, w);
      else
        {
          g_autofree char *quoted = g_shell_quote (w);
          g_string_append (line, quoted);
        }
    }
  return g_string_free (line, FALSE);
}

void
lk_race_signal_running (int signo)
{
  pid_t pgid = (pid_t) running_pgid;
  if (pgid > 0)
    kill (-pgid, signo);
}

/* ---- one run ----------------------------------------------------------- */

typedef struct
{
  double wall_ns;
  double user_s;
  double system_s;
  int exit_code; /* the exit status, or 128 + the signal, as a shell reports it */
} Run;

/* An unlinked temporary file: a command's stdout or stderr, read after it. */
static int
open_scratch (GError **error)
{
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "likeness-race-XXXXXX", NULL);
  int fd = g_mkstemp_full (path, O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, LK_RACE_ERROR, LK_RACE_ERROR_IO,
                   "Could not create a temporary file in %s for the commands' output: %s",
                   g_get_tmp_dir (), g_strerror (saved));
      return -1;
    }
  g_unlink (path);
  return fd;
}

static void
rewind_scratch (int fd)
{
  if (fd < 0)
    return;
  /* The child's descriptor shares this file offset, so it writes from 0. */
  if (ftruncate (fd, 0) != 0 || lseek (fd, 0, SEEK_SET) != 0)
    g_warning ("lk-race: could not empty a temporary file: %s", g_strerror (errno));
}

/* The whole of a scratch file (stdout compared between arms). */
static GBytes *
read_scratch (int fd)
{
  GByteArray *bytes = g_byte_array_new ();
  guint8 buf[65536];
  off_t at = 0;
  ssize_t n;

  while ((n = pread (fd, buf, sizeof buf, at)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      {
        g_byte_array_append (bytes, buf, (guint) n);
        at += n;
      }
  return g_byte_array_free_to_bytes (bytes);
}

/* The last lines a command wrote to stderr, each on a line of its own
 * indented by four spaces; "" when it wrote nothing. */
static char *
stderr_tail (int fd)
{
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0 || st.st_size == 0)
    return g_strdup ("");
  off_t from = st.st_size > TAIL_BYTES ? st.st_size - TAIL_BYTES : 0;
  g_autofree char *text = g_malloc0 (TAIL_BYTES + 1);
  ssize_t n = pread (fd, text, TAIL_BYTES, from);
  if (n <= 0)
    return g_strdup ("");
  text[n] = '\0';
  g_autofree char *valid = g_utf8_make_valid (text, n);
  g_auto (GStrv) lines = g_strsplit (g_strchomp (valid), "\n", -1);
  guint n_lines = g_strv_length (lines);
  guint first = n_lines > TAIL_LINES ? n_lines - TAIL_LINES : 0;
  /* A line cut by the byte window is not shown half. */
  if (from > 0 && first == 0 && n_lines > 1)
    first = 1;
  GString *tail = g_string_new (NULL);
  for (guint k = first; k < n_lines; k++)
    g_string_append_printf (tail, "\n    %s", lines[k]);
  return g_string_free (tail, FALSE);
}

static int
open_pidfd (pid_t pid)
{
#ifdef SYS_pidfd_open
  return (int) syscall (SYS_pidfd_open, pid, 0);
#else
  (void) pid;
  errno = ENOSYS;
  return -1;
#endif
}

typedef enum
{
  ENDED,
  TIMED_OUT,
  CANCELLED,
} WaitEnd;

static double
seconds_since (gint64 start_us)
{
  return (g_get_monotonic_time () - start_us) / 1e6;
}

/* Waits for `pid` to end, for `timeout` seconds at most (0: no limit) and
 * until `cancellable` fires; a child not ended is killed with its process
 * group. Always reaps the child. */
static WaitEnd
wait_child (pid_t pid, double timeout, GCancellable *cancellable, int *status, struct rusage *ru)
{
  GPollFD cancel_fd = { -1, 0, 0 };
  gboolean can_cancel = cancellable != NULL && g_cancellable_make_pollfd (cancellable, &cancel_fd);
  WaitEnd end = ENDED;
  gint64 start = g_get_monotonic_time ();

  if (timeout > 0 || can_cancel)
    {
      int pidfd = open_pidfd (pid);
      gint64 pause_us = 20;
      for (;;)
        {
          if (g_cancellable_is_cancelled (cancellable))
            {
              end = CANCELLED;
              break;
            }
          double left = timeout > 0 ? timeout - seconds_since (start) : -1;
          if (timeout > 0 && left <= 0)
            {
              end = TIMED_OUT;
              break;
            }
          if (pidfd >= 0)
            {
              struct pollfd fds[2] = { { pidfd, POLLIN, 0 }, { cancel_fd.fd, POLLIN, 0 } };
              int ms = left < 0 ? -1 : (int) ceil (left * 1000.0);
              int n = poll (fds, can_cancel ? 2 : 1, ms);
              if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
                break;
            }
          else
            {
              /* No pidfd (a kernel before 5.3): look, then sleep a little
               * longer each time, up to 5 ms. */
              pid_t r = wait4 (pid, status, WNOHANG, ru);
              if (r == pid)
                {
                  if (can_cancel)
                    g_cancellable_release_fd (cancellable);
                  return ENDED;
                }
              g_usleep ((gulong) pause_us);
              pause_us = MIN (pause_us * 2, 5000);
            }
        }
      if (pidfd >= 0)
        close (pidfd);
    }
  if (end != ENDED)
    kill (-pid, SIGKILL);
  while (wait4 (pid, status, 0, ru) < 0 && errno == EINTR)
    ;
  if (can_cancel)
    g_cancellable_release_fd (cancellable);
  return end;
}

/* Runs argv once. TRUE with the run's times when it exited 0; otherwise
 * FALSE with `why` saying how it failed (not started: a spawn error). */
static gboolean
run_once (char *const *argv, int out_fd, int err_fd, double timeout, GCancellable *cancellable,
          Run *run, char **why, GError **error)
{
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, defaults;
  pid_t pid = 0;
  struct timespec t0, t1;

  /* A program that cannot be executed is named before the spawn: glibc's
   * posix_spawnp reports the failed exec, but under qemu-user (the aarch64
   * stage of .ci/check) it returns 0 and the child exits 127. */
  int unrunnable = 0;
  if (strchr (argv[0], '/') != NULL)
    unrunnable = access (argv[0], F_OK) != 0 ? ENOENT : access (argv[0], X_OK) != 0 ? EACCES : 0;
  else
    {
      g_autofree char *found = g_find_program_in_path (argv[0]);
      unrunnable = found == NULL ? ENOENT : 0;
    }
  if (unrunnable != 0)
    {
      g_set_error (error, LK_RACE_ERROR, LK_RACE_ERROR_SPAWN, "cannot run “%s”: %s", argv[0],
                   g_strerror (unrunnable));
      return FALSE;
    }

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2 (&actions, out_fd, STDOUT_FILENO);
  else
    posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, err_fd, STDERR_FILENO);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigemptyset (&defaults);
  sigaddset (&defaults, SIGPIPE);
  sigaddset (&defaults, SIGINT);
  sigaddset (&defaults, SIGTERM);
  sigaddset (&defaults, SIGHUP);
  sigaddset (&defaults, SIGQUIT);
  sigaddset (&defaults, SIGCHLD);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &defaults);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  clock_gettime (CLOCK_MONOTONIC, &t0);
  int rc = posix_spawnp (&pid, argv[0], &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  if (rc != 0)
    {
      g_set_error (error, LK_RACE_ERROR, LK_RACE_ERROR_SPAWN, "cannot run “%s”: %s", argv[0],
                   g_strerror (rc));
      return FALSE;
    }

  int status = 0;
  struct rusage ru = { 0 };
  running_pgid = pid;
  WaitEnd end = wait_child (pid, timeout, cancellable, &status, &ru);
  running_pgid = 0;
  clock_gettime (CLOCK_MONOTONIC, &t1);

  run->wall_ns = (double) (t1.tv_sec - t0.tv_sec) * 1e9 + (double) (t1.tv_nsec - t0.tv_nsec);
  run->user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  run->system_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  run->exit_code = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  if (end == CANCELLED)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The race was stopped");
      return FALSE;
    }
  if (end == TIMED_OUT)
    *why = g_strdup_printf ("did not finish within %g s and was killed", timeout);
  else if (WIFSIGNALED (status))
    *why = g_strdup_printf ("was killed by signal %d (%s)", WTERMSIG (status),
                            g_strsignal (WTERMSIG (status)));
  else if (WEXITSTATUS (status) != 0)
    *why = g_strdup_printf ("exited with status %d", WEXITSTATUS (status));
  else
    return TRUE;
  return FALSE;
}

/* ---- the race ---------------------------------------------------------- */

typedef struct
{
  const LkRaceOptions *o;
  GCancellable *cancellable;
  int out_fd[2]; /* per arm, when outputs are compared; else -1 */
  int err_fd;
  char *prepare_argv[4];
} Racer;

/* "arm A in repetition 3 of 10", "arm B in warmup run 1 of 2" */
static char *
where (int arm, gboolean warmup, guint index, guint of)
{
  return g_strdup_printf ("arm %c in %s %u of %u", 'A' + arm, warmup ? "warmup run" : "repetition",
                          index + 1, of);
}

static gboolean
fail_with_tail (Racer *r, GError **error, const char *what, const char *command, const char *why)
{
  g_autofree char *tail = stderr_tail (r->err_fd);
  g_set_error (error, LK_RACE_ERROR, LK_RACE_ERROR_FAILED, "%s: “%s” %s; %s%s", what, command, why,
               *tail ? "the last lines it wrote to stderr:" : "it wrote nothing to stderr", tail);
  return FALSE;
}

static gboolean
run_arm (Racer *r, int arm, gboolean warmup, guint index, guint of, Run *run, GError **error)
{
  char *const *argv = arm == 0 ? r->o->argv_a : r->o->argv_b;
  g_autofree char *why = NULL;
  g_autofree char *at = where (arm, warmup, index, of);
  g_autoptr (GError) local = NULL;

  if (r->o->prepare != NULL)
    {
      Run ignored;
      rewind_scratch (r->err_fd);
      if (!run_once (r->prepare_argv, -1, r->err_fd, r->o->timeout, r->cancellable, &ignored, &why,
                     &local))
        {
          if (local != NULL)
            {
              g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                          "the --prepare command before %s: ", at);
              return FALSE;
            }
          g_autofree char *what = g_strdup_printf ("the --prepare command before %s failed", at);
          return fail_with_tail (r, error, what, r->o->prepare, why);
        }
    }

  rewind_scratch (r->err_fd);
  rewind_scratch (r->out_fd[arm]);
  if (run_once (argv, r->out_fd[arm], r->err_fd, r->o->timeout, r->cancellable, run, &why, &local))
    return TRUE;
  if (local != NULL)
    {
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_prefix_error (&local, "%s: ", at);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_autofree char *command = lk_race_quote_argv (argv);
  g_autofree char *what = g_strdup_printf ("%s failed", at);
  return fail_with_tail (r, error, what, command, why);
}

/* One line of `bytes` from `*at`, for a message: at most 200 characters. */
static char *
line_at (GBytes *bytes, gsize at)
{
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  if (at >= size)
    return g_strdup ("(end of output)");
  const char *nl = memchr (data + at, '\n', size - at);
  gsize len = (nl ? (gsize) (nl - data) : size) - at;
  g_autofree char *valid = g_utf8_make_valid (data + at, (gssize) MIN (len, 200));
  return g_strdup_printf ("“%s%s”", valid, len > 200 ? "…" : "");
}

static gboolean
check_same_output (Racer *r, guint rep, GError **error)
{
  g_autoptr (GBytes) a = read_scratch (r->out_fd[0]);
  g_autoptr (GBytes) b = read_scratch (r->out_fd[1]);
  if (g_bytes_equal (a, b))
    return TRUE;

  gsize na, nb;
  const char *da = g_bytes_get_data (a, &na), *db = g_bytes_get_data (b, &nb);
  gsize k = 0, line_start = 0;
  guint line = 1;
  while (k < na && k < nb && da[k] == db[k])
    {
      if (da[k] == '\n')
        {
          line++;
          line_start = k + 1;
        }
      k++;
    }
  g_autofree char *la = line_at (a, line_start);
  g_autofree char *lb = line_at (b, line_start);
  g_set_error (error, LK_RACE_ERROR, LK_RACE_ERROR_OUTPUT_DIFFERS,
               "repetition %u of %u: the arms printed different output (--same-output): line %u "
               "is %s from A (%" G_GSIZE_FORMAT " bytes in all) but %s from B (%" G_GSIZE_FORMAT
               " bytes)",
               rep + 1, r->o->reps, line, la, na, lb, nb);
  return FALSE;
}

static void
racer_close (Racer *r)
{
  for (int arm = 0; arm < 2; arm++)
    if (r->out_fd[arm] >= 0)
      close (r->out_fd[arm]);
  if (r->err_fd >= 0)
    close (r->err_fd);
}

LkRace *
lk_race_run (const LkRaceOptions *o, LkRaceRepFunc on_rep, gpointer user_data,
             GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (o != NULL && o->argv_a != NULL && o->argv_a[0] != NULL, NULL);
  g_return_val_if_fail (o->argv_b != NULL && o->argv_b[0] != NULL, NULL);
  g_return_val_if_fail (o->reps > 0, NULL);

  Racer r = { o, cancellable, { -1, -1 }, -1, { "/bin/sh", "-c", o->prepare, NULL } };
  g_autoptr (LkRace) race = race_new (o);
  gboolean ok = (r.err_fd = open_scratch (error)) >= 0;
  for (int arm = 0; ok && o->same_output && arm < 2; arm++)
    ok = (r.out_fd[arm] = open_scratch (error)) >= 0;

  for (guint w = 0; ok && w < o->warmup; w++)
    for (int arm = 0; ok && arm < 2; arm++)
      {
        Run run;
        ok = !g_cancellable_set_error_if_cancelled (cancellable, error)
             && run_arm (&r, arm, TRUE, w, o->warmup, &run, error);
      }

  guint64 coin = o->seed;
  for (guint rep = 0; ok && rep < o->reps; rep++)
    {
      Run runs[2];
      gboolean a_first = lk_timing_coin_a_first (&coin);

      for (int k = 0; ok && k < 2; k++)
        {
          int arm = (k == 0) == a_first ? 0 : 1;
          ok = !g_cancellable_set_error_if_cancelled (cancellable, error)
               && run_arm (&r, arm, FALSE, rep, o->reps, &runs[arm], error);
        }
      if (ok && o->same_output)
        ok = check_same_output (&r, rep, error);
      if (!ok)
        break;
      for (int arm = 0; arm < 2; arm++)
        {
          race->user_s[arm][rep] = runs[arm].user_s;
          race->system_s[arm][rep] = runs[arm].system_s;
          race->exit_codes[arm][rep] = runs[arm].exit_code;
        }
      lk_paired_timing_append (race->wall, runs[0].wall_ns, runs[1].wall_ns, a_first);
      lk_paired_timing_append (race->cpu, 1e9 * (runs[0].user_s + runs[0].system_s),
                               1e9 * (runs[1].user_s + runs[1].system_s), a_first);
      race->reps = rep + 1;
      if (on_rep != NULL)
        on_rep (race, rep, user_data);
    }
  racer_close (&r);
  return ok ? g_steal_pointer (&race) : NULL;
}

LkTimingCell *
lk_race_judge (const LkRace *race, LkContract contract)
{
  g_autoptr (LkSpeedGate) gate = lk_speed_gate_open ("race");
  LkPairedTiming *timing = lk_paired_timing_copy (lk_race_timing (race));
  const LkTimingCell *cell = contract == LK_CONTRACT_FASTER
                                 ? lk_speed_gate_faster (gate, "A-vs-B", timing, "A", "B")
                                 : lk_speed_gate_not_slower (gate, "A-vs-B", timing, "A", "B");
  LkTimingCell *copy = lk_timing_cell_copy (cell);

  /* The verdict is in the cell; a loss is the caller's to report. */
  lk_speed_gate_finish (gate, NULL);
  return copy;
}

char *
lk_race_line (const LkRace *race, const LkTimingCell *verdict)
{
  if (verdict != NULL)
    return lk_timing_cell_line (verdict);
  g_autofree char *summary = lk_paired_timing_summary (lk_race_timing (race), "A", "B");
  return g_strdup_printf ("race A-vs-B %s verdict=none", summary);
}

/* ---- JSON -------------------------------------------------------------- */

static void
add_double_or_null (JsonBuilder *b, const char *name, double value)
{
  json_builder_set_member_name (b, name);
  if (isfinite (value))
    json_builder_add_double_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
add_sample_stats (JsonBuilder *b, const double *s, guint n)
{
  double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
  g_autoptr (LkPairedTiming) t = lk_paired_timing_new (n, 1, 0, LK_CLOCK_WALL);

  for (guint i = 0; i < n; i++)
    {
      sum += s[i];
      lo = MIN (lo, s[i]);
      hi = MAX (hi, s[i]);
      lk_paired_timing_append (t, s[i], s[i], TRUE);
    }
  double mean = n > 0 ? sum / n : NAN;
  for (guint i = 0; i < n; i++)
    sq += (s[i] - mean) * (s[i] - mean);
  add_double_or_null (b, "mean", mean);
  /* hyperfine's: the sample standard deviation, none from one run. */
  add_double_or_null (b, "stddev", n > 1 ? sqrt (sq / (n - 1)) : NAN);
  /* The median is lk-timing's, as the race's own medians are. */
  add_double_or_null (b, "median", lk_paired_timing_median_a_ns (t));
  add_double_or_null (b, "min", lo);
  add_double_or_null (b, "max", hi);
}

static double
mean_of (const double *s, guint n)
{
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += s[i];
  return n > 0 ? sum / n : NAN;
}

static void
add_double_array (JsonBuilder *b, const char *name, const double *s, guint n, double scale)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_double_value (b, s[i] * scale);
  json_builder_end_array (b);
}

static void
add_result (JsonBuilder *b, const LkRace *race, int arm)
{
  guint n = race->reps;
  const double *wall = arm == 0 ? race->wall->a_ns : race->wall->b_ns;
  const double *cpu = arm == 0 ? race->cpu->a_ns : race->cpu->b_ns;
  g_autofree double *wall_s = g_new (double, MAX (n, 1));

  for (guint i = 0; i < n; i++)
    wall_s[i] = wall[i] / 1e9;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "command");
  json_builder_add_string_value (b, race->command[arm]);
  add_sample_stats (b, wall_s, n);
  add_double_or_null (b, "user", mean_of (race->user_s[arm], n));
  add_double_or_null (b, "system", mean_of (race->system_s[arm], n));
  add_double_array (b, "times", wall_s, n, 1.0);
  json_builder_set_member_name (b, "exit_codes");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_int_value (b, race->exit_codes[arm][i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "likeness_arm");
  json_builder_add_string_value (b, arm == 0 ? "a" : "b");
  json_builder_set_member_name (b, "likeness_argv");
  json_builder_begin_array (b);
  for (guint k = 0; race->argv[arm][k] != NULL; k++)
    json_builder_add_string_value (b, race->argv[arm][k]);
  json_builder_end_array (b);
  add_double_array (b, "likeness_cpu_times", cpu, n, 1e-9);
  json_builder_end_object (b);
}

gboolean
lk_race_save_json (const LkRace *race, const LkTimingCell *verdict, const char *path,
                   GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const LkPairedTiming *t = lk_race_timing (race);
  g_autofree char *seed = g_strdup_printf ("%" G_GUINT64_FORMAT, race->seed);
  g_autofree char *summary = lk_paired_timing_summary (t, "A", "B");
  double low, high, confidence, load[3];
  lk_paired_timing_median_interval (t, &low, &high, &confidence);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "results");
  json_builder_begin_array (b);
  add_result (b, race, 0);
  add_result (b, race, 1);
  json_builder_end_array (b);

  json_builder_set_member_name (b, "likeness_race");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schema");
  json_builder_add_string_value (b, SCHEMA_NAME);
  json_builder_set_member_name (b, "schema_version");
  json_builder_add_int_value (b, SCHEMA_VERSION);
  json_builder_set_member_name (b, "seed");
  json_builder_add_string_value (b, seed);
  json_builder_set_member_name (b, "clock");
  json_builder_add_string_value (b, lk_clock_name (race->clock));
  json_builder_set_member_name (b, "reps");
  json_builder_add_int_value (b, race->reps);
  json_builder_set_member_name (b, "contract");
  if (verdict != NULL)
    json_builder_add_string_value (b, lk_contract_name (verdict->contract));
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "pass");
  if (verdict != NULL)
    json_builder_add_boolean_value (b, verdict->pass);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "verdict");
  if (verdict != NULL)
    json_builder_add_string_value (b, verdict->verdict);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "a_went_first");
  json_builder_begin_array (b);
  for (guint i = 0; i < t->reps; i++)
    json_builder_add_boolean_value (b, t->a_went_first[i]);
  json_builder_end_array (b);
  add_double_array (b, "ratios", t->ratios, t->reps, 1.0);
  add_double_or_null (b, "median_ratio", lk_paired_timing_median_ratio (t));
  add_double_or_null (b, "wins", lk_paired_timing_wins_fraction (t));
  add_double_or_null (b, "resolution", lk_paired_timing_ratio_resolution (t));
  add_double_or_null (b, "position_bias", lk_paired_timing_first_position_bias (t));
  add_double_or_null (b, "ci_low", low);
  add_double_or_null (b, "ci_high", high);
  add_double_or_null (b, "ci_confidence", confidence);
  json_builder_set_member_name (b, "summary");
  json_builder_add_string_value (b, summary);
  json_builder_set_member_name (b, "cpu_model");
  json_builder_add_string_value (b, lk_cpu_model_name ());
  json_builder_set_member_name (b, "cores");
  json_builder_add_int_value (b, lk_cpu_cores ());
  if (getloadavg (load, 3) == 3)
    add_double_array (b, "load_avg", load, 3, 1.0);
  json_builder_end_object (b);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  g_autoptr (GString) contents = g_string_new (text);
  g_string_append_c (contents, '\n');
  return g_file_set_contents (path, contents->str, (gssize) contents->len, error);
}
