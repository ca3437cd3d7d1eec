package cli

import (
	"errors"
	"fmt"
	"io"
)

// A command returns its failure as an error; [Run] prints it once, as
// "toolport COMMAND: error", and turns it into the exit code. A plain error
// ends with ExitFailure.

// exitError is a failure that ends with another code than ExitFailure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a failure of the command line or the configuration it
// reads: the command ends with ExitUsage.
func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

// exitCode ends a command with a code and nothing more to print: the reason
// is already shown (the flag package prints its own errors and help).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// subcommandError is printed as "toolport COMMAND SUB: error".
type subcommandError struct {
	name string // "playlist list"
	err  error
}

func (e *subcommandError) Error() string { return e.err.Error() }
func (e *subcommandError) Unwrap() error { return e.err }

// inSubcommand names the subcommand err came from, unless it is nil or an
// exitCode (nothing to print).
func inSubcommand(name string, err error) error {
	var code exitCode
	if err == nil || errors.As(err, &code) {
		return err
	}
	return &subcommandError{name: name, err: err}
}

// plainError is printed as "toolport: error", without the command's name,
// as commands printed failures of the shared registry before.
type plainError struct{ err error }

func (e plainError) Error() string { return e.err.Error() }
func (e plainError) Unwrap() error { return e.err }

// report prints err, a command's result, once and returns its exit code.
func report(w io.Writer, command string, err error) int {
	if err == nil {
		return ExitOK
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	exit := ExitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		exit = ee.code
	}
	var plain plainError
	var sub *subcommandError
	switch {
	case errors.As(err, &plain):
		fmt.Fprintf(w, "toolport: %v\n", err)
	case errors.As(err, &sub):
		fmt.Fprintf(w, "toolport %s: %v\n", sub.name, err)
	default:
		fmt.Fprintf(w, "toolport %s: %v\n", command, err)
	}
	return exit
}
