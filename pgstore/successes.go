package pgstore

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/fairsched/fairsched/internal/cluster"
)

// Successes told without a write (cluster.Backend): an executor's
// successes go to the leader as notifications on fairsched_successes,
// one per instance and up to maxPayload bytes, in one statement; the
// leader deletes their rows with its next turn. Nothing is stored: a
// leader not listening hears none, and the executor reports through the
// row a success whose row still runs a Poll later.

const successesChannel = "fairsched_successes"

// toldSuccesses is a notification's payload: the attempts of jobs of one
// instance that succeeded, each [seq, attempt].
type toldSuccesses struct {
	Instance string    `json:"i"`
	Ends     [][]int64 `json:"e"`
}

// TellSucceeded notifies the leader of ends, each a success.
func (s clusterBackend) TellSucceeded(ctx context.Context, ends []cluster.End) error {
	if len(ends) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify('`+successesChannel+`', p) FROM unnest($1::text[]) AS p`,
		successPayloads(ends)); err != nil {
		return clusterWriteError("telling successes", err)
	}
	return nil
}

// successPayloads encodes ends as payloads of at most maxPayload bytes,
// each of one instance.
func successPayloads(ends []cluster.End) []string {
	var out []string
	var p []byte
	instance := ""
	end := func() {
		if p != nil {
			out = append(out, string(append(p, "]}"...)))
			p = nil
		}
	}
	for _, e := range ends {
		if e.Instance != instance {
			end()
			instance = e.Instance
		}
		var item []byte
		item = append(item, '[')
		item = strconv.AppendUint(item, e.Seq, 10)
		item = append(item, ',')
		item = strconv.AppendInt(item, int64(e.Attempt), 10)
		item = append(item, ']')
		if p != nil && len(p)+1+len(item)+2 > maxPayload {
			end()
		}
		if p == nil {
			name, _ := json.Marshal(instance)
			p = append(append(append(p, `{"i":`...), name...), `,"e":[`...)
		} else {
			p = append(p, ',')
		}
		p = append(p, item...)
	}
	end()
	return out
}

// parseSuccesses decodes a payload of successPayloads; nil when it is
// not one (any client may notify the channel).
func parseSuccesses(payload string) []cluster.End {
	var t toldSuccesses
	if err := json.Unmarshal([]byte(payload), &t); err != nil || t.Instance == "" {
		return nil
	}
	out := make([]cluster.End, 0, len(t.Ends))
	for _, e := range t.Ends {
		if len(e) != 2 || e[0] <= 0 || e[1] <= 0 || e[1] > 1<<31-1 {
			return nil
		}
		out = append(out, cluster.End{Seq: uint64(e[0]), Instance: t.Instance, Attempt: int(e[1]), Kind: cluster.EndOK})
	}
	return out
}

// Successes returns the successes told from now on, until the function it
// returns is called (any number of times); nil when it cannot listen.
func (s clusterBackend) Successes(ctx context.Context) (<-chan []cluster.End, func()) {
	c := make(chan []cluster.End, 64)
	l, err := s.listen(ctx, successesChannel, func(lctx context.Context, p string) {
		ends := parseSuccesses(p)
		if len(ends) == 0 {
			return
		}
		select {
		case c <- ends:
		case <-lctx.Done():
		}
	}, func() { close(c) })
	if err != nil {
		return nil, func() {}
	}
	return c, func() { _ = l.stop() } // idempotent
}
