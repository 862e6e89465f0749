// SPDX-License-Identifier: LGPL-2.1-or-later
/* nerve.h: libnerve, the C library of nerve's bus API (org.nerve.Lifecycle1 on the session bus,
 * docs/dbus-api.md), over sd-bus. Link with `pkg-config --cflags --libs libnerve`; nerve(3) is its
 * manual page. Pure C (C99 and later, and C++).
 *
 * Return values. Every function that can fail returns an int: >= 0 on success, a negative errno-style
 * value on failure, and fills *error (when error is not NULL) with the failure's name and message.
 * When nerved answered with an error, that is its bus error: name org.nerve.Lifecycle1.Error.* (the
 * message quotes the bad value), or org.freedesktop.DBus.Error.* (nerved is not running, the call
 * had no answer within its bound: Timeout), or System.Error.E* (no session bus). Failures of libnerve's
 * own steps are named org.nerve.libnerve.Error.* (listed in nerve(3)).
 *
 * Ownership. A pointer a function returns through an out parameter (nerve_run **, nerve_receipt **,
 * char **) is the caller's: free it with its own function (nerve_*_free, or free(3) for char *). Strings
 * inside a returned struct belong to that struct. Strings and arrays passed in are only read during
 * the call. Every *_free function accepts NULL.
 *
 * ABI. The library's handles (nerve_options, nerve_run) are opaque. The structs it returns
 * (nerve_containment, nerve_receipt, nerve_usage, nerve_status) are allocated by the library only:
 * never allocate, copy by value or embed them; a later version may append fields at their end.
 * nerve_error is allocated by the caller (NERVE_ERROR_NULL) and keeps its layout. Symbols carry the
 * version NERVE_1.
 *
 * Threads. The library keeps no global state. Each call that takes a run id opens a session bus
 * connection of its own and closes it before it returns, so such calls may be made from any number
 * of threads at once. A nerve_run, a nerve_options and a nerve_error must not be used by two threads
 * at the same time (one at a time is fine). No function installs signal handlers or changes the
 * process's signal mask, except nerve_contain_exec just before its exec.
 */
#ifndef NERVE_H
#define NERVE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NERVE_EXPORT __attribute__((visibility("default")))
#else
#define NERVE_EXPORT
#endif

/* ---- Errors ---------------------------------------------------------------------------------- */

/* Why a call failed, as sd_bus_error has it: the D-Bus error name and its message (both NULL when
 * unset). Initialise with NERVE_ERROR_NULL; a function given a set error does not overwrite it.
 * Free with nerve_error_free, which resets it to NERVE_ERROR_NULL. */
typedef struct nerve_error {
  char *name;
  char *message;
  void *reserved;
} nerve_error;

#define NERVE_ERROR_NULL {0, 0, 0}

NERVE_EXPORT void nerve_error_free(nerve_error *error);
/* 1 when error is set and named NAME, else 0. */
NERVE_EXPORT int nerve_error_has_name(const nerve_error *error, const char *name);

/* ---- Options of Contain and Launch ------------------------------------------------------------- */

/* A run's options (docs/dbus-api.md, Contain and Launch): all unset at first, which is nerved's
 * default for each. NULL where a function takes options means all unset. */
typedef struct nerve_options nerve_options;

NERVE_EXPORT nerve_options *nerve_options_new(void);
NERVE_EXPORT void nerve_options_free(nerve_options *options);
/* The run's grace, time between TERM and SIGKILL when it is reaped (0: nerved's default). */
NERVE_EXPORT int nerve_options_set_grace_usec(nerve_options *options, uint64_t grace_usec);
/* The run's timeout (RuntimeMaxUSec of its scope; 0: none). */
NERVE_EXPORT int nerve_options_set_timeout_usec(nerve_options *options, uint64_t timeout_usec);
/* The slice the run's scope goes into (NAME.slice). */
NERVE_EXPORT int nerve_options_set_slice(nerve_options *options, const char *slice);
/* A unit property, as systemd-run -p KEY=VALUE (MemoryMax, CPUQuota, TasksMax, ...). */
NERVE_EXPORT int nerve_options_add_property(nerve_options *options, const char *key, const char *value);
/* Do not reap the run when its owner goes. */
NERVE_EXPORT int nerve_options_set_keep(nerve_options *options, int keep);
/* Seal the run (docs/sealing.md): refused with SealingUnavailable where the host cannot. */
NERVE_EXPORT int nerve_options_set_sealed(nerve_options *options, int sealed);
/* Launch only: reap the run when its command ends (default 1). */
NERVE_EXPORT int nerve_options_set_reap_on_exit(nerve_options *options, int reap_on_exit);

/* ---- Contain the calling process ---------------------------------------------------------------- */

/* The answer of Contain: this process is in the run's scope. */
typedef struct nerve_containment {
  char *run;
  char *unit;          /* the scope unit */
  char *invocation_id; /* its InvocationID, 32 hex digits */
  char *cgroup;        /* its cgroup, from the cgroup2 root */
  unsigned attempt;    /* the attempt, from 1 */
} nerve_containment;

/* Contains the calling process in a new scope for run RUN (Contain) and checks that it is in the
 * scope's cgroup (org.nerve.libnerve.Error.NotContained otherwise). Its owner is this process's
 * parent: when the parent goes, the run is reaped (unless keep). With the sealed option, this
 * process then seals itself (org.nerve.libnerve.Error.SealingFailed). */
NERVE_EXPORT int nerve_contain(const char *run, const nerve_options *options, nerve_containment **ret,
                               nerve_error *error);
NERVE_EXPORT void nerve_containment_free(nerve_containment *containment);

/* What `nervectl launch RUN -- ARGV` does: nerve_contain, then NERVE_RUN, NERVE_RUN_ATTEMPT and
 * INVOCATION_ID in the environment, default dispositions for INT, QUIT, TERM, HUP and PIPE, no
 * signal blocked, and execvp(argv[0], argv). Returns only on failure: a failure of the exec is
 * org.nerve.libnerve.Error.ExecFailed with -errno (the run is contained then: reap it). */
NERVE_EXPORT int nerve_contain_exec(const char *run, const nerve_options *options, char *const argv[],
                                    nerve_error *error);

/* ---- Launch a command ----------------------------------------------------------------------------- */

/* A run started with nerve_launch: it holds the session bus connection that owns the run (closed by
 * nerve_run_free: then the run is reaped unless keep) and receives its RunExited signal. */
typedef struct nerve_run nerve_run;

/* Starts ARGV (NULL-terminated; argv[0] without '/' is looked up in the PATH of ENVP) in run RUN with
 * no wrapper process (Launch): ENVP (NULL-terminated "KEY=VALUE"; NULL: this process's environ) as
 * its whole environment, CWD (NULL: this process's) as its working folder, STDIO[0..2] (NULL: 0, 1,
 * 2) as its stdin, stdout and stderr. Returns once the command has been executed. */
NERVE_EXPORT int nerve_launch(const char *run, char *const argv[], char *const envp[], const char *cwd,
                              const int stdio[3], const nerve_options *options, nerve_run **ret,
                              nerve_error *error);
NERVE_EXPORT void nerve_run_free(nerve_run *run);
NERVE_EXPORT const char *nerve_run_id(const nerve_run *run);
/* The command's pid, and the run's object path (interface org.nerve.Lifecycle1.Run). */
NERVE_EXPORT uint32_t nerve_run_pid(const nerve_run *run);
NERVE_EXPORT const char *nerve_run_path(const nerve_run *run);

/* Waits until the command ends (RunExited) or TIMEOUT_USEC passes (UINT64_MAX: no bound). 1: it
 * ended (nerve_run_exit tells how); 0: the timeout passed first. */
NERVE_EXPORT int nerve_run_wait(nerve_run *run, uint64_t timeout_usec, nerve_error *error);
/* For the caller's own event loop: poll nerve_run_get_fd for nerve_run_get_events (POLLIN, POLLOUT),
 * and call nerve_run_process when it is ready (and once after nerve_launch, before the first poll).
 * nerve_run_process returns 1 once the command has ended, 0 while it runs. */
NERVE_EXPORT int nerve_run_get_fd(nerve_run *run);
NERVE_EXPORT int nerve_run_get_events(nerve_run *run);
NERVE_EXPORT int nerve_run_process(nerve_run *run, nerve_error *error);
/* 1 when the command has ended: its EXIT_CODE (-1 when killed or unknown), the SIGNAL that killed it
 * (or 0) and the CAUSE of the run's end (exited, cancelled, timeout, ...; valid while RUN lives);
 * 0 while it runs. Any pointer may be NULL. */
NERVE_EXPORT int nerve_run_exit(const nerve_run *run, int *exit_code, int *signal, const char **cause);

/* ---- Receipts, and the calls about one run -------------------------------------------------------- */

/* NERVE_USAGE_UNKNOWN: a figure this host's kernel does not offer (never 0). */
#define NERVE_USAGE_UNKNOWN INT64_C(-1)

/* What a run used (the receipt's usage). */
typedef struct nerve_usage {
  int64_t cpu_usage_usec;
  int64_t cpu_user_usec;
  int64_t cpu_system_usec;
  int64_t memory_peak_bytes;
  int64_t tasks_peak;
  int64_t io_read_bytes;
  int64_t io_write_bytes;
  int64_t oom_kills;
} nerve_usage;

/* The receipt of a reap (receipt.json, docs/dbus-api.md). */
typedef struct nerve_receipt {
  char *json;          /* the receipt as nerved wrote it */
  char *run;
  unsigned attempt;
  char *unit;
  char *invocation_id;
  char *outcome;       /* complete, no_scope, refused or pending_retry */
  char *error;         /* "" for complete; otherwise the reason */
  int killed;          /* processes were left after the grace and were SIGKILLed */
  uint64_t duration_usec;
  char *reaped_at;     /* RFC 3339, UTC */
  char *cause;         /* exited, cancelled, timeout, oom, owner_gone, relaunched, reconciled, reaped;
                          NULL in receipts older than the field */
  nerve_usage *usage;  /* NULL when no usage was read */
  int usage_final;     /* the usage was read after the cgroup emptied (else a lower bound) */
  char **escaped;      /* the escaped scopes reaped with the run, NULL-terminated */
} nerve_receipt;

/* Parses a receipt's JSON text (as Reap and GetRun give it): org.nerve.libnerve.Error.BadReceipt if it
 * is not one. */
NERVE_EXPORT int nerve_receipt_parse(const char *json, nerve_receipt **ret, nerve_error *error);
NERVE_EXPORT void nerve_receipt_free(nerve_receipt *receipt);
/* 1 for the outcomes after which nothing of the run is left (complete, no_scope). */
NERVE_EXPORT int nerve_receipt_ok(const nerve_receipt *receipt);

/* Reap run RUN: TERM, SIGKILL after GRACE_USEC (0: the run's own grace), until its cgroup is empty;
 * the receipt (also for a run already reaped). The wait is bounded by the grace plus a minute. */
NERVE_EXPORT int nerve_reap(const char *run, uint64_t grace_usec, nerve_receipt **ret, nerve_error *error);
/* Cancel run RUN: SIGNAL (1..64) instead of TERM, else as nerve_reap. */
NERVE_EXPORT int nerve_cancel(const char *run, int signal, uint64_t grace_usec, nerve_receipt **ret,
                              nerve_error *error);
NERVE_EXPORT int nerve_freeze(const char *run, nerve_error *error);
NERVE_EXPORT int nerve_thaw(const char *run, nerve_error *error);
/* Remove the files of a reaped run, so that its id can be used again. */
NERVE_EXPORT int nerve_forget(const char *run, nerve_error *error);

/* The status of a run (GetRun): its record and live state. */
typedef struct nerve_status {
  char *json;           /* GetRun's whole document */
  char *run;
  unsigned attempt;
  char *state;          /* launching, running, failed, reaping or reaped */
  char *unit;
  char *invocation_id;
  char *cgroup;
  uint32_t leader_pid;
  int live_known;       /* the unit is loaded now */
  char *active_state;   /* its ActiveState, "" when not known */
  int populated;        /* its cgroup still holds processes */
  nerve_receipt *receipt; /* NULL before the first reap */
} nerve_status;

NERVE_EXPORT int nerve_status_get(const char *run, nerve_status **ret, nerve_error *error);
NERVE_EXPORT void nerve_status_free(nerve_status *status);

#ifdef __cplusplus
}
#endif

#endif /* NERVE_H */
