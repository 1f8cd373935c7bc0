// glibc malloc.h (mallinfo2, malloc_trim): Glibc's module map leaves it out.
#include <malloc.h>
