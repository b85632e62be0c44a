// The interposed system calls: each call on a watched descriptor goes through the hooks of
// RillFaultShim.h around the real call, found with dlsym(RTLD_NEXT). Descriptors of other files
// go straight to the real call.
#define _GNU_SOURCE
#include "RillFaultShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WATCHED_FD 4096

static char *watched_path[MAX_WATCHED_FD];
static int watched_flags[MAX_WATCHED_FD];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static char **suffixes;
static int suffix_count;
static pthread_once_t configured = PTHREAD_ONCE_INIT;

static void configure(void) {
    const char *files = getenv("RILL_FAULT_FILES");
    if (!files || !*files) return;
    char *copy = strdup(files);
    int count = 1;
    for (const char *c = copy; *c; c++) count += *c == ':';
    suffixes = calloc((size_t)count, sizeof(char *));
    for (char *part = strtok(copy, ":"); part; part = strtok(NULL, ":")) suffixes[suffix_count++] = part;
}

static int is_watched_path(const char *path) {
    pthread_once(&configured, configure);
    if (!path) return 0;
    size_t length = strlen(path);
    for (int i = 0; i < suffix_count; i++) {
        size_t n = strlen(suffixes[i]);
        if (n <= length && strcmp(path + length - n, suffixes[i]) == 0) return 1;
    }
    return 0;
}

const char *rill_fault_path(int fd) {
    if (fd < 0 || fd >= MAX_WATCHED_FD) return NULL;
    return __atomic_load_n(&watched_path[fd], __ATOMIC_ACQUIRE);
}

static int is_synchronous(int fd) {
    return (watched_flags[fd] & (O_DSYNC | O_SYNC)) != 0;
}

static void watch(int fd, const char *path, int flags) {
    if (fd < 0 || fd >= MAX_WATCHED_FD || !is_watched_path(path)) return;
    pthread_mutex_lock(&table_lock);
    watched_flags[fd] = flags;
    __atomic_store_n(&watched_path[fd], strdup(path), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&table_lock);
    rill_journal_opened(fd, path, flags);
}

// The real function, looked up once. The cache is read and written atomically: threads that
// make their first call at once race to fill it (with the same pointer), which ThreadSanitizer
// rightly reports for a plain variable.
#define REAL(name, type)                                                          \
    static type cached_##name;                                                    \
    type real_##name = __atomic_load_n(&cached_##name, __ATOMIC_ACQUIRE);         \
    if (!real_##name) {                                                           \
        real_##name = (type)dlsym(RTLD_NEXT, #name);                              \
        __atomic_store_n(&cached_##name, real_##name, __ATOMIC_RELEASE);          \
    }

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*close_fn)(int);
typedef int (*sync_fn)(int);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
    REAL(open, open_fn);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int fd = real_open(path, flags, mode);
    watch(fd, path, flags);
    return fd;
}

int open64(const char *path, int flags, ...) {
    REAL(open64, open_fn);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int fd = real_open64(path, flags, mode);
    watch(fd, path, flags);
    return fd;
}

int openat(int directory, const char *path, int flags, ...) {
    REAL(openat, openat_fn);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int fd = real_openat(directory, path, flags, mode);
    watch(fd, path, flags);
    return fd;
}

int openat64(int directory, const char *path, int flags, ...) {
    REAL(openat64, openat_fn);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int fd = real_openat64(directory, path, flags, mode);
    watch(fd, path, flags);
    return fd;
}

int close(int fd) {
    REAL(close, close_fn);
    if (rill_fault_path(fd)) {
        rill_journal_closing(fd);
        pthread_mutex_lock(&table_lock);
        char *path = watched_path[fd];
        __atomic_store_n(&watched_path[fd], NULL, __ATOMIC_RELEASE);
        watched_flags[fd] = 0;
        pthread_mutex_unlock(&table_lock);
        free(path);
    }
    return real_close(fd);
}

/// Runs a write of a watched descriptor: the fault hook, the real call, the journal.
static ssize_t watched_write(
    int fd, const struct iovec *iov, int iovcnt, off_t offset, ssize_t (*perform)(void *), void *context
) {
    size_t length = 0;
    for (int i = 0; i < iovcnt; i++) length += iov[i].iov_len;
    int error = rill_fault_before(RILL_FAULT_PWRITE, fd, length);
    if (error) {
        errno = error;
        return -1;
    }
    rill_journal_writing(fd, iov, iovcnt, offset);
    ssize_t written = perform(context);
    int saved = errno;
    rill_journal_wrote(fd, iov, iovcnt, offset, written);
    if (written > 0 && is_synchronous(fd)) rill_journal_synced(fd);
    rill_fault_after_write(fd, written, is_synchronous(fd));
    errno = saved;
    return written;
}

struct pwrite_call {
    int fd;
    const void *buffer;
    size_t count;
    off_t offset;
};

static ssize_t perform_pwrite(void *context) {
    REAL(pwrite, pwrite_fn);
    struct pwrite_call *call = context;
    return real_pwrite(call->fd, call->buffer, call->count, call->offset);
}

static ssize_t perform_pwrite64(void *context) {
    REAL(pwrite64, pwrite_fn);
    struct pwrite_call *call = context;
    return real_pwrite64(call->fd, call->buffer, call->count, call->offset);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    struct pwrite_call call = {fd, buffer, count, offset};
    if (!rill_fault_path(fd)) return perform_pwrite(&call);
    struct iovec iov = {(void *)buffer, count};
    return watched_write(fd, &iov, 1, offset, perform_pwrite, &call);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    struct pwrite_call call = {fd, buffer, count, offset};
    if (!rill_fault_path(fd)) return perform_pwrite64(&call);
    struct iovec iov = {(void *)buffer, count};
    return watched_write(fd, &iov, 1, offset, perform_pwrite64, &call);
}

struct vector_call {
    int fd;
    const struct iovec *iov;
    int iovcnt;
    off_t offset;
};

static ssize_t perform_pwritev(void *context) {
    REAL(pwritev, pwritev_fn);
    struct vector_call *call = context;
    return real_pwritev(call->fd, call->iov, call->iovcnt, call->offset);
}

static ssize_t perform_pwritev64(void *context) {
    REAL(pwritev64, pwritev_fn);
    struct vector_call *call = context;
    return real_pwritev64(call->fd, call->iov, call->iovcnt, call->offset);
}

static ssize_t perform_writev(void *context) {
    REAL(writev, writev_fn);
    struct vector_call *call = context;
    return real_writev(call->fd, call->iov, call->iovcnt);
}

static ssize_t perform_write(void *context) {
    REAL(write, write_fn);
    struct vector_call *call = context;
    return real_write(call->fd, call->iov[0].iov_base, call->iov[0].iov_len);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    struct vector_call call = {fd, iov, iovcnt, offset};
    if (!rill_fault_path(fd)) return perform_pwritev(&call);
    return watched_write(fd, iov, iovcnt, offset, perform_pwritev, &call);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    struct vector_call call = {fd, iov, iovcnt, offset};
    if (!rill_fault_path(fd)) return perform_pwritev64(&call);
    return watched_write(fd, iov, iovcnt, offset, perform_pwritev64, &call);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    struct vector_call call = {fd, iov, iovcnt, 0};
    if (!rill_fault_path(fd)) return perform_writev(&call);
    // At the file offset: LMDB seeks, then writes several pages at once.
    call.offset = lseek(fd, 0, SEEK_CUR);
    return watched_write(fd, iov, iovcnt, call.offset, perform_writev, &call);
}

ssize_t write(int fd, const void *buffer, size_t count) {
    struct iovec iov = {(void *)buffer, count};
    struct vector_call call = {fd, &iov, 1, 0};
    if (!rill_fault_path(fd)) return perform_write(&call);
    call.offset = lseek(fd, 0, SEEK_CUR);
    return watched_write(fd, &iov, 1, call.offset, perform_write, &call);
}

static int watched_sync(int fd, enum rill_fault_op op, int (*real)(int)) {
    if (!rill_fault_path(fd)) return real(fd);
    int error = rill_fault_before(op, fd, 0);
    if (error) {
        errno = error;
        return -1;
    }
    int rc = real(fd);
    if (rc == 0) {
        int saved = errno;
        rill_journal_synced(fd);
        errno = saved;
    }
    return rc;
}

int fsync(int fd) {
    REAL(fsync, sync_fn);
    return watched_sync(fd, RILL_FAULT_FSYNC, real_fsync);
}

int fdatasync(int fd) {
    REAL(fdatasync, sync_fn);
    return watched_sync(fd, RILL_FAULT_FDATASYNC, real_fdatasync);
}
