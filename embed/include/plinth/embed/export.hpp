#pragma once
// PLINTH_EMBED_API marks the classes libplinth.so exports (the library is built with hidden
// visibility: nothing else of the host leaves it).

#if defined(PLINTH_EMBED_BUILDING)
#define PLINTH_EMBED_API __attribute__((visibility("default")))
#else
#define PLINTH_EMBED_API
#endif
