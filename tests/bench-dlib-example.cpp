/* bench-dlib-example.cpp — the straightforward use of dlib that
 * `likeness-cli import photos` is measured against (issue 31): one thread,
 * dlib's own example pipeline (dnn_face_recognition_ex.cpp) photo after
 * photo — load_image, the HOG detector (on the photo doubled when its longer
 * side is at most 1000 pixels, as the importer does, so both find the same
 * faces), the 5-point shape, the 150 × 150 chip, the ResNet on the photo's
 * chips. It is what tests/bench-import-photos.c races likeness-cli
 * against, as whole processes (the models' loading counted on both sides):
 * run it with OPENBLAS_NUM_THREADS=1, dlib's convolutions then run on the
 * one thread the example uses.
 *
 *   bench-dlib-example MODELS_DIR PHOTO_OR_FOLDER…
 *
 * A folder is searched for *.jpg, *.jpeg and *.png, recursively, in name
 * order. Prints photos, faces, seconds (wall) and CPU seconds after loading.
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <dirent.h>
#include <strings.h>
#include <sys/stat.h>

#include <dlib/dnn.h>
#include <dlib/image_io.h>
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>

using namespace dlib;

template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual = add_prev1<block<N, BN, 1, tag1<SUBNET>>>;
template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual_down = add_prev2<avg_pool<2, 2, 2, 2, skip1<tag2<block<N, BN, 2, tag1<SUBNET>>>>>>;
template <int N, template <typename> class BN, int stride, typename SUBNET>
using block = BN<con<N, 3, 3, 1, 1, relu<BN<con<N, 3, 3, stride, stride, SUBNET>>>>>;
template <int N, typename SUBNET> using ares = relu<residual<block, N, affine, SUBNET>>;
template <int N, typename SUBNET> using ares_down = relu<residual_down<block, N, affine, SUBNET>>;
template <typename SUBNET> using alevel0 = ares_down<256, SUBNET>;
template <typename SUBNET> using alevel1 = ares<256, ares<256, ares_down<256, SUBNET>>>;
template <typename SUBNET> using alevel2 = ares<128, ares<128, ares_down<128, SUBNET>>>;
template <typename SUBNET> using alevel3 = ares<64, ares<64, ares<64, ares_down<64, SUBNET>>>>;
template <typename SUBNET> using alevel4 = ares<32, ares<32, ares<32, SUBNET>>>;
using anet_type = loss_metric<fc_no_bias<
    128, avg_pool_everything<alevel0<alevel1<alevel2<alevel3<alevel4<max_pool<
             3, 3, 2, 2, relu<affine<con<32, 7, 7, 2, 2, input_rgb_image_sized<150>>>>>>>>>>>>>;

static bool
is_photo (const std::string &name)
{
  size_t dot = name.rfind ('.');
  if (dot == std::string::npos)
    return false;
  const char *ext = name.c_str () + dot;
  return strcasecmp (ext, ".jpg") == 0 || strcasecmp (ext, ".jpeg") == 0
         || strcasecmp (ext, ".png") == 0;
}

static void
add_photos (const std::string &path, std::vector<std::string> &out)
{
  struct stat st;
  if (stat (path.c_str (), &st) != 0)
    return;
  if (!S_ISDIR (st.st_mode))
    {
      out.push_back (path);
      return;
    }
  std::vector<std::string> names;
  if (DIR *dir = opendir (path.c_str ()))
    {
      while (struct dirent *e = readdir (dir))
        if (e->d_name[0] != '.')
          names.emplace_back (e->d_name);
      closedir (dir);
    }
  std::sort (names.begin (), names.end ());
  for (const std::string &name : names)
    {
      std::string child = path + "/" + name;
      struct stat cs;
      if (stat (child.c_str (), &cs) != 0)
        continue;
      if (S_ISDIR (cs.st_mode))
        add_photos (child, out);
      else if (is_photo (name))
        out.push_back (child);
    }
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      std::fprintf (stderr, "usage: bench-dlib-example MODELS_DIR PHOTO_OR_FOLDER…\n");
      return 2;
    }
  std::string dir = argv[1];
  std::vector<std::string> paths;
  for (int k = 2; k < argc; k++)
    add_photos (argv[k], paths);
  frontal_face_detector detector = get_frontal_face_detector ();
  shape_predictor sp;
  deserialize (dir + "/shape_predictor_5_face_landmarks.dat") >> sp;
  anet_type net;
  deserialize (dir + "/dlib_face_recognition_resnet_model_v1.dat") >> net;

  auto start = std::chrono::steady_clock::now ();
  std::clock_t cpu = std::clock ();
  long photos = 0, faces_found = 0;
  for (const std::string &path : paths)
    {
      matrix<rgb_pixel> img;
      try
        {
          load_image (img, path);
        }
      catch (const std::exception &)
        {
          continue;
        }
      if (std::max (img.nr (), img.nc ()) <= 1000)
        pyramid_up (img);
      std::vector<matrix<rgb_pixel>> faces;
      for (auto face : detector (img))
        {
          auto shape = sp (img, face);
          matrix<rgb_pixel> face_chip;
          extract_image_chip (img, get_face_chip_details (shape, 150, 0.25), face_chip);
          faces.push_back (std::move (face_chip));
        }
      photos++;
      faces_found += (long) faces.size ();
      if (!faces.empty ())
        {
          std::vector<matrix<float, 0, 1>> descriptors = net (faces);
          (void) descriptors;
        }
    }
  double wall = std::chrono::duration<double> (std::chrono::steady_clock::now () - start).count ();
  double cpus = (double) (std::clock () - cpu) / CLOCKS_PER_SEC;
  std::printf ("photos=%ld faces=%ld seconds=%.3f cpu_seconds=%.3f photos_per_s=%.3f faces_per_s=%.3f\n",
               photos, faces_found, wall, cpus, photos / wall, faces_found / wall);
  return 0;
}
