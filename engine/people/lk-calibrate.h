/* lk-calibrate.h — the pair model's a, b and w_size, fitted to a library
 *
 * LIBRARY-FORMAT.md's pair model, probability = sigmoid (a·cos + b +
 * w_size·log2 (min crop)), is only as good as its numbers, and they depend on
 * the embedding model: a = 30, b = −10.5 suits ArcFace, while every cosine
 * of dlib's ResNet is ≥ 0.7, so with those numbers every pair is a candidate.
 * This module finds the numbers for a library:
 *
 * - from labels (faces[].label) or the user's decisions (the review's pins):
 *   maximum likelihood of the logistic model by Newton's method (IRLS), on
 *   every positive pair, every negative pair above a low bar (found exactly
 *   by the scan; the bar has 20 negatives per face above it) and a uniform
 *   sample of the negatives below it, each weighted by how many of the
 *   library's pairs it stands for, so the fit is that of the whole library's
 *   pairs; a small ridge on a and w_size keeps separable data finite. A fifth
 *   of the pairs is held out and scored. w_size is never negative: a smaller
 *   crop may raise the bar, never lower it (when the likelihood wants it
 *   negative the fit is the one at w_size = 0, and size_at_bound says so).
 *   From labels, b is then moved to the bar whose clustering scores the best
 *   BCubed F1 on the labelled faces (the held-out figures stay those of the
 *   likelihood's b). Why both: lk-calibrate.c's opening comment.
 * - without labels (estimate): the impostor cosines' tail is fitted on a
 *   uniform sample of pairs (the strangers' peak, less the shoulder of pairs
 *   of one person above it), every pair above a bar where it predicts a few
 *   impostors per face is found by the scan, and each such pair's chance of
 *   being genuine is the share of its cosine bin the impostor tail cannot
 *   explain; those soft labels are fitted like labels. Then the people that
 *   calibration makes are taken as labels (the pairs the clustering is sure
 *   of) and refitted, until the bar settles: within 0.02 BCubed F1 of the
 *   labelled fit on every family of make-sample (README, "Calibration").
 * - the guard: the share of a few thousand random pairs a calibration makes
 *   candidates (most pairs of any library are two different people), and
 *   the share of a few hundred faces that have a candidate at all (a
 *   calibration that pairs nobody is as wrong as one that pairs everyone).
 * - an estimate that fails those checks, or whose bar no pair reaches, or
 *   whose fit did not converge, is an error, never a calibration.
 * - priors for known models (ArcFace, FaceNet, dlib), for importers.
 *
 * The user's chosen calibration is kept in review.json's top-level
 * "calibration" object (never in the library), with its own undo and redo:
 *
 *   "calibration": { "current": <entry> | absent (the library's own),
 *                    "undo": [ <entry>, … ], "redo": [ <entry>, … ] }
 *   <entry>: { "a": …, "b": …, "w_size": …, "positive_pairs": …,
 *              "negative_pairs": …, "source": "labels" | "decisions" | "estimate" | "prior",
 *              "after": "<id of the newest decision in effect when it was chosen>" (absent:
 *                       none, or chosen by a version that did not say) }
 *
 * "after" orders the calibration's undo among the decisions' (the window's
 * Ctrl+Z takes back whichever of the two was made last: lk-session.h).
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "library/lk-library.h"

G_BEGIN_DECLS

#define LK_CALIBRATE_ERROR (lk_calibrate_error_quark ())
GQuark lk_calibrate_error_quark (void);

typedef enum
{
  LK_CALIBRATE_ERROR_TOO_FEW,   /* too few pairs (or labels, or decisions) to fit */
  LK_CALIBRATE_ERROR_NO_FIT,    /* the fit did not converge or gave no usable model */
  LK_CALIBRATE_ERROR_CORRUPT,   /* review.json's "calibration" object is malformed */
  LK_CALIBRATE_ERROR_NO_CHANGE, /* no calibration change to undo or redo */
} LkCalibrateError;

typedef enum
{
  LK_CALIBRATION_FROM_LABELS,
  LK_CALIBRATION_FROM_DECISIONS,
  LK_CALIBRATION_FROM_ESTIMATE,
} LkCalibrationFrom;

/* One pair the fit reads: y is 1 (same person), 0 (not), or in between (the
 * estimate's chance that it is); weight is how many of the library's pairs
 * it stands for. */
typedef struct
{
  double cos;
  double min_crop; /* the smaller crop of the two faces, pixels, > 0 */
  double y;
  double weight;     /* > 0 */
  gboolean held_out; /* scored, not fitted */
} LkCalibrationSample;

typedef struct
{
  LkCalibration calibration; /* positive_pairs, negative_pairs: the pairs fitted */
  gboolean fitted_size;      /* w_size was fitted (the crops vary), else 0 */
  gboolean size_at_bound;    /* the best w_size was negative; the fit is the one at w_size = 0 */
  guint iterations;   /* Newton steps, over every fit the result took (the estimate's refits too) */
  gboolean converged; /* the last fit's Newton steps reached the optimum (else: stopped) */
  guint refits;       /* the estimate's refits on its own people that were kept */
  gsize held_out_positive; /* pairs scored (y >= 0.5) */
  gsize held_out_negative;
  double negative_weight;   /* library pairs the negatives (fitted and held out) stand for */
  double log_loss;          /* held out, per library pair (weighted), nats; of the likelihood's b */
  double brier;             /* held out, per library pair (weighted) */
  double log_loss_positive; /* held out, per positive pair */
  double min_probability;   /* the bar the next two figures are for */
  double median_crop;       /* of the library's faces */
  double cos_at_bar;        /* the cosine where p = min_probability at the median crop */
} LkCalibrationFit;

/* Ridge on a and w_size, added to the mean loss per positive pair: small
 * enough to leave a fitted a within 1 % (1e-4 took a known a = 20 down to
 * 17.8 in test-calibrate, the penalty being 5 % of the objective), large
 * enough that perfectly separated pairs give a finite model. */
#define LK_CALIBRATION_RIDGE            1e-6
/* The guard's sample and bar: a calibration that makes more than this share
 * of random pairs candidates does not fit the library's model. Most pairs of
 * a photo library are two different people, but not 99 % of them: with its
 * right calibration the 2,000-face sample makes 0.8 % of pairs candidates
 * (seed 3), the 18,143-face one 0.5 %, test-scan's rule set 2 %, and a family
 * library of a few people many more. 1 % would cry wolf on those; a model
 * mismatch makes nearly all pairs candidates (dlib's descriptors with
 * ArcFace's numbers: every one). 4,000
 * pairs put the share within ±0.7 points at 5 % (two standard errors). */
#define LK_CALIBRATION_GUARD_SAMPLES    4000
#define LK_CALIBRATION_GUARD_BAR        0.05
/* …unless the library's own cosines show more pairs of one person than
 * that: the bar is then LK_CALIBRATION_GUARD_SHOULDER times the shoulder
 * above the strangers' peak (lk_calibration_guard_bar), plus a point. A
 * real library of 5 people of 11 faces and 44 seen once has 5.8 % of its
 * pairs one person: its right calibration, from the labels, makes
 * 5.8 % candidates, and a fixed 5 % would call it wrong. Twice the shoulder
 * still catches a model mismatch (dlib's old prior made 53 % of that
 * library's pairs candidates, ArcFace's numbers on dlib's descriptors all). */
#define LK_CALIBRATION_GUARD_SHOULDER   2.0
/* The guard's other direction: a calibration that makes nobody
 * anybody's pair. Random pairs cannot tell (a library of many people has
 * few pairs of one person among them), faces can: of GUARD_FACES random
 * faces, the share with at least one candidate among all the others. With
 * its right calibration a personal library pairs most of its faces (86 % of
 * the 2,000-face sample, seed 1; 54 % of the 600 dlib-like faces of
 * test-ui-calibration, most of them people seen once); a calibration made
 * for dlib (p = 0.9 at cosine 0.95) on ArcFace-like faces pairs none, as
 * does an estimate's impossible bar (above cosine 1). Below
 * GUARD_MIN_FACES faces a library may well be all strangers, and the guard
 * says nothing in this direction. */
#define LK_CALIBRATION_GUARD_FACES      200
#define LK_CALIBRATION_GUARD_MIN_FACES  200
#define LK_CALIBRATION_GUARD_PAIRED_BAR 0.02

typedef struct
{
  guint64 seed;
  double held_out;        /* share of the pairs held out; 0: 0.2 */
  gsize negatives;        /* uniform negatives below the bar; 0: 200,000 */
  gsize max_positives;    /* sampled (and weighted) beyond this; 0: 2,000,000 */
  double min_probability; /* for cos_at_bar; 0: the library's */
} LkCalibrateOptions;

/* Fits samples[] that are not held out; scores those that are. */
LkCalibrationFit *lk_calibration_fit (const LkCalibrationSample *samples, gsize n,
                                      double min_probability, double median_crop, GError **error);

/* pins: of LkPin * (lk-cluster.h), for FROM_DECISIONS; ignored otherwise. */
LkCalibrationFit *lk_calibrate (const LkLibrary *library, LkCalibrationFrom from,
                                const GPtrArray *pins, const LkCalibrateOptions *options,
                                GCancellable *cancellable, GError **error);
void lk_calibration_fit_free (LkCalibrationFit *fit);

/* Fitting from decisions needs this many pairs of faces they settle (kept
 * together, or one taken out of the other's person: an answer to "same or
 * different person?" settles one pair either way), this many of them kept
 * together, and one face taken out of a person or two people kept apart
 * (two pins). */
#define LK_CALIBRATION_MIN_DECISION_PAIRS     10
#define LK_CALIBRATION_MIN_DECISION_POSITIVES 3
/* Whether the pins (of LkPin *) hold enough for LK_CALIBRATION_FROM_DECISIONS,
 * cheaply (no cosine): *positive_pairs and *taken_out (each may be NULL)
 * receive what they hold, for a message. */
gboolean lk_calibration_decisions_suffice (const LkLibrary *library, const GPtrArray *pins,
                                           double *positive_pairs, gsize *taken_out);

const char *lk_calibration_from_to_string (LkCalibrationFrom from);
gboolean lk_calibration_from_from_string (const char *name, LkCalibrationFrom *from);

/* The cosine at which p = min_probability for this crop, or NAN when a <= 0. */
double lk_calibration_cos_at (const LkCalibration *calibration, double min_probability,
                              double crop);

/* The guard. */
typedef struct
{
  guint sampled;          /* random pairs drawn that the scan could return */
  guint candidates;       /* of those, how many reach min_probability */
  double fraction;        /* candidates / sampled, 0 when nothing was sampled */
  guint faces_sampled;    /* random faces looked at (0: the library is below GUARD_MIN_FACES) */
  guint faces_paired;     /* of those, how many have a candidate among all the other faces */
  double paired_fraction; /* faces_paired / faces_sampled, 1 when nothing was sampled */
  double shoulder;        /* share of the random pairs above the strangers' peak (one person) */
} LkCalibrationGuard;

typedef enum
{
  LK_CALIBRATION_GUARD_OK = 0,
  LK_CALIBRATION_GUARD_TOO_MANY, /* more than GUARD_BAR of random pairs are candidates */
  LK_CALIBRATION_GUARD_TOO_FEW,  /* fewer than GUARD_PAIRED_BAR of the faces have a candidate */
} LkCalibrationGuardVerdict;

void lk_calibration_guard (const LkLibrary *library, const LkCalibration *calibration,
                           double min_probability, guint samples, guint64 seed,
                           LkCalibrationGuard *guard);
/* The share of candidates above which the guard says "too many". */
double lk_calibration_guard_bar (const LkCalibrationGuard *guard);
LkCalibrationGuardVerdict lk_calibration_guard_verdict (const LkCalibrationGuard *guard);
/* TRUE when the verdict is not OK; *message then says so for a person
 * ("This calibration makes 99 % of pairs candidates: it does not fit this
 * library's model", "This calibration makes nobody anybody's pair: 0 of
 * 200 faces have a candidate; it does not fit this library's model"). */
gboolean lk_calibration_guard_fails (const LkCalibrationGuard *guard, char **message);

/* A prior for a known embedding model (an importer's source.model: "buffalo_l",
 * "arcface", "facenet", "photoprism", "dlib", case-insensitive), or NULL.
 * The numbers and their evidence are in LIBRARY-FORMAT.md. */
const LkCalibration *lk_calibration_prior_for_model (const char *model);

/* review.json's "calibration" object (see above). */
typedef struct _LkCalibrationHistory LkCalibrationHistory;

/* node: the object as read from review.json, or NULL (nothing chosen yet).
 * A malformed object is LK_CALIBRATE_ERROR_CORRUPT, its message naming the
 * member but not the file: the caller, which knows where the review was
 * read from, prefixes that path. */
LkCalibrationHistory *lk_calibration_history_new (JsonNode *node, GError **error);
void lk_calibration_history_free (LkCalibrationHistory *history);
JsonNode *lk_calibration_history_to_json (const LkCalibrationHistory *history);
/* The chosen calibration, or NULL when the library's own is in force;
 * *source receives its source ("labels", …) when not NULL. */
const LkCalibration *lk_calibration_history_current (const LkCalibrationHistory *history,
                                                     const char **source);
void lk_calibration_history_set (LkCalibrationHistory *history, const LkCalibration *calibration,
                                 const char *source);
/* As set, remembering `after` (lk_review_last_decision_id (), may be NULL). */
void lk_calibration_history_set_after (LkCalibrationHistory *history,
                                       const LkCalibration *calibration, const char *source,
                                       const char *after);
/* FALSE when there is nothing to undo (redo FALSE) or redo; else *source
 * (may be NULL) receives the source of the choice undo would take back or
 * redo would bring again ("library" for the library's own), and *after (may
 * be NULL) its "after". Both are owned by the history. */
gboolean lk_calibration_history_peek (const LkCalibrationHistory *history, gboolean redo,
                                      const char **source, const char **after);
gboolean lk_calibration_history_undo (LkCalibrationHistory *history);
gboolean lk_calibration_history_redo (LkCalibrationHistory *history);

/* The calibration every scan uses: the review's chosen one (review.json's
 * "calibration", may be NULL), else the library's own. *source (may be NULL)
 * receives "library" or the chosen one's source, interned. A malformed
 * object is the library's own, with *error set when error is not NULL. */
LkCalibration lk_calibration_in_force (const LkLibrary *library, JsonNode *review_calibration,
                                       const char **source, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkCalibrationFit, lk_calibration_fit_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkCalibrationHistory, lk_calibration_history_free)

G_END_DECLS
