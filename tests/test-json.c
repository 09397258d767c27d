/* test-json — the byte checks that keep json-glib 1.6 away from the inputs it
 * leaks on (lk-json.h) */
#include "config.h"

#include <string.h>

#include "library/lk-json.h"

static gssize
surrogate (const char *text)
{
  return lk_json_find_unpaired_surrogate (text, strlen (text));
}

static gssize
unopened (const char *text)
{
  return lk_json_find_unopened_close (text, strlen (text));
}

static void
test_unpaired_surrogates_found (void)
{
  /* Pairs, other escapes and escaped backslashes are fine. */
  g_assert_cmpint (surrogate ("{\"a\": \"\\uD83D\\uDE00 \\u00e9 \\n \\\\ \"}"), ==, -1);
  g_assert_cmpint (surrogate ("\"\\\\uD800\\\\u0041\""), ==, -1);
  g_assert_cmpint (surrogate ("\"\\ud83d\\ude00\""), ==, -1);
  g_assert_cmpint (surrogate ("no escapes at all"), ==, -1);
  /* A \u without four hex digits (json-glib leaks on it too). */
  g_assert_cmpint (surrogate ("\"\\u12\""), ==, 1);
  g_assert_cmpint (surrogate ("{\"frm\\ud81%\\u0{"), ==, 5);
  g_assert_cmpint (surrogate ("\"\\u00zz\""), ==, 1);
  g_assert_cmpint (surrogate ("\"\\u"), ==, 1);
  /* A high surrogate followed by a non-low escape: json-glib's leak. */
  g_assert_cmpint (surrogate ("{\"a\": \"\\uD800\\u0041\"}"), ==, 7);
  /* Alone, at the end, before a non-escape, or a low one first. */
  g_assert_cmpint (surrogate ("\"\\uDBFF\""), ==, 1);
  g_assert_cmpint (surrogate ("\"\\uD800"), ==, 1);
  g_assert_cmpint (surrogate ("\"x\\uD800y\""), ==, 2);
  g_assert_cmpint (surrogate ("\"\\uDC00\\uD800\""), ==, 1);
  /* An odd run of backslashes: the last one escapes the u. */
  g_assert_cmpint (surrogate ("\"\\\\\\uD800\""), ==, 3);
  /* A truncated buffer never reads past its length. */
  const char cut[] = "\"\\uD800\\uDC00\"";
  g_assert_cmpint (lk_json_find_unpaired_surrogate (cut, 10), ==, 1);
}

static void
test_unopened_close_found (void)
{
  g_assert_cmpint (unopened ("{\"a\": [1, {\"b\": []}]}"), ==, -1);
  g_assert_cmpint (unopened ("{\"a\": \"]}\\\"]\"}"), ==, -1);
  g_assert_cmpint (unopened ("{\"a\": [1"), ==, -1);
  /* What closes lk-review.c's wrapper array early. */
  g_assert_cmpint (unopened ("{\"a\": 1}] ["), ==, 8);
  g_assert_cmpint (unopened ("1] [2"), ==, 1);
  g_assert_cmpint (unopened ("}"), ==, 0);
}

static gssize
too_deep (const char *text, guint max_depth)
{
  return lk_json_find_too_deep (text, strlen (text), max_depth);
}

static void
test_nesting_deeper_than_the_limit_found (void)
{
  g_assert_cmpint (too_deep ("{\"a\": [1, {\"b\": [2]}]}", 4), ==, -1);
  g_assert_cmpint (too_deep ("{\"a\": [1, {\"b\": [2]}]}", 3), ==, 16);
  /* Levels closed again do not add up. */
  g_assert_cmpint (too_deep ("[[]] [[]] [[]]", 2), ==, -1);
  g_assert_cmpint (too_deep ("[[[ ]]]", 2), ==, 2);
  /* Brackets in json-glib's strings and comments are not levels, and neither
   * does a ']' in one close a level. */
  g_assert_cmpint (too_deep ("[\"[[[\\\"[[\"]", 1), ==, -1);
  g_assert_cmpint (too_deep ("['[[[\\' ]", 1), ==, -1);
  g_assert_cmpint (too_deep ("[1 /* [[[ ]]] */ ]", 1), ==, -1);
  g_assert_cmpint (too_deep ("[1 / [[[ ]]] / ]", 1), ==, -1);
  g_assert_cmpint (too_deep ("[\"]]]\" [", 1), ==, 7);
  g_assert_cmpint (too_deep ("['a]' [", 1), ==, 6);
  g_assert_cmpint (too_deep ("[/*]]*/[", 1), ==, 7);
  /* An unterminated string or comment hides the rest, as in json-glib. */
  g_assert_cmpint (too_deep ("[\"[[[[", 1), ==, -1);
  g_assert_cmpint (too_deep ("[/* [[[[", 1), ==, -1);
  /* What crashed json-glib: 200,000 "[" (issue 19), found at the limit. */
  g_autofree char *deep = g_strnfill (200000, '[');
  g_assert_cmpint (lk_json_find_too_deep (deep, 200000, LK_JSON_MAX_DEPTH), ==, LK_JSON_MAX_DEPTH);
  /* A truncated buffer never reads past its length. */
  g_assert_cmpint (lk_json_find_too_deep ("[[\"", 2, 2), ==, -1);
  g_assert_cmpint (lk_json_find_too_deep ("'/*", 1, 0), ==, -1);
}

static gssize
out_of_range (const char *text)
{
  return lk_json_find_integer_out_of_range (text, strlen (text));
}

static void
test_integers_beyond_64_bits_found (void)
{
  /* What json-glib reads as 3, -3 and -1 (issue 19). */
  g_assert_cmpint (out_of_range ("{\"count\": -18446744073709551613}"), ==, 10);
  g_assert_cmpint (out_of_range ("[18446744073709551613]"), ==, 1);
  g_assert_cmpint (out_of_range ("[1, 99999999999999999999999]"), ==, 4);
  g_assert_cmpint (out_of_range ("[9223372036854775808]"), ==, 1);
  /* The edges of gint64 (but its minimum) and leading zeros are fine. */
  g_assert_cmpint (out_of_range ("[9223372036854775807, -9223372036854775807]"), ==, -1);
  g_assert_cmpint (out_of_range ("[0000000000000000000000001, 0, -0]"), ==, -1);
  /* Floats, and digits in strings, comments and names are not integers. */
  g_assert_cmpint (out_of_range ("[1e400, 99999999999999999999999.5, 1.5E+99999999999999999999]"),
                   ==, -1);
  g_assert_cmpint (out_of_range ("[\"99999999999999999999999\", '99999999999999999999999']"), ==,
                   -1);
  g_assert_cmpint (out_of_range ("[1 /* 99999999999999999999999 */]"), ==, -1);
  /* A truncated buffer never reads past its length. */
  g_assert_cmpint (lk_json_find_integer_out_of_range ("[92233720368547758079", 20), ==, -1);
}

static void
test_nul_escapes_found (void)
{
  const char *text = "{\"name\": \"Ada\\u0000Lovelace\"}";
  g_assert_cmpint (lk_json_find_nul_escape (text, strlen (text)), ==, 13);
  text = "[\"\\\\u0000\", \"\\u00001\", \"\\u0001\"]";
  g_assert_cmpint (lk_json_find_nul_escape (text, strlen (text)), ==, 13);
  text = "[\"\\\\u0000\", \"\\u0001 \\u1000\"]";
  g_assert_cmpint (lk_json_find_nul_escape (text, strlen (text)), ==, -1);
  /* A truncated buffer never reads past its length. */
  g_assert_cmpint (lk_json_find_nul_escape ("\"\\u0000", 5), ==, -1);
}

static void
test_line_of (void)
{
  const char *text = "a\nb\n\nc";

  g_assert_cmpuint (lk_json_line_of (text, 0), ==, 1);
  g_assert_cmpuint (lk_json_line_of (text, 2), ==, 2);
  g_assert_cmpuint (lk_json_line_of (text, 5), ==, 4);
}

static gsize first_end;

static gssize
second (const char *text)
{
  return lk_json_find_second_value (text, strlen (text), &first_end);
}

static void
test_second_value_found (void)
{
  g_assert_cmpint (second ("{\"a\": [1, \"}\"]}"), ==, -1);
  g_assert_cmpint (second ("  {} \n"), ==, -1);
  g_assert_cmpint (second ("{} /* [] */ / x / "), ==, -1);
  g_assert_cmpint (second ("{}[]"), ==, 2);
  g_assert_cmpint (second ("{} /* x */ []"), ==, 11);
  g_assert_cmpint (second ("{}//\n{}"), ==, 5);
  g_assert_cmpint (second ("1 2"), ==, 2);
  g_assert_cmpint (second ("\"a\" 'b'"), ==, 4);
  g_assert_cmpint (second ("[1] true"), ==, 4);
  /* Unclosed: no second value yet. */
  g_assert_cmpint (second ("[[1] [2]"), ==, -1);
  g_assert_cmpuint (first_end, ==, 8);
  /* Where the first value ends, for json-glib to see it alone. */
  g_assert_cmpint (second ("{\"a\": 1} /* ok */ "), ==, -1);
  g_assert_cmpuint (first_end, ==, 8);
  g_assert_cmpint (second (" 12 "), ==, -1);
  g_assert_cmpuint (first_end, ==, 3);
  g_assert_cmpint (second ("'s'"), ==, -1);
  g_assert_cmpuint (first_end, ==, 3);
  /* An unterminated comment after the value (fuzz-library: json-glib leaked
   * the value before failing on it). */
  g_assert_cmpint (second ("{} /* x *\"taken\"/ []"), ==, 3);
  g_assert_cmpuint (first_end, ==, 2);
  g_assert_cmpint (second ("{} / x"), ==, 3);
  g_assert_cmpint (second ("{} /"), ==, 3);
}

static char *
path_at (const char *text, const char *needle)
{
  const char *at = strstr (text, needle);
  g_assert_nonnull (at);
  return lk_json_path_at (text, strlen (text), (gsize) (at - text));
}

#define ASSERT_PATH(text, needle, expected)                                                        \
  G_STMT_START                                                                                     \
  {                                                                                                \
    g_autofree char *path_ = path_at (text, needle);                                               \
    g_assert_cmpstr (path_, ==, expected);                                                         \
  }                                                                                                \
  G_STMT_END

/* Issue 19: a \u0000 is refused naming the field that holds it. */
static void
test_path_at_names_the_field (void)
{
  const char *library = "{\"format\": \"x\", \"embeddings\": {\"file\": \"e.f32\", \"dim\": 2},\n"
                        " \"faces\": [{\"photo\": 1}, {\"photo\": 2, \"box\": [1, 2, 3]},\n"
                        "  {\"photo\": 3, \"thumbnail\": \"a\\u0000b\", \"label\": \"L\"}]}";
  ASSERT_PATH (library, "\"x\"", "format");
  ASSERT_PATH (library, "e.f32", "embeddings.file");
  ASSERT_PATH (library, "2}", "embeddings.dim");
  ASSERT_PATH (library, "3]", "faces[1].box[2]");
  ASSERT_PATH (library, "\\u0000", "faces[2].thumbnail");
  ASSERT_PATH (library, "\"L\"", "faces[2].label");
  ASSERT_PATH (library, "dim", "a member name in embeddings");
  ASSERT_PATH (library, "format", "a member name in the top-level object");
  ASSERT_PATH (library, "{", "the top-level value");
  /* Brackets and commas inside strings and comments change nothing. */
  ASSERT_PATH ("{\"a,]\": [\"x,]\", /* ,] */ 'y,]', 7]}", "7", "a,][2]");
  /* Long member names are cut; an offset past the end is the end. */
  g_autofree char *key = g_strnfill (100, 'k');
  g_autofree char *long_key = g_strdup_printf ("{\"%s\": 1}", key);
  ASSERT_PATH (long_key, "1", "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…");
  g_autofree char *end = lk_json_path_at ("[1, 2", 5, 99);
  g_assert_cmpstr (end, ==, "[1]");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json/unpaired-surrogates-found", test_unpaired_surrogates_found);
  g_test_add_func ("/json/unopened-close-found", test_unopened_close_found);
  g_test_add_func ("/json/nesting-deeper-than-the-limit-found",
                   test_nesting_deeper_than_the_limit_found);
  g_test_add_func ("/json/integers-beyond-64-bits-found", test_integers_beyond_64_bits_found);
  g_test_add_func ("/json/nul-escapes-found", test_nul_escapes_found);
  g_test_add_func ("/json/line-of", test_line_of);
  g_test_add_func ("/json/path-at-names-the-field", test_path_at_names_the_field);
  g_test_add_func ("/json/second-value-found", test_second_value_found);
  return g_test_run ();
}
