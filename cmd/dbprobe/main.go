// Command dbprobe measures what a database really delivers. This file only
// builds the command and maps its error to an exit code: 0 ok, 1 the run
// failed, 2 bad input, 128+N stopped by signal N (130 for Ctrl-C).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/experiment"
)

func main() {
	err := cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(exitCode(err))
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintln(os.Stderr, "dbprobe: "+msg)
	if code := experiment.InterruptExitCode(err); code != 0 {
		return code
	}
	if badinput.Is(err) || cli.IsUsageError(err) {
		return 2
	}
	return 1
}
