/* lk-amx.h — Intel AMX's tile operations, native and emulated
 *
 * The int8 pass on AMX tiles (lk-prefilter-int8-amx.h) is written against
 * six operations — LDTILECFG, TILERELEASE, TILEZERO, TILELOADD, TILESTORED
 * and TDPBUSD — named by macros that each including file points at either the
 * compiler's intrinsics (lk-prefilter-int8-amx.c, built with -mamx-tile
 * -mamx-int8: run only where lk-cpu reports AMX) or the portable emulation
 * declared here (lk-amx-emulation.c), so that the same kernel code runs on a
 * CPU without AMX. The machines this is developed on have none: the
 * emulation is what their tests run, and the native pass has never run on
 * silicon here.
 *
 * The emulation follows the pseudo-code of the Intel SDM (vol. 2, "TDPBSSD/
 * TDPBSUD/TDPBUSD/TDPBUUD", "TILELOADD", "TILESTORED", "LDTILECFG") for
 * palette 1: eight tiles of at most 16 rows × 64 bytes, each configured with
 * its own rows and bytes per row (colsb). A load writes colsb bytes of each
 * configured row and zeroes the rest of the tile; the dot product computes
 * the configured rows and columns and zeroes the rest; the shapes of its
 * three tiles must agree (M, K and N) or the silicon raises #UD, where the
 * emulation aborts naming the mismatch. The state is per thread, as the
 * tiles are. Not emulated: start_row (the restart after a fault; the
 * emulation never faults midway) and palettes other than 0 and 1.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* LDTILECFG's 64-byte operand. */
typedef struct
{
  guint8 palette_id; /* 1: eight tiles of 16 rows × 64 bytes; 0: release */
  guint8 start_row;
  guint8 reserved[14];
  guint16 colsb[16]; /* bytes per row of tile t (tiles 8–15 reserved: 0) */
  guint8 rows[16];
} LkAmxTileConfig;

G_STATIC_ASSERT (sizeof (LkAmxTileConfig) == 64);

#define LK_AMX_TILES         8
#define LK_AMX_MAX_ROWS      16
#define LK_AMX_BYTES_PER_ROW 64

/* The emulation, on this thread's emulated tiles. */
void lk_amx_emu_loadconfig (const LkAmxTileConfig *config);
void lk_amx_emu_release (void);
void lk_amx_emu_zero (guint tile);
void lk_amx_emu_loadd (guint tile, const void *base, gsize stride);
void lk_amx_emu_stored (guint tile, void *base, gsize stride);
/* tile dst += a (unsigned bytes) · b (signed bytes, four-byte groups per
 * column: the "VNNI layout"), each dword modulo 2^32. */
void lk_amx_emu_dpbusd (guint dst, guint a, guint b);

/* One TDPBUSD of `config`'s shapes on tile 0 (C, m × n dwords), 4 (A, m ×
 * k bytes) and 6 (B, k / 4 × n dwords), from and to memory with the given
 * strides: LDTILECFG, three loads, the product, a store, TILERELEASE. The
 * emulated one always exists; the native one
 * (lk_amx_native_dpbusd_once) only where LK_HAVE_PREFILTER_INT8_AMX, and
 * only runs where lk_cpu_features() has LK_CPU_AMX_INT8. For the tests,
 * which compare the two tile for tile. */
void lk_amx_emu_dpbusd_once (const LkAmxTileConfig *config, gint32 *c, gsize c_stride,
                             const guint8 *a, gsize a_stride, const guint8 *b, gsize b_stride);
void lk_amx_native_dpbusd_once (const LkAmxTileConfig *config, gint32 *c, gsize c_stride,
                                const guint8 *a, gsize a_stride, const guint8 *b, gsize b_stride);

G_END_DECLS
