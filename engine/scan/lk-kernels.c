/* lk-kernels.c — which kernels are built in, and which one runs
 *
 * Compiled with the project's baseline flags, like all of the engine but the
 * kernel files themselves: this file only reads lk_cpu_features() and hands
 * out a table entry, so it must be safe to run on any CPU. Which kernels were
 * built is decided by engine/meson.build (compiler support and target CPU
 * family) and arrives here through lk-kernels-config.h.
 */
#include "config.h"

#include "lk-kernels-config.h"
#include "lk-kernel-tile.h"

#include <string.h>

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-kernel-error-quark, lk_kernel_error)
/* clang-format on */

static const LkKernel *const compiled[] = {
  &lk_kernel_portable,
#if LK_HAVE_KERNEL_AVX2
  &lk_kernel_avx2,
#endif
#if LK_HAVE_KERNEL_AVX512
  &lk_kernel_avx512,
#endif
#if LK_HAVE_KERNEL_NEON
  &lk_kernel_neon,
#endif
};

static const char *const id_names[] = {
  [LK_KERNEL_AUTO] = "auto",     [LK_KERNEL_PORTABLE] = "portable", [LK_KERNEL_AVX2] = "avx2",
  [LK_KERNEL_AVX512] = "avx512", [LK_KERNEL_NEON] = "neon",
};

const LkKernel *const *
lk_kernels_compiled (gsize *n)
{
  *n = G_N_ELEMENTS (compiled);
  return compiled;
}

gboolean
lk_kernel_runs_here (const LkKernel *kernel)
{
  return (lk_cpu_features () & kernel->needs) == kernel->needs;
}

const LkKernel *
lk_kernel_get (LkKernelId id, GError **error)
{
  if (id == LK_KERNEL_AUTO)
    {
      /* The table lists wider kernels later; the last that runs is the widest. */
      const LkKernel *best = compiled[0];
      for (gsize k = 0; k < G_N_ELEMENTS (compiled); k++)
        if (lk_kernel_runs_here (compiled[k]))
          best = compiled[k];
      return best;
    }

  const char *name = lk_kernel_id_to_string (id);
  for (gsize k = 0; k < G_N_ELEMENTS (compiled); k++)
    {
      if (compiled[k]->id != id)
        continue;
      if (lk_kernel_runs_here (compiled[k]))
        return compiled[k];
      g_autofree char *needs = lk_cpu_features_string (compiled[k]->needs);
      g_autofree char *has = lk_cpu_features_string (lk_cpu_features ());
      g_set_error (error, LK_KERNEL_ERROR, LK_KERNEL_ERROR_UNSUPPORTED,
                   "The %s kernel needs %s, which this processor (%s) lacks; it has: %s. "
                   "Kernel “auto” picks the widest kernel this processor runs",
                   name, needs, lk_cpu_model_name (), *has ? has : "no SIMD extensions");
      return NULL;
    }
  g_set_error (error, LK_KERNEL_ERROR, LK_KERNEL_ERROR_UNSUPPORTED,
               "The %s kernel is not built into this program (it is built only for %s); "
               "kernel “auto” picks the widest kernel this processor runs",
               name ? name : "requested",
               id == LK_KERNEL_NEON ? "aarch64" : "x86-64 with a compiler that supports it");
  return NULL;
}

const char *
lk_kernel_id_to_string (LkKernelId id)
{
  if ((guint) id >= G_N_ELEMENTS (id_names))
    return NULL;
  return id_names[id];
}

gboolean
lk_kernel_id_from_string (const char *name, LkKernelId *id)
{
  for (guint k = 0; k < G_N_ELEMENTS (id_names); k++)
    if (strcmp (name, id_names[k]) == 0)
      {
        *id = (LkKernelId) k;
        return TRUE;
      }
  return FALSE;
}
