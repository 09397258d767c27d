/* lk-fail-shim.c — an LD_PRELOAD library that makes the file system fail
 *
 * Root ignores permission bits and a test cannot fill a real disk quickly, so
 * the durability tests preload this library and tell it, through a control
 * file named by LK_FAIL_SHIM_CONTROL, how writes inside one folder should
 * fail:
 *
 *   enospc DIR         write() to a file under DIR fails with ENOSPC (a full disk)
 *   erofs DIR          creating or renaming a file under DIR fails with EROFS,
 *                      and so does access(…, W_OK) on DIR or below (a
 *                      read-only medium)
 *   short DIR          write() to a file under DIR writes a third of what it
 *                      was asked (at least one byte): a short write, which
 *                      a writer must continue, not take for the whole
 *   eio-fsync DIR      fsync(), fdatasync() and syncfs() of a file under DIR,
 *                      or of DIR itself, fail with EIO (the disk could not
 *                      store it)
 *   enospc-rename DIR  rename() onto a path under DIR fails with ENOSPC (the
 *                      folder's own blocks are full)
 *   enolck DIR         flock() on a file under DIR fails with ENOLCK (a
 *                      network file system without its lock daemon)
 *   trace DIR          nothing fails; every write(), fsync(), fdatasync()
 *                      and syncfs() of a file under DIR (or of DIR), and
 *                      every rename() onto a path under DIR, is logged in
 *                      order, one line each ("write PATH", "fsync PATH",
 *                      "rename FROM TO", …), to the control file's name
 *                      followed by ".trace": what a test reads to prove the
 *                      order of a writer's steps
 *   (empty)            nothing fails: the disk has space again
 *
 * Every wrapper forwards to the next definition (dlsym RTLD_NEXT): libc's, or
 * in a clang sanitizer build — whose runtime is linked into the executable
 * and whose interceptors therefore come first — from the interceptor to
 * here to libc, so the shim works under ASan too.
 *
 * The control file is read on every intercepted call, so a test can lift the
 * failure and check that a retry succeeds.
 */
/* Both open and open64 are wrapped, so neither may be a redirect of the other. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef enum
{
  MODE_NONE,
  MODE_ENOSPC,
  MODE_EROFS,
  MODE_SHORT,
  MODE_EIO_FSYNC,
  MODE_ENOSPC_RENAME,
  MODE_ENOLCK,
  MODE_TRACE,
} Mode;

/* Reads the control file with raw system calls, so it never re-enters the
 * wrappers below. */
static Mode
read_control (char *dir, size_t dir_size)
{
  const char *control = getenv ("LK_FAIL_SHIM_CONTROL");
  char buf[PATH_MAX + 16];

  if (control == NULL)
    return MODE_NONE;
  int fd = (int) syscall (SYS_openat, AT_FDCWD, control, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return MODE_NONE;
  ssize_t n = syscall (SYS_read, fd, buf, sizeof buf - 1);
  syscall (SYS_close, fd);
  if (n <= 0)
    return MODE_NONE;
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';

  Mode mode;
  const char *rest;
  if (strncmp (buf, "enospc ", 7) == 0)
    mode = MODE_ENOSPC, rest = buf + 7;
  else if (strncmp (buf, "erofs ", 6) == 0)
    mode = MODE_EROFS, rest = buf + 6;
  else if (strncmp (buf, "short ", 6) == 0)
    mode = MODE_SHORT, rest = buf + 6;
  else if (strncmp (buf, "eio-fsync ", 10) == 0)
    mode = MODE_EIO_FSYNC, rest = buf + 10;
  else if (strncmp (buf, "enospc-rename ", 14) == 0)
    mode = MODE_ENOSPC_RENAME, rest = buf + 14;
  else if (strncmp (buf, "enolck ", 7) == 0)
    mode = MODE_ENOLCK, rest = buf + 7;
  else if (strncmp (buf, "trace ", 6) == 0)
    mode = MODE_TRACE, rest = buf + 6;
  else
    return MODE_NONE;
  if (strlen (rest) >= dir_size)
    return MODE_NONE;
  memcpy (dir, rest, strlen (rest) + 1);
  return mode;
}

static int
path_is_under (const char *path, const char *dir)
{
  size_t len = strlen (dir);
  return strncmp (path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

/* The path an open descriptor names; an empty string when unknown. */
static void
fd_path (int fd, char *target, size_t size)
{
  char link[64];

  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (link, target, size - 1);
  target[n > 0 ? n : 0] = '\0';
}

static int
fd_is_under (int fd, const char *dir)
{
  char target[PATH_MAX];

  fd_path (fd, target, sizeof target);
  return target[0] != '\0' && path_is_under (target, dir);
}

/* One line at the end of the trace file, with raw system calls. */
static void
trace (const char *op, const char *a, const char *b)
{
  const char *control = getenv ("LK_FAIL_SHIM_CONTROL");
  char name[PATH_MAX], line[3 * PATH_MAX];

  if (control == NULL || snprintf (name, sizeof name, "%s.trace", control) >= (int) sizeof name)
    return;
  int n = snprintf (line, sizeof line, "%s %s%s%s\n", op, a, b != NULL ? " " : "",
                    b != NULL ? b : "");
  if (n <= 0 || n >= (int) sizeof line)
    return;
  int fd
      = (int) syscall (SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  syscall (SYS_write, fd, line, (size_t) n);
  syscall (SYS_close, fd);
}

static void
trace_fd (const char *op, int fd, const char *dir)
{
  char target[PATH_MAX];

  fd_path (fd, target, sizeof target);
  if (target[0] != '\0' && path_is_under (target, dir))
    trace (op, target, NULL);
}

/* An absolute form of `path` (relative paths are resolved against the
 * current directory); an empty string when it does not fit. */
static void
absolute (const char *path, char *out, size_t size)
{
  char cwd[PATH_MAX];
  int n;

  if (path[0] == '/' || getcwd (cwd, sizeof cwd) == NULL)
    n = snprintf (out, size, "%s", path);
  else
    n = snprintf (out, size, "%s/%s", cwd, path);
  if (n < 0 || (size_t) n >= size)
    out[0] = '\0';
}

static int
creation_fails (const char *path, int flags)
{
  char dir[PATH_MAX], abs[PATH_MAX];

  if (!(flags & (O_CREAT | O_WRONLY | O_RDWR)))
    return 0;
  if (read_control (dir, sizeof dir) != MODE_EROFS)
    return 0;
  absolute (path, abs, sizeof abs);
  return path_is_under (abs, dir);
}

#define FORWARD_OPEN(name, ...)                                                                    \
  int name (const char *path, int flags, ...)                                                      \
  {                                                                                                \
    static int (*real) (const char *, int, ...);                                                   \
    mode_t mode = 0;                                                                               \
    if (flags & (O_CREAT | O_TMPFILE))                                                             \
      {                                                                                            \
        va_list ap;                                                                                \
        va_start (ap, flags);                                                                      \
        mode = va_arg (ap, mode_t);                                                                \
        va_end (ap);                                                                               \
      }                                                                                            \
    if (creation_fails (path, flags))                                                              \
      {                                                                                            \
        errno = EROFS;                                                                             \
        return -1;                                                                                 \
      }                                                                                            \
    if (real == NULL)                                                                              \
      real = dlsym (RTLD_NEXT, #name);                                                             \
    return real (path, flags, mode);                                                               \
  }

FORWARD_OPEN (open)
FORWARD_OPEN (open64)

ssize_t
write (int fd, const void *data, size_t size)
{
  static ssize_t (*real) (int, const void *, size_t);
  char dir[PATH_MAX];
  Mode mode = fd > 2 ? read_control (dir, sizeof dir) : MODE_NONE;

  if (mode == MODE_ENOSPC && fd_is_under (fd, dir))
    {
      errno = ENOSPC;
      return -1;
    }
  if (mode == MODE_SHORT && size > 1 && fd_is_under (fd, dir))
    size = size / 3 > 0 ? size / 3 : 1;
  if (mode == MODE_TRACE)
    trace_fd ("write", fd, dir);
  if (real == NULL)
    real = dlsym (RTLD_NEXT, "write");
  return real (fd, data, size);
}

#define FORWARD_SYNC(name)                                                                         \
  int name (int fd)                                                                                \
  {                                                                                                \
    static int (*real) (int);                                                                      \
    char dir[PATH_MAX];                                                                            \
    Mode mode = read_control (dir, sizeof dir);                                                    \
    if (mode == MODE_EIO_FSYNC && fd_is_under (fd, dir))                                           \
      {                                                                                            \
        errno = EIO;                                                                               \
        return -1;                                                                                 \
      }                                                                                            \
    if (mode == MODE_TRACE)                                                                        \
      trace_fd (#name, fd, dir);                                                                   \
    if (real == NULL)                                                                              \
      real = dlsym (RTLD_NEXT, #name);                                                             \
    return real (fd);                                                                              \
  }

FORWARD_SYNC (fsync)
FORWARD_SYNC (fdatasync)
FORWARD_SYNC (syncfs)

int
rename (const char *from, const char *to)
{
  static int (*real) (const char *, const char *);
  char dir[PATH_MAX], abs[PATH_MAX];

  absolute (to, abs, sizeof abs);
  Mode mode = read_control (dir, sizeof dir);
  if ((mode == MODE_EROFS || mode == MODE_ENOSPC_RENAME) && path_is_under (abs, dir))
    {
      errno = mode == MODE_EROFS ? EROFS : ENOSPC;
      return -1;
    }
  if (mode == MODE_TRACE && path_is_under (abs, dir))
    {
      char from_abs[PATH_MAX];
      absolute (from, from_abs, sizeof from_abs);
      trace ("rename", from_abs, abs);
    }
  if (real == NULL)
    real = dlsym (RTLD_NEXT, "rename");
  return real (from, to);
}

int
access (const char *path, int how)
{
  static int (*real) (const char *, int);
  char dir[PATH_MAX], abs[PATH_MAX];

  absolute (path, abs, sizeof abs);
  if ((how & W_OK) && read_control (dir, sizeof dir) == MODE_EROFS && path_is_under (abs, dir))
    {
      errno = EROFS;
      return -1;
    }
  if (real == NULL)
    real = dlsym (RTLD_NEXT, "access");
  return real (path, how);
}

int
flock (int fd, int operation)
{
  static int (*real) (int, int);
  char dir[PATH_MAX];

  if (read_control (dir, sizeof dir) == MODE_ENOLCK && fd_is_under (fd, dir))
    {
      errno = ENOLCK;
      return -1;
    }
  if (real == NULL)
    real = dlsym (RTLD_NEXT, "flock");
  return real (fd, operation);
}
