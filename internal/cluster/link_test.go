package cluster_test

import "github.com/fairsched/fairsched/internal/cluster"

// link lets fairsched.WithCluster take a cluster.Backend that a test built
// or wrapped (a *pgstore.Store hands over its own through ClusterBackend).
type link struct{ cluster.Backend }

func (l link) ClusterBackend() cluster.Backend { return l.Backend }
