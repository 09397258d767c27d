/* test-kernels — every kernel against the canonical definition, to the bit
 *
 * The definition is lk_dot_canonical (lk-dot-canonical.h): one fused chain
 * over k. Every kernel's `dot`, `tile` and `tile_per_pair` must return its
 * bits exactly (memcmp), and `dot_fast` must sit within rounding of it. One
 * test case per kernel and function, so a kernel this machine cannot run
 * shows up as a skip with the reason, never as a pass. Lengths 1 … 70 and
 * 512 cover every tail of every width (4, 8, 16, 32 floats per step) and
 * every micro-tile edge; inputs are also read one float off alignment, since
 * rows of an odd dimension start anywhere.
 */
#include "config.h"

#include <float.h>
#include <math.h>

#include "scan/lk-dot-canonical.h"
#include "scan/lk-kernels.h"
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
  g_autofree char *msg
      = g_strdup_printf ("the %s kernel is not built for this target", lk_kernel_id_to_string (id));
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

static gboolean
same_bits (float a, float b)
{
  return memcmp (&a, &b, sizeof (float)) == 0;
}

/* Any two summation orders of `len` products differ by at most about
 * 2·len·u·Σ|a_k b_k| (u = 2^-24). A lost, doubled or misplaced element costs
 * a whole term, far above that for these inputs. */
static void
assert_dot_fast_agrees (const LkKernel *kernel, const float *a, const float *b, guint len)
{
  double scale = 0;
  for (guint k = 0; k < len; k++)
    scale += fabs ((double) a[k] * b[k]);
  double bound = 2.0 * (len + 1) * ldexp (1, -24) * scale + 1e-30;
  double want = lk_dot_canonical (a, b, len);
  double got = kernel->dot_fast (a, b, len);
  double exact = test_exact_dot (a, b, len);

  if (!(fabs (want - got) <= bound) || !(fabs (exact - got) <= bound))
    g_error ("%s dot_fast at length %u: %.9g, canonical %.9g, exact %.9g (bound %g)", kernel->name,
             len, got, want, exact, bound);
}

/* `dot` is the canonical chain to the bit; `dot_fast` is within rounding. */
static void
assert_dots (const LkKernel *kernel, const float *a, const float *b, guint len)
{
  float want = lk_dot_canonical (a, b, len);
  float got = kernel->dot (a, b, len);

  if (!same_bits (got, want))
    g_error ("%s dot at length %u: %.9g (%a), canonical %.9g (%a)", kernel->name, len, got, got,
             want, want);
  assert_dot_fast_agrees (kernel, a, b, len);
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
          assert_dots (kernel, a + shift, b + shift, len);
          /* Signs that cancel, as real embeddings do. */
          test_vector (len * 7 + shift, len, a + shift);
          test_vector (len * 7 + shift + 1000, len, b + shift);
          assert_dots (kernel, a + shift, b + shift, len);
        }
    }
}

/* Every cosine of a set, by the definition: ref[i · n + j] for i < j. */
static float *
canonical_cosines (const TestSet *set)
{
  float *ref = g_new0 (float, set->n * set->n);

  for (gsize i = 0; i < set->n; i++)
    for (gsize j = i + 1; j < set->n; j++)
      ref[i * set->n + j] = lk_dot_canonical (set->embeddings + i * set->dim,
                                              set->embeddings + j * set->dim, set->dim);
  return ref;
}

/* `tile` (which: "tile" or "tile_per_pair") must report exactly the pairs
 * whose canonical cosine reaches tau, above the diagonal, outside one photo
 * and not two probes, each row in ascending j, each once, with the canonical
 * cosine's very bits. */
static void
check_tile (const LkKernel *kernel, LkTileFunc func, const char *which, const TestSet *set,
            const float *ref, gsize r0, gsize r1, gsize c0, gsize c1, float tau)
{
  LkTile tile = { set->embeddings, set->dim, set->photo, set->gallery, r0, r1, c0, c1, tau };
  gsize rows = r1 - r0, cols = c1 - c0;
  g_autofree LkHit *hits = g_new (LkHit, MAX (1, rows * cols));
  g_autofree gboolean *seen = g_new0 (gboolean, MAX (1, rows * cols));
  g_autofree gssize *last_j = g_new (gssize, MAX (1, rows));
  gsize n = func (&tile, hits);
  gsize want_n = 0;

  g_assert_cmpuint (n, <=, rows * cols);
  for (gsize r = 0; r < rows; r++)
    last_j[r] = -1;
  for (gsize h = 0; h < n; h++)
    {
      gsize i = hits[h].i, j = hits[h].j;
      if (!(i >= r0 && i < r1 && j >= c0 && j < c1 && j > i))
        g_error ("%s %s [%zu,%zu)×[%zu,%zu): hit (%zu, %zu) outside it", kernel->name, which, r0,
                 r1, c0, c1, i, j);
      g_assert_false (seen[(i - r0) * cols + j - c0]);
      g_assert_cmpint ((gssize) j, >, last_j[i - r0]);
      g_assert_cmpuint (set->photo[i], !=, set->photo[j]);
      g_assert_true (set->gallery[i] || set->gallery[j]);
      float want = ref[i * set->n + j];
      if (!same_bits (hits[h].cos, want))
        g_error ("%s %s dim %u: (%zu, %zu) cosine %.9g (%a), canonical %.9g (%a)", kernel->name,
                 which, set->dim, i, j, hits[h].cos, hits[h].cos, want, want);
      last_j[i - r0] = j;
      seen[(i - r0) * cols + j - c0] = TRUE;
    }

  for (gsize i = r0; i < r1; i++)
    for (gsize j = MAX (c0, i + 1); j < c1; j++)
      {
        if (set->photo[i] == set->photo[j] || !(set->gallery[i] || set->gallery[j])
            || !(ref[i * set->n + j] >= tau))
          continue;
        want_n++;
        if (!seen[(i - r0) * cols + j - c0])
          g_error ("%s %s dim %u [%zu,%zu)×[%zu,%zu) tau %a: (%zu, %zu) at %a missed", kernel->name,
                   which, set->dim, r0, r1, c0, c1, tau, i, j, ref[i * set->n + j]);
      }
  g_assert_cmpuint (n, ==, want_n);
}

#define TILE_SET_FACES 111

/* Photo and gallery patterns: each rule alone, both, and each leaving
 * nothing to report. */
static void
set_masks (TestSet *set, guint pattern)
{
  for (gsize i = 0; i < set->n; i++)
    {
      switch (pattern)
        {
          case 0: /* every face its own photo, all gallery: only the bar decides */
            set->photo[i] = i;
            set->gallery[i] = 1;
            break;
          case 1: /* trios share a photo, every fourth face a probe */
            set->photo[i] = i / 3;
            set->gallery[i] = i % 4 != 0;
            break;
          case 2: /* every face a probe: nothing */
            set->photo[i] = i;
            set->gallery[i] = 0;
            break;
          case 3: /* one photo: nothing */
            set->photo[i] = 7;
            set->gallery[i] = 1;
            break;
          default: /* one gallery face among probes: its row and column only */
            set->photo[i] = i;
            set->gallery[i] = i == 40;
            break;
        }
    }
}

/* Rows of one dimension: groups of five around a base, each member its own
 * cosine from it, so there are hits above every tau but the largest, and
 * every row distinct (a repeated row would hide a swapped output). */
static TestSet *
tile_set_new (guint dim)
{
  TestSet *set = test_set_new (TILE_SET_FACES, dim);
  g_autofree float *base = g_new (float, dim);
  g_autofree float *other = g_new (float, dim);

  for (gsize i = 0; i < set->n; i++)
    {
      float *row = set->embeddings + i * dim;
      test_vector (i / 5 + 1, dim, base);
      test_vector (i + 1000, dim, other);
      if (dim < 2)
        memcpy (row, other, sizeof (float));
      else
        test_near (base, other, 0.5f + 0.1f * (i % 5), dim, row);
    }
  return set;
}

/* Every tile function of a kernel against the definition: dims 1 … 70 and
 * 512, tiles of whole, odd and single rows and columns, on, above, below and
 * straddling the diagonal, bars from -∞ to above 1 and one exactly at a
 * cosine, every mask pattern. */
static void
check_tiles (const LkKernel *kernel, LkTileFunc func, const char *which)
{
  guint dims[71];
  for (guint d = 1; d <= 70; d++)
    dims[d - 1] = d;
  dims[70] = 512;

  for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      g_autoptr (TestSet) set = tile_set_new (dims[d]);
      g_autofree float *ref = canonical_cosines (set);
      /* A bar exactly at one pair's cosine (reported: cos >= tau) and one
       * float above it (not). */
      float at = ref[3 * set->n + 4];
      float taus[] = { -INFINITY, 0.0f, 0.5f, at, nextafterf (at, INFINITY), 1.0f, 2.0f };
      const gsize shapes[][4] = {
        { 0, 64, 0, 64 },     /* the diagonal block */
        { 0, 64, 64, 111 },   /* wholly above it, ragged columns */
        { 37, 101, 50, 111 }, /* straddling, odd everything */
        { 64, 111, 0, 64 },   /* wholly below: nothing */
        { 7, 8, 0, 111 },     /* one whole row */
        { 3, 10, 5, 22 },     /* smaller than one micro-tile */
        { 0, 111, 110, 111 }, /* one column */
        { 20, 20, 0, 111 },   /* no rows */
        { 5, 6, 9, 10 },      /* one pair */
        { 5, 6, 9, 12 },      /* three pairs in a row */
        { 5, 7, 6, 8 },       /* a corner of the diagonal: pairs (5,6) (5,7) (6,7) */
      };
      /* Every bar with the plain pattern; each rule with a bar that would
       * otherwise report. At 512 and every seventh dimension, all bars and all
       * five patterns; elsewhere the bars at and around a cosine (what an
       * edge or a summation order would get wrong) — which keeps the whole
       * test within a minute under valgrind. */
      gboolean full = dims[d] == 512 || dims[d] % 7 == 0;
      for (guint m = 0; m < (full ? 5u : 2u); m++)
        {
          set_masks (set, m);
          for (guint t = 0; t < G_N_ELEMENTS (taus); t++)
            {
              gboolean boundary = t == 0 || t == 3 || t == 4;
              if (m == 0 ? !(full || boundary) : t != (m == 1 ? 2u : 0u))
                continue;
              for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
                check_tile (kernel, func, which, set, ref, shapes[s][0], shapes[s][1], shapes[s][2],
                            shapes[s][3], taus[t]);
            }
        }
    }
}

static void
check_tile_fused (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  if (kernel != NULL)
    check_tiles (kernel, kernel->tile, "tile");
}

static void
check_tile_per_pair (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  if (kernel != NULL)
    check_tiles (kernel, kernel->tile_per_pair, "tile_per_pair");
}

/* Two inputs whose answer only the canonical order gives. Rows 0 · 1: the
 * second product, (1 + 2^-12)², is 1 + 2^-11 + 2^-24; fused into the running
 * -(1 + 2^-11) it leaves 2^-24, rounded first it leaves 0. Rows 2 · 3: in
 * sequence 2^24 + 1 rounds back to 2^24 and the last term cancels it to 0;
 * pairwise, or the big terms first, gives 1. A kernel with another order or
 * an unfused step fails one of them. */
static void
check_order_witnesses (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  if (kernel == NULL)
    return;

  const float e = 1.0f + ldexpf (1.0f, -12);
  const float rows[4][3] = {
    { 1.0f, e, 0.0f },
    { -(1.0f + ldexpf (1.0f, -11)), e, 0.0f },
    { 1.0f, 1.0f, 1.0f },
    { ldexpf (1.0f, 24), 1.0f, -ldexpf (1.0f, 24) },
  };
  const guint64 photo[4] = { 0, 1, 2, 3 };
  const guint8 gallery[4] = { 1, 1, 1, 1 };
  LkTile tile = { &rows[0][0], 3, photo, gallery, 0, 4, 0, 4, -INFINITY };
  LkHit hits[16];

  g_assert_true (same_bits (lk_dot_canonical (rows[0], rows[1], 3), ldexpf (1.0f, -24)));
  g_assert_true (same_bits (lk_dot_canonical (rows[2], rows[3], 3), 0.0f));
  g_assert_true (same_bits (kernel->dot (rows[0], rows[1], 3), ldexpf (1.0f, -24)));
  g_assert_true (same_bits (kernel->dot (rows[2], rows[3], 3), 0.0f));
  LkTileFunc funcs[] = { kernel->tile, kernel->tile_per_pair };
  for (guint f = 0; f < G_N_ELEMENTS (funcs); f++)
    {
      gsize n = funcs[f](&tile, hits);
      g_assert_cmpuint (n, ==, 6);
      for (gsize h = 0; h < n; h++)
        {
          float want = lk_dot_canonical (rows[hits[h].i], rows[hits[h].j], 3);
          g_assert_true (same_bits (hits[h].cos, want));
          if (hits[h].i == 0 && hits[h].j == 1)
            g_assert_true (same_bits (hits[h].cos, ldexpf (1.0f, -24)));
          if (hits[h].i == 2 && hits[h].j == 3)
            g_assert_true (same_bits (hits[h].cos, 0.0f));
        }
    }
}

/* The runtime choice returns the canonical bits on unit vectors and on a
 * tail of 37. */
static void
test_fastest_is_canonical (void)
{
  const LkKernel *fast = lk_kernel_get (LK_KERNEL_AUTO, NULL);
  float a[64], b[64];

  g_assert_nonnull (fast);
  g_assert_true (lk_kernel_runs_here (fast));
  for (guint64 seed = 0; seed < 64; seed++)
    {
      test_vector (seed, 64, a);
      test_vector (seed + 1000, 64, b);
      g_assert_true (same_bits (fast->dot (a, b, 64), portable ()->dot (a, b, 64)));
      g_assert_true (same_bits (fast->dot (a, b, 64), lk_dot_canonical (a, b, 64)));
    }
  for (guint k = 0; k < 37; k++)
    {
      a[k] = k * 0.01f;
      b[k] = 1.0f - k * 0.02f;
    }
  g_assert_true (same_bits (fast->dot (a, b, 37), lk_dot_canonical (a, b, 37)));
}

/* The seed's check of the unrolled portable loop (now dot_fast) against the
 * obvious one. */
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
      g_assert_cmpfloat_with_epsilon (portable ()->dot_fast (a, b, len), test_naive_dot (a, b, len),
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
      g_assert_error (error, LK_KERNEL_ERROR, LK_KERNEL_ERROR_UNSUPPORTED);
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

/* n rows of dim test_vector values, row i seeded i * stride + dim. */
static float *
recheck_rows (gsize n, gsize dim, guint stride)
{
  float *rows = g_new (float, n *dim);
  for (gsize i = 0; i < n; i++)
    test_vector ((guint) (i * stride + dim), (guint) dim, rows + i * dim);
  return rows;
}

/* recheck: every pair's cosine is lk_dot_canonical's bits, for lists of 0 to
 * 19 pairs (whole groups of eight and every tail), repeated and reversed
 * pairs, dims 1 to 9, 33 and 512; i and j are left alone. Also on rows whose
 * products and partial sums are subnormal, where a vector re-check that
 * flushed denormals would differ. */
static void
check_recheck (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  static const gsize dims[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 33, 512 };
  const gsize n = 23;

  if (kernel == NULL)
    return;
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = recheck_rows (n, dim, 7);
      for (gsize count = 0; count < 20; count++)
        {
          LkHit hits[20];
          for (gsize h = 0; h < count; h++)
            hits[h] = (LkHit){ (guint32) ((h * 5 + count) % n), (guint32) ((h * 11 + 3) % n), NAN };
          kernel->recheck (rows, dim, hits, count);
          for (gsize h = 0; h < count; h++)
            {
              g_assert_cmpuint (hits[h].i, ==, (h * 5 + count) % n);
              g_assert_cmpuint (hits[h].j, ==, (h * 11 + 3) % n);
              float want = lk_dot_canonical (rows + hits[h].i * dim, rows + hits[h].j * dim, dim);
              if (!same_bits (hits[h].cos, want))
                g_error ("%s recheck, dim %" G_GSIZE_FORMAT ", pair %" G_GSIZE_FORMAT
                         " of %" G_GSIZE_FORMAT ": %a, canonical %a",
                         kernel->name, dim, h, count, (double) hits[h].cos, (double) want);
            }
        }
    }

  /* Tiny rows: elements near 2^-70, so that the products of two tiny rows sit
   * near 2^-140 (subnormal floats) and their chains add subnormals, beside
   * rows of ordinary size. 17 pairs: two whole groups and a tail. */
  const gsize dim = 21, rows_n = 9;
  g_autofree float *tiny = g_new (float, rows_n *dim);
  for (gsize i = 0; i < rows_n; i++)
    {
      test_vector ((guint) (i + 100), (guint) dim, tiny + i * dim);
      for (gsize k = 0; k < dim; k++)
        tiny[i * dim + k] = ldexpf (tiny[i * dim + k], i % 3 == 2 ? 0 : -70);
    }
  LkHit hits[17];
  gboolean subnormal = FALSE;
  for (gsize h = 0; h < G_N_ELEMENTS (hits); h++)
    hits[h] = (LkHit){ (guint32) (h % rows_n), (guint32) ((h * 4 + 1) % rows_n), NAN };
  kernel->recheck (tiny, dim, hits, G_N_ELEMENTS (hits));
  for (gsize h = 0; h < G_N_ELEMENTS (hits); h++)
    {
      float want = lk_dot_canonical (tiny + hits[h].i * dim, tiny + hits[h].j * dim, dim);
      subnormal = subnormal || (want != 0.0f && fabsf (want) < FLT_MIN);
      if (!same_bits (hits[h].cos, want))
        g_error ("%s recheck of tiny rows, pair %" G_GSIZE_FORMAT ": %a, canonical %a",
                 kernel->name, h, (double) hits[h].cos, (double) want);
    }
  /* The case is there: some canonical cosine is itself subnormal. */
  g_assert_true (subnormal);
}

/* recheck on lists whose pairs come in runs sharing their first row, as a
 * scan's survivors sorted by row do (lk-scan.c, recheck_deferred): runs of
 * every length from 1 to 57 (the x86 kernels take runs of 8, 16 and 24 by
 * broadcasting that row, and mixed lists by the general path), two runs of
 * one row apart, dims whose tail is not a multiple of eight; every cosine is
 * lk_dot_canonical's bits and i, j are left alone. */
static void
check_recheck_shared_rows (gconstpointer data)
{
  const LkKernel *kernel = kernel_or_skip (GPOINTER_TO_INT (data));
  static const gsize dims[] = { 3, 8, 13, 64, 517 };
  const gsize n = 71, max_run = 57;

  if (kernel == NULL)
    return;
  for (gsize d = 0; d < G_N_ELEMENTS (dims); d++)
    {
      gsize dim = dims[d];
      g_autofree float *rows = recheck_rows (n, dim, 13);
      /* Runs of length 1, 2, …, max_run, one after another, the row of run r
       * being r % 5 (so runs of one row also follow each other), each pair's
       * column spread over the rows. */
      gsize total = max_run * (max_run + 1) / 2;
      g_autofree LkHit *hits = g_new (LkHit, total);
      g_autofree guint32 *want_j = g_new (guint32, total);
      gsize h = 0;
      for (gsize run = 1; run <= max_run; run++)
        for (gsize q = 0; q < run; q++, h++)
          {
            want_j[h] = (guint32) ((h * 29 + run) % n);
            hits[h] = (LkHit){ (guint32) (run % 5), want_j[h], NAN };
          }
      g_assert_cmpuint (h, ==, total);
      kernel->recheck (rows, dim, hits, total);
      h = 0;
      for (gsize run = 1; run <= max_run; run++)
        for (gsize q = 0; q < run; q++, h++)
          {
            g_assert_cmpuint (hits[h].i, ==, run % 5);
            g_assert_cmpuint (hits[h].j, ==, want_j[h]);
            float want = lk_dot_canonical (rows + hits[h].i * dim, rows + hits[h].j * dim, dim);
            if (!same_bits (hits[h].cos, want))
              g_error ("%s recheck, dim %" G_GSIZE_FORMAT ", run of %" G_GSIZE_FORMAT
                       ", pair %" G_GSIZE_FORMAT ": %a, canonical %a",
                       kernel->name, dim, run, q, (double) hits[h].cos, (double) want);
          }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (LkKernelId id = LK_KERNEL_PORTABLE; id <= LK_KERNEL_NEON; id++)
    {
      const char *name = lk_kernel_id_to_string (id);
      g_autofree char *dot
          = g_strdup_printf ("/kernels/%s/dot-is-canonical-every-length-1-to-70-and-512", name);
      g_autofree char *tile
          = g_strdup_printf ("/kernels/%s/tile-reports-exactly-the-canonical-pairs", name);
      g_autofree char *per_pair
          = g_strdup_printf ("/kernels/%s/per-pair-tile-reports-exactly-the-canonical-pairs", name);
      g_autofree char *order = g_strdup_printf ("/kernels/%s/one-fused-chain-in-index-order", name);
      g_test_add_data_func (dot, GINT_TO_POINTER (id), check_dot_every_length);
      g_test_add_data_func (tile, GINT_TO_POINTER (id), check_tile_fused);
      g_test_add_data_func (per_pair, GINT_TO_POINTER (id), check_tile_per_pair);
      g_test_add_data_func (order, GINT_TO_POINTER (id), check_order_witnesses);
      g_autofree char *recheck
          = g_strdup_printf ("/kernels/%s/recheck-is-canonical-for-scattered-pairs", name);
      g_test_add_data_func (recheck, GINT_TO_POINTER (id), check_recheck);
      g_autofree char *shared
          = g_strdup_printf ("/kernels/%s/recheck-is-canonical-for-runs-sharing-a-row", name);
      g_test_add_data_func (shared, GINT_TO_POINTER (id), check_recheck_shared_rows);
    }
  g_test_add_func ("/kernels/fastest-is-canonical", test_fastest_is_canonical);
  g_test_add_func ("/kernels/unrolled-dot-matches-naive", test_unrolled_matches_naive);
  g_test_add_func ("/kernels/auto-is-widest-that-runs", test_auto_is_widest_that_runs);
  g_test_add_func ("/kernels/unavailable-kernel-is-an-error", test_unavailable_kernel_is_an_error);
  g_test_add_func ("/kernels/names-round-trip", test_names_round_trip);
  return g_test_run ();
}
