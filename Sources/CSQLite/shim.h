#ifndef RILL_CSQLITE_SHIM_H
#define RILL_CSQLITE_SHIM_H

#include <sqlite3.h>

#endif
