package cluster_test

// childEnv, when set, makes the test binary a cluster instance of the
// multi-process tests instead of running tests.
const childEnv = "FAIRSCHED_CLUSTER_CHILD"

func childMain() int { return 2 }
