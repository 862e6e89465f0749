// SPDX-License-Identifier: LGPL-2.1-or-later
/* libnerve_test: libnerve (nerve.h) from C, against a real nerved (tests/harness/with-nerved.sh inside
 * tests/harness/with-user-manager.sh; ctest libnerve-c). Each case prints "ok NAME" or "FAIL NAME:
 * LINE: what"; the exit status is the number of failed cases. Built with the C compiler in C99 with
 * -pedantic, so it also proves that nerve.h is pure C.
 * Usage: libnerve_test [CASE...] (none: every case). */
#define _GNU_SOURCE
#include <nerve.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *current;
static int case_failed;

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      printf("FAIL %s: line %d: %s: ", current, __LINE__, #cond);        \
      printf(__VA_ARGS__);                                               \
      printf("\n");                                                      \
      case_failed = 1;                                                   \
      return;                                                            \
    }                                                                    \
  } while (0)

#define CHECK_OK(r, e) CHECK((r) >= 0, "r=%d %s: %s", (r), (e).name ? (e).name : "-", (e).message ? (e).message : "-")

static uint64_t now_usec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Everything the fd gives until its end. */
static void read_all(int fd, char *buf, size_t size) {
  size_t n = 0;
  ssize_t r;
  while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0) n += (size_t)r;
  buf[n] = 0;
}

static int file_has(const char *path, const char *text) {
  char buf[4096];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  read_all(fd, buf, sizeof buf);
  close(fd);
  return strstr(buf, text) != NULL;
}

/* A bad run id: the bus error's name, and its message quotes the id. */
static void bad_run_id(void) {
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt *receipt = NULL;
  int r = nerve_reap("bad id!", 0, &receipt, &e);
  CHECK(r < 0 && receipt == NULL, "r=%d", r);
  CHECK(nerve_error_has_name(&e, "org.nerve.Lifecycle1.Error.InvalidRunId"), "name %s", e.name ? e.name : "-");
  CHECK(e.message && strstr(e.message, "'bad id!'"), "message %s", e.message ? e.message : "-");
  nerve_error_free(&e);
  CHECK(e.name == NULL && e.message == NULL, "not reset by nerve_error_free");
  nerve_status *status = NULL;
  r = nerve_status_get("never-launched", &status, &e);
  CHECK(r < 0 && nerve_error_has_name(&e, "org.nerve.Lifecycle1.Error.NoSuchRun"), "status: %s", e.name ? e.name : "-");
  CHECK(strstr(e.message, "never-launched") != NULL, "message %s", e.message);
  nerve_error_free(&e);
}

/* Launch with argv, env, cwd and three fds of the test's own: the command reads stdin, sees env and
 * cwd (and its run in NERVE_RUN), writes to stdout and stderr; its end is waited for, and the reap's
 * receipt is a struct and JSON. */
static void launch_argv_env_cwd_fds(void) {
  int in[2], out[2], err[2];
  char dir[] = "/tmp/libnerve-cwd.XXXXXX";
  CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0, "pipes");
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char *argv[] = {"sh", "-c", "read x; echo \"$x $FOO $NERVE_RUN $(pwd)\"; echo to-stderr >&2; exit 3", NULL};
  char *envp[] = {"FOO=from-env", "PATH=/usr/bin:/bin", NULL};
  int stdio[3] = {in[0], out[1], err[1]};
  nerve_options *o = nerve_options_new();
  CHECK(o != NULL && nerve_options_set_grace_usec(o, 2000000) == 0, "options");
  nerve_run *run = NULL;
  nerve_error e = NERVE_ERROR_NULL;
  int r = nerve_launch("c-launch", argv, envp, dir, stdio, o, &run, &e);
  nerve_options_free(o);
  close(in[0]), close(out[1]), close(err[1]);
  CHECK_OK(r, e);
  CHECK(nerve_run_pid(run) > 0 && strcmp(nerve_run_id(run), "c-launch") == 0, "pid %u", nerve_run_pid(run));
  CHECK(strstr(nerve_run_path(run), "/org/nerve/Lifecycle1/run/") == nerve_run_path(run), "path %s", nerve_run_path(run));
  CHECK(write(in[1], "from-stdin\n", 11) == 11, "write");
  close(in[1]);
  char text[512], expected[512], errtext[128];
  read_all(out[0], text, sizeof text);
  read_all(err[0], errtext, sizeof errtext);
  close(out[0]), close(err[0]);
  snprintf(expected, sizeof expected, "from-stdin from-env c-launch %s\n", dir);
  CHECK(strcmp(text, expected) == 0, "stdout '%s', not '%s'", text, expected);
  CHECK(strcmp(errtext, "to-stderr\n") == 0, "stderr '%s'", errtext);
  r = nerve_run_wait(run, 20000000, &e);
  CHECK(r == 1, "wait: %d %s", r, e.name ? e.name : "-");
  int code = 0, sig = -1;
  const char *cause = NULL;
  CHECK(nerve_run_exit(run, &code, &sig, &cause) == 1 && code == 3 && sig == 0, "exit %d signal %d", code, sig);
  CHECK(strcmp(cause, "exited") == 0 || strcmp(cause, "reaped") == 0, "cause %s", cause);
  nerve_receipt *receipt = NULL;
  r = nerve_reap("c-launch", 0, &receipt, &e);
  CHECK_OK(r, e);
  /* no_scope: the scope had gone with its last process before the reap (the run is over either way). */
  CHECK(nerve_receipt_ok(receipt), "outcome %s", receipt->outcome);
  CHECK(strcmp(receipt->run, "c-launch") == 0 && receipt->attempt == 1, "run %s attempt %u", receipt->run, receipt->attempt);
  CHECK(strstr(receipt->unit, "nerve-c-launch-") == receipt->unit, "unit %s", receipt->unit);
  CHECK(strlen(receipt->invocation_id) == 32 && receipt->cause && strcmp(receipt->cause, "exited") == 0,
        "invocation %s cause %s", receipt->invocation_id, receipt->cause ? receipt->cause : "(null)");
  CHECK(receipt->escaped && receipt->escaped[0] == NULL, "escaped scopes");
  CHECK(strstr(receipt->json, "\"run\":\"c-launch\"") || strstr(receipt->json, "\"run\": \"c-launch\""),
        "json %s", receipt->json);
  nerve_receipt *again = NULL;
  CHECK(nerve_receipt_parse(receipt->json, &again, &e) == 0 && strcmp(again->unit, receipt->unit) == 0, "reparse");
  nerve_receipt_free(again);
  nerve_receipt_free(receipt);
  nerve_run_free(run);
  rmdir(dir);
}

/* nerve_run_wait with a timeout returns 0 after it (the command still runs), then a cancel ends the
 * run with a receipt whose cause is cancelled, and the wait sees the end. */
static void wait_timeout_and_cancel(void) {
  char *argv[] = {"sleep", "60", NULL};
  nerve_run *run = NULL;
  nerve_error e = NERVE_ERROR_NULL;
  int r = nerve_launch("c-wait", argv, NULL, NULL, NULL, NULL, &run, &e);
  CHECK_OK(r, e);
  uint64_t start = now_usec();
  r = nerve_run_wait(run, 300000, &e);
  uint64_t took = now_usec() - start;
  CHECK(r == 0, "wait: %d %s", r, e.name ? e.name : "-");
  CHECK(took >= 300000 && took < 5000000, "the 300 ms wait took %llu us", (unsigned long long)took);
  CHECK(kill((pid_t)nerve_run_pid(run), 0) == 0, "the command is gone before the cancel");
  nerve_receipt *receipt = NULL;
  r = nerve_cancel("c-wait", SIGINT, 2000000, &receipt, &e);
  CHECK_OK(r, e);
  CHECK(strcmp(receipt->outcome, "complete") == 0 && receipt->cause && strcmp(receipt->cause, "cancelled") == 0,
        "outcome %s cause %s", receipt->outcome, receipt->cause ? receipt->cause : "(null)");
  CHECK(!receipt->killed, "sleep ends on SIGINT: no SIGKILL needed");
  nerve_receipt_free(receipt);
  r = nerve_run_wait(run, 20000000, &e);
  int sig = 0;
  CHECK(r == 1 && nerve_run_exit(run, NULL, &sig, NULL) == 1 && sig == SIGINT, "wait after cancel: %d signal %d", r, sig);
  nerve_run_free(run);
}

/* From the caller's own loop: poll the fd, process when ready, until the command (which ends when its
 * stdin closes) has ended. Nothing is ready while it runs. */
static void wait_by_polling_fd(void) {
  int in[2];
  CHECK(pipe2(in, O_CLOEXEC) == 0, "pipe");
  char *argv[] = {"sh", "-c", "read x; exit 7", NULL};
  int stdio[3] = {in[0], 1, 2};
  nerve_run *run = NULL;
  nerve_error e = NERVE_ERROR_NULL;
  int r = nerve_launch("c-poll", argv, NULL, NULL, stdio, NULL, &run, &e);
  close(in[0]);
  CHECK_OK(r, e);
  CHECK(nerve_run_process(run, &e) == 0, "ended before its stdin closed");
  struct pollfd p = {nerve_run_get_fd(run), (short)nerve_run_get_events(run), 0};
  CHECK(p.fd >= 0 && poll(&p, 1, 200) >= 0, "poll");
  CHECK(nerve_run_process(run, &e) == 0, "ended before its stdin closed");
  close(in[1]);
  uint64_t deadline = now_usec() + 20000000;
  while ((r = nerve_run_process(run, &e)) == 0 && now_usec() < deadline) {
    p.fd = nerve_run_get_fd(run);
    p.events = (short)nerve_run_get_events(run);
    CHECK(poll(&p, 1, 1000) >= 0, "poll: %s", strerror(errno));
  }
  int code = 0;
  CHECK(r == 1 && nerve_run_exit(run, &code, NULL, NULL) == 1 && code == 7, "r=%d exit %d", r, code);
  nerve_receipt *receipt = NULL;
  r = nerve_reap("c-poll", 0, &receipt, &e);
  CHECK_OK(r, e);
  CHECK(nerve_receipt_ok(receipt), "outcome %s", receipt->outcome);
  nerve_receipt_free(receipt);
  nerve_run_free(run);
}

/* Freeze and thaw: the scope's cgroup says frozen 1, then 0; the status is the run's. */
static void freeze_thaw_status(void) {
  char *argv[] = {"sleep", "60", NULL};
  nerve_run *run = NULL;
  nerve_error e = NERVE_ERROR_NULL;
  int r = nerve_launch("c-freeze", argv, NULL, NULL, NULL, NULL, &run, &e);
  CHECK_OK(r, e);
  nerve_status *s = NULL;
  r = nerve_status_get("c-freeze", &s, &e);
  CHECK_OK(r, e);
  CHECK(strcmp(s->state, "running") == 0 && s->leader_pid == nerve_run_pid(run) && s->attempt == 1,
        "state %s pid %u", s->state, s->leader_pid);
  CHECK(s->live_known && s->populated && s->receipt == NULL && strstr(s->json, "\"live\""), "live state");
  char events[512];
  snprintf(events, sizeof events, "/sys/fs/cgroup%s/cgroup.events", s->cgroup);
  nerve_status_free(s);
  CHECK_OK(nerve_freeze("c-freeze", &e), e);
  CHECK(file_has(events, "frozen 1") == 1, "%s does not say frozen 1", events);
  CHECK_OK(nerve_thaw("c-freeze", &e), e);
  CHECK(file_has(events, "frozen 0") == 1, "%s does not say frozen 0", events);
  nerve_receipt *receipt = NULL;
  CHECK_OK(nerve_reap("c-freeze", 1000000, &receipt, &e), e);
  CHECK(nerve_receipt_ok(receipt) && strcmp(receipt->cause, "reaped") == 0, "cause %s", receipt->cause);
  nerve_receipt_free(receipt);
  CHECK_OK(nerve_status_get("c-freeze", &s, &e), e);
  CHECK(strcmp(s->state, "reaped") == 0 && s->receipt && strcmp(s->receipt->outcome, "complete") == 0, "after reap");
  nerve_status_free(s);
  CHECK_OK(nerve_forget("c-freeze", &e), e);
  nerve_run_free(run);
}

/* A child that contains itself and execs (what `nervectl launch` does): the command runs in the
 * run's scope with NERVE_RUN set; its parent (this test) owns the run and reaps it. */
static void contain_exec(void) {
  char file[] = "/tmp/libnerve-contain.XXXXXX";
  int fd = mkstemp(file);
  CHECK(fd >= 0, "mkstemp");
  close(fd);
  char script[600];
  snprintf(script, sizeof script, "echo \"run=$NERVE_RUN attempt=$NERVE_RUN_ATTEMPT\" > %s; cat /proc/self/cgroup >> %s",
           file, file);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    char *argv[] = {"sh", "-c", script, NULL};
    nerve_error e = NERVE_ERROR_NULL;
    int r = nerve_contain_exec("c-contain", NULL, argv, &e);
    fprintf(stderr, "nerve_contain_exec: %d %s: %s\n", r, e.name, e.message);
    _exit(100);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  CHECK(file_has(file, "run=c-contain attempt=1") == 1, "NERVE_RUN not seen in %s", file);
  CHECK(file_has(file, "/nerve-c-contain-") == 1, "the command was not in the run's scope");
  unlink(file);
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt *receipt = NULL;
  CHECK_OK(nerve_reap("c-contain", 0, &receipt, &e), e);
  CHECK(nerve_receipt_ok(receipt), "outcome %s", receipt->outcome);
  nerve_receipt_free(receipt);
}

/* An exec that fails: ExecFailed with -ENOENT, and the run is contained (reaped here). */
static void contain_exec_failure(void) {
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    char *argv[] = {"/nonexistent/program", NULL};
    nerve_error e = NERVE_ERROR_NULL;
    int r = nerve_contain_exec("c-noexec", NULL, argv, &e);
    int ok = r == -ENOENT && nerve_error_has_name(&e, "org.nerve.libnerve.Error.ExecFailed") &&
             strstr(e.message, "'/nonexistent/program'") != NULL;
    if (!ok) fprintf(stderr, "nerve_contain_exec: %d %s: %s\n", r, e.name, e.message);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt *receipt = NULL;
  CHECK_OK(nerve_reap("c-noexec", 0, &receipt, &e), e);
  CHECK(nerve_receipt_ok(receipt), "outcome %s", receipt->outcome);
  nerve_receipt_free(receipt);
}

struct test_case {
  const char *name;
  void (*run)(void);
};

static const struct test_case cases[] = {
    {"bad_run_id", bad_run_id},
    {"launch_argv_env_cwd_fds", launch_argv_env_cwd_fds},
    {"wait_timeout_and_cancel", wait_timeout_and_cancel},
    {"wait_by_polling_fd", wait_by_polling_fd},
    {"freeze_thaw_status", freeze_thaw_status},
    {"contain_exec", contain_exec},
    {"contain_exec_failure", contain_exec_failure},
};

int main(int argc, char **argv) {
  int failed = 0;
  size_t i;
  int a;
  signal(SIGPIPE, SIG_IGN);
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int wanted = argc < 2;
    for (a = 1; a < argc; ++a) wanted |= strcmp(argv[a], cases[i].name) == 0;
    if (!wanted) continue;
    current = cases[i].name;
    case_failed = 0;
    cases[i].run();
    if (!case_failed) printf("ok %s\n", current);
    fflush(stdout);
    failed += case_failed;
  }
  return failed;
}
