/* lk-sample.h — a synthetic library with ground truth
 *
 * Writes a folder in the format of LIBRARY-FORMAT.md whose embeddings behave
 * like ArcFace-style embeddings of a personal photo library (the model and its
 * numbers are in lk-sample.c), whose faces carry ground-truth `label`s, and
 * whose thumbnails are procedurally drawn faces in which a person can tell who
 * is who. It is the bundled sample, the input of the scan and clustering
 * benchmarks, and the ground truth their tests measure against.
 *
 * Deterministic: the same options give byte-identical files on every platform
 * (only IEEE-754 correctly rounded operations — + − × ÷ √ — touch the numbers).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LK_SAMPLE_ERROR (lk_sample_error_quark ())
GQuark lk_sample_error_quark (void);

typedef enum
{
  LK_SAMPLE_ERROR_INVALID, /* an option is out of range */
  LK_SAMPLE_ERROR_EXISTS,  /* the folder holds something that is not a Likeness library */
  LK_SAMPLE_ERROR_IO,      /* a file could not be written */
} LkSampleError;

#define LK_SAMPLE_DEFAULT_DIM    512
#define LK_SAMPLE_MAX_FACES      10000000
/* Thumbnails are this many pixels on a side. */
#define LK_SAMPLE_THUMBNAIL_SIDE 96
/* Photos are written this many pixels on their long side (the manifest keeps
 * a camera's 4032 × 3024; boxes are in those pixels): see lk-sample.c. */
#define LK_SAMPLE_PHOTO_SIDE     512

/* Whose statistics the embeddings have. ArcFace: lk-sample.c's model (same
 * person ≈ 0.65, strangers ≈ 0.03). FaceNet-like: the same faces with a
 * share s = 0.55 of every row along one direction shared by all, so every
 * cosine c becomes ≈ s + (1 − s)·c (same person ≈ 0.84, strangers ≈ 0.56,
 * as PhotoPrism's FaceNet puts one person at 0.8–0.9); its pairs rank as
 * ArcFace's do. dlib-like: the percentiles of dlib's ResNet on real
 * photographs (one person 5th / 50th / 95th percentile 0.958 /
 * 0.975 / 0.989, strangers' median 0.826, 99.9th 0.930), which no such
 * share of ArcFace's faces gives (its strangers are too narrow a peak for
 * its people): a face is closer to its centre (0.93), the centres share a
 * few traits in varying measure, and s = 0.805. */
typedef enum
{
  LK_SAMPLE_MODEL_ARCFACE = 0,
  LK_SAMPLE_MODEL_FACENET,
  LK_SAMPLE_MODEL_DLIB,
} LkSampleModel;

/* How hard the people are to tell apart, beyond the personal library of
 * lk-sample.c (PERSONAL). LOOKALIKES: one identity in 20 (not 200) has a
 * look-alike, six pairs (not three) among the twelve biggest, their centres
 * at cosine 0.45–0.65 (not 0.35–0.55). BRIDGES: a quarter of the faces of
 * single portraits (not 5 %) are blurred, and each blurred face leans
 * towards a stranger (its centre pulled 0.5 of the way to another
 * identity's), so one blurred face can link two people. GROUPS: photos of
 * 4–6 faces are 65 % (not 20 %), so the rule that two faces of one photo
 * are two people binds far more often. */
typedef enum
{
  LK_SAMPLE_FAMILY_PERSONAL = 0,
  LK_SAMPLE_FAMILY_LOOKALIKES,
  LK_SAMPLE_FAMILY_BRIDGES,
  LK_SAMPLE_FAMILY_GROUPS,
} LkSampleFamily;

/* Called from the calling thread while the photos are drawn, about four
 * times a second, and once with done == total. */
typedef void (*LkSampleProgress) (gsize done, gsize total, gpointer data);

typedef struct
{
  gsize faces; /* 0 … LK_SAMPLE_MAX_FACES */
  guint dim;   /* 8 … LK_LIBRARY_MAX_DIM */
  guint64 seed;
  gboolean thumbnails; /* draw and write thumbs/NNNNNN.png */
  LkSampleModel model; /* the statistics of the embeddings */
  LkSampleFamily family;
  gboolean photos;           /* write a photo per photos[].path: YYYY/IMG_NNNN.png */
  LkSampleProgress progress; /* may be NULL */
  gpointer progress_data;
} LkSampleOptions;

#define LK_SAMPLE_OPTIONS_DEFAULT                                                                  \
  ((LkSampleOptions){ 2000, LK_SAMPLE_DEFAULT_DIM, 1, TRUE, LK_SAMPLE_MODEL_ARCFACE,               \
                      LK_SAMPLE_FAMILY_PERSONAL, TRUE, NULL, NULL })

/* Creates `folder` if needed and writes the library into it. Refuses a folder
 * that holds files but is not a Likeness library; overwrites a library. */
gboolean lk_sample_write (const char *folder, const LkSampleOptions *options, GError **error);

/* Where the bundled sample library lives: $LIKENESS_SAMPLE_DIR when set (an
 * uninstalled build sets it through `meson devenv`), else PKGDATADIR/sample. */
char *lk_sample_default_dir (void);

G_END_DECLS
