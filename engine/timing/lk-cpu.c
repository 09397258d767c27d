/* lk-cpu.c — processor feature detection
 *
 * cpuid says what the silicon has; xgetbv says what the kernel saves across a
 * context switch. A feature counts only when both agree: an AVX-512 core under
 * an OS (or hypervisor) that does not enable the ZMM state would fault on the
 * first instruction.
 */
#include "config.h"

#include "lk-cpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

/* CPUID.(EAX=7,ECX=0):EDX, and XCR0's tile components (Intel SDM vol. 1,
 * 13.1): TILECFG (64 bytes) and TILEDATA (8 KiB). */
#define LEAF7_EDX_AMX_BF16 (1u << 22)
#define LEAF7_EDX_AMX_TILE (1u << 24)
#define LEAF7_EDX_AMX_INT8 (1u << 25)
#define XCR0_TILECFG       (G_GUINT64_CONSTANT (1) << 17)
#define XCR0_TILEDATA      (G_GUINT64_CONSTANT (1) << 18)

LkCpuFeatures
lk_cpu_amx_decide (guint32 leaf7_edx, guint64 xcr0, LkCpuTilePermissionFunc request, char **why)
{
  LkCpuFeatures f = 0;
  const char *sentence = NULL;

  if (!(leaf7_edx & LEAF7_EDX_AMX_TILE))
    sentence = "no AMX: cpuid reports no tile registers (amx_tile)";
  else if ((xcr0 & (XCR0_TILECFG | XCR0_TILEDATA)) != (XCR0_TILECFG | XCR0_TILEDATA))
    sentence = "no AMX: the processor has tiles, but the OS does not save their state (XCR0 "
               "bits 17 and 18)";
  if (sentence != NULL)
    {
      if (why != NULL)
        *why = g_strdup (sentence);
      return 0;
    }
  /* Asked only now: a kernel without AMX support has nothing to grant, and
   * the request is process-wide (threads started later inherit it). */
  int refused = request != NULL ? request () : ENOSYS;
  if (refused != 0)
    {
      if (why != NULL)
        *why = g_strdup_printf ("no AMX: the kernel refused the tile data permission "
                                "(arch_prctl ARCH_REQ_XCOMP_PERM: %s)",
                                g_strerror (refused));
      return 0;
    }
  f |= LK_CPU_AMX_TILE;
  if (leaf7_edx & LEAF7_EDX_AMX_INT8)
    f |= LK_CPU_AMX_INT8;
  if (leaf7_edx & LEAF7_EDX_AMX_BF16)
    f |= LK_CPU_AMX_BF16;
  if (why != NULL)
    {
      g_autofree char *names = lk_cpu_features_string (f);
      *why = g_strdup_printf ("AMX: %s, tile data permitted by the kernel", names);
    }
  return f;
}

/* detect()'s sentence, then lk_cpu_amx_permit's once it asked. The earlier
 * one is kept, not freed (a thread may hold it), and kept reachable in
 * amx_note_before so that leak checkers do not report it. */
static char *amx_note;
#if defined(__x86_64__) || defined(__i386__)
static char *amx_note_before;
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* What detect() read, for lk_cpu_amx_permit. */
static guint32 amx_leaf7_edx;
static guint64 amx_xcr0;

static guint64
read_xcr0 (void)
{
  guint32 lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((guint64) hi << 32) | lo;
}

/* Linux 5.16+: a process must ask before its first tile instruction (which
 * otherwise dies of SIGILL), because the tile data makes every signal frame
 * and context switch 8 KiB larger. */
static int
request_tile_permission (void)
{
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
  const long arch_get_xcomp_perm = 0x1022, arch_req_xcomp_perm = 0x1023;
  const long xfeature_xtiledata = 18;
  unsigned long permitted = 0;

  if (syscall (SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) != 0)
    return errno != 0 ? errno : EPERM;
  if (syscall (SYS_arch_prctl, arch_get_xcomp_perm, &permitted) != 0)
    return errno != 0 ? errno : EPERM;
  return (permitted & (1ul << xfeature_xtiledata)) ? 0 : EPERM;
#else
  return ENOSYS;
#endif
}

/* For detect(): lk_cpu_amx_decide's answer as if the kernel granted,
 * without asking it. */
static int
permission_not_asked_yet (void)
{
  return 0;
}

static LkCpuFeatures
detect (void)
{
  guint32 a, b, c, d;
  LkCpuFeatures f = 0;

  if (!__get_cpuid (1, &a, &b, &c, &d))
    return 0;
  gboolean osxsave = (c & bit_OSXSAVE) != 0;
  gboolean has_fma = (c & bit_FMA) != 0;
  if (!osxsave)
    {
      amx_note = g_strdup ("no AMX: the OS does not enable XSAVE");
      return 0;
    }
  guint64 xcr0 = read_xcr0 ();
  gboolean ymm_ok = (xcr0 & 0x6) == 0x6;
  gboolean zmm_ok = (xcr0 & 0xe6) == 0xe6;

  if (!__get_cpuid_count (7, 0, &a, &b, &c, &d))
    return 0;
  /* Leaf 7's EAX is its highest sub-leaf: sub-leaf 1 (AVX-VNNI in EAX bit
   * 4, AVX512_BF16 in bit 5) is read only where it exists. */
  guint32 max_subleaf = a;
  guint32 leaf7_1 = 0;
  guint32 a1, b1, c1, d1;
  if (max_subleaf >= 1 && __get_cpuid_count (7, 1, &a1, &b1, &c1, &d1))
    leaf7_1 = a1;
  if (ymm_ok && (b & bit_AVX2))
    f |= LK_CPU_AVX2;
  if (ymm_ok && has_fma)
    f |= LK_CPU_FMA;
  if (zmm_ok && (b & bit_AVX512F))
    f |= LK_CPU_AVX512F;
  if (zmm_ok && (b & bit_AVX512BW))
    f |= LK_CPU_AVX512BW;
  if (zmm_ok && (b & bit_AVX512VL))
    f |= LK_CPU_AVX512VL;
  if (zmm_ok && (c & (1u << 11)))
    f |= LK_CPU_AVX512_VNNI;
  if (zmm_ok && (leaf7_1 & (1u << 5)))
    f |= LK_CPU_AVX512_BF16;
  if (ymm_ok && (leaf7_1 & (1u << 4)))
    f |= LK_CPU_AVX_VNNI;
  /* What the processor and the OS offer; the kernel's permission is asked
   * only when an AMX pass is first chosen (lk_cpu_amx_permit), not by
   * every process that reads the features (the GUI, the CLI's other
   * commands): granting it makes every signal frame 8 KiB larger. */
  amx_leaf7_edx = d;
  amx_xcr0 = xcr0;
  char *why = NULL;
  LkCpuFeatures amx = lk_cpu_amx_decide (d, xcr0, permission_not_asked_yet, &why);
  if (amx != 0)
    {
      g_autofree char *names = lk_cpu_features_string (amx);
      g_free (why);
      why = g_strdup_printf ("AMX: %s; the kernel's tile data permission is asked when the AMX "
                             "pass is first chosen",
                             names);
    }
  amx_note = why;
  f |= amx;
  return f;
}

static char *
detect_model_name (void)
{
  guint32 regs[12];
  guint32 max;

  if (!__get_cpuid (0x80000000, &max, &regs[1], &regs[2], &regs[3]) || max < 0x80000004)
    return NULL;
  for (guint leaf = 0; leaf < 3; leaf++)
    __get_cpuid (0x80000002 + leaf, &regs[leaf * 4], &regs[leaf * 4 + 1], &regs[leaf * 4 + 2],
                 &regs[leaf * 4 + 3]);
  char *name = g_strndup ((const char *) regs, sizeof regs);
  return g_strstrip (name);
}

#elif defined(__aarch64__)

static LkCpuFeatures
detect (void)
{
  amx_note = g_strdup ("no AMX: not an x86-64 processor");
  return LK_CPU_NEON;
}

static char *
detect_model_name (void)
{
  return NULL;
}

#else

static LkCpuFeatures
detect (void)
{
  amx_note = g_strdup ("no AMX: not an x86-64 processor");
  return 0;
}

static char *
detect_model_name (void)
{
  return NULL;
}

#endif

LkCpuFeatures
lk_cpu_features (void)
{
  static gsize once = 0;
  static LkCpuFeatures features;

  if (g_once_init_enter (&once))
    {
      features = detect ();
      g_once_init_leave (&once, 1);
    }
  return features;
}

LkCpuFeatures
lk_cpu_amx_permit (void)
{
  static gsize once = 0;
  static LkCpuFeatures permitted;

  if (g_once_init_enter (&once))
    {
      if (lk_cpu_features () & LK_CPU_AMX_TILE)
        {
#if defined(__x86_64__) || defined(__i386__)
          char *why = NULL;
          permitted = lk_cpu_amx_decide (amx_leaf7_edx, amx_xcr0, request_tile_permission, &why);
          amx_note_before = g_atomic_pointer_exchange (&amx_note, why);
#endif
        }
      g_once_init_leave (&once, 1);
    }
  return permitted;
}

const char *
lk_cpu_amx_note (void)
{
  (void) lk_cpu_features ();
  const char *note = g_atomic_pointer_get (&amx_note);
  return note != NULL ? note : "no AMX: cpuid has no leaf 7";
}

char *
lk_cpu_features_string (LkCpuFeatures features)
{
  static const struct
  {
    LkCpuFeatures bit;
    const char *name;
  } names[] = {
    { LK_CPU_AVX2, "avx2" },
    { LK_CPU_FMA, "fma" },
    { LK_CPU_AVX512F, "avx512f" },
    { LK_CPU_AVX512BW, "avx512bw" },
    { LK_CPU_AVX512VL, "avx512vl" },
    { LK_CPU_AVX512_BF16, "avx512bf16" },
    { LK_CPU_AVX512_VNNI, "avx512vnni" },
    { LK_CPU_AVX_VNNI, "avxvnni" },
    { LK_CPU_AMX_TILE, "amx-tile" },
    { LK_CPU_AMX_INT8, "amx-int8" },
    { LK_CPU_AMX_BF16, "amx-bf16" },
    { LK_CPU_NEON, "neon" },
  };
  GString *s = g_string_new (NULL);

  for (gsize k = 0; k < G_N_ELEMENTS (names); k++)
    if (features & names[k].bit)
      g_string_append_printf (s, "%s%s", s->len ? " " : "", names[k].name);
  return g_string_free (s, FALSE);
}

const char *
lk_cpu_model_name (void)
{
  static gsize once = 0;
  static char *name;

  if (g_once_init_enter (&once))
    {
      name = detect_model_name ();
      if (name == NULL || *name == '\0')
        {
          g_free (name);
          name = g_strdup ("unknown processor");
        }
      g_once_init_leave (&once, 1);
    }
  return name;
}

guint
lk_cpu_cores (void)
{
  return g_get_num_processors ();
}

double
lk_cpu_machine_busy_seconds (void)
{
  g_autofree char *stat = NULL;
  /* user nice system idle iowait irq softirq steal (guest time is already
   * inside user and nice) */
  guint64 f[8] = { 0 };
  long hz = sysconf (_SC_CLK_TCK);

  if (hz <= 0 || !g_file_get_contents ("/proc/stat", &stat, NULL, NULL))
    return -1.0;
  if (sscanf (stat,
              "cpu %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
              " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
              " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
              &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7])
      != 8)
    return -1.0;
  return (double) (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / (double) hz;
}

double
lk_cpu_process_seconds (void)
{
  struct rusage usage;

  if (getrusage (RUSAGE_SELF, &usage) != 0)
    return 0.0;
  return (double) usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6
         + (double) usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* Worth it where page faults are dear (a virtual machine's guest): the
 * 18,143-face scan with the int8 rows' panels and each stitched block's
 * stretch of the pair list populated this way ran about 1.05× as fast as
 * without (paired runs; docs/benchmarks.md). The library loader's read
 * buffer gained nothing from it (lk-library-embeddings.c), so the loader
 * does not call it. */
void
lk_cpu_populate_for_write (void *start, gsize bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guintptr a = ((guintptr) start + page - 1) / page * page;
  guintptr e = ((guintptr) start + bytes) / page * page;

  if (e > a)
    (void) madvise ((void *) a, e - a, MADV_POPULATE_WRITE); /* EINVAL before 5.14: faults */
#else
  (void) start;
  (void) bytes;
#endif
}
