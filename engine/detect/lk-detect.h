/* lk-detect.h — finding faces in a decoded photo and embedding them
 *
 * One small interface (LkFaceEngine) between the photo importer and a face
 * model: detect faces in an RGB image (boxes, a score, five landmarks), then
 * embed them (one unit vector per face). dlib is the first engine
 * (lk-detect-dlib.h: HOG or CNN detector, 5-point shape predictor, 150 × 150
 * chip, 128-d ResNet); another model (an ONNX SFace or ArcFace) would be a
 * second implementation of these few functions.
 *
 * An engine is used by one thread at a time: its networks keep their
 * activations inside. lk_face_engine_dup () gives a worker its own (the
 * weights are copied, ~30 MB for dlib's).
 *
 * The models are files looked up in LIKENESS_MODELS_DIR, then
 * $XDG_DATA_HOME/likeness/models, then every $XDG_DATA_DIRS/likeness/models
 * (lk_face_models_find), and each is checked by its SHA-256 before use;
 * nothing is downloaded, ever.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LK_DETECT_ERROR (lk_detect_error_quark ())
GQuark lk_detect_error_quark (void);

typedef enum
{
  LK_DETECT_ERROR_MODEL_MISSING, /* a model file is not in any of the folders looked in */
  LK_DETECT_ERROR_MODEL_WRONG,   /* a model file is there but is not the expected one */
  LK_DETECT_ERROR_MODEL_LOAD,    /* the model could not be read */
  LK_DETECT_ERROR_IMAGE,         /* the image cannot be processed */
  LK_DETECT_ERROR_UNSUPPORTED,   /* built without face detection (-Ddetect=disabled) */
} LkDetectError;

typedef enum
{
  LK_DETECTOR_HOG, /* dlib's frontal HOG detector: fast, frontal faces of 80 px and more */
  LK_DETECTOR_CNN, /* dlib's MMOD CNN: small and turned faces, ~10x slower on a CPU */
} LkDetectorKind;

/* One face found: its box in the image's pixels, the detector's score (HOG:
 * the SVM's margin, > 0; CNN: its confidence) and five landmarks (x, y),
 * the model's order (dlib: the eyes' corners, then below the nose). */
typedef struct
{
  double box[4]; /* x, y, w, h */
  double score;
  double landmarks[10];
} LkDetectedFace;

/* A model file an engine needs: its name and SHA-256. */
typedef struct
{
  const char *file;
  const char *sha256;
} LkModelFile;

/* The folders models are looked up in, in order (a NULL-terminated list). */
char **lk_face_models_dirs (void);

/* The full path of `model` in the first of lk_face_models_dirs () that has
 * it, checked against its SHA-256. A file missing everywhere, or a
 * first-found file with another digest, is an error naming the folders or
 * the path, what was expected, and how to install the models. */
char *lk_face_models_find (const LkModelFile *model, GError **error);

/* TRUE when one of lk_face_models_dirs () holds a file named as `model`
 * (its content unchecked: lk_face_models_find checks it). */
gboolean lk_face_models_present (const LkModelFile *model);

typedef struct _LkFaceEngine LkFaceEngine;

/* The functions an engine implements. */
typedef struct
{
  const char *name; /* the model written into the library's source.model */
  guint dim;        /* floats per embedding */
  LkFaceEngine *(*dup) (LkFaceEngine *engine);
  void (*free) (LkFaceEngine *engine);
  /* `rgb`: width × height pixels of 3 bytes, rows `stride` bytes apart.
   * Appends LkDetectedFace to `faces`. */
  gboolean (*detect) (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                      GArray *faces, GError **error);
  /* Writes n × dim floats (unit vectors) for faces found by detect () on the
   * same image. */
  gboolean (*embed) (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                     const LkDetectedFace *faces, guint n, float *out, GError **error);
} LkFaceEngineClass;

struct _LkFaceEngine
{
  const LkFaceEngineClass *klass;
};

static inline const char *
lk_face_engine_name (const LkFaceEngine *engine)
{
  return engine->klass->name;
}

static inline guint
lk_face_engine_dim (const LkFaceEngine *engine)
{
  return engine->klass->dim;
}

LkFaceEngine *lk_face_engine_dup (LkFaceEngine *engine);
void lk_face_engine_free (LkFaceEngine *engine);
gboolean lk_face_engine_detect (LkFaceEngine *engine, const guint8 *rgb, int width, int height,
                                int stride, GArray *faces, GError **error);
gboolean lk_face_engine_embed (LkFaceEngine *engine, const guint8 *rgb, int width, int height,
                               int stride, const LkDetectedFace *faces, guint n, float *out,
                               GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkFaceEngine, lk_face_engine_free)

G_END_DECLS
