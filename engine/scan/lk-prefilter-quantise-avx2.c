/* lk-prefilter-quantise-avx2.c — the int8 (and int7) rows quantised in AVX2
 *
 * Compiled alone with -mavx2 -ffp-contract=off into its own static library;
 * lk_prefilter_quantiser() hands it out only where lk_cpu_features() has
 * seen AVX2. It returns the bits of the portable loops (lk-prefilter.c,
 * quantise_portable), which stay the path of every other CPU: the portable
 * sums run in four chains, lane l of a dword taking elements 4w + l, and a
 * ymm of four doubles holds exactly those four chains, so each lane adds the
 * same terms in the same order, each term a multiply rounded and then an
 * add rounded. That needs no FMA: the file is built without -mfma, and with
 * -ffp-contract=off so that no -march in the user's CFLAGS can fuse an
 * _mm256_mul_pd into the _mm256_add_pd after it (GCC's default for GNU C is
 * -ffp-contract=fast). The rest is exact either way: a float widened to
 * double, the truncation (vcvttpd2dq, like the C cast, of a positive number
 * below 2^31), the clamp, the integer sums modulo 2^32, and the maximum of
 * |a| (finite rows: the library refuses NaN and infinities, and for those
 * any order of max is the same float).
 *
 * Why: the portable loops are scalar double arithmetic, a cvttsd2si and a
 * byte insert per element; perf put them at ≈ 3.6 % of an 18,143-face scan's
 * samples, all before the scan's threads start. Here a dword is one pass
 * through the vector unit: a load, four multiplies and four adds, one
 * conversion each way, one shuffle for the four bytes: about 3× as fast
 * (`bench-quantise`; docs/benchmarks.md), in L2 as from memory, so the
 * conversions and the adds bound it, not memory. Truncating and clamping in
 * doubles (vroundpd, vmaxpd, vminpd) read the same: the integer steps stay,
 * as the portable loops take them. Not
 * an lk-tune candidate: the same operations, bit for bit, measured 3×
 * faster, and a choice timed at each start would cost more than the ≈ 20
 * ms of CPU a scan could ever save by it.
 */
#include "config.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "lk-prefilter-private.h"

static float
amax_avx2 (const float *row, gsize dim)
{
  const __m256 magnitude = _mm256_castsi256_ps (_mm256_set1_epi32 (0x7fffffff));
  __m256 m0 = _mm256_setzero_ps (), m1 = _mm256_setzero_ps ();
  gsize k = 0;

  for (; k + 16 <= dim; k += 16)
    {
      m0 = _mm256_max_ps (m0, _mm256_and_ps (magnitude, _mm256_loadu_ps (row + k)));
      m1 = _mm256_max_ps (m1, _mm256_and_ps (magnitude, _mm256_loadu_ps (row + k + 8)));
    }
  if (k + 8 <= dim)
    {
      m0 = _mm256_max_ps (m0, _mm256_and_ps (magnitude, _mm256_loadu_ps (row + k)));
      k += 8;
    }
  m0 = _mm256_max_ps (m0, m1);
  __m128 h = _mm_max_ps (_mm256_castps256_ps128 (m0), _mm256_extractf128_ps (m0, 1));
  h = _mm_max_ps (h, _mm_movehl_ps (h, h));
  h = _mm_max_ss (h, _mm_shuffle_ps (h, h, 1));
  float amax = _mm_cvtss_f32 (h);
  for (; k < dim; k++)
    amax = MAX (amax, fabsf (row[k]));
  return amax;
}

/* One dword: four elements a (lane l is element l), their biased bytes
 * stored to *out, the four chains advanced. */
#define LK_QUANTISE_DWORD(a)                                                                       \
  do                                                                                               \
    {                                                                                              \
      /* (gint32) (a * inverse + 128.5) − 128, then CLAMP (q, −m, m) */                        \
      __m256d x = _mm256_add_pd (_mm256_mul_pd (a, inverse4), half_up);                            \
      __m128i q = _mm_sub_epi32 (_mm256_cvttpd_epi32 (x), offset);                                 \
      q = _mm_min_epi32 (_mm_max_epi32 (q, low), high);                                            \
      __m256d dequantised = _mm256_mul_pd (_mm256_cvtepi32_pd (q), s4);                            \
      __m256d e = _mm256_sub_pd (a, dequantised);                                                  \
      sum = _mm_add_epi32 (sum, q);                                                                \
      norm2 = _mm256_add_pd (norm2, _mm256_mul_pd (a, a));                                         \
      quantised2 = _mm256_add_pd (quantised2, _mm256_mul_pd (dequantised, dequantised));           \
      error2 = _mm256_add_pd (error2, _mm256_mul_pd (e, e));                                       \
      /* q + bias is in [0, 255]: byte 4l of lane l to byte l */                                   \
      __m128i bytes = _mm_shuffle_epi8 (_mm_add_epi32 (q, bias4), pick);                           \
      *out = (guint32) _mm_cvtsi128_si32 (bytes);                                                  \
    }                                                                                              \
  while (0)

static void
quantise_avx2 (const float *row, gsize dim, float s, double inverse, gint32 m, gint32 bias,
               guint32 *out, LkPrefilterRowSums *sums)
{
  const __m256d inverse4 = _mm256_set1_pd (inverse), s4 = _mm256_set1_pd ((double) s);
  const __m256d half_up = _mm256_set1_pd (128.5);
  const __m128i offset = _mm_set1_epi32 (128), low = _mm_set1_epi32 (-m), high = _mm_set1_epi32 (m);
  const __m128i bias4 = _mm_set1_epi32 (bias);
  const __m128i pick = _mm_setr_epi8 (0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  __m256d norm2 = _mm256_loadu_pd (sums->norm2), quantised2 = _mm256_loadu_pd (sums->quantised2);
  __m256d error2 = _mm256_loadu_pd (sums->error2);
  __m128i sum = _mm_loadu_si128 ((const __m128i *) sums->sum);
  gsize w = 0;

  for (; 4 * w + 4 <= dim; w++, out += LK_PREFILTER_LANES)
    {
      __m256d a = _mm256_cvtps_pd (_mm_loadu_ps (row + 4 * w));
      LK_QUANTISE_DWORD (a);
    }
  if (4 * w < dim)
    {
      /* The last dword's padding elements as +0: q = 0, a byte `bias`, and
       * each chain adds +0 (its sum is a +0 or positive already), so the
       * bits are the portable loop's, which skips them. */
      float last[4] = { 0 };
      memcpy (last, row + 4 * w, (dim - 4 * w) * sizeof (float));
      __m256d a = _mm256_cvtps_pd (_mm_loadu_ps (last));
      LK_QUANTISE_DWORD (a);
    }
  _mm256_storeu_pd (sums->norm2, norm2);
  _mm256_storeu_pd (sums->quantised2, quantised2);
  _mm256_storeu_pd (sums->error2, error2);
  _mm_storeu_si128 ((__m128i *) sums->sum, sum);
}

const LkPrefilterQuantiser lk_prefilter_quantiser_avx2 = {
  "avx2",
  amax_avx2,
  quantise_avx2,
};
