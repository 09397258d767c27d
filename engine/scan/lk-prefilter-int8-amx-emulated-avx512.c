/* lk-prefilter-int8-amx-emulated-avx512.c — the AMX int8 pass's code on
 * emulated tiles with the native file's AVX-512 epilogue
 *
 * Compiled alone with -mavx512f, as lk-prefilter-int8-amx.c is less the
 * tile flags: the same template, the same AVX-512 report, only the six tile
 * operations emulated (lk-amx-emulation.c). For tests/test-prefilter.c
 * only, which runs it wherever AVX-512F does: on a CPU without AMX every
 * line the native pass compiles but its intrinsics runs here.
 */
#include "config.h"

#define LK_TILE_LOADCONFIG(config)      lk_amx_emu_loadconfig (config)
#define LK_TILE_RELEASE()               lk_amx_emu_release ()
#define LK_TILE_LOADD(t, base, stride)  lk_amx_emu_loadd (t, base, stride)
#define LK_TILE_STORED(t, base, stride) lk_amx_emu_stored (t, base, stride)
#define LK_TILE_DPBUSD(c, a, b)         lk_amx_emu_dpbusd (c, a, b)
#define LK_AMX_PASS                     pass_int8_amx_emulated_avx512

#include "lk-prefilter-int8-amx.h"

const LkPrefilterPass lk_prefilter_pass_int8_amx_emulated_avx512 = {
  LK_PREFILTER_INT8_AMX,         "int8-amx-emulated-avx512", LK_CPU_AVX512F,
  pass_int8_amx_emulated_avx512, LK_PREFILTER_FORMAT_INT8,
};
