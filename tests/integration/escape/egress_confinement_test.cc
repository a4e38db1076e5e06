// The egress broker against real clients and a hostile one (issue 5, "Show it"):
// - HTTPS with a test CA: curl and a real Node program in the sandbox fetch from an allowed
//   host name (resolved by the DNS stub; the host side resolves it through an /etc/hosts
//   bind-mounted in a private mount namespace around gander, so the real /etc/hosts is never
//   touched); byte counts in the audit log equal what the server saw; a denied host fails at
//   once.
// - A static binary (no dynamic loader, no proxy settings) is still confined.
// - A thread that rewrites the sockaddr while another connects with it gains nothing.
// Servers are "remote" hosts on 127.0.0.2 / 127.0.0.3, outside the sandbox's network namespace.
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "egress_fixture.h"

namespace {

using namespace gander::egress_suite;
namespace fs = std::filesystem;

constexpr const char* kAllowedName = "api.gander.test";
constexpr const char* kOtherName = "other.gander.test";  // also 127.0.0.2, never allowed

bool Executable(const char* path) { return access(path, X_OK) == 0; }

// Runs a command to completion (no shell); its output, or nullopt when it failed (a test
// failure unless `quiet`).
std::optional<std::string> RunTool(const std::vector<std::string>& argv, bool quiet = false) {
  std::string cmd;
  for (const auto& a : argv) cmd += ShellQuote(a) + " ";
  cmd += "2>&1";
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return std::nullopt;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  int st = pclose(f);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    if (!quiet) ADD_FAILURE() << cmd << " failed:\n" << out;
    return std::nullopt;
  }
  return out;
}

// A background process whose first stdout line is read (a server announcing its port);
// killed and reaped when destroyed.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    if (posix_spawn(&pid_, cargv[0], &actions, nullptr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    out_ = fdopen(out[0], "r");
  }
  ~Background() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_) fclose(out_);
  }
  std::string FirstLine() {
    char line[256] = {0};
    if (!out_ || !fgets(line, sizeof(line), out_)) return "";
    std::string s = line;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

// The network events of one transport ("tcp", "dns") in a run.
std::vector<json> Events(const GanderRun& run, const std::string& transport) {
  std::vector<json> out;
  for (const json& n : run.network) {
    if (n.value("transport", "") == transport) out.push_back(n);
  }
  return out;
}

// GET / on a keep-alive server with an empty body, as a sentinel: once it is answered, every
// connection queued before it on that (one-at-a-time) server has been accepted and counted.
bool Sentinel(const char* ip, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip, &a.sin_addr);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  const char request[] = "GET /sentinel HTTP/1.1\r\nHost: x\r\n\r\n";
  ok = ok && SendAll(fd, request, sizeof(request) - 1) == sizeof(request) - 1;
  std::string reply;
  char buf[512];
  while (ok && reply.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) ok = false;
    if (n > 0) reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// HTTPS with a test CA

constexpr const char* kHttpsServerJs = R"JS(
const https = require('https');
const fs = require('fs');
const [key, cert, size] = process.argv.slice(2);
const body = Buffer.alloc(Number(size), 'x');
const server = https.createServer({key: fs.readFileSync(key), cert: fs.readFileSync(cert)},
  (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {'content-type': 'application/octet-stream'});
      res.end(body);
    });
  });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
)JS";

// The real Node program run inside the sandbox: https.get with the test CA, prints
// "<status> <body bytes>" or "error <code>".
constexpr const char* kHttpsClientJs = R"JS(
const https = require('https');
const fs = require('fs');
const [url, ca] = process.argv.slice(2);
https.get(url, {ca: fs.readFileSync(ca)}, (res) => {
  let bytes = 0;
  res.on('data', (d) => { bytes += d.length; });
  res.on('end', () => console.log(res.statusCode + ' ' + bytes));
}).on('error', (e) => {
  console.log('error ' + e.code);
  process.exitCode = 1;
});
)JS";

constexpr size_t kHttpsBody = 70000;

class EgressHttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool :
         {"/usr/bin/openssl", "/usr/bin/node", "/usr/bin/curl", "/usr/bin/unshare", "/bin/mount"}) {
      if (!Executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    if (!Executable(GANDER_BIN)) GTEST_SKIP() << "gander is not built";
    ws_ = TempDir();
    ASSERT_FALSE(ws_.empty());
    // The host-side /etc/hosts gander's supervisor (and so its DNS stub) sees; unprivileged,
    // the mount namespace needs a user namespace of its own.
    std::ofstream(ws_ + "/hosts") << "127.0.0.1 localhost\n127.0.0.2 " << kAllowedName << " "
                                  << kOtherName << "\n";
    wrapper_ = {"/usr/bin/unshare"};
    if (geteuid() != 0) wrapper_.push_back("--map-root-user");
    for (const char* a : {"--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                          "mount --bind \"$0\" /etc/hosts && exec \"$@\""}) {
      wrapper_.push_back(a);
    }
    wrapper_.push_back(ws_ + "/hosts");
    std::vector<std::string> check = wrapper_;
    check.insert(check.end(), {"/usr/bin/getent", "hosts", kAllowedName});
    auto resolved = RunTool(check, true);
    if (!resolved || resolved->find("127.0.0.2") == std::string::npos) {
      GTEST_SKIP() << "cannot bind-mount a private /etc/hosts (unshare --mount): "
                   << resolved.value_or("failed");
    }
    MakeCertificates();
    std::ofstream(ws_ + "/server.js") << kHttpsServerJs;
    std::ofstream(ws_ + "/client.js") << kHttpsClientJs;
    server_ = std::make_unique<Background>(
        std::vector<std::string>{"/usr/bin/node", ws_ + "/server.js", ws_ + "/server.key",
                                 ws_ + "/server.pem", std::to_string(kHttpsBody)});
    int backend = std::atoi(server_->FirstLine().c_str());
    ASSERT_GT(backend, 0) << "the HTTPS server did not start";
    front_ = std::make_unique<Forwarder>("127.0.0.2", backend);
    ASSERT_TRUE(front_->ok());
    port_ = std::to_string(front_->port());
  }

  void TearDown() override {
    front_.reset();
    server_.reset();
    if (!ws_.empty()) fs::remove_all(ws_);
  }

  // A CA and a server certificate for kAllowedName and kOtherName, signed by it.
  void MakeCertificates() {
    std::string d = ws_ + "/";
    std::ofstream(d + "ext.cnf") << "subjectAltName=DNS:" << kAllowedName << ",DNS:" << kOtherName
                                 << "\n";
    const std::vector<std::string> ec = {"-newkey", "ec", "-pkeyopt",
                                         "ec_paramgen_curve:prime256v1", "-nodes"};
    std::vector<std::string> ca = {"/usr/bin/openssl", "req", "-x509"};
    ca.insert(ca.end(), ec.begin(), ec.end());
    ca.insert(ca.end(), {"-keyout", d + "ca.key", "-out", d + "ca.pem", "-days", "2", "-subj",
                         "/CN=gander test CA"});
    std::vector<std::string> csr = {"/usr/bin/openssl", "req"};
    csr.insert(csr.end(), ec.begin(), ec.end());
    csr.insert(csr.end(), {"-keyout", d + "server.key", "-out", d + "server.csr", "-subj",
                           std::string("/CN=") + kAllowedName});
    std::vector<std::string> sign = {"/usr/bin/openssl",
                                     "x509",
                                     "-req",
                                     "-in",
                                     d + "server.csr",
                                     "-CA",
                                     d + "ca.pem",
                                     "-CAkey",
                                     d + "ca.key",
                                     "-CAcreateserial",
                                     "-out",
                                     d + "server.pem",
                                     "-days",
                                     "2",
                                     "-extfile",
                                     d + "ext.cnf"};
    ASSERT_TRUE(RunTool(ca) && RunTool(csr) && RunTool(sign));
  }

  GanderRun Fetch(const std::string& policy, const std::vector<std::string>& command) {
    GanderRun run = Gander(policy, command, {ws_, wrapper_});
    EXPECT_TRUE(front_->WaitIdle(std::chrono::seconds(60)));
    return run;
  }

  std::string AllowedPolicy() const {
    return Policy(std::string("    - {host: ") + kAllowedName + ", ports: [" + port_ + "]}\n");
  }

  // One brokered connection to the allowed name with the server's exact byte counts, and the
  // stub's answer for the name.
  void ExpectOneCountedConnection(const GanderRun& run) {
    std::vector<json> tcp = Events(run, "tcp");
    ASSERT_EQ(tcp.size(), 1u) << run.out;
    EXPECT_EQ(front_->accepted(), 1);
    EXPECT_EQ(tcp[0]["result"], "allowed");
    EXPECT_EQ(tcp[0]["host"], kAllowedName);
    EXPECT_EQ(tcp[0]["ip"], "127.0.0.2");
    EXPECT_EQ(tcp[0]["port"], front_->port());
    EXPECT_EQ(tcp[0]["bytes_out"].get<uint64_t>(), front_->received()) << tcp[0].dump();
    EXPECT_EQ(tcp[0]["bytes_in"].get<uint64_t>(), front_->sent()) << tcp[0].dump();
    EXPECT_GT(front_->sent(), kHttpsBody);  // the body went through, encrypted
    bool resolved = false;
    for (const json& n : Events(run, "dns")) {
      resolved = resolved || (n["host"] == kAllowedName && n["result"] == "allowed");
    }
    EXPECT_TRUE(resolved) << run.out;
  }

  std::string ws_;
  std::vector<std::string> wrapper_;
  std::unique_ptr<Background> server_;
  std::unique_ptr<Forwarder> front_;
  std::string port_;
};

TEST_F(EgressHttpsTest, CurlWithTestCa) {
  GanderRun run = Fetch(AllowedPolicy(),
                        {"/usr/bin/curl", "-sS", "--max-time", "60", "--cacert", ws_ + "/ca.pem",
                         "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                         std::string("https://") + kAllowedName + ":" + port_});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200 " + std::to_string(kHttpsBody));
  ExpectOneCountedConnection(run);
}

TEST_F(EgressHttpsTest, NodeProgramWithTestCa) {
  GanderRun run = Fetch(AllowedPolicy(),
                        {"/usr/bin/node", ws_ + "/client.js",
                         std::string("https://") + kAllowedName + ":" + port_, ws_ + "/ca.pem"});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200 " + std::to_string(kHttpsBody) + "\n");
  ExpectOneCountedConnection(run);
}

TEST_F(EgressHttpsTest, DeniedHostFailsAtOnce) {
  // A name outside the allowlist (the host would resolve it to the same server): the stub
  // refuses it. The same server by address: the broker refuses the connect. curl's
  // --max-time is far away: exit codes 6 and 7 are answers, 28 would be a timeout.
  for (const std::string& url :
       {std::string("https://") + kOtherName + ":" + port_, "https://127.0.0.2:" + port_}) {
    GanderRun run = Fetch(AllowedPolicy(), {"/usr/bin/curl", "-sS", "--max-time", "60", "--cacert",
                                            ws_ + "/ca.pem", "-o", "/dev/null", url});
    EXPECT_EQ(run.status, url.find(kOtherName) != std::string::npos ? 6 : 7) << url << run.out;
    EXPECT_TRUE(Events(run, "tcp").empty() || Events(run, "tcp")[0]["result"] == "denied")
        << run.out;
  }
  EXPECT_EQ(front_->accepted(), 0);
  // And Node: the refusal is an error at once, not a hang.
  GanderRun run =
      Fetch(AllowedPolicy(), {"/usr/bin/node", ws_ + "/client.js",
                              std::string("https://") + kOtherName + ":" + port_, ws_ + "/ca.pem"});
  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_NE(run.out.find("error E"), std::string::npos) << run.out;
  EXPECT_EQ(front_->accepted(), 0);
}

// ---------------------------------------------------------------------------------------------
// Host names without namespaces ("broker only")
//
// The sandbox keeps the host's /etc/resolv.conf; gander sets RES_OPTIONS=use-vc, so glibc
// asks the nameserver over TCP, and the broker connects that socket to the DNS stub instead.
// The sandbox also sees the host's files: the policy hides /etc/hosts, so the name is asked of
// DNS, and the stub resolves it on the host (through the private /etc/hosts). As the current
// user and, as root, as uid 65534.

// The first nameserver of the host's resolv.conf ("" when it names none).
std::string FirstNameserver() {
  std::ifstream in("/etc/resolv.conf");
  std::string word;
  while (in >> word) {
    if (word == "nameserver" && in >> word) return word.substr(0, word.find('%'));
  }
  return "";
}

class EgressBrokerOnlyTest : public EgressHttpsTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    if (!LandlockNetwork()) return SkipOrFail("Landlock ABI 4 (TCP rules) is not available");
    bool as_nobody = GetParam();
    if (as_nobody && geteuid() != 0) {
      GTEST_SKIP() << "the uid 65534 run needs root to switch users (running as uid " << geteuid()
                   << ")";
    }
    EgressHttpsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    options_ = {ws_, wrapper_, as_nobody, GANDER_BIN, {"--no-namespaces"}};
    if (as_nobody) RunAsNobody(options_);
  }

  GanderRun Run(const std::vector<std::string>& command, bool hide_hosts = true) {
    GanderRun run = Gander(Policy(hide_hosts), command, options_);
    EXPECT_TRUE(front_->WaitIdle(std::chrono::seconds(60)));
    return run;
  }

  // `hide_hosts`: the sandbox cannot read /etc/hosts, so every name is asked of the stub.
  std::string Policy(bool hide_hosts = true) const {
    return std::string("version: 1\nextends: default\n") +
           (hide_hosts ? "filesystem:\n  deny: [/etc/hosts]\n" : "") +
           "network:\n  allow:\n    - {host: " + kAllowedName + ", ports: [" + port_ + "]}\n";
  }

  std::vector<std::string> Curl(const std::string& name) const {
    return {"/usr/bin/curl",
            "-sS",
            "--max-time",
            "60",
            "--cacert",
            ws_ + "/ca.pem",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{size_download}",
            "https://" + name + ":" + port_};
  }

  std::vector<std::string> Node(const std::string& name) const {
    return {"/usr/bin/node", ws_ + "/client.js", "https://" + name + ":" + port_, ws_ + "/ca.pem"};
  }

  // The stub's refusals of `name`: one event each (what gander_dns_queries_total counts).
  static int Refusals(const GanderRun& run, const std::string& name) {
    int refused = 0;
    for (const json& n : Events(run, "dns")) {
      if (n["host"] == name) {
        EXPECT_EQ(n["result"], "denied") << n.dump();
        ++refused;
      }
    }
    return refused;
  }

  GanderOptions options_;
};

TEST_P(EgressBrokerOnlyTest, CurlFetchesFromAnAllowedName) {
  GanderRun run = Run(Curl(kAllowedName));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200 " + std::to_string(kHttpsBody));
  ExpectOneCountedConnection(run);
}

TEST_P(EgressBrokerOnlyTest, NodeProgramFetchesFromAnAllowedName) {
  GanderRun run = Run(Node(kAllowedName));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200 " + std::to_string(kHttpsBody) + "\n");
  ExpectOneCountedConnection(run);
}

// The sandbox reads the host's /etc/hosts itself and never asks the stub: the broker knows the
// file's names too, so the rule naming the host still matches, with the name in the event.
TEST_P(EgressBrokerOnlyTest, NameFromTheHostsFileMatchesItsRule) {
  GanderRun run = Run(Curl(kAllowedName), /*hide_hosts=*/false);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200 " + std::to_string(kHttpsBody));
  for (const json& n : Events(run, "dns")) EXPECT_NE(n["host"], kAllowedName) << n.dump();
  std::vector<json> tcp = Events(run, "tcp");
  ASSERT_EQ(tcp.size(), 1u) << run.out;
  EXPECT_EQ(tcp[0]["result"], "allowed");
  EXPECT_EQ(tcp[0]["host"], kAllowedName);
}

TEST_P(EgressBrokerOnlyTest, NameOutsideTheAllowlistIsRefusedByTheStub) {
  // curl's --max-time is far away: exit code 6 (could not resolve) is an answer, 28 a timeout.
  GanderRun curl = Run(Curl(kOtherName));
  EXPECT_EQ(curl.status, 6) << curl.out;
  EXPECT_GE(Refusals(curl, kOtherName), 1) << curl.out;
  EXPECT_TRUE(Events(curl, "tcp").empty()) << curl.out;
  GanderRun node = Run(Node(kOtherName));
  EXPECT_EQ(node.status, 1) << node.out;
  EXPECT_NE(node.out.find("error ENOTFOUND"), std::string::npos) << node.out;
  EXPECT_GE(Refusals(node, kOtherName), 1) << node.out;
  EXPECT_TRUE(Events(node, "tcp").empty()) << node.out;
  EXPECT_EQ(front_->accepted(), 0);
}

TEST_P(EgressBrokerOnlyTest, UdpAndOtherPort53StayRefused) {
  std::string nameserver = FirstNameserver();
  if (nameserver.empty()) nameserver = "127.0.0.1";
  // UDP to the nameserver (as a plain DNS query would go): refused, as all UDP in this mode. TCP
  // to port 53 of an address that is no nameserver: the policy decides, as any connect.
  std::string script = "echo x > /dev/udp/" + nameserver + "/53; echo udp=$?; " +
                       "echo x > /dev/tcp/127.0.0.2/53; echo tcp=$?";
  GanderRun run = Run({"/bin/bash", "-c", script});
  EXPECT_NE(run.out.find("udp=1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("tcp=1"), std::string::npos) << run.out;
  // The UDP socket is refused when it is made (EACCES, no event); a denied send if not.
  EXPECT_NE(run.out.find("Permission denied"), std::string::npos) << run.out;
  for (const json& n : Events(run, "udp")) EXPECT_EQ(n["result"], "denied") << n.dump();
  std::vector<json> tcp = Events(run, "tcp");
  ASSERT_EQ(tcp.size(), 1u) << run.out;
  EXPECT_EQ(tcp[0]["result"], "denied");
  EXPECT_EQ(tcp[0]["ip"], "127.0.0.2");
  EXPECT_EQ(tcp[0]["port"], 53);
}

INSTANTIATE_TEST_SUITE_P(User, EgressBrokerOnlyTest, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "uid65534" : "current_user");
});

// ---------------------------------------------------------------------------------------------
// A static binary, and the sockaddr-rewrite race

// True when `path` is an ELF file with no program interpreter (statically linked).
bool IsStatic(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
    return false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof(ph))) return false;
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

// This machine's first non-loopback IPv4 address ("" when it has none): a host the sandbox
// could reach through gander's network namespace, and so one the broker must refuse.
std::string HostAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) ||
        !(i->ifa_flags & IFF_UP)) {
      continue;
    }
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof(text));
    found = text;
  }
  freeifaddrs(list);
  return found;
}

// Runs as the current user, and (as root) as uid 65534, like the escape suite.
class EgressProbeTest : public ::testing::Test {
 protected:
  void Prepare(bool as_nobody) {
    if (!Executable(GANDER_BIN)) GTEST_SKIP() << "gander is not built";
    if (as_nobody && geteuid() != 0) {
      GTEST_SKIP() << "the uid 65534 run needs root to switch users (running as uid " << geteuid()
                   << ")";
    }
    if (as_nobody && !RunTool({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                               "--clear-groups", "--", "/usr/bin/unshare", "--user", "/bin/true"},
                              true)) {
      GTEST_SKIP() << "uid 65534 cannot create a user namespace here (the broker needs one)";
    }
    ws_ = TempDir();
    ASSERT_FALSE(ws_.empty());
    // In the workspace, which the sandbox sees wherever the build tree is; for uid 65534 also
    // a copy of gander (the build tree may be private) and the workspace is theirs.
    probe_ = ws_ + "/gander_egress_probe";
    fs::copy_file(GANDER_EGRESS_PROBE_BIN, probe_);
    ASSERT_TRUE(IsStatic(probe_)) << GANDER_EGRESS_PROBE_BIN << " is not statically linked";
    options_.workspace = ws_;
    if (as_nobody) RunAsNobody(options_);
  }
  void TearDown() override {
    if (!ws_.empty()) fs::remove_all(ws_);
  }
  std::string ws_, probe_;
  GanderOptions options_;
};

class EgressStaticTest : public EgressProbeTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override { Prepare(GetParam()); }
};

TEST_P(EgressStaticTest, StaticBinaryIsConfined) {
  std::string host_ip = HostAddress();
  if (host_ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  Server allowed("127.0.0.2", false, 1000);
  Server loopback("127.0.0.3", false, 1000);  // host loopback, not listed
  Server host(host_ip.c_str(), false, 1000);  // a "remote" host, not listed
  ASSERT_TRUE(allowed.ok() && loopback.ok() && host.ok());
  std::string a = std::to_string(allowed.port());
  std::string script = probe_ + " get 127.0.0.2 " + a + " /; " + probe_ + " get 127.0.0.3 " +
                       std::to_string(loopback.port()) + " /; " + probe_ + " get " + host_ip + " " +
                       std::to_string(host.port()) + " /; exit 0";
  // Proxy variables name a proxy that does not exist: the probe reads none of them anyway.
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [" + a + "]}\n"),
                         {"/usr/bin/env", "http_proxy=http://127.0.0.1:9", "ALL_PROXY=127.0.0.1:9",
                          "/bin/sh", "-c", script},
                         options_);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("get: ok status=200 bytes=" + std::to_string(allowed.sent())),
            std::string::npos)
      << run.out;
  // Both others: refused (nothing listens on 127.0.0.3 in the sandbox's own loopback).
  size_t first = run.out.find("get: connect: ECONNREFUSED");
  EXPECT_NE(first, std::string::npos) << run.out;
  EXPECT_NE(run.out.find("get: connect: ECONNREFUSED", first + 1), std::string::npos) << run.out;
  ASSERT_TRUE(Sentinel("127.0.0.3", loopback.port()));
  ASSERT_TRUE(Sentinel(host_ip.c_str(), host.port()));
  EXPECT_EQ(loopback.connections(), 1);  // the sentinel only
  EXPECT_EQ(host.connections(), 1);
  // A brokered connection's event comes when it ends, a refusal's at once: any order. The
  // unlisted host-loopback address has nothing listening on it inside the sandbox: refused
  // and reported too.
  std::map<std::string, json> tcp;
  for (const json& e : Events(run, "tcp")) tcp[e["ip"].get<std::string>()] = e;
  ASSERT_EQ(tcp.size(), 3u) << run.out;
  EXPECT_EQ(tcp["127.0.0.2"]["result"], "allowed");
  EXPECT_EQ(tcp["127.0.0.2"]["bytes_out"].get<uint64_t>(), allowed.received());
  EXPECT_EQ(tcp["127.0.0.2"]["bytes_in"].get<uint64_t>(), allowed.sent());
  for (const std::string& refused : {std::string("127.0.0.3"), host_ip}) {
    EXPECT_EQ(tcp[refused]["result"], "denied") << refused;
    EXPECT_EQ(tcp[refused]["errno_name"], "ECONNREFUSED") << refused;
  }
}

INSTANTIATE_TEST_SUITE_P(User, EgressStaticTest, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "uid65534" : "current_user");
});

struct RaceResult {
  long attempts = -1, connected = -1, failed = -1, peer_allowed = -1, peer_forbidden = -1;
};

RaceResult ParseRace(const std::string& out) {
  RaceResult r;
  std::smatch m;
  static const std::regex re(
      "race: attempts=(\\d+) connected=(\\d+) failed=(\\d+) peer_allowed=(\\d+) "
      "peer_forbidden=(\\d+)");
  if (std::regex_search(out, m, re)) {
    r = {std::stol(m[1]), std::stol(m[2]), std::stol(m[3]), std::stol(m[4]), std::stol(m[5])};
  }
  return r;
}

// The forbidden address: unlisted host loopback (nothing listens on it in the sandbox: refused
// with an event), or this machine's non-loopback address (the broker refuses it with an
// event); as the current user and as uid 65534.
class EgressRaceTest : public EgressProbeTest,
                       public ::testing::WithParamInterface<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override { Prepare(std::get<1>(GetParam())); }
};

TEST_P(EgressRaceTest, SockaddrRewriteGainsNothing) {
  bool loopback = std::get<0>(GetParam()) == "loopback";
  std::string forbidden_ip = loopback ? "127.0.0.3" : HostAddress();
  if (forbidden_ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  // Both listeners on one port, so the racing thread rewrites only the 4-byte address.
  std::unique_ptr<Server> allowed, forbidden;
  for (int i = 0; i < 20 && !forbidden; ++i) {
    allowed = std::make_unique<Server>("127.0.0.2", false, 0);
    ASSERT_TRUE(allowed->ok());
    forbidden = std::make_unique<Server>(forbidden_ip.c_str(), false, 0, allowed->port());
    if (!forbidden->ok()) forbidden.reset();
  }
  ASSERT_TRUE(forbidden) << "no port free on both 127.0.0.2 and " << forbidden_ip;
  int port = allowed->port();
  auto settle = [&] {  // every connection made so far has been accepted and counted
    ASSERT_TRUE(Sentinel(forbidden_ip.c_str(), port));
    ASSERT_TRUE(Sentinel("127.0.0.2", port));
  };

  // Without gander the race is real: some connects reach the forbidden address.
  auto out = RunTool({probe_, "race", "127.0.0.2", forbidden_ip, std::to_string(port), "200000",
                      "until-forbidden"});
  ASSERT_TRUE(out);
  ASSERT_GT(ParseRace(*out).peer_forbidden, 0) << "the race never hit without gander:\n" << *out;
  settle();
  int forbidden_before = forbidden->connections(), allowed_before = allowed->connections();

  constexpr long kAttempts = 400;
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [" + std::to_string(port) + "]}\n"),
                         {probe_, "race", "127.0.0.2", forbidden_ip, std::to_string(port),
                          std::to_string(kAttempts), "until-both"},
                         options_);
  ASSERT_EQ(run.status, 0) << run.out;
  RaceResult r = ParseRace(run.out);
  ASSERT_GE(r.attempts, kAttempts) << run.out;
  settle();
  EXPECT_EQ(forbidden->connections() - forbidden_before, 1) << "only the sentinel may arrive";
  EXPECT_EQ(allowed->connections() - allowed_before - 1, r.connected);
  // Every attempt was decided on one copy of the address and connected to that copy: the
  // allowed ones were brokered to 127.0.0.2, the rest refused; both happened.
  long brokered = 0, denied = 0;
  for (const json& n : Events(run, "tcp")) {
    if (n["result"] == "allowed" && n["ip"] == "127.0.0.2" && n["errno"] == 0) ++brokered;
    if (n["result"] == "denied" && n["ip"] == forbidden_ip) ++denied;
  }
  EXPECT_EQ(brokered, r.connected) << run.out;
  // 127.0.0.3 too: nothing listens on it inside the sandbox, so each refusal is an event.
  EXPECT_EQ(denied, r.failed) << run.out;
  EXPECT_EQ(r.connected + r.failed, r.attempts);
  EXPECT_GT(r.connected, 0);
  EXPECT_GT(r.failed, 0);
}

INSTANTIATE_TEST_SUITE_P(Forbidden, EgressRaceTest,
                         ::testing::Combine(::testing::Values("loopback", "host"),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) ? "_uid65534" : "_current_user");
                         });

}  // namespace
