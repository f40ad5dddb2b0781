/* SQLite for the engine: the amalgamation with the `unix` VFS as default, its POSIX advisory
   locks answered in-process. A run is one process, so unixInodeInfo's per-file lock table
   already orders every connection of the run; the process-level fcntl lock has nothing left
   to exclude (no two runs share a writable folder: each has its own job folder), and WASI has
   none to take. Built by sqlite.py. */
#include <fcntl.h>
#include <stdarg.h>
static int forge_sqlite_fcntl(int fd, int cmd, ...);
#define fcntl forge_sqlite_fcntl
#include "sqlite3.c"
#undef fcntl

static int forge_sqlite_fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (cmd == F_SETLK || cmd == F_SETLKW) return 0;
  if (cmd == F_GETLK) {
    ((struct flock *)arg)->l_type = F_UNLCK;
    return 0;
  }
  return fcntl(fd, cmd, arg);
}
