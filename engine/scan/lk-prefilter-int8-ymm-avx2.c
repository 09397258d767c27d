/* lk-prefilter-int8-ymm-avx2.c — the AVX-VNNI pass's code with vpdpbusd
 * emulated exactly in AVX2
 *
 * Compiled alone with -mavx2 -mfma. Not a pass the scan chooses (the
 * emulation costs eight instructions where AVX-VNNI spends one):
 * tests/test-prefilter.c runs it against the portable pass on every AVX2
 * CPU, so that lk-prefilter-int8-ymm.h is proven where neither AVX-VNNI nor
 * AVX-512 VNNI runs.
 *
 * vpdpbusd's lane is acc + u0 s0 + u1 s1 + u2 s2 + u3 s3 (u unsigned bytes,
 * s signed, modulo 2^32). The even bytes, zero- and sign-extended to int16,
 * go through one vpmaddwd (u0 s0 + u2 s2), the odd ones through another:
 * every product is at most 255 × 128 = 32,640 in magnitude and each pair's
 * sum fits an int32 exactly, and the adds wrap as vpdpbusd's does.
 */
#include "config.h"

#include <immintrin.h>

static inline __m256i
dpbusd_avx2 (__m256i acc, __m256i u, __m256i s)
{
  __m256i u_even = _mm256_and_si256 (u, _mm256_set1_epi16 (0x00ff));
  __m256i u_odd = _mm256_srli_epi16 (u, 8);
  __m256i s_even = _mm256_srai_epi16 (_mm256_slli_epi16 (s, 8), 8);
  __m256i s_odd = _mm256_srai_epi16 (s, 8);
  __m256i even = _mm256_madd_epi16 (u_even, s_even);
  __m256i odd = _mm256_madd_epi16 (u_odd, s_odd);
  return _mm256_add_epi32 (acc, _mm256_add_epi32 (even, odd));
}

#define LK_YMM_DPBUSD(acc, u, s) dpbusd_avx2 ((acc), (u), (s))
#define LK_YMM_PASS              pass_int8_ymm_avx2

#include "lk-prefilter-int8-ymm.h"

const LkPrefilterPass lk_prefilter_pass_int8_ymm_avx2 = {
  LK_PREFILTER_INT8_AVXVNNI, "int8-ymm-avx2",          LK_CPU_AVX2 | LK_CPU_FMA,
  pass_int8_ymm_avx2,        LK_PREFILTER_FORMAT_INT8,
};
