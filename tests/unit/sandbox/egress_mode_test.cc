// Which egress mode a run gets (sandbox/isolation.h): the one place run and doctor ask.
#include <gtest/gtest.h>

#include <string>

#include "sandbox/isolation.h"

namespace gander::sandbox {
namespace {

TEST(EgressModeTest, NamespacesAndNotificationGiveTheEmptyNetnsBehindTheBroker) {
  EXPECT_EQ(EgressModeOf(true, 0, true), EgressMode::kNetnsBroker);
  EXPECT_EQ(EgressModeOf(true, 6, true), EgressMode::kNetnsBroker);
  EXPECT_EQ(std::string(EgressModeName(EgressMode::kNetnsBroker)), "netns + broker");
}

TEST(EgressModeTest, WithoutNamespacesTheBrokerNeedsLandlockTcpRules) {
  EXPECT_EQ(EgressModeOf(false, 4, true), EgressMode::kBrokerOnly);
  EXPECT_EQ(EgressModeOf(false, 6, true), EgressMode::kBrokerOnly);
  EXPECT_EQ(EgressModeOf(false, 3, true), EgressMode::kNone);
  EXPECT_EQ(EgressModeOf(false, 0, true), EgressMode::kNone);
  EXPECT_EQ(std::string(EgressModeName(EgressMode::kBrokerOnly)), "broker only");
}

TEST(EgressModeTest, NoNotificationNoBroker) {
  EXPECT_EQ(EgressModeOf(true, 6, false), EgressMode::kNone);
  EXPECT_EQ(EgressModeOf(false, 6, false), EgressMode::kNone);
  EXPECT_EQ(std::string(EgressModeName(EgressMode::kNone)), "none");
}

}  // namespace
}  // namespace gander::sandbox
