/* lk-diagnostics-window.c — race the kernels live
 *
 * For a developer asking "is this kernel really faster here, and by how
 * much?": the catalogue of lk-gates.h, run on a worker thread, each
 * repetition drawn as it lands. Shaped by three constraints:
 *
 * - The measuring thread must not wait on the UI, and a fast producer (a dot
 *   race lands a repetition every few milliseconds) must not flood the main
 *   loop: the worker appends each event to a locked queue, and a tick
 *   callback — installed only while a run is on — drains it once a frame.
 * - A measurement taken on a contended machine measures the contention: the
 *   page refuses to start while a library window scans, says while it runs
 *   that nothing else heavy should, and measures the FMA peak (which loads
 *   every core) before any gate may start, never during one.
 * - Each cell is judged by a one-cell LkSpeedGate, so the verdict, the
 *   summary line and the JSON are the CLI's, byte for byte, not a re-derived
 *   copy.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "timing/lk-cpu.h"
#include "lk-diagnostics-window.h"
#include "lk-file-dialog.h"
#include "lk-race-page.h"
#include "lk-result-panel.h"
#include "scan/lk-gates.h"
#include "scan/lk-kernels.h"
#include "scan/lk-tune.h"
#include "scan/lk-peak.h"
#include "lk-session.h"

/* The arm is "too small for the harness" when the harness's own cost per call
 * is more than this share of the faster arm's: above it, the ratio measures
 * the harness as much as the arms. */
#define HARNESS_SHARE_NOTE 0.05
/* The exported PNG: wide enough for a few hundred repetitions, within
 * LK_THUMBNAIL_MAX_SIDE. */
#define PNG_WIDTH          960
#define PNG_HEIGHT         600

typedef struct
{
  const LkGate *gate;
  const LkGateCell *info;
  char *unavailable;    /* why it does not run here, or NULL */
  GtkLabel *verdict;    /* the badge in the catalogue */
  GtkLabel *reason;     /* why it does not run here, in words under its name */
  GtkWidget *run;       /* its ▶ */
  LkTimingCell *result; /* the last verdict measured here, or NULL */
} CellRow;

typedef enum
{
  EVENT_HARNESS, /* value: the harness's cost per call, ns */
  EVENT_START,   /* cell starts: reps */
  EVENT_REP,     /* one repetition landed */
  EVENT_DONE,    /* cell judged: result */
  EVENT_FAILED,  /* cell did not run: text */
} EventKind;

typedef struct
{
  EventKind kind;
  guint cell;
  guint reps;
  double a_ns;
  double b_ns;
  gboolean a_went_first;
  double value;
  gboolean skipped; /* EVENT_FAILED: the cell does not run here */
  LkTimingCell *result;
  char *text;
} Event;

/* What a worker and the window share: the events the worker posts, under a
 * lock. Each holds a reference, so whichever ends last frees it. */
typedef struct
{
  gatomicrefcount ref;
  GMutex lock;
  GQueue events; /* Event */
} Feed;

/* A cell to measure, copied from its row: the worker never reads the
 * window's rows, which are the main thread's. */
typedef struct
{
  guint index; /* into self->rows */
  const LkGate *gate;
  const LkGateCell *info;
  char *unavailable; /* why it does not run here, or NULL */
} PlannedCell;

/* What the worker reads: fixed before it starts, and its own. */
typedef struct
{
  GArray *cells; /* PlannedCell */
  guint reps;
  guint64 iterations;
  guint64 seed;
  gboolean need_harness;
  Feed *feed;
} RunPlan;

struct _LkDiagnosticsWindow
{
  GtkApplicationWindow parent_instance;

  GtkLabel *cpu_label;
  GtkLabel *cores_label;
  GtkLabel *features_label;
  GtkLabel *kernel_label;
  GtkLabel *build_label;
  GtkLabel *scan_label;
  GtkLabel *peak_label;
  GtkLabel *harness_label;
  GtkLabel *build_warning;
  GtkSpinButton *reps_spin;
  GtkSpinButton *iterations_spin;
  GtkEntry *seed_entry;
  GtkBox *gates_box;
  GtkLabel *cell_title;
  GtkLabel *cell_subtitle;
  GtkLabel *status_label;
  LkRatioChart *chart;
  LkResultPanel *result_box;
  GtkLabel *bias_label;
  GtkLabel *harness_note;
  AdwViewStack *pages;
  AdwLeaflet *gates_leaflet;
  GtkWidget *cell_view;
  LkRacePage *race_page;
  GtkWidget *run_controls;
  GtkWidget *export_button;

  GArray *rows;         /* CellRow */
  GPtrArray *run_cells; /* LkTimingCell of the last run, for the export */
  double harness_ns;    /* 0 until measured */
  gboolean measuring_peak;
  gboolean disposed; /* a worker may finish after the widgets are gone */

  /* While a run is on. */
  GCancellable *cancellable;
  guint tick_id;
  guint current; /* the cell on the chart */
  /* The user opened a finished cell during a run: the chart stays on it
   * while the run goes on (its badges and status still update). */
  gboolean looking_back;
  guint live_reps; /* repetitions of the cell being measured so far */
  guint run_reps;
  guint64 run_seed;
  guint n_pass;
  guint n_loss;
  guint n_failed;

  /* Shared with the worker. */
  Feed *feed;
};

G_DEFINE_FINAL_TYPE (LkDiagnosticsWindow, lk_diagnostics_window, GTK_TYPE_APPLICATION_WINDOW)

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
/* clang-format off */
G_DEFINE_QUARK (lk-diagnostics-error-quark, lk_diagnostics_error)
/* clang-format on */
/* clang-format on */

static void
event_free (Event *event)
{
  g_clear_pointer (&event->result, lk_timing_cell_free);
  g_free (event->text);
  g_free (event);
}

static Feed *
feed_new (void)
{
  Feed *feed = g_new0 (Feed, 1);

  g_atomic_ref_count_init (&feed->ref);
  g_mutex_init (&feed->lock);
  g_queue_init (&feed->events);
  return feed;
}

static Feed *
feed_ref (Feed *feed)
{
  g_atomic_ref_count_inc (&feed->ref);
  return feed;
}

static void
feed_unref (Feed *feed)
{
  if (!g_atomic_ref_count_dec (&feed->ref))
    return;
  g_queue_clear_full (&feed->events, (GDestroyNotify) event_free);
  g_mutex_clear (&feed->lock);
  g_free (feed);
}

static void
planned_cell_clear (PlannedCell *cell)
{
  g_clear_pointer (&cell->unavailable, g_free);
}

static void
run_plan_free (RunPlan *plan)
{
  g_array_unref (plan->cells);
  g_clear_pointer (&plan->feed, feed_unref);
  g_free (plan);
}

static void
cell_row_clear (CellRow *row)
{
  g_clear_pointer (&row->unavailable, g_free);
  g_clear_pointer (&row->result, lk_timing_cell_free);
}

/* ---- the worker ---------------------------------------------------------- */

void (*lk_diagnostics_window_worker_hook) (GTask *task);

/* The workers are tasks without a source object: they read only what their
 * task owns (the plan, the feed) and the window's reference rides in the
 * callback's data, dropped there on the main thread. As the source object
 * the window went with the worker's last reference to the task, which GLib
 * may drop after the result landed: a widget finalized off GTK's thread. */

typedef struct
{
  Feed *feed;
  guint cell;
} RepContext;

static void
post (Feed *feed, Event *event)
{
  g_mutex_lock (&feed->lock);
  g_queue_push_tail (&feed->events, event);
  g_mutex_unlock (&feed->lock);
}

static void
on_rep (const LkPairedTiming *timing, guint rep, gpointer user_data)
{
  const RepContext *context = user_data;
  Event *event = g_new0 (Event, 1);

  event->kind = EVENT_REP;
  event->cell = context->cell;
  event->a_ns = timing->a_ns[rep];
  event->b_ns = timing->b_ns[rep];
  event->a_went_first = timing->a_went_first[rep];
  post (context->feed, event);
}

static LkTimingCell *
judge (const LkGate *gate, const LkGateCell *info, LkPairedTiming *timing)
{
  LkSpeedGate *speed_gate = lk_speed_gate_open (gate->name);
  const LkTimingCell *cell
      = info->contract == LK_CONTRACT_FASTER
            ? lk_speed_gate_faster (speed_gate, info->name, timing, info->a_label, info->b_label)
            : lk_speed_gate_not_slower (speed_gate, info->name, timing, info->a_label,
                                        info->b_label);
  LkTimingCell *copy = lk_timing_cell_copy (cell);

  /* The verdict is in the cell; a loss is not an error of the page's. */
  lk_speed_gate_finish (speed_gate, NULL);
  lk_speed_gate_free (speed_gate);
  return copy;
}

static void
run_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const RunPlan *plan = task_data;

  if (plan->need_harness)
    {
      Event *event = g_new0 (Event, 1);
      event->kind = EVENT_HARNESS;
      event->value = lk_harness_call_ns ();
      post (plan->feed, event);
    }
  for (guint k = 0; k < plan->cells->len && !g_cancellable_is_cancelled (cancellable); k++)
    {
      const PlannedCell *row = &g_array_index (plan->cells, PlannedCell, k);
      guint index = row->index;
      Event *event = g_new0 (Event, 1);
      event->cell = index;
      if (row->unavailable != NULL)
        {
          event->kind = EVENT_FAILED;
          event->skipped = TRUE;
          event->text = g_strdup_printf (_ ("skipped: %s"), row->unavailable);
          post (plan->feed, event);
          continue;
        }
      event->kind = EVENT_START;
      event->reps = plan->reps;
      post (plan->feed, event);

      RepContext context = { plan->feed, index };
      LkGateRunOptions options = { plan->reps, plan->iterations, plan->seed, on_rep, &context };
      g_autoptr (GError) error = NULL;
      LkPairedTiming *timing = lk_gate_cell_measure (row->info, &options, cancellable, &error);
      if (timing == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        break;
      event = g_new0 (Event, 1);
      event->cell = index;
      if (timing == NULL)
        {
          event->kind = EVENT_FAILED;
          event->text = g_strdup (error->message);
        }
      else
        {
          event->kind = EVENT_DONE;
          event->result = judge (row->gate, row->info, timing);
        }
      post (plan->feed, event);
    }
  g_task_return_boolean (task, TRUE);
  if (lk_diagnostics_window_worker_hook != NULL)
    lk_diagnostics_window_worker_hook (task);
}

/* ---- showing results ----------------------------------------------------- */

static void
set_badge (GtkLabel *badge, const LkTimingCell *result, const char *other)
{
  gtk_widget_remove_css_class (GTK_WIDGET (badge), "pass");
  gtk_widget_remove_css_class (GTK_WIDGET (badge), "loss");
  if (result != NULL)
    {
      gtk_label_set_text (badge, result->pass ? _ ("pass") : _ ("loss"));
      gtk_widget_add_css_class (GTK_WIDGET (badge), result->pass ? "pass" : "loss");
      gtk_widget_set_tooltip_text (GTK_WIDGET (badge), result->verdict);
    }
  else
    {
      gtk_label_set_text (badge, other);
      gtk_widget_set_tooltip_text (GTK_WIDGET (badge), NULL);
    }
}

static void
show_cell_title (LkDiagnosticsWindow *self, const CellRow *row)
{
  g_autofree char *title = g_strdup_printf ("%s / %s", row->gate->name, row->info->name);
  /* The contract in words, then why, unless the why only repeats it (issue
   * 30: "contract “faster”: faster"). */
  g_autofree char *contract
      = row->info->contract == LK_CONTRACT_FASTER
            /* Translators: a speed contract, "the AVX2 kernel must be faster than scalar" */
            ? g_strdup_printf (_ ("%s must be faster than %s"), row->info->a_label,
                               row->info->b_label)
            /* Translators: a speed contract, "NEON must be no slower than scalar" */
            : g_strdup_printf (_ ("%s must be no slower than %s"), row->info->a_label,
                               row->info->b_label);
  const char *reason = row->info->reason != NULL ? row->info->reason : "";
  const char *name = lk_contract_name (row->info->contract);
  /* The catalogue's reasons start with the contract ("faster: a SIMD
   * kernel exists only to beat…"), which the words above already say. */
  if (g_str_has_prefix (reason, name) && reason[strlen (name)] == ':')
    reason += strlen (name) + 1;
  else if (g_ascii_strcasecmp (reason, name) == 0)
    reason = "";
  while (*reason == ' ')
    reason++;
  g_autofree char *subtitle
      = reason[0] == '\0'
            ? g_strdup (contract)
            /* Translators: "NEON must be faster than scalar: the kernel's reason to exist" */
            : g_strdup_printf (_ ("%s: %s"), contract, reason);

  gtk_label_set_text (self->cell_title, title);
  gtk_label_set_text (self->cell_subtitle, subtitle);
}

/* Whether the order of the arms moved the ratios by more than a tenth of
 * the median ratio: then the position bias is said beside the verdict. A
 * tenth is a judgement (a bias of that size changes which side of a 10 %
 * margin a repetition falls), not a measured threshold. */
static gboolean
bias_is_large (const LkPairedTiming *timing)
{
  double bias = lk_paired_timing_first_position_bias (timing);
  double ratio = lk_paired_timing_median_ratio (timing);

  return isfinite (bias) && ratio > 0 && fabs (bias) > 0.1 * ratio;
}

/* The position bias in words. The ratio is B ÷ A, and the bias the median
 * ratio when A went first minus when B went first: below 0, each arm did
 * better when it ran second (B's time was lower after A, A's lower after
 * B), above 0 when it ran first. The coin that picks the order puts each
 * arm first about as often, so a bias spreads the ratios without moving
 * their median — that is what "kept it out of the ratio" claims, and it is
 * only claimed when the coin did split the repetitions about evenly. */
static char *
describe_bias (const LkPairedTiming *timing, const char *a_label, const char *b_label)
{
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  double bias = lk_paired_timing_first_position_bias (timing);

  if (!isfinite (bias))
    return g_strdup (_ ("Position bias: not measurable, one arm went first every time."));
  guint a_first = 0;
  for (guint i = 0; i < timing->reps; i++)
    a_first += timing->a_went_first[i] != 0;
  g_autofree char *head = g_strdup_printf (
      _ ("Position bias %s: the median ratio when %s went first minus when %s went first."),
      g_ascii_formatd (number, sizeof number, "%+.4f", bias), a_label, b_label);
  if (!bias_is_large (timing))
    /* Translators: follows "Position bias +0.0012: …" */
    return g_strdup_printf (_ ("%s Near 0: the order did not matter."), head);

  double ratio = lk_paired_timing_median_ratio (timing);
  /* Balanced: neither order has more than 60 % of the repetitions. */
  gboolean balanced = 10 * a_first <= 6 * timing->reps && 10 * a_first >= 4 * timing->reps;
  const char *which = bias < 0 ? _ ("Each arm ran faster when it went second")
                               : _ ("Each arm ran faster when it went first");
  g_autofree char *order
      = balanced
            ? g_strdup_printf (_ ("the coin put %s first in %u of %u repetitions, so the order "
                                  "was kept out of the median ratio, but each repetition is "
                                  "noisier and the verdict less sure."),
                               a_label, a_first, timing->reps)
            : g_strdup_printf (_ ("the coin put %s first in %u of %u repetitions, so the median "
                                  "ratio leans toward that order: run it again with more "
                                  "repetitions."),
                               a_label, a_first, timing->reps);
  /* Translators: "Position bias -0.5400: …. Each arm ran faster when it
   * went second, by 53 % of the median ratio 1.020; the coin put …" */
  return g_strdup_printf (_ ("%s %s, by %.0f %% of the median ratio %.3f; %s"), head, which,
                          100 * fabs (bias) / ratio, ratio, order);
}

static void
show_result (LkDiagnosticsWindow *self, const CellRow *row)
{
  const LkTimingCell *result = row->result;
  const LkPairedTiming *timing = result->timing;

  set_badge (lk_result_panel_get_badge (self->result_box), result, NULL);
  /* 64-bit numbers go in as text: xgettext cannot read G_GUINT64_FORMAT. */
  g_autofree char *iterations = g_strdup_printf ("%" G_GUINT64_FORMAT, timing->iterations);
  g_autofree char *seed = g_strdup_printf ("%" G_GUINT64_FORMAT, timing->seed);
  g_autofree char *reps = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "%u repetition", "%u repetitions", timing->reps), timing->reps);
  g_autofree char *calls = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "%s call", "%s calls", (gulong) timing->iterations),
      iterations);
  /* A large position bias qualifies the verdict where it is read, not only
   * in the line under it: a plain "pass" is all most readers take in. */
  g_autofree char *verdict
      = bias_is_large (timing)
            /* Translators: "pass — but the order mattered (see the position bias)" */
            ? g_strdup_printf (_ ("%s — but the order of the arms mattered (position bias below)"),
                               result->verdict)
            : g_strdup (result->verdict);
  /* Translators: "Median ratio 0.512 over 40 repetitions of 1,000 calls, seed 7: pass" */
  g_autofree char *detail
      = g_strdup_printf (_ ("Median ratio %.3f over %s of %s, seed %s: %s"),
                         lk_paired_timing_median_ratio (timing), reps, calls, seed, verdict);
  lk_result_panel_set_detail (self->result_box, detail);

  g_autofree char *line = lk_timing_cell_line (result);
  lk_result_panel_set_summary (self->result_box, line);

  g_autofree char *bias_text = describe_bias (timing, result->a_label, result->b_label);
  gtk_label_set_text (self->bias_label, bias_text);

  double faster
      = MIN (lk_paired_timing_median_a_ns (timing), lk_paired_timing_median_b_ns (timing));
  g_autofree char *note = NULL;
  gtk_widget_remove_css_class (GTK_WIDGET (self->harness_note), "dim-label");
  gtk_widget_remove_css_class (GTK_WIDGET (self->harness_note), "diagnostics-warning");
  if (self->harness_ns > 0 && faster > 0 && self->harness_ns > HARNESS_SHARE_NOTE * faster)
    {
      note = g_strdup_printf (_ ("Too small for the harness: the faster arm takes %.1f ns per call "
                                 "and the harness itself %.1f ns, so this ratio measures the "
                                 "harness too. Give each call more work (LkBatched)."),
                              faster, self->harness_ns);
      gtk_widget_add_css_class (GTK_WIDGET (self->harness_note), "diagnostics-warning");
    }
  else if (self->harness_ns > 0 && faster > 0)
    {
      note = g_strdup_printf (_ ("The harness costs %.2f ns per call, %.2f%% of the faster arm."),
                              self->harness_ns, 100 * self->harness_ns / faster);
      gtk_widget_add_css_class (GTK_WIDGET (self->harness_note), "dim-label");
    }
  gtk_label_set_text (self->harness_note, note != NULL ? note : "");
  gtk_widget_set_visible (GTK_WIDGET (self->result_box), TRUE);
}

static void
show_status (LkDiagnosticsWindow *self, const char *text)
{
  gtk_label_set_text (self->status_label, text);
}

static void
update_actions (LkDiagnosticsWindow *self)
{
  gboolean running = self->cancellable != NULL;
  gboolean idle = !running && !self->measuring_peak;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.run-all", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.run-cell", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.stop", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.export-json",
                                 !running && self->run_cells->len > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.export-png",
                                 lk_ratio_chart_get_n_points (self->chart) > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "diag.copy-summary",
                                 gtk_widget_get_visible (GTK_WIDGET (self->result_box)));
}

static void
show_harness (LkDiagnosticsWindow *self)
{
  g_autofree char *text = g_strdup_printf (_ ("%.2f ns per arm call"), self->harness_ns);

  gtk_label_set_text (self->harness_label, text);
}

static void
handle_event (LkDiagnosticsWindow *self, Event *event)
{
  CellRow *row = &g_array_index (self->rows, CellRow, event->cell);

  switch (event->kind)
    {
      case EVENT_HARNESS:
        self->harness_ns = event->value;
        show_harness (self);
        break;
      case EVENT_START:
        self->live_reps = 0;
        set_badge (row->verdict, NULL, _ ("running…"));
        if (self->looking_back)
          break;
        self->current = event->cell;
        show_cell_title (self, row);
        gtk_widget_set_visible (GTK_WIDGET (self->result_box), FALSE);
        lk_ratio_chart_reset (self->chart, row->info->a_label, row->info->b_label, event->reps);
        break;
      case EVENT_REP:
        {
          self->live_reps++;
          if (!self->looking_back)
            lk_ratio_chart_append (self->chart, event->a_ns, event->b_ns, event->a_went_first);
          g_autofree char *status = g_strdup_printf (
              _ ("Repetition %u of %u of %s / %s. Nothing else heavy should run until the gates "
                 "finish: a contended machine measures the contention."),
              self->live_reps, self->run_reps, row->gate->name, row->info->name);
          show_status (self, status);
        }
        break;
      case EVENT_DONE:
        g_clear_pointer (&row->result, lk_timing_cell_free);
        row->result = g_steal_pointer (&event->result);
        g_ptr_array_add (self->run_cells, lk_timing_cell_copy (row->result));
        set_badge (row->verdict, row->result, NULL);
        if (row->result->pass)
          self->n_pass++;
        else
          self->n_loss++;
        if (self->looking_back)
          break;
        self->current = event->cell;
        lk_ratio_chart_set_timing (self->chart, row->result->timing, row->result->a_label,
                                   row->result->b_label);
        show_result (self, row);
        break;
      case EVENT_FAILED:
        set_badge (row->verdict, NULL, event->skipped ? _ ("skipped") : _ ("failed"));
        gtk_widget_set_tooltip_text (GTK_WIDGET (row->verdict), event->text);
        gtk_label_set_text (row->reason, event->text);
        gtk_widget_set_visible (GTK_WIDGET (row->reason), TRUE);
        {
          g_autofree char *status
              = g_strdup_printf ("%s / %s: %s", row->gate->name, row->info->name, event->text);
          show_status (self, status);
        }
        self->n_failed++;
        break;
    }
  event_free (event);
}

static void
drain (LkDiagnosticsWindow *self)
{
  GQueue events = G_QUEUE_INIT;

  g_mutex_lock (&self->feed->lock);
  events = self->feed->events;
  g_queue_init (&self->feed->events);
  g_mutex_unlock (&self->feed->lock);

  Event *event;
  while ((event = g_queue_pop_head (&events)) != NULL)
    handle_event (self, event);
  update_actions (self);
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  drain (LK_DIAGNOSTICS_WINDOW (widget));
  return G_SOURCE_CONTINUE;
}

static void
on_run_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkDiagnosticsWindow) self = user_data;
  gboolean stopped = g_cancellable_is_cancelled (self->cancellable);
  g_autofree char *seed = g_strdup_printf ("%" G_GUINT64_FORMAT, self->run_seed);

  if (self->disposed)
    {
      g_clear_object (&self->cancellable);
      return;
    }
  drain (self);
  if (self->tick_id != 0)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
  self->tick_id = 0;
  g_clear_object (&self->cancellable);
  for (guint k = 0; k < self->rows->len; k++)
    {
      CellRow *row = &g_array_index (self->rows, CellRow, k);
      if (g_strcmp0 (gtk_label_get_text (row->verdict), _ ("running…")) == 0)
        set_badge (row->verdict, row->result, _ ("stopped"));
    }

  g_autofree char *status
      = stopped
            ? g_strdup_printf (_ ("Stopped before the next repetition. Measured: %u pass, %u "
                                  "loss, %u skipped or failed."),
                               self->n_pass, self->n_loss, self->n_failed)
            : g_strdup_printf (_ ("Finished: %u pass, %u loss, %u skipped or failed (seed %s)."),
                               self->n_pass, self->n_loss, self->n_failed, seed);
  show_status (self, status);
  update_actions (self);
}

/* ---- this machine -------------------------------------------------------- */

/* The last scan of any library open in this process (its session), as
 * GFLOP/s of its n(n−1)/2 dot products (the throughput `likeness-cli scan`
 * reports); and whether a session is loading or scanning right now. */
static gboolean
scan_state (LkDiagnosticsWindow *self, char **last_scan)
{
  g_autoptr (GPtrArray) sessions = lk_session_list_all ();
  gboolean busy = FALSE;

  if (last_scan != NULL)
    *last_scan = NULL;
  for (guint k = 0; k < sessions->len; k++)
    {
      LkSession *session = g_ptr_array_index (sessions, k);
      busy = busy || lk_session_is_loading (session);
      const LkLibrary *library = lk_session_get_library (session);
      if (library == NULL || last_scan == NULL || *last_scan != NULL)
        continue;
      double seconds = lk_session_get_scan_seconds (session);
      double n = (double) library->count;
      if (seconds > 0 && n >= 2)
        *last_scan = g_strdup_printf (_ ("%.1f GFLOP/s (%.0f faces of %u dimensions in %.2f s)"),
                                      n * (n - 1) / 2 * 2.0 * library->dim / seconds / 1e9, n,
                                      library->dim, seconds);
    }
  return busy;
}

static void
show_machine (LkDiagnosticsWindow *self)
{
  g_autofree char *features = lk_cpu_features_string (lk_cpu_features ());
  g_autofree char *cores = g_strdup_printf ("%u", lk_cpu_cores ());
  g_autoptr (GError) error = NULL;
  const LkKernel *kernel = lk_kernel_get (LK_KERNEL_AUTO, &error);

  gtk_label_set_text (self->cpu_label, lk_cpu_model_name ());
  gtk_label_set_text (self->cores_label, cores);
  gtk_label_set_text (self->features_label, *features ? features : _ ("none beyond the baseline"));
  /* What "auto" runs is measured (lk-tune.h): say what was remembered, or
   * that nothing was yet. */
  g_autofree char *cache = lk_tune_cache_path ();
  g_autofree char *key = lk_tune_cache_key_here (512);
  LkKernelId kid;
  LkPrefilterId pid;
  g_autofree char *choice = NULL;
  if (lk_tune_cache_lookup (cache, key, &kid, &pid))
    {
      g_autofree char *name = lk_tune_candidate_name (kid, pid);
      choice = g_strdup_printf (_ ("%s — measured fastest here for 512-d faces (%s)"), name, cache);
    }
  else if (kernel != NULL)
    choice = g_strdup_printf (_ ("%s alone until measured: the first scan of %u faces or more, "
                                 "or likeness-cli cpu --tune, races every candidate"),
                              kernel->name, LK_TUNE_SCAN_ABOVE);
  gtk_label_set_text (self->kernel_label, choice != NULL ? choice : error->message);
  gtk_label_set_text (self->build_label, LK_BUILD_TYPE);
#if !LK_RELEASE_BUILD
  g_autofree char *warning
      = g_strdup_printf (_ ("This is a %s build: verdicts measured here are about a debug build, "
                            "not the shipped program."),
                         LK_BUILD_TYPE);
  gtk_label_set_text (self->build_warning, warning);
  gtk_widget_set_visible (GTK_WIDGET (self->build_warning), TRUE);
#endif
  gtk_label_set_text (self->harness_label, _ ("measured with the first run"));
}

static void
show_last_scan (LkDiagnosticsWindow *self)
{
  g_autofree char *last_scan = NULL;

  scan_state (self, &last_scan);
  gtk_label_set_text (self->scan_label,
                      last_scan != NULL ? last_scan : _ ("no library scanned in this session"));
}

/* A library window may have scanned since: read it again on coming to the
 * front. */
static void
on_is_active (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  LkDiagnosticsWindow *self = LK_DIAGNOSTICS_WINDOW (object);

  if (gtk_window_is_active (GTK_WINDOW (self)))
    show_last_scan (self);
}

static void
peak_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  g_task_return_pointer (task, (gpointer) lk_peak_fma (), NULL);
  if (lk_diagnostics_window_worker_hook != NULL)
    lk_diagnostics_window_worker_hook (task);
}

static void
on_peak_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkDiagnosticsWindow) self = user_data;
  const LkPeak *peak = g_task_propagate_pointer (G_TASK (result), NULL);
  g_autofree char *text
      = g_strdup_printf (_ ("%.1f GFLOP/s on %u threads (%.1f per core, %s)"), peak->gflops,
                         peak->threads, peak->gflops_per_core, peak->isa);

  self->measuring_peak = FALSE;
  if (self->disposed)
    return;
  gtk_label_set_text (self->peak_label, text);
  update_actions (self);
}

/* ---- the catalogue ------------------------------------------------------- */

static gboolean show_cell (LkDiagnosticsWindow *self, guint index);

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *list_row, gpointer user_data)
{
  LkDiagnosticsWindow *self = user_data;
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (list_row), "lk-cell"));

  show_cell (self, index);
}

/* What a click on a cell's row does: a finished cell's chart and verdict come
 * back, during a run too (the chart then stays on it; a click on the cell
 * being measured follows the run again from its next cell). */
static gboolean
show_cell (LkDiagnosticsWindow *self, guint index)
{
  CellRow *row = &g_array_index (self->rows, CellRow, index);

  if (row->result == NULL)
    {
      if (self->cancellable != NULL && self->looking_back)
        {
          self->looking_back = FALSE;
          show_status (self, _ ("The chart follows the run again from its next cell."));
        }
      return FALSE;
    }
  self->looking_back = self->cancellable != NULL;
  self->current = index;
  adw_leaflet_set_visible_child (self->gates_leaflet, self->cell_view);
  show_cell_title (self, row);
  lk_ratio_chart_set_timing (self->chart, row->result->timing, row->result->a_label,
                             row->result->b_label);
  show_result (self, row);
  update_actions (self);
  return TRUE;
}

static GtkWidget *
build_cell_row (LkDiagnosticsWindow *self, CellRow *row, guint index)
{
  GtkWidget *list_row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *text = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *name = gtk_label_new (row->info->name);
  g_autofree char *what
      = g_strdup_printf (_ ("%s vs %s · %s"), row->info->a_label, row->info->b_label,
                         lk_contract_name (row->info->contract));
  GtkWidget *detail = gtk_label_new (what);
  GtkWidget *verdict = gtk_label_new (NULL);
  GtkWidget *run = gtk_button_new_from_icon_name ("media-playback-start-symbolic");
  g_autofree char *target = g_strdup_printf ("%s/%s", row->gate->name, row->info->name);

  gtk_widget_add_css_class (box, "diagnostics-row");
  gtk_label_set_xalign (GTK_LABEL (name), 0);
  /* A long cell name breaks rather than widen a phone's window. */
  gtk_label_set_wrap (GTK_LABEL (name), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (name), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (detail), 0);
  gtk_label_set_wrap (GTK_LABEL (detail), TRUE);
  gtk_widget_add_css_class (detail, "dim-label");
  gtk_widget_add_css_class (detail, "caption");
  gtk_widget_set_hexpand (text, TRUE);
  gtk_box_append (GTK_BOX (text), name);
  gtk_box_append (GTK_BOX (text), detail);
  /* Why a cell is skipped is the first thing asked about it: in the row,
   * not only in a tooltip. */
  GtkWidget *reason = gtk_label_new (row->unavailable);
  gtk_label_set_xalign (GTK_LABEL (reason), 0);
  gtk_label_set_wrap (GTK_LABEL (reason), TRUE);
  gtk_label_set_selectable (GTK_LABEL (reason), TRUE);
  gtk_widget_set_focusable (reason, FALSE);
  gtk_widget_add_css_class (reason, "caption");
  gtk_widget_add_css_class (reason, "diagnostics-warning");
  gtk_widget_set_visible (reason, row->unavailable != NULL);
  row->reason = GTK_LABEL (reason);
  gtk_box_append (GTK_BOX (text), reason);
  gtk_box_append (GTK_BOX (box), text);

  gtk_widget_add_css_class (verdict, "verdict-badge");
  gtk_widget_set_valign (verdict, GTK_ALIGN_CENTER);
  row->verdict = GTK_LABEL (verdict);
  set_badge (row->verdict, NULL, row->unavailable != NULL ? _ ("unavailable") : _ ("not run"));
  if (row->unavailable != NULL)
    gtk_widget_set_tooltip_text (verdict, row->unavailable);
  gtk_box_append (GTK_BOX (box), verdict);

  gtk_widget_add_css_class (run, "flat");
  gtk_widget_set_valign (run, GTK_ALIGN_CENTER);
  /* Greyed, the ▶ says why (a greyed button's tooltip still shows). */
  if (row->unavailable != NULL)
    {
      /* Translators: the tooltip of a cell's greyed ▶: "Cannot run here: no NEON (not an ARM CPU)"
       */
      g_autofree char *why = g_strdup_printf (_ ("Cannot run here: %s"), row->unavailable);
      gtk_widget_set_tooltip_text (run, why);
    }
  else
    gtk_widget_set_tooltip_text (run, _ ("Run this cell"));
  row->run = run;
  /* An action's enabled state overrides a widget's sensitivity: a cell
   * this machine cannot run gets no action, so its ▶ stays greyed (a
   * sensitivity alone left an active ▶ beside "not here"). */
  if (row->unavailable == NULL)
    {
      gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "diag.run-cell");
      gtk_actionable_set_action_target_value (GTK_ACTIONABLE (run), g_variant_new_string (target));
    }
  gtk_widget_set_sensitive (run, row->unavailable == NULL);
  gtk_box_append (GTK_BOX (box), run);

  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (list_row), box);
  g_object_set_data (G_OBJECT (list_row), "lk-cell", GUINT_TO_POINTER (index));
  return list_row;
}

static void
build_catalogue (LkDiagnosticsWindow *self)
{
  guint n_gates;
  const LkGate *gates = lk_gates (&n_gates);

  for (guint g = 0; g < n_gates; g++)
    {
      GtkWidget *header = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      GtkWidget *name = gtk_label_new (gates[g].name);
      GtkWidget *summary = gtk_label_new (gates[g].summary);
      GtkWidget *frame = gtk_frame_new (NULL);
      GtkWidget *list = gtk_list_box_new ();

      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_widget_add_css_class (name, "monospace");
      gtk_label_set_xalign (GTK_LABEL (summary), 0);
      gtk_label_set_wrap (GTK_LABEL (summary), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (summary), 40);
      gtk_widget_add_css_class (summary, "dim-label");
      gtk_widget_add_css_class (summary, "caption");
      gtk_box_append (GTK_BOX (header), name);
      gtk_box_append (GTK_BOX (header), summary);
      gtk_box_append (self->gates_box, header);

      gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
      g_signal_connect (list, "row-activated", G_CALLBACK (on_row_activated), self);
      for (guint c = 0; c < gates[g].n_cells; c++)
        {
          CellRow row = { &gates[g], &gates[g].cells[c], NULL, NULL, NULL, NULL };
          row.unavailable = lk_gate_cell_unavailable (row.info);
          g_array_append_val (self->rows, row);
          guint index = self->rows->len - 1;
          gtk_list_box_append (
              GTK_LIST_BOX (list),
              build_cell_row (self, &g_array_index (self->rows, CellRow, index), index));
        }
      gtk_frame_set_child (GTK_FRAME (frame), list);
      gtk_box_append (self->gates_box, frame);
    }
}

/* ---- actions ------------------------------------------------------------- */

static gboolean
parse_seed (LkDiagnosticsWindow *self, guint64 *seed, GError **error)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->seed_entry));
  gboolean hex = g_ascii_strncasecmp (text, "0x", 2) == 0;

  if (!g_ascii_string_to_unsigned (text + (hex ? 2 : 0), hex ? 16 : 10, 0, G_MAXUINT64, seed, NULL))
    {
      g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BAD_SEED,
                   _ ("The seed “%s” is not a whole number from 0 to 18446744073709551615 "
                      "(decimal, or hexadecimal after 0x)."),
                   text);
      return FALSE;
    }
  return TRUE;
}

static void
report_error (LkDiagnosticsWindow *self, const GError *error)
{
  gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "diagnostics-warning");
  show_status (self, error->message);
}

static void
action_run_all (GtkWidget *widget, const char *name, GVariant *parameter)
{
  g_autoptr (GError) error = NULL;

  if (!lk_diagnostics_window_run (LK_DIAGNOSTICS_WINDOW (widget), NULL, NULL, &error))
    report_error (LK_DIAGNOSTICS_WINDOW (widget), error);
}

static void
action_run_cell (GtkWidget *widget, const char *name, GVariant *parameter)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) parts = g_strsplit (g_variant_get_string (parameter, NULL), "/", 2);

  if (g_strv_length (parts) != 2
      || !lk_diagnostics_window_run (LK_DIAGNOSTICS_WINDOW (widget), parts[0], parts[1], &error))
    {
      if (error == NULL)
        g_set_error (&error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_CELL,
                     _ ("“%s” does not name a cell as GATE/CELL."),
                     g_variant_get_string (parameter, NULL));
      report_error (LK_DIAGNOSTICS_WINDOW (widget), error);
    }
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *parameter)
{
  lk_diagnostics_window_stop (LK_DIAGNOSTICS_WINDOW (widget));
}

static void
action_copy_summary (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkDiagnosticsWindow *self = LK_DIAGNOSTICS_WINDOW (widget);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget),
                          lk_result_panel_get_summary (self->result_box));
  show_status (self, _ ("Copied the summary line."));
}

typedef gboolean (*ExportFunc) (LkDiagnosticsWindow *self, const char *path, GError **error);

/* What a file chooser saves, by index (object data holds no function pointer). */
static const ExportFunc exporters[] = {
  lk_diagnostics_window_export_json,
  lk_diagnostics_window_export_png,
};

static void
export_to (LkDiagnosticsWindow *self, GFile *file, ExportFunc save)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *uri = g_file_get_uri (file);

  if (path == NULL)
    g_set_error (&error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                 _ ("Can only export to a local file, not %s."), uri);
  if (error == NULL && save (self, path, &error))
    {
      g_autofree char *status = g_strdup_printf (_ ("Exported to %s."), path);
      show_status (self, status);
    }
  else
    report_error (self, error);
}

static void
on_export_chosen (GtkWindow *parent, GFile *file, gpointer user_data)
{
  export_to (LK_DIAGNOSTICS_WINDOW (parent), file, exporters[GPOINTER_TO_UINT (user_data)]);
}

static void
choose_and_export (LkDiagnosticsWindow *self, const char *title, const char *suggested,
                   guint exporter)
{
  lk_file_dialog_save (GTK_WINDOW (self), title, _ ("_Export"), suggested, on_export_chosen,
                       GUINT_TO_POINTER (exporter));
}

static void
action_export_json (GtkWidget *widget, const char *name, GVariant *parameter)
{
  choose_and_export (LK_DIAGNOSTICS_WINDOW (widget), _ ("Export the Run as JSON"),
                     "likeness-gates.json", 0);
}

static void
action_export_png (GtkWidget *widget, const char *name, GVariant *parameter)
{
  choose_and_export (LK_DIAGNOSTICS_WINDOW (widget), _ ("Export the Chart as PNG"),
                     "likeness-chart.png", 1);
}

/* The header's Run All, Stop and Export act on the gates: shown with them,
 * the race page has its own Run and Stop. */
static void
on_page_changed (LkDiagnosticsWindow *self)
{
  gboolean gates = g_strcmp0 (adw_view_stack_get_visible_child_name (self->pages), "gates") == 0;

  gtk_widget_set_visible (self->run_controls, gates);
  gtk_widget_set_visible (self->export_button, gates);
}

/* Folded, the gates and the cell are one page at a time: back to the gates. */
static void
on_back_clicked (LkDiagnosticsWindow *self)
{
  adw_leaflet_navigate (self->gates_leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

/* ---- GObject ------------------------------------------------------------- */

static void
lk_diagnostics_window_dispose (GObject *object)
{
  LkDiagnosticsWindow *self = LK_DIAGNOSTICS_WINDOW (object);

  /* A worker's callback holds a reference to the window until it lands,
   * and the worker one to the feed; here it is only told to stop. */
  self->disposed = TRUE;
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_DIAGNOSTICS_WINDOW);
  G_OBJECT_CLASS (lk_diagnostics_window_parent_class)->dispose (object);
}

static void
lk_diagnostics_window_finalize (GObject *object)
{
  LkDiagnosticsWindow *self = LK_DIAGNOSTICS_WINDOW (object);

  feed_unref (self->feed);
  g_array_unref (self->rows);
  g_ptr_array_unref (self->run_cells);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (lk_diagnostics_window_parent_class)->finalize (object);
}

static void
lk_diagnostics_window_constructed (GObject *object)
{
  LkDiagnosticsWindow *self = LK_DIAGNOSTICS_WINDOW (object);

  G_OBJECT_CLASS (lk_diagnostics_window_parent_class)->constructed (object);
  show_machine (self);
  show_last_scan (self);
  g_signal_connect (self, "notify::is-active", G_CALLBACK (on_is_active), NULL);

  g_autoptr (GTask) task = g_task_new (NULL, NULL, on_peak_done, g_object_ref (self));
  gtk_label_set_text (self->peak_label, _ ("measuring…"));
  self->measuring_peak = TRUE;
  g_task_run_in_thread (task, peak_thread);
  update_actions (self);
}

static void
lk_diagnostics_window_class_init (LkDiagnosticsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_diagnostics_window_dispose;
  object_class->finalize = lk_diagnostics_window_finalize;
  object_class->constructed = lk_diagnostics_window_constructed;

  g_type_ensure (LK_TYPE_RATIO_CHART);
  g_type_ensure (LK_TYPE_RACE_PAGE);
  g_type_ensure (LK_TYPE_RESULT_PANEL);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-diagnostics-window.ui");
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, cpu_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, cores_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, features_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, kernel_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, build_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, scan_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, peak_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, harness_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, build_warning);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, reps_spin);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, iterations_spin);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, seed_entry);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, gates_box);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, cell_title);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, cell_subtitle);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, status_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, chart);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, result_box);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, bias_label);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, harness_note);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, pages);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, gates_leaflet);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, cell_view);
  gtk_widget_class_bind_template_callback (widget_class, on_back_clicked);
  /* Reached by the tests only (gtk_widget_get_template_child). */
  gtk_widget_class_bind_template_child_full (widget_class, "back_button", FALSE, 0);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, race_page);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, run_controls);
  gtk_widget_class_bind_template_child (widget_class, LkDiagnosticsWindow, export_button);

  gtk_widget_class_install_action (widget_class, "diag.run-all", NULL, action_run_all);
  gtk_widget_class_install_action (widget_class, "diag.run-cell", "s", action_run_cell);
  gtk_widget_class_install_action (widget_class, "diag.stop", NULL, action_stop);
  gtk_widget_class_install_action (widget_class, "diag.copy-summary", NULL, action_copy_summary);
  gtk_widget_class_install_action (widget_class, "diag.export-json", NULL, action_export_json);
  gtk_widget_class_install_action (widget_class, "diag.export-png", NULL, action_export_png);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_period, GDK_CONTROL_MASK, "diag.stop",
                                       NULL);
}

static void
lk_diagnostics_window_init (LkDiagnosticsWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->feed = feed_new ();
  self->rows = g_array_new (FALSE, TRUE, sizeof (CellRow));
  g_array_set_clear_func (self->rows, (GDestroyNotify) cell_row_clear);
  self->run_cells = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_timing_cell_free);
  gtk_spin_button_set_value (self->reps_spin, LK_GATES_DEFAULT_REPS);
  build_catalogue (self);
  g_signal_connect_swapped (self->pages, "notify::visible-child-name", G_CALLBACK (on_page_changed),
                            self);
}

/* ---- public API ---------------------------------------------------------- */

LkDiagnosticsWindow *
lk_diagnostics_window_new (GtkApplication *application)
{
  return g_object_new (LK_TYPE_DIAGNOSTICS_WINDOW, "application", application, NULL);
}

gboolean
lk_diagnostics_window_run (LkDiagnosticsWindow *self, const char *gate, const char *cell,
                           GError **error)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);

  if (self->cancellable != NULL || self->measuring_peak)
    {
      g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BUSY,
                   self->measuring_peak
                       ? _ ("Still measuring this machine’s FMA peak; try again in a moment.")
                       : _ ("Gates are already running; stop them first."));
      return FALSE;
    }
  g_autofree char *last_scan = NULL;
  if (scan_state (self, &last_scan))
    {
      g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_BUSY,
                   _ ("A library window is loading or scanning. Wait for it to finish: a gate "
                      "measured beside a scan measures the scan."));
      return FALSE;
    }
  gtk_label_set_text (self->scan_label,
                      last_scan != NULL ? last_scan : _ ("no library scanned in this session"));

  RunPlan *plan = g_new0 (RunPlan, 1);
  plan->cells = g_array_new (FALSE, FALSE, sizeof (PlannedCell));
  g_array_set_clear_func (plan->cells, (GDestroyNotify) planned_cell_clear);
  for (guint k = 0; k < self->rows->len; k++)
    {
      const CellRow *row = &g_array_index (self->rows, CellRow, k);
      if ((gate == NULL || g_strcmp0 (row->gate->name, gate) == 0)
          && (cell == NULL || g_strcmp0 (row->info->name, cell) == 0))
        {
          PlannedCell planned = { k, row->gate, row->info, g_strdup (row->unavailable) };
          g_array_append_val (plan->cells, planned);
        }
    }
  if (plan->cells->len == 0 || !parse_seed (self, &plan->seed, error))
    {
      if (plan->cells->len == 0)
        g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_CELL,
                     _ ("There is no cell “%s” in a gate “%s”."), cell ? cell : "*",
                     gate ? gate : "*");
      run_plan_free (plan);
      return FALSE;
    }
  plan->reps = (guint) gtk_spin_button_get_value_as_int (self->reps_spin);
  plan->iterations = (guint64) gtk_spin_button_get_value (self->iterations_spin);
  plan->need_harness = self->harness_ns == 0;
  plan->feed = feed_ref (self->feed);

  self->run_reps = plan->reps;
  self->run_seed = plan->seed;
  self->n_pass = self->n_loss = self->n_failed = 0;
  g_ptr_array_set_size (self->run_cells, 0);
  self->cancellable = g_cancellable_new ();
  self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), on_tick, NULL, NULL);
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "diagnostics-warning");
  show_status (self, _ ("Starting. Nothing else heavy should run until the gates finish: a "
                        "contended machine measures the contention."));
  adw_leaflet_set_visible_child (self->gates_leaflet, self->cell_view);
  update_actions (self);

  g_autoptr (GTask) task = g_task_new (NULL, self->cancellable, on_run_done, g_object_ref (self));
  g_task_set_task_data (task, plan, (GDestroyNotify) run_plan_free);
  g_task_run_in_thread (task, run_thread);
  return TRUE;
}

void
lk_diagnostics_window_stop (LkDiagnosticsWindow *self)
{
  g_return_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self));

  if (self->cancellable != NULL)
    {
      g_cancellable_cancel (self->cancellable);
      show_status (self, _ ("Stopping before the next repetition…"));
    }
}

gboolean
lk_diagnostics_window_is_busy (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);

  return self->cancellable != NULL || self->measuring_peak;
}

void
lk_diagnostics_window_set_reps (LkDiagnosticsWindow *self, guint reps)
{
  g_return_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self));

  gtk_spin_button_set_value (self->reps_spin, reps);
}

void
lk_diagnostics_window_set_iterations (LkDiagnosticsWindow *self, guint64 iterations)
{
  g_return_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self));

  gtk_spin_button_set_value (self->iterations_spin, (double) iterations);
}

void
lk_diagnostics_window_set_seed (LkDiagnosticsWindow *self, guint64 seed)
{
  g_return_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self));

  g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT, seed);
  gtk_editable_set_text (GTK_EDITABLE (self->seed_entry), text);
}

LkRacePage *
lk_diagnostics_window_show_race_page (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  adw_view_stack_set_visible_child_name (self->pages, "race");
  return self->race_page;
}

LkRatioChart *
lk_diagnostics_window_get_chart (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return self->chart;
}

const char *
lk_diagnostics_window_get_status (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_label_get_text (self->status_label);
}

const char *
lk_diagnostics_window_get_verdict (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? gtk_label_get_text (lk_result_panel_get_badge (self->result_box))
             : "";
}

const char *
lk_diagnostics_window_get_summary (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? lk_result_panel_get_summary (self->result_box)
             : "";
}

gboolean
lk_diagnostics_window_export_json (LkDiagnosticsWindow *self, const char *path, GError **error)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);

  if (self->run_cells->len == 0)
    {
      g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_RESULT,
                   _ ("Nothing to export to %s: no cell has finished in the last run."), path);
      return FALSE;
    }
  return lk_timing_save_json (path, (LkTimingCell *const *) self->run_cells->pdata,
                              self->run_cells->len, error);
}

gboolean
lk_diagnostics_window_show_cell (LkDiagnosticsWindow *self, const char *gate, const char *cell)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);

  for (guint k = 0; k < self->rows->len; k++)
    {
      const CellRow *row = &g_array_index (self->rows, CellRow, k);
      if (g_strcmp0 (row->gate->name, gate) == 0 && g_strcmp0 (row->info->name, cell) == 0)
        return show_cell (self, k);
    }
  return FALSE;
}

const char *
lk_diagnostics_window_get_reason (LkDiagnosticsWindow *self, const char *gate, const char *cell)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  for (guint k = 0; k < self->rows->len; k++)
    {
      const CellRow *row = &g_array_index (self->rows, CellRow, k);
      if (g_strcmp0 (row->gate->name, gate) == 0 && g_strcmp0 (row->info->name, cell) == 0)
        return gtk_widget_get_visible (GTK_WIDGET (row->reason)) ? gtk_label_get_text (row->reason)
                                                                 : NULL;
    }
  return NULL;
}

char *
lk_diagnostics_window_dup_png_caption (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  const CellRow *row = self->current < self->rows->len
                           ? &g_array_index (self->rows, CellRow, self->current)
                           : NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d %H:%M");
  const char *verdict
      = row != NULL && row->result != NULL ? row->result->verdict : _ ("not finished");

  if (row == NULL)
    return g_strdup (date);
  /* Translators: the exported chart's caption, "gate / cell — pass — YYYY-MM-DD HH:MM" */
  return g_strdup_printf (_ ("%s / %s — %s — %s"), row->gate->name, row->info->name, verdict, date);
}

gboolean
lk_diagnostics_window_export_png (LkDiagnosticsWindow *self, const char *path, GError **error)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);

  if (lk_ratio_chart_get_n_points (self->chart) == 0)
    {
      g_set_error (error, LK_DIAGNOSTICS_ERROR, LK_DIAGNOSTICS_ERROR_NO_RESULT,
                   _ ("Nothing to export to %s: the chart has no repetition yet."), path);
      return FALSE;
    }
  g_autofree char *caption = lk_diagnostics_window_dup_png_caption (self);
  g_autoptr (LkThumbnail) image
      = lk_ratio_chart_render (self->chart, PNG_WIDTH, PNG_HEIGHT, caption, error);
  return image != NULL && lk_thumbnail_save (image, path, error);
}

GtkWidget *
lk_diagnostics_window_get_run_button (LkDiagnosticsWindow *self, const char *gate, const char *cell)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  for (guint k = 0; k < self->rows->len; k++)
    {
      const CellRow *row = &g_array_index (self->rows, CellRow, k);
      if (g_strcmp0 (row->gate->name, gate) == 0 && g_strcmp0 (row->info->name, cell) == 0)
        return row->run;
    }
  return NULL;
}

const char *
lk_diagnostics_window_get_cell_subtitle (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_label_get_text (self->cell_subtitle);
}

const char *
lk_diagnostics_window_get_verdict_detail (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? lk_result_panel_get_detail (self->result_box)
             : "";
}

const char *
lk_diagnostics_window_get_bias_text (LkDiagnosticsWindow *self)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? gtk_label_get_text (self->bias_label)
             : "";
}

gboolean
lk_diagnostics_window_show_timing (LkDiagnosticsWindow *self, const char *gate, const char *cell,
                                   const LkPairedTiming *timing)
{
  g_return_val_if_fail (LK_IS_DIAGNOSTICS_WINDOW (self), FALSE);
  g_return_val_if_fail (timing != NULL, FALSE);

  for (guint k = 0; k < self->rows->len; k++)
    {
      CellRow *row = &g_array_index (self->rows, CellRow, k);
      if (g_strcmp0 (row->gate->name, gate) != 0 || g_strcmp0 (row->info->name, cell) != 0)
        continue;
      g_clear_pointer (&row->result, lk_timing_cell_free);
      /* The gate takes the copy. */
      row->result = judge (row->gate, row->info, lk_paired_timing_copy (timing));
      set_badge (row->verdict, row->result, NULL);
      return show_cell (self, k);
    }
  return FALSE;
}
