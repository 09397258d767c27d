/* lk-bench-import.h — the race of an importer of this build against older
 * builds' on one generated instance, shared by bench-import-immich and
 * bench-import-photoprism (lk-bench-import.c says what it checks first). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs `argv` to its end and returns its stdout and stderr; a failure ends
 * the benchmark, naming the command and its output. */
char *lk_bench_run (const char *const *argv);

/* The import `cli head… OUT tail…` of this build (`cli`) against `before`
 * and, when not NULL, `also`, every library under `root`: `reps` paired
 * runs of each race, its report and the faces/s and CPU ratios on stdout. */
void lk_bench_import_race (const char *cli, const char *before, const char *also, int reps,
                           const char *root, const char *const *head, const char *const *tail);

G_END_DECLS
