/* bench-scale — the scan against OpenBLAS SGEMM and SSYRK as the library grows
 *
 *   bench-scale [--faces 18143,50000,100000] [--seed 7] [--dim 512]
 *               [--threads T] [--reps N]
 *
 * For each face count, in one run: a library drawn by the project's own
 * generator (lk_sample_write, the same bytes as `likeness-cli make-sample
 * --faces N --seed S --no-thumbnails`), this machine's float32 FMA peak
 * measured again just before it, then three arms, each in a child process of
 * its own so that one arm's peak RSS cannot hide another's:
 *
 *   scan   lk_scan, automatic kernel, T threads.
 *   sgemm  cblas_sgemm (single-threaded, one call per thread at a time) on
 *          256-row blocks × 2048-column chunks of the upper triangle, each
 *          chunk thresholded as soon as it is computed: bench-scan's opponent.
 *          Memory: 2 MB of products per thread.
 *   ssyrk  OpenBLAS's own threads (T of them) on a slab of rows at a time:
 *          cblas_ssyrk for the slab's diagonal square (upper triangle only),
 *          cblas_sgemm for the rest of its rows, then the slab thresholded by
 *          T threads. The slab is ≤ 128 MiB (rows = 128 MiB / (4 N)), so the
 *          N × N matrix (40 GB at 100,000 faces) is never stored whole.
 *
 * Both OpenBLAS arms decide candidates with the scan's own pair model
 * (lk_scan_probability) from the float cosine SGEMM/SSYRK computed, so the
 * pair lists must agree except within LK_SCAN_NEAR_BOUNDARY of a bar; a
 * further child checks exactly that (lk_bench_compare_pairs) and any other
 * difference fails the run (exit 1) after the table is printed.
 *
 * Per arm and face count: median seconds of the arm itself (loading the
 * library is not timed), GFLOP/s of N(N-1)/2 × 2·dim useful flops (the same
 * count for every arm), the fraction of the FMA peak measured in this run,
 * the median per-repetition ratio against each OpenBLAS arm (above 1: this
 * arm is faster), the pairs it found, and its peak RSS from wait4 — after the
 * child reset its high-water mark once the library was loaded (clear_refs),
 * so the figure is the arm's working set on top of the loaded library, not
 * the JSON parser's peak (given separately as load-MB). After the table, the
 * measured peak of each instruction family the scan uses — float32 FMA,
 * bf16 dot (vdpbf16ps), int8 dot (vpdpbusd), all cores, lk_peak_for() — and
 * the scan's useful GFLOP/s as a fraction of the one that bounds it: its
 * first pass's dot product, or the FMA without one. Beside it, the
 * O(edges) budget: embeddings + pairs × sizeof (LkPair) + T × 4 MiB.
 *
 * OpenBLAS: the children that run it do so with OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE removed from their environment (only theirs), so OpenBLAS
 * picks its kernel by cpuid as it would for a user; the values this process
 * saw and the core each OpenBLAS child reports are printed.
 *
 * The arms of a repetition run in an order rotated every repetition. Minutes
 * at 100,000 faces: a benchmark (`meson test --benchmark scan-scale`), never
 * a test.
 */
#include "config.h"

#include <malloc.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#if LK_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "lk-bench-scale.h"
#include "timing/lk-cpu.h"
#include "library/lk-library.h"
#include "scan/lk-peak.h"
#include "library/lk-sample.h"
#include "scan/lk-scan.h"
#include "lk-test-faces.h"
#include "lk-test-util.h"

/* ---------------------------------------------------------------- children */

#if LK_HAVE_OPENBLAS
/* The BLAS arms' shared helpers: built only with OpenBLAS, the only user. */
static float
candidate_cosine (const LkFaces *f, const LkCalibration *cal, double bar)
{
  double tau = lk_scan_loosest_cosine (f->crop_px, f->n, cal, bar);
  return isinf (tau) ? -INFINITY : (float) (tau - 2 * LK_SCAN_NEAR_BOUNDARY);
}

typedef struct
{
  const LkFaces *faces;
  const LkCalibration *cal;
  double bar;
  float tau;
} Model;

/* Rows [i0, i1) of a product whose element (i0, col0) is at `c`, row stride
 * ldc; only columns j > i below j1 are read. */
static void
threshold_rows (const Model *m, const float *c, gsize ldc, gsize col0, gsize i0, gsize i1, gsize j1,
                GArray *out)
{
  const LkFaces *f = m->faces;
  for (gsize i = i0; i < i1; i++)
    {
      const float *row = c + (i - i0) * ldc;
      for (gsize j = MAX (col0, i + 1); j < j1; j++)
        {
          float cos = row[j - col0];
          if (cos < m->tau || f->photo[i] == f->photo[j] || !(f->gallery[i] || f->gallery[j]))
            continue;
          double p = lk_scan_probability (m->cal, cos, MIN (f->crop_px[i], f->crop_px[j]));
          if (p >= m->bar)
            {
              LkPair pair = { (guint32) i, (guint32) j, (float) p };
              g_array_append_val (out, pair);
            }
        }
    }
}

/* Runs worker(data) on `threads` threads, the caller being one of them. */
static void
run_threads (GThreadFunc worker, gpointer data, guint threads)
{
  g_autofree GThread **pool = g_new (GThread *, MAX (threads, 1));
  for (guint t = 1; t < threads; t++)
    pool[t] = g_thread_new ("bench-scale", worker, data);
  worker (data);
  for (guint t = 1; t < threads; t++)
    g_thread_join (pool[t]);
}

/* Per-block pair lists, filled in any order, joined in block order. */
typedef struct
{
  Model model;
  gsize n_blocks;
  GArray **block_pairs;
  atomic_size_t next;
  /* ssyrk: the slab and its geometry */
  const float *slab;
  gsize slab_r0, slab_r1, slab_w;
} Blocks;

static GArray *
join_blocks (Blocks *b)
{
  guint64 total = 0;
  for (gsize k = 0; k < b->n_blocks; k++)
    total += b->block_pairs[k]->len;
  GArray *all = g_array_sized_new (FALSE, FALSE, sizeof (LkPair), (guint) total);
  for (gsize k = 0; k < b->n_blocks; k++)
    {
      g_array_append_vals (all, b->block_pairs[k]->data, b->block_pairs[k]->len);
      g_clear_pointer (&b->block_pairs[k], g_array_unref);
    }
  return all;
}

static int
cmp_pair (gconstpointer a, gconstpointer b)
{
  return test_pair_cmp (a, b);
}

#define SGEMM_ROWS 256
#define SGEMM_COLS 2048

static gpointer
sgemm_worker (gpointer data)
{
  Blocks *b = data;
  const LkFaces *f = b->model.faces;
  g_autofree float *c = g_new (float, (gsize) SGEMM_ROWS *SGEMM_COLS);

  for (;;)
    {
      gsize block = atomic_fetch_add (&b->next, 1);
      if (block >= b->n_blocks)
        break;
      gsize r0 = block * SGEMM_ROWS, r1 = MIN (r0 + SGEMM_ROWS, f->n);
      GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));
      for (gsize c0 = r0; c0 < f->n; c0 += SGEMM_COLS)
        {
          gsize c1 = MIN (c0 + SGEMM_COLS, f->n);
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) (r1 - r0), (int) (c1 - c0),
                       (int) f->dim, 1.0f, f->embeddings + r0 * f->dim, (int) f->dim,
                       f->embeddings + c0 * f->dim, (int) f->dim, 0.0f, c, (int) (c1 - c0));
          /* Chunks go left to right, so rows interleave: sorted below. */
          threshold_rows (&b->model, c, c1 - c0, c0, r0, r1, c1, out);
        }
      g_array_sort (out, cmp_pair);
      b->block_pairs[block] = out;
    }
  return NULL;
}

static GArray *
run_sgemm (const LkFaces *f, const LkCalibration *cal, double bar, guint threads)
{
  Blocks b = {
    .model = { f, cal, bar, candidate_cosine (f, cal, bar) },
    .n_blocks = (f->n + SGEMM_ROWS - 1) / SGEMM_ROWS,
  };
  b.block_pairs = g_new0 (GArray *, b.n_blocks);
  atomic_init (&b.next, 0);
  openblas_set_num_threads (1);
  run_threads (sgemm_worker, &b, threads);
  GArray *all = join_blocks (&b);
  g_free (b.block_pairs);
  return all;
}

/* The SSYRK arm's slab: at most this many bytes of products at a time. */
#define SSYRK_SLAB_BYTES ((gsize) 128 << 20)
#define SSYRK_CHUNK      16 /* slab rows per thresholding task */

static gpointer
slab_worker (gpointer data)
{
  Blocks *b = data;
  for (;;)
    {
      gsize chunk = atomic_fetch_add (&b->next, 1);
      if (chunk >= b->n_blocks)
        break;
      gsize i0 = b->slab_r0 + chunk * SSYRK_CHUNK, i1 = MIN (i0 + SSYRK_CHUNK, b->slab_r1);
      GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));
      threshold_rows (&b->model, b->slab + (i0 - b->slab_r0) * b->slab_w, b->slab_w, b->slab_r0, i0,
                      i1, b->model.faces->n, out);
      b->block_pairs[chunk] = out;
    }
  return NULL;
}

static GArray *
run_ssyrk (const LkFaces *f, const LkCalibration *cal, double bar, guint threads)
{
  gsize rows = SSYRK_SLAB_BYTES / (f->n * sizeof (float));
  rows = rows >= 64 ? rows / 64 * 64 : MAX (rows, 1);
  rows = MIN (rows, f->n);
  g_autofree float *slab = g_new (float, rows * f->n);
  Blocks b = {
    .model = { f, cal, bar, candidate_cosine (f, cal, bar) },
    .slab = slab,
  };
  b.block_pairs = g_new0 (GArray *, (rows + SSYRK_CHUNK - 1) / SSYRK_CHUNK);
  GArray *all = g_array_new (FALSE, FALSE, sizeof (LkPair));

  openblas_set_num_threads ((int) threads);
  for (gsize r0 = 0; r0 < f->n; r0 += rows)
    {
      gsize r1 = MIN (r0 + rows, f->n), h = r1 - r0, w = f->n - r0;
      const float *a = f->embeddings + r0 * f->dim;
      /* Row i of the slab holds the products of face r0 + i with faces r0 … n-1. */
      cblas_ssyrk (CblasRowMajor, CblasUpper, CblasNoTrans, (int) h, (int) f->dim, 1.0f, a,
                   (int) f->dim, 0.0f, slab, (int) w);
      if (r1 < f->n)
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) h, (int) (f->n - r1),
                     (int) f->dim, 1.0f, a, (int) f->dim, f->embeddings + r1 * f->dim, (int) f->dim,
                     0.0f, slab + h, (int) w);
      b.slab_r0 = r0;
      b.slab_r1 = r1;
      b.slab_w = w;
      b.n_blocks = (h + SSYRK_CHUNK - 1) / SSYRK_CHUNK;
      atomic_init (&b.next, 0);
      run_threads (slab_worker, &b, threads);
      g_autoptr (GArray) part = join_blocks (&b);
      g_array_append_vals (all, part->data, part->len);
    }
  g_free (b.block_pairs);
  return all;
}

#endif

static gboolean
write_pairs (const char *path, const GArray *pairs, GError **error)
{
  FILE *file = fopen (path, "wb");
  gboolean ok
      = file != NULL && fwrite (pairs->data, sizeof (LkPair), pairs->len, file) == pairs->len;
  if (file != NULL && fclose (file) != 0)
    ok = FALSE;
  if (!ok)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "could not write %s", path);
  return ok;
}

static int
child_arm (const char *arm, const char *folder, guint threads, const char *pairs_out)
{
  guint64 rss_start = lk_bench_self_kb ("VmRSS");
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  if (library == NULL)
    {
      fprintf (stderr, "bench-scale %s: %s\n", arm, error->message);
      return 1;
    }
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  /* Every arm starts from the same state: the embeddings resident (they may
   * be a mapping of embeddings.f32) and the parser's freed memory returned. */
  volatile float sink = 0;
  for (gsize k = 0; k < faces.n * faces.dim; k += 1024)
    sink += faces.embeddings[k];
  (void) sink;
  malloc_trim (0);
  guint64 load_hwm = lk_bench_self_kb ("VmHWM");
  guint64 rss_loaded = lk_bench_self_kb ("VmRSS");
  gboolean reset = lk_bench_reset_peak ();

  const LkCalibration *cal = &library->calibration;
  double bar = library->min_probability;
  g_autoptr (GArray) pairs = NULL;
  guint64 near = 0;
  const char *kernel = "-";
  const char *first_pass = "-";
  double cpu = lk_cpu_process_seconds ();
  gint64 start = g_get_monotonic_time ();
  if (g_str_equal (arm, "scan"))
    {
      LkScanOptions options = { .kernel = LK_KERNEL_AUTO, .threads = threads };
      LkScanResult *r = lk_scan (&faces, cal, bar, &options, NULL, &error);
      if (r == NULL)
        {
          fprintf (stderr, "bench-scale scan: %s\n", error->message);
          return 1;
        }
      pairs = g_array_ref (r->pairs);
      near = r->near_boundary;
      kernel = r->kernel;
      first_pass = r->prefilter;
      lk_scan_result_free (r);
    }
#if LK_HAVE_OPENBLAS
  else if (g_str_equal (arm, "sgemm"))
    pairs = run_sgemm (&faces, cal, bar, threads);
  else if (g_str_equal (arm, "ssyrk"))
    pairs = run_ssyrk (&faces, cal, bar, threads);
#endif
  else
    {
      fprintf (stderr, "bench-scale: no arm “%s” in this build\n", arm);
      return 2;
    }
  double seconds = (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
  cpu = lk_cpu_process_seconds () - cpu;
  guint64 hwm = lk_bench_self_kb ("VmHWM");

  if (!write_pairs (pairs_out, pairs, &error))
    {
      fprintf (stderr, "bench-scale %s: %s\n", arm, error->message);
      return 1;
    }
#if LK_HAVE_OPENBLAS
  if (!g_str_equal (arm, "scan"))
    {
      kernel = openblas_get_corename ();
      printf ("openblas: %s; OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s\n", openblas_get_config (),
              g_getenv ("OPENBLAS_CORETYPE") ?: "(unset)",
              g_getenv ("OPENBLAS_L2_SIZE") ?: "(unset)");
    }
#endif
  printf ("result arm=%s kernel=%s first_pass=%s threads=%u seconds=%.6f cpu=%.6f pairs=%u "
          "near_boundary=%" G_GUINT64_FORMAT " rss_start_kb=%" G_GUINT64_FORMAT
          " load_hwm_kb=%" G_GUINT64_FORMAT " rss_loaded_kb=%" G_GUINT64_FORMAT
          " hwm_kb=%" G_GUINT64_FORMAT " peak_reset=%d\n",
          arm, kernel, first_pass, threads, seconds, cpu, pairs->len, near, rss_start, load_hwm,
          rss_loaded, hwm, reset);
  return 0;
}

static gboolean
map_pairs (const char *path, GMappedFile **file, const LkPair **pairs, gsize *n, GError **error)
{
  *file = g_mapped_file_new (path, FALSE, error);
  if (*file == NULL)
    return FALSE;
  gsize length = g_mapped_file_get_length (*file);
  if (length % sizeof (LkPair) != 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "%s: %" G_GSIZE_FORMAT " bytes is not a whole number of pairs", path, length);
      return FALSE;
    }
  *pairs = (const LkPair *) g_mapped_file_get_contents (*file);
  *n = length / sizeof (LkPair);
  return TRUE;
}

static int
child_compare (const char *folder, const char *path_a, const char *path_b)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_autoptr (GMappedFile) file_a = NULL, file_b = NULL;
  const LkPair *a = NULL, *b = NULL;
  gsize n_a = 0, n_b = 0;
  if (library == NULL || !map_pairs (path_a, &file_a, &a, &n_a, &error)
      || !map_pairs (path_b, &file_b, &b, &n_b, &error))
    {
      fprintf (stderr, "bench-scale compare: %s\n", error->message);
      return 1;
    }
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  LkBenchAgreement g;
  lk_bench_compare_pairs (a, n_a, b, n_b, &faces, &library->calibration, library->min_probability,
                          &g);
  printf ("result a_pairs=%" G_GUINT64_FORMAT " b_pairs=%" G_GUINT64_FORMAT
          " only_a=%" G_GUINT64_FORMAT " only_b=%" G_GUINT64_FORMAT " beyond=%" G_GUINT64_FORMAT
          " first_i=%u first_j=%u\n",
          g.a_pairs, g.b_pairs, g.only_a, g.only_b, g.beyond, g.first_i, g.first_j);
  return 0;
}

static int
child_make_sample (const char *folder, gsize faces, guint64 seed, guint dim)
{
  g_autoptr (GError) error = NULL;
  LkSampleOptions options = { faces, dim, seed, FALSE };
  if (!lk_sample_write (folder, &options, &error))
    {
      fprintf (stderr, "bench-scale make-sample: %s\n", error->message);
      return 1;
    }
  printf ("result faces=%" G_GSIZE_FORMAT "\n", faces);
  return 0;
}

static int
child_peak (void)
{
  const LkPeak *peak = lk_peak_fma ();
  const LkPeak *bf16 = lk_peak_for ("bf16-avx512");
  const LkPeak *int8 = lk_peak_for ("int8-avx512vnni");
  /* 0 where this build or CPU lacks the instruction. */
  printf ("result gflops=%.3f isa=%s threads=%u bf16_gflops=%.3f int8_gflops=%.3f\n", peak->gflops,
          peak->isa, peak->threads, bf16 != NULL ? bf16->gflops : 0.0,
          int8 != NULL ? int8->gflops : 0.0);
  return 0;
}

/* For test-bench-scale: `mb` MiB allocated, written and freed after the
 * peak was reset, so the parent's wait4 must see at least that much. */
static int
child_touch (guint mb)
{
  guint64 rss_start = lk_bench_self_kb ("VmRSS");
  gboolean reset = lk_bench_reset_peak ();
  gsize bytes = (gsize) mb << 20;
  volatile char *block = g_malloc (bytes);
  for (gsize k = 0; k < bytes; k += 4096)
    block[k] = 1;
  guint64 hwm = lk_bench_self_kb ("VmHWM");
  g_free ((gpointer) block);
  printf ("result rss_start_kb=%" G_GUINT64_FORMAT " hwm_kb=%" G_GUINT64_FORMAT " peak_reset=%d\n",
          rss_start, hwm, reset);
  return 0;
}

/* ------------------------------------------------------------------ parent */

typedef struct
{
  const char *name;
  gboolean openblas;
  GArray *seconds; /* per repetition */
  GArray *cpu;     /* CPU seconds of the arm, per repetition */
  GArray *vs[2];   /* sgemm / ssyrk seconds over this arm's, per repetition */
  char *kernel;
  char *first_pass; /* the scan's: which dot product bounds it */
  guint64 pairs, near, maxrss_kb, loaded_kb, load_hwm_kb;
  gboolean reset;
  char *pairs_file;
} Arm;

static void
arm_clear (Arm *arm)
{
  g_clear_pointer (&arm->seconds, g_array_unref);
  g_clear_pointer (&arm->cpu, g_array_unref);
  g_clear_pointer (&arm->vs[0], g_array_unref);
  g_clear_pointer (&arm->vs[1], g_array_unref);
  g_clear_pointer (&arm->kernel, g_free);
  g_clear_pointer (&arm->first_pass, g_free);
  g_clear_pointer (&arm->pairs_file, g_free);
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
  if (values == NULL || values->len == 0)
    return NAN;
  g_autoptr (GArray) sorted = g_array_copy (values);
  g_array_sort (sorted, cmp_double);
  guint n = sorted->len;
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

/* Runs `self --child …`; returns its output, or NULL (said on stderr) when it
 * could not run or did not exit 0. */
static char *
run_child (const char *self, gboolean unset_openblas, guint64 *maxrss_kb, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (self));
  va_list args;
  va_start (args, maxrss_kb);
  for (const char *a = va_arg (args, const char *); a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, g_strdup (a));
  va_end (args);
  g_ptr_array_add (argv, NULL);

  LkBenchChild child;
  g_autoptr (GError) error = NULL;
  if (!lk_bench_run_child ((char *const *) argv->pdata, unset_openblas, &child, &error))
    {
      fprintf (stderr, "bench-scale: %s\n", error->message);
      return NULL;
    }
  if (!WIFEXITED (child.wait_status) || WEXITSTATUS (child.wait_status) != 0)
    {
      g_autofree char *line = g_strjoinv (" ", (char **) argv->pdata);
      fprintf (stderr, "bench-scale: `%s` failed (%s %d); it printed:\n%s\n", line,
               WIFEXITED (child.wait_status) ? "exit" : "signal",
               WIFEXITED (child.wait_status) ? WEXITSTATUS (child.wait_status)
                                             : WTERMSIG (child.wait_status),
               child.output);
      lk_bench_child_clear (&child);
      return NULL;
    }
  if (maxrss_kb != NULL)
    *maxrss_kb = child.maxrss_kb;
  return child.output;
}

#define MB(kb) ((kb) / 1024.0)

/* One face count: generate, measure the peak, run the arms, compare, print. */
static gboolean
bench_size (const char *self, const char *work, gsize n, guint64 seed, guint dim, guint threads,
            int reps, GPtrArray *arm_names, gboolean *agreed)
{
  g_autofree char *folder = g_strdup_printf ("%s/s%" G_GSIZE_FORMAT, work, n);
  g_autofree char *n_text = g_strdup_printf ("%" G_GSIZE_FORMAT, n);
  g_autofree char *seed_text = g_strdup_printf ("%" G_GUINT64_FORMAT, seed);
  g_autofree char *dim_text = g_strdup_printf ("%u", dim);
  g_autofree char *threads_text = g_strdup_printf ("%u", threads);

  g_autofree char *made
      = run_child (self, FALSE, NULL, "--child", "make-sample", "--library", folder, "--faces",
                   n_text, "--seed", seed_text, "--dim", dim_text, NULL);
  g_autofree char *peak_out = run_child (self, FALSE, NULL, "--child", "peak", NULL);
  double peak = NAN, bf16_peak = 0, int8_peak = 0;
  g_autofree char *isa = lk_bench_field (peak_out, "isa");
  if (made == NULL || peak_out == NULL || !lk_bench_field_double (peak_out, "gflops", &peak))
    return FALSE;
  lk_bench_field_double (peak_out, "bf16_gflops", &bf16_peak);
  lk_bench_field_double (peak_out, "int8_gflops", &int8_peak);

  /* A build's first scan of a dimension on a machine races the kernels and
   * first passes (lk-tune.h) inside lk_scan, and remembers the choice: one
   * untimed scan first, so that no repetition's time includes the race. The
   * first size's did: 0.58 s against 0.30 at 18,143 faces (Zen 4). */
  static GHashTable *tuned_dims = NULL;
  if (tuned_dims == NULL)
    tuned_dims = g_hash_table_new (g_direct_hash, g_direct_equal);
  if (!g_hash_table_contains (tuned_dims, GUINT_TO_POINTER (dim)))
    {
      g_autofree char *warm_pairs = g_strdup_printf ("%s/warm-up.pairs", folder);
      g_autofree char *warm
          = run_child (self, FALSE, NULL, "--child", "scan", "--library", folder, "--threads",
                       threads_text, "--pairs-out", warm_pairs, NULL);
      g_unlink (warm_pairs);
      if (warm == NULL)
        return FALSE;
      g_hash_table_add (tuned_dims, GUINT_TO_POINTER (dim));
    }

  guint n_arms = arm_names->len;
  g_autofree Arm *arms = g_new0 (Arm, n_arms);
  for (guint a = 0; a < n_arms; a++)
    {
      arms[a].name = g_ptr_array_index (arm_names, a);
      arms[a].openblas = !g_str_equal (arms[a].name, "scan");
      arms[a].seconds = g_array_new (FALSE, FALSE, sizeof (double));
      arms[a].cpu = g_array_new (FALSE, FALSE, sizeof (double));
      arms[a].vs[0] = g_array_new (FALSE, FALSE, sizeof (double));
      arms[a].vs[1] = g_array_new (FALSE, FALSE, sizeof (double));
      arms[a].pairs_file = g_strdup_printf ("%s/%s.pairs", folder, arms[a].name);
    }

  g_autofree char *load_before = load_average ();
  gboolean ok = TRUE;
  g_autofree double *rep_seconds = g_new (double, n_arms);
  for (int rep = 0; rep < reps && ok; rep++)
    {
      for (guint k = 0; k < n_arms && ok; k++)
        {
          Arm *arm = &arms[(k + rep) % n_arms];
          guint64 maxrss = 0;
          g_autofree char *out
              = run_child (self, arm->openblas, &maxrss, "--child", arm->name, "--library", folder,
                           "--threads", threads_text, "--pairs-out", arm->pairs_file, NULL);
          double s, cpu;
          if (out == NULL || !lk_bench_field_double (out, "seconds", &s)
              || !lk_bench_field_double (out, "cpu", &cpu)
              || !lk_bench_field_uint (out, "pairs", &arm->pairs)
              || !lk_bench_field_uint (out, "near_boundary", &arm->near)
              || !lk_bench_field_uint (out, "rss_loaded_kb", &arm->loaded_kb)
              || !lk_bench_field_uint (out, "load_hwm_kb", &arm->load_hwm_kb))
            {
              if (out != NULL)
                fprintf (stderr, "bench-scale: %s printed no complete result:\n%s\n", arm->name,
                         out);
              ok = FALSE;
              break;
            }
          guint64 reset = 0;
          arm->reset = lk_bench_field_uint (out, "peak_reset", &reset) && reset == 1;
          g_free (arm->kernel);
          arm->kernel = lk_bench_field (out, "kernel");
          g_free (arm->first_pass);
          arm->first_pass = lk_bench_field (out, "first_pass");
          arm->maxrss_kb = MAX (arm->maxrss_kb, maxrss);
          rep_seconds[arm - arms] = s;
          g_array_append_val (arm->seconds, s);
          g_array_append_val (arm->cpu, cpu);
          if (rep == 0 && arm->openblas)
            {
              const char *line = strstr (out, "openblas: ");
              if (line != NULL)
                printf ("bench-scale: %" G_GSIZE_FORMAT " faces, %s child: %.*s\n", n, arm->name,
                        (int) strcspn (line, "\n"), line);
            }
          fprintf (stderr, "bench-scale: %" G_GSIZE_FORMAT " faces, rep %d/%d: %s %.3f s\n", n,
                   rep + 1, reps, arm->name, s);
        }
      for (guint a = 0; a < n_arms && ok; a++)
        for (guint o = 0; o < n_arms; o++)
          {
            int slot = g_str_equal (arms[o].name, "sgemm")   ? 0
                       : g_str_equal (arms[o].name, "ssyrk") ? 1
                                                             : -1;
            if (slot >= 0)
              {
                double ratio = rep_seconds[o] / rep_seconds[a];
                g_array_append_val (arms[a].vs[slot], ratio);
              }
          }
    }
  g_autofree char *load_after = load_average ();

  /* Agreement of every OpenBLAS arm with the scan (the first arm). */
  g_autofree char **agree = g_new0 (char *, n_arms);
  for (guint a = 0; a < n_arms && ok; a++)
    {
      if (a == 0)
        {
          agree[a] = g_strdup ("reference");
          continue;
        }
      g_autofree char *out
          = run_child (self, FALSE, NULL, "--child", "compare", "--library", folder, "--pairs-out",
                       arms[0].pairs_file, "--against", arms[a].pairs_file, NULL);
      guint64 only_a, only_b, beyond, first_i = 0, first_j = 0;
      if (out == NULL || !lk_bench_field_uint (out, "only_a", &only_a)
          || !lk_bench_field_uint (out, "only_b", &only_b)
          || !lk_bench_field_uint (out, "beyond", &beyond))
        {
          ok = FALSE;
          break;
        }
      lk_bench_field_uint (out, "first_i", &first_i);
      lk_bench_field_uint (out, "first_j", &first_j);
      if (beyond > 0)
        {
          *agreed = FALSE;
          fprintf (stderr,
                   "bench-scale: %" G_GSIZE_FORMAT
                   " faces: %s and %s disagree on %" G_GUINT64_FORMAT
                   " pairs away from the bar, the first (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                   ")\n",
                   n, arms[0].name, arms[a].name, beyond, first_i, first_j);
          agree[a] = g_strdup_printf ("NO:%" G_GUINT64_FORMAT, beyond);
        }
      else
        agree[a] = g_strdup_printf ("yes(%" G_GUINT64_FORMAT ")", only_a + only_b);
    }

  if (ok)
    {
      double flops = (double) n * (n - 1) / 2 * 2.0 * dim;
      double budget = lk_bench_edges_bytes (n, dim, arms[0].pairs, threads) / 1048576.0;
      guint64 load_peak = 0;
      for (guint a = 0; a < n_arms; a++)
        {
          Arm *arm = &arms[a];
          double s = median (arm->seconds), gflops = flops / s / 1e9;
          double cpu = median (arm->cpu);
          printf ("%7" G_GSIZE_FORMAT
                  " %-6s %-6s %8.3f %8.3f %8.1f %8.1f %5.0f%% %7.2fx %7.2fx %10" G_GUINT64_FORMAT
                  " %-9s %7.0f %8.0f %7.0f %7.0f%s\n",
                  n, arm->name, arm->kernel ? arm->kernel : "-", s, cpu, gflops, flops / cpu / 1e9,
                  100 * gflops / peak, median (arm->vs[0]), median (arm->vs[1]), arm->pairs,
                  agree[a], MB (arm->maxrss_kb), budget, MB (arm->loaded_kb),
                  MB (arm->maxrss_kb) - MB (arm->loaded_kb),
                  arm->reset ? "" : " (peak not reset: includes loading)");
          load_peak = MAX (load_peak, arm->load_hwm_kb);
        }
      printf ("        %" G_GSIZE_FORMAT " faces: fma_peak=%.1f GFLOP/s (%s) useful=%.3g flop "
              "embeddings=%.0f MB pairs=%.0f MB scan_near_boundary=%" G_GUINT64_FORMAT
              " loading_peak=%.0f MB loadavg %s -> %s\n",
              n, peak, isa ? isa : "?", flops, (double) n * dim * sizeof (float) / 1048576.0,
              (double) arms[0].pairs * sizeof (LkPair) / 1048576.0, arms[0].near, MB (load_peak),
              load_before, load_after);
      /* The scan's bound: the dot product its first pass runs, where it
       * runs one (the re-check is float32, but a few percent of the work). */
      for (guint a = 0; a < n_arms; a++)
        {
          Arm *arm = &arms[a];
          if (arm->openblas)
            continue;
          gboolean int8 = g_strcmp0 (arm->first_pass, "int8-avx512vnni") == 0;
          gboolean bf16 = g_strcmp0 (arm->first_pass, "bf16-avx512") == 0;
          double bound = int8 ? int8_peak : bf16 ? bf16_peak : peak;
          double gflops = flops / median (arm->seconds) / 1e9;
          printf ("        %" G_GSIZE_FORMAT " faces: peaks f32_fma=%.1f bf16_dot=%.1f "
                  "int8_dot=%.1f GFLOP/s (all cores, measured now; 0: not here); the scan "
                  "(first pass %s) ran at %.1f GFLOP/s of useful work = %.0f%% of the %s peak, "
                  "the one that bounds it\n",
                  n, peak, bf16_peak, int8_peak, arm->first_pass ? arm->first_pass : "?", gflops,
                  bound > 0 ? 100 * gflops / bound : 0.0,
                  int8   ? "int8 dot"
                  : bf16 ? "bf16 dot"
                         : "f32 FMA");
        }
      fflush (stdout);
    }

  for (guint a = 0; a < n_arms; a++)
    {
      g_free (agree[a]);
      arm_clear (&arms[a]);
    }
  lk_test_remove_tree (folder);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autofree char *faces_arg = NULL; /* GOption does not free a default */
  g_autofree char *child = NULL, *folder = NULL, *pairs_out = NULL, *against = NULL;
  int reps = 1, threads = 0, dim = LK_SAMPLE_DEFAULT_DIM, mb = 0;
  gint64 seed = 7;
  const GOptionEntry entries[] = {
    { "faces", 0, 0, G_OPTION_ARG_STRING, &faces_arg,
      "Face counts, comma-separated (default 18143,50000,100000)", "N,N,…" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Generator seed (default 7)", "S" },
    { "dim", 0, 0, G_OPTION_ARG_INT, &dim, "Floats per embedding (default 512)", "D" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Threads of every arm (default: one per core)",
      "T" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of every arm (default 1)", "N" },
    /* What the parent runs in its children. */
    { "child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &child, NULL, NULL },
    { "library", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &folder, NULL, NULL },
    { "pairs-out", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &pairs_out, NULL, NULL },
    { "against", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &against, NULL, NULL },
    { "mb", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &mb, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 1)
    {
      fprintf (stderr, "bench-scale: %s\n", error ? error->message : "unexpected argument");
      return 2;
    }
  if (seed < 0 || dim < 8 || threads < 0 || reps < 1)
    {
      fprintf (stderr,
               "bench-scale: --seed must be ≥ 0, --dim ≥ 8, --threads ≥ 0 and --reps ≥ 1\n");
      return 2;
    }
  guint t = threads > 0 ? (guint) threads : lk_cpu_cores ();
  const char *faces_list = faces_arg != NULL ? faces_arg : "18143,50000,100000";

  if (child != NULL)
    {
      if (g_str_equal (child, "make-sample") && folder != NULL)
        {
          g_autoptr (GArray) n = lk_bench_parse_sizes (faces_list, LK_SAMPLE_MAX_FACES, &error);
          if (n == NULL || n->len != 1)
            {
              fprintf (stderr, "bench-scale: %s\n", error ? error->message : "one --faces");
              return 2;
            }
          return child_make_sample (folder, g_array_index (n, gsize, 0), (guint64) seed,
                                    (guint) dim);
        }
      if (g_str_equal (child, "peak"))
        return child_peak ();
      if (g_str_equal (child, "touch") && mb > 0)
        return child_touch ((guint) mb);
      if (g_str_equal (child, "compare") && folder && pairs_out && against)
        return child_compare (folder, pairs_out, against);
      if (folder != NULL && pairs_out != NULL)
        return child_arm (child, folder, t, pairs_out);
      fprintf (stderr, "bench-scale: --child %s: missing arguments\n", child);
      return 2;
    }

  g_autoptr (GArray) sizes = lk_bench_parse_sizes (faces_list, LK_SAMPLE_MAX_FACES, &error);
  if (sizes == NULL)
    {
      fprintf (stderr, "bench-scale: %s\n", error->message);
      return 2;
    }
  g_autofree char *self = g_file_read_link ("/proc/self/exe", &error);
  g_autofree char *work = self ? g_dir_make_tmp ("bench-scale-XXXXXX", &error) : NULL;
  if (work == NULL)
    {
      fprintf (stderr, "bench-scale: %s\n", error->message);
      return 1;
    }

  g_autoptr (GPtrArray) arm_names = g_ptr_array_new ();
  g_ptr_array_add (arm_names, "scan");
#if LK_HAVE_OPENBLAS
  g_ptr_array_add (arm_names, "sgemm");
  g_ptr_array_add (arm_names, "ssyrk");
  printf ("bench-scale: this process: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s, openblas %s; "
          "both variables are removed for the OpenBLAS children (their own view below)\n",
          g_getenv ("OPENBLAS_CORETYPE") ?: "(unset)", g_getenv ("OPENBLAS_L2_SIZE") ?: "(unset)",
          openblas_get_config ());
#else
  printf ("bench-scale: built without OpenBLAS: the scan arm only\n");
#endif
  printf ("bench-scale: cpu=\"%s\" cores=%u threads=%u build=%s reps=%d seed=%" G_GINT64_FORMAT
          " dim=%d spawner_rss=%.1f MB\n",
          lk_cpu_model_name (), lk_cpu_cores (), t, LK_BUILD_TYPE, reps, seed, dim,
          MB (lk_bench_self_kb ("VmRSS")));
  printf ("%7s %-6s %-6s %8s %8s %8s %8s %6s %8s %8s %10s %-9s %7s %8s %7s %7s\n", "faces", "arm",
          "kernel", "seconds", "cpu-s", "GFLOP/s", "GF/cpu-s", "peak", "vs-sgemm", "vs-ssyrk",
          "pairs", "agree", "rss-MB", "edges-MB", "loaded", "arm-MB");
  printf ("# seconds: median wall time of the arm (loading not timed); cpu-s: its CPU time (all "
          "threads); GF/cpu-s: GFLOP per CPU second, steadier than GFLOP/s on a shared machine; "
          "peak: GFLOP/s over the FMA peak measured just before; vs-X: X's seconds / this arm's "
          "(above 1: faster than X); agree: yes(N): the scan's pairs, N of them decided "
          "differently within %g of their bar; rss-MB: the child's peak RSS from wait4, its "
          "high-water mark reset once the library was loaded; edges-MB: embeddings + pairs x %u B "
          "+ threads x %u MiB; loaded: RSS before the arm; arm-MB: rss-MB - loaded\n",
          LK_SCAN_NEAR_BOUNDARY, (guint) sizeof (LkPair), LK_BENCH_SCRATCH_PER_THREAD >> 20);
  fflush (stdout);

  gboolean ok = TRUE, agreed = TRUE;
  for (guint s = 0; s < sizes->len && ok; s++)
    ok = bench_size (self, work, g_array_index (sizes, gsize, s), (guint64) seed, (guint) dim, t,
                     reps, arm_names, &agreed);
  lk_test_remove_tree (work);
  if (ok && agreed)
    printf ("bench-scale: every arm's pairs agree with the scan's\n");
  return ok && agreed ? 0 : 1;
}
