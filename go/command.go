// SPDX-License-Identifier: LGPL-2.1-or-later

package nerve

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// CancelTimeout bounds the cancel that the watcher of a CommandContext runs when its ctx is done;
// past it the supervisor is killed anyway (its death makes nerved reap the run with the run's grace).
var CancelTimeout = 30 * time.Second

// Options are the run controls of CommandContextWith (nervectl launch's options); the zero value
// is nervectl's defaults.
type Options struct {
	// Grace is the time between SIGTERM and SIGKILL when the run is reaped after its command ended
	// or its engine died (0: nerved's default, 10 s). Cancellation through ctx does not wait for it.
	Grace time.Duration
	// Timeout ends the whole run after this long (cause timeout); 0: none.
	Timeout time.Duration
	// Properties are unit properties of the scope, KEY=VALUE as systemd-run -p takes them
	// (MemoryMax=4G, CPUQuota=200%, TasksMax=64, ...).
	Properties []string
	// Slice is the slice the scope goes into ("": nerved's, nerve.slice).
	Slice string
}

// CommandContext is exec.CommandContext(ctx, name, args...) with the command run as nerve run RUN:
// `nervectl launch --wait RUN -- NAME ARGS...`. When ctx is done, the whole run is cancelled with
// SIGKILL (every process of its scope, however it escaped), so Wait returns promptly even when a
// descendant held the output pipe; the run also ends when the command does, and when the engine
// dies. The package documentation says how, and what differs from a plain exec.Cmd.
func CommandContext(ctx context.Context, run, name string, args ...string) *exec.Cmd {
	return CommandContextWith(ctx, run, Options{}, name, args...)
}

// CommandContextWith is CommandContext with run controls.
func CommandContextWith(ctx context.Context, run string, opts Options, name string, args ...string) *exec.Cmd {
	argv := append([]string{"launch", "--wait"}, opts.args()...)
	argv = append(append(argv, run, "--", name), args...)
	if ctx.Done() == nil {
		// A context that is never done (context.Background): nothing to watch.
		return exec.CommandContext(ctx, Nervectl, argv...)
	}
	rc := &runContext{Context: ctx, done: make(chan struct{})}
	cmd := exec.CommandContext(rc, Nervectl, argv...)
	select {
	case <-ctx.Done():
		// Already done: Start returns ctx.Err() and runs nothing, as os/exec's does.
		close(rc.done)
		return cmd
	default:
	}
	stop := make(chan struct{})
	go watch(ctx, run, rc.done, stop)
	// The watcher must not keep cmd alive: it knows only the run id and its channels, and stops
	// once cmd is unreachable (no Wait is coming any more).
	runtime.SetFinalizer(cmd, func(*exec.Cmd) { close(stop) })
	return cmd
}

// watch cancels RUN with SIGKILL when ctx is done, then lets the *exec.Cmd see its context done
// (closes done); it ends without doing anything when STOP closes first.
func watch(ctx context.Context, run string, done chan<- struct{}, stop <-chan struct{}) {
	select {
	case <-stop:
		return
	case <-ctx.Done():
	}
	bounded, cancel := context.WithTimeout(context.Background(), CancelTimeout)
	// Every process of the scope at once, as os/exec's Process.Kill is for one; the run's own grace
	// bounds only what SIGKILL leaves (nothing, unless the kernel is stuck). A run that has a final
	// receipt already (its command ended) is left as it is; a run not contained yet is not there.
	_, _ = Cancel(bounded, run, syscall.SIGKILL, 0)
	cancel()
	close(done)
}

func (o Options) args() []string {
	var a []string
	if o.Grace > 0 {
		a = append(a, "--grace", durationArg(o.Grace))
	}
	if o.Timeout > 0 {
		a = append(a, "--timeout", durationArg(o.Timeout))
	}
	for _, p := range o.Properties {
		a = append(a, "--property", p)
	}
	if o.Slice != "" {
		a = append(a, "--slice", o.Slice)
	}
	return a
}

// runContext is the context the *exec.Cmd is made with: the engine's ctx, except that it is done
// only once the watcher has cancelled the run (done closed), so os/exec's own kill of the
// supervisor comes after nerve's SIGKILL of the whole run, never instead of it.
type runContext struct {
	context.Context
	done chan struct{}
}

func (c *runContext) Done() <-chan struct{} { return c.done }

func (c *runContext) Err() error {
	select {
	case <-c.done:
		return c.Context.Err()
	default:
		return nil
	}
}
