// A role's HTTP endpoint reading a request head (common/http/
// http_endpoint.h: RouteRequest, CarriesBearer), as anything that reaches
// its port may send it. The first byte picks what the endpoint serves and
// whether it has a token. Whatever the bytes, it must not crash, and it
// must route a head to the metrics only when the head is a GET of /metrics
// that carries the token: anything else aborts (a finding).
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/http/http_endpoint.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

constexpr size_t kMaxInput = 8192;  // ReadRequestHead keeps no more
constexpr std::string_view kToken = "fuzz-token-0123456789";

}  // namespace

std::vector<std::string> FuzzSeeds() {
  const std::string bearer =
      "Authorization: Bearer " + std::string(kToken) + "\r\n";
  std::vector<std::string> heads = {
      "GET /metrics HTTP/1.1\r\nHost: x\r\n" + bearer + "\r\n",
      "GET /metrics?name=lockstep_clock HTTP/1.0\r\nauthorization:  Bearer " +
          std::string(kToken) + " \r\n\r\n",
      "GET /metrics HTTP/1.1\r\nAuthorization: Bearer wrong\r\n\r\n",
      "GET /healthz HTTP/1.1\r\n\r\n",
      "GET /readyz HTTP/1.1\r\n\r\n",
      "POST /metrics HTTP/1.1\r\n" + bearer + "\r\n",
      "GET /metricsx HTTP/1.1\r\n\r\n",
  };
  std::vector<std::string> seeds;
  for (const std::string& head : heads) {
    for (const char first : {'\0', '\1', '\2'}) {
      seeds.push_back(std::string(1, first) + head);
    }
  }
  return seeds;
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lockstep;
  if (size == 0 || size > kMaxInput) return 0;
  const auto serves = (data[0] & 1) != 0
                          ? HttpEndpoint::Serves::kHealthOnly
                          : HttpEndpoint::Serves::kMetricsAndHealth;
  const std::string_view token = (data[0] & 2) != 0 ? "" : kToken;
  const std::string_view head(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  const HttpRoute route = RouteRequest(head, serves, token);
  if (route == HttpRoute::kMetrics) {
    const bool get = head.substr(0, 12) == "GET /metrics";
    const bool carries =
        token.empty() ||
        head.find("Bearer " + std::string(token)) != std::string_view::npos;
    if (serves != HttpEndpoint::Serves::kMetricsAndHealth || !get || !carries) {
      std::abort();
    }
  }
  if (token.empty() && !CarriesBearer(head, token)) std::abort();
  return 0;
}
