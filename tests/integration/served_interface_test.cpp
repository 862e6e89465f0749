// SPDX-License-Identifier: LGPL-2.1-or-later
// What nerved serves on the bus is what lib/bus/org.nerve.Lifecycle1.xml defines. The manager's
// interface is generated from the XML (sdbus-c++-xml2cpp), but the run objects are one hand-written
// sd-bus vtable (lib/bus/run_objects.cpp), so the XML being the generator's input does not make it
// true by itself: the Introspect answers of the manager object and of a run object are handed to
// tests/interface/check-interface.py --served, which fails on any member, type or access of an
// org.nerve.* interface that differs from the XML, and on any served member the XML does not have.
#include "nerved_fixture.h"

#include <sdbus-c++/sdbus-c++.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace nerve::itest {
namespace {

const char* const kService = "org.nerve.Lifecycle1";
const char* const kManagerPath = "/org/nerve/Lifecycle1";
const char* const kRunPath = "/org/nerve/Lifecycle1/run/r1";  // run "r1": nothing to escape

// The source tree this file belongs to.
std::filesystem::path source_root() { return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path(); }

class TheServedInterface : public NervedTest {
 protected:
  // The Introspect answer of nerved's object at PATH, written to FILE in the test's folder.
  std::string introspect_to(const std::string& object_path, const std::string& file) {
    auto bus = sdbus::createSessionBusConnection();
    auto proxy = sdbus::createProxy(*bus, kService, object_path);
    std::string xml;
    proxy->callMethod("Introspect").onInterface("org.freedesktop.DBus.Introspectable").storeResultsTo(xml);
    std::ofstream(path(file)) << xml;
    return path(file);
  }
};

TEST_F(TheServedInterface, IsTheOneTheXmlDefines) {
  Output launched = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", "true"});
  ASSERT_EQ(launched.exit_code, 0) << launched.err;  // a run with a record has an object

  std::string manager = introspect_to(kManagerPath, "manager.xml");
  std::string run_object = introspect_to(kRunPath, "run.xml");
  Output checked = run(command({"/usr/bin/python3", (source_root() / "tests/interface/check-interface.py").string(),
                                "--root", source_root().string(), "--served", manager, run_object}));
  std::cout << checked.out;  // the check's verdict, or each difference on its own line
  EXPECT_EQ(checked.exit_code, 0) << checked.err << "\nmanager object:\n" << read_file(manager).value_or("")
                                  << "\nrun object:\n" << read_file(run_object).value_or("");

  Output reaped = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reaped.exit_code, 0) << reaped.out << reaped.err;
}

}  // namespace
}  // namespace nerve::itest
