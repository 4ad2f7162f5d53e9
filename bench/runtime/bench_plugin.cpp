// The plugin the runtime benchmark copies 20 times (under 20 names): a probe that answers at
// once, so the benchmark measures the loader, not a backend.
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/plugin.hpp>

namespace bench {

class QuickBackend final : public cordon::Backend {
 public:
  explicit QuickBackend(const cordon::BackendContext& ctx) : Backend(ctx) {}

 protected:
  cordon::ProbeResult do_probe() noexcept override {
    cordon::ProbeResult r;
    r.available = true;
    for (auto id : cordon::cap::all()) r.proofs.push_back({std::string(id), true, "bench"});
    return r;
  }
  cordon::RunResult do_run(const cordon::Plan&, cordon::OutputSink&) noexcept override {
    cordon::RunResult r;
    r.exit_code = 0;
    return r;
  }
};

}  // namespace bench

// The benchmark rewrites "cbench00" (here and in the file name) to cbench01..cbench19.
CORDON_BACKEND_PLUGIN(bench::QuickBackend, "cbench00", "1.0", local)
