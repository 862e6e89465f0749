// SPDX-License-Identifier: LGPL-2.1-or-later

package nerve

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// nervectl's stderr for a nerved error, as lib/ctl/bus_error.cpp prints it.
func TestAnErrorOfNervedCarriesTheBusErrorsNameAndMessage(t *testing.T) {
	e := parseError("reap", "r1", 1,
		"nervectl reap: no record of run 'r1' [org.nerve.Lifecycle1.Error.NoSuchRun]\n")
	if e.Name != ErrNoSuchRun || e.Message != "no record of run 'r1'" || e.ExitCode != 1 || e.Unavailable() {
		t.Fatalf("parsed %+v", e)
	}
	if got, want := e.Error(), "nervectl reap r1: no record of run 'r1' ["+ErrNoSuchRun+"]"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("engine: %w", e)
	if !HasName(wrapped, ErrNoSuchRun) || HasName(wrapped, ErrRunFinished) || HasName(errors.New("x"), ErrNoSuchRun) {
		t.Errorf("HasName does not tell the name through wrapping")
	}
}

func TestALaunchErrorIsReadFromTheLineThatNamesIt(t *testing.T) {
	e := parseError("launch", "r1", 125, "nervectl launch: run 'r1' is final (reaped) [org.nerve.Lifecycle1.Error.RunFinished]\n"+
		"nervectl launch: the command was not started.\n")
	if e.Name != ErrRunFinished || e.Message != "run 'r1' is final (reaped)" {
		t.Fatalf("parsed %+v", e)
	}
}

func TestAnUnreachableNervedIsUnavailableEvenWithoutAName(t *testing.T) {
	e := parseError("status", "r1", 69, "nervectl status: nerved is not running (no owner of org.nerve.Lifecycle1 on "+
		"the session bus). Start it with 'systemctl --user start nerved' or run 'nerved &'.\n")
	if e.Name != "" || !e.Unavailable() || e.Message == "" {
		t.Fatalf("parsed %+v", e)
	}
	e = parseError("status", "r1", 69, "nervectl status: cannot reach the session bus (DBUS_SESSION_BUS_ADDRESS=unix:path=/x): "+
		"Failed to open bus (No such file or directory) [org.freedesktop.DBus.Error.FileNotFound]. nerve needs a user "+
		"session with a session bus.\n")
	if !e.Unavailable() || e.Name != "org.freedesktop.DBus.Error.FileNotFound" ||
		e.Message != "cannot reach the session bus (DBUS_SESSION_BUS_ADDRESS=unix:path=/x): Failed to open bus (No such "+
			"file or directory). nerve needs a user session with a session bus." {
		t.Fatalf("parsed %+v", e)
	}
	if e = parseError("status", "r1", 3, ""); e.Message == "" {
		t.Fatalf("an empty stderr gives no message: %+v", e)
	}
}

// A receipt of a host without the memory, pids and io controllers: those figures are null, never 0.
func TestAFigureTheHostDoesNotOfferIsNil(t *testing.T) {
	text := `{"version":1,"run":"r1","attempt":2,"unit":"nerve-r1-0123456789abcdef.scope",
	  "invocation_id":"0123456789abcdef0123456789abcdef","outcome":"complete","error":"","killed":true,
	  "duration_usec":12500,"reaped_at":"2026-12-02T01:00:00.000Z","cause":"cancelled",
	  "usage":{"cpu_usage_usec":1500,"cpu_user_usec":1000,"cpu_system_usec":500,"memory_peak_bytes":null,
	           "tasks_peak":null,"io_read_bytes":null,"io_write_bytes":null,"oom_kills":null},"usage_final":true}`
	var r Receipt
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Final() || !r.Empty() || r.Cause != "cancelled" || !r.Killed || r.Attempt != 2 || r.Duration() != 12500*time.Microsecond {
		t.Errorf("decoded %+v", r)
	}
	if cpu, ok := r.Usage.CPU(); !ok || cpu != 1500*time.Microsecond {
		t.Errorf("CPU() = %v, %v", cpu, ok)
	}
	if r.Usage.MemoryPeakBytes != nil || r.Usage.TasksPeak != nil || r.Usage.OOMKills != nil {
		t.Errorf("a null figure decoded as a number: %+v", *r.Usage)
	}
	var old Receipt // written before receipts had a cause or usage
	if err := json.Unmarshal([]byte(`{"outcome":"pending_retry","cause":null,"usage":null}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Final() || old.Cause != "" || old.Usage != nil {
		t.Errorf("decoded %+v", old)
	}
	if _, ok := old.Usage.CPU(); ok {
		t.Errorf("no usage, yet a CPU time")
	}
}

func TestDurationsGoToNervectlInMicroseconds(t *testing.T) {
	for d, want := range map[time.Duration]string{500 * time.Millisecond: "500000us", time.Nanosecond: "1us", 2 * time.Second: "2000000us"} {
		if got := durationArg(d); got != want {
			t.Errorf("durationArg(%v) = %q, want %q", d, got, want)
		}
	}
	got := Options{Grace: time.Second, Timeout: time.Minute, Properties: []string{"TasksMax=8"}, Slice: "x.slice"}.args()
	want := []string{"--grace", "1000000us", "--timeout", "60000000us", "--property", "TasksMax=8", "--slice", "x.slice"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("args() = %v, want %v", got, want)
	}
}
