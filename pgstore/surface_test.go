package pgstore_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/pgstore"
)

// methods returns the names of t's exported methods, sorted.
func methods(t reflect.Type) []string {
	var out []string
	for i := range t.NumMethod() {
		out = append(out, t.Method(i).Name)
	}
	return out
}

// TestStoreSurface: a Store's methods are those a program calls (and the
// scheduler's JobStore); the cluster protocol stays behind ClusterBackend,
// and the root's ClusterBackend asks for nothing else.
func TestStoreSurface(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[*pgstore.Store](), []string{"ApplyJobs", "Close", "ClusterBackend", "CountJobs", "Load", "LoadJobs", "Save"}},
		{reflect.TypeFor[*boltstore.Store](), []string{"ApplyJobs", "Close", "Load", "LoadJobs", "Save"}},
		{reflect.TypeFor[fairsched.ClusterBackend](), []string{"ClusterBackend"}},
	} {
		if diff := cmp.Diff(c.want, methods(c.typ)); diff != "" {
			t.Errorf("%v's methods (-want +got):\n%s", c.typ, diff)
		}
	}
}

// Both stores close alike, with an error.
var (
	_ interface{ Close() error } = (*pgstore.Store)(nil)
	_ interface{ Close() error } = (*boltstore.Store)(nil)
)
