// nervectl: the command-line client of nerved. Everything is in lib/ctl/.
#include "ctl/ctl.h"

int main(int argc, char** argv) { return nerve::ctl::ctl_main(argc, argv); }
