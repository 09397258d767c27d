/* lk-cpu.h — what this processor can run
 *
 * Detected once (cpuid plus the OS's XSAVE state on x86-64; NEON is in the
 * aarch64 baseline) and cached. The scan picks its kernel from this, and the
 * diagnostics page shows it.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  LK_CPU_AVX2 = 1 << 0,
  LK_CPU_FMA = 1 << 1,
  LK_CPU_AVX512F = 1 << 2,
  LK_CPU_AVX512BW = 1 << 3,
  LK_CPU_AVX512VL = 1 << 4,
  LK_CPU_AVX512_BF16 = 1 << 5,
  LK_CPU_AVX512_VNNI = 1 << 6,
  LK_CPU_NEON = 1 << 7,
  /* AVX-VNNI: vpdpbusd on ymm, VEX-encoded, without AVX-512 (Alder Lake and
   * later Intel cores, Zen 5): CPUID.(EAX=7,ECX=1):EAX[4], with the YMM
   * state enabled. */
  LK_CPU_AVX_VNNI = 1 << 8,
} LkCpuFeatures;

LkCpuFeatures lk_cpu_features (void);
/* Space-separated names of the features present, e.g. "avx2 fma". */
char *lk_cpu_features_string (LkCpuFeatures features);
/* The processor's marketing name, or "unknown processor". */
const char *lk_cpu_model_name (void);
guint lk_cpu_cores (void);

/* Core-seconds every processor of the machine has spent on anything but
 * idling since boot — user, nice, system, interrupts and steal (time the
 * hypervisor gave to another guest) — or a negative number where the kernel
 * does not say (anything but Linux's /proc/stat). Its difference across a
 * measurement, less lk_cpu_process_seconds()'s, is what other work took from
 * the cores meanwhile. */
double lk_cpu_machine_busy_seconds (void);
/* CPU seconds this process has used so far, every thread, user + system. */
double lk_cpu_process_seconds (void);

/* The whole pages inside [start, start + bytes), about to be written in full,
 * faulted in with one call (Linux's MADV_POPULATE_WRITE) rather than one
 * fault a page; where the kernel cannot, they fault as before. Only for
 * memory the caller writes at once: it costs no memory the writes would not. */
void lk_cpu_populate_for_write (void *start, gsize bytes);

G_END_DECLS
