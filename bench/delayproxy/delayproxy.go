// Package delayproxy is a TCP proxy that puts a network between a client
// and a server on the same machine: every chunk it reads from one side
// reaches the other half a round trip later, in order, whatever else is in
// flight (a delay, not a bandwidth limit). The benchmark runs PostgreSQL
// behind it, for River and fairsched alike.
//
// The server may listen on TCP or on a Unix socket (the test server of
// internal/pgtest listens on a socket only); clients connect over TCP on
// the loopback.
package delayproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// chunkSize bounds one read; a read returns what has arrived, usually one
// protocol message or a few.
const chunkSize = 32 << 10

// inFlight bounds the chunks read and not yet written, per direction: a
// reader that gets this far ahead waits (TCP's window does the same).
const inFlight = 1024

// Proxy accepts connections on the loopback and pipes each to the target,
// delaying each direction by half of RoundTrip.
type Proxy struct {
	ln        net.Listener
	network   string // of the target: "tcp" or "unix"
	target    string
	roundTrip time.Duration
	sleep     func(time.Duration)
	done      chan struct{} // closed by Close
	wg        sync.WaitGroup
}

// Listen starts a proxy on 127.0.0.1 (a free port) to target on network
// ("tcp" or "unix"), each round trip through it delayed by roundTrip.
func Listen(network, target string, roundTrip time.Duration) (*Proxy, error) {
	if roundTrip < 0 {
		return nil, fmt.Errorf("delayproxy: round trip %v: %w", roundTrip, ErrNegativeDelay)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, network: network, target: target, roundTrip: roundTrip, sleep: preciseSleep, done: make(chan struct{})}
	p.wg.Go(p.accept)
	return p, nil
}

// ErrNegativeDelay is a round trip below zero.
var ErrNegativeDelay = errors.New("negative delay")

// Addr is the address clients connect to (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// RoundTrip is the delay each round trip is given.
func (p *Proxy) RoundTrip() time.Duration { return p.roundTrip }

// Close stops accepting, closes every connection through the proxy and
// waits for their goroutines to leave.
func (p *Proxy) Close() error {
	close(p.done)
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve dials the target for client c and pipes both ways until both
// directions end or the proxy closes.
func (p *Proxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial(p.network, p.target)
	if err != nil {
		return // the client sees its connection closed, as with a refused one
	}
	defer s.Close()
	half := p.roundTrip / 2
	ended := make(chan struct{}, 2)
	for _, d := range [][2]net.Conn{{s, c}, {c, s}} {
		p.wg.Go(func() {
			err := pipe(d[0], d[1], half, p.sleep)
			if err == nil {
				err = closeWrite(d[0])
			}
			if err != nil { // a reset or a failed write: the whole connection goes
				d[0].Close()
				d[1].Close()
			}
			ended <- struct{}{}
		})
	}
	for left := 2; left > 0; left-- {
		select {
		case <-ended:
		case <-p.done:
			c.Close()
			s.Close()
			for ; left > 0; left-- { // only the directions still piping
				<-ended
			}
			return
		}
	}
}

// closeWrite passes a half-close on: the reader saw EOF, so the other side
// gets one once everything before it has been written.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// chunk is bytes read at a time.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk written delay after it was read (or
// as soon as dst takes it, when dst is slower), in the order read. It
// returns nil at src's EOF once all is written, else the first error
// (after a failed write it closes src). sleep waits (time.Sleep in tests, preciseSleep otherwise).
func pipe(dst io.Writer, src io.ReadCloser, delay time.Duration, sleep func(time.Duration)) error {
	chunks := make(chan chunk, inFlight)
	quit := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		buf := make([]byte, chunkSize)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case chunks <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}:
				case <-quit:
					readErr <- nil
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for c := range chunks {
		if wait := time.Until(c.at.Add(delay)); wait > 0 {
			sleep(wait)
		}
		if _, err := dst.Write(c.b); err != nil {
			close(quit)
			src.Close() // the reader leaves its Read
			for range chunks {
			}
			<-readErr
			return err
		}
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// preciseSleep sleeps in the kernel: the runtime's timers wake an idle
// program at a millisecond's granularity, which would turn half of a 1 ms
// round trip into a whole one. The goroutine holds its thread meanwhile.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
