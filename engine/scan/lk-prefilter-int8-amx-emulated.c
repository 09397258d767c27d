/* lk-prefilter-int8-amx-emulated.c — the AMX int8 pass's code on emulated
 * tiles, portable C
 *
 * lk-prefilter-int8-amx.h with the tile operations of lk-amx-emulation.c and
 * the epilogue in C: built on every architecture, never a candidate of the
 * measured choice (it needs no CPU feature, and emulated passes never are)
 * and not in lk_prefilter_passes_compiled(). tests/test-prefilter.c holds
 * it to the portable int8 pass, survivor for survivor and bit for bit, on
 * row counts that are no multiple of 16, dims that are no multiple of 64,
 * and tiles that end inside a panel.
 */
#include "config.h"

#define LK_TILE_LOADCONFIG(config)      lk_amx_emu_loadconfig (config)
#define LK_TILE_RELEASE()               lk_amx_emu_release ()
#define LK_TILE_LOADD(t, base, stride)  lk_amx_emu_loadd (t, base, stride)
#define LK_TILE_STORED(t, base, stride) lk_amx_emu_stored (t, base, stride)
#define LK_TILE_DPBUSD(c, a, b)         lk_amx_emu_dpbusd (c, a, b)
#define LK_AMX_PASS                     pass_int8_amx_emulated

#include "lk-prefilter-int8-amx.h"

const LkPrefilterPass lk_prefilter_pass_int8_amx_emulated = {
  LK_PREFILTER_INT8_AMX, "int8-amx-emulated", 0, pass_int8_amx_emulated, LK_PREFILTER_FORMAT_INT8,
};
