// The module's only function is inline in its header (`CPrefetch.h`); a C target needs a source file.
#include "CPrefetch.h"
