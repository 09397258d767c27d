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

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "export/lk-export-xmp.h"
#include "lk-cli.h"
#include "lk-session.h"

static const char *const outcome_words[] = {
  [LK_EXPORT_XMP_CREATED] = "create",  [LK_EXPORT_XMP_UPDATED] = "change",
  [LK_EXPORT_XMP_UNCHANGED] = "leave", [LK_EXPORT_XMP_REFUSED] = "refused",
  [LK_EXPORT_XMP_FAILED] = "failed",
};

static int export_xmp_with (const char *folder, const LkExportXmpOptions *options);

/* --xmp: the review as face regions in sidecars beside the photos. */
static int
export_xmp (const char *folder, gboolean dry_run, const char *sidecar_name, gboolean digikam_tags,
            char **map_texts)
{
  LkExportXmpOptions options = { 0 };
  if (sidecar_name == NULL || strcmp (sidecar_name, "full") == 0)
    options.sidecar_name = LK_EXPORT_XMP_NAME_FULL;
  else if (strcmp (sidecar_name, "basename") == 0)
    options.sidecar_name = LK_EXPORT_XMP_NAME_BASENAME;
  else
    {
      fprintf (stderr,
               _ ("likeness-cli export: --sidecar-name is full (IMG_1.jpg.xmp) or basename "
                  "(IMG_1.xmp), not “%s”\n"),
               sidecar_name);
      return LK_CLI_USAGE;
    }
  guint n_maps = map_texts != NULL ? g_strv_length (map_texts) : 0;
  g_autofree LkPathMap *maps = g_new0 (LkPathMap, MAX (n_maps, 1));
  for (guint k = 0; k < n_maps; k++)
    {
      g_autoptr (GError) error = NULL;
      if (!lk_path_map_parse (map_texts[k], &maps[k], &error))
        {
          fprintf (stderr, _ ("likeness-cli export: --map: %s\n"), error->message);
          for (guint j = 0; j < k; j++)
            lk_path_map_clear (&maps[j]);
          return LK_CLI_USAGE;
        }
    }
  options.maps = maps;
  options.n_maps = n_maps;
  int status = LK_CLI_OK;
  options.dry_run = dry_run;
  options.digikam_tags = digikam_tags;
  if (!lk_export_xmp_supported ())
    {
      fprintf (stderr, _ ("likeness-cli export: this likeness-cli was built without XMP sidecars "
                          "(meson -Dxmp=enabled needs gexiv2)\n"));
      status = LK_CLI_ERROR;
    }
  else
    status = export_xmp_with (folder, &options);
  for (guint k = 0; k < n_maps; k++)
    lk_path_map_clear (&maps[k]);
  return status;
}

/* "3 photos with named faces, 8 regions: …": one sentence per count, so
 * that each language can make its own plurals. */
static void
print_report (const LkExportXmpReport *report, gboolean dry_run)
{
  g_autofree char *photos = g_strdup_printf (
      ngettext ("%zu photo with named faces", "%zu photos with named faces", report->photos),
      report->photos);
  g_autofree char *regions
      = g_strdup_printf (ngettext ("%zu region", "%zu regions", report->regions), report->regions);
  if (dry_run)
    /* TRANSLATORS: the first two %s are "3 photos with named faces" and "8 regions" */
    printf (_ ("Dry run: %s, %s: %zu to create, %zu to change, %zu unchanged, %zu refused, %zu "
               "failed\n"),
            photos, regions, report->created, report->updated, report->unchanged, report->refused,
            report->failed);
  else
    /* TRANSLATORS: the first two %s are "3 photos with named faces" and "8 regions" */
    printf (_ ("%s, %s: %zu created, %zu updated, %zu unchanged, %zu refused, %zu failed\n"),
            photos, regions, report->created, report->updated, report->unchanged, report->refused,
            report->failed);
}

/* No photo with named faces is where the library (and the --map folders)
 * say: whole sentences for each case, for the translators. */
static void
print_none_found (const LkExportXmpReport *report, gboolean maps, gboolean dry_run)
{
  const char *first = report->missing_example;
  if (report->photos == 1 && maps)
    fprintf (stderr,
             dry_run ? _ ("likeness-cli export: the photo with named faces is not where the "
                          "library and the --map folders say (%s); no sidecar would be written\n")
                     : _ ("likeness-cli export: the photo with named faces is not where the "
                          "library and the --map folders say (%s); no sidecar was written\n"),
             first);
  else if (report->photos == 1)
    fprintf (stderr,
             dry_run ? _ ("likeness-cli export: the photo with named faces is not where the "
                          "library says (%s); no sidecar would be written\n")
                     : _ ("likeness-cli export: the photo with named faces is not where the "
                          "library says (%s); no sidecar was written\n"),
             first);
  else if (maps)
    fprintf (stderr,
             dry_run ? _ ("likeness-cli export: none of the %zu photos with named faces is where "
                          "the library and the --map folders say (the first: %s); no sidecar "
                          "would be written\n")
                     : _ ("likeness-cli export: none of the %zu photos with named faces is where "
                          "the library and the --map folders say (the first: %s); no sidecar was "
                          "written\n"),
             report->photos, first);
  else
    fprintf (stderr,
             dry_run ? _ ("likeness-cli export: none of the %zu photos with named faces is where "
                          "the library says (the first: %s); no sidecar would be written\n")
                     : _ ("likeness-cli export: none of the %zu photos with named faces is where "
                          "the library says (the first: %s); no sidecar was written\n"),
             report->photos, first);
}

static int
export_xmp_with (const char *folder, const LkExportXmpOptions *options)
{
  gboolean dry_run = options->dry_run;

  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = lk_session_new (folder);
  if (!lk_session_load (session, NULL, &error))
    return lk_cli_fail (error);
  lk_cli_warn_guard (session);
  g_autoptr (LkExportXmpReport) report = lk_export_xmp (
      lk_session_get_library (session), lk_session_peek_people (session), options, &error);
  if (report == NULL)
    return lk_cli_fail (error);
  for (guint k = 0; k < report->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      if (e->outcome == LK_EXPORT_XMP_REFUSED || e->outcome == LK_EXPORT_XMP_FAILED)
        fprintf (stderr, _ ("likeness-cli export: %s: %s\n"), e->sidecar, e->message);
      else if (dry_run)
        printf ("%s\t%u\t%s\n", outcome_words[e->outcome], e->regions, e->sidecar);
    }
  print_report (report, dry_run);
  if (report->without_path > 0)
    fprintf (stderr,
             ngettext ("likeness-cli export: %zu named face on photos without photos[].path left "
                       "out\n",
                       "likeness-cli export: %zu named faces on photos without photos[].path left "
                       "out\n",
                       report->without_path),
             report->without_path);
  /* Every photo missing is a library whose photos moved or are on another
   * disk, not a partial export: no sidecar can be written, so it fails. */
  gboolean none_found = report->photos > 0 && report->missing == report->photos;
  if (none_found)
    print_none_found (report, options->n_maps > 0, dry_run);
  else if (report->missing > 0 && options->n_maps > 0)
    fprintf (stderr,
             ngettext ("likeness-cli export: %zu photo with named faces not found where the "
                       "library and the --map folders say (each named above)\n",
                       "likeness-cli export: %zu photos with named faces not found where the "
                       "library and the --map folders say (each named above)\n",
                       report->missing),
             report->missing);
  else if (report->missing > 0)
    fprintf (stderr,
             ngettext ("likeness-cli export: %zu photo with named faces not found where the "
                       "library says (each named above)\n",
                       "likeness-cli export: %zu photos with named faces not found where the "
                       "library says (each named above)\n",
                       report->missing),
             report->missing);
  if (report->unmapped > 0)
    {
      /* The server's paths are not this computer's: nothing is written
       * beside them until the user says where that folder is here. */
      if (options->n_maps > 0)
        fprintf (stderr,
                 ngettext ("likeness-cli export: %zu photo with named faces is still on the "
                           "source's server, under no --map prefix (the first: %s); give --map "
                           "SERVER_PREFIX=LOCAL_FOLDER for each folder the server keeps originals "
                           "in\n",
                           "likeness-cli export: %zu photos with named faces are still on the "
                           "source's server, under no --map prefix (the first: %s); give --map "
                           "SERVER_PREFIX=LOCAL_FOLDER for each folder the server keeps originals "
                           "in\n",
                           report->unmapped),
                 report->unmapped, report->unmapped_example);
      else
        fprintf (stderr,
                 ngettext ("likeness-cli export: %zu photo with named faces is only on the "
                           "source's server, under no --map prefix (the first: %s); give --map "
                           "SERVER_PREFIX=LOCAL_FOLDER for each folder the server keeps originals "
                           "in\n",
                           "likeness-cli export: %zu photos with named faces are only on the "
                           "source's server, under no --map prefix (the first: %s); give --map "
                           "SERVER_PREFIX=LOCAL_FOLDER for each folder the server keeps originals "
                           "in\n",
                           report->unmapped),
                 report->unmapped, report->unmapped_example);
      return LK_CLI_ERROR;
    }
  return report->failed > 0 || none_found ? LK_CLI_ERROR : LK_CLI_OK;
}

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

/* One face of --by-source-id --json: its id, its person, the person's name,
 * whether hidden, the person's id in the source (or null). */
static void
add_json_face (JsonBuilder *b, const char *id, const LkPerson *p, const char *source_person)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "face");
  json_builder_add_string_value (b, id);
  json_builder_set_member_name (b, "person");
  p ? json_builder_add_string_value (b, p->id) : json_builder_add_null_value (b);
  json_builder_set_member_name (b, "name");
  p && p->name ? json_builder_add_string_value (b, p->name) : json_builder_add_null_value (b);
  json_builder_set_member_name (b, "hidden");
  json_builder_add_boolean_value (b, p != NULL && p->hidden);
  json_builder_set_member_name (b, "source_person");
  source_person ? json_builder_add_string_value (b, source_person)
                : json_builder_add_null_value (b);
  json_builder_end_object (b);
}

/* The same face as a CSV row (RFC 4180: CRLF line ends). */
static void
add_csv_face (GString *out, const char *id, const LkPerson *p, const char *source_person)
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

/* --by-source-id: every face with a source id and the person Likeness gives
 * it now, as tab-separated lines, JSON or CSV. */
static int
export_by_source_id (const char *folder, gboolean json, gboolean csv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) session = lk_session_new (folder);
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
        add_json_face (b, id, p, source_person);
      else if (csv)
        add_csv_face (out, id, p, source_person);
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
    fprintf (stderr,
             ngettext ("likeness-cli export: %zu face without a source id (faces[].id) left out\n",
                       "likeness-cli export: %zu faces without a source id (faces[].id) left "
                       "out\n",
                       without_id),
             without_id);
  return LK_CLI_OK;
}

int
lk_cli_export (int argc, char **argv)
{
  gboolean by_source_id = FALSE, json = FALSE, csv = FALSE;
  gboolean xmp = FALSE, dry_run = FALSE, digikam_tags = FALSE;
  g_autofree char *sidecar_name = NULL;
  g_auto (GStrv) maps = NULL;
  const GOptionEntry entries[] = {
    { "xmp", 0, 0, G_OPTION_ARG_NONE, &xmp,
      N_ ("Write the names as XMP face regions in a sidecar beside each photo"), NULL },
    { "dry-run", 0, 0, G_OPTION_ARG_NONE, &dry_run,
      N_ ("With --xmp: list the sidecars to create, change and leave; write nothing"), NULL },
    { "sidecar-name", 0, 0, G_OPTION_ARG_STRING, &sidecar_name,
      N_ ("With --xmp: full (IMG_1.jpg.xmp, the default) or basename (IMG_1.xmp)"), "NAME" },
    { "digikam-tags", 0, 0, G_OPTION_ARG_NONE, &digikam_tags,
      N_ ("With --xmp: also digiKam:TagsList People/NAME (Immich makes tags of it)"), NULL },
    { "map", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &maps,
      N_ ("With --xmp: the photos under PREFIX (an imported library's server folder, "
          "/usr/src/app/upload; a photo folder as the library names it) are in DIR on this "
          "computer; repeatable"),
      "PREFIX=DIR" },
    { "by-source-id", 0, 0, G_OPTION_ARG_NONE, &by_source_id,
      N_ ("One row per source face id (faces[].id): the person Likeness gives it"), NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_ ("Print JSON"), NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &csv, N_ ("Print CSV (RFC 4180, with a header line)"), NULL },
    { NULL },
  };
  if (!lk_cli_parse (
          "export", "LIBRARY --by-source-id | --xmp",
          N_ ("--xmp: for every photo with a face of a named, shown person, a sidecar "
              "PHOTO.EXT.xmp with the faces as XMP regions (mwg-rs, MP, PersonInImage) that "
              "Immich, PhotoPrism, digiKam and Lightroom read; an existing sidecar keeps "
              "everything else. Exit 1 when a sidecar could not be written, or when "
              "no photo with named faces is where the library says.\n"
              "--by-source-id: every face of an imported library by its source id, with the "
              "person id and "
              "name Likeness gives it now (the review's decisions applied): tab-separated "
              "face, person, name, hidden, source_person; --json or --csv for scripts. "
              "source_person is the person's id in the source when the person is one of "
              "the source's."),
          entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  if (xmp && by_source_id)
    {
      fprintf (stderr, _ ("likeness-cli export: --xmp or --by-source-id, not both\n"));
      return LK_CLI_USAGE;
    }
  if (xmp)
    return export_xmp (argv[1], dry_run, sidecar_name, digikam_tags, maps);
  if (dry_run || digikam_tags || sidecar_name != NULL || maps != NULL)
    {
      fprintf (stderr,
               _ ("likeness-cli export: --dry-run, --sidecar-name, --digikam-tags and --map "
                  "go with --xmp\n"));
      return LK_CLI_USAGE;
    }
  if (!by_source_id)
    {
      fprintf (stderr, _ ("likeness-cli export: say what to export: --by-source-id or --xmp\n"));
      return LK_CLI_USAGE;
    }
  if (json && csv)
    {
      fprintf (stderr, _ ("likeness-cli export: --json or --csv, not both\n"));
      return LK_CLI_USAGE;
    }

  return export_by_source_id (argv[1], json, csv);
}
