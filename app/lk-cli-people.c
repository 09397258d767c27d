/* likeness-cli people — the people of a library, after the review's decisions */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "lk-cli.h"
#include "lk-session.h"

static void
add_faces (JsonBuilder *b, const guint32 *faces, gsize n)
{
  json_builder_begin_array (b);
  for (gsize k = 0; k < n; k++)
    json_builder_add_int_value (b, faces[k]);
  json_builder_end_array (b);
}

static void
print_json (const LkPeople *people)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "people");
  json_builder_begin_array (b);
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *p = &people->people[k];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, p->id);
      json_builder_set_member_name (b, "name");
      if (p->name)
        json_builder_add_string_value (b, p->name);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "faces");
      add_faces (b, p->faces, p->n_faces);
      json_builder_set_member_name (b, "cover");
      json_builder_add_int_value (b, p->cover);
      json_builder_set_member_name (b, "hidden");
      json_builder_add_boolean_value (b, p->hidden);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "unassigned");
  add_faces (b, people->unassigned, people->n_unassigned);
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

int
lk_cli_people (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_ ("Print JSON"), NULL },
    { NULL },
  };
  if (!lk_cli_parse ("people", "LIBRARY",
                     N_ ("Scan the library, group its faces into people and apply the review's "
                         "decisions (review.json). One line per person: id, name (or -), number of "
                         "faces, cover face; hidden people say so at the end of their line."),
                     entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;

  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  /* Nothing here reads the rows after the scan. */
  lk_session_set_release_embeddings (session, TRUE);
  if (!lk_session_load (session, NULL, &error))
    return lk_cli_fail (error);
  lk_cli_warn_guard (session);
  lk_cli_note_gone (session);
  const LkPeople *people = lk_session_peek_people (session);

  if (json)
    {
      print_json (people);
      return LK_CLI_OK;
    }
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *p = &people->people[k];
      printf ("%s\t%s\t%zu\t%u%s\n", p->id, p->name ? p->name : "-", p->n_faces, p->cover,
              p->hidden ? "\thidden" : "");
    }
  printf ("unassigned\t%zu\n", people->n_unassigned);
  return LK_CLI_OK;
}
