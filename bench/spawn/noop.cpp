// The start-up floor of any C++ program here: libstdc++ loaded, its streams set up, nothing done.
#include <iostream>

int main(int argc, char**) { return argc > 1 ? (std::cout << "\n", 0) : 0; }
