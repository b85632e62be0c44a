#ifndef RILL_CNATS_SHIM_H
#define RILL_CNATS_SHIM_H

#include <nats/nats.h>

#endif
