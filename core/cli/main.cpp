// The `cordon` command: global options and verb registration. Each verb lives in its own file.
#include <CLI/CLI.hpp>
#include <cordon/version.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"cordon: run untrusted commands under a declared security policy"};
  app.require_subcommand(1);
  auto* version = app.add_subcommand("version", "print cordon's version");
  version->callback([] { std::cout << "cordon " << CORDON_VERSION << "\n"; });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
