/* likeness-cli export — every source face id with the person Likeness gives
 * it now, so a script can push the review back to Immich or PhotoPrism
 *
 * One row per face that has a faces[].id (an imported library's faces all
 * do): the face id, the person's id (empty when the face is unassigned),
 * its name, whether it is hidden, and — when the person is one of the
 * source's own (the manifest's "people", kept under their source id) — that
 * id again as source_person, so the script knows which source person to
 * update and which are Likeness's new ones.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "lk-session.h"

/* RFC 4180: a field with a comma, a quote or a line break is quoted, its
 * quotes doubled. */
static void
put_csv (GString *out, const char *field)
{
  if (field == NULL)
    return;
  if (strpbrk (field, ",\"\r\n") == NULL)
    {
      g_string_append (out, field);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *c = field; *c; c++)
    {
      if (*c == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *c);
    }
  g_string_append_c (out, '"');
}

int
lk_cli_export (int argc, char **argv)
{
  gboolean by_source_id = FALSE, json = FALSE, csv = FALSE;
  const GOptionEntry entries[] = {
    { "by-source-id", 0, 0, G_OPTION_ARG_NONE, &by_source_id,
      "One row per source face id (faces[].id): the person Likeness gives it", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &csv, "Print CSV (RFC 4180, with a header line)", NULL },
    { NULL },
  };
  if (!lk_cli_parse ("export", "LIBRARY --by-source-id",
                     "Every face of an imported library by its source id, with the person id and "
                     "name Likeness gives it now (the review's decisions applied): tab-separated "
                     "face, person, name, hidden, source_person; --json or --csv for scripts. "
                     "source_person is the person's id in the source when the person is one of "
                     "the source's.",
                     entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  if (!by_source_id)
    {
      fprintf (stderr, "likeness-cli export: say what to export: --by-source-id\n");
      return LK_CLI_USAGE;
    }
  if (json && csv)
    {
      fprintf (stderr, "likeness-cli export: --json or --csv, not both\n");
      return LK_CLI_USAGE;
    }

  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  if (!lk_session_load (session, NULL, &error))
    return lk_cli_fail (error);
  lk_cli_warn_guard (session);
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GHashTable) source_ids = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize k = 0; k < library->n_source_people; k++)
    g_hash_table_add (source_ids, library->source_people[k].id);

  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GString) out = g_string_new (csv ? "face,person,name,hidden,source_person\r\n" : "");
  gsize without_id = 0;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "faces");
  json_builder_begin_array (b);
  for (gsize f = 0; f < library->count; f++)
    {
      const char *id = library->face_id[f];
      if (id == NULL)
        {
          without_id++;
          continue;
        }
      gint32 k = people->person_of[f];
      const LkPerson *p = k >= 0 ? &people->people[k] : NULL;
      const char *source_person
          = p != NULL && g_hash_table_contains (source_ids, p->id) ? p->id : NULL;
      if (json)
        {
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "face");
          json_builder_add_string_value (b, id);
          json_builder_set_member_name (b, "person");
          p ? json_builder_add_string_value (b, p->id) : json_builder_add_null_value (b);
          json_builder_set_member_name (b, "name");
          p && p->name ? json_builder_add_string_value (b, p->name)
                       : json_builder_add_null_value (b);
          json_builder_set_member_name (b, "hidden");
          json_builder_add_boolean_value (b, p != NULL && p->hidden);
          json_builder_set_member_name (b, "source_person");
          source_person ? json_builder_add_string_value (b, source_person)
                        : json_builder_add_null_value (b);
          json_builder_end_object (b);
        }
      else if (csv)
        {
          put_csv (out, id);
          g_string_append_c (out, ',');
          put_csv (out, p ? p->id : NULL);
          g_string_append_c (out, ',');
          put_csv (out, p ? p->name : NULL);
          g_string_append (out, p != NULL && p->hidden ? ",true," : ",false,");
          put_csv (out, source_person);
          g_string_append (out, "\r\n");
        }
      else
        g_string_append_printf (
            out, "%s\t%s\t%s\t%s\t%s\n", id, p ? p->id : "-", p && p->name ? p->name : "-",
            p != NULL && p->hidden ? "hidden" : "shown", source_person ? source_person : "-");
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  if (json)
    {
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      g_autofree char *text = json_generator_to_data (gen, NULL);
      printf ("%s\n", text);
    }
  else
    fputs (out->str, stdout);
  if (without_id > 0)
    fprintf (stderr, "likeness-cli export: %zu face%s without a source id (faces[].id) left out\n",
             without_id, without_id == 1 ? "" : "s");
  return LK_CLI_OK;
}
