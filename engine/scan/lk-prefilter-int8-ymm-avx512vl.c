/* lk-prefilter-int8-ymm-avx512vl.c — the AVX-VNNI pass's code with vpdpbusd
 * EVEX-encoded (AVX-512 VNNI + VL)
 *
 * Compiled alone with -mavx2 -mfma -mavx512vl -mavx512vnni. Not a pass the
 * scan chooses (on an AVX-512 VNNI CPU the zmm pass does twice the work an
 * instruction): tests/test-prefilter.c runs it against the portable pass,
 * so that lk-prefilter-int8-ymm.h — the AVX-VNNI pass's code — is proven
 * with the real instruction on a CPU without AVX-VNNI. VEX and EVEX
 * vpdpbusd on ymm are one operation (Intel SDM, VPDPBUSD): only the
 * encoding differs.
 */
#include "config.h"

#define LK_YMM_DPBUSD(acc, u, s) _mm256_dpbusd_epi32 ((acc), (u), (s))
#define LK_YMM_PASS              pass_int8_ymm_avx512vl

#include "lk-prefilter-int8-ymm.h"

const LkPrefilterPass lk_prefilter_pass_int8_ymm_avx512vl = {
  LK_PREFILTER_INT8_AVXVNNI,
  "int8-ymm-avx512vl",
  LK_CPU_AVX2 | LK_CPU_FMA | LK_CPU_AVX512VL | LK_CPU_AVX512_VNNI,
  pass_int8_ymm_avx512vl,
  LK_PREFILTER_FORMAT_INT8,
};
