package debugpage

import (
	"encoding/json"
	"io"
	"time"

	"github.com/fairsched/fairsched"
)

// RenderSnapshot writes the page of snap as Handler would with its
// defaults and no refresh: for tests of snapshots no scheduler in the test
// gives, such as a cluster's without a database.
func RenderSnapshot(w io.Writer, snap fairsched.Snapshot) error {
	return page.Execute(w, newView(snap, config{title: "fairsched", maxRows: DefaultMaxRows}))
}

// ClusterFixture is the snapshot of the leader of a cluster of three
// instances, api-1 (the leader, this page's), api-2 and api-3, in domain
// git-proxy at epoch 7, taken at 09:01:30 UTC: clone linux runs on api-2
// since 09:00:00, repack git.git on api-3 since 09:01:00, and clone
// go.git, admitted a moment ago, is not placed yet; clone rust waits for
// the type's cap.
func ClusterFixture() fairsched.Snapshot {
	at := time.Date(2026, 11, 22, 9, 1, 30, 0, time.UTC)
	clone := fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, MaxConcurrency: 2, ConflictGroup: "git", Priority: 8}
	repack := fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, MaxConcurrency: 1, ConflictGroup: "git", Priority: 4}
	return fairsched.Snapshot{
		Time:           at,
		MaxConcurrency: 8,
		Running: []fairsched.RunningJob{
			{Type: "clone", ID: "linux", FairnessKey: "10.0.0.7", Priority: 8, EffectivePriority: 8,
				Submitted: at.Add(-90 * time.Second), Started: at.Add(-90 * time.Second), EstimatedCost: 10 * time.Second, Instance: "api-2"},
			{Type: "repack", ID: "git.git", Priority: 4, EffectivePriority: 4,
				Submitted: at.Add(-30 * time.Second), Started: at.Add(-30 * time.Second), EstimatedCost: 20 * time.Second, Instance: "api-3"},
			{Type: "clone", ID: "go.git", FairnessKey: "10.0.0.9", Priority: 8, EffectivePriority: 8,
				Submitted: at, Started: at, EstimatedCost: 10 * time.Second},
		},
		Pending: []fairsched.PendingJob{
			{Type: "clone", ID: "rust", FairnessKey: "10.0.0.9", Priority: 8, EffectivePriority: 8, Submitted: at.Add(-10 * time.Second),
				Reasons: []fairsched.Reason{fairsched.ReasonTypeLimit}, Reason: fairsched.ReasonTypeLimit},
		},
		AccumulatedCost: map[string]time.Duration{"": 20 * time.Second, "10.0.0.7": 10 * time.Second, "10.0.0.9": 10 * time.Second},
		RunningByTier:   map[fairsched.Priority]int{8: 2, 4: 1},
		RunningByType:   map[fairsched.JobType]int{"clone": 2, "repack": 1},
		Types:           map[fairsched.JobType]fairsched.JobTypeConfig{"clone": clone, "repack": repack},
		Cluster: &fairsched.ClusterSnapshot{Domain: "git-proxy", Instance: "api-1", Leader: "api-1", Epoch: 7, Leading: true,
			Instances: []fairsched.InstanceSnapshot{
				{ID: "api-1", Slots: 8, Types: []string{"clone", "repack"}, Running: 0},
				{ID: "api-2", Slots: 8, Types: []string{"clone", "repack"}, Running: 1},
				{ID: "api-3", Slots: 4, Types: []string{"repack"}, Running: 1},
			}},
		PendingTotal: 1,
		KeysTotal:    3,
	}
}

// FollowerFixture is the snapshot of api-2, a follower of ClusterFixture's
// cluster: it knows the leader and epoch, and no jobs (the leader decides).
func FollowerFixture() fairsched.Snapshot {
	return fairsched.Snapshot{Time: time.Date(2026, 11, 22, 9, 1, 30, 0, time.UTC),
		Cluster: &fairsched.ClusterSnapshot{Domain: "git-proxy", Instance: "api-2", Leader: "api-1", Epoch: 7}}
}

// JSONView writes the page's JSON document of snap (no dead jobs).
func JSONView(snap fairsched.Snapshot) ([]byte, error) {
	return json.MarshalIndent(jsonView(snap, nil), "", "  ")
}
