// The journal of the power-cut suite: what a watched file holds on disk (its synced image) and
// the writes made to it since the last flush (its journal), so that a harness can build what a
// disk could hold after a power cut: the synced image plus any subset of the journal's writes,
// applied in order. Inactive unless configured:
//
//   RILL_FAULT_JOURNAL   a directory; for a watched file named NAME (its last path component),
//                        NAME.synced is its synced image and NAME.journal its journal. The
//                        harness seeds NAME.synced with the file as it is when the run starts; a
//                        missing image stands for an empty file.
//
// NAME.journal is a header of 64 bytes followed by records:
//
//   header:  "RILLJNL1", end (u64: where the committed records end), folding (u64: nonzero while a
//            fold of the records up to that offset runs), generation (u64: how many times the
//            journal was emptied), start (u64: where the records not yet folded begin; 0 for
//            right after the header), then zeros
//   record:  offset (u64: where the write lands in the file), length (u32), flags (u32), then the
//            bytes. Flags: 1 durable (a write to an O_DSYNC/O_SYNC descriptor: on disk when it
//            returns), 2 in flight (journaled before the call, cleared when it returns: a process
//            killed during the call may or may not have written it), 4 failed (the call wrote
//            nothing, or less, then journaled again as what it wrote)
//
// Every process of the store shares the two files. Each append or fold runs under an exclusive
// flock of the journal (and a mutex, for the threads of one process), and stays sound when the
// process is killed at any instruction:
// - an append writes its record past `end`, then moves `end` with one pwrite: a record cut short
//   by a kill lies past `end` and is never read; its write had not started;
// - a write is journaled before it runs (in flight), and its flags are set when it returned;
// - a fold sets `folding` to where it stops, applies the records from `start` up to there to the
//   synced image, then with one pwrite either empties the journal (`end` back to the header,
//   `folding` and `start` cleared, a generation counted) when it folded every record, or moves
//   `start` to `folding` and clears `folding`. A fold cut short leaves `folding` set, and whoever
//   takes the lock next (a process or the harness) applies the same records again first:
//   applying writes in order is idempotent, so the synced image ends as a finished fold leaves it.
//
// A flush (fsync, fdatasync) flushes the whole file, whichever descriptor or process wrote it,
// so it folds the journal. A write through an O_DSYNC descriptor makes only its own bytes
// durable (Linux flushes the written range), so its record is kept, marked durable: the harness
// always applies it, in its place among the others.
//
// A fold stops at the first write still in flight (another process's or thread's, or that of a
// process killed in the middle of it), which stays in the journal with every record after it,
// at the same place: the flush may or may not have caught that write, and its process may be
// killed before the write is made, or in the middle of it. Folding it would put into the synced
// image bytes the file may never get: the harness would then find that the synced image and
// the journal differ from the file, and build images holding a write no disk saw. Its process
// settles its flags where it lies when the call returns, and a later flush folds it. (With
// LMDB, a write in flight during another process's flush is a page of a commit not yet made,
// and nothing follows it: one process writes at a time.)
#define _GNU_SOURCE
#include "RillFaultShim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define HEADER_SIZE 64
#define RECORD_SIZE 16
#define MAX_DESCRIPTOR 4096
#define MAX_JOURNALS 16
#define RECORD_DURABLE 1u
#define RECORD_IN_FLIGHT 2u
#define RECORD_FAILED 4u

struct journal {
    char name[256];
    int journal_fd;
    int synced_fd;
    pid_t pid;
};

struct header {
    uint64_t end;
    uint64_t folding;
    uint64_t generation;
    uint64_t start;
};

static const char *directory;
static pthread_once_t configured = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct journal journals[MAX_JOURNALS];
static int journal_count;
static unsigned char synchronous[MAX_DESCRIPTOR];
// The descriptor whose durable write this thread journaled last: interpose.c reports that write
// as a flush too, which for this journal it is not (only its own range is on disk).
static __thread int durable_write = -1;
// The write this thread journaled in flight and is running: where its record is, and in which
// generation of the journal (a fold by another process empties the journal in between).
static __thread struct {
    int fd;
    uint64_t position;
    uint64_t generation;
    size_t length;
    uint32_t flags;
} pending = {-1, 0, 0, 0, 0};

static void configure(void) {
    const char *value = getenv("RILL_FAULT_JOURNAL");
    if (value && *value) directory = strdup(value);
}

static int enabled(void) {
    pthread_once(&configured, configure);
    return directory != NULL;
}

/// A journal that cannot be kept would let the harness build images no disk could hold: the
/// process stops at once, loudly, rather than run on unjournaled.
static void fail(const char *what, const char *name) {
    char message[512];
    int length = snprintf(message, sizeof message, "rill fault shim: journal of %s: %s: %s\n", name, what,
                          strerror(errno));
    if (length > 0) (void)!write(2, message, (size_t)length);
    abort();
}

static void read_fully(int fd, void *buffer, size_t length, off_t offset, const char *name) {
    char *bytes = buffer;
    while (length > 0) {
        ssize_t done = pread(fd, bytes, length, offset);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) fail("read", name);
        bytes += done;
        length -= (size_t)done;
        offset += done;
    }
}

static void write_fully(int fd, const void *buffer, size_t length, off_t offset, const char *name) {
    const char *bytes = buffer;
    while (length > 0) {
        ssize_t done = pwrite(fd, bytes, length, offset);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) fail("write", name);
        bytes += done;
        length -= (size_t)done;
        offset += done;
    }
}

static int open_part(const char *name, const char *suffix) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", directory, name, suffix);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) fail("open", path);
    return fd;
}

/// The journal of the file a watched descriptor writes; called with `lock` held. Descriptors
/// inherited over a fork share their open file with the parent, and flock does not exclude
/// between them: a child opens its own.
static struct journal *journal_of(int fd) {
    const char *path = rill_fault_path(fd);
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    pid_t pid = getpid();
    struct journal *found = NULL;
    for (int i = 0; i < journal_count && !found; i++) {
        if (strcmp(journals[i].name, name) == 0) found = &journals[i];
    }
    if (found && found->pid == pid) return found;
    if (found) {
        close(found->journal_fd);
        close(found->synced_fd);
    } else {
        if (journal_count == MAX_JOURNALS || strlen(name) >= sizeof found->name) fail("too many journals", name);
        found = &journals[journal_count++];
        strcpy(found->name, name);
    }
    found->journal_fd = open_part(name, "journal");
    found->synced_fd = open_part(name, "synced");
    found->pid = pid;
    return found;
}

static void take(struct journal *journal) {
    while (flock(journal->journal_fd, LOCK_EX) != 0) {
        if (errno != EINTR) fail("flock", journal->name);
    }
}

static void release(struct journal *journal) { flock(journal->journal_fd, LOCK_UN); }

/// Applies the records between `from` and `to` to the synced image, in order.
static void apply(struct journal *journal, uint64_t from, uint64_t to) {
    char buffer[1 << 16];
    uint64_t position = from;
    while (position < to) {
        uint64_t record[2];
        read_fully(journal->journal_fd, record, RECORD_SIZE, (off_t)position, journal->name);
        uint64_t offset = record[0];
        uint64_t length = (uint32_t)record[1];
        uint32_t flags = (uint32_t)(record[1] >> 32);
        position += RECORD_SIZE;
        for (uint64_t done = 0; done < length && !(flags & RECORD_FAILED);) {
            size_t part = length - done < sizeof buffer ? (size_t)(length - done) : sizeof buffer;
            read_fully(journal->journal_fd, buffer, part, (off_t)(position + done), journal->name);
            write_fully(journal->synced_fd, buffer, part, (off_t)(offset + done), journal->name);
            done += part;
        }
        position += length;
    }
}

/// Where the records not yet folded begin.
static uint64_t first_record(const struct header *header) { return header->start ? header->start : HEADER_SIZE; }

/// Where the first record still in flight lies between `from` and `to`; `to` when there is none.
static uint64_t first_in_flight(struct journal *journal, uint64_t from, uint64_t to) {
    uint64_t position = from;
    while (position < to) {
        uint64_t record[2];
        read_fully(journal->journal_fd, record, RECORD_SIZE, (off_t)position, journal->name);
        if ((uint32_t)(record[1] >> 32) & RECORD_IN_FLIGHT) return position;
        position += RECORD_SIZE + (uint32_t)record[1];
    }
    return to;
}

/// Empties the journal after a fold of every record: `end`, `folding`, `generation` and `start`
/// change in one write.
static void reset(struct journal *journal, struct header *header) {
    struct header empty = {HEADER_SIZE, 0, header->generation + 1, 0};
    write_fully(journal->journal_fd, &empty, sizeof empty, 8, journal->name);
    *header = empty;
    if (ftruncate(journal->journal_fd, HEADER_SIZE) != 0) fail("truncate", journal->name);
}

/// Applies the records from `start` up to `folding` (set), then empties the journal when that
/// was all of them, or else moves `start` past them (`folding`, `generation` and `start` in one
/// write: the records left keep their places, for the processes whose writes are in flight).
static void finish_fold(struct journal *journal, struct header *header) {
    apply(journal, first_record(header), header->folding);
    if (header->folding >= header->end) {
        reset(journal, header);
        return;
    }
    uint64_t moved[3] = {0, header->generation, header->folding};
    write_fully(journal->journal_fd, moved, sizeof moved, 16, journal->name);
    header->start = header->folding;
    header->folding = 0;
}

/// The header, once any fold a killed process left unfinished is finished; called under the flock.
static struct header settled_header(struct journal *journal) {
    char bytes[HEADER_SIZE];
    ssize_t got = pread(journal->journal_fd, bytes, HEADER_SIZE, 0);
    if (got < HEADER_SIZE) {
        // A new journal (or one whose creator was killed before its header was whole).
        memset(bytes, 0, sizeof bytes);
        memcpy(bytes, "RILLJNL1", 8);
        uint64_t end = HEADER_SIZE;
        memcpy(bytes + 8, &end, 8);
        write_fully(journal->journal_fd, bytes, HEADER_SIZE, 0, journal->name);
    } else if (memcmp(bytes, "RILLJNL1", 8) != 0) {
        errno = EINVAL;
        fail("not a journal", journal->name);
    }
    struct header header;
    memcpy(&header, bytes + 8, sizeof header);
    if (header.folding) finish_fold(journal, &header);
    return header;
}

void rill_journal_opened(int fd, const char *path, int flags) {
    (void)path;
    if (fd < 0 || fd >= MAX_DESCRIPTOR) return;
    __atomic_store_n(&synchronous[fd], (flags & (O_DSYNC | O_SYNC)) != 0, __ATOMIC_RELEASE);
}

void rill_journal_closing(int fd) {
    if (fd < 0 || fd >= MAX_DESCRIPTOR) return;
    __atomic_store_n(&synchronous[fd], 0, __ATOMIC_RELEASE);
}

/// Appends a record of `length` bytes of `iov` at `offset`; called with `lock` held. Returns
/// where it lies, and sets `generation` to the journal's.
static uint64_t append(struct journal *journal, const struct iovec *iov, int iovcnt, off_t offset, size_t length,
                       uint32_t flags, uint64_t *generation) {
    char *record = malloc(RECORD_SIZE + length);
    if (!record) fail("memory", journal->name);
    uint64_t position = (uint64_t)offset;
    uint32_t fields[2] = {(uint32_t)length, flags};
    memcpy(record, &position, 8);
    memcpy(record + 8, fields, 8);
    size_t copied = 0;
    for (int i = 0; i < iovcnt && copied < length; i++) {
        size_t part = iov[i].iov_len < length - copied ? iov[i].iov_len : length - copied;
        memcpy(record + RECORD_SIZE + copied, iov[i].iov_base, part);
        copied += part;
    }
    take(journal);
    struct header header = settled_header(journal);
    write_fully(journal->journal_fd, record, RECORD_SIZE + length, (off_t)header.end, journal->name);
    uint64_t end = header.end + RECORD_SIZE + length;
    write_fully(journal->journal_fd, &end, 8, 8, journal->name);
    release(journal);
    free(record);
    *generation = header.generation;
    return header.end;
}

void rill_journal_writing(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    if (!enabled() || fd < 0 || fd >= MAX_DESCRIPTOR) return;
    int saved = errno;
    size_t length = 0;
    for (int i = 0; i < iovcnt; i++) length += iov[i].iov_len;
    uint32_t flags = __atomic_load_n(&synchronous[fd], __ATOMIC_ACQUIRE) ? RECORD_DURABLE : 0;
    pthread_mutex_lock(&lock);
    struct journal *journal = journal_of(fd);
    if (journal && length > 0) {
        uint64_t generation;
        pending.position = append(journal, iov, iovcnt, offset, length, flags | RECORD_IN_FLIGHT, &generation);
        pending.generation = generation;
        pending.fd = fd;
        pending.length = length;
        pending.flags = flags;
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
}

void rill_journal_wrote(int fd, const struct iovec *iov, int iovcnt, off_t offset, ssize_t written) {
    if (!enabled() || fd < 0 || fd >= MAX_DESCRIPTOR || pending.fd != fd) return;
    int saved = errno;
    pthread_mutex_lock(&lock);
    struct journal *journal = journal_of(fd);
    uint32_t flags = pending.flags;
    int whole = written >= 0 && (size_t)written == pending.length;
    if (journal) {
        take(journal);
        struct header header = settled_header(journal);
        // A fold leaves a record in flight where it is, so it is still there; the journal is
        // emptied only once no record is in flight.
        if (header.generation == pending.generation && pending.position >= first_record(&header) &&
            pending.position < header.end) {
            uint32_t settled = whole ? flags : RECORD_FAILED;
            write_fully(journal->journal_fd, &settled, 4, (off_t)(pending.position + 12), journal->name);
        }
        release(journal);
        if (!whole && written > 0) {
            uint64_t generation;
            append(journal, iov, iovcnt, offset, (size_t)written, flags, &generation);
        }
    }
    pending.fd = -1;
    pthread_mutex_unlock(&lock);
    if ((flags & RECORD_DURABLE) && written > 0) durable_write = fd;
    errno = saved;
}

void rill_journal_synced(int fd) {
    if (!enabled() || fd < 0 || fd >= MAX_DESCRIPTOR) return;
    // A write through an O_DSYNC descriptor: its record is already marked durable.
    if (durable_write == fd) {
        durable_write = -1;
        return;
    }
    int saved = errno;
    pthread_mutex_lock(&lock);
    struct journal *journal = journal_of(fd);
    if (journal) {
        take(journal);
        struct header header = settled_header(journal);
        // Up to the first write in flight: the flush may not have caught it, and its process
        // may yet be killed before it is made.
        uint64_t to = first_in_flight(journal, first_record(&header), header.end);
        if (to > first_record(&header)) {
            write_fully(journal->journal_fd, &to, 8, 16, journal->name);
            header.folding = to;
            finish_fold(journal, &header);
        }
        release(journal);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
}
