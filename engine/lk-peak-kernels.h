/* The per-ISA FMA blocks behind lk-peak.c, each compiled with its own flags.
 * Each runs `iterations` rounds of LK_PEAK_CHAINS independent vector FMA
 * chains a·1 + 1 and returns the sum of every lane of every chain. */
#pragma once

#include <glib.h>

#define LK_PEAK_CHAINS 12

double lk_peak_block_portable (guint64 iterations, float one);
double lk_peak_block_avx2 (guint64 iterations, float one);
double lk_peak_block_avx512 (guint64 iterations, float one);

/* Lanes per chain of each block, for counting flops. */
#define LK_PEAK_LANES_PORTABLE 1
#define LK_PEAK_LANES_AVX2 8
#define LK_PEAK_LANES_AVX512 16
