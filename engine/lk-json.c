/* lk-json.c — byte checks run before json-glib sees a file (see lk-json.h)
 *
 * Both are single passes over the buffer. The surrogate check jumps from
 * backslash to backslash with memchr, so a manifest without escapes costs one
 * memchr over it.
 */
#include "config.h"

#include <string.h>

#include "lk-json.h"

/* The code unit of "uXXXX" at `p` (before `end`), or -1. */
static gint32
u_escape (const char *p, const char *end)
{
  guint32 unit = 0;

  if (end - p < 5 || p[0] != 'u')
    return -1;
  for (int k = 1; k <= 4; k++)
    {
      int digit = g_ascii_xdigit_value (p[k]);
      if (digit < 0)
        return -1;
      unit = unit * 16 + (guint32) digit;
    }
  return (gint32) unit;
}

gssize
lk_json_find_unpaired_surrogate (const char *data, gsize length)
{
  const char *end = data + length;
  const char *p = data;

  while (p < end && (p = memchr (p, '\\', (gsize) (end - p))) != NULL)
    {
      const char *run = p;
      while (p < end && *p == '\\')
        p++;
      /* An even run is escaped backslashes; in an odd one the last escapes p. */
      if ((p - run) % 2 == 0)
        continue;
      const char *escape = p - 1;
      if (p >= end || *p != 'u')
        continue;
      gint32 unit = u_escape (p, end);
      if (unit < 0)
        return escape - data; /* "\u" without four hex digits: json-glib leaks here too */
      p += 5;
      if (unit >= 0xDC00 && unit <= 0xDFFF)
        return escape - data;
      if (unit >= 0xD800 && unit <= 0xDBFF)
        {
          gint32 low = p < end && *p == '\\' ? u_escape (p + 1, end) : -1;
          if (low < 0xDC00 || low > 0xDFFF)
            return escape - data;
          p += 6;
        }
    }
  return -1;
}

gssize
lk_json_find_nul_escape (const char *data, gsize length)
{
  const char *end = data + length;
  const char *p = data;

  while (p < end && (p = memchr (p, '\\', (gsize) (end - p))) != NULL)
    {
      const char *run = p;
      while (p < end && *p == '\\')
        p++;
      if ((p - run) % 2 == 1 && u_escape (p, end) == 0)
        return p - 1 - data;
    }
  return -1;
}

gssize
lk_json_find_unopened_close (const char *data, gsize length)
{
  gboolean in_string = FALSE;
  gsize depth = 0;

  for (gsize k = 0; k < length; k++)
    {
      char c = data[k];
      if (in_string)
        {
          if (c == '\\')
            k++;
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      switch (c)
        {
        case '"':
          in_string = TRUE;
          break;
        case '{':
        case '[':
          depth++;
          break;
        case '}':
        case ']':
          if (depth == 0)
            return (gssize) k;
          depth--;
          break;
        default:
          break;
        }
    }
  return -1;
}

/* Where the token at `k` ends, for the tokens json-glib 1.6's scanner reads as
 * a string or a comment (tried against it): a "…" string with backslash
 * escapes, a '…' string without escapes, a slash-star comment to the next star-slash, and a lone '/',
 * which starts a comment that runs to the next '/' (its cpair_comment_single
 * is "//\n": start '/', end '/'). The offset just past the token, or `k` when
 * the byte at `k` starts none. An unterminated one runs to the end. */
static gsize
skip_string_or_comment (const char *data, gsize length, gsize k)
{
  const char *end = data + length;
  const char *p = data + k;

  switch (*p)
    {
    case '"':
      for (p++; p < end; p++)
        {
          if (*p == '\\')
            p++;
          else if (*p == '"')
            return (gsize) (p + 1 - data);
        }
      return length;
    case '\'':
      p = memchr (p + 1, '\'', (gsize) (end - p - 1));
      return p != NULL ? (gsize) (p + 1 - data) : length;
    case '/':
      if (p + 1 < end && p[1] == '*')
        {
          for (p += 2; p + 1 < end; p++)
            if (p[0] == '*' && p[1] == '/')
              return (gsize) (p + 2 - data);
          return length;
        }
      p = memchr (p + 1, '/', (gsize) (end - p - 1));
      return p != NULL ? (gsize) (p + 1 - data) : length;
    default:
      return k;
    }
}

gssize
lk_json_find_too_deep (const char *data, gsize length, guint max_depth)
{
  guint depth = 0;

  for (gsize k = 0; k < length;)
    {
      gsize next = skip_string_or_comment (data, length, k);
      if (next != k)
        {
          k = next;
          continue;
        }
      switch (data[k])
        {
        case '{':
        case '[':
          if (++depth > max_depth)
            return (gssize) k;
          break;
        case '}':
        case ']':
          if (depth > 0)
            depth--;
          break;
        default:
          break;
        }
      k++;
    }
  return -1;
}

gssize
lk_json_find_integer_out_of_range (const char *data, gsize length)
{
  static const char max[] = "9223372036854775807"; /* G_MAXINT64 */

  for (gsize k = 0; k < length;)
    {
      gsize next = skip_string_or_comment (data, length, k);
      if (next != k)
        {
          k = next;
          continue;
        }
      if (data[k] != '-' && !g_ascii_isdigit (data[k]))
        {
          k++;
          continue;
        }
      gsize start = k;
      if (data[k] == '-')
        k++;
      while (k < length && data[k] == '0')
        k++;
      gsize first = k;
      while (k < length && g_ascii_isdigit (data[k]))
        k++;
      gsize digits = k - first;
      if (k < length && (data[k] == '.' || data[k] == 'e' || data[k] == 'E'))
        {
          /* A float: json-glib reads it as a double, which saturates. */
          while (k < length && (g_ascii_isdigit (data[k]) || strchr (".eE+-", data[k]) != NULL))
            k++;
          continue;
        }
      if (digits > sizeof max - 1
          || (digits == sizeof max - 1 && memcmp (data + first, max, digits) > 0))
        return (gssize) start;
    }
  return -1;
}

guint
lk_json_line_of (const char *data, gsize offset)
{
  guint line = 1;

  for (gsize k = 0; k < offset; k++)
    line += data[k] == '\n';
  return line;
}
