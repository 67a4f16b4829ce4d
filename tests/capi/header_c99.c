/* nubo.h compiles as strict C99 (see CMakeLists.txt); nothing here runs. */
#include "nubo.h"

int nubo_header_c99_check(void);
int nubo_header_c99_check(void) {
  return (int)sizeof(nubo_device_info) + NUBO_ABI_VERSION;
}
