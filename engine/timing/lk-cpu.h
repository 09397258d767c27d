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
  /* AVX-VNNI: vpdpbusd on ymm, VEX-encoded, without AVX-512 (recent Intel
   * and AMD cores): CPUID.(EAX=7,ECX=1):EAX[4], with the YMM
   * state enabled. */
  LK_CPU_AVX_VNNI = 1 << 8,
  /* Intel AMX (recent Intel server cores): the tile registers
   * (CPUID.(EAX=7,ECX=0):EDX[24]), their int8 and bf16 dot products (EDX[25]
   * and [22]). Each counts only with the OS's tile state in XCR0 (bits 17
   * TILECFG and 18 TILEDATA). Linux's permission to use the tile data, which
   * a process must ask for (arch_prctl ARCH_REQ_XCOMP_PERM,
   * XFEATURE_XTILEDATA), is asked only when an AMX pass is first chosen
   * (lk_cpu_amx_permit): a kernel that refuses means no AMX pass. */
  LK_CPU_AMX_TILE = 1 << 9,
  LK_CPU_AMX_INT8 = 1 << 10,
  LK_CPU_AMX_BF16 = 1 << 11,
} LkCpuFeatures;

#define LK_CPU_AMX (LK_CPU_AMX_TILE | LK_CPU_AMX_INT8 | LK_CPU_AMX_BF16)

LkCpuFeatures lk_cpu_features (void);

/* Asks the kernel for the tile data state (Linux: arch_prctl
 * (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); returns 0 when granted, else
 * the errno (ENOSYS where there is no such request). */
typedef int (*LkCpuTilePermissionFunc) (void);

/* The AMX features (LK_CPU_AMX_*) a process has, from CPUID.(EAX=7,ECX=0):EDX
 * `leaf7_edx`, XCR0 `xcr0` (0 where the OS does not enable XSAVE) and, only
 * when both say the tiles are there, `request`'s answer: none unless the
 * silicon has the tiles, the OS saves both tile components, and the kernel
 * grants the permission. `why` (may be NULL) gets one sentence saying what
 * decided it, newly allocated. A pure function of its inputs, so that the decision is tested
 * on machines without AMX (tests/test-cpu.c); lk_cpu_features() calls it with
 * the real cpuid and xgetbv and a request that is not made,
 * lk_cpu_amx_permit() with the real arch_prctl. */
LkCpuFeatures lk_cpu_amx_decide (guint32 leaf7_edx, guint64 xcr0, LkCpuTilePermissionFunc request,
                                 char **why);
/* The AMX features this process may use: lk_cpu_features()'s, once the
 * kernel has granted the tile data permission, asked here the first time
 * (then remembered; nothing asked where the processor or OS has no tiles).
 * Called when a pass that needs the tiles is chosen
 * (lk_prefilter_pass_runs_here), so that a process that never runs one
 * (the GUI on most machines) never asks. */
LkCpuFeatures lk_cpu_amx_permit (void);
/* What was concluded about AMX here, in one sentence (the `why` above):
 * lk_cpu_features()'s, then the permission's once lk_cpu_amx_permit asked. */
const char *lk_cpu_amx_note (void);
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
