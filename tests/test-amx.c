/* test-amx — Intel AMX's tile operations: the emulation against the SDM's
 * definition, and the silicon against the emulation where there is any
 *
 * This project's machine (AMD Zen 4) has no AMX: the native comparisons
 * skip there, saying so, and under valgrind (which cannot run tile
 * instructions). What runs everywhere: the emulated TDPBUSD of every shape
 * palette 1 allows — M rows, K bytes, N columns, none a multiple of 16 or 64
 * needed — against a plain triple loop over unsigned × signed bytes in
 * 64-bit integers (wrapped to 32 at the end), loads and stores that honour
 * the strides and leave the bytes past colsb alone, a new configuration
 * zeroing the tiles, and a mismatch of shapes refused as the silicon
 * refuses it (#UD).
 */
#include "config.h"

#include <string.h>

#include "lk-kernels-config.h"
#include "timing/lk-cpu.h"
#include "scan/lk-amx.h"

#if HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

static LkAmxTileConfig
config_for (guint m, guint k_bytes, guint n)
{
  LkAmxTileConfig c = { .palette_id = 1 };

  c.rows[0] = (guint8) m;
  c.colsb[0] = (guint16) (4 * n);
  c.rows[4] = (guint8) m;
  c.colsb[4] = (guint16) k_bytes;
  c.rows[6] = (guint8) (k_bytes / 4);
  c.colsb[6] = (guint16) (4 * n);
  return c;
}

/* C[m][n] + Σ_k A[m][k] (unsigned) × B[k / 4][4 n + k % 4] (signed), in
 * 64-bit integers, wrapped to 32 bits. */
static void
reference (guint m_rows, guint k_bytes, guint n_cols, gint32 *c, gsize c_stride, const guint8 *a,
           gsize a_stride, const guint8 *b, gsize b_stride)
{
  for (guint m = 0; m < m_rows; m++)
    for (guint n = 0; n < n_cols; n++)
      {
        gint32 *cell = (gint32 *) ((guint8 *) c + m * c_stride) + n;
        gint64 sum = *cell;
        for (guint k = 0; k < k_bytes; k++)
          sum += (gint64) a[m * a_stride + k] * (gint8) b[(k / 4) * b_stride + 4 * n + k % 4];
        *cell = (gint32) (guint32) (guint64) sum;
      }
}

static void
fill (GRand *rng, guint8 *p, gsize bytes)
{
  for (gsize k = 0; k < bytes; k++)
    p[k] = (guint8) g_rand_int_range (rng, 0, 256);
}

/* Every shape palette 1 allows, with strides wider than the rows (so that
 * a load that ignored the stride, or read past colsb, would be seen), and
 * extreme bytes (255 × −128 everywhere) so that a sum in too few bits
 * would wrap differently. */
static void
test_emulated_dpbusd_matches_its_definition (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (36);
  enum
  {
    A_STRIDE = 80,
    B_STRIDE = 72,
    C_STRIDE = 96
  };
  guint8 a[16 * A_STRIDE], b[16 * B_STRIDE];
  gint32 c[16 * C_STRIDE / 4], want[16 * C_STRIDE / 4];
  guint shapes = 0;

  for (guint m = 1; m <= 16; m += (m < 3 ? 1 : 5))
    for (guint k = 4; k <= 64; k += (k < 12 ? 4 : 20))
      for (guint n = 1; n <= 16; n += (n < 3 ? 1 : 4))
        for (guint extreme = 0; extreme < 2; extreme++)
          {
            LkAmxTileConfig cfg = config_for (m, k, n);
            if (extreme)
              {
                memset (a, 255, sizeof a);
                memset (b, 0x80, sizeof b);
              }
            else
              {
                fill (rng, a, sizeof a);
                fill (rng, b, sizeof b);
              }
            fill (rng, (guint8 *) c, sizeof c);
            memcpy (want, c, sizeof c);
            reference (m, k, n, want, C_STRIDE, a, A_STRIDE, b, B_STRIDE);
            lk_amx_emu_dpbusd_once (&cfg, c, C_STRIDE, a, A_STRIDE, b, B_STRIDE);
            /* The bytes past each row's 4 n, and the rows past m, are
             * untouched in memory: the store writes colsb bytes of rows
             * 0 … m − 1 only. */
            g_assert_cmpmem (c, sizeof c, want, sizeof want);
            shapes++;
          }
  g_assert_cmpuint (shapes, >, 100);
}

/* A whole tile goes out as it came in; a new configuration zeroes every
 * tile; a tile of 3 rows × 10 bytes loads and stores exactly those bytes
 * at the stride, and nothing else of the memory. */
static void
test_emulated_loads_and_stores_honour_rows_and_colsb (void)
{
  LkAmxTileConfig cfg = { .palette_id = 1 };
  guint8 ones[16 * 64], out[16 * 64];

  memset (ones, 1, sizeof ones);
  cfg.rows[1] = 3;
  cfg.colsb[1] = 10;
  cfg.rows[2] = 16;
  cfg.colsb[2] = 64;
  lk_amx_emu_loadconfig (&cfg);
  lk_amx_emu_loadd (2, ones, 64);
  lk_amx_emu_stored (2, out, 64);
  g_assert_cmpmem (out, sizeof out, ones, sizeof ones);
  /* A new configuration zeroes every tile. */
  lk_amx_emu_loadconfig (&cfg);
  lk_amx_emu_stored (2, out, 64);
  for (gsize k = 0; k < sizeof out; k++)
    g_assert_cmpuint (out[k], ==, 0);
  lk_amx_emu_loadd (1, ones, 64);
  memset (out, 7, sizeof out);
  lk_amx_emu_stored (1, out, 64);
  for (gsize r = 0; r < 16; r++)
    for (gsize k = 0; k < 64; k++)
      g_assert_cmpuint (out[r * 64 + k], ==, r < 3 && k < 10 ? 1 : 7);
  lk_amx_emu_release ();
}

/* Shapes that do not agree are #UD on silicon; the emulation aborts with
 * the mismatch named, so kernel code that would fault cannot pass a test. */
static void
test_emulated_dpbusd_refuses_mismatched_shapes (void)
{
  if (g_test_subprocess ())
    {
      LkAmxTileConfig cfg = config_for (16, 64, 16);
      cfg.rows[6] = 15; /* B must have K / 4 = 16 rows */
      guint8 zero[16 * 64] = { 0 };
      lk_amx_emu_loadconfig (&cfg);
      lk_amx_emu_loadd (4, zero, 64);
      lk_amx_emu_loadd (6, zero, 64);
      lk_amx_emu_dpbusd (0, 4, 6);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*TDPBUSD: B has 15 rows, A 16 dwords a row (#UD)*");
}

/* The silicon against the emulation, single tiles of every shape above:
 * only where the CPU has AMX-INT8 and the kernel granted the tiles. */
static void
test_native_dpbusd_matches_emulation (void)
{
#if LK_HAVE_PREFILTER_INT8_AMX
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("under valgrind, which cannot run AMX tile instructions");
      return;
    }
  /* lk_cpu_features () says what the silicon and the OS have; the tiles
   * are usable only once the kernel granted them to this process. */
  if (!(lk_cpu_amx_permit () & LK_CPU_AMX_INT8))
    {
      g_test_skip_printf ("this CPU (%s) cannot run AMX: %s; the emulation is proven by the "
                          "other tests",
                          lk_cpu_model_name (), lk_cpu_amx_note ());
      return;
    }
  g_autoptr (GRand) rng = g_rand_new_with_seed (3636);
  guint8 a[16 * 80], b[16 * 72];
  gint32 c[16 * 24], want[16 * 24];

  for (guint m = 1; m <= 16; m++)
    for (guint k = 4; k <= 64; k += 4)
      for (guint n = 1; n <= 16; n += 3)
        {
          LkAmxTileConfig cfg = config_for (m, k, n);
          fill (rng, a, sizeof a);
          fill (rng, b, sizeof b);
          fill (rng, (guint8 *) c, sizeof c);
          memcpy (want, c, sizeof c);
          lk_amx_emu_dpbusd_once (&cfg, want, 96, a, 80, b, 72);
          lk_amx_native_dpbusd_once (&cfg, c, 96, a, 80, b, 72);
          g_assert_cmpmem (c, sizeof c, want, sizeof want);
        }
#else
  g_test_skip ("the AMX pass is not built into this program (x86-64 with -mamx-int8 only)");
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/amx/emulated-dpbusd-matches-its-definition",
                   test_emulated_dpbusd_matches_its_definition);
  g_test_add_func ("/amx/emulated-loads-and-stores-honour-rows-and-colsb",
                   test_emulated_loads_and_stores_honour_rows_and_colsb);
  g_test_add_func ("/amx/emulated-dpbusd-refuses-mismatched-shapes",
                   test_emulated_dpbusd_refuses_mismatched_shapes);
  g_test_add_func ("/amx/native-dpbusd-matches-emulation", test_native_dpbusd_matches_emulation);
  return g_test_run ();
}
