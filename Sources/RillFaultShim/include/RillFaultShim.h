// The fault shim: a shared library loaded with LD_PRELOAD into a process under test. It sees
// every write and flush the process makes to the files it is told to watch, and can journal them
// (the power-cut suite), fail one of them (the I/O-error suite), or hold the process still after
// a synchronous write (the moment between LMDB's meta-page write and its publishing the commit).
//
// Configuration comes from the environment, read once at load:
//   RILL_FAULT_FILES   a colon-separated list of path suffixes to watch (e.g. "/store/data.mdb");
//                      no other file is touched.
// Each part of the shim reads further variables of its own (see journal.c and faults.c).
#ifndef RILL_FAULT_SHIM_H
#define RILL_FAULT_SHIM_H

#include <sys/types.h>
#include <sys/uio.h>

/// The operations a watched file sees.
enum rill_fault_op {
    RILL_FAULT_PWRITE = 0,  // pwrite, pwrite64, pwritev, and write/writev (at the file offset)
    RILL_FAULT_FSYNC = 1,
    RILL_FAULT_FDATASYNC = 2,
};

/// Called before each write or flush of a watched descriptor. Returns 0 to let it run, or an
/// errno value to fail it (-1 with that errno) without running it.
int rill_fault_before(enum rill_fault_op op, int fd, size_t length);

/// Called after each write of a watched descriptor, which returned `written`; `synchronous` when
/// the descriptor is O_DSYNC/O_SYNC (what it wrote is on disk once the call returns).
void rill_fault_after_write(int fd, ssize_t written, int synchronous);

/// A watched file was opened as `fd` (`flags` as given to open, so O_DSYNC/O_SYNC are visible).
void rill_journal_opened(int fd, const char *path, int flags);
/// A watched descriptor is being closed.
void rill_journal_closing(int fd);
/// A write of a watched descriptor is about to run: `iov` is to land at `offset`. A process
/// killed during the call may or may not have written it.
void rill_journal_writing(int fd, const struct iovec *iov, int iovcnt, off_t offset);
/// The write announced by `rill_journal_writing` returned `written` (bytes of `iov` that landed
/// at `offset`, or -1). Runs before the call returns to the process.
void rill_journal_wrote(int fd, const struct iovec *iov, int iovcnt, off_t offset, ssize_t written);
/// A flush of a watched descriptor succeeded (fsync, fdatasync, or a write to an O_DSYNC/O_SYNC
/// descriptor, after `rill_journal_wrote`): what was written to its file is on disk.
void rill_journal_synced(int fd);

/// The path a watched descriptor was opened with, or NULL when it is not watched.
const char *rill_fault_path(int fd);

#endif
