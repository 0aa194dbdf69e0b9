package memback

import (
	"context"

	"github.com/fairsched/fairsched/internal/cluster"
)

// SetOverload writes the leader's verdict beside its lease, fenced
// (cluster.Backend).
func (b *Backend) SetOverload(ctx context.Context, domain string, epoch int64, v cluster.Overload) error {
	return b.call(ctx, "SetOverload", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		l := st.leases[domain]
		l.overload, l.overloadEpoch = v, epoch
		return nil
	})
}

// Overload reads the live lease's verdict (cluster.Backend).
func (b *Backend) Overload(ctx context.Context, domain string) (v cluster.Overload, ok bool, err error) {
	err = b.call(ctx, "Overload", func(st *state) error {
		l := st.leases[domain]
		if l != nil && l.expires.After(st.now()) && l.overloadEpoch == l.epoch {
			v, ok = l.overload, true
		}
		return nil
	})
	return v, ok, err
}
