#include <idn2.h>
