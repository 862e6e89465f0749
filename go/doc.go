// SPDX-License-Identifier: LGPL-2.1-or-later

// Package nerve runs the commands of a Go workflow engine as nerve runs: each command in a
// transient systemd user scope of its own, reaped when it ends, when its context is done or when the
// engine dies, with nothing it started left behind, and a receipt of what it used.
//
// The few lines an engine writes (docs/adopting.md):
//
//	cmd := nerve.CommandContext(ctx, "build-42", "make", "-j8")
//	cmd.Stdout, cmd.Stderr = &out, &out
//	err := cmd.Run()                        // returns promptly once ctx is done, even if a
//	                                        // descendant of make holds the output pipe
//	receipt, _ := nerve.Reap(context.Background(), "build-42", 0)
//	fmt.Println(receipt.Cause, receipt.Usage.CPUUsage())
//
// # Why a drop-in for exec.CommandContext is needed
//
// exec.CommandContext kills only the direct child when its context is done. A descendant that
// outlived it (a background job of a shell, a daemonised tool, anything that called setsid) keeps
// the write end of the output pipe that os/exec made for a non-*os.File Stdout or Stderr (a
// bytes.Buffer), and Wait waits for that pipe's EOF: `sh -c 'sleep 20 & wait'` under a 200 ms
// context returns after 20 s. A process group kill misses whatever left the group, and Go 1.19 has
// neither Cmd.Cancel nor Cmd.WaitDelay. nerve's scope holds every descendant however it escaped, so
// reaping the run closes every writer of the pipe and Wait returns.
//
// # How a command is started: nervectl launch --wait
//
// CommandContext returns an *exec.Cmd for
//
//	nervectl launch --wait RUN -- NAME ARGS...
//
// nervectl stays in the foreground as the run's supervisor, outside the scope; the command is its
// child inside the scope. This form, not the plain `nervectl launch` (which execs the command in
// place), because:
//
//   - the run is reaped when the command ends: what the command left running is ended then, so Wait
//     returns when the command does, even after a normal exit that left a pipe holder behind (with a
//     plain launch the run would live on until the engine exits or reaps it, and so would Wait);
//   - the run ends with the engine: the supervisor holds a pidfd of its parent, the engine, and when
//     the engine dies, even by SIGKILL, it closes its bus connection, the run's owner, and nerved
//     reaps the run (cause owner_gone); so does the supervisor's own death;
//   - the exit status is the command's (ExitError.ExitCode()), or 128 + the signal that ended it.
//
// What differs from a plain exec.Cmd: cmd.Process is the supervisor, not the command (SIGTERM,
// SIGINT, SIGHUP or SIGQUIT sent to it are passed to every process of the run, which is then
// reaped); a command killed by a signal N exits with code 128+N, so ProcessState.Signaled() is
// false; a command that cannot be contained (nerved or the user manager unreachable, a bad run id,
// a run id that is already final) does not run at all and exits 125 (2 for a run id that is not
// valid), with nervectl's reason on Stderr: there is no uncontained fallback. A run id is used once: once reaped, the same id is
// refused (RunFinished) until Forget.
//
// # Cancellation, without Cmd.Cancel and Cmd.WaitDelay
//
// When ctx is done, a watcher goroutine (started by CommandContext, for a ctx that can be done at
// all) runs `nervectl cancel --signal KILL RUN`: nerved fences the run and SIGKILLs every process
// of its scope, however it escaped, and confirms the cgroup empty. Every writer of the pipe is then
// gone and Wait returns. Only after that call does the *exec.Cmd see its context done (the context
// it was made with is closed by the watcher), so os/exec's own kill of the supervisor is a backstop:
// were the cancel to fail (nerved not answering within CancelTimeout), that kill still makes nerved
// reap the run, as the supervisor's death does, with the run's grace. Wait's error is then an
// *exec.ExitError: "signal: killed" (os/exec's kill reached the supervisor first, as with a plain
// exec.CommandContext) or exit status 137 (the supervisor saw the command killed and exited
// 128 + SIGKILL). Start on a ctx that is already done returns ctx.Err() and runs nothing, as
// os/exec does.
//
// Limits of the mechanism:
//
//   - The watcher lives until ctx is done or the *exec.Cmd has been garbage collected (a finalizer
//     stops it); an engine-wide ctx that is never cancelled keeps one goroutine per live Cmd.
//   - A watcher whose command has already ended still cancels RUN when ctx is done: a no-op for a run
//     with a final receipt (nerved returns that receipt and does nothing). After Forget and a new
//     launch of the same id with another ctx, an older Cmd's still-live ctx would cancel the new
//     attempt: give each command its own run id, or its own ctx.
//   - If nerved is down, nothing can reap the run: Wait then waits for the pipe's writers as os/exec
//     does, and the supervisor, killed, no longer passes signals on.
//   - Between ctx being done and the supervisor's Contain, the cancel finds no run (or the previous
//     attempt); os/exec's kill of the supervisor then ends the launch: a supervisor that dies before
//     its Contain leaves no run, one that dies after it has its run reaped by nerved.
//
// # Why over the nervectl command line, in pure Go
//
// The package runs nervectl and reads its --json output (receipts, status); it has no cgo and no
// dependency outside the standard library:
//
//   - an engine needs no C toolchain and stays a static, cross-compilable Go binary;
//   - the command line is nerve's stable surface for engines (its verbs, exit codes and JSON are
//     documented in nervectl(1) and docs/dbus-api.md), and nervectl launch --wait already is the
//     supervisor that ties a run to its engine;
//   - there is no nerve C library to bind to yet, and speaking D-Bus from Go would need a D-Bus
//     implementation outside the standard library.
//
// Errors of nerved reach Go as *Error, which carries the bus error's name
// (org.nerve.Lifecycle1.Error.*, as nervectl prints it in brackets), its message and nervectl's
// exit code.
package nerve
