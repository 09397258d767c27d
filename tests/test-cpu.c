/* test-cpu — feature detection agrees with what the kernel reports */
#include "config.h"

#include <string.h>

#include "timing/lk-cpu.h"

#if HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#if defined(__x86_64__)
static gboolean
proc_has_flag (const char *cpuinfo, const char *flag)
{
  const char *line = strstr (cpuinfo, "\nflags");
  if (line == NULL)
    return FALSE;
  const char *end = strchr (line + 1, '\n');
  g_autofree char *flags = g_strndup (line, end ? (gsize) (end - line) : strlen (line));
  g_auto (GStrv) words = g_strsplit_set (flags, " \t:", -1);
  return g_strv_contains ((const char *const *) words, flag);
}
#endif

static void
test_features_match_proc_cpuinfo (void)
{
  g_autofree char *cpuinfo = NULL;
#if defined(__x86_64__)
  if (!g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL) || !strstr (cpuinfo, "\nflags"))
    {
      g_test_skip ("no /proc/cpuinfo flags to compare with");
      return;
    }
  /* Under valgrind the process runs on valgrind's synthetic CPU, whose
   * CPUID hides what it cannot emulate (3.19: every AVX-512 leaf) while
   * /proc/cpuinfo still lists the silicon's flags. lk_cpu_features() is
   * right to follow CPUID there — the process really cannot run AVX-512 —
   * so the two are not comparable; the kernels' own tests still run every
   * kernel the process reports. */
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("under valgrind, whose synthetic CPUID hides features /proc/cpuinfo lists");
      return;
    }
  LkCpuFeatures f = lk_cpu_features ();
  g_assert_cmpint (!!(f & LK_CPU_AVX2), ==, proc_has_flag (cpuinfo, "avx2"));
  g_assert_cmpint (!!(f & LK_CPU_FMA), ==, proc_has_flag (cpuinfo, "fma"));
  g_assert_cmpint (!!(f & LK_CPU_AVX512F), ==, proc_has_flag (cpuinfo, "avx512f"));
  g_assert_cmpint (!!(f & LK_CPU_AVX512_BF16), ==, proc_has_flag (cpuinfo, "avx512_bf16"));
  g_assert_cmpint (!!(f & LK_CPU_AVX512_VNNI), ==, proc_has_flag (cpuinfo, "avx512_vnni"));
  /* The kernel's name for CPUID.(EAX=7,ECX=1):EAX[4]. */
  g_assert_cmpint (!!(f & LK_CPU_AVX_VNNI), ==, proc_has_flag (cpuinfo, "avx_vnni"));
#else
  g_test_skip ("cpuid is x86-64 only");
#endif
}

static void
test_features_string_names_each_bit (void)
{
  g_autofree char *none = lk_cpu_features_string (0);
  g_autofree char *two = lk_cpu_features_string (LK_CPU_AVX2 | LK_CPU_FMA);
  g_autofree char *bf16 = lk_cpu_features_string (LK_CPU_AVX512F | LK_CPU_AVX512_BF16);
  g_autofree char *vnni = lk_cpu_features_string (LK_CPU_AVX2 | LK_CPU_AVX_VNNI);

  g_assert_cmpstr (none, ==, "");
  g_assert_cmpstr (two, ==, "avx2 fma");
  g_assert_cmpstr (bf16, ==, "avx512f avx512bf16");
  g_assert_cmpstr (vnni, ==, "avx2 avxvnni");
}

static void
test_model_and_cores_are_known (void)
{
  g_assert_nonnull (lk_cpu_model_name ());
  g_assert_cmpstr (lk_cpu_model_name (), !=, "");
  g_assert_cmpuint (lk_cpu_cores (), >=, 1);
}

/* The machine's busy time covers this process's own: spin a thread for a
 * third of a CPU-second and the machine must have been busy at least that
 * long, less /proc/stat's tick (a hundredth of a second per field). This is
 * what the wall-clock speed gate subtracts to see other work. */
static void
test_machine_busy_covers_own_work (void)
{
  double busy0 = lk_cpu_machine_busy_seconds ();
  if (busy0 < 0.0)
    {
      g_test_skip ("The kernel does not report the machine's busy time (no /proc/stat)");
      return;
    }
  double own0 = lk_cpu_process_seconds ();
  volatile guint64 sink = 0;
  while (lk_cpu_process_seconds () - own0 < 0.3)
    for (guint k = 0; k < 100000; k++)
      sink += k;
  double own = lk_cpu_process_seconds () - own0;
  double busy = lk_cpu_machine_busy_seconds () - busy0;

  g_assert_cmpuint (sink, >, 0);
  g_assert_cmpfloat (own, >=, 0.3);
  g_assert_cmpfloat (busy, >=, own - 0.06);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu/features-match-proc-cpuinfo", test_features_match_proc_cpuinfo);
  g_test_add_func ("/cpu/features-string-names-each-bit", test_features_string_names_each_bit);
  g_test_add_func ("/cpu/model-and-cores-are-known", test_model_and_cores_are_known);
  g_test_add_func ("/cpu/machine-busy-covers-own-work", test_machine_busy_covers_own_work);
  return g_test_run ();
}
