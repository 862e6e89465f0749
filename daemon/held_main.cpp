// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve-held: what a Launch's command runs as until nerved releases it (lib/process/held_helper.h).
#include "process/held_helper.h"

int main(int argc, char** argv) { return nerve::held_helper_main(argc, argv); }
