/* lk-review-private.h — test-only hooks into lk-review.c
 *
 * The atomic save is a sequence of system calls; a test makes one of them fail
 * (as a full disk, a read-only folder or a power cut would) and checks that
 * review.json on disk is still the old file or already the new one.
 */
#pragma once

#include "lk-review.h"

G_BEGIN_DECLS

typedef enum
{
  LK_REVIEW_STEP_NONE = 0,
  LK_REVIEW_STEP_OPEN,       /* creating the temporary file */
  LK_REVIEW_STEP_WRITE,      /* writing it (fails after half the bytes) */
  LK_REVIEW_STEP_FSYNC,      /* flushing it */
  LK_REVIEW_STEP_CLOSE,      /* closing it */
  LK_REVIEW_STEP_RENAME,     /* renaming it over review.json */
  LK_REVIEW_STEP_DIR_OPEN,   /* opening the folder */
  LK_REVIEW_STEP_DIR_FSYNC,  /* flushing the folder */
  LK_REVIEW_N_STEPS,
} LkReviewStep;

/* The next save fails at `step` (with errno `errno_value`); NONE: no failure. */
void lk_review_inject_failure (LkReviewStep step,
                               int          errno_value);

G_END_DECLS
