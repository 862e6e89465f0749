// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl: the front (lib/ctl/front.h) that runs launch and the verbs of one run itself and execs
// nervectl-full for the other verbs.
#include "ctl/front.h"

int main(int argc, char** argv) { return nerve::ctl::front_main(argc, argv); }
