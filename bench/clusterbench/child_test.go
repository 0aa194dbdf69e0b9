package clusterbench

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestJobLine: from many goroutines at once, in either mode, every line
// reaches the file whole by the time close returns, and a buffered one's
// owner has left (TestMain checks that no goroutine leaked).
func TestJobLine(t *testing.T) {
	for _, syncLog := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "log")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		lg := newJobLine(f, "x1", syncLog)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 1000 {
					lg.write('s', g*1000+i)
				}
			})
		}
		wg.Wait()
		lg.close()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := newCollector(path)
		if err := c.poll(); err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte{'\n'}); n != 8000 || len(c.events) != 8000 || len(c.partial) != 0 {
			t.Errorf("sync %v: %d lines, %d events read", syncLog, n, len(c.events))
		}
		for n := range 8000 {
			if c.starts[n] != 1 {
				t.Fatalf("sync %v: job %d started %d times", syncLog, n, c.starts[n])
			}
		}
	}
}
