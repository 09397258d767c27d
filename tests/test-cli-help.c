/* test-cli-help — likeness-cli as a Unix tool: `help COMMAND` is
 * `COMMAND --help`, every command's help ends with an example, and a count
 * of one is said in the singular (ngettext, not a hand-made "s"), and a
 * catalogue translates both.
 *
 * Runs the built likeness-cli ($LIKENESS_CLI).
 */
#include "config.h"

#include <string.h>

#include "lk-test-util.h"

/* The command names `likeness-cli --help` lists under "Commands:". */
static GPtrArray *
commands (void)
{
  g_autofree char *out = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, NULL, "--help", NULL), ==, 0);
  const char *list = strstr (out, "Commands:\n");
  g_assert_nonnull (list);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) lines = g_strsplit (list + strlen ("Commands:\n"), "\n", -1);
  for (guint k = 0; lines[k] != NULL && *lines[k] != '\0'; k++)
    {
      g_auto (GStrv) words = g_strsplit_set (g_strstrip (lines[k]), " ", 2);
      g_ptr_array_add (names, g_strdup (words[0]));
    }
  return names;
}

static void
test_help_command_is_command_help_with_example (void)
{
  g_autoptr (GPtrArray) names = commands ();
  g_assert_cmpuint (names->len, >=, 12);
  for (guint k = 0; k < names->len; k++)
    {
      const char *name = g_ptr_array_index (names, k);
      g_autofree char *help = NULL, *dash_help = NULL;
      g_assert_cmpint (lk_test_run_cli (&help, NULL, "help", name, NULL), ==, 0);
      g_assert_cmpint (lk_test_run_cli (&dash_help, NULL, name, "--help", NULL), ==, 0);
      g_assert_cmpstr (help, ==, dash_help);
      g_autofree char *usage = g_strdup_printf ("likeness-cli %s [OPTION", name);
      g_autofree char *example = g_strdup_printf ("Example:\n  likeness-cli %s ", name);
      g_assert_nonnull (strstr (help, usage));
      g_assert_nonnull (strstr (help, example));
    }
}

static void
test_help_of_unknown_command_is_usage_error (void)
{
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "help", "frobnicate", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "likeness-cli help: unknown command “frobnicate”"));
  g_assert_nonnull (strstr (err, "Commands:"));
}

/* The top-level help, which help2man makes the man page of, shows an
 * example for every command. */
static void
test_usage_lists_an_example_per_command (void)
{
  g_autoptr (GPtrArray) names = commands ();
  g_autofree char *out = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, NULL, "help", NULL), ==, 0);
  const char *examples = strstr (out, "\nExamples:\n");
  g_assert_nonnull (examples);
  for (guint k = 0; k < names->len; k++)
    {
      g_autofree char *line = g_strdup_printf (" likeness-cli %s ", (char *) names->pdata[k]);
      g_assert_nonnull (strstr (examples, line));
    }
}

/* A sample's faces have no source id: export --by-source-id counts them. */
static char *
export_note (const char *faces)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-help-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *library = g_build_filename (dir, "library", NULL);
  g_assert_cmpint (lk_test_run_cli (NULL, NULL, "make-sample", library, "--faces", faces,
                                    "--no-thumbnails", NULL),
                   ==, 0);
  char *err = NULL;
  g_assert_cmpint (lk_test_run_cli (NULL, &err, "export", library, "--by-source-id", NULL), ==, 0);
  lk_test_remove_tree (dir);
  return err;
}

static void
test_count_of_one_is_singular (void)
{
  g_autofree char *one = export_note ("1");
  g_autofree char *two = export_note ("2");
  g_assert_nonnull (strstr (one, "likeness-cli export: 1 face without a source id"));
  g_assert_nonnull (strstr (two, "likeness-cli export: 2 faces without a source id"));
}

/* A one-face sample has one photo: "1 of 1 photo drawn". */
static void
test_one_photo_drawn_is_singular (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-help-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *library = g_build_filename (dir, "library", NULL);
  g_autofree char *err = NULL;
  g_assert_cmpint (lk_test_run_cli (NULL, &err, "make-sample", library, "--faces", "1", NULL), ==,
                   0);
  lk_test_remove_tree (dir);
  g_assert_nonnull (strstr (err, "1 of 1 photo drawn"));
  g_assert_null (strstr (err, "photos drawn"));
}

/* A catalogue made here (msgfmt) with one message and one plural: the CLI
 * finds it through LIKENESS_LOCALEDIR and says both in German, with the
 * plural form the count asks for. */
static const char german[]
    = "msgid \"\"\nmsgstr \"\"\n"
      "\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
      "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n"
      "#, c-format\n"
      "msgid \"likeness-cli help: unknown command “%s”\\n\\n\"\n"
      "msgstr \"likeness-cli help: unbekannter Befehl „%s“\\n\\n\"\n\n"
      "#, c-format\n"
      "msgid \"likeness-cli export: %zu face without a source id (faces[].id) left out\\n\"\n"
      "msgid_plural \"likeness-cli export: %zu faces without a source id (faces[].id) left "
      "out\\n\"\n"
      "msgstr[0] \"likeness-cli export: %zu Gesicht ohne Quell-ID ausgelassen\\n\"\n"
      "msgstr[1] \"likeness-cli export: %zu Gesichter ohne Quell-ID ausgelassen\\n\"\n";

static void
test_messages_and_plurals_are_translated (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-help-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *messages = g_build_filename (dir, "de", "LC_MESSAGES", NULL);
  g_autofree char *po = g_build_filename (dir, "de.po", NULL);
  g_autofree char *mo = g_build_filename (messages, "likeness.mo", NULL);
  g_assert_cmpint (g_mkdir_with_parents (messages, 0700), ==, 0);
  g_assert_true (g_file_set_contents (po, german, -1, &error));
  int status = 0;
  const char *msgfmt[] = { "msgfmt", "--check", "-o", mo, po, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) msgfmt, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                               NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  g_assert_no_error (error);

  g_autofree char *one = NULL, *two = NULL;
  g_setenv ("LIKENESS_LOCALEDIR", dir, TRUE);
  g_setenv ("LC_ALL", "C.UTF-8", TRUE);
  g_setenv ("LANGUAGE", "de", TRUE);
  g_autofree char *err = NULL;
  g_assert_cmpint (lk_test_run_cli (NULL, &err, "help", "frobnicate", NULL), ==, 2);
  one = export_note ("1");
  two = export_note ("2");
  g_unsetenv ("LIKENESS_LOCALEDIR");
  g_unsetenv ("LANGUAGE");
  lk_test_remove_tree (dir);
  g_assert_nonnull (strstr (err, "likeness-cli help: unbekannter Befehl „frobnicate“"));
  g_assert_nonnull (strstr (one, "likeness-cli export: 1 Gesicht ohne Quell-ID ausgelassen"));
  g_assert_nonnull (strstr (two, "likeness-cli export: 2 Gesichter ohne Quell-ID ausgelassen"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/help/command-is-command-help-with-example",
                   test_help_command_is_command_help_with_example);
  g_test_add_func ("/cli/help/unknown-command-is-usage-error",
                   test_help_of_unknown_command_is_usage_error);
  g_test_add_func ("/cli/help/usage-lists-an-example-per-command",
                   test_usage_lists_an_example_per_command);
  g_test_add_func ("/cli/plural/count-of-one-is-singular", test_count_of_one_is_singular);
  g_test_add_func ("/cli/plural/one-photo-drawn-is-singular", test_one_photo_drawn_is_singular);
  g_test_add_func ("/cli/i18n/messages-and-plurals-are-translated",
                   test_messages_and_plurals_are_translated);
  return g_test_run ();
}
