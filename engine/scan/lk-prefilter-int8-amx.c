/* lk-prefilter-int8-amx.c — the int8 pass on Intel AMX tiles (TDPBUSD)
 *
 * Compiled alone with -mamx-tile -mamx-int8 -mavx512f into its own static
 * library (GCC 11 and Clang 12 know the flags); lk-prefilter.c hands it out
 * only when lk_cpu_features() reports AMX-TILE, AMX-INT8 and AVX-512F —
 * which it does only after the kernel granted the tile data permission
 * (lk-cpu.c) — and the measured choice (lk-tune.h) runs it only where it
 * wins. The code is lk-prefilter-int8-amx.h's with the compiler's tile
 * intrinsics.
 *
 * NEVER RUN ON SILICON: the machines this is developed on have no AMX,
 * so this file's six intrinsics have only been compiled (GCC 12, Clang
 * 14), and no speed of this pass is known. Everything else in it — the
 * repacking, the blocking, the tile shapes, the AVX-512 epilogue — runs in
 * the tests on the emulated tiles (lk-prefilter-int8-amx-emulated-avx512.c).
 * Where AMX exists, tests/test-prefilter.c compares this pass with the
 * portable one tile by tile, and tests/test-amx.c the intrinsics with the
 * emulation on single tiles.
 */
#include "config.h"

#include <immintrin.h>

#define LK_TILE_LOADCONFIG(config)      _tile_loadconfig (config)
#define LK_TILE_RELEASE()               _tile_release ()
#define LK_TILE_LOADD(t, base, stride)  _tile_loadd (t, base, stride)
#define LK_TILE_STORED(t, base, stride) _tile_stored (t, base, stride)
#define LK_TILE_DPBUSD(c, a, b)         _tile_dpbusd (c, a, b)
#define LK_AMX_PASS                     pass_int8_amx

#include "lk-prefilter-int8-amx.h"

void
lk_amx_native_dpbusd_once (const LkAmxTileConfig *config, gint32 *c, gsize c_stride,
                           const guint8 *a, gsize a_stride, const guint8 *b, gsize b_stride)
{
  _tile_loadconfig (config);
  _tile_loadd (0, c, c_stride);
  _tile_loadd (4, a, a_stride);
  _tile_loadd (6, b, b_stride);
  _tile_dpbusd (0, 4, 6);
  _tile_stored (0, c, c_stride);
  _tile_release ();
}

const LkPrefilterPass lk_prefilter_pass_int8_amx = {
  LK_PREFILTER_INT8_AMX,
  "int8-amx",
  LK_CPU_AVX512F | LK_CPU_AMX_TILE | LK_CPU_AMX_INT8,
  pass_int8_amx,
  LK_PREFILTER_FORMAT_INT8,
};
