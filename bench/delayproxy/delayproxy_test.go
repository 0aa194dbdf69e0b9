package delayproxy

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// arrival is when a chunk reached the far side, in virtual time since the
// test's start, and what it was.
type arrival struct {
	At   time.Duration
	Data string
}

// TestPipeDelaysEachChunk: in virtual time, each chunk written into the
// pipe comes out exactly delay after it went in — chunks in flight
// together keep their spacing (a delay, not a queue) — in order, whole,
// and the far side sees EOF after the last one.
func TestPipeDelaysEachChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		in, feed := net.Pipe()
		out, far := net.Pipe()
		const delay = 500 * time.Microsecond
		piped := make(chan error, 1)
		go func() {
			err := pipe(out, in, delay, time.Sleep)
			out.Close()
			piped <- err
		}()
		got := make(chan []arrival, 1)
		go func() {
			var as []arrival
			buf := make([]byte, 64)
			for {
				n, err := far.Read(buf)
				if n > 0 {
					as = append(as, arrival{time.Since(t0), string(buf[:n])})
				}
				if err != nil {
					got <- as
					return
				}
			}
		}()
		// Three chunks 100 µs apart (each sent while the ones before are
		// still in flight), then one after a pause of 2 ms.
		sends := []struct {
			after time.Duration
			data  string
		}{{0, "a"}, {100 * time.Microsecond, "bb"}, {100 * time.Microsecond, "ccc"}, {2 * time.Millisecond, "dddd"}}
		var want []arrival
		for _, s := range sends {
			time.Sleep(s.after)
			if _, err := feed.Write([]byte(s.data)); err != nil {
				t.Fatal(err)
			}
			want = append(want, arrival{time.Since(t0) + delay, s.data})
		}
		feed.Close()
		if diff := cmp.Diff(want, <-got); diff != "" {
			t.Errorf("arrivals (-want +got):\n%s", diff)
		}
		if err := <-piped; err != nil {
			t.Errorf("pipe: %v, want nil at EOF", err)
		}
		far.Close()
	})
}

// TestPipeStopsWhenTheFarSideCloses: a write that fails ends the pipe with
// its error and closes the source, so that nothing waits on it.
func TestPipeStopsWhenTheFarSideCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := net.Pipe()
		out, far := net.Pipe()
		far.Close()
		piped := make(chan error, 1)
		go func() { piped <- pipe(out, in, time.Millisecond, time.Sleep) }()
		if _, err := feed.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := <-piped; !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("pipe: %v, want io.ErrClosedPipe", err)
		}
		if _, err := feed.Write([]byte("y")); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("a write after the pipe ended: %v, want io.ErrClosedPipe (the source closed)", err)
		}
	})
}

// echo serves ln: every connection gets back what it sends, then EOF.
func echo(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_, _ = io.Copy(c, c)
		}()
	}
}

// TestProxyCarriesBytesUnchanged: through the proxy, over TCP and to a
// Unix socket, several connections at once each get back exactly the
// megabyte they sent (random bytes, written in pieces of uneven size),
// and Close ends every goroutine (TestMain checks). No duration is
// asserted: the delay is TestPipeDelaysEachChunk's.
func TestProxyCarriesBytesUnchanged(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "echo.sock")
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = sock
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go echo(ln)
			p, err := Listen(network, ln.Addr().String(), time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			const conns = 4
			errs := make(chan error, conns)
			for range conns {
				go func() { errs <- roundTrip(p.Addr()) }()
			}
			for range conns {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	_ = os.Remove(sock)
}

// roundTrip sends a megabyte of random bytes through addr in uneven
// pieces, half-closes, and checks that exactly those bytes come back.
func roundTrip(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	sent := make([]byte, 1<<20)
	_, _ = rand.Read(sent)
	back := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(c)
		back <- b
	}()
	for rest, n := sent, 1; len(rest) > 0; n = n*7%65521 + 1 {
		k := min(n, len(rest))
		if _, err := c.Write(rest[:k]); err != nil {
			return err
		}
		rest = rest[k:]
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	if got := <-back; !bytes.Equal(got, sent) {
		return errors.New("the bytes that came back differ from those sent")
	}
	return nil
}

// TestProxyClosesWhenTheTargetIsDown: a client of a proxy whose target
// refuses connections sees its connection closed.
func TestProxyClosesWhenTheTargetIsDown(t *testing.T) {
	p, err := Listen("unix", filepath.Join(t.TempDir(), "nobody.sock"), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read %d bytes, %v; want the connection closed", n, err)
	}
}

func TestNegativeDelay(t *testing.T) {
	if _, err := Listen("tcp", "127.0.0.1:1", -time.Millisecond); !errors.Is(err, ErrNegativeDelay) {
		t.Errorf("Listen: %v, want ErrNegativeDelay", err)
	}
}

// TestCloseEndsOpenConnections: Close with a connection open and idle
// through the proxy returns, the client's connection is closed, and no
// goroutine is left (TestMain checks).
func TestCloseEndsOpenConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echo(ln)
	p, err := Listen("tcp", ln.Addr().String(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("read %q, %v; want ping", got, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n, err := c.Read(got); n != 0 || err == nil {
		t.Errorf("after Close, read %d bytes, %v; want the connection closed", n, err)
	}
}

// TestCloseWithOneDirectionEnded: Close returns when a connection through
// the proxy has ended one way (its client half-closed, its server holds
// the other way open): only the direction still piping is waited for.
// Repeated, as the proxy may see that end before or after Close.
func TestCloseWithOneDirectionEnded(t *testing.T) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sawEOF := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, c) // to the client's half-close; then it holds its way open
			sawEOF <- c
		}()
		p, err := Listen("tcp", ln.Addr().String(), time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		server := <-sawEOF
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		c.Close()
		server.Close()
		ln.Close()
	}
}
