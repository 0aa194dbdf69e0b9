package debugpage_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/debugpage"
)

// TestTenantsShown: with tenants (WithKeyPath), the page lists each one
// with work — weight, fair share, keys with work, running, pending — by
// name, those beyond the page's rows counted; a tenant's name is text.
func TestTenantsShown(t *testing.T) {
	s, mock, block := newScheduler(t, fairsched.WithMaxConcurrency(1), fairsched.WithKeyPath("/"),
		fairsched.WithTenantWeight("acme", 3))
	if err := s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"acme/ann", "acme/bob", "acme/ann", "<i>&y/eve", "zeta/zed"} {
		if err := s.Submit("sync", fmt.Sprint("j", i), block, fairsched.WithFairnessKey(key)); err != nil {
			t.Fatal(err)
		}
		mock.sync() // each queued (j0 admitted) before the next joins: the same costs every run
	}
	mock.sync()
	_, page := get(t, debugpage.Handler(s), http.MethodGet, "/")
	want := []string{"<i>&y 1 20.0% 1 0 1", "acme 3 60.0% 2 1 2", "zeta 1 20.0% 1 0 1"}
	if diff := cmp.Diff(want, rowText(t, page, "tenants")); diff != "" {
		t.Errorf("tenant rows (-want +got):\n%s", diff)
	}
	if strings.Contains(page, "<i>&y") {
		t.Error("a tenant's name reached the page as markup")
	}
	_, page = get(t, debugpage.Handler(s, debugpage.WithMaxRows(2)), http.MethodGet, "/")
	// A snapshot of two rows: the tenants of the first two pending jobs in
	// rank order (acme's, joined at the cost of its running job's key) and
	// of the running one; the other two are counted.
	if rows := rowText(t, page, "tenants"); !cmp.Equal(rows, want[1:2]) || !strings.Contains(page, "+2 more tenants not shown") {
		t.Errorf("with two rows: tenant rows %q, want acme's and two more counted", rows)
	}
}
