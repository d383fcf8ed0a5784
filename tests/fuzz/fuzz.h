/*
 * fuzz.h - what every fuzz target (tests/fuzz/fuzz_*.c) shares.
 *
 * A target defines LLVMFuzzerTestOneInput (and may define LLVMFuzzerInitialize). It is built
 * twice: as a libFuzzer program with clang (-fsanitize=fuzzer, `make fuzz`, scripts/fuzz) and,
 * with any compiler, linked with replay.c, a main() that feeds it the files it is given: the
 * kept crash inputs under tests/fuzz/regressions/TARGET/ (CTest's fuzz.TARGET, every build).
 * A target must not leak, print or exit: a finding is a sanitizer report or an abort().
 */
#ifndef MFU_FUZZ_H
#define MFU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Inputs over this many bytes are ignored (libFuzzer's -max_len is set below it in
 * scripts/fuzz): the targets look for wrong handling, not for slowness on huge input. */
#define MFU_FUZZ_MAX_INPUT (256 * 1024)

/* A failed invariant: a message on stderr and abort() (what a fuzzer reports as a crash). */
#define MFU_FUZZ_CHECK(cond)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A fresh private directory for a target's files (mkdtemp under $TMPDIR or /tmp), made once
 * per process and removed at exit; NULL when it cannot be made. */
const char *mfu_fuzz_tmpdir(void);

/* Remove a store file and what SQLite keeps beside it (-wal, -shm, -journal). */
void mfu_fuzz_remove_db(const char *path);

#endif
