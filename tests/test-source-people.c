/* test-source-people.c — the people an imported library's source named
 * (the manifest's "people") as the lowest layer of decisions: shown as the
 * source had them, named and hidden, until the user decides otherwise; the
 * assignments Likeness's rules refuse are reported. */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "people/lk-cluster.h"
#include "library/lk-library.h"
#include "people/lk-review.h"
#include "people/lk-source-people.h"
#include "lk-test-util.h"

#define DIM 4

/* Seven faces, orthogonal to each other but f and g (the same vector), so
 * the only pair the scan finds is (f, g): whatever else holds faces together
 * is the source's word. Faces: a (photo 0), b (photo 1), c and d (both
 * photo 2), e (photo 3), f (photo 4), g (photo 5). */
static const char *const people_json
    = "  \"people\": [\n"
      "    { \"id\": \"src-ada\", \"name\": \"Ada\", \"faces\": [\"a\", \"b\", \"zzz\"] },\n"
      "    { \"id\": \"src-eve\", \"name\": \"Eve\", \"faces\": [\"c\", \"d\"] },\n"
      "    { \"id\": \"src-hid\", \"hidden\": true, \"faces\": [\"e\", \"a\"] },\n"
      "    { \"id\": \"src-none\", \"name\": \"Nobody\", \"faces\": [] }\n"
      "  ],\n";

static char *
write_library (const char *people)
{
  char *folder = g_dir_make_tmp ("likeness-source-people-XXXXXX", NULL);
  g_assert_nonnull (folder);
  const char *ids[] = { "a", "b", "c", "d", "e", "f", "g" };
  const int photos[] = { 0, 1, 2, 2, 3, 4, 5 };
  GString *json = g_string_new ("{\n  \"format\": \"likeness-library\", \"version\": 1,\n"
                                "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": 4,"
                                " \"count\": 7 },\n");
  g_string_append (json, people);
  g_string_append (json, "  \"faces\": [\n");
  for (int k = 0; k < 7; k++)
    g_string_append_printf (json, "    { \"id\": \"%s\", \"photo\": %d, \"crop_px\": 100 }%s\n",
                            ids[k], photos[k], k < 6 ? "," : "");
  g_string_append (json, "  ]\n}\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_assert_true (g_file_set_contents (manifest, json->str, -1, NULL));
  g_string_free (json, TRUE);

  float rows[7][DIM] = { { 1, 0, 0, 0 },  { 0, 1, 0, 0 },  { 0, 0, 1, 0 }, { 0, 0, 0, 1 },
                         { -1, 0, 0, 0 }, { 0, -1, 0, 0 }, { 0, -1, 0, 0 } };
  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  g_assert_true (g_file_set_contents (emb, (const char *) rows, sizeof rows, NULL));
  return folder;
}

static LkPeople *
cluster (const LkLibrary *library, LkReview *review)
{
  static const LkPair fg = { 5, 6, 0.99f };
  LkClusterInput input = { .n_faces = library->count,
                           .photo = library->photo,
                           .quality = library->quality,
                           .crop_px = library->crop_px,
                           .pairs = &fg,
                           .n_pairs = 1 };
  g_autoptr (GError) error = NULL;
  LkPeople *people = lk_cluster (&input, lk_review_pins (review), NULL, &error);
  g_assert_no_error (error);
  return people;
}

static void
test_loaded_with_face_ids_resolved (void)
{
  g_autofree char *folder = write_library (people_json);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (library->n_source_people, ==, 4);
  const LkSourcePerson *ada = &library->source_people[0];
  g_assert_cmpstr (ada->id, ==, "src-ada");
  g_assert_cmpstr (ada->name, ==, "Ada");
  g_assert_false (ada->hidden);
  g_assert_cmpuint (ada->n_faces, ==, 2);
  g_assert_cmpuint (ada->faces[0], ==, 0);
  g_assert_cmpuint (ada->faces[1], ==, 1);
  g_assert_null (library->source_people[2].name);
  g_assert_true (library->source_people[2].hidden);
  /* "zzz" is no face of this library. */
  g_assert_cmpuint (library->source_unknown_faces, ==, 1);
  lk_test_remove_tree (folder);
}

static void
test_rules_refuse_and_report (void)
{
  g_autofree char *folder = write_library (people_json);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) refusals = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) pins = lk_source_people_pins (library, refusals);

  /* Nobody holds no face: no pin. */
  g_assert_cmpuint (pins->len, ==, 3);
  const LkPin *eve = g_ptr_array_index (pins, 1);
  g_assert_cmpstr (eve->id, ==, "src-eve");
  g_assert_cmpuint (eve->faces->len, ==, 1);
  g_assert_cmpuint (g_array_index (eve->faces, guint32, 0), ==, 2);
  /* Face a is Ada's already; the hidden person keeps e alone. */
  const LkPin *hid = g_ptr_array_index (pins, 2);
  g_assert_cmpuint (hid->faces->len, ==, 1);
  g_assert_cmpuint (g_array_index (hid->faces, guint32, 0), ==, 4);

  g_assert_cmpuint (refusals->len, ==, 2);
  g_assert_nonnull (
      strstr (g_ptr_array_index (refusals, 0), "“Eve”: face 3 is in photo 2 with face 2"));
  g_assert_nonnull (strstr (g_ptr_array_index (refusals, 1), "face 0 is already people[0]'s"));
  lk_test_remove_tree (folder);
}

static const LkPerson *
person_of (const LkPeople *people, guint32 face)
{
  gint32 k = people->person_of[face];
  return k >= 0 ? &people->people[k] : NULL;
}

static void
test_shown_as_the_source_had_them_until_the_user_decides (void)
{
  g_autofree char *folder = write_library (people_json);
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_autoptr (LkReview) review
      = lk_review_new (library->count, library->fingerprint, library->photo);
  g_autoptr (GPtrArray) base = lk_source_people_pins (library, NULL);
  lk_review_set_base_pins (review, base);

  /* No pair joins a and b: only the source's word does. */
  g_autoptr (LkPeople) people = cluster (library, review);
  const LkPerson *ada = person_of (people, 0);
  g_assert_nonnull (ada);
  g_assert_true (ada == person_of (people, 1));
  g_assert_cmpstr (ada->id, ==, "src-ada");
  g_assert_cmpstr (ada->name, ==, "Ada");
  g_assert_true (ada->pinned);
  g_assert_true (person_of (people, 4)->hidden);
  g_assert_null (person_of (people, 3)); /* refused: on its own */
  /* The pair still makes a person of its own, beside the source's. */
  g_assert_cmpstr (person_of (people, 5)->id, ==, "p5");
  g_assert_false (person_of (people, 5)->pinned);
  /* The source layer is no decision: nothing to undo, nothing saved. */
  g_assert_false (lk_review_can_undo (review));
  g_assert_cmpuint (lk_review_n_decisions (review), ==, 0);

  /* The user renames Ada and takes b out: their decisions win. */
  g_assert_true (lk_review_name (review, people, "src-ada", "Ada Lovelace", &error));
  g_assert_no_error (error);
  g_clear_pointer (&people, lk_people_free);
  people = cluster (library, review);
  guint32 b = 1;
  g_assert_true (lk_review_remove (review, people, "src-ada", &b, 1, &error));
  g_assert_no_error (error);
  g_clear_pointer (&people, lk_people_free);
  people = cluster (library, review);
  g_assert_cmpstr (person_of (people, 0)->name, ==, "Ada Lovelace");
  g_assert_true (person_of (people, 1) != person_of (people, 0));
  /* And the user shows the hidden person. */
  g_assert_true (lk_review_set_hidden (review, people, "src-hid", FALSE, &error));
  g_assert_no_error (error);
  g_clear_pointer (&people, lk_people_free);
  people = cluster (library, review);
  g_assert_false (person_of (people, 4)->hidden);

  /* Undoing everything leaves the source's word. */
  while (lk_review_undo (review))
    ;
  g_clear_pointer (&people, lk_people_free);
  people = cluster (library, review);
  g_assert_cmpstr (person_of (people, 0)->name, ==, "Ada");
  g_assert_true (person_of (people, 1) == person_of (people, 0));
  g_assert_true (person_of (people, 4)->hidden);

  /* review.json holds the user's decisions only. */
  g_assert_true (lk_review_redo (review));
  g_autofree char *path = g_build_filename (folder, "review.json", NULL);
  g_assert_true (lk_review_save (review, path, LK_REVIEW_SAVE_DEFAULT, &error));
  g_assert_no_error (error);
  g_autofree char *saved = NULL;
  g_assert_true (g_file_get_contents (path, &saved, NULL, NULL));
  g_assert_nonnull (strstr (saved, "Ada Lovelace"));
  g_assert_null (strstr (saved, "src-eve"));
  lk_test_remove_tree (folder);
}

static void
test_malformed_people_named (void)
{
  g_autofree char *folder
      = write_library ("  \"people\": [ { \"id\": \"x\", \"faces\": [\"a\", 7] } ],\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_null (library);
  g_assert_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "people[0].faces[1]"));
  lk_test_remove_tree (folder);

  g_clear_error (&error);
  g_autofree char *no_id = write_library ("  \"people\": [ { \"faces\": [] } ],\n");
  g_assert_null (lk_library_load (no_id, &error));
  g_assert_nonnull (strstr (error->message, "people[0].id"));
  lk_test_remove_tree (no_id);
}

static void
test_cli_shows_and_reports (void)
{
  g_autofree char *folder = write_library (people_json);
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (lk_test_run_cli (&out, &err, "info", folder, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "source_people=3\n"));
  /* Two refused by the rules, one face id unknown. */
  g_assert_nonnull (strstr (out, "source_assignments_refused=3\n"));
  g_assert_nonnull (strstr (err, "two faces of one photo are never one person"));
  g_assert_nonnull (strstr (err, "1 face id names no face"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "people", folder, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "Ada"));
  g_assert_nonnull (strstr (out, "src-ada"));
  lk_test_remove_tree (folder);
}

static void
test_export_by_source_id (void)
{
  g_autofree char *folder = write_library (people_json);
  g_autofree char *out = NULL, *err = NULL;

  /* The user renames Ada with a comma and quotes: CSV must quote them. */
  g_assert_cmpint (
      lk_test_run_cli (&out, &err, "review", folder, "name", "src-ada", "Ada, \"Countess\"", NULL),
      ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", folder, "--by-source-id", "--csv", NULL),
                   ==, 0);
  g_assert_true (g_str_has_prefix (out, "face,person,name,hidden,source_person\r\n"));
  g_assert_nonnull (strstr (out, "\r\na,src-ada,\"Ada, \"\"Countess\"\"\",false,src-ada\r\n"));
  g_assert_nonnull (strstr (out, "\r\nb,src-ada,"));
  g_assert_nonnull (strstr (out, "\r\nd,,,false,\r\n")); /* refused: unassigned */
  g_assert_nonnull (strstr (out, "\r\ne,src-hid,,true,src-hid\r\n"));
  g_assert_nonnull (strstr (out, "\r\nf,p5,,false,\r\n")); /* Likeness's own person */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", folder, "--by-source-id", "--json", NULL),
                   ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  JsonArray *faces = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "faces");
  g_assert_cmpuint (json_array_get_length (faces), ==, 7);
  JsonObject *a = json_array_get_object_element (faces, 0);
  g_assert_cmpstr (json_object_get_string_member (a, "face"), ==, "a");
  g_assert_cmpstr (json_object_get_string_member (a, "name"), ==, "Ada, \"Countess\"");
  JsonObject *d = json_array_get_object_element (faces, 3);
  g_assert_true (json_object_get_null_member (d, "person"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", folder, "--by-source-id", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "g\tp5\t-\tshown\t-\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", folder, NULL), ==, 2);
  lk_test_remove_tree (folder);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/source-people/loaded-with-face-ids-resolved",
                   test_loaded_with_face_ids_resolved);
  g_test_add_func ("/source-people/rules-refuse-and-report", test_rules_refuse_and_report);
  g_test_add_func ("/source-people/shown-as-the-source-had-them-until-the-user-decides",
                   test_shown_as_the_source_had_them_until_the_user_decides);
  g_test_add_func ("/source-people/malformed-people-named", test_malformed_people_named);
  g_test_add_func ("/source-people/cli-shows-and-reports", test_cli_shows_and_reports);
  g_test_add_func ("/source-people/export-by-source-id", test_export_by_source_id);
  return g_test_run ();
}
