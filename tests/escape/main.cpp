// The Catch2 runner of the escape suite. Before the tests it says who runs them and against what,
// so that a log of `escape-as-root` and `escape-as-user` can be told apart; and where this host
// cannot create user namespaces, it leaves out the tests tagged [userns] (with a message), unless
// CI=true, where they run and fail (not on docker, whose daemon makes the namespaces).
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "backend_setup.hpp"
#include "catch_session.hpp"
#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"
#include "scratch.hpp"

int main(int argc, char** argv) {
  std::cerr << "escape suite: uid " << getuid() << ", cordon '" << escape::cordon_cli()
            << "', backend '" << escape::backend_name() << "', probes '" << escape::probe_dir()
            << "', sandbox uid when root " << escape::sandbox_uid();
  if (escape::on_docker()) std::cerr << ", image '" << escape::docker_image() << "'";
  std::cerr << "\n";
  std::vector<std::string> also;
  // Docker's containers are made by the daemon: the caller needs no user namespace of its own.
  if (!escape::on_docker() && !escape::userns_available()) {
    if (escape::in_ci()) {
      std::cerr << "escape suite: this host cannot create user namespaces; the [userns] tests "
                   "will fail (CI=true)\n";
    } else {
      std::cerr << "escape suite: skipping the [userns] tests: this host cannot create user "
                   "namespaces (see user.max_user_namespaces and "
                   "kernel.apparmor_restrict_unprivileged_userns)\n";
      also.push_back("~[userns]");
    }
  }
  return cordon::test::run_catch(argc, argv, also);
}
