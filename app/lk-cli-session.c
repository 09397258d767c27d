#include "config.h"

#include "lk-cli-session.h"
#include "lk-review-location.h"
#include "lk-source-people.h"

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
  /* The source's people, below the user's decisions (lk-source-people.h). */
  g_autoptr (GPtrArray) base = lk_source_people_pins (s->library, NULL);
  lk_review_set_base_pins (s->review, base);
  return g_steal_pointer (&s);
}

gboolean
lk_cli_session_scan (LkCliSession *s, GError **error)
{
  LkFaces faces;
  lk_faces_from_library (&faces, s->library);
  s->scan = lk_scan (&faces, &s->library->calibration, s->library->min_probability, NULL, NULL,
                     error);
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
