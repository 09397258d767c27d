/* test-cli-race — `likeness-cli race` and lk_race_run: structure, order,
 * failures, outputs, JSON, Stop
 *
 * The commands raced are lk-race-helper ($LK_RACE_HELPER), whose work,
 * output, stderr, exit status and death each test chooses. No timing is
 * asserted (a race of a few repetitions on a shared machine proves nothing
 * about speed, and a test must not flake with the load): what is asserted is
 * what a race prints and writes, that its order is the seed's, that every
 * kind of failure stops it naming the arm and the repetition, and that a
 * Stop kills and reaps the running command.
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include "timing/lk-race.h"
#include "lk-test-util.h"

static const char *
helper (void)
{
  const char *path = g_getenv ("LK_RACE_HELPER");
  g_assert_nonnull (path);
  return path;
}

/* Runs `likeness-cli race` with the NULL-terminated arguments; "HELPER" in
 * them stands for lk-race-helper's path. */
static int G_GNUC_NULL_TERMINATED
race (char **out, char **err, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  va_list ap;
  const char *arg;

  g_ptr_array_add (args, "race");
  va_start (ap, err);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (char *) (g_str_equal (arg, "HELPER") ? helper () : arg));
  va_end (ap);
  g_ptr_array_add (args, NULL);
  return lk_test_run_cli_argv ((const char *const *) args->pdata, out, err);
}

static JsonObject *
load_json (JsonParser *parser, const char *path)
{
  g_autoptr (GError) error = NULL;
  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_node_get_object (json_parser_get_root (parser));
}

static char *
temp_path (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-race-XXXXXX", &error);
  g_assert_no_error (error);
  return g_build_filename (dir, name, NULL);
}

static void
remove_temp (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  lk_test_remove_tree (dir);
}

static double
number (JsonObject *o, const char *field)
{
  JsonNode *node = json_object_get_member (o, field);
  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_VALUE (node));
  return json_node_get_double (node);
}

/* A race's stdout carries the summary fields of a gate's line, and its JSON
 * is hyperfine's --export-json shape (results[] with command, mean, stddev,
 * median, user, system, min, max, times and exit_codes) holding every
 * repetition, with the paired fields beside it agreeing with the times. */
static void
test_race_prints_the_summary_and_writes_hyperfine_json (void)
{
  g_autofree char *json = temp_path ("race.json");
  g_autofree char *out = NULL, *err = NULL;
  const guint reps = 8;

  g_assert_cmpint (race (&out, &err, "--reps", "8", "--warmup", "0", "--seed", "7", "--json", json,
                         "--", "HELPER", "--spin", "1000", "--", "HELPER", "--spin", "2000", NULL),
                   ==, 0);
  g_assert_true (g_str_has_prefix (out, "race seed=7 reps=8 warmup=0 clock=wall contract=none "));
  g_autofree char *a_line
      = g_strdup_printf ("\nA: %s --spin 1000\nB: %s --spin 2000\n", helper (), helper ());
  g_assert_nonnull (strstr (out, a_line));
  g_assert_nonnull (strstr (out, "\nA: wall mean "));
  g_assert_nonnull (strstr (out, "\nB: wall mean "));
  g_assert_nonnull (strstr (out, "\nrace A-vs-B A="));
  for (const char *const *field
       = (const char *const[]){ " ns/iter B=", " median_ratio=", " wins=", " resolution=", " ci=[",
                                " position_bias=", " reps=8 clock=wall verdict=none\n",
                                "\n  order: A went first in ", "\nconclusion: ", "\nrace: done\n",
                                NULL };
       *field != NULL; field++)
    g_assert_nonnull (strstr (out, *field));

  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *top = load_json (parser, json);
  JsonArray *results = json_object_get_array_member (top, "results");
  g_assert_cmpuint (json_array_get_length (results), ==, 2);
  JsonArray *times[2];
  for (guint arm = 0; arm < 2; arm++)
    {
      JsonObject *r = json_array_get_object_element (results, arm);
      g_autofree char *command
          = g_strdup_printf ("%s --spin %s", helper (), arm == 0 ? "1000" : "2000");
      g_assert_cmpstr (json_object_get_string_member (r, "command"), ==, command);
      g_assert_cmpstr (json_object_get_string_member (r, "likeness_arm"), ==, arm ? "b" : "a");
      times[arm] = json_object_get_array_member (r, "times");
      JsonArray *cpu = json_object_get_array_member (r, "likeness_cpu_times");
      JsonArray *codes = json_object_get_array_member (r, "exit_codes");
      g_assert_cmpuint (json_array_get_length (times[arm]), ==, reps);
      g_assert_cmpuint (json_array_get_length (cpu), ==, reps);
      g_assert_cmpuint (json_array_get_length (codes), ==, reps);
      double lo = INFINITY, hi = 0, sum = 0;
      for (guint i = 0; i < reps; i++)
        {
          double t = json_array_get_double_element (times[arm], i);
          g_assert_cmpfloat (t, >, 0);
          g_assert_cmpfloat (json_array_get_double_element (cpu, i), >=, 0);
          g_assert_cmpint (json_array_get_int_element (codes, i), ==, 0);
          lo = MIN (lo, t);
          hi = MAX (hi, t);
          sum += t;
        }
      g_assert_cmpfloat (number (r, "min"), ==, lo);
      g_assert_cmpfloat (number (r, "max"), ==, hi);
      g_assert_cmpfloat_with_epsilon (number (r, "mean"), sum / reps, 1e-12);
      g_assert_cmpfloat (number (r, "median"), >=, lo);
      g_assert_cmpfloat (number (r, "median"), <=, hi);
      g_assert_cmpfloat (number (r, "stddev"), >=, 0);
      g_assert_cmpfloat (number (r, "user"), >=, 0);
      g_assert_cmpfloat (number (r, "system"), >=, 0);
      JsonArray *words = json_object_get_array_member (r, "likeness_argv");
      g_assert_cmpuint (json_array_get_length (words), ==, 3);
      g_assert_cmpstr (json_array_get_string_element (words, 0), ==, helper ());
    }

  JsonObject *paired = json_object_get_object_member (top, "likeness_race");
  g_assert_cmpstr (json_object_get_string_member (paired, "schema"), ==, "likeness-race");
  g_assert_cmpint (json_object_get_int_member (paired, "schema_version"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (paired, "seed"), ==, "7");
  g_assert_cmpstr (json_object_get_string_member (paired, "clock"), ==, "wall");
  g_assert_cmpint (json_object_get_int_member (paired, "reps"), ==, reps);
  g_assert_true (json_object_get_null_member (paired, "contract"));
  g_assert_true (json_object_get_null_member (paired, "pass"));
  JsonArray *ratios = json_object_get_array_member (paired, "ratios");
  JsonArray *first = json_object_get_array_member (paired, "a_went_first");
  g_assert_cmpuint (json_array_get_length (ratios), ==, reps);
  g_assert_cmpuint (json_array_get_length (first), ==, reps);
  /* The ratios are B/A of the times, repetition by repetition. */
  for (guint i = 0; i < reps; i++)
    g_assert_cmpfloat_with_epsilon (json_array_get_double_element (ratios, i),
                                    json_array_get_double_element (times[1], i)
                                        / json_array_get_double_element (times[0], i),
                                    1e-9);
  for (const char *const *field
       = (const char *const[]){ "median_ratio", "wins", "resolution", "ci_low", "ci_high",
                                "ci_confidence", NULL };
       *field != NULL; field++)
    g_assert_true (isfinite (number (paired, *field)));
  g_assert_nonnull (strstr (out, json_object_get_string_member (paired, "summary")));
  remove_temp (json);
}

/* The order of each repetition is the seed's: the harness's own coin, the
 * same on two runs with one seed, both orders drawn, and another seed draws
 * another sequence. */
static void
test_the_order_is_the_seeds (void)
{
  const guint reps = 16;
  gboolean orders[3][16];
  const char *seeds[3] = { "12345", "12345", "54321" };

  for (guint run = 0; run < 3; run++)
    {
      g_autofree char *json = temp_path ("order.json");
      g_autofree char *out = NULL;
      g_assert_cmpint (race (&out, NULL, "--reps", "16", "--warmup", "0", "--seed", seeds[run],
                             "--json", json, "--", "HELPER", "--", "HELPER", "--spin", "10", NULL),
                       ==, 0);
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *top = load_json (parser, json);
      JsonArray *first = json_object_get_array_member (
          json_object_get_object_member (top, "likeness_race"), "a_went_first");
      g_assert_cmpuint (json_array_get_length (first), ==, reps);
      guint a_first = 0;
      for (guint i = 0; i < reps; i++)
        a_first += orders[run][i] = json_array_get_boolean_element (first, i);
      g_autofree char *line = g_strdup_printf ("A went first in %u of 16 repetitions", a_first);
      g_assert_nonnull (strstr (out, line));
      g_assert_cmpuint (a_first, >, 0);
      g_assert_cmpuint (a_first, <, reps);
      remove_temp (json);
    }

  guint64 coin = 12345;
  gboolean differs = FALSE;
  for (guint i = 0; i < reps; i++)
    {
      g_assert_cmpint (orders[0][i], ==, lk_timing_coin_a_first (&coin));
      g_assert_cmpint (orders[1][i], ==, orders[0][i]);
      differs |= orders[2][i] != orders[0][i];
    }
  g_assert_true (differs);
}

/* With a contract, the verdict is a gate's: the cell line with its verdict,
 * and the exit status follows it (which it is depends on the machine). */
static void
test_a_contract_gives_a_gate_verdict (void)
{
  g_autofree char *out = NULL;
  int status = race (&out, NULL, "--reps", "6", "--warmup", "0", "--seed", "3", "--clock", "cpu",
                     "--contract", "not_slower", "--", "HELPER", "--spin", "1000", "--", "HELPER",
                     "--spin", "1000", NULL);

  g_assert_true (status == 0 || status == 1);
  g_assert_nonnull (strstr (out, " clock=cpu contract=not_slower "));
  g_assert_nonnull (strstr (out, "\nrace A-vs-B A="));
  g_assert_nonnull (strstr (out, " reps=6 clock=cpu verdict="));
  if (status == 0)
    {
      g_assert_nonnull (strstr (out, "verdict=pass\n"));
      g_assert_nonnull (strstr (out, "\nrace: pass\n"));
    }
  else
    {
      g_assert_nonnull (strstr (out, "verdict=FAIL: A is slower than B beyond the measurement"));
      g_assert_nonnull (strstr (out, "\nrace: FAIL: A is slower than B beyond"));
    }
}

/* A command that exits non-zero stops the race, naming the arm, the
 * repetition (or warmup run) and the last lines it wrote to stderr; no JSON
 * is written for a race that did not finish. */
static void
test_a_failing_arm_stops_the_race_with_its_stderr (void)
{
  g_autofree char *json = temp_path ("failed.json");
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (race (&out, &err, "--reps", "5", "--warmup", "0", "--seed", "1", "--json", json,
                         "--", "HELPER", "--", "HELPER", "--stderr", "reading library", "--stderr",
                         "boom: the disk is on fire", "--exit", "3", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "arm B in repetition 1 of 5 failed: "));
  g_assert_nonnull (strstr (err, "--exit 3” exited with status 3; the last lines it wrote to "
                                 "stderr:\n    reading library\n    boom: the disk is on fire"));
  g_assert_nonnull (strstr (out, "race: FAIL: arm B in repetition 1 of 5 failed"));
  g_assert_false (g_file_test (json, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* In a warmup run, and silent: said so. */
  g_assert_cmpint (race (&out, &err, "--reps", "5", "--warmup", "2", "--", "HELPER", "--exit", "1",
                         "--", "HELPER", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "arm A in warmup run 1 of 2 failed: "));
  g_assert_nonnull (strstr (err, "exited with status 1; it wrote nothing to stderr"));
  remove_temp (json);
}

/* Death by a signal, a run past --timeout, and a command that cannot start
 * each stop the race, named. */
static void
test_a_signal_a_timeout_and_a_missing_command_stop_the_race (void)
{
  g_autofree char *err = NULL;

  g_assert_cmpint (race (NULL, &err, "--reps", "3", "--warmup", "0", "--", "HELPER", "--signal",
                         "15", "--", "HELPER", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "arm A in repetition 1 of 3 failed: "));
  g_assert_nonnull (strstr (err, "was killed by signal 15 ("));
  g_clear_pointer (&err, g_free);

  /* --pause waits for a signal that never comes: only the timeout ends it.
   * Seed 2 sends B first, so A (which a loaded machine or qemu could slow
   * past 0.2 s) never runs: nothing here depends on a duration. */
  guint64 coin = 2;
  g_assert_false (lk_timing_coin_a_first (&coin));
  g_assert_cmpint (race (NULL, &err, "--reps", "3", "--warmup", "0", "--seed", "2", "--timeout",
                         "0.2", "--", "HELPER", "--", "HELPER", "--stderr", "waiting", "--pause",
                         NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "arm B in repetition 1 of 3 failed: "));
  g_assert_nonnull (strstr (err, "did not finish within 0.2 s and was killed; the last lines "
                                 "it wrote to stderr:\n    waiting"));
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (race (NULL, &err, "--reps", "3", "--warmup", "0", "--",
                         "/nonexistent/likeness-race-command", "--", "HELPER", NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "arm A in repetition 1 of 3: cannot run "
                                 "“/nonexistent/likeness-race-command”: "));
}

/* --same-output: a B that prints something else is no win. */
static void
test_same_output_catches_a_difference (void)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (race (&out, &err, "--reps", "4", "--warmup", "0", "--same-output", "--",
                         "HELPER", "--print", "pair 1 2", "--", "HELPER", "--print", "pair 1 3",
                         NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "repetition 1 of 4: the arms printed different output "
                                 "(--same-output): line 1 is “pair 1 2” from A (9 bytes in all) "
                                 "but “pair 1 3” from B (9 bytes)"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (race (&out, &err, "--reps", "4", "--warmup", "0", "--same-output", "--",
                         "HELPER", "--spin", "100", "--print", "pair 1 2", "--", "HELPER",
                         "--print", "pair 1 2", NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "\nrace: done\n"));
}

/* --prepare runs, untimed, before every run of either arm, warmups included;
 * when it fails the race stops saying so. --shell runs each arm's words as
 * one shell command line. */
static void
test_prepare_runs_before_every_run_and_shell_is_asked_for (void)
{
  g_autofree char *log = temp_path ("prepare.log");
  g_autofree char *prepare = g_strdup_printf ("echo run >> '%s'", log);
  g_autofree char *contents = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (race (&out, NULL, "--reps", "3", "--warmup", "1", "--prepare", prepare, "--",
                         "HELPER", "--", "HELPER", NULL),
                   ==, 0);
  g_assert_true (g_file_get_contents (log, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "run\nrun\nrun\nrun\nrun\nrun\nrun\nrun\n");
  g_clear_pointer (&out, g_free);

  g_assert_cmpint (race (NULL, &err, "--reps", "3", "--warmup", "0", "--prepare",
                         "echo cache not dropped >&2; exit 4", "--", "HELPER", "--", "HELPER",
                         NULL),
                   ==, 1);
  g_assert_nonnull (strstr (err, "the --prepare command before arm "));
  g_assert_nonnull (strstr (err, " in repetition 1 of 3 failed: “echo cache not dropped >&2; "
                                 "exit 4” exited with status 4; the last lines it wrote to "
                                 "stderr:\n    cache not dropped"));

  /* The pipe is the shell's: without --shell "|" would be an argument. */
  g_autofree char *piped = g_strdup_printf ("%s --print same | cat", helper ());
  g_autofree char *plain = g_strdup_printf ("%s --print same", helper ());
  g_assert_cmpint (race (&out, NULL, "--reps", "2", "--warmup", "0", "--shell", "--same-output",
                         "--", piped, "--", plain, NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "\nA: /bin/sh -c '"));
  remove_temp (log);
}

static void
test_bad_usage_is_refused (void)
{
  const char *cases[][12] = {
    { "HELPER", NULL },
    { "--", "HELPER", NULL },
    { "--", "HELPER", "--", NULL },
    { "--", "--", "HELPER", NULL },
    { "--reps", "0", "--", "HELPER", "--", "HELPER", NULL },
    { "--clock", "sundial", "--", "HELPER", "--", "HELPER", NULL },
    { "--contract", "maybe", "--", "HELPER", "--", "HELPER", NULL },
    { "--seed", "seven", "--", "HELPER", "--", "HELPER", NULL },
    { "--timeout", "-1", "--", "HELPER", "--", "HELPER", NULL },
    { "--bogus", "--", "HELPER", "--", "HELPER", NULL },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GPtrArray) args = g_ptr_array_new ();
      g_autofree char *err = NULL;
      g_ptr_array_add (args, "race");
      for (guint k = 0; cases[c][k] != NULL; k++)
        g_ptr_array_add (args,
                         (char *) (g_str_equal (cases[c][k], "HELPER") ? helper () : cases[c][k]));
      g_ptr_array_add (args, NULL);
      g_assert_cmpint (lk_test_run_cli_argv ((const char *const *) args->pdata, NULL, &err), ==, 2);
      g_assert_true (g_str_has_prefix (err, "likeness-cli race: "));
    }
}

/* ---- the engine: lk_race_run ------------------------------------------- */

typedef struct
{
  guint calls;
  guint64 coin;
} RepLog;

static void
count_rep (const LkRace *race, guint rep, gpointer user_data)
{
  RepLog *log = user_data;
  g_assert_cmpuint (rep, ==, log->calls);
  g_assert_cmpuint (race->reps, ==, rep + 1);
  g_assert_cmpint (race->wall->a_went_first[rep], ==, lk_timing_coin_a_first (&log->coin));
  g_assert_cmpint (race->cpu->a_went_first[rep], ==, race->wall->a_went_first[rep]);
  log->calls++;
}

/* Each repetition lands with both clocks and both arms, in the coin's order. */
static void
test_run_reports_every_repetition (void)
{
  char *a[] = { (char *) helper (), "--spin", "100", NULL };
  char *b[] = { (char *) helper (), NULL };
  LkRaceOptions o = { a, b, NULL, 5, 0, 99, LK_CLOCK_CPU, 0, FALSE };
  RepLog log = { 0, 99 };
  g_autoptr (GError) error = NULL;

  g_autoptr (LkRace) r = lk_race_run (&o, count_rep, &log, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log.calls, ==, 5);
  g_assert_cmpuint (r->reps, ==, 5);
  g_assert_true (lk_race_timing (r) == r->cpu);
  g_assert_cmpuint (r->wall->reps, ==, 5);
  g_assert_cmpuint (r->wall->seed, ==, 99);
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpfloat (r->wall->a_ns[i], >, 0);
      g_assert_cmpfloat (r->wall->b_ns[i], >, 0);
      g_assert_cmpfloat_with_epsilon (r->cpu->a_ns[i], 1e9 * (r->user_s[0][i] + r->system_s[0][i]),
                                      1.0);
    }
  g_autofree char *quoted = lk_race_quote_argv (a);
  g_assert_cmpstr (r->command[0], ==, quoted);
}

typedef struct
{
  LkRaceOptions *options;
  GCancellable *cancellable;
  GError *error;
  LkRace *race;
} Stopped;

static gpointer
race_thread (gpointer data)
{
  Stopped *s = data;
  s->race = lk_race_run (s->options, NULL, NULL, s->cancellable, &s->error);
  return NULL;
}

/* Stop while a command runs: the race ends cancelled, the command killed
 * and reaped (no zombie left: its pid no longer exists). */
static void
test_stop_kills_and_reaps_the_running_command (void)
{
  g_autofree char *pidfile = temp_path ("child.pid");
  char *a[] = { (char *) helper (), "--pidfile", pidfile, "--pause", NULL };
  char *b[] = { (char *) helper (), NULL };
  LkRaceOptions o = { a, b, NULL, 3, 0, 1, LK_CLOCK_WALL, 0, FALSE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  Stopped s = { &o, cancellable, NULL, NULL };
  g_autofree char *text = NULL;

  GThread *thread = g_thread_new ("race", race_thread, &s);
  /* Wait for arm A to be running (a condition, not a duration: the helper
   * writes its pid, then pauses until killed). */
  while (!g_file_get_contents (pidfile, &text, NULL, NULL))
    g_usleep (2000);
  GPid pid = (GPid) g_ascii_strtoll (text, NULL, 10);
  g_assert_cmpint (pid, >, 0);
  g_assert_cmpint (kill (pid, 0), ==, 0);
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);

  g_assert_null (s.race);
  g_assert_error (s.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&s.error);
  errno = 0;
  g_assert_cmpint (kill (pid, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
  remove_temp (pidfile);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli-race/prints-the-summary-and-writes-hyperfine-json",
                   test_race_prints_the_summary_and_writes_hyperfine_json);
  g_test_add_func ("/cli-race/the-order-is-the-seeds", test_the_order_is_the_seeds);
  g_test_add_func ("/cli-race/a-contract-gives-a-gate-verdict",
                   test_a_contract_gives_a_gate_verdict);
  g_test_add_func ("/cli-race/a-failing-arm-stops-the-race-with-its-stderr",
                   test_a_failing_arm_stops_the_race_with_its_stderr);
  g_test_add_func ("/cli-race/a-signal-a-timeout-and-a-missing-command-stop-the-race",
                   test_a_signal_a_timeout_and_a_missing_command_stop_the_race);
  g_test_add_func ("/cli-race/same-output-catches-a-difference",
                   test_same_output_catches_a_difference);
  g_test_add_func ("/cli-race/prepare-runs-before-every-run-and-shell-is-asked-for",
                   test_prepare_runs_before_every_run_and_shell_is_asked_for);
  g_test_add_func ("/cli-race/bad-usage-is-refused", test_bad_usage_is_refused);
  g_test_add_func ("/race/run-reports-every-repetition", test_run_reports_every_repetition);
  g_test_add_func ("/race/stop-kills-and-reaps-the-running-command",
                   test_stop_kills_and_reaps_the_running_command);
  return g_test_run ();
}
