// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved: the per-user lifecycle daemon. Everything is in lib/ (daemon.cpp).
#include "nerved/daemon.h"

int main(int argc, char** argv) { return nerve::daemon_main(argc, argv); }
