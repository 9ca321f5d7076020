package crawltest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/cli"
	"github.com/gentlecrawl/gentlecrawl/internal/hook"
)

// childArgs, when set in the environment, makes the test binary run the
// gentlecrawl command line instead of the tests (Main): the tests start
// the crawler as a real process, and kill it.
const childArgs = "GENTLECRAWL_TEST_CHILD_ARGS"

// Main is the TestMain of a package of end-to-end tests:
//
//	func TestMain(m *testing.M) { crawltest.Main(m) }
//
// Every crawl the test binary runs, in the tests or as the command line,
// checks the work it skips (hook.VerifyShortcuts). Started by [Command],
// the binary runs the command line with the arguments it was given, and
// exits with its status; otherwise it runs the tests.
func Main(m *testing.M) {
	hook.VerifyShortcuts()
	if a := os.Getenv(childArgs); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			os.Exit(3)
		}
		os.Exit(cli.Run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Command returns the command that runs gentlecrawl with args (the
// command line's arguments, "crawl" first) as a process of its own: the
// test binary, whose TestMain is [Main], running no test and no
// benchmark.
func Command(args []string) *exec.Cmd {
	encoded, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(encoded))
	return cmd
}

// Child is a gentlecrawl process run from the test binary ([StartChild]).
type Child struct {
	Name   string
	Cmd    *exec.Cmd
	Out    *LockedBuffer   // its standard output and error
	Exited <-chan struct{} // closed when the process has exited
	Err    error           // of Wait, once Exited is closed
}

// StartChild starts gentlecrawl with args as a process of its own
// ([Command]), named name in messages; if it is still running when the
// test ends, it is killed.
func StartChild(tb testing.TB, name string, args []string) *Child {
	tb.Helper()
	cmd := Command(args)
	out := &LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	c := &Child{Name: name, Cmd: cmd, Out: out, Exited: exited}
	go func() {
		c.Err = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		select {
		case <-c.Exited:
		default:
			cmd.Process.Kill()
			<-c.Exited
		}
	})
	return c
}

// Wait waits for the process to exit 0, and fails tb with its output if
// it does not, or does not exit within limit (then with a dump of its
// goroutines).
func (c *Child) Wait(tb testing.TB, limit time.Duration) {
	tb.Helper()
	select {
	case <-c.Exited:
		if c.Err != nil {
			tb.Fatalf("%s failed: %v\n%s", c.Name, c.Err, c.Out.String())
		}
	case <-time.After(limit):
		c.Cmd.Process.Signal(syscall.SIGQUIT) // where every goroutine is
		select {
		case <-c.Exited:
		case <-time.After(10 * time.Second):
			c.Cmd.Process.Kill()
			<-c.Exited
		}
		tb.Fatalf("%s did not finish in %v\n%s", c.Name, limit, c.Out.String())
	}
}

// LockedBuffer collects a child's output from the goroutines os/exec
// copies it with.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
