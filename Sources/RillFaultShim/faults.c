// The injected faults of the I/O-error suite: fail the Nth call of one operation on the watched
// files. Inactive unless configured.
#include "RillFaultShim.h"

int rill_fault_before(enum rill_fault_op op, int fd, size_t length) {
    (void)op;
    (void)fd;
    (void)length;
    return 0;
}
