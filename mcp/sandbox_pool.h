// The sandboxes of one `gander mcp` session: created on demand, forked, exported from, renewed,
// expired by their TTL and all killed when the session ends. Each lives in a directory of the
// session's state directory (its workspace), removed with it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "mcp/held_sandbox.h"

namespace gander::mcp {

struct PoolOptions {
  std::string server_name = "gander-mcp";  // extension = server_name + "." + sandbox name
  std::string gander;                      // this binary
  std::string profile = "default";         // network off: a profile without network
  std::string network_policy;              // network "policy": a policy file or profile
  std::string install_policy;  // the text of sandbox_create's install-step policy (registries)
  std::vector<std::string> run_flags;  // --no-namespaces, --backend, --collector, ...
  std::string backend = "native";
  std::string export_dir;                         // empty: sandbox_export refuses
  uint64_t export_max_file_bytes = 256ull << 20;  // a larger file is not exported
  std::vector<std::string> files_roots;           // host paths sandbox_create may copy from
  std::chrono::seconds default_ttl{3600};
  size_t max_sandboxes = 16;
  std::string state_dir;  // this session's directory (created by the server, removed after)
  std::string log_level = "warn";
  bool warm_spares = true;  // start the next create's (and fork's) sandbox ahead
};

// A TTL: "90", "90s", "30m", "1h", "2d" or a number of seconds; 1 s .. 7 days.
Result<std::chrono::seconds> ParseTtl(const nlohmann::json& value);

// A key store (~/.ssh, ~/.aws, ~/.netrc, Goose's config, ...) or gander's own state, by its
// path: never copied into a sandbox, whether named or found inside a directory copied in.
bool IsSecretName(const std::string& path);

// Sandbox names: 1-48 of [A-Za-z0-9_.-], not starting with '.' or '-'.
Status CheckSandboxName(const std::string& name);

// Thread-safe: the server runs each tools/call on a thread of its own (calls to one sandbox in
// order, server.cc); one lock guards the tables, and is let go while a sandbox starts, a tree
// is copied, an install step or a call runs.
class SandboxPool {
 public:
  explicit SandboxPool(PoolOptions options) : o_(std::move(options)) {}
  ~SandboxPool() { KillAll(); }

  // The tools; each returns the structured answer or an error for the model.
  Result<nlohmann::json> Create(const nlohmann::json& args);
  Result<nlohmann::json> Fork(const nlohmann::json& args);
  Result<nlohmann::json> Export(const nlohmann::json& args);
  Result<nlohmann::json> Kill(const nlohmann::json& args);
  Result<nlohmann::json> Renew(const nlohmann::json& args);
  nlohmann::json List() const;
  // command_run, python_run, file_*: forwarded to the sandbox's executor.
  Result<nlohmann::json> Execute(const std::string& tool, const nlohmann::json& args,
                                 const std::atomic<bool>* cancelled = nullptr);

  // notifications/cancelled: stops the call running in `sandbox`, if any (held_sandbox.h).
  void Cancel(const std::string& sandbox);
  // Ends the sandboxes whose TTL has passed; returns how long until the next one does.
  std::optional<std::chrono::milliseconds> Expire();
  // Every sandbox ended (a running call answers an error) and no new one made after.
  void KillAll();
  // Starts the warm spares the next unnamed create and fork will take (after an answer is
  // written, so that it is not on the caller's time); ends spares no longer wanted.
  void Refill();

 private:
  struct Sandbox {
    std::string name;
    std::string dir;        // state_dir/NAME
    std::string workspace;  // dir/ws
    std::string network = "off";
    std::string forked_from;
    std::chrono::seconds ttl{0};
    std::chrono::steady_clock::time_point expires;
    std::chrono::system_clock::time_point expires_wall;
    std::shared_ptr<HeldSandbox> held;  // shared with a call running on another thread
  };
  using Lock = std::unique_lock<std::mutex>;
  // The sandbox a call names, or the session's default one (created at the first call that
  // needs it).
  Result<Sandbox*> Resolve(Lock& lock, const nlohmann::json& args);
  // Unlocks `lock` while the sandbox starts and files are copied in.
  Result<Sandbox*> Launch(Lock& lock, const std::string& name, const std::string& network,
                          std::chrono::seconds ttl, const std::string& copy_from,
                          const std::vector<std::string>& files, nlohmann::json& report,
                          bool dir_made = false);
  // Copies a fork's workspace and the files in, and waits for the start; unlocked.
  Status Populate(Sandbox& s, const std::string& copy_from, const std::vector<std::string>& files,
                  nlohmann::json& report, std::chrono::steady_clock::time_point started);
  // sandbox_create's `install`: the commands run in a sandbox of the same workspace whose only
  // destinations are the package registries; it is ended before the sandbox proper starts.
  Status RunInstallStep(const std::string& name, const std::vector<std::string>& files,
                        const std::vector<std::string>& commands, nlohmann::json& report);
  void Remove(const std::string& name);
  Result<nlohmann::json> ExportFrom(Sandbox& s, const nlohmann::json& args);
  void Record(Sandbox& s, const std::string& tool, nlohmann::json summary, bool failed = false);
  bool Taken(const std::string& name) const {
    return sandboxes_.count(name) || making_.count(name);
  }
  std::string NextCreateName() const;
  std::string NextForkName() const;
  LaunchOptions LaunchFor(const std::string& name, const std::string& network,
                          const std::string& workspace) const;
  nlohmann::json Describe(const Sandbox& s) const;
  std::string Isolation(const nlohmann::json& hello) const;

  PoolOptions o_;
  mutable std::mutex mu_;
  bool closed_ = false;                                   // KillAll: the session is ending
  std::set<std::string> making_;                          // names being started
  std::set<std::shared_ptr<HeldSandbox>> install_steps_;  // running, ended by KillAll
  std::map<std::string, Sandbox> sandboxes_;
  std::map<std::string, std::string> ended_;  // name -> why (TTL, killed, died)
  struct Spare {
    std::string dir;
    std::shared_ptr<HeldSandbox> held;
  };
  std::map<std::string, Spare> spares_;  // by the name it was started under
  uint64_t forks_ = 0, tasks_ = 0;
};

}  // namespace gander::mcp
