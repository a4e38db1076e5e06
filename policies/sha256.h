// SHA-256 (FIPS 180-4), for the policy fingerprint. Our own few lines rather than libcrypto:
// loading libcrypto.so costs ~2 ms at every gander start, which is most of a start-up budget.
#pragma once

#include <string>
#include <string_view>

namespace gander::policies {

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace gander::policies
