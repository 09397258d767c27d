/* lk-sample.c — a synthetic photo library with ArcFace-like statistics
 *
 * The clustering is evaluated against this library's labels and the scan is
 * timed on it, so it has to be hard in the ways a real library is hard, and
 * no harder. The model, with the number behind each choice:
 *
 * People. Identity sizes are drawn i.i.d. from a discrete Pareto of tail index
 * 1 truncated at 3 % of the faces (size = ⌊1/u⌋, u uniform in [1/cap, 1)),
 * until the faces are used up. Half the people are seen once, three in four at
 * most three times, and a handful hundreds of times: at 18,143 faces, 2,900
 * people, the biggest 455–514 faces, and 0.80–0.96 million same-person pairs
 * (seeds 1, 2, 3, 7). Truncating rather than clamping avoids a pile of people
 * of exactly the cap's size.
 *
 * Photos. Faces are shuffled and dealt into photos of 1–6 faces (42 %, 24 %,
 * 14 %, 9 %, 6 %, 5 %), never two of one person in a photo (the format's
 * rule). Photos are in time order over 2009–2024; faces are listed photo by
 * photo, as a scanner writes them.
 *
 * Embeddings. An identity's centre is
 *   c = unit (√β·u ± √γs·s + √γa·a[ancestry] + √(1 − β − γs − γa)·z)
 * with u a bias shared by everybody (β = 0.045), s a sex direction (γs = 0.03,
 * + or −), a[] three ancestry directions (γa = 0.03, weights 55/30/15 %) and z
 * the person's own random direction. Two people's centres are then at cosine
 * β ± γs (+ γa if of one ancestry) ± 1/√dim, and two of their faces at that
 * times ρ², which puts the median cross-person cosine at 0.033 (3,000 faces,
 * seed 1) and its spread a little wider than pure noise, as impostor scores
 * are.
 *
 * A face is unit (ρ·c + √(1 − ρ²)·v), v a unit vector orthogonal to c made of
 * the person's look in an era (share σ = 0.3: people change over the years, a
 * big identity has up to four eras of the 16 years, by photo date) and the
 * face's own noise. ρ, the cosine to the centre, is 0.77 ± 0.07 (clamped to
 * 0.55–0.95) for a gallery face: two faces of one person are at ρ₁ρ₂ (+ σ·…
 * within an era), median ≈ 0.65, mostly 0.5–0.8 (36–60°).
 *
 * Low quality. 5 % of faces in single portraits, 3 points more per extra
 * person in the photo, are small (24–72 px), blurred faces at ρ 0.42–0.62
 * (51–65° from their centre, so about half their same-person pairs clear the
 * default bar at cosine 0.423), quality 0.05–0.49, below the gallery bar 0.5.
 * Blur looks alike whoever it blurs: 30 % of their noise lies along one shared
 * direction, so two probes of different people sit near cosine 0.24 (1–99 %:
 * 0.14–0.34, 18,143 faces, seed 7), a few over the bar, while a probe and a
 * stranger's gallery face stay at 0.03 — the reason two probes are never
 * paired.
 *
 * Relatives. One person in 200, plus three pairs among the twelve biggest (a
 * family photographs itself), has a look-alike: the second centre is rotated
 * towards the first to cosine 0.35–0.55, so their faces meet at ≈ 0.2–0.33
 * with a tail that crosses the bar, which is what makes single linkage chain
 * two people into one. The look-alikes are drawn alike too (skin, hair, eyes).
 * Measured with the naive scan at 18,143 faces (seed 7): 761,796 same-person
 * and 3,520 different-person pairs clear the default bar (a = 30, b = −10.5:
 * probability 0.9 at cosine 0.423), 84,764 same-person pairs do not. Centres
 * at 0.30–0.45, as first planned, let only 3 different-person pairs through:
 * no real library is that kind to clustering.
 *
 * Determinism. Every number comes from xoshiro256** streams and only + − × ÷ √
 * touch it (no libm transcendental, whose last bits vary), with contraction of
 * a·b + c into an FMA turned off (lk-sample-private.h), so the files are
 * byte-identical on every platform for a seed.
 */
#include "config.h"

#include "lk-sample.h"
#include "lk-sample-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "lk-library.h"
#include "lk-thumbnail.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
/* clang-format off */
G_DEFINE_QUARK (lk-sample-error-quark, lk_sample_error)
/* clang-format on */
/* clang-format on */

/* Identity sizes: the Pareto's cap as a fraction of the faces. */
#define CAP_FRACTION        0.03
/* Shares of a centre's squared length: shared bias, sex, ancestry. */
#define BIAS                0.045
#define SEX_SHARE           0.03
#define ANCESTRY_SHARE      0.03
#define N_ANCESTRIES        3
/* A face's cosine to its centre. */
#define RHO_MEAN            0.77
#define RHO_SD              0.07
#define RHO_MIN             0.55
#define RHO_MAX             0.95
#define RHO_LOW_MIN         0.42
#define RHO_LOW_MAX         0.62
/* Share of a face's deviation that is its person's look in an era / blur. */
#define ERA_SHARE           0.3
#define BLUR_SHARE          0.3
/* Relatives: one identity in RELATIVE_EVERY, and TOP_RELATIVES pairs among the
 * TOP_FAMILY biggest, at centre cosine RELATIVE_MIN … RELATIVE_MAX. */
#define RELATIVE_EVERY      200
#define TOP_FAMILY          12
#define TOP_RELATIVES       3
#define RELATIVE_MIN        0.35
#define RELATIVE_MAX        0.55
/* Photos: 2009-01-01 and 16 years. */
#define TIME_START          G_GINT64_CONSTANT (1230768000)
#define TIME_SPAN           G_GINT64_CONSTANT (504921600)
#define MAX_FACES_PER_PHOTO 6
/* The dlib model (lk-sample.h), fitted by hand to the percentiles of dlib's
 * ResNet on real photographs (tests/test-sample.c checks them):
 * DLIB_TRAITS directions every face has in some measure, whose share of an
 * identity's centre is DLIB_TRAIT_SHARE ± DLIB_TRAIT_SPREAD of itself (the
 * spread gives the strangers' cosines the long upper tail dlib's have: 8
 * traits at one share put the 99.9th percentile 0.10 above the median, the
 * real one is 0.104); a face's cosine to its centre (gallery: ArcFace's ρ
 * mapped onto DLIB_RHO_MEAN ± DLIB_RHO_SD; blurred faces in DLIB_RHO_LOW_*),
 * and the share of every row along the one shared direction. */
#define DLIB_TRAITS         8
#define DLIB_TRAIT_SHARE    0.62
#define DLIB_TRAIT_SPREAD   0.5
#define DLIB_RHO_MEAN       0.93
#define DLIB_RHO_SD         0.03
#define DLIB_RHO_LOW_MIN    0.78
#define DLIB_RHO_LOW_MAX    0.88
#define DLIB_SHARE          0.805

typedef struct
{
  guint size;
  guint8 sex;      /* 0 or 1 */
  guint8 ancestry; /* 0 … N_ANCESTRIES − 1 */
  guint n_eras;
  gint relative_of; /* the identity this one resembles, or −1 */
  double relative_cos;
} Identity;

typedef struct
{
  guint identity;
  guint photo; /* index into Sample.photos */
  guint era;
  gboolean low;
  double rho;
  double quality;
  double crop_px;
  gint box[4];
} Face;

typedef struct
{
  gint64 width;
  gint64 height;
  gint64 taken; /* unix time */
  guint first_face;
  guint n_faces;
} Photo;

typedef struct
{
  LkSampleOptions options;
  Identity *identities;
  guint n_identities;
  Face *faces; /* in file order */
  Photo *photos;
  guint n_photos;
  double *shared; /* bias, sex, blur, ancestries: (3 + N_ANCESTRIES) × dim */
  float *embeddings;
  char **photo_paths; /* photos[].path, "YYYY/IMG_NNNN.png", n_photos of them */
} Sample;

static void
sample_clear (Sample *sample)
{
  g_free (sample->identities);
  g_free (sample->faces);
  g_free (sample->photos);
  g_free (sample->shared);
  g_free (sample->embeddings);
  g_strfreev (sample->photo_paths);
}

static double
dot (const double *a, const double *b, guint dim)
{
  double sum = 0.0;
  for (guint k = 0; k < dim; k++)
    sum += a[k] * b[k];
  return sum;
}

static void
normalize (double *v, guint dim)
{
  double norm = sqrt (dot (v, v, dim));
  for (guint k = 0; k < dim; k++)
    v[k] /= norm;
}

static void
random_unit (LkSampleRng *rng, double *v, guint dim)
{
  for (guint k = 0; k < dim; k++)
    v[k] = lk_sample_rng_normal (rng);
  normalize (v, dim);
}

/* v ← unit (v − (v·c) c), for unit c. */
static void
orthogonal_unit (double *v, const double *c, guint dim)
{
  double along = dot (v, c, dim);
  for (guint k = 0; k < dim; k++)
    v[k] -= along * c[k];
  normalize (v, dim);
}

static double
clamp (double x, double lo, double hi)
{
  return x < lo ? lo : x > hi ? hi : x;
}

/* Rounded to 1/1000, so the manifest stays readable; floor is exact. */
static double
round3 (double x)
{
  return floor (x * 1000.0 + 0.5) / 1000.0;
}

static void
draw_identities (Sample *sample, LkSampleRng *rng)
{
  gsize n = sample->options.faces;
  double cap = MAX (2.0, CAP_FRACTION * (double) n);
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (guint));

  for (gsize used = 0; used < n;)
    {
      double u = 1.0 / cap + (1.0 - 1.0 / cap) * (1.0 - lk_sample_rng_uniform (rng));
      guint size = (guint) MIN ((gsize) (1.0 / u), n - used);
      g_array_append_val (sizes, size);
      used += size;
    }

  sample->n_identities = sizes->len;
  sample->identities = g_new0 (Identity, sizes->len);
  for (guint k = 0; k < sizes->len; k++)
    {
      Identity *id = &sample->identities[k];
      double a = lk_sample_rng_uniform (rng);
      id->size = g_array_index (sizes, guint, k);
      id->sex = lk_sample_rng_below (rng, 2);
      id->ancestry = a < 0.55 ? 0 : a < 0.85 ? 1 : 2;
      id->n_eras = 1 + (id->size >= 6) + (id->size >= 30) + (id->size >= 120);
      id->relative_of = -1;
    }
  g_array_unref (sizes);
}

static int
compare_size_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const Identity *ids = data;
  guint ka = *(const guint *) a, kb = *(const guint *) b;
  if (ids[ka].size != ids[kb].size)
    return ids[ka].size < ids[kb].size ? 1 : -1;
  return ka < kb ? -1 : ka > kb;
}

static void
make_relative (Sample *sample, LkSampleRng *rng, guint parent, guint child)
{
  Identity *c = &sample->identities[child];
  const Identity *p = &sample->identities[parent];

  c->relative_of = parent;
  gboolean close = sample->options.family == LK_SAMPLE_FAMILY_LOOKALIKES;
  c->relative_cos
      = lk_sample_rng_range (rng, close ? 0.45 : RELATIVE_MIN, close ? 0.65 : RELATIVE_MAX);
  c->ancestry = p->ancestry;
}

/* Disjoint pairs: nobody is both a parent and a child, so a centre is rotated
 * towards a base centre only. */
static void
draw_relatives (Sample *sample, LkSampleRng *rng)
{
  guint m = sample->n_identities;
  g_autofree guint *by_size = g_new (guint, m);
  g_autofree gboolean *taken = g_new0 (gboolean, m);

  for (guint k = 0; k < m; k++)
    by_size[k] = k;
  g_qsort_with_data (by_size, (gint) m, sizeof (guint), compare_size_desc, sample->identities);

  guint top = MIN (m, TOP_FAMILY);
  gboolean lookalikes = sample->options.family == LK_SAMPLE_FAMILY_LOOKALIKES;
  guint top_relatives = lookalikes ? 2 * TOP_RELATIVES : TOP_RELATIVES;
  for (guint pair = 0; pair < top_relatives && 2 * pair + 1 < top; pair++)
    {
      guint a, b;
      do
        a = by_size[lk_sample_rng_below (rng, top)];
      while (taken[a]);
      do
        b = by_size[lk_sample_rng_below (rng, top)];
      while (taken[b] || b == a);
      taken[a] = taken[b] = TRUE;
      make_relative (sample, rng, a, b);
    }

  guint random_pairs = m / (lookalikes ? RELATIVE_EVERY / 10 : RELATIVE_EVERY);
  for (guint pair = 0; pair < random_pairs; pair++)
    {
      guint a = lk_sample_rng_below (rng, m);
      guint b = lk_sample_rng_below (rng, m);
      if (a == b || taken[a] || taken[b])
        continue;
      taken[a] = taken[b] = TRUE;
      make_relative (sample, rng, a, b);
    }
}

static const double photo_size_weights[MAX_FACES_PER_PHOTO]
    = { 0.42, 0.24, 0.14, 0.09, 0.06, 0.05 };
static const double group_size_weights[MAX_FACES_PER_PHOTO]
    = { 0.10, 0.10, 0.15, 0.20, 0.20, 0.25 };

static guint
draw_photo_size (LkSampleRng *rng, LkSampleFamily family)
{
  const double *weights
      = family == LK_SAMPLE_FAMILY_GROUPS ? group_size_weights : photo_size_weights;
  double u = lk_sample_rng_uniform (rng);
  for (guint k = 0; k < MAX_FACES_PER_PHOTO - 1; k++)
    {
      if (u < weights[k])
        return k + 1;
      u -= weights[k];
    }
  return MAX_FACES_PER_PHOTO;
}

/* Deals the shuffled faces into photos; a face whose person is already in the
 * photo is swapped with a later one (looking at most `LOOKAHEAD` ahead, then
 * the photo closes with fewer faces). */
#define LOOKAHEAD 64

static void
deal_photos (Sample *sample, LkSampleRng *rng)
{
  gsize n = sample->options.faces;
  g_autofree guint *queue = g_new (guint, n);
  gsize pos = 0;

  for (guint k = 0; k < sample->n_identities; k++)
    for (guint j = 0; j < sample->identities[k].size; j++)
      queue[pos++] = k;
  for (gsize k = n; k > 1; k--)
    {
      gsize j = lk_sample_rng_below (rng, (guint) k);
      guint t = queue[k - 1];
      queue[k - 1] = queue[j];
      queue[j] = t;
    }

  GArray *photos = g_array_new (FALSE, TRUE, sizeof (Photo));
  sample->faces = g_new0 (Face, n);
  for (pos = 0; pos < n;)
    {
      Photo photo = { 0 };
      guint want = draw_photo_size (rng, sample->options.family);

      photo.first_face = (guint) pos;
      while (photo.n_faces < want && pos < n)
        {
          gsize found = G_MAXSIZE;
          for (gsize q = pos; q < n && q < pos + LOOKAHEAD && found == G_MAXSIZE; q++)
            {
              gboolean clash = FALSE;
              for (gsize f = photo.first_face; f < pos; f++)
                clash |= queue[f] == queue[q];
              if (!clash)
                found = q;
            }
          if (found == G_MAXSIZE)
            break;
          guint t = queue[pos];
          queue[pos] = queue[found];
          queue[found] = t;
          sample->faces[pos].identity = queue[pos];
          sample->faces[pos].photo = photos->len;
          photo.n_faces++;
          pos++;
        }
      g_array_append_val (photos, photo);
    }
  sample->n_photos = photos->len;
  sample->photos = (Photo *) g_array_free (photos, FALSE);
}

/* Photo sizes, dates, face boxes, quality, ρ and era. */
static void
lay_out_photos (Sample *sample, LkSampleRng *rng)
{
  gint64 step = sample->n_photos ? TIME_SPAN / sample->n_photos : 0;

  for (guint p = 0; p < sample->n_photos; p++)
    {
      Photo *photo = &sample->photos[p];
      double kind = lk_sample_rng_uniform (rng);
      guint k = photo->n_faces;

      photo->width = kind < 0.7 ? 4032 : kind < 0.9 ? 3024 : 1600;
      photo->height = kind < 0.7 ? 3024 : kind < 0.9 ? 4032 : 1200;
      photo->taken
          = TIME_START + (gint64) p * step + (gint64) (lk_sample_rng_uniform (rng) * (double) step);

      double t = (double) p / (double) sample->n_photos;
      double side = (double) MIN (photo->width, photo->height);
      for (guint j = 0; j < k; j++)
        {
          Face *face = &sample->faces[photo->first_face + j];
          const Identity *id = &sample->identities[face->identity];
          double s;

          face->low = lk_sample_rng_uniform (rng)
                      < (sample->options.family == LK_SAMPLE_FAMILY_BRIDGES ? 0.25 : 0.05)
                            + 0.03 * (k - 1);
          if (face->low)
            {
              face->rho = lk_sample_rng_range (rng, RHO_LOW_MIN, RHO_LOW_MAX);
              face->quality = 0.05 + 0.44 * (face->rho - RHO_LOW_MIN) / (RHO_LOW_MAX - RHO_LOW_MIN);
              s = lk_sample_rng_range (rng, 24.0, 72.0);
            }
          else
            {
              face->rho = clamp (RHO_MEAN + RHO_SD * lk_sample_rng_normal (rng), RHO_MIN, RHO_MAX);
              face->quality = 0.5 + 0.49 * clamp ((face->rho - 0.58) / 0.34, 0.0, 1.0);
              s = side * lk_sample_rng_range (rng, 0.16, 0.36) / sqrt ((double) k);
            }
          face->quality = round3 (face->quality);
          s = floor (s);
          face->crop_px = s;

          double cx = (double) photo->width * ((double) j + 0.5) / (double) k
                      + lk_sample_rng_range (rng, -0.1, 0.1) * (double) photo->width / (double) k;
          double cy = (double) photo->height * lk_sample_rng_range (rng, 0.3, 0.55);
          face->box[0] = (gint) clamp (floor (cx - s / 2), 0.0, (double) photo->width - s);
          face->box[1] = (gint) clamp (floor (cy - s / 2), 0.0, (double) photo->height - s);
          face->box[2] = face->box[3] = (gint) s;

          face->era = MIN (id->n_eras - 1, (guint) (t * id->n_eras));
        }
    }
}

enum
{
  SHARED_BIAS,
  SHARED_SEX,
  SHARED_BLUR,
  SHARED_ANCESTRY,
  SHARED_DLIB = SHARED_ANCESTRY + N_ANCESTRIES,
  N_SHARED = SHARED_DLIB + DLIB_TRAITS,
};

static void
draw_shared (Sample *sample)
{
  guint dim = sample->options.dim;
  LkSampleRng rng;

  /* The dlib model's directions come after the others, so the ArcFace- and
   * FaceNet-like libraries' draws are those they always were. */
  lk_sample_rng_init (&rng, sample->options.seed, LK_SAMPLE_STREAM_SHARED, 0);
  sample->shared = g_new (double, (gsize) N_SHARED *dim);
  for (guint k = 0; k < N_SHARED; k++)
    random_unit (&rng, sample->shared + (gsize) k * dim, dim);
}

static void
base_centre (const Sample *sample, guint k, double *c)
{
  guint dim = sample->options.dim;
  const Identity *id = &sample->identities[k];
  const double *bias = sample->shared + (gsize) SHARED_BIAS * dim;
  const double *sex = sample->shared + (gsize) SHARED_SEX * dim;
  const double *anc = sample->shared + (gsize) (SHARED_ANCESTRY + id->ancestry) * dim;
  double own = sqrt (1.0 - BIAS - SEX_SHARE - ANCESTRY_SHARE);
  double wb = sqrt (BIAS), ws = (id->sex ? 1.0 : -1.0) * sqrt (SEX_SHARE);
  double wa = sqrt (ANCESTRY_SHARE);
  LkSampleRng rng;

  lk_sample_rng_init (&rng, sample->options.seed, LK_SAMPLE_STREAM_IDENTITY, k);
  random_unit (&rng, c, dim);
  for (guint d = 0; d < dim; d++)
    c[d] = own * c[d] + wb * bias[d] + ws * sex[d] + wa * anc[d];
  normalize (c, dim);
  if (sample->options.model != LK_SAMPLE_MODEL_DLIB)
    return;
  /* dlib: a share of the centre along a few traits everybody has in some
   * measure (lk-sample.h), drawn after the centre so the centre is the
   * same draw as the other models'. */
  double t[DLIB_TRAITS], norm = 0.0;
  for (guint j = 0; j < DLIB_TRAITS; j++)
    {
      t[j] = lk_sample_rng_normal (&rng);
      norm += t[j] * t[j];
    }
  norm = sqrt (norm);
  double share = clamp (
      DLIB_TRAIT_SHARE * (1.0 + DLIB_TRAIT_SPREAD * (2.0 * lk_sample_rng_uniform (&rng) - 1.0)),
      0.0, 0.95);
  double keep = sqrt (1.0 - share), along = sqrt (share);
  for (guint d = 0; d < dim; d++)
    {
      double trait = 0.0;
      for (guint j = 0; j < DLIB_TRAITS; j++)
        trait += t[j] / norm * sample->shared[(gsize) (SHARED_DLIB + j) * dim + d];
      c[d] = keep * c[d] + along * trait;
    }
  normalize (c, dim);
}

static void
centre (const Sample *sample, guint k, double *c, double *scratch)
{
  guint dim = sample->options.dim;
  const Identity *id = &sample->identities[k];

  base_centre (sample, k, c);
  if (id->relative_of < 0)
    return;
  base_centre (sample, (guint) id->relative_of, scratch);
  orthogonal_unit (c, scratch, dim);
  double along = id->relative_cos, across = sqrt (1.0 - along * along);
  for (guint d = 0; d < dim; d++)
    c[d] = along * scratch[d] + across * c[d];
  normalize (c, dim);
}

static void
draw_embeddings (Sample *sample)
{
  gsize n = sample->options.faces;
  guint dim = sample->options.dim;
  guint m = sample->n_identities;
  const double *blur = sample->shared + (gsize) SHARED_BLUR * dim;
  const double *bias = sample->shared + (gsize) SHARED_BIAS * dim;
  gboolean dlib = sample->options.model == LK_SAMPLE_MODEL_DLIB;
  double shared_share = sample->options.model == LK_SAMPLE_MODEL_FACENET ? 0.55
                        : dlib                                           ? DLIB_SHARE
                                                                         : 0.0;
  g_autofree guint *first = g_new0 (guint, m + 1);
  g_autofree guint *members = g_new (guint, n);
  g_autofree double *c = g_new (double, dim);
  g_autofree double *scratch = g_new (double, dim);
  g_autofree double *v = g_new (double, dim);
  g_autofree double *bridge = g_new (double, dim);
  guint max_eras = 0;

  for (gsize f = 0; f < n; f++)
    first[sample->faces[f].identity + 1]++;
  for (guint k = 0; k < m; k++)
    {
      first[k + 1] += first[k];
      max_eras = MAX (max_eras, sample->identities[k].n_eras);
    }
  {
    g_autofree guint *fill = g_memdup2 (first, sizeof (guint) * m);
    for (gsize f = 0; f < n; f++)
      members[fill[sample->faces[f].identity]++] = (guint) f;
  }

  g_autofree double *eras = g_new (double, (gsize) MAX (max_eras, 1) * dim);
  sample->embeddings = g_new (float, n *dim);
  for (guint k = 0; k < m; k++)
    {
      const Identity *id = &sample->identities[k];
      LkSampleRng rng;

      centre (sample, k, c, scratch);
      for (guint e = 0; e < id->n_eras; e++)
        {
          lk_sample_rng_init (&rng, sample->options.seed, LK_SAMPLE_STREAM_ERA,
                              (guint64) k * 8 + e);
          random_unit (&rng, eras + (gsize) e * dim, dim);
        }

      for (guint j = first[k]; j < first[k + 1]; j++)
        {
          guint f = members[j];
          const Face *face = &sample->faces[f];
          const double *era = eras + (gsize) face->era * dim;
          double wb = face->low ? sqrt (BLUR_SHARE) : 0.0;
          double we = sqrt (ERA_SHARE);
          double wn = sqrt (1.0 - ERA_SHARE - (face->low ? BLUR_SHARE : 0.0));

          lk_sample_rng_init (&rng, sample->options.seed, LK_SAMPLE_STREAM_FACE, f);
          random_unit (&rng, v, dim);
          const double *towards = c;
          if (face->low && sample->options.family == LK_SAMPLE_FAMILY_BRIDGES && m > 1)
            {
              /* A bridge: this blurred face's centre is halfway to a stranger's. */
              guint other = (k + 1 + lk_sample_rng_below (&rng, m - 1)) % m;
              centre (sample, other, bridge, scratch);
              for (guint d = 0; d < dim; d++)
                bridge[d] = 0.5 * c[d] + 0.5 * bridge[d];
              normalize (bridge, dim);
              towards = bridge;
            }
          for (guint d = 0; d < dim; d++)
            v[d] = wn * v[d] + we * era[d] + wb * blur[d];
          orthogonal_unit (v, towards, dim);

          double along = face->rho;
          if (dlib)
            along = face->low
                        ? DLIB_RHO_LOW_MIN
                              + (DLIB_RHO_LOW_MAX - DLIB_RHO_LOW_MIN) * (face->rho - RHO_LOW_MIN)
                                    / (RHO_LOW_MAX - RHO_LOW_MIN)
                        : clamp (DLIB_RHO_MEAN + DLIB_RHO_SD * (face->rho - RHO_MEAN) / RHO_SD,
                                 0.75, 0.99);
          double across = sqrt (1.0 - along * along);
          for (guint d = 0; d < dim; d++)
            v[d] = along * towards[d] + across * v[d];
          normalize (v, dim);
          if (shared_share > 0)
            {
              for (guint d = 0; d < dim; d++)
                v[d] = sqrt (shared_share) * bias[d] + sqrt (1.0 - shared_share) * v[d];
              normalize (v, dim);
            }

          float *row = sample->embeddings + (gsize) f * dim;
          for (guint d = 0; d < dim; d++)
            row[d] = (float) v[d];
        }
    }
}

/* photos[].path: the year taken, then the photo's number within it. */
static void
name_photos (Sample *sample)
{
  int year = 0;
  guint in_year = 0;

  sample->photo_paths = g_new0 (char *, sample->n_photos + 1);
  for (guint p = 0; p < sample->n_photos; p++)
    {
      g_autoptr (GDateTime) when = g_date_time_new_from_unix_utc (sample->photos[p].taken);
      if (g_date_time_get_year (when) != year)
        {
          year = g_date_time_get_year (when);
          in_year = 0;
        }
      sample->photo_paths[p] = g_strdup_printf ("%d/IMG_%04u.png", year, ++in_year);
    }
}

static void
sample_generate (Sample *sample, const LkSampleOptions *options)
{
  LkSampleRng rng;

  memset (sample, 0, sizeof *sample);
  sample->options = *options;
  lk_sample_rng_init (&rng, options->seed, LK_SAMPLE_STREAM_LAYOUT, 0);
  draw_identities (sample, &rng);
  draw_relatives (sample, &rng);
  deal_photos (sample, &rng);
  lay_out_photos (sample, &rng);
  draw_shared (sample);
  draw_embeddings (sample);
  name_photos (sample);
}

/* Writing the folder */

static gboolean
check_folder (const char *folder, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) dir = g_dir_open (folder, 0, &local);

  if (dir == NULL)
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_EXISTS,
                   "Cannot write a library into %s: %s", folder, local->message);
      return FALSE;
    }
  if (g_dir_read_name (dir) == NULL)
    return TRUE;

  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (json_parser_load_from_file (parser, manifest, NULL))
    {
      JsonNode *root = json_parser_get_root (parser);
      if (JSON_NODE_HOLDS_OBJECT (root))
        {
          const char *format = json_object_get_string_member_with_default (
              json_node_get_object (root), "format", NULL);
          if (g_strcmp0 (format, "likeness-library") == 0)
            return TRUE;
        }
    }
  g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_EXISTS,
               "%s is not empty and is not a Likeness library (no library.json with "
               "\"format\": \"likeness-library\"); choose an empty or new folder",
               folder);
  return FALSE;
}

static gboolean
write_file (const char *folder, const char *name, const void *data, gsize length, GError **error)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr (GError) local = NULL;

  if (!g_file_set_contents_full (path, data, (gssize) length, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                 &local))
    {
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot write %s: %s", path,
                   local->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
write_embeddings (const Sample *sample, const char *folder, GError **error)
{
  gsize values = sample->options.faces * sample->options.dim;

#if G_BYTE_ORDER == G_BIG_ENDIAN
  g_autofree guint32 *le = g_new (guint32, values);
  memcpy (le, sample->embeddings, values * sizeof (float));
  for (gsize k = 0; k < values; k++)
    le[k] = GUINT32_TO_LE (le[k]);
  return write_file (folder, "embeddings.f32", le, values * sizeof (float), error);
#else
  return write_file (folder, "embeddings.f32", sample->embeddings, values * sizeof (float), error);
#endif
}

static char *
thumbnail_name (gsize face)
{
  return g_strdup_printf ("thumbs/%06" G_GSIZE_FORMAT ".png", face);
}

/* Thumbnails take 2.5 ms of CPU each (1.0 drawing, 1.5 PNG encoding), against
 * 25 µs for a face's embedding, so they are drawn by one worker per core,
 * each taking the next photo from a shared counter and drawing its faces;
 * every face depends only on (seed, face) and every photo only on (seed,
 * photo) and its faces, so the files do not depend on the number of threads.
 *
 * Photos. Every photos[].path is written (options.photos), so the window's
 * face viewer has a photo to show: the photo's faces, drawn as their
 * thumbnails are, pasted at their boxes on a plain background of the photo's
 * own colour, at LK_SAMPLE_PHOTO_SIDE pixels on the long side rather than the
 * manifest's 4032 (the viewer scales the boxes by the ratio, as it does for
 * any export smaller than its original). PHOTO_COST below has the figures.
 *
 * Files are written without the fsync of an atomic replace when they are new
 * (G_FILE_SET_CONTENTS_ONLY_EXISTING): library.json is written last, so a
 * crash leaves no library that names a half-written file, and 18,143 fsyncs
 * would cost more than the drawing. */
typedef struct
{
  const Sample *sample;
  const char *folder;
  const LkSampleLook *looks;
  gint next;   /* atomic: the next photo to draw */
  gint failed; /* atomic: stop */
  gint drawn;  /* atomic: photos done, for the progress */
  GMutex lock;
  GCond ended;   /* a worker has ended */
  guint n_ended; /* under lock */
  GError *error; /* the first error, under lock */
} DrawJob;

static gboolean
write_bytes (const char *folder, const char *name, GBytes *bytes, GError **error)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr (GError) local = NULL;

  if (!g_file_set_contents_full (
          path, g_bytes_get_data (bytes, NULL), (gssize) g_bytes_get_size (bytes),
          G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_ONLY_EXISTING, 0644, &local))
    {
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot write %s: %s", path,
                   local->message);
      return FALSE;
    }
  return TRUE;
}

/* A photo's pixel size: the manifest's, scaled to LK_SAMPLE_PHOTO_SIDE on the
 * long side. */
static void
photo_pixels (const Photo *photo, guint *width, guint *height)
{
  gint64 side = MAX (photo->width, photo->height);

  *width = (guint) MAX (1, photo->width * LK_SAMPLE_PHOTO_SIDE / side);
  *height = (guint) MAX (1, photo->height * LK_SAMPLE_PHOTO_SIDE / side);
}

/* The photo's background: one soft colour, a little darker towards the
 * bottom (a wall, a floor), constant along each row so PNG's Sub filter
 * makes it almost free to store. */
static void
paint_background (LkThumbnail *canvas, guint64 seed, guint photo)
{
  LkSampleRng rng;
  double base[3];

  lk_sample_rng_init (&rng, seed, LK_SAMPLE_STREAM_PHOTO, photo);
  for (int ch = 0; ch < 3; ch++)
    base[ch] = lk_sample_rng_range (&rng, 0.55, 0.9);
  for (guint y = 0; y < canvas->height; y++)
    {
      guint8 *row = canvas->pixels + (gsize) y * canvas->stride;
      double shade = 1.0 - 0.25 * (double) y / (double) canvas->height;
      guint8 rgb[3];

      for (int ch = 0; ch < 3; ch++)
        rgb[ch] = (guint8) floor (base[ch] * shade * 255.0 + 0.5);
      for (guint x = 0; x < canvas->width; x++)
        {
          memcpy (row + (gsize) x * 4, rgb, 3);
          row[(gsize) x * 4 + 3] = 255;
        }
    }
}

/* Pastes `face` into the rectangle (x0, y0, w, h) of `canvas` with an
 * area-weighted (box) filter in integers: destination pixel i covers source
 * [i·S/w, (i+1)·S/w), and with every length multiplied by w the overlaps are
 * whole numbers, so the result is exact and the same on every platform. */
static void
paste (LkThumbnail *canvas, const LkThumbnail *face, guint x0, guint y0, guint w, guint h)
{
  guint sw = face->width, sh = face->height;

  for (guint j = 0; j < h && y0 + j < canvas->height; j++)
    {
      guint8 *out = canvas->pixels + (gsize) (y0 + j) * canvas->stride;
      guint64 ty0 = (guint64) j * sh, ty1 = (guint64) (j + 1) * sh; /* in units of 1/h */
      for (guint i = 0; i < w && x0 + i < canvas->width; i++)
        {
          guint64 tx0 = (guint64) i * sw, tx1 = (guint64) (i + 1) * sw; /* units of 1/w */
          guint64 sum[3] = { 0, 0, 0 };

          for (guint sy = (guint) (ty0 / h); sy < sh && (guint64) sy * h < ty1; sy++)
            {
              guint64 wy = MIN ((guint64) (sy + 1) * h, ty1) - MAX ((guint64) sy * h, ty0);
              const guint8 *in = face->pixels + (gsize) sy * face->stride;
              for (guint sx = (guint) (tx0 / w); sx < sw && (guint64) sx * w < tx1; sx++)
                {
                  guint64 wx = MIN ((guint64) (sx + 1) * w, tx1) - MAX ((guint64) sx * w, tx0);
                  for (int ch = 0; ch < 3; ch++)
                    sum[ch] += wx * wy * in[(gsize) sx * 4 + ch];
                }
            }
          /* The weights add up to sw · sh (each axis's overlaps to the source length). */
          guint64 total = (guint64) sw * sh;
          for (int ch = 0; ch < 3; ch++)
            out[(gsize) (x0 + i) * 4 + ch] = (guint8) ((sum[ch] + total / 2) / total);
        }
    }
}

static gboolean
draw_photo (DrawJob *job, LkThumbnail *thumbnail, guint p, GError **error)
{
  const Sample *sample = job->sample;
  const Photo *photo = &sample->photos[p];
  g_autoptr (LkThumbnail) canvas = NULL;
  guint pw, ph;

  if (sample->options.photos)
    {
      photo_pixels (photo, &pw, &ph);
      canvas = lk_thumbnail_new (pw, ph);
      paint_background (canvas, sample->options.seed, p);
    }
  for (guint k = 0; k < photo->n_faces; k++)
    {
      gsize f = photo->first_face + k;
      const Face *face = &sample->faces[f];

      lk_sample_draw_face (thumbnail, &job->looks[face->identity], sample->options.seed, f,
                           face->low);
      if (sample->options.thumbnails)
        {
          g_autofree char *name = thumbnail_name (f);
          g_autoptr (GBytes) png = lk_thumbnail_encode (thumbnail, error);
          if (png == NULL || !write_bytes (job->folder, name, png, error))
            return FALSE;
        }
      if (canvas != NULL)
        {
          /* Box corners in photo pixels, scaled: x · pw / width, exact in integers. */
          guint x0 = (guint) ((gint64) face->box[0] * pw / photo->width);
          guint y0 = (guint) ((gint64) face->box[1] * ph / photo->height);
          guint x1 = (guint) ((gint64) (face->box[0] + face->box[2]) * pw / photo->width);
          guint y1 = (guint) ((gint64) (face->box[1] + face->box[3]) * ph / photo->height);
          paste (canvas, thumbnail, x0, y0, MAX (x1, x0 + 1) - x0, MAX (y1, y0 + 1) - y0);
        }
    }
  if (canvas != NULL)
    {
      g_autoptr (GBytes) png = lk_thumbnail_encode_opaque (canvas, error);
      if (png == NULL || !write_bytes (job->folder, sample->photo_paths[p], png, error))
        return FALSE;
    }
  return TRUE;
}

static gpointer
draw_worker (gpointer data)
{
  DrawJob *job = data;
  g_autoptr (LkThumbnail) thumbnail
      = lk_thumbnail_new (LK_SAMPLE_THUMBNAIL_SIDE, LK_SAMPLE_THUMBNAIL_SIDE);

  while (!g_atomic_int_get (&job->failed))
    {
      guint p = (guint) g_atomic_int_add (&job->next, 1);
      GError *error = NULL;

      if (p >= job->sample->n_photos)
        break;
      if (!draw_photo (job, thumbnail, p, &error))
        {
          g_mutex_lock (&job->lock);
          if (job->error == NULL)
            job->error = error;
          else
            g_error_free (error);
          g_mutex_unlock (&job->lock);
          g_atomic_int_set (&job->failed, 1);
        }
      g_atomic_int_inc (&job->drawn);
    }
  g_mutex_lock (&job->lock);
  job->n_ended++;
  g_cond_signal (&job->ended);
  g_mutex_unlock (&job->lock);
  return NULL;
}

static gboolean
make_folder (const char *folder, const char *name, GError **error)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);

  if (g_mkdir_with_parents (path, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot create %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* The thumbnails and the photos (whichever the options ask for). */
static gboolean
draw_faces (const Sample *sample, const char *folder, GError **error)
{
  guint m = sample->n_identities;
  g_autofree LkSampleLook *looks = g_new (LkSampleLook, m);
  guint n_threads = CLAMP (g_get_num_processors (), 1, 16);
  g_autofree GThread **threads = g_new (GThread *, n_threads);
  DrawJob job = { sample, folder, looks };

  for (guint k = 0; k < m; k++)
    lk_sample_look_init (&looks[k], sample->options.seed, k, sample->identities[k].sex,
                         sample->identities[k].ancestry);
  for (guint k = 0; k < m; k++)
    if (sample->identities[k].relative_of >= 0)
      lk_sample_look_inherit (&looks[k], &looks[sample->identities[k].relative_of]);

  if (sample->options.thumbnails && !make_folder (folder, "thumbs", error))
    return FALSE;
  /* One folder per year: the photos are in time order, so a year's first
   * photo is the one whose folder differs from the previous photo's. */
  for (guint p = 0; sample->options.photos && p < sample->n_photos; p++)
    {
      g_autofree char *year = g_path_get_dirname (sample->photo_paths[p]);
      g_autofree char *before
          = p > 0 ? g_path_get_dirname (sample->photo_paths[p - 1]) : g_strdup ("");
      if (strcmp (year, before) != 0 && !make_folder (folder, year, error))
        return FALSE;
    }

  g_mutex_init (&job.lock);
  g_cond_init (&job.ended);
  for (guint t = 0; t < n_threads; t++)
    threads[t] = g_thread_new ("lk-sample-faces", draw_worker, &job);
  /* Drawing is most of the time (20,000 faces: most of a minute, too long to
   * be silent): the progress, from this thread, four times a second. */
  LkSampleProgress progress = sample->options.progress;
  g_mutex_lock (&job.lock);
  while (job.n_ended < n_threads)
    {
      gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 4;
      if (!g_cond_wait_until (&job.ended, &job.lock, until) && progress != NULL)
        {
          g_mutex_unlock (&job.lock);
          progress (MIN ((guint) g_atomic_int_get (&job.drawn), sample->n_photos), sample->n_photos,
                    sample->options.progress_data);
          g_mutex_lock (&job.lock);
        }
    }
  g_mutex_unlock (&job.lock);
  for (guint t = 0; t < n_threads; t++)
    g_thread_join (threads[t]);
  g_cond_clear (&job.ended);
  g_mutex_clear (&job.lock);
  if (job.error == NULL && progress != NULL)
    progress (sample->n_photos, sample->n_photos, sample->options.progress_data);
  if (job.error != NULL)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  return TRUE;
}

static void
build_manifest (JsonBuilder *b, const Sample *sample)
{
  const LkSampleOptions *o = &sample->options;
  LkCalibration cal = LK_CALIBRATION_DEFAULT;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "likeness-library");
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, LK_LIBRARY_VERSION);

  json_builder_set_member_name (b, "embeddings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, "embeddings.f32");
  json_builder_set_member_name (b, "dim");
  json_builder_add_int_value (b, o->dim);
  json_builder_set_member_name (b, "count");
  json_builder_add_int_value (b, (gint64) o->faces);
  json_builder_set_member_name (b, "normalized");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "calibration");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "a");
  json_builder_add_double_value (b, cal.a);
  json_builder_set_member_name (b, "b");
  json_builder_add_double_value (b, cal.b);
  json_builder_set_member_name (b, "w_size");
  json_builder_add_double_value (b, cal.w_size);
  json_builder_set_member_name (b, "positive_pairs");
  json_builder_add_int_value (b, cal.positive_pairs);
  json_builder_set_member_name (b, "negative_pairs");
  json_builder_add_int_value (b, cal.negative_pairs);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "min_probability");
  json_builder_add_double_value (b, 0.9);
  json_builder_set_member_name (b, "min_gallery_quality");
  json_builder_add_double_value (b, 0.5);

  /* Unknown to the format, ignored by readers: how to make this again. */
  json_builder_set_member_name (b, "generator");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "program");
  json_builder_add_string_value (b, "likeness-cli make-sample " PACKAGE_VERSION);
  json_builder_set_member_name (b, "seed");
  json_builder_add_int_value (b, (gint64) o->seed);
  if (o->family != LK_SAMPLE_FAMILY_PERSONAL)
    {
      static const char *const families[] = { "personal", "lookalikes", "bridges", "groups" };
      json_builder_set_member_name (b, "family");
      json_builder_add_string_value (b, families[o->family]);
    }
  if (o->model != LK_SAMPLE_MODEL_ARCFACE)
    {
      json_builder_set_member_name (b, "model");
      json_builder_add_string_value (b, o->model == LK_SAMPLE_MODEL_FACENET ? "facenet" : "dlib");
    }
  json_builder_end_object (b);

  json_builder_set_member_name (b, "photos");
  json_builder_begin_array (b);
  for (guint p = 0; p < sample->n_photos; p++)
    {
      const Photo *photo = &sample->photos[p];
      g_autoptr (GDateTime) when = g_date_time_new_from_unix_utc (photo->taken);
      g_autofree char *taken = g_date_time_format (when, "%Y-%m-%dT%H:%M:%SZ");

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_int_value (b, p + 1);
      json_builder_set_member_name (b, "path");
      json_builder_add_string_value (b, sample->photo_paths[p]);
      json_builder_set_member_name (b, "width");
      json_builder_add_int_value (b, photo->width);
      json_builder_set_member_name (b, "height");
      json_builder_add_int_value (b, photo->height);
      json_builder_set_member_name (b, "taken");
      json_builder_add_string_value (b, taken);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "faces");
  json_builder_begin_array (b);
  for (gsize f = 0; f < o->faces; f++)
    {
      const Face *face = &sample->faces[f];
      g_autofree char *label = g_strdup_printf ("p%05u", face->identity);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "photo");
      json_builder_add_int_value (b, face->photo + 1);
      json_builder_set_member_name (b, "crop_px");
      json_builder_add_double_value (b, face->crop_px);
      json_builder_set_member_name (b, "quality");
      json_builder_add_double_value (b, face->quality);
      if (o->thumbnails)
        {
          g_autofree char *thumb = thumbnail_name (f);
          json_builder_set_member_name (b, "thumbnail");
          json_builder_add_string_value (b, thumb);
        }
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      for (int k = 0; k < 4; k++)
        json_builder_add_int_value (b, face->box[k]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "label");
      json_builder_add_string_value (b, label);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static gboolean
write_manifest (const Sample *sample, const char *folder, GError **error)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  gsize length;

  build_manifest (builder, sample);
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  g_autofree char *text = json_generator_to_data (generator, &length);
  return write_file (folder, "library.json", text, length, error);
}

/* A library written again, smaller or without thumbnails, must not keep the
 * old thumbnails it no longer names. Only our own file names are touched. */
static gboolean
remove_stale_thumbnails (const Sample *sample, const char *folder, GError **error)
{
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  g_autoptr (GDir) dir = g_dir_open (thumbs, 0, NULL);
  const char *name;

  if (dir == NULL)
    return TRUE;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *end;
      guint64 index;

      if (strlen (name) != 10 || !g_str_has_suffix (name, ".png") || !g_ascii_isdigit (name[0]))
        continue;
      index = g_ascii_strtoull (name, &end, 10);
      if (end != name + 6)
        continue;
      if (sample->options.thumbnails && index < sample->options.faces)
        continue;
      g_autofree char *path = g_build_filename (thumbs, name, NULL);
      if (g_unlink (path) != 0)
        {
          int saved = errno;
          g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot remove %s: %s", path,
                       g_strerror (saved));
          return FALSE;
        }
    }
  return TRUE;
}

/* Likewise the photos it no longer names (or all, without photos): only our
 * own names, YYYY/IMG_N….png, are touched, and a year folder left empty goes. */
static gboolean
remove_stale_photos (const Sample *sample, const char *folder, GError **error)
{
  g_autoptr (GHashTable) keep = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GDir) dir = g_dir_open (folder, 0, NULL);
  const char *year;

  if (dir == NULL)
    return TRUE;
  for (guint p = 0; sample->options.photos && p < sample->n_photos; p++)
    g_hash_table_add (keep, sample->photo_paths[p]);
  while ((year = g_dir_read_name (dir)) != NULL)
    {
      if (strlen (year) != 4 || strspn (year, "0123456789") != 4)
        continue;
      g_autofree char *year_path = g_build_filename (folder, year, NULL);
      g_autoptr (GDir) photos = g_dir_open (year_path, 0, NULL);
      const char *name;

      while (photos != NULL && (name = g_dir_read_name (photos)) != NULL)
        {
          gsize length = strlen (name);
          if (length <= strlen ("IMG_.png") || !g_str_has_prefix (name, "IMG_")
              || !g_str_has_suffix (name, ".png")
              || strspn (name + 4, "0123456789") != length - strlen ("IMG_.png"))
            continue;
          g_autofree char *relative = g_strdup_printf ("%s/%s", year, name);
          if (g_hash_table_contains (keep, relative))
            continue;
          g_autofree char *path = g_build_filename (year_path, name, NULL);
          if (g_unlink (path) != 0)
            {
              int saved = errno;
              g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot remove %s: %s", path,
                           g_strerror (saved));
              return FALSE;
            }
        }
      g_rmdir (year_path); /* only when empty; a folder holding anything else stays */
    }
  return TRUE;
}

gboolean
lk_sample_write (const char *folder, const LkSampleOptions *options, GError **error)
{
  g_return_val_if_fail (folder != NULL, FALSE);
  g_return_val_if_fail (options != NULL, FALSE);

  if (options->faces > LK_SAMPLE_MAX_FACES)
    {
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_INVALID,
                   "A sample holds at most %d faces, not %" G_GSIZE_FORMAT, LK_SAMPLE_MAX_FACES,
                   options->faces);
      return FALSE;
    }
  if (options->dim < 16 || options->dim > LK_LIBRARY_MAX_DIM)
    {
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_INVALID,
                   "The embedding dimension must be 16 … %d (below 16 random directions are not "
                   "near-orthogonal), not %u",
                   LK_LIBRARY_MAX_DIM, options->dim);
      return FALSE;
    }
  if (!check_folder (folder, error))
    return FALSE;
  if (g_mkdir_with_parents (folder, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_SAMPLE_ERROR, LK_SAMPLE_ERROR_IO, "Cannot create %s: %s", folder,
                   g_strerror (saved));
      return FALSE;
    }

  Sample sample;
  sample_generate (&sample, options);

  gboolean ok
      = remove_stale_thumbnails (&sample, folder, error)
        && write_embeddings (&sample, folder, error) && remove_stale_photos (&sample, folder, error)
        && (!(options->thumbnails || options->photos) || draw_faces (&sample, folder, error))
        && write_manifest (&sample, folder, error);
  sample_clear (&sample);
  return ok;
}

char *
lk_sample_default_dir (void)
{
  const char *dir = g_getenv ("LIKENESS_SAMPLE_DIR");

  if (dir != NULL && *dir != '\0')
    return g_strdup (dir);
  return g_build_filename (PKGDATADIR, "sample", NULL);
}
