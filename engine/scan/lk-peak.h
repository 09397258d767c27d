/* lk-peak.h — this machine's measured float32 FMA peak
 *
 * "The scan ran at 60 GFLOP/s" means little without the ceiling beside it, so
 * the diagnostics page and the scan benchmark report throughput as a fraction
 * of a peak measured here, on this machine, in this session: independent FMA
 * chains in the widest registers the CPU has, one thread per core, all cores
 * at once.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const char *isa; /* "avx512f", "avx2+fma", "portable", "bf16-avx512", "int8-avx512vnni" */
  guint threads;   /* cores measured together */
  double gflops;   /* all threads together */
  double gflops_per_core;
} LkPeak;

/* Measured once (about 0.3 s), then cached for the process. Thread-safe. */
const LkPeak *lk_peak_fma (void);
/* The same for one instruction family: "avx512f", "avx2+fma", "portable",
 * or a first pass's dot product, "bf16-avx512" (vdpbf16ps) or
 * "int8-avx512vnni" (vpdpbusd), counting 2 flops per multiply-add of any
 * width; NULL for NULL's lk_peak_fma(). NULL where this build or processor
 * cannot run it. */
const LkPeak *lk_peak_for (const char *isa);

/* One measurement of `iterations` rounds of the chosen ISA's FMA block on the
 * calling thread. Returns the flops done and stores the chains' final sum in
 * `checksum` (every chain counts 1 per round, so it is exact and known). */
double lk_peak_run_one (const char *isa, guint64 iterations, double *checksum);

G_END_DECLS
