// SPDX-License-Identifier: LGPL-2.1-or-later
// libnerve's logic without a bus (lib/libnerve): a receipt's JSON as nerve_receipt (usage figures the
// host did not offer, fields older receipts lack, escaped scopes), what is not a receipt, nerve_error's
// rules and the options' argument checks. Against a real nerved: tests/libnerve/libnerve_test.c.
#include "libnerve/include/nerve.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace {

struct Parsed {
  nerve_receipt* r = nullptr;
  nerve_error e = NERVE_ERROR_NULL;
  int rc = 0;
  explicit Parsed(const char* text) { rc = nerve_receipt_parse(text, &r, &e); }
  ~Parsed() {
    nerve_receipt_free(r);
    nerve_error_free(&e);
  }
};

constexpr const char* kFull = R"({"version":1,"run":"r1","attempt":2,"unit":"nerve-r1-0123456789abcdef.scope",
  "invocation_id":"0123456789abcdef0123456789abcdef","outcome":"complete","error":"","killed":true,
  "duration_usec":1500,"reaped_at":"2026-12-02T04:00:00.000Z","cause":"cancelled",
  "usage":{"cpu_usage_usec":10,"cpu_user_usec":6,"cpu_system_usec":4,"memory_peak_bytes":null,
           "tasks_peak":3,"io_read_bytes":null,"io_write_bytes":null,"oom_kills":0},
  "usage_final":true,"escaped":[{"unit":"run-r0a1.scope","pids":[4711]},{"unit":"run-r0a2.scope","pids":[]}]})";

TEST(LibnerveReceipt, EveryFieldOfAReceipt) {
  Parsed p(kFull);
  ASSERT_EQ(p.rc, 0) << (p.e.message ? p.e.message : "");
  const nerve_receipt& r = *p.r;
  EXPECT_STREQ(r.run, "r1");
  EXPECT_EQ(r.attempt, 2u);
  EXPECT_STREQ(r.unit, "nerve-r1-0123456789abcdef.scope");
  EXPECT_STREQ(r.invocation_id, "0123456789abcdef0123456789abcdef");
  EXPECT_STREQ(r.outcome, "complete");
  EXPECT_STREQ(r.error, "");
  EXPECT_TRUE(r.killed);
  EXPECT_EQ(r.duration_usec, 1500u);
  EXPECT_STREQ(r.reaped_at, "2026-12-02T04:00:00.000Z");
  EXPECT_STREQ(r.cause, "cancelled");
  EXPECT_TRUE(r.usage_final);
  EXPECT_STREQ(r.json, kFull);
  ASSERT_NE(r.escaped, nullptr);
  EXPECT_STREQ(r.escaped[0], "run-r0a1.scope");
  EXPECT_STREQ(r.escaped[1], "run-r0a2.scope");
  EXPECT_EQ(r.escaped[2], nullptr);
  EXPECT_TRUE(nerve_receipt_ok(p.r));
}

TEST(LibnerveReceipt, AFigureTheHostDidNotOfferIsUnknownNeverZero) {
  Parsed p(kFull);
  ASSERT_EQ(p.rc, 0);
  ASSERT_NE(p.r->usage, nullptr);
  EXPECT_EQ(p.r->usage->cpu_usage_usec, 10);
  EXPECT_EQ(p.r->usage->cpu_user_usec, 6);
  EXPECT_EQ(p.r->usage->memory_peak_bytes, NERVE_USAGE_UNKNOWN);
  EXPECT_EQ(p.r->usage->io_read_bytes, NERVE_USAGE_UNKNOWN);
  EXPECT_EQ(p.r->usage->tasks_peak, 3);
  EXPECT_EQ(p.r->usage->oom_kills, 0);
}

TEST(LibnerveReceipt, AnOlderReceiptHasNoCauseUsageOrEscapedScopes) {
  Parsed p(R"({"version":1,"run":"old","attempt":1,"unit":"u.scope","outcome":"pending_retry",
              "error":"not empty","killed":false,"duration_usec":5,"reaped_at":""})");
  ASSERT_EQ(p.rc, 0);
  EXPECT_EQ(p.r->cause, nullptr);
  EXPECT_EQ(p.r->usage, nullptr);
  EXPECT_STREQ(p.r->invocation_id, "");
  ASSERT_NE(p.r->escaped, nullptr);
  EXPECT_EQ(p.r->escaped[0], nullptr);
  EXPECT_FALSE(nerve_receipt_ok(p.r));
}

TEST(LibnerveReceipt, WhatIsNotAReceiptIsANamedError) {
  // The last ones throw halfway through, after some fields were copied: nothing of them may stay
  // allocated (LeakSanitizer in the sanitizer pass saw 123 bytes of {"run": 5} left).
  for (const char* text : {"not json", "[1,2]", R"({"run": 5})", R"({"run": "r1", "reaped_at": 7})",
                           R"({"run": "r1", "escaped": [{"unit": "a.scope"}, 1]})"}) {
    Parsed p(text);
    EXPECT_EQ(p.rc, -EBADMSG) << text;
    EXPECT_EQ(p.r, nullptr) << text;
    EXPECT_TRUE(nerve_error_has_name(&p.e, "org.nerve.libnerve.Error.BadReceipt")) << (p.e.name ? p.e.name : "-");
  }
}

TEST(LibnerveError, ASetErrorIsKeptAndFreeResetsIt) {
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt* r = nullptr;
  EXPECT_EQ(nerve_receipt_parse("x", &r, &e), -EBADMSG);
  std::string first = e.message;
  EXPECT_EQ(nerve_receipt_parse("y", &r, &e), -EBADMSG);  // the first failure's error stays
  EXPECT_EQ(first, e.message);
  nerve_error_free(&e);
  EXPECT_EQ(e.name, nullptr);
  EXPECT_EQ(e.message, nullptr);
  nerve_error_free(&e);  // twice is fine
  EXPECT_FALSE(nerve_error_has_name(&e, "org.nerve.libnerve.Error.BadReceipt"));
  EXPECT_FALSE(nerve_error_has_name(nullptr, "x"));
}

TEST(LibnerveArguments, MissingArgumentsAreRefusedBeforeAnyCall) {
  nerve_error e = NERVE_ERROR_NULL;
  EXPECT_EQ(nerve_reap(nullptr, 0, nullptr, &e), -EINVAL);
  EXPECT_TRUE(nerve_error_has_name(&e, "org.nerve.libnerve.Error.InvalidArgument"));
  nerve_error_free(&e);
  char* none[] = {nullptr};
  EXPECT_EQ(nerve_contain_exec("r", nullptr, none, &e), -EINVAL);
  nerve_error_free(&e);
  EXPECT_EQ(nerve_cancel("r", 0, 0, nullptr, &e), -EINVAL);
  EXPECT_NE(std::string(e.message).find("signal 0"), std::string::npos) << e.message;
  nerve_error_free(&e);
  EXPECT_EQ(nerve_options_set_keep(nullptr, 1), -EINVAL);
  EXPECT_EQ(nerve_options_add_property(nullptr, "MemoryMax", "1M"), -EINVAL);
  nerve_options* o = nerve_options_new();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(nerve_options_add_property(o, "MemoryMax", "1M"), 0);
  EXPECT_EQ(nerve_options_add_property(o, nullptr, "1M"), -EINVAL);
  nerve_options_free(o);
  nerve_options_free(nullptr);
  nerve_receipt_free(nullptr);
  nerve_status_free(nullptr);
  nerve_run_free(nullptr);
}

}  // namespace
