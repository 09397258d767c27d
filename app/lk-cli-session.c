#include "config.h"

#include <stdio.h>

#include "lk-calibrate.h"
#include "lk-cli-session.h"
#include "lk-review-location.h"

LkCliSession *
lk_cli_session_open (const char *folder, gboolean start_over, GError **error)
{
  g_autoptr (LkCliSession) s = g_new0 (LkCliSession, 1);
  s->library = lk_library_load (folder, error);
  if (s->library == NULL)
    return NULL;
  /* A read-only library whose decisions the window saved elsewhere: the same
   * file here (lk-review-location.h). */
  g_autofree char *start = NULL;
  s->review_path = lk_review_location_resolve (s->library->folder, &start);
  g_autoptr (GError) local = NULL;
  s->review = lk_review_load (start, s->library->count, s->library->fingerprint,
                              s->library->photo, &local);
  if (s->review == NULL)
    {
      if (!start_over || g_error_matches (local, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      s->review = lk_review_new (s->library->count, s->library->fingerprint, s->library->photo);
    }
  lk_cli_session_update_calibration (s);
  return g_steal_pointer (&s);
}

void
lk_cli_session_update_calibration (LkCliSession *s)
{
  g_autoptr (GError) bad = NULL;
  s->calibration = lk_calibration_in_force (s->library, lk_review_get_calibration (s->review),
                                            &s->calibration_source, &bad);
  if (bad != NULL)
    fprintf (stderr, "likeness-cli: warning: %s; using the library's calibration\n",
             bad->message);
}

void
lk_cli_session_guard (LkCliSession *s, double min_probability)
{
  LkCalibrationGuard guard;
  g_autofree char *warning = NULL;
  lk_calibration_guard (s->library, &s->calibration, min_probability,
                        LK_CALIBRATION_GUARD_SAMPLES, 1, &guard);
  if (lk_calibration_guard_fails (&guard, &warning))
    fprintf (stderr,
             "likeness-cli: warning: %s (%u of %u random pairs with the %s calibration, a = %g, "
             "b = %g) — try likeness-cli calibrate --from estimate %s\n",
             warning, guard.candidates, guard.sampled, s->calibration_source, s->calibration.a,
             s->calibration.b, s->library->folder);
}

gboolean
lk_cli_session_scan (LkCliSession *s, GError **error)
{
  lk_cli_session_guard (s, s->library->min_probability);
  LkFaces faces;
  lk_faces_from_library (&faces, s->library);
  s->scan = lk_scan (&faces, &s->calibration, s->library->min_probability, NULL, NULL, error);
  if (s->scan == NULL)
    return FALSE;
  lk_cluster_input_init (&s->input, s->library, s->scan->pairs);
  return TRUE;
}

LkPeople *
lk_cli_session_people (LkCliSession *s, GError **error)
{
  if (s->scan == NULL && !lk_cli_session_scan (s, error))
    return NULL;
  return lk_cluster (&s->input, lk_review_pins (s->review), NULL, error);
}

void
lk_cli_session_free (LkCliSession *s)
{
  if (s == NULL)
    return;
  lk_review_free (s->review);
  g_clear_pointer (&s->scan, lk_scan_result_free);
  lk_library_free (s->library);
  g_free (s->review_path);
  g_free (s);
}
