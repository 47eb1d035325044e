#ifndef WALSTORE_CZLIB_SHIM_H
#define WALSTORE_CZLIB_SHIM_H
#include <zlib.h>
#endif
