/* lk-cli-scan.c — `likeness-cli scan`: the exact pair scan, headless
 *
 * The same lk_scan() the window runs, without a window: for scripting, for
 * libraries too big to wait on a GUI for, and for measuring the kernels. The
 * summary line is machine-readable (key=value, or one JSON object with
 * --json) and goes to stdout; the progress bar goes to stderr, and only when
 * stderr is a terminal, so redirected output never carries escape codes.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "people/lk-calibrate.h"
#include "lk-cli.h"
#include "lk-session.h"
#include "scan/lk-kernels.h"
#include "library/lk-library.h"
#include "scan/lk-scan.h"

#define BAR_WIDTH 40

static void
progress_bar_cb (double fraction, gpointer data)
{
  char bar[BAR_WIDTH + 1];
  int filled = (int) (fraction * BAR_WIDTH);

  for (int k = 0; k < BAR_WIDTH; k++)
    bar[k] = k < filled ? '#' : '.';
  bar[BAR_WIDTH] = '\0';
  fprintf (stderr, "\rscan [%s] %3d%%", bar, (int) (fraction * 100));
  if (fraction >= 1.0)
    fputs ("\r\033[K", stderr);
  fflush (stderr);
}

static char *
format_double (const char *format, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buf, sizeof buf, format, value));
}

/* One line per pair, i TAB j TAB probability, in (i, j) order. "-" is
 * stdout; a file is replaced atomically, so a full disk leaves the old one. */
static gboolean
write_pairs (const char *path, const GArray *pairs, GError **error)
{
  g_autoptr (GString) text = g_string_sized_new (pairs->len * 24 + 1);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  for (guint k = 0; k < pairs->len; k++)
    {
      const LkPair *p = &g_array_index (pairs, LkPair, k);
      g_string_append_printf (text, "%u\t%u\t%s\n", p->i, p->j,
                              g_ascii_formatd (buf, sizeof buf, "%.9g", p->probability));
    }

  if (g_strcmp0 (path, "-") != 0)
    {
      g_autoptr (GError) local = NULL;
      if (!g_file_set_contents (path, text->str, text->len, &local))
        {
          g_set_error (error, local->domain, local->code, "Could not write the pairs to %s: %s",
                       path, local->message);
          return FALSE;
        }
      return TRUE;
    }
  if (fwrite (text->str, 1, text->len, stdout) != text->len || fflush (stdout) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "Could not write the pairs to standard output: %s", g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* "A:B" or "A:" (to the last face) → [A, B); FALSE with a message naming
 * what is wrong. Whether B fits the library is lk_scan's to say. */
static gboolean
parse_rows (const char *text, gsize n, gsize *begin, gsize *end)
{
  g_auto (GStrv) parts = g_strsplit (text, ":", -1);
  guint64 a, b = n;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXSIZE, &a, NULL)
      || (*parts[1] != '\0' && !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXSIZE, &b, NULL)))
    {
      fprintf (stderr,
               _ ("likeness-cli scan: --rows %s: expected A:B (the pairs (i, j) with "
                  "A ≤ i < B and j > i) or A: (to the last face), A and B face indices\n"),
               text);
      return FALSE;
    }
  *begin = (gsize) a;
  *end = (gsize) b;
  return TRUE;
}

static void
print_summary (FILE *out, const LkFaces *faces, const LkScanOptions *options, const LkScanResult *r,
               double min_probability, gboolean json)
{
  gsize from = options->row_range ? options->row_begin : 0;
  gsize to = options->row_range ? options->row_end : faces->n;
  double pairs = 0;
  for (gsize i = from; i < to; i++)
    pairs += (double) (faces->n - 1 - i);
  double flops = pairs * 2.0 * faces->dim;
  double gflops = r->seconds > 0 ? flops / r->seconds / 1e9 : 0;

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "faces");
      json_builder_add_int_value (b, faces->n);
      json_builder_set_member_name (b, "dim");
      json_builder_add_int_value (b, faces->dim);
      json_builder_set_member_name (b, "pairs");
      json_builder_add_int_value (b, r->pairs->len);
      json_builder_set_member_name (b, "seconds");
      json_builder_add_double_value (b, r->seconds);
      json_builder_set_member_name (b, "gflops");
      json_builder_add_double_value (b, gflops);
      json_builder_set_member_name (b, "kernel");
      json_builder_add_string_value (b, r->kernel);
      json_builder_set_member_name (b, "first_pass");
      json_builder_add_string_value (b, r->prefilter);
      json_builder_set_member_name (b, "choice");
      json_builder_add_string_value (b, r->choice);
      json_builder_set_member_name (b, "threads");
      json_builder_add_int_value (b, r->threads);
      json_builder_set_member_name (b, "near_boundary");
      json_builder_add_int_value (b, (gint64) r->near_boundary);
      json_builder_set_member_name (b, "min_probability");
      json_builder_add_double_value (b, min_probability);
      json_builder_set_member_name (b, "row_begin");
      json_builder_add_int_value (b, (gint64) from);
      json_builder_set_member_name (b, "row_end");
      json_builder_add_int_value (b, (gint64) to);
      json_builder_end_object (b);
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      g_autofree char *text = json_to_string (root, FALSE);
      fprintf (out, "%s\n", text);
      return;
    }

  g_autofree char *seconds = format_double ("%.3f", r->seconds);
  g_autofree char *rate = format_double ("%.2f", gflops);
  g_autofree char *rows
      = options->row_range
            ? g_strdup_printf (" rows=%" G_GSIZE_FORMAT ":%" G_GSIZE_FORMAT, from, to)
            : g_strdup ("");
  fprintf (out,
           "scan faces=%" G_GSIZE_FORMAT " dim=%u pairs=%u seconds=%s gflops=%s kernel=%s "
           "first_pass=%s threads=%u%s\nchoice: %s\n",
           faces->n, faces->dim, r->pairs->len, seconds, rate, r->kernel, r->prefilter, r->threads,
           rows, r->choice);
}

/* The options' values, checked: FALSE (with a message) on bad usage.
 * *min_probability is NAN when not given (the library's applies). */
static gboolean
check_options (const char *kernel_arg, int threads, const char *min_probability_arg,
               LkKernelId *kernel, double *min_probability)
{
  *kernel = LK_KERNEL_AUTO;
  if (kernel_arg != NULL && !lk_kernel_id_from_string (kernel_arg, kernel))
    {
      fprintf (stderr,
               _ ("likeness-cli scan: unknown kernel “%s”; expected auto, portable, avx2, "
                  "avx512 or neon\n"),
               kernel_arg);
      return FALSE;
    }
  if (threads < 0)
    {
      fprintf (stderr, _ ("likeness-cli scan: --threads %d: expected 0 (one per core) or more\n"),
               threads);
      return FALSE;
    }
  *min_probability = NAN;
  if (min_probability_arg != NULL)
    {
      char *end = NULL;
      *min_probability = g_ascii_strtod (min_probability_arg, &end);
      if (end == min_probability_arg || *end != '\0'
          || !(*min_probability > 0 && *min_probability < 1))
        {
          fprintf (stderr,
                   _ ("likeness-cli scan: --min-probability %s: expected a number strictly "
                      "between 0 and 1\n"),
                   min_probability_arg);
          return FALSE;
        }
    }

  return TRUE;
}

/* A calibration that makes too many random pairs candidates would make the
 * scan slow and its people wrong: said before the scan, with what to do. */
static void
warn_guard (const LkLibrary *library, const LkCalibration *calibration, const char *source,
            double min_probability)
{
  LkCalibrationGuard guard;
  g_autofree char *warning = NULL;
  lk_calibration_guard (library, calibration, min_probability, LK_CALIBRATION_GUARD_SAMPLES, 1,
                        &guard);
  if (lk_calibration_guard_fails (&guard, &warning))
    fprintf (stderr,
             _ ("likeness-cli: warning: %s (%u of %u random pairs with the %s calibration, a = %g, "
                "b = %g) — try likeness-cli calibrate --from estimate %s\n"),
             warning, guard.candidates, guard.sampled, source, calibration->a, calibration->b,
             library->folder);
}

int
lk_cli_scan (int argc, char **argv)
{
  g_autofree char *min_probability_arg = NULL;
  g_autofree char *kernel_arg = NULL;
  g_autofree char *pairs_path = NULL;
  g_autofree char *rows_arg = NULL;
  int threads = 0;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "min-probability", 0, 0, G_OPTION_ARG_STRING, &min_probability_arg,
      N_ ("Return pairs whose calibrated probability reaches P, in (0, 1) (default: the "
          "library's)"),
      "P" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, N_ ("Worker threads (default 0: one per core)"),
      "N" },
    { "kernel", 0, 0, G_OPTION_ARG_STRING, &kernel_arg,
      N_ ("Dot-product kernel: auto, portable, avx2, avx512 or neon (default: auto)"), "K" },
    { "pairs", 0, 0, G_OPTION_ARG_FILENAME, &pairs_path,
      N_ ("Write every pair to FILE (“-”: stdout), one line each: i TAB j TAB probability"),
      "FILE" },
    { "rows", 0, 0, G_OPTION_ARG_STRING, &rows_arg,
      N_ ("Only the pairs (i, j) with A ≤ i < B (and j > i): one shard of the scan; shards that "
          "cover 0:N concatenate into exactly the full scan's pairs"),
      "A:B" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_ ("Print the summary as one JSON object"), NULL },
    { NULL },
  };

  if (!lk_cli_parse ("scan", "LIBRARY",
                     N_ ("Find every pair of faces that could be the same person, exactly, and "
                         "print how long it took."),
                     entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;

  LkKernelId kernel;
  double min_probability;
  if (!check_options (kernel_arg, threads, min_probability_arg, &kernel, &min_probability))
    return LK_CLI_USAGE;

  g_autoptr (GError) error = NULL;
  /* The session for its calibration: review.json's when the user chose one
   * (likeness-cli calibrate), else the library's. A corrupt review.json is
   * not this command's business: it scans with the library's. */
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  lk_session_set_start_over (session, TRUE);
  if (!lk_session_open (session, &error))
    return lk_cli_fail (error);
  const LkLibrary *library = lk_session_get_library (session);
  const char *source = NULL;
  const LkCalibration *calibration = lk_session_get_calibration (session, &source);
  if (isnan (min_probability))
    min_probability = library->min_probability;
  warn_guard (library, calibration, source, min_probability);

  LkFaces faces;
  lk_faces_from_library (&faces, library);
  gboolean show_bar = isatty (STDERR_FILENO);
  LkScanOptions options = {
    .kernel = kernel,
    .threads = (guint) threads,
    .progress = show_bar ? progress_bar_cb : NULL,
  };
  if (rows_arg != NULL)
    {
      if (!parse_rows (rows_arg, faces.n, &options.row_begin, &options.row_end))
        return LK_CLI_USAGE;
      options.row_range = TRUE;
    }
  g_autoptr (LkScanResult) result
      = lk_scan (&faces, calibration, min_probability, &options, NULL, &error);
  if (result == NULL)
    return lk_cli_fail (error);

  if (pairs_path != NULL && !write_pairs (pairs_path, result->pairs, &error))
    return lk_cli_fail (error);
  /* With the pairs on stdout, the summary moves to stderr out of their way. */
  print_summary (g_strcmp0 (pairs_path, "-") == 0 ? stderr : stdout, &faces, &options, result,
                 min_probability, json);
  if (result->near_boundary > 0)
    fprintf (stderr,
             ngettext ("likeness-cli scan: %llu pair lies within %g of the bar's cosine; a kernel "
                       "that sums in another order may decide it the other way\n",
                       "likeness-cli scan: %llu pairs lie within %g of the bar's cosine; a kernel "
                       "that sums in another order may decide them the other way\n",
                       (unsigned long) MIN (result->near_boundary, G_MAXULONG)),
             (unsigned long long) result->near_boundary, LK_SCAN_NEAR_BOUNDARY);
  return LK_CLI_OK;
}
