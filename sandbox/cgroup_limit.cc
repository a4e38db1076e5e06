#include "sandbox/cgroup_limit.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/clock.h"
#include "common/enum_names.h"
#include "common/path.h"
#include "common/unique_fd.h"

namespace gander::sandbox {
namespace {

constexpr const char* kRunPrefix = "gander-run-";

std::string ReadText(const std::string& path) { return ReadFile(path).value_or(""); }

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    if (w == word) return true;
  }
  return false;
}

Status WriteText(const std::string& path, const std::string& text) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open " + path);
  if (write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return ErrnoError("write " + text + " to " + path);
  }
  return {};
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::vector<pid_t> ListedPids(const std::string& procs) {
  std::vector<pid_t> out;
  std::istringstream in(ReadText(procs));
  for (long pid; in >> pid;) {
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
  }
  return out;
}

const CgroupMount* Find(const std::vector<CgroupMount>& mounts, const std::string& type,
                        const std::string& controller) {
  for (const auto& m : mounts) {
    if (m.type != type || m.own_dir.empty()) continue;
    if (type == "cgroup2" ||
        ("," + m.options + ",").find("," + controller + ",") != std::string::npos) {
      return &m;
    }
  }
  return nullptr;
}

// Whether `pid` is in this process's pid namespace (one it cannot look at is not).
bool InOurPidNamespace(pid_t pid) {
  struct stat ours {
  }, theirs{};
  return stat("/proc/self/ns/pid", &ours) == 0 &&
         stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &theirs) == 0 &&
         ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

// Whether /proc/PID/cgroup names a cgroup called `name` (the directory's last component, a
// name no other directory has: gander-run-PID-N, gander-PID-NAME) in some hierarchy.
bool InCgroupNamed(pid_t pid, const std::string& name) {
  const std::string text = ReadText("/proc/" + std::to_string(pid) + "/cgroup");
  const std::string tail = "/" + name;
  for (size_t at = text.find(tail); at != std::string::npos; at = text.find(tail, at + 1)) {
    size_t end = at + tail.size();
    if (end == text.size() || text[end] == '\n') return true;
  }
  return false;
}

// One kill round over the processes listed in `dir` (none listed: nothing to do, no freeze):
// frozen where `freezer_state` is given and listed again (none forks while it is read), each
// listed pid opened as a pidfd and SIGKILLed
// only if /proc/PID/cgroup still names `dir` (a pid reused between the listing and
// pidfd_open is another process) and, with `only_ours`, it is in gander's pid namespace;
// thawed (a frozen process dies only once thawed), then waited for, 5 s at most in all.
// Returns how many it signalled.
int KillListed(const std::string& dir, const std::string& freezer_state, bool only_ours = false) {
  const std::string procs = dir + "/cgroup.procs";
  std::vector<pid_t> pids = ListedPids(procs);
  if (pids.empty()) return 0;  // the usual last round of a run's end: no freeze for nothing
  const bool freeze = !freezer_state.empty();
  if (freeze) {
    (void)WriteText(freezer_state, "FROZEN");
    pids = ListedPids(procs);  // read again, frozen: what forked meanwhile is listed now
  }
  const std::string name = dir.substr(dir.rfind('/') + 1);
  std::vector<UniqueFd> fds;
  for (pid_t pid : pids) {
    UniqueFd fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!fd || !InCgroupNamed(pid, name) || (only_ours && !InOurPidNamespace(pid))) continue;
    if (syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0) == 0) {
      fds.push_back(std::move(fd));
    }
  }
  if (freeze) (void)WriteText(freezer_state, "THAWED");
  const int64_t deadline = MonotonicNs() + 5'000'000'000;
  for (const UniqueFd& fd : fds) {
    pollfd p{fd.get(), POLLIN, 0};
    int64_t left_ms = (deadline - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0) break;
    while (poll(&p, 1, static_cast<int>(left_ms)) < 0 && errno == EINTR) {
    }
  }
  return static_cast<int>(fds.size());
}

// Whether `pid` is on its way out: in do_exit (PF_EXITING in /proc/PID/stat's flags) or with
// a SIGKILL pending (as a pid namespace's processes are once its init died).
bool Exiting(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string stat = ReadText(proc + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  for (int i = 0; i < 7 && fields >> field; ++i) {  // state ppid pgrp session tty tpgid flags
  }
  constexpr unsigned long kPfExiting = 0x4;
  if (std::strtoul(field.c_str(), nullptr, 10) & kPfExiting) return true;
  std::istringstream status(ReadText(proc + "/status"));
  constexpr unsigned long kSigkillBit = 1ul << (SIGKILL - 1);
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigPnd:") || line.starts_with("ShdPnd:")) {
      if (std::strtoul(line.c_str() + 7, nullptr, 16) & kSigkillBit) return true;
    }
  }
  return false;
}

// cgroup v2: populated 0 in cgroup.events, waited for with poll (the file signals a change
// with POLLPRI).
void WaitUnpopulated(const std::string& dir) {
  UniqueFd fd(open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return;
  for (int round = 0; round < 50; ++round) {
    char buf[256];
    ssize_t n = pread(fd.get(), buf, sizeof(buf) - 1, 0);
    if (n <= 0) return;
    buf[n] = '\0';
    if (strstr(buf, "populated 0")) return;
    pollfd p{fd.get(), POLLPRI, 0};
    poll(&p, 1, 100);
  }
}

// Waits, until `deadline` (MonotonicNs) at the latest, for the processes listed in `dir` that
// are on their way out.
void WaitExiting(const std::string& dir, int64_t deadline) {
  for (pid_t pid : ListedPids(dir + "/cgroup.procs")) {
    UniqueFd fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!fd || !Exiting(pid)) continue;
    pollfd p{fd.get(), POLLIN, 0};
    int64_t left_ms = (deadline - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0 || poll(&p, 1, static_cast<int>(left_ms)) == 0) return;
  }
}

// Removes `dir`; one still holding processes is emptied first and removed again: cgroup.kill
// where there is one, else kill rounds (frozen where the directory is a freezer's; a process
// forked meanwhile is listed by the next round).
// `stale`: a gone gander's. Only processes of our own pid namespace are killed there: its name
// carries a pid of ours, and a gander of another pid namespace could have made the same name.
// The others are most often the dead run's own pid namespace on its way out (its init was
// killed): those are waited for, until `wait_until` at the latest; what else is there keeps
// the directory. A freezer a killed gander left FROZEN (between its freeze and its thaw) is
// thawed first: nothing in it could die otherwise.
void KillAndRemove(const std::string& dir, bool stale, int64_t wait_until = 0) {
  if (rmdir(dir.c_str()) == 0 || errno != EBUSY) return;
  const std::string procs = dir + "/cgroup.procs";
  const std::string freezer = Exists(dir + "/freezer.state") ? dir + "/freezer.state" : "";
  if (stale && !freezer.empty()) (void)WriteText(freezer, "THAWED");
  const std::vector<pid_t> listed = ListedPids(procs);
  const bool all_ours = !stale || std::all_of(listed.begin(), listed.end(), InOurPidNamespace);
  if (all_ours && WriteText(dir + "/cgroup.kill", "1")) WaitUnpopulated(dir);
  for (int round = 0; round < 100 && KillListed(dir, freezer, stale) > 0; ++round) {
  }
  if (stale) WaitExiting(dir, wait_until);
  rmdir(dir.c_str());
}

}  // namespace

constexpr EnumName<CgroupKind> kCgroupKindNames[] = {
    {CgroupKind::kNone, "none"},
    {CgroupKind::kV2, "cgroup v2"},
    {CgroupKind::kV1, "cgroup v1"},
    {CgroupKind::kV2Delegated, "cgroup v2 (systemd delegation)"}};

const char* CgroupKindName(CgroupKind kind) { return NameOf(kCgroupKindNames, kind); }

CgroupPlace FindCgroupPlace(const std::vector<CgroupMount>& mounts, uid_t euid,
                            const CgroupProbe& probe) {
  CgroupPlace place;
  const CgroupMount* v2 = Find(mounts, "cgroup2", "");
  if (euid == 0 && v2) {
    std::string controllers = probe.controllers(v2->mountpoint);
    if (HasWord(controllers, "memory") && probe.writable(v2->mountpoint)) {
      place.kind = CgroupKind::kV2;
      place.parents = {v2->mountpoint + "/gander"};
      place.memory = true;
      place.pids = HasWord(controllers, "pids");
      return place;
    }
  }
  if (euid == 0) {
    const CgroupMount* memory = Find(mounts, "cgroup", "memory");
    if (memory && probe.writable(memory->own_dir)) {
      place.kind = CgroupKind::kV1;
      place.parents = {memory->own_dir};
      place.memory = true;
      const CgroupMount* pids = Find(mounts, "cgroup", "pids");
      if (pids && probe.writable(pids->own_dir)) {
        place.parents.push_back(pids->own_dir);
        place.pids = true;
      }
      const CgroupMount* freezer = Find(mounts, "cgroup", "freezer");
      if (freezer && probe.writable(freezer->own_dir)) {
        place.parents.push_back(freezer->own_dir);
        place.freezer = true;
      }
      return place;
    }
    place.why_not = v2 ? "neither cgroup v2 with the memory controller nor the v1 memory "
                         "controller can be written here"
                       : "no cgroup memory controller is mounted";
    return place;
  }
  // A user: the subtree systemd's user manager delegates, when gander runs inside it.
  const std::string unit = "/user@" + std::to_string(euid) + ".service";
  size_t at = v2 ? v2->own_dir.find(unit + "/") : std::string::npos;
  if (v2 && at == std::string::npos && v2->own_dir.ends_with(unit))
    at = v2->own_dir.size() - unit.size();
  if (at == std::string::npos) {
    place.why_not = v2 ? "gander does not run in a cgroup systemd delegates to this user "
                         "(no user@" +
                             std::to_string(euid) + ".service above it)"
                       : "no cgroup v2 hierarchy, and only root may use the v1 controllers";
    return place;
  }
  std::string delegated = v2->own_dir.substr(0, at + unit.size());
  std::string controllers = probe.controllers(delegated);
  if (!probe.writable(delegated) || !HasWord(controllers, "memory")) {
    place.why_not = delegated + " is not writable or lacks the memory controller";
    return place;
  }
  place.kind = CgroupKind::kV2Delegated;
  place.parents = {delegated + "/gander"};
  place.memory = true;
  place.pids = HasWord(controllers, "pids");
  return place;
}

CgroupPlace HostCgroupPlace(const std::vector<CgroupMount>& mounts) {
  CgroupProbe probe{[](const std::string& dir) { return access(dir.c_str(), W_OK) == 0; },
                    [](const std::string& dir) { return ReadText(dir + "/cgroup.controllers"); }};
  return FindCgroupPlace(mounts, geteuid(), probe);
}

CgroupPlace HostCgroupPlace() { return HostCgroupPlace(HostCgroupMounts()); }

CgroupLimits CgroupLimitsOf(std::optional<uint64_t> memory, std::optional<uint64_t> processes) {
  return {memory.value_or(0), processes.value_or(0)};
}

CgroupShortfall DescribeShortfall(const CgroupPlace& place, const CgroupLimits& wanted,
                                  bool pid_namespace) {
  CgroupShortfall out;
  std::string why = place.why_not.empty() ? "" : " (" + place.why_not + ")";
  if (wanted.memory && !place.memory) {
    out.limits = "limits.memory is not enforced: no cgroup can be had" + why +
                 "; only RLIMIT_DATA per process, which MAP_SHARED, memfds and tmpfs files go "
                 "around";
  }
  if (wanted.pids && !place.pids && !pid_namespace) {
    out.processes =
        "limits.processes is only RLIMIT_NPROC (per user, and not for root): no pids "
        "cgroup can be had" +
        why;
  }
  if (!pid_namespace && place.kind == CgroupKind::kNone) {
    out.tree =
        "no pid namespace and no cgroup: the sandbox's processes are tracked only by its "
        "init as subreaper; one that outlives the init (Landlock below ABI 6 lets the "
        "extension signal it) outlives the run";
  }
  return out;
}

pid_t StaleCgroupOwner(const std::string& name) {
  std::string rest;
  if (name.starts_with(kRunPrefix)) {
    rest = name.substr(strlen(kRunPrefix));
  } else if (name.starts_with("gander-")) {
    rest = name.substr(strlen("gander-"));  // runsc's container id: gander-PID-NAME
  } else {
    return 0;
  }
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9 || digits >= rest.size() || rest[digits] != '-') return 0;
  return static_cast<pid_t>(std::stol(rest.substr(0, digits)));
}

void SweepStaleCgroups(const std::vector<std::string>& parents) {
  struct Stale {
    std::string path;
    pid_t owner;
  };
  std::vector<Stale> stale;
  for (const std::string& parent : parents) {
    DIR* dir = opendir(parent.c_str());
    if (!dir) continue;
    while (dirent* e = readdir(dir)) {
      pid_t owner = StaleCgroupOwner(e->d_name);
      if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) {
        stale.push_back({parent + "/" + e->d_name, owner});
      }
    }
    closedir(dir);
  }
  // Freezers first: one left FROZEN is thawed before the same run's memory and pids
  // directories wait for processes that could not die while frozen.
  std::stable_partition(stale.begin(), stale.end(),
                        [](const Stale& s) { return Exists(s.path + "/freezer.state"); });
  // Not empty: the dead gander's init between its last kill and its own exit, or what
  // outlived it (`pkill -9 gander` kills the init too). One second for the whole sweep.
  const int64_t wait_until = MonotonicNs() + 1'000'000'000;
  for (const Stale& s : stale) {
    // Looked at again: a gander that got the owner's pid since could have made the same name.
    if (kill(s.owner, 0) == 0 || errno != ESRCH) continue;
    KillAndRemove(s.path, true, wait_until);
  }
}

std::vector<std::string> RunscCgroupParents(const std::vector<CgroupMount>& mounts) {
  std::vector<std::string> out;
  auto add = [&](const std::string& dir) {
    if (!dir.empty() && std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  };
  for (const CgroupMount& m : mounts) {
    add(m.mountpoint);
    if (!m.own_dir.empty() && m.own_dir != m.mountpoint) add(m.own_dir);
  }
  return out;
}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    Remove();
    dirs_ = std::move(other.dirs_);
    v2_ = other.v2_;
    freezer_ = other.freezer_;
    other.dirs_.clear();
  }
  return *this;
}

std::string RunCgroup::NextName() {
  static std::atomic<int> sequence{0};
  return kRunPrefix + std::to_string(getpid()) + "-" + std::to_string(sequence++);
}

void PointAtRunCgroup(std::vector<CgroupMount>& mounts, const CgroupPlace& place,
                      const std::string& name) {
  for (CgroupMount& m : mounts) {
    if (place.kind == CgroupKind::kV1) {
      for (const std::string& parent : place.parents) {
        if (m.type == "cgroup" && m.own_dir == parent) m.own_dir = parent + "/" + name;
      }
    } else if (place.kind != CgroupKind::kNone && m.type == "cgroup2") {
      m.own_dir = place.parents.front() + "/" + name;
    }
  }
}

Result<RunCgroup> RunCgroup::Create(const CgroupPlace& place, const CgroupLimits& limits,
                                    const std::string& name) {
  if (place.kind == CgroupKind::kNone) return MakeError("no cgroup: " + place.why_not);
  RunCgroup run;
  run.v2_ = place.kind != CgroupKind::kV1;
  run.freezer_ = place.freezer;
  if (run.v2_) {
    // The controllers must be enabled on the way down: in the hierarchy (or delegated) root,
    // then in gander/. Enabling one already enabled is a no-op.
    std::string parent = place.parents.front();
    std::string top = parent.substr(0, parent.rfind('/'));
    std::string wanted = std::string("+memory") + (place.pids ? " +pids" : "");
    (void)WriteText(top + "/cgroup.subtree_control", wanted);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoError("mkdir " + parent);
    if (auto s = WriteText(parent + "/cgroup.subtree_control", wanted); !s) return s.error();
  }
  SweepStaleCgroups(place.parents);
  for (const std::string& parent : place.parents) {
    std::string dir = parent + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0) return ErrnoError("mkdir " + dir);
    run.dirs_.push_back(dir);
  }
  auto set = [&](size_t index, const char* file, uint64_t value) -> Status {
    return WriteText(run.dirs_.at(index) + "/" + file, std::to_string(value));
  };
  const std::string& first = run.dirs_.front();
  if (limits.memory) {
    if (run.v2_) {
      if (auto s = set(0, "memory.max", limits.memory); !s) return s.error();
      if (Exists(first + "/memory.swap.max")) {
        if (auto s = set(0, "memory.swap.max", 0); !s) return s.error();
      }
    } else {
      if (auto s = set(0, "memory.limit_in_bytes", limits.memory); !s) return s.error();
      if (Exists(first + "/memory.memsw.limit_in_bytes")) {
        if (auto s = set(0, "memory.memsw.limit_in_bytes", limits.memory); !s) return s.error();
      }
    }
  }
  if (limits.pids && place.pids) {
    if (auto s = set(run.v2_ ? 0 : 1, "pids.max", limits.pids); !s) return s.error();
  }
  return run;
}

Status RunCgroup::Enter(pid_t pid) const {
  for (const std::string& dir : dirs_) {
    if (auto s = WriteText(dir + "/cgroup.procs", std::to_string(pid)); !s) return s;
  }
  return {};
}

int RunCgroup::KillAll() {
  if (dirs_.empty()) return 0;
  const std::string& dir = dirs_.front();
  int killed = 0;
  if (v2_ && WriteText(dir + "/cgroup.kill", "1")) {
    killed = static_cast<int>(ListedPids(dir + "/cgroup.procs").size());
    WaitUnpopulated(dir);
  }
  // v1, or a kernel before cgroup.kill (5.14): frozen, killed, thawed, until empty. A process
  // the extension forked is in the cgroup before fork returns, so each round lists it.
  std::string freezer = freezer_ ? dirs_.back() + "/freezer.state" : "";
  for (int round = 0; round < 100; ++round) {
    int n = KillListed(dir, freezer);
    if (n == 0) break;
    killed += n;
  }
  return killed;
}

void RunCgroup::Remove() {
  if (dirs_.empty()) return;
  KillAll();
  for (const std::string& dir : dirs_) KillAndRemove(dir, false);
  dirs_.clear();
}

}  // namespace gander::sandbox
