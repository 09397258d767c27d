/* lk-test-util.h — small helpers shared by the test programs */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs $LIKENESS_CLI with the NULL-terminated arguments, stores its stdout
 * and stderr (logged as a test message) and returns its exit status; a CLI
 * killed by a signal fails the test. */
int lk_test_run_cli (char **out, char **err, ...) G_GNUC_NULL_TERMINATED;

/* The same with the arguments in a NULL-terminated array; `out` and `err`
 * may be NULL when the caller does not want them (they are still logged). */
int lk_test_run_cli_argv (const char *const *args, char **out, char **err);

/* Removes `path` and everything below it. Never follows a symlink: a test
 * that builds a link pointing out of its folder removes the link only. */
void lk_test_remove_tree (const char *path);

G_END_DECLS
