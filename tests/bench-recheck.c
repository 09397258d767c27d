/* bench-recheck — the float32 re-check of a scan's pairs, in the order the
 * scan hands them over, against the order it handed them over before
 *
 *   bench-recheck [--reps R] [LIBRARY]
 *
 * A large scan with a first pass re-checks its survivors a block of
 * LK_SCAN_DEFERRED_BLOCK rows at a time (lk-scan.c, recheck_deferred). They
 * were sorted by column, so that each column's float row was fetched once
 * for the block; they are now sorted by row, so that the x86 kernels' re-check
 * (lk-kernel-tile.h) finds runs of pairs sharing their first row, broadcasts
 * that row's elements instead of transposing them, and keeps up to three
 * chains in flight. This takes the library's exact pairs (one lk_scan: the
 * survivors of the first pass are these and the few within its margin) and,
 * block by block, hands each x86 kernel's re-check the block's pairs sorted
 * by row and sorted by column (stable), one thread, R times in alternating
 * order, and prints each arm's median thread CPU time, its time a pair, and
 * the ratio column / row. Both orders must give every pair the same bits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "timing/lk-cpu.h"
#include "scan/lk-kernels.h"
#include "library/lk-library.h"
#include "scan/lk-scan.h"
#include "lk-test-util.h"

typedef struct
{
  LkHit *hits;
  gsize n;
} Block;

/* The block's pairs by column, stable: a row's pairs stay in ascending j. */
static void
sort_by_column (Block *block, gsize n_faces)
{
  g_autofree guint32 *count = g_new0 (guint32, n_faces + 1);
  g_autofree LkHit *sorted = g_new (LkHit, MAX (block->n, 1));

  for (gsize h = 0; h < block->n; h++)
    count[block->hits[h].j + 1]++;
  for (gsize j = 0; j < n_faces; j++)
    count[j + 1] += count[j];
  for (gsize h = 0; h < block->n; h++)
    sorted[count[block->hits[h].j]++] = block->hits[h];
  memcpy (block->hits, sorted, block->n * sizeof (LkHit));
}

static double
run (const LkKernel *kernel, const LkFaces *f, Block *blocks, gsize n_blocks)
{
  double start = lk_test_thread_seconds ();
  for (gsize b = 0; b < n_blocks; b++)
    kernel->recheck (f->embeddings, f->dim, blocks[b].hits, blocks[b].n);
  return lk_test_thread_seconds () - start;
}

int
main (int argc, char **argv)
{
  int reps = 7;
  const GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions of every arm (default 7)", "R" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("LIBRARY");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || reps < 1)
    {
      fprintf (stderr, "bench-recheck: %s\n",
               error ? error->message : "one LIBRARY, --reps at least 1");
      return 2;
    }
  g_autoptr (LkLibrary) library = lk_library_load (argv[1], &error);
  if (library == NULL)
    {
      fprintf (stderr, "bench-recheck: %s\n", error->message);
      return 1;
    }
  LkFaces f;
  lk_faces_from_library (&f, library);
  LkScanResult *result
      = lk_scan (&f, &library->calibration, library->min_probability, NULL, NULL, &error);
  if (result == NULL)
    {
      fprintf (stderr, "bench-recheck: %s\n", error->message);
      return 1;
    }

  /* The pairs, by block of rows; the list is in (i, j) order already. */
  const GArray *pairs = result->pairs;
  gsize n_blocks = (f.n + LK_SCAN_DEFERRED_BLOCK - 1) / LK_SCAN_DEFERRED_BLOCK;
  g_autofree Block *by_row = g_new0 (Block, n_blocks);
  g_autofree Block *by_column = g_new0 (Block, n_blocks);
  for (guint k = 0; k < pairs->len;)
    {
      const LkPair *first = &g_array_index (pairs, LkPair, k);
      gsize b = first->i / LK_SCAN_DEFERRED_BLOCK;
      guint end = k;
      while (end < pairs->len && g_array_index (pairs, LkPair, end).i / LK_SCAN_DEFERRED_BLOCK == b)
        end++;
      by_row[b].n = by_column[b].n = end - k;
      by_row[b].hits = g_new (LkHit, end - k);
      for (guint h = k; h < end; h++)
        {
          const LkPair *p = &g_array_index (pairs, LkPair, h);
          by_row[b].hits[h - k] = (LkHit){ p->i, p->j, 0.0f };
        }
      by_column[b].hits = g_memdup2 (by_row[b].hits, (end - k) * sizeof (LkHit));
      sort_by_column (&by_column[b], f.n);
      k = end;
    }

  printf ("bench-recheck: library=%s faces=%zu dim=%u pairs=%u blocks of %d rows, reps=%d\n",
          argv[1], f.n, f.dim, pairs->len, LK_SCAN_DEFERRED_BLOCK, reps);
  printf ("bench-recheck: cpu=\"%s\" one thread, thread CPU time, medians\n", lk_cpu_model_name ());
  printf ("%-9s %12s %10s %12s %10s %16s\n", "kernel", "by row ms", "ns/pair", "by column ms",
          "ns/pair", "column / row");
  static const LkKernelId kernels[]
      = { LK_KERNEL_PORTABLE, LK_KERNEL_AVX2, LK_KERNEL_AVX512, LK_KERNEL_NEON };
  int status = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (kernels); k++)
    {
      const LkKernel *kernel = lk_kernel_get (kernels[k], NULL);
      if (kernel == NULL)
        continue;
      g_autoptr (GArray) row_s = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr (GArray) column_s = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));
      for (int r = 0; r < reps; r++)
        {
          double row, column;
          if (r % 2 == 0)
            {
              row = run (kernel, &f, by_row, n_blocks);
              column = run (kernel, &f, by_column, n_blocks);
            }
          else
            {
              column = run (kernel, &f, by_column, n_blocks);
              row = run (kernel, &f, by_row, n_blocks);
            }
          double ratio = column / row;
          g_array_append_val (row_s, row);
          g_array_append_val (column_s, column);
          g_array_append_val (ratios, ratio);
        }
      /* The same bits either way: each by-row pair looked up by (i, j) in
       * its block's by-column list. */
      for (gsize b = 0; b < n_blocks; b++)
        {
          GHashTable *at = g_hash_table_new (g_int64_hash, g_int64_equal);
          g_autofree gint64 *keys = g_new (gint64, MAX (by_column[b].n, 1));
          for (gsize h = 0; h < by_column[b].n; h++)
            {
              keys[h] = (gint64) by_column[b].hits[h].i << 32 | by_column[b].hits[h].j;
              g_hash_table_insert (at, &keys[h], &by_column[b].hits[h]);
            }
          for (gsize h = 0; h < by_row[b].n; h++)
            {
              gint64 key = (gint64) by_row[b].hits[h].i << 32 | by_row[b].hits[h].j;
              const LkHit *other = g_hash_table_lookup (at, &key);
              if (other == NULL || memcmp (&other->cos, &by_row[b].hits[h].cos, sizeof (float)))
                {
                  fprintf (stderr, "bench-recheck: %s gave pair (%u, %u) other bits by column\n",
                           kernel->name, by_row[b].hits[h].i, by_row[b].hits[h].j);
                  status = 1;
                }
            }
          g_hash_table_destroy (at);
        }
      double row = lk_test_median (row_s), column = lk_test_median (column_s);
      printf ("%-9s %12.1f %10.1f %12.1f %10.1f %15.2fx\n", kernel->name, row * 1e3,
              row * 1e9 / pairs->len, column * 1e3, column * 1e9 / pairs->len,
              lk_test_median (ratios));
    }
  for (gsize b = 0; b < n_blocks; b++)
    {
      g_free (by_row[b].hits);
      g_free (by_column[b].hits);
    }
  lk_scan_result_free (result);
  return status;
}
