/* lk-window-calibration.c — the window's part of the calibration
 *
 * Why it is shaped this way:
 *
 * - A calibration change is a load of the session on screen with the change
 *   made first (lk_session_set_calibration_change): the fit runs on the
 *   load's worker, its progress is the re-scan bar's, Cancel stops it and
 *   leaves the people as they were, and the change is saved in review.json
 *   when it lands. Nothing here blocks the main thread.
 * - It is undone like a decision: Ctrl+Z (and the notification's Undo) take
 *   back whichever of the two was made last (lk_session_next_step), and the
 *   notification names the calibration, so an undo that re-scans the whole
 *   library is not a surprise.
 * - A library with no calibration at all gets one estimated on first open
 *   (lk_session_set_estimate_missing): the format's default fits ArcFace-like
 *   models only, and a notification says what happened, with Undo.
 * - After every 50 decisions about who is who the window offers, once, to
 *   fit the calibration to them: they are the best evidence of this
 *   library's model there is, but a fit re-scans, so it is offered, not done.
 *   The count at the last offer is kept per library folder in GSettings
 *   ("refit-offered"), so the offer does not come back at every start.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "lk-window-private.h"

/* Decisions about who is who between two offers to fit from them. */
#define REFIT_EVERY 50

/* The calibration a history step names, for a notification. "library" is
 * the library's own, which a library without one (calibration_given FALSE)
 * does not have: what is in force then is the format's default, made for
 * ArcFace-like models ("the library's own calibration is back" would name a
 * calibration that does not exist). */
static const char *
describe_source (const char *source)
{
  if (g_strcmp0 (source, "estimate") == 0)
    return _ ("the calibration estimated from this library");
  if (g_strcmp0 (source, "decisions") == 0)
    return _ ("the calibration fitted to your decisions");
  if (g_strcmp0 (source, "labels") == 0)
    return _ ("the calibration fitted to the library's labels");
  if (g_strcmp0 (source, "library") == 0)
    return _ ("the library's own calibration");
  return _ ("the chosen calibration");
}

static void
on_banner_calibrate (LkGuardBanner *banner, int from, gpointer user_data)
{
  _lk_window_calibrate (LK_WINDOW (user_data), LK_CALIBRATION_CHANGE_FIT, (LkCalibrationFrom) from);
}

void
_lk_window_calibration_init (LkWindow *self)
{
  g_signal_connect (self->guard_banner, "calibrate", G_CALLBACK (on_banner_calibrate), self);
}

void
_lk_window_calibration_prepare (LkWindow *self, LkSession *loading)
{
  lk_session_set_estimate_missing (loading, TRUE);
}

void
_lk_window_calibrate (LkWindow *self, LkCalibrationChange change, LkCalibrationFrom from)
{
  if (self->session == NULL)
    return;
  /* A load of another library is under way: the change would be the wrong
   * library's. (The banner's buttons wait while one runs.) */
  if (self->loading != NULL && self->loading != self->session)
    return;
  lk_session_set_calibration_change (self->session, change, from);
  /* The change takes effect in a scan of the same library: win.rescan's
   * (lk-window-actions.c), so this room asks for it rather than calling
   * the load's room, which calls this one when a load starts and lands. */
  gtk_widget_activate_action (GTK_WIDGET (self), "win.rescan", NULL);
  self->calibration_change = change;
  self->calibration_from = from;
}

gboolean
_lk_window_calibration_undo (LkWindow *self, gboolean redo)
{
  if (self->session == NULL
      || lk_session_next_step (self->session, redo, NULL) != LK_SESSION_STEP_CALIBRATION)
    return FALSE;
  _lk_window_calibrate (self, redo ? LK_CALIBRATION_CHANGE_REDO : LK_CALIBRATION_CHANGE_UNDO,
                        LK_CALIBRATION_FROM_ESTIMATE);
  return TRUE;
}

gboolean
_lk_window_calibration_load_done (LkWindow *self, LkSession *session, gboolean loaded,
                                  const GError *error)
{
  LkCalibrationChange change = self->calibration_change;
  LkCalibrationFrom from = self->calibration_from;

  self->calibration_change = LK_CALIBRATION_CHANGE_NONE;
  if (!loaded)
    {
      if (change == LK_CALIBRATION_CHANGE_NONE || session != self->session
          || error->domain != LK_CALIBRATE_ERROR)
        return FALSE;
      g_autofree char *message = NULL;
      if (change == LK_CALIBRATION_CHANGE_FIT && from == LK_CALIBRATION_FROM_ESTIMATE
          && error->code == LK_CALIBRATE_ERROR_NO_FIT)
        {
          /* A failed estimate: why, in the engine's words up to
           * what it tells a CLI user to do, then what to do here. */
          const char *cut = strstr (error->message, " The calibration in force is kept.");
          g_autofree char *why = cut ? g_strndup (error->message, (gsize) (cut - error->message))
                                     : g_strdup (error->message);
          message = g_strdup_printf (
              /* Translators: %s is why, "The estimate failed: it puts p = 0.9 at cosine 1.0023
               * even for the biggest faces, above every pair of this library … (12 Newton
               * steps, 0 refits)." */
              _ ("%s The calibration in force is kept: confirm or merge a few people, take a face "
                 "out of one, then use Fit from My Decisions"),
              why);
        }
      else
        message = g_strdup_printf (_ ("The calibration was not changed: %s"), error->message);
      _lk_window_show_toast (self, message, TOAST_PLAIN);
      return TRUE;
    }

  guint n = lk_session_get_n_people (session);
  g_autofree char *people
      = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u person", "%'u people", n), n);
  g_autofree char *message = NULL;
  const char *source = NULL;
  lk_session_get_calibration (session, &source);
  switch (change)
    {
      case LK_CALIBRATION_CHANGE_FIT:
        /* Translators: "Calibration estimated from this library: 42 people" */
        message = g_strdup_printf (from == LK_CALIBRATION_FROM_ESTIMATE
                                       ? _ ("Calibration estimated from this library: %s")
                                       : _ ("Calibration fitted to your decisions: %s"),
                                   people);
        _lk_window_show_toast (self, message, TOAST_UNDO);
        return FALSE;
      case LK_CALIBRATION_CHANGE_UNDO:
      case LK_CALIBRATION_CHANGE_REDO:
        {
          /* Undo names the calibration it went back to, redo the one it brought back. */
          const LkLibrary *library = lk_session_get_library (session);
          if (g_strcmp0 (source, "library") == 0 && library != NULL && !library->calibration_given)
            {
              /* Translators: "… is in force (42 people)" */
              message = g_strdup_printf (
                  change == LK_CALIBRATION_CHANGE_UNDO
                      ? _ ("Calibration change undone: this library has no calibration of its "
                           "own, so the format's default (made for ArcFace-like models) is in "
                           "force (%s)")
                      : _ ("Calibration change redone: this library has no calibration of its "
                           "own, so the format's default (made for ArcFace-like models) is in "
                           "force (%s)"),
                  people);
              _lk_window_show_toast (
                  self, message, change == LK_CALIBRATION_CHANGE_UNDO ? TOAST_REDO : TOAST_UNDO);
              return FALSE;
            }
          const char *what = describe_source (source);
          /* Translators: "Calibration change undone: the library's own calibration is back
           * (42 people)" */
          message = g_strdup_printf (change == LK_CALIBRATION_CHANGE_UNDO
                                         ? _ ("Calibration change undone: %s is back (%s)")
                                         : _ ("Calibration change redone: %s is back (%s)"),
                                     what, people);
          _lk_window_show_toast (self, message,
                                 change == LK_CALIBRATION_CHANGE_UNDO ? TOAST_REDO : TOAST_UNDO);
          return FALSE;
        }
      case LK_CALIBRATION_CHANGE_NONE:
        break;
    }
  if (lk_session_get_estimate_failure (session) != NULL)
    {
      /* Said, not hidden (a silent failure looks like a library of 0
       * people); the guard's banner then says whether what is in force
       * fits. */
      _lk_window_show_toast (
          self,
          _ ("No calibration could be estimated from this library's faces: the format's default "
             "(made for ArcFace-like models) is in force. Confirm or merge a few people, take a "
             "face out of one, then use Fit from My Decisions"),
          TOAST_PLAIN);
      return FALSE;
    }
  if (lk_session_estimated_on_its_own (session))
    {
      message = g_strdup_printf (
          _ ("This library has no calibration for its model: one was estimated from its faces "
             "(%s)"),
          people);
      _lk_window_show_toast (self, message, TOAST_UNDO);
    }
  return FALSE;
}

void
_lk_window_calibration_changed (LkWindow *self)
{
  LkSession *session = self->session;
  if (session == NULL || lk_session_get_review (session) == NULL || lk_session_is_loading (session))
    return;
  guint n = lk_review_n_identity_decisions (lk_session_get_review (session));
  if (n < REFIT_EVERY)
    return;

  const char *folder = lk_session_get_folder (session);
  g_autoptr (GVariant) offered = g_settings_get_value (self->settings, "refit-offered");
  guint32 last = 0;
  g_variant_lookup (offered, folder, "u", &last);
  if (n < (guint64) last + REFIT_EVERY || !lk_session_can_fit_decisions (session, NULL, NULL))
    return;

  /* Remembered before it shows: offered once, whatever the user does. */
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{su}"));
  GVariantIter iter;
  const char *key;
  guint32 value;
  g_variant_iter_init (&iter, offered);
  while (g_variant_iter_next (&iter, "{&su}", &key, &value))
    if (g_strcmp0 (key, folder) != 0)
      g_variant_builder_add (&builder, "{su}", key, value);
  g_variant_builder_add (&builder, "{su}", folder, (guint32) n);
  g_settings_set_value (self->settings, "refit-offered", g_variant_builder_end (&builder));

  g_autofree char *message = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE,
                   "You made %'u decision about who is who: fit the calibration to it?",
                   "You made %'u decisions about who is who: fit the calibration to them?", n),
      n);
  _lk_window_show_toast (self, message, TOAST_REFIT);
}
