package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Identity. An instance joins under its configured name (Config.Instance,
// often a pod's stable name) and an incarnation of its own, made at Start:
// the name, "#", and 12 random hex digits. The incarnation is what the
// database knows — the lease's holder, the heartbeat's row, the grants'
// instance, a RunSync's or Submit's owner — so a process restarted under
// the same name shares nothing with the one before it: it waits out that
// one's lease like any other holder's, never reads its grants, and the
// leader declares that one lost (its jobs end with ErrWorkerLost) when its
// heartbeats have stayed silent for LostAfter. Displays show the name,
// and the incarnation beside it.

// newIncarnation returns a new incarnation of name.
func newIncarnation(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return name + "#" + hex.EncodeToString(b[:])
}

// nameOf returns the configured name of incarnation id: id up to its last
// "#" (id itself when it has none).
func nameOf(id string) string {
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		return id[:i]
	}
	return id
}
