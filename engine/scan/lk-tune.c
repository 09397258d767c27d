/* lk-tune.c — the measured choice behind "auto" (lk-tune.h says why)
 *
 * The race. Every candidate runs the same workload: rows [0, LK_SCAN_BLOCK)
 * of the faces against columns [0, TUNE_COLUMNS) in LK_SCAN_COLUMN_TILE-wide
 * tiles, upper triangle only — the body of lk-scan.c's scan_block(), at the
 * scan's own bar, on the library's own rows when tuning for a scan. One
 * screening call each drops the candidates that are far behind (the portable
 * kernel, an emulated pass) before they eat the budget; then each survivor is
 * raced against the screening's fastest with lk_paired_interleaved, TUNE_REPS
 * repetitions in a coin-drawn order, and the highest median ratio wins. At
 * 512-d one call is 0.6 GFLOP, a few ms on one AVX-512 core, so with the
 * three to five candidates a CPU has the whole race takes 0.1–0.3 s.
 *
 * The first pass's rows are converted outside the timed calls: a scan
 * converts each row once, against n / LK_SCAN_BLOCK blocks that reuse it, so
 * at the 8,192 faces where tuning starts conversion is under 1 % of the scan.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "config.h"

#include "lk-tune.h"

#include <errno.h>
#include <link.h>
#include <math.h>
#include <string.h>

#include "timing/lk-cpu.h"
#include "lk-kernels.h"
#include "lk-prefilter.h"
#include "timing/lk-timing.h"

#define TUNE_COLUMNS       (9 * LK_SCAN_BLOCK)
#define TUNE_HITS          ((gsize) LK_SCAN_DEFERRED_HITS) /* survivors gathered, as a scan does */
#define TUNE_REPS          5
#define TUNE_SEED          0x6c6b74756e65ull /* "lktune" */
#define CACHE_GROUP_PREFIX "choice "

/* ---- candidates --------------------------------------------------------- */

static const char *
pass_name (LkPrefilterId id)
{
  gsize n;
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n);

  if (id == LK_PREFILTER_OFF)
    return "off";
  for (gsize k = 0; k < n; k++)
    if (passes[k]->id == id)
      return passes[k]->name;
  return NULL;
}

static gboolean
pass_from_name (const char *name, LkPrefilterId *id)
{
  gsize n;
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n);

  if (g_strcmp0 (name, "off") == 0)
    {
      *id = LK_PREFILTER_OFF;
      return TRUE;
    }
  for (gsize k = 0; k < n; k++)
    if (g_strcmp0 (passes[k]->name, name) == 0)
      {
        *id = passes[k]->id;
        return TRUE;
      }
  return FALSE;
}

char *
lk_tune_candidate_name (LkKernelId kernel, LkPrefilterId prefilter)
{
  if (prefilter == LK_PREFILTER_OFF)
    return g_strdup (lk_kernel_id_to_string (kernel));
  return g_strdup_printf ("%s+%s", lk_kernel_id_to_string (kernel), pass_name (prefilter));
}

static gboolean
runs_here (LkKernelId kernel, LkPrefilterId prefilter)
{
  const LkPrefilterPass *pass;

  return lk_kernel_get (kernel, NULL) != NULL && lk_prefilter_pass_get (prefilter, &pass, NULL)
         && (prefilter == LK_PREFILTER_OFF || pass != NULL);
}

static void
candidates_clear (gpointer data)
{
  g_free (((LkTuneCandidate *) data)->name);
}

GArray *
lk_tune_candidates (void)
{
  return lk_tune_candidates_for (lk_cpu_features ());
}

GArray *
lk_tune_candidates_for (LkCpuFeatures features)
{
  gsize n_kernels, n_passes;
  const LkKernel *const *kernels = lk_kernels_compiled (&n_kernels);
  const LkPrefilterPass *const *passes = lk_prefilter_passes_compiled (&n_passes);
  GArray *out = g_array_new (FALSE, TRUE, sizeof (LkTuneCandidate));
  gboolean simd = FALSE;

  g_array_set_clear_func (out, candidates_clear);
  for (gsize k = 0; k < n_kernels; k++)
    simd = simd || (kernels[k]->needs != 0 && (features & kernels[k]->needs) == kernels[k]->needs);
  /* Widest first, so that a tie goes to the kernel "auto" used to be. */
  for (gsize k = n_kernels; k-- > 0;)
    {
      if ((features & kernels[k]->needs) != kernels[k]->needs || (simd && kernels[k]->needs == 0))
        continue;
      for (gssize p = -1; p < (gssize) n_passes; p++)
        {
          /* Emulated passes (needing no feature) are many times slower than
           * float32 alone and exist for the tests: never candidates. Nor is
           * a pass this CPU cannot run (AVX-VNNI where cpuid lacks it). */
          if (p >= 0
              && (passes[p]->needs == 0 || (features & passes[p]->needs) != passes[p]->needs))
            continue;
          LkTuneCandidate c = {
            .kernel = kernels[k]->id,
            .prefilter = p < 0 ? LK_PREFILTER_OFF : passes[p]->id,
            .ratio = NAN,
          };
          c.name = lk_tune_candidate_name (c.kernel, c.prefilter);
          g_array_append_val (out, c);
        }
    }
  return out;
}

guint
lk_tune_pick (const LkTuneCandidate *candidates, guint n)
{
  guint best = 0;
  double best_ratio = -INFINITY;

  for (guint k = 0; k < n; k++)
    if (!isnan (candidates[k].ratio) && candidates[k].ratio > best_ratio)
      {
        best = k;
        best_ratio = candidates[k].ratio;
      }
  return best;
}

/* ---- the cache ---------------------------------------------------------- */

static int
find_build_id (struct dl_phdr_info *info, size_t size, void *data)
{
  GString *out = data;

  (void) size;
  /* The first object is the program itself, which the engine is linked into. */
  for (int h = 0; h < info->dlpi_phnum; h++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[h];
      if (ph->p_type != PT_NOTE)
        continue;
      const guint8 *p = (const guint8 *) (info->dlpi_addr + ph->p_vaddr);
      const guint8 *end = p + ph->p_memsz;
      while (p + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *note = (const ElfW (Nhdr) *) p;
          const guint8 *name = p + sizeof *note;
          const guint8 *desc = name + ((note->n_namesz + 3) & ~3u);
          if (desc + note->n_descsz > end)
            break;
          if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4
              && memcmp (name, "GNU", 4) == 0)
            {
              for (guint k = 0; k < note->n_descsz; k++)
                g_string_append_printf (out, "%02x", desc[k]);
              return 1;
            }
          p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
  return 1;
}

const char *
lk_tune_build_id (void)
{
  static gsize once = 0;
  static char *id;

  if (g_once_init_enter (&once))
    {
      GString *s = g_string_new (NULL);
      dl_iterate_phdr (find_build_id, s);
      if (s->len == 0)
        g_string_printf (s, "%s-%s-%s", PACKAGE_VERSION, LK_BUILD_TYPE, __DATE__ " " __TIME__);
      id = g_string_free (s, FALSE);
      g_once_init_leave (&once, 1);
    }
  return id;
}

char *
lk_tune_cache_key (const char *model, const char *features, const char *build_id, guint dim)
{
  return g_strdup_printf ("%s|%s|%s|%u", model, features, build_id, dim);
}

char *
lk_tune_cache_key_here (guint dim)
{
  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  return lk_tune_cache_key (lk_cpu_model_name (), features, lk_tune_build_id (), dim);
}

char *
lk_tune_cache_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "likeness", "kernel-choice.ini", NULL);
}

/* A key may hold anything; a group name may not hold '[' or ']': the group
 * is named by the key's hash and holds the key itself, compared in full. */
static char *
group_for (const char *key)
{
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key, -1);
  return g_strdup_printf (CACHE_GROUP_PREFIX "%.16s", hash);
}

gboolean
lk_tune_cache_lookup (const char *path, const char *key, LkKernelId *kernel,
                      LkPrefilterId *prefilter)
{
  g_autoptr (GKeyFile) file = g_key_file_new ();
  g_autofree char *group = group_for (key);

  if (!g_key_file_load_from_file (file, path, G_KEY_FILE_NONE, NULL))
    return FALSE;
  g_autofree char *stored_key = g_key_file_get_string (file, group, "key", NULL);
  g_autofree char *k = g_key_file_get_string (file, group, "kernel", NULL);
  g_autofree char *p = g_key_file_get_string (file, group, "first-pass", NULL);
  LkKernelId kid;
  LkPrefilterId pid;
  if (g_strcmp0 (stored_key, key) != 0 || k == NULL || p == NULL
      || !lk_kernel_id_from_string (k, &kid) || kid == LK_KERNEL_AUTO || !pass_from_name (p, &pid)
      || !runs_here (kid, pid))
    return FALSE;
  *kernel = kid;
  *prefilter = pid;
  return TRUE;
}

gboolean
lk_tune_cache_store (const char *path, const char *key, LkKernelId kernel, LkPrefilterId prefilter,
                     GError **error)
{
  g_autoptr (GKeyFile) file = g_key_file_new ();
  g_autofree char *group = group_for (key);
  g_autofree char *dir = g_path_get_dirname (path);

  /* A corrupt or unreadable file is started afresh, never trusted. */
  if (!g_key_file_load_from_file (file, path, G_KEY_FILE_KEEP_COMMENTS, NULL))
    {
      g_key_file_free (file);
      file = g_key_file_new ();
    }
  g_key_file_set_comment (file, NULL, NULL,
                          " Likeness: the scan kernel and first pass measured fastest on this "
                          "machine\n (likeness-cli cpu --tune measures again; deleting this "
                          "file is safe)",
                          NULL);
  g_key_file_set_string (file, group, "key", key);
  g_key_file_set_string (file, group, "kernel", lk_kernel_id_to_string (kernel));
  g_key_file_set_string (file, group, "first-pass", pass_name (prefilter));
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "Could not create the cache folder %s: %s", dir, g_strerror (saved));
      return FALSE;
    }
  gsize len;
  g_autofree char *data = g_key_file_to_data (file, &len, NULL);
  return g_file_set_contents (path, data, len, error);
}

/* ---- the race ----------------------------------------------------------- */

typedef struct
{
  const LkFaces *faces;
  const LkKernel *kernel;
  LkPrefilter *prefilter;
  float tau;
  gsize columns;
  LkHit *hits;
  LkHit *sorted; /* as many: the hits sorted by row */
} TuneArm;

/* The float re-check of `kept` gathered survivors, as lk-scan.c's
 * recheck_deferred does it: sorted by row (a stable counting sort over the
 * block's rows), so that the x86 re-check finds each row's run of pairs as it
 * does in a scan, then re-checked; their count above tau and a trace of the
 * last cosine, so that none of it is dead code. */
static double
tune_recheck (const TuneArm *arm, gsize kept)
{
  const LkFaces *f = arm->faces;
  guint32 start[LK_SCAN_BLOCK + 1] = { 0 };
  double sum = 0.0;

  for (gsize h = 0; h < kept; h++)
    start[arm->hits[h].i + 1]++;
  for (gsize r = 0; r < LK_SCAN_BLOCK; r++)
    start[r + 1] += start[r];
  for (gsize h = 0; h < kept; h++)
    arm->sorted[start[arm->hits[h].i]++] = arm->hits[h];
  arm->kernel->recheck (f->embeddings, f->dim, arm->sorted, kept);
  for (gsize h = 0; h < kept; h++)
    if (arm->sorted[h].cos >= arm->tau)
      sum += 1.0 + arm->sorted[h].cos * 1e-9;
  return sum;
}

/* The body of lk-scan.c's scan_block for one block: with a first pass, the
 * block's survivors gathered and re-checked together as a large scan does
 * (scan_block_deferred), the buffer emptied whenever a tile could overflow
 * it; without one, the kernel's tiles. */
static double
tune_arm (double nudge, gpointer data)
{
  const TuneArm *arm = data;
  const LkFaces *f = arm->faces;
  double sum = nudge;
  gsize kept = 0;
  LkTile tile = {
    .embeddings = f->embeddings,
    .dim = f->dim,
    .photo = f->photo,
    .gallery = f->gallery,
    .row_begin = 0,
    .row_end = MIN ((gsize) LK_SCAN_BLOCK, arm->columns),
    .tau = arm->tau,
  };

  for (gsize col = 0; col < arm->columns; col += LK_SCAN_COLUMN_TILE)
    {
      tile.col_begin = col;
      tile.col_end = MIN (col + LK_SCAN_COLUMN_TILE, arm->columns);
      if (arm->prefilter != NULL)
        {
          if (kept + (tile.row_end - tile.row_begin) * (tile.col_end - col) > TUNE_HITS)
            {
              sum += tune_recheck (arm, kept);
              kept = 0;
            }
          kept += lk_prefilter_survivors (arm->prefilter, &tile, arm->hits + kept);
          continue;
        }
      gsize n = arm->kernel->tile (&tile, arm->hits);
      sum += (double) n;
      if (n > 0)
        sum += arm->hits[n - 1].cos * 1e-9;
    }
  return sum + tune_recheck (arm, kept);
}

/* The better of two calls: a single call read the first candidate 1.2×
 * slower than the same kernel timed later (a cold cache, 7.45 against 6.09
 * ms), enough to eliminate it wrongly. */
static double
screen_ns (TuneArm *arm)
{
  double best = INFINITY;

  for (guint k = 0; k < 2; k++)
    {
      gint64 t0 = g_get_monotonic_time ();
      volatile double sink = tune_arm (0.0, arm);
      (void) sink;
      best = MIN (best, (double) (g_get_monotonic_time () - t0) * 1e3);
    }
  return best;
}

static const char *
source_sentence (LkTuneSource source)
{
  switch (source)
    {
      case LK_TUNE_MEASURED:
        return "measured just now";
      case LK_TUNE_CACHED:
        return "measured earlier on this machine and build";
      case LK_TUNE_FORCED:
        return "forced";
      case LK_TUNE_DEFAULT:
      default:
        return "the default";
    }
}

const char *
lk_tune_source_name (LkTuneSource source)
{
  static const char *const names[] = { "default", "cached", "measured", "forced" };
  return source < G_N_ELEMENTS (names) ? names[source] : "unknown";
}

static LkTuneChoice *
choice_new (LkKernelId kernel, LkPrefilterId prefilter, LkTuneSource source)
{
  LkTuneChoice *c = g_new0 (LkTuneChoice, 1);
  c->kernel = kernel;
  c->prefilter = prefilter;
  c->source = source;
  c->name = lk_tune_candidate_name (kernel, prefilter);
  c->cache_path = lk_tune_cache_path ();
  return c;
}

LkTuneChoice *
lk_tune_measure (const LkFaces *faces, float tau)
{
  g_autoptr (GArray) cands = lk_tune_candidates ();
  gsize columns = MIN (faces->n, (gsize) TUNE_COLUMNS);
  gsize capacity = MAX (TUNE_HITS, (gsize) LK_SCAN_BLOCK * LK_SCAN_COLUMN_TILE);
  g_autofree LkHit *hits = g_new (LkHit, capacity);
  g_autofree LkHit *sorted = g_new (LkHit, capacity);
  TuneArm *arms = g_new0 (TuneArm, cands->len);
  g_autoptr (GHashTable) converted
      = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) lk_prefilter_free);
  double fastest = INFINITY;
  guint reference = 0;

  for (guint k = 0; k < cands->len; k++)
    {
      LkTuneCandidate *c = &g_array_index (cands, LkTuneCandidate, k);
      const LkPrefilterPass *pass = NULL;
      arms[k]
          = (TuneArm){ faces, lk_kernel_get (c->kernel, NULL), NULL, tau, columns, hits, sorted };
      lk_prefilter_pass_get (c->prefilter, &pass, NULL);
      if (pass != NULL && !isinf (tau))
        {
          LkPrefilter *pf = g_hash_table_lookup (converted, pass);
          if (pf == NULL)
            {
              pf = lk_prefilter_new (pass, faces->embeddings, columns, faces->dim);
              lk_prefilter_prepare (pf, tau);
              g_hash_table_insert (converted, (gpointer) pass, pf);
            }
          arms[k].prefilter = pf;
        }
      if (k == 0)
        screen_ns (&arms[k]); /* warm the rows into the caches for everyone */
      c->screen_ns = screen_ns (&arms[k]);
      if (c->screen_ns < fastest)
        {
          fastest = c->screen_ns;
          reference = k;
        }
    }

  for (guint k = 0; k < cands->len; k++)
    {
      LkTuneCandidate *c = &g_array_index (cands, LkTuneCandidate, k);
      if (k == reference)
        c->ratio = 1.0;
      else if (c->screen_ns <= LK_TUNE_ELIMINATE_ABOVE * fastest)
        {
          LkPairedTiming *t = lk_paired_interleaved (TUNE_REPS, 1, TUNE_SEED + k, tune_arm,
                                                     &arms[k], tune_arm, &arms[reference]);
          c->ratio = t != NULL ? lk_paired_timing_median_ratio (t) : NAN;
          lk_paired_timing_free (t);
        }
    }
  g_free (arms);

  const LkTuneCandidate *best = &g_array_index (
      cands, LkTuneCandidate, lk_tune_pick ((LkTuneCandidate *) cands->data, cands->len));
  LkTuneChoice *choice = choice_new (best->kernel, best->prefilter, LK_TUNE_MEASURED);
  g_autofree char *key = lk_tune_cache_key_here (faces->dim);
  g_autoptr (GError) error = NULL;
  gboolean stored
      = lk_tune_cache_store (choice->cache_path, key, best->kernel, best->prefilter, &error);
  /* The runner-up, to say by how much the choice won. */
  const LkTuneCandidate *second = NULL;
  for (guint k = 0; k < cands->len; k++)
    {
      const LkTuneCandidate *c = &g_array_index (cands, LkTuneCandidate, k);
      if (c != best && !isnan (c->ratio) && (second == NULL || c->ratio > second->ratio))
        second = c;
    }
  char r[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *margin
      = second == NULL
            ? g_strdup_printf ("every other candidate was over %.1f× slower in screening",
                               LK_TUNE_ELIMINATE_ABOVE)
            : g_strdup_printf ("%s× the runner-up %s by median paired ratio",
                               g_ascii_formatd (r, sizeof r, "%.3f", best->ratio / second->ratio),
                               second->name);
  choice->reason = g_strdup_printf (
      "%s: fastest of %u candidates on one %u-row block × %" G_GSIZE_FORMAT " columns of "
      "%u-d rows, %s (%u paired repetitions)%s%s",
      source_sentence (LK_TUNE_MEASURED), cands->len, LK_SCAN_BLOCK, columns, faces->dim, margin,
      TUNE_REPS, stored ? "" : "; not remembered: ", stored ? "" : error->message);
  choice->candidates = g_steal_pointer (&cands);
  return choice;
}

/* ---- what a scan runs --------------------------------------------------- */

static LkTuneChoice *
forced_from_env (void)
{
  const char *k = g_getenv ("LIKENESS_KERNEL");
  const char *p = g_getenv ("LIKENESS_FIRST_PASS");
  LkKernelId kid = LK_KERNEL_AUTO;
  LkPrefilterId pid = LK_PREFILTER_OFF;

  if ((k == NULL || *k == '\0') && (p == NULL || *p == '\0'))
    return NULL;
  if (k != NULL && *k != '\0' && !lk_kernel_id_from_string (k, &kid))
    g_warning ("LIKENESS_KERNEL=%s names no kernel (auto, portable, avx2, avx512, neon): "
               "ignored",
               k);
  if (p != NULL && *p != '\0' && !pass_from_name (p, &pid))
    g_warning (
        "LIKENESS_FIRST_PASS=%s names no first pass (off, bf16-avx512, int16-avx2, int7-avx2, …): "
        "ignored",
        p);
  if (kid == LK_KERNEL_AUTO)
    {
      const LkKernel *widest = lk_kernel_get (LK_KERNEL_AUTO, NULL);
      kid = widest->id;
    }
  if (!runs_here (kid, pid))
    {
      g_warning ("LIKENESS_KERNEL / LIKENESS_FIRST_PASS name %s+%s, which this processor cannot "
                 "run: ignored",
                 lk_kernel_id_to_string (kid), pass_name (pid));
      return NULL;
    }
  LkTuneChoice *c = choice_new (kid, pid, LK_TUNE_FORCED);
  c->reason = g_strdup ("forced by LIKENESS_KERNEL / LIKENESS_FIRST_PASS");
  return c;
}

LkTuneChoice *
lk_tune_for_scan (const LkFaces *faces, float tau)
{
  /* One measurement per process and dimension at a time: two scans starting
   * together must not race each other's timings. */
  static GMutex lock;
  LkTuneChoice *c = forced_from_env ();
  LkKernelId kid;
  LkPrefilterId pid;

  if (c != NULL)
    return c;
  g_mutex_lock (&lock);
  g_autofree char *path = lk_tune_cache_path ();
  g_autofree char *key = lk_tune_cache_key_here (faces->dim);
  if (lk_tune_cache_lookup (path, key, &kid, &pid))
    {
      c = choice_new (kid, pid, LK_TUNE_CACHED);
      c->reason = g_strdup_printf ("%s (%s)", source_sentence (LK_TUNE_CACHED), path);
    }
  else if (faces->n >= LK_TUNE_SCAN_ABOVE && !isinf (tau))
    c = lk_tune_measure (faces, tau);
  g_mutex_unlock (&lock);
  if (c != NULL)
    return c;

  const LkKernel *widest = lk_kernel_get (LK_KERNEL_AUTO, NULL);
  c = choice_new (widest->id, LK_PREFILTER_OFF, LK_TUNE_DEFAULT);
  c->reason = g_strdup_printf ("the default, the widest kernel alone: nothing measured on this "
                               "machine yet, and %" G_GSIZE_FORMAT " faces are fewer than the %u "
                               "that pay for measuring (likeness-cli cpu --tune measures now)",
                               faces->n, LK_TUNE_SCAN_ABOVE);
  return c;
}

void
lk_tune_choice_free (LkTuneChoice *choice)
{
  if (choice == NULL)
    return;
  if (choice->candidates != NULL)
    g_array_unref (choice->candidates);
  g_free (choice->name);
  g_free (choice->reason);
  g_free (choice->cache_path);
  g_free (choice);
}
