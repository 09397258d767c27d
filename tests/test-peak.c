/* test-peak — the FMA peak routine does the work it counts */
#include "config.h"

#include <math.h>

#include "timing/lk-cpu.h"
#include "scan/lk-peak-kernels.h"
#include "scan/lk-peak.h"

static void
check_isa (const char *isa, guint lanes)
{
  double checksum = 0.0;
  guint64 rounds = 1000;
  double flops = lk_peak_run_one (isa, rounds, &checksum);

  /* Every lane of every chain counts one per round. */
  g_assert_cmpfloat (checksum, ==, (double) rounds * LK_PEAK_CHAINS * lanes);
  g_assert_cmpfloat (flops, ==, 2.0 * rounds * LK_PEAK_CHAINS * lanes);
}

static void
test_every_block_does_the_work_it_counts (void)
{
  LkCpuFeatures f = lk_cpu_features ();

  check_isa ("portable", LK_PEAK_LANES_PORTABLE);
  if ((f & LK_CPU_AVX2) && (f & LK_CPU_FMA))
    check_isa ("avx2+fma", LK_PEAK_LANES_AVX2);
  if (f & LK_CPU_AVX512F)
    check_isa ("avx512f", LK_PEAK_LANES_AVX512);
  else
    g_test_message ("no AVX-512F here: its block is compiled but not run");
  /* The first passes' dot products, where this build and CPU run them. */
  if (lk_peak_for ("bf16-avx512") != NULL)
    check_isa ("bf16-avx512", LK_PEAK_LANES_BF16);
  else
    g_test_message ("no vdpbf16ps here (build or CPU): its peak is not measured");
  if (lk_peak_for ("int8-avx512vnni") != NULL)
    check_isa ("int8-avx512vnni", LK_PEAK_LANES_INT8);
  else
    g_test_message ("no vpdpbusd here (build or CPU): its peak is not measured");
}

static void
test_unknown_isa_does_nothing (void)
{
  double checksum = 1.0;

  g_assert_cmpfloat (lk_peak_run_one ("mmx", 10, &checksum), ==, 0.0);
  g_assert_cmpfloat (checksum, ==, 0.0);
}

static void
test_peak_is_measured_on_every_core_and_cached (void)
{
  const LkPeak *peak = lk_peak_fma ();

  g_assert_nonnull (peak);
  g_assert_cmpuint (peak->threads, ==, lk_cpu_cores ());
  g_assert_true (isfinite (peak->gflops) && peak->gflops > 0.0);
  g_assert_cmpfloat_with_epsilon (peak->gflops_per_core * peak->threads, peak->gflops, 1e-9);
  g_assert_true (lk_peak_fma () == peak);
  g_test_message ("peak: %.1f GFLOP/s (%s, %u threads)", peak->gflops, peak->isa, peak->threads);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/peak/every-block-does-the-work-it-counts",
                   test_every_block_does_the_work_it_counts);
  g_test_add_func ("/peak/unknown-isa-does-nothing", test_unknown_isa_does_nothing);
  g_test_add_func ("/peak/measured-on-every-core-and-cached",
                   test_peak_is_measured_on_every_core_and_cached);
  return g_test_run ();
}
