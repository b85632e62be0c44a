// The injected faults of the I/O-error suite: fail the Nth call of one operation on the watched
// files. Inactive unless configured.
//
//   RILL_FAULT_FAIL    "<op>:<N>[:<errno>]", op one of pwrite, fsync, fdatasync: the Nth call of
//                      that operation on a watched file (counted from 1, across every thread and
//                      every watched file of the process) fails with EIO, or the errno given (a
//                      number or one of the names EIO, ENOSPC, EDQUOT, EROFS, EBADF, EINTR), without
//                      running. "pwrite" counts every write: pwrite, pwrite64, pwritev and
//                      write/writev, which LMDB uses for runs of pages.
//
// When the fault fires, one line goes to standard error:
//   rill-fault: failed <op> #<N> of <path> (<length> bytes) with <errno>
// so that the harness knows the failure happened, and to which file.
//
//   RILL_FAULT_STALL   "<milliseconds>": after each write to an O_DSYNC/O_SYNC descriptor of a
//                      watched file returns, the thread sleeps that long before the call returns
//                      to the process. In LMDB's durable mode that is the meta-page write: the
//                      commit is in the file, and not yet published in lock.mdb for readers.
#define _GNU_SOURCE
#include "RillFaultShim.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const op_names[] = {"pwrite", "fsync", "fdatasync"};
#define OP_COUNT 3

static struct {
    int op;  // -1: no fault configured
    unsigned long target;
    int error;
} fault = {-1, 0, EIO};

static unsigned long calls[OP_COUNT];
static long stall_milliseconds;
static pthread_once_t configured = PTHREAD_ONCE_INIT;

static int parse_errno(const char *text) {
    static const struct {
        const char *name;
        int value;
    } names[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS}, {"EBADF", EBADF},
                 {"EINTR", EINTR}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0) return names[i].value;
    char *end;
    long value = strtol(text, &end, 10);
    return (*text && !*end && value > 0) ? (int)value : EIO;
}

static void configure(void) {
    const char *stall = getenv("RILL_FAULT_STALL");
    if (stall && *stall) stall_milliseconds = strtol(stall, NULL, 10);
    const char *text = getenv("RILL_FAULT_FAIL");
    if (!text || !*text) return;
    char *copy = strdup(text);
    char *op = strtok(copy, ":");
    char *count = strtok(NULL, ":");
    char *error = strtok(NULL, ":");
    for (int i = 0; op && count && i < OP_COUNT; i++) {
        if (strcmp(op, op_names[i]) != 0) continue;
        unsigned long target = strtoul(count, NULL, 10);
        if (target == 0) break;
        fault.target = target;
        fault.error = error ? parse_errno(error) : EIO;
        fault.op = i;
    }
    free(copy);
}

static int index_of(enum rill_fault_op op) {
    switch (op) {
        case RILL_FAULT_PWRITE: return 0;
        case RILL_FAULT_FSYNC: return 1;
        case RILL_FAULT_FDATASYNC: return 2;
    }
    return -1;
}

int rill_fault_before(enum rill_fault_op op, int fd, size_t length) {
    pthread_once(&configured, configure);
    int index = index_of(op);
    if (fault.op < 0 || index != fault.op) return 0;
    // Counted atomically: two threads writing at once each get a number of their own.
    unsigned long number = __atomic_add_fetch(&calls[index], 1, __ATOMIC_SEQ_CST);
    if (number != fault.target) return 0;
    const char *path = rill_fault_path(fd);
    char line[512];
    int n = snprintf(
        line, sizeof line, "rill-fault: failed %s #%lu of %s (%zu bytes) with %s\n", op_names[index], number,
        path ? path : "?", length, strerrorname_np(fault.error) ? strerrorname_np(fault.error) : "?");
    if (n > 0) {
        ssize_t ignored = write(2, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
        (void)ignored;
    }
    return fault.error;
}

void rill_fault_after_write(int fd, ssize_t written, int synchronous) {
    (void)fd;
    pthread_once(&configured, configure);
    if (written <= 0 || !synchronous || stall_milliseconds <= 0) return;
    struct timespec pause = {stall_milliseconds / 1000, (stall_milliseconds % 1000) * 1000000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
}
