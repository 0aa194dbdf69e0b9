package pgtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

const childEnv = "FAIRSCHED_PGTEST_CHILD"

// watchedChild starts a throwaway cluster, says where, and waits to be
// killed.
func watchedChild() int {
	c, err := start()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(c.dir)
	select {} // until killed
}

// TestKilledProcessLeavesNoServer: a process killed with SIGKILL while its
// throwaway cluster runs leaves no server and no files behind — the
// watchdog stops it.
func TestKilledProcessLeavesNoServer(t *testing.T) {
	if os.Getenv("FAIRSCHED_TEST_DATABASE_URL") != "" {
		t.Skip("an external server: nothing is started")
	}
	if _, err := find("initdb"); err != nil {
		if os.Getenv("FAIRSCHED_REQUIRE_PG") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no PostgreSQL binaries: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || len(line) < 2 || line[0] != '/' {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child said %q, %v", line, err)
	}
	dir := line[:len(line)-1]
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the child's cluster is not at %s: %v", dir, err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup of its own
		t.Fatal(err)
	}
	_ = cmd.Wait()
	Eventually(t, "the killed process's server gone", func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
}
