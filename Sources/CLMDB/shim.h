#ifndef RILL_CLMDB_SHIM_H
#define RILL_CLMDB_SHIM_H

#include <lmdb.h>

#endif
