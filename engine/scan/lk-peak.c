/* lk-peak.c — measure the float32 FMA ceiling of this machine
 *
 * Twelve independent accumulator chains per thread: an FMA has a latency of
 * about four cycles and two issue ports on current x86 cores, so at least
 * eight chains are needed to keep both ports busy; twelve leaves headroom for
 * cores with longer latency without spilling registers (16 YMM/32 ZMM).
 * Every chain computes a·1 + 1, so after n rounds every lane holds exactly n
 * (below 2^24): the checksum proves the work was done, and the opaque `1`
 * stops the compiler from turning the FMA into an add.
 *
 * All cores run at once, because that is how the scan runs and because a
 * single-core figure overstates the ceiling on CPUs that lower their clock
 * when every core is busy.
 */
#include "config.h"

#include "lk-peak.h"

#include "timing/lk-cpu.h"
#include "lk-kernels-config.h"
#include "lk-peak-kernels.h"

/* Rounds per block call: 2^20 rounds is a few milliseconds of work, long
 * enough that a call's overhead vanishes, short enough to repeat many times in
 * the measuring window. Also far below 2^24, so the checksum stays exact. */
#define ROUNDS_PER_CALL (1u << 20)

/* How long each thread measures. Long enough to ramp the clock and average
 * over scheduler ticks; short enough to do once per session unnoticed. */
#define MEASURE_SECONDS 0.25

typedef double (*BlockFunc) (guint64 iterations, float one);

typedef struct
{
  const char *isa;
  BlockFunc block;
  guint lanes;
} Isa;

static gboolean
find_isa (const char *name, Isa *isa)
{
  LkCpuFeatures f = lk_cpu_features ();

  if (name == NULL)
    {
      if (f & LK_CPU_AVX512F)
        name = "avx512f";
      else if ((f & LK_CPU_AVX2) && (f & LK_CPU_FMA))
        name = "avx2+fma";
      else
        name = "portable";
    }
#if defined(__x86_64__)
  if (g_str_equal (name, "avx512f") && (f & LK_CPU_AVX512F))
    {
      *isa = (Isa){ "avx512f", lk_peak_block_avx512, LK_PEAK_LANES_AVX512 };
      return TRUE;
    }
  if (g_str_equal (name, "avx2+fma") && (f & LK_CPU_AVX2) && (f & LK_CPU_FMA))
    {
      *isa = (Isa){ "avx2+fma", lk_peak_block_avx2, LK_PEAK_LANES_AVX2 };
      return TRUE;
    }
#endif
#if LK_HAVE_PREFILTER_AVX512BF16
  if (g_str_equal (name, "bf16-avx512") && (f & LK_CPU_AVX512F) && (f & LK_CPU_AVX512_BF16))
    {
      *isa = (Isa){ "bf16-avx512", lk_peak_block_bf16, LK_PEAK_LANES_BF16 };
      return TRUE;
    }
#endif
#if LK_HAVE_PREFILTER_INT8_AVX512VNNI
  if (g_str_equal (name, "int8-avx512vnni") && (f & LK_CPU_AVX512F) && (f & LK_CPU_AVX512_VNNI))
    {
      *isa = (Isa){ "int8-avx512vnni", lk_peak_block_int8, LK_PEAK_LANES_INT8 };
      return TRUE;
    }
#endif
  if (g_str_equal (name, "portable"))
    {
      *isa = (Isa){ "portable", lk_peak_block_portable, LK_PEAK_LANES_PORTABLE };
      return TRUE;
    }
  return FALSE;
}

double
lk_peak_run_one (const char *isa_name, guint64 iterations, double *checksum)
{
  Isa isa;

  if (!find_isa (isa_name, &isa))
    {
      *checksum = 0.0;
      return 0.0;
    }
  *checksum = isa.block (iterations, 1.0f);
  return 2.0 * (double) iterations * LK_PEAK_CHAINS * isa.lanes;
}

typedef struct
{
  Isa isa;
  gint *ready;
  double flops;
  double seconds;
} Worker;

static gpointer
measure_thread (gpointer data)
{
  Worker *w = data;

  /* Start together, so every core is busy while any core is measured. */
  g_atomic_int_dec_and_test (w->ready);
  while (g_atomic_int_get (w->ready) > 0)
    ;

  gint64 start = g_get_monotonic_time ();
  gint64 now = start;
  double flops = 0.0;
  volatile double sink = 0.0;
  while (now - start < MEASURE_SECONDS * G_USEC_PER_SEC)
    {
      sink += w->isa.block (ROUNDS_PER_CALL, 1.0f);
      flops += 2.0 * ROUNDS_PER_CALL * LK_PEAK_CHAINS * w->isa.lanes;
      now = g_get_monotonic_time ();
    }
  (void) sink;
  w->flops = flops;
  w->seconds = (now - start) / (double) G_USEC_PER_SEC;
  return NULL;
}

static LkPeak *
measure (const Isa *family)
{
  LkPeak *peak = g_new0 (LkPeak, 1);
  guint n = MAX (lk_cpu_cores (), 1);
  g_autofree Worker *workers = g_new0 (Worker, n);
  g_autofree GThread **threads = g_new0 (GThread *, n);
  gint ready = (gint) n;
  Isa isa = *family;

  for (guint t = 0; t < n; t++)
    {
      workers[t] = (Worker){ isa, &ready, 0.0, 0.0 };
      threads[t] = g_thread_new ("lk-peak", measure_thread, &workers[t]);
    }

  double flops = 0.0, slowest = 0.0;
  for (guint t = 0; t < n; t++)
    {
      g_thread_join (threads[t]);
      flops += workers[t].flops;
      slowest = MAX (slowest, workers[t].seconds);
    }

  peak->isa = isa.isa;
  peak->threads = n;
  peak->gflops = slowest > 0.0 ? flops / slowest / 1e9 : 0.0;
  peak->gflops_per_core = peak->gflops / n;
  return peak;
}

const LkPeak *
lk_peak_fma (void)
{
  static gsize once = 0;
  static LkPeak *peak;

  if (g_once_init_enter (&once))
    {
      Isa isa;
      find_isa (NULL, &isa);
      peak = measure (&isa);
      g_once_init_leave (&once, 1);
    }
  return peak;
}

const LkPeak *
lk_peak_for (const char *isa_name)
{
  static GMutex lock;
  static GHashTable *measured;
  Isa isa;

  if (isa_name == NULL)
    return lk_peak_fma ();
  if (!find_isa (isa_name, &isa))
    return NULL;
  g_mutex_lock (&lock);
  if (measured == NULL)
    measured = g_hash_table_new (g_str_hash, g_str_equal);
  LkPeak *peak = g_hash_table_lookup (measured, isa.isa);
  if (peak == NULL)
    {
      peak = measure (&isa);
      g_hash_table_insert (measured, (gpointer) isa.isa, peak);
    }
  g_mutex_unlock (&lock);
  return peak;
}
