/* bench-scan — the scan's speed per kernel and thread count, against OpenBLAS
 *
 *   bench-scan [LIBRARY] [--reps N]
 *
 * Scans LIBRARY (a folder, LIBRARY-FORMAT.md) — or, without one, a synthetic
 * 18,143-face, 512-d population built in-process — with every kernel this
 * processor runs on all cores, the automatic kernel on one and two threads,
 * and, when built with OpenBLAS, the obvious opponent: cblas_sgemm on
 * upper-triangle row blocks × column chunks, thresholded and decided by the
 * same pair model, its blocks spread over the same number of threads (each
 * calling a single-threaded SGEMM). Every arm runs once per repetition, in an
 * order rotated each repetition so no arm always runs first or last on a
 * machine whose load drifts; the table gives each arm's median seconds,
 * GFLOP/s (n(n-1)/2 × 2·dim useful flops, the same count for every arm) and
 * the median of its per-repetition ratio to OpenBLAS measured in that same
 * repetition (above 1: faster than OpenBLAS), by wall time and by the CPU
 * time the process used (steadier when other work shares the machine). Every arm's pair list is
 * checked against the first's before anything is printed: a fast wrong answer is not a result. The
 * load average before and after is printed, because on a shared machine it is part of the figure.
 *
 * OpenBLAS picks its own kernel from OPENBLAS_CORETYPE when that is set; run
 * with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` so it picks by cpuid,
 * as it would for a user. The values it saw are printed.
 *
 * --avx2-only races the AVX2-only route on a CPU that has more: Likeness
 * with nothing but AVX2 + FMA code (the avx2 kernel, alone and with each
 * first pass that needs no more than AVX2 + FMA) against OpenBLAS on its
 * Haswell (AVX2) SGEMM kernel. OpenBLAS reads OPENBLAS_CORETYPE once, when
 * it is loaded, before main() runs; so bench-scan sets it to Haswell and
 * executes itself again (/proc/self/exe), and every arm still runs in one
 * process, interleaved, under the same load. It sets GLIBC_TUNABLES too, so
 * that glibc's own memcpy/memset and libm pick their AVX2 versions, not the
 * AVX-512 ones (they took ~1% of the profile). The FMA peak line still
 * measures the widest ISA: it is the machine's, not an arm's.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#if LK_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "timing/lk-cpu.h"
#include "scan/lk-kernels.h"
#include "library/lk-library.h"
#include "scan/lk-peak.h"
#include "scan/lk-prefilter.h"
#include "lk-test-faces.h"

#define SYNTHETIC_FACES 18143
#define SYNTHETIC_DIM   512
#define SETTLE_USEC     (300 * 1000) /* the pause before every arm (see the loop in main) */

typedef struct
{
  char *name;
  LkKernelId kernel; /* for scan arms */
  guint threads;
  gboolean openblas;
  GArray *seconds;    /* wall time, per repetition */
  GArray *cpu;        /* CPU time of the whole process (every thread), per repetition */
  GArray *ratios;     /* OpenBLAS wall seconds / this arm's, per repetition */
  GArray *cpu_ratios; /* the same for CPU seconds */
  GArray *pairs;      /* the last run's list, for the parity check */
  guint64 near_boundary;
  LkPrefilterId prefilter; /* 0: AUTO, as the scan runs by default */
  gsize deferred_rows;     /* LkScanOptions.deferred_rows */
} Arm;

static void
arm_free (gpointer data)
{
  Arm *arm = data;
  g_free (arm->name);
  g_array_unref (arm->seconds);
  g_array_unref (arm->ratios);
  g_array_unref (arm->cpu);
  g_array_unref (arm->cpu_ratios);
  if (arm->pairs != NULL)
    g_array_unref (arm->pairs);
  g_free (arm);
}

static Arm *
arm_new (const char *name, LkKernelId kernel, guint threads, gboolean openblas)
{
  Arm *arm = g_new0 (Arm, 1);
  arm->name = g_strdup (name);
  arm->kernel = kernel;
  arm->threads = threads;
  arm->openblas = openblas;
  arm->seconds = g_array_new (FALSE, FALSE, sizeof (double));
  arm->ratios = g_array_new (FALSE, FALSE, sizeof (double));
  arm->cpu = g_array_new (FALSE, FALSE, sizeof (double));
  arm->cpu_ratios = g_array_new (FALSE, FALSE, sizeof (double));
  return arm;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (GArray *values)
{
  g_autoptr (GArray) sorted = g_array_copy (values);
  g_array_sort (sorted, cmp_double);
  guint n = sorted->len;
  if (n == 0)
    return NAN;
  return n % 2 ? g_array_index (sorted, double, n / 2)
               : (g_array_index (sorted, double, n / 2 - 1) + g_array_index (sorted, double, n / 2))
                     / 2;
}

static char *
load_average (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("unknown");
  g_auto (GStrv) fields = g_strsplit (text, " ", 4);
  return g_strdup_printf ("%s %s %s", fields[0], fields[1] ? fields[1] : "",
                          fields[1] && fields[2] ? fields[2] : "");
}

#if LK_HAVE_OPENBLAS

/* Rows per SGEMM block and columns per chunk: a 256 × 2048 float product is
 * 2 MB, big enough for SGEMM to run at its packed-panel speed, small enough
 * that every thread's buffer stays a few MB (O(edges) overall, like the scan). */
#define BLAS_ROWS 256
#define BLAS_COLS 2048

typedef struct
{
  const LkFaces *faces;
  const LkCalibration *cal;
  double bar;
  float tau;
  gsize n_blocks;
  GArray **block_pairs;
  atomic_size_t next;
} Blas;

static int
cmp_pair (const void *a, const void *b)
{
  return test_pair_cmp (a, b);
}

static gpointer
blas_worker (gpointer data)
{
  Blas *b = data;
  const LkFaces *f = b->faces;
  g_autofree float *c = g_new (float, (gsize) BLAS_ROWS *BLAS_COLS);

  for (;;)
    {
      gsize block = atomic_fetch_add (&b->next, 1);
      if (block >= b->n_blocks)
        break;
      gsize r0 = block * BLAS_ROWS, r1 = MIN (r0 + BLAS_ROWS, f->n);
      GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));
      for (gsize c0 = r0; c0 < f->n; c0 += BLAS_COLS)
        {
          gsize c1 = MIN (c0 + BLAS_COLS, f->n);
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) (r1 - r0), (int) (c1 - c0),
                       (int) f->dim, 1.0f, f->embeddings + r0 * f->dim, (int) f->dim,
                       f->embeddings + c0 * f->dim, (int) f->dim, 0.0f, c, (int) (c1 - c0));
          for (gsize i = r0; i < r1; i++)
            {
              const float *row = c + (i - r0) * (c1 - c0);
              for (gsize j = MAX (c0, i + 1); j < c1; j++)
                {
                  float cos = row[j - c0];
                  if (cos < b->tau || f->photo[i] == f->photo[j]
                      || !(f->gallery[i] || f->gallery[j]))
                    continue;
                  double p = lk_scan_probability (b->cal, cos, MIN (f->crop_px[i], f->crop_px[j]));
                  if (p >= b->bar)
                    {
                      LkPair pair = { (guint32) i, (guint32) j, (float) p };
                      g_array_append_val (out, pair);
                    }
                }
            }
        }
      g_array_sort (out, (GCompareFunc) cmp_pair);
      b->block_pairs[block] = out;
    }
  return NULL;
}

static GArray *
run_openblas (const LkFaces *f, const LkCalibration *cal, double bar, guint threads)
{
  double tau = lk_scan_loosest_cosine (f->crop_px, f->n, cal, bar);
  Blas b = {
    .faces = f,
    .cal = cal,
    .bar = bar,
    .tau = isinf (tau) ? -INFINITY : (float) (tau - 2 * LK_SCAN_NEAR_BOUNDARY),
    .n_blocks = (f->n + BLAS_ROWS - 1) / BLAS_ROWS,
  };
  b.block_pairs = g_new0 (GArray *, b.n_blocks);
  atomic_init (&b.next, 0);

  openblas_set_num_threads (1);
  GThread **pool = g_new (GThread *, threads);
  for (guint t = 0; t < threads; t++)
    pool[t] = g_thread_new ("bench-blas", blas_worker, &b);
  for (guint t = 0; t < threads; t++)
    g_thread_join (pool[t]);
  g_free (pool);

  GArray *all = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (gsize k = 0; k < b.n_blocks; k++)
    {
      g_array_append_vals (all, b.block_pairs[k]->data, b.block_pairs[k]->len);
      g_array_unref (b.block_pairs[k]);
    }
  g_free (b.block_pairs);
  return all;
}

#endif

/* --avx2-only: the avx2 kernel alone and with every first pass whose code
 * needs nothing past AVX2 + FMA (no AVX-512 anywhere), after `arms`' first
 * `keep` (OpenBLAS). */
static void
use_avx2_only_arms (GPtrArray *arms, guint keep, guint threads)
{
  g_autoptr (GError) error = NULL;
  if (lk_kernel_get (LK_KERNEL_AVX2, &error) == NULL)
    g_error ("--avx2-only: %s", error->message);
  g_ptr_array_remove_range (arms, keep, arms->len - keep);
  g_autofree char *name = g_strdup_printf ("scan avx2 T=%u no-pf", threads);
  Arm *arm = arm_new (name, LK_KERNEL_AVX2, threads, FALSE);
  arm->prefilter = LK_PREFILTER_OFF;
  g_ptr_array_add (arms, arm);
  gsize n;
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n);
  for (gsize p = 0; p < n; p++)
    if (passes[p]->needs != 0 && (passes[p]->needs & ~(LK_CPU_AVX2 | LK_CPU_FMA)) == 0
        && lk_prefilter_pass_runs_here (passes[p]))
      {
        g_autofree char *pname = g_strdup_printf ("scan avx2+%s T=%u", passes[p]->name, threads);
        arm = arm_new (pname, LK_KERNEL_AVX2, threads, FALSE);
        arm->prefilter = passes[p]->id;
        g_ptr_array_add (arms, arm);
      }
}

/* Runs one arm once; returns its wall time. */
static double
run_arm (Arm *arm, const LkFaces *faces, const LkCalibration *cal, double bar)
{
  gint64 start = g_get_monotonic_time ();

  if (arm->pairs != NULL)
    g_clear_pointer (&arm->pairs, g_array_unref);
#if LK_HAVE_OPENBLAS
  if (arm->openblas)
    {
      arm->pairs = run_openblas (faces, cal, bar, arm->threads);
      return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
    }
#endif
  g_autoptr (GError) error = NULL;
  LkScanOptions options = { .kernel = arm->kernel,
                            .threads = arm->threads,
                            .prefilter = arm->prefilter,
                            .deferred_rows = arm->deferred_rows };
  LkScanResult *r = lk_scan (faces, cal, bar, &options, NULL, &error);
  if (r == NULL)
    g_error ("%s: %s", arm->name, error->message);
  double seconds = (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
  arm->pairs = g_array_ref (r->pairs);
  arm->near_boundary = r->near_boundary;
  lk_scan_result_free (r);
  return seconds;
}

int
main (int argc, char **argv)
{
  int reps = 3;
  gboolean avx2_only = FALSE;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of every arm (default 3)", "N" },
    { "avx2-only", 0, 0, G_OPTION_ARG_NONE, &avx2_only,
      "Only AVX2 + FMA code in Likeness, OpenBLAS on its Haswell kernel", NULL },
    { NULL },
  };
  g_auto (GStrv) original_argv = g_strdupv (argv);
  g_autoptr (GOptionContext) context = g_option_context_new ("[LIBRARY]");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc > 2 || reps < 1)
    {
      fprintf (stderr, "bench-scan: %s\nUsage: bench-scan [LIBRARY] [--reps N]\n",
               error ? error->message : "expected at most one LIBRARY and --reps of 1 or more");
      return 2;
    }
#if LK_HAVE_OPENBLAS
  if (avx2_only && g_strcmp0 (g_getenv ("OPENBLAS_CORETYPE"), "Haswell") != 0)
    {
      /* Too late for this process: OpenBLAS chose its kernel when it was
       * loaded. The same program again, with the variable set. */
      g_setenv ("OPENBLAS_CORETYPE", "Haswell", TRUE);
      g_setenv ("GLIBC_TUNABLES",
                "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD", TRUE);
      execv ("/proc/self/exe", original_argv);
      fprintf (stderr, "bench-scan: could not run itself with OPENBLAS_CORETYPE=Haswell: %s\n",
               g_strerror (errno));
      return 1;
    }
#endif

  g_autoptr (LkLibrary) library = NULL;
  g_autoptr (TestSet) synthetic = NULL;
  LkFaces faces;
  LkCalibration cal;
  double bar;
  const char *source;
  if (argc == 2)
    {
      library = lk_library_load (argv[1], &error);
      if (library == NULL)
        {
          fprintf (stderr, "bench-scan: %s\n", error->message);
          return 1;
        }
      lk_faces_from_library (&faces, library);
      cal = library->calibration;
      bar = library->min_probability;
      source = argv[1];
    }
  else
    {
      /* Identities of eight faces, each 0.6 from its first: the cosine spread
       * of a real library (same person 36–60° apart, strangers near 90°). */
      synthetic = test_population (SYNTHETIC_FACES / 8 + 1, 8, 0.6f, SYNTHETIC_DIM);
      synthetic->n = SYNTHETIC_FACES;
      faces = test_set_faces (synthetic);
      cal = (LkCalibration) LK_CALIBRATION_DEFAULT;
      bar = 0.9;
      source = "synthetic";
    }

  guint cores = lk_cpu_cores ();
  g_autoptr (GPtrArray) arms = g_ptr_array_new_with_free_func (arm_free);
  gsize n_kernels;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);
  const LkKernel *best = lk_kernel_get (LK_KERNEL_AUTO, NULL);
#if LK_HAVE_OPENBLAS
  g_autofree char *blas_name = g_strdup_printf ("openblas-sgemm T=%u", cores);
  g_ptr_array_add (arms, arm_new (blas_name, 0, cores, TRUE));
#endif
  /* What the product runs: kernel and first pass both "auto", the measured
   * choice (lk-tune.h; measured on the first run, then remembered). */
  g_autofree char *auto_name = g_strdup_printf ("scan auto T=%u", cores);
  g_ptr_array_add (arms, arm_new (auto_name, LK_KERNEL_AUTO, cores, FALSE));
  /* The same with the first pass's survivors re-checked a tile at a time,
   * as every scan did before lk-scan.c's scan_block_deferred. */
  g_autofree char *tiles_name = g_strdup_printf ("scan auto T=%u tiles", cores);
  Arm *tiles = arm_new (tiles_name, LK_KERNEL_AUTO, cores, FALSE);
  tiles->deferred_rows = LK_SCAN_DEFERRED_NEVER;
  g_ptr_array_add (arms, tiles);
  /* The portable kernel only where nothing faster runs: elsewhere it is
   * slower (28 CPU-s at 18,143 faces with its first, 4 × 4 block) and the
   * tile-fused gate races it. */
  for (gsize k = 0; k < n_kernels; k++)
    if (lk_kernel_runs_here (kernels[k]) && (kernels[k]->needs != 0 || best->needs == 0))
      {
        g_autofree char *name = g_strdup_printf ("scan %s T=%u", kernels[k]->name, cores);
        g_ptr_array_add (arms, arm_new (name, kernels[k]->id, cores, FALSE));
      }
  /* The widest kernel without the low-precision first pass (lk-prefilter.h),
   * which every other scan arm runs where "auto" picks one. */
  const LkPrefilterPass *first_pass = NULL;
  lk_prefilter_pass_get (LK_PREFILTER_AUTO, &first_pass, NULL);
  if (first_pass != NULL)
    {
      g_autofree char *name = g_strdup_printf ("scan %s T=%u no-pf", best->name, cores);
      Arm *arm = arm_new (name, best->id, cores, FALSE);
      arm->prefilter = LK_PREFILTER_OFF;
      g_ptr_array_add (arms, arm);
    }
  for (guint t = 1; t <= 2; t++)
    if (t != cores)
      {
        g_autofree char *name = g_strdup_printf ("scan %s T=%u", best->name, t);
        g_ptr_array_add (arms, arm_new (name, best->id, t, FALSE));
      }

  if (avx2_only)
    {
      use_avx2_only_arms (arms, LK_HAVE_OPENBLAS ? 1 : 0, cores);
      first_pass = NULL;
    }

  g_autofree char *load_before = load_average ();
  printf ("bench-scan: library=%s faces=%" G_GSIZE_FORMAT " dim=%u min_probability=%g\n", source,
          faces.n, faces.dim, bar);
  printf ("bench-scan: cpu=\"%s\" cores=%u build=%s reps=%d load_before=%s prefilter=%s\n",
          lk_cpu_model_name (), cores, LK_BUILD_TYPE, reps, load_before,
          avx2_only            ? "per-arm (--avx2-only)"
          : first_pass != NULL ? first_pass->name
                               : "off");
#if LK_HAVE_OPENBLAS
  printf ("bench-scan: openblas=\"%s\" OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s\n",
          openblas_get_config (), g_getenv ("OPENBLAS_CORETYPE") ?: "(unset)",
          g_getenv ("OPENBLAS_L2_SIZE") ?: "(unset)");
#else
  printf ("bench-scan: built without OpenBLAS; no ratios\n");
#endif
  const LkPeak *peak = lk_peak_fma ();
  printf ("bench-scan: fma_peak=%.1f GFLOP/s (%s, %u threads, %.1f per core; measured now, under "
          "the same load)\n",
          peak->gflops, peak->isa, peak->threads, peak->gflops_per_core);
  fflush (stdout);

  for (int rep = 0; rep < reps; rep++)
    {
      g_autofree double *seconds = g_new (double, arms->len);
      g_autofree double *cpu = g_new (double, arms->len);
      for (guint k = 0; k < arms->len; k++)
        {
          guint a = (k + rep) % arms->len;
          /* A pause before every arm: OpenBLAS's worker threads spin for a
           * while after a call (2^28 cycles by default) and took CPU from
           * whichever arm came next. Right after OpenBLAS the scan measured
           * 0.358–0.364 s (0.69–0.71 CPU-s) of 18,143 faces, with 300 ms
           * between arms 0.326–0.343 s (0.63–0.66), and OpenBLAS itself
           * 1.01–1.15 s against 1.09–1.17 (AMD EPYC Zen 4, load 2–3). */
          g_usleep (SETTLE_USEC);
          double before = lk_cpu_process_seconds ();
          seconds[a] = run_arm (g_ptr_array_index (arms, a), &faces, &cal, bar);
          cpu[a] = lk_cpu_process_seconds () - before;
        }
      for (guint a = 0; a < arms->len; a++)
        {
          Arm *arm = g_ptr_array_index (arms, a);
          g_array_append_val (arm->seconds, seconds[a]);
          g_array_append_val (arm->cpu, cpu[a]);
#if LK_HAVE_OPENBLAS
          double ratio = seconds[0] / seconds[a], cpu_ratio = cpu[0] / cpu[a];
          g_array_append_val (arm->ratios, ratio);
          g_array_append_val (arm->cpu_ratios, cpu_ratio);
#endif
        }
    }

  /* Parity: every arm's list against the first scan arm's, allowing only
   * pairs that sit within LK_SCAN_NEAR_BOUNDARY of their bar to differ. */
  Arm *reference = NULL;
  for (guint a = 0; a < arms->len && reference == NULL; a++)
    if (!((Arm *) g_ptr_array_index (arms, a))->openblas)
      reference = g_ptr_array_index (arms, a);
  for (guint a = 0; a < arms->len; a++)
    {
      Arm *arm = g_ptr_array_index (arms, a);
      LkScanResult got = { arm->pairs, reference->near_boundary, NULL, 0, 0 };
      test_assert_same_pairs (&got, reference->pairs, &faces, &cal, bar);
    }

  g_autofree char *load_after = load_average ();
  double flops = (double) faces.n * (faces.n - 1) / 2 * 2.0 * faces.dim;
  /* CPU seconds beside wall seconds: on a machine shared with other work, the
   * CPU time an arm needed is steadier than the wall time it happened to get. */
  printf ("%-22s %8s %8s %6s %8s %11s %9s %12s %11s\n", "arm", "seconds", "GFLOP/s", "peak",
          "cpu-s", "GFLOP/cpu-s", "pairs", "vs-openblas", "(cpu-time)");
  for (guint a = 0; a < arms->len; a++)
    {
      Arm *arm = g_ptr_array_index (arms, a);
      double s = median (arm->seconds), c = median (arm->cpu);
      /* "peak": this arm's wall-clock rate over the all-core FMA peak; on one
       * thread, over that peak's share of the threads it used. */
      double share = peak->gflops * MIN (arm->threads, peak->threads) / peak->threads;
      printf ("%-22s %8.3f %8.1f %5.0f%% %8.3f %11.1f %9u", arm->name, s, flops / s / 1e9,
              100 * flops / s / 1e9 / share, c, flops / c / 1e9, arm->pairs->len);
      if (arm->ratios->len > 0)
        printf (" %11.2fx %10.2fx\n", median (arm->ratios), median (arm->cpu_ratios));
      else
        printf (" %12s %11s\n", "-", "-");
    }
  printf ("bench-scan: near_boundary=%" G_GUINT64_FORMAT " load_after=%s\n",
          reference->near_boundary, load_after);
  return 0;
}
