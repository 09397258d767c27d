/* likeness-cli calibrate — fit the pair model to a library, keep it in review.json
 *
 * The fitted a, b and w_size are the user's state, like a decision: they go
 * into review.json's "calibration" (lk-calibrate.h), never into the library,
 * every later scan of the CLI and the window uses them, and --undo / --redo
 * step through the calibrations chosen so far.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "people/lk-calibrate.h"
#include "lk-cli.h"
#include "lk-session.h"

static gboolean
has_labels (const LkLibrary *library)
{
  for (gsize f = 0; f < library->count; f++)
    if (library->label[f] != NULL)
      return TRUE;
  return FALSE;
}

static const char *const guard_names[] = { "ok", "too-many", "too-few" };

static void
print_json (const LkCalibrationFit *fit, const char *from, const LkCalibrationGuard *guard,
            const char *saved)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
#define NUMBER(name, value)                                                                        \
  json_builder_set_member_name (b, name);                                                          \
  json_builder_add_double_value (b, value)
#define COUNT(name, value)                                                                         \
  json_builder_set_member_name (b, name);                                                          \
  json_builder_add_int_value (b, (gint64) (value))
  json_builder_set_member_name (b, "from");
  json_builder_add_string_value (b, from);
  NUMBER ("a", fit->calibration.a);
  NUMBER ("b", fit->calibration.b);
  NUMBER ("w_size", fit->calibration.w_size);
  json_builder_set_member_name (b, "fitted_size");
  json_builder_add_boolean_value (b, fit->fitted_size);
  json_builder_set_member_name (b, "size_at_bound");
  json_builder_add_boolean_value (b, fit->size_at_bound);
  COUNT ("positive_pairs", fit->calibration.positive_pairs);
  COUNT ("negative_pairs", fit->calibration.negative_pairs);
  NUMBER ("negative_weight", fit->negative_weight);
  COUNT ("held_out_positive", fit->held_out_positive);
  COUNT ("held_out_negative", fit->held_out_negative);
  NUMBER ("log_loss", fit->log_loss);
  NUMBER ("log_loss_positive", fit->log_loss_positive);
  NUMBER ("brier", fit->brier);
  NUMBER ("min_probability", fit->min_probability);
  NUMBER ("median_crop", fit->median_crop);
  NUMBER ("cos_at_bar", fit->cos_at_bar);
  COUNT ("iterations", fit->iterations);
  json_builder_set_member_name (b, "converged");
  json_builder_add_boolean_value (b, fit->converged);
  COUNT ("refits", fit->refits);
  NUMBER ("candidate_fraction", guard->fraction);
  COUNT ("faces_sampled", guard->faces_sampled);
  COUNT ("faces_paired", guard->faces_paired);
  json_builder_set_member_name (b, "guard");
  json_builder_add_string_value (b, guard_names[lk_calibration_guard_verdict (guard)]);
  if (saved)
    {
      json_builder_set_member_name (b, "saved");
      json_builder_add_string_value (b, saved);
    }
#undef NUMBER
#undef COUNT
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_text (const LkCalibrationFit *fit, const char *from, const LkCalibrationGuard *guard)
{
  if (!fit->fitted_size)
    printf (_ ("fitted from %s: a = %.4f, b = %.4f, w_size = %.4f (not fitted: the crop sizes "
               "hardly vary)\n"),
            from, fit->calibration.a, fit->calibration.b, fit->calibration.w_size);
  else if (fit->size_at_bound)
    printf (_ ("fitted from %s: a = %.4f, b = %.4f, w_size = %.4f (held at 0: smaller crops "
               "would have lowered the bar)\n"),
            from, fit->calibration.a, fit->calibration.b, fit->calibration.w_size);
  else
    printf (_ ("fitted from %s: a = %.4f, b = %.4f, w_size = %.4f\n"), from, fit->calibration.a,
            fit->calibration.b, fit->calibration.w_size);
  printf (_ ("pairs fitted: %lld of one person, %lld of two people (standing for %.0f pairs)\n"),
          (long long) fit->calibration.positive_pairs, (long long) fit->calibration.negative_pairs,
          fit->negative_weight);
  g_autofree char *steps = g_strdup_printf (
      fit->converged ? ngettext ("converged after %u Newton step",
                                 "converged after %u Newton steps", fit->iterations)
                     : ngettext ("did NOT converge after %u Newton step",
                                 "did NOT converge after %u Newton steps", fit->iterations),
      fit->iterations);
  if (fit->refits > 0)
    printf (ngettext ("%s over %u fits (the estimate refitted on its own people %u time)\n",
                      "%s over %u fits (the estimate refitted on its own people %u times)\n",
                      fit->refits),
            steps, fit->refits + 1, fit->refits);
  else
    printf ("%s\n", steps);
  printf (_ ("held out: %zu + %zu pairs; log-loss %.6f per library pair (%.4f per pair of one "
             "person), Brier %.6f\n"),
          fit->held_out_positive, fit->held_out_negative, fit->log_loss, fit->log_loss_positive,
          fit->brier);
  printf (_ ("p = %g at cosine %.4f (median crop %.0f px)\n"), fit->min_probability,
          fit->cos_at_bar, fit->median_crop);
  printf (ngettext ("candidates: %.2f %% of %u random pair",
                    "candidates: %.2f %% of %u random pairs", guard->sampled),
          100 * guard->fraction, guard->sampled);
  if (guard->faces_sampled > 0)
    printf (ngettext ("; %u of %u random face has one", "; %u of %u random faces have one",
                      guard->faces_sampled),
            guard->faces_paired, guard->faces_sampled);
  printf ("\n");
  g_autofree char *warning = NULL;
  if (lk_calibration_guard_fails (guard, &warning))
    printf (_ ("warning: %s\n"), warning);
}

static gboolean
save (LkSession *s, LkCalibrationHistory *h, GError **error)
{
  g_autoptr (JsonNode) node = lk_calibration_history_to_json (h);
  LkReview *review = lk_session_get_review (s);
  lk_review_set_calibration (review, node);
  return lk_review_save (review, lk_session_get_review_path (s), LK_REVIEW_SAVE_DEFAULT, error);
}

int
lk_cli_calibrate (int argc, char **argv)
{
  g_autofree char *from_arg = NULL;
  gboolean json = FALSE, dry_run = FALSE, undo = FALSE, redo = FALSE;
  gint64 seed = 1;
  const GOptionEntry entries[] = {
    { "from", 0, 0, G_OPTION_ARG_STRING, &from_arg,
      N_ ("labels (faces[].label), decisions (review.json) or estimate (no labels); default: "
          "labels "
          "when the faces have them, else estimate"),
      "SOURCE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_ ("Print JSON"), NULL },
    { "dry-run", 0, 0, G_OPTION_ARG_NONE, &dry_run, N_ ("Fit and report, save nothing"), NULL },
    { "undo", 0, 0, G_OPTION_ARG_NONE, &undo, N_ ("Go back to the calibration before the last"),
      NULL },
    { "redo", 0, 0, G_OPTION_ARG_NONE, &redo, N_ ("Take the undone calibration again"), NULL },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, N_ ("Seed of the pair sample (default 1)"), "N" },
    { NULL },
  };
  if (!lk_cli_parse (
          "calibrate", "LIBRARY",
          N_ ("Fit the pair model's a, b (and w_size when crop sizes vary) to LIBRARY by "
              "maximum likelihood, report the fit on held-out pairs, and keep it in "
              "review.json, where every later scan finds it (the library is not "
              "modified)."),
          entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  LkCalibrationFrom from = LK_CALIBRATION_FROM_LABELS;
  if (from_arg != NULL && !lk_calibration_from_from_string (from_arg, &from))
    {
      fprintf (stderr,
               _ ("likeness-cli calibrate: --from %s is not labels, decisions or estimate\n"),
               from_arg);
      return LK_CLI_USAGE;
    }
  if (undo && redo)
    {
      fprintf (stderr, _ ("likeness-cli calibrate: --undo and --redo exclude each other\n"));
      return LK_CLI_USAGE;
    }

  g_autoptr (GError) error = NULL;
  g_autoptr (LkSession) s = lk_session_new (argv[1]);
  if (!lk_session_open (s, &error))
    return lk_cli_fail (error);
  const LkLibrary *library = lk_session_get_library (s);
  LkReview *review = lk_session_get_review (s);
  g_autoptr (LkCalibrationHistory) h
      = lk_calibration_history_new (lk_review_get_calibration (review), &error);
  if (h == NULL)
    {
      g_prefix_error (&error, "%s: ", lk_session_get_review_path (s));
      return lk_cli_fail (error);
    }

  if (undo || redo)
    {
      if (!(undo ? lk_calibration_history_undo (h) : lk_calibration_history_redo (h)))
        {
          fprintf (stderr, "%s",
                   undo ? _ ("likeness-cli calibrate: there is no calibration to undo\n")
                        : _ ("likeness-cli calibrate: there is no calibration to redo\n"));
          return LK_CLI_ERROR;
        }
      if (!save (s, h, &error))
        return lk_cli_fail (error);
      const char *source = NULL;
      LkCalibration now
          = lk_calibration_in_force (library, lk_review_get_calibration (review), &source, NULL);
      printf (undo ? _ ("undid: now the %s calibration: a = %.4f, b = %.4f, w_size = %.4f\n")
                   : _ ("redid: now the %s calibration: a = %.4f, b = %.4f, w_size = %.4f\n"),
              source, now.a, now.b, now.w_size);
      return LK_CLI_OK;
    }

  if (from_arg == NULL && !has_labels (library))
    from = LK_CALIBRATION_FROM_ESTIMATE;
  LkCalibrateOptions options = { .seed = (guint64) seed };
  g_autoptr (LkCalibrationFit) fit
      = lk_calibrate (library, from, lk_review_pins (review), &options, NULL, &error);
  if (fit == NULL)
    return lk_cli_fail (error);
  LkCalibrationGuard guard;
  lk_calibration_guard (library, &fit->calibration, fit->min_probability,
                        LK_CALIBRATION_GUARD_SAMPLES, 1, &guard);
  const char *name = lk_calibration_from_to_string (from);
  if (!dry_run)
    {
      /* Ordered among the decisions for the window's undo (lk-calibrate.h). */
      lk_calibration_history_set_after (h, &fit->calibration, name,
                                        lk_review_last_decision_id (review));
      if (!save (s, h, &error))
        return lk_cli_fail (error);
    }
  if (json)
    print_json (fit, name, &guard, dry_run ? NULL : lk_session_get_review_path (s));
  else
    {
      print_text (fit, name, &guard);
      if (!dry_run)
        printf (_ ("saved in %s (likeness-cli calibrate --undo %s goes back)\n"),
                lk_session_get_review_path (s), argv[1]);
    }
  return LK_CLI_OK;
}
