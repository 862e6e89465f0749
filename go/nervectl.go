// SPDX-License-Identifier: LGPL-2.1-or-later

package nerve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Nervectl is the nervectl program every call runs: a path, or a name looked up in PATH when the
// call is made. Set it before the first call (an engine that ships its own nerve, a test's build
// folder).
var Nervectl = "nervectl"

// The names of nerved's errors (docs/dbus-api.md, "Error names") that an engine may act on.
const (
	ErrInvalidRunID           = "org.nerve.Lifecycle1.Error.InvalidRunId"
	ErrInvalidArgument        = "org.nerve.Lifecycle1.Error.InvalidArgument"
	ErrInvalidProperty        = "org.nerve.Lifecycle1.Error.InvalidProperty"
	ErrNoSuchRun              = "org.nerve.Lifecycle1.Error.NoSuchRun"
	ErrRunFinished            = "org.nerve.Lifecycle1.Error.RunFinished"
	ErrRunBusy                = "org.nerve.Lifecycle1.Error.RunBusy"
	ErrRunNotFinished         = "org.nerve.Lifecycle1.Error.RunNotFinished"
	ErrRecordFailed           = "org.nerve.Lifecycle1.Error.RecordFailed"
	ErrScopeFailed            = "org.nerve.Lifecycle1.Error.ScopeFailed"
	ErrContainmentUnavailable = "org.nerve.Lifecycle1.Error.ContainmentUnavailable"
	ErrSealingUnavailable     = "org.nerve.Lifecycle1.Error.SealingUnavailable"
)

// nervectl's exit codes (nervectl(1), "EXIT STATUS") that this package tells apart.
const (
	exitUnavailable = 69  // nerved or the session bus cannot be reached, or did not answer in time
	exitNotLaunched = 125 // launch: the command was not started
)

// Error is a failed nervectl call: nerved's answer, or why nerved could not be reached.
type Error struct {
	Verb     string // the nervectl verb: "reap", "cancel", "status", "forget"
	Run      string // the run id it was called for
	Name     string // the D-Bus error's name (org.nerve.Lifecycle1.Error.*, org.freedesktop.DBus.Error.*), "" when nervectl named none
	Message  string // what nervectl said, without its "nervectl VERB: " prefix and the bracketed name
	ExitCode int    // nervectl's exit code; -1 when it did not run or was killed
}

func (e *Error) Error() string {
	s := fmt.Sprintf("nervectl %s %s: %s", e.Verb, e.Run, e.Message)
	if e.Name != "" {
		s += " [" + e.Name + "]"
	}
	return s
}

// Unavailable says that nerved or the session bus could not be reached or did not answer in time
// (nervectl's exit code 69): nothing was done, and the call may be made again.
func (e *Error) Unavailable() bool { return e.ExitCode == exitUnavailable }

// HasName says whether err is, or wraps, an *Error with the D-Bus error name NAME (ErrNoSuchRun, ...).
func HasName(err error, name string) bool {
	var e *Error
	return errors.As(err, &e) && e.Name == name
}

// A bus error name in brackets, as nervectl prints it after the message (and before the advice, for a
// bus that cannot be reached).
var bracketedName = regexp.MustCompile(`\s*\[((?:org|System)\.[A-Za-z0-9_.]+)\]`)

// parseError makes the *Error of a nervectl call that printed STDERR and exited with CODE: the first
// line that names a bus error, else the first line, each without nervectl's "nervectl VERB: ".
func parseError(verb, run string, code int, stderr string) *Error {
	e := &Error{Verb: verb, Run: run, ExitCode: code}
	prefix := "nervectl " + verb + ": "
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, strings.TrimPrefix(l, prefix))
		}
	}
	for _, l := range lines {
		if all := bracketedName.FindAllStringSubmatchIndex(l, -1); all != nil {
			m := all[len(all)-1]
			e.Name = l[m[2]:m[3]]
			e.Message = l[:m[0]] + l[m[1]:]
			return e
		}
	}
	if len(lines) > 0 {
		e.Message = lines[0]
	} else {
		e.Message = "exit status " + strconv.Itoa(code) + " and nothing on stderr"
	}
	return e
}

// call runs `nervectl VERB ARGS... RUN` and returns its standard output and exit code. A nervectl that
// cannot be started, or that ctx ended, is an *Error with ExitCode -1.
func call(ctx context.Context, verb, run string, args ...string) ([]byte, int, *Error) {
	argv := append([]string{verb}, args...)
	argv = append(argv, run)
	cmd := exec.CommandContext(ctx, Nervectl, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), 0, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return stdout.Bytes(), exit.ExitCode(), parseError(verb, run, exit.ExitCode(), stderr.String())
	}
	msg := err.Error()
	if ctx.Err() != nil {
		msg = "ended by its context (" + ctx.Err().Error() + "): " + msg
	}
	return nil, -1, &Error{Verb: verb, Run: run, Message: msg, ExitCode: -1}
}

// durationArg writes D as nervectl's options take it (systemd's syntax): whole microseconds.
func durationArg(d time.Duration) string {
	usec := d.Microseconds()
	if usec < 1 {
		usec = 1
	}
	return strconv.FormatInt(usec, 10) + "us"
}
