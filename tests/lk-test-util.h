/* lk-test-util.h — small helpers shared by the test programs */
#pragma once

#include <gio/gio.h>

#include "library/lk-library.h"

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

/* Whether the tests on real photos can run: this build finds faces
 * (-Ddetect) and `probe`, a file or folder of Debian's dlib photos and
 * models ($LK_TEST_DLIB, made by .ci/dlib-source), is there. Otherwise the
 * test is skipped, saying why, or fails when LK_TEST_REQUIRE_DLIB is set
 * (as .ci/check sets it). */
gboolean lk_test_have_dlib (const char *probe);

/* Skips the running test, saying `reason`, or fails it when the environment
 * variable `require` is set: .ci/check sets LK_TEST_REQUIRE_EXIFTOOL and
 * LK_TEST_REQUIRE_PGLITE (as it sets LK_TEST_REQUIRE_DLIB), so a CI machine
 * that lost ExifTool or PGlite fails instead of passing with tests unrun. */
void lk_test_skip_unless_required (const char *require, const char *reason);

/* A fresh folder `name` under a new temporary root (PROGRAM-XXXXXX),
 * returned; the test removes the root, its parent, when done. */
char *lk_test_make_dir (const char *name);

/* photos[].source_id by photo id, read from the manifest of the library in
 * `folder` (LkPhoto has no source_id: only the importers write it). */
char **lk_test_source_ids (const char *folder);

/* The cosine of faces i and j of `library` (its rows are unit vectors: their
 * dot product), summed in doubles. */
double lk_test_cosine (const LkLibrary *library, gsize i, gsize j);

/* Face k's thumbnail in `library` is the importers' test face: 128 × 128,
 * red at the centre (the box), blue at the corner (the margin around it),
 * as the Immich and PhotoPrism fixtures paint their photos. */
void lk_test_assert_red_face_on_blue (const LkLibrary *library, gsize k);

/* A TCP port on 127.0.0.1 nothing listens on (bound, then let go). */
guint16 lk_test_free_port (void);

/* A socket on 127.0.0.1 that listens and never answers: the kernel
 * completes the handshake, a client sends its first packet and waits for a
 * reply that never comes (a hung server, or a port forwarded to nothing).
 * Listening until unreffed. */
GSocket *lk_test_silent_server (guint16 *port);

/* The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): what
 * the one-thread benchmarks time, less disturbed by other work than wall
 * time. */
double lk_test_thread_seconds (void);

/* The process's CPU time in seconds (CLOCK_PROCESS_CPUTIME_ID: every
 * thread's), for the benchmarks of steps that run on every core. */
double lk_test_process_seconds (void);

/* A line of /proc/self/status in MB: `field` is "VmRSS:" (the RSS now) or
 * "VmHWM:" (its peak so far); -1 where there is none (not Linux). */
double lk_test_status_mb (const char *field);

/* One step of a benchmark that runs steps in one process (bench-people,
 * bench-window): its wall and CPU time from lk_test_step_start. */
typedef struct
{
  gint64 wall0;
  double cpu0;
} LkTestStep;

/* Prints the heads of lk_test_step_report's columns. */
void lk_test_step_header (void);
void lk_test_step_start (LkTestStep *step);
/* Prints the step's line: its name, wall and CPU seconds, the RSS after it
 * and the peak so far (MB). Returns the CPU seconds; the wall seconds in
 * *wall (may be NULL). */
double lk_test_step_report (const LkTestStep *step, const char *name, double *wall);

/* One arm of a `likeness-cli race`: the medians of its runs. */
typedef struct
{
  double wall; /* seconds */
  double cpu;  /* seconds of user + system, the arm's process and its children */
} LkTestArm;

/* Races `a` against `b` (each a NULL-terminated argv) with `CLI race`,
 * `reps` paired runs, no warm-up, `prepare` (a shell command) before every
 * run; its report on stdout, its results in the file `json`, whose medians
 * fill `arm_a` and `arm_b`. A race that fails fails the benchmark. */
void lk_test_race (const char *cli, int reps, const char *prepare, const char *const *a,
                   const char *const *b, const char *json, LkTestArm *arm_a, LkTestArm *arm_b);

/* The number just after `key` in `out` (likeness-cli's "Imported " N
 * faces); a missing key fails the benchmark, naming it and `out`. */
guint lk_test_number_after (const char *out, const char *key);

/* The median of an array of doubles (the upper one of an even count),
 * sorting it in place; NAN when it is empty. */
double lk_test_median (GArray *doubles);

/* Writes a library of `n` faces of `dim` floats (Gaussian noise) into
 * `folder`, each face in a photo of its own and labelled as its own person,
 * except that face 2m + 1 (m < dups) is a near-duplicate of face 2m (the
 * same photograph twice, same label). library.json has no calibration. */
void lk_test_write_strangers (const char *folder, gsize n, guint dim, gsize dups);

/* Writes a library of `people` people of `faces_each` faces (two of one
 * person at cosine ≈ 0.8) and `strangers` faces seen once, each face in a
 * photo of its own, labelled; no calibration in library.json. */
void lk_test_write_people (const char *folder, guint people, guint faces_each, gsize strangers,
                           guint dim);

G_END_DECLS
