/* lk-gates.c — the speed gates: each a race between two of Likeness's own
 * implementations of one computation, with a contract
 *
 * A speed claim in a comment is a claim nobody re-checks. Each design
 * decision of the scan that exists for speed — SIMD kernels, column tiles,
 * worker threads, the cheap cosine rejection — is here as a race against the
 * simpler thing it replaced, so a change that quietly undoes the reason for
 * it fails the release 'speed' suite instead of surviving in a comment.
 *
 * How every cell is shaped, and why:
 *  - Parity first. Both arms run once, untimed, and must compute the same
 *    answer (the same pairs, bit for bit; dot products within
 *    DOT_PARITY_TOLERANCE) before anything is timed: a fast arm that is wrong
 *    wins every race.
 *  - The arm is a batch, never a single small call. The harness costs one
 *    indirect call and an asm barrier per arm call (lk_harness_call_ns,
 *    ~1–2 ns here); a dot-product arm does DOT_ROWS dot products per call and
 *    a scan arm a whole scan, so that cost is far below 1% of either arm and
 *    the CLI prints the exact fraction beside each cell.
 *  - Fixtures are synthetic and seeded: the same faces on every machine, with
 *    identities clustered tightly enough that the default calibration's bar
 *    (cos >= 0.4234) keeps a few thousand pairs, as a real library does —
 *    a parity check over zero pairs would prove nothing.
 *  - The clock is the process's CPU time (lk-timing.c says why: on this
 *    loaded machine the wall clock's resolution is ten times worse), except
 *    for the thread speedup, whose claim is elapsed time.
 *  - The contract is stated per cell with its reason. Each mechanism exists
 *    only to be faster, so its cell is `faster`: one that is not has no
 *    reason to stay. The thread pool's CPU cost is `not_slower`, since both
 *    arms do the same work by construction. Moving a cell between the two is
 *    a contract decision with a stated reason, never a way to make red go
 *    green in the commit that measured it.
 *
 * Sizes: SCAN_FACES = 2048 faces of 512 floats are 4 MiB of embeddings —
 * eight times a common 512 KiB L2, so an untiled scan streams each
 * row's columns from L3 while a 64-column tile (128 KiB) stays in L2 — and a
 * single-thread scan of it takes tens of milliseconds, so 15 repetitions of
 * both arms take a few seconds, not minutes.
 */
#include "config.h"

#include "lk-gates.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timing/lk-cpu.h"
#include "lk-kernels.h"
#include "library/lk-library.h"
#include "lk-peak.h"
#include "lk-prefilter.h"
#include "lk-scan.h"
#include "lk-tune.h"

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-gates-error-quark, lk_gates_error)
/* clang-format on */

/* The embedding width every race runs at: what the library format carries
 * in practice (LIBRARY-FORMAT.md). */
#define DIM 512

/* Dot products per dot-arm call against distinct rows of a bank: 64 rows of
 * 512 floats are 128 KiB, the size of the scan's own column tile, so the
 * race sees the tile's working set (in L2, not L1); and 64 dot products
 * (~2 µs with AVX2) dwarf the harness's ~2 ns per call. */
#define DOT_ROWS 64

/* How far a SIMD dot may sit from the portable one on unit vectors: the
 * scan's own LK_SCAN_NEAR_BOUNDARY, the last-bits difference it allows
 * between kernels. */
#define DOT_PARITY_TOLERANCE 1e-5

#define SCAN_FACES         2048
/* Faces per synthetic identity, and the noise that separates them: members
 * of one identity sit at cos ≈ 1 / (1 + 0.9²) ≈ 0.55 from each other, over
 * the default bar's 0.4234; strangers at cos ≈ 0 ± 0.044. */
#define FACES_PER_IDENTITY 8
#define IDENTITY_NOISE     0.9
#define FIXTURE_SEED       0x11CE

typedef enum
{
  RACE_DOT,
  RACE_SCAN,
  RACE_TILE,
} RaceKind;

/* One arm's scan configuration. */
typedef struct
{
  gboolean all_cores; /* else one thread */
  gboolean untiled;
  gboolean no_prefilter;
  /* 0: none. Scan arms name their kernel and first pass, so a race never
   * depends on what lk-tune remembered: the widest kernel unless `kernel`. */
  LkPrefilterId prefilter;
  LkKernelId kernel;
  gboolean tuned; /* the pair lk_tune_measure() picks on this very fixture */
} ScanConfig;

typedef struct
{
  RaceKind kind;
  LkClock clock;
  LkKernelId kernel; /* RACE_DOT: raced against the portable kernel; RACE_TILE: its own */
  ScanConfig a, b;   /* RACE_SCAN */
  gboolean needs_cores;
  gboolean needs_idle_cores; /* a wall-clock claim about using every core */
  gboolean fast_dot;         /* RACE_TILE: the opponent loops over the kernel's dot_fast instead */
  gsize faces;               /* RACE_SCAN: the fixture's size; 0: SCAN_FACES */
  /* RACE_SCAN: a first pass's claim. Where it loses AND lk-tune does not
   * choose it on the same fixture, the product never runs it here: the cell
   * is skipped with the measured reason instead of failing on a choice the
   * product does not make. Chosen and losing is a loss. */
  gboolean unless_not_chosen;
} Race;

/* ---- the catalogue ------------------------------------------------------ */

static const char DOT_REASON[]
    = "faster: a SIMD kernel exists only to beat the portable one; one that does not is "
      "dead weight in the dispatch";

static const Race race_avx2 = { RACE_DOT, LK_CLOCK_CPU, LK_KERNEL_AVX2 };
static const Race race_avx512 = { RACE_DOT, LK_CLOCK_CPU, LK_KERNEL_AVX512 };
static const Race race_neon = { RACE_DOT, LK_CLOCK_CPU, LK_KERNEL_NEON };

static const LkGateCell dot_cells[] = {
  { "avx2", "avx2", "portable", LK_CONTRACT_FASTER, 2000, DOT_REASON, &race_avx2 },
  { "avx512", "avx512", "portable", LK_CONTRACT_FASTER, 2000, DOT_REASON, &race_avx512 },
  { "neon", "neon", "portable", LK_CONTRACT_FASTER, 2000, DOT_REASON, &race_neon },
};

/* What "untiled" means since the kernels pack: column_tile = n, so a tile of
 * a whole block's rows × every later column would overflow the hit buffer
 * and the scan hands the kernel one row at a time (lk-scan.c, scan_block) —
 * the seed's row walk. For a packing kernel that row walk re-packs every
 * column for every single row and fills one row of a 6-row micro-tile, so
 * the cell now guards the row block as much as the column tile: a change
 * that handed the kernel single rows again would fail it. */
static const Race race_tiling = { RACE_SCAN, LK_CLOCK_CPU, .a = { 0 }, .b = { .untiled = TRUE } };

static const LkGateCell tiling_cells[] = {
  { "2048-faces", "tiled", "untiled", LK_CONTRACT_FASTER, 1,
    "faster: the tile exists to pack 64 columns once for a block of rows instead of "
    "streaming (and packing) every row's columns from L3; it must beat the row walk it replaced",
    &race_tiling },
};

/* The claim is elapsed time, so it is measured on the wall clock, and that
 * needs idle cores: on a busy 2-core machine it read median_ratio 0.98 with
 * resolution 0.50 — a measurement of the neighbours, not of the pool, whose
 * last block waits behind other processes' time slices. The seed's rule applies:
 * take the confound away rather than model it (dividing by a separately
 * sampled "headroom" gave false greens there). So the cell runs only when the
 * one-minute getloadavg() figure leaves the cores idle, and says so when it does
 * not; it is skipped, never passed.
 *
 * No cell claims the pool costs no CPU time beyond the resolution. It is not
 * a property of the code: two threads on SMT siblings, or on cores whose
 * neighbours thrash the shared cache, each do the same work in more CPU
 * time. A gate that fails on the machine rather than the program is removed,
 * not widened.
 *
 * 4,096 faces, not SCAN_FACES. With AVX-512 (~10 ms for one thread at 2,048
 * faces) the pool's fixed costs leave little to win, and a half-second race
 * can sit wholly inside one stall of a virtual machine's second core (a
 * guest that reports no steal time, which the quiet watch below cannot
 * see). 4,096 faces are 4× the work: a margin the claim can stand on (about
 * 1.5×), and a race long enough to outlast a stall. */
static const Race race_threads_wall
    = { RACE_SCAN,    LK_CLOCK_WALL,       .a = { .all_cores = TRUE },
        .b = { 0 },   .needs_cores = TRUE, .needs_idle_cores = TRUE,
        .faces = 4096 };

static const LkGateCell thread_cells[] = {
  { "speedup", "all-cores", "one-thread", LK_CONTRACT_FASTER, 1,
    "faster: on idle cores the fanned-out scan must finish sooner than one thread, or the "
    "pool is pure overhead",
    &race_threads_wall },
};

static const Race race_prefilter
    = { RACE_SCAN, LK_CLOCK_CPU, .a = { 0 }, .b = { .no_prefilter = TRUE } };

static const LkGateCell prefilter_cells[] = {
  { "2048-faces", "cheap-rejection", "exact-every-pair", LK_CONTRACT_FASTER, 1,
    "faster: one compare against the loosest cosine replaces the sigmoid for the >99% of "
    "pairs that cannot clear the bar; it must beat checking every pair exactly",
    &race_prefilter },
};

/* A first pass exists only to make the scan faster than float32 alone, and
 * only a native pass can: the emulations are many times slower and never
 * raced. Raced on FIRST_PASS_FACES faces, the size from which "auto" measures
 * (LK_TUNE_SCAN_ABOVE): on 2,048 faces the bf16 pass read 0.92–0.95
 * where the 18,143-face scan it is for ran 1.25× faster with it
 * — the small scan timed conversion and re-checks, not the pass.
 * A pass the CPU lacks is skipped; one that loses here and that "auto"
 * therefore does not choose is skipped with the measured figures. */
#define FIRST_PASS_FACES LK_TUNE_SCAN_ABOVE

static const Race race_bf16 = { RACE_SCAN,
                                LK_CLOCK_CPU,
                                .a = { .prefilter = LK_PREFILTER_BF16 },
                                .b = { .prefilter = LK_PREFILTER_OFF },
                                .faces = FIRST_PASS_FACES,
                                .unless_not_chosen = TRUE };
static const Race race_int16 = { RACE_SCAN,
                                 LK_CLOCK_CPU,
                                 .a = { .prefilter = LK_PREFILTER_INT16 },
                                 .b = { .prefilter = LK_PREFILTER_OFF },
                                 .faces = FIRST_PASS_FACES,
                                 .unless_not_chosen = TRUE };
/* The AVX2-only route: the avx2 kernel with the int16 pass against the avx2
 * kernel alone — the only float32 an AVX2-only CPU has — whatever "auto"
 * picks on the CPU running the gate (with AVX-512 it picks int8).
 * Its 6 × 16 register blocking made the route 1.56× OpenBLAS SGEMM where
 * float32 alone read 1.16× (lk-prefilter-int16-avx2.c); this cell keeps it
 * ahead of the kernel it exists to beat. */
static const Race race_int16_avx2_route
    = { RACE_SCAN, LK_CLOCK_CPU, .a = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_INT16 },
        .b = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_OFF },
        .faces = FIRST_PASS_FACES };
/* The int7 pass (lk-prefilter-int7-avx2.c): vpmaddubsw with int16 partial
 * sums, for the same AVX2-only route — against the avx2 kernel alone, and
 * against the route with the int16 pass it was written to beat (on
 * 18,143 faces, `bench-scan --avx2-only`: see lk-prefilter-int7-avx2.c). */
static const Race race_int7_avx2_route
    = { RACE_SCAN, LK_CLOCK_CPU, .a = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_INT7 },
        .b = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_OFF },
        .faces = FIRST_PASS_FACES };
static const Race race_int7_over_int16
    = { RACE_SCAN, LK_CLOCK_CPU, .a = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_INT7 },
        .b = { .kernel = LK_KERNEL_AVX2, .prefilter = LK_PREFILTER_INT16 },
        .faces = FIRST_PASS_FACES };
static const Race race_int8 = { RACE_SCAN,
                                LK_CLOCK_CPU,
                                .a = { .prefilter = LK_PREFILTER_INT8 },
                                .b = { .prefilter = LK_PREFILTER_OFF },
                                .faces = FIRST_PASS_FACES,
                                .unless_not_chosen = TRUE };

static const Race race_int8_avxvnni = { RACE_SCAN,
                                        LK_CLOCK_CPU,
                                        .a = { .prefilter = LK_PREFILTER_INT8_AVXVNNI },
                                        .b = { .prefilter = LK_PREFILTER_OFF },
                                        .faces = FIRST_PASS_FACES,
                                        .unless_not_chosen = TRUE };

/* Never judged on the machines this is developed on (no AMX): the pass has never run
 * on silicon here, so this cell states the contract it must meet where it
 * does, judged only where the measured choice took it. */
static const Race race_int8_amx = { RACE_SCAN,
                                    LK_CLOCK_CPU,
                                    .a = { .prefilter = LK_PREFILTER_INT8_AMX },
                                    .b = { .prefilter = LK_PREFILTER_OFF },
                                    .faces = FIRST_PASS_FACES,
                                    .unless_not_chosen = TRUE };

static const char FIRST_PASS_REASON[]
    = "faster: a first pass answers the pairs far below the bar at a lower precision and hands "
      "the rest to the float32 kernel; if that is not faster than float32 alone on a scan of "
      "the size that uses it, it has no reason to run";

static const LkGateCell first_pass_cells[] = {
  { "bf16-avx512", "bf16-first-pass", "float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_bf16 },
  { "int16-avx2", "int16-first-pass", "float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_int16 },
  { "int16-avx2-route", "avx2+int16", "avx2-float32-alone", LK_CONTRACT_FASTER, 1,
    FIRST_PASS_REASON, &race_int16_avx2_route },
  { "int7-avx2-route", "avx2+int7", "avx2-float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_int7_avx2_route },
  { "int7-avx2-over-int16", "avx2+int7", "avx2+int16", LK_CONTRACT_FASTER, 1,
    "faster: the int7 pass spends 2.25 multiply instructions per 64 multiply-adds where the "
    "int16 pass spends 4; if the AVX2-only route is not faster with it, it has no reason to "
    "exist",
    &race_int7_over_int16 },
  { "int8-avx512vnni", "int8-first-pass", "float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_int8 },
  { "int8-avxvnni", "int8-first-pass", "float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_int8_avxvnni },
  { "int8-amx", "int8-first-pass", "float32-alone", LK_CONTRACT_FASTER, 1, FIRST_PASS_REASON,
    &race_int8_amx },
};

/* "auto" is the measured choice: on the same FIRST_PASS_FACES-face fixture
 * it must be not slower than any other candidate lk-tune races here. The
 * portable kernel is no candidate where a SIMD kernel runs (one call of it
 * there takes ~6 s at this size; tile-fused races it). */
#define AUTO_RACE(k, p)                                                                            \
  {                                                                                                \
    RACE_SCAN, LK_CLOCK_CPU, .a = { .tuned = TRUE }, .b = { .kernel = (k), .prefilter = (p) },     \
                             .faces = FIRST_PASS_FACES                                             \
  }
static const Race race_auto[] = {
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_OFF),
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_BF16),
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_INT16),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_OFF),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_BF16),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_INT16),
  AUTO_RACE (LK_KERNEL_NEON, LK_PREFILTER_OFF),
  AUTO_RACE (LK_KERNEL_PORTABLE, LK_PREFILTER_OFF),
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_INT8),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_INT8),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_INT8_AVXVNNI),
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_INT7),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_INT7),
  AUTO_RACE (LK_KERNEL_AVX512, LK_PREFILTER_INT8_AMX),
  AUTO_RACE (LK_KERNEL_AVX2, LK_PREFILTER_INT8_AMX),
};

static const char AUTO_REASON[]
    = "not_slower: auto runs the candidate its own race measured fastest here; any candidate "
      "that beats it beyond the resolution means the race or its workload is wrong";

static const LkGateCell auto_cells[] = {
  { "avx512", "auto", "avx512", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON, &race_auto[0] },
  { "avx512+bf16-avx512", "auto", "avx512+bf16", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[1] },
  { "avx512+int16-avx2", "auto", "avx512+int16", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[2] },
  { "avx2", "auto", "avx2", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON, &race_auto[3] },
  { "avx2+bf16-avx512", "auto", "avx2+bf16", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[4] },
  { "avx2+int16-avx2", "auto", "avx2+int16", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[5] },
  { "neon", "auto", "neon", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON, &race_auto[6] },
  { "portable", "auto", "portable", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON, &race_auto[7] },
  { "avx512+int8-avx512vnni", "auto", "avx512+int8", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[8] },
  { "avx2+int8-avx512vnni", "auto", "avx2+int8", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[9] },
  { "avx2+int8-avxvnni", "auto", "avx2+int8-avxvnni", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[10] },
  { "avx512+int7-avx2", "auto", "avx512+int7", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[11] },
  { "avx2+int7-avx2", "auto", "avx2+int7", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON, &race_auto[12] },
  { "avx512+int8-amx", "auto", "avx512+int8-amx", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[13] },
  { "avx2+int8-amx", "auto", "avx2+int8-amx", LK_CONTRACT_NOT_SLOWER, 1, AUTO_REASON,
    &race_auto[14] },
};

/* The register-blocked tile against the per-pair loop over the canonical dot
 * it replaced, inside one kernel: the same ISA, the same canonical bits (the
 * parity check compares every hit's cosine to the bit), the same tiles of the
 * scan's shape over the upper triangle of TILE_FACES faces. The per-pair
 * loop is the honest baseline of a canonical scan: one pair's chain is
 * sequential, so it runs at the FMA's latency, not its throughput — which is
 * exactly what register blocking exists to escape. */
static const Race race_tile_portable = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_PORTABLE };
static const Race race_tile_avx2 = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_AVX2 };
static const Race race_tile_avx512 = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_AVX512 };
static const Race race_tile_neon = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_NEON };

/* The same tile against the per-pair loop over the kernel's fastest
 * per-pair dot (dot_fast: the seed's several-lane kernel, which sums in
 * another order and so is not canonical): the honest opponent for "is
 * register blocking faster", not only "is it faster than a latency-bound
 * chain". Parity here is the same pairs, cosines within 1e-5. */
static const Race race_tile_portable_fast
    = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_PORTABLE, .fast_dot = TRUE };
static const Race race_tile_avx2_fast
    = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_AVX2, .fast_dot = TRUE };
static const Race race_tile_avx512_fast
    = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_AVX512, .fast_dot = TRUE };
static const Race race_tile_neon_fast
    = { RACE_TILE, LK_CLOCK_CPU, LK_KERNEL_NEON, .fast_dot = TRUE };

static const char TILE_REASON[]
    = "faster: the register-blocked tile exists to beat the per-pair loop of the same kernel "
      "at the same canonical answer; one that does not is complexity for nothing";

static const LkGateCell tile_cells[] = {
  { "portable", "fused", "per-pair", LK_CONTRACT_FASTER, 1, TILE_REASON, &race_tile_portable },
  { "avx2", "fused", "per-pair", LK_CONTRACT_FASTER, 1, TILE_REASON, &race_tile_avx2 },
  { "avx512", "fused", "per-pair", LK_CONTRACT_FASTER, 1, TILE_REASON, &race_tile_avx512 },
  { "neon", "fused", "per-pair", LK_CONTRACT_FASTER, 1, TILE_REASON, &race_tile_neon },
  { "portable-fast-dot", "fused", "per-pair-fast-dot", LK_CONTRACT_FASTER, 1, TILE_REASON,
    &race_tile_portable_fast },
  { "avx2-fast-dot", "fused", "per-pair-fast-dot", LK_CONTRACT_FASTER, 1, TILE_REASON,
    &race_tile_avx2_fast },
  { "avx512-fast-dot", "fused", "per-pair-fast-dot", LK_CONTRACT_FASTER, 1, TILE_REASON,
    &race_tile_avx512_fast },
  { "neon-fast-dot", "fused", "per-pair-fast-dot", LK_CONTRACT_FASTER, 1, TILE_REASON,
    &race_tile_neon_fast },
};

static const LkGate gates[] = {
  { "dot-512d",
    "each SIMD dot kernel against the portable one: 64 dot products of 512-d rows "
    "per call, one query against a 128 KiB bank",
    dot_cells, G_N_ELEMENTS (dot_cells) },
  { "scan-tiling",
    "the scan with 64-column tiles against one walking whole rows: 2048 faces, "
    "one thread, widest kernel",
    tiling_cells, G_N_ELEMENTS (tiling_cells) },
  { "scan-threads",
    "the scan on every core against one thread: 4096 faces, widest kernel, "
    "wall clock, on idle cores only",
    thread_cells, G_N_ELEMENTS (thread_cells) },
  { "scan-prefilter",
    "the scan with the cheap cosine rejection against the exact check of "
    "every pair: 2048 faces, one thread, widest kernel",
    prefilter_cells, G_N_ELEMENTS (prefilter_cells) },
  { "scan-first-pass",
    "the scan with each native first pass (bf16 on AVX-512 BF16, int16 on "
    "AVX2, int8 on AVX-512 VNNI) against float32 alone: 8192 faces, one thread, widest kernel",
    first_pass_cells, G_N_ELEMENTS (first_pass_cells) },
  { "auto",
    "the measured choice of kernel and first pass against every other candidate that "
    "runs here: 8192 faces, one thread",
    auto_cells, G_N_ELEMENTS (auto_cells) },
  { "tile-fused",
    "each kernel's register-blocked tile against its per-pair loop over the "
    "canonical dot, and over its fastest (several-lane) dot: 768 faces of 512-d "
    "in the scan's tiles, one thread",
    tile_cells, G_N_ELEMENTS (tile_cells) },
};

const LkGate *
lk_gates (guint *n_gates)
{
  *n_gates = G_N_ELEMENTS (gates);
  return gates;
}

const LkGate *
lk_gates_find (const char *name)
{
  for (guint k = 0; k < G_N_ELEMENTS (gates); k++)
    if (g_str_equal (gates[k].name, name))
      return &gates[k];
  return NULL;
}

char *
lk_gate_cell_unavailable (const LkGateCell *cell)
{
  const Race *race = cell->impl;
  g_autoptr (GError) error = NULL;

  if ((race->kind == RACE_DOT || race->kind == RACE_TILE)
      && lk_kernel_get (race->kernel, &error) == NULL)
    return g_strdup (error->message);
  const LkPrefilterPass *pass;
  if (race->kind == RACE_SCAN
      && (!lk_prefilter_pass_get (race->a.prefilter, &pass, &error)
          || !lk_prefilter_pass_get (race->b.prefilter, &pass, &error)))
    return g_strdup (error->message);
  if (race->kind == RACE_SCAN && race->b.kernel != LK_KERNEL_AUTO)
    {
      const LkKernel *k = lk_kernel_get (race->b.kernel, &error);
      if (k == NULL)
        return g_strdup (error->message);
      if (k->needs == 0 && lk_kernel_get (LK_KERNEL_AUTO, NULL)->needs != 0)
        return g_strdup ("The portable kernel is no candidate of auto where a SIMD kernel runs "
                         "(lk_tune_candidates); tile-fused races it");
    }
  if (race->needs_cores && lk_cpu_cores () < 2)
    return g_strdup ("This machine has one core: there is no parallel scan to race");
  double load;
  if (race->needs_idle_cores && getloadavg (&load, 1) == 1 && load >= lk_cpu_cores ())
    {
      char text[G_ASCII_DTOSTR_BUF_SIZE];
      return g_strdup_printf ("This machine is busy (load average %s over the last minute on "
                              "%u cores): a wall-clock speedup can only be measured on idle "
                              "cores",
                              g_ascii_formatd (text, sizeof text, "%.2f", load), lk_cpu_cores ());
    }
  return NULL;
}

/* ---- fixtures ----------------------------------------------------------- */

static double
gaussian (GRand *rand)
{
  /* Box–Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
  double u = 1.0 - g_rand_double (rand), v = g_rand_double (rand);
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

static void
normalise (float *row)
{
  double norm = 0.0;
  for (guint d = 0; d < DIM; d++)
    norm += (double) row[d] * row[d];
  norm = sqrt (norm);
  for (guint d = 0; d < DIM; d++)
    row[d] = (float) (row[d] / norm);
}

/* `n` unit rows; consecutive runs of FACES_PER_IDENTITY rows around one
 * random centre when `identities`, otherwise independent. */
static float *
make_rows (gsize n, gboolean identities, GRand *rand)
{
  float *rows = g_new (float, n *DIM);
  float centre[DIM];

  for (gsize i = 0; i < n; i++)
    {
      float *row = rows + i * DIM;
      if (identities && i % FACES_PER_IDENTITY == 0)
        {
          for (guint d = 0; d < DIM; d++)
            centre[d] = (float) gaussian (rand);
          normalise (centre);
        }
      for (guint d = 0; d < DIM; d++)
        {
          double noise = gaussian (rand) / sqrt (DIM);
          row[d] = (float) (identities ? centre[d] + IDENTITY_NOISE * noise : noise);
        }
      normalise (row);
    }
  return rows;
}

typedef struct
{
  LkFaces faces;
  float *embeddings;
  float *crop_px;
  guint64 *photo;
  guint8 *gallery;
  LkCalibration calibration;
  double min_probability;
} ScanFixture;

static void
scan_fixture_free (ScanFixture *fx)
{
  g_free (fx->embeddings);
  g_free (fx->crop_px);
  g_free (fx->photo);
  g_free (fx->gallery);
  g_free (fx);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ScanFixture, scan_fixture_free)

/* A small library's worth of faces: identities of FACES_PER_IDENTITY, two
 * faces per photo (so the same-photo rule has work to do), every fifth face
 * a probe, crops from 80 to 279 px. */
static ScanFixture *
scan_fixture_new (gsize n)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (FIXTURE_SEED);
  ScanFixture *fx = g_new0 (ScanFixture, 1);

  fx->embeddings = make_rows (n, TRUE, rand);
  fx->crop_px = g_new (float, n);
  fx->photo = g_new (guint64, n);
  fx->gallery = g_new (guint8, n);
  for (gsize i = 0; i < n; i++)
    {
      fx->crop_px[i] = 80.0f + (float) ((i * 37) % 200);
      fx->photo[i] = i / 2;
      fx->gallery[i] = i % 5 != 4;
    }
  fx->faces = (LkFaces){ fx->embeddings, n, DIM, fx->crop_px, fx->photo, fx->gallery };
  fx->calibration = LK_CALIBRATION_DEFAULT;
  fx->min_probability = 0.9;
  return fx;
}

/* ---- the dot race ------------------------------------------------------- */

typedef struct
{
  LkDotFunc dot;
  const float *query;
  const float *bank;
} DotArm;

static double
dot_arm (double nudge, gpointer data)
{
  const DotArm *arm = data;
  double sum = nudge;

  for (guint r = 0; r < DOT_ROWS; r++)
    sum += arm->dot (arm->query, arm->bank + r * DIM, DIM);
  return sum;
}

static LkPairedTiming *
measure_dot (const LkGateCell *cell, const Race *race, guint reps, guint64 iterations,
             const LkGateRunOptions *options, GCancellable *cancellable, GError **error)
{
  const LkKernel *portable = lk_kernel_get (LK_KERNEL_PORTABLE, error);
  const LkKernel *challenger = portable ? lk_kernel_get (race->kernel, error) : NULL;
  if (challenger == NULL)
    return NULL;

  g_autoptr (GRand) rand = g_rand_new_with_seed (FIXTURE_SEED);
  g_autofree float *bank = make_rows (DOT_ROWS + 1, FALSE, rand);
  const float *query = bank + DOT_ROWS * DIM;

  for (guint r = 0; r < DOT_ROWS; r++)
    {
      float want = portable->dot_fast (query, bank + r * DIM, DIM);
      float got = challenger->dot_fast (query, bank + r * DIM, DIM);
      if (!(fabsf (got - want) <= DOT_PARITY_TOLERANCE))
        {
          g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_PARITY,
                       "The %s dot kernel disagrees with the portable one on row %u of the "
                       "%u-d bank: %.9g against %.9g (tolerance %g); a race between them "
                       "would time a wrong answer",
                       challenger->name, r, DIM, got, want, DOT_PARITY_TOLERANCE);
          return NULL;
        }
    }

  DotArm a = { challenger->dot_fast, query, bank };
  DotArm b = { portable->dot_fast, query, bank };
  return lk_paired_interleaved_full (reps, iterations, options->seed, race->clock, dot_arm, &a,
                                     dot_arm, &b, options->on_rep, options->on_rep_data,
                                     cancellable, error);
}

/* ---- the scan races ----------------------------------------------------- */

typedef struct
{
  const ScanFixture *fx;
  LkScanOptions options;
} ScanArm;

static void
scan_arm_init (ScanArm *arm, const ScanFixture *fx, const ScanConfig *config,
               const LkTuneChoice *tuned)
{
  *arm = (ScanArm){ fx };
  arm->options.kernel = config->kernel != LK_KERNEL_AUTO ? config->kernel
                                                         : lk_kernel_get (LK_KERNEL_AUTO, NULL)->id;
  arm->options.prefilter
      = config->prefilter != LK_PREFILTER_AUTO ? config->prefilter : LK_PREFILTER_OFF;
  if (config->tuned)
    {
      arm->options.kernel = tuned->kernel;
      arm->options.prefilter = tuned->prefilter;
    }
  arm->options.threads = config->all_cores ? lk_cpu_cores () : 1;
  arm->options.column_tile = config->untiled ? fx->faces.n : 0;
  arm->options.no_prefilter = config->no_prefilter;
}

/* The kernel bar a scan of the fixture hands its kernel (lk-scan.c). */
static float
fixture_tau (const ScanFixture *fx)
{
  double tau
      = lk_scan_loosest_cosine (fx->crop_px, fx->faces.n, &fx->calibration, fx->min_probability);
  return isinf (tau) ? -INFINITY
                     : nextafterf ((float) (tau - 2 * LK_SCAN_NEAR_BOUNDARY), -INFINITY);
}

LkTuneChoice *
lk_gates_tune (gsize n)
{
  g_autoptr (ScanFixture) fx = scan_fixture_new (MAX (n, (gsize) 2));
  return lk_tune_measure (&fx->faces, fixture_tau (fx));
}

static LkScanResult *
scan_arm_run (const ScanArm *arm, GError **error)
{
  return lk_scan (&arm->fx->faces, &arm->fx->calibration, arm->fx->min_probability, &arm->options,
                  NULL, error);
}

/* The parity check guarantees a scan that ran once runs again; a failure
 * here anyway (memory) makes the checksum NaN, which the harness refuses. */
static double
scan_arm (double nudge, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) result = scan_arm_run (data, &error);

  if (result == NULL)
    {
      g_warning ("A timed scan failed: %s", error->message);
      return NAN;
    }
  return nudge + result->pairs->len;
}

static gboolean
same_pairs (const LkGateCell *cell, const LkScanResult *a, const LkScanResult *b, GError **error)
{
  guint n = MIN (a->pairs->len, b->pairs->len);

  if (a->pairs->len == 0)
    {
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_PARITY,
                   "The %s scan found no pair in the fixture, so parity would prove nothing",
                   cell->a_label);
      return FALSE;
    }
  for (guint k = 0; k <= n; k++)
    {
      if (k == n)
        {
          if (a->pairs->len == b->pairs->len)
            return TRUE;
          break;
        }
      const LkPair *x = &g_array_index (a->pairs, LkPair, k);
      const LkPair *y = &g_array_index (b->pairs, LkPair, k);
      if (x->i != y->i || x->j != y->j
          || memcmp (&x->probability, &y->probability, sizeof (float)) != 0)
        {
          g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_PARITY,
                       "The %s and %s scans disagree at pair %u: (%u, %u, p=%.9g) against "
                       "(%u, %u, p=%.9g); a race between them would time a wrong answer",
                       cell->a_label, cell->b_label, k, x->i, x->j, x->probability, y->i, y->j,
                       y->probability);
          return FALSE;
        }
    }
  g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_PARITY,
               "The %s scan found %u pairs and the %s scan %u; a race between them would time "
               "a wrong answer",
               cell->a_label, a->pairs->len, cell->b_label, b->pairs->len);
  return FALSE;
}

static LkPairedTiming *
measure_scan (const LkGateCell *cell, const Race *race, guint reps, guint64 iterations,
              const LkGateRunOptions *options, GCancellable *cancellable, GError **error)
{
  g_autoptr (ScanFixture) fx = scan_fixture_new (options->faces ? options->faces
                                                 : race->faces  ? race->faces
                                                                : SCAN_FACES);
  ScanArm a, b;
  g_autoptr (GError) local = NULL;

  g_autoptr (LkTuneChoice) tuned = NULL;
  if (race->a.tuned || race->unless_not_chosen)
    tuned = lk_tune_measure (&fx->faces, fixture_tau (fx));
  scan_arm_init (&a, fx, &race->a, tuned);
  scan_arm_init (&b, fx, &race->b, tuned);
  if (race->a.tuned && a.options.kernel == b.options.kernel
      && a.options.prefilter == b.options.prefilter)
    {
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE,
                   "%s is auto's own choice here (%s), so there is nothing to race", cell->b_label,
                   tuned->reason);
      return NULL;
    }
  g_autoptr (LkScanResult) ra = scan_arm_run (&a, &local);
  g_autoptr (LkScanResult) rb = ra ? scan_arm_run (&b, &local) : NULL;
  if (rb == NULL)
    {
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_FAILED, "The %s scan failed: %s",
                   ra ? cell->b_label : cell->a_label, local->message);
      return NULL;
    }
  if (!same_pairs (cell, ra, rb, error))
    return NULL;
  if (race->a.all_cores && ra->threads < 2)
    {
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE,
                   "The %s scan ran on %u thread, so there is no parallel scan to race",
                   cell->a_label, ra->threads);
      return NULL;
    }

  LkPairedTiming *timing = lk_paired_interleaved_full (reps, iterations, options->seed, race->clock,
                                                       scan_arm, &a, scan_arm, &b, options->on_rep,
                                                       options->on_rep_data, cancellable, error);
  if (timing != NULL && race->unless_not_chosen && tuned->prefilter != a.options.prefilter
      && !(lk_paired_timing_median_ratio (timing) > 1.0))
    {
      char r[G_ASCII_DTOSTR_BUF_SIZE], w[G_ASCII_DTOSTR_BUF_SIZE];
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE,
                   "%s is slower than %s on this processor (median ratio %s, wins %s over %u "
                   "repetitions), and auto does not choose it here (it chose %s: %s)",
                   cell->a_label, cell->b_label,
                   g_ascii_formatd (r, sizeof r, "%.3f", lk_paired_timing_median_ratio (timing)),
                   g_ascii_formatd (w, sizeof w, "%.2f", lk_paired_timing_wins_fraction (timing)),
                   timing->reps, tuned->name, tuned->reason);
      lk_paired_timing_free (timing);
      return NULL;
    }
  return timing;
}

/* ---- the tile race ------------------------------------------------------ */

/* Faces of the tile race: three row blocks of the scan. The per-pair arm
 * runs at the FMA's latency (0.09 s per call at 512-d here), the fused AVX2
 * one 44 times faster (4 ms, against a CPU-clock resolution of 0.18) and the
 * fused portable one 4.4 times: one call per repetition keeps the gate at
 * about ten CPU-seconds. */
#define TILE_FACES (3 * LK_SCAN_BLOCK)

typedef struct
{
  const ScanFixture *fx;
  LkTileFunc tile;
  LkDotFunc dot; /* when not NULL, instead of `tile`: the per-pair loop over it */
  float tau;
  LkHit *hits;  /* room for one tile's */
  GArray *keep; /* when not NULL, every hit, for the parity check */
} TileArm;

/* lk-kernel-tile.h's loop, with the dot called through its pointer. */
static gsize
per_pair_tile (const LkTile *t, LkDotFunc dot, LkHit *hits)
{
  gsize n = 0;

  for (gsize i = t->row_begin; i < t->row_end; i++)
    {
      const float *a = t->embeddings + i * t->dim;
      for (gsize j = MAX (t->col_begin, i + 1); j < t->col_end; j++)
        {
          if (t->photo[j] == t->photo[i] || !(t->gallery[i] || t->gallery[j]))
            continue;
          float c = dot (a, t->embeddings + j * t->dim, t->dim);
          if (c >= t->tau)
            hits[n++] = (LkHit){ (guint32) i, (guint32) j, c };
        }
    }
  return n;
}

static double
tile_arm (double nudge, gpointer data)
{
  const TileArm *arm = data;
  const LkFaces *f = &arm->fx->faces;
  LkTile tile = { f->embeddings, f->dim, f->photo, f->gallery, .tau = arm->tau };
  gsize total = 0;

  for (gsize r = 0; r < TILE_FACES; r += LK_SCAN_BLOCK)
    for (gsize c = r; c < TILE_FACES; c += LK_SCAN_COLUMN_TILE)
      {
        tile.row_begin = r;
        tile.row_end = MIN (r + LK_SCAN_BLOCK, TILE_FACES);
        tile.col_begin = c;
        tile.col_end = MIN (c + LK_SCAN_COLUMN_TILE, TILE_FACES);
        gsize n = arm->dot != NULL ? per_pair_tile (&tile, arm->dot, arm->hits)
                                   : arm->tile (&tile, arm->hits);
        if (arm->keep != NULL)
          g_array_append_vals (arm->keep, arm->hits, n);
        total += n;
      }
  return nudge + total;
}

static int
hit_cmp (gconstpointer a, gconstpointer b)
{
  const LkHit *x = a, *y = b;
  if (x->i != y->i)
    return x->i < y->i ? -1 : 1;
  return x->j < y->j ? -1 : x->j > y->j;
}

static LkPairedTiming *
measure_tile (const LkGateCell *cell, const Race *race, guint reps, guint64 iterations,
              const LkGateRunOptions *options, GCancellable *cancellable, GError **error)
{
  const LkKernel *kernel = lk_kernel_get (race->kernel, error);
  if (kernel == NULL)
    return NULL;

  g_autoptr (ScanFixture) fx = scan_fixture_new (SCAN_FACES);
  double loosest
      = lk_scan_loosest_cosine (fx->crop_px, TILE_FACES, &fx->calibration, fx->min_probability);
  g_autofree LkHit *hits_a = g_new (LkHit, LK_SCAN_BLOCK * LK_SCAN_COLUMN_TILE);
  g_autofree LkHit *hits_b = g_new (LkHit, LK_SCAN_BLOCK * LK_SCAN_COLUMN_TILE);
  g_autoptr (GArray) keep_a = g_array_new (FALSE, FALSE, sizeof (LkHit));
  g_autoptr (GArray) keep_b = g_array_new (FALSE, FALSE, sizeof (LkHit));
  /* The scan's own bar for these faces, so the hits are the scan's few. */
  TileArm a = { fx, kernel->tile, NULL, (float) loosest, hits_a, keep_a };
  TileArm b = {
    fx,    kernel->tile_per_pair, race->fast_dot ? kernel->dot_fast : NULL, (float) loosest, hits_b,
    keep_b
  };

  tile_arm (0, &a);
  tile_arm (0, &b);
  g_array_sort (keep_a, hit_cmp);
  g_array_sort (keep_b, hit_cmp);
  gboolean same = keep_a->len > 0 && keep_a->len == keep_b->len;
  for (guint k = 0; same && race->fast_dot && k < keep_a->len; k++)
    {
      const LkHit *x = &g_array_index (keep_a, LkHit, k), *y = &g_array_index (keep_b, LkHit, k);
      same = x->i == y->i && x->j == y->j && fabsf (x->cos - y->cos) <= 1e-5f;
    }
  if (same && !race->fast_dot)
    same = memcmp (keep_a->data, keep_b->data, keep_a->len * sizeof (LkHit)) == 0;
  if (!same)
    {
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_PARITY,
                   "The %s kernel's %s tile reported %u hits and its %s loop %u%s; a race "
                   "between them would time a wrong answer",
                   kernel->name, cell->a_label, keep_a->len, cell->b_label, keep_b->len,
                   keep_a->len == 0 ? " (none: parity would prove nothing)"
                   : race->fast_dot ? ", not the same pairs with cosines within 1e-5"
                                    : ", not the same pairs and cosines bit for bit");
      return NULL;
    }
  a.keep = b.keep = NULL;

  return lk_paired_interleaved_full (reps, iterations, options->seed, race->clock, tile_arm, &a,
                                     tile_arm, &b, options->on_rep, options->on_rep_data,
                                     cancellable, error);
}

/* ---- running ------------------------------------------------------------ */

/* A wall-clock race measures the machine as much as the code, and the
 * one-minute getloadavg() figure that lk_gate_cell_unavailable() reads lags
 * by a minute: a CI run read the all-cores scan at 0.95 of one thread on a
 * tree that reads about 1.7 on idle cores — the second core was someone
 * else's for most of the second the race lasted, and getloadavg() had not
 * noticed. So such a race is
 * watched: the machine's busy core-seconds across it (/proc/stat, steal
 * included), less this process's own CPU time, is what other work took. A
 * race during which others took more than QUIET_SLACK_S + QUIET_SHARE × its
 * wall time is not judged; it runs again after a pause, up to QUIET_ATTEMPTS
 * times, and if none was quiet the cell is skipped, naming the figure. A
 * quiet race's verdict stands, pass or fail: a retry follows the
 * disturbance, never the verdict. */
#define QUIET_ATTEMPTS 3
#define QUIET_SHARE    0.10
#define QUIET_SLACK_S  0.05
#define QUIET_PAUSE_US (2 * G_USEC_PER_SEC)

/* A mark from which other processes' use of the cores is measured: the
 * machine's busy core-seconds (/proc/stat, steal included) less this
 * process's own. */
typedef struct
{
  double busy;
  double own;
  gint64 wall;
} OtherWork;

static OtherWork
other_work_mark (void)
{
  return (OtherWork){ lk_cpu_machine_busy_seconds (), lk_cpu_process_seconds (),
                      g_get_monotonic_time () };
}

/* Other processes' core-seconds since `mark`, or -1 where the kernel cannot
 * tell; `wall` (may be NULL) receives the seconds elapsed. */
static double
other_work_since (const OtherWork *mark, double *wall)
{
  OtherWork now = other_work_mark ();

  if (wall != NULL)
    *wall = (now.wall - mark->wall) / (double) G_USEC_PER_SEC;
  if (mark->busy < 0.0 || now.busy < 0.0)
    return -1.0;
  return MAX (0.0, now.busy - mark->busy - (now.own - mark->own));
}

static LkPairedTiming *
measure_quietly (const LkGate *gate, const LkGateCell *cell, const LkGateRunOptions *options,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr (GString) seen = g_string_new (NULL);

  for (guint attempt = 1; attempt <= QUIET_ATTEMPTS; attempt++)
    {
      OtherWork mark = other_work_mark ();
      LkPairedTiming *timing = lk_gate_cell_measure (cell, options, cancellable, error);
      double wall, others = other_work_since (&mark, &wall);

      if (timing == NULL || others < 0.0)
        return timing; /* an error, or a kernel that cannot tell: judged as measured */

      double allowed = QUIET_SLACK_S + QUIET_SHARE * wall;
      if (others <= allowed)
        return timing;

      lk_paired_timing_free (timing);
      char o[G_ASCII_DTOSTR_BUF_SIZE], w[G_ASCII_DTOSTR_BUF_SIZE], a[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (o, sizeof o, "%.2f", others);
      g_ascii_formatd (w, sizeof w, "%.2f", wall);
      g_ascii_formatd (a, sizeof a, "%.2f", allowed);
      g_string_append_printf (seen, "%s%s core-seconds in %s s", seen->len ? "; " : "", o, w);
      g_message ("%s %s: other work took %s core-seconds during the %s-second race (allowed "
                 "%s), so its wall clock measured the neighbours: not judged%s",
                 gate->name, cell->name, o, w, a,
                 attempt < QUIET_ATTEMPTS ? "; running it again" : "");
      if (attempt < QUIET_ATTEMPTS)
        {
          g_usleep (QUIET_PAUSE_US);
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return NULL;
        }
    }

  g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE,
               "The machine was busy during all %u attempts (other work took %s): a "
               "wall-clock speedup can only be measured on idle cores",
               QUIET_ATTEMPTS, seen->str);
  return NULL;
}

LkPairedTiming *
lk_gate_cell_measure (const LkGateCell *cell, const LkGateRunOptions *options,
                      GCancellable *cancellable, GError **error)
{
  const Race *race = cell->impl;
  g_autofree char *unavailable = lk_gate_cell_unavailable (cell);
  guint reps = options->reps ? options->reps : LK_GATES_DEFAULT_REPS;
  guint64 iterations = options->iterations ? options->iterations : cell->iterations;

  if (unavailable != NULL)
    {
      g_set_error_literal (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE, unavailable);
      return NULL;
    }
  if (race->kind == RACE_DOT)
    return measure_dot (cell, race, reps, iterations, options, cancellable, error);
  if (race->kind == RACE_TILE)
    return measure_tile (cell, race, reps, iterations, options, cancellable, error);
  return measure_scan (cell, race, reps, iterations, options, cancellable, error);
}

/* The one-minute getloadavg() figure that lk_gate_cell_unavailable() reads
 * lags the machine by about a minute: CI skipped scan-threads, reading 2.08
 * on 2 cores some 12 s after the release build that comes before the speed
 * suite had finished, on cores idle by then. So while the
 * cores are idle second by second (other work took under SETTLE_OTHERS_S
 * core-seconds of the last one), a high average is waited out, up to
 * SETTLE_MAX_S seconds: on idle cores it falls from 2.08 below 2 in about
 * 3 s, from 4 in about 42. A busy second ends the wait at once and the cell
 * is skipped as before; measure_quietly() still watches the race itself.
 * Only lk_gate_run() waits: the diagnostics window asks
 * lk_gate_cell_unavailable() while it builds its rows. */
#define SETTLE_MAX_S    60
#define SETTLE_OTHERS_S 0.2

static void
settle_load (GCancellable *cancellable)
{
  for (guint s = 0; s < SETTLE_MAX_S && !g_cancellable_is_cancelled (cancellable); s++)
    {
      double load;
      if (getloadavg (&load, 1) != 1 || load < lk_cpu_cores ())
        return;
      OtherWork mark = other_work_mark ();
      g_usleep (G_USEC_PER_SEC);
      double others = other_work_since (&mark, NULL);
      if (others < 0.0 || others > SETTLE_OTHERS_S)
        return;
    }
}

/* The machine's cores as the race will find them: the widest FMA block on
 * one thread, then on every core at once, each run PARALLEL_SECONDS long;
 * returns all cores' rate over one core's. A hypervisor can hand a guest two
 * vCPUs that share one physical core and report no steal time: the scan's
 * threads, OpenBLAS and this very block then all fall from 1.9× one thread
 * to about 1.0×, with the machine's busy time (measure_quietly) showing
 * nothing else running. That measures the host, not the pool. */
#define PARALLEL_SECONDS 0.05
#define PARALLEL_SHARE   0.75

typedef struct
{
  const char *isa;
  guint64 rounds;
  double checksum;
} ParallelArm;

static gpointer
parallel_arm (gpointer data)
{
  ParallelArm *arm = data;
  lk_peak_run_one (arm->isa, arm->rounds, &arm->checksum);
  return NULL;
}

static double
parallel_capacity (guint cores)
{
  const char *isa = lk_peak_fma ()->isa;
  double checksum;
  guint64 rounds = 20000;
  double seconds = 0.0;

  /* Rounds for PARALLEL_SECONDS on one thread, found by doubling. */
  while (rounds < G_MAXUINT32)
    {
      gint64 t0 = g_get_monotonic_time ();
      lk_peak_run_one (isa, rounds, &checksum);
      seconds = (g_get_monotonic_time () - t0) / (double) G_USEC_PER_SEC;
      if (seconds >= PARALLEL_SECONDS)
        break;
      rounds *= 2;
    }
  ParallelArm arms[64];
  GThread *threads[64] = { NULL };
  cores = MIN (cores, G_N_ELEMENTS (arms));
  gint64 t0 = g_get_monotonic_time ();
  for (guint c = 0; c < cores; c++)
    {
      arms[c] = (ParallelArm){ isa, rounds, 0.0 };
      if (c > 0)
        threads[c] = g_thread_try_new ("lk-parallel", parallel_arm, &arms[c], NULL);
    }
  parallel_arm (&arms[0]);
  for (guint c = 1; c < cores; c++)
    if (threads[c] != NULL)
      g_thread_join (threads[c]);
    else
      parallel_arm (&arms[c]);
  double together = (g_get_monotonic_time () - t0) / (double) G_USEC_PER_SEC;
  return together > 0.0 ? cores * seconds / together : 0.0;
}

/* Why a cell that needs every core cannot be raced now, or NULL. Other work
 * running meanwhile (the quiet watch's measure) is named as such: a busy
 * machine, not a shared one. */
static char *
cores_unavailable (void)
{
  guint cores = lk_cpu_cores ();
  OtherWork mark = other_work_mark ();
  double capacity = parallel_capacity (cores);
  double wall, others = MAX (0.0, other_work_since (&mark, &wall));
  char c[G_ASCII_DTOSTR_BUF_SIZE], o[G_ASCII_DTOSTR_BUF_SIZE];

  g_debug ("%u cores ran the FMA block %.2f times as fast as one; other work took %.2f "
           "core-seconds in %.2f s",
           cores, capacity, others, wall);
  if (capacity >= PARALLEL_SHARE * cores)
    return NULL;
  g_ascii_formatd (c, sizeof c, "%.2f", capacity);
  if (others > QUIET_SLACK_S + QUIET_SHARE * wall)
    return g_strdup_printf ("This machine is busy (other work took %s core-seconds while its %u "
                            "cores were measured): a wall-clock speedup can only be measured on "
                            "idle cores",
                            g_ascii_formatd (o, sizeof o, "%.2f", others), cores);
  return g_strdup_printf ("This machine's %u cores ran the FMA block only %s times as fast as one "
                          "just now, with nothing else running: they are shared underneath (by "
                          "a hypervisor, or this process is held to fewer), so a wall-clock "
                          "speedup would measure that, not the scan",
                          cores, c);
}

gboolean
lk_gate_run (const LkGate *gate, const LkGateRunOptions *options, LkGateCellFunc on_cell,
             gpointer on_cell_data, GPtrArray *cells, GCancellable *cancellable, GError **error)
{
  g_autoptr (LkSpeedGate) speed_gate = lk_speed_gate_open (gate->name);
  g_autoptr (GString) why_none = g_string_new (NULL);

  for (guint k = 0; k < gate->n_cells; k++)
    {
      const LkGateCell *info = &gate->cells[k];
      const Race *race = info->impl;
      if (race->needs_idle_cores)
        settle_load (cancellable);
      g_autofree char *unavailable = lk_gate_cell_unavailable (info);
      if (unavailable == NULL && race->needs_idle_cores)
        unavailable = cores_unavailable ();
      if (unavailable != NULL)
        {
          g_string_append_printf (why_none, "\n%s: %s", info->name, unavailable);
          if (on_cell != NULL)
            on_cell (gate, info, NULL, unavailable, on_cell_data);
          continue;
        }

      g_autoptr (GError) local = NULL;
      LkPairedTiming *timing = race->needs_idle_cores
                                   ? measure_quietly (gate, info, options, cancellable, &local)
                                   : lk_gate_cell_measure (info, options, cancellable, &local);
      if (timing == NULL && g_error_matches (local, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE))
        {
          /* Found out only by trying (a busy machine, one thread): skipped. */
          g_string_append_printf (why_none, "\n%s: %s", info->name, local->message);
          if (on_cell != NULL)
            on_cell (gate, info, NULL, local->message, on_cell_data);
          continue;
        }
      if (timing == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          lk_speed_gate_abandon (speed_gate);
          g_prefix_error (error, "%s %s: ", gate->name, info->name);
          return FALSE;
        }
      const LkTimingCell *cell = info->contract == LK_CONTRACT_FASTER
                                     ? lk_speed_gate_faster (speed_gate, info->name, timing,
                                                             info->a_label, info->b_label)
                                     : lk_speed_gate_not_slower (speed_gate, info->name, timing,
                                                                 info->a_label, info->b_label);
      if (cells != NULL)
        g_ptr_array_add (cells, lk_timing_cell_copy (cell));
      if (on_cell != NULL)
        on_cell (gate, info, cell, NULL, on_cell_data);
    }

  if (lk_speed_gate_n_cells (speed_gate) == 0)
    {
      lk_speed_gate_abandon (speed_gate);
      g_set_error (error, LK_GATES_ERROR, LK_GATES_ERROR_UNAVAILABLE,
                   "%s: none of its cells runs on this machine, so it verified nothing:%s",
                   gate->name, why_none->str);
      return FALSE;
    }
  return lk_speed_gate_finish (speed_gate, error);
}
