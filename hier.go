package fairsched

import "github.com/fairsched/fairsched/core"

// Hierarchical fair share: tenants over fairness keys (core/hier.go has the
// math).

// WithKeyTenant makes fairness two-level: tenantOf maps each fairness key
// to its tenant, the tenants share the service in proportion to their
// weights (WithTenantWeight, 1 by default), and each tenant's share is
// split among its keys with work in proportion to the keys' weights
// (WithKeyWeight). Both levels are charged in learned cost and
// work-conserving: a tenant that spreads its jobs over 100 keys gets, while
// another tenant with one key has work too, half the service, not 100/101
// of it. An empty tenant makes the key its own tenant, and so does a panic
// of tenantOf. tenantOf runs on the scheduler's owner goroutine when a key
// gets its first job: keep it fast and pure. Dispatch costs the same as
// without it.
func WithKeyTenant(tenantOf func(key string) string) Option {
	return optionFunc(func(o *options) { o.hierarchy().TenantOf = tenantOf })
}

// WithKeyPath is WithKeyTenant with the tenant read from the key as a
// path: the part before the first sep ("acme/alice" is tenant "acme"'s
// with "/"); a key without sep is its own tenant. An empty sep, or both
// WithKeyPath and WithKeyTenant, is ErrInvalidConfig from New.
func WithKeyPath(sep string) Option {
	return optionFunc(func(o *options) { o.hierarchy().Sep = sep })
}

// WithTenantWeight gives tenant a weight (default 1) under WithKeyTenant or
// WithKeyPath: backlogged tenants receive service, in cost, in proportion
// to their weights. A weight must be within [1e-6, 1e6], and a tenant
// weight needs one of those options (ErrInvalidConfig from New).
func WithTenantWeight(tenant string, weight float64) Option {
	return optionFunc(func(o *options) {
		h := o.hierarchy()
		if h.Weights == nil {
			h.Weights = map[string]float64{}
		}
		h.Weights[tenant] = weight
	})
}

func (o *options) hierarchy() *core.Hierarchy {
	if o.hier == nil {
		o.hier = &core.Hierarchy{}
	}
	return o.hier
}

// checkHierarchy checks the options of hierarchical fair share, if any.
func (o *options) checkHierarchy() error {
	if o.hier == nil {
		return nil
	}
	return core.CheckHierarchy(*o.hier)
}

// TenantSnapshot is one tenant in a Snapshot (WithKeyTenant, WithKeyPath):
// its weight, its keys, pending and running jobs, and its fair share of
// the service now.
//
// Fields, from core.TenantSnapshot:
//
//	Name string
//
//	Weight float64
//
//	// Keys counts its fairness keys with jobs pending or running.
//	Keys int
//
//	Pending int
//
//	Running int
//
//	// Share is its fair share of the service now: its weight over the sum
//	// of the weights of the tenants with jobs pending or running. While
//	// it is backlogged it receives that share of the service, in learned
//	// cost; an idle tenant's share goes to the others.
//	Share float64
type TenantSnapshot = core.TenantSnapshot
