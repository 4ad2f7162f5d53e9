// Symbol visibility: libcordon-core is built with hidden visibility; CORDON_API marks the
// public API (and the SDK classes plugins derive from, whose vtables must be shared).
#pragma once

#define CORDON_API __attribute__((visibility("default")))
