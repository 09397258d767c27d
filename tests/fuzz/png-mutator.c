/* png-mutator — a chunk-aware libFuzzer mutator for fuzz-thumbnail
 *
 * Why: libpng refuses a critical chunk whose CRC does not match, so nearly
 * every byte mutation of IHDR, PLTE or IDAT dies at the first CRC check, and
 * the zlib stream inside IDAT breaks at the first changed byte. libpng is not
 * instrumented, so libFuzzer cannot learn its way past either. This mutator
 * does what a buggy writer would do and still gets through: it mutates bytes
 * and then repairs every chunk's CRC, rewrites IHDR with another colour type,
 * bit depth, interlace or size, or inflates the image data, mutates the raw
 * filtered rows and deflates them again into one IDAT.
 * (The first 30-minute run, byte mutations only: cov 189, ft 390.)
 *
 * Linked only into the libFuzzer build (LLVMFuzzerMutate is libFuzzer's).
 */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <zlib.h>

size_t LLVMFuzzerMutate (guint8 *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator (guint8 *data, size_t size, size_t max_size, unsigned int seed);

#define SIGNATURE_BYTES 8

static guint32
get_u32 (const guint8 *p)
{
  return (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3];
}

static void
put_u32 (guint8 *p, guint32 v)
{
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

/* Makes the CRC of every complete chunk match its type and data. */
static void
repair_crcs (guint8 *data, gsize size)
{
  for (gsize at = SIGNATURE_BYTES; at + 12 <= size;)
    {
      guint32 length = get_u32 (data + at);
      if (length > size - at - 12)
        return;
      put_u32 (data + at + 8 + length, (guint32) crc32 (0, data + at + 4, length + 4));
      at += 12 + (gsize) length;
    }
}

static void
rewrite_ihdr (GRand *rand, guint8 *data, gsize size)
{
  static const guint8 types[] = { 0, 2, 3, 4, 6 };
  static const guint8 depths[] = { 1, 2, 4, 8, 16 };

  if (size < SIGNATURE_BYTES + 25 || memcmp (data + 12, "IHDR", 4) != 0)
    return;
  guint8 *ihdr = data + 16;
  switch (g_rand_int_range (rand, 0, 4))
    {
      case 0:
        ihdr[9] = types[g_rand_int_range (rand, 0, G_N_ELEMENTS (types))];
        break;
      case 1:
        ihdr[8] = depths[g_rand_int_range (rand, 0, G_N_ELEMENTS (depths))];
        break;
      case 2:
        ihdr[12] ^= 1;
        break;
      default:
        put_u32 (ihdr + g_rand_int_range (rand, 0, 2) * 4, g_rand_int_range (rand, 1, 40));
        break;
    }
}

/* Inflates all IDAT data, mutates it, and writes the file back with one
 * IDAT holding the deflated result where the first IDAT was. */
static gsize
remix_idat (guint8 *data, gsize size, gsize max_size)
{
  gsize first = 0, after = 0;
  g_autoptr (GByteArray) compressed = g_byte_array_new ();

  for (gsize at = SIGNATURE_BYTES; at + 12 <= size;)
    {
      guint32 length = get_u32 (data + at);
      if (length > size - at - 12)
        break;
      if (memcmp (data + at + 4, "IDAT", 4) == 0)
        {
          if (first == 0)
            first = at;
          else if (after != at)
            return 0; /* IDATs not consecutive: leave to byte mutations */
          g_byte_array_append (compressed, data + at + 8, length);
          after = at + 12 + length;
        }
      at += 12 + (gsize) length;
    }
  if (first == 0)
    return 0;

  uLongf raw_length = 1 << 16;
  g_autofree guint8 *raw = g_malloc (raw_length);
  int status = uncompress (raw, &raw_length, compressed->data, compressed->len);
  if ((status != Z_OK && status != Z_BUF_ERROR) || raw_length == 0)
    return 0;
  raw_length = LLVMFuzzerMutate (raw, raw_length, 1 << 16);

  uLongf packed_length = compressBound (raw_length);
  g_autofree guint8 *packed = g_malloc (packed_length);
  if (compress (packed, &packed_length, raw, raw_length) != Z_OK)
    return 0;
  gsize tail = size - after;
  gsize new_size = first + 12 + packed_length + tail;
  if (new_size > max_size)
    return 0;
  memmove (data + first + 12 + packed_length, data + after, tail);
  put_u32 (data + first, (guint32) packed_length);
  memcpy (data + first + 4, "IDAT", 4);
  memcpy (data + first + 8, packed, packed_length);
  return new_size;
}

size_t
LLVMFuzzerCustomMutator (guint8 *data, size_t size, size_t max_size, unsigned int seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  int what = g_rand_int_range (rand, 0, 8);

  if (what == 0)
    return LLVMFuzzerMutate (data, size, max_size);
  if (what == 1)
    rewrite_ihdr (rand, data, size);
  else if (what <= 3)
    {
      gsize remixed = remix_idat (data, size, max_size);
      size = remixed > 0 ? remixed : LLVMFuzzerMutate (data, size, max_size);
    }
  else
    size = LLVMFuzzerMutate (data, size, max_size);
  repair_crcs (data, size);
  return size;
}
