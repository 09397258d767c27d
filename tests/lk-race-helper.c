/* lk-race-helper — a command for test-cli-race to race, with known behaviour
 *
 *   lk-race-helper [--spin N] [--print TEXT] [--stderr TEXT]… [--exit CODE]
 *                  [--signal SIG] [--pidfile FILE] [--pause]
 *
 * In that order: spins N iterations of a loop the compiler cannot drop (CPU
 * work proportional to N, no sleeping), prints TEXT and a newline on stdout,
 * each --stderr TEXT on a line of stderr, writes its pid to FILE, waits for a
 * signal (--pause), dies of SIG (--signal), exits with CODE (default 0).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  unsigned long long spin = 0;
  const char *print = NULL, *pidfile = NULL;
  int code = 0, sig = 0, do_pause = 0;

  for (int k = 1; k < argc; k++)
    {
      const char *next = k + 1 < argc ? argv[k + 1] : NULL;
      if (strcmp (argv[k], "--pause") == 0)
        do_pause = 1;
      else if (next == NULL)
        {
          fprintf (stderr, "lk-race-helper: %s needs a value\n", argv[k]);
          return 2;
        }
      else if (strcmp (argv[k], "--spin") == 0)
        spin = strtoull (argv[++k], NULL, 10);
      else if (strcmp (argv[k], "--print") == 0)
        print = argv[++k];
      else if (strcmp (argv[k], "--stderr") == 0)
        fprintf (stderr, "%s\n", argv[++k]);
      else if (strcmp (argv[k], "--exit") == 0)
        code = atoi (argv[++k]);
      else if (strcmp (argv[k], "--signal") == 0)
        sig = atoi (argv[++k]);
      else if (strcmp (argv[k], "--pidfile") == 0)
        pidfile = argv[++k];
      else
        {
          fprintf (stderr, "lk-race-helper: unknown argument %s\n", argv[k]);
          return 2;
        }
    }

  volatile unsigned long long sink = 0;
  for (unsigned long long i = 0; i < spin; i++)
    sink = sink * 6364136223846793005ULL + i;
  if (print != NULL)
    printf ("%s\n", print);
  fflush (stdout);
  if (pidfile != NULL)
    {
      char tmp[4096];
      snprintf (tmp, sizeof tmp, "%s.tmp", pidfile);
      FILE *f = fopen (tmp, "w");
      if (f == NULL || fprintf (f, "%ld\n", (long) getpid ()) < 0 || fclose (f) != 0
          || rename (tmp, pidfile) != 0)
        return 3;
    }
  if (do_pause)
    pause ();
  if (sig != 0)
    raise (sig);
  return code;
}
