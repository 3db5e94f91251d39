#include "common/http/http_endpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/clock.h"
#include "common/http/process_health.h"
#include "tests/support/http_request.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

constexpr char kToken[] = "s3cr3t-t0ken-0123456789";

TEST(HttpEndpointTest, CarriesBearerMatchesTheHeaderExactly) {
  const std::string token = kToken;
  auto request = [](const std::string& header) {
    return "GET /metrics HTTP/1.1\r\nHost: x\r\n" + header + "\r\n\r\n";
  };
  EXPECT_TRUE(CarriesBearer(request("Authorization: Bearer " + token), token));
  EXPECT_TRUE(CarriesBearer(request("authorization:Bearer " + token), token));
  EXPECT_FALSE(
      CarriesBearer(request("Authorization: Bearer x" + token), token));
  EXPECT_FALSE(CarriesBearer(request("Authorization: Basic " + token), token));
  EXPECT_FALSE(CarriesBearer(request("X-Token: " + token), token));
  EXPECT_FALSE(CarriesBearer(
      request("Authorization: Bearer " + token.substr(0, token.size() - 1)),
      token));
  // The request line is not a header.
  EXPECT_FALSE(
      CarriesBearer("Authorization: Bearer " + token + "\r\n\r\n", token));
  EXPECT_TRUE(CarriesBearer(request(""), "")) << "no token: anyone";
}

TEST(HttpEndpointTest, RoutesEachPathAndTheMetricsOnlyWithTheToken) {
  using Serves = HttpEndpoint::Serves;
  const std::string with = "GET /metrics HTTP/1.1\r\nAuthorization: Bearer " +
                           std::string(kToken) + "\r\n\r\n";
  const auto all = Serves::kMetricsAndHealth;
  EXPECT_EQ(RouteRequest(with, all, kToken), HttpRoute::kMetrics);
  EXPECT_EQ(RouteRequest("GET /metrics HTTP/1.1\r\n\r\n", all, kToken),
            HttpRoute::kUnauthorized);
  EXPECT_EQ(RouteRequest("GET /metrics?x=1 HTTP/1.1\r\n\r\n", all, ""),
            HttpRoute::kMetrics);
  EXPECT_EQ(RouteRequest(with, Serves::kHealthOnly, kToken),
            HttpRoute::kNotFound);
  EXPECT_EQ(RouteRequest("GET /metricsx HTTP/1.1\r\n\r\n", all, ""),
            HttpRoute::kNotFound);
  EXPECT_EQ(RouteRequest("POST /metrics HTTP/1.1\r\n\r\n", all, ""),
            HttpRoute::kNotFound);
  EXPECT_EQ(RouteRequest("GET /healthz HTTP/1.1\r\n\r\n", all, kToken),
            HttpRoute::kHealth);
  EXPECT_EQ(
      RouteRequest("GET /readyz HTTP/1.0\r\n\r\n", Serves::kHealthOnly, ""),
      HttpRoute::kReady);
  EXPECT_EQ(RouteRequest("", all, ""), HttpRoute::kNone);
}

TEST(HttpEndpointTest, ATokenFileHoldsOneLongWord) {
  TempDir tmp("metrics-token");
  const std::string path = tmp.path() + "/token";
  auto write = [&](const std::string& text) {
    std::ofstream(path) << text;
    chmod(path.c_str(), 0600);
  };
  write(std::string(kToken) + "\n");
  auto token = ReadMetricsToken(path);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, kToken);
  write("short\n");
  EXPECT_FALSE(ReadMetricsToken(path).ok());
  write("two words but long enough\n");
  EXPECT_FALSE(ReadMetricsToken(path).ok());
  EXPECT_FALSE(ReadMetricsToken(tmp.path() + "/missing").ok());
}

TEST(HttpEndpointTest, WithATokenOnlyTheBearerReadsTheMetrics) {
  auto server = HttpEndpoint::Start("127.0.0.1:0", kToken);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Publish("lockstep_samples_total 42\n");
  const std::string url = (*server)->url();
  const std::string anonymous =
      HttpRequest(url, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(anonymous.rfind("HTTP/1.0 401 Unauthorized", 0), 0u) << anonymous;
  EXPECT_EQ(anonymous.find("lockstep_samples_total"), std::string::npos);
  const std::string wrong = HttpRequest(
      url, "GET /metrics HTTP/1.1\r\nAuthorization: Bearer nope\r\n\r\n");
  EXPECT_EQ(wrong.rfind("HTTP/1.0 401", 0), 0u) << wrong;
  const std::string bearer = HttpRequest(
      url, std::string("GET /metrics HTTP/1.1\r\nAuthorization: Bearer ") +
               kToken + "\r\n\r\n");
  EXPECT_EQ(bearer.rfind("HTTP/1.0 200 OK", 0), 0u) << bearer;
  EXPECT_NE(bearer.find("lockstep_samples_total 42"), std::string::npos);
  EXPECT_EQ((*server)->unauthorized(), 2u);
  const std::string other = HttpRequest(url, "GET /other HTTP/1.1\r\n\r\n");
  EXPECT_EQ(other.rfind("HTTP/1.0 404", 0), 0u) << other;
  const std::string prefix = HttpRequest(url, "GET /metricsx HTTP/1.1\r\n\r\n");
  EXPECT_EQ(prefix.rfind("HTTP/1.0 404", 0), 0u) << prefix;
}

// A probe carries no token, and the health paths say nothing of the job.
TEST(HttpEndpointTest, ProbesNeedNoTokenAndFollowTheProcessHealth) {
  ProcessHealth::Reset();
  auto server = HttpEndpoint::Start("127.0.0.1:0", kToken);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string base = (*server)->base_url() + "/";
  auto get = [&](const std::string& path) {
    return HttpRequest(base, "GET " + path + " HTTP/1.1\r\n\r\n");
  };
  EXPECT_EQ(get("/healthz").rfind("HTTP/1.0 200", 0), 0u) << "starting up";
  EXPECT_EQ(get("/readyz").rfind("HTTP/1.0 503", 0), 0u) << "not in a job";
  const int64_t beat_ms = NowMillis();
  ProcessHealth::Beat();
  ProcessHealth::SetReady(true);
  EXPECT_EQ(get("/healthz?verbose").rfind("HTTP/1.0 200", 0), 0u);
  EXPECT_EQ(get("/readyz").rfind("HTTP/1.0 200", 0), 0u);
  EXPECT_TRUE(ProcessHealth::Alive(beat_ms + ProcessHealth::kStaleMs));
  EXPECT_FALSE(
      ProcessHealth::Alive(NowMillis() + ProcessHealth::kStaleMs + 1000))
      << "a loop that stopped beating";
  {
    const ProcessHealth::Busy restoring;
    EXPECT_TRUE(
        ProcessHealth::Alive(NowMillis() + ProcessHealth::kStaleMs + 1000))
        << "a long step taken on purpose";
  }
  ProcessHealth::Reset();
}

TEST(HttpEndpointTest, AHealthOnlyPortServesNoMetrics) {
  auto server =
      HttpEndpoint::Start("127.0.0.1:0", "", HttpEndpoint::Serves::kHealthOnly);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Publish("lockstep_samples_total 42\n");
  const std::string metrics =
      HttpRequest((*server)->url(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(metrics.rfind("HTTP/1.0 404", 0), 0u) << metrics;
  EXPECT_EQ(metrics.find("lockstep_samples_total"), std::string::npos);
  EXPECT_FALSE(HttpEndpoint::Start("localhost:80x", "",
                                   HttpEndpoint::Serves::kHealthOnly)
                   .ok());
}

}  // namespace
}  // namespace lockstep
