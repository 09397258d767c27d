/* lk-test-faces.h — reproducible face sets for the scan's tests and benchmark
 *
 * A port of the seed's test fixtures: unit vectors hashed from a seed rather
 * than drawn from an RNG (a failure is reproducible from the test alone),
 * vectors a known cosine away from another, and populations of identities
 * with every face in its own photo. Plus the unpruned, unthreaded, unblocked
 * definition of the answer that every scan is checked against.
 */
#pragma once

#include <math.h>
#include <string.h>

#include "scan/lk-scan.h"

typedef struct
{
  float *embeddings;
  gsize n;
  guint dim;
  float *crop_px;
  guint64 *photo;
  guint8 *gallery;
} TestSet;

static inline void
test_normalise (float *v, guint dim)
{
  float sum = 0;
  for (guint k = 0; k < dim; k++)
    sum += v[k] * v[k];
  float norm = sqrtf (sum);
  for (guint k = 0; k < dim; k++)
    v[k] /= norm;
}

/* A unit vector in a reproducible pseudo-random direction (xorshift64). */
static inline void
test_vector (guint64 seed, guint dim, float *out)
{
  guint64 s = (seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) | 1;
  for (guint k = 0; k < dim; k++)
    {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      out[k] = (float) ((double) (s >> 11) / (double) (G_GUINT64_CONSTANT (1) << 53)) - 0.5f;
    }
  test_normalise (out, dim);
}

/* The obvious sum, one running total in index order. */
static inline float
test_naive_dot (const float *a, const float *b, guint dim)
{
  float sum = 0;
  for (guint k = 0; k < dim; k++)
    sum += a[k] * b[k];
  return sum;
}

static inline double
test_exact_dot (const float *a, const float *b, guint dim)
{
  double sum = 0;
  for (guint k = 0; k < dim; k++)
    sum += (double) a[k] * b[k];
  return sum;
}

/* A unit vector a known cosine away from `base`, in the plane of `other`. */
static inline void
test_near (const float *base, const float *other, float cosine, guint dim, float *out)
{
  g_autofree float *perp = g_new (float, dim);
  float d = test_naive_dot (base, other, dim);

  for (guint k = 0; k < dim; k++)
    perp[k] = other[k] - d * base[k];
  test_normalise (perp, dim);
  float s = sqrtf (MAX (0.0f, 1.0f - cosine * cosine));
  for (guint k = 0; k < dim; k++)
    out[k] = cosine * base[k] + s * perp[k];
  test_normalise (out, dim);
}

static inline TestSet *
test_set_new (gsize n, guint dim)
{
  TestSet *set = g_new0 (TestSet, 1);
  set->n = n;
  set->dim = dim;
  set->embeddings = g_new0 (float, MAX (n, 1) * dim);
  set->crop_px = g_new (float, MAX (n, 1));
  set->photo = g_new (guint64, MAX (n, 1));
  set->gallery = g_new (guint8, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      set->crop_px[i] = 150;
      set->photo[i] = i;
      set->gallery[i] = 1;
    }
  return set;
}

static inline void
test_set_free (TestSet *set)
{
  g_free (set->embeddings);
  g_free (set->crop_px);
  g_free (set->photo);
  g_free (set->gallery);
  g_free (set);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestSet, test_set_free)

/* `groups` identities of `per` faces each, every face in its own photo: the
 * first face of a group is its base vector, the rest sit `tightness` from it. */
static inline TestSet *
test_population (gsize groups, gsize per, float tightness, guint dim)
{
  TestSet *set = test_set_new (groups * per, dim);
  g_autofree float *base = g_new (float, dim);
  g_autofree float *off = g_new (float, dim);

  for (gsize g = 0; g < groups; g++)
    {
      test_vector (g + 1, dim, base);
      test_vector (g + 9999, dim, off);
      for (gsize m = 0; m < per; m++)
        {
          float *row = set->embeddings + (g * per + m) * dim;
          if (m == 0)
            memcpy (row, base, dim * sizeof (float));
          else
            test_near (base, off, tightness, dim, row);
        }
    }
  return set;
}

static inline LkFaces
test_set_faces (const TestSet *set)
{
  return (LkFaces){ set->embeddings, set->n, set->dim, set->crop_px, set->photo, set->gallery };
}

static inline LkCalibration
test_calibration (void)
{
  return (LkCalibration){ 30.0, -30.0 * 0.35, 0.0, 1000, 10000 };
}

/* The unpruned, unthreaded, unblocked definition of the answer. */
static inline GArray *
test_reference (const LkFaces *f, const LkCalibration *cal, double bar)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkPair));

  for (gsize i = 0; i < f->n; i++)
    for (gsize j = i + 1; j < f->n; j++)
      {
        if (f->photo[i] == f->photo[j] || !(f->gallery[i] || f->gallery[j]))
          continue;
        float cos = test_naive_dot (f->embeddings + i * f->dim, f->embeddings + j * f->dim, f->dim);
        double p = lk_scan_probability (cal, cos, MIN (f->crop_px[i], f->crop_px[j]));
        if (p >= bar)
          {
            LkPair pair = { (guint32) i, (guint32) j, (float) p };
            g_array_append_val (out, pair);
          }
      }
  return out;
}

/* How far pair (i, j)'s exact cosine is from its own bar's cosine. */
static inline double
test_distance_to_bar (const LkFaces *f, const LkCalibration *cal, double bar, guint32 i, guint32 j)
{
  double cos = test_exact_dot (f->embeddings + i * f->dim, f->embeddings + j * f->dim, f->dim);
  double size = log2 (MIN (f->crop_px[i], f->crop_px[j]));
  double boundary = (log (bar / (1 - bar)) - cal->b - cal->w_size * size) / cal->a;
  return fabs (cos - boundary);
}

static inline int
test_pair_cmp (const LkPair *a, const LkPair *b)
{
  if (a->i != b->i)
    return a->i < b->i ? -1 : 1;
  if (a->j != b->j)
    return a->j < b->j ? -1 : 1;
  return 0;
}

/* The same (i, j) list, except for pairs whose cosine sits within
 * LK_SCAN_NEAR_BOUNDARY of their bar, where kernels may legitimately
 * disagree — and there must be no more of those than the scan counted. */
static inline void
test_assert_same_pairs (const LkScanResult *got, const GArray *want, const LkFaces *f,
                        const LkCalibration *cal, double bar)
{
  const LkPair *g = (const LkPair *) got->pairs->data;
  const LkPair *w = (const LkPair *) want->data;
  guint a = 0, b = 0;
  guint64 differ = 0;

  while (a < got->pairs->len || b < want->len)
    {
      int c = a == got->pairs->len ? 1 : b == want->len ? -1 : test_pair_cmp (&g[a], &w[b]);
      if (c == 0)
        {
          a++, b++;
          continue;
        }
      const LkPair *odd = c < 0 ? &g[a++] : &w[b++];
      double distance = test_distance_to_bar (f, cal, bar, odd->i, odd->j);
      if (!(distance <= LK_SCAN_NEAR_BOUNDARY))
        g_error ("pair (%u, %u) %s the scan but not the reference, and its cosine is %g "
                 "from its bar (%u vs %u pairs)",
                 odd->i, odd->j, c < 0 ? "is in" : "is missing from", distance, got->pairs->len,
                 want->len);
      differ++;
    }
  g_assert_cmpuint (differ, <=, got->near_boundary);
}
