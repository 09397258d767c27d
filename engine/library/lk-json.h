/* lk-json.h — byte checks run before json-glib sees a file
 *
 * json-glib 1.6 (Debian 12's) leaks memory on two kinds of malformed input
 * that the fuzzers reach within a minute; neither is valid for Likeness, so
 * the loaders refuse them first, with their own message, and json-glib never
 * parses them:
 *
 * - a \u escape of a UTF-16 high surrogate followed by a \u escape that is not
 *   a low surrogate ("\uD800\u0041"): json-glib's scanner returns its error
 *   without freeing the GString it was building the string in (leaked from
 *   g_string_sized_new, called by the scanner under
 *   json_parser_load_from_data);
 * - several top-level values: json-glib keeps the last and leaks the others
 *   (their JsonNodes, from json_node_alloc under json_parser_load_from_data).
 *   lk-review-load.c parses its file inside "[" … "]" to catch a second value, so
 *   a file that closes that wrapper early ("{…}] [") must be refused first.
 *
 * Both leaks are json-glib's own, but its frames in between are static
 * functions of a stripped library (no debug symbols on Debian's mirror), so an
 * LSan suppression could only name json_parser_load_from_data,
 * json_node_alloc or g_string_sized_new — which would hide our own leaks of a
 * parsed tree too. Refusing the inputs lets the fuzzers run with leak
 * detection on, with no suppression at all.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The offset of the first \u escape that is half of a UTF-16 surrogate pair (a
 * high one not followed by a low one, or a low one alone), or that is not
 * followed by four hex digits ("\ud81%": json-glib's scanner leaks its string
 * there too, found by CI's fuzz-library in a mutator's parse), or -1. Escaped
 * backslashes ("\\u") are not escapes. */
gssize lk_json_find_unpaired_surrogate (const char *data, gsize length);

/* json-glib 1.6 decodes "\u0000" into its string, which every C caller then
 * reads cut at the NUL: a name or a path would be silently shortened, then
 * saved that way. The offset of the first \u0000 escape, or -1.
 * Escaped backslashes ("\\u0000") are not escapes. */
gssize lk_json_find_nul_escape (const char *data, gsize length);

/* The offset of the first ']' or '}' outside a string that closes nothing
 * (more closed than opened so far), or -1. Comments and single-quoted strings
 * (json-glib extensions) are not modelled: a bracket inside them counts. */
gssize lk_json_find_unopened_close (const char *data, gsize length);

/* json-glib 1.6 parses nested arrays and objects by recursion, one set of
 * stack frames per level: 200,000 "[" overflow the stack and crash.
 * The loaders refuse a file nested deeper than LK_JSON_MAX_DEPTH before
 * json-glib sees it. A library is nested 4 deep and review.json 4; 64 leaves
 * room for what other tools add and is far from any thread's stack. */
#define LK_JSON_MAX_DEPTH 64

/* The offset of the first '[' or '{' that opens a level deeper than
 * `max_depth`, or -1. Brackets inside strings and comments, as json-glib's
 * scanner reads them (json-glib's "…" and '…' strings, its slash-star and
 * /…/ comments), do not count. One pass, no allocation. */
gssize lk_json_find_too_deep (const char *data, gsize length, guint max_depth);

/* json-glib 1.6 reads an integer through a guint64 and negates it, so
 * -18446744073709551613 is read as 3 and 18446744073709551613 as -3 (issue
 * 19). The offset of the first integer literal, outside strings and comments,
 * that a gint64 cannot hold (beyond ±9223372036854775807), or -1. Floats
 * ("1e400", "1.5") are not integers. */
gssize lk_json_find_integer_out_of_range (const char *data, gsize length);

/* Where `offset` sits in the JSON text, as a field name a user can find:
 * "faces[12].thumbnail", "people[0].name", "calibration" — the member or
 * element whose value holds the byte, "a member name in faces[3]" when the
 * byte is inside a member's name, or "the top-level value". Newly allocated.
 * One pass up to `offset`, as lk_json_find_too_deep reads strings and
 * comments; meant for messages about a file the checks above refused, so it
 * is lenient about what is malformed after the byte. A member name is shown
 * as written (escapes undecoded), cut at 64 bytes, so that a refusal names
 * more than a line. */
char *lk_json_path_at (const char *data, gsize length, gsize offset);

/* json-glib 1.6 leaks every top-level value but the last when a text holds
 * several (see above), and the first one when anything it cannot parse
 * follows it (fuzz-library: an unterminated comment after the manifest). The
 * offset where a second top-level value, or an unterminated comment after
 * the first, starts, or -1; *first_end is where the first value ends (the
 * length when it does not), which is all json-glib should be given. Strings
 * and comments are read as lk_json_find_too_deep reads them, so a comment
 * between the two values (json-glib's extension) hides nothing. */
gssize lk_json_find_second_value (const char *data, gsize length, gsize *first_end);

/* The 1-based line of `offset` in `data`. */
guint lk_json_line_of (const char *data, gsize offset);

G_END_DECLS
