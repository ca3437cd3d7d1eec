package exectool

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
)

// Main is the whole body of an ikigai executable's main: it loads the
// configuration from getenv (the main's os.Getenv: only mains read the
// environment), declares the tool with it, runs the command on the process's
// streams and exits. declare builds the tool from the configuration.
func Main(name, help string, getenv func(string) string, declare func(*config.Config) (*tool.Tool, error)) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, name, help, getenv, declare)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, name, help string, getenv func(string) string, declare func(*config.Config) (*tool.Tool, error)) int {
	home, _ := os.UserHomeDir()
	cfg, err := config.New(getenv, home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(os.Stderr, "%s: warning: %s\n", name, w)
	}
	t, err := declare(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	reg := tool.NewRegistry(tool.WithSecrets(cfg.Secrets()...))
	if err := reg.Register(t); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	c := &Command{Registry: reg, Tool: t.Name(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: cfg.Env, Help: help}
	return c.Run(ctx, os.Args[1:])
}
