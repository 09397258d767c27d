/* lk-bench-scale.h — the parts of bench-scale that can rot silently
 *
 * bench-scale runs every arm in a child process and judges it by what the
 * child printed, what wait4 said about it, and whether its pair list agrees
 * with the scan's. Those three steps live here so that test-bench-scale can
 * prove them on a tiny library: a benchmark whose agreement check or RSS
 * reading broke would still print plausible figures.
 *
 * Linux only (wait4's ru_maxrss in KiB, /proc/self/status, clear_refs).
 */
#pragma once

#include <glib.h>

#include "scan/lk-scan.h"

G_BEGIN_DECLS

/* The per-thread scratch the O(edges) budget allows each scan thread: the
 * issue's "a few MB per thread". */
#define LK_BENCH_SCRATCH_PER_THREAD (4u << 20)

typedef struct
{
  int wait_status;    /* as from waitpid */
  guint64 maxrss_kb;  /* wait4's ru_maxrss for this child alone, KiB */
  double cpu_seconds; /* user + system time of this child */
  char *output;       /* everything it wrote to stdout */
} LkBenchChild;

/* Runs argv (argv[0] a path) with stdout captured and stderr inherited, waits
 * for it with wait4 and stores its own peak RSS. With `unset_openblas`, the
 * child runs without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (only the child:
 * the caller's environment is untouched). Fork, not posix_spawn: a vfork'd
 * child's exec records the *parent's* peak RSS as the child's, a forked one
 * only the parent's current RSS — keep the caller small and that floor is a
 * few MB. Returns FALSE only when the child could not be started. */
gboolean lk_bench_run_child (char *const *argv, gboolean unset_openblas, LkBenchChild *child,
                             GError **error);
void lk_bench_child_clear (LkBenchChild *child);

/* A "Field:   1234 kB" line of a /proc/PID/status text, in KiB. FALSE when
 * the field is missing or its value is not a number of kB. */
gboolean lk_bench_status_kb (const char *status, const char *field, guint64 *kb);
/* The same for /proc/self/status; 0 when it cannot be read. */
guint64 lk_bench_self_kb (const char *field);
/* Resets this process's peak RSS (VmHWM, and so the ru_maxrss its parent
 * will see from here on) to its current RSS. FALSE where the kernel refuses. */
gboolean lk_bench_reset_peak (void);

/* The value of `key` in the line of `output` that starts with "result "
 * (space-separated key=value words), newly allocated; NULL when absent. */
char *lk_bench_field (const char *output, const char *key);
/* The same as a number; FALSE when absent or not a whole number. */
gboolean lk_bench_field_uint (const char *output, const char *key, guint64 *value);
gboolean lk_bench_field_double (const char *output, const char *key, double *value);

typedef struct
{
  guint64 a_pairs, b_pairs;
  guint64 only_a, only_b;   /* (i, j) in one list and not the other */
  guint64 beyond;           /* of those, pairs further than LK_SCAN_NEAR_BOUNDARY from their bar */
  guint32 first_i, first_j; /* the first such pair, when beyond > 0 */
} LkBenchAgreement;

/* Compares two (i, j)-ordered pair lists of the same faces. Two exact scans
 * that sum in different orders may disagree on a pair whose cosine sits
 * within LK_SCAN_NEAR_BOUNDARY of its bar, and on nothing else: `beyond`
 * counts everything else. */
void lk_bench_compare_pairs (const LkPair *a, gsize n_a, const LkPair *b, gsize n_b,
                             const LkFaces *faces, const LkCalibration *calibration,
                             double min_probability, LkBenchAgreement *agreement);

/* The O(edges) budget of an exact scan: the embeddings, the pair list, and
 * LK_BENCH_SCRATCH_PER_THREAD for each thread. */
guint64 lk_bench_edges_bytes (gsize n, guint dim, guint64 pairs, guint threads);

/* "18143,50000" → sizes, each in [2, max]; an error names the bad word. */
GArray *lk_bench_parse_sizes (const char *list, gsize max, GError **error);

G_END_DECLS
