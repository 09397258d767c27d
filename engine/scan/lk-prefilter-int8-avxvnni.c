/* lk-prefilter-int8-avxvnni.c — the int8 pass with AVX-VNNI's vpdpbusd (ymm)
 *
 * Compiled alone with -mavx2 -mfma -mavxvnni into its own static library;
 * lk-prefilter.c hands it out only when lk_cpu_features() reports AVX-VNNI
 * (CPUID.(EAX=7,ECX=1):EAX[4]), AVX2 and FMA, and the measured choice
 * (lk-tune.h) runs it only where it wins. The code is lk-prefilter-int8-
 * ymm.h's, with the VEX-encoded instruction. Not run on the machines this is
 * developed on (AVX-512 VNNI, no AVX-VNNI); the same code with vpdpbusd EVEX-encoded, and
 * with an exact AVX2 emulation of it, is compared with the portable pass
 * there (tests/test-prefilter.c).
 */
#include "config.h"

#define LK_YMM_DPBUSD(acc, u, s) _mm256_dpbusd_avx_epi32 ((acc), (u), (s))
#define LK_YMM_PASS              pass_int8_avxvnni

#include "lk-prefilter-int8-ymm.h"

const LkPrefilterPass lk_prefilter_pass_int8_avxvnni = {
  LK_PREFILTER_INT8_AVXVNNI, "int8-avxvnni",           LK_CPU_AVX2 | LK_CPU_FMA | LK_CPU_AVX_VNNI,
  pass_int8_avxvnni,         LK_PREFILTER_FORMAT_INT8,
};
