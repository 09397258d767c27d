/* lk-detect.c — the engine interface's dispatch and the models' lookup
 * (lk-detect.h)
 */
#include "config.h"

#include "lk-detect-dlib.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-detect-error-quark, lk_detect_error)
/* clang-format on */

/* What a user is told to do when a model is missing or wrong. */
#define HOW_TO_INSTALL                                                                             \
  "The models are in Debian's dlib source package (its orig-dlib-models tarball): "                \
  "`apt-get source --download-only dlib`, then extract "                                           \
  "dlib_face_recognition_resnet_model_v1.dat, shape_predictor_5_face_landmarks.dat and "           \
  "mmod_human_face_detector.dat into ~/.local/share/likeness/models (or a folder named by "        \
  "LIKENESS_MODELS_DIR)"

char **
lk_face_models_dirs (void)
{
  GPtrArray *dirs = g_ptr_array_new ();
  const char *env = g_getenv ("LIKENESS_MODELS_DIR");
  if (env != NULL && *env != '\0')
    g_ptr_array_add (dirs, g_strdup (env));
  g_ptr_array_add (dirs, g_build_filename (g_get_user_data_dir (), "likeness", "models", NULL));
  for (const char *const *d = g_get_system_data_dirs (); *d != NULL; d++)
    g_ptr_array_add (dirs, g_build_filename (*d, "likeness", "models", NULL));
  g_ptr_array_add (dirs, NULL);
  return (char **) g_ptr_array_free (dirs, FALSE);
}

static char *
file_sha256 (const char *path, GError **error)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      int saved = errno;
      g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_LOAD,
                   "Cannot read the model %s: %s", path, g_strerror (saved));
      return NULL;
    }
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  guchar buffer[1 << 16];
  size_t n;
  while ((n = fread (buffer, 1, sizeof buffer, f)) > 0)
    g_checksum_update (sum, buffer, n);
  gboolean failed = ferror (f) != 0;
  int saved = errno;
  fclose (f);
  if (failed)
    {
      g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_LOAD,
                   "Cannot read the model %s: %s", path, g_strerror (saved));
      return NULL;
    }
  return g_strdup (g_checksum_get_string (sum));
}

char *
lk_face_models_find (const LkModelFile *model, GError **error)
{
  g_auto (GStrv) dirs = lk_face_models_dirs ();
  for (char **d = dirs; *d != NULL; d++)
    {
      g_autofree char *path = g_build_filename (*d, model->file, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      g_autofree char *digest = file_sha256 (path, error);
      if (digest == NULL)
        return NULL;
      if (strcmp (digest, model->sha256) != 0)
        {
          g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_WRONG,
                       "The model %s is not the expected file: its SHA-256 is %s, expected %s. "
                       "%s",
                       path, digest, model->sha256, HOW_TO_INSTALL);
          return NULL;
        }
      return g_steal_pointer (&path);
    }
  g_autofree char *looked = g_strjoinv (", ", dirs);
  g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_MISSING,
               "The face model %s (SHA-256 %s) is in none of the folders looked in (%s). %s",
               model->file, model->sha256, looked, HOW_TO_INSTALL);
  return NULL;
}

gboolean
lk_face_models_present (const LkModelFile *model)
{
  g_auto (GStrv) dirs = lk_face_models_dirs ();
  for (char **d = dirs; *d != NULL; d++)
    {
      g_autofree char *path = g_build_filename (*d, model->file, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return TRUE;
    }
  return FALSE;
}

LkFaceEngine *
lk_face_engine_dup (LkFaceEngine *engine)
{
  return engine->klass->dup (engine);
}

void
lk_face_engine_free (LkFaceEngine *engine)
{
  if (engine != NULL)
    engine->klass->free (engine);
}

gboolean
lk_face_engine_detect (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                       GArray *faces, GError **error)
{
  return engine->klass->detect (engine, rgb, width, height, stride, faces, error);
}

gboolean
lk_face_engine_embed (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                      const LkDetectedFace *faces, guint n, float *out, GError **error)
{
  if (n == 0)
    return TRUE;
  return engine->klass->embed (engine, rgb, width, height, stride, faces, n, out, error);
}

/* Debian 19.24+dfsg-1's dlib_19.24+dfsg.orig-dlib-models.tar.bz2 (SHA-256
 * 735a840226bbc6e7418b9c8796a979abf1c1cea04b4ee276ca890d8f571453a8). */
const LkModelFile lk_dlib_model_recognition
    = { "dlib_face_recognition_resnet_model_v1.dat",
        "55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30" };
const LkModelFile lk_dlib_model_shape
    = { "shape_predictor_5_face_landmarks.dat",
        "c4b1e9804792707d3a405c2c16a80a20269e6675021f64a41d30fffafbc41888" };
const LkModelFile lk_dlib_model_cnn
    = { "mmod_human_face_detector.dat",
        "be467b1a76f482693de3b0f6a1ff91d092319be71523d4d4b0628f6a53fcb87a" };

gboolean
lk_face_engine_dlib_available (void)
{
#ifdef LK_HAVE_DLIB
  return TRUE;
#else
  return FALSE;
#endif
}

#ifndef LK_HAVE_DLIB
LkFaceEngine *
lk_face_engine_dlib_new (LkDetectorKind detector, GError **error)
{
  (void) detector;
  g_set_error_literal (error, LK_DETECT_ERROR, LK_DETECT_ERROR_UNSUPPORTED,
                       "This build of Likeness finds no faces in photos (built without -Ddetect: "
                       "it needs libdlib-dev)");
  return NULL;
}
#endif
