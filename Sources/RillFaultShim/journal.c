// The journal of the power-cut suite: what a watched file holds on disk (synced) and what the
// process wrote since (unsynced), so that a harness can build what a disk could hold after a
// power cut. Inactive unless configured.
#include "RillFaultShim.h"

void rill_journal_opened(int fd, const char *path, int flags) {
    (void)fd;
    (void)path;
    (void)flags;
}

void rill_journal_closing(int fd) { (void)fd; }

void rill_journal_wrote(int fd, const struct iovec *iov, int iovcnt, off_t offset, ssize_t written) {
    (void)fd;
    (void)iov;
    (void)iovcnt;
    (void)offset;
    (void)written;
}

void rill_journal_synced(int fd) { (void)fd; }
