/* The per-ISA FMA blocks behind lk-peak.c, each compiled with its own flags.
 * Each runs `iterations` rounds of LK_PEAK_CHAINS independent vector FMA
 * chains a·1 + 1 and returns the sum of every lane of every chain. */
#pragma once

#include <glib.h>

#define LK_PEAK_CHAINS 12

double lk_peak_block_portable (guint64 iterations, float one);
double lk_peak_block_avx2 (guint64 iterations, float one);
double lk_peak_block_avx512 (guint64 iterations, float one);
/* The dot-product instructions of the first passes (lk-prefilter.h): each
 * chain's every lane counts `lanes` (below) per round — the multiply-adds its
 * instruction does, all of them on ones — so "flops" are 2 per multiply-add
 * of whatever width. */
double lk_peak_block_bf16 (guint64 iterations, float one);
double lk_peak_block_int8 (guint64 iterations, float one);

/* Lanes per chain of each block, for counting flops. */
#define LK_PEAK_LANES_PORTABLE 1
#define LK_PEAK_LANES_AVX2     8
#define LK_PEAK_LANES_AVX512   16
#define LK_PEAK_LANES_BF16     32
#define LK_PEAK_LANES_INT8     64
