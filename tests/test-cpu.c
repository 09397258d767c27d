/* test-cpu — feature detection agrees with what the kernel reports */
#include "config.h"

#include <errno.h>
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
  /* Linux lists amx_* where the silicon has them and the kernel supports
   * the tiles (5.16+), which is when it grants the permission too. */
  g_assert_cmpint (!!(f & LK_CPU_AMX_TILE), ==, proc_has_flag (cpuinfo, "amx_tile"));
  g_assert_cmpint (!!(f & LK_CPU_AMX_INT8), ==, proc_has_flag (cpuinfo, "amx_int8"));
  g_assert_cmpint (!!(f & LK_CPU_AMX_BF16), ==, proc_has_flag (cpuinfo, "amx_bf16"));
  g_test_message ("%s", lk_cpu_amx_note ());
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
  g_autofree char *amx = lk_cpu_features_string (LK_CPU_AVX512F | LK_CPU_AMX);
  g_assert_cmpstr (amx, ==, "avx512f amx-tile amx-int8 amx-bf16");
}

/* ---- AMX: the decision on injected cpuid, XCR0 and kernel answers ------- */

#define EDX_AMX_BF16  (1u << 22)
#define EDX_AMX_TILE  (1u << 24)
#define EDX_AMX_INT8  (1u << 25)
#define EDX_SPR       (EDX_AMX_BF16 | EDX_AMX_TILE | EDX_AMX_INT8)
/* x87, SSE, AVX, the AVX-512 state, TILECFG and TILEDATA: a Sapphire
 * Rapids under Linux 5.16+ (XCR0 0x602e7). */
#define XCR0_SPR      G_GUINT64_CONSTANT (0x602e7)
#define XCR0_NO_TILES G_GUINT64_CONSTANT (0x2e7)

static guint permission_asked;

static int
kernel_grants (void)
{
  permission_asked++;
  return 0;
}

static int
kernel_refuses (void)
{
  permission_asked++;
  return EINVAL;
}

static int
kernel_too_old (void)
{
  permission_asked++;
  return ENOSYS;
}

/* A Sapphire Rapids with the tiles enabled and permitted has all three. */
static void
test_amx_present_when_all_three_agree (void)
{
  g_autofree char *why = NULL;

  permission_asked = 0;
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_SPR, kernel_grants, &why), ==, LK_CPU_AMX);
  g_assert_cmpuint (permission_asked, ==, 1);
  g_assert_nonnull (strstr (why, "amx-tile amx-int8 amx-bf16"));
  /* Only the dot products cpuid reports: tiles and int8 without bf16. */
  g_assert_cmpint (lk_cpu_amx_decide (EDX_AMX_TILE | EDX_AMX_INT8, XCR0_SPR, kernel_grants, NULL),
                   ==, LK_CPU_AMX_TILE | LK_CPU_AMX_INT8);
}

/* No tiles in cpuid (this project's Zen 4): nothing, and the kernel is not
 * even asked. int8 or bf16 bits without the tile bit mean nothing either. */
static void
test_amx_absent_without_the_tile_bit (void)
{
  g_autofree char *why = NULL;

  permission_asked = 0;
  g_assert_cmpint (lk_cpu_amx_decide (0, XCR0_SPR, kernel_grants, &why), ==, 0);
  g_assert_cmpint (lk_cpu_amx_decide (EDX_AMX_INT8 | EDX_AMX_BF16, XCR0_SPR, kernel_grants, NULL),
                   ==, 0);
  g_assert_cmpuint (permission_asked, ==, 0);
  g_assert_nonnull (strstr (why, "amx_tile"));
}

/* The silicon has tiles but the OS does not save them (a kernel before
 * 5.16, or a hypervisor that hides them): either XCR0 bit missing is no AMX. */
static void
test_amx_absent_without_the_os_tile_state (void)
{
  g_autofree char *why = NULL;

  permission_asked = 0;
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_NO_TILES, kernel_grants, &why), ==, 0);
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_NO_TILES | (G_GUINT64_CONSTANT (1) << 17),
                                      kernel_grants, NULL),
                   ==, 0);
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_NO_TILES | (G_GUINT64_CONSTANT (1) << 18),
                                      kernel_grants, NULL),
                   ==, 0);
  g_assert_cmpuint (permission_asked, ==, 0);
  g_assert_nonnull (strstr (why, "XCR0"));
}

/* A kernel that refuses the permission (or does not know the request)
 * means no AMX, whatever cpuid and XCR0 say: the first tile instruction
 * would die of SIGILL. */
static void
test_amx_absent_when_the_kernel_refuses (void)
{
  g_autofree char *why = NULL;

  permission_asked = 0;
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_SPR, kernel_refuses, &why), ==, 0);
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_SPR, kernel_too_old, NULL), ==, 0);
  g_assert_cmpint (lk_cpu_amx_decide (EDX_SPR, XCR0_SPR, NULL, NULL), ==, 0);
  g_assert_cmpuint (permission_asked, ==, 2);
  g_assert_nonnull (strstr (why, "refused"));
  g_assert_nonnull (strstr (why, g_strerror (EINVAL)));
}

/* What was decided here is said, and agrees with the features: the tiles
 * the processor and OS offer before the kernel is asked, then what it
 * permitted. Where there are no tiles nothing is asked: the permission
 * stays none and the note the same sentence. */
static void
test_amx_note_agrees_with_the_features (void)
{
  const char *note = lk_cpu_amx_note ();
  LkCpuFeatures offered = lk_cpu_features () & LK_CPU_AMX;

  g_assert_nonnull (note);
  g_assert_cmpint (g_str_has_prefix (note, "AMX:"), ==, (offered & LK_CPU_AMX_TILE) != 0);
  g_test_message ("%s", note);

  LkCpuFeatures permitted = lk_cpu_amx_permit ();
  g_assert_cmpint (permitted & ~offered, ==, 0);
  g_assert_cmpint (lk_cpu_amx_permit (), ==, permitted);
  if (offered == 0)
    {
      g_assert_cmpint (permitted, ==, 0);
      g_assert_true (lk_cpu_amx_note () == note);
    }
  g_assert_cmpint (g_str_has_prefix (lk_cpu_amx_note (), "AMX:"), ==,
                   (permitted & LK_CPU_AMX_TILE) != 0);
  g_test_message ("%s", lk_cpu_amx_note ());
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
  g_test_add_func ("/cpu/amx/present-when-all-three-agree", test_amx_present_when_all_three_agree);
  g_test_add_func ("/cpu/amx/absent-without-the-tile-bit", test_amx_absent_without_the_tile_bit);
  g_test_add_func ("/cpu/amx/absent-without-the-os-tile-state",
                   test_amx_absent_without_the_os_tile_state);
  g_test_add_func ("/cpu/amx/absent-when-the-kernel-refuses",
                   test_amx_absent_when_the_kernel_refuses);
  g_test_add_func ("/cpu/amx/note-agrees-with-the-features",
                   test_amx_note_agrees_with_the_features);
  g_test_add_func ("/cpu/machine-busy-covers-own-work", test_machine_busy_covers_own_work);
  return g_test_run ();
}
