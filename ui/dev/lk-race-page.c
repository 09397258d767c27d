/* lk-race-page.c — the diagnostics window's "Race Commands" page
 *
 * `likeness-cli race` with a chart: two command lines, Run and Stop, each
 * repetition's paired ratio drawn as it lands (the gates' LkRatioChart:
 * coloured by the arm that went first, running median, resolution band,
 * wins), then the verdict and the CLI's own summary line, from the same
 * lk_race_judge and lk_race_line. The race runs on a GTask worker; as on the
 * gates page, the worker only appends each repetition to a locked queue and
 * a tick callback, installed while a race runs, drains it once a frame.
 * Stop cancels lk_race_run, which kills the running command's process group
 * and reaps it before the worker returns. The task has no source object:
 * the worker touches only its plan and the queue (the page and the task
 * each hold a reference to it), and the page's reference rides in the
 * callback's data, dropped there on the main thread; as the source object
 * the page went with the worker's last reference to the task, off GTK's
 * thread.
 */
#include "config.h"

#include "lk-race-page.h"

#include <glib/gi18n.h>

#include "lk-result-panel.h"
#include "lk-wrap-box.h"
#include "timing/lk-race.h"

typedef struct
{
  double a_ns;
  double b_ns;
  gboolean a_went_first;
} Landed;

/* The repetitions landed and not yet drawn: shared by the page and its
 * worker. */
typedef struct
{
  gatomicrefcount refs;
  GMutex lock; /* guards landed */
  GArray *landed;
} Feed;

static Feed *
feed_new (void)
{
  Feed *feed = g_new0 (Feed, 1);

  g_atomic_ref_count_init (&feed->refs);
  g_mutex_init (&feed->lock);
  feed->landed = g_array_new (FALSE, FALSE, sizeof (Landed));
  return feed;
}

static Feed *
feed_ref (Feed *feed)
{
  g_atomic_ref_count_inc (&feed->refs);
  return feed;
}

static void
feed_unref (Feed *feed)
{
  if (!g_atomic_ref_count_dec (&feed->refs))
    return;
  g_array_unref (feed->landed);
  g_mutex_clear (&feed->lock);
  g_free (feed);
}

struct _LkRacePage
{
  GtkBox parent_instance;

  GtkEntry *command_entry[2];
  GtkSpinButton *reps_spin;
  GtkDropDown *clock_drop;
  GtkDropDown *contract_drop;
  GtkEntry *seed_entry;
  GtkWidget *run_button;
  GtkWidget *stop_button;
  GtkLabel *status_label;
  LkRatioChart *chart;
  LkResultPanel *result_box;

  GCancellable *cancellable; /* while a race runs */
  guint tick_id;
  guint reps;
  gboolean disposed;

  Feed *feed;
};

G_DEFINE_FINAL_TYPE (LkRacePage, lk_race_page, GTK_TYPE_BOX)

typedef struct
{
  LkRaceOptions options;
  gboolean judged;
  LkContract contract;
  Feed *feed;
} RacePlan;

static void
race_plan_free (RacePlan *plan)
{
  g_strfreev (plan->options.argv_a);
  g_strfreev (plan->options.argv_b);
  feed_unref (plan->feed);
  g_free (plan);
}

/* ---- the worker ---------------------------------------------------------- */

void (*lk_race_page_worker_hook) (GTask *task);

static void
on_rep (const LkRace *race, guint rep, gpointer user_data)
{
  Feed *feed = user_data;
  const LkPairedTiming *t = lk_race_timing (race);
  Landed landed = { t->a_ns[rep], t->b_ns[rep], t->a_went_first[rep] };

  g_mutex_lock (&feed->lock);
  g_array_append_val (feed->landed, landed);
  g_mutex_unlock (&feed->lock);
}

static void
race_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const RacePlan *plan = task_data;
  GError *error = NULL;
  LkRace *race = lk_race_run (&plan->options, on_rep, plan->feed, cancellable, &error);

  if (race == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, race, (GDestroyNotify) lk_race_free);
  if (lk_race_page_worker_hook != NULL)
    lk_race_page_worker_hook (task);
}

/* ---- showing ------------------------------------------------------------- */

static void
show_status (LkRacePage *self, const char *text, gboolean warning)
{
  gtk_label_set_text (self->status_label, text);
  if (warning)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "diagnostics-warning");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "diagnostics-warning");
}

static void
update_buttons (LkRacePage *self)
{
  gboolean running = self->cancellable != NULL;

  gtk_widget_set_sensitive (self->run_button, !running);
  gtk_widget_set_sensitive (self->stop_button, running);
}

static void
drain (LkRacePage *self)
{
  g_autoptr (GArray) landed = NULL;

  g_mutex_lock (&self->feed->lock);
  landed = self->feed->landed;
  self->feed->landed = g_array_new (FALSE, FALSE, sizeof (Landed));
  g_mutex_unlock (&self->feed->lock);

  for (guint k = 0; k < landed->len; k++)
    {
      const Landed *l = &g_array_index (landed, Landed, k);
      lk_ratio_chart_append (self->chart, l->a_ns, l->b_ns, l->a_went_first);
    }
  if (landed->len > 0)
    {
      g_autofree char *status
          = g_strdup_printf (_ ("Repetition %u of %u. Nothing else heavy should run until the race "
                                "finishes: a contended machine measures the contention."),
                             lk_ratio_chart_get_n_points (self->chart), self->reps);
      show_status (self, status, FALSE);
    }
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  drain (LK_RACE_PAGE (widget));
  return G_SOURCE_CONTINUE;
}

static void
show_result (LkRacePage *self, const LkRace *race, const RacePlan *plan)
{
  const LkPairedTiming *t = lk_race_timing (race);
  g_autoptr (LkTimingCell) verdict = plan->judged ? lk_race_judge (race, plan->contract) : NULL;
  g_autofree char *line = lk_race_line (race, verdict);
  double low, high, confidence;
  double ratio = lk_paired_timing_median_ratio (t);
  g_autofree char *detail = NULL;

  GtkLabel *badge = lk_result_panel_get_badge (self->result_box);

  gtk_widget_remove_css_class (GTK_WIDGET (badge), "pass");
  gtk_widget_remove_css_class (GTK_WIDGET (badge), "loss");
  if (verdict != NULL)
    {
      gtk_label_set_text (badge, verdict->pass ? _ ("pass") : _ ("loss"));
      gtk_widget_add_css_class (GTK_WIDGET (badge), verdict->pass ? "pass" : "loss");
    }
  else
    gtk_label_set_text (badge, _ ("no contract"));

  /* Which arm is faster, and whether the sign-test interval says so. */
  if (!lk_paired_timing_median_interval (t, &low, &high, &confidence))
    detail = g_strdup_printf (_ ("B takes %.3f× A’s time; too few repetitions for an interval "
                                 "(it needs at least 6)."),
                              ratio);
  else if (low > 1.0)
    detail = g_strdup_printf (_ ("A is faster: B takes %.3f× A’s time (the %.1f%% interval "
                                 "[%.3f, %.3f] is above 1)."),
                              ratio, 100 * confidence, low, high);
  else if (high < 1.0)
    detail = g_strdup_printf (_ ("B is faster: B takes %.3f× A’s time (the %.1f%% interval "
                                 "[%.3f, %.3f] is below 1)."),
                              ratio, 100 * confidence, low, high);
  else
    detail = g_strdup_printf (_ ("No difference this race resolves: B takes %.3f× A’s time and "
                                 "the %.1f%% interval [%.3f, %.3f] holds 1."),
                              ratio, 100 * confidence, low, high);
  lk_result_panel_set_detail (self->result_box, detail);
  lk_result_panel_set_summary (self->result_box, line);
  gtk_widget_set_visible (GTK_WIDGET (self->result_box), TRUE);
}

static void
on_race_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkRacePage) self = user_data;
  const RacePlan *plan = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  g_autoptr (LkRace) race = g_task_propagate_pointer (G_TASK (result), &error);

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
  if (race != NULL)
    {
      lk_ratio_chart_set_timing (self->chart, lk_race_timing (race), "A", "B");
      show_result (self, race, plan);
      g_autofree char *seed = g_strdup_printf ("%" G_GUINT64_FORMAT, race->seed);
      g_autofree char *status
          = g_strdup_printf (_ ("Finished: %u repetitions, seed %s."), race->reps, seed);
      show_status (self, status, FALSE);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *status
          = g_strdup_printf (_ ("Stopped after %u repetitions; the running command was killed."),
                             lk_ratio_chart_get_n_points (self->chart));
      show_status (self, status, FALSE);
    }
  else
    show_status (self, error->message, TRUE);
  update_buttons (self);
}

/* ---- actions ------------------------------------------------------------- */

static void
on_run_clicked (GtkButton *button, gpointer user_data)
{
  LkRacePage *self = user_data;
  g_autoptr (GError) error = NULL;

  if (!lk_race_page_run (self, &error))
    show_status (self, error->message, TRUE);
}

static void
on_stop_clicked (GtkButton *button, gpointer user_data)
{
  lk_race_page_stop (user_data);
}

static void
action_copy_summary (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkRacePage *self = LK_RACE_PAGE (widget);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget),
                          lk_result_panel_get_summary (self->result_box));
  show_status (self, _ ("Copied the summary line."), FALSE);
}

/* ---- GObject ------------------------------------------------------------- */

static void
lk_race_page_dispose (GObject *object)
{
  LkRacePage *self = LK_RACE_PAGE (object);

  /* The task's callback holds a reference to the page until the worker
   * returns (and lk_race_run reaps the command before that); here it is
   * told to stop. */
  self->disposed = TRUE;
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_RACE_PAGE);
  G_OBJECT_CLASS (lk_race_page_parent_class)->dispose (object);
}

static void
lk_race_page_finalize (GObject *object)
{
  LkRacePage *self = LK_RACE_PAGE (object);

  feed_unref (self->feed);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (lk_race_page_parent_class)->finalize (object);
}

static void
lk_race_page_class_init (LkRacePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_race_page_dispose;
  object_class->finalize = lk_race_page_finalize;

  g_type_ensure (LK_TYPE_RATIO_CHART);
  g_type_ensure (LK_TYPE_RESULT_PANEL);
  g_type_ensure (LK_TYPE_WRAP_BOX);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-race-page.ui");
  gtk_widget_class_bind_template_child_full (widget_class, "command_a", FALSE,
                                             G_STRUCT_OFFSET (LkRacePage, command_entry[0]));
  gtk_widget_class_bind_template_child_full (widget_class, "command_b", FALSE,
                                             G_STRUCT_OFFSET (LkRacePage, command_entry[1]));
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, LkRacePage, name)
  BIND (reps_spin);
  BIND (clock_drop);
  BIND (contract_drop);
  BIND (seed_entry);
  BIND (run_button);
  BIND (stop_button);
  BIND (status_label);
  BIND (chart);
  BIND (result_box);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_run_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_stop_clicked);
  gtk_widget_class_install_action (widget_class, "race.copy-summary", NULL, action_copy_summary);
}

static void
lk_race_page_init (LkRacePage *self)
{
  self->feed = feed_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  lk_ratio_chart_set_placeholder (
      self->chart, _ ("Type two commands above and press Run the Race: each repetition lands "
                      "here as a dot, B's time over A's"));
  update_buttons (self);
}

/* ---- public API ---------------------------------------------------------- */

GtkWidget *
lk_race_page_new (void)
{
  return g_object_new (LK_TYPE_RACE_PAGE, NULL);
}

void
lk_race_page_set_commands (LkRacePage *self, const char *command_a, const char *command_b)
{
  g_return_if_fail (LK_IS_RACE_PAGE (self));

  gtk_editable_set_text (GTK_EDITABLE (self->command_entry[0]), command_a);
  gtk_editable_set_text (GTK_EDITABLE (self->command_entry[1]), command_b);
}

void
lk_race_page_set_reps (LkRacePage *self, guint reps)
{
  g_return_if_fail (LK_IS_RACE_PAGE (self));

  gtk_spin_button_set_value (self->reps_spin, reps);
}

void
lk_race_page_set_seed (LkRacePage *self, guint64 seed)
{
  g_return_if_fail (LK_IS_RACE_PAGE (self));

  g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT, seed);
  gtk_editable_set_text (GTK_EDITABLE (self->seed_entry), text);
}

gboolean
lk_race_page_run (LkRacePage *self, GError **error)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), FALSE);

  if (self->cancellable != NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                           _ ("A race is already running; stop it first."));
      return FALSE;
    }
  g_autoptr (GError) local = NULL;
  char **argv[2] = { NULL, NULL };
  for (int arm = 0; arm < 2; arm++)
    {
      const char *line = gtk_editable_get_text (GTK_EDITABLE (self->command_entry[arm]));
      if (!g_shell_parse_argv (line, NULL, &argv[arm], &local))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _ ("Command %c cannot be read as a command line: %s"), 'A' + arm,
                       *line ? local->message : _ ("it is empty"));
          g_strfreev (argv[0]);
          return FALSE;
        }
    }
  const char *seed_text = gtk_editable_get_text (GTK_EDITABLE (self->seed_entry));
  gboolean hex = g_ascii_strncasecmp (seed_text, "0x", 2) == 0;
  guint64 seed;
  if (!g_ascii_string_to_unsigned (seed_text + (hex ? 2 : 0), hex ? 16 : 10, 0, G_MAXUINT64, &seed,
                                   NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _ ("The seed “%s” is not a whole number from 0 to 18446744073709551615 "
                      "(decimal, or hexadecimal after 0x)."),
                   seed_text);
      g_strfreev (argv[0]);
      g_strfreev (argv[1]);
      return FALSE;
    }

  RacePlan *plan = g_new0 (RacePlan, 1);
  guint contract = gtk_drop_down_get_selected (self->contract_drop);
  plan->options.argv_a = argv[0];
  plan->options.argv_b = argv[1];
  plan->options.reps = (guint) gtk_spin_button_get_value_as_int (self->reps_spin);
  plan->options.warmup = 1;
  plan->options.seed = seed;
  plan->options.clock
      = gtk_drop_down_get_selected (self->clock_drop) == 1 ? LK_CLOCK_CPU : LK_CLOCK_WALL;
  plan->judged = contract == 1 || contract == 2;
  plan->contract = contract == 1 ? LK_CONTRACT_FASTER : LK_CONTRACT_NOT_SLOWER;

  plan->feed = feed_ref (self->feed);
  self->reps = plan->options.reps;
  g_mutex_lock (&self->feed->lock);
  g_array_set_size (self->feed->landed, 0);
  g_mutex_unlock (&self->feed->lock);
  lk_ratio_chart_reset (self->chart, "A", "B", self->reps);
  gtk_widget_set_visible (GTK_WIDGET (self->result_box), FALSE);
  self->cancellable = g_cancellable_new ();
  self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), on_tick, NULL, NULL);
  show_status (self, _ ("Warming up: one untimed run of each command."), FALSE);
  update_buttons (self);

  g_autoptr (GTask) task = g_task_new (NULL, self->cancellable, on_race_done, g_object_ref (self));
  g_task_set_task_data (task, plan, (GDestroyNotify) race_plan_free);
  g_task_run_in_thread (task, race_thread);
  return TRUE;
}

void
lk_race_page_stop (LkRacePage *self)
{
  g_return_if_fail (LK_IS_RACE_PAGE (self));

  if (self->cancellable != NULL)
    {
      g_cancellable_cancel (self->cancellable);
      show_status (self, _ ("Stopping: killing the running command…"), FALSE);
    }
}

gboolean
lk_race_page_is_running (LkRacePage *self)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), FALSE);

  return self->cancellable != NULL;
}

LkRatioChart *
lk_race_page_get_chart (LkRacePage *self)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), NULL);

  return self->chart;
}

const char *
lk_race_page_get_status (LkRacePage *self)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), NULL);

  return gtk_label_get_text (self->status_label);
}

const char *
lk_race_page_get_verdict (LkRacePage *self)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? gtk_label_get_text (lk_result_panel_get_badge (self->result_box))
             : "";
}

const char *
lk_race_page_get_summary (LkRacePage *self)
{
  g_return_val_if_fail (LK_IS_RACE_PAGE (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->result_box))
             ? lk_result_panel_get_summary (self->result_box)
             : "";
}
