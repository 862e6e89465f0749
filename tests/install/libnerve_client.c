// SPDX-License-Identifier: LGPL-2.1-or-later
/* A C program built by check-install.sh against the installed libnerve only (nerve.h and libnerve.pc
 * through pkg-config, -std=c99 -pedantic-errors), as a user's program is built.
 * libnerve_client: reads a receipt (the library works); libnerve_client bus: asks the running nerved
 * to reap "bad id!" and expects the named error that quotes it (the library reaches nerved). */
#include <nerve.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt *r = NULL;
  if (argc > 1 && strcmp(argv[1], "bus") == 0) {
    int rc = nerve_reap("bad id!", 0, &r, &e);
    int ok = rc < 0 && nerve_error_has_name(&e, "org.nerve.Lifecycle1.Error.InvalidRunId") &&
             strstr(e.message, "'bad id!'") != NULL;
    printf("libnerve_client: nerve_reap: %d %s: %s\n", rc, e.name ? e.name : "-", e.message ? e.message : "-");
    nerve_error_free(&e);
    return ok ? 0 : 1;
  }
  if (nerve_receipt_parse("{\"run\":\"r\",\"attempt\":1,\"unit\":\"u.scope\",\"outcome\":\"complete\"}", &r, &e) < 0 ||
      strcmp(r->run, "r") != 0 || !nerve_receipt_ok(r) || r->usage != NULL) {
    printf("libnerve_client: nerve_receipt_parse failed: %s\n", e.message ? e.message : "wrong fields");
    return 1;
  }
  nerve_receipt_free(r);
  printf("libnerve_client: ok\n");
  return 0;
}
