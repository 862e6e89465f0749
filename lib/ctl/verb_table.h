// SPDX-License-Identifier: LGPL-2.1-or-later
// The one table of nervectl's verbs, as systemd's machinectl has it: one row per verb with its name,
// summary, operands, options and handler. The parser (args.h) reads it, the help is made from it, and
// dispatch is one call (dispatch in args.h): adding a verb is adding a row (and its handler).
//
// nervectl is two programs (front.h), and each builds this table with its own handlers: P is the
// program (front.cpp's Front, full/ctl.cpp's Full), and a row names its handler in one of three ways:
//   in_front<F>                      a handler of the front, F (lib/ctl); both programs run it;
//   in_full<P>(H)                    a handler of nervectl-full, H; P::full<H> is what P runs for it:
//                                    the front hands the command line on to nervectl-full (hand_on),
//                                    nervectl-full calls H with its bus connection (a Context);
//   in_front_unless_wait<P, F>(H)    F, but with --wait as in_full<P>(H) (launch).
// H is a generic lambda that calls a handler of nervectl-full (verb_handlers.h): a template, whose body
// is compiled only where it is called, in nervectl-full. So the front never refers to nervectl-full's
// code, which it does not link (no sdbus-c++: its start-up cost, docs/performance.md).
#pragma once

#include "ctl/ctl.h"
#include "ctl/verb_handlers.h"

namespace nerve::ctl {

template <int (*F)(const Call&)>
inline constexpr Handler in_front{RunsIn::Front, F};

template <class P, class H>
constexpr Handler in_full(H) {
  return {RunsIn::Full, P::template full<H>};
}

template <class P, int (*F)(const Call&), class H>
int unless_waiting(const Call& c) {
  return c.args.wait ? P::template full<H>(c) : F(c);
}

template <class P, int (*F)(const Call&), class H>
constexpr Handler in_front_unless_wait(H) {
  return {RunsIn::FrontUnlessWait, unless_waiting<P, F, H>};
}

template <class P>
Verbs verb_table() {
  static const Verb table[] = {
      {"launch", "run CMD in a new scope for RUN: exec in place, or with --wait supervise it and reap on exit or signal",
       kRunAndCommand, {Opt::Wait, Opt::Grace, Opt::Keep, Opt::Sealed, Opt::Property, Opt::Timeout, Opt::Slice},
       in_front_unless_wait<P, launch>([](auto& ctx, auto& a) { return launch_waiting(ctx, a); })},
      {"reap", "stop RUN's scope, confirm it is empty, print the receipt", kRun, {Opt::Grace, Opt::Json},
       in_front<reap>},
      {"cancel", "send --signal (default TERM) to every process of RUN, SIGKILL after the grace, print the receipt",
       kRun, {Opt::Signal, Opt::Grace, Opt::Json}, in_front<cancel>},
      {"freeze", "freeze every process of RUN (FreezeUnit); a frozen run can still be reaped", kRun, {},
       in_front<freeze>},
      {"thaw", "thaw a frozen RUN (ThawUnit)", kRun, {}, in_front<thaw>},
      {"status", "show RUN's record and its live state; exit 0 if it is running, 3 if not, 4 if unknown", kRun,
       {Opt::Json}, in_full<P>([](auto& ctx, auto& a) { return status(ctx, a); })},
      {"list", "list the runs: state, unit, live processes, age, outcome", kNoOperands, {Opt::Json, Opt::NoLegend},
       in_full<P>([](auto& ctx, auto& a) { return list(ctx, a); })},
      {"reconcile", "look at every unfinished run now, as nerved does at startup", kNoOperands, {Opt::Json},
       in_full<P>([](auto& ctx, auto& a) { return reconcile(ctx, a); })},
      {"forget", "remove a reaped run's files so its id can be used again", kRun, {}, in_front<forget>},
      {"slice", "set properties of a slice (default nerve.slice) persistently, e.g. one MemoryMax for all runs in it",
       kSliceSet, {Opt::Property}, in_full<P>([](auto& ctx, auto& a) { return slice(ctx, a); })},
      {"sealing", "say whether runs can be sealed on this host (launch --sealed; docs/sealing.md); exit 1 if not",
       kNoOperands, {Opt::Json}, in_full<P>([](auto& ctx, auto& a) { return sealing(ctx, a); })},
      {"events", "follow nerved's signals live, one line per event (JSON lines with --json) until interrupted",
       kNoOperands, {Opt::Json}, in_full<P>([](auto& ctx, auto& a) { return events(ctx, a); })},
      {"metrics", "print nerved's metrics for Prometheus: runs by state, reaps, latencies, usage totals, its own fds and memory",
       kNoOperands, {Opt::Format}, in_full<P>([](auto& ctx, auto& a) { return metrics(ctx, a); })},
      {"doctor", "check what nerve needs on this host, one line per check; exit 0 if every required one passes",
       kNoOperands, {Opt::Json}, in_full<P>([](auto& ctx, auto& a) { return doctor(ctx, a); })},
  };
  return table;
}

}  // namespace nerve::ctl
