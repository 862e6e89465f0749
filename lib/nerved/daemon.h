// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's whole program: options, start-up in order, the event loop. daemon/main.cpp calls it.
#pragma once

namespace nerve {

int daemon_main(int argc, char** argv);

}  // namespace nerve
