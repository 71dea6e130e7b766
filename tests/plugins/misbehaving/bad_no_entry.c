/* A shared library without plinth_plugin_entry: the host refuses it. */
#include "plinth/abi.h"

PLINTH_EXPORT int plinth_not_the_entry(void) {
  return 42;
}
