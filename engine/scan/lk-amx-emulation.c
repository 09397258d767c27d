/* lk-amx-emulation.c — Intel AMX's tile operations in portable C
 *
 * Operation for operation the SDM's pseudo-code (lk-amx.h says which and
 * what is left out), on eight tiles of 16 × 64 bytes per thread. Where the
 * silicon faults (#GP for a bad configuration, #UD for a tile that is not
 * configured or shapes that do not agree), the emulation aborts with the
 * reason: the kernel code that runs on it must never do either. Speed is no
 * aim: it exists so that the tests run the int8 tile pass's code on a CPU
 * without AMX, and nothing but the tests runs it.
 */
#include "config.h"

#include "lk-amx.h"

#include <string.h>

typedef struct
{
  gboolean configured;
  guint8 rows[LK_AMX_TILES];
  guint16 colsb[LK_AMX_TILES];
  guint8 data[LK_AMX_TILES][LK_AMX_MAX_ROWS][LK_AMX_BYTES_PER_ROW];
} Tiles;

static _Thread_local Tiles tiles;

static void
release (void)
{
  memset (&tiles, 0, sizeof tiles);
}

void
lk_amx_emu_loadconfig (const LkAmxTileConfig *config)
{
  if (config->palette_id == 0)
    {
      /* Palette 0 is the initial state: no tiles, as after TILERELEASE. */
      release ();
      return;
    }
  if (config->palette_id != 1)
    g_error ("LDTILECFG: palette %u does not exist (#GP)", config->palette_id);
  if (config->start_row != 0)
    g_error ("LDTILECFG: start_row %u is not emulated", config->start_row);
  for (gsize k = 0; k < sizeof config->reserved; k++)
    if (config->reserved[k] != 0)
      g_error ("LDTILECFG: reserved byte %zu is not zero (#GP)", k + 2);
  for (guint t = 0; t < 16; t++)
    {
      if (t >= LK_AMX_TILES)
        {
          if (config->rows[t] != 0 || config->colsb[t] != 0)
            g_error ("LDTILECFG: tile %u does not exist in palette 1 (#GP)", t);
          continue;
        }
      if (config->rows[t] > LK_AMX_MAX_ROWS || config->colsb[t] > LK_AMX_BYTES_PER_ROW)
        g_error ("LDTILECFG: tile %u of %u rows × %u bytes exceeds 16 × 64 (#GP)", t,
                 config->rows[t], config->colsb[t]);
    }
  /* Loading a configuration zeroes every tile. */
  release ();
  tiles.configured = TRUE;
  for (guint t = 0; t < LK_AMX_TILES; t++)
    {
      tiles.rows[t] = config->rows[t];
      tiles.colsb[t] = config->colsb[t];
    }
}

void
lk_amx_emu_release (void)
{
  release ();
}

static void
check_tile (const char *op, guint t)
{
  if (!tiles.configured)
    g_error ("%s: no tile configuration loaded (#UD)", op);
  if (t >= LK_AMX_TILES)
    g_error ("%s: tile %u does not exist (#UD)", op, t);
  if (tiles.rows[t] == 0 || tiles.colsb[t] == 0)
    g_error ("%s: tile %u is not configured (#UD)", op, t);
}

void
lk_amx_emu_zero (guint t)
{
  check_tile ("TILEZERO", t);
  memset (tiles.data[t], 0, sizeof tiles.data[t]);
}

/* write_row_and_zero, then zero_upper_rows, of the SDM. */
void
lk_amx_emu_loadd (guint t, const void *base, gsize stride)
{
  check_tile ("TILELOADD", t);
  memset (tiles.data[t], 0, sizeof tiles.data[t]);
  for (guint r = 0; r < tiles.rows[t]; r++)
    memcpy (tiles.data[t][r], (const guint8 *) base + r * stride, tiles.colsb[t]);
}

void
lk_amx_emu_stored (guint t, void *base, gsize stride)
{
  check_tile ("TILESTORED", t);
  for (guint r = 0; r < tiles.rows[t]; r++)
    memcpy ((guint8 *) base + r * stride, tiles.data[t][r], tiles.colsb[t]);
}

static guint32
dword (guint t, guint r, guint c)
{
  const guint8 *p = tiles.data[t][r] + 4 * c;
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

/* The SDM's TDPBUSD: for m < dst.rows, k < a.colsb / 4, n < dst.colsb / 4,
 * dst[m][n] += Σ_{b<4} ZeroExtend (a[m].dword[k].byte[b]) × SignExtend
 * (b[k].dword[n].byte[b]), modulo 2^32; then the bytes past dst.colsb and
 * the rows past dst.rows are zeroed. */
void
lk_amx_emu_dpbusd (guint dst, guint a, guint b)
{
  check_tile ("TDPBUSD", dst);
  check_tile ("TDPBUSD", a);
  check_tile ("TDPBUSD", b);
  if (dst == a || dst == b || a == b)
    g_error ("TDPBUSD: tiles %u, %u and %u are not three different tiles (#UD)", dst, a, b);
  guint m_rows = tiles.rows[dst], n_cols = tiles.colsb[dst] / 4u, k_words = tiles.colsb[a] / 4u;
  if (tiles.colsb[dst] % 4 != 0 || tiles.colsb[a] % 4 != 0)
    g_error ("TDPBUSD: bytes per row %u and %u are not whole dwords (#UD)", tiles.colsb[dst],
             tiles.colsb[a]);
  if (tiles.rows[a] != m_rows)
    g_error ("TDPBUSD: A has %u rows, C %u (#UD)", tiles.rows[a], m_rows);
  if (tiles.rows[b] != k_words)
    g_error ("TDPBUSD: B has %u rows, A %u dwords a row (#UD)", tiles.rows[b], k_words);
  if (tiles.colsb[b] != tiles.colsb[dst])
    g_error ("TDPBUSD: B has %u bytes a row, C %u (#UD)", tiles.colsb[b], tiles.colsb[dst]);

  for (guint m = 0; m < m_rows; m++)
    {
      guint32 row[LK_AMX_BYTES_PER_ROW / 4];
      for (guint n = 0; n < n_cols; n++)
        row[n] = dword (dst, m, n);
      for (guint k = 0; k < k_words; k++)
        {
          guint32 x = dword (a, m, k);
          for (guint n = 0; n < n_cols; n++)
            {
              guint32 y = dword (b, k, n);
              for (guint byte = 0; byte < 4; byte++)
                row[n] += (guint32) ((gint32) ((x >> (8 * byte)) & 0xffu)
                                     * (gint32) (gint8) (guint8) ((y >> (8 * byte)) & 0xffu));
            }
        }
      memset (tiles.data[dst][m], 0, LK_AMX_BYTES_PER_ROW);
      for (guint n = 0; n < n_cols; n++)
        for (guint byte = 0; byte < 4; byte++)
          tiles.data[dst][m][4 * n + byte] = (guint8) (row[n] >> (8 * byte));
    }
  for (guint m = m_rows; m < LK_AMX_MAX_ROWS; m++)
    memset (tiles.data[dst][m], 0, LK_AMX_BYTES_PER_ROW);
}

void
lk_amx_emu_dpbusd_once (const LkAmxTileConfig *config, gint32 *c, gsize c_stride, const guint8 *a,
                        gsize a_stride, const guint8 *b, gsize b_stride)
{
  lk_amx_emu_loadconfig (config);
  lk_amx_emu_loadd (0, c, c_stride);
  lk_amx_emu_loadd (4, a, a_stride);
  lk_amx_emu_loadd (6, b, b_stride);
  lk_amx_emu_dpbusd (0, 4, 6);
  lk_amx_emu_stored (0, c, c_stride);
  lk_amx_emu_release ();
}
