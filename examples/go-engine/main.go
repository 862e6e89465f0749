// SPDX-License-Identifier: LGPL-2.1-or-later

// go-engine: a small workflow engine over nerve's Go package (nerve.dev/nerve). It runs one step as
// the nerve run RUN, with a deadline, collects the step's output in memory, and prints a JSON
// summary with the run's receipt: how it ended, what it used, and that nothing of it is left.
//
//	go-engine [-timeout DURATION] RUN -- CMD [ARG...]
//
// The step's output goes to a bytes.Buffer, so os/exec reads it through a pipe: with plain
// exec.CommandContext a background process of the step that holds the pipe would keep Run from
// returning until it ends (sh -c 'sleep 20 & wait' under a 200 ms deadline: 20 s). Under nerve the
// deadline cancels the whole run, every process of it, and Run returns at once.
//
// Exit status: 0 when the step ran and its run is confirmed empty (whatever the step's own exit
// status, which the summary gives), 1 otherwise, 2 for a usage error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"nerve.dev/nerve"
)

type summary struct {
	Run      string         `json:"run"`
	ExitCode int            `json:"exit_code"` // the step's exit status (128+N after signal N); -1: none
	Error    string         `json:"error"`     // Run's error, "" when the step exited 0
	TookMs   int64          `json:"took_ms"`   // from Start to Run's return
	Output   []string       `json:"output"`    // the step's stdout and stderr, by line
	Receipt  *nerve.Receipt `json:"receipt"`   // the run's receipt; nil when nerved gave none
	ReapErr  string         `json:"reap_error,omitempty"`
}

func main() {
	timeout := flag.Duration("timeout", 0, "cancel the step (its whole run) after this long; 0: no deadline")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go-engine [-timeout DURATION] RUN -- CMD [ARG...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) < 3 || args[1] != "--" {
		flag.Usage()
		os.Exit(2)
	}
	run, argv := args[0], args[2:]

	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	os.Exit(step(ctx, run, argv))
}

// step runs ARGV as run RUN, reaps the run and prints the summary; returns the exit status.
func step(ctx context.Context, run string, argv []string) int {
	cmd := nerve.CommandContext(ctx, run, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	s := summary{Run: run, ExitCode: -1, TookMs: time.Since(start).Milliseconds(),
		Output: strings.Split(strings.TrimRight(out.String(), "\n"), "\n")}
	var exit *exec.ExitError
	if err == nil {
		s.ExitCode = 0
	} else {
		s.Error = err.Error()
		if errors.As(err, &exit) {
			s.ExitCode = exit.ExitCode()
		}
	}
	// The run has been reaped already (when the step ended, or by the cancel); Reap gives its receipt.
	status := 1
	if receipt, rerr := nerve.Reap(context.Background(), run, 0); rerr != nil {
		s.ReapErr = rerr.Error()
	} else {
		s.Receipt = &receipt
		if receipt.Empty() && s.ExitCode != 125 {
			status = 0
		}
	}
	line, _ := json.Marshal(s)
	fmt.Println(string(line))
	return status
}
