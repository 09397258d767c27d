/* lk-cli.h — shared plumbing of likeness-cli's subcommands
 *
 * Each subcommand lives in its own lk-cli-NAME.c and exports one function
 * with the signature of LkCliRun. Exit status: 0 success, 1 a user error (the
 * GError's message on stderr), 2 bad usage.
 *
 * What people read (errors, notes, summaries, --help) goes through gettext,
 * with ngettext where a count is printed. What scripts read (key=value
 * lines, tab-separated rows, JSON, the verdict lines of race and gates) is
 * not translated: a script must not break in another language.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

enum
{
  LK_CLI_OK = 0,
  LK_CLI_ERROR = 1,
  LK_CLI_USAGE = 2,
};

typedef int (*LkCliRun) (int argc, char **argv);

/* Parses argv (argv[0] is the subcommand's name) with `entries`, then checks
 * that between min_args and max_args positional arguments remain (max_args
 * < 0: no limit). On bad usage prints why and the subcommand's help to stderr
 * and returns FALSE; the caller returns LK_CLI_USAGE. */
gboolean lk_cli_parse (const char *name, const char *parameter_string, const char *description,
                       const GOptionEntry *entries, int *argc, char ***argv, int min_args,
                       int max_args);

struct _LkSession;
/* When the loaded session's guard fails (its calibration makes more than
 * LK_CALIBRATION_GUARD_BAR of random pairs candidates), says so on stderr
 * with what to do. */
void lk_cli_warn_guard (struct _LkSession *session);
/* Notes on stderr how many decisions name faces the library no longer has
 * (lk_review_n_gone), when there are any. */
void lk_cli_note_gone (struct _LkSession *session);

/* The example under `likeness-cli NAME --help`, translated; NULL for a name
 * that is no command. */
const char *lk_cli_example (const char *name);

/* Prints "likeness-cli: MESSAGE" to stderr and returns LK_CLI_ERROR. */
int lk_cli_fail (const GError *error);

int lk_cli_cpu (int argc, char **argv);
int lk_cli_people (int argc, char **argv);
int lk_cli_review (int argc, char **argv);
int lk_cli_evaluate (int argc, char **argv);
int lk_cli_gates (int argc, char **argv);
int lk_cli_race (int argc, char **argv);
int lk_cli_scan (int argc, char **argv);
int lk_cli_make_sample (int argc, char **argv);
int lk_cli_info (int argc, char **argv);
int lk_cli_import (int argc, char **argv);
int lk_cli_export (int argc, char **argv);
int lk_cli_calibrate (int argc, char **argv);

G_END_DECLS
