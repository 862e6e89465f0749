// SPDX-License-Identifier: LGPL-2.1-or-later

package nerve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"syscall"
	"time"
)

// Outcomes of a reap (Receipt.Outcome; docs/dbus-api.md, "receipt.json and outcomes").
const (
	OutcomeComplete     = "complete"      // the scope was stopped and its cgroup confirmed empty
	OutcomeNoScope      = "no_scope"      // there was nothing left to stop
	OutcomeRefused      = "refused"       // the unit or cgroup belongs to something else now; nothing was touched
	OutcomePendingRetry = "pending_retry" // not confirmed empty yet; nerved keeps retrying (not final)
)

// Receipt is a run's receipt.json: how its reap went, why the run ended and what it used.
type Receipt struct {
	Version      int    `json:"version"`
	Run          string `json:"run"`
	Attempt      uint   `json:"attempt"`
	Unit         string `json:"unit"`
	InvocationID string `json:"invocation_id"`
	Outcome      string `json:"outcome"`
	Error        string `json:"error"`         // "" for complete; else the reason
	Killed       bool   `json:"killed"`        // processes were left after the grace and were SIGKILLed
	DurationUsec uint64 `json:"duration_usec"` // how long the reap took
	ReapedAt     string `json:"reaped_at"`     // RFC 3339, UTC
	// Why the run ended: exited, cancelled, timeout, oom, owner_gone, relaunched, reconciled,
	// reaped; "" in receipts written before receipts had a cause.
	Cause      string `json:"cause"`
	Usage      *Usage `json:"usage"`       // nil when nothing could be read
	UsageFinal bool   `json:"usage_final"` // Usage was read after the cgroup emptied (exact), else a lower bound
}

// Final says whether the outcome is final (everything but pending_retry).
func (r Receipt) Final() bool { return r.Outcome != OutcomePendingRetry }

// Empty says whether the run is confirmed to have no process left: complete or no_scope.
func (r Receipt) Empty() bool { return r.Outcome == OutcomeComplete || r.Outcome == OutcomeNoScope }

// Duration is how long the reap took.
func (r Receipt) Duration() time.Duration { return time.Duration(r.DurationUsec) * time.Microsecond }

// Usage is what a run used, read from its cgroup before it went. A figure the host's kernel does
// not offer in the run's cgroup (no memory, pids or io controller there) is nil, never 0.
type Usage struct {
	CPUUsageUsec    *uint64 `json:"cpu_usage_usec"`
	CPUUserUsec     *uint64 `json:"cpu_user_usec"`
	CPUSystemUsec   *uint64 `json:"cpu_system_usec"`
	MemoryPeakBytes *uint64 `json:"memory_peak_bytes"`
	TasksPeak       *uint64 `json:"tasks_peak"`
	IOReadBytes     *uint64 `json:"io_read_bytes"`
	IOWriteBytes    *uint64 `json:"io_write_bytes"`
	OOMKills        *uint64 `json:"oom_kills"`
}

// CPU is the CPU time the run used, and whether the host told it.
func (u *Usage) CPU() (time.Duration, bool) {
	if u == nil || u.CPUUsageUsec == nil {
		return 0, false
	}
	return time.Duration(*u.CPUUsageUsec) * time.Microsecond, true
}

// Owner is whom a run belongs to: when the owner goes, nerved reaps the run.
type Owner struct {
	Kind      string `json:"kind"`       // process, bus or none
	PID       int    `json:"pid"`        // process owners
	StartTime uint64 `json:"start_time"` // process owners: field 22 of /proc/PID/stat
	Name      string `json:"name"`       // bus owners: the unique name (:1.42)
}

// Record is a run's lifecycle.json (docs/dbus-api.md, "lifecycle.json fields").
type Record struct {
	Version         int      `json:"version"`
	Run             string   `json:"run"`
	Attempt         uint     `json:"attempt"`
	Unit            string   `json:"unit"`
	Nonce           string   `json:"nonce"`
	BootID          string   `json:"boot_id"`
	InvocationID    string   `json:"invocation_id"`
	Cgroup          string   `json:"cgroup"`
	CgroupID        uint64   `json:"cgroup_id"`
	State           string   `json:"state"` // launching, running, failed, reaping, reaped
	LeaderPID       int      `json:"leader_pid"`
	LeaderStartTime uint64   `json:"leader_start_time"`
	ReapOnExit      bool     `json:"reap_on_exit"`
	GraceUsec       uint64   `json:"grace_usec"`
	Keep            bool     `json:"keep"`
	Owner           Owner    `json:"owner"`
	Properties      []string `json:"properties"`
	Slice           string   `json:"slice"`
	TimeoutUsec     uint64   `json:"timeout_usec"`
	Parent          string   `json:"parent"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

// Live is the run's scope as the user manager (or, when it is late, the cgroup tree) sees it now.
type Live struct {
	Known       bool   `json:"known"`        // the recorded unit is loaded
	ActiveState string `json:"active_state"` // its ActiveState, "" when not known
	Ours        bool   `json:"ours"`         // its InvocationID is the recorded one
	Populated   bool   `json:"populated"`    // the recorded cgroup still holds processes
	PIDs        []int  `json:"pids"`         // the processes in it
	Source      string `json:"source"`       // systemd, cgroup tree or none
	Unknown     bool   `json:"unknown"`      // neither systemd in time nor the cgroup tree could tell
	Error       string `json:"error"`        // why systemd did not give the answer, when it did not
}

// RunStatus is `nervectl status --json`: the record, the live state and, once reaped, the receipt.
type RunStatus struct {
	Record       Record   `json:"record"`
	Receipt      *Receipt `json:"receipt"`       // nil before the first reap
	ReceiptError string   `json:"receipt_error"` // why receipt.json could not be read, when it could not
	Live         Live     `json:"live"`
}

// Running says what `nervectl status` exits 0 for: the record says running and the scope is live,
// ours and active.
func (s RunStatus) Running() bool {
	return s.Record.State == "running" && s.Live.Known && s.Live.Ours && s.Live.ActiveState == "active"
}

// Reap stops RUN's scope (SIGTERM to every process, SIGKILL after GRACE; 0: the run's own grace),
// waits until its cgroup is confirmed empty and returns the receipt. A run that already has a final
// receipt gives that receipt and nothing is done. The outcome is the result, not an error: refused
// and pending_retry come back as receipts (see Receipt.Empty).
func Reap(ctx context.Context, run string, grace time.Duration) (Receipt, error) {
	args := []string{"--json"}
	if grace > 0 {
		args = append(args, "--grace", durationArg(grace))
	}
	return receiptOf(ctx, "reap", run, args)
}

// Cancel is Reap with SIG as the first signal instead of SIGTERM (syscall.SIGKILL: at once); the
// receipt's cause is cancelled.
func Cancel(ctx context.Context, run string, sig syscall.Signal, grace time.Duration) (Receipt, error) {
	args := []string{"--json", "--signal", strconv.Itoa(int(sig))}
	if grace > 0 {
		args = append(args, "--grace", durationArg(grace))
	}
	return receiptOf(ctx, "cancel", run, args)
}

// receiptOf runs a verb that prints a receipt: printed, it is the answer whatever the exit code
// (refused exits 1, pending_retry 75); not printed, the call failed.
func receiptOf(ctx context.Context, verb, run string, args []string) (Receipt, error) {
	out, _, cerr := call(ctx, verb, run, args...)
	var r Receipt
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &r); err != nil {
			return Receipt{}, fmt.Errorf("nervectl %s %s: its receipt is not JSON (%v): %q", verb, run, err, out)
		}
		return r, nil
	}
	if cerr != nil {
		return Receipt{}, cerr
	}
	return Receipt{}, &Error{Verb: verb, Run: run, Message: "printed no receipt", ExitCode: 0}
}

// Status is RUN's record, live state and receipt (nervectl status --json). A run nerved does not
// know is an *Error named ErrNoSuchRun.
func Status(ctx context.Context, run string) (RunStatus, error) {
	out, _, cerr := call(ctx, "status", run, "--json")
	var s RunStatus
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &s); err != nil {
			return RunStatus{}, fmt.Errorf("nervectl status %s: its answer is not JSON (%v): %q", run, err, out)
		}
		return s, nil
	}
	if cerr != nil {
		return RunStatus{}, cerr
	}
	return RunStatus{}, &Error{Verb: "status", Run: run, Message: "printed nothing", ExitCode: 0}
}

// Forget removes the files of RUN, which must be reaped, so that its id can be launched again.
func Forget(ctx context.Context, run string) error {
	if _, _, err := call(ctx, "forget", run); err != nil {
		return err
	}
	return nil
}
