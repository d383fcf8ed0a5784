/*
 * fuzz_util.c - helpers of the fuzz targets (fuzz.h): the private temporary directory.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[512];

/* Remove the files in tmp_dir (the targets make no subdirectory) and the directory. */
static void remove_tmpdir(void)
{
    DIR *d = opendir(tmp_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", tmp_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmp_dir);
}

void mfu_fuzz_remove_db(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

const char *mfu_fuzz_tmpdir(void)
{
    if (tmp_dir[0])
        return tmp_dir;
    const char *base = getenv("TMPDIR");
    int n =
        snprintf(tmp_dir, sizeof tmp_dir, "%s/mfu-fuzz-XXXXXX", base && base[0] ? base : "/tmp");
    if (n < 0 || (size_t)n >= sizeof tmp_dir || !mkdtemp(tmp_dir)) {
        tmp_dir[0] = '\0';
        return NULL;
    }
    atexit(remove_tmpdir);
    return tmp_dir;
}
