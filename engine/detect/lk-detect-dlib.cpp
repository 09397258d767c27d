/* lk-detect-dlib.cpp — dlib's face pipeline behind the C interface of
 * lk-detect.h (lk-detect-dlib.h)
 *
 * The pipeline is dlib's own example (dnn_face_recognition_ex.cpp): detect
 * (HOG, or the MMOD CNN), the 5-point shape, a 150 × 150 chip with 0.25
 * padding (get_face_chip_details), the 128-d ResNet. Nothing of C++ leaves
 * this file: every exception is caught and becomes a GError.
 */
#include "config.h"

#include "lk-detect-dlib.h"

#include <dlfcn.h>

#include <cmath>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <dlib/dnn.h>
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>
#include <dlib/revision.h>

namespace
{
using namespace dlib;

/* dlib_face_recognition_resnet_model_v1's network, as dlib's example
 * declares it (the weights file holds no architecture). */
template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual = add_prev1<block<N, BN, 1, tag1<SUBNET> > >;
template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual_down
    = add_prev2<avg_pool<2, 2, 2, 2, skip1<tag2<block<N, BN, 2, tag1<SUBNET> > > > > >;
template <int N, template <typename> class BN, int stride, typename SUBNET>
using block = BN<con<N, 3, 3, 1, 1, relu<BN<con<N, 3, 3, stride, stride, SUBNET> > > > >;
template <int N, typename SUBNET> using ares = relu<residual<block, N, affine, SUBNET> >;
template <int N, typename SUBNET> using ares_down = relu<residual_down<block, N, affine, SUBNET> >;
template <typename SUBNET> using alevel0 = ares_down<256, SUBNET>;
template <typename SUBNET> using alevel1 = ares<256, ares<256, ares_down<256, SUBNET> > >;
template <typename SUBNET> using alevel2 = ares<128, ares<128, ares_down<128, SUBNET> > >;
template <typename SUBNET> using alevel3 = ares<64, ares<64, ares<64, ares_down<64, SUBNET> > > >;
template <typename SUBNET> using alevel4 = ares<32, ares<32, ares<32, SUBNET> > >;
using anet_type = loss_metric<fc_no_bias<
    128, avg_pool_everything<alevel0<alevel1<alevel2<alevel3<alevel4<max_pool<
             3, 3, 2, 2,
             relu<affine<con<32, 7, 7, 2, 2, input_rgb_image_sized<150> > > > > > > > > > > > >;

/* mmod_human_face_detector's network (dnn_mmod_face_detection_ex.cpp). */
template <long num_filters, typename SUBNET> using con5d = con<num_filters, 5, 5, 2, 2, SUBNET>;
template <long num_filters, typename SUBNET> using con5 = con<num_filters, 5, 5, 1, 1, SUBNET>;
template <typename SUBNET>
using downsampler
    = relu<affine<con5d<32, relu<affine<con5d<32, relu<affine<con5d<16, SUBNET> > > > > > > > >;
template <typename SUBNET> using rcon5 = relu<affine<con5<45, SUBNET> > >;
using mmod_type = loss_mmod<
    con<1, 9, 9, 1, 1,
        rcon5<rcon5<rcon5<downsampler<input_rgb_image_pyramid<pyramid_down<6> > > > > > > >;

/* A photo whose longer side is at most this is searched at twice its size
 * too, as dlib's examples do (pyramid_up): the HOG detector's window is
 * 80 × 80 pixels, so faces of 40 pixels are found only in the doubled
 * image. Larger photos are searched as they are (the importer decodes them
 * at most LK_PHOTOS_DETECT_SIDE on their longer side). */
constexpr long UPSAMPLE_BELOW = 1000;
/* The ResNet is fed this many chips at once. */
constexpr unsigned long EMBED_BATCH = 16;

struct DlibEngine
{
  LkFaceEngine parent;
  LkDetectorKind kind;
  frontal_face_detector hog;
  mmod_type cnn;
  shape_predictor shape;
  anet_type net;
};

matrix<rgb_pixel>
to_matrix (const guint8 *rgb, int width, int height, int stride)
{
  matrix<rgb_pixel> img (height, width);
  for (int y = 0; y < height; y++)
    {
      const guint8 *row = rgb + (gsize) y * stride;
      for (int x = 0; x < width; x++)
        img (y, x) = rgb_pixel (row[3 * x], row[3 * x + 1], row[3 * x + 2]);
    }
  return img;
}

void
set_exception (GError **error, const char *what, const std::exception &e)
{
  g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_IMAGE, "%s: %s", what, e.what ());
}

LkFaceEngine *engine_dup (LkFaceEngine *engine);
void engine_free (LkFaceEngine *engine);
gboolean engine_detect (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                        GArray *faces, GError **error);
gboolean engine_embed (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
                       const LkDetectedFace *faces, guint n, float *out, GError **error);

const LkFaceEngineClass dlib_class
    = { LK_DLIB_MODEL_NAME, 128, engine_dup, engine_free, engine_detect, engine_embed };

LkFaceEngine *
engine_dup (LkFaceEngine *engine)
{
  try
    {
      return &(new DlibEngine (*reinterpret_cast<DlibEngine *> (engine)))->parent;
    }
  catch (const std::exception &)
    {
      return nullptr;
    }
}

void
engine_free (LkFaceEngine *engine)
{
  delete reinterpret_cast<DlibEngine *> (engine);
}

gboolean
engine_detect (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
               GArray *faces, GError **error)
{
  DlibEngine *self = reinterpret_cast<DlibEngine *> (engine);
  try
    {
      matrix<rgb_pixel> img = to_matrix (rgb, width, height, stride);
      double scale = 1.0;
      if (std::max (width, height) <= UPSAMPLE_BELOW)
        {
          pyramid_up (img);
          scale = 2.0;
        }
      std::vector<std::pair<double, rectangle> > found;
      if (self->kind == LK_DETECTOR_CNN)
        for (const mmod_rect &r : self->cnn (img))
          found.emplace_back (r.detection_confidence, r.rect);
      else
        {
          std::vector<rect_detection> dets;
          self->hog (img, dets);
          for (const rect_detection &d : dets)
            found.emplace_back (d.detection_confidence, d.rect);
        }
      for (const auto &f : found)
        {
          full_object_detection shape = self->shape (img, f.second);
          LkDetectedFace face = {};
          const rectangle &r = f.second;
          face.box[0] = r.left () / scale;
          face.box[1] = r.top () / scale;
          face.box[2] = r.width () / scale;
          face.box[3] = r.height () / scale;
          face.score = f.first;
          for (unsigned long k = 0; k < 5 && k < shape.num_parts (); k++)
            {
              face.landmarks[2 * k] = shape.part (k).x () / scale;
              face.landmarks[2 * k + 1] = shape.part (k).y () / scale;
            }
          g_array_append_val (faces, face);
        }
      return TRUE;
    }
  catch (const std::exception &e)
    {
      set_exception (error, "Face detection failed", e);
      return FALSE;
    }
}

gboolean
engine_embed (LkFaceEngine *engine, const guint8 *rgb, int width, int height, int stride,
              const LkDetectedFace *faces, guint n, float *out, GError **error)
{
  DlibEngine *self = reinterpret_cast<DlibEngine *> (engine);
  try
    {
      matrix<rgb_pixel> img = to_matrix (rgb, width, height, stride);
      std::vector<chip_details> details;
      for (guint k = 0; k < n; k++)
        {
          const LkDetectedFace &f = faces[k];
          rectangle r (std::lround (f.box[0]), std::lround (f.box[1]),
                       std::lround (f.box[0] + f.box[2]) - 1,
                       std::lround (f.box[1] + f.box[3]) - 1);
          std::vector<point> parts;
          for (int p = 0; p < 5; p++)
            parts.emplace_back (std::lround (f.landmarks[2 * p]),
                                std::lround (f.landmarks[2 * p + 1]));
          details.push_back (get_face_chip_details (full_object_detection (r, parts), 150, 0.25));
        }
      dlib::array<matrix<rgb_pixel> > chips;
      extract_image_chips (img, details, chips);
      std::vector<matrix<rgb_pixel> > batch (chips.begin (), chips.end ());
      std::vector<matrix<float, 0, 1> > vectors = self->net (batch, EMBED_BATCH);
      for (guint k = 0; k < n; k++)
        {
          const matrix<float, 0, 1> &v = vectors[k];
          double norm = std::sqrt ((double) sum (squared (v)));
          if (!(norm > 0) || !std::isfinite (norm))
            {
              g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_IMAGE,
                           "The face at %.0f,%.0f gave an embedding of norm %g", faces[k].box[0],
                           faces[k].box[1], norm);
              return FALSE;
            }
          for (long c = 0; c < 128; c++)
            out[(gsize) k * 128 + c] = (float) (v (c) / norm);
        }
      return TRUE;
    }
  catch (const std::exception &e)
    {
      set_exception (error, "Face embedding failed", e);
      return FALSE;
    }
}

} // namespace

/* dlib's frontal HOG detector is built into libdlib as a string compressed
 * with dlib's own context-model entropy coder, and get_frontal_face_detector
 * decodes it at every call: 0.7–0.8 CPU-s at every start (16.5 % of the
 * samples of an import of 12 photos of 1.5 MP), for a
 * detector that dlib serialises in 155,005 bytes and reads back in 7–11 ms.
 * So it is decoded once per user and dlib version and kept in the user's
 * cache (lk_face_engine_dlib_hog_cache_path), its SHA-256 first: a file that
 * is missing, cut, altered or unreadable is decoded again and rewritten
 * (atomically: a second import running meanwhile reads the old file or the
 * new one). The detector read back is the one decoded (dlib serialises its
 * weights exactly and rebuilds the filters from them): test-import-photos
 * proves the same library from a cold and a warm cache. */
#define HOG_DIGEST_CHARS 64

static bool
hog_from_cache (const char *path, frontal_face_detector &detector)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &contents, &length, NULL) || length <= HOG_DIGEST_CHARS)
    return false;
  g_autofree char *digest = g_compute_checksum_for_data (
      G_CHECKSUM_SHA256, (const guchar *) contents + HOG_DIGEST_CHARS, length - HOG_DIGEST_CHARS);
  if (memcmp (digest, contents, HOG_DIGEST_CHARS) != 0)
    return false;
  try
    {
      std::istringstream in (std::string (contents + HOG_DIGEST_CHARS, length - HOG_DIGEST_CHARS));
      deserialize (detector, in);
      return true;
    }
  catch (const std::exception &)
    {
      return false;
    }
}

static frontal_face_detector
load_hog (void)
{
  frontal_face_detector detector;
  g_autofree char *path = lk_face_engine_dlib_hog_cache_path ();
  if (hog_from_cache (path, detector))
    return detector;
  detector = get_frontal_face_detector ();
  std::ostringstream out;
  serialize (detector, out);
  const std::string bytes = out.str ();
  g_autofree char *digest = g_compute_checksum_for_data (
      G_CHECKSUM_SHA256, (const guchar *) bytes.data (), bytes.size ());
  std::string file = std::string (digest) + bytes;
  g_autofree char *folder = g_path_get_dirname (path);
  /* A cache that cannot be written costs only the next start's time. */
  if (g_mkdir_with_parents (folder, 0755) == 0)
    g_file_set_contents_full (path, file.data (), (gssize) file.size (),
                              G_FILE_SET_CONTENTS_CONSISTENT, 0644, NULL);
  return detector;
}

extern "C" char *
lk_face_engine_dlib_hog_cache_path (void)
{
  return g_strdup_printf ("%s/likeness/dlib-%d.%d.%d-frontal-face-detector.dat",
                          g_get_user_cache_dir (), DLIB_MAJOR_VERSION, DLIB_MINOR_VERSION,
                          DLIB_PATCH_VERSION);
}

/* dlib's convolutions multiply through BLAS; Debian's default BLAS is
 * OpenBLAS, which runs each multiply on every core. The importer already
 * runs one photo per core, and OpenBLAS's own threads then only compete
 * with it: one BLAS thread (on dlib's example pipeline, about a fifth less
 * CPU and wall time than OpenBLAS's two; docs/benchmarks.md).
 * Looked up at run time: another BLAS has no such call and is left as it is. */
static void
single_threaded_blas (void)
{
  using SetThreads = void (*) (int);
  void *symbol = dlsym (RTLD_DEFAULT, "openblas_set_num_threads");
  if (symbol != nullptr)
    reinterpret_cast<SetThreads> (symbol) (1);
}

extern "C" LkFaceEngine *
lk_face_engine_dlib_new (LkDetectorKind detector, GError **error)
{
  single_threaded_blas ();
  g_autofree char *recognition = lk_face_models_find (&lk_dlib_model_recognition, error);
  if (recognition == NULL)
    return NULL;
  g_autofree char *shape = lk_face_models_find (&lk_dlib_model_shape, error);
  if (shape == NULL)
    return NULL;
  g_autofree char *cnn = NULL;
  if (detector == LK_DETECTOR_CNN
      && (cnn = lk_face_models_find (&lk_dlib_model_cnn, error)) == NULL)
    return NULL;

  DlibEngine *self = nullptr;
  const char *loading = recognition;
  try
    {
      self = new DlibEngine ();
      self->parent.klass = &dlib_class;
      self->kind = detector;
      self->hog = load_hog ();
      deserialize (recognition) >> self->net;
      loading = shape;
      deserialize (shape) >> self->shape;
      if (cnn != NULL)
        {
          loading = cnn;
          deserialize (cnn) >> self->cnn;
        }
      return &self->parent;
    }
  catch (const std::exception &e)
    {
      delete self;
      g_set_error (error, LK_DETECT_ERROR, LK_DETECT_ERROR_MODEL_LOAD,
                   "Cannot load the model %s: %s", loading, e.what ());
      return NULL;
    }
}
