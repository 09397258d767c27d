/* lk-detect-dlib.h — dlib's face pipeline as an LkFaceEngine (lk-detect.h)
 *
 * The models are the public-domain files of dlib-models (Davis King's
 * README: "anyone can do whatever they want with these model files"),
 * which Debian ships in the dlib source package's orig-dlib-models tarball
 * and in no binary package. shape_predictor_68_face_landmarks.dat is never
 * used: its training data (iBUG 300-W) forbids commercial use.
 *
 * Built only with -Ddetect (libdlib-dev); without it lk_face_engine_dlib_new
 * fails with LK_DETECT_ERROR_UNSUPPORTED.
 */
#pragma once

#include "lk-detect.h"

G_BEGIN_DECLS

/* The model files, with their SHA-256 (Debian's dlib 19.24+dfsg-1). */
extern const LkModelFile lk_dlib_model_recognition; /* dlib_face_recognition_resnet_model_v1.dat */
extern const LkModelFile lk_dlib_model_shape;       /* shape_predictor_5_face_landmarks.dat */
extern const LkModelFile lk_dlib_model_cnn;         /* mmod_human_face_detector.dat */

/* The name written as source.model: the calibration prior of
 * lk_calibration_prior_for_model ("dlib_face_recognition_resnet_model_v1"). */
#define LK_DLIB_MODEL_NAME "dlib_face_recognition_resnet_model_v1"

gboolean lk_face_engine_dlib_available (void);

/* Where dlib's frontal HOG detector is kept once decoded (the user's cache,
 * named by dlib's version): lk-detect-dlib.cpp says why. Only in a build
 * with dlib (LK_HAVE_DLIB): without it there is no detector to cache. */
char *lk_face_engine_dlib_hog_cache_path (void);

/* Loads the models (found by lk_face_models_find, SHA-256 checked). */
LkFaceEngine *lk_face_engine_dlib_new (LkDetectorKind detector, GError **error);

G_END_DECLS
