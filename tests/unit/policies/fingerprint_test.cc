// The policy fingerprint (policies/fingerprint.h).
#include "policies/fingerprint.h"

#include <gtest/gtest.h>

#include <map>

#include "policies/sha256.h"

namespace gander::policies {
namespace {

TEST(PolicySha256Test, IsTheSha256OfTheCanonicalText) {
  ExpandedPolicy empty;
  EXPECT_EQ(CanonicalText(empty), "monitor.files 1\n");
  // sha256("monitor.files 1\n"), computed with sha256sum.
  EXPECT_EQ(PolicySha256(empty),
            "639b0a7edf37e0cbd387a1fa152db102e68c82aac52a65c80371b675778436a8");
}

// FIPS 180-4 test vectors, block boundaries included (expected values from sha256sum).
TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // n times 'a', around the one- and two-block padding boundaries.
  const std::map<size_t, std::string> a_times = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
      {1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
  };
  for (const auto& [n, digest] : a_times) {
    EXPECT_EQ(Sha256Hex(std::string(n, 'a')), digest) << n;
  }
}

TEST(PolicySha256Test, ChangesWithEveryRuleAndNotWithTheSources) {
  ExpandedPolicy base;
  base.read = {"/etc"};
  base.sources = {"a.yaml"};
  ExpandedPolicy same = base;
  same.sources = {"b.yaml", "profile:default"};
  EXPECT_EQ(PolicySha256(base), PolicySha256(same));
  for (auto change : std::initializer_list<void (*)(ExpandedPolicy&)>{
           [](ExpandedPolicy& p) { p.read.push_back("/usr"); },
           [](ExpandedPolicy& p) { p.deny.push_back("/etc/shadow"); },
           [](ExpandedPolicy& p) { p.limits.processes = 10; },
           [](ExpandedPolicy& p) {
             p.network.allow.push_back({"a.example", {443}, {}});
           },
           [](ExpandedPolicy& p) { p.env_set["X"] = "1"; },
           [](ExpandedPolicy& p) { p.files = FilesMonitoring::kAll; }}) {
    ExpandedPolicy changed = base;
    change(changed);
    EXPECT_NE(PolicySha256(changed), PolicySha256(base)) << CanonicalText(changed);
    EXPECT_EQ(PolicySha256(changed).size(), 64u);
  }
}

}  // namespace
}  // namespace gander::policies
