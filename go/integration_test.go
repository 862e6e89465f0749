// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build nerve_integration

// The package against a real nerved and a real systemd user manager: tests/go/with-nerved.sh runs
// this test binary (built with -tags nerve_integration) inside tests/harness/with-user-manager.sh,
// with its own nerved on a temporary runs folder; ctest -R '^go\.' runs it. Without that setting it
// fails, saying so: an integration test that cannot reach nerved has tested nothing.
package nerve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nerve.dev/nerve"
)

// The environment tests/go/with-nerved.sh sets.
const (
	envNervectl = "NERVE_TEST_NERVECTL"  // the nervectl of the build folder
	envGoEngine = "NERVE_TEST_GO_ENGINE" // examples/go-engine, built
	envEngine   = "NERVE_TEST_ENGINE"    // set: this binary is the helper engine (engineMain)
	// Set to 1: also run the reference with plain exec.CommandContext (20 s).
	envReference = "NERVE_TEST_REFERENCE"
)

func TestMain(m *testing.M) {
	if os.Getenv(envEngine) != "" {
		os.Exit(engineMain())
	}
	nerve.Nervectl = os.Getenv(envNervectl)
	if nerve.Nervectl == "" || os.Getenv("NERVE_TEST_PRIVATE_MANAGER") == "" {
		fmt.Fprintf(os.Stderr, "%s or NERVE_TEST_PRIVATE_MANAGER is not set: this is not tests/go/with-nerved.sh under "+
			"tests/harness/with-user-manager.sh. Run it with `ctest -R '^go\\.'`.\n", envNervectl)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// The engine's deadline in the seed's case: its context is done 200 ms into the command.
const seedDeadline = 200 * time.Millisecond

// deadlineCase is the seed's case (a Go engine's exec.CommandContext hang): a 200 ms deadline on
// `/bin/sh -c 'PRELUDE /bin/sleep 20 & wait'` with a bytes.Buffer as Stdout and Stderr. The orphaned
// sleep holds the pipe, so with os/exec alone Wait returns after 20 s
// (TestReferenceStdlib...). The shell writes the sleep's pid to a FIFO, and the deadline counts from
// then: a deadline that could pass before the escaper started would test nothing (and on a loaded
// machine nervectl, nerved and the shell together may take longer than 200 ms to get there).
// Returns how long Wait took after the context was done, Wait's error and the sleep's pid.
func deadlineCase(t *testing.T, prelude string, command func(ctx context.Context, name string, args ...string) *exec.Cmd) (time.Duration, error, int) {
	fifo := filepath.Join(t.TempDir(), "sleep.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := command(ctx, "/bin/sh", "-c", prelude+"/bin/sleep 20 & echo $! > '"+fifo+"'; wait")
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	if err := cmd.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	sleeper, early := awaitPid(t, fifo, waited)
	if sleeper <= 0 {
		t.Fatalf("the shell never wrote the sleep's pid (the command ended: %v; output %q): the escaper "+
			"did not start, and the test proves nothing", early, buf.String())
	}

	time.Sleep(seedDeadline) // the scenario's deadline, not a synchronisation
	cancel()
	done := time.Now()
	err := <-waited
	elapsed := time.Since(done)
	t.Logf("Wait returned %v after the context was done (err=%v); output: %q", elapsed, err, buf.String())
	return elapsed, err, sleeper
}

// awaitPid is the pid the command writes to FIFO: it waits for it up to 20 s, or until the command
// ends (WAITED, whose value it returns then, with pid 0).
func awaitPid(t *testing.T, fifo string, waited <-chan error) (int, error) {
	read := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // returns once the shell has written the pid and closed the FIFO
		read <- b
	}()
	unblock := func() { // a writer of our own ends the read, so that no goroutine is left behind
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	select {
	case b := <-read:
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid, nil
	case err := <-waited:
		unblock()
		return 0, err
	case <-time.After(20 * time.Second):
		unblock()
		return 0, errors.New("still running after 20 s")
	}
}

func TestSeed001ContextCancelReapsThePipeHoldingDescendant(t *testing.T) {
	elapsed, err, sleeper := deadlineCase(t, "", func(ctx context.Context, name string, args ...string) *exec.Cmd {
		return nerve.CommandContext(ctx, "seed-001", name, args...)
	})
	const bound = 8 * time.Second
	if elapsed > bound {
		t.Errorf("Wait blocked %v after cancel (bound %v): pipe-holding descendant not reaped", elapsed, bound)
	}
	if err == nil {
		t.Errorf("expected non-nil error from the cancelled command")
	}
	if !gone(t, sleeper, time.Second) {
		t.Errorf("the sleep (pid %d) outlived its run: %s", sleeper, describe(sleeper))
	}
	r := reap(t, "seed-001")
	if r.Outcome != nerve.OutcomeComplete || r.Cause != "cancelled" {
		t.Errorf("the receipt is not that of a complete cancel: %+v", r)
	}
}

// The cancel is nerve's SIGKILL of the whole run at once, not a reap with the run's grace (10 s by
// default) after os/exec killed the supervisor: a pipe holder that ignores SIGTERM goes just as fast.
func TestCancelKillsAPipeHolderThatIgnoresTermAtOnce(t *testing.T) {
	elapsed, err, sleeper := deadlineCase(t, "trap '' TERM; ", func(ctx context.Context, name string, args ...string) *exec.Cmd {
		return nerve.CommandContext(ctx, "ignores-term", name, args...)
	})
	if elapsed > 3*time.Second || err == nil {
		t.Errorf("Wait = %v %v after the context was done; want an error well within the 10 s grace", err, elapsed)
	}
	if !gone(t, sleeper, time.Second) {
		t.Errorf("the TERM-ignoring sleep (pid %d) outlived its run: %s", sleeper, describe(sleeper))
	}
	if r := reap(t, "ignores-term"); r.Outcome != nerve.OutcomeComplete || r.Cause != "cancelled" {
		t.Errorf("receipt %+v, want complete, cause cancelled", r)
	}
}

// The same case with the standard library's exec.CommandContext, the seed's failure: Wait waits
// for the sleep's whole 20 s (measured here: 19.8 s after the deadline). It takes 20 s, so it runs
// only with NERVE_TEST_REFERENCE=1.
func TestReferenceStdlibCommandContextBlocksForTheDescendantsLifetime(t *testing.T) {
	if os.Getenv(envReference) != "1" {
		t.Skipf("the reference takes 20 s (measured: Wait returned 19.8 s after the deadline); set %s=1 to run it", envReference)
	}
	elapsed, err, sleeper := deadlineCase(t, "", exec.CommandContext)
	syscall.Kill(sleeper, syscall.SIGKILL) // nothing else would end it
	if elapsed < 8*time.Second || err == nil {
		t.Errorf("exec.CommandContext returned %v after the deadline (err=%v): the seed's failure did not reproduce", elapsed, err)
	}
}

// Why launch --wait: a command that ends by itself and leaves a pipe holder behind. Its run is
// reaped when it ends, so Run returns with its exit status at once, and nothing is left.
func TestACommandThatEndsLeavesNothingAndRunReturnsItsExitStatus(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	cmd := nerve.CommandContext(context.Background(), "ends-by-itself", "/bin/sh", "-c",
		"/bin/sleep 30 & echo $! > '"+pidFile+"'; echo done; exit 3")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	t.Logf("Run returned in %v (err=%v)", elapsed, err)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Run = %v, want exit status 3; output: %q", err, buf.String())
	}
	if buf.String() != "done\n" {
		t.Errorf("output %q, want \"done\\n\"", buf.String())
	}
	if elapsed > 8*time.Second {
		t.Errorf("Run took %v: the sleep's pipe was not closed by the reap at the command's end", elapsed)
	}
	sleeper := readPid(t, pidFile)
	if sleeper <= 0 || !gone(t, sleeper, time.Second) {
		t.Errorf("the sleep (pid %d) outlived its run: %s", sleeper, describe(sleeper))
	}
	if r := reap(t, "ends-by-itself"); !r.Empty() || r.Cause != "exited" {
		t.Errorf("receipt %+v, want complete or no_scope, cause exited", r)
	}
}

// A helper engine (this binary, envEngine set) runs a command under nerve and is killed -9 mid-run:
// the run ends with it, the command's escaper too.
func TestTheRunEndsWithItsEngineKilledMidRun(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	engine := exec.Command(os.Args[0])
	engine.Env = append(os.Environ(), envEngine+"=engine-killed", "NERVE_TEST_PID_FILE="+pidFile)
	out, err := engine.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	engine.Stderr = os.Stderr
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	defer engine.Process.Kill()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if l != "started\n" {
			t.Fatalf("the engine's command said %q, not \"started\"", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the engine's command did not start within 20 s")
	}
	sleeper := readPid(t, pidFile)
	if sleeper <= 0 || gone(t, sleeper, 0) {
		t.Fatalf("the escaper (pid %d) is not running before the engine is killed", sleeper)
	}
	if s, err := nerve.Status(context.Background(), "engine-killed"); err != nil || !s.Running() {
		t.Fatalf("the run is not running before the engine is killed: %+v, %v", s, err)
	} else if !contains(s.Live.PIDs, sleeper) {
		t.Errorf("the escaper %d is not among the run's processes %v", sleeper, s.Live.PIDs)
	}

	if err := engine.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	engine.Wait()
	// The supervisor sees its engine go (pidfd) and closes its bus connection, the run's owner;
	// nerved reaps the run with its grace, and the sleep goes at the SIGTERM.
	if !gone(t, sleeper, 20*time.Second) {
		t.Fatalf("the escaper (pid %d) outlived its killed engine: %s", sleeper, describe(sleeper))
	}
	if r := reap(t, "engine-killed"); r.Outcome != nerve.OutcomeComplete || r.Cause != "owner_gone" {
		t.Errorf("receipt %+v, want complete, cause owner_gone", r)
	}
}

// The helper engine: runs NERVE_TEST_ENGINE's run, a shell that starts an escaper, writes its pid,
// says "started" on the engine's stdout and waits; the test kills the engine meanwhile.
func engineMain() int {
	nerve.Nervectl = os.Getenv(envNervectl)
	cmd := nerve.CommandContext(context.Background(), os.Getenv(envEngine), "/bin/sh", "-c",
		"/bin/sleep 30 & echo $! > \"$NERVE_TEST_PID_FILE\"; echo started; wait")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		return 1
	}
	return 0
}

// Status and Reap of a running run: the record and its live processes, then the receipt of a reap
// that the command's SIGTERM ends; and nerved's errors by their names.
func TestStatusAndReapOfARunningRun(t *testing.T) {
	cmd := nerve.CommandContext(context.Background(), "status-reap", "/bin/sh", "-c", "echo ready; exec /bin/sleep 30")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("the command said %q", l)
	}
	s, err := nerve.Status(context.Background(), "status-reap")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Running() || s.Record.Run != "status-reap" || s.Record.Attempt != 1 || s.Receipt != nil ||
		len(s.Live.PIDs) != 1 || s.Record.LeaderPID != s.Live.PIDs[0] || s.Record.Owner.Kind != "bus" {
		t.Errorf("status of a running run: %+v", s)
	}
	r, err := nerve.Reap(context.Background(), "status-reap", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != nerve.OutcomeComplete || r.Cause != "reaped" || r.Killed || r.Unit != s.Record.Unit ||
		r.InvocationID != s.Record.InvocationID || r.Usage == nil {
		t.Errorf("receipt %+v", r)
	}
	if cpu, ok := r.Usage.CPU(); !ok || cpu <= 0 {
		t.Errorf("no CPU time in the receipt's usage: %+v", *r.Usage)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("Wait = %v, want exit status 143 (128 + SIGTERM, the reap's)", err)
	}
	if s, err = nerve.Status(context.Background(), "status-reap"); err != nil || s.Running() ||
		s.Record.State != "reaped" || s.Receipt == nil || s.Receipt.Outcome != nerve.OutcomeComplete {
		t.Errorf("status of the reaped run: %+v, %v", s, err)
	}
	if again := reap(t, "status-reap"); again.ReapedAt != r.ReapedAt {
		t.Errorf("a second reap is not the first's receipt: %+v", again)
	}

	_, err = nerve.Status(context.Background(), "no-such-run")
	if !nerve.HasName(err, nerve.ErrNoSuchRun) || !strings.Contains(err.Error(), "no-such-run") {
		t.Errorf("status of an unknown run: %v, want %s naming it", err, nerve.ErrNoSuchRun)
	}
	_, err = nerve.Reap(context.Background(), "no-such-run", 0)
	if !nerve.HasName(err, nerve.ErrNoSuchRun) {
		t.Errorf("reap of an unknown run: %v, want %s", err, nerve.ErrNoSuchRun)
	}
}

// A command that cannot be contained does not run: a run id that is final already.
func TestACommandThatCannotBeContainedDoesNotRun(t *testing.T) {
	if err := nerve.CommandContext(context.Background(), "final-run", "/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := nerve.CommandContext(context.Background(), "final-run", "/bin/touch", marker)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 125 || !strings.Contains(stderr.String(), nerve.ErrRunFinished) {
		t.Errorf("relaunch of a reaped run: %v, stderr %q; want exit 125 and %s", err, stderr.String(), nerve.ErrRunFinished)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran although it could not be contained")
	}
	if err := nerve.Forget(context.Background(), "final-run"); err != nil {
		t.Errorf("forget: %v", err)
	}
	if err := nerve.CommandContext(context.Background(), "final-run", "/bin/touch", marker).Run(); err != nil {
		t.Errorf("launch after forget: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command did not run after forget: %v", err)
	}
}

// Start with a context that is done already runs nothing and says why, as os/exec's Start does.
func TestStartOnADoneContextRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := nerve.CommandContext(ctx, "never-started", "/bin/true").Start()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Start = %v, want context.Canceled", err)
	}
	if _, err := nerve.Status(context.Background(), "never-started"); !nerve.HasName(err, nerve.ErrNoSuchRun) {
		t.Errorf("a run was made: %v", err)
	}
}

// examples/go-engine as a user runs it: a step with a deadline whose background process holds the
// pipe ends at the deadline, its receipt says cancelled, and nothing is left. The deadline (3 s) counts
// from the engine's start, which the test cannot hold back until the step has started; it is many
// times what nervectl, nerved and the shell take to get there on a loaded machine (about 150 ms).
func TestTheExampleEngine(t *testing.T) {
	const deadline = 3 * time.Second
	engine := os.Getenv(envGoEngine)
	if engine == "" {
		t.Fatalf("%s is not set: tests/go/with-nerved.sh names the built examples/go-engine", envGoEngine)
	}
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	cmd := exec.Command(engine, "-timeout", deadline.String(), "example-step", "--", "/bin/sh", "-c",
		"/bin/sleep 30 & echo $! > '"+pidFile+"'; echo working; wait")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(nerve.Nervectl)+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	elapsed := time.Since(start)
	t.Logf("go-engine took %v: %s", elapsed, out)
	if err != nil {
		t.Fatalf("go-engine: %v; stderr %q", err, stderr.String())
	}
	var s struct {
		ExitCode int           `json:"exit_code"`
		Output   []string      `json:"output"`
		Receipt  nerve.Receipt `json:"receipt"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("go-engine's summary is not JSON: %v", err)
	}
	if len(s.Output) != 1 || s.Output[0] != "working" {
		t.Fatalf("the step did not say it was working (output %q): it did not start within the %v deadline, "+
			"and the test proves nothing", s.Output, deadline)
	}
	// The supervisor's own status (128 + SIGKILL), or -1 when os/exec's kill of it came first.
	if elapsed > deadline+8*time.Second || (s.ExitCode != 128+int(syscall.SIGKILL) && s.ExitCode != -1) ||
		s.Receipt.Cause != "cancelled" || s.Receipt.Outcome != nerve.OutcomeComplete {
		t.Errorf("summary %+v after %v", s, elapsed)
	}
	if sleeper := readPid(t, pidFile); sleeper <= 0 || !gone(t, sleeper, time.Second) {
		t.Errorf("the step's sleep (pid %d) outlived its run", sleeper)
	}
}

// reap is nerve.Reap of RUN, which must give a final receipt.
func reap(t *testing.T, run string) nerve.Receipt {
	t.Helper()
	r, err := nerve.Reap(context.Background(), run, 0)
	if err != nil {
		t.Fatalf("reap %s: %v", run, err)
	}
	return r
}

// readPid is the pid in FILE, 0 when there is none.
func readPid(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// gone waits up to WITHIN for PID to end (its pidfd becomes readable; a zombie has ended).
func gone(t *testing.T, pid int, within time.Duration) bool {
	fd, _, errno := syscall.Syscall(434 /* pidfd_open */, uintptr(pid), 0, 0)
	if errno == syscall.ESRCH {
		return true
	}
	if errno != 0 {
		t.Fatalf("pidfd_open(%d): %v", pid, errno)
	}
	defer syscall.Close(int(fd))
	deadline := time.Now().Add(within)
	for {
		var set syscall.FdSet
		set.Bits[fd/64] |= 1 << (fd % 64)
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		tv := syscall.NsecToTimeval(left.Nanoseconds())
		n, err := syscall.Select(int(fd)+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("select on the pidfd of %d: %v", pid, err)
		}
		return n > 0
	}
}

// describe is what /proc says of PID, for a failure message.
func describe(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	return strings.TrimSpace(string(b))
}

func contains(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}
