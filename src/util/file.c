/*
 * file.c - opening the logs a user names (util/file.h).
 */
#include "util/file.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "util/util.h"

FILE *mfu__open_log(const char *path, mfu_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        mfu__fail(err, MFU_E_IO, 0, "%s: cannot open (%s); check the path", path, strerror(errno));
        return NULL;
    }
    /* fopen opens a directory; reading it fails later as "read error" on line 1 */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        size_t n = strlen(path);
        mfu__fail(err, MFU_E_IO, 0,
                  "%s: is a directory, not a log; give the files in it (%s%s*.log)", path, path,
                  n && path[n - 1] == '/' ? "" : "/");
        return NULL;
    }
    return f;
}
