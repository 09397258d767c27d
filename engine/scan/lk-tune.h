/* lk-tune.h — "auto" is the fastest kernel × first pass on this machine,
 * measured, not the widest
 *
 * Which register-blocked kernel and which exact first pass (lk-prefilter.h)
 * make the scan fastest is a property of the machine, not of its feature
 * bits: on a core that executes a 512-bit FMA as two 256-bit halves, the
 * AVX-512 tile measures no faster than the AVX2 one, and the bf16 pass
 * loses at 2,048 faces yet wins 1.25× at 18,143. So `auto` races every
 * candidate that runs here with the
 * project's own paired harness (lk-timing.h) on a workload of the scan's own
 * shape — one row block of LK_SCAN_BLOCK rows against thousands of columns in
 * the scan's column tiles — and remembers the winner in the user's cache,
 * keyed by processor model, feature set, build and dimension. Every kernel
 * and pass returns the same pairs bit for bit, so the choice changes speed
 * only, never an answer.
 */
#pragma once

#include <glib.h>

#include "timing/lk-cpu.h"
#include "lk-scan.h"

G_BEGIN_DECLS

typedef enum
{
  LK_TUNE_DEFAULT,  /* nothing measured yet and the scan too small to pay for measuring */
  LK_TUNE_CACHED,   /* measured by an earlier run on this machine and build */
  LK_TUNE_MEASURED, /* measured just now */
  LK_TUNE_FORCED,   /* LIKENESS_KERNEL / LIKENESS_FIRST_PASS */
} LkTuneSource;

typedef struct
{
  LkKernelId kernel;
  LkPrefilterId prefilter; /* LK_PREFILTER_OFF or a native pass */
  char *name;              /* "avx2", "avx512+bf16-avx512" */
  double screen_ns;        /* one call of the workload in the screening round */
  /* Median paired ratio (the reference's time over this one's, so above 1 is
   * faster than the reference); 1 for the reference itself; NAN when the
   * screening round eliminated it. */
  double ratio;
} LkTuneCandidate;

typedef struct
{
  LkKernelId kernel;
  LkPrefilterId prefilter;
  LkTuneSource source;
  char *name;         /* the chosen candidate's */
  char *reason;       /* one sentence: why this one */
  GArray *candidates; /* of LkTuneCandidate when measured now, else NULL */
  char *cache_path;   /* where the choice is remembered */
} LkTuneChoice;

/* Scans of at least this many faces measure on their first run (about 0.3 s,
 * under 10 % of such a scan on one core); smaller ones use the remembered
 * choice, or the widest kernel alone. */
#define LK_TUNE_SCAN_ABOVE 8192

/* The (kernel × first pass) pairs that run on this processor, portable
 * kernels and emulated passes included only where nothing faster runs. */
GArray *lk_tune_candidates (void);
/* The same for a processor with `features` (lk-cpu.h): what the race would
 * be on another CPU, for tests. */
GArray *lk_tune_candidates_for (LkCpuFeatures features);

/* "avx2", "avx512+bf16-avx512": kernel, and first pass where there is one. */
char *lk_tune_candidate_name (LkKernelId kernel, LkPrefilterId prefilter);

/* The index of the candidate to choose: the highest ratio among those not
 * eliminated; on a tie the earlier one. */
guint lk_tune_pick (const LkTuneCandidate *candidates, guint n);

/* Screening: candidates slower than this multiple of the fastest call are
 * eliminated before the paired races. Not 1.5: on a loaded machine (CI and
 * six builds beside it) one screening call put every candidate past 1.5× of
 * a lucky one, leaving nothing to race; what this is for — the portable
 * kernel where SIMD runs, ~10× slower — is far beyond 2.5. */
#define LK_TUNE_ELIMINATE_ABOVE 2.5

/* "model|features|build|dim": what a remembered choice is valid for. */
char *lk_tune_cache_key (const char *model, const char *features, const char *build_id, guint dim);
/* This machine's and binary's key for rows of `dim` floats. */
char *lk_tune_cache_key_here (guint dim);
/* The ELF build id of the running program in hex, or its version and build
 * type where it has none. */
const char *lk_tune_build_id (void);
/* $XDG_CACHE_HOME/likeness/kernel-choice.ini */
char *lk_tune_cache_path (void);

/* TRUE with the remembered choice for `key`; FALSE when there is none, or the
 * file is unreadable, corrupt, or names something this binary cannot run:
 * such a file is never trusted. */
gboolean lk_tune_cache_lookup (const char *path, const char *key, LkKernelId *kernel,
                               LkPrefilterId *prefilter);
/* Remembers the choice for `key`, keeping other keys' entries of a readable
 * file and rewriting a corrupt one. Atomic. */
gboolean lk_tune_cache_store (const char *path, const char *key, LkKernelId kernel,
                              LkPrefilterId prefilter, GError **error);

/* Races the candidates on one row block of `faces` (at least 2 rows) at the
 * kernel bar `tau`, and remembers the winner in the cache (a cache that
 * cannot be written is reported in the reason, not an error). */
LkTuneChoice *lk_tune_measure (const LkFaces *faces, float tau);

/* What a scan with kernel and first pass both "auto" runs: forced by the
 * environment, else remembered, else measured now on `faces` when there are
 * at least LK_TUNE_SCAN_ABOVE of them, else the default. */
LkTuneChoice *lk_tune_for_scan (const LkFaces *faces, float tau);

const char *lk_tune_source_name (LkTuneSource source);
void lk_tune_choice_free (LkTuneChoice *choice);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkTuneChoice, lk_tune_choice_free)

G_END_DECLS
