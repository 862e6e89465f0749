// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl-full: every verb of nervectl (lib/ctl/), run by the front for the verbs it leaves.
#include "ctl/ctl.h"

int main(int argc, char** argv) { return nerve::ctl::ctl_main(argc, argv); }
