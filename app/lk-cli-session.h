/* lk-cli-session.h — what `people`, `review` and `evaluate` share: a library,
 * its pairs, its review and the people they make */
#pragma once

#include "lk-cluster.h"
#include "lk-library.h"
#include "lk-review.h"
#include "lk-scan.h"

G_BEGIN_DECLS

typedef struct
{
  LkLibrary *library;
  LkScanResult *scan;        /* NULL until lk_cli_session_scan () */
  LkClusterInput input;      /* valid after lk_cli_session_scan () */
  LkReview *review;
  char *review_path;
  /* What every scan uses: review.json's chosen calibration, else the
   * library's (lk_calibration_in_force); its source, interned. */
  LkCalibration calibration;
  const char *calibration_source;
} LkCliSession;

/* Loads the library and its review.json. With start_over, a corrupt or
 * foreign review.json is set aside for an empty review (saved with
 * LK_REVIEW_SAVE_REPLACE). */
LkCliSession *lk_cli_session_open  (const char    *folder,
                                    gboolean       start_over,
                                    GError       **error);
/* Scans with the session's calibration; first, when the guard finds that
 * it makes more than LK_CALIBRATION_GUARD_BAR (5 %) of random pairs
 * candidates, warns on stderr. */
gboolean      lk_cli_session_scan  (LkCliSession  *session,
                                    GError       **error);
/* The guard alone: warns on stderr when the session's calibration makes more
 * than LK_CALIBRATION_GUARD_BAR of random pairs candidates at this bar. */
void          lk_cli_session_guard (LkCliSession *session,
                                    double        min_probability);
/* After the review's calibration changed: the one in force again. */
void          lk_cli_session_update_calibration (LkCliSession *session);
/* The people: scan, pins of the review, average linkage. */
LkPeople     *lk_cli_session_people (LkCliSession *session,
                                     GError      **error);
void          lk_cli_session_free  (LkCliSession  *session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkCliSession, lk_cli_session_free)

G_END_DECLS
