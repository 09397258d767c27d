/* lk-review-private.h — test-only hooks into lk-review.c
 *
 * A save is a sequence of steps; a test makes one of them fail (as a full
 * disk, a read-only folder or a power cut would) and checks that review.json
 * on disk is still the old file or already the new one. The write itself is
 * g_file_set_contents_full, whose system calls tests/lk-fail-shim.c fails
 * from outside (test-review-durability).
 */
#pragma once

#include "lk-review.h"

G_BEGIN_DECLS

typedef enum
{
  LK_REVIEW_STEP_NONE = 0,
  LK_REVIEW_STEP_LOCK,      /* creating the lock file beside review.json */
  LK_REVIEW_STEP_WRITE,     /* writing and renaming the new file (before it starts) */
  LK_REVIEW_STEP_DIR_OPEN,  /* opening the folder */
  LK_REVIEW_STEP_DIR_FSYNC, /* flushing the folder */
  LK_REVIEW_N_STEPS,
} LkReviewStep;

/* The next save fails at `step` (with errno `errno_value`); NONE: no failure. */
void lk_review_inject_failure (LkReviewStep step, int errno_value);

G_END_DECLS
