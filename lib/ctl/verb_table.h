// The table of nervectl's verbs: name, summary, options and operands (ctl.cpp says which handler
// runs each, verb_handlers.h which file holds it).
#pragma once

#include "ctl/ctl.h"

namespace nerve::ctl {

inline const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      {"launch", "run CMD in a new scope for RUN: exec in place, or with --wait supervise it and reap on exit or signal",
       {Opt::Wait, Opt::Grace, Opt::Keep, Opt::Sealed, Opt::Property, Opt::Timeout, Opt::Slice},
       Operands::RunAndCommand},
      {"reap", "stop RUN's scope, confirm it is empty, print the receipt", {Opt::Grace, Opt::Json}, Operands::Run},
      {"cancel", "send --signal (default TERM) to every process of RUN, SIGKILL after the grace, print the receipt",
       {Opt::Signal, Opt::Grace, Opt::Json}, Operands::Run},
      {"freeze", "freeze every process of RUN (FreezeUnit); a frozen run can still be reaped", {}, Operands::Run},
      {"thaw", "thaw a frozen RUN (ThawUnit)", {}, Operands::Run},
      {"status", "show RUN's record and its live state; exit 0 if it is running, 3 if not, 4 if unknown",
       {Opt::Json}, Operands::Run},
      {"list", "list the runs: state, unit, live processes, age, outcome", {Opt::Json, Opt::NoLegend},
       Operands::None},
      {"reconcile", "look at every unfinished run now, as nerved does at startup", {Opt::Json}, Operands::None},
      {"forget", "remove a reaped run's files so its id can be used again", {}, Operands::Run},
      {"slice", "set properties of a slice (default nerve.slice) persistently, e.g. one MemoryMax for all runs in it",
       {Opt::Property}, Operands::SliceSet},
      {"sealing", "say whether runs can be sealed on this host (launch --sealed; docs/sealing.md); exit 1 if not",
       {Opt::Json}, Operands::None},
      {"events", "follow nerved's signals live, one line per event (JSON lines with --json) until interrupted",
       {Opt::Json}, Operands::None},
      {"doctor", "check what nerve needs on this host, one line per check; exit 0 if every required one passes",
       {Opt::Json}, Operands::None},
  };
  return table;
}

}  // namespace nerve::ctl
