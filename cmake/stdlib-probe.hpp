// Preprocessed by CordonToolchain.cmake to learn which C++ standard library the compiler uses.
#include <version>
