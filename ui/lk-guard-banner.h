/* lk-guard-banner.h — "this calibration does not fit this library's model", and the way out */
#pragma once

#include <gtk/gtk.h>

#include "lk-session.h"

G_BEGIN_DECLS

#define LK_TYPE_GUARD_BANNER (lk_guard_banner_get_type ())
G_DECLARE_FINAL_TYPE (LkGuardBanner, lk_guard_banner, LK, GUARD_BANNER, GtkWidget)

/* Follows `session` (NULL: hidden): shown while the guard of its last scan
 * (lk_session_get_guard ()) says the calibration makes more than
 * LK_CALIBRATION_GUARD_BAR of the pairs candidates. Its buttons emit
 * "calibrate" (LkCalibrationFrom: ESTIMATE or DECISIONS); the window runs the
 * fit (lk_session_set_calibration_change () and a re-scan). */
void lk_guard_banner_set_session (LkGuardBanner *self, LkSession *session);
/* Brings the banner in line with the session (a load landed, a decision). */
void lk_guard_banner_update (LkGuardBanner *self);
/* The text shown, or NULL while hidden. */
const char *lk_guard_banner_get_text (LkGuardBanner *self);
/* Whether "Fit from My Decisions" can be pressed, and its tooltip. */
gboolean lk_guard_banner_can_fit_decisions (LkGuardBanner *self, const char **tooltip);

G_END_DECLS
