// Fleets: `hosts = [...]` spreads runs over several hosts. A host that fails its probe or its
// connection is passed over with a note; a run is refused only when no host proves its policy.
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <map>

#include "ssh_backend.hpp"

namespace cordon::ssh {

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

// The first requirement of `plan` that `proof` does not prove, or "".
std::string unproven(const Plan& plan, const ProbeResult& proof) {
  for (const auto& req : plan.requirements)
    if (!proof.proves(req.id)) return req.id;
  return "";
}

}  // namespace

ProbeResult SshBackend::fleet_probe(const std::vector<Target>& targets) {
  ProbeResult r;
  std::map<std::string, std::vector<std::string>> proven_by;
  for (const auto& t : targets) {
    try {
      const ProbeResult& p = proof_for(t).result;
      if (!p.available) {
        r.facts.push_back(t.name() + ": skipped: " + p.reason);
        continue;
      }
      r.available = true;
      std::vector<std::string> held;
      for (const auto& proof : p.proofs)
        if (proof.proven) {
          proven_by[proof.capability].push_back(t.name() + ": " + proof.evidence);
          held.push_back(proof.capability);
        }
      r.facts.push_back(t.name() + ": proves " + (held.empty() ? "nothing" : joined(held, ", ")));
    } catch (const Error& e) {
      r.facts.push_back(t.name() + ": skipped: " + e.what());
    }
  }
  for (auto id : cap::all()) {
    auto it = proven_by.find(std::string(id));
    if (it == proven_by.end())
      r.proofs.push_back({std::string(id), false, "no host of the fleet proves it"});
    else
      r.proofs.push_back({std::string(id), true, joined(it->second, "; ")});
  }
  if (!r.available) r.reason = "no host of the fleet can be used: " + joined(r.facts, "; ");
  return r;
}

RunResult SshBackend::fleet_run(const Plan& plan, const std::vector<Target>& targets,
                                OutputSink& sink) {
  std::vector<std::string> passed;
  std::vector<std::pair<const Target*, HostProof>> able;
  for (const auto& t : targets) {
    try {
      HostProof p = proof_for(t);
      std::string missing = p.result.available ? unproven(plan, p.result) : "";
      if (!p.result.available)
        passed.push_back(t.name() + ": " + p.result.reason);
      else if (!missing.empty())
        passed.push_back(t.name() + ": does not prove " + missing);
      else
        able.emplace_back(&t, std::move(p));
    } catch (const Error& e) {
      passed.push_back(t.name() + ": " + e.what());
    }
  }
  {
    std::lock_guard lock(mutex_);  // least busy first; the settings' order breaks ties
    std::stable_sort(able.begin(), able.end(), [this](const auto& a, const auto& b) {
      return busy_[a.first->key()] < busy_[b.first->key()];
    });
  }
  for (auto& [t, proof] : able) {
    try {  // a connection that fails here has run nothing: the next host may
      pool_.give(pool_.take(*t));
    } catch (const Error& e) {
      passed.push_back(t->name() + ": " + e.what());
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      ++busy_[t->key()];
    }
    struct Done {
      SshBackend& b;
      std::string key;
      ~Done() {
        std::lock_guard lock(b.mutex_);
        --b.busy_[key];
      }
    } done{*this, t->key()};
    RunResult r = run_on(plan, *t, proof, sink);
    for (const auto& p : passed) r.notes.push_back("fleet: passed over " + p);
    return r;
  }
  RunResult refused;
  refused.error =
      Error(code::kUnproven, "no host of the fleet can run this policy: " + joined(passed, "; "),
            "cordon backends --config … shows what each host proves");
  return refused;
}

}  // namespace cordon::ssh
