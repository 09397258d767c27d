/* lk-sample-private.h — what lk-sample.c shares with its face drawing and tests
 *
 * The random stream is xoshiro256** seeded through SplitMix64 (Vigna's
 * recommendation), written out here rather than GRand because GRand offers no
 * cheap independent streams, and every identity and face draws from its own
 * stream (seed, kind, index): a face looks the same whatever else the library
 * holds and whichever thread draws it.
 */
#pragma once

#include <glib.h>

/* Everything that includes this computes sample numbers: no a·b + c may be
 * fused into an FMA, which rounds once instead of twice and would make the
 * files differ between CPUs that have one and CPUs that do not. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "lk-thumbnail.h"

G_BEGIN_DECLS

typedef struct
{
  guint64 s[4];
} LkSampleRng;

static inline guint64
lk_sample_splitmix64 (guint64 *x)
{
  guint64 z = (*x += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Stream `index` of kind `kind` for `seed`: the three are mixed through
 * SplitMix64 so neighbouring indices give unrelated streams. */
static inline void
lk_sample_rng_init (LkSampleRng *rng, guint64 seed, guint64 kind, guint64 index)
{
  guint64 x = seed;
  x = lk_sample_splitmix64 (&x) ^ (kind * G_GUINT64_CONSTANT (0xd1b54a32d192ed03));
  x = lk_sample_splitmix64 (&x) ^ index;
  for (int k = 0; k < 4; k++)
    rng->s[k] = lk_sample_splitmix64 (&x);
}

static inline guint64
lk_sample_rng_next (LkSampleRng *rng)
{
  guint64 *s = rng->s;
  guint64 r = s[1] * 5;
  r = ((r << 7) | (r >> 57)) * 9;
  guint64 t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return r;
}

/* Uniform in [0, 1), 53 bits. */
static inline double
lk_sample_rng_uniform (LkSampleRng *rng)
{
  return (double) (lk_sample_rng_next (rng) >> 11) * 0x1.0p-53;
}

static inline double
lk_sample_rng_range (LkSampleRng *rng, double lo, double hi)
{
  return lo + (hi - lo) * lk_sample_rng_uniform (rng);
}

/* Uniform in 0 … n − 1 (n ≥ 1); the bias of the multiply-shift is below 2^-32. */
static inline guint
lk_sample_rng_below (LkSampleRng *rng, guint n)
{
  return (guint) (((lk_sample_rng_next (rng) >> 32) * n) >> 32);
}

/* Mean 0, variance 1, in [−2√3, 2√3]: Irwin–Hall of four 32-bit uniforms. The
 * sum is exact in double, so unlike Box–Muller (log, cos) it is the same to
 * the last bit on every libm; its tails are short, which random directions in
 * hundreds of dimensions do not notice. */
static inline double
lk_sample_rng_normal (LkSampleRng *rng)
{
  guint64 a = lk_sample_rng_next (rng);
  guint64 b = lk_sample_rng_next (rng);
  double sum = (double) (a >> 32) + (double) (a & 0xffffffffu) + (double) (b >> 32)
               + (double) (b & 0xffffffffu);
  return (sum * 0x1.0p-32 - 2.0) * 1.7320508075688772;
}

/* Stream kinds. */
enum
{
  LK_SAMPLE_STREAM_LAYOUT = 1, /* sizes, photos, faces */
  LK_SAMPLE_STREAM_SHARED,     /* the shared directions */
  LK_SAMPLE_STREAM_IDENTITY,   /* an identity's centre */
  LK_SAMPLE_STREAM_ERA,        /* an identity's look in one era */
  LK_SAMPLE_STREAM_FACE,       /* one face's embedding */
  LK_SAMPLE_STREAM_LOOK,       /* an identity's drawn appearance */
  LK_SAMPLE_STREAM_POSE,       /* one face's drawn pose and light */
  LK_SAMPLE_STREAM_PHOTO,      /* one photo's background */
};

/* An identity's drawn appearance (lk-sample-face.c). Colours are RGB in 0 … 1,
 * sizes in units of a 96-unit face frame. */
typedef enum
{
  LK_SAMPLE_HAIR_BALD,
  LK_SAMPLE_HAIR_SHORT,
  LK_SAMPLE_HAIR_PART,
  LK_SAMPLE_HAIR_LONG,
  LK_SAMPLE_HAIR_CURLY,
  LK_SAMPLE_HAIR_BUN,
  LK_SAMPLE_HAIR_BOB,
  LK_SAMPLE_HAIR_SPIKY,
  LK_SAMPLE_N_HAIR
} LkSampleHair;

typedef enum
{
  LK_SAMPLE_BEARD_NONE,
  LK_SAMPLE_BEARD_STUBBLE,
  LK_SAMPLE_BEARD_MOUSTACHE,
  LK_SAMPLE_BEARD_FULL,
  LK_SAMPLE_BEARD_GOATEE,
  LK_SAMPLE_N_BEARD
} LkSampleBeard;

typedef enum
{
  LK_SAMPLE_GLASSES_NONE,
  LK_SAMPLE_GLASSES_ROUND,
  LK_SAMPLE_GLASSES_SQUARE,
  LK_SAMPLE_N_GLASSES
} LkSampleGlasses;

typedef struct
{
  gboolean male;
  float skin[3], hair[3], eyes[3], frame[3], background[3], shirt[3];
  LkSampleHair hair_style;
  LkSampleBeard beard;
  LkSampleGlasses glasses;
  double face_a, face_b; /* half width and height of the head */
  double jaw;            /* 0 narrow … 1 square */
  double eye_gap, eye_size, brow, brow_tilt, nose, mouth, lips, part;
  gboolean freckles;
} LkSampleLook;

/* sex 0 or 1, ancestry 0 … 2 (as in the embedding model). */
void lk_sample_look_init (LkSampleLook *look, guint64 seed, guint identity, guint sex,
                          guint ancestry);
/* A look-alike relative: skin, hair and eye colour, head height, eyes, nose. */
void lk_sample_look_inherit (LkSampleLook *look, const LkSampleLook *relative);
/* Draws face `face` of `look` into a square thumbnail. */
void lk_sample_draw_face (LkThumbnail *thumbnail, const LkSampleLook *look, guint64 seed,
                          guint64 face, gboolean low_quality);

G_END_DECLS
