/* lk-sample-face.c — procedurally drawn face thumbnails for the sample
 *
 * The sample is for reviewing clusters by eye, so a person must be able to
 * tell two people apart and see one person in many faces. Each identity gets
 * a look (LkSampleLook: skin, hair colour and style, eye colour, glasses,
 * beard, face shape, brows, nose, mouth, shirt and background) from its own
 * random stream; each face varies it a little (pose: shift, roll, turn and
 * scale; expression: smile, brows, blink; light). Look-alike relatives share
 * skin, hair and eye colour. A low-quality face is drawn small and blurred,
 * as the detector saw it.
 *
 * Drawing is a few dozen filled or stroked shapes (ellipses, capsules, rounded
 * boxes, half-planes for arcs and clipping) with anti-aliasing by coverage:
 * each shape is a signed distance d in pixels (for an ellipse, Quílez's
 * first-order approximation, exact on the outline) and covers a pixel by
 * clamp (½ − d, 0, 1). That is one evaluation per pixel instead of 16 samples,
 * so an 18,143-face library draws in seconds. The shapes live in a 96-unit
 * face frame; the pose maps pixels into it. No libm transcendental is used
 * (rotations are kept as cosine–sine pairs built with √), so thumbnails, like
 * the embeddings, are the same bytes everywhere.
 */
#include "config.h"

#include "lk-sample-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRAME 96.0

typedef enum
{
  SHAPE_ELLIPSE,
  SHAPE_CAPSULE,
  SHAPE_BOX,
  SHAPE_HALFPLANE,
} ShapeKind;

/* Ellipse: centre (x0, y0), radii (a, b), rotation (cs, sn).
 * Capsule: segment (x0, y0)–(x1, y1), radius r.
 * Box: centre (x0, y0), half sizes (a, b), corner radius r.
 * Half-plane: points with (x, y)·(cs, sn) < r are inside.
 * stroke > 0 makes an outline of that width; `outside` turns it inside out. */
typedef struct
{
  ShapeKind kind;
  double x0, y0, x1, y1, a, b, r, cs, sn, stroke;
  gboolean outside; /* the shape's complement */
} Shape;

typedef struct
{
  int side;
  float *rgb;
  /* The pose: face frame → pixels is p = centre + scale·R·(q − centre) + shift. */
  double scale, cs, sn, dx, dy;
} Canvas;

static double
clampd (double x, double lo, double hi)
{
  return x < lo ? lo : x > hi ? hi : x;
}

static Shape
ellipse (double x, double y, double a, double b)
{
  return (Shape){ .kind = SHAPE_ELLIPSE, .x0 = x, .y0 = y, .a = a, .b = b, .cs = 1.0 };
}

/* An ellipse turned by an angle whose tangent is t. */
static Shape
ellipse_turned (double x, double y, double a, double b, double t)
{
  Shape s = ellipse (x, y, a, b);
  s.cs = 1.0 / sqrt (1.0 + t * t);
  s.sn = t * s.cs;
  return s;
}

static Shape
capsule (double x0, double y0, double x1, double y1, double r)
{
  return (Shape){ .kind = SHAPE_CAPSULE, .x0 = x0, .y0 = y0, .x1 = x1, .y1 = y1, .r = r };
}

static Shape
box (double x, double y, double a, double b, double r)
{
  return (Shape){ .kind = SHAPE_BOX, .x0 = x, .y0 = y, .a = a, .b = b, .r = r };
}

/* Inside where y < at (above) or y > at (below). */
static Shape
above (double at)
{
  return (Shape){ .kind = SHAPE_HALFPLANE, .sn = 1.0, .r = at };
}

static Shape
below (double at)
{
  return (Shape){ .kind = SHAPE_HALFPLANE, .sn = -1.0, .r = -at };
}

static Shape
outside (Shape s)
{
  s.outside = TRUE;
  return s;
}

static Shape
stroked (Shape s, double width)
{
  s.stroke = width;
  return s;
}

/* Signed distance in face units, negative inside. */
static double
shape_distance (const Shape *s, double x, double y)
{
  double d;

  switch (s->kind)
    {
      case SHAPE_ELLIPSE:
        {
          double px = x - s->x0, py = y - s->y0;
          double u = s->cs * px + s->sn * py, v = -s->sn * px + s->cs * py;
          double k0 = sqrt ((u / s->a) * (u / s->a) + (v / s->b) * (v / s->b));
          double k1 = sqrt ((u / (s->a * s->a)) * (u / (s->a * s->a))
                            + (v / (s->b * s->b)) * (v / (s->b * s->b)));
          d = k1 > 1e-9 ? k0 * (k0 - 1.0) / k1 : -MIN (s->a, s->b);
          break;
        }
      case SHAPE_CAPSULE:
        {
          double ax = x - s->x0, ay = y - s->y0, bx = s->x1 - s->x0, by = s->y1 - s->y0;
          double len2 = bx * bx + by * by;
          double h = len2 > 0.0 ? clampd ((ax * bx + ay * by) / len2, 0.0, 1.0) : 0.0;
          double ex = ax - h * bx, ey = ay - h * by;
          d = sqrt (ex * ex + ey * ey) - s->r;
          break;
        }
      case SHAPE_BOX:
        {
          double qx = fabs (x - s->x0) - s->a + s->r, qy = fabs (y - s->y0) - s->b + s->r;
          double ox = MAX (qx, 0.0), oy = MAX (qy, 0.0);
          d = sqrt (ox * ox + oy * oy) + MIN (MAX (qx, qy), 0.0) - s->r;
          break;
        }
      case SHAPE_HALFPLANE:
      default:
        d = s->cs * x + s->sn * y - s->r;
        break;
    }
  d = s->stroke > 0.0 ? fabs (d) - s->stroke / 2.0 : d;
  return s->outside ? -d : d;
}

/* The face-frame box a shape lives in; FALSE for an unbounded half-plane. */
static gboolean
shape_bounds (const Shape *s, double *x0, double *y0, double *x1, double *y1)
{
  double pad = s->stroke / 2.0 + 1.0;

  if (s->outside)
    return FALSE;

  switch (s->kind)
    {
      case SHAPE_ELLIPSE:
        pad += MAX (s->a, s->b);
        *x0 = s->x0 - pad, *x1 = s->x0 + pad, *y0 = s->y0 - pad, *y1 = s->y0 + pad;
        return TRUE;
      case SHAPE_CAPSULE:
        pad += s->r;
        *x0 = MIN (s->x0, s->x1) - pad, *x1 = MAX (s->x0, s->x1) + pad;
        *y0 = MIN (s->y0, s->y1) - pad, *y1 = MAX (s->y0, s->y1) + pad;
        return TRUE;
      case SHAPE_BOX:
        *x0 = s->x0 - s->a - pad, *x1 = s->x0 + s->a + pad;
        *y0 = s->y0 - s->b - pad, *y1 = s->y0 + s->b + pad;
        return TRUE;
      case SHAPE_HALFPLANE:
      default:
        return FALSE;
    }
}

static void
to_pixels (const Canvas *c, double x, double y, double *px, double *py)
{
  double k = c->side / FRAME, h = FRAME / 2.0;
  double u = (x - h) * c->scale, v = (y - h) * c->scale;
  *px = (h + c->cs * u - c->sn * v + c->dx) * k;
  *py = (h + c->sn * u + c->cs * v + c->dy) * k;
}

static void
to_frame (const Canvas *c, double px, double py, double *x, double *y)
{
  double k = FRAME / c->side, h = FRAME / 2.0;
  double u = px * k - h - c->dx, v = py * k - h - c->dy;
  *x = h + (c->cs * u + c->sn * v) / c->scale;
  *y = h + (-c->sn * u + c->cs * v) / c->scale;
}

/* Paints `shape`, cut to `clip` and with `hole` removed (either may be NULL),
 * in `colour` at opacity `alpha`. */
static void
paint (Canvas *c, const Shape *shape, const Shape *clip, const Shape *hole, const float colour[3],
       double alpha)
{
  double fx0 = 0, fy0 = 0, fx1 = FRAME, fy1 = FRAME, bx0, by0, bx1, by1;
  double pixel = c->side / FRAME * c->scale; /* pixels per face unit */

  if (shape_bounds (shape, &bx0, &by0, &bx1, &by1))
    fx0 = bx0, fy0 = by0, fx1 = bx1, fy1 = by1;
  if (clip != NULL && shape_bounds (clip, &bx0, &by0, &bx1, &by1))
    fx0 = MAX (fx0, bx0), fy0 = MAX (fy0, by0), fx1 = MIN (fx1, bx1), fy1 = MIN (fy1, by1);
  if (shape->kind == SHAPE_HALFPLANE && (clip == NULL || clip->kind == SHAPE_HALFPLANE))
    fx0 = -FRAME, fy0 = -FRAME, fx1 = 2 * FRAME, fy1 = 2 * FRAME;

  /* The pixel box of the face-frame box's four corners. */
  double xs[4], ys[4];
  to_pixels (c, fx0, fy0, &xs[0], &ys[0]);
  to_pixels (c, fx1, fy0, &xs[1], &ys[1]);
  to_pixels (c, fx0, fy1, &xs[2], &ys[2]);
  to_pixels (c, fx1, fy1, &xs[3], &ys[3]);
  double lx = xs[0], hx = xs[0], ly = ys[0], hy = ys[0];
  for (int k = 1; k < 4; k++)
    lx = MIN (lx, xs[k]), hx = MAX (hx, xs[k]), ly = MIN (ly, ys[k]), hy = MAX (hy, ys[k]);
  int x0 = (int) clampd (floor (lx), 0, c->side), x1 = (int) clampd (ceil (hx), 0, c->side);
  int y0 = (int) clampd (floor (ly), 0, c->side), y1 = (int) clampd (ceil (hy), 0, c->side);

  for (int py = y0; py < y1; py++)
    for (int px = x0; px < x1; px++)
      {
        double x, y;
        to_frame (c, px + 0.5, py + 0.5, &x, &y);
        double d = shape_distance (shape, x, y);
        if (clip != NULL)
          d = MAX (d, shape_distance (clip, x, y));
        if (hole != NULL)
          d = MAX (d, -shape_distance (hole, x, y));
        double cover = clampd (0.5 - d * pixel, 0.0, 1.0) * alpha;
        if (cover <= 0.0)
          continue;
        float *p = c->rgb + ((gsize) py * c->side + px) * 3;
        for (int k = 0; k < 3; k++)
          p[k] = (float) (p[k] + (colour[k] - p[k]) * cover);
      }
}

/* Colours */

static void
mix (float out[3], const float a[3], const float b[3], double t)
{
  for (int k = 0; k < 3; k++)
    out[k] = (float) (a[k] + (b[k] - a[k]) * t);
}

static void
shade (float out[3], const float in[3], double factor)
{
  for (int k = 0; k < 3; k++)
    out[k] = (float) clampd (in[k] * factor, 0.0, 1.0);
}

static void
jitter (LkSampleRng *rng, float c[3], double amount)
{
  double all = lk_sample_rng_range (rng, -amount, amount);
  for (int k = 0; k < 3; k++)
    c[k] = (float) clampd (c[k] + all + lk_sample_rng_range (rng, -amount, amount) / 3, 0.0, 1.0);
}

/* Hue h in [0, 6), saturation s, value v. */
static void
hsv (float out[3], double h, double s, double v)
{
  static const double offset[3] = { 5.0, 3.0, 1.0 };
  for (int k = 0; k < 3; k++)
    {
      double x = offset[k] + h;
      x -= 6.0 * floor (x / 6.0);
      out[k] = (float) (v - v * s * clampd (MIN (x, 4.0 - x), 0.0, 1.0));
    }
}

static const float skin_tones[3][4][3] = {
  { { 0.97f, 0.82f, 0.71f },
    { 0.93f, 0.75f, 0.63f },
    { 0.99f, 0.86f, 0.77f },
    { 0.90f, 0.71f, 0.59f } },
  { { 0.85f, 0.65f, 0.48f },
    { 0.78f, 0.58f, 0.42f },
    { 0.88f, 0.71f, 0.53f },
    { 0.73f, 0.53f, 0.38f } },
  { { 0.56f, 0.39f, 0.27f },
    { 0.46f, 0.31f, 0.21f },
    { 0.63f, 0.45f, 0.32f },
    { 0.38f, 0.25f, 0.17f } },
};

static const float hair_colours[][3] = {
  { 0.08f, 0.07f, 0.07f }, /* black */
  { 0.24f, 0.16f, 0.10f }, /* dark brown */
  { 0.45f, 0.30f, 0.18f }, /* brown */
  { 0.56f, 0.26f, 0.12f }, /* auburn */
  { 0.88f, 0.74f, 0.45f }, /* blond */
  { 0.80f, 0.40f, 0.16f }, /* ginger */
  { 0.62f, 0.62f, 0.64f }, /* grey */
  { 0.92f, 0.92f, 0.90f }, /* white */
};

static const float eye_colours[][3] = {
  { 0.40f, 0.25f, 0.12f }, { 0.20f, 0.12f, 0.07f }, { 0.25f, 0.48f, 0.82f },
  { 0.28f, 0.56f, 0.34f }, { 0.50f, 0.56f, 0.62f }, { 0.56f, 0.45f, 0.20f },
};

static const float frame_colours[][3] = {
  { 0.06f, 0.06f, 0.07f }, { 0.45f, 0.26f, 0.12f }, { 0.75f, 0.12f, 0.15f },
  { 0.80f, 0.65f, 0.25f }, { 0.15f, 0.30f, 0.65f },
};

static guint
pick (LkSampleRng *rng, const double *weights, guint n)
{
  double u = lk_sample_rng_uniform (rng);
  for (guint k = 0; k + 1 < n; k++)
    {
      if (u < weights[k])
        return k;
      u -= weights[k];
    }
  return n - 1;
}

void
lk_sample_look_init (LkSampleLook *look, guint64 seed, guint identity, guint sex, guint ancestry)
{
  LkSampleRng rng;

  memset (look, 0, sizeof *look);
  lk_sample_rng_init (&rng, seed, LK_SAMPLE_STREAM_LOOK, identity);
  look->male = sex == 1;

  memcpy (look->skin, skin_tones[ancestry % 3][lk_sample_rng_below (&rng, 4)], sizeof look->skin);
  jitter (&rng, look->skin, 0.03);

  static const double hair_by_ancestry[3][8] = {
    { 0.12, 0.24, 0.22, 0.08, 0.18, 0.06, 0.07, 0.03 },
    { 0.55, 0.30, 0.08, 0.02, 0.0, 0.0, 0.04, 0.01 },
    { 0.75, 0.17, 0.02, 0.0, 0.0, 0.0, 0.04, 0.02 },
  };
  memcpy (look->hair, hair_colours[pick (&rng, hair_by_ancestry[ancestry % 3], 8)],
          sizeof look->hair);
  jitter (&rng, look->hair, 0.04);

  static const double eyes_by_ancestry[3][6] = {
    { 0.25, 0.10, 0.30, 0.15, 0.10, 0.10 },
    { 0.55, 0.35, 0.02, 0.03, 0.0, 0.05 },
    { 0.30, 0.70, 0.0, 0.0, 0.0, 0.0 },
  };
  memcpy (look->eyes, eye_colours[pick (&rng, eyes_by_ancestry[ancestry % 3], 6)],
          sizeof look->eyes);

  static const double styles_male[LK_SAMPLE_N_HAIR]
      = { 0.14, 0.34, 0.22, 0.04, 0.12, 0.02, 0.04, 0.08 };
  static const double styles_female[LK_SAMPLE_N_HAIR]
      = { 0.0, 0.04, 0.06, 0.34, 0.14, 0.16, 0.18, 0.08 };
  look->hair_style = pick (&rng, look->male ? styles_male : styles_female, LK_SAMPLE_N_HAIR);

  static const double beards[LK_SAMPLE_N_BEARD] = { 0.5, 0.15, 0.12, 0.15, 0.08 };
  look->beard = look->male ? pick (&rng, beards, LK_SAMPLE_N_BEARD) : LK_SAMPLE_BEARD_NONE;

  static const double glasses[LK_SAMPLE_N_GLASSES] = { 0.6, 0.2, 0.2 };
  look->glasses = pick (&rng, glasses, LK_SAMPLE_N_GLASSES);
  memcpy (look->frame, frame_colours[lk_sample_rng_below (&rng, G_N_ELEMENTS (frame_colours))],
          sizeof look->frame);

  look->face_a = lk_sample_rng_range (&rng, 19.5, 25.0) + (look->male ? 1.0 : 0.0);
  look->face_b = lk_sample_rng_range (&rng, 26.0, 31.0);
  look->jaw = lk_sample_rng_range (&rng, 0.0, 1.0);
  look->eye_gap = lk_sample_rng_range (&rng, 8.0, 10.5);
  look->eye_size = lk_sample_rng_range (&rng, 0.85, 1.2);
  look->brow = lk_sample_rng_range (&rng, 0.9, 2.2) + (look->male ? 0.4 : 0.0);
  look->brow_tilt = lk_sample_rng_range (&rng, -0.25, 0.25);
  look->nose = lk_sample_rng_range (&rng, 0.8, 1.4);
  look->mouth = lk_sample_rng_range (&rng, 4.5, 7.5);
  look->lips = look->male ? 0.0 : lk_sample_rng_range (&rng, 0.0, 0.6);
  look->part = lk_sample_rng_range (&rng, -1.0, 1.0);
  look->freckles = lk_sample_rng_uniform (&rng) < 0.12;
  hsv (look->background, lk_sample_rng_range (&rng, 0.0, 6.0),
       lk_sample_rng_range (&rng, 0.2, 0.45), lk_sample_rng_range (&rng, 0.75, 0.95));
  hsv (look->shirt, lk_sample_rng_range (&rng, 0.0, 6.0), lk_sample_rng_range (&rng, 0.35, 0.8),
       lk_sample_rng_range (&rng, 0.3, 0.85));
}

void
lk_sample_look_inherit (LkSampleLook *look, const LkSampleLook *relative)
{
  memcpy (look->skin, relative->skin, sizeof look->skin);
  memcpy (look->hair, relative->hair, sizeof look->hair);
  memcpy (look->eyes, relative->eyes, sizeof look->eyes);
  look->face_b = relative->face_b;
  look->eye_gap = relative->eye_gap;
  look->nose = relative->nose;
}

/* The face */

typedef struct
{
  double turn;  /* −1 … 1: features slide sideways as the head turns */
  double smile; /* −0.3 … 1 */
  double open;  /* eyelids, 0.15 (blink) … 1 */
  double raise; /* brows */
  double light; /* −1 … 1: from the left or right */
  double bright;
} Expression;

static void
draw_back_hair (Canvas *c, const LkSampleLook *look, double cx, double cy)
{
  double a = look->face_a, b = look->face_b;

  switch (look->hair_style)
    {
      case LK_SAMPLE_HAIR_LONG:
        {
          Shape top = ellipse (cx, cy - 2, a + 6, b + 4);
          Shape hang = box (cx, cy + 18, a + 5.5, 26, 5);
          paint (c, &top, NULL, NULL, look->hair, 1.0);
          paint (c, &hang, NULL, NULL, look->hair, 1.0);
          break;
        }
      case LK_SAMPLE_HAIR_BOB:
        {
          Shape top = ellipse (cx, cy, a + 6, b + 3);
          Shape cut = above (cy + b * 0.55);
          paint (c, &top, &cut, NULL, look->hair, 1.0);
          break;
        }
      case LK_SAMPLE_HAIR_CURLY:
        {
          for (int k = 0; k < 14; k++)
            {
              double t = -1.0 + k / 6.5;
              double x = cx + t * (a + 7), y = cy - 4 - (1.0 - t * t) * (b + 4) + fabs (t) * 6;
              Shape curl = ellipse (x, y, 7.5, 7.5);
              paint (c, &curl, NULL, NULL, look->hair, 1.0);
            }
          Shape mass = ellipse (cx, cy - 6, a + 8, b + 5);
          paint (c, &mass, NULL, NULL, look->hair, 1.0);
          break;
        }
      case LK_SAMPLE_HAIR_BUN:
        {
          Shape bun = ellipse (cx, cy - b - 5, 9, 8);
          paint (c, &bun, NULL, NULL, look->hair, 1.0);
          break;
        }
      default:
        break;
    }
}

static void
draw_front_hair (Canvas *c, const LkSampleLook *look, double cx, double cy, double turn)
{
  double a = look->face_a, b = look->face_b;
  float dark[3];

  shade (dark, look->hair, 0.8);
  switch (look->hair_style)
    {
      case LK_SAMPLE_HAIR_BALD:
        {
          /* A fringe above the ears. */
          for (int side = -1; side <= 1; side += 2)
            {
              Shape fringe = ellipse_turned (cx + side * (a - 1.5), cy - 5, 2.6, 8, side * -0.2);
              Shape head = ellipse (cx, cy, a + 0.5, b + 0.5);
              paint (c, &fringe, &head, NULL, look->hair, 0.85);
            }
          break;
        }
      case LK_SAMPLE_HAIR_SHORT:
      case LK_SAMPLE_HAIR_CURLY:
      case LK_SAMPLE_HAIR_LONG:
      case LK_SAMPLE_HAIR_BUN:
      case LK_SAMPLE_HAIR_PART:
      case LK_SAMPLE_HAIR_BOB:
      case LK_SAMPLE_HAIR_SPIKY:
      default:
        {
          gboolean part = look->hair_style == LK_SAMPLE_HAIR_PART;
          gboolean fringe = look->hair_style == LK_SAMPLE_HAIR_BOB;
          double lift
              = look->hair_style == LK_SAMPLE_HAIR_SHORT || look->hair_style == LK_SAMPLE_HAIR_SPIKY
                    ? 1.5
                    : 3.0;
          Shape cap = ellipse (cx, cy - lift, a + 2.0, b + 1.5);
          Shape face
              = part ? ellipse_turned (cx + look->part * 3.5 + turn * 3,
                                       cy + b * (fringe ? 0.5 : 0.36), a * 1.02, b * 0.95,
                                       look->part * 0.2)
                     : ellipse (cx + turn * 3, cy + b * (fringe ? 0.55 : 0.33), a * 0.98, b * 0.95);
          if (fringe)
            face = ellipse (cx + turn * 3, cy + b * 0.62, a * 0.92, b * 0.82);
          paint (c, &cap, NULL, &face, look->hair, 1.0);
          if (look->hair_style == LK_SAMPLE_HAIR_SPIKY)
            for (int k = -3; k <= 3; k++)
              {
                double x = cx + k * a / 4.0;
                Shape spike = capsule (x, cy - b + 6, x + k * 1.5, cy - b - 6 + abs (k) * 1.5, 2.4);
                paint (c, &spike, NULL, NULL, look->hair, 1.0);
              }
          if (part)
            {
              double x = cx + look->part * (a * 0.45) + turn * 3;
              Shape line = capsule (x, cy - b + 1, x + look->part * 2, cy - b * 0.55, 0.6);
              paint (c, &line, NULL, NULL, dark, 0.8);
            }
          if (look->hair_style == LK_SAMPLE_HAIR_CURLY)
            for (int k = 0; k < 7; k++)
              {
                double x = cx + (k - 3) * a / 3.6 + turn * 2;
                Shape curl = ellipse (x, cy - b * 0.68 + abs (k - 3) * 2.2, 4.2, 4.2);
                paint (c, &curl, NULL, NULL, look->hair, 1.0);
              }
          break;
        }
    }
}

static void
draw_eye (Canvas *c, const LkSampleLook *look, double x, double y, double look_x, double open,
          const float skin_dark[3])
{
  static const float white[3] = { 0.97f, 0.97f, 0.95f };
  static const float pupil[3] = { 0.05f, 0.04f, 0.04f };
  double w = 4.3 * look->eye_size, h = 2.7 * look->eye_size * open;
  Shape socket = ellipse (x, y, w, MAX (h, 0.35));
  Shape iris = ellipse (x + look_x, y, 2.3 * look->eye_size, 2.3 * look->eye_size);
  Shape dot = ellipse (x + look_x, y, 1.1 * look->eye_size, 1.1 * look->eye_size);
  Shape glint = ellipse (x + look_x + 0.7, y - 0.8, 0.5, 0.5);
  Shape lid = stroked (ellipse (x, y, w, MAX (h, 0.35)), 0.9);
  Shape upper = above (y);

  paint (c, &socket, NULL, NULL, white, 1.0);
  paint (c, &iris, &socket, NULL, look->eyes, 1.0);
  paint (c, &dot, &socket, NULL, pupil, 1.0);
  paint (c, &glint, &socket, NULL, white, 0.9);
  paint (c, &lid, &upper, NULL, skin_dark, 0.9);
}

/* Where a face's features sit and the tones they are painted in, worked out
 * once from its look and expression. */
typedef struct
{
  double cx, cy; /* the head's centre */
  double a, b;   /* its half width and half height */
  double t;      /* feature slide in face units, from the turn */
  double ey;     /* the eyes' line */
  double g;      /* half the eyes' gap */
  float skin_dark[3], skin_shadow[3], lips[3], brows[3], neck[3], shirt_dark[3];
} Sketch;

static void
draw_body (Canvas *c, const LkSampleLook *look, const Sketch *k)
{
  Shape body = ellipse (k->cx, FRAME + 12, 42, 30);
  Shape neckline = ellipse (k->cx, FRAME - 18, 9.5, 8);
  Shape hem = stroked (ellipse (k->cx, FRAME - 18, 9.5, 8), 1.6);
  Shape neck_box = box (k->cx, k->cy + k->b + 2, 8.5, 12, 3);
  paint (c, &body, NULL, NULL, look->shirt, 1.0);
  paint (c, &hem, &body, NULL, k->shirt_dark, 1.0);
  paint (c, &neckline, &body, NULL, k->neck, 1.0);
  paint (c, &neck_box, NULL, NULL, k->neck, 1.0);
}

/* The ears, the head and jaw, shaded on the side away from the light;
 * returns the head's shape. */
static Shape
draw_head (Canvas *c, const LkSampleLook *look, const Expression *e, const Sketch *k)
{
  for (int side = -1; side <= 1; side += 2)
    {
      Shape ear = ellipse (k->cx + side * (k->a - 0.5) - k->t * 0.5, k->cy + 2, 4.2, 7);
      paint (c, &ear, NULL, NULL, k->skin_shadow, 1.0);
    }

  Shape head = ellipse (k->cx, k->cy, k->a, k->b);
  Shape jaw = ellipse (k->cx, k->cy + k->b * 0.32, k->a * (0.86 + 0.1 * look->jaw), k->b * 0.68);
  paint (c, &head, NULL, NULL, look->skin, 1.0);
  paint (c, &jaw, NULL, NULL, look->skin, 1.0);

  Shape dark_side = ellipse (k->cx - e->light * k->a * 1.1, k->cy + 2, k->a * 0.7, k->b * 1.05);
  paint (c, &dark_side, &head, NULL, k->skin_dark, 0.22 * fabs (e->light));
  return head;
}

/* A stubble or full beard, and freckles. */
static void
draw_skin_marks (Canvas *c, const LkSampleLook *look, const Sketch *k)
{
  if (look->beard == LK_SAMPLE_BEARD_STUBBLE || look->beard == LK_SAMPLE_BEARD_FULL)
    {
      /* Around the jaw from the sideburns to the chin, leaving the cheeks. */
      gboolean full = look->beard == LK_SAMPLE_BEARD_FULL;
      Shape chin = ellipse (k->cx, k->cy + (full ? 3 : 1), k->a + 0.3, k->b + (full ? 3.5 : 0.3));
      Shape cheeks = outside (
          ellipse (k->cx + k->t * 0.5, k->cy - 3, k->a * 0.8, k->b * (full ? 0.56 : 0.6)));
      Shape mouth_hole = ellipse (k->cx + k->t, k->cy + 15.5, look->mouth + 1.2, 2.8);
      paint (c, &chin, &cheeks, full ? &mouth_hole : NULL, full ? look->hair : k->brows,
             full ? 1.0 : 0.28);
    }
  if (look->freckles)
    for (int n = 0; n < 10; n++)
      {
        double x = k->cx + k->t + ((n % 5) - 2) * 2.6 + (n < 5 ? -k->g : k->g) * 0.9;
        Shape dot = ellipse (x, k->ey + 6 + (n % 2) * 1.5, 0.55, 0.55);
        paint (c, &dot, NULL, NULL, k->skin_dark, 0.7);
      }
}

/* The eyes and brows, then the nose: a soft shadow on one side and the
 * nostrils. */
static void
draw_eyes_and_nose (Canvas *c, const LkSampleLook *look, const Expression *e, const Sketch *k)
{
  for (int side = -1; side <= 1; side += 2)
    {
      double x = k->cx + k->t + side * k->g * (1.0 - side * e->turn * 0.12);
      draw_eye (c, look, x, k->ey, e->turn * 0.8, e->open, k->skin_dark);

      double by = k->ey - 5.0 - e->raise * 1.5;
      double tilt = side * look->brow_tilt;
      Shape arc = stroked (ellipse_turned (x, by + 3.5, 5.0, 3.5, tilt), look->brow);
      Shape top = above (by + 1.5);
      paint (c, &arc, &top, NULL, k->brows, 1.0);
    }

  double nx = k->cx + k->t * 1.3, ny = k->cy + 7;
  Shape ridge = capsule (nx - e->light, k->ey + 2, nx - e->light * 1.5, ny, 0.9 * look->nose);
  paint (c, &ridge, NULL, NULL, k->skin_dark, 0.25);
  Shape nose = stroked (ellipse (nx, ny - 0.5, 2.8 * look->nose, 2.0), 1.1);
  Shape under = below (ny);
  paint (c, &nose, &under, NULL, k->skin_dark, 0.75);
}

/* The mouth: a smile arc, or open with teeth when smiling broadly; then a
 * moustache or a goatee (clipped to HEAD). */
static void
draw_mouth (Canvas *c, const LkSampleLook *look, const Expression *e, const Sketch *k,
            const Shape *head)
{
  static const float mouth_in[3] = { 0.35f, 0.08f, 0.08f };
  static const float teeth[3] = { 0.98f, 0.97f, 0.94f };
  double mx = k->cx + k->t * 1.1, my = k->cy + 15.5;
  double w = look->mouth * (1.0 + 0.15 * e->smile);
  if (e->smile > 0.65)
    {
      Shape open = ellipse (mx, my - 1, w, 2.5 + 2.5 * e->smile);
      Shape lower = below (my - 1);
      Shape teeth_row = box (mx, my, w, 1.6, 0.5);
      paint (c, &open, &lower, NULL, mouth_in, 1.0);
      paint (c, &teeth_row, &open, NULL, teeth, 1.0);
      Shape rim = stroked (ellipse (mx, my - 1, w, 2.5 + 2.5 * e->smile), 1.0);
      paint (c, &rim, &lower, NULL, k->lips, 1.0);
    }
  else
    {
      double curve = 0.6 + 3.5 * fabs (e->smile);
      Shape arc = stroked (ellipse (mx, my - (e->smile >= 0 ? curve : -curve), w, curve),
                           1.4 + look->lips);
      Shape half = e->smile >= 0 ? below (my - curve * 0.3) : above (my + curve * 0.3);
      paint (c, &arc, &half, NULL, k->lips, 1.0);
    }

  if (look->beard == LK_SAMPLE_BEARD_MOUSTACHE || look->beard == LK_SAMPLE_BEARD_FULL)
    {
      Shape tache = ellipse (mx, my - 3.4, w + 1.0, 2.2);
      Shape cut = above (my - 1.8);
      paint (c, &tache, &cut, NULL, look->hair, 1.0);
    }
  if (look->beard == LK_SAMPLE_BEARD_GOATEE)
    {
      Shape goatee = ellipse (mx, my + 6.5, 4.5, 5.5);
      Shape tache = ellipse (mx, my - 3.4, w, 2.0);
      Shape cut = above (my - 1.8);
      paint (c, &goatee, head, NULL, look->hair, 1.0);
      paint (c, &tache, &cut, NULL, look->hair, 1.0);
    }
}

static void
draw_glasses (Canvas *c, const LkSampleLook *look, const Expression *e, const Sketch *k)
{
  if (look->glasses == LK_SAMPLE_GLASSES_NONE)
    return;
  double cx = k->cx, t = k->t, g = k->g, a = k->a;
  double y = k->ey + 0.5;
  double lx = cx + t - g * (1.0 + e->turn * 0.12), rx = cx + t + g * (1.0 - e->turn * 0.12);
  for (int side = 0; side < 2; side++)
    {
      double x = side ? rx : lx;
      Shape rim = look->glasses == LK_SAMPLE_GLASSES_ROUND
                      ? stroked (ellipse (x, y, 6.2, 5.6), 1.2)
                      : stroked (box (x, y, 6.6, 4.6, 1.6), 1.3);
      Shape lens = look->glasses == LK_SAMPLE_GLASSES_ROUND ? ellipse (x, y, 6.2, 5.6)
                                                            : box (x, y, 6.6, 4.6, 1.6);
      static const float glass[3] = { 0.85f, 0.92f, 1.0f };
      paint (c, &lens, NULL, NULL, glass, 0.12);
      paint (c, &rim, NULL, NULL, look->frame, 1.0);
    }
  Shape bridge = capsule (lx + 5.8, y - 1, rx - 5.8, y - 1, 0.6);
  Shape arm_l = capsule (lx - 6.4, y - 1, cx - a + 0.5, y - 2, 0.6);
  Shape arm_r = capsule (rx + 6.4, y - 1, cx + a - 0.5, y - 2, 0.6);
  paint (c, &bridge, NULL, NULL, look->frame, 1.0);
  paint (c, &arm_l, NULL, NULL, look->frame, 1.0);
  paint (c, &arm_r, NULL, NULL, look->frame, 1.0);
}

/* One face, back to front: the hair behind, the body, the head, the beard
 * and freckles, the eyes and nose, the mouth, the hair in front, the
 * glasses. */
static void
draw_face (Canvas *c, const LkSampleLook *look, const Expression *e)
{
  static const float red[3] = { 0.85f, 0.35f, 0.35f };
  Sketch k = {
    .cx = FRAME / 2.0,
    .cy = 46.0,
    .a = look->face_a,
    .b = look->face_b,
    .t = e->turn * 3.0,
  };
  k.ey = k.cy - 2.0;
  k.g = look->eye_gap;
  shade (k.skin_dark, look->skin, 0.72);
  shade (k.skin_shadow, look->skin, 0.86);
  shade (k.neck, look->skin, 0.85);
  mix (k.lips, k.skin_dark, red, 0.35 + look->lips);
  shade (k.brows, look->hair, look->hair[0] > 0.5f ? 0.75 : 0.9);
  shade (k.shirt_dark, look->shirt, 0.8);

  draw_back_hair (c, look, k.cx, k.cy);
  draw_body (c, look, &k);
  Shape head = draw_head (c, look, e, &k);
  draw_skin_marks (c, look, &k);
  draw_eyes_and_nose (c, look, e, &k);
  draw_mouth (c, look, e, &k, &head);
  draw_front_hair (c, look, k.cx, k.cy, e->turn);
  draw_glasses (c, look, e, &k);
}

/* Box-filters the canvas down to `small` pixels and back up bilinearly: the
 * blur of a face the detector found at a few dozen pixels. */
static void
blur (Canvas *c, int small)
{
  int side = c->side;
  g_autofree float *tiny = g_new0 (float, (gsize) small *small * 3);
  double k = (double) side / small;

  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      {
        int ty = MIN (small - 1, (int) (y / k)), tx = MIN (small - 1, (int) (x / k));
        for (int ch = 0; ch < 3; ch++)
          tiny[((gsize) ty * small + tx) * 3 + ch] += c->rgb[((gsize) y * side + x) * 3 + ch];
      }
  /* Cells are ⌊k⌋ or ⌈k⌉ pixels wide: divide by each cell's own count. */
  g_autofree int *count = g_new0 (int, small);
  for (int x = 0; x < side; x++)
    count[MIN (small - 1, (int) (x / k))]++;
  for (int ty = 0; ty < small; ty++)
    for (int tx = 0; tx < small; tx++)
      for (int ch = 0; ch < 3; ch++)
        tiny[((gsize) ty * small + tx) * 3 + ch] /= (float) (count[ty] * count[tx]);

  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      {
        double fy = clampd ((y + 0.5) / k - 0.5, 0, small - 1);
        double fx = clampd ((x + 0.5) / k - 0.5, 0, small - 1);
        int y0 = (int) fy, x0 = (int) fx;
        int y1 = MIN (y0 + 1, small - 1), x1 = MIN (x0 + 1, small - 1);
        double wy = fy - y0, wx = fx - x0;
        for (int ch = 0; ch < 3; ch++)
          {
            double top = tiny[((gsize) y0 * small + x0) * 3 + ch] * (1 - wx)
                         + tiny[((gsize) y0 * small + x1) * 3 + ch] * wx;
            double bottom = tiny[((gsize) y1 * small + x0) * 3 + ch] * (1 - wx)
                            + tiny[((gsize) y1 * small + x1) * 3 + ch] * wx;
            c->rgb[((gsize) y * side + x) * 3 + ch] = (float) (top * (1 - wy) + bottom * wy);
          }
      }
}

/* One pass of the separable [1 2 1] / 4 filter, edges clamped: smooths the
 * creases bilinear upsampling leaves between the cells of blur(). */
static void
soften (Canvas *c)
{
  int side = c->side;
  g_autofree float *tmp = g_new (float, (gsize) side *side * 3);

  for (int pass = 0; pass < 2; pass++)
    {
      const float *src = pass ? tmp : c->rgb;
      float *dst = pass ? c->rgb : tmp;
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          {
            int x0 = pass ? x : MAX (x - 1, 0), x1 = pass ? x : MIN (x + 1, side - 1);
            int y0 = pass ? MAX (y - 1, 0) : y, y1 = pass ? MIN (y + 1, side - 1) : y;
            for (int ch = 0; ch < 3; ch++)
              dst[((gsize) y * side + x) * 3 + ch] = (src[((gsize) y0 * side + x0) * 3 + ch]
                                                      + 2.0f * src[((gsize) y * side + x) * 3 + ch]
                                                      + src[((gsize) y1 * side + x1) * 3 + ch])
                                                     / 4.0f;
          }
    }
}

void
lk_sample_draw_face (LkThumbnail *thumbnail, const LkSampleLook *look, guint64 seed, guint64 face,
                     gboolean low_quality)
{
  int side = (int) thumbnail->width;
  g_autofree float *rgb = g_new (float, (gsize) side *side * 3);
  LkSampleRng rng;
  Expression e;
  Canvas c = { .side = side, .rgb = rgb };
  float top[3], bottom[3];

  g_return_if_fail (thumbnail->width == thumbnail->height);

  lk_sample_rng_init (&rng, seed, LK_SAMPLE_STREAM_POSE, face);
  double roll = lk_sample_rng_range (&rng, -0.16, 0.16); /* tangent: ±9° */
  c.cs = 1.0 / sqrt (1.0 + roll * roll);
  c.sn = roll * c.cs;
  c.scale = lk_sample_rng_range (&rng, 0.9, 1.08);
  c.dx = lk_sample_rng_range (&rng, -4.0, 4.0);
  c.dy = lk_sample_rng_range (&rng, -3.0, 4.0);
  e.turn = lk_sample_rng_range (&rng, -1.0, 1.0);
  e.smile = lk_sample_rng_range (&rng, -0.3, 1.0);
  e.open = lk_sample_rng_uniform (&rng) < 0.06 ? 0.15 : lk_sample_rng_range (&rng, 0.75, 1.05);
  e.raise = lk_sample_rng_range (&rng, -0.5, 1.0);
  e.light = lk_sample_rng_range (&rng, -1.0, 1.0);
  e.bright = lk_sample_rng_range (&rng, 0.85, 1.12);

  /* Background: the person's colour, lighter at the top, shifted per photo. */
  float bg[3];
  memcpy (bg, look->background, sizeof bg);
  jitter (&rng, bg, 0.05);
  shade (top, bg, 1.08);
  shade (bottom, bg, 0.86);
  for (int y = 0; y < side; y++)
    {
      float row[3];
      mix (row, top, bottom, (double) y / side);
      for (int x = 0; x < side; x++)
        memcpy (rgb + ((gsize) y * side + x) * 3, row, sizeof row);
    }

  draw_face (&c, look, &e);

  if (low_quality)
    {
      blur (&c, lk_sample_rng_uniform (&rng) < 0.5 ? 20 : 28);
      for (int k = 0; k < 3; k++)
        soften (&c);
    }

  /* Light: brighter towards the lit side; probes also lose contrast. */
  double contrast = low_quality ? 0.75 : 1.0;
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      {
        const float *p = rgb + ((gsize) y * side + x) * 3;
        guint8 *out = thumbnail->pixels + (gsize) y * thumbnail->stride + (gsize) x * 4;
        double gain = e.bright * (1.0 + 0.12 * e.light * ((double) x / side - 0.5) * 2.0);
        for (int ch = 0; ch < 3; ch++)
          {
            double v = (0.5 + (p[ch] - 0.5) * contrast) * gain;
            out[ch] = (guint8) floor (clampd (v, 0.0, 1.0) * 255.0 + 0.5);
          }
        out[3] = 255;
      }
}
