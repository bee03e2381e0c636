// Package crashtest runs crash tests: it re-executes the test binary as a
// child test that writes "ready" on stdout once it is mid-work, and kills
// it with SIGKILL at a random moment after that.
package crashtest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// readyTimeout bounds the wait for the child's "ready" line.
const readyTimeout = 30 * time.Second

// KillAfterReady starts the test named child (an exact test name) in a
// new process of this test binary with env added to the environment,
// waits for it to print "ready", sleeps a random time in [0, maxDelay]
// and kills it with SIGKILL. A child that ends or stays silent for 30 s
// first fails the test.
func KillAfterReady(t testing.TB, child string, env []string, maxDelay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
				return
			}
		}
		ready <- fmt.Errorf("child ended before it was ready: %v", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal(err)
		}
	case <-time.After(readyTimeout):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("child never became ready")
	}
	time.Sleep(rand.N(maxDelay + 1))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}
