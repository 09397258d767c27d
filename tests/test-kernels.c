/* test-kernels — every SIMD kernel against the portable definition
 *
 * One test case per kernel, so a kernel this machine cannot run shows up as a
 * skip with the reason, never as a pass. Lengths 1 … 70 and 512 cover every
 * tail of every width (4, 8, 16, 32 floats per step); inputs are also read
 * one float off alignment, since rows of an odd dimension start anywhere.
 */
#include "config.h"

#include <math.h>

#include "lk-kernels.h"
#include "lk-test-faces.h"

/* The kernel for this test case, or NULL after marking the test skipped. */
static const LkKernel *
kernel_or_skip (LkKernelId id)
{
  gsize n;
  const LkKernel *const *all = lk_kernels_compiled (&n);

  for (gsize k = 0; k < n; k++)
    if (all[k]->id == id)
      {
        if (lk_kernel_runs_here (all[k]))
          return all[k];
        g_autofree char *needs = lk_cpu_features_string (all[k]->needs);
        g_autofree char *msg = g_strdup_printf ("the %s kernel needs %s, which this processor "
                                                "(%s) lacks; it is built but not tested here",
                                                all[k]->name, needs, lk_cpu_model_name ());
        g_test_skip (msg);
        return NULL;
      }
  g_autofree char *msg = g_strdup_printf ("the %s kernel is not built for this target",
                                          lk_kernel_id_to_string (id));
  g_test_skip (msg);
  return NULL;
}

static const LkKernel *
portable (void)
{
  const LkKernel *k = lk_kernel_get (LK_KERNEL_PORTABLE, NULL);
  g_assert_nonnull (k);
  return k;
}

/* Any two summation orders of `len` products differ by at most about
 * 2·len·u·Σ|a_k b_k| (u = 2^-24). A lost, doubled or misplaced element costs
 * a whole term, far above that for these inputs. */
static void
assert_dots_agree (const LkKernel *kernel, const float *a, const float *b, guint len)
{
  double scale = 0;
  for (guint k = 0; k < len; k++)
    scale += fabs ((double) a[k] * b[k]);
  double bound = 2.0 * (len + 1) * ldexp (1, -24) * scale + 1e-30;
  double want = portable ()->dot (a, b, len);
  double got = kernel->dot (a, b, len);
  double exact = test_exact_dot (a, b, len);

  if (!(fabs (want - got) <= bound) || !(fabs (exact - got) <= bound))
    g_error ("%s kernel at length %u: %.9g, portable %.9g, exact %.9g (bound %g)",
             kernel->name, len, got, want, exact, bound);
}

static void
check_dot_every_length (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  if (kernel == NULL)
    return;

  /* One float of slack in front, so rows can start off a 32-byte boundary. */
  g_autofree float *a = g_new (float, 513);
  g_autofree float *b = g_new (float, 513);
  guint lengths[71];
  for (guint len = 1; len <= 70; len++)
    lengths[len - 1] = len;
  lengths[70] = 512;

  for (guint l = 0; l < G_N_ELEMENTS (lengths); l++)
    {
      guint len = lengths[l];
      for (guint shift = 0; shift <= 1; shift++)
        {
          /* Every term positive and at least 0.25: a missing one shows. */
          for (guint k = 0; k < len; k++)
            {
              a[shift + k] = 1.0f + 0.5f * sinf (0.37f * k);
              b[shift + k] = 1.0f + 0.5f * cosf (0.11f * k);
            }
          assert_dots_agree (kernel, a + shift, b + shift, len);
          /* Signs that cancel, as real embeddings do. */
          test_vector (len * 7 + shift, len, a + shift);
          test_vector (len * 7 + shift + 1000, len, b + shift);
          assert_dots_agree (kernel, a + shift, b + shift, len);
        }
    }
}

/* The tile must report exactly the pairs whose cosine reaches tau, above the
 * diagonal, outside one photo and not two probes, each row in ascending j,
 * each once. Its summation order may differ from the kernel's own dot, so a
 * pair within the rounding bound of tau may fall either way, and its cosine
 * must agree with the dot to within that bound. */
static void
check_tile (const LkKernel *kernel, const TestSet *set, gsize r0, gsize r1, gsize c0, gsize c1,
            float tau)
{
  LkTile tile = { set->embeddings, set->dim, set->photo, set->gallery, r0, r1, c0, c1, tau };
  gsize rows = r1 - r0, cols = c1 - c0;
  g_autofree LkHit *hits = g_new (LkHit, MAX (1, rows * cols));
  g_autofree float *cos = g_new (float, MAX (1, rows * cols));
  g_autofree gboolean *seen = g_new0 (gboolean, MAX (1, rows * cols));
  g_autofree gssize *last_j = g_new (gssize, MAX (1, rows));
  double bound = 2.0 * (set->dim + 1) * ldexp (1, -24);
  gsize n = kernel->tile (&tile, hits);

  for (gsize r = 0; r < rows; r++)
    last_j[r] = -1;
  for (gsize h = 0; h < n; h++)
    {
      gsize i = hits[h].i, j = hits[h].j;
      if (!(i >= r0 && i < r1 && j >= c0 && j < c1 && j > i))
        g_error ("%s tile [%zu,%zu)×[%zu,%zu): hit (%zu, %zu) outside it", kernel->name, r0, r1,
                 c0, c1, i, j);
      g_assert_false (seen[(i - r0) * cols + j - c0]);
      g_assert_cmpint ((gssize) j, >, last_j[i - r0]);
      g_assert_cmpuint (set->photo[i], !=, set->photo[j]);
      g_assert_true (set->gallery[i] || set->gallery[j]);
      last_j[i - r0] = j;
      seen[(i - r0) * cols + j - c0] = TRUE;
      cos[(i - r0) * cols + j - c0] = hits[h].cos;
    }

  for (gsize i = r0; i < r1; i++)
    for (gsize j = MAX (c0, i + 1); j < c1; j++)
      {
        if (set->photo[i] == set->photo[j] || !(set->gallery[i] || set->gallery[j]))
          continue;
        float want = kernel->dot (set->embeddings + i * set->dim, set->embeddings + j * set->dim,
                                  set->dim);
        gboolean got = seen[(i - r0) * cols + j - c0];
        if (got)
          g_assert_cmpfloat_with_epsilon (cos[(i - r0) * cols + j - c0], want, bound);
        if (fabs ((double) want - tau) > bound && got != (want >= tau))
          g_error ("%s tile [%zu,%zu)×[%zu,%zu) tau %g: (%zu, %zu) at %g %s", kernel->name, r0,
                   r1, c0, c1, tau, i, j, want, got ? "reported" : "missed");
      }
}

static void
check_tiles (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  if (kernel == NULL)
    return;

  guint dims[] = { 1, 13, 37, 64, 512 };
  for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      /* Every row distinct (a population repeats rows, which would hide a
       * swapped output): groups of five around a base, each member its own
       * cosine from it, so there are hits above every tau but the largest. */
      g_autoptr (TestSet) set = test_set_new (150, dims[d]);
      g_autofree float *base = g_new (float, dims[d]);
      g_autofree float *other = g_new (float, dims[d]);
      for (gsize i = 0; i < set->n; i++)
        {
          float *row = set->embeddings + i * dims[d];
          test_vector (i / 5 + 1, dims[d], base);
          test_vector (i + 1000, dims[d], other);
          if (dims[d] < 2)
            memcpy (row, other, sizeof (float));
          else
            test_near (base, other, 0.5f + 0.1f * (i % 5), dims[d], row);
        }
      for (gsize i = 0; i < set->n; i++)
        {
          set->photo[i] = i / 3;            /* trios share a photo */
          set->gallery[i] = i % 4 != 0;     /* every fourth face a probe */
        }
      float taus[] = { -INFINITY, 0.0f, 0.5f, 2.0f };
      for (guint t = 0; t < G_N_ELEMENTS (taus); t++)
        {
          check_tile (kernel, set, 0, 64, 0, 64, taus[t]);     /* the diagonal */
          check_tile (kernel, set, 0, 64, 64, 128, taus[t]);   /* fully above it */
          check_tile (kernel, set, 64, 100, 90, 150, taus[t]); /* ragged, straddling */
          check_tile (kernel, set, 64, 128, 0, 64, taus[t]);   /* below: nothing */
          check_tile (kernel, set, 7, 8, 0, 150, taus[t]);     /* one whole row */
        }
    }
}

/* The seed's guard on whatever the runtime choice is: it agrees with the
 * portable definition on unit vectors, and on a tail of 37. */
static void
test_fastest_agrees_with_portable (void)
{
  const LkKernel *fast = lk_kernel_get (LK_KERNEL_AUTO, NULL);
  float a[64], b[64];

  g_assert_nonnull (fast);
  g_assert_true (lk_kernel_runs_here (fast));
  for (guint64 seed = 0; seed < 64; seed++)
    {
      test_vector (seed, 64, a);
      test_vector (seed + 1000, 64, b);
      g_assert_cmpfloat_with_epsilon (fast->dot (a, b, 64), portable ()->dot (a, b, 64), 1e-5);
    }
  for (guint k = 0; k < 37; k++)
    {
      a[k] = k * 0.01f;
      b[k] = 1.0f - k * 0.02f;
    }
  g_assert_cmpfloat_with_epsilon (fast->dot (a, b, 37), portable ()->dot (a, b, 37), 1e-5);
}

/* The seed's check of the unrolled portable loop against the obvious one. */
static void
test_unrolled_matches_naive (void)
{
  guint lengths[] = { 1, 7, 8, 9, 63, 64, 65, 512 };
  float a[512], b[512];

  for (guint l = 0; l < G_N_ELEMENTS (lengths); l++)
    {
      guint len = lengths[l];
      for (guint k = 0; k < len; k++)
        {
          a[k] = sinf (k * 0.37f);
          b[k] = cosf (k * 0.11f);
        }
      g_assert_cmpfloat_with_epsilon (portable ()->dot (a, b, len), test_naive_dot (a, b, len),
                                      1e-4);
    }
}

/* AUTO picks the widest kernel this CPU runs: nothing later in the table
 * (wider) that runs here was passed over. */
static void
test_auto_is_widest_that_runs (void)
{
  gsize n;
  const LkKernel *const *all = lk_kernels_compiled (&n);
  const LkKernel *chosen = lk_kernel_get (LK_KERNEL_AUTO, NULL);
  gboolean after = FALSE;

  g_assert_true (all[0] == portable ());
  for (gsize k = 0; k < n; k++)
    {
      if (after)
        g_assert_false (lk_kernel_runs_here (all[k]));
      after = after || all[k] == chosen;
    }
  g_assert_true (after);
}

/* A kernel the CPU lacks or the build left out is a clear error naming it. */
static void
test_unavailable_kernel_is_an_error (void)
{
  guint errors = 0;

  for (LkKernelId id = LK_KERNEL_PORTABLE; id <= LK_KERNEL_NEON; id++)
    {
      g_autoptr (GError) error = NULL;
      const LkKernel *k = lk_kernel_get (id, &error);
      if (k != NULL)
        {
          g_assert_no_error (error);
          g_assert_cmpint (k->id, ==, id);
          g_assert_true (lk_kernel_runs_here (k));
          continue;
        }
      errors++;
      g_assert_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_UNSUPPORTED_KERNEL);
      g_assert_nonnull (strstr (error->message, lk_kernel_id_to_string (id)));
    }
  /* No processor runs both x86-64's and aarch64's kernels. */
  g_assert_cmpuint (errors, >=, 1);
}

static void
test_names_round_trip (void)
{
  for (LkKernelId id = LK_KERNEL_AUTO; id <= LK_KERNEL_NEON; id++)
    {
      LkKernelId back = 99;
      g_assert_true (lk_kernel_id_from_string (lk_kernel_id_to_string (id), &back));
      g_assert_cmpint (back, ==, id);
    }
  LkKernelId unchanged = LK_KERNEL_AVX2;
  g_assert_false (lk_kernel_id_from_string ("sse9", &unchanged));
  g_assert_cmpint (unchanged, ==, LK_KERNEL_AVX2);
  g_assert_null (lk_kernel_id_to_string (42));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (LkKernelId id = LK_KERNEL_PORTABLE; id <= LK_KERNEL_NEON; id++)
    {
      g_autofree char *dot = g_strdup_printf ("/kernels/%s/dot-agrees-every-length-1-to-70-and-512",
                                              lk_kernel_id_to_string (id));
      g_autofree char *tile = g_strdup_printf ("/kernels/%s/tile-reports-exactly-its-pairs",
                                               lk_kernel_id_to_string (id));
      g_test_add_data_func (dot, GINT_TO_POINTER (id), check_dot_every_length);
      g_test_add_data_func (tile, GINT_TO_POINTER (id), check_tiles);
    }
  g_test_add_func ("/kernels/fastest-agrees-with-portable", test_fastest_agrees_with_portable);
  g_test_add_func ("/kernels/unrolled-dot-matches-naive", test_unrolled_matches_naive);
  g_test_add_func ("/kernels/auto-is-widest-that-runs", test_auto_is_widest_that_runs);
  g_test_add_func ("/kernels/unavailable-kernel-is-an-error", test_unavailable_kernel_is_an_error);
  g_test_add_func ("/kernels/names-round-trip", test_names_round_trip);
  return g_test_run ();
}
