// cordon's full executable: every verb, every plugin (see front/ for the `cordon` in bin/).
#include "../cli/verbs.hpp"

int main(int argc, char** argv) { return cordon::cli::main_cli(argc, argv); }
