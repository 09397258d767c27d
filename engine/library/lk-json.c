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
 * escapes, a '…' string without escapes, a slash-star comment to the next star-slash, and a lone
 * '/', which starts a comment that runs to the next '/' (its cpair_comment_single is "//\n": start
 * '/', end '/'). The offset just past the token, or `k` when the byte at `k` starts none. An
 * unterminated one runs to the end. */
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

/* Whether the comment at [k, next) found its end (skip_string_or_comment
 * runs an unterminated one to the end of the buffer). */
static gboolean
comment_closed (const char *data, gsize k, gsize next)
{
  if (next - k >= 2 && data[k + 1] == '*')
    return next - k >= 4 && data[next - 2] == '*' && data[next - 1] == '/';
  return next - k >= 2 && data[next - 1] == '/';
}

gssize
lk_json_find_second_value (const char *data, gsize length, gsize *first_end)
{
  guint depth = 0;
  gboolean ended = FALSE;

  *first_end = length;
  for (gsize k = 0; k < length;)
    {
      char c = data[k];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
          k++;
          continue;
        }
      gsize next = skip_string_or_comment (data, length, k);
      gboolean comment = c == '/';
      if (ended && !comment)
        return (gssize) k;
      if (ended && !comment_closed (data, k, next))
        return (gssize) k; /* json-glib would fail there, after leaking the value */
      if (next != k)
        {
          if (!ended && !comment && depth == 0)
            {
              ended = TRUE;
              *first_end = next;
            }
          k = next;
          continue;
        }
      switch (c)
        {
          case '{':
          case '[':
            depth++;
            break;
          case '}':
          case ']':
            if (depth > 0 && --depth == 0)
              {
                ended = TRUE;
                *first_end = k + 1;
              }
            break;
          default:
            /* A bare number or literal at the top level ends at the next space
             * or structural character. */
            if (depth == 0)
              {
                while (k + 1 < length && strchr (" \t\r\n{}[]\":,'/", data[k + 1]) == NULL)
                  k++;
                ended = TRUE;
                *first_end = k + 1;
              }
            break;
        }
      k++;
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

/* One open array or object on the way to the byte. */
typedef struct
{
  gboolean array;
  gboolean expect_key; /* objects: the next string is a member name */
  gsize index;         /* arrays: elements before the current one */
  gsize key;           /* objects: offset and length of the current member name */
  gsize key_length;
} Frame;

#define PATH_KEY_MAX 64

static void
append_frames (GString *path, const Frame *frames, guint n, const char *data)
{
  for (guint d = 0; d < n; d++)
    {
      const Frame *f = &frames[d];
      if (f->array)
        g_string_append_printf (path, "[%" G_GSIZE_FORMAT "]", f->index);
      else if (!f->expect_key)
        {
          if (path->len > 0)
            g_string_append_c (path, '.');
          g_string_append_len (path, data + f->key, (gssize) MIN (f->key_length, PATH_KEY_MAX));
          if (f->key_length > PATH_KEY_MAX)
            g_string_append (path, "…");
        }
    }
}

char *
lk_json_path_at (const char *data, gsize length, gsize offset)
{
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (Frame));
  gsize k = 0;

  offset = MIN (offset, length);
  while (k < length)
    {
      gsize next = skip_string_or_comment (data, length, k);
      Frame *top = stack->len > 0 ? &g_array_index (stack, Frame, stack->len - 1) : NULL;
      gboolean is_string = data[k] == '"' || data[k] == '\'';
      if (next != k)
        {
          if (is_string && top != NULL && !top->array && top->expect_key)
            {
              if (offset < next && offset >= k)
                {
                  g_autoptr (GString) path = g_string_new (NULL);
                  append_frames (path, (const Frame *) stack->data, stack->len - 1, data);
                  if (path->len == 0)
                    return g_strdup ("a member name in the top-level object");
                  return g_strdup_printf ("a member name in %s", path->str);
                }
              top->key = k + 1;
              top->key_length = next - k >= 2 ? next - k - 2 : 0;
              top->expect_key = FALSE;
            }
          if (offset < next)
            break;
          k = next;
          continue;
        }
      if (k >= offset)
        break;
      switch (data[k])
        {
          case '{':
          case '[':
            {
              Frame frame = { data[k] == '[', data[k] == '{', 0, 0, 0 };
              g_array_append_val (stack, frame);
              break;
            }
          case '}':
          case ']':
            if (stack->len > 0)
              g_array_set_size (stack, stack->len - 1);
            break;
          case ',':
            if (top != NULL && top->array)
              top->index++;
            else if (top != NULL)
              top->expect_key = TRUE;
            break;
          default:
            break;
        }
      k++;
    }
  g_autoptr (GString) path = g_string_new (NULL);
  append_frames (path, (const Frame *) stack->data, stack->len, data);
  if (path->len == 0)
    return g_strdup ("the top-level value");
  return g_string_free (g_steal_pointer (&path), FALSE);
}
