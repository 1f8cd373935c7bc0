// glibc heap statistics (mallinfo2) for the benchmark; Glibc's module map leaves malloc.h out.
#include <malloc.h>
