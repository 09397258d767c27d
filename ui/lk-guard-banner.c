/* lk-guard-banner.c — "this calibration does not fit this library's model", and the way out
 *
 * Why it is shaped this way:
 *
 * - A calibration made for another embedding model (ArcFace's numbers on
 *   dlib's descriptors) makes nearly every pair a candidate: one person of
 *   everyone, and nothing said why. The other way round (dlib's numbers on
 *   ArcFace's, or an estimate's bar above every pair) it makes nobody
 *   anybody's pair: one "Unassigned faces" tile. Both are
 *   the guard's verdict, and both show this banner. The session's guard counts
 *   that share on a few thousand random pairs at every scan; above the bar
 *   (LK_CALIBRATION_GUARD_BAR, its reason in lk-calibrate.h) this banner says
 *   so and offers the two fits that need nothing from the user: an estimate
 *   from the library's own cosines, and a fit to the decisions made so far;
 *   and the one that asks the user: "same or different person?" about the
 *   pairs the pair model is least sure of (lk-pair-dialog), which also shows
 *   when the estimate refused, whatever the guard says.
 * - It stays while the guard fails, like the read-only banner: the people
 *   under it are not to be trusted, and that does not go away by itself.
 * - A styled box in a GtkRevealer: GTK 4.8 has no AdwBanner (libadwaita is
 *   not a dependency) and GtkInfoBar is deprecated from 4.10.
 * - "Fit from My Decisions" is insensitive until the decisions hold what the
 *   fit needs (lk_calibration_decisions_suffice: the engine's own rule), and
 *   its tooltip says what is missing, so the user knows what to do first.
 * - Both buttons wait while a load runs: the fit is itself a load.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-guard-banner.h"

struct _LkGuardBanner
{
  GtkWidget parent_instance;

  LkSession *session;
  gulong changed_id;
  gulong loading_id;
  char *text;        /* shown, or NULL */
  char *fit_tooltip; /* of decisions_button */

  GtkRevealer *revealer;
  GtkLabel *label;
  GtkButton *estimate_button;
  GtkButton *decisions_button;
};

G_DEFINE_FINAL_TYPE (LkGuardBanner, lk_guard_banner, GTK_TYPE_WIDGET)

enum
{
  SIGNAL_CALIBRATE,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

void
lk_guard_banner_update (LkGuardBanner *self)
{
  g_return_if_fail (LK_IS_GUARD_BANNER (self));

  LkSession *session = self->session;
  const LkCalibrationGuard *guard
      = session != NULL && lk_session_is_loaded (session) ? lk_session_get_guard (session) : NULL;
  g_clear_pointer (&self->text, g_free);
  gboolean fails = guard != NULL && guard->sampled > 0 && lk_calibration_guard_fails (guard, NULL);
  /* An estimate that refused leaves a calibration nobody fitted to this
   * library in force, even where the guard cannot tell. */
  gboolean refused = session != NULL && lk_session_is_loaded (session)
                     && lk_session_get_estimate_failure (session) != NULL;
  if (!fails && !refused)
    {
      gtk_revealer_set_reveal_child (self->revealer, FALSE);
      return;
    }
  if (!fails)
    self->text = g_strdup (_ ("Likeness could not tell this library's people apart on its own: "
                              "help it with a few pairs of faces"));
  else if (lk_calibration_guard_verdict (guard) == LK_CALIBRATION_GUARD_TOO_FEW)
    /* Translators: "This calibration makes nobody anybody's pair (0 of 200
     * faces have a likely match): it does not fit this library's model" */
    self->text
        = g_strdup_printf (_ ("This calibration makes nobody anybody's pair (%'u of %'u faces "
                              "have a likely match): it does not fit this library's model"),
                           guard->faces_paired, guard->faces_sampled);
  else
    /* Translators: %.0f is a percentage, "This calibration makes 99 % of pairs
     * candidates: it does not fit this library's model" */
    self->text = g_strdup_printf (
        _ ("This calibration makes %.0f %% of pairs candidates: it does not fit this library's "
           "model"),
        100.0 * guard->fraction);
  /* What the banner means and what to do: the help's page, as a link at its end. */
  g_autofree char *escaped = g_markup_escape_text (self->text, -1);
  g_autofree char *markup = g_strdup_printf ("%s  <a href=\"calibration\">%s</a>", escaped,
                                             /* Translators: a link to the help's page */
                                             _ ("Learn More"));
  gtk_label_set_markup (self->label, markup);

  double pairs = 0;
  gsize taken_out = 0;
  gboolean can_fit = lk_session_can_fit_decisions (session, &pairs, &taken_out);
  g_free (self->fit_tooltip);
  if (can_fit)
    self->fit_tooltip = g_strdup_printf (
        /* Translators: the tooltip of "Fit from My Decisions" */
        _ ("Fit the pair model to your decisions (%'.0f pairs of faces kept together, %'zu faces "
           "taken out of a person), then scan again"),
        pairs, taken_out);
  else
    self->fit_tooltip = g_strdup_printf (
        /* Translators: why "Fit from My Decisions" cannot be pressed yet */
        _ ("Your decisions are too few to fit from: it takes at least %d pairs of faces they "
           "settle (kept together, or one taken out of the other's person), %d of them kept "
           "together, and a face taken out of a person or two people kept apart; they hold "
           "%'.0f pairs kept together and %'zu faces taken out"),
        LK_CALIBRATION_MIN_DECISION_PAIRS, LK_CALIBRATION_MIN_DECISION_POSITIVES, pairs, taken_out);
  gboolean busy = lk_session_is_loading (session);
  gtk_widget_set_sensitive (GTK_WIDGET (self->decisions_button), can_fit && !busy);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->decisions_button), self->fit_tooltip);
  gtk_widget_set_sensitive (GTK_WIDGET (self->estimate_button), !busy);
  gtk_revealer_set_reveal_child (self->revealer, TRUE);
}

static void
on_session_changed (LkGuardBanner *self)
{
  lk_guard_banner_update (self);
}

void
lk_guard_banner_set_session (LkGuardBanner *self, LkSession *session)
{
  g_return_if_fail (LK_IS_GUARD_BANNER (self));

  if (self->session != NULL)
    {
      g_clear_signal_handler (&self->changed_id, self->session);
      g_clear_signal_handler (&self->loading_id, self->session);
    }
  g_set_object (&self->session, session);
  if (session != NULL)
    {
      self->changed_id
          = g_signal_connect_swapped (session, "changed", G_CALLBACK (on_session_changed), self);
      self->loading_id = g_signal_connect_swapped (session, "notify::loading",
                                                   G_CALLBACK (on_session_changed), self);
    }
  lk_guard_banner_update (self);
}

const char *
lk_guard_banner_get_text (LkGuardBanner *self)
{
  g_return_val_if_fail (LK_IS_GUARD_BANNER (self), NULL);
  return gtk_revealer_get_reveal_child (self->revealer) ? self->text : NULL;
}

gboolean
lk_guard_banner_can_fit_decisions (LkGuardBanner *self, const char **tooltip)
{
  g_return_val_if_fail (LK_IS_GUARD_BANNER (self), FALSE);
  if (tooltip)
    *tooltip = self->fit_tooltip;
  return gtk_widget_get_sensitive (GTK_WIDGET (self->decisions_button));
}

static void
on_estimate_clicked (LkGuardBanner *self)
{
  g_signal_emit (self, signals[SIGNAL_CALIBRATE], 0, (int) LK_CALIBRATION_FROM_ESTIMATE);
}

static void
on_decisions_clicked (LkGuardBanner *self)
{
  g_signal_emit (self, signals[SIGNAL_CALIBRATE], 0, (int) LK_CALIBRATION_FROM_DECISIONS);
}

static void
lk_guard_banner_dispose (GObject *object)
{
  LkGuardBanner *self = LK_GUARD_BANNER (object);

  lk_guard_banner_set_session (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_GUARD_BANNER);
  G_OBJECT_CLASS (lk_guard_banner_parent_class)->dispose (object);
}

static void
lk_guard_banner_finalize (GObject *object)
{
  LkGuardBanner *self = LK_GUARD_BANNER (object);

  g_free (self->text);
  g_free (self->fit_tooltip);
  G_OBJECT_CLASS (lk_guard_banner_parent_class)->finalize (object);
}

/* The link opens the help's page through the application's action, so it
 * goes where F1 goes (lk-help.c), not to gtk_show_uri's default. */
static gboolean
on_activate_link (LkGuardBanner *self, const char *page, GtkLabel *label)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "app.help-page", "s", page);
  return TRUE;
}

static void
lk_guard_banner_class_init (LkGuardBannerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_guard_banner_dispose;
  object_class->finalize = lk_guard_banner_finalize;

  /* A button asked for a fit: the argument is an LkCalibrationFrom. */
  signals[SIGNAL_CALIBRATE]
      = g_signal_new ("calibrate", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 1, G_TYPE_INT);

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-guard-banner.ui");
  gtk_widget_class_bind_template_child (widget_class, LkGuardBanner, revealer);
  gtk_widget_class_bind_template_child (widget_class, LkGuardBanner, label);
  gtk_widget_class_bind_template_child (widget_class, LkGuardBanner, estimate_button);
  gtk_widget_class_bind_template_child (widget_class, LkGuardBanner, decisions_button);
  gtk_widget_class_bind_template_callback (widget_class, on_estimate_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_decisions_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_activate_link);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
lk_guard_banner_init (LkGuardBanner *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
