/* lk-cpu.c — processor feature detection
 *
 * cpuid says what the silicon has; xgetbv says what the kernel saves across a
 * context switch. A feature counts only when both agree: an AVX-512 core under
 * an OS (or hypervisor) that does not enable the ZMM state would fault on the
 * first instruction.
 */
#include "config.h"

#include "lk-cpu.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static guint64
read_xcr0 (void)
{
  guint32 lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((guint64) hi << 32) | lo;
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
    return 0;
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

/* Measured on Zen 5 (Oxide Virtual Turin-like, a PVM guest, whose page
 * faults are dear): the 18,143-face scan with the int8 rows' panels and each
 * stitched block's stretch of the pair list populated this way ran 1.053×
 * and 1.058× as fast as without (median paired ratios of 60 interleaved
 * `likeness-cli scan --json` pairs each, wins 39 and 42 of 60; medians 0.246
 * against 0.252 s and 0.231 against 0.241), where one binary against itself
 * read 1.005 and 0.987 in the same hour. On Zen 4 the library loader's read
 * buffer gained nothing from it (lk-library.c), so the loader does not
 * call it. */
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
