/* likeness-cli race — race two commands with the paired, interleaved harness
 *
 * `likeness-cli race [OPTIONS] -- COMMAND_A… -- COMMAND_B…`: every
 * repetition runs A and B back to back in an order drawn from a seeded coin
 * (lk-race.h), and the verdict is read exactly as `likeness-cli gates` reads
 * a cell's: from the median of the paired ratios B/A, with wins, resolution,
 * the sign-test interval and the position bias on the same line. Exit
 * status: 0 the race ran (and met its --contract, when one was given), 1 a
 * command failed, the outputs differed or the contract was lost, 2 bad usage.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lk-cli.h"
#include "timing/lk-cpu.h"
#include "timing/lk-race.h"

#define DEFAULT_REPS 15
#define RACE_USAGE   "-- COMMAND_A… -- COMMAND_B…"
#define RACE_SUMMARY                                                                               \
  N_ ("Race two commands, each repetition running both in a seeded random order, and judge them "  \
      "on the median of the paired ratios B/A (above 1: A is faster).")

typedef struct
{
  gboolean progress; /* stderr is a terminal: draw each repetition */
  guint reps;
} Progress;

static void
on_rep (const LkRace *race, guint rep, gpointer user_data)
{
  const Progress *p = user_data;
  char ratio[G_ASCII_DTOSTR_BUF_SIZE];

  if (!p->progress)
    return;
  g_ascii_formatd (ratio, sizeof ratio, "%.4f", lk_race_timing (race)->ratios[rep]);
  fprintf (stderr, "\r\033[Krace: repetition %u/%u ratio=%s (B/A, %s first)", rep + 1, p->reps,
           ratio, lk_race_timing (race)->a_went_first[rep] ? "A" : "B");
  fflush (stderr);
}

/* A Ctrl-C reaches likeness-cli, not the command, which runs in a process
 * group of its own: pass it on, then die of it as a shell expects. */
static void
on_signal (int signo)
{
  lk_race_signal_running (signo);
  signal (signo, SIG_DFL);
  raise (signo);
}

/* "12.345 ms": three significant decimals in a unit that suits `s`. */
static char *
format_seconds (double s)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  const char *unit = "s";
  double v = s;

  if (!isfinite (s))
    return g_strdup ("nan");
  if (fabs (s) < 1e-3)
    v = s * 1e6, unit = "µs";
  else if (fabs (s) < 1.0)
    v = s * 1e3, unit = "ms";
  return g_strdup_printf ("%s %s", g_ascii_formatd (buf, sizeof buf, "%.3f", v), unit);
}

static void
print_arm (const LkRace *race, int arm)
{
  const LkPairedTiming *w = race->wall;
  const double *ns = arm == 0 ? w->a_ns : w->b_ns;
  double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY, user = 0, sys = 0;
  guint n = race->reps;

  for (guint i = 0; i < n; i++)
    {
      sum += ns[i] / 1e9;
      lo = MIN (lo, ns[i] / 1e9);
      hi = MAX (hi, ns[i] / 1e9);
      user += race->user_s[arm][i];
      sys += race->system_s[arm][i];
    }
  double mean = sum / n;
  for (guint i = 0; i < n; i++)
    sq += (ns[i] / 1e9 - mean) * (ns[i] / 1e9 - mean);
  g_autofree char *m = format_seconds (mean);
  g_autofree char *sd = format_seconds (n > 1 ? sqrt (sq / (n - 1)) : NAN);
  g_autofree char *med = format_seconds (
      (arm == 0 ? lk_paired_timing_median_a_ns (w) : lk_paired_timing_median_b_ns (w)) / 1e9);
  g_autofree char *cpu = format_seconds ((arm == 0 ? lk_paired_timing_median_a_ns (race->cpu)
                                                   : lk_paired_timing_median_b_ns (race->cpu))
                                         / 1e9);
  g_autofree char *min = format_seconds (lo), *max = format_seconds (hi);
  g_autofree char *u = format_seconds (user / n), *s = format_seconds (sys / n);
  printf ("%c: wall mean %s ± %s, median %s, range %s … %s; cpu median %s (mean user %s, "
          "system %s)\n",
          'A' + arm, m, sd, med, min, max, cpu, u, s);
}

/* Without a contract, what the race shows: which arm is faster, by how
 * much, and whether the sign-test interval of the median ratio excludes 1. */
static void
print_conclusion (const LkPairedTiming *t)
{
  double low, high, confidence;
  char r[G_ASCII_DTOSTR_BUF_SIZE], l[G_ASCII_DTOSTR_BUF_SIZE], h[G_ASCII_DTOSTR_BUF_SIZE];
  char c[G_ASCII_DTOSTR_BUF_SIZE];
  double ratio = lk_paired_timing_median_ratio (t);

  g_ascii_formatd (r, sizeof r, "%.3f", ratio);
  if (!lk_paired_timing_median_interval (t, &low, &high, &confidence))
    {
      printf ("conclusion: B/A = %s; too few repetitions for an interval (it needs at least 6)\n",
              r);
      return;
    }
  g_ascii_formatd (l, sizeof l, "%.3f", low);
  g_ascii_formatd (h, sizeof h, "%.3f", high);
  g_ascii_formatd (c, sizeof c, "%.1f", 100.0 * confidence);
  if (low > 1.0)
    printf ("conclusion: A is faster: B takes %s× A's time (the %s%% interval [%s, %s] is above "
            "1)\n",
            r, c, l, h);
  else if (high < 1.0)
    printf ("conclusion: B is faster: B takes %s× A's time (the %s%% interval [%s, %s] is below "
            "1)\n",
            r, c, l, h);
  else
    printf ("conclusion: no difference this race resolves: B/A = %s, and the %s%% interval [%s, "
            "%s] holds 1\n",
            r, c, l, h);
}

/* The arms after the options: OPTIONS -- A… -- B…. Returns the index of
 * the first "--", or -1 with a message. */
static int
split_arms (int argc, char **argv, char ***a, char ***b)
{
  int first = -1, second = -1;

  for (int k = 1; k < argc; k++)
    if (strcmp (argv[k], "--") == 0)
      {
        if (first < 0)
          first = k;
        else
          {
            second = k;
            break;
          }
      }
  if (first < 0 || second < 0 || second == first + 1 || second == argc - 1)
    {
      fprintf (stderr,
               _ ("likeness-cli race: expected [OPTIONS] -- COMMAND_A… -- COMMAND_B…%s\n"
                  "Try “likeness-cli race --help”.\n"),
               first < 0             ? _ (" (no “--” before command A)")
               : second < 0          ? _ (" (no second “--” between command A and command B)")
               : second == first + 1 ? _ (" (command A is empty)")
                                     : _ (" (command B is empty)"));
      return -1;
    }
  *a = g_new0 (char *, second - first);
  for (int k = first + 1; k < second; k++)
    (*a)[k - first - 1] = g_strdup (argv[k]);
  *b = g_new0 (char *, argc - second);
  for (int k = second + 1; k < argc; k++)
    (*b)[k - second - 1] = g_strdup (argv[k]);
  return first;
}

/* --shell: the arm's words as one command line for /bin/sh -c. */
static char **
shell_argv (char **words)
{
  g_autofree char *line = g_strjoinv (" ", words);
  char **argv = g_new0 (char *, 4);
  argv[0] = g_strdup ("/bin/sh");
  argv[1] = g_strdup ("-c");
  argv[2] = g_steal_pointer (&line);
  return argv;
}

/* The options' values, checked: FALSE (with a message) on bad usage. */
static gboolean
check_options (int reps, int warmup, double timeout, const char *clock_name,
               const char *contract_name, const char *seed_text, LkClock *clock, guint64 *seed)
{
  g_autoptr (GError) error = NULL;

  if (reps < 1 || warmup < 0 || !(timeout >= 0))
    {
      fprintf (stderr,
               _ ("likeness-cli race: --reps needs at least 1, --warmup and --timeout at least 0 "
                  "(got %d, %d and %g)\n"),
               reps, warmup, timeout);
      return FALSE;
    }
  *clock = LK_CLOCK_WALL;
  if (clock_name != NULL && g_str_equal (clock_name, "cpu"))
    *clock = LK_CLOCK_CPU;
  else if (clock_name != NULL && !g_str_equal (clock_name, "wall"))
    {
      fprintf (stderr, _ ("likeness-cli race: --clock must be wall or cpu, not “%s”\n"),
               clock_name);
      return FALSE;
    }
  if (contract_name != NULL && !g_str_equal (contract_name, "faster")
      && !g_str_equal (contract_name, "not_slower"))
    {
      fprintf (stderr, _ ("likeness-cli race: --contract must be faster or not_slower, not “%s”\n"),
               contract_name);
      return FALSE;
    }
  gboolean hex = seed_text != NULL && g_ascii_strncasecmp (seed_text, "0x", 2) == 0;
  if (seed_text == NULL)
    *seed = ((guint64) g_random_int () << 32) | g_random_int ();
  else if (!g_ascii_string_to_unsigned (seed_text + (hex ? 2 : 0), hex ? 16 : 10, 0, G_MAXUINT64,
                                        seed, &error))
    {
      fprintf (stderr, _ ("likeness-cli race: --seed: %s\n"), error->message);
      return FALSE;
    }
  return TRUE;
}

/* What the race is: seed, options and machine, then the two commands. */
static void
print_header (const LkRaceOptions *o, const char *contract_name)
{
  g_autofree char *command_a = lk_race_quote_argv (o->argv_a);
  g_autofree char *command_b = lk_race_quote_argv (o->argv_b);
  double load[3] = { NAN, NAN, NAN };
  char load_text[G_ASCII_DTOSTR_BUF_SIZE];

  if (getloadavg (load, 3) < 1)
    load[0] = NAN;
  g_ascii_formatd (load_text, sizeof load_text, "%.2f", load[0]);
  printf ("race seed=%" G_GUINT64_FORMAT " reps=%u warmup=%u clock=%s contract=%s cpu=%s "
          "cores=%u load=%s\n",
          o->seed, o->reps, o->warmup, lk_clock_name (o->clock),
          contract_name ? contract_name : "none", lk_cpu_model_name (), lk_cpu_cores (), load_text);
  printf ("A: %s\nB: %s\n", command_a, command_b);
  fflush (stdout);
}

/* Runs the race with Ctrl-C passed on to the running command. */
static LkRace *
run_race (const LkRaceOptions *o, GError **error)
{
  Progress progress = { isatty (STDERR_FILENO), o->reps };

  signal (SIGINT, on_signal);
  signal (SIGTERM, on_signal);
  signal (SIGHUP, on_signal);
  LkRace *race = lk_race_run (o, on_rep, &progress, NULL, error);
  signal (SIGINT, SIG_DFL);
  signal (SIGTERM, SIG_DFL);
  signal (SIGHUP, SIG_DFL);
  if (progress.progress)
    fprintf (stderr, "\r\033[K");
  return race;
}

/* Both arms, the verdict line, the order, the conclusion; the JSON when
 * asked. Returns the exit status. */
static int
report (LkRace *race, LkClock clock, const char *contract_name, const char *json_path)
{
  g_autoptr (GError) error = NULL;
  const LkPairedTiming *t = lk_race_timing (race);
  guint a_first = 0;
  for (guint i = 0; i < t->reps; i++)
    a_first += t->a_went_first[i];
  print_arm (race, 0);
  print_arm (race, 1);

  /* The verdict is a speed gate's, judged by lk-timing's own rules. */
  g_autoptr (LkTimingCell) verdict = NULL;
  if (contract_name != NULL)
    verdict = lk_race_judge (race, g_str_equal (contract_name, "faster") ? LK_CONTRACT_FASTER
                                                                         : LK_CONTRACT_NOT_SLOWER);
  g_autofree char *line = lk_race_line (race, verdict);
  printf ("%s\n", line);
  printf (ngettext ("  order: A went first in %u of %u repetition\n",
                    "  order: A went first in %u of %u repetitions\n", t->reps),
          a_first, t->reps);
  print_conclusion (t);
  if (clock == LK_CLOCK_CPU)
    for (guint i = 0; i < t->reps; i++)
      if (t->a_ns[i] == 0 || t->b_ns[i] == 0)
        {
          fprintf (stderr, _ ("likeness-cli race: warning: a run used no CPU time the kernel "
                              "counted (rusage counts microseconds); these commands are too short "
                              "for --clock cpu\n"));
          break;
        }

  if (json_path != NULL && !lk_race_save_json (race, verdict, json_path, &error))
    return lk_cli_fail (error);
  if (verdict != NULL && !verdict->pass)
    {
      printf ("race: %s\n", verdict->verdict);
      return LK_CLI_ERROR;
    }
  printf ("race: %s\n", verdict != NULL ? "pass" : "done");
  return LK_CLI_OK;
}

int
lk_cli_race (int argc, char **argv)
{
  g_auto (GStrv) argv_a = NULL, argv_b = NULL;
  g_autofree char *json_path = NULL, *seed_text = NULL, *prepare = NULL;
  g_autofree char *clock_name = NULL, *contract_name = NULL;
  int reps = DEFAULT_REPS, warmup = 1;
  double timeout = 0;
  gboolean same_output = FALSE, shell = FALSE;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps,
      N_ ("Repetitions, each one run of A and one of B (default 15)"), "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup,
      N_ ("Untimed runs of each arm before the race (default 1)"), "N" },
    { "prepare", 0, 0, G_OPTION_ARG_STRING, &prepare,
      N_ ("Shell command run before every run of either arm, untimed (as hyperfine's)"), "CMD" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_name,
      N_ ("The clock the ratios and the verdict are read on: wall (default) or cpu (the child's "
          "user + system time)"),
      "wall|cpu" },
    { "contract", 0, 0, G_OPTION_ARG_STRING, &contract_name,
      N_ ("Judge the race as a speed gate: A faster than B, or A not slower beyond the resolution "
          "(exit 1 on a loss)"),
      "faster|not_slower" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text,
      N_ ("Seed of the arm-order coin, decimal or 0x… (default: drawn, and printed)"), "S" },
    { "timeout", 0, 0, G_OPTION_ARG_DOUBLE, &timeout,
      N_ ("Seconds one run may take before it is killed and the race stops (default: no limit)"),
      "SECONDS" },
    { "same-output", 0, 0, G_OPTION_ARG_NONE, &same_output,
      N_ ("Stop the race when A and B print different output in a repetition"), NULL },
    { "shell", 0, 0, G_OPTION_ARG_NONE, &shell,
      N_ ("Run each arm's words as one command line with /bin/sh -c (default: run them directly)"),
      NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path,
      N_ ("Also write every repetition in hyperfine's --export-json shape, with the paired fields"),
      "FILE" },
    { NULL },
  };
  g_autoptr (GError) error = NULL;
  guint64 seed;

  for (int k = 1; k < argc && strcmp (argv[k], "--") != 0; k++)
    if (g_str_has_prefix (argv[k], "--help") || strcmp (argv[k], "-h") == 0)
      {
        /* Prints the help and exits. */
        lk_cli_parse ("race", RACE_USAGE, RACE_SUMMARY, entries, &argc, &argv, 0, 0);
        return LK_CLI_USAGE;
      }
  int first = split_arms (argc, argv, &argv_a, &argv_b);
  if (first < 0)
    return LK_CLI_USAGE;
  int n_options = first;
  char **options = argv;
  if (!lk_cli_parse ("race", RACE_USAGE, RACE_SUMMARY, entries, &n_options, &options, 0, 0))
    return LK_CLI_USAGE;
  LkClock clock;
  if (!check_options (reps, warmup, timeout, clock_name, contract_name, seed_text, &clock, &seed))
    return LK_CLI_USAGE;
  if (shell)
    {
      char **a = shell_argv (argv_a), **b = shell_argv (argv_b);
      g_strfreev (argv_a);
      g_strfreev (argv_b);
      argv_a = a;
      argv_b = b;
    }

  LkRaceOptions o = {
    .argv_a = argv_a,
    .argv_b = argv_b,
    .prepare = prepare,
    .reps = (guint) reps,
    .warmup = (guint) warmup,
    .seed = seed,
    .clock = clock,
    .timeout = timeout,
    .same_output = same_output,
  };
  print_header (&o, contract_name);
  g_autoptr (LkRace) race = run_race (&o, &error);
  if (race == NULL)
    {
      printf ("race: FAIL: %s\n", error->message);
      fprintf (stderr, _ ("likeness-cli race: %s\n"), error->message);
      return LK_CLI_ERROR;
    }
  return report (race, clock, contract_name, json_path);
}
