/* test-outliers — a person's faces, least like the rest first */
#include "config.h"

#include <math.h>

#include "people/lk-outliers.h"

#define DIM 4

static void
set_row (float *rows, guint32 face, double angle, double lift)
{
  /* Unit rows: angle in the (x, y) plane, `lift` of z. */
  double r = sqrt (1.0 - lift * lift);
  rows[face * DIM + 0] = (float) (r * cos (angle));
  rows[face * DIM + 1] = (float) (r * sin (angle));
  rows[face * DIM + 2] = (float) lift;
  rows[face * DIM + 3] = 0.0f;
}

/* Five faces close together and two wrong ones: the wrong ones come first,
 * the farther of them first; the rest by how far each sits from the others. */
static void
test_wrong_faces_first (void)
{
  float rows[9 * DIM] = { 0 };
  /* Faces 0, 2, 3, 5, 6 are one person around angle 0; face 4 is far
   * (angle 1.2), face 1 less far (0.6); face 7 and 8 are not in the person. */
  set_row (rows, 0, 0.00, 0.0);
  set_row (rows, 2, 0.05, 0.0);
  set_row (rows, 3, -0.05, 0.0);
  set_row (rows, 5, 0.02, 0.1);
  set_row (rows, 6, -0.02, 0.1);
  set_row (rows, 4, 1.2, 0.0);
  set_row (rows, 1, 0.6, 0.0);
  set_row (rows, 7, 3.0, 0.0);
  set_row (rows, 8, 2.0, 0.0);
  guint32 faces[] = { 0, 1, 2, 3, 4, 5, 6 };
  double score[7];
  lk_outliers_first (rows, DIM, 9, faces, 7, score);
  g_assert_cmpuint (faces[0], ==, 4);
  g_assert_cmpuint (faces[1], ==, 1);
  for (int k = 1; k < 7; k++)
    g_assert_cmpfloat (score[k - 1], <=, score[k]);
  /* Each score is the mean cosine to the person's other faces, by brute force. */
  for (int k = 0; k < 7; k++)
    {
      double sum = 0.0;
      for (int m = 0; m < 7; m++)
        {
          if (m == k)
            continue;
          double dot = 0.0;
          for (int d = 0; d < DIM; d++)
            dot += (double) rows[faces[k] * DIM + d] * rows[faces[m] * DIM + d];
          sum += dot;
        }
      g_assert_cmpfloat_with_epsilon (score[k], sum / 6.0, 1e-9);
    }
}

/* Ties keep the lower face first; one face scores 1; none is nothing. */
static void
test_ties_and_small_people (void)
{
  float rows[3 * DIM] = { 0 };
  set_row (rows, 0, 0.0, 0.0);
  set_row (rows, 1, 0.0, 0.0);
  set_row (rows, 2, 0.0, 0.0);
  guint32 faces[] = { 2, 0, 1 };
  lk_outliers_first (rows, DIM, 3, faces, 3, NULL);
  g_assert_cmpuint (faces[0], ==, 0);
  g_assert_cmpuint (faces[1], ==, 1);
  g_assert_cmpuint (faces[2], ==, 2);
  guint32 one[] = { 1 };
  double score;
  lk_outliers_first (rows, DIM, 3, one, 1, &score);
  g_assert_cmpfloat (score, ==, 1.0);
  lk_outliers_first (rows, DIM, 3, NULL, 0, NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/outliers/wrong-faces-first", test_wrong_faces_first);
  g_test_add_func ("/outliers/ties-and-small-people", test_ties_and_small_people);
  return g_test_run ();
}
