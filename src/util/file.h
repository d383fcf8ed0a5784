/*
 * util/file.h - opening the files a user names (logs), with the messages the CLI shows.
 */
#ifndef MFU_UTIL_FILE_H
#define MFU_UTIL_FILE_H

#include <stdio.h>

#include "mfu/common.h"

/* Open path for reading (binary) when it is something to read a log from: a regular file, a
 * pipe or a device; not a directory. NULL on failure, with MFU_E_IO in err and a message that
 * names path once and what to do ("x.log: cannot open (No such file or directory); check the
 * path", "logs: is a directory, not a log; give the files in it, e.g. logs/NAME.log"). */
FILE *mfu__open_log(const char *path, mfu_error *err);

#endif
