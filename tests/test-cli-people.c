/* test-cli-people — `likeness-cli people`, `review` and `evaluate` end to end
 *
 * Runs the built likeness-cli ($LIKENESS_CLI) on a sample library it writes
 * itself (make-sample, ground-truth labels), then drives every review action
 * through separate runs, as a script would: each run must see the decisions,
 * the undo and the redo of the runs before it.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

static char *library;

static int
cli (char **out, char **err, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) g_getenv ("LIKENESS_CLI"));
  va_list args;
  va_start (args, err);
  for (const char *a; (a = va_arg (args, const char *));)
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  int status = 0;
  g_autofree char *o = NULL, *e = NULL;
  g_autoptr (GError) error = NULL;
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &o, &e, &status,
                &error);
  g_assert_no_error (error);
  if (out)
    *out = g_steal_pointer (&o);
  if (err)
    *err = g_steal_pointer (&e);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static JsonObject *
people_json (JsonParser *parser)
{
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (cli (&out, &err, "people", library, "--json", NULL), ==, 0);
  g_autoptr (GError) error = NULL;
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static JsonObject *
person_at (JsonObject *root, guint k)
{
  return json_array_get_object_element (json_object_get_array_member (root, "people"), k);
}

static JsonObject *
person_by_id (JsonObject *root, const char *id)
{
  JsonArray *people = json_object_get_array_member (root, "people");
  for (guint k = 0; k < json_array_get_length (people); k++)
    {
      JsonObject *p = json_array_get_object_element (people, k);
      if (strcmp (json_object_get_string_member (p, "id"), id) == 0)
        return p;
    }
  return NULL;
}

static gint64
face_at (JsonObject *person, guint k)
{
  return json_array_get_int_element (json_object_get_array_member (person, "faces"), k);
}

static guint
n_faces (JsonObject *person)
{
  return json_array_get_length (json_object_get_array_member (person, "faces"));
}

static void
test_people_json_shape (void)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *root = people_json (parser);
  JsonArray *people = json_object_get_array_member (root, "people");
  g_assert_cmpuint (json_array_get_length (people), >, 3);
  g_assert_true (json_object_has_member (root, "unassigned"));
  guint total = json_array_get_length (json_object_get_array_member (root, "unassigned"));
  guint previous = G_MAXUINT;
  for (guint k = 0; k < json_array_get_length (people); k++)
    {
      JsonObject *p = person_at (root, k);
      g_assert_cmpuint (json_object_get_size (p), ==, 5);
      g_assert_nonnull (json_object_get_string_member (p, "id"));
      g_assert_true (json_object_get_null_member (p, "name"));
      g_assert_false (json_object_get_boolean_member (p, "hidden"));
      guint n = n_faces (p);
      g_assert_cmpuint (n, >=, 2);
      g_assert_cmpuint (n, <=, previous); /* largest first */
      previous = n;
      gint64 cover = json_object_get_int_member (p, "cover");
      gboolean found = FALSE;
      for (guint m = 0; m < n; m++)
        found |= face_at (p, m) == cover;
      g_assert_true (found);
      total += n;
    }
  g_assert_cmpuint (total, ==, 400);

  g_autofree char *text = NULL;
  g_assert_cmpint (cli (&text, NULL, "people", library, NULL), ==, 0);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *first = g_strdup_printf (
      "%s\t-\t%u\t%" G_GINT64_FORMAT, json_object_get_string_member (person_at (root, 0), "id"),
      n_faces (person_at (root, 0)), json_object_get_int_member (person_at (root, 0), "cover"));
  g_assert_cmpstr (lines[0], ==, first);
}

static void
test_review_actions_across_runs (void)
{
  g_autoptr (JsonParser) p0 = json_parser_new ();
  JsonObject *root = people_json (p0);
  g_autofree char *a = g_strdup (json_object_get_string_member (person_at (root, 0), "id"));
  g_autofree char *c = g_strdup (json_object_get_string_member (person_at (root, 1), "id"));
  guint a_faces = n_faces (person_at (root, 0));
  g_autofree char *a1 = g_strdup_printf ("%" G_GINT64_FORMAT, face_at (person_at (root, 0), 1));
  g_autofree char *a2 = g_strdup_printf ("%" G_GINT64_FORMAT, face_at (person_at (root, 0), 2));
  g_autofree char *c0 = g_strdup_printf ("%" G_GINT64_FORMAT, face_at (person_at (root, 1), 0));

  g_autofree char *out = NULL;
  g_assert_cmpint (cli (&out, NULL, "review", library, "name", a, "Ada", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "Ada"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "remove", a, a1, NULL), ==, 0);
  /* Merge with the first person that shares no photo with Ada; the others
   * are refused by the photo rule, and say so. */
  g_autofree char *b = NULL;
  guint b_faces = 0;
  for (guint k = 2; b == NULL; k++)
    {
      g_assert_cmpuint (k, <,
                        json_array_get_length (json_object_get_array_member (root, "people")));
      const char *id = json_object_get_string_member (person_at (root, k), "id");
      g_autofree char *err = NULL;
      int status = cli (NULL, &err, "review", library, "merge", a, id, NULL);
      if (status == 0)
        {
          b = g_strdup (id);
          b_faces = n_faces (person_at (root, k));
        }
      else
        {
          g_assert_cmpint (status, ==, 1);
          g_assert_nonnull (strstr (err, "photo"));
        }
    }
  g_assert_cmpint (cli (NULL, NULL, "review", library, "cover", a, a2, NULL), ==, 0);
  g_assert_cmpint (cli (NULL, NULL, "review", library, "hide", c, NULL), ==, 0);

  g_autoptr (JsonParser) p1 = json_parser_new ();
  root = people_json (p1);
  JsonObject *ada = person_by_id (root, a);
  g_assert_cmpstr (json_object_get_string_member (ada, "name"), ==, "Ada");
  g_assert_cmpuint (n_faces (ada), ==, a_faces - 1 + b_faces);
  g_assert_cmpint (json_object_get_int_member (ada, "cover"), ==, g_ascii_strtoll (a2, NULL, 10));
  for (guint m = 0; m < n_faces (ada); m++)
    g_assert_cmpint (face_at (ada, m), !=, g_ascii_strtoll (a1, NULL, 10));
  g_assert_null (person_by_id (root, b));
  g_assert_true (json_object_get_boolean_member (person_by_id (root, c), "hidden"));

  /* Move a face of c to Ada, then undo twice and redo once, each a run of its own. */
  g_assert_cmpint (cli (NULL, NULL, "review", library, "move", c, a, c0, NULL), ==, 0);
  g_autofree char *undid = NULL;
  g_assert_cmpint (cli (&undid, NULL, "review", library, "undo", NULL), ==, 0);
  g_assert_nonnull (strstr (undid, "undid: move 1 face"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "undo", NULL), ==, 0);
  g_autoptr (JsonParser) p2 = json_parser_new ();
  root = people_json (p2);
  g_assert_false (json_object_get_boolean_member (person_by_id (root, c), "hidden"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "redo", NULL), ==, 0);
  g_autoptr (JsonParser) p3 = json_parser_new ();
  root = people_json (p3);
  g_assert_true (json_object_get_boolean_member (person_by_id (root, c), "hidden"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "unhide", c, NULL), ==, 0);
  /* The face taken out of Ada is outside c: "not c either" is recorded. */
  g_autofree char *rejected = NULL;
  g_assert_cmpint (cli (&rejected, NULL, "review", library, "reject", c, a1, NULL), ==, 0);
  g_assert_nonnull (strstr (rejected, "remove 1 face from"));

  /* Bad requests: exit 1 with a message naming the problem; nothing recorded. */
  g_autofree char *err = NULL;
  g_assert_cmpint (cli (NULL, &err, "review", library, "name", "p999999", "X", NULL), ==, 1);
  g_assert_nonnull (strstr (err, "p999999"));
  g_autofree char *err2 = NULL;
  g_assert_cmpint (cli (NULL, &err2, "review", library, "remove", a, "nine", NULL), ==, 1);
  g_assert_nonnull (strstr (err2, "nine"));
  g_autofree char *err3 = NULL;
  g_assert_cmpint (cli (NULL, &err3, "review", library, "reject", c, c0, NULL), ==, 1);
  g_assert_nonnull (strstr (err3, "is in person"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "explode", a, NULL), ==, 2);
  g_assert_cmpint (cli (NULL, NULL, "review", library, "redo", NULL), ==, 1);
  g_autoptr (JsonParser) p4 = json_parser_new ();
  root = people_json (p4);
  g_assert_false (json_object_get_boolean_member (person_by_id (root, c), "hidden"));
  g_assert_cmpstr (json_object_get_string_member (person_by_id (root, a), "name"), ==, "Ada");
}

static void
test_foreign_review_refused (void)
{
  g_autoptr (JsonParser) before = json_parser_new ();
  g_autofree char *first
      = g_strdup (json_object_get_string_member (person_at (people_json (before), 0), "id"));
  g_autofree char *path = g_build_filename (library, "review.json", NULL);
  g_autofree char *saved = NULL;
  g_assert_true (g_file_get_contents (path, &saved, NULL, NULL));
  const char *foreign = "{\"format\": \"likeness-review\", \"version\": 1, "
                        "\"fingerprint\": \"not-this-library\", \"decisions\": []}";
  g_assert_true (g_file_set_contents (path, foreign, -1, NULL));
  g_autofree char *err = NULL;
  g_assert_cmpint (cli (NULL, &err, "people", library, NULL), ==, 1);
  g_assert_nonnull (strstr (err, "another library"));
  g_autofree char *err2 = NULL;
  g_assert_cmpint (cli (NULL, &err2, "review", library, "undo", NULL), ==, 1);
  g_autofree char *still = NULL;
  g_assert_true (g_file_get_contents (path, &still, NULL, NULL));
  g_assert_cmpstr (still, ==, foreign);
  /* --start-over only replaces the file when a decision is saved. */
  g_autofree char *err3 = NULL;
  g_assert_cmpint (cli (NULL, &err3, "review", library, "--start-over", "undo", NULL), ==, 1);
  g_assert_nonnull (strstr (err3, "nothing to undo"));
  g_autofree char *again = NULL;
  g_assert_true (g_file_get_contents (path, &again, NULL, NULL));
  g_assert_cmpstr (again, ==, foreign);

  /* With --start-over, a decision replaces the foreign file with a new review. */
  g_assert_cmpint (cli (NULL, NULL, "review", library, "--start-over", "hide", first, NULL), ==, 0);
  g_autoptr (JsonParser) after = json_parser_new ();
  JsonObject *root = people_json (after);
  g_assert_true (json_object_get_boolean_member (person_by_id (root, first), "hidden"));
  g_autofree char *undid = NULL;
  g_assert_cmpint (cli (&undid, NULL, "review", library, "undo", NULL), ==, 0);
  g_assert_nonnull (strstr (undid, "hide"));
  g_assert_cmpint (cli (NULL, NULL, "review", library, "undo", NULL), ==, 1);

  g_assert_true (g_file_set_contents (path, saved, -1, NULL));
  g_assert_cmpint (cli (NULL, NULL, "people", library, NULL), ==, 0);
}

/* Issue 19: a review.json of 200,000 nested "[" crashed people, review and
 * even review --start-over; now it is refused, and --start-over replaces it. */
static void
test_deep_review_refused_and_start_over_works (void)
{
  g_autoptr (JsonParser) before = json_parser_new ();
  g_autofree char *first
      = g_strdup (json_object_get_string_member (person_at (people_json (before), 0), "id"));
  g_autofree char *path = g_build_filename (library, "review.json", NULL);
  g_autofree char *saved = NULL;
  g_assert_true (g_file_get_contents (path, &saved, NULL, NULL));
  g_autofree char *deep = g_strnfill (200000, '[');
  g_assert_true (g_file_set_contents (path, deep, -1, NULL));

  g_autofree char *err = NULL;
  g_assert_cmpint (cli (NULL, &err, "people", library, NULL), ==, 1);
  g_assert_nonnull (strstr (err, "nested deeper than"));
  g_autofree char *err2 = NULL;
  g_assert_cmpint (cli (NULL, &err2, "review", library, "undo", NULL), ==, 1);
  g_assert_nonnull (strstr (err2, "nested deeper than"));
  g_autofree char *still = NULL;
  g_assert_true (g_file_get_contents (path, &still, NULL, NULL));
  g_assert_cmpstr (still, ==, deep);

  g_assert_cmpint (cli (NULL, NULL, "review", library, "--start-over", "hide", first, NULL), ==, 0);
  g_autoptr (JsonParser) after = json_parser_new ();
  g_assert_true (
      json_object_get_boolean_member (person_by_id (people_json (after), first), "hidden"));

  g_assert_true (g_file_set_contents (path, saved, -1, NULL));
  g_assert_cmpint (cli (NULL, NULL, "people", library, NULL), ==, 0);
}

static void
test_evaluate_json_and_table (void)
{
  g_autofree char *out = NULL;
  g_assert_cmpint (cli (&out, NULL, "evaluate", library, "--json", NULL), ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  const char *methods[] = { "likeness", "connected_components", "immich_rule" };
  double f1[3];
  for (int m = 0; m < 3; m++)
    {
      JsonObject *o = json_object_get_object_member (root, methods[m]);
      g_assert_nonnull (o);
      JsonObject *bc = json_object_get_object_member (o, "bcubed");
      JsonObject *pw = json_object_get_object_member (o, "pairwise");
      f1[m] = json_object_get_double_member (bc, "f1");
      g_assert_cmpfloat (f1[m], >, 0.5);
      g_assert_cmpfloat (f1[m], <=, 1.0);
      g_assert_true (json_object_has_member (bc, "precision"));
      g_assert_true (json_object_has_member (bc, "recall"));
      g_assert_true (json_object_has_member (pw, "precision"));
      g_assert_true (json_object_has_member (pw, "recall"));
      g_assert_cmpint (json_object_get_int_member (o, "identities"), >, 0);
      g_assert_cmpint (json_object_get_int_member (o, "people"), >, 0);
      g_assert_true (json_object_has_member (o, "split"));
      g_assert_true (json_object_has_member (o, "mixed"));
    }
  g_assert_cmpfloat (f1[0], >=, f1[1]);
  g_assert_cmpfloat (f1[0], >=, f1[2]);

  g_autofree char *table = NULL;
  g_assert_cmpint (cli (&table, NULL, "evaluate", library, NULL), ==, 0);
  g_assert_nonnull (strstr (table, "BCubed F1"));
  g_assert_nonnull (strstr (table, "\nconnected_components "));
  g_assert_nonnull (strstr (table, "\nimmich_rule "));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-cli-people-XXXXXX", &error);
  g_assert_no_error (error);
  library = g_build_filename (dir, "lib", NULL);
  g_assert_cmpint (cli (NULL, NULL, "make-sample", library, "--faces", "400", "--seed", "5",
                        "--no-thumbnails", NULL),
                   ==, 0);

  g_test_add_func ("/cli-people/people-json-shape", test_people_json_shape);
  g_test_add_func ("/cli-people/review-actions-across-runs", test_review_actions_across_runs);
  g_test_add_func ("/cli-people/foreign-review-refused", test_foreign_review_refused);
  g_test_add_func ("/cli-people/deep-review-refused-and-start-over-works",
                   test_deep_review_refused_and_start_over_works);
  g_test_add_func ("/cli-people/evaluate-json-and-table", test_evaluate_json_and_table);
  int status = g_test_run ();

  const char *folders[] = { library, dir };
  for (int k = 0; k < 2; k++)
    {
      GDir *d = g_dir_open (folders[k], 0, NULL);
      for (const char *name; d && (name = g_dir_read_name (d));)
        {
          g_autofree char *file = g_build_filename (folders[k], name, NULL);
          g_unlink (file);
        }
      if (d)
        g_dir_close (d);
      g_rmdir (folders[k]);
    }
  return status;
}
